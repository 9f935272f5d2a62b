//! Property tests of transcript JSON (seed 003): parsing never panics, and
//! an import or save keeps every value it does not fill in.

use std::path::Path;

use logbook::model::text;
use logbook::model::transcript::{Message, Transcript};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

use crate::arb;

const PATH: &str = "session_3c4d5e6f.json";

fn fixture() -> String {
    arb::shared("fixtures/transcript-main.json")
}

fn parse(text: &str) -> logbook::Result<(Transcript, Value)> {
    text::parse_json_with_raw(Path::new(PATH), "transcript", text)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn never_panics_on_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        let text = String::from_utf8_lossy(&bytes);
        let _ = parse(&text);
        let _ = serde_json::from_str::<Transcript>(&text);
    }

    #[test]
    fn never_panics_on_mutated_fixtures(m in arb::mutations(), sub in any::<bool>()) {
        let original = if sub { arb::shared("fixtures/transcript-subagent.json") } else { fixture() };
        let text = arb::mutate(&original, &m);
        let _ = parse(&text);
        let _ = serde_json::from_str::<Transcript>(&text);
    }

    #[test]
    fn never_panics_on_values(v in arb::value(), key in prop::sample::select(vec![
        "id", "timestamp", "version", "messages", "metadata",
    ]), meta_key in prop::sample::select(vec![
        "workdir", "startedAt", "lastActiveAt", "latestTotalTokens", "parentSessionId",
    ]), v2 in arb::value()) {
        let mut doc: Value = serde_json::from_str(&fixture()).unwrap();
        doc[key] = v;
        if let Some(Value::Object(m)) = doc.get_mut("metadata") {
            m.insert(meta_key.to_string(), v2);
        }
        if let Ok((t, raw)) = parse(&doc.to_string()) {
            let out = text::to_json(Path::new(PATH), &t, Some(&raw)).unwrap();
            prop_assert!(parse(&out).is_ok());
        }
    }

    #[test]
    fn rewrite_keeps_what_it_does_not_own(
        top in arb::unknowns(),
        meta in arb::unknowns(),
        msg in arb::unknowns(),
        block in arb::unknowns(),
        parent_null in any::<bool>(),
    ) {
        let mut doc: Value = serde_json::from_str(&fixture()).unwrap();
        arb::add_unknowns(&mut doc, "", &top);
        arb::add_unknowns(&mut doc, "/metadata", &meta);
        arb::add_unknowns(&mut doc, "/messages/0", &msg);
        arb::add_unknowns(&mut doc, "/messages/0/blocks/0", &block);
        if parent_null {
            doc["metadata"]["parentSessionId"] = Value::Null;
        }
        let (mut t, raw) = parse(&serde_json::to_string_pretty(&doc).unwrap()).unwrap();
        prop_assert_eq!(&raw, &doc);
        // What a save changes: a message appended, the last activity.
        t.messages.push(Message {
            role: "assistant".into(),
            blocks: vec![json!({"type": "text", "text": "more"})],
            usage: None,
            metadata: None,
            extra: Map::new(),
        });
        t.metadata.last_active_at = "2030-01-01T00:00:00.000Z".into();
        let out = text::to_json(Path::new(PATH), &t, Some(&raw)).unwrap();
        let (_, back) = parse(&out).unwrap();
        let mut expected = doc.clone();
        expected["metadata"]["lastActiveAt"] = json!("2030-01-01T00:00:00.000Z");
        expected["messages"].as_array_mut().unwrap().push(json!({"role": "assistant", "blocks": [{"type": "text", "text": "more"}]}));
        prop_assert_eq!(&back, &expected);
    }
}
