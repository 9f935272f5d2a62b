//! How many secrets each stored file held when `doctor` last counted them
//! (`{state dir}/secrets-counts.json`), keyed by the file's size and mtime:
//! a cache, so a doctor scans only what changed since the last. It holds
//! paths and counts, never a secret; a missing or unreadable one costs a
//! full count, never a wrong one for a file that changed.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::store::{self, Project};

/// A file's size and mtime (nanoseconds): what says it is unchanged.
pub type Stamp = (u64, i128);

/// The counts, by file.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Counts {
    /// Bumped when the scanner's rules change: older counts are dropped.
    version: u64,
    files: BTreeMap<PathBuf, (u64, i128, u64)>,
}

/// The scanner rules' version the counts were made with.
const RULES_VERSION: u64 = 1;

fn path(p: &Project) -> PathBuf {
    p.config.state_dir().join("secrets-counts.json")
}

/// The counts as last saved; empty when there are none or they are of
/// other rules.
pub fn load(p: &Project) -> Counts {
    std::fs::read(path(p))
        .ok()
        .and_then(|b| serde_json::from_slice::<Counts>(&b).ok())
        .filter(|c| c.version == RULES_VERSION)
        .unwrap_or_default()
}

/// `file`'s stamp now, if it can be read.
pub fn stamp(file: &Path) -> Option<Stamp> {
    let m = std::fs::metadata(file).ok()?;
    Some((
        m.len(),
        i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()),
    ))
}

impl Counts {
    /// The count of `file` when it was made at `stamp`.
    pub fn get(&self, file: &Path, stamp: Stamp) -> Option<u64> {
        self.files
            .get(file)
            .filter(|(len, mtime, _)| (*len, *mtime) == stamp)
            .map(|(_, _, n)| *n)
    }

    /// Records `file`'s count at `stamp`.
    pub fn set(&mut self, file: &Path, stamp: Stamp, n: u64) {
        self.files.insert(file.to_path_buf(), (stamp.0, stamp.1, n));
    }

    /// Forgets the files that are gone.
    pub fn retain_existing(&mut self) {
        self.files.retain(|f, _| f.exists());
    }

    /// Writes the counts (the state folder's own: 0600).
    pub fn save(&mut self, p: &Project) -> Result<()> {
        self.version = RULES_VERSION;
        let path = path(p);
        let bytes = serde_json::to_vec(self).map_err(|e| crate::error::Error::Corrupt {
            path: path.clone(),
            what: "secrets counts",
            reason: e.to_string(),
        })?;
        store::write_atomic_private(&path, &bytes)
    }
}
