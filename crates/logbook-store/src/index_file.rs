//! The index's SQLite file on disk, apart from what SQLite does to it
//! itself (rusqlite opens and writes the database file): its folder, its
//! size, its identity, and the removal and replacement a rebuild makes.

use std::fs;
use std::path::{Path, PathBuf};

use logbook_model::error::{Error, Result};

/// Creates the folder the index file at `path` lives in.
pub fn create_folder(path: &Path) -> Result<()> {
    match path.parent() {
        Some(dir) => fs::create_dir_all(dir).map_err(|e| Error::io(dir, e)),
        None => Ok(()),
    }
}

/// Whether a file is at `path` (a database, its WAL).
pub fn is_present(path: &Path) -> bool {
    path.is_file()
}

/// Whether anything is at `path` (symlinks followed).
pub fn exists(path: &Path) -> bool {
    path.exists()
}

/// The size of the file at `path` in bytes; 0 when it is gone.
pub fn size(path: &Path) -> u64 {
    fs::metadata(path).map_or(0, |m| m.len())
}

/// What makes the file at `path` the same file: device, inode and birth
/// time (ns; 0 where the file system does not keep it). `None` when gone.
pub fn identity(path: &Path) -> Option<(u64, u64, u128)> {
    use std::os::unix::fs::MetadataExt as _;
    let m = fs::metadata(path).ok()?;
    let born = m
        .created()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    Some((m.dev(), m.ino(), born))
}

/// Removes `path` with each of `suffixes` appended (`""`, `-wal`, `-shm`),
/// those that exist.
pub fn remove(path: &Path, suffixes: &[&str]) -> Result<()> {
    for suffix in suffixes {
        let p = PathBuf::from(format!("{}{suffix}", path.display()));
        match fs::remove_file(&p) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(&p, e)),
        }
    }
    Ok(())
}

/// Flushes the closed database file at `path` to the disk.
pub fn sync(path: &Path) -> Result<()> {
    fs::File::open(path)
        .and_then(|f| f.sync_all())
        .map_err(|err| Error::io(path, err))
}

/// Renames the built file `new` over `live`, durably (the folder synced).
pub fn replace(new: &Path, live: &Path) -> Result<()> {
    fs::rename(new, live).map_err(|err| Error::io(live, err))?;
    if let Some(dir) = live.parent() {
        crate::fs::sync_dir(dir)?;
    }
    Ok(())
}

/// `path` with every symlink resolved, or as given when it cannot be: the
/// project root an index records it was built for.
pub fn canonical(path: &Path) -> PathBuf {
    fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}
