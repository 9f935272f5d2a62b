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

/// Folders watched through inotify, read without blocking: an event is
/// queued by the kernel before the write that caused it returns, so a
/// drain at the start of a call sees every change finished before it.
pub struct FolderWatch {
    fd: OwnedFd,
    buffer: std::sync::Mutex<Vec<MaybeUninit<u8>>>,
}

impl FolderWatch {
    /// A watch with no folder yet; `None` when the kernel refuses one (too
    /// many inotify instances): then every stamp is asked afresh.
    pub fn new() -> Option<FolderWatch> {
        use rustix::fs::inotify::{CreateFlags, init};
        let fd = init(CreateFlags::CLOEXEC | CreateFlags::NONBLOCK).ok()?;
        Some(FolderWatch {
            fd,
            buffer: std::sync::Mutex::new(vec![MaybeUninit::uninit(); 64 * 1024]),
        })
    }

    /// Watches `dir` for any change to what it holds or to itself; the
    /// watch's id, or `None` when it cannot be watched (the limit of
    /// watches reached, the folder gone).
    pub fn add(&self, dir: &Path) -> Option<i32> {
        use rustix::fs::inotify::{WatchFlags, add_watch};
        let flags = WatchFlags::ATTRIB
            | WatchFlags::CLOSE_WRITE
            | WatchFlags::CREATE
            | WatchFlags::DELETE
            | WatchFlags::DELETE_SELF
            | WatchFlags::MODIFY
            | WatchFlags::MOVE_SELF
            | WatchFlags::MOVED_FROM
            | WatchFlags::MOVED_TO
            | WatchFlags::ONLYDIR;
        add_watch(&self.fd, dir, flags).ok()
    }

    /// Stops watching `wd`.
    pub fn remove(&self, wd: i32) {
        let _ = rustix::fs::inotify::remove_watch(&self.fd, wd);
    }

    /// Calls `each` with every watch whose folder changed since the last
    /// drain (`None`: events were lost, any folder may have changed).
    pub fn drain(&self, mut each: impl FnMut(Option<i32>)) {
        use rustix::fs::inotify::{ReadFlags, Reader};
        let mut buffer = self
            .buffer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut reader = Reader::new(&self.fd, &mut buffer[..]);
        loop {
            match reader.next() {
                Ok(e) if e.events().contains(ReadFlags::QUEUE_OVERFLOW) => each(None),
                Ok(e) => each(Some(e.wd())),
                Err(rustix::io::Errno::INTR) => continue,
                // Drained (AGAIN), or the descriptor failed: then say so
                // as lost events, so nothing is trusted.
                Err(rustix::io::Errno::AGAIN) => return,
                Err(_) => {
                    each(None);
                    return;
                }
            }
        }
    }
}
