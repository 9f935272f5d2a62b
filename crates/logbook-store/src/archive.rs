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

use crate::Project;
use logbook_model::archive::Tombstone;
use logbook_model::error::{Error, Result};
use logbook_model::ids::RunId;
use logbook_model::text;

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
    crate::run::find_folder(&p.config.archive_folder, id)
}

/// Moves run folder `from` to `to` (one of them in the archive) with every
/// file byte for byte: a rename on one file system, else a verified copy
/// (see [`crate::move_durably`]), whose source loses its manifest first
/// ([`crate::fs::move_durably_keyed`]). Refuses when `to` exists.
pub fn move_run(from: &Path, to: &Path) -> Result<()> {
    if std::fs::symlink_metadata(to).is_ok() {
        return Err(Error::AlreadyExists {
            path: to.to_path_buf(),
            hint: logbook_model::error::Next::say(
                "a run folder of that name is already there; move or remove it by hand first",
            ),
        });
    }
    crate::fs::move_durably_keyed(from, to, Some(logbook_model::run::MANIFEST_FILE))
}

/// Removes run folder `folder` and everything in it, durably.
pub fn remove_run(folder: &Path) -> Result<()> {
    std::fs::remove_dir_all(folder).map_err(|e| Error::io(folder, e))?;
    if let Some(parent) = folder.parent() {
        crate::sync_dir(parent)?;
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
        crate::fs::create_folder(dir)?;
    }
    crate::write_atomic(&path, text::to_json(&path, t, None)?.as_bytes())?;
    Ok(path)
}

/// Run `id`'s tombstone, if it was deleted; an unreadable one is an error
/// naming the file.
pub fn read_tombstone(p: &Project, id: &RunId) -> Result<Option<(PathBuf, Tombstone)>> {
    let path = tombstone_path(p, id);
    let Some(text) = crate::read_optional(&path, "tombstone")? else {
        return Ok(None);
    };
    let t: Tombstone = serde_json::from_str(&text).map_err(|e| Error::Corrupt {
        path: path.clone(),
        what: "tombstone",
        reason: e.to_string(),
    })?;
    Ok(Some((path, t)))
}

/// Whether a folder named run `id` (in any case) is in the live set: where
/// `unarchive` would put it back.
pub fn live_folder_exists(p: &Project, id: &RunId) -> Result<bool> {
    if std::fs::symlink_metadata(crate::run::folder(p, id)).is_ok() {
        return Ok(true);
    }
    for f in crate::runs::walk(&p.config.agent_outputs_folder)? {
        if f?.name.eq_ignore_ascii_case(id.as_str()) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// A temp copy a move between file systems left (killed before the copy
/// was renamed into place): `.{uuid}.{pid}.tmp` in the runs folder or the
/// archive.
#[derive(Debug, Clone)]
pub struct TempCopy {
    /// The run it is a copy of.
    pub id: RunId,
    /// The copy.
    pub path: PathBuf,
}

/// The temp copies of runs in the runs folder and the archive (see
/// [`TempCopy`]), by path.
pub fn temp_copies(p: &Project) -> Vec<TempCopy> {
    let mut out = vec![];
    for dir in [&p.config.agent_outputs_folder, &p.config.archive_folder] {
        for (name, path) in crate::fs::temp_files(dir) {
            let id = crate::fs::moved_name(&name).and_then(|n| RunId::parse(n).ok());
            if let Some(id) = id {
                out.push(TempCopy { id, path });
            }
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

/// A run with a folder both in the live set and in the archive: what a
/// move between file systems killed after its copy was in place leaves.
#[derive(Debug, Clone)]
pub struct InBoth {
    /// The run.
    pub id: RunId,
    /// Its live folder.
    pub live: PathBuf,
    /// Its archived folder.
    pub archived: PathBuf,
}

/// The runs whose folder (by the name on disk) is both in the archive and
/// in the live set: one `stat` per archived run.
pub fn in_both(p: &Project) -> Result<Vec<InBoth>> {
    let mut out = vec![];
    for f in crate::runs::walk(&p.config.archive_folder)? {
        let f = f?;
        let Ok(id) = RunId::parse(&f.name.to_string_lossy()) else {
            continue;
        };
        let live = p.config.agent_outputs_folder.join(&f.name);
        if crate::fs::is_folder(&live) && live != f.path {
            out.push(InBoth {
                id,
                live,
                archived: f.path,
            });
        }
    }
    Ok(out)
}

/// How [`not_within`] compares a folder with the whole one it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Within {
    /// Every file byte for byte, mode and all: the remainder of a source
    /// a move was removing.
    Duplicate,
    /// Every file's bytes a beginning of the original's (the last file a
    /// killed copy wrote may be cut short; modes are set last): a temp
    /// copy.
    PartialCopy,
}

/// `None` when everything in `part` is also in `whole` at the same path,
/// the same kind, and as `how` asks of its bytes, so removing `part` loses
/// nothing; otherwise what is not, naming the first such path.
pub fn not_within(part: &Path, whole: &Path, how: Within) -> Result<Option<String>> {
    use std::os::unix::fs::PermissionsExt as _;
    let a = std::fs::symlink_metadata(part).map_err(|e| Error::io(part, e))?;
    let Ok(b) = std::fs::symlink_metadata(whole) else {
        return Ok(Some(format!(
            "{} is not in {}",
            part.display(),
            whole.display()
        )));
    };
    let differs = |what: &str| Ok(Some(format!("{} {what}", part.display())));
    if a.file_type() != b.file_type() {
        return differs("is of another kind than the copy beside it");
    }
    if a.is_symlink() {
        if std::fs::read_link(part).ok() != std::fs::read_link(whole).ok() {
            return differs("points elsewhere than the copy beside it");
        }
    } else if a.is_dir() {
        for entry in std::fs::read_dir(part).map_err(|e| Error::io(part, e))? {
            let entry = entry.map_err(|e| Error::io(part, e))?;
            let found = not_within(&entry.path(), &whole.join(entry.file_name()), how)?;
            if found.is_some() {
                return Ok(found);
            }
        }
    } else if a.is_file() {
        if how == Within::Duplicate
            && (a.permissions().mode() != b.permissions().mode() || a.len() != b.len())
        {
            return differs("differs in size or mode from the copy beside it");
        }
        if a.len() > b.len() || !same_start(part, whole)? {
            return differs("holds bytes the copy beside it does not");
        }
    } else {
        return differs("is not a file, folder or symlink");
    }
    Ok(None)
}

/// Whether file `part`'s bytes are the first bytes of file `whole`.
fn same_start(part: &Path, whole: &Path) -> Result<bool> {
    use std::io::Read as _;
    let mut fa = std::fs::File::open(part).map_err(|e| Error::io(part, e))?;
    let mut fb = std::fs::File::open(whole).map_err(|e| Error::io(whole, e))?;
    let (mut ba, mut bb) = (vec![0u8; 64 * 1024], vec![0u8; 64 * 1024]);
    loop {
        let n = fa.read(&mut ba).map_err(|e| Error::io(part, e))?;
        if n == 0 {
            return Ok(true);
        }
        fb.read_exact(&mut bb[..n])
            .map_err(|e| Error::io(whole, e))?;
        if ba[..n] != bb[..n] {
            return Ok(false);
        }
    }
}

/// Removes what a move left at `path` (a temp copy or a source's
/// remainder, file or folder) durably; the caller has shown with
/// [`not_within`] that it holds nothing the run does not, under the run's
/// lock.
pub fn remove_leftover(path: &Path) -> Result<()> {
    crate::fs::remove_tree(path)?;
    if let Some(parent) = path.parent() {
        crate::sync_dir(parent)?;
    }
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_leftover_is_within_the_whole_copy_only_when_nothing_would_be_lost() {
        let dir = tempfile::tempdir().unwrap();
        let (whole, part) = (dir.path().join("whole"), dir.path().join("part"));
        for d in [&whole, &part] {
            std::fs::create_dir_all(d.join("sub")).unwrap();
        }
        std::fs::write(whole.join("manifest.json"), "{}").unwrap();
        std::fs::write(whole.join("sub/a.md"), "alpha beta").unwrap();
        // Empty, then a subset: within.
        assert_eq!(not_within(&part, &whole, Within::Duplicate).unwrap(), None);
        std::fs::write(part.join("sub/a.md"), "alpha beta").unwrap();
        assert_eq!(not_within(&part, &whole, Within::Duplicate).unwrap(), None);
        // Cut short: only a temp copy may be.
        std::fs::write(part.join("sub/a.md"), "alpha").unwrap();
        assert_eq!(
            not_within(&part, &whole, Within::PartialCopy).unwrap(),
            None
        );
        let why = not_within(&part, &whole, Within::Duplicate)
            .unwrap()
            .unwrap();
        assert!(why.contains("sub/a.md"), "{why}");
        // Other bytes, or a file the whole copy lacks: never within.
        std::fs::write(part.join("sub/a.md"), "gamma").unwrap();
        assert!(
            not_within(&part, &whole, Within::PartialCopy)
                .unwrap()
                .is_some()
        );
        std::fs::write(part.join("sub/a.md"), "alpha beta").unwrap();
        std::fs::write(part.join("new.md"), "x").unwrap();
        let why = not_within(&part, &whole, Within::PartialCopy)
            .unwrap()
            .unwrap();
        assert!(why.contains("new.md") && why.contains("is not in"), "{why}");
        assert_eq!(
            crate::fs::moved_name(&crate::fs::move_temp_name("abc")),
            Some("abc")
        );
        assert_eq!(crate::fs::moved_name(".manifest.json.12.x9.tmp"), None);
    }
}

/// What moving an archive out of the runs folder did (see
/// [`crate::config::LegacyArchive`]).
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Adopted {
    /// Run folders now in the new archive.
    pub runs: usize,
    /// Tombstones now in the new archive.
    pub tombstones: usize,
    /// What stayed behind, each with why: a run or tombstone of the same
    /// name already in the new archive, with other bytes.
    pub left: Vec<(PathBuf, String)>,
}

/// Moves the archive at `from` (inside the runs folder) to `to`: whole, by
/// one rename, when `to` is not there yet; else run by run and tombstone
/// by tombstone, never over something of the same name. `from` is removed
/// once empty. The new folder's mtime is set to now, so the index compares
/// its folder names again (a rename keeps the folder's own mtime). The
/// caller holds the archive-wide lock.
pub fn adopt(from: &Path, to: &Path) -> Result<Adopted> {
    let mut out = Adopted::default();
    if std::fs::symlink_metadata(to).is_err() {
        out.runs = crate::runs::walk(from)?.count();
        out.tombstones = tombstones_in(from)?.len();
        crate::move_durably(from, to)?;
    } else {
        for f in crate::runs::walk(from)? {
            let f = f?;
            let target = to.join(&f.name);
            if std::fs::symlink_metadata(&target).is_ok() {
                out.left.push((
                    f.path,
                    format!("{} is there too; compare the two by hand", target.display()),
                ));
                continue;
            }
            crate::fs::move_durably_keyed(
                &f.path,
                &target,
                Some(logbook_model::run::MANIFEST_FILE),
            )?;
            out.runs += 1;
        }
        let (old, new) = (from.join(TOMBSTONES), to.join(TOMBSTONES));
        for path in tombstones_in(from)? {
            let Some(name) = path.file_name() else {
                continue;
            };
            let target = new.join(name);
            match std::fs::read(&target) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    crate::fs::create_folder(&new)?;
                    crate::move_durably(&path, &target)?;
                    out.tombstones += 1;
                }
                Ok(there) if std::fs::read(&path).is_ok_and(|b| b == there) => {
                    std::fs::remove_file(&path).map_err(|e| Error::io(&path, e))?;
                }
                Ok(_) => out.left.push((
                    path.clone(),
                    format!(
                        "{} is there too, with other bytes; compare the two by hand",
                        target.display()
                    ),
                )),
                Err(e) => return Err(Error::io(&target, e)),
            }
        }
        // Only empty folders go; what was left keeps its folder.
        let _ = std::fs::remove_dir(&old);
        let _ = std::fs::remove_dir(from);
    }
    let now = logbook_model::clock::Clock::from_env().system_time();
    let touched = std::fs::File::open(to).and_then(|f| f.set_modified(now));
    touched.map_err(|e| Error::io(to, e))?;
    Ok(out)
}

fn tombstones_in(archive: &Path) -> Result<Vec<PathBuf>> {
    Ok(
        crate::entries(&archive.join(TOMBSTONES), crate::EntryKind::File)?
            .into_iter()
            .filter(|(name, _)| name.ends_with(".json"))
            .map(|(_, path)| path)
            .collect(),
    )
}
