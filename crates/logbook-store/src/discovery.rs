//! What finding a project reads: the root a folder belongs to and its
//! `logbook.yaml`'s identity. A long-lived server (the MCP server) keeps
//! the project it found and finds it again only when this stamp changed,
//! instead of reading and parsing the config on every call; a
//! `logbook.yaml` written, edited or removed since, or a project made
//! nearer the folder, changes the stamp.

use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};

use crate::config::{CONFIG_FILE, Config};

/// See the module doc: equal stamps mean discovery would find the same
/// root and read the same config file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiscoveryStamp {
    root: PathBuf,
    root_is_dir: bool,
    config: Option<FileIdentity>,
}

/// A file's identity and last change, as `stat` gives them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileIdentity {
    dev: u64,
    ino: u64,
    len: u64,
    mtime_ns: i128,
    ctime_ns: i128,
}

/// The stamp of discovering the project from `cwd` (with `explicit` root,
/// as [`crate::Project::discover`] takes it): the root it would find and
/// its config file's identity. A few `stat`s, no read.
pub fn stamp(cwd: &Path, explicit: Option<&Path>) -> DiscoveryStamp {
    let root = match explicit {
        Some(r) => crate::root_path(cwd, r),
        None => Config::marked_root(cwd).unwrap_or(cwd).to_path_buf(),
    };
    let config = std::fs::metadata(root.join(CONFIG_FILE))
        .ok()
        .map(|m| FileIdentity {
            dev: m.dev(),
            ino: m.ino(),
            len: m.len(),
            mtime_ns: i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()),
            ctime_ns: i128::from(m.ctime()) * 1_000_000_000 + i128::from(m.ctime_nsec()),
        });
    DiscoveryStamp {
        root_is_dir: root.is_dir(),
        root,
        config,
    }
}
