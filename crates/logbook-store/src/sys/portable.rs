//! The path every Unix has (macOS first): `fstatat`, `fstat` and
//! `readdir`, folders opened `O_RDONLY`. Built and tested on Linux too,
//! where the `portable-fs` feature makes it the one in use.

use std::ffi::CStr;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::path::Path;

use rustix::fs::{AtFlags, Dir, FileType, OFlags, Stat};

use super::{Follow, Kind, Meta, Result, Time, Want};

/// Without `O_PATH`, a folder opened for lookups is opened for reading.
pub const LOOKUP_ONLY: OFlags = OFlags::RDONLY;

/// `readdir` keeps its own buffer: nothing to reuse here.
#[derive(Default)]
pub struct ListBuffer(());

// `stat`'s field types differ between systems (and libc's between
// architectures): each is widened to `Meta`'s, never narrowed, except the
// nanoseconds, which are below 10^9 everywhere.
#[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
fn meta(m: &Stat) -> Meta {
    let kind = match FileType::from_raw_mode(m.st_mode as _) {
        FileType::RegularFile => Kind::File,
        FileType::Directory => Kind::Dir,
        FileType::Symlink => Kind::Symlink,
        _ => Kind::Other,
    };
    let dev = m.st_dev as u64;
    Meta {
        kind,
        size: m.st_size as u64,
        mtime: Time {
            sec: m.st_mtime as i64,
            nsec: m.st_mtime_nsec as u32,
        },
        ctime: Time {
            sec: m.st_ctime as i64,
            nsec: m.st_ctime_nsec as u32,
        },
        ino: m.st_ino as u64,
        dev_major: rustix::fs::major(dev as _),
        dev_minor: rustix::fs::minor(dev as _),
        nlink: m.st_nlink as u64,
    }
}

/// See [`super::stat_at`]; `stat` fills every field whatever is wanted.
pub fn stat_at(at: BorrowedFd<'_>, rel: &Path, follow: Follow, _want: Want) -> Result<Meta> {
    let flags = match follow {
        Follow::Yes => AtFlags::empty(),
        Follow::No => AtFlags::SYMLINK_NOFOLLOW,
    };
    rustix::fs::statat(at, rel, flags).map(|m| meta(&m))
}

/// See [`super::stat_open`].
pub fn stat_open(fd: BorrowedFd<'_>, _want: Want) -> Result<Meta> {
    rustix::fs::fstat(fd).map(|m| meta(&m))
}

/// See [`super::list`]. `readdir` reads through a descriptor of its own
/// (the caller's stays open for lookups), opened again from `fd`.
pub fn list(fd: &OwnedFd, _buffer: &mut ListBuffer, mut each: impl FnMut(&CStr)) -> Result<()> {
    let mut dir = Dir::read_from(fd)?;
    while let Some(entry) = dir.read() {
        each(entry?.file_name());
    }
    Ok(())
}

/// Folder watches: none here (every stamp is asked afresh), so that the
/// code that keeps stamps fresh builds everywhere.
pub struct FolderWatch(());

impl FolderWatch {
    /// No watch on this system.
    pub fn new() -> Option<FolderWatch> {
        None
    }

    /// Never watches.
    pub fn add(&self, _dir: &Path) -> Option<i32> {
        None
    }

    /// Nothing to stop.
    pub fn remove(&self, _wd: i32) {}

    /// Nothing ever changed that was watched.
    pub fn drain(&self, _each: impl FnMut(Option<i32>)) {}
}
