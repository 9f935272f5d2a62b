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
//!
//! A log imported before is read only from where that import stopped (its
//! checkpoint, [`crate::import_cursor`]): the passes resume the parser there,
//! and the stored file's messages and raw lines before it are copied from
//! the old file by the kernel, so the result is the bytes a whole import
//! writes.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Seek as _, SeekFrom};
use std::os::unix::fs::FileExt as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::import_cursor::Cursor;
use logbook_model::agent_log::{BadLine, Fingerprint, Format, Line, LogParser, LogSummary};
use logbook_model::error::{Error, Result};
use logbook_model::transcript::parse_file_name;

mod persisted;
mod transcript;
mod unpack;

pub use transcript::{Head, Written, write_transcript_from};
pub use unpack::{UNPACKED_AT_MOST, Unpacked, is_compressed, unpack};

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
            found: crate::fs::describe_file_type(m.file_type()),
        });
    }
    Ok(m.len())
}

/// The folder where Claude Code keeps the subagent logs of the session
/// whose log is `main` (`<session>/subagents/`), when there is one.
pub fn subagents_of(main: &Path) -> Option<PathBuf> {
    let dir = main.with_extension("").join("subagents");
    dir.is_dir().then_some(dir)
}

/// How often (in bytes read) a pass reports its progress.
const PROGRESS_EVERY: u64 = 4 << 20;

/// A place in a log between two lines: the bytes before it (their count
/// and fingerprint) and how many lines they hold. A pass that starts there
/// goes on as if it had read them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mark {
    /// The fingerprint of the bytes before the mark (`fp.bytes` is its
    /// offset).
    pub fp: Fingerprint,
    /// How many lines those bytes hold.
    pub lines: u64,
}

impl Mark {
    /// The byte offset of the mark in the log.
    pub fn offset(&self) -> u64 {
        self.fp.bytes
    }
}

/// Where [`read_line`] stopped.
enum Stop {
    /// At the end of the bytes to read.
    End,
    /// After a whole line, now in the buffer.
    Whole,
    /// In a long line, its first [`LONG_LINE`] bytes in the buffer.
    Long,
}

/// Reads the lines of `path` from `from` up to `len`, calling `f` with each
/// (number, line, whether decoded lossily, whether it ends with a newline:
/// only the last one may not). Returns the fingerprint of the first `len`
/// bytes and the mark after the last line that ended with a newline, where
/// the next incremental pass starts (a line without one may still grow).
pub(super) fn walk(
    path: &Path,
    from: Mark,
    len: u64,
    on_bytes: &dyn Fn(u64),
    parse_long: bool,
    f: &mut dyn FnMut(u64, Line<'_>, bool, bool) -> Result<()>,
) -> Result<(Fingerprint, Mark)> {
    let io = |e| Error::io(path, e);
    let mut file = File::open(path).map_err(io)?;
    let ahead = file.try_clone().map_err(io)?;
    let start = from.offset();
    if start > len {
        return Err(changed(path));
    }
    let open_end = ends_open(&ahead, start, len).map_err(io)?;
    file.seek(SeekFrom::Start(start)).map_err(io)?;
    let mut reader = BufReader::with_capacity(1 << 16, file.take(len - start));
    let mut fp = from.fp;
    let mut cut = from;
    let mut buf = Vec::with_capacity(1 << 12);
    let mut no = from.lines;
    loop {
        if buf.capacity() > LONG_LINE {
            // The last line was long: its buffer is not kept for the rest.
            buf = Vec::with_capacity(1 << 12);
        }
        buf.clear();
        let line_start = fp.bytes;
        let read =
            read_line(&mut reader, &mut buf, &ahead, &mut fp, len, parse_long).map_err(io)?;
        if let Stop::End = read {
            break;
        }
        if let Stop::Long = read {
            let parsed = parse_long_line(&mut reader, &buf, &mut fp).map_err(io)?;
            let whole = !(open_end && fp.bytes == len);
            if parsed.is_ok() {
                no += 1;
                f(no, Line::Parsed(parsed), false, whole)?;
                if whole {
                    cut = Mark { fp, lines: no };
                }
                progress(line_start, fp.bytes, on_bytes);
                continue;
            }
            buf = vec![0; usize::try_from(fp.bytes - line_start).unwrap_or(usize::MAX)];
            ahead.read_exact_at(&mut buf, line_start).map_err(io)?;
        }
        progress(line_start, fp.bytes, on_bytes);
        no += 1;
        let whole = !(open_end && fp.bytes == len);
        hand_text(no, &buf, whole, f)?;
        if whole {
            cut = Mark { fp, lines: no };
        }
    }
    if fp.bytes != len {
        return Err(changed(path));
    }
    Ok((fp, cut))
}

/// Whether the last of the bytes from `start` to `len` is not a newline:
/// asked once, as every other line ends with one.
fn ends_open(ahead: &File, start: u64, len: u64) -> std::io::Result<bool> {
    if len <= start {
        return Ok(false);
    }
    let mut last = [0u8; 1];
    ahead.read_exact_at(&mut last, len - 1)?;
    Ok(last[0] != b'\n')
}

/// Parses a long line whose first bytes are in `buf` as one JSON value,
/// reading the rest of it from `reader` (fingerprinted into `fp`) up to and
/// including its newline, whether the value ended early or not.
fn parse_long_line<R: BufRead>(
    reader: &mut R,
    buf: &[u8],
    fp: &mut Fingerprint,
) -> std::io::Result<serde_json::Result<serde_json::Value>> {
    let rest = LineRest {
        reader,
        fp,
        ended: false,
    };
    let mut whole = BufReader::new(std::io::Cursor::new(buf).chain(rest));
    let parsed = serde_json::from_reader::<_, serde_json::Value>(&mut whole);
    // The rest of the line, after a value that ended early.
    std::io::copy(&mut whole, &mut std::io::sink())?;
    Ok(parsed)
}

/// Hands line `no` (`buf`, with its newline if any) to `f` as text,
/// decoded lossily when it is not UTF-8.
fn hand_text(
    no: u64,
    buf: &[u8],
    whole: bool,
    f: &mut dyn FnMut(u64, Line<'_>, bool, bool) -> Result<()>,
) -> Result<()> {
    let line = buf.strip_suffix(b"\n").unwrap_or(buf);
    match std::str::from_utf8(line) {
        Ok(text) => f(no, Line::Text(text), false, whole),
        Err(_) => f(no, Line::Text(&String::from_utf8_lossy(line)), true, whole),
    }
}

fn progress(before: u64, after: u64, on_bytes: &dyn Fn(u64)) {
    if before / PROGRESS_EVERY != after / PROGRESS_EVERY {
        on_bytes(after);
    }
}

/// The rest of the line a reader is in, up to and including its newline,
/// fingerprinted as it is read.
struct LineRest<'r, R> {
    reader: &'r mut R,
    fp: &'r mut Fingerprint,
    ended: bool,
}

impl<R: BufRead> Read for LineRest<'_, R> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.ended || out.is_empty() {
            return Ok(0);
        }
        let chunk = self.reader.fill_buf()?;
        if chunk.is_empty() {
            self.ended = true;
            return Ok(0);
        }
        let line_end = chunk.iter().position(|&b| b == b'\n').map(|i| i + 1);
        let n = line_end.unwrap_or(chunk.len()).min(out.len());
        out[..n].copy_from_slice(&chunk[..n]);
        self.fp.update(&chunk[..n]);
        self.reader.consume(n);
        self.ended = line_end == Some(n);
        Ok(n)
    }
}

/// A line longer than this is measured before it is read, so its buffer
/// is allocated once at its size rather than doubled up to it (which would
/// leave up to twice the line in memory, and as much again freed); the
/// passes that parse do not hold it as text at all.
const LONG_LINE: usize = 1 << 20;

/// Reads the next line from `reader` into `buf`, its newline included,
/// fingerprinting it into `fp`. A line longer than [`LONG_LINE`] is
/// measured first by reading ahead through `ahead` (a second handle on the
/// same file, `len` bytes long), so `buf` grows once; with `stop_long` it is
/// not read on but left at [`Stop::Long`] for the caller to stream.
fn read_line(
    reader: &mut impl BufRead,
    buf: &mut Vec<u8>,
    ahead: &File,
    fp: &mut Fingerprint,
    len: u64,
    stop_long: bool,
) -> std::io::Result<Stop> {
    let mut measured = false;
    loop {
        let chunk = reader.fill_buf()?;
        if chunk.is_empty() {
            return Ok(if buf.is_empty() {
                Stop::End
            } else {
                Stop::Whole
            });
        }
        if let Some(i) = chunk.iter().position(|&b| b == b'\n') {
            buf.extend_from_slice(&chunk[..=i]);
            fp.update(&chunk[..=i]);
            reader.consume(i + 1);
            return Ok(Stop::Whole);
        }
        let n = chunk.len();
        if !measured && buf.len() + n > LONG_LINE {
            if stop_long {
                return Ok(Stop::Long);
            }
            measured = true;
            let from = fp.bytes + n as u64;
            buf.reserve_exact(n + line_rest(ahead, from, len)?);
        }
        buf.extend_from_slice(chunk);
        fp.update(chunk);
        reader.consume(n);
    }
}

/// How many bytes from `from` up to and including the next newline (or to
/// `len`), read through `file` without moving anyone's position.
fn line_rest(file: &File, from: u64, len: u64) -> std::io::Result<usize> {
    let mut block = vec![0u8; 1 << 16];
    let mut at = from;
    while at < len {
        let want = block
            .len()
            .min(usize::try_from(len - at).unwrap_or(usize::MAX));
        let n = file.read_at(&mut block[..want], at)?;
        if n == 0 {
            break;
        }
        if let Some(i) = block[..n].iter().position(|&b| b == b'\n') {
            return Ok(usize::try_from(at - from)
                .unwrap_or(usize::MAX)
                .saturating_add(i + 1));
        }
        at += n as u64;
    }
    Ok(usize::try_from(at - from).unwrap_or(usize::MAX))
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
    fingerprint_from(path, Mark::default(), len)
}

/// How much of each line [`detect`] reads: a line longer than this (a
/// pasted file can make one hundreds of MiB) is recognised by its start
/// ([`Format::detect_start`]) and the rest skipped, never held.
const SNIFF_BYTES: usize = 16 * 1024;

/// Which agent wrote the log at `path`, from its first lines; `None` when
/// none of them says. Memory holds at most [`SNIFF_BYTES`] of a line.
pub fn detect(path: &Path) -> Result<Option<Format>> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    let file: Box<dyn Read> = if is_compressed(path) {
        match ruzstd::decoding::StreamingDecoder::new(BufReader::new(file)) {
            Ok(d) => Box::new(d),
            Err(_) => return Ok(None),
        }
    } else {
        Box::new(file)
    };
    let mut reader = BufReader::new(file.take(64 << 20));
    let mut head = Vec::with_capacity(SNIFF_BYTES);
    for _ in 0..DETECT_LINES {
        head.clear();
        let (whole, any) =
            read_line_start(&mut reader, &mut head, SNIFF_BYTES).map_err(|e| Error::io(path, e))?;
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
    scan_from(path, len, format, None, on_bytes)
}

/// [`scan`] going on from a checkpoint an earlier import left (see
/// [`crate::import_cursor`]): only the bytes after it are read.
pub fn scan_from(
    path: &Path,
    len: u64,
    format: Format,
    from: Option<&Cursor>,
    on_bytes: &dyn Fn(u64),
) -> Result<(LogSummary, Fingerprint)> {
    let (mark, mut parser, mut lossy) = match from {
        Some(c) if c.parser.format() == format => (c.at, c.parser.clone(), c.lossy.clone()),
        _ => (Mark::default(), LogParser::new(format), vec![]),
    };
    let (fp, _) = walk(
        path,
        mark,
        len,
        on_bytes,
        true,
        &mut |no, line, is_lossy, _| {
            if is_lossy {
                lossy.push(not_utf8(no));
            }
            parser.read(no, line);
            Ok(())
        },
    )?;
    let (_, mut summary) = parser.finish();
    if !lossy.is_empty() {
        summary.bad_lines.extend(lossy);
        summary.bad_lines.sort_by_key(|b| b.line);
    }
    Ok((summary, fp))
}

fn not_utf8(line: u64) -> BadLine {
    BadLine {
        line,
        reason: "not UTF-8 (kept with U+FFFD in place of the bad bytes)".into(),
    }
}

/// The fingerprint of the first `len` bytes of `path` going on from
/// `from` (reading only the bytes after it).
pub fn fingerprint_from(path: &Path, from: Mark, len: u64) -> Result<Fingerprint> {
    let io = |e| Error::io(path, e);
    if from.offset() > len {
        return Err(changed(path));
    }
    let mut file = File::open(path).map_err(io)?;
    file.seek(SeekFrom::Start(from.offset())).map_err(io)?;
    let mut reader = BufReader::with_capacity(1 << 16, file.take(len - from.offset()));
    let mut fp = from.fp;
    loop {
        let buf = reader.fill_buf().map_err(io)?;
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

/// What [`find_logs`] found under a folder.
#[derive(Debug, Default)]
pub struct Found {
    /// The files an import reads, sorted by path.
    pub files: Vec<PathBuf>,
    /// Files with a log's or a transcript's name that are not read, each
    /// with its reason.
    pub skipped: Vec<(PathBuf, String)>,
    /// Folders that could not be listed, each with its reason: a failure,
    /// since the logs in them are not imported.
    pub unlisted: Vec<(PathBuf, String)>,
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
        Err(e) if e.raw_os_error() == Some(crate::sys::Errno::LOOP.raw_os_error()) => {
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
            ..Found::default()
        });
    }
    let mut out = Found::default();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if dir != root => {
                // An unreadable subfolder does not stop the others.
                out.unlisted
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
            let wanted = name.ends_with(".jsonl")
                || name.ends_with(".jsonl.zst")
                || parse_file_name(&name).is_some();
            if !wanted || crate::is_temp_file(&name) {
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
                        crate::fs::describe_file_type(t)
                    ),
                ));
            }
        }
    }
    out.files.sort();
    out.skipped.sort();
    Ok(out)
}
