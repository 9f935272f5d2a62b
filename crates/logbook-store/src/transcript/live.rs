//! The marks that say an agent session is running: one small file per
//! session, `.logbook/live/{id}.json`, written by the hooks (SessionStart,
//! SessionEnd) and `transcript import --watch`. What they mean is decided
//! in `ops::transcript::live`; this only reads and writes them.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::Project;
use logbook_model::clock::Timestamp;
use logbook_model::error::{Error, Result};

/// One session's mark.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LiveMark {
    /// When the session last started (or was first seen by `--watch`).
    pub since: String,
    /// When it ended (SessionEnd), if it did after `since`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<String>,
}

fn dir(p: &Project) -> PathBuf {
    p.config.state_dir().join("live")
}

fn path(p: &Project, id: &str) -> PathBuf {
    dir(p).join(format!("{id}.json"))
}

/// The mark of session `id` (a validated transcript id), if any; one that
/// cannot be read counts as none.
pub fn read(p: &Project, id: &str) -> Option<LiveMark> {
    let text = std::fs::read_to_string(path(p, id)).ok()?;
    serde_json::from_str(&text).ok()
}

/// Every mark: the ids and what they say.
pub fn read_all(p: &Project) -> Vec<(String, LiveMark)> {
    crate::entries(&dir(p), crate::EntryKind::File)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|(name, path)| {
            let id = name.strip_suffix(".json")?.to_string();
            let text = std::fs::read_to_string(&path).ok()?;
            Some((id, serde_json::from_str(&text).ok()?))
        })
        .collect()
}

/// Writes session `id`'s mark atomically.
pub fn write(p: &Project, id: &str, mark: &LiveMark) -> Result<()> {
    let dir = dir(p);
    crate::fs::create_folder(&dir)?;
    let path = path(p, id);
    let bytes = serde_json::to_vec(mark).map_err(|e| Error::io(&path, std::io::Error::other(e)))?;
    crate::fs::write_atomic(&path, &bytes)
}

/// Removes session `id`'s mark; a missing one is fine.
pub fn remove(p: &Project, id: &str) -> Result<()> {
    let path = path(p, id);
    match std::fs::remove_file(&path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io(&path, e)),
    }
}

/// When the file at `path` last changed, on the system clock; `None` when
/// that cannot be told.
pub fn modified(path: &Path) -> Option<Timestamp> {
    let t = std::fs::metadata(path).and_then(|m| m.modified()).ok()?;
    Timestamp::try_from(t).ok()
}
