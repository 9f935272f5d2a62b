//! Linux's fast path: `statx` with only the fields asked for (a file
//! system may skip the rest), `AT_EMPTY_PATH` for an open file, and
//! `getdents64` into a buffer reused across folders. These calls and flags
//! exist on no other Unix; [`super::portable`] is the path for those.

use std::ffi::CStr;
use std::mem::MaybeUninit;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::path::Path;

use rustix::fs::{AtFlags, FileType, OFlags, RawDir, Statx, StatxFlags, StatxTimestamp};

use super::{Follow, Kind, Meta, Result, Time, Want};

/// A folder opened only to look up names below it needs no read
/// permission on it.
pub const LOOKUP_ONLY: OFlags = OFlags::PATH;

/// The `getdents64` buffer, reused from one folder to the next so a
/// listing costs no allocation.
pub struct ListBuffer(Vec<MaybeUninit<u8>>);

impl Default for ListBuffer {
    fn default() -> Self {
        ListBuffer(vec![MaybeUninit::uninit(); 16 * 1024])
    }
}

fn mask(want: Want) -> StatxFlags {
    let mut m = StatxFlags::empty();
    if want.has(Want::KIND) {
        m |= StatxFlags::TYPE;
    }
    if want.has(Want::STAMP) {
        m |= StatxFlags::SIZE | StatxFlags::MTIME;
    }
    if want.has(Want::NLINK) {
        m |= StatxFlags::NLINK;
    }
    if want.has(Want::IDENTITY) {
        m |= StatxFlags::CTIME | StatxFlags::INO;
    }
    m
}

fn time(t: StatxTimestamp) -> Time {
    Time {
        sec: t.tv_sec,
        nsec: t.tv_nsec,
    }
}

fn meta(m: &Statx) -> Meta {
    let kind = match FileType::from_raw_mode(m.stx_mode.into()) {
        FileType::RegularFile => Kind::File,
        FileType::Directory => Kind::Dir,
        FileType::Symlink => Kind::Symlink,
        _ => Kind::Other,
    };
    Meta {
        kind,
        size: m.stx_size,
        mtime: time(m.stx_mtime),
        ctime: time(m.stx_ctime),
        ino: m.stx_ino,
        dev_major: m.stx_dev_major,
        dev_minor: m.stx_dev_minor,
        nlink: u64::from(m.stx_nlink),
    }
}

/// See [`super::stat_at`].
pub fn stat_at(at: BorrowedFd<'_>, rel: &Path, follow: Follow, want: Want) -> Result<Meta> {
    let flags = match follow {
        Follow::Yes => AtFlags::empty(),
        Follow::No => AtFlags::SYMLINK_NOFOLLOW,
    };
    rustix::fs::statx(at, rel, flags, mask(want)).map(|m| meta(&m))
}

/// See [`super::stat_open`].
pub fn stat_open(fd: BorrowedFd<'_>, want: Want) -> Result<Meta> {
    rustix::fs::statx(fd, "", AtFlags::EMPTY_PATH, mask(want)).map(|m| meta(&m))
}

/// See [`super::list`].
pub fn list(fd: &OwnedFd, buffer: &mut ListBuffer, mut each: impl FnMut(&CStr)) -> Result<()> {
    let mut listing = RawDir::new(fd, &mut buffer.0);
    while let Some(entry) = listing.next() {
        each(entry?.file_name());
    }
    Ok(())
}
