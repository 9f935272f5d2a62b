//! Unit tests of the text module: rewrites, YAML scalars and error words.

use std::path::Path;

use serde_json::Value;

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
fn errors_name_no_rust_types() {
    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Tokens {
        used: u64,
        names: Vec<String>,
        kind: Option<Kind>,
    }
    #[derive(Debug, serde::Deserialize)]
    #[serde(rename_all = "snake_case")]
    enum Kind {
        Main,
        Sub,
    }
    let p = Path::new("t.yaml");
    for (text, said) in [
        (
            "used: x\nnames: []\n",
            "field `used` (line 1, column 7): a whole number is needed here, not the text \"x\"",
        ),
        ("used: 1\nnames: [a, ~]\n", "field `names[1]`"),
        (
            "used: 1\nnames: {a: 1}\n",
            "a list is needed here, not a mapping",
        ),
        (
            "used: 1\nnames: []\nkind: other\n",
            "`other` is not one of the allowed values `main` or `sub`",
        ),
        ("names: []\n", "this required field is missing"),
        (
            "used: 1\nused: 2\nnames: []\n",
            "the key `used` is given twice",
        ),
        ("used: [1\n", "line "),
    ] {
        let e = crate::text::parse_yaml::<Tokens>(p, "tokens", text)
            .unwrap_err()
            .to_string();
        assert!(e.contains(said), "{said:?} not in {e}");
        for rust in [
            "u64",
            "String",
            "Option<",
            "struct",
            "enum",
            "Vec<",
            "invalid type",
            "Options",
        ] {
            assert!(!e.contains(rust), "{rust} in {e}");
        }
    }
    let e = crate::text::parse_json::<Tokens>(
        Path::new("t.json"),
        "tokens",
        "{\"used\": 1,\n \"names\": {}}",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("field `names` (line 2, column"), "{e}");
    assert!(e.contains("an array is needed here, not an object"), "{e}");
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
