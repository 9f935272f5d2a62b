//! Lenient fields: a value of the wrong type reads as the field's default,
//! and the fields read so are found again for `logbook doctor`.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::from_raw;

/// The known fields of a file whose value had the wrong type, so the typed
/// record read them as absent (`raw` is the file's value, `T` its record):
/// their paths (`outputs[0].description`), for `logbook doctor`. The values
/// themselves are kept on rewrite ([`merge_write`](super::merge_write)).
pub fn wrong_type_fields<T: Serialize + DeserializeOwned>(raw: &Value) -> Vec<String> {
    match from_raw::<T>(raw) {
        Ok(typed) => wrong_type_fields_of(raw, &typed),
        Err(_) => vec![],
    }
}

/// [`wrong_type_fields`] of a `raw` value already read as `typed` (with
/// [`from_raw`], as [`parse_json_with_raw`](super::parse_json_with_raw) does):
/// saves reading it again.
pub fn wrong_type_fields_of<T: Serialize>(raw: &Value, typed: &T) -> Vec<String> {
    let Ok(base) = serde_json::to_value(typed) else {
        return vec![];
    };
    let mut found = vec![];
    wrong_types(raw, &base, &mut String::new(), &mut found);
    found
}

/// `at`: the path so far, extended and cut back in place, so only a field
/// found wrong costs a string of its own.
fn wrong_types(raw: &Value, base: &Value, at: &mut String, found: &mut Vec<String>) {
    let len = at.len();
    match (raw, base) {
        (Value::Object(r), Value::Object(b)) => {
            for (k, rv) in r {
                if len > 0 {
                    at.push('.');
                }
                at.push_str(k);
                match b.get(k) {
                    Some(bv) => wrong_types(rv, bv, at, found),
                    None if !rv.is_null() => found.push(at.clone()),
                    None => {}
                }
                at.truncate(len);
            }
        }
        (Value::Array(r), Value::Array(b)) if r.len() == b.len() => {
            for (i, (rv, bv)) in r.iter().zip(b).enumerate() {
                use std::fmt::Write as _;
                let _ = write!(at, "[{i}]");
                wrong_types(rv, bv, at, found);
                at.truncate(len);
            }
        }
        // Read as the field's default although the file says otherwise.
        (r, b) if !r.is_null() && r != b && is_empty_default(b) => found.push(at.clone()),
        _ => {}
    }
}

/// What a lenient field falls back to when its value had the wrong type.
fn is_empty_default(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_u64() == Some(0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
    }
}

/// Deserialises a field leniently: a value of the wrong type (or `null`)
/// reads as the field's default, so one odd field never hides a whole file;
/// [`merge_write`](super::merge_write) keeps the original on rewrite and
/// [`wrong_type_fields`] reports it.
pub fn lenient<'de, D, T>(d: D) -> std::result::Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: DeserializeOwned + Default,
{
    let v = <Value as serde::Deserialize>::deserialize(d)?;
    Ok(from_raw(&v).unwrap_or_default())
}
