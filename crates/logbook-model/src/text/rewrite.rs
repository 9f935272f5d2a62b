//! The lossless rewrite: a record written back over the JSON or YAML its
//! file held, keeping every value, key order and unknown key it did not
//! change.

use std::path::Path;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{from_raw, yaml_float_of};
use crate::error::{Error, Result};

/// Serialises a record as YAML, in the struct's (the seed's) key order.
/// When `original` is the raw value the file held before (from
/// [`parse_yaml_with_raw`](super::parse_yaml_with_raw)), every value the
/// record did not change is written as it was read (see [`merge_write`]).
pub fn to_yaml<T: Serialize + DeserializeOwned>(
    path: &Path,
    value: &T,
    original: Option<&Value>,
) -> Result<String> {
    let merged = merged(path, value, original)?;
    serde_saphyr::to_string(&YamlOut(&merged)).map_err(|e| Error::Corrupt {
        path: path.to_path_buf(),
        what: "YAML document",
        reason: e.to_string(),
    })
}

/// Writes a JSON value through the YAML serializer: numbers as the YAML
/// numbers they are (serde_json's exact numbers would otherwise come out as
/// a private map) and float markers as `.inf`/`.nan`.
struct YamlOut<'a>(&'a Value);

impl Serialize for YamlOut<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self.0 {
            Value::Null => s.serialize_unit(),
            Value::Bool(b) => s.serialize_bool(*b),
            Value::String(t) => s.serialize_str(t),
            Value::Number(n) => {
                if let Some(u) = n.as_u64() {
                    s.serialize_u64(u)
                } else if let Some(i) = n.as_i64() {
                    s.serialize_i64(i)
                } else if let Ok(u) = n.as_str().parse::<u128>() {
                    s.serialize_u128(u)
                } else if let Ok(i) = n.as_str().parse::<i128>() {
                    s.serialize_i128(i)
                } else {
                    // Integers beyond 128 bits and floats: YAML readers
                    // hold them as floats anyway.
                    s.serialize_f64(n.as_f64().unwrap_or(f64::NAN))
                }
            }
            Value::Array(items) => {
                let mut seq = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(&YamlOut(item))?;
                }
                seq.end()
            }
            Value::Object(m) => {
                if let Some(f) = yaml_float_of(self.0) {
                    return s.serialize_f64(f);
                }
                let mut map = s.serialize_map(Some(m.len()))?;
                for (k, v) in m {
                    map.serialize_entry(k, &YamlOut(v))?;
                }
                map.end()
            }
        }
    }
}

/// A record as a JSON value (what [`to_json_over`] is given as `read`).
pub fn to_value<T: Serialize>(path: &Path, value: &T) -> Result<Value> {
    serde_json::to_value(value).map_err(|e| Error::Corrupt {
        path: path.to_path_buf(),
        what: "JSON document",
        reason: e.to_string(),
    })
}

/// Serialises a record as 2-space JSON. When `original` is the JSON the file
/// held before, every value the record did not change is written as it was
/// read, in the order it was read (see [`merge_write`]), so rewriting another
/// tool's file changes only what changed.
pub fn to_json<T: Serialize + DeserializeOwned>(
    path: &Path,
    value: &T,
    original: Option<&Value>,
) -> Result<String> {
    pretty_json(path, &merged(path, value, original)?)
}

/// `value` as what a rewrite writes: merged over `original`, the raw value
/// the file held, when there is one (see [`merge_write`]).
fn merged<T: Serialize + DeserializeOwned>(
    path: &Path,
    value: &T,
    original: Option<&Value>,
) -> Result<Value> {
    let new = to_value(path, value)?;
    Ok(match original {
        Some(raw) => merge_write::<T>(raw, new),
        None => new,
    })
}

/// [`to_json`] over the file's `raw` value, given the record as it was
/// read from it (`read`, as a value, taken before the change): a writer
/// that just read the file has it, and working it out again from `raw`
/// would be a sizeable part of a manifest write.
pub fn to_json_over<T: Serialize>(
    path: &Path,
    value: &T,
    raw: &Value,
    read: &Value,
) -> Result<String> {
    let new = to_value(path, value)?;
    pretty_json(path, &merge(raw, read, new))
}

fn pretty_json(path: &Path, merged: &Value) -> Result<String> {
    let mut text = serde_json::to_string_pretty(merged).map_err(|e| Error::Corrupt {
        path: path.to_path_buf(),
        what: "JSON document",
        reason: e.to_string(),
    })?;
    text.push('\n');
    Ok(text)
}

/// What a rewrite writes, given the raw value the file held (`raw`) and the
/// changed record (`new`): the write owns only what it changed, so `new` is
/// compared with the record as it was read (`raw` parsed again as `T`), and
/// wherever the two agree the raw value is kept as it was: integers of any
/// size, `null`s the record leaves out, known keys whose value had the wrong
/// type (read as absent), lenient spellings, unknown keys. Keys keep the raw
/// order; keys only in `new` follow in their own order.
pub fn merge_write<T: Serialize + DeserializeOwned>(raw: &Value, new: Value) -> Value {
    let base = from_raw::<T>(raw)
        .ok()
        .and_then(|typed: T| serde_json::to_value(typed).ok());
    match base {
        Some(base) => merge(raw, &base, new),
        None => {
            let mut new = new;
            order_like(&mut new, raw);
            new
        }
    }
}

fn merge(raw: &Value, base: &Value, new: Value) -> Value {
    if *base == new {
        return raw.clone();
    }
    match (raw, base, new) {
        (Value::Object(r), Value::Object(b), Value::Object(mut n)) => {
            let mut out = serde_json::Map::with_capacity(r.len().max(n.len()));
            for (k, rv) in r {
                match (b.get(k), n.shift_remove(k)) {
                    (Some(bv), Some(nv)) => {
                        out.insert(k.clone(), merge(rv, bv, nv));
                    }
                    // The record did not see it (null, wrong type) and the
                    // write set it now.
                    (None, Some(nv)) => {
                        out.insert(k.clone(), nv);
                    }
                    // The write removed it.
                    (Some(_), None) => {}
                    // The record did not see it and the write left it alone.
                    (None, None) => {
                        out.insert(k.clone(), rv.clone());
                    }
                }
            }
            out.append(&mut n);
            Value::Object(out)
        }
        (Value::Array(r), Value::Array(b), Value::Array(n)) if r.len() == b.len() => {
            Value::Array(merge_arrays(r, b, n))
        }
        (_, _, new) => new,
    }
}

/// Aligns the array as read (`b`, position for position the raw `r`) with
/// the array written (`n`): an element of `n` equal to one of `b` at or
/// after the current position is that element (those skipped were removed,
/// as compaction removes the front); an element found nowhere is the
/// current one changed in place, unless the current one still comes later
/// (then it is new).
fn merge_arrays(r: &[Value], b: &[Value], n: Vec<Value>) -> Vec<Value> {
    let mut out = Vec::with_capacity(n.len());
    let mut i = 0;
    for (j, nv) in n.iter().enumerate() {
        if let Some(k) = b[i.min(b.len())..].iter().position(|bv| bv == nv) {
            out.push(r[i + k].clone());
            i += k + 1;
        } else if i < b.len() && !n[j + 1..].contains(&b[i]) {
            out.push(merge(&r[i], &b[i], nv.clone()));
            i += 1;
        } else {
            out.push(nv.clone());
        }
    }
    out
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
