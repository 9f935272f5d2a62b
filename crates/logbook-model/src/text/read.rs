//! The readers: JSON and YAML text (or a JSON stream) into the typed record,
//! and into the raw value a rewrite keeps.

use std::path::Path;

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::errors::{field_error_with, field_path, json_error, value_at, yaml_error, yaml_line};
use super::{Format, exact, from_raw, strip_bom, yaml_node};
use crate::error::{Error, Result};

/// Parses JSON text into a typed record, naming the file, and the field
/// and line on failure.
pub fn parse_json<T: DeserializeOwned>(path: &Path, what: &'static str, text: &str) -> Result<T> {
    typed_json(
        path,
        what,
        serde_json::Deserializer::from_str(strip_bom(text)),
    )
}

/// Reads a typed record from a JSON stream (a large file read through a
/// buffer), with [`parse_json`]'s errors: the file, the field and the line.
pub fn read_json<T: DeserializeOwned>(
    path: &Path,
    what: &'static str,
    reader: impl std::io::Read,
) -> Result<T> {
    typed_json(path, what, serde_json::Deserializer::from_reader(reader))
}

/// The one JSON reading of [`parse_json`] and [`read_json`]: the whole
/// input as one `T`, or the file, field and line of what was wrong.
fn typed_json<'de, R: serde_json::de::Read<'de>, T: DeserializeOwned>(
    path: &Path,
    what: &'static str,
    mut de: serde_json::Deserializer<R>,
) -> Result<T> {
    let reason = match serde_path_to_error::deserialize::<_, T>(&mut de) {
        Ok(typed) => match de.end() {
            Ok(()) => return Ok(typed),
            Err(e) => e.to_string(),
        },
        Err(e) => json_error(&e),
    };
    Err(Error::Corrupt {
        path: path.to_path_buf(),
        what,
        reason,
    })
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
    if let Ok(typed) = from_raw(raw) {
        return Ok(typed);
    }
    serde_path_to_error::deserialize(exact::Exact(raw)).map_err(|e| Error::Corrupt {
        path: path.to_path_buf(),
        what,
        reason: field_error_with(
            &field_path(&e),
            &e.inner().to_string(),
            format,
            value_at(raw, e.path()),
        ),
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
    typed_from_raw(path, what, raw, Format::Yaml).map_err(|from_raw| {
        let Error::Corrupt { reason, .. } = &from_raw else {
            return from_raw;
        };
        match serde_saphyr::from_str_with_options::<T>(strip_bom(text), yaml_options()) {
            Err(e) => Error::Corrupt {
                path: path.to_path_buf(),
                what,
                reason: match yaml_line(&e) {
                    // The field and what is wrong from the raw value, the
                    // line from the parser.
                    Some(line) => match reason.split_once(": ") {
                        Some((field, said)) if field.starts_with("field `") => {
                            format!("{field} ({line}): {said}")
                        }
                        _ => format!("{line}: {reason}"),
                    },
                    None => yaml_error(&e),
                },
            },
            Ok(_) => from_raw,
        }
    })
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
