//! Property tests of the workflow state JSON (seed 004): parsing never
//! panics, and a change keeps every value it does not own.

use std::path::Path;

use logbook::model::text;
use logbook::model::workflow::SessionState;
use proptest::prelude::*;
use serde_json::{Value, json};

use crate::arb;

const PATH: &str = "SES202601-ACME-STORE.state.json";

fn fixture() -> String {
    arb::shared("fixtures/session-state.json")
}

fn parse(text: &str) -> logbook::Result<(SessionState, Value)> {
    text::parse_json_with_raw(Path::new(PATH), "workflow state", text)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn never_panics_on_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        let _ = parse(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn never_panics_on_mutated_fixture(m in arb::mutations()) {
        let _ = parse(&arb::mutate(&fixture(), &m));
    }

    #[test]
    fn never_panics_on_values(v in arb::value(), key in prop::sample::select(vec![
        "currentMode", "modeHistory", "protocolStartComplete", "protocolStartEvidence",
        "orchestratorWorkflow", "activeFeature", "version", "createdAt",
    ])) {
        let mut doc: Value = serde_json::from_str(&fixture()).unwrap();
        doc[key] = v;
        if let Ok((s, raw)) = parse(&doc.to_string()) {
            let out = text::to_json(Path::new(PATH), &s, Some(&raw)).unwrap();
            prop_assert!(parse(&out).is_ok());
        }
    }

    #[test]
    fn rewrite_keeps_what_it_does_not_own(
        top in arb::unknowns(),
        wf in arb::unknowns(),
        inv in arb::unknowns(),
        feature_null in any::<bool>(),
    ) {
        let mut doc: Value = serde_json::from_str(&fixture()).unwrap();
        arb::add_unknowns(&mut doc, "", &top);
        arb::add_unknowns(&mut doc, "/orchestratorWorkflow", &wf);
        arb::add_unknowns(&mut doc, "/orchestratorWorkflow/agentHistory/0", &inv);
        if feature_null {
            doc["activeFeature"] = Value::Null;
        }
        let (mut s, raw) = parse(&serde_json::to_string_pretty(&doc).unwrap()).unwrap();
        prop_assert_eq!(&raw, &doc);
        // What every change does: the version and the time.
        s.version += 1;
        s.updated_at = "2030-01-01T00:00:00.000Z".into();
        let out = text::to_json(Path::new(PATH), &s, Some(&raw)).unwrap();
        let (_, back) = parse(&out).unwrap();
        let mut expected = doc.clone();
        expected["version"] = json!(s.version);
        expected["updatedAt"] = json!("2030-01-01T00:00:00.000Z");
        prop_assert_eq!(&back, &expected);
    }
}
