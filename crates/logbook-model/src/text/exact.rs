//! A raw value read as a typed record with its integers exact, whatever
//! their size.

use serde::de::value::{MapDeserializer, SeqDeserializer};
use serde::de::{DeserializeOwned, Deserializer, IntoDeserializer, Visitor};
use serde::forward_to_deserialize_any;
use serde_json::{Error, Value};

/// Deserialises a typed record from a raw value with integers of any size:
/// serde_json hands an integer beyond 64 bits to a flattened struct's
/// buffer as a 128-bit one, which that buffer refuses, so a manifest with
/// `"big": 12345678901234567890123` among its unknown keys would not read.
pub fn from_raw<T: DeserializeOwned>(raw: &Value) -> std::result::Result<T, serde_json::Error> {
    T::deserialize(Exact(raw))
}

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
                let mut map = MapDeserializer::new(m.iter().map(|(k, v)| (k.as_str(), Exact(v))));
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
