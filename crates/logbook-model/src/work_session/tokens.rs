//! Token counts: the session's `tokens` block with its legacy keys, and
//! the bounds every count read, given or added up is held to.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::text;

/// The largest token count Logbook reads, stores or adds up to: 10^15,
/// thousands of times any model's context, yet small enough that sums and
/// percentages of counts can never overflow.
pub const MAX_TOKENS: u64 = 1_000_000_000_000_000;

/// Token tracking with the seed's defaults and legacy-key migration.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(try_from = "RawTokens")]
pub struct Tokens {
    /// Budget; 0 here only until [`load`] fills in the configured default.
    pub max: u64,
    /// Usage when the session started.
    pub initial: u64,
    /// Usage now.
    pub current: u64,
    /// Highest usage seen; never below `current`.
    pub peak: u64,
    /// Tokens spent in isolated agents rather than the main context.
    pub saved: u64,
    /// Unknown token keys, preserved.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

#[derive(Deserialize)]
struct RawTokens {
    max: Option<Value>,
    max_limit: Option<Value>,
    initial: Option<Value>,
    current: Option<Value>,
    peak: Option<Value>,
    saved: Option<Value>,
    saved_by_isolation: Option<Value>,
    #[serde(flatten)]
    extra: Map<String, Value>,
}

impl TryFrom<RawTokens> for Tokens {
    type Error = String;
    fn try_from(r: RawTokens) -> std::result::Result<Self, String> {
        let max = count("tokens.max", r.max)?.or(count("tokens.max_limit", r.max_limit)?);
        let current = count("tokens.current", r.current)?.unwrap_or(0);
        let saved = count("tokens.saved", r.saved)?
            .or(count("tokens.saved_by_isolation", r.saved_by_isolation)?)
            .unwrap_or(0);
        Ok(Tokens {
            max: max.unwrap_or(0),
            initial: count("tokens.initial", r.initial)?.unwrap_or(0),
            current,
            peak: count("tokens.peak", r.peak)?.unwrap_or(0).max(current),
            saved,
            extra: r.extra,
        })
    }
}

/// Reads a token count leniently: integers, whole floats, digit strings with
/// separators ("45,000"); null is "missing". Counts above [`MAX_TOKENS`]
/// are refused ([`check_token_counts`] names the file for them).
fn count(field: &str, v: Option<Value>) -> std::result::Result<Option<u64>, String> {
    let parsed = match v {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Number(n)) => n
            .as_u64()
            .or_else(|| {
                n.as_f64()
                    .filter(|f| *f >= 0.0 && *f <= MAX_TOKENS as f64)
                    .map(|f| f.round() as u64)
            })
            .ok_or_else(|| {
                format!("{field} must be a whole number from 0 to {MAX_TOKENS}, not {n}")
            })?,
        Some(Value::String(s)) => {
            let digits: String = s
                .chars()
                .filter(|c| !matches!(c, ',' | '_' | ' '))
                .collect();
            digits
                .parse::<u64>()
                .map_err(|_| format!("{field} must be a number, not {s:?}"))?
        }
        Some(other) => return Err(format!("{field} must be a number, not {other}")),
    };
    if parsed > MAX_TOKENS {
        return Err(format!(
            "{field} is {parsed}, above the largest count Logbook keeps ({MAX_TOKENS})"
        ));
    }
    Ok(Some(parsed))
}

/// A token count that is a number (or digits) above [`MAX_TOKENS`], as the
/// file spells it: such a count would overflow every sum Logbook makes.
fn too_large(v: &Value) -> Option<String> {
    let text = match v {
        Value::Number(n) => n.to_string(),
        Value::String(s) => s
            .chars()
            .filter(|c| !matches!(c, ',' | '_' | ' '))
            .collect(),
        Value::Object(m) => return m.get(text::YAML_FLOAT_KEY)?.as_str().map(str::to_string),
        _ => return None,
    };
    let big = match text.parse::<u128>() {
        Ok(u) => u > u128::from(MAX_TOKENS),
        Err(_) => text.parse::<f64>().is_ok_and(|f| f > MAX_TOKENS as f64),
    };
    big.then(|| match v {
        Value::String(s) => s.clone(),
        _ => text,
    })
}

/// The legacy token keys [`Tokens`] migrates (to `saved` and `max`).
pub const MIGRATED_TOKEN_KEYS: [&str; 2] = ["saved_by_isolation", "max_limit"];

/// Forgets the legacy token keys of a file's raw value before a rewrite
/// merges with it: the record took them over, so they are not left
/// behind beside their new names.
pub fn forget_migrated_keys(raw: &mut Value) {
    if let Some(tokens) = raw.get_mut("tokens").and_then(Value::as_object_mut) {
        for key in MIGRATED_TOKEN_KEYS {
            tokens.shift_remove(key);
        }
    }
}

/// Refuses a session file holding a token count above [`MAX_TOKENS`], with
/// an error naming the file and the field.
pub fn check_token_counts(path: &std::path::Path, raw: &Value) -> Result<()> {
    let refuse = |field: String, value: String| Error::TokensOutOfRange {
        what: format!("{} in {}", field, path.display()),
        value,
        max: MAX_TOKENS,
    };
    if let Some(tokens) = raw.get("tokens").and_then(Value::as_object) {
        for (key, v) in tokens {
            let known = [
                "max",
                "max_limit",
                "initial",
                "current",
                "peak",
                "saved",
                "saved_by_isolation",
            ];
            if known.contains(&key.as_str())
                && let Some(value) = too_large(v)
            {
                return Err(refuse(format!("tokens.{key}"), value));
            }
        }
    }
    if let Some(agents) = raw.get("agents_spawned").and_then(Value::as_array) {
        for (i, agent) in agents.iter().enumerate() {
            if let Some(value) = agent.get("tokens_used").and_then(too_large) {
                return Err(refuse(format!("agents_spawned[{i}].tokens_used"), value));
            }
        }
    }
    Ok(())
}

/// Checks a token count given on the command line or by an agent.
pub fn check_count(what: &str, n: u64) -> Result<u64> {
    if n > MAX_TOKENS {
        Err(Error::TokensOutOfRange {
            what: what.to_string(),
            value: n.to_string(),
            max: MAX_TOKENS,
        })
    } else {
        Ok(n)
    }
}

/// Adds two token counts, refusing a sum above [`MAX_TOKENS`].
pub fn add_counts(what: &str, a: u64, b: u64) -> Result<u64> {
    match a.checked_add(b) {
        Some(sum) => check_count(what, sum),
        None => Err(Error::TokensOutOfRange {
            what: what.to_string(),
            value: format!("{a} + {b}"),
            max: MAX_TOKENS,
        }),
    }
}

/// A spawned agent's `tokens_used`, read as leniently as the `tokens` block.
pub(super) fn lenient_count<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<u64, D::Error> {
    count("tokens_used", Option::<Value>::deserialize(d)?)
        .map(Option::unwrap_or_default)
        .map_err(serde::de::Error::custom)
}
