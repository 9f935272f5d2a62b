//! The stored transcript of an agent log, written in streaming passes:
//! the seed's transcript (`id`, `timestamp`, `version`, `metadata`,
//! `messages`) plus `rawLines`, whole or going on from a checkpoint whose
//! part of the old file is copied by the kernel.
//!
//! A line that does not parse (a bad line) is kept in `rawLines` as a string
//! when its JSON is at most [`BAD_LINE_KEPT`] bytes; a longer one (a run of
//! NUL bytes in a sparse file, 6 bytes each once escaped) is kept as
//! [`CutLine`]: its start, cut so its JSON is at most [`BAD_LINE_KEPT`]
//! bytes, and its length. So each bad line adds at most that much, plus its
//! length and line number, to the stored file.

use std::collections::HashSet;
use std::fs::File;
use std::io::{BufWriter, Read, Seek as _, SeekFrom, Write};
use std::path::Path;

use super::{Mark, changed, line_rest, not_utf8, walk};
use crate::import_cursor::Cursor;
use logbook_model::agent_log::{
    BAD_LINE_KEPT, BadLine, CutLine, Format, Line, LogParser, json_prefix,
};
use logbook_model::error::{Error, Result};
use logbook_model::text::Nested;
use logbook_model::transcript::find::MessageText;
use logbook_model::transcript::{FORMAT_VERSION, Metadata, SaidText};

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

/// Writes the transcript of the first `len` bytes of the log at `source`
/// to `target` atomically (2-space JSON, as every transcript), streaming
/// its messages and raw lines, and removes `previous` (the id's file under
/// another name) once the new one is durable. `fingerprint` is the one
/// [`super::scan`] measured: if the bytes changed since, nothing is written.
/// `said` gathers what the messages say as they are written (for the
/// index's full text), and `found` what each message says and where the
/// failed tool results are (from the first message written, which is the
/// checkpoint's first new one with `from`); `on_bytes` follows the passes
/// over the log.
///
/// With `from`, a checkpoint that describes the file at `target` now (the
/// caller checked it with [`Cursor::fits_stored`]), the messages and raw
/// lines before the checkpoint are copied from that file by the kernel,
/// not parsed; only the log's bytes after it are read. The result is the
/// same bytes a whole import writes. Returns where the next import can go on.
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
    found: &mut MessageText,
    from: Option<&Cursor>,
    on_bytes: &dyn Fn(u64),
) -> Result<Written> {
    let from = from.filter(|c| c.parser.format() == format);
    // Opened before the new file replaces it: the parts to copy.
    let from = match from {
        Some(c) => Some((c, File::open(target).map_err(|e| Error::io(target, e))?)),
        None => None,
    };
    let passes = Passes {
        target,
        source,
        len,
        format,
        fingerprint,
        on_bytes,
        mark: from.as_ref().map_or(Mark::default(), |(c, _)| c.at),
        from,
    };
    let mut written = None;
    // A transcript holds whatever the agent read, secrets included.
    crate::write_atomic_file_private(target, |file| {
        let mut w = Out { w: file, at: 0 };
        passes.write_head(&mut w, head)?;
        let m = passes.write_messages(&mut w, said, found)?;
        let raw_bytes = passes.write_raw_lines(&mut w, &m.bad)?;
        written = Some(Written {
            at: m.at,
            parser: m.parser,
            lossy: m.lossy,
            said: m.said,
            messages: m.messages,
            messages_bytes: m.bytes,
            raw_bytes,
        });
        Ok(())
    })?;
    if let Some(old) = previous
        && old != target
    {
        std::fs::remove_file(old).map_err(|e| Error::io(old, e))?;
        if let Some(dir) = old.parent() {
            crate::sync_dir(dir)?;
        }
    }
    written.ok_or_else(|| changed(source))
}

/// What the passes of one [`write_transcript_from`] over the log share.
struct Passes<'a> {
    target: &'a Path,
    source: &'a Path,
    len: u64,
    format: Format,
    fingerprint: &'a str,
    on_bytes: &'a dyn Fn(u64),
    /// The checkpoint the writing goes on from, and the stored file it
    /// describes (opened before the new one replaces it).
    from: Option<(&'a Cursor, File)>,
    /// Where in the log the passes start.
    mark: Mark,
}

/// What the messages pass wrote, as of the last line that ended with a
/// newline (see [`Written`]), and the lines after the checkpoint that did
/// not parse.
struct MessagesWritten {
    at: Mark,
    parser: LogParser,
    lossy: Vec<BadLine>,
    said: String,
    messages: u64,
    bytes: (u64, u64),
    bad: HashSet<u64>,
}

impl Passes<'_> {
    fn io(&self) -> impl Fn(std::io::Error) -> Error + '_ {
        |e| Error::io(self.target, e)
    }

    /// The metadata, before the messages, so that a listing reads it
    /// without reading the rest (`crate::transcript::read_head`).
    fn write_head(&self, w: &mut Out<'_>, head: &Head<'_>) -> Result<()> {
        let json = |v: &dyn erased::Json| {
            v.pretty().map_err(|e| Error::Corrupt {
                path: self.target.to_path_buf(),
                what: "transcript",
                reason: e.to_string(),
            })
        };
        write!(
            w,
            "{{\n  \"id\": {},\n  \"timestamp\": {},\n  \"version\": {},\n  \"metadata\": ",
            json(&head.id)?,
            json(&head.timestamp)?,
            json(&FORMAT_VERSION)?,
        )
        .map_err(self.io())?;
        nested(w, head.metadata, b"  ", self.target)
    }

    /// Claude Code: a `<persisted-output>` stub's result read back from
    /// the session's `tool-results/` (see [`super::persisted`]).
    fn fill_persisted(&self, m: &mut logbook_model::transcript::Message) {
        if self.format == Format::ClaudeCode
            && let Some(dir) = super::persisted::results_dir(self.source)
        {
            super::persisted::fill(m, &dir);
        }
    }

    /// The first pass: the `messages` array, the checkpoint's part copied
    /// and the log's lines after it parsed, `said` and `found` gathering
    /// what they say.
    fn write_messages(
        &self,
        w: &mut Out<'_>,
        said: &mut SaidText,
        found: &mut MessageText,
    ) -> Result<MessagesWritten> {
        let target = self.target;
        write!(w, ",\n  \"messages\": [").map_err(self.io())?;
        let messages_start = w.at;
        let (mut parser, mut lossy, mut count) = match &self.from {
            Some((c, old)) => {
                w.copy(old, c.stored.messages).map_err(self.io())?;
                (c.parser.clone(), c.lossy.clone(), c.messages)
            }
            None => (LogParser::new(self.format), vec![], 0),
        };
        let mut first = count == 0;
        // The state at the last line that ended with a newline, taken just
        // before a last line without one is read.
        let mut cut: Option<(LogParser, Vec<BadLine>, String, u64, u64)> = None;
        let (fp, at) = walk(
            self.source,
            self.mark,
            self.len,
            self.on_bytes,
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
                for mut m in parser.read(no, line) {
                    self.fill_persisted(&mut m);
                    if !said.is_full() {
                        said.push(&m);
                    }
                    found.push(&m);
                    item(w, &m, &mut first, target)?;
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
        let bad = self.write_held_messages(w, parser, said, found, &mut first)?;
        if fp.as_string() != self.fingerprint {
            return Err(changed(self.source));
        }
        let close = if first { "]" } else { "\n  ]" };
        write!(w, "{close},").map_err(self.io())?;
        Ok(MessagesWritten {
            at,
            parser: state,
            lossy: lossy_at,
            said: said_at,
            messages,
            bytes: (messages_start, messages_end),
            bad,
        })
    }

    /// Writes the messages the parser still held at the log's end, and
    /// gives the lines after the checkpoint that did not parse (kept cut).
    fn write_held_messages(
        &self,
        w: &mut Out<'_>,
        parser: LogParser,
        said: &mut SaidText,
        found: &mut MessageText,
        first: &mut bool,
    ) -> Result<HashSet<u64>> {
        let (last, summary) = parser.finish();
        for mut m in last {
            self.fill_persisted(&mut m);
            if !said.is_full() {
                said.push(&m);
            }
            found.push(&m);
            item(w, &m, first, self.target)?;
        }
        Ok(summary
            .bad_lines
            .iter()
            .map(|b| b.line)
            .filter(|&no| no > self.mark.lines)
            .collect())
    }

    /// The second pass: the `rawLines` array, the checkpoint's part copied
    /// and the log's lines after it as they are, a `bad` one kept cut when
    /// long. Returns the byte range of the raw lines up to the last line
    /// that ended with a newline.
    fn write_raw_lines(&self, w: &mut Out<'_>, bad: &HashSet<u64>) -> Result<(u64, u64)> {
        let (target, source, len) = (self.target, self.source, self.len);
        write!(w, "\n  \"rawLines\": [").map_err(self.io())?;
        let raw_start = w.at;
        if let Some((c, old)) = &self.from {
            w.copy(old, c.stored.raw_lines).map_err(self.io())?;
        }
        let mut first = self.mark.lines == 0;
        let mut raw_cut = None;
        let second = |b: u64| (self.on_bytes)(len + b);
        // Where the line being read begins in the log: a cut line records
        // its length as it is in the log, before any U+FFFD stood in.
        let mut line_at = self.mark.offset();
        let log = File::open(source).map_err(|e| Error::io(source, e))?;
        let (fp, _) = walk(
            source,
            self.mark,
            len,
            &second,
            false,
            &mut |no, line, is_lossy, whole| {
                if !whole {
                    raw_cut = Some(w.at);
                }
                let Line::Text(text) = line else {
                    // Not given when `parse_long` is false.
                    return Ok(());
                };
                let newline = u64::from(whole);
                let bytes = if is_lossy {
                    let rest = line_rest(&log, line_at, len).map_err(|e| Error::io(source, e))?;
                    (rest as u64).saturating_sub(newline)
                } else {
                    text.len() as u64
                };
                line_at += bytes + newline;
                if bad.contains(&no) {
                    let kept = json_prefix(text, BAD_LINE_KEPT);
                    if kept.len() < text.len() {
                        let cut = CutLine {
                            line: no,
                            bytes,
                            text: kept,
                            truncated: true,
                        };
                        return item(w, &cut, &mut first, target);
                    }
                }
                item(w, &text, &mut first, target)
            },
        )?;
        if fp.as_string() != self.fingerprint {
            return Err(changed(source));
        }
        let raw_end = raw_cut.unwrap_or(w.at);
        let close = if first { "]" } else { "\n  ]" };
        write!(w, "{close}\n}}\n").map_err(self.io())?;
        Ok((raw_start, raw_end))
    }
}

/// One item of a JSON array of the stored file (a message or a raw line),
/// written straight to the file, never first to a string: it may be as
/// long as the log's longest line.
fn item(w: &mut dyn Write, v: &dyn erased::Json, first: &mut bool, target: &Path) -> Result<()> {
    let io = |e: std::io::Error| Error::io(target, e);
    let sep = if *first { "\n    " } else { ",\n    " };
    *first = false;
    w.write_all(sep.as_bytes()).map_err(io)?;
    nested(w, v, b"    ", target)
}

/// `v` as pretty JSON nested `by` deeper, written straight to `w`.
fn nested(w: &mut dyn Write, v: &dyn erased::Json, by: &'static [u8], target: &Path) -> Result<()> {
    let io = |e: std::io::Error| Error::io(target, e);
    v.pretty_to(&mut Nested::new(w, by))
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
