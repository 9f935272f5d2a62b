//! The JSON and YAML text of records: parse once into the typed record (and
//! the raw value a rewrite keeps key order from), write back in the seed's
//! key order. Pure: the store reads and writes the bytes.

use std::path::Path;

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
/// without its own `error:` prefix, which the CLI already prints.
pub fn yaml_error(e: &serde_saphyr::Error) -> String {
    let text = e.to_string();
    let first = text.lines().next().unwrap_or_default();
    first.strip_prefix("error: ").unwrap_or(first).to_string()
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
