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
//! checkpoint, [`store::import_cursor`]): the passes resume the parser there,
//! and the stored file's messages and raw lines before it are copied from
//! the old file by the kernel, so the result is the bytes a whole import
//! writes.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Seek as _, SeekFrom, Write};
use std::os::unix::fs::FileExt as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::model::agent_log::{BadLine, Fingerprint, Format, Line, LogParser, LogSummary};
use crate::model::transcript::{FORMAT_VERSION, Metadata, SaidText, parse_file_name};
use crate::store;
use crate::store::import_cursor::Cursor;

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
    walk(
        path,
        Mark::default(),
        len,
        on_bytes,
        false,
        &mut |no, line, lossy, _| match line {
            Line::Text(text) => f(no, text, lossy),
            // Not given when `parse_long` is false.
            Line::Parsed(_) => Ok(()),
        },
    )
    .map(|(fp, _)| fp)
}

/// [`for_each_line_progress`] for the passes that parse each line: a line
/// longer than [`LONG_LINE`] is parsed straight from the file and given as
/// [`Line::Parsed`], so its text and its values are never in memory at
/// once. One that does not parse that way is read again and given as text,
/// so it is judged exactly as a short line would be.
pub fn for_each_parsed_line(
    path: &Path,
    len: u64,
    on_bytes: &dyn Fn(u64),
    mut f: impl FnMut(u64, Line<'_>, bool) -> Result<()>,
) -> Result<Fingerprint> {
    walk(
        path,
        Mark::default(),
        len,
        on_bytes,
        true,
        &mut |no, line, lossy, _| f(no, line, lossy),
    )
    .map(|(fp, _)| fp)
}

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
    // Whether the last line read ends with a newline, asked once: every
    // other line does.
    let open_end = len > start && {
        let mut last = [0u8; 1];
        ahead.read_exact_at(&mut last, len - 1).map_err(io)?;
        last[0] != b'\n'
    };
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
            let parsed = {
                let rest = LineRest {
                    reader: &mut reader,
                    fp: &mut fp,
                    ended: false,
                };
                let mut whole = BufReader::new(std::io::Cursor::new(&buf).chain(rest));
                let parsed = serde_json::from_reader::<_, serde_json::Value>(&mut whole);
                // The rest of the line, after a value that ended early.
                std::io::copy(&mut whole, &mut std::io::sink()).map_err(io)?;
                parsed
            };
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
        let line = buf.strip_suffix(b"\n").unwrap_or(&buf);
        match std::str::from_utf8(line) {
            Ok(text) => f(no, Line::Text(text), false, whole)?,
            Err(_) => f(no, Line::Text(&String::from_utf8_lossy(line)), true, whole)?,
        }
        if whole {
            cut = Mark { fp, lines: no };
        }
    }
    if fp.bytes != len {
        return Err(changed(path));
    }
    Ok((fp, cut))
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
/// [`store::import_cursor`]): only the bytes after it are read.
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
    write_transcript_from(
        target,
        source,
        len,
        format,
        head,
        fingerprint,
        previous,
        said,
        None,
        on_bytes,
    )
    .map(|_| ())
}

/// What [`write_transcript_from`] wrote, as of the last line of the log
/// that ended with a newline: where the next incremental import goes on.
#[derive(Debug, Clone)]
pub struct Written {
    /// After the last line that ended with a newline.
    pub at: Mark,
    /// The parser's state there.
    pub parser: LogParser,
    /// The lines up to there that are not UTF-8.
    pub lossy: Vec<BadLine>,
    /// What the messages written up to there say (see [`SaidText`]).
    pub said: String,
    /// How many messages were written up to there.
    pub messages: u64,
    /// The byte range of those messages in the stored file (after the
    /// `messages` array's `[`, up to the end of the last of them).
    pub messages_bytes: (u64, u64),
    /// The same for the raw lines up to there.
    pub raw_bytes: (u64, u64),
}

/// [`write_transcript`] going on from `from`: a checkpoint that describes
/// the file at `target` now (the caller checked it with
/// [`Cursor::fits_stored`]). The messages and raw lines before the
/// checkpoint are copied from that file by the kernel, not parsed; only the
/// log's bytes after it are read. The result is the same bytes a whole
/// import writes. Returns where the next import can go on.
#[allow(clippy::too_many_arguments)]
pub fn write_transcript_from(
    target: &Path,
    source: &Path,
    len: u64,
    format: Format,
    head: &Head<'_>,
    fingerprint: &str,
    previous: Option<&Path>,
    said: &mut SaidText,
    from: Option<&Cursor>,
    on_bytes: &dyn Fn(u64),
) -> Result<Written> {
    let io = |e: std::io::Error| Error::io(target, e);
    let json = |v: &dyn erased::Json| {
        v.pretty().map_err(|e| Error::Corrupt {
            path: target.to_path_buf(),
            what: "transcript",
            reason: e.to_string(),
        })
    };
    let from = from.filter(|c| c.parser.format() == format);
    // Opened before the new file replaces it: the parts to copy.
    let old = match from {
        Some(_) => Some(File::open(target).map_err(io)?),
        None => None,
    };
    let (mark, mut parser, mut lossy, mut count) = match from {
        Some(c) => (c.at, c.parser.clone(), c.lossy.clone(), c.messages),
        None => (Mark::default(), LogParser::new(format), vec![], 0),
    };
    let mut written = None;
    store::write_atomic_file(target, |file| {
        let mut w = Out { w: file, at: 0 };
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
        let messages_start = w.at;
        if let (Some(old), Some(c)) = (&old, from) {
            w.copy(old, c.stored.messages).map_err(io)?;
        }
        let mut first = count == 0;
        // The state at the last line that ended with a newline, taken just
        // before a last line without one is read.
        let mut cut: Option<(LogParser, Vec<BadLine>, String, u64, u64)> = None;
        let (fp, at) = walk(
            source,
            mark,
            len,
            on_bytes,
            true,
            &mut |no, line, is_lossy, whole| {
                if !whole {
                    cut = Some((
                        parser.clone(),
                        lossy.clone(),
                        said.as_str().to_string(),
                        count,
                        w.at,
                    ));
                }
                if is_lossy {
                    lossy.push(not_utf8(no));
                }
                for m in parser.read(no, line) {
                    if !said.is_full() {
                        said.push(&m);
                    }
                    item(&mut w, &m, &mut first, target)?;
                    count += 1;
                }
                Ok(())
            },
        )?;
        let (state, lossy_at, said_at, messages, messages_end) = cut.unwrap_or_else(|| {
            (
                parser.clone(),
                lossy.clone(),
                said.as_str().to_string(),
                count,
                w.at,
            )
        });
        if let (Some(m), _) = parser.finish() {
            if !said.is_full() {
                said.push(&m);
            }
            item(&mut w, &m, &mut first, target)?;
        }
        if fp.as_string() != fingerprint {
            return Err(changed(source));
        }
        let close = if first { "]" } else { "\n  ]" };
        write!(w, "{close},\n  \"rawLines\": [").map_err(io)?;
        let raw_start = w.at;
        if let (Some(old), Some(c)) = (&old, from) {
            w.copy(old, c.stored.raw_lines).map_err(io)?;
        }
        let mut first = mark.lines == 0;
        let mut raw_cut = None;
        let second = |b: u64| on_bytes(len + b);
        let (fp, _) = walk(
            source,
            mark,
            len,
            &second,
            false,
            &mut |_, line, _, whole| {
                if !whole {
                    raw_cut = Some(w.at);
                }
                match line {
                    Line::Text(text) => item(&mut w, &text, &mut first, target),
                    // Not given when `parse_long` is false.
                    Line::Parsed(_) => Ok(()),
                }
            },
        )?;
        if fp.as_string() != fingerprint {
            return Err(changed(source));
        }
        let raw_end = raw_cut.unwrap_or(w.at);
        let close = if first { "]" } else { "\n  ]" };
        write!(w, "{close}\n}}\n").map_err(io)?;
        written = Some(Written {
            at,
            parser: state,
            lossy: lossy_at,
            said: said_at,
            messages,
            messages_bytes: (messages_start, messages_end),
            raw_bytes: (raw_start, raw_end),
        });
        Ok(())
    })?;
    if let Some(old) = previous
        && old != target
    {
        std::fs::remove_file(old).map_err(|e| Error::io(old, e))?;
        if let Some(dir) = old.parent() {
            store::sync_dir(dir)?;
        }
    }
    written.ok_or_else(|| changed(source))
}

/// One item of a JSON array of the stored file (a message or a raw line),
/// written straight to the file, never first to a string: it may be as
/// long as the log's longest line.
fn item(w: &mut dyn Write, v: &dyn erased::Json, first: &mut bool, target: &Path) -> Result<()> {
    let io = |e: std::io::Error| Error::io(target, e);
    let sep = if *first { "\n    " } else { ",\n    " };
    *first = false;
    w.write_all(sep.as_bytes()).map_err(io)?;
    v.pretty_to(&mut Indented {
        inner: w,
        by: b"    ",
    })
    .map_err(|e| match e.io_error_kind() {
        Some(kind) => io(std::io::Error::new(kind, e)),
        None => Error::Corrupt {
            path: target.to_path_buf(),
            what: "transcript",
            reason: e.to_string(),
        },
    })
}

/// The stored file being written, counting its bytes: the checkpoint keeps
/// where its parts begin and end.
struct Out<'w> {
    w: &'w mut BufWriter<File>,
    at: u64,
}

impl Out<'_> {
    /// Copies bytes `range` of `old` (a stored file written before) with
    /// `std::io::copy` from file to file, which the kernel does
    /// (`copy_file_range`) without passing them through memory.
    fn copy(&mut self, old: &File, (from, to): (u64, u64)) -> std::io::Result<()> {
        let want = to.saturating_sub(from);
        let mut reader = old;
        reader.seek(SeekFrom::Start(from))?;
        let n = std::io::copy(&mut reader.take(want), self.w)?;
        self.at += n;
        if n != want {
            return Err(std::io::Error::other(
                "the stored transcript is shorter than its import checkpoint says",
            ));
        }
        Ok(())
    }
}

impl Write for Out<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.w.write(buf)?;
        self.at += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.w.flush()
    }
}

/// Pretty JSON nested one level deeper: JSON strings hold no raw newline,
/// so indenting after each newline is exact.
fn indent(text: &str, by: &str) -> String {
    text.replace('\n', &format!("\n{by}"))
}

/// A writer that indents every line after the first by `by`: pretty JSON
/// nested one level deeper, written as it is made. JSON strings hold no raw
/// newline, so indenting after each newline is exact.
struct Indented<'w> {
    inner: &'w mut dyn Write,
    by: &'static [u8],
}

impl Write for Indented<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut rest = buf;
        while let Some(i) = rest.iter().position(|&b| b == b'\n') {
            self.inner.write_all(&rest[..=i])?;
            self.inner.write_all(self.by)?;
            rest = &rest[i + 1..];
        }
        self.inner.write_all(rest)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

mod erased {
    /// A value written as 2-space JSON (what `to_string_pretty` writes).
    pub(super) trait Json {
        fn pretty(&self) -> serde_json::Result<String>;
        fn pretty_to(&self, w: &mut dyn std::io::Write) -> serde_json::Result<()>;
    }
    impl<T: serde::Serialize + ?Sized> Json for T {
        fn pretty(&self) -> serde_json::Result<String> {
            serde_json::to_string_pretty(self)
        }
        fn pretty_to(&self, w: &mut dyn std::io::Write) -> serde_json::Result<()> {
            serde_json::to_writer_pretty(w, self)
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
