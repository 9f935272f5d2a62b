//! Import checkpoints: where the last import of an agent log stopped, so
//! that the next one reads only what the agent appended since.
//!
//! A checkpoint is a cache, never a record: `{state dir}/import-cursors/
//! <hash of the log's path>.json`, written atomically after the transcript
//! it describes. It is trusted only when everything it assumed still holds
//! (see [`load`] and [`Cursor::fits_stored`]); otherwise the import reads
//! the whole log again and writes a new one. A checkpoint that is missing,
//! unreadable, of another version or about other files costs a full
//! import, never a wrong transcript.
//!
//! Trap: the checks do not re-read the log's bytes before the checkpoint
//! (that would defeat it). They rely on agents only appending: the same
//! file (device and inode), no shorter, the same first and last
//! [`WINDOW`] bytes before the checkpoint. A log rewritten in place to the
//! same length with those windows intact would go unnoticed.

use std::fs::File;
use std::os::unix::fs::{FileExt as _, MetadataExt as _};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::agent_log::{Mark, Written};
use logbook_model::agent_log::{BadLine, FNV_OFFSET, Format, LogParser, PARSER_VERSION, fnv1a64};
use logbook_model::error::{Error, Result};

/// Bumped when the checkpoint's shape or meaning changes: an older one is
/// then ignored.
pub const CURSOR_VERSION: u64 = 1;

/// How many bytes of the log on each side of what a checkpoint skips are
/// hashed to tell the same log from a rewritten one.
pub const WINDOW: u64 = 4096;

/// How many bytes of the stored transcript before the end of each copied
/// part are hashed.
const STORED_WINDOW: u64 = 256;

/// Where an import of one log stopped, and the state to go on from.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Cursor {
    /// [`CURSOR_VERSION`].
    pub version: u64,
    /// [`PARSER_VERSION`] of the parser state.
    pub parser_version: u64,
    /// The agent that wrote the log.
    pub format: Format,
    /// The log, absolute and canonical.
    pub source: PathBuf,
    /// The log's device and inode: a log replaced by another file is not
    /// the one checkpointed.
    pub dev: u64,
    /// See `dev`.
    pub ino: u64,
    /// After the last line that ended with a newline.
    pub at: Mark,
    /// FNV-1a of the log's first [`WINDOW`] bytes before `at`.
    pub head_hash: u64,
    /// FNV-1a of the [`WINDOW`] bytes just before `at`.
    pub tail_hash: u64,
    /// The parser's state at `at`.
    pub parser: LogParser,
    /// The lines before `at` that are not UTF-8.
    pub lossy: Vec<BadLine>,
    /// What the messages before `at` say, for the index.
    pub said: String,
    /// How many messages the lines before `at` completed.
    pub messages: u64,
    /// The stored transcript those messages are in.
    pub stored: StoredAt,
}

/// The stored transcript a checkpoint describes, and where its parts are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StoredAt {
    /// The transcript file.
    pub path: PathBuf,
    /// Its device, inode, length and modification time: any rewrite
    /// (`transcript name`, an editor, another import) changes one of them.
    pub dev: u64,
    /// See `dev`.
    pub ino: u64,
    /// See `dev`.
    pub len: u64,
    /// See `dev` (nanoseconds since the epoch).
    pub mtime_ns: i128,
    /// The byte range of the messages before `at`.
    pub messages: (u64, u64),
    /// The byte range of the raw lines before `at`.
    pub raw_lines: (u64, u64),
    /// FNV-1a of the bytes before the end of each range.
    pub hash: u64,
}

/// The folder of a project's checkpoints, under its state dir.
pub fn dir(state_dir: &Path) -> PathBuf {
    state_dir.join("import-cursors")
}

/// The checkpoint file of the log at `source` (canonical).
pub(crate) fn path_of(dir: &Path, source: &Path) -> PathBuf {
    let h = fnv1a64(source.as_os_str().as_encoded_bytes(), FNV_OFFSET);
    dir.join(format!("{h:016x}.json"))
}

/// The checkpoints in `dir` that can never be used again: their log is
/// gone (deleted, or moved away), or the file is not a checkpoint at all.
/// A checkpoint whose log is still there is kept even when it no longer
/// fits (the next import replaces it).
pub fn stale(dir: &Path) -> Result<Vec<PathBuf>> {
    /// Only the field that says which log: the parser state is skipped.
    #[derive(Deserialize)]
    struct Source {
        source: PathBuf,
    }
    let mut out = vec![];
    for (name, path) in crate::entries(dir, crate::EntryKind::File)? {
        if !name.ends_with(".json") {
            continue;
        }
        let gone = match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice::<Source>(&bytes).map_or(true, |c| {
                path_of(dir, &c.source) != path || !c.source.exists()
            }),
            // Removed meanwhile by another doctor.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
            Err(e) => return Err(Error::io(&path, e)),
        };
        if gone {
            out.push(path);
        }
    }
    Ok(out)
}

/// Removes a checkpoint (a cache: the next import of its log reads the
/// whole log).
pub fn remove(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io(path, e)),
    }
}

/// The checkpoint of the log at `source` (canonical, `len` bytes long now,
/// in `format`) when one is there and still describes the start of that
/// log, with how many bytes of the log checking it read. `None` for any
/// doubt: the import then reads the whole log.
pub fn load(dir: &Path, source: &Path, len: u64, format: Format) -> Option<(Cursor, u64)> {
    let path = path_of(dir, source);
    let bytes = std::fs::read(&path).ok()?;
    let c: Cursor = serde_json::from_slice(&bytes).ok()?;
    let fits = c.version == CURSOR_VERSION
        && c.parser_version == PARSER_VERSION
        && c.format == format
        && c.parser.format() == format
        && c.source == source
        && c.at.offset() <= len;
    if !fits {
        return None;
    }
    let m = std::fs::metadata(source).ok()?;
    if m.dev() != c.dev || m.ino() != c.ino || m.len() < c.at.offset() {
        return None;
    }
    let file = File::open(source).ok()?;
    let (head, tail, read) = windows(&file, c.at.offset()).ok()?;
    (head == c.head_hash && tail == c.tail_hash).then_some((c, read))
}

impl Cursor {
    /// Whether the stored transcript at `target` is still the file this
    /// checkpoint describes, so its parts can be copied as they are.
    pub fn fits_stored(&self, target: &Path) -> bool {
        self.stored.path == target
            && stored_at(target, self.stored.messages, self.stored.raw_lines)
                .is_ok_and(|now| now == self.stored)
    }
}

/// Writes the checkpoint of what [`crate::agent_log::write_transcript_from`]
/// just wrote to `target` from the log at `source`.
pub fn save(dir: &Path, source: &Path, format: Format, target: &Path, w: Written) -> Result<()> {
    let io = |e| Error::io(source, e);
    let file = File::open(source).map_err(io)?;
    let m = file.metadata().map_err(io)?;
    let (head_hash, tail_hash, _) = windows(&file, w.at.offset()).map_err(io)?;
    let cursor = Cursor {
        version: CURSOR_VERSION,
        parser_version: PARSER_VERSION,
        format,
        source: source.to_path_buf(),
        dev: m.dev(),
        ino: m.ino(),
        at: w.at,
        head_hash,
        tail_hash,
        parser: w.parser,
        lossy: w.lossy,
        said: w.said,
        messages: w.messages,
        stored: stored_at(target, w.messages_bytes, w.raw_bytes)
            .map_err(|e| Error::io(target, e))?,
    };
    let text = serde_json::to_vec(&cursor).map_err(|e| Error::Corrupt {
        path: path_of(dir, source),
        what: "import checkpoint",
        reason: e.to_string(),
    })?;
    // The parser state holds what the messages say: the owner's only.
    crate::write_atomic_private(&path_of(dir, source), &text)
}

/// Hashes of the first [`WINDOW`] bytes before `at` and of the
/// [`WINDOW`] bytes just before it, and how many bytes that read.
fn windows(file: &File, at: u64) -> std::io::Result<(u64, u64, u64)> {
    let head_len = at.min(WINDOW);
    let head = read_at(file, 0, head_len)?;
    let tail = read_at(file, at - head_len, head_len)?;
    Ok((
        fnv1a64(&head, FNV_OFFSET),
        fnv1a64(&tail, FNV_OFFSET),
        // The two overlap in a log shorter than two windows.
        (2 * head_len).min(at),
    ))
}

fn read_at(file: &File, at: u64, len: u64) -> std::io::Result<Vec<u8>> {
    let mut buf = vec![0u8; usize::try_from(len).unwrap_or(usize::MAX)];
    file.read_exact_at(&mut buf, at)?;
    Ok(buf)
}

fn stored_at(
    path: &Path,
    messages: (u64, u64),
    raw_lines: (u64, u64),
) -> std::io::Result<StoredAt> {
    let file = File::open(path)?;
    let m = file.metadata()?;
    let mtime_ns = i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec());
    let mut hash = FNV_OFFSET;
    for (start, end) in [messages, raw_lines] {
        if start > end || end > m.len() {
            return Err(std::io::Error::other("a part ends past the file"));
        }
        let n = (end - start).min(STORED_WINDOW);
        hash = fnv1a64(&read_at(&file, end - n, n)?, hash);
    }
    Ok(StoredAt {
        path: path.to_path_buf(),
        dev: m.dev(),
        ino: m.ino(),
        len: m.len(),
        mtime_ns,
        messages,
        raw_lines,
        hash,
    })
}
