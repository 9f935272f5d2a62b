//! A verdict's confidence, read leniently: one value another tool wrote
//! out of range never makes a whole workflow state unreadable.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use super::SessionState;

/// A verdict's confidence, a fraction from 0 to 1. Read leniently, so that
/// one value another tool wrote out of range never makes the whole state
/// unreadable (seed 004 gives no range; Logbook's is 0 to 1):
/// - a number above 1 and at most 100 is a percentage, read as its
///   fraction (85 is 0.85), which is what Logbook prints of it;
/// - anything else (negative, above 100, not a number) counts as the
///   nearest fraction (0 or 1; 0 for what is not a number) and is printed
///   exactly as read, since Logbook cannot tell what was meant.
///
/// A rewrite of the file keeps either as the other tool wrote it (a write
/// owns only what it changed).
///
/// [`Confidence::read_leniently`] says which, for the read's notice and
/// `doctor`.
#[derive(Debug, Clone, PartialEq)]
pub struct Confidence {
    fraction: f64,
    /// The value as read, when it was not a fraction from 0 to 1.
    read: Option<Value>,
}

impl Confidence {
    /// A confidence Logbook writes: a finite fraction from 0 to 1, else why not.
    pub fn new(x: f64) -> std::result::Result<Confidence, String> {
        check_confidence(x)?;
        Ok(Confidence {
            fraction: x,
            read: None,
        })
    }

    /// The fraction from 0 to 1 everything reads.
    pub fn fraction(&self) -> f64 {
        self.fraction
    }

    /// What the file held, when it was not a fraction: a sentence naming
    /// the value and what it was read as.
    pub fn read_leniently(&self) -> Option<String> {
        let read = self.read.as_ref()?;
        Some(if self.was_percentage() {
            format!(
                "confidence {read} is read as a percentage, the fraction {}",
                self.fraction
            )
        } else {
            format!(
                "confidence {read} is outside 0 to 1 and not a percentage; it counts as {} and is kept as written",
                self.fraction
            )
        })
    }

    fn was_percentage(&self) -> bool {
        self.read
            .as_ref()
            .and_then(Value::as_f64)
            .is_some_and(|x| x > 1.0 && x <= 100.0)
    }

    /// Reads a value as the file holds it (see the type's rules).
    pub fn from_value(v: Value) -> Confidence {
        match v.as_f64() {
            Some(x) if check_confidence(x).is_ok() => Confidence {
                fraction: x,
                read: None,
            },
            Some(x) if x > 1.0 && x <= 100.0 => Confidence {
                fraction: x / 100.0,
                read: Some(v),
            },
            Some(x) if x > 100.0 => Confidence {
                fraction: 1.0,
                read: Some(v),
            },
            _ => Confidence {
                fraction: 0.0,
                read: Some(v),
            },
        }
    }
}

impl std::fmt::Display for Confidence {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.fraction.fmt(f)
    }
}

impl Serialize for Confidence {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match &self.read {
            Some(raw) if !self.was_percentage() => raw.serialize(s),
            _ => self.fraction.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Confidence {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Confidence, D::Error> {
        // Through a JSON value: with exact numbers, `0.80` reaches a flattened
        // struct as serde_json's private number map, which `f64` refuses.
        Ok(Confidence::from_value(Value::deserialize(d)?))
    }
}

impl SessionState {
    /// Each value of this state read leniently (a verdict's confidence out
    /// of range), as "verdict N (AGENT): what": for the read's notice and
    /// `doctor`.
    pub fn lenient_values(&self) -> Vec<String> {
        let Some(w) = &self.orchestrator_workflow else {
            return vec![];
        };
        w.verdicts
            .iter()
            .enumerate()
            .filter_map(|(i, v)| {
                let what = v.confidence.read_leniently()?;
                Some(format!("verdict {} ({}): {what}", i + 1, v.agent))
            })
            .collect()
    }
}

/// Checks a verdict's confidence is a finite number from 0 to 1.
pub fn check_confidence(x: f64) -> std::result::Result<(), String> {
    if x.is_finite() && (0.0..=1.0).contains(&x) {
        Ok(())
    } else {
        Err(format!("confidence {x} is outside 0 to 1 (e.g. 0.8)"))
    }
}
