//! The archive folder on disk (`archive_folder`, by default
//! `{agent_outputs_folder}/.archive`): archived run folders as
//! `{archive_folder}/{uuid}/`, moved there whole and byte for byte, and
//! the tombstones of deleted runs in `{archive_folder}/.tombstones/`.
//!
//! The trap: the default archive lies inside the runs folder, so the walk
//! of the runs folder skips dot folders ([`super::runs::walk`]) and the
//! walk of the archive skips `.tombstones` the same way. The caller holds
//! the run's lock for every move and removal.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::model::archive::Tombstone;
use crate::model::ids::RunId;
use crate::model::text;
use crate::store::{self, Project};

/// The tombstones' folder inside `archive_folder` (a dot folder: never
/// walked as a run).
pub const TOMBSTONES: &str = ".tombstones";

/// Where run `id` is, or would be, once archived.
pub fn folder(p: &Project, id: &RunId) -> PathBuf {
    id.folder(&p.config.archive_folder)
}

/// Whether `folder` is a run folder in the archive.
pub fn is_archived(p: &Project, folder: &Path) -> bool {
    folder.parent() == Some(p.config.archive_folder.as_path())
}

/// The archived folder of run `id` whatever its case on disk, if there is one.
pub fn locate(p: &Project, id: &RunId) -> Result<Option<PathBuf>> {
    store::run::find_folder(&p.config.archive_folder, id)
}

/// Moves run folder `from` to `to` (one of them in the archive) with every
/// file byte for byte: a rename on one file system, else a verified copy
/// (see [`store::move_durably`]). Refuses when `to` exists.
pub fn move_run(from: &Path, to: &Path) -> Result<()> {
    if std::fs::symlink_metadata(to).is_ok() {
        return Err(Error::AlreadyExists {
            path: to.to_path_buf(),
            hint: crate::error::Next::say(
                "a run folder of that name is already there; move or remove it by hand first",
            ),
        });
    }
    store::move_durably(from, to)
}

/// Removes run folder `folder` and everything in it, durably.
pub fn remove_run(folder: &Path) -> Result<()> {
    std::fs::remove_dir_all(folder).map_err(|e| Error::io(folder, e))?;
    if let Some(parent) = folder.parent() {
        store::sync_dir(parent)?;
    }
    Ok(())
}

/// Where run `id`'s tombstone is, or would be.
pub fn tombstone_path(p: &Project, id: &RunId) -> PathBuf {
    p.config
        .archive_folder
        .join(TOMBSTONES)
        .join(format!("{id}.json"))
}

/// Writes `t` as run `id`'s tombstone (atomically; the folder made if missing).
pub fn write_tombstone(p: &Project, id: &RunId, t: &Tombstone) -> Result<PathBuf> {
    let path = tombstone_path(p, id);
    if let Some(dir) = path.parent() {
        store::fs::create_folder(dir)?;
    }
    store::write_atomic(&path, text::to_json(&path, t, None)?.as_bytes())?;
    Ok(path)
}

/// Run `id`'s tombstone, if it was deleted; an unreadable one is an error
/// naming the file.
pub fn read_tombstone(p: &Project, id: &RunId) -> Result<Option<(PathBuf, Tombstone)>> {
    let path = tombstone_path(p, id);
    let Some(text) = store::read_optional(&path, "tombstone")? else {
        return Ok(None);
    };
    let t: Tombstone = serde_json::from_str(&text).map_err(|e| Error::Corrupt {
        path: path.clone(),
        what: "tombstone",
        reason: e.to_string(),
    })?;
    Ok(Some((path, t)))
}

/// The tombstone files there are (for `doctor`): every `*.json` of the
/// tombstones' folder.
pub fn tombstone_files(p: &Project) -> Result<Vec<PathBuf>> {
    let dir = p.config.archive_folder.join(TOMBSTONES);
    Ok(store::entries(&dir, store::EntryKind::File)?
        .into_iter()
        .filter(|(name, _)| name.ends_with(".json"))
        .map(|(_, path)| path)
        .collect())
}

/// Whether a folder named run `id` (in any case) is in the live set: where
/// `unarchive` would put it back.
pub fn live_folder_exists(p: &Project, id: &RunId) -> Result<bool> {
    if std::fs::symlink_metadata(store::run::folder(p, id)).is_ok() {
        return Ok(true);
    }
    for f in store::runs::walk(&p.config.agent_outputs_folder)? {
        if f?.name.eq_ignore_ascii_case(id.as_str()) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// How many files a folder holds, all levels (what `delete` would remove).
pub fn count_files(dir: &Path) -> usize {
    std::fs::read_dir(dir).map_or(0, |entries| {
        entries
            .flatten()
            .map(|e| match e.file_type() {
                Ok(t) if t.is_dir() => count_files(&e.path()),
                _ => 1,
            })
            .sum()
    })
}
