//! Property tests of manifest.json (seed 000), which agents and other
//! tools write: parsing never panics, and a rewrite keeps every value it
//! does not own.

use std::path::Path;

use logbook::model::run::{Manifest, OutputRecord, OutputType, RunStatus, parse_manifest};
use logbook::model::text;
use proptest::prelude::*;
use serde_json::{Map, Value, json};

use crate::arb;

/// The JSON block under "### Manifest Structure" in seed 000, verbatim:
/// the example other tools copy, read from the seed rather than copied here.
fn seed_example() -> String {
    let seed = arb::shared("seeds/000_b12f3bcc02d88840.txt");
    let after = &seed[seed.find("### Manifest Structure").unwrap()..];
    let start = after.find("```json\n").unwrap() + "```json\n".len();
    let end = start + after[start..].find("```").unwrap();
    after[start..end].to_string()
}

const PATH: &str = "manifest.json";

/// The places another tool may add keys to.
const OBJECTS: [&str; 6] = [
    "",
    "/agent",
    "/workflow",
    "/execution",
    "/outputs/0",
    "/metadata",
];

fn seed() -> Value {
    serde_json::from_str(&seed_example()).unwrap()
}

/// What Logbook's writes change: an output registered, the status set.
fn change(m: &mut Manifest) {
    m.outputs.push(OutputRecord {
        file: "new.md".into(),
        output_type: OutputType::Report,
        description: "added".into(),
        created_at: "2025-10-06T00:00:00.000Z".into(),
        extra: Map::new(),
    });
    m.execution.status = RunStatus::Failed;
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn never_panics_on_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        let _ = parse_manifest(Path::new(PATH), &String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn never_panics_on_mutated_seed(m in arb::mutations(), bom in any::<bool>()) {
        let text = arb::mutate(&seed_example(), &m);
        let text = if bom { format!("\u{feff}{text}") } else { text };
        let _ = parse_manifest(Path::new(PATH), &text);
    }

    #[test]
    fn never_panics_on_values(v in arb::value(), at in 0usize..6, key in prop::sample::select(vec![
        "version", "session_id", "agent", "workflow", "execution", "outputs", "inputs",
        "related_sessions", "metadata", "tags", "displayName", "messageCount", "name", "status",
        "started_at", "completed_at", "type", "description",
    ])) {
        // A known key given any value, anywhere: read or refused, never a panic.
        let mut doc = seed();
        if let Some(Value::Object(m)) = doc.pointer_mut(OBJECTS[at]) {
            m.insert(key.to_string(), v);
        }
        if let Ok((mut typed, raw)) = parse_manifest(Path::new(PATH), &doc.to_string()) {
            let read = text::to_value(Path::new(PATH), &typed).unwrap();
            change(&mut typed);
            let out = text::to_json(Path::new(PATH), &typed, Some(&raw)).unwrap();
            prop_assert!(parse_manifest(Path::new(PATH), &out).is_ok(), "{out}");
            // The writer's way (the manifest as read handed over, not parsed
            // again from the file's value) writes the very same text.
            let over = text::to_json_over(Path::new(PATH), &typed, &raw, &read).unwrap();
            prop_assert_eq!(over, out);
        }
    }

    #[test]
    fn rewrite_keeps_what_it_does_not_own(
        extras in proptest::collection::vec(arb::unknowns(), 6),
        nulls in proptest::collection::vec(any::<bool>(), 4),
        bom in any::<bool>(),
    ) {
        let mut doc = seed();
        for (at, extra) in OBJECTS.iter().zip(&extras) {
            arb::add_unknowns(&mut doc, at, extra);
        }
        // Known optional fields set to null: the record leaves them out.
        for (ptr, null) in ["/inputs", "/execution/completed_at", "/agent/title", "/messageCount"].iter().zip(&nulls) {
            if *null {
                *doc.pointer_mut(ptr).unwrap() = Value::Null;
            }
        }
        let text = serde_json::to_string_pretty(&doc).unwrap();
        let text = if bom { format!("\u{feff}{text}") } else { text };
        let (mut typed, raw) = parse_manifest(Path::new(PATH), &text).unwrap();
        prop_assert_eq!(&raw, &doc);
        let read = text::to_value(Path::new(PATH), &typed).unwrap();
        change(&mut typed);
        let out = text::to_json(Path::new(PATH), &typed, Some(&raw)).unwrap();
        let over = text::to_json_over(Path::new(PATH), &typed, &raw, &read).unwrap();
        prop_assert_eq!(&over, &out);
        let (_, back) = parse_manifest(Path::new(PATH), &out).unwrap();

        // The write's own changes are there…
        prop_assert_eq!(&back["execution"]["status"], &json!("failed"));
        prop_assert_eq!(&back["outputs"][1]["file"], &json!("new.md"));
        // …and everything else is as it was, unknown keys, nulls and big
        // integers included, in the order it was.
        let mut expected = doc.clone();
        expected["execution"]["status"] = json!("failed");
        expected["outputs"].as_array_mut().unwrap().push(back["outputs"][1].clone());
        prop_assert_eq!(&back, &expected);
        let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
        prop_assert_eq!(keys(&back), keys(&expected));
    }
}
