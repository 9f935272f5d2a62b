//! Codex's compressed old rollouts (`rollout-…-<uuid>.jsonl.zst`), read by
//! unpacking them first to a private file in the state folder: every pass
//! of an import reads a log by offsets, which a compressed stream has not.
//! The file goes when the [`Unpacked`] is dropped. Decoded by `ruzstd`
//! (pure Rust, every frame of the file in turn), at most
//! [`UNPACKED_AT_MOST`] bytes.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::path::{Path, PathBuf};

use logbook_model::error::{Error, Result};

/// The most bytes a compressed log is unpacked to: past it, the import
/// refuses it (a few hundred MiB is a long session; this is a bomb).
pub const UNPACKED_AT_MOST: u64 = 8 << 30;

/// Whether `path` names a compressed agent log (`*.jsonl.zst`).
pub fn is_compressed(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|n| n.to_string_lossy().ends_with(".jsonl.zst"))
}

/// A compressed log unpacked to a private file, removed on drop.
#[derive(Debug)]
pub struct Unpacked {
    path: PathBuf,
}

impl Unpacked {
    /// The unpacked file: what the passes of an import read.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Unpacked {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Unpacks the compressed log at `path` into `state_dir/unpacked/`.
pub fn unpack(state_dir: &Path, path: &Path) -> Result<Unpacked> {
    let dir = state_dir.join("unpacked");
    crate::fs::create_folder(&dir)?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let target = dir.join(format!("{}-{nanos}.jsonl", std::process::id()));
    let io = |e: std::io::Error| Error::io(path, e);
    let file = std::fs::File::open(path).map_err(io)?;
    let mut input = BufReader::new(file);
    let unpacked = Unpacked {
        path: target.clone(),
    };
    crate::write_atomic_file_private(&target, |out| {
        let mut left = UNPACKED_AT_MOST;
        // A file may hold several frames, one after another.
        while !input.fill_buf().map_err(io)?.is_empty() {
            let decoder = ruzstd::decoding::StreamingDecoder::new(&mut input)
                .map_err(|e| not_zstd(path, &e.to_string()))?;
            let copied = std::io::copy(&mut decoder.take(left + 1), out)
                .map_err(|e| not_zstd(path, &e.to_string()))?;
            if copied > left {
                return Err(not_zstd(
                    path,
                    &format!("it unpacks to more than {UNPACKED_AT_MOST} bytes"),
                ));
            }
            left -= copied;
        }
        out.flush().map_err(io)
    })?;
    Ok(unpacked)
}

/// A compressed log that does not unpack.
fn not_zstd(path: &Path, why: &str) -> Error {
    Error::io(
        path,
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("not a readable zstd-compressed log: {why}"),
        ),
    )
}
