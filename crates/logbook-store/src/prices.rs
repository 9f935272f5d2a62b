//! The price table `logbook prices update` stored for a project (or the
//! per-user home): `.logbook/prices.json`, LiteLLM's JSON cut down to the
//! agents' models. Without it the table shipped with Logbook is used.

use std::path::{Path, PathBuf};

use logbook_model::error::Result;

use crate::Project;

/// The stored table's file name, in the state folder.
pub const PRICES_FILE: &str = "prices.json";

/// The most a price file may hold: LiteLLM's whole file is a few MiB.
pub const MAX_PRICES_BYTES: u64 = 64 * 1024 * 1024;

/// Where a project's own price table is kept.
pub fn path(p: &Project) -> PathBuf {
    p.config.state_dir().join(PRICES_FILE)
}

/// The project's stored table, if `prices update` stored one.
pub fn read_stored(p: &Project) -> Result<Option<String>> {
    crate::read_regular(&path(p), "price table", MAX_PRICES_BYTES)
}

/// A LiteLLM JSON file given to `prices update`; `None` when it does not
/// exist.
pub fn read_given(file: &Path) -> Result<Option<String>> {
    crate::read_regular(file, "price table", MAX_PRICES_BYTES)
}

/// Stores `text` as the project's table, under the lock that serialises
/// writers of it.
pub fn store(p: &Project, text: &str) -> Result<PathBuf> {
    let target = path(p);
    let dir = p.config.state_dir();
    std::fs::create_dir_all(&dir).map_err(|e| logbook_model::Error::io(&dir, e))?;
    let _held = p.locks.exclusive("prices")?;
    crate::write_atomic(&target, text.as_bytes())?;
    Ok(target)
}
