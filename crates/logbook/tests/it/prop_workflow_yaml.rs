//! Property tests of workflow.yaml (BMAD), which Logbook only reads:
//! parsing never panics, and what it reads is what the file says, whatever
//! YAML kind the values are.

use std::path::Path;

use logbook::model::text;
use proptest::prelude::*;
use serde_json::Value;

use crate::arb;

const PATH: &str = "workflow.yaml";

fn parse(text: &str) -> logbook::Result<Value> {
    text::parse_yaml(Path::new(PATH), "workflow.yaml", text)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn never_panics_on_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        let _ = parse(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn never_panics_on_mutated_fixtures(m in arb::mutations(), config in any::<bool>()) {
        let original = arb::shared(if config { "fixtures/bmad-config.yaml" } else { "fixtures/workflow.yaml" });
        let _ = parse(&arb::mutate(&original, &m));
    }

    #[test]
    fn reads_every_value_as_written(extra in arb::unknowns(), bom in any::<bool>()) {
        let mut doc = parse(&arb::shared("fixtures/workflow.yaml")).unwrap();
        arb::add_unknowns(&mut doc, "", &extra);
        let yaml = text::to_yaml::<Value>(Path::new(PATH), &doc, None).unwrap();
        let yaml = if bom { format!("\u{feff}{yaml}") } else { yaml };
        let back = parse(&yaml).unwrap();
        prop_assert!(arb::same(&back, &doc), "{}", yaml);
    }
}

#[test]
fn the_fixture_reads_with_bool_like_keys_as_text() {
    let mut text = arb::shared("fixtures/workflow.yaml");
    text.push_str("\nviewport: {x: 1, y: 2, on: yes, no: off}\n");
    let v = parse(&format!("\u{feff}{text}")).unwrap();
    assert_eq!(v["viewport"]["y"], 2);
    assert_eq!(v["viewport"]["on"], "yes");
    assert_eq!(v["viewport"]["no"], "off");
}
