//! The `.gitignore` Logbook writes into a project's `.logbook/` when it
//! makes that folder, so a `git add -A` never commits what is this
//! machine's or may hold secrets: the index, transcripts, the hook queue,
//! locks, cursors and settings backups.
//!
//! Trap: it lists what may be committed, not what may not. A file a later
//! version adds under `.logbook/` is then left out by default, instead of
//! leaking until someone remembers to list it. Work sessions
//! (`.logbook/sessions/`, by default) stay committable, as they were.

use std::path::Path;

use logbook_model::error::{Error, Result};

/// The file's name in the state folder.
pub const FILE_NAME: &str = ".gitignore";

/// What the file holds. Anchored patterns (`/*`) ignore only the folder's
/// own entries, so everything inside a re-included folder is kept.
pub const TEXT: &str = "\
# Written by Logbook when it made this folder. The index, transcripts, the
# hook queue, locks, cursors and settings backups belong to this machine and
# may hold secrets, so only what is listed below may be committed: work
# sessions, and this file. Logbook never rewrites it once it is here.
/*
!/.gitignore
!/sessions/
";

/// Writes [`TEXT`] to `state_dir`'s `.gitignore` unless one is there (a
/// user's edit is kept). The caller has just made `state_dir`, or is
/// `init`.
pub(crate) fn ensure(state_dir: &Path) -> Result<()> {
    let path = state_dir.join(FILE_NAME);
    match std::fs::symlink_metadata(&path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            crate::write_atomic(&path, TEXT.as_bytes())
        }
        Err(e) => Err(Error::io(&path, e)),
    }
}
