//! What the index compares of a file it follows to tell whether it changed
//! since it was read: its size and mtime, taken here so the index never
//! asks the file system itself.

use std::fs::{self, Metadata};
use std::path::Path;
use std::time::UNIX_EPOCH;

/// A file's size and mtime (ns since the epoch; 0 before it).
pub type Stamp = (i64, i64);

/// The stamp of a file from its metadata (taken from the open file by the
/// readers that have one).
pub fn of(m: &Metadata) -> Stamp {
    (m.len() as i64, mtime_ns_of(m))
}

/// The stamp of the file at `path` now, or `None` when it is gone.
pub fn of_path(path: &Path) -> Option<Stamp> {
    fs::metadata(path).ok().map(|m| of(&m))
}

/// The stamp of the file at `path`; `Ok(None)` when it is not there, the
/// error when it cannot be asked.
pub fn probe(path: &Path) -> std::io::Result<Option<Stamp>> {
    match fs::metadata(path) {
        Ok(m) => Ok(Some(of(&m))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// The mtime of `path` in ns since the epoch; 0 when it is gone or before
/// the epoch.
pub fn mtime_ns(path: &Path) -> i64 {
    fs::metadata(path).map_or(0, |m| mtime_ns_of(&m))
}

/// The mtime in `m`, as [`mtime_ns`] gives it.
pub(crate) fn mtime_ns_of(m: &Metadata) -> i64 {
    m.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as i64)
}
