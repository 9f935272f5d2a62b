//! The index as a user sees it: its health, an incremental sync and a
//! rebuild from the files.

use crate::Logbook;
use crate::error::Result;
use logbook_index::Index;
/// What the index answers with, as the faces show it.
pub use logbook_index::{Status, SyncReport, TextProgress};

/// Counts, size and staleness of the index.
pub fn status(p: &Logbook) -> Result<Status> {
    Index::open(p)?.upkeep().status()
}

/// Reads only new, changed or deleted files into the index; a finished
/// run is checked by its manifest alone unless `full` (`index sync
/// --full`), which checks every run's registered outputs too.
pub fn sync(p: &Logbook, full: bool) -> Result<SyncReport> {
    let index = Index::open(p)?;
    if full {
        index.upkeep().sync_full()
    } else {
        index.upkeep().sync()
    }
}

/// How far the full-text index is while a two-phase rebuild writes it
/// (`None`: complete): a face flags its text answers partial meanwhile.
pub fn text_progress(p: &Logbook) -> Result<Option<logbook_index::TextProgress>> {
    Index::open(p)?.read().text_progress()
}

/// Writes what is left of the full text of an index rebuilt in two phases
/// (the detached builder a command starts; see `logbook_index::text_build`):
/// waits for a builder already at work first.
pub fn build_text(p: &Logbook) -> Result<()> {
    Index::build_text(p)
}

/// Forgets the index and re-reads every file in parallel; `progress` is
/// called with (done, total) as files are parsed.
pub fn rebuild(p: &Logbook, progress: Option<&(dyn Fn(u64, u64) + Sync)>) -> Result<SyncReport> {
    Index::rebuild(p, progress)
}
