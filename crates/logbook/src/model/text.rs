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

/// Parses JSON text into a typed record, naming the file, and the field
/// and line on failure.
pub fn parse_json<T: DeserializeOwned>(path: &Path, what: &'static str, text: &str) -> Result<T> {
    let mut de = serde_json::Deserializer::from_str(strip_bom(text));
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

/// Reads a typed record from a JSON stream (a large file read through a
/// buffer), with [`parse_json`]'s errors: the file, the field and the line.
pub fn read_json<T: DeserializeOwned>(
    path: &Path,
    what: &'static str,
    reader: impl std::io::Read,
) -> Result<T> {
    let mut de = serde_json::Deserializer::from_reader(reader);
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
    let raw: Value = parse_json(path, what, text)?;
    let typed = typed_from_raw(path, what, &raw, Format::Json)?;
    Ok((typed, raw))
}

fn typed_from_raw<T: DeserializeOwned>(
    path: &Path,
    what: &'static str,
    raw: &Value,
    format: Format,
) -> Result<T> {
    // Tracking the path costs a third of reading a record; only a record
    // that fails is read again to say where.
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

/// A JSON parser error in the file's words. Broken syntax is the parser's
/// own message ("key must be a string at line 1 column 3": no types in it,
/// and no field yet); a value that does not fit names its field.
fn json_error(e: &serde_path_to_error::Error<serde_json::Error>) -> String {
    match e.inner().classify() {
        serde_json::error::Category::Data => {
            field_error(&field_path(e), &e.inner().to_string(), Format::Json)
        }
        _ => e.inner().to_string(),
    }
}

/// Where in the record a value did not fit, as a person would name it
/// (`execution.started_at`, `outputs[0].file`); empty for the whole file.
fn field_path<E>(e: &serde_path_to_error::Error<E>) -> String {
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
fn field_error_with(field: &str, message: &str, format: Format, value: Option<&Value>) -> String {
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

/// Parses YAML text into a typed record, naming the file on failure. The
/// text goes through [`parse_yaml_raw`] first, so the record sees the same
/// values a rewrite keeps.
pub fn parse_yaml<T: DeserializeOwned>(path: &Path, what: &'static str, text: &str) -> Result<T> {
    Ok(parse_yaml_with_raw(path, what, text)?.0)
}

/// Parses YAML text once into the typed record and the raw value a rewrite
/// ([`to_yaml`]) keeps the values of.
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
/// JSON cannot hold become [`yaml_float_marker`]s that [`to_yaml`] writes
/// back as `.inf`, `-.inf` or `.nan`.
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

/// A YAML document as the parser resolved it, with where each node came
/// from, so a plain scalar the parser could only hold lossily (a big
/// integer) can be read again from its own text.
mod yaml_node {
    use std::fmt;

    use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
    use serde_json::{Map, Number, Value};
    use serde_saphyr::Spanned;

    pub(super) struct Node(Spanned<Kind>);

    enum Kind {
        Null,
        Bool(bool),
        Unsigned(u64),
        Signed(i64),
        Float(f64),
        Text(String),
        Seq(Vec<Node>),
        Map(Vec<(Node, Node)>),
    }

    impl<'de> Deserialize<'de> for Node {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            Spanned::<Kind>::deserialize(d).map(Node)
        }
    }

    impl<'de> Deserialize<'de> for Kind {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_any(KindVisitor)
        }
    }

    struct KindVisitor;

    impl<'de> Visitor<'de> for KindVisitor {
        type Value = Kind;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("any YAML value")
        }
        fn visit_bool<E>(self, v: bool) -> Result<Kind, E> {
            Ok(Kind::Bool(v))
        }
        fn visit_u64<E>(self, v: u64) -> Result<Kind, E> {
            Ok(Kind::Unsigned(v))
        }
        fn visit_i64<E>(self, v: i64) -> Result<Kind, E> {
            Ok(Kind::Signed(v))
        }
        fn visit_f64<E>(self, v: f64) -> Result<Kind, E> {
            Ok(Kind::Float(v))
        }
        fn visit_str<E>(self, v: &str) -> Result<Kind, E> {
            Ok(Kind::Text(v.to_string()))
        }
        fn visit_string<E>(self, v: String) -> Result<Kind, E> {
            Ok(Kind::Text(v))
        }
        fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Kind, E> {
            String::from_utf8(v.to_vec())
                .map(Kind::Text)
                .map_err(|_| E::custom("binary data that is not UTF-8 text"))
        }
        fn visit_unit<E>(self) -> Result<Kind, E> {
            Ok(Kind::Null)
        }
        fn visit_none<E>(self) -> Result<Kind, E> {
            Ok(Kind::Null)
        }
        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Kind, D::Error> {
            Kind::deserialize(d)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<Kind, A::Error> {
            let mut items = vec![];
            while let Some(x) = a.next_element()? {
                items.push(x);
            }
            Ok(Kind::Seq(items))
        }
        fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<Kind, A::Error> {
            let mut entries = vec![];
            while let Some(x) = a.next_entry()? {
                entries.push(x);
            }
            Ok(Kind::Map(entries))
        }
    }

    impl Node {
        /// The node's own text in the document, when the parser knows it.
        fn source<'t>(&self, text: &'t str) -> Option<&'t str> {
            let span = self.0.defined.span();
            let start = usize::try_from(span.byte_offset()?).ok()?;
            let len = usize::try_from(span.byte_len()?).ok()?;
            text.get(start..start.checked_add(len)?)
        }

        pub(super) fn into_value(self, text: &str) -> Value {
            let source = self.source(text).map(str::trim);
            match self.0.value {
                Kind::Null => Value::Null,
                Kind::Bool(b) => Value::Bool(b),
                Kind::Unsigned(u) => Value::from(u),
                Kind::Signed(i) => Value::from(i),
                Kind::Float(f) => float_value(f, source),
                Kind::Text(s) => Value::String(s),
                Kind::Seq(items) => {
                    Value::Array(items.into_iter().map(|n| n.into_value(text)).collect())
                }
                Kind::Map(entries) => {
                    let mut m = Map::with_capacity(entries.len());
                    for (k, v) in entries {
                        m.insert(k.into_key(text), v.into_value(text));
                    }
                    Value::Object(m)
                }
            }
        }

        /// Keys are strings in JSON; a scalar key keeps its own spelling.
        fn into_key(self, text: &str) -> String {
            let source = self.source(text).map(str::to_string);
            match self.0.value {
                Kind::Text(s) => s,
                Kind::Null => source.unwrap_or_default(),
                Kind::Bool(b) => source.unwrap_or_else(|| b.to_string()),
                Kind::Unsigned(u) => source.unwrap_or_else(|| u.to_string()),
                Kind::Signed(i) => source.unwrap_or_else(|| i.to_string()),
                Kind::Float(f) => source.unwrap_or_else(|| f.to_string()),
                other @ (Kind::Seq(_) | Kind::Map(_)) => {
                    let node = Node(Spanned::new(other, self.0.referenced, self.0.defined));
                    node.into_value(text).to_string()
                }
            }
        }
    }

    /// A float as JSON holds it: the exact digits when the text is an
    /// integer or a JSON number (so `12345678901234567890123` stays that),
    /// else the parsed value; non-finite ones as a marker.
    fn float_value(f: f64, source: Option<&str>) -> Value {
        if !f.is_finite() {
            return super::yaml_float_marker(f);
        }
        if let Some(src) = source {
            let digits = src.strip_prefix('+').unwrap_or(src);
            if let Ok(n) = serde_json::from_str::<Number>(digits) {
                return Value::Number(n);
            }
        }
        Number::from_f64(f).map_or(Value::Null, Value::Number)
    }
}

/// Deserialises a typed record from a raw value with integers of any size:
/// serde_json hands an integer beyond 64 bits to a flattened struct's
/// buffer as a 128-bit one, which that buffer refuses, so a manifest with
/// `"big": 12345678901234567890123` among its unknown keys would not read.
pub fn from_raw<T: DeserializeOwned>(raw: &Value) -> std::result::Result<T, serde_json::Error> {
    T::deserialize(exact::Exact(raw))
}

mod exact {
    use serde::de::value::{MapDeserializer, SeqDeserializer};
    use serde::de::{Deserializer, IntoDeserializer, Visitor};
    use serde::forward_to_deserialize_any;
    use serde_json::{Error, Value};

    /// serde_json's own name for an exact number passed through a map,
    /// which its `Value` and `Number` read back as the number.
    const NUMBER_TOKEN: &str = "$serde_json::private::Number";

    #[derive(Clone, Copy)]
    pub(super) struct Exact<'de>(pub(super) &'de Value);

    impl<'de> IntoDeserializer<'de, Error> for Exact<'de> {
        type Deserializer = Self;
        fn into_deserializer(self) -> Self {
            self
        }
    }

    fn wide_integer(n: &serde_json::Number) -> bool {
        n.as_u64().is_none() && n.as_i64().is_none() && {
            let digits = n.as_str().strip_prefix('-').unwrap_or(n.as_str());
            !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
        }
    }

    impl<'de> Deserializer<'de> for Exact<'de> {
        type Error = Error;

        fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
            match self.0 {
                Value::Number(n) if wide_integer(n) => visitor.visit_map(MapDeserializer::new(
                    std::iter::once((NUMBER_TOKEN, n.as_str())),
                )),
                Value::Array(items) => {
                    let mut seq = SeqDeserializer::new(items.iter().map(Exact));
                    let out = visitor.visit_seq(&mut seq)?;
                    seq.end()?;
                    Ok(out)
                }
                Value::Object(m) => {
                    let mut map =
                        MapDeserializer::new(m.iter().map(|(k, v)| (k.as_str(), Exact(v))));
                    let out = visitor.visit_map(&mut map)?;
                    map.end()?;
                    Ok(out)
                }
                other => other.deserialize_any(visitor),
            }
        }

        fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
            match self.0 {
                Value::Null => visitor.visit_none(),
                _ => visitor.visit_some(self),
            }
        }

        fn deserialize_newtype_struct<V: Visitor<'de>>(
            self,
            _name: &'static str,
            visitor: V,
        ) -> Result<V::Value, Error> {
            visitor.visit_newtype_struct(self)
        }

        fn deserialize_enum<V: Visitor<'de>>(
            self,
            name: &'static str,
            variants: &'static [&'static str],
            visitor: V,
        ) -> Result<V::Value, Error> {
            self.0.deserialize_enum(name, variants, visitor)
        }

        fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
            self.0.deserialize_bool(visitor)
        }
        fn deserialize_i64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
            self.0.deserialize_i64(visitor)
        }
        fn deserialize_u64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
            self.0.deserialize_u64(visitor)
        }
        fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
            self.0.deserialize_f64(visitor)
        }
        fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
            self.0.deserialize_str(visitor)
        }
        fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
            self.0.deserialize_string(visitor)
        }
        fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
            self.0.deserialize_identifier(visitor)
        }
        fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Error> {
            self.0.deserialize_unit(visitor)
        }

        forward_to_deserialize_any! {
            i8 i16 i32 i128 u8 u16 u32 u128 f32 char bytes byte_buf
            unit_struct seq tuple tuple_struct map struct ignored_any
        }
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
fn yaml_line(e: &serde_saphyr::Error) -> Option<String> {
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
/// When `original` is the raw value the file held before (from
/// [`parse_yaml_with_raw`]), every value the record did not change is
/// written as it was read (see [`merge_write`]).
pub fn to_yaml<T: Serialize + DeserializeOwned>(
    path: &Path,
    value: &T,
    original: Option<&Value>,
) -> Result<String> {
    let new = to_value(path, value)?;
    let merged = match original {
        Some(raw) => merge_write::<T>(raw, new),
        None => new,
    };
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
    let new = to_value(path, value)?;
    let merged = match original {
        Some(raw) => merge_write::<T>(raw, new),
        None => new,
    };
    pretty_json(path, &merged)
}

/// [`to_json`] over the file's `raw` value, given the record as it was
/// read from it (`read`, as a value, taken before the change): a writer
/// that just read the file has it, and working it out again from `raw`
/// costs a quarter of a manifest write.
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

/// The known fields of a file whose value had the wrong type, so the typed
/// record read them as absent (`raw` is the file's value, `T` its record):
/// their paths (`outputs[0].description`), for `logbook doctor`. The values
/// themselves are kept on rewrite ([`merge_write`]).
pub fn wrong_type_fields<T: Serialize + DeserializeOwned>(raw: &Value) -> Vec<String> {
    match from_raw::<T>(raw) {
        Ok(typed) => wrong_type_fields_of(raw, &typed),
        Err(_) => vec![],
    }
}

/// [`wrong_type_fields`] of a `raw` value already read as `typed` (with
/// [`from_raw`], as [`parse_json_with_raw`] does): saves reading it again.
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
/// [`merge_write`] keeps the original on rewrite and
/// [`wrong_type_fields`] reports it.
pub fn lenient<'de, D, T>(d: D) -> std::result::Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: DeserializeOwned + Default,
{
    let v = <Value as serde::Deserialize>::deserialize(d)?;
    Ok(from_raw(&v).unwrap_or_default())
}

#[cfg(test)]
mod tests {
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
