//! Full text: what of a run is searchable, how a user's words become an
//! FTS5 query, and the snippet cut from the run's own text (the FTS table is
//! contentless: it keeps the words' positions, not the text).

use std::path::Path;

use rusqlite::{Connection, OptionalExtension};
use serde_json::Value;

use super::schema::TOKENIZE;
use logbook_model::run::Manifest;
use logbook_store::run_outputs::output_text;

pub use logbook_store::run_outputs::MAX_TEXT_BYTES;

/// The most text of one transcript whose words are indexed (its first
/// messages': see `SaidText`), so a huge imported log costs bounded work.
pub const MAX_SAID_BYTES: usize = MAX_TEXT_BYTES as usize;

/// Turns free text into an FTS5 query of quoted terms (all must match), so
/// punctuation in a user's words is never read as query syntax.
pub(super) fn fts_query(text: &str) -> String {
    quoted_terms(text).join(" ")
}

/// Each word of `text` as an FTS5 string: quoted, quotes doubled, so
/// operators (`NEAR(`, `*`, `:`, `-`, `OR`) are searched for as typed. A
/// NUL, which FTS5 reads as the end of the query, separates words.
fn quoted_terms(text: &str) -> Vec<String> {
    text.split(|c: char| c.is_whitespace() || c == '\0')
        .filter(|w| !w.is_empty())
        .map(|w| format!("\"{}\"", w.replace('"', "\"\"")))
        .collect()
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

/// Marks FTS5's `highlight()` puts around each match while a snippet is
/// cut (private-use characters, removed from the text first, so they can
/// only come from the highlighter); shown as `[` and `]`.
const OPEN: char = '\u{E000}';
const CLOSE: char = '\u{E001}';

/// The query's words as an FTS5 query matching any of them: the snippet
/// marks every word found, even when the others matched elsewhere.
fn any_word_query(words: &str) -> String {
    quoted_terms(words).join(" OR ")
}

/// A fragment around the first of the query's words found, hits in `[…]`.
/// The FTS table is contentless (it keeps no text), so the fragment is cut
/// from the run's manifest text and, only when the words matched nothing
/// there, from its registered output files: at most a page of runs, each
/// file under [`MAX_TEXT_BYTES`], and never for listings without `--text`.
///
/// The words are found by FTS5 itself, in a scratch table with the index's
/// own tokenizer ([`TOKENIZE`]), so a snippet marks exactly what matched:
/// `laptop` marks "Laptops", `cafe` marks "Café".
pub(super) fn snippet_of(
    conn: &Connection,
    m: &Manifest,
    folder: &Path,
    words: &str,
) -> rusqlite::Result<Option<String>> {
    let Some(query) = snippet_query(conn, words)? else {
        return Ok(None);
    };
    if let Some(s) = highlighted(conn, &head_text(m), &query)? {
        return Ok(Some(s));
    }
    for o in &m.outputs {
        if let Some(text) = output_text(folder, &o.file)
            && let Some(s) = highlighted(conn, &text, &query)?
        {
            return Ok(Some(s));
        }
    }
    Ok(None)
}

/// What of a run a snippet is cut from first: its agent and workflow names
/// and its manifest's text.
fn head_text(m: &Manifest) -> String {
    format!(
        "{}\n{}\n{}",
        m.agent.name,
        m.workflow.name,
        manifest_text(m)
    )
}

/// Snippets for runs this index does not hold (the team catalog's), cut
/// exactly as [`snippet_of`] cuts a local run's, so `find --team --text`
/// answers in the local shape. The words are found in a scratch in-memory
/// database with the index's tokenizer; the caller supplies the outputs'
/// text, which lives on the server.
pub struct Snippets {
    conn: Connection,
    query: Option<String>,
}

impl Snippets {
    /// Snippets of `words`, as the user typed them.
    pub fn new(words: &str) -> logbook_model::Result<Snippets> {
        let conn = Connection::open_in_memory().map_err(scratch_error)?;
        let query = snippet_query(&conn, words).map_err(scratch_error)?;
        Ok(Snippets { conn, query })
    }

    /// The snippet from the run's own fields, or `None` when the words are
    /// only in its outputs' text (then [`Snippets::of_text`] each).
    pub fn of_manifest(&self, m: &Manifest) -> logbook_model::Result<Option<String>> {
        self.of_text(&head_text(m))
    }

    /// The snippet of `text`, or `None` when no word is in it.
    pub fn of_text(&self, text: &str) -> logbook_model::Result<Option<String>> {
        let Some(query) = &self.query else {
            return Ok(None);
        };
        highlighted(&self.conn, text, query).map_err(scratch_error)
    }
}

/// The error of a scratch in-memory database (words folded, snippets cut
/// for the team catalog), which has no file to name.
pub(super) fn scratch_error(e: rusqlite::Error) -> logbook_model::Error {
    crate::index_error(Path::new(":memory:"), &e)
}

/// The query marking any of `words` (`None` without words), once the
/// scratch table snippets are cut in exists.
fn snippet_query(conn: &Connection, words: &str) -> rusqlite::Result<Option<String>> {
    let query = any_word_query(words);
    if query.is_empty() {
        return Ok(None);
    }
    conn.execute_batch(&format!(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.snippet_text USING fts5(t, tokenize = '{TOKENIZE}')"
    ))?;
    Ok(Some(query))
}

/// A fragment of `text` (a transcript's messages) around the first of
/// `words` found in it, hits in `[…]`, cut as [`snippet_of`] cuts a run's.
pub(super) fn snippet_of_text(
    conn: &Connection,
    text: &str,
    words: &str,
) -> rusqlite::Result<Option<String>> {
    let Some(query) = snippet_query(conn, words)? else {
        return Ok(None);
    };
    highlighted(conn, text, &query)
}

/// The snippet of `text` for `query` (an FTS5 query), or `None` when no
/// word of the query is in it.
fn highlighted(conn: &Connection, text: &str, query: &str) -> rusqlite::Result<Option<String>> {
    let clean: String = text.replace([OPEN, CLOSE], " ");
    conn.execute("DELETE FROM temp.snippet_text", [])?;
    conn.execute(
        "INSERT INTO temp.snippet_text(rowid, t) VALUES (1, ?1)",
        [&clean],
    )?;
    let marked: Option<String> = conn
        .query_row(
            "SELECT highlight(snippet_text, 0, ?2, ?3) FROM temp.snippet_text \
             WHERE snippet_text MATCH ?1",
            rusqlite::params![query, OPEN.to_string(), CLOSE.to_string()],
            |r| r.get(0),
        )
        .optional()
        // A query FTS5 cannot parse (nothing but punctuation) marks nothing.
        .or_else(|e| match e {
            rusqlite::Error::SqliteFailure(..) => Ok(None),
            e => Err(e),
        })?;
    conn.execute("DELETE FROM temp.snippet_text", [])?;
    let Some(marked) = marked else {
        return Ok(None);
    };
    // Back to the plain text and the byte ranges of the hits in it.
    let mut plain = String::with_capacity(marked.len());
    let mut hits = vec![];
    let mut open = None;
    for c in marked.chars() {
        match c {
            OPEN => open = Some(plain.len()),
            CLOSE => {
                if let Some(s) = open.take() {
                    hits.push((s, plain.len()));
                }
            }
            c => plain.push(c),
        }
    }
    Ok(cut_snippet(&plain, &hits))
}

/// Whether byte `i` of `text` lies between two words: at either end, or
/// with whitespace on one side of it.
fn at_word_edge(text: &str, i: usize) -> bool {
    i == 0
        || i >= text.len()
        || text[..i].ends_with(char::is_whitespace)
        || text[i..].starts_with(char::is_whitespace)
}

/// Cuts a fragment of about [`AROUND`] bytes either side of the first hit
/// (`hits`: sorted byte ranges of the matched words), marking every hit in
/// it with `[…]`. It starts and ends between words (whitespace), never
/// inside a word or a UTF-8 character, with `…` where text was left out;
/// when no whitespace is near, at the nearest other non-alphanumeric
/// character, else at the hit itself.
fn cut_snippet(text: &str, hits: &[(usize, usize)]) -> Option<String> {
    const AROUND: usize = 48;
    let &(start, first_end) = hits.first()?;
    let floor = |mut i: usize| {
        while !text.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    let not_alnum = |c: char| !c.is_alphanumeric();
    let mut lo = floor(start.saturating_sub(AROUND));
    if !at_word_edge(text, lo) {
        lo = match text[lo..start].find(char::is_whitespace) {
            Some(i) => lo + i,
            None => text[lo..start].rfind(not_alnum).map_or(start, |i| {
                lo + i + text[lo + i..].chars().next().map_or(0, char::len_utf8)
            }),
        };
    }
    let mut hi = floor((start + 2 * AROUND).min(text.len())).max(first_end);
    if !at_word_edge(text, hi) {
        hi = match text[first_end..hi].rfind(char::is_whitespace) {
            Some(i) => first_end + i,
            None => text[first_end..hi]
                .find(not_alnum)
                .map_or(first_end, |i| first_end + i),
        };
    }
    let mut out = String::new();
    let mut at = lo;
    for &(s, e) in hits.iter().filter(|(s, e)| *s >= lo && *e <= hi) {
        out.push_str(&text[at..s]);
        out.push('[');
        out.push_str(&text[s..e]);
        out.push(']');
        at = e;
    }
    out.push_str(&text[at..hi]);
    let out = out.split_whitespace().collect::<Vec<_>>().join(" ");
    let before = if lo > 0 { "…" } else { "" };
    let after = if hi < text.len() { "…" } else { "" };
    Some(format!("{before}{out}{after}"))
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

/// Longest word (in bytes) the team catalog indexes: longer "words" are
/// hashes and blobs nobody searches for, and PostgreSQL refuses lexemes
/// over 2 KiB.
const MAX_WORD_BYTES: usize = 200;

thread_local! {
    /// An in-memory SQLite with a scratch FTS5 table using the index's own
    /// [`TOKENIZE`]: what folds text into words for the team catalog. Per
    /// thread because a SQLite connection may not be shared between threads
    /// and opening one per call would cost more than the words it folds; it
    /// holds no project's data, only the tokenizer.
    static WORDS: std::cell::RefCell<Option<Connection>> = const { std::cell::RefCell::new(None) };
}

fn words_connection() -> rusqlite::Result<Connection> {
    let conn = Connection::open_in_memory()?;
    conn.execute_batch(&format!(
        "CREATE VIRTUAL TABLE words_text USING fts5(t, tokenize = '{TOKENIZE}', detail = none);
         CREATE VIRTUAL TABLE words_vocab USING fts5vocab(words_text, 'instance');"
    ))?;
    Ok(conn)
}

/// The distinct words of each text, folded exactly as the local full-text
/// index folds them (Porter stem, case and diacritics ignored), sorted.
///
/// The team catalog indexes these instead of asking PostgreSQL to parse and
/// stem the text: that parsing was most of a push's server time, and this
/// way a team search matches what a local one matches ("Café" finds
/// "cafe" there too).
pub(super) fn words_of(texts: &[&str]) -> rusqlite::Result<Vec<Vec<String>>> {
    WORDS.with(|cell| {
        let mut slot = cell.borrow_mut();
        let conn = match &mut *slot {
            Some(conn) => conn,
            empty => empty.insert(words_connection()?),
        };
        let tx =
            rusqlite::Transaction::new_unchecked(conn, rusqlite::TransactionBehavior::Deferred)?;
        {
            let mut insert =
                tx.prepare_cached("INSERT INTO words_text(rowid, t) VALUES (?1, ?2)")?;
            for (i, t) in texts.iter().enumerate() {
                insert.execute(rusqlite::params![i as i64 + 1, t])?;
            }
        }
        let mut out: Vec<Vec<String>> = vec![vec![]; texts.len()];
        {
            let mut scan = tx.prepare_cached("SELECT doc, term FROM words_vocab")?;
            let mut rows = scan.query([])?;
            while let Some(row) = rows.next()? {
                let doc: i64 = row.get(0)?;
                let term: String = row.get(1)?;
                if term.len() > MAX_WORD_BYTES {
                    continue;
                }
                if let Some(words) = usize::try_from(doc - 1).ok().and_then(|d| out.get_mut(d)) {
                    // The vocabulary is read in term order: a repeat is the last one.
                    if words.last() != Some(&term) {
                        words.push(term);
                    }
                }
            }
        }
        // The scratch rows go with the transaction.
        tx.rollback()?;
        Ok(out)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snippet(text: &str, words: &str) -> Option<String> {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(&format!(
            "CREATE VIRTUAL TABLE temp.snippet_text USING fts5(t, tokenize = '{TOKENIZE}')"
        ))
        .unwrap();
        highlighted(&conn, text, &any_word_query(words)).unwrap()
    }

    #[test]
    fn snippets_start_and_end_with_whole_words() {
        let text = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo \
                    lima mike november oscar papa quebec romeo sierra tango uniform victor \
                    whiskey xray yankee zulu alpha bravo charlie delta echo foxtrot golf";
        let s = snippet(text, "oscar").unwrap();
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
            snippet("buy ten laptops", "laptops").unwrap(),
            "buy ten [laptops]"
        );
    }

    #[test]
    fn snippets_mark_stemmed_and_unaccented_matches() {
        assert_eq!(
            snippet("We ordered Laptops today", "laptop").as_deref(),
            Some("We ordered [Laptops] today")
        );
        assert_eq!(
            snippet("the agent was running late", "runs").as_deref(),
            Some("the agent was [running] late")
        );
        assert_eq!(
            snippet("Lunch at the Café Noir", "cafe").as_deref(),
            Some("Lunch at the [Café] Noir")
        );
        assert_eq!(snippet("nothing here", "laptop"), None);
        // Markers in the text itself are not taken for hits.
        assert_eq!(
            snippet("a \u{E000}b\u{E001} laptop", "laptop").as_deref(),
            Some("a b [laptop]")
        );
    }

    /// An FTS table `t` with the index's tokenizer and one row.
    fn laptop_budget() -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(&format!(
            "CREATE VIRTUAL TABLE t USING fts5(body, tokenize = '{TOKENIZE}');
             INSERT INTO t(body) VALUES ('laptop budget');"
        ))
        .unwrap();
        conn
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        /// Whatever the text, a snippet of one of its words marks it and
        /// shows only whole words of the text.
        #[test]
        fn snippets_show_whole_words_of_any_text(
            words in proptest::collection::vec("[a-zé日ß]{1,12}", 1..80),
            pick in 0usize..80,
        ) {
            let text = words.join(" ");
            let word = &words[pick % words.len()];
            let s = snippet(&text, word).unwrap();
            proptest::prop_assert!(s.contains('['), "{s}");
            for w in s.split_whitespace() {
                let w = w.trim_matches(|c| c == '…' || c == '[' || c == ']');
                proptest::prop_assert!(words.iter().any(|t| t == w), "cut word {w:?} in {s:?}");
            }
        }

        /// Whatever a user types (FTS5 operators, quotes, NUL, any
        /// character), the query built from it is one FTS5 accepts.
        #[test]
        fn any_typed_text_is_a_query_fts5_takes(
            typed in r#"(\PC|[\x00"*:()^+-]| NEAR\(| OR | AND | NOT ){0,40}"#,
        ) {
            let conn = laptop_budget();
            for query in [fts_query(&typed), any_word_query(&typed)] {
                if query.is_empty() {
                    continue;
                }
                let answered: rusqlite::Result<i64> = conn.query_row(
                    "SELECT count(*) FROM t WHERE t MATCH ?1",
                    [&query],
                    |r| r.get(0),
                );
                proptest::prop_assert!(answered.is_ok(), "{typed:?} -> {query:?}: {answered:?}");
            }
        }
    }

    #[test]
    fn operator_characters_are_searched_for_as_typed() {
        let conn = laptop_budget();
        // Operators are words here: `NEAR(laptop` asks for "near laptop",
        // `OR` for the word "or".
        for (typed, expected) in [
            ("-laptop*", 1),
            ("budget:", 1),
            ("\"laptop", 1),
            ("laptop\0budget", 1),
            ("NEAR(laptop budget)", 0),
            ("laptop OR nothing", 0),
        ] {
            let n: i64 = conn
                .query_row(
                    "SELECT count(*) FROM t WHERE t MATCH ?1",
                    [fts_query(typed)],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(n, expected, "{typed:?}");
        }
    }

    #[test]
    fn snippets_never_cut_inside_a_word_or_a_character() {
        // Multi-byte words all around, no whitespace near the edges.
        let long = "é".repeat(80);
        let text = format!("{long} ünïcödé {long} λόγος {long}");
        let s = snippet(&text, "λόγος").unwrap();
        assert!(s.contains("[λόγος]"), "{s}");
        for w in s.split_whitespace() {
            let w = w.trim_matches(|c| c == '…' || c == '[' || c == ']');
            assert!(
                text.split_whitespace().any(|t| t == w),
                "cut word {w:?} in {s:?}"
            );
        }
        // One endless "word" of letters: cut at the hit, not inside it.
        let text = format!("{}-laptop-{}", "x".repeat(300), "y".repeat(300));
        let s = snippet(&text, "laptop").unwrap();
        assert_eq!(s, "…[laptop]…");
    }
}
