//! The one rule for showing text from outside to a person at a terminal.
//!
//! A transcript's prompt, a log's `cwd` or a name a caller chose can hold
//! bytes a terminal obeys rather than shows: `\r` and `ESC [K` rewrite the
//! line just printed, OSC 52 writes the clipboard, a bidirectional override
//! reorders what the eye reads. Every face that prints for a person passes
//! such text through [`shown`] (or [`cell`], inside one row of a listing),
//! and builds a command a person may paste with [`shell_word`]. JSON needs
//! none of this: its escaping already covers every control.

use std::borrow::Cow;

/// Whether a terminal could act on `c` instead of showing it: C0 controls
/// other than newline and tab, DEL, C1 controls and the bidirectional
/// embeddings, overrides and isolates.
pub fn is_unsafe(c: char) -> bool {
    matches!(c, '\0'..='\x08' | '\x0b'..='\x1f' | '\x7f'..='\u{9f}'
        | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` with every [`is_unsafe`] character shown as a `\u{…}` escape
/// (`\u{1b}`), so it can be written to a terminal as it is; newlines and
/// tabs stay, for text shown as a block (a message body).
pub fn shown(text: &str) -> Cow<'_, str> {
    escape(text, is_unsafe)
}

/// `text` for one cell or one line of a listing: as [`shown`], and newline
/// and tab escaped too, so no value can add a row or shift a column.
pub fn cell(text: &str) -> Cow<'_, str> {
    escape(text, |c| c == '\n' || c == '\t' || is_unsafe(c))
}

fn escape(text: &str, escaped: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !text.chars().any(&escaped) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if escaped(c) {
            out.push_str(&format!("\\u{{{:x}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// `s` as one shell word, safe to paste: as it is when it holds only
/// characters no shell treats specially; in single quotes when it holds
/// nothing a terminal would act on; else in `$'…'`, whose escapes (`\n`,
/// `\x1b`) give the shell the exact bytes while the line shown holds none
/// of them and stays one line. A word that begins with `-` is still read
/// as an option: put `--` before it (see [`cd_line`]).
pub fn shell_word(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:@%,=".contains(c));
    if plain {
        return s.to_string();
    }
    if !s.chars().any(|c| c == '\n' || c == '\t' || is_unsafe(c)) {
        return format!("'{}'", s.replace('\'', r"'\''"));
    }
    let mut out = String::from("$'");
    for c in s.chars() {
        match c {
            '\\' => out.push_str(r"\\"),
            '\'' => out.push_str(r"\'"),
            '\n' => out.push_str(r"\n"),
            '\t' => out.push_str(r"\t"),
            '\r' => out.push_str(r"\r"),
            c if u32::from(c) < 0x80 && is_unsafe(c) => {
                out.push_str(&format!("\\x{:02x}", u32::from(c)));
            }
            // C1 controls and bidi marks: their UTF-8 bytes, which is
            // what the shell would have passed on.
            c if is_unsafe(c) => {
                let mut buf = [0; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    out.push_str(&format!("\\x{b:02x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// `cd <dir> && <command>` as one line safe to paste, with `--` before a
/// folder that begins with `-` (which `cd` would take for an option).
pub fn cd_line(dir: &str, command: &str) -> String {
    let dashes = if dir.starts_with('-') { "-- " } else { "" };
    format!("cd {dashes}{} && {command}", shell_word(dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_shown_not_sent() {
        assert_eq!(shown("plain é 🦀\n\tok"), "plain é 🦀\n\tok");
        assert!(matches!(shown("plain"), Cow::Borrowed(_)));
        assert_eq!(shown("/tmp\r\x1b[Kcd /tmp"), r"/tmp\u{d}\u{1b}[Kcd /tmp");
        assert_eq!(shown("\x1b]52;c;QUJD\x07"), r"\u{1b}]52;c;QUJD\u{7}");
        assert_eq!(shown("\x7f\u{85}\u{9b}"), r"\u{7f}\u{85}\u{9b}");
        assert_eq!(shown("a\u{202e}b\u{2066}c"), r"a\u{202e}b\u{2066}c");
        // Neighbours of the classes are ordinary text.
        assert_eq!(shown("\u{a0}\u{2029}\u{206a}"), "\u{a0}\u{2029}\u{206a}");
    }

    #[test]
    fn a_cell_is_one_line() {
        assert_eq!(
            cell("x\nc9999999-fake\tmain"),
            r"x\u{a}c9999999-fake\u{9}main"
        );
        assert_eq!(cell("\x1b"), r"\u{1b}");
    }

    #[test]
    fn shell_words_paste_as_one_line() {
        assert_eq!(shell_word("/srv/app-1"), "/srv/app-1");
        assert_eq!(shell_word(""), "''");
        assert_eq!(shell_word("/my work/it's"), r"'/my work/it'\''s'");
        assert_eq!(
            shell_word("/tmp\r\x1b[K; curl x | sh\n"),
            r"$'/tmp\r\x1b[K; curl x | sh\n'"
        );
        assert_eq!(shell_word("a'b\\\u{85}"), r"$'a\'b\\\xc2\x85'");
        assert_eq!(
            cd_line("-rf", "codex resume s"),
            "cd -- -rf && codex resume s"
        );
        assert_eq!(cd_line("/w", "x"), "cd /w && x");
    }

    proptest::proptest! {
        /// Nothing a terminal acts on survives, and a cell is one line.
        #[test]
        fn nothing_unsafe_survives(s in "(\\PC|[\\x00-\\x1f\\x7f-\\u{9f}\\u{202a}-\\u{202e}\\u{2066}-\\u{2069}]){0,40}") {
            proptest::prop_assert!(!shown(&s).chars().any(is_unsafe));
            let c = cell(&s);
            proptest::prop_assert!(!c.contains('\n') && !c.contains('\t') && !c.chars().any(is_unsafe));
            let w = shell_word(&s);
            proptest::prop_assert!(!w.contains('\n') && !w.chars().any(is_unsafe), "{w:?}");
        }
    }
}
