//! The readers: JSON and YAML text (or a JSON stream) into the typed record,
//! and into the raw value a rewrite keeps.

use std::path::Path;

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::errors::{field_error, yaml_error, yaml_line};
use super::{Format, exact, from_raw, strip_bom, yaml_node};
use crate::error::{Error, Result};

/// Parses JSON text into a typed record, naming the file, and the field
/// and line on failure.
pub fn parse_json<T: DeserializeOwned>(path: &Path, what: &'static str, text: &str) -> Result<T> {
    typed_json(
        path,
        what,
        serde_json::Deserializer::from_str(strip_bom(text)),
        || Some(text.to_string()),
    )
}

/// Reads a typed record from a JSON stream (a large file read through a
/// buffer), with [`parse_json`]'s errors: the file, the field and the line.
/// `again` gives the whole text when a value does not fit, to say which
/// field and why (the stream is gone by then); `None` says the line only.
pub fn read_json<T: DeserializeOwned>(
    path: &Path,
    what: &'static str,
    reader: impl std::io::Read,
    again: impl FnOnce() -> Option<String>,
) -> Result<T> {
    typed_json(
        path,
        what,
        serde_json::Deserializer::from_reader(reader),
        again,
    )
}

/// The one JSON reading of [`parse_json`] and [`read_json`]: the whole
/// input as one `T`, or the file, field and line of what was wrong. Broken
/// syntax is the parser's own message ("key must be a string at line 1
/// column 3": no types in it, and no field yet); a value that does not fit
/// is read again from the raw value, which says which field and why, and
/// the parser's position says where.
fn typed_json<'de, R: serde_json::de::Read<'de>, T: DeserializeOwned>(
    path: &Path,
    what: &'static str,
    mut de: serde_json::Deserializer<R>,
    again: impl FnOnce() -> Option<String>,
) -> Result<T> {
    let corrupt = |reason: String| Error::Corrupt {
        path: path.to_path_buf(),
        what,
        reason,
    };
    let e = match T::deserialize(&mut de) {
        Ok(typed) => return de.end().map(|()| typed).map_err(|e| corrupt(e.to_string())),
        Err(e) => e,
    };
    if e.classify() != serde_json::error::Category::Data {
        return Err(corrupt(e.to_string()));
    }
    let at = Some((e.line() as u64, e.column() as u64));
    let Some(raw) = again().and_then(|text| serde_json::from_str::<Value>(strip_bom(&text)).ok())
    else {
        return Err(corrupt(format!(
            "line {}, column {}: a value there does not fit its field",
            e.line(),
            e.column()
        )));
    };
    match tracked::<T>(path, what, &raw, Format::Json, at) {
        Err(said) => Err(said),
        // What only the stream refuses (a field given twice, which the raw
        // value keeps once): the parser's own words.
        Ok(_) => Err(corrupt(e.to_string())),
    }
}

/// Parses JSON text once into both the typed record and the raw value: the
/// raw value is what a rewrite keeps the key order (and unknown keys) of.
pub fn parse_json_with_raw<T: DeserializeOwned>(
    path: &Path,
    what: &'static str,
    text: &str,
) -> Result<(T, Value)> {
    // Untracked first, as in `typed_from_raw`: only text that is not JSON
    // is read again, to say where.
    let raw: Value = match serde_json::from_str(strip_bom(text)) {
        Ok(raw) => raw,
        Err(_) => parse_json(path, what, text)?,
    };
    let typed = typed_from_raw(path, what, &raw, Format::Json)?;
    Ok((typed, raw))
}

fn typed_from_raw<T: DeserializeOwned>(
    path: &Path,
    what: &'static str,
    raw: &Value,
    format: Format,
) -> Result<T> {
    // Tracking the path makes every read dearer; only a record that fails
    // is read again to say where.
    from_raw(raw).or_else(|_| tracked(path, what, raw, format, None))
}

/// `raw` as a `T`, read with its path tracked: when it does not fit, the
/// field and why, on `line` when the parser knew it.
fn tracked<T: DeserializeOwned>(
    path: &Path,
    what: &'static str,
    raw: &Value,
    format: Format,
    line: Option<(u64, u64)>,
) -> Result<T> {
    serde_path_to_error::deserialize(exact::Exact(raw)).map_err(|e| Error::Corrupt {
        path: path.to_path_buf(),
        what,
        reason: field_error(&e, raw, format, line),
    })
}

/// Parses YAML text into a typed record, naming the file on failure. The
/// text goes through [`parse_yaml_raw`] first, so the record sees the same
/// values a rewrite keeps.
pub fn parse_yaml<T: DeserializeOwned>(path: &Path, what: &'static str, text: &str) -> Result<T> {
    Ok(parse_yaml_with_raw(path, what, text)?.0)
}

/// Parses YAML text once into the typed record and the raw value a rewrite
/// ([`to_yaml`](super::to_yaml)) keeps the values of.
pub fn parse_yaml_with_raw<T: DeserializeOwned>(
    path: &Path,
    what: &'static str,
    text: &str,
) -> Result<(T, Value)> {
    let raw = parse_yaml_raw(path, what, text)?;
    let typed = yaml_record(path, what, text, &raw)?;
    Ok((typed, raw))
}

/// The typed record of YAML `text`, already parsed into `raw`. When it does
/// not fit the type, the error is the parser's own on the text, which names
/// the line (the raw value has lost the positions); the text is parsed
/// again on that error path only.
pub fn yaml_record<T: DeserializeOwned>(
    path: &Path,
    what: &'static str,
    text: &str,
    raw: &Value,
) -> Result<T> {
    if let Ok(typed) = from_raw(raw) {
        return Ok(typed);
    }
    // The field and what is wrong from the raw value, the line from the
    // parser on the text (the raw value has lost the positions): the text
    // is parsed again on that error path only.
    let line = serde_saphyr::from_str_with_options::<T>(strip_bom(text), yaml_options())
        .err()
        .and_then(|e| yaml_line(&e));
    tracked(path, what, raw, Format::Yaml, line)
}

/// The parser options every YAML file Logbook reads is parsed with: YAML 1.2
/// booleans only (so keys and values such as `y`, `yes`, `on`, `no` stay
/// strings, as they are in YAML 1.2), and `.inf`/`.nan` accepted as floats.
pub fn yaml_options() -> serde_saphyr::Options {
    let mut options = serde_saphyr::Options::default();
    options.strict_booleans = true;
    options.non_finite_float_policy = serde_saphyr::NonFiniteFloatPolicy::PassThrough;
    options
}

/// Parses YAML text into a JSON value without losing what JSON can hold:
/// integers of any size keep their digits (the parser alone would round
/// them to a float), keys are always strings, and the non-finite floats
/// JSON cannot hold become [`yaml_float_marker`](super::yaml_float_marker)s
/// that [`to_yaml`](super::to_yaml) writes back as `.inf`, `-.inf` or `.nan`.
pub fn parse_yaml_raw(path: &Path, what: &'static str, text: &str) -> Result<Value> {
    let text = strip_bom(text);
    let node: yaml_node::Node =
        serde_saphyr::from_str_with_options(text, yaml_options()).map_err(|e| Error::Corrupt {
            path: path.to_path_buf(),
            what,
            reason: yaml_error(&e),
        })?;
    Ok(node.into_value(text))
}
