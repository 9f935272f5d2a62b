//! Agent logs on disk (Claude Code, Codex): found in folders, read line by
//! line, and streamed into a seed 003 transcript file.
//!
//! Trap: a live agent appends to its log while it is imported. Every pass
//! reads only the first `len` bytes measured before the first pass, and
//! checks their fingerprint again, so the messages, the metadata and the
//! raw lines of one stored file always describe the same bytes.
//!
//! The stored file is the seed's transcript (`id`, `timestamp`, `version`,
//! `metadata`, `messages`: the metadata first, so a listing reads it without
//! the rest) plus `rawLines`: every line of the log as a JSON
//! string, in order, so nothing the agent wrote is lost and a re-import can
//! derive everything again from the file alone. It is written in three
//! streaming passes (summary, messages, raw lines) and never held in memory.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::model::agent_log::{BadLine, Fingerprint, Format, LogParser, LogSummary};
use crate::model::transcript::{FORMAT_VERSION, Metadata, SaidText, parse_file_name};
use crate::store;

/// How many lines [`detect`] reads looking for one that names its agent.
const DETECT_LINES: usize = 64;

/// The length of the log at `path` now: what an import reads. Refuses what
/// is not a regular file (a FIFO would block, a device never ends).
pub fn log_len(path: &Path) -> Result<u64> {
    let m = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    if !m.is_file() {
        return Err(Error::NotARegularFile {
            what: "file to import",
            path: path.to_path_buf(),
            found: store::fs::describe_file_type(m.file_type()),
        });
    }
    Ok(m.len())
}

/// Calls `f` with each line (number from 1, text without its newline, and
/// whether it had to be decoded lossily because it is not UTF-8) of the
/// first `len` bytes of `path`, and returns their fingerprint. A last line
/// without a newline is a line. Memory holds one line at a time.
pub fn for_each_line(
    path: &Path,
    len: u64,
    f: impl FnMut(u64, &str, bool) -> Result<()>,
) -> Result<Fingerprint> {
    for_each_line_progress(path, len, &|_| {}, f)
}

/// How often (in bytes read) a pass reports its progress.
const PROGRESS_EVERY: u64 = 4 << 20;

/// [`for_each_line`], calling `on_bytes` with the bytes read so far every
/// few MiB (a progress bar over one large log).
pub fn for_each_line_progress(
    path: &Path,
    len: u64,
    on_bytes: &dyn Fn(u64),
    mut f: impl FnMut(u64, &str, bool) -> Result<()>,
) -> Result<Fingerprint> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let mut reader = BufReader::with_capacity(1 << 16, file.take(len));
    let mut fp = Fingerprint::default();
    let mut buf = Vec::with_capacity(1 << 12);
    let mut no = 0;
    loop {
        buf.clear();
        let n = reader
            .read_until(b'\n', &mut buf)
            .map_err(|e| Error::io(path, e))?;
        if n == 0 {
            break;
        }
        let before = fp.bytes;
        fp.update(&buf);
        if before / PROGRESS_EVERY != fp.bytes / PROGRESS_EVERY {
            on_bytes(fp.bytes);
        }
        no += 1;
        let line = buf.strip_suffix(b"\n").unwrap_or(&buf);
        match std::str::from_utf8(line) {
            Ok(text) => f(no, text, false)?,
            Err(_) => f(no, &String::from_utf8_lossy(line), true)?,
        }
    }
    if fp.bytes != len {
        return Err(changed(path));
    }
    Ok(fp)
}

fn changed(path: &Path) -> Error {
    Error::io(
        path,
        std::io::Error::other(
            "the log was truncated or rewritten while it was read; import it again",
        ),
    )
}

/// The fingerprint of the first `len` bytes of `path`, without parsing
/// them: what tells a re-import that a log has not changed.
pub fn fingerprint(path: &Path, len: u64) -> Result<Fingerprint> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let mut reader = BufReader::with_capacity(1 << 16, file.take(len));
    let mut fp = Fingerprint::default();
    loop {
        let buf = reader.fill_buf().map_err(|e| Error::io(path, e))?;
        if buf.is_empty() {
            break;
        }
        fp.update(buf);
        let n = buf.len();
        reader.consume(n);
    }
    if fp.bytes != len {
        return Err(changed(path));
    }
    Ok(fp)
}

/// How much of each line [`detect`] reads: a line longer than this (a
/// pasted file can make one hundreds of MiB) is recognised by its start
/// ([`Format::detect_start`]) and the rest skipped, never held.
const SNIFF_BYTES: usize = 16 * 1024;

/// Which agent wrote the log at `path`, from its first lines; `None` when
/// none of them says. Memory holds at most [`SNIFF_BYTES`] of a line.
pub fn detect(path: &Path) -> Result<Option<Format>> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let mut reader = BufReader::new(file.take(64 << 20));
    let mut head = Vec::with_capacity(SNIFF_BYTES);
    for _ in 0..DETECT_LINES {
        head.clear();
        let (whole, any) = read_line_start(&mut reader, &mut head, SNIFF_BYTES)
            .map_err(|e| Error::io(path, e))?;
        if !any {
            break;
        }
        let text = String::from_utf8_lossy(&head);
        let found = if whole {
            Format::detect(&text)
        } else {
            Format::detect_start(&text)
        };
        if found.is_some() {
            return Ok(found);
        }
    }
    Ok(None)
}

/// Reads the next line into `head`, at most `max` bytes of it (without its
/// newline), and skips the rest of the line unread into memory. Returns
/// whether `head` holds the whole line, and whether there was a line.
fn read_line_start(
    reader: &mut impl BufRead,
    head: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<(bool, bool)> {
    let mut any = false;
    let mut whole = true;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok((whole, any));
        }
        any = true;
        let (part, done) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        let room = max.saturating_sub(head.len());
        if part.len() > room {
            whole = false;
        }
        head.extend_from_slice(&part[..part.len().min(room)]);
        let used = done.unwrap_or(buf.len());
        reader.consume(used);
        if done.is_some() {
            return Ok((whole, any));
        }
    }
}

/// Reads the first `len` bytes of a log in `format` for its summary (the
/// messages are parsed and dropped), with lines that are not UTF-8 among
/// the bad lines.
pub fn scan(
    path: &Path,
    len: u64,
    format: Format,
    on_bytes: &dyn Fn(u64),
) -> Result<(LogSummary, Fingerprint)> {
    let mut parser = LogParser::new(format);
    let mut lossy = vec![];
    let fp = for_each_line_progress(path, len, on_bytes, |no, line, is_lossy| {
        if is_lossy {
            lossy.push(BadLine {
                line: no,
                reason: "not UTF-8 (kept with U+FFFD in place of the bad bytes)".into(),
            });
        }
        parser.line(no, line);
        Ok(())
    })?;
    let (_, mut summary) = parser.finish();
    if !lossy.is_empty() {
        summary.bad_lines.extend(lossy);
        summary.bad_lines.sort_by_key(|b| b.line);
    }
    Ok((summary, fp))
}

/// What the stored transcript says besides its messages and raw lines.
#[derive(Debug)]
pub struct Head<'a> {
    /// The transcript id.
    pub id: &'a str,
    /// The seed's `timestamp`: the log's last one, so a re-import writes
    /// the same bytes.
    pub timestamp: &'a str,
    /// The seed's metadata, with `source` and `usage`.
    pub metadata: &'a Metadata,
}

/// Writes the transcript of the first `len` bytes of the log at `source`
/// to `target` atomically (2-space JSON, as every transcript), streaming
/// its messages and raw lines, and removes `previous` (the id's file under
/// another name) once the new one is durable. `fingerprint` is the one
/// [`scan`] measured: if the bytes changed since, nothing is written.
/// `said` gathers what the messages say as they are written (for the
/// index's full text). `on_bytes` follows its two passes over the log (0 to twice `len`).
#[allow(clippy::too_many_arguments)]
pub fn write_transcript(
    target: &Path,
    source: &Path,
    len: u64,
    format: Format,
    head: &Head<'_>,
    fingerprint: &str,
    previous: Option<&Path>,
    said: &mut SaidText,
    on_bytes: &dyn Fn(u64),
) -> Result<()> {
    let io = |e: std::io::Error| Error::io(target, e);
    let json = |v: &dyn erased::Json| {
        v.pretty().map_err(|e| Error::Corrupt {
            path: target.to_path_buf(),
            what: "transcript",
            reason: e.to_string(),
        })
    };
    store::write_atomic_with(target, |w| {
        // The metadata comes before the messages, so that a listing reads
        // it without reading the rest (`store::transcript::read_head`).
        write!(
            w,
            "{{\n  \"id\": {},\n  \"timestamp\": {},\n  \"version\": {},\n  \"metadata\": {},\n  \"messages\": [",
            json(&head.id)?,
            json(&head.timestamp)?,
            json(&FORMAT_VERSION)?,
            indent(&json(head.metadata)?, "  ")
        )
        .map_err(io)?;
        let mut parser = LogParser::new(format);
        let mut first = true;
        let item = |w: &mut dyn Write, text: &str, first: &mut bool| -> Result<()> {
            let sep = if *first { "\n    " } else { ",\n    " };
            *first = false;
            w.write_all(sep.as_bytes()).map_err(io)?;
            w.write_all(indent(text, "    ").as_bytes()).map_err(io)
        };
        let fp = for_each_line_progress(source, len, on_bytes, |no, line, _| {
            for m in parser.line(no, line) {
                if !said.is_full() {
                    said.push(&m);
                }
                item(w, &json(&m)?, &mut first)?;
            }
            Ok(())
        })?;
        if let (Some(m), _) = parser.finish() {
            if !said.is_full() {
                said.push(&m);
            }
            item(w, &json(&m)?, &mut first)?;
        }
        if fp.as_string() != fingerprint {
            return Err(changed(source));
        }
        let close = if first { "]" } else { "\n  ]" };
        write!(w, "{close},\n  \"rawLines\": [").map_err(io)?;
        let mut first = true;
        let second = |b: u64| on_bytes(len + b);
        let fp = for_each_line_progress(source, len, &second, |_, line, _| {
            item(w, &json(&line)?, &mut first)
        })?;
        if fp.as_string() != fingerprint {
            return Err(changed(source));
        }
        let close = if first { "]" } else { "\n  ]" };
        write!(w, "{close}\n}}\n").map_err(io)
    })?;
    if let Some(old) = previous
        && old != target
    {
        std::fs::remove_file(old).map_err(|e| Error::io(old, e))?;
        if let Some(dir) = old.parent() {
            store::sync_dir(dir)?;
        }
    }
    Ok(())
}

/// Pretty JSON nested one level deeper: JSON strings hold no raw newline,
/// so indenting after each newline is exact.
fn indent(text: &str, by: &str) -> String {
    text.replace('\n', &format!("\n{by}"))
}

mod erased {
    /// A value written as 2-space JSON (what `to_string_pretty` writes).
    pub(super) trait Json {
        fn pretty(&self) -> serde_json::Result<String>;
    }
    impl<T: serde::Serialize + ?Sized> Json for T {
        fn pretty(&self) -> serde_json::Result<String> {
            serde_json::to_string_pretty(self)
        }
    }
}

/// What [`find_logs`] found under a folder.
#[derive(Debug, Default)]
pub struct Found {
    /// The files an import reads, sorted by path.
    pub files: Vec<PathBuf>,
    /// Files with a log's or a transcript's name that are not read, and
    /// folders that could not be listed, each with its reason.
    pub skipped: Vec<(PathBuf, String)>,
}

/// The files under `root` (a folder, searched recursively, symlinks not
/// followed) that an import reads: agent logs (`*.jsonl`) and seed 003
/// transcripts (`session_*.json`, `subagent_session_*.json`), sorted by
/// path; `root` itself when it is a regular file. A file with such a name
/// that is not read (a FIFO, a device, a symlink) and a folder that cannot
/// be listed are in [`Found::skipped`], so an import names each.
pub fn find_logs(root: &Path) -> Result<Found> {
    let m = match std::fs::metadata(root) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::not_found(
                "file or folder",
                root.display().to_string(),
                "give a Claude Code or Codex log, a folder of them (~/.claude/projects, ~/.codex/sessions) or a seed 003 transcript",
            ));
        }
        Err(e) if e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) => {
            return Err(Error::io(
                root,
                std::io::Error::other(
                    "a symlink loop (ELOOP): its links lead back to themselves, never to a file; point the link at a log or a folder",
                ),
            ));
        }
        Err(e) => return Err(Error::io(root, e)),
    };
    if !m.is_dir() {
        // A FIFO would block the read, a device never end.
        log_len(root)?;
        return Ok(Found {
            files: vec![root.to_path_buf()],
            skipped: vec![],
        });
    }
    let mut out = Found::default();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if dir != root => {
                // An unreadable subfolder does not stop the others.
                out.skipped
                    .push((dir, format!("the folder could not be listed ({e})")));
                continue;
            }
            Err(e) => return Err(Error::io(&dir, e)),
        };
        for entry in entries.flatten() {
            let Ok(t) = entry.file_type() else { continue };
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if t.is_dir() {
                stack.push(path);
                continue;
            }
            let wanted = name.ends_with(".jsonl") || parse_file_name(&name).is_some();
            if !wanted || store::is_temp_file(&name) {
                continue;
            }
            if t.is_file() {
                out.files.push(path);
            } else if t.is_symlink() {
                out.skipped.push((
                    path,
                    "a symlink: links inside a folder are not followed; name the file itself to import it".into(),
                ));
            } else {
                out.skipped.push((
                    path,
                    format!(
                        "{}, not a regular file: not read",
                        store::fs::describe_file_type(t)
                    ),
                ));
            }
        }
    }
    out.files.sort();
    out.skipped.sort();
    Ok(out)
}
