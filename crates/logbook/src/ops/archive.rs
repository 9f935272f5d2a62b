//! The archive, which keeps the live set small, and the only way a run is
//! deleted.
//!
//! - [`archive`] moves finished runs older than an age (of some statuses)
//!   from `agent_outputs_folder` to `archive_folder`, byte for byte;
//!   [`apply_policy`] does the same by `logbook.yaml`'s `retention:`, and
//!   only when asked (`logbook archive --policy`): nothing runs it
//!   implicitly. Nothing here ever deletes while archiving.
//! - [`unarchive`] moves a run back.
//! - [`delete`] removes a run (live or archived) after `--yes`, refusing a
//!   run others link to unless forced, and leaves a tombstone.
//!
//! Each move takes the run's own lock, the one every writer of its manifest
//! takes (`ops::run`): a write lands before the move, or is refused after
//! it ([`crate::Error::RunArchived`]); never half and half. The index is
//! kept in step through [`write_through`]: the old manifest's row goes and
//! the new one comes, marked archived, in one transaction, with both paths
//! marked pending first so a crash between the move and the index is
//! repaired on the next open.

use crate::Logbook;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::clock::Timestamp;
use crate::error::{Error, Next, Result, Step};
use crate::model::archive::{Age, Selection, Tombstone, archivable, archivable_status};
use crate::model::ids::RunId;
use crate::model::query::{ArchiveScope, RunQuery};
use crate::model::run::{MANIFEST_FILE, Run, RunStatus};
use crate::ops::run::resolve;
use crate::ops::write_through;
use logbook_index::{Index, Kind, Pending, Record};
use logbook_store::Project;

/// One run an archive moved (or, in a dry run, would move).
#[derive(Debug, Clone, Serialize)]
pub struct Moved {
    /// The run.
    pub session_id: String,
    /// Its status.
    pub status: String,
    /// When it finished (else started).
    pub finished_at: String,
    /// Where it was.
    pub from: PathBuf,
    /// Where it is (or would be).
    pub to: PathBuf,
}

/// What [`archive`] and [`apply_policy`] did.
#[derive(Debug, Clone, Serialize)]
pub struct Archived {
    /// Nothing was moved: what would be.
    pub dry_run: bool,
    /// The runs moved (or that would be), oldest first.
    pub moved: Vec<Moved>,
    /// How many were moved (or would be).
    pub count: usize,
    /// The runs found eligible but left where they were, and why (another
    /// writer changed them, a folder of that name was in the archive).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub left: Vec<Left>,
}

/// A run an archive did not move, and why.
#[derive(Debug, Clone, Serialize)]
pub struct Left {
    /// The run.
    pub session_id: String,
    /// Why it stayed.
    pub reason: String,
}

/// Archives the finished runs that finished more than `older_than` ago
/// (`90d`, `12h`, `2w`), of `statuses` only when given (every finished
/// status otherwise); with `dry_run`, says what would move and moves
/// nothing. A running run is never archived.
pub fn archive(
    p: &Logbook,
    older_than: &str,
    statuses: &[String],
    dry_run: bool,
) -> Result<Archived> {
    let age = Age::parse(older_than)
        .map_err(|reason| Error::invalid("older-than", older_than, reason))?;
    let statuses = statuses
        .iter()
        .flat_map(|s| s.split(','))
        .filter(|s| !s.trim().is_empty())
        .map(|s| archivable_status(s).map_err(|reason| Error::invalid("status", s.trim(), reason)))
        .collect::<Result<Vec<_>>>()?;
    let sel = Selection {
        before: age.before(p.clock.now()),
        statuses,
    };
    archive_selected(p, &sel, dry_run)
}

/// Archives every run that finished (any finished status) before
/// `before`: [`archive`] at an instant rather than an age (the benchmark
/// archives an exact share of its runs so).
pub fn archive_finished_before(p: &Logbook, before: Timestamp, dry_run: bool) -> Result<Archived> {
    let sel = Selection {
        before,
        statuses: vec![],
    };
    archive_selected(p, &sel, dry_run)
}

/// Applies `logbook.yaml`'s `retention:` policy: [`archive`] with its
/// `archive_after` and `statuses`. Only `logbook archive --policy` calls it.
pub fn apply_policy(p: &Logbook, dry_run: bool) -> Result<Archived> {
    let Some(policy) = &p.config.retention else {
        let path = p
            .config
            .source
            .clone()
            .unwrap_or_else(|| p.root().join(logbook_store::config::CONFIG_FILE));
        return Err(
            Error::config(path, "has no retention policy").with_next(
                Next::say(
                    "add one, e.g. `retention: {archive_after: 90d, statuses: [completed, failed]}`, or archive by age: ",
                )
                .step(Step::ArchiveOlderThan),
            ),
        );
    };
    let statuses = policy
        .statuses
        .iter()
        .map(|s| {
            archivable_status(s).map_err(|reason| Error::invalid("status", s.as_str(), reason))
        })
        .collect::<Result<Vec<_>>>()?;
    let sel = Selection {
        before: policy.archive_after.before(p.clock.now()),
        statuses,
    };
    archive_selected(p, &sel, dry_run)
}

/// The lock every move of the archive folder as a whole takes.
const ARCHIVE_FOLDER_LOCK: &str = "archive-folder";

/// Moves an archive still in the older default place, inside the runs
/// folder where a seed 000 reader lists it as a session, to the default
/// beside it (see [`logbook_store::config::LegacyArchive`]); `None` when there is
/// none. Returns the project as it is after the move, whose
/// `archive_folder` is the new one. Every run and tombstone is kept: one
/// that meets a namesake with other bytes stays, and is named.
pub fn adopt_legacy_archive(
    p: &Logbook,
) -> Result<Option<(Logbook, logbook_store::archive::Adopted)>> {
    let Some(legacy) = &p.config.legacy_archive else {
        return Ok(None);
    };
    let _lock = p.locks.exclusive(ARCHIVE_FOLDER_LOCK)?;
    let adopted = logbook_store::archive::adopt(&legacy.from, &legacy.to)?;
    let mut config = p.config.clone();
    config.archive_folder = legacy.to.clone();
    if !logbook_store::fs::is_folder(&legacy.from) {
        config.legacy_archive = None;
    }
    let project = p.with_project(Project::from_config(config));
    Index::open(&project)?.upkeep().sync_archived()?;
    Ok(Some((project, adopted)))
}

fn archive_selected(p: &Logbook, sel: &Selection, dry_run: bool) -> Result<Archived> {
    // The next archive moves an older archive out of the runs folder first.
    let adopted = match dry_run {
        false => adopt_legacy_archive(p)?,
        true => None,
    };
    let p = adopted.as_ref().map_or(p, |(p, _)| p);
    let mut candidates = candidates(p, sel)?;
    candidates.sort_by(|a, b| ended(a).cmp(&ended(b)).then(a.id.cmp(&b.id)));
    let mut out = Archived {
        dry_run,
        moved: vec![],
        count: 0,
        left: vec![],
    };
    for run in candidates {
        let to = logbook_store::archive::folder(p, &run.id);
        if dry_run {
            out.moved.push(moved(&run, run.folder.clone(), to));
            continue;
        }
        match archive_one(p, &run.id, sel) {
            Ok(Some(m)) => out.moved.push(m),
            Ok(None) => out.left.push(Left {
                session_id: run.id.to_string(),
                reason: "changed since it was listed (no longer finished, old enough or live)"
                    .into(),
            }),
            Err(e @ Error::AlreadyExists { .. }) => out.left.push(Left {
                session_id: run.id.to_string(),
                reason: e.to_string(),
            }),
            Err(e) => return Err(e),
        }
    }
    out.count = out.moved.len();
    Ok(out)
}

/// The live runs `sel` takes, from the index (each verified against its
/// manifest as every listing is).
fn candidates(p: &Logbook, sel: &Selection) -> Result<Vec<Run>> {
    let index = Index::open_synced(p)?;
    let statuses: Vec<RunStatus> = if sel.statuses.is_empty() {
        vec![
            RunStatus::Completed,
            RunStatus::Failed,
            RunStatus::Cancelled,
        ]
    } else {
        sel.statuses.clone()
    };
    let mut out = vec![];
    for status in statuses {
        let query = RunQuery {
            status: Some(status.to_string()),
            archive: ArchiveScope::Live,
            limit: Some(RunQuery::MAX_PAGING),
            ..RunQuery::default()
        };
        out.extend(
            index
                .read()
                .find_runs(&query)?
                .into_iter()
                .map(|h| h.run)
                .filter(|r| {
                    archivable(r, sel) && !logbook_store::archive::is_archived(p, &r.folder)
                }),
        );
    }
    Ok(out)
}

fn ended(run: &Run) -> String {
    let e = &run.manifest.execution;
    e.completed_at
        .clone()
        .unwrap_or_else(|| e.started_at.clone())
}

fn moved(run: &Run, from: PathBuf, to: PathBuf) -> Moved {
    Moved {
        session_id: run.id.to_string(),
        status: run.manifest.execution.status.to_string(),
        finished_at: ended(run),
        from,
        to,
    }
}

/// The index's pending mark for a change of the run manifest in `folder`.
fn pending(folder: &Path, id: &RunId) -> Pending {
    Pending {
        kind: Kind::Run,
        path: folder.join(MANIFEST_FILE),
        lock: id.lock_name(),
    }
}

/// Moves run `id` into the archive under its lock, if it is (still) live
/// and taken by `sel`; `None` when it no longer is.
fn archive_one(p: &Logbook, id: &RunId, sel: &Selection) -> Result<Option<Moved>> {
    let _lock = p.locks.exclusive(&id.lock_name())?;
    let run = match logbook_store::run::load(p, id) {
        Ok(run) => run,
        Err(Error::NotFound { .. } | Error::RunDeleted { .. }) => return Ok(None),
        Err(e) => return Err(e),
    };
    if logbook_store::archive::is_archived(p, &run.folder) || !archivable(&run, sel) {
        return Ok(None);
    }
    let to = logbook_store::archive::folder(p, id);
    move_run(p, &run, &to)?;
    Ok(Some(moved(&run, run.folder.clone(), to)))
}

/// Moves `run`'s folder to `to` and the index's row with it (marked
/// archived or not by where `to` is). The caller holds the run's lock.
fn move_run(p: &Logbook, run: &Run, to: &Path) -> Result<()> {
    let moved = Run {
        id: run.id.clone(),
        folder: to.to_path_buf(),
        manifest: run.manifest.clone(),
    };
    write_through(
        p,
        vec![pending(&run.folder, &run.id), pending(to, &run.id)],
        || {
            logbook_store::archive::move_run(&run.folder, to)?;
            Ok(((), vec![None, Some(Record::run_in(p, &moved))]))
        },
    )
}

/// Moves archived run `id` back into the live set; refuses when a run
/// folder of that name is there already, and says so when it is not
/// archived.
pub fn unarchive(p: &Logbook, id: &str) -> Result<Run> {
    let id = resolve(p, id)?;
    let _lock = p.locks.exclusive(&id.lock_name())?;
    let live = logbook_store::run::folder(p, &id);
    // Asked first: a live folder of that name is what a load would find.
    if let Some(folder) = logbook_store::archive::locate(p, &id)?
        && logbook_store::archive::live_folder_exists(p, &id)?
    {
        // A live folder without a manifest is most likely what an archive
        // between file systems left when killed: doctor can tell, and
        // remove it once it is shown to be a duplicate.
        let hint = if logbook_store::runs::has_manifest(&live) {
            Next::say(format!(
                "a run folder of that name is in the live set; the archived run stays at {} until that folder is moved away",
                folder.display()
            ))
        } else {
            Next::say(format!(
                "a folder of that name without a manifest is in the live set (an interrupted archive leaves one); the archived run stays at {} until it goes: ",
                folder.display()
            ))
            .step(Step::Doctor { fix: true })
            .text(" removes it once every file in it is shown to be in the archived copy")
        };
        return Err(Error::AlreadyExists { path: live, hint });
    }
    let run = logbook_store::run::load(p, &id)?;
    if !logbook_store::archive::is_archived(p, &run.folder) {
        return Err(Error::invalid(
            "run",
            id.as_str(),
            format!("it is not archived: its folder is {}", run.folder.display()),
        ));
    }
    move_run(p, &run, &live)?;
    Ok(Run {
        folder: live,
        ..run
    })
}

/// What [`delete`] removed.
#[derive(Debug, Clone, Serialize)]
pub struct Deleted {
    /// The run.
    pub session_id: String,
    /// The folder removed.
    pub folder: PathBuf,
    /// Its tombstone.
    pub tombstone: PathBuf,
    /// The runs that linked to it (deleted anyway: `--force`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub linked_from: Vec<String>,
}

/// Deletes run `id` (live or archived): without `yes` nothing is removed
/// and the error says what would be; a run other runs link to
/// (`related_sessions`) is refused unless `force`, naming them. Its
/// tombstone is written before the folder goes.
pub fn delete(p: &Logbook, id: &str, yes: bool, force: bool) -> Result<Deleted> {
    let id = resolve(p, id)?;
    let _lock = p.locks.exclusive(&id.lock_name())?;
    let (run, raw) = logbook_store::run::load_raw(p, &id)?;
    let linking = linking_runs(p, &id)?;
    if !yes {
        let files = logbook_store::archive::count_files(&run.folder);
        let mut what = format!(
            "run {id} ({} / {}, {}) and its folder {} ({files} file{}) would be removed for good, a tombstone kept at {}",
            run.manifest.agent.name,
            run.manifest.workflow.name,
            run.manifest.execution.status,
            run.folder.display(),
            if files == 1 { "" } else { "s" },
            logbook_store::archive::tombstone_path(p, &id).display()
        );
        if !linking.is_empty() {
            what.push_str(&format!("; runs {} link to it", linking.join(", ")));
        }
        return Err(Error::NotConfirmed {
            what,
            id: id.to_string(),
            force: !linking.is_empty(),
        });
    }
    if !linking.is_empty() && !force {
        return Err(Error::RunLinked {
            id: id.to_string(),
            linking,
        });
    }
    let tombstone = Tombstone::of(
        &run,
        raw,
        &p.config.user,
        &p.clock.now_string(),
        linking.clone(),
    );
    let path = write_through(p, vec![pending(&run.folder, &id)], || {
        let path = logbook_store::archive::write_tombstone(p, &id, &tombstone)?;
        logbook_store::archive::remove_run(&run.folder)?;
        Ok((path, vec![None]))
    })?;
    Ok(Deleted {
        session_id: id.to_string(),
        folder: run.folder,
        tombstone: path,
        linked_from: linking,
    })
}

/// The runs naming `id` in their `related_sessions` (its children in the
/// lineage), live or archived, from the index.
fn linking_runs(p: &Logbook, id: &RunId) -> Result<Vec<String>> {
    let index = Index::open_synced(p)?;
    Ok(index
        .read()
        .children(id.as_str())?
        .into_iter()
        .filter(|c| c != id.as_str())
        .collect())
}
