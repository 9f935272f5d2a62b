//! What differs between Unix systems, in one place: a file's metadata
//! asked through an open folder, a folder's listing, a folder opened only
//! for lookups below it, the host name, and a watch on folders (inotify on
//! Linux, none elsewhere). The rest of `store` asks these
//! functions and never names a call, type or flag that some Unix lacks.
//!
//! - [`linux`] keeps the fast path the index's passes over a million runs
//!   were measured on: `statx` asking only for the fields wanted (and
//!   `AT_EMPTY_PATH` for an open file), `getdents64` into a reused buffer,
//!   `O_PATH` folders.
//! - [`portable`] is built on what every Unix has (macOS first):
//!   `fstatat`, `fstat`, `readdir`, folders opened `O_RDONLY`.
//!
//! Linux uses [`linux`] unless the `portable-fs` feature forces
//! [`portable`], so that CI runs on Linux the code macOS compiles. Both
//! give the same answers ([`Meta`] holds only fields both have, in the same
//! units), so a folder indexed through one and synced through the other
//! does not look changed; a property test compares them on random trees.

use std::ffi::CStr;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;

use rustix::fs::{Access, Mode, OFlags};

#[cfg(target_os = "linux")]
pub mod linux;
pub mod portable;

#[cfg(all(target_os = "linux", not(feature = "portable-fs")))]
use linux as native;
#[cfg(any(not(target_os = "linux"), feature = "portable-fs"))]
use portable as native;

pub use native::{FolderWatch, ListBuffer};
pub use rustix::fs::CWD;
pub use rustix::io::{Errno, Result};

/// What kind of file a [`Meta`] describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A regular file.
    File,
    /// A folder.
    Dir,
    /// A symbolic link (only when asked not to follow it).
    Symlink,
    /// A FIFO, socket or device: never read as a record.
    Other,
}

/// A time as the file system keeps it: seconds since the epoch and
/// nanoseconds within the second.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Time {
    /// Whole seconds since the epoch (negative before it).
    pub sec: i64,
    /// Nanoseconds within the second.
    pub nsec: u32,
}

impl Time {
    /// Nanoseconds since the epoch, 0 before it: how the index stamps a
    /// file, so a stamp taken here equals one taken from a path's metadata.
    pub fn ns(self) -> i64 {
        if self.sec < 0 {
            return 0;
        }
        (i128::from(self.sec) * 1_000_000_000 + i128::from(self.nsec)) as i64
    }
}

/// What a stamp or a check needs of a file: only fields every Unix's
/// `stat` has, so both paths fill it alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Meta {
    /// Its kind.
    pub kind: Kind,
    /// Its size in bytes.
    pub size: u64,
    /// Its last modification.
    pub mtime: Time,
    /// Its last status change (a rename or a new link moves it).
    pub ctime: Time,
    /// Its inode number.
    pub ino: u64,
    /// The major number of the device it is on.
    pub dev_major: u32,
    /// The minor number of the device it is on.
    pub dev_minor: u32,
    /// How many names it has (more than one: a hard link to it exists).
    pub nlink: u64,
}

/// Which [`Meta`] fields a caller will read: on Linux a file system may
/// skip the rest; elsewhere `stat` fills them all anyway.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Want(u8);

impl Want {
    /// [`Meta::kind`].
    pub const KIND: Want = Want(1);
    /// [`Meta::size`] and [`Meta::mtime`]: a record's stamp.
    pub const STAMP: Want = Want(2);
    /// [`Meta::nlink`].
    pub const NLINK: Want = Want(4);
    /// [`Meta::ctime`] and [`Meta::ino`] (the device comes with every
    /// answer).
    pub const IDENTITY: Want = Want(8);
    /// Everything an output's stamp and its checks take.
    pub const OUTPUT: Want = Want(15);

    /// Both sets of fields.
    pub const fn and(self, other: Want) -> Want {
        Want(self.0 | other.0)
    }

    /// Whether any of `other`'s fields are wanted.
    pub const fn has(self, other: Want) -> bool {
        self.0 & other.0 != 0
    }
}

/// Whether [`stat_at`] follows a symbolic link at the end of the path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Follow {
    /// Describe what the link points to (`stat`).
    Yes,
    /// Describe the link itself (`lstat`).
    No,
}

/// The metadata of `rel` relative to the open folder `at` (or [`CWD`]).
pub fn stat_at(at: impl AsFd, rel: &Path, follow: Follow, want: Want) -> Result<Meta> {
    native::stat_at(at.as_fd(), rel, follow, want)
}

/// The metadata of the open file `fd`: what was opened, not what the path
/// names now.
pub(crate) fn stat_open(fd: impl AsFd, want: Want) -> Result<Meta> {
    native::stat_open(fd.as_fd(), want)
}

/// Calls `each` with every name in the open folder `fd` (`.` and `..`
/// included), `buffer` reused from one folder to the next.
pub fn list(fd: &OwnedFd, buffer: &mut ListBuffer, each: impl FnMut(&CStr)) -> Result<()> {
    native::list(fd, buffer, each)
}

/// Opens the folder `path` (relative to the open folder `at`, or [`CWD`])
/// for listing and for lookups below it.
pub fn open_dir_at(at: impl AsFd, path: &Path) -> Result<OwnedFd> {
    rustix::fs::openat(
        at,
        path,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

/// Opens the folder `path` only to look up names below it: on Linux
/// without read permission on it (`O_PATH`), elsewhere as
/// [`open_dir_at`].
pub(crate) fn open_dir_for_lookups(path: &Path) -> Result<OwnedFd> {
    rustix::fs::open(
        path,
        native::LOOKUP_ONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

/// Opens the file `rel` (relative to `at`, or [`CWD`]) for reading without
/// blocking, so another tool's FIFO in a record's place opens at once and
/// the caller asks the open file what it is ([`stat_open`]). With
/// [`Follow::No`], a symbolic link at the end is refused (`ELOOP`).
pub(crate) fn open_read_at(at: impl AsFd, rel: &Path, follow: Follow) -> Result<OwnedFd> {
    let mut flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC;
    if follow == Follow::No {
        flags |= OFlags::NOFOLLOW;
    }
    rustix::fs::openat(at, rel, flags, Mode::empty())
}

/// Whether this process may write `path` (permissions, ACLs and a
/// read-only mount included, which a mode bit alone does not show).
pub(crate) fn can_write(path: &Path) -> bool {
    rustix::fs::access(path, Access::WRITE_OK).is_ok()
}

/// The machine's host name, as `uname` gives it (on Linux the same name
/// `/proc/sys/kernel/hostname` holds); `None` when it is empty.
pub(crate) fn host_name() -> Option<String> {
    let uname = rustix::system::uname();
    let name = uname.nodename().to_string_lossy().trim().to_string();
    (!name.is_empty()).then_some(name)
}

// The two paths side by side need both: Linux only.
#[cfg(test)]
#[cfg(target_os = "linux")]
mod tests;
