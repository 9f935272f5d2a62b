//! Unit tests of the text module: rewrites, YAML scalars and error words.

use std::path::Path;

use serde_json::Value;

use super::errors::plain_words;
use super::*;

#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct Item {
    name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    done: Option<bool>,
    #[serde(
        default,
        deserialize_with = "lenient",
        skip_serializing_if = "Option::is_none"
    )]
    count: Option<u64>,
    #[serde(flatten)]
    extra: serde_json::Map<String, Value>,
}

#[test]
fn arrays_keep_elements_the_write_did_not_change_wherever_they_moved() {
    let raw: Value = serde_json::from_str(
        r#"[{"name":"a","done":null,"big":12345678901234567890123},
            {"name":"b","count":8.5},
            {"name":"c","done":null,"x":null},
            {"name":"d","count":"many"}]"#,
    )
    .unwrap();
    let mut items: Vec<Item> = from_raw(&raw).unwrap();
    assert_eq!(items[1].count, None);
    // Drop the first (as compaction does), change the third, append one.
    items.remove(0);
    items[1].done = Some(true);
    items.push(Item {
        name: "e".into(),
        done: None,
        count: Some(1),
        extra: serde_json::Map::new(),
    });
    let merged = merge_write::<Vec<Item>>(&raw, serde_json::to_value(&items).unwrap());
    let expected: Value = serde_json::from_str(
        r#"[{"name":"b","count":8.5},
            {"name":"c","done":true,"x":null},
            {"name":"d","count":"many"},
            {"name":"e","count":1}]"#,
    )
    .unwrap();
    assert_eq!(merged, expected);
    assert_eq!(
        wrong_type_fields::<Vec<Item>>(&raw),
        vec!["[1].count".to_string(), "[3].count".to_string()]
    );
}

#[test]
fn yaml_scalars_keep_their_meaning() {
    let text = "big: 12345678901234567890123\nf: 1e30\ninf: .inf\nn: ~\ny: yes\nq: '12'\nm: {on: off, y: 1}\n";
    let raw = parse_yaml_raw(Path::new("t.yaml"), "t", text).unwrap();
    assert_eq!(raw["big"].to_string(), "12345678901234567890123");
    assert_eq!(raw["inf"], yaml_float_marker(f64::INFINITY));
    assert_eq!(raw["y"], "yes");
    assert_eq!(raw["q"], "12");
    assert_eq!(raw["m"]["on"], "off");
    assert_eq!(raw["m"]["y"], 1);
    let out = to_yaml::<Value>(Path::new("t.yaml"), &raw, None).unwrap();
    assert_eq!(
        parse_yaml_raw(Path::new("t.yaml"), "t", &out).unwrap()["big"],
        raw["big"]
    );
    assert!(out.contains(": .inf\n"), "{out}");
}

#[test]
fn yaml_errors_never_name_rust_types() {
    for (rust, plain) in [
        (
            "cannot deserialize null into string; use Option<String> at line 2 column 5",
            "empty (null) where text is expected at line 2 column 5",
        ),
        (
            "invalid type: string \"x\", expected struct Tokens at line 3 column 3",
            "invalid type: string \"x\", expected a mapping of fields at line 3 column 3",
        ),
        (
            "invalid type: map, expected u64",
            "invalid type: mapping, expected a whole number",
        ),
        (
            "duplicate mapping key: status, set DuplicateKeyPolicy in Options if acceptable",
            "duplicate mapping key: status",
        ),
        (
            "invalid u64 at line 4 column 9",
            "not a valid whole number at line 4 column 9",
        ),
        ("invalid f64", "not a valid number"),
        (
            "invalid type: string \"x\", expected a sequence",
            "invalid type: string \"x\", expected a list",
        ),
    ] {
        let out = plain_words(rust);
        assert_eq!(out, plain, "{rust}");
    }
    let err = serde_saphyr::from_str::<Vec<String>>("- a\n- ~\n").unwrap_err();
    let text = yaml_error(&err);
    assert!(
        !text.contains("Option<") && !text.contains("String>"),
        "{text}"
    );
}

#[test]
fn json_keeps_original_key_order() {
    let old: Value =
        serde_json::from_str(r#"{"b":1,"a":{"y":1,"x":2},"z":[{"q":1,"p":2}]}"#).unwrap();
    let new: Value =
        serde_json::from_str(r#"{"a":{"x":3,"y":1},"b":1,"z":[{"p":2,"q":1}],"c":0}"#).unwrap();
    let text = to_json(Path::new("t.json"), &new, Some(&old)).unwrap();
    let keys: Vec<_> = text.lines().map(str::trim).collect();
    assert_eq!(
        keys.join(""),
        r#"{"b": 1,"a": {"y": 1,"x": 3},"z": [{"q": 1,"p": 2}],"c": 0}"#
    );
}
