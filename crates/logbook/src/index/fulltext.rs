//! Full text: what of a run is searchable, how a user's words become an
//! FTS5 query, and the snippet cut from the run's own text (the FTS table is
//! contentless: it keeps the words' positions, not the text).

use std::fs;
use std::os::fd::{AsFd as _, BorrowedFd};
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension};
use rustix::fs::{AtFlags, Mode, OFlags, StatxFlags};
use serde_json::Value;

use super::schema::TOKENIZE;
use crate::model::run::Manifest;

/// Output files larger than this are not put in the full-text index.
pub const MAX_TEXT_BYTES: u64 = 1024 * 1024;

/// The most text of one transcript whose words are indexed (its first
/// messages': see `SaidText`), so a huge imported log costs bounded work.
pub const MAX_SAID_BYTES: usize = MAX_TEXT_BYTES as usize;

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

/// Marks FTS5's `highlight()` puts around each match while a snippet is
/// cut (private-use characters, removed from the text first, so they can
/// only come from the highlighter); shown as `[` and `]`.
const OPEN: char = '\u{E000}';
const CLOSE: char = '\u{E001}';

/// The query's words as an FTS5 query matching any of them: the snippet
/// marks every word found, even when the others matched elsewhere.
fn any_word_query(words: &str) -> String {
    words
        .split_whitespace()
        .map(|w| format!("\"{}\"", w.replace('"', "\"\"")))
        .collect::<Vec<_>>()
        .join(" OR ")
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
    pub fn new(words: &str) -> crate::Result<Snippets> {
        let conn = Connection::open_in_memory().map_err(scratch_error)?;
        let query = snippet_query(&conn, words).map_err(scratch_error)?;
        Ok(Snippets { conn, query })
    }

    /// The snippet from the run's own fields, or `None` when the words are
    /// only in its outputs' text (then [`Snippets::of_text`] each).
    pub fn of_manifest(&self, m: &Manifest) -> crate::Result<Option<String>> {
        self.of_text(&head_text(m))
    }

    /// The snippet of `text`, or `None` when no word is in it.
    pub fn of_text(&self, text: &str) -> crate::Result<Option<String>> {
        let Some(query) = &self.query else {
            return Ok(None);
        };
        highlighted(&self.conn, text, query).map_err(scratch_error)
    }
}

/// The error of a scratch in-memory database (words folded, snippets cut
/// for the team catalog), which has no file to name.
pub(super) fn scratch_error(e: rusqlite::Error) -> crate::Error {
    crate::error::index_error(Path::new(":memory:"), &e)
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

/// Where a registered output file is, if its name is a plain relative path
/// inside its run folder (names another tool wrote are not trusted).
fn output_path(folder: &Path, file: &str) -> Option<PathBuf> {
    output_rel(file).map(|rel| folder.join(rel))
}

/// A registered output file's name as a path relative to its run folder,
/// if it is a plain one (no root, no `..`, no NUL).
fn output_rel(file: &str) -> Option<&Path> {
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
    Some(rel)
}

/// The text of a registered output file, if it is a small UTF-8 file inside
/// its run folder (what the full-text index reads).
pub(super) fn output_text(folder: &Path, file: &str) -> Option<String> {
    output_text_upto(folder, file, MAX_TEXT_BYTES as usize, Longer::Skip).map(|(t, _)| t)
}

/// What [`output_text_upto`] does with a file longer than its limit.
pub(super) enum Longer {
    /// No text at all (the full-text index skips such files).
    Skip,
    /// Its first bytes, cut at a character boundary (the team catalog).
    Cut,
}

/// The UTF-8 text of registered output `file` of the run in `folder`, at
/// most `max` bytes of it, and whether it was longer. The one reader of an
/// output's text, so every one has the same rules: a plain relative name
/// inside the run folder (another tool's manifest may name `../../x`), a
/// regular file (not a symlink out of the folder, nor a FIFO that would
/// block the open), no NUL.
pub(super) fn output_text_upto(
    folder: &Path,
    file: &str,
    max: usize,
    longer: Longer,
) -> Option<(String, bool)> {
    use std::io::Read as _;
    let path = output_path(folder, file)?;
    // Its type is asked of the open file, not of the path before opening
    // it: no other tool can swap a FIFO or a symlink in between. Neither
    // flag changes the reading of a regular file.
    let file = rustix::fs::open(
        &path,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map(fs::File::from)
    .ok()?;
    let m = file.metadata().ok()?;
    if !m.is_file() || matches!(longer, Longer::Skip) && m.len() > max as u64 {
        return None;
    }
    // Room for the whole of it and the byte that says it ended: two
    // `read`s a file. From an empty buffer `read_to_end` probes with 32,
    // 32, 64, 128… bytes, seven reads for a 1 KB output.
    let room = usize::try_from(m.len()).unwrap_or(usize::MAX).min(max);
    let mut bytes = Vec::with_capacity(room + 1);
    file.take(max as u64 + 1).read_to_end(&mut bytes).ok()?;
    let cut = bytes.len() > max;
    if cut && matches!(longer, Longer::Skip) {
        return None;
    }
    bytes.truncate(max);
    if bytes.contains(&0) {
        return None;
    }
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        // Cut inside a character: keep what is whole.
        Err(e) if cut && e.utf8_error().error_len().is_none() => {
            let valid = e.utf8_error().valid_up_to();
            let mut bytes = e.into_bytes();
            bytes.truncate(valid);
            String::from_utf8(bytes).ok()?
        }
        Err(_) => return None,
    };
    Some((text, cut))
}

/// One number standing for the state of a run's registered output files
/// (each one's size, mtime and ctime in ns, inode, or its absence): stored
/// beside the manifest's stamp, so `index sync` sees text written into an
/// output file after it was registered, a deleted file, and one re-created
/// under the same name (a new inode, even with the old size and mtime).
///
/// Taken before the text is read: a change made while it is read shows as
/// a new stamp next time. FNV-1a over fixed-width fields: stable across
/// builds and platforms (the index is derived, so a different hash would
/// only cost one re-read).
pub(super) fn outputs_stamp<'a>(folder: &Path, files: impl IntoIterator<Item = &'a str>) -> i64 {
    let mut files = files.into_iter().peekable();
    if files.peek().is_none() {
        return outputs_stamp_at(rustix::fs::CWD, folder, files, &mut PathBuf::new());
    }
    // Each file is looked up from the open run folder: from the root, a
    // run's twenty outputs walked the folder's whole path twenty times
    // (on every registration, and for every hit a page verifies).
    let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
    match rustix::fs::open(folder, flags, Mode::empty()) {
        Ok(dir) => outputs_stamp_at(dir.as_fd(), Path::new(""), files, &mut PathBuf::new()),
        // Missing (its files are then missing too) or unreadable: the same
        // stamp from the whole paths.
        Err(_) => outputs_stamp_at(rustix::fs::CWD, folder, files, &mut PathBuf::new()),
    }
}

/// What a stamp takes from an output file's `statx`: asking for no more
/// lets a file system skip the rest.
const OUTPUT_MASK: StatxFlags = StatxFlags::SIZE
    .union(StatxFlags::MTIME)
    .union(StatxFlags::CTIME)
    .union(StatxFlags::INO);

/// [`outputs_stamp`] with `folder` relative to the open directory `dir`
/// (the scan of every run resolves only `{run}/{file}` per file, not the
/// whole path), each file's path built in `buf` (no allocation per file).
/// The writer and the scan share this one function, so their stamps agree
/// by construction.
pub(super) fn outputs_stamp_at<'a>(
    dir: BorrowedFd<'_>,
    folder: &Path,
    files: impl IntoIterator<Item = &'a str>,
    buf: &mut PathBuf,
) -> i64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut any = false;
    let mut eat = |bytes: &[u8]| {
        for b in bytes {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    };
    for file in files {
        any = true;
        eat(file.as_bytes());
        eat(&[0]);
        let found = match output_rel(file) {
            Some(rel) => {
                buf.clear();
                buf.push(folder);
                buf.push(rel);
                rustix::fs::statx(dir, &*buf, AtFlags::SYMLINK_NOFOLLOW, OUTPUT_MASK).ok()
            }
            None => None,
        };
        match found {
            Some(m) => {
                eat(&[1]);
                eat(&m.stx_size.to_le_bytes());
                eat(&m.stx_mtime.tv_sec.to_le_bytes());
                eat(&i64::from(m.stx_mtime.tv_nsec).to_le_bytes());
                eat(&m.stx_ctime.tv_sec.to_le_bytes());
                eat(&i64::from(m.stx_ctime.tv_nsec).to_le_bytes());
                eat(&m.stx_ino.to_le_bytes());
                eat(&m.stx_dev_major.to_le_bytes());
                eat(&m.stx_dev_minor.to_le_bytes());
            }
            None => eat(&[2]),
        }
    }
    // No outputs: 0, what a record without outputs (or a corrupt one) stores.
    if any { h as i64 } else { 0 }
}

/// A run's registered output file names as the `files.outs` column keeps
/// them: each as its length (4 bytes, little-endian) and its bytes, so any
/// name (even one with a NUL or a newline) round-trips exactly.
pub(super) fn encode_outs<'a>(files: impl IntoIterator<Item = &'a str>) -> Vec<u8> {
    let mut out = vec![];
    for f in files {
        out.extend_from_slice(&(f.len() as u32).to_le_bytes());
        out.extend_from_slice(f.as_bytes());
    }
    out
}

/// The names [`encode_outs`] wrote, or `None` when `blob` is not one of
/// its encodings (then the run counts as changed and is read again).
pub(super) fn decode_outs(blob: &[u8]) -> Option<Outs<'_>> {
    let mut check = Outs(blob);
    while check.next().is_some() {}
    check.0.is_empty().then_some(Outs(blob))
}

/// The names in a `files.outs` value, read in place (see [`decode_outs`]).
pub(super) struct Outs<'a>(&'a [u8]);

impl<'a> Iterator for Outs<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let (len, tail) = self.0.split_first_chunk::<4>()?;
        let len = u32::from_le_bytes(*len) as usize;
        let name = std::str::from_utf8(tail.get(..len)?).ok()?;
        self.0 = tail.get(len..)?;
        Some(name)
    }
}

/// Longest word (in bytes) the team catalog indexes: longer "words" are
/// hashes and blobs nobody searches for, and PostgreSQL refuses lexemes
/// over 2 KiB.
const MAX_WORD_BYTES: usize = 200;

thread_local! {
    /// An in-memory SQLite with a scratch FTS5 table using the index's own
    /// [`TOKENIZE`]: what folds text into words for the team catalog.
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

    #[test]
    fn an_outputs_text_is_read_only_from_a_regular_file_inside_its_run_folder() {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("run");
        fs::create_dir(&run).unwrap();
        fs::write(dir.path().join("secret.txt"), "outside").unwrap();
        fs::write(run.join("a.md"), "héllo wörld").unwrap();
        std::os::unix::fs::symlink(dir.path().join("secret.txt"), run.join("link.md")).unwrap();
        let fifo = run.join("pipe.md");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        let read =
            |file: &str, max: usize, longer: Longer| output_text_upto(&run, file, max, longer);
        assert_eq!(
            read("a.md", 100, Longer::Cut),
            Some(("héllo wörld".to_string(), false))
        );
        // Names another tool wrote that lead out, a symlink out, a FIFO
        // (whose open would block): no text, never a hang.
        for name in [
            "../secret.txt",
            "/etc/hostname",
            "link.md",
            "pipe.md",
            "missing.md",
        ] {
            assert_eq!(read(name, 100, Longer::Cut), None, "{name}");
        }
        // Longer than the limit: cut at a whole character, or skipped.
        assert_eq!(read("a.md", 2, Longer::Cut), Some(("h".to_string(), true)));
        assert_eq!(read("a.md", 2, Longer::Skip), None);
        assert_eq!(output_text(&run, "a.md").as_deref(), Some("héllo wörld"));
    }

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
