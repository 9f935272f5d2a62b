//! Property tests of the work session YAML (seed 002), which people edit by
//! hand: parsing never panics, and a rewrite keeps every value it does not
//! own, of every YAML kind.

use std::path::Path;

use logbook::model::text;
use logbook::model::work_session::WorkSession;
use proptest::prelude::*;
use serde_json::Value;

use crate::arb;

const PATH: &str = "SES202501-ACME-AUDIT.yaml";

/// The seed's full session example.
fn seed_yaml() -> String {
    let text = arb::shared("seeds/002_e122c2e894953c56.txt");
    let start = text.find("# {session_id}.yaml").unwrap();
    let end = text[start..]
        .find("Token Deserialization and Defaults")
        .unwrap();
    text[start..start + end].to_string()
}

fn parse(text: &str) -> logbook::Result<(WorkSession, Value)> {
    text::parse_yaml_with_raw(Path::new(PATH), "work session", text)
}

fn write(ws: &WorkSession, original: Option<&Value>) -> String {
    text::to_yaml(Path::new(PATH), ws, original).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn never_panics_on_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        let _ = parse(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn never_panics_on_mutated_seed(m in arb::mutations()) {
        let _ = parse(&arb::mutate(&seed_yaml(), &m));
    }

    #[test]
    fn never_panics_on_values(v in arb::value(), key in prop::sample::select(vec![
        "session_id", "created", "status", "client", "tokens", "agents_spawned",
        "artifacts", "milestones", "context_summary", "notes",
    ])) {
        let (_, mut doc) = parse(&seed_yaml()).unwrap();
        doc[key] = v;
        let yaml = text::to_yaml::<Value>(Path::new(PATH), &doc, None).unwrap();
        if let Ok((ws, raw)) = parse(&yaml) {
            let out = write(&ws, Some(&raw));
            prop_assert!(parse(&out).is_ok(), "{}", out);
        }
    }

    #[test]
    fn rewrite_keeps_what_it_does_not_own(
        top in arb::unknowns(),
        tokens in arb::unknowns(),
        agent in arb::unknowns(),
        note in arb::text(),
    ) {
        let (_, mut doc) = parse(&seed_yaml()).unwrap();
        arb::add_unknowns(&mut doc, "", &top);
        arb::add_unknowns(&mut doc, "/tokens", &tokens);
        arb::add_unknowns(&mut doc, "/agents_spawned/0", &agent);
        // Written by Logbook's own writer, read back: every value as generated.
        let yaml = text::to_yaml::<Value>(Path::new(PATH), &doc, None).unwrap();
        let (mut ws, raw) = parse(&yaml).unwrap();
        prop_assert!(arb::same(&raw, &doc), "{}", yaml);

        ws.notes.push(note.clone());
        let out = write(&ws, Some(&raw));
        let (_, back) = parse(&out).unwrap();
        let mut expected = raw.clone();
        expected["notes"].as_array_mut().unwrap().push(Value::String(note));
        prop_assert!(arb::same(&back, &expected), "{}", out);
    }
}
