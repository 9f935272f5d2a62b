//! How much free text a caller may send in one field. An agent steered by
//! a prompt injection can send anything; a bound per field keeps one call
//! from growing a record, and every brief read from it, without limit.

use crate::error::{Error, Result};

/// The most bytes of free text one field takes (a note, a title, a prompt,
/// a summary, a milestone name…). Transcripts have their own, larger cap.
pub const MAX_TEXT_FIELD: usize = 64 * 1024;

/// Refuses `value` when it is longer than [`MAX_TEXT_FIELD`], naming `field`.
pub fn bounded(field: &'static str, value: &str) -> Result<()> {
    within(field, value.len())
}

/// [`bounded`] for each value of a list field (conditions, blockers…).
pub fn bounded_each<S: AsRef<str>>(field: &'static str, values: &[S]) -> Result<()> {
    values.iter().try_for_each(|v| bounded(field, v.as_ref()))
}

/// [`bounded`] for structured context an agent sends (a JSON object), by
/// the length of its JSON text.
pub fn bounded_json(
    field: &'static str,
    value: &serde_json::Map<String, serde_json::Value>,
) -> Result<()> {
    within(field, serde_json::to_string(value).map_or(0, |t| t.len()))
}

/// The longest start of `s` of at most `max` bytes that ends on a
/// character boundary.
pub fn cut_at(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

fn within(field: &'static str, len: usize) -> Result<()> {
    if len > MAX_TEXT_FIELD {
        return Err(Error::TextTooLong {
            field,
            len,
            limit: MAX_TEXT_FIELD,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_itself_is_allowed_and_one_byte_more_is_not() {
        assert!(bounded("note", &"a".repeat(MAX_TEXT_FIELD)).is_ok());
        let err = bounded("note", &"a".repeat(MAX_TEXT_FIELD + 1)).unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::Invalid);
        let text = err.to_string();
        assert!(text.contains("note") && text.contains("64 KiB"), "{text}");
        assert!(bounded_each("blockers", &["x", &"b".repeat(MAX_TEXT_FIELD + 1)]).is_err());
    }
}
