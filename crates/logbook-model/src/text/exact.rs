//! A raw value read as a typed record with its integers exact, whatever
//! their size, and a value that does not fit said as data ([`Mismatch`]),
//! never as serde's English.

use serde::de::value::{MapDeserializer, SeqDeserializer, StrDeserializer};
use serde::de::{
    DeserializeOwned, DeserializeSeed, Deserializer, EnumAccess, IntoDeserializer, VariantAccess,
    Visitor,
};
use serde::forward_to_deserialize_any;
use serde_json::Value;

use super::errors::Mismatch;

/// Deserialises a typed record from a raw value with integers of any size:
/// serde_json hands an integer beyond 64 bits to a flattened struct's
/// buffer as a 128-bit one, which that buffer refuses, so a manifest with
/// `"big": 12345678901234567890123` among its unknown keys would not read.
pub fn from_raw<T: DeserializeOwned>(raw: &Value) -> std::result::Result<T, Mismatch> {
    T::deserialize(Exact(raw))
}

/// serde_json's own name for an exact number passed through a map,
/// which its `Value` and `Number` read back as the number.
const NUMBER_TOKEN: &str = "$serde_json::private::Number";

#[derive(Clone, Copy)]
pub(super) struct Exact<'de>(pub(super) &'de Value);

impl<'de> IntoDeserializer<'de, Mismatch> for Exact<'de> {
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

impl<'de> Exact<'de> {
    /// A number as serde_json's own value hands it on: the widest native
    /// type that holds it, else its digits through the number map.
    fn number<V: Visitor<'de>>(
        n: &'de serde_json::Number,
        visitor: V,
    ) -> Result<V::Value, Mismatch> {
        if let Some(u) = n.as_u64() {
            visitor.visit_u64(u)
        } else if let Some(i) = n.as_i64() {
            visitor.visit_i64(i)
        } else if let (false, Some(f)) = (wide_integer(n), n.as_f64()) {
            visitor.visit_f64(f)
        } else {
            visitor.visit_map(MapDeserializer::new(std::iter::once((
                NUMBER_TOKEN,
                n.as_str(),
            ))))
        }
    }
}

impl<'de> Deserializer<'de> for Exact<'de> {
    type Error = Mismatch;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Mismatch> {
        match self.0 {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(*b),
            Value::Number(n) => Exact::number(n, visitor),
            Value::String(s) => visitor.visit_borrowed_str(s),
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
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Mismatch> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Mismatch> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Mismatch> {
        match self.0 {
            // A unit variant by name, or `{variant: value}`.
            Value::String(s) => visitor.visit_enum(StrDeserializer::<Mismatch>::new(s)),
            Value::Object(m) if m.len() == 1 => match m.iter().next() {
                Some((variant, value)) => visitor.visit_enum(Variant {
                    name: variant,
                    value,
                }),
                None => self.deserialize_any(visitor),
            },
            _ => self.deserialize_any(visitor),
        }
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        unit unit_struct seq tuple tuple_struct map struct identifier ignored_any
    }
}

/// An enum written as `{variant: value}`.
struct Variant<'de> {
    name: &'de str,
    value: &'de Value,
}

impl<'de> EnumAccess<'de> for Variant<'de> {
    type Error = Mismatch;
    type Variant = Exact<'de>;

    fn variant_seed<S: DeserializeSeed<'de>>(
        self,
        seed: S,
    ) -> Result<(S::Value, Exact<'de>), Mismatch> {
        let name = seed.deserialize(StrDeserializer::<Mismatch>::new(self.name))?;
        Ok((name, Exact(self.value)))
    }
}

impl<'de> VariantAccess<'de> for Exact<'de> {
    type Error = Mismatch;

    fn unit_variant(self) -> Result<(), Mismatch> {
        serde::Deserialize::deserialize(self).map(|serde::de::IgnoredAny| ())
    }

    fn newtype_variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<S::Value, Mismatch> {
        seed.deserialize(self)
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, Mismatch> {
        self.deserialize_any(visitor)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Mismatch> {
        self.deserialize_any(visitor)
    }
}
