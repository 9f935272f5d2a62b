//! Files read for a secrets scan ([`crate::ops::secrets`]): every file under
//! a run folder without following a link out of it, and a file's text whole
//! when it is small, in overlapping chunks when it is not, so that a scan of
//! a session of hundreds of MiB holds a chunk, not the file.

use std::fs;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use logbook_model::error::{Error, Result};

/// Every regular file under `folder`, depth first in name order; links are
/// not followed (a link may point anywhere), a folder that cannot be read
/// is passed over.
pub fn files_under(folder: &Path) -> Vec<PathBuf> {
    let mut out = vec![];
    let mut stack = vec![folder.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        let mut here: Vec<_> = entries.flatten().collect();
        here.sort_by_key(|e| std::cmp::Reverse(e.file_name()));
        for e in here {
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(e.path()),
                Ok(t) if t.is_file() => out.push(e.path()),
                _ => {}
            }
        }
    }
    out.sort();
    out
}

/// A file as a scan reads it.
pub enum Scanned {
    /// Its text, when it is at most the limit asked for.
    Whole(String),
    /// Larger: to be read with [`each_chunk`].
    Large,
    /// Not text (a NUL in its first bytes).
    Binary,
}

/// Reads `path` for a scan: whole when at most `limit` bytes.
pub fn read(path: &Path, limit: u64) -> Result<Scanned> {
    let meta = fs::symlink_metadata(path).map_err(|e| Error::io(path, e))?;
    let mut file = fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut head = vec![0u8; 8192];
    let n = read_full(&mut file, &mut head).map_err(|e| Error::io(path, e))?;
    head.truncate(n);
    if head.contains(&0) {
        return Ok(Scanned::Binary);
    }
    if meta.len() > limit {
        return Ok(Scanned::Large);
    }
    file.read_to_end(&mut head)
        .map_err(|e| Error::io(path, e))?;
    Ok(Scanned::Whole(match String::from_utf8(head) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }))
}

fn read_full(file: &mut fs::File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match file.read(&mut buf[n..])? {
            0 => break,
            k => n += k,
        }
    }
    Ok(n)
}

/// Calls `each` with the text of `path` in chunks of about `chunk` bytes,
/// each starting `overlap` bytes before the previous one ended (so a secret
/// across a cut is whole in one of them), with its offset in the file.
/// Chunks are cut on UTF-8 boundaries; invalid bytes read as U+FFFD.
pub fn each_chunk(
    path: &Path,
    chunk: usize,
    overlap: usize,
    each: &mut dyn FnMut(u64, &str),
) -> Result<()> {
    let mut file = fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut buf: Vec<u8> = Vec::with_capacity(chunk + overlap);
    let mut offset = 0u64;
    loop {
        let had = buf.len();
        buf.resize(chunk.max(overlap + 1), 0);
        let n = read_full(&mut file, &mut buf[had..]).map_err(|e| Error::io(path, e))?;
        buf.truncate(had + n);
        let end = n == 0 || buf.len() < chunk;
        // Up to the last whole character, unless this is the end.
        let cut = if end {
            buf.len()
        } else {
            match std::str::from_utf8(&buf) {
                Ok(_) => buf.len(),
                Err(e) if e.error_len().is_none() => e.valid_up_to(),
                Err(_) => buf.len(),
            }
        };
        each(offset, &String::from_utf8_lossy(&buf[..cut]));
        if end {
            return Ok(());
        }
        let keep_from = cut.saturating_sub(overlap);
        // Start the next chunk on a character boundary.
        let keep_from = (keep_from..cut)
            .find(|i| buf[*i] & 0xC0 != 0x80)
            .unwrap_or(cut);
        offset += keep_from as u64;
        buf.drain(..keep_from);
    }
}

/// A file's size and mtime in nanoseconds, if it can be read: what says a
/// file counted before is unchanged.
pub fn stamp(path: &Path) -> Option<(u64, i128)> {
    use std::os::unix::fs::MetadataExt as _;
    let m = fs::metadata(path).ok()?;
    Some((
        m.len(),
        i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()),
    ))
}
