//! The JSON and YAML text of records: parse once into the typed record (and
//! the raw value a rewrite keeps key order from), write back in the seed's
//! key order. Pure: the store reads and writes the bytes.

use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::{Error, Result};

/// Parses JSON text into a typed record, naming the file on failure.
pub fn parse_json<T: DeserializeOwned>(path: &Path, what: &'static str, text: &str) -> Result<T> {
    serde_json::from_str(text).map_err(|e| Error::Corrupt {
        path: path.to_path_buf(),
        what,
        reason: e.to_string(),
    })
}

/// Parses JSON text once into both the typed record and the raw value: the
/// raw value is what a rewrite keeps the key order (and unknown keys) of.
pub fn parse_json_with_raw<T: DeserializeOwned>(
    path: &Path,
    what: &'static str,
    text: &str,
) -> Result<(T, Value)> {
    let raw: Value = parse_json(path, what, text)?;
    let typed = T::deserialize(&raw).map_err(|e| Error::Corrupt {
        path: path.to_path_buf(),
        what,
        reason: e.to_string(),
    })?;
    Ok((typed, raw))
}

/// Parses YAML text into a typed record, naming the file on failure.
pub fn parse_yaml<T: DeserializeOwned>(path: &Path, what: &'static str, text: &str) -> Result<T> {
    serde_saphyr::from_str(text).map_err(|e| Error::Corrupt {
        path: path.to_path_buf(),
        what,
        reason: yaml_error(&e),
    })
}

/// The first line of a YAML parser error (it goes on with a source excerpt),
/// without its own `error:` prefix, which the CLI already prints, and in
/// the words of the file rather than of the Rust types it was read into.
pub fn yaml_error(e: &serde_saphyr::Error) -> String {
    let text = e.to_string();
    let first = text.lines().next().unwrap_or_default();
    plain_words(first.strip_prefix("error: ").unwrap_or(first))
}

/// Rewrites what serde and the YAML parser say about Rust types and parser
/// options ("expected struct Tokens", "use Option<String>", "set
/// DuplicateKeyPolicy in Options") into what a person editing the file can
/// act on.
fn plain_words(message: &str) -> String {
    static RULES: LazyLock<Vec<(Regex, &'static str)>> = LazyLock::new(|| {
        [
            (r";? *use Option<[^>]*>", ""),
            (r",? *set \w+ in Options if acceptable", ""),
            (r"\. *If you just use !!binary[^.]*\.?", ""),
            (
                r"cannot deserialize null into string",
                "empty (null) where text is expected",
            ),
            (r"cannot deserialize null", "empty (null)"),
            (r"\bexpected option\b", "expected a value"),
            (r"\bOption<[^>]*>", "a value"),
            (
                r"\b(?:tuple |unit )?struct(?: variant)? [\w:]+",
                "a mapping of fields",
            ),
            (
                r"\b(?:internally tagged |adjacently tagged |untagged )?enum [\w:]+",
                "one of the allowed values",
            ),
            (r"\b[ui](?:8|16|32|64|128|size)\b", "a whole number"),
            (r"\bf(?:32|64)\b", "a number"),
            (r"\ba borrowed string\b", "a string"),
            (r"\b(a|type:) sequence\b", "$1 list"),
            (r"\b(a|type:) map\b", "$1 mapping"),
            (r"\bfield identifier\b", "a field name"),
            (r"\bvariant identifier\b", "one of the allowed values"),
        ]
        .into_iter()
        .filter_map(|(pattern, with)| Regex::new(pattern).ok().map(|re| (re, with)))
        .collect()
    });
    let mut out = message.to_string();
    for (re, with) in RULES.iter() {
        out = re.replace_all(&out, *with).into_owned();
    }
    out
}

/// Serialises a record as YAML, in the struct's (the seed's) key order.
pub fn to_yaml<T: Serialize>(path: &Path, value: &T) -> Result<String> {
    serde_saphyr::to_string(value).map_err(|e| Error::Corrupt {
        path: path.to_path_buf(),
        what: "YAML document",
        reason: e.to_string(),
    })
}

/// Serialises a record as 2-space JSON. When `original` is the JSON the file
/// held before, keys keep the order they were read in, so rewriting another
/// tool's file changes only what changed.
pub fn to_json<T: Serialize>(path: &Path, value: &T, original: Option<&Value>) -> Result<String> {
    let mut new = serde_json::to_value(value).map_err(|e| Error::Corrupt {
        path: path.to_path_buf(),
        what: "JSON document",
        reason: e.to_string(),
    })?;
    if let Some(old) = original {
        order_like(&mut new, old);
    }
    let mut text = serde_json::to_string_pretty(&new).map_err(|e| Error::Corrupt {
        path: path.to_path_buf(),
        what: "JSON document",
        reason: e.to_string(),
    })?;
    text.push('\n');
    Ok(text)
}

/// Reorders the keys of `new` to follow `old` wherever both have them; keys
/// only in `new` follow in their own order. Arrays are matched by position.
pub fn order_like(new: &mut Value, old: &Value) {
    match (new, old) {
        (Value::Object(n), Value::Object(o)) => {
            let mut ordered = serde_json::Map::with_capacity(n.len());
            for key in o.keys() {
                if let Some((k, mut v)) = n.shift_remove_entry(key) {
                    if let Some(ov) = o.get(key) {
                        order_like(&mut v, ov);
                    }
                    ordered.insert(k, v);
                }
            }
            ordered.append(n);
            *n = ordered;
        }
        (Value::Array(n), Value::Array(o)) => {
            for (nv, ov) in n.iter_mut().zip(o) {
                order_like(nv, ov);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
