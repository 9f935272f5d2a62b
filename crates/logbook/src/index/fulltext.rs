//! Full text: what of a run is searchable, how a user's words become an
//! FTS5 query, and the snippet cut from the run's own text (the FTS table is
//! contentless: it keeps the words' positions, not the text).

use std::fs;
use std::path::Path;

use serde_json::Value;

use crate::model::run::Manifest;

/// Output files larger than this are not put in the full-text index.
pub const MAX_TEXT_BYTES: u64 = 1024 * 1024;

/// Turns free text into an FTS5 query of quoted terms (all must match), so
/// punctuation in a user's words is never read as query syntax.
pub(super) fn fts_query(text: &str) -> String {
    text.split_whitespace()
        .map(|w| format!("\"{}\"", w.replace('"', "\"\"")))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The searchable text of a manifest itself (not of its output files):
/// what the FTS `body` column indexes before the outputs' text, and what
/// snippets are cut from.
pub(super) fn manifest_text(m: &Manifest) -> String {
    let mut body = String::new();
    for part in [
        m.agent.title.as_deref().unwrap_or_default(),
        m.workflow.description.as_deref().unwrap_or_default(),
        m.user_summary.as_deref().unwrap_or_default(),
        m.display_name.as_deref().unwrap_or_default(),
        m.execution.user.as_deref().unwrap_or_default(),
    ] {
        if !part.is_empty() {
            body.push_str(part);
            body.push('\n');
        }
    }
    for x in [&m.inputs, &m.metadata].into_iter().flatten() {
        flatten_text(&Value::Object(x.clone()), &mut body);
    }
    let mut tags = m.tags.clone();
    tags.sort();
    tags.dedup();
    for t in &tags {
        body.push_str(t);
        body.push('\n');
    }
    for o in &m.outputs {
        body.push_str(&o.description);
        body.push('\n');
        body.push_str(&o.file);
        body.push('\n');
    }
    body
}

/// A fragment around the first of the query's words found, hits in `[…]`.
/// The FTS table is contentless (it keeps no text), so the fragment is cut
/// from the run's manifest text and, only when the words matched nothing
/// there, from its registered output files: at most a page of runs, each
/// file under [`MAX_TEXT_BYTES`], and never for listings without `--text`.
pub(super) fn snippet_of(m: &Manifest, folder: &Path, words: &str) -> Option<String> {
    let terms: Vec<&str> = words
        .split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .collect();
    if terms.is_empty() {
        return None;
    }
    let head = format!(
        "{}\n{}\n{}",
        m.agent.name,
        m.workflow.name,
        manifest_text(m)
    );
    if let Some(s) = cut_snippet(&head, &terms) {
        return Some(s);
    }
    m.outputs
        .iter()
        .filter_map(|o| output_text(folder, &o.file))
        .find_map(|t| cut_snippet(&t, &terms))
}

/// Byte range of the first whole-word, case-insensitive occurrence of any
/// of `terms` in `text` at or after `from`.
fn find_word(text: &str, terms: &[&str], from: usize) -> Option<(usize, usize)> {
    let mut prev_alnum = text[..from]
        .chars()
        .next_back()
        .is_some_and(char::is_alphanumeric);
    for (i, c) in text[from..].char_indices() {
        let at = from + i;
        if !prev_alnum && c.is_alphanumeric() {
            for t in terms {
                let mut end = at;
                let mut rest = text[at..].chars();
                let matched = t.chars().all(|tc| {
                    rest.next().is_some_and(|hc| {
                        end += hc.len_utf8();
                        hc.to_lowercase().eq(tc.to_lowercase())
                    })
                });
                if matched
                    && !text[end..]
                        .chars()
                        .next()
                        .is_some_and(char::is_alphanumeric)
                {
                    return Some((at, end));
                }
            }
        }
        prev_alnum = c.is_alphanumeric();
    }
    None
}

fn cut_snippet(text: &str, terms: &[&str]) -> Option<String> {
    const AROUND: usize = 48;
    let (start, first_end) = find_word(text, terms, 0)?;
    let floor = |mut i: usize| {
        while !text.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    let mut lo = floor(start.saturating_sub(AROUND));
    let mut hi = floor((start + 2 * AROUND).min(text.len())).max(first_end);
    // Cut at word boundaries: a fragment starts and ends with whole words.
    if lo > 0
        && !text[..lo].ends_with(char::is_whitespace)
        && let Some(i) = text[lo..start].find(char::is_whitespace)
    {
        lo += i;
    }
    if hi < text.len()
        && !text[hi..].starts_with(char::is_whitespace)
        && let Some(i) = text[first_end..hi].rfind(char::is_whitespace)
    {
        hi = first_end + i;
    }
    let mut out = String::new();
    if lo > 0 {
        out.push('…');
    }
    let mut at = lo;
    while let Some((s, e)) = find_word(text, terms, at).filter(|(_, e)| *e <= hi) {
        out.push_str(&text[at..s]);
        out.push('[');
        out.push_str(&text[s..e]);
        out.push(']');
        at = e;
    }
    out.push_str(&text[at..hi]);
    if hi < text.len() {
        out.push('…');
    }
    Some(out.split_whitespace().collect::<Vec<_>>().join(" "))
}

fn flatten_text(v: &Value, out: &mut String) {
    match v {
        Value::String(s) => {
            out.push_str(s);
            out.push('\n');
        }
        Value::Number(n) => {
            out.push_str(&n.to_string());
            out.push('\n');
        }
        Value::Bool(b) => {
            out.push_str(if *b { "true\n" } else { "false\n" });
        }
        Value::Array(a) => a.iter().for_each(|x| flatten_text(x, out)),
        Value::Object(m) => {
            for (k, x) in m {
                out.push_str(k);
                out.push_str(": ");
                flatten_text(x, out);
            }
        }
        Value::Null => {}
    }
}

/// The text of a registered output file, if it is a small UTF-8 file inside
/// its run folder.
pub(super) fn output_text(folder: &Path, file: &str) -> Option<String> {
    let rel = Path::new(file);
    if file.is_empty()
        || file.contains('\0')
        || rel.is_absolute()
        || rel.components().any(|c| {
            !matches!(
                c,
                std::path::Component::Normal(_) | std::path::Component::CurDir
            )
        })
    {
        return None;
    }
    let path = folder.join(rel);
    let m = fs::symlink_metadata(&path).ok()?;
    if !m.is_file() || m.len() > MAX_TEXT_BYTES {
        return None;
    }
    let bytes = fs::read(&path).ok()?;
    if bytes.contains(&0) {
        return None;
    }
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippets_start_and_end_with_whole_words() {
        let text = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo \
                    lima mike november oscar papa quebec romeo sierra tango uniform victor \
                    whiskey xray yankee zulu alpha bravo charlie delta echo foxtrot golf";
        let s = cut_snippet(text, &["oscar"]).unwrap();
        assert!(s.contains("[oscar]"), "{s}");
        let inner = s.trim_start_matches('…').trim_end_matches('…');
        let words: Vec<&str> = text.split_whitespace().collect();
        for w in inner.split_whitespace() {
            let w = w.trim_start_matches('[').trim_end_matches(']');
            assert!(words.contains(&w), "{w:?} is a cut word in {s:?}");
        }
        assert!(s.starts_with('…') && s.ends_with('…'), "{s}");
        // A short text is shown whole.
        assert_eq!(
            cut_snippet("buy ten laptops", &["laptops"]).unwrap(),
            "buy ten [laptops]"
        );
    }
}
