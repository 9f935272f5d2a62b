//! The JSON and YAML text of records: parse once into the typed record (and
//! the raw value a rewrite keeps key order from), write back in the seed's
//! key order. Pure: the store reads and writes the bytes.
//!
//! - `read`: the parsers, JSON and YAML, into the typed record and the raw
//!   value.
//! - `rewrite`: the lossless write back over what the file held.
//! - `lenient`: fields that read a wrong-typed value as their default, and
//!   finding them.
//! - `errors`: a parser's error in the file's words, with its field and line.
//! - `exact` and `yaml_node`: the raw value's integers of any size.
//! - `nested`: pretty JSON written one level deeper, as it is made.
//! - `splice`: a changed JSON value written into the text it came from,
//!   every byte it did not change kept (another tool's file).

mod errors;
mod exact;
mod lenient;
mod nested;
mod read;
mod rewrite;
mod splice;
mod yaml_node;

use serde_json::Value;

pub use errors::yaml_error;
pub use exact::from_raw;
pub use lenient::{lenient, wrong_type_fields, wrong_type_fields_of};
pub use nested::Nested;
pub use read::{
    parse_json, parse_json_with_raw, parse_yaml, parse_yaml_raw, parse_yaml_with_raw, read_json,
    yaml_options, yaml_record,
};
pub use rewrite::{merge_write, order_like, to_json, to_json_over, to_value, to_yaml};
pub use splice::json_over;

/// Drops a UTF-8 byte order mark: editors on Windows write one, and JSON
/// and YAML parsers refuse it, which would hide the whole file.
pub fn strip_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// The two text formats, for the words an error uses: a JSON user knows
/// objects and arrays, a YAML user mappings and lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Json,
    Yaml,
}

/// The key of the one-key object that stands for a YAML float JSON cannot
/// hold (`{"$yaml": ".inf"}`), so it survives a rewrite as the float it was.
pub const YAML_FLOAT_KEY: &str = "$yaml";

/// The stand-in for a non-finite YAML float, see [`YAML_FLOAT_KEY`].
pub fn yaml_float_marker(f: f64) -> Value {
    let text = if f.is_nan() {
        ".nan"
    } else if f.is_sign_negative() {
        "-.inf"
    } else {
        ".inf"
    };
    let mut m = serde_json::Map::new();
    m.insert(YAML_FLOAT_KEY.into(), Value::String(text.into()));
    Value::Object(m)
}

fn yaml_float_of(v: &Value) -> Option<f64> {
    let Value::Object(m) = v else { return None };
    if m.len() != 1 {
        return None;
    }
    match m.get(YAML_FLOAT_KEY)?.as_str()? {
        ".nan" => Some(f64::NAN),
        ".inf" => Some(f64::INFINITY),
        "-.inf" => Some(f64::NEG_INFINITY),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
