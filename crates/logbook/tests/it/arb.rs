//! Shared generators for the property tests of the file formats: JSON
//! values with what rewrites used to lose (big integers, nulls, nesting),
//! unknown keys that cannot clash with known ones, and mutations of real
//! files.

use proptest::prelude::*;
use serde_json::{Map, Number, Value};

/// Text with the characters that trouble quoting: quotes, colons, hashes,
/// newlines, tabs, leading spaces, non-ASCII, YAML's bool and null words.
pub(crate) fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        proptest::collection::vec(
            prop_oneof![
                Just('a'),
                Just('Z'),
                Just('0'),
                Just(' '),
                Just(':'),
                Just('#'),
                Just('\''),
                Just('"'),
                Just('\n'),
                Just('\t'),
                Just('-'),
                Just('{'),
                Just('['),
                Just('é'),
                Just('🟢'),
                Just('\\'),
                Just('.'),
                Just('e'),
            ],
            0..12
        )
        .prop_map(|c| c.into_iter().collect()),
        prop::sample::select(vec![
            "yes",
            "no",
            "y",
            "n",
            "on",
            "off",
            "true",
            "false",
            "null",
            "~",
            "",
            "1e30",
            ".inf",
            "0o17",
            "0x1F",
            "123",
            "-0",
            "2001-12-14",
            "1_000",
            "0755",
        ])
        .prop_map(str::to_string),
    ]
}

/// A number as serde_json holds it with exact precision: small, 64-bit,
/// far beyond 64 and 128 bits, negative, or a finite float.
pub(crate) fn number() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (
            1u8..=9,
            proptest::collection::vec(0u8..=9, 19..48),
            any::<bool>()
        )
            .prop_map(|(first, rest, neg)| {
                let digits: String = std::iter::once(first)
                    .chain(rest)
                    .map(|d| char::from(b'0' + d))
                    .collect();
                let text = if neg { format!("-{digits}") } else { digits };
                Value::Number(serde_json::from_str::<Number>(&text).unwrap())
            }),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| Number::from_f64(f).map_or(Value::Null, Value::Number)),
    ]
}

/// Any JSON value, nested a few levels.
pub(crate) fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        number(),
        text().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::vec((key(), inner), 0..4)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// A key no record knows (`x-…`), or one of YAML 1.1's bool words.
pub(crate) fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z0-9]{1,6}".prop_map(|s| format!("x-{s}")),
        prop::sample::select(vec!["y", "n", "yes", "no", "on", "off", "Y", "NO"])
            .prop_map(|s| format!("x{s}")),
    ]
}

/// Unknown keys with arbitrary values.
pub(crate) fn unknowns() -> impl Strategy<Value = Map<String, Value>> {
    proptest::collection::vec((key(), value()), 0..5).prop_map(|kv| kv.into_iter().collect())
}

/// Adds `extra` to the object at `at` (a JSON pointer) of `doc`.
pub(crate) fn add_unknowns(doc: &mut Value, at: &str, extra: &Map<String, Value>) {
    if let Some(Value::Object(m)) = doc.pointer_mut(at) {
        for (k, v) in extra {
            m.insert(k.clone(), v.clone());
        }
    }
}

/// Whether two values mean the same: integers by their digits, floats by
/// value (YAML writes `1e30` as `1.0e+30`), the rest by equality.
pub(crate) fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let int = |n: &Number| !n.as_str().contains(['.', 'e', 'E']);
            if int(x) && int(y) {
                x.as_str() == y.as_str()
            } else {
                x.as_f64() == y.as_f64()
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

/// How a real file is damaged: cut short, a byte changed, inserted or
/// removed.
#[derive(Debug, Clone)]
pub(crate) enum Mutation {
    Truncate(usize),
    Replace(usize, u8),
    Insert(usize, u8),
    Remove(usize),
}

/// Up to four mutations, at positions taken modulo the text's length.
pub(crate) fn mutations() -> impl Strategy<Value = Vec<Mutation>> {
    proptest::collection::vec(
        prop_oneof![
            any::<usize>().prop_map(Mutation::Truncate),
            (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Replace(i, b)),
            (
                any::<usize>(),
                prop::sample::select(b"{}[]:,\"'-#\n 0a\xEF".to_vec())
            )
                .prop_map(|(i, b)| Mutation::Insert(i, b)),
            any::<usize>().prop_map(Mutation::Remove),
        ],
        1..4,
    )
}

/// Applies `mutations` to `text`, returning the (lossily decoded) result.
pub(crate) fn mutate(text: &str, mutations: &[Mutation]) -> String {
    let mut bytes = text.as_bytes().to_vec();
    for m in mutations {
        let len = bytes.len().max(1);
        match *m {
            Mutation::Truncate(i) => bytes.truncate(i % len),
            Mutation::Replace(i, b) if !bytes.is_empty() => bytes[i % len] = b,
            Mutation::Insert(i, b) => bytes.insert(i % (bytes.len() + 1), b),
            Mutation::Remove(i) if !bytes.is_empty() => {
                bytes.remove(i % len);
            }
            _ => {}
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Reads a file of `testdata/shared` (the copies of the fixtures and seeds).
pub(crate) fn shared(rel: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/shared")
        .join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}
