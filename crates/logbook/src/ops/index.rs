//! The index as a user sees it: its health, an incremental sync and a
//! rebuild from the files.

use crate::error::Result;
use crate::index::{Index, Status, SyncReport};
use crate::store::Project;

/// Counts, size and staleness of the index.
pub fn status(p: &Project) -> Result<Status> {
    Index::open(p)?.status()
}

/// Reads only new, changed or deleted files into the index; a finished
/// run is checked by its manifest alone unless `full` (`index sync
/// --full`), which checks every run's registered outputs too.
pub fn sync(p: &Project, full: bool) -> Result<SyncReport> {
    let mut index = Index::open(p)?;
    if full {
        index.sync_full()
    } else {
        index.sync()
    }
}

/// Forgets the index and re-reads every file in parallel; `progress` is
/// called with (done, total) as files are parsed.
pub fn rebuild(p: &Project, progress: Option<&(dyn Fn(u64, u64) + Sync)>) -> Result<SyncReport> {
    Index::rebuild(p, progress)
}
