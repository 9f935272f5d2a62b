//! Transcript files on disk: `{transcripts_dir}/{prefix}_{short}.json`,
//! read with a streaming parser, and `{transcripts_dir}/archive/` for the
//! ones `prune` moved. The caller holds the id's lock for every write.

use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::{Error, Result};
use crate::model::transcript::{
    ARCHIVE_DIR, Kind, Metadata, Transcript, file_name, parse_file_name,
};
use crate::store::{self, Project};

/// Reads a whole transcript with a streaming parser (memory stays close to
/// the parsed size, whatever the file size).
pub fn read_file(path: &Path) -> Result<Transcript> {
    read_json(path)
}

/// The largest transcript file `transcript import` reads: generous (a long
/// conversation with tool output runs to tens of MiB), but a bound, so that
/// `/dev/zero` or a runaway file is refused instead of filling memory.
pub const MAX_IMPORT_BYTES: u64 = 512 * 1024 * 1024;

/// Reads a transcript a user gave to import: a regular file (not a FIFO or
/// device) of at most [`MAX_IMPORT_BYTES`].
pub fn read_import(path: &Path) -> Result<Transcript> {
    let Some(reader) = store::open_regular(path, "transcript file", MAX_IMPORT_BYTES)? else {
        return Err(Error::not_found(
            "transcript file",
            path.display().to_string(),
            "give the path of a JSON transcript in seed 003's format",
        ));
    };
    serde_json::from_reader(BufReader::with_capacity(1 << 16, reader)).map_err(|e| Error::Corrupt {
        path: path.to_path_buf(),
        what: "transcript",
        reason: e.to_string(),
    })
}

/// What a listing needs of a transcript file: its id and metadata.
#[derive(Debug, Clone, Deserialize)]
pub struct Head {
    /// The id inside the file.
    pub id: String,
    /// Its metadata.
    #[serde(default)]
    pub metadata: Metadata,
}

/// Reads only `id` and `metadata`; the messages are skipped without being
/// kept, so listing many large transcripts stays cheap.
pub fn read_head(path: &Path) -> Result<Head> {
    read_json(path)
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T> {
    let file = File::open(path).map_err(|e| Error::io(path, e))?;
    serde_json::from_reader(BufReader::with_capacity(1 << 16, file)).map_err(|e| Error::Corrupt {
        path: path.to_path_buf(),
        what: "transcript",
        reason: e.to_string(),
    })
}

/// `{transcripts_dir}/archive`.
pub fn archive_dir(p: &Project) -> PathBuf {
    p.config.transcripts_dir.join(ARCHIVE_DIR)
}

/// The live file holding `id` (lowercase), if any (either prefix, short or
/// full name, the id inside compared without case).
pub fn find_live(dir: &Path, id: &str) -> Option<(Kind, PathBuf)> {
    candidates(dir, id)
        .into_iter()
        .find(|(_, path)| read_head(path).is_ok_and(|h| h.id.eq_ignore_ascii_case(id)))
}

/// The files in `dir` that may hold `id` (lowercase): both prefixes, short
/// name first. When no file has the lowercase name, names in any case are
/// looked for (another tool may have written `session_3C4D5E6F.json`),
/// which costs one listing of `dir`.
pub fn candidates(dir: &Path, id: &str) -> Vec<(Kind, PathBuf)> {
    let mut out = vec![];
    for full in [false, true] {
        for kind in [Kind::Main, Kind::Subagent] {
            let path = dir.join(file_name(kind, id, full));
            if path.is_file() {
                out.push((kind, path));
            }
        }
    }
    if out.is_empty() {
        for full in [false, true] {
            for (kind, path) in transcript_files(dir).unwrap_or_default() {
                let wanted = file_name(kind, id, full);
                let same = path
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().eq_ignore_ascii_case(&wanted));
                if same && !out.iter().any(|(_, p)| *p == path) {
                    out.push((kind, path));
                }
            }
        }
    }
    out
}

/// The transcript files in `dir` (both prefixes, not temp files).
pub fn transcript_files(dir: &Path) -> Result<Vec<(Kind, PathBuf)>> {
    Ok(store::entries(dir, store::EntryKind::File)?
        .into_iter()
        .filter_map(|(name, path)| parse_file_name(&name).map(|(kind, _)| (kind, path)))
        .collect())
}

/// Writes `transcript` to `target` atomically, and removes `previous` (the
/// file the id had under another name) once the new one is durable.
pub fn write(target: &Path, transcript: &Transcript, previous: Option<&Path>) -> Result<()> {
    let mut bytes = Vec::new();
    serde_json::to_writer_pretty(BufWriter::new(&mut bytes), transcript).map_err(|e| {
        Error::Corrupt {
            path: target.to_path_buf(),
            what: "transcript",
            reason: e.to_string(),
        }
    })?;
    bytes.push(b'\n');
    store::write_atomic(target, &bytes)?;
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

/// Whether a transcript's `workdir` is `root` or inside it (listings filter on it).
pub fn is_within(workdir: &str, root: &Path) -> bool {
    let w = Path::new(workdir);
    if w.starts_with(root) {
        return true;
    }
    match (w.canonicalize(), root.canonicalize()) {
        (Ok(w), Ok(r)) => w.starts_with(r),
        (Err(_), Ok(r)) => w.starts_with(r),
        _ => false,
    }
}
