//! Export cursors: what `logbook export` has already handed to each
//! receiver, so that a second export sends nothing new.
//!
//! A cursor is `{state dir}/export-cursors/<hash of the endpoint>.json`: per
//! record key (`run:<id>`, `transcript:<id>`, `work-session:<id>`) the
//! fingerprint of the record as it was sent. A record whose fingerprint is
//! unchanged is skipped; one that changed (a transcript that grew, a
//! session updated since) is sent again under the same span ids. Like an
//! import checkpoint it is a cache, never a record: a missing or unreadable
//! cursor costs a full export with the same ids, never a wrong one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use logbook_model::agent_log::{FNV_OFFSET, fnv1a64};
use logbook_model::error::{Error, Result};

/// Bumped when the cursor's shape or the fingerprints change meaning: an
/// older cursor is then ignored (everything is sent again, same ids).
pub const CURSOR_VERSION: u64 = 1;

/// What one endpoint has been sent.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportCursor {
    /// [`CURSOR_VERSION`].
    pub version: u64,
    /// The endpoint the cursor is about, as shown: without user info or
    /// query (for a person reading the folder; the file name is its hash).
    pub endpoint: String,
    /// Record key to the fingerprint it had when it was sent.
    pub sent: BTreeMap<String, String>,
}

/// The folder of a project's export cursors, under its state dir.
pub fn dir(state_dir: &Path) -> PathBuf {
    state_dir.join("export-cursors")
}

/// The cursor file of `endpoint` (as shown: never with credentials).
pub(crate) fn path_of(dir: &Path, endpoint: &str) -> PathBuf {
    dir.join(format!("{}.json", hash(endpoint)))
}

/// The name of the lock an export to `endpoint` holds while it runs, so
/// two exports to one receiver do not both send everything.
pub fn lock_name(endpoint: &str) -> String {
    format!("export-{}", hash(endpoint))
}

fn hash(endpoint: &str) -> String {
    format!("{:016x}", fnv1a64(endpoint.as_bytes(), FNV_OFFSET))
}

/// The cursor of `endpoint`; an empty one when there is none, or it is of
/// another version or endpoint, or cannot be read (a cache: the cost is
/// sending again, with the same ids).
pub fn load(dir: &Path, endpoint: &str) -> ExportCursor {
    let empty = || ExportCursor {
        version: CURSOR_VERSION,
        endpoint: endpoint.to_string(),
        sent: BTreeMap::new(),
    };
    let path = path_of(dir, endpoint);
    let Ok(Some(text)) = crate::read_optional(&path, "export cursor") else {
        return empty();
    };
    match serde_json::from_str::<ExportCursor>(&text) {
        Ok(c) if c.version == CURSOR_VERSION && c.endpoint == endpoint => c,
        _ => empty(),
    }
}

/// Writes `cursor` atomically, readable by its owner only, in a folder
/// only its owner enters (made when missing): what was sent where is
/// nobody else's business.
pub fn save(dir: &Path, cursor: &ExportCursor) -> Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    let path = path_of(dir, &cursor.endpoint);
    let text = serde_json::to_vec(cursor).map_err(|e| Error::Corrupt {
        path: path.clone(),
        what: "export cursor",
        reason: e.to_string(),
    })?;
    crate::write_atomic_private(&path, &text)?;
    // A folder an older version made with the default mode is closed too
    // (the private write makes only a missing one owner-only).
    std::fs::set_permissions(
        dir,
        std::fs::Permissions::from_mode(crate::fs::PRIVATE_FOLDER_MODE),
    )
    .map_err(|e| Error::io(dir, e))
}
