//! Lines of an agent's log that do not parse: named by their number, and
//! kept in the stored transcript cut to a bound, so a log of any size adds
//! a bounded amount per bad line.

use serde::{Deserialize, Serialize};

/// A line that did not parse: reported with its number, the rest of the log
/// is still read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BadLine {
    /// 1-based line number in the source file.
    pub line: u64,
    /// What was wrong with it.
    pub reason: String,
}

/// How many bytes of JSON (its quotes aside) a bad line keeps at most, so
/// that a log of any size adds a bounded amount per bad line to its
/// stored transcript.
pub const BAD_LINE_KEPT: usize = 4096;

/// A bad line longer than [`BAD_LINE_KEPT`] as `rawLines` keeps it, so a
/// reader sees what it was and how long without the stored file growing
/// with it: `{"line", "bytes", "text", "truncated": true}`.
#[derive(Debug, Serialize)]
pub struct CutLine<'a> {
    /// Its number in the log, from 1.
    pub line: u64,
    /// Its length in the log, in bytes, without its newline.
    pub bytes: u64,
    /// Its start, cut on a character boundary so that its JSON string
    /// (quotes aside) is at most [`BAD_LINE_KEPT`] bytes.
    pub text: &'a str,
    /// Always true: what is not kept is not stored anywhere else.
    pub truncated: bool,
}

/// The longest start of `text` whose JSON string, quotes aside, is at most
/// `max` bytes, what a [`CutLine`] keeps (as serde_json escapes it: `"`, `\` and the short control
/// escapes take 2 bytes, other controls 6).
pub fn json_prefix(text: &str, max: usize) -> &str {
    let mut used = 0usize;
    for (i, c) in text.char_indices() {
        let n = match c {
            '"' | '\\' | '\u{8}' | '\u{c}' | '\n' | '\r' | '\t' => 2,
            c if (c as u32) < 0x20 => 6,
            c => c.len_utf8(),
        };
        if used + n > max {
            return &text[..i];
        }
        used += n;
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_json_prefix_is_cut_on_a_char_boundary_within_its_escaped_size() {
        let every: String = (0u32..0x80)
            .filter_map(char::from_u32)
            .chain(['é', '€', '😀', '\u{2028}', '\u{7f}'])
            .collect();
        for text in [every.as_str(), "\0\0\0\0", "aé€😀\"\\", ""] {
            for max in 0..40 {
                let kept = json_prefix(text, max);
                assert!(text.starts_with(kept));
                let json = serde_json::to_string(kept).unwrap();
                assert!(json.len() - 2 <= max, "{max}: {json}");
                // The next character would not have fitted.
                if let Some(c) = text[kept.len()..].chars().next() {
                    let more = serde_json::to_string(&text[..kept.len() + c.len_utf8()]).unwrap();
                    assert!(more.len() - 2 > max, "{max}: {more}");
                }
            }
            let whole = serde_json::to_string(text).unwrap().len() - 2;
            assert_eq!(json_prefix(text, whole), text);
        }
    }
}
