//! A parser's error in the words of the file rather than of the Rust types
//! it was read into: which field, on which line, what was needed, what was
//! found.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

use super::{Format, YAML_FLOAT_KEY, yaml_float_of};

/// The value at `path` in `raw`: what was found where the error points
/// (serde only says "number" of a number it read from a value).
pub(super) fn value_at<'v>(raw: &'v Value, path: &serde_path_to_error::Path) -> Option<&'v Value> {
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

/// A JSON parser error in the file's words. Broken syntax is the parser's
/// own message ("key must be a string at line 1 column 3": no types in it,
/// and no field yet); a value that does not fit names its field.
pub(super) fn json_error(e: &serde_path_to_error::Error<serde_json::Error>) -> String {
    match e.inner().classify() {
        serde_json::error::Category::Data => {
            field_error(&field_path(e), &e.inner().to_string(), Format::Json)
        }
        _ => e.inner().to_string(),
    }
}

/// Where in the record a value did not fit, as a person would name it
/// (`execution.started_at`, `outputs[0].file`); empty for the whole file.
pub(super) fn field_path<E>(e: &serde_path_to_error::Error<E>) -> String {
    // Segments the tracker could not name (`?`) and what follows them say
    // nothing to a person: the path is cut before the first.
    let mut out = String::new();
    for segment in e.path().iter() {
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

/// A parser's message about the value at `field`, in the words of the file
/// rather than of the Rust types it was read into: which field, on which
/// line where known, what is needed there and what was found.
fn field_error(field: &str, message: &str, format: Format) -> String {
    field_error_with(field, message, format, None)
}

/// [`field_error`], with the value found there when it is known.
pub(super) fn field_error_with(
    field: &str,
    message: &str,
    format: Format,
    value: Option<&Value>,
) -> String {
    static LOCATION: LazyLock<Option<Regex>> =
        LazyLock::new(|| Regex::new(r",? at line (\d+),? column (\d+)\s*$").ok());
    static MISSING: LazyLock<Option<Regex>> =
        LazyLock::new(|| Regex::new(r"^missing field `([^`]*)`$").ok());
    let (message, line) = match LOCATION.as_ref().and_then(|re| re.captures(message)) {
        Some(c) => (
            &message[..c.get(0).map_or(message.len(), |m| m.start())],
            Some(format!("line {}, column {}", &c[1], &c[2])),
        ),
        None => (message, None),
    };
    let (field, said) = match MISSING.as_ref().and_then(|re| re.captures(message)) {
        Some(c) => {
            let full = if field.is_empty() {
                c[1].to_string()
            } else {
                format!("{field}.{}", &c[1])
            };
            (full, "this required field is missing".to_string())
        }
        None => (field.to_string(), describe(message, format, value)),
    };
    match (field.is_empty(), line) {
        (true, None) => said,
        (true, Some(line)) => format!("{line}: {said}"),
        (false, None) => format!("field `{field}`: {said}"),
        (false, Some(line)) => format!("field `{field}` ({line}): {said}"),
    }
}

/// serde's sentence about a value that does not fit ("invalid type: string
/// \"x\", expected u64") as what is needed and what was found ("a whole
/// number is needed here, not the text \"x\"").
fn describe(message: &str, format: Format, value: Option<&Value>) -> String {
    static RULES: LazyLock<Option<[Regex; 4]>> = LazyLock::new(|| {
        Some([
            Regex::new(r"^invalid (?:type|value): (.+?), expected (.+)$").ok()?,
            Regex::new(r"^unknown variant `([^`]*)`, expected (.+)$").ok()?,
            Regex::new(r"^duplicate field `([^`]*)`$").ok()?,
            Regex::new(r"^invalid length (\d+), expected (.+)$").ok()?,
        ])
    });
    let Some([invalid, variant, duplicate, length]) = RULES.as_ref() else {
        return plain_words(message);
    };
    if let Some(c) = invalid.captures(message) {
        return format!(
            "{} is needed here, not {}",
            needed(&c[2], format),
            value.map_or_else(|| found(&c[1], format), |v| spoken(v, format))
        );
    }
    if let Some(c) = variant.captures(message) {
        let allowed = c[2].strip_prefix("one of ").unwrap_or(&c[2]);
        return format!("`{}` is not one of the allowed values {allowed}", &c[1]);
    }
    if let Some(c) = duplicate.captures(message) {
        return format!("the field `{}` is given twice", &c[1]);
    }
    if let Some(c) = length.captures(message) {
        return format!(
            "{} is needed here, not {} item(s)",
            needed(&c[2], format),
            &c[1]
        );
    }
    plain_words(message)
}

/// What serde says it expected, as the file's words.
fn needed(expected: &str, format: Format) -> String {
    let plain = plain_words(expected);
    let json = format == Format::Json;
    match plain.as_str() {
        "a string" | "string" => "text".into(),
        "a boolean" | "bool" => "true or false".into(),
        "a mapping of fields" | "a mapping" if json => "an object".into(),
        "a mapping of fields" => "a mapping".into(),
        "a list" if json => "an array".into(),
        "a value" => "a value (not null)".into(),
        _ => plain,
    }
}

/// What serde says it found (its `Unexpected`), as the file's words.
fn found(unexpected: &str, format: Format) -> String {
    let json = format == Format::Json;
    if let Some(rest) = unexpected.strip_prefix("string ") {
        return format!("the text {rest}");
    }
    for prefix in ["integer ", "floating point "] {
        if let Some(rest) = unexpected.strip_prefix(prefix) {
            return format!("the number {}", rest.trim_matches('`'));
        }
    }
    if let Some(rest) = unexpected.strip_prefix("boolean ") {
        return rest.trim_matches('`').to_string();
    }
    match unexpected {
        "map" if json => "an object".into(),
        "map" => "a mapping".into(),
        "sequence" if json => "an array".into(),
        "sequence" => "a list".into(),
        "null" | "unit value" | "unit" => "null (nothing)".into(),
        "number" => "a number".into(),
        "string" => "text".into(),
        "boolean" => "true or false".into(),
        other => plain_words(other),
    }
}

/// The first line of a YAML parser error (it goes on with a source excerpt),
/// without its own `error:` prefix, which the CLI already prints, and in
/// the words of the file rather than of the Rust types it was read into.
pub fn yaml_error(e: &serde_saphyr::Error) -> String {
    let text = e.to_string();
    let first = text.lines().next().unwrap_or_default();
    plain_words(first.strip_prefix("error: ").unwrap_or(first))
}

/// The line and column a YAML parser error points at, as `line N, column M`.
pub(super) fn yaml_line(e: &serde_saphyr::Error) -> Option<String> {
    static LINE: LazyLock<Option<Regex>> =
        LazyLock::new(|| Regex::new(r"line (\d+),? column (\d+)").ok());
    let text = e.to_string();
    let c = LINE.as_ref()?.captures(&text)?;
    Some(format!("line {}, column {}", &c[1], &c[2]))
}

/// Rewrites what serde and the YAML parser say about Rust types and parser
/// options ("expected struct Tokens", "use Option<String>", "set
/// DuplicateKeyPolicy in Options") into what a person editing the file can
/// act on.
pub(super) fn plain_words(message: &str) -> String {
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
            // serde-saphyr's "invalid u64": the type named without an
            // article, which the rule below would make "invalid a whole number".
            (
                r"\binvalid [ui](?:8|16|32|64|128|size)\b",
                "not a valid whole number",
            ),
            (r"\binvalid f(?:32|64)\b", "not a valid number"),
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
