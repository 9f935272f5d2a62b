//! A parser's error in the words of the file rather than of the Rust types
//! it was read into: which field, on which line, what was needed, what was
//! found. Built from data, never from a dependency's English: the field from
//! `serde_path_to_error`'s path, what was needed from the target type's own
//! word for itself, what was found from the file's value, and the line from
//! the parser's position.

use std::fmt;

use serde::de::{Expected, Unexpected};
use serde_json::Value;

use super::{Format, YAML_FLOAT_KEY, yaml_float_of};

/// Why a raw value does not fit the record it is read as, as data: the
/// error type of [`from_raw`](super::from_raw), so what is said about it is
/// chosen here rather than parsed out of serde's sentence.
#[derive(Debug)]
pub struct Mismatch(What);

#[derive(Debug)]
enum What {
    /// A value of another type (or out of range) where `needed` belongs.
    Type { found: Found, needed: String },
    /// A list of the wrong length.
    Length { len: usize, needed: String },
    /// A name that is not one of the allowed values.
    Variant {
        given: String,
        allowed: &'static [&'static str],
    },
    /// A key a record that takes no others does not know.
    Field {
        given: String,
        allowed: &'static [&'static str],
    },
    /// A required field is absent.
    Missing(&'static str),
    /// A field is given twice.
    Duplicate(&'static str),
    /// A record's own check (a timestamp, an id) said what is wrong, in
    /// Logbook's words.
    Custom(String),
}

/// What was found, when the raw value at the error's path is not known.
#[derive(Debug)]
enum Found {
    Text(String),
    Number(String),
    Bool(bool),
    Null,
    List,
    Mapping,
    Other,
}

impl Found {
    fn of(unexpected: &Unexpected<'_>) -> Found {
        match unexpected {
            Unexpected::Str(s) => Found::Text((*s).to_string()),
            Unexpected::Char(c) => Found::Text(c.to_string()),
            Unexpected::Unsigned(n) => Found::Number(n.to_string()),
            Unexpected::Signed(n) => Found::Number(n.to_string()),
            Unexpected::Float(n) => Found::Number(n.to_string()),
            Unexpected::Bool(b) => Found::Bool(*b),
            Unexpected::Unit | Unexpected::Option => Found::Null,
            Unexpected::Seq => Found::List,
            Unexpected::Map => Found::Mapping,
            _ => Found::Other,
        }
    }

    fn spoken(&self, format: Format) -> String {
        let json = format == Format::Json;
        match self {
            Found::Text(s) => spoken(&Value::String(s.clone()), format),
            Found::Number(n) => format!("the number {n}"),
            Found::Bool(b) => b.to_string(),
            Found::Null => "null (nothing)".into(),
            Found::List if json => "an array".into(),
            Found::List => "a list".into(),
            Found::Mapping if json => "an object".into(),
            Found::Mapping => "a mapping".into(),
            Found::Other => "another kind of value".into(),
        }
    }
}

impl serde::de::Error for Mismatch {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Mismatch(What::Custom(msg.to_string()))
    }

    fn invalid_type(unexp: Unexpected<'_>, exp: &dyn Expected) -> Self {
        Mismatch(What::Type {
            found: Found::of(&unexp),
            needed: exp.to_string(),
        })
    }

    fn invalid_value(unexp: Unexpected<'_>, exp: &dyn Expected) -> Self {
        Self::invalid_type(unexp, exp)
    }

    fn invalid_length(len: usize, exp: &dyn Expected) -> Self {
        Mismatch(What::Length {
            len,
            needed: exp.to_string(),
        })
    }

    fn unknown_variant(variant: &str, expected: &'static [&'static str]) -> Self {
        Mismatch(What::Variant {
            given: variant.to_string(),
            allowed: expected,
        })
    }

    fn unknown_field(field: &str, expected: &'static [&'static str]) -> Self {
        Mismatch(What::Field {
            given: field.to_string(),
            allowed: expected,
        })
    }

    fn missing_field(field: &'static str) -> Self {
        Mismatch(What::Missing(field))
    }

    fn duplicate_field(field: &'static str) -> Self {
        Mismatch(What::Duplicate(field))
    }
}

impl std::error::Error for Mismatch {}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.said(Format::Json, None))
    }
}

impl Mismatch {
    /// What is wrong, in the file's words; `value` is what the file holds
    /// where the error points, when known.
    fn said(&self, format: Format, value: Option<&Value>) -> String {
        match &self.0 {
            What::Type { found, needed } => format!(
                "{} is needed here, not {}",
                needed_words(needed, format),
                value.map_or_else(|| found.spoken(format), |v| spoken(v, format))
            ),
            What::Length { len, needed } => format!(
                "{} is needed here, not {len} item(s)",
                needed_words(needed, format)
            ),
            What::Variant { given, allowed } => format!(
                "`{given}` is not one of the allowed values {}",
                quoted_list(allowed)
            ),
            What::Field { given, allowed } => format!(
                "`{given}` is not a field here; the fields are {}",
                quoted_list(allowed)
            ),
            What::Missing(_) => "this required field is missing".into(),
            What::Duplicate(field) => format!("the field `{field}` is given twice"),
            What::Custom(message) => message.clone(),
        }
    }
}

/// `` `a`, `b` or `c` ``.
fn quoted_list(items: &[&str]) -> String {
    let quoted: Vec<String> = items.iter().map(|i| format!("`{i}`")).collect();
    match quoted.split_last() {
        None => "none".into(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

/// The value at `path` in `raw`: what was found where the error points
/// (serde only says "number" of a number it read from a value).
fn value_at<'v>(raw: &'v Value, path: &serde_path_to_error::Path) -> Option<&'v Value> {
    use serde_path_to_error::Segment;
    let mut v = raw;
    for segment in path.iter() {
        v = match segment {
            Segment::Seq { index } => v.get(index)?,
            Segment::Map { key } => v.get(key)?,
            Segment::Enum { .. } => v,
            Segment::Unknown => return None,
        };
    }
    Some(v)
}

/// A value as the file's words: `the text "x"`, `the number 5`, `an array`.
fn spoken(v: &Value, format: Format) -> String {
    let json = format == Format::Json;
    match v {
        Value::String(s) => {
            let mut short: String = s.chars().take(40).collect();
            if short.len() < s.len() {
                short.push('…');
            }
            format!("the text {short:?}")
        }
        Value::Number(n) => format!("the number {n}"),
        Value::Bool(b) => b.to_string(),
        Value::Null => "null (nothing)".into(),
        Value::Array(_) if json => "an array".into(),
        Value::Array(_) => "a list".into(),
        Value::Object(m) => match yaml_float_of(v) {
            Some(_) => format!(
                "the number {}",
                m.get(YAML_FLOAT_KEY)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
            ),
            None if json => "an object".into(),
            None => "a mapping".into(),
        },
    }
}

/// What a target type says it takes (its visitor's own word for itself:
/// `u64`, `a string`, `struct Tokens`, or a record's own "an RFC 3339
/// timestamp"), as the file's words.
fn needed_words(expected: &str, format: Format) -> String {
    let json = format == Format::Json;
    let mapping = if json { "an object" } else { "a mapping" };
    let list = if json { "an array" } else { "a list" };
    match expected {
        "u8" | "u16" | "u32" | "u64" | "u128" | "usize" | "i8" | "i16" | "i32" | "i64" | "i128"
        | "isize" => "a whole number".into(),
        "f32" | "f64" => "a number".into(),
        "a string" | "string" | "a borrowed string" | "str" => "text".into(),
        "a boolean" | "bool" => "true or false".into(),
        "a character" | "char" => "a single character".into(),
        "option" | "a value" => "a value (not null)".into(),
        "unit" => "null (nothing)".into(),
        "a map" | "map" => mapping.into(),
        "a sequence" | "sequence" => list.into(),
        "field identifier" => "a field name".into(),
        "variant identifier" => "one of the allowed values".into(),
        other if other.starts_with("struct ") || other.starts_with("tuple struct ") => {
            // A tuple struct is written as a list.
            if other.starts_with("tuple") {
                list
            } else {
                mapping
            }
            .into()
        }
        other if other.starts_with("a tuple") || other.starts_with("tuple of") => list.into(),
        other if other.starts_with("enum ") || other.contains(" enum ") => {
            "one of the allowed values".into()
        }
        other => other.to_string(),
    }
}

/// Where in the record a value did not fit, as a person would name it
/// (`execution.started_at`, `outputs[0].file`); empty for the whole file.
fn field_path(path: &serde_path_to_error::Path) -> String {
    // Segments the tracker could not name (`?`) and what follows them say
    // nothing to a person: the path is cut before the first.
    let mut out = String::new();
    for segment in path.iter() {
        match segment {
            serde_path_to_error::Segment::Seq { index } => out.push_str(&format!("[{index}]")),
            serde_path_to_error::Segment::Map { key } => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            serde_path_to_error::Segment::Enum { variant } => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(variant);
            }
            serde_path_to_error::Segment::Unknown => break,
        }
    }
    out
}

/// A value of `raw` that does not fit its record, in the file's words:
/// which field, on which line where the parser knew it (`line`), what is
/// needed there and what was found.
pub(super) fn field_error(
    e: &serde_path_to_error::Error<Mismatch>,
    raw: &Value,
    format: Format,
    line: Option<(u64, u64)>,
) -> String {
    let mut field = field_path(e.path());
    if let What::Missing(name) = &e.inner().0 {
        if !field.is_empty() {
            field.push('.');
        }
        field.push_str(name);
    }
    let said = e.inner().said(format, value_at(raw, e.path()));
    let line = line.map(|(line, column)| format!("line {line}, column {column}"));
    match (field.is_empty(), line) {
        (true, None) => said,
        (true, Some(line)) => format!("{line}: {said}"),
        (false, None) => format!("field `{field}`: {said}"),
        (false, Some(line)) => format!("field `{field}` ({line}): {said}"),
    }
}

/// A YAML parser error that is not about a value's type (the text is not
/// YAML): where, and the parser's own first line without its `error:`
/// prefix (the CLI prints its own), or, for a key given twice, which key.
pub fn yaml_error(e: &serde_saphyr::Error) -> String {
    let e = e.without_snippet();
    let said = match e {
        serde_saphyr::Error::DuplicateMappingKey { key: Some(key), .. } => {
            format!("the key `{key}` is given twice")
        }
        serde_saphyr::Error::DuplicateMappingKey { key: None, .. } => "a key is given twice".into(),
        _ => {
            let text = e.to_string();
            let first = text.lines().next().unwrap_or_default();
            first.strip_prefix("error: ").unwrap_or(first).to_string()
        }
    };
    match yaml_line(e) {
        Some((line, column)) if !said.contains(&format!("line {line}")) => {
            format!("line {line}, column {column}: {said}")
        }
        _ => said,
    }
}

/// The line and column a YAML parser error points at.
pub(super) fn yaml_line(e: &serde_saphyr::Error) -> Option<(u64, u64)> {
    e.location()
        .map(|l| (l.line(), l.column()))
        .filter(|(line, _)| *line > 0)
}
