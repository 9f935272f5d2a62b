//! A YAML document as the parser resolved it, with where each node came
//! from, so a plain scalar the parser could only hold lossily (a big
//! integer) can be read again from its own text.

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
