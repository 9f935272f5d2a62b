//! `logbook doctor`: checks every file Logbook knows and names what is wrong.
//! Findings are a flat list (kind, path, message) so other areas (the index,
//! transcripts) add their own checks beside the run checks here; `--fix`
//! repairs what can be repaired without losing anything and says what it did.

mod bundle;
mod consistency;
mod finding;
mod moves;
mod outputs;
mod runs;
mod transcripts;
mod work_sessions;

pub use finding::{Finding, Worded};
pub use runs::Progress;
pub use work_sessions::check_work_sessions;

use finding::fix_does;

use crate::Logbook;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use crate::error::{Next, Result, Step};
use crate::model::ids::RunId;
use crate::model::run::MANIFEST_FILE;
use crate::model::text;
use crate::model::transcript::{Summary, Transcript};
use crate::model::work_session::{WorkSession, forget_migrated_keys};
use crate::model::workflow::SessionState;
use crate::ops::{transcript, work_session as ws};
use logbook_index::{Index, Outputs, WalkedNames};

/// How long a run may stay `running` before doctor calls it abandoned.
pub const DEFAULT_ABANDONED_AFTER_HOURS: f64 = 24.0;

/// What to check and whether to repair.
#[derive(Debug, Clone)]
pub struct Options {
    /// Repair what can be repaired (never deletes user data).
    pub fix: bool,
    /// Runs still `running` after this many hours are abandoned.
    pub abandoned_after_hours: f64,
    /// Read and parse every manifest and check every run's outputs
    /// (`doctor --full`); by default a finished run whose manifest is
    /// unchanged since the index parsed it is trusted (see `runs`).
    pub full: bool,
}

impl Options {
    /// Refuses options no check can run with: an age in hours that is
    /// negative or not a number would call every running run abandoned,
    /// or none.
    pub fn validate(&self) -> Result<()> {
        let hours = self.abandoned_after_hours;
        if hours.is_finite() && hours >= 0.0 {
            return Ok(());
        }
        Err(crate::Error::invalid(
            "abandoned-after",
            hours.to_string(),
            "must be a number of hours, 0 or more",
        ))
    }
}

impl Default for Options {
    fn default() -> Self {
        Options {
            fix: false,
            abandoned_after_hours: DEFAULT_ABANDONED_AFTER_HOURS,
            full: false,
        }
    }
}

/// Everything doctor found.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// How many runs were checked.
    pub runs_checked: usize,
    /// The problems, in the order found.
    pub findings: Vec<Finding>,
}

/// Runs every check.
pub fn check(p: &Logbook, opts: &Options) -> Result<Report> {
    check_with_progress(p, opts, None)
}

/// Runs every check, calling `progress` with the run folders done so far
/// (the long part at scale), for a progress bar.
pub fn check_with_progress(
    p: &Logbook,
    opts: &Options,
    progress: Option<Progress<'_>>,
) -> Result<Report> {
    opts.validate()?;
    let mut report = Report::default();
    if folders_in_place(p, &mut report) {
        // Every other check reads these folders: it would stop at the
        // first instead of naming what to move.
        return Ok(report);
    }
    let adopted;
    let p = match legacy_archive(p, opts, &mut report)? {
        Some(moved) => {
            adopted = moved;
            &adopted
        }
        None => p,
    };
    let (index_usable, walked) = if opts.fix {
        // A repair may rebuild the index, which the run checks' own
        // repairs write to: one after the other.
        let usable = consistency::index_pages(p, opts, &mut report, None)?;
        let walked = runs::check(p, opts, &mut report, progress)?;
        (usable, walked)
    } else {
        // The page check reads the index file on one core; the run folders
        // are checked meanwhile (on every core), findings kept in order.
        let mut runs_report = Report::default();
        let (damage, walked) = std::thread::scope(|s| {
            let pages = s.spawn(|| Index::damage(p));
            let walked = runs::check(p, opts, &mut runs_report, progress);
            let damage = pages
                .join()
                .unwrap_or_else(|_| Ok(Some("the page check stopped unexpectedly".into())));
            (damage, walked)
        });
        let usable = consistency::index_pages(p, opts, &mut report, Some(damage?))?;
        let walked = walked?;
        report.runs_checked = runs_report.runs_checked;
        // The few findings of the page check go first, without a second
        // copy of the many of the run folders.
        let pages = std::mem::replace(&mut report.findings, runs_report.findings);
        report.findings.splice(0..0, pages);
        (usable, walked)
    };
    moves::check(p, opts, &mut report)?;
    bundle::check(p, &mut report)?;
    check_work_sessions(p, opts, &mut report)?;
    consistency::ids_match_names(p, &mut report)?;
    consistency::agents_have_runs(p, opts, &mut report)?;
    consistency::archives_are_named(p, opts, &mut report)?;
    if index_usable {
        let outputs = if opts.full {
            Outputs::All
        } else {
            Outputs::Unsettled
        };
        check_index_after(p, &mut report, Some(&walked), outputs, opts.fix)?;
    }
    check_field_types(p, &mut report)?;
    check_hooks(p, opts, &mut report)?;
    check_leftover_state(p, opts, &mut report)?;
    // Secrets are not a problem doctor can fix or fail on: a notice.
    crate::ops::secrets::notice_count(p, opts.full, index_usable);
    Ok(report)
}

/// What killed processes leave in the state folder that guards nothing
/// any more: lock files of hook jobs no longer queued, and import
/// checkpoints of logs that are gone. One finding each, however many
/// files: a hundred lock files are one problem.
fn check_leftover_state(p: &Logbook, opts: &Options, report: &mut Report) -> Result<()> {
    let locks = logbook_store::hook::stale_job_locks(p)?;
    if !locks.is_empty() {
        let fixed = opts
            .fix
            .then(|| match logbook_store::hook::remove_stale_job_locks(p) {
                Ok(n) => format!("removed {n} lock file(s)"),
                Err(e) => format!("could not remove them: {e}"),
            });
        report.findings.push(Finding {
            kind: "stale-lock",
            path: p.locks.dir().to_path_buf(),
            message: format!(
                "{} lock file(s) of hook jobs that are done (their holder was killed before it let go); harmless",
                locks.len()
            ),
            fixed,
            next: fix_does(" removes them"),
        });
    }
    let dir = logbook_store::import_cursor::dir(&p.config.state_dir());
    let cursors = logbook_store::import_cursor::stale(&dir)?;
    if !cursors.is_empty() {
        let fixed = opts.fix.then(|| {
            let failed: Vec<String> = cursors
                .iter()
                .filter_map(|c| logbook_store::import_cursor::remove(c).err())
                .map(|e| e.to_string())
                .collect();
            match failed.first() {
                None => format!("removed {} checkpoint(s)", cursors.len()),
                Some(e) => format!("could not remove {} checkpoint(s): {e}", failed.len()),
            }
        });
        report.findings.push(Finding {
            kind: "stale-import-checkpoint",
            path: dir,
            message: format!(
                "{} import checkpoint(s) of agent logs that are gone (deleted or moved); they are never used again",
                cursors.len()
            ),
            fixed,
            next: fix_does(" removes them"),
        });
    }
    Ok(())
}

/// An archive in the older default place, inside the runs folder where a
/// seed 000 reader lists it as a session: named, and with `--fix` moved
/// beside it; the rest of doctor then checks the project as it is after
/// the move.
fn legacy_archive(p: &Logbook, opts: &Options, report: &mut Report) -> Result<Option<Logbook>> {
    let Some(legacy) = &p.config.legacy_archive else {
        return Ok(None);
    };
    let mut finding = Finding {
        kind: "archive-in-runs-folder",
        path: legacy.from.clone(),
        message: "archived runs are kept inside the runs folder, where a seed 000 reader lists the archive as a session without a manifest".into(),
        fixed: None,
        next: Some(
            Next::of(
                Step::Doctor { fix: true },
                " (or the next archive) moves them to ",
            )
            .text(legacy.to.display().to_string()),
        ),
    };
    if !opts.fix {
        report.findings.push(finding);
        return Ok(None);
    }
    let (moved, project) = match crate::ops::archive::adopt_legacy_archive(p) {
        Ok(Some((project, a))) => {
            let mut said = format!(
                "moved {} run(s) and {} tombstone(s) to {}",
                a.runs,
                a.tombstones,
                legacy.to.display()
            );
            if let Some((path, why)) = a.left.first() {
                said = format!(
                    "could not move everything: {said}; left {} thing(s), the first {}: {why}",
                    a.left.len(),
                    path.display()
                );
            }
            (said, Some(project))
        }
        Ok(None) => return Ok(None),
        Err(e) => (format!("could not move it: {e}"), None),
    };
    finding.fixed = Some(moved);
    report.findings.push(finding);
    Ok(project)
}

/// Whether something other than a folder stands where Logbook keeps its
/// records (a file named `transcripts`, say), each named in `report`.
/// Nothing is moved: the file may be someone's.
fn folders_in_place(p: &Logbook, report: &mut Report) -> bool {
    let c = &p.config;
    let folders = [
        (c.state_dir(), "its index, hooks and locks"),
        (c.transcripts_dir.clone(), "transcripts"),
        (c.sessions_dir.clone(), "work sessions"),
        (c.session_archive_dir.clone(), "closed work sessions"),
        (c.agent_outputs_folder.clone(), "run folders"),
        (c.archive_folder.clone(), "archived runs"),
        (
            c.state_dir().join("hooks"),
            "the hook queue and failure log",
        ),
        (c.state_dir().join("locks"), "its locks"),
    ];
    let before = report.findings.len();
    for (path, holds) in folders {
        if let Some(what) = logbook_store::fs::in_place_of_folder(&path) {
            report.findings.push(Finding {
                kind: "not-a-folder",
                message: format!(
                    "Logbook keeps {holds} in this folder, but {what} is there, so every write to it fails"
                ),
                next: Some(
                    Next::say(format!(
                        "move it aside (`mv {0} {0}.aside`), then run ",
                        crate::model::terminal::shell_word(&path.to_string_lossy())
                    ))
                    .step(Step::Doctor { fix: true }),
                ),
                path,
                fixed: None,
            });
        }
    }
    report.findings.len() > before
}

/// What the agents' hooks left: jobs no hook or worker finished, and
/// failures the agents never saw. `--fix` does the jobs again and, when
/// they all succeed, clears the failure log (kept as `failures.log.1`).
fn check_hooks(p: &Logbook, opts: &Options, report: &mut Report) -> Result<()> {
    let left = crate::ops::hook::event::leftovers(p)?;
    if left.jobs.is_empty() && left.failures.is_empty() {
        return Ok(());
    }
    let fixed = if opts.fix {
        Some(match crate::ops::hook::event::repair(p) {
            Ok(d) if d.failed == 0 => format!("did {} queued hook job(s) again", d.done),
            Ok(d) => format!(
                "could not finish {} hook job(s) (see {})",
                d.failed,
                logbook_store::hook::failure_log(p).display()
            ),
            Err(e) => format!("could not drain the hook queue: {e}"),
        })
    } else {
        None
    };
    for (path, event, why) in left.jobs {
        report.findings.push(Finding {
            kind: "hook-queued",
            path,
            // "the X hook", never "a X hook": event names start with any
            // letter ("an event hook", "a Stop hook"), and one may be unknown.
            message: format!("{}'s work is not done ({why})", hook_named(&event)),
            fixed: fixed.clone(),
            next: fix_does(" does it"),
        });
    }
    if let Some(last) = left.failures.last() {
        let session = last
            .session_id
            .as_deref()
            .map(|s| format!(" (agent session {s})"))
            .unwrap_or_default();
        report.findings.push(Finding {
            kind: "hook-failed",
            path: logbook_store::hook::failure_log(p),
            message: format!(
                "{} hook failure(s) logged; the last, at {}, in {}{session}: {}",
                left.failures.len(),
                last.at,
                hook_named(&last.event),
                last.error
            ),
            fixed,
            next: Some(
                Next::say("fix the cause, then ")
                    .step(Step::Doctor { fix: true })
                    .text(" retries queued work and clears the log"),
            ),
        });
    }
    Ok(())
}

impl Report {
    /// How many findings are still wrong: not repaired by `--fix`.
    pub fn unresolved(&self) -> usize {
        self.findings
            .iter()
            .filter(|f| f.fixed.as_deref().is_none_or(|fixed| !repaired(fixed)))
            .count()
    }
}

/// Whether a fix's description says it repaired the problem (the fixes
/// below say "could not …" or "left alone …" when they did not).
fn repaired(fixed: &str) -> bool {
    !(fixed.starts_with("could not") || fixed.starts_with("left alone"))
}

/// A parser's reason without the path it starts with, since the finding
/// names the path already.
fn reason_without_path<'a>(reason: &'a str, path: &Path) -> &'a str {
    reason
        .strip_prefix(&format!("{}: ", path.display()))
        .unwrap_or(reason)
}

/// Known fields whose value has the wrong type (`"messageCount": 8.5`), in
/// every file another tool may write: the file is still read (the field as
/// absent) and the value is kept on rewrite, but what it meant is lost to
/// Logbook until someone fixes it. (Run manifests are checked in the pass
/// over run folders.)
pub fn check_field_types(p: &Logbook, report: &mut Report) -> Result<()> {
    let mut files: Vec<(PathBuf, Vec<String>)> = vec![];
    for dir in [&p.config.sessions_dir, &p.config.session_archive_dir] {
        for path in logbook_store::work_session::session_files(dir)? {
            if let Ok((_, mut raw)) = logbook_store::work_session::read_raw(&path) {
                forget_migrated_keys(&mut raw);
                files.push((path, text::wrong_type_fields::<WorkSession>(&raw)));
            }
        }
        for path in logbook_store::workflow::state_files(dir)? {
            if let Ok(Some((_, raw))) = logbook_store::workflow::read_state(&path) {
                files.push((path, text::wrong_type_fields::<SessionState>(&raw)));
            }
        }
    }
    for dir in [
        p.config.transcripts_dir.clone(),
        logbook_store::transcript::archive_dir(p),
    ] {
        for (_, path) in logbook_store::transcript::transcript_files(&dir)? {
            if let Ok((_, raw)) = logbook_store::transcript::read_file_raw(&path) {
                files.push((path, text::wrong_type_fields::<Transcript>(&raw)));
            }
        }
    }
    for (path, fields) in files {
        for field in fields {
            report.findings.push(wrong_type_finding(&path, &field));
        }
    }
    Ok(())
}

fn wrong_type_finding(path: &Path, field: &str) -> Finding {
    Finding {
        kind: "wrong-type-field",
        message: format!(
            "{field} has a value of the wrong type; it is read as absent and kept as it is on rewrite; fix it by hand (see the seed's format for its type)"
        ),
        path: path.to_path_buf(),
        fixed: None,
        next: None,
    }
}

/// The index against the files (stale records: synced first, in both
/// passes), manifests the index counts as invalid, other
/// corrupt files (work sessions, transcripts), run folders without a
/// manifest, dangling lineage links and subagent transcripts whose parent
/// is gone.
pub fn check_index(p: &Logbook, report: &mut Report) -> Result<()> {
    check_index_after(p, report, None, Outputs::Unsettled, false)
}

/// [`check_index`] right after the pass over every run folder, whose
/// `walked` names stand for the runs folder while it has not changed: the
/// folder is listed once per doctor. `outputs`: whose output files the
/// sync it starts with checks (every run's with `--full`).
fn check_index_after(
    p: &Logbook,
    report: &mut Report,
    walked: Option<&WalkedNames>,
    outputs: Outputs,
    fix: bool,
) -> Result<()> {
    let transcripts = transcript::list(p, &transcript::ListOptions::default())?;
    let skipped = [
        ("corrupt-work-session", ws::list(p)?.corrupt),
        ("corrupt-transcript", transcripts.corrupt.clone()),
    ];
    for (kind, corrupt) in skipped {
        for c in corrupt {
            report.findings.push(Finding {
                kind,
                message: format!(
                    "{}; listings skip it until the file is repaired",
                    reason_without_path(&c.reason, &c.path)
                ),
                path: c.path,
                fixed: None,
                next: None,
            });
        }
    }
    // After the listings above, which bring sessions and transcripts up to
    // date themselves: what is left stale is what only a sync would read.
    // It is read before anything is judged from the index, in both passes,
    // so `--fix` finds what the first pass found.
    let mut index = Index::open(p)?;
    report
        .findings
        .extend(stale_index(&mut index, walked, outputs)?);
    // Every manifest a listing counts as skipped is named, even one the
    // pass over the run folders did not see (changed since).
    let broken: HashMap<PathBuf, String> = index
        .read()
        .corrupt_files()?
        .into_iter()
        .filter(|c| c.kind == logbook_index::Kind::Run)
        .map(|c| (c.path, c.reason))
        .collect();
    let named: HashSet<PathBuf> = report
        .findings
        .iter()
        .filter(|f| f.kind == "corrupt-manifest")
        .map(|f| f.path.clone())
        .collect();
    let mut unnamed: Vec<(&PathBuf, &String)> =
        broken.iter().filter(|(p, _)| !named.contains(*p)).collect();
    unnamed.sort();
    for (path, reason) in unnamed {
        report.findings.push(runs::corrupt_manifest(path, reason));
    }
    report
        .findings
        .extend(orphan_transcripts(&transcripts.transcripts));
    transcripts::check_parsers(p, &transcripts.transcripts, fix, report)?;
    let dangling = index.read().dangling_edges()?;
    report.findings.extend(dangling_links(p, dangling, &broken));
    Ok(())
}

/// Syncs an index that is behind the files, and says so: how far behind
/// it was and what the sync did.
fn stale_index(
    index: &mut Index,
    walked: Option<&WalkedNames>,
    outputs: Outputs,
) -> Result<Option<Finding>> {
    let stale = index.upkeep().staleness_after(walked, outputs)?;
    if stale.new + stale.changed + stale.deleted == 0 {
        return Ok(None);
    }
    let fixed = match index.upkeep().sync_after(walked, outputs) {
        Ok(r) => format!(
            "synced: {} file(s) read, {} record(s) removed",
            r.indexed, r.removed
        ),
        Err(e) => format!("could not sync: {e}"),
    };
    Ok(Some(Finding {
        kind: "index-stale",
        path: index.path().to_path_buf(),
        message: format!(
            "the index was behind the files: {} new, {} changed, {} deleted; doctor synced it before checking",
            stale.new, stale.changed, stale.deleted,
        ),
        fixed: Some(fixed),
        next: Some(Next::of(
            if outputs == Outputs::All {
                Step::SyncIndexFull
            } else {
                Step::SyncIndex
            },
            " does the same",
        )),
    }))
}

/// Subagent transcripts whose parent has no transcript.
fn orphan_transcripts(listed: &[Summary]) -> Vec<Finding> {
    let ids: HashSet<&str> = listed.iter().map(|t| t.id.as_str()).collect();
    listed
        .iter()
        .filter_map(|t| {
            let parent = t.parent_session_id.as_ref()?;
            (!ids.contains(parent.as_str())).then(|| Finding {
                kind: "orphan-transcript",
                path: t.file.clone(),
                message: format!(
                    "subagent transcript {} names parent {parent}, which has no transcript",
                    t.id
                ),
                fixed: None,
                next: None,
            })
        })
        .collect()
}

/// Lineage links (child, parent) to a run that is not here, or whose
/// manifest is `broken`; a link to a run deleted on purpose is not one.
fn dangling_links(
    p: &Logbook,
    dangling: Vec<(String, String)>,
    broken: &HashMap<PathBuf, String>,
) -> Vec<Finding> {
    let mut findings = vec![];
    for (child, parent) in dangling {
        // A link to a run deleted on purpose (`delete --force`) is told by
        // the run's tombstone, not a problem.
        if RunId::parse(&parent).ok().is_some_and(|id| {
            logbook_store::fs::is_file(&logbook_store::archive::tombstone_path(p, &id))
        }) {
            continue;
        }
        let parent_manifest = p
            .config
            .agent_outputs_folder
            .join(&parent)
            .join(MANIFEST_FILE);
        let message = match broken.get(&parent_manifest) {
            Some(reason) => format!(
                "run {child} names related session {parent}, which is broken: {}; repair that manifest (the corrupt-manifest finding names it)",
                runs::unreadable_reason(reason, &parent_manifest)
            ),
            None => format!("run {child} names related session {parent}, which is not a run here"),
        };
        let child_folder = RunId::parse(&child)
            .ok()
            .and_then(|id| logbook_store::run::locate(p, &id).ok())
            .unwrap_or_else(|| p.config.agent_outputs_folder.join(&child));
        findings.push(Finding {
            kind: "dangling-link",
            path: child_folder.join(MANIFEST_FILE),
            message,
            fixed: None,
            next: None,
        });
    }
    findings
}

/// Reports the temp files a killed writer left in `dir` (those `wanted`
/// selects) and, with `--fix`, lets `remove` delete each one it can prove is
/// orphaned (`Ok(false)`: it may belong to a write under way; left alone).
fn temp_file_findings(
    dir: &std::path::Path,
    wanted: impl Fn(&str) -> bool,
    message: &str,
    opts: &Options,
    remove: impl Fn(&std::path::Path) -> Result<bool>,
    report: &mut Report,
) {
    for (name, path) in logbook_store::fs::temp_files(dir) {
        if !wanted(&name) {
            continue;
        }
        let fixed = opts.fix.then(|| match remove(&path) {
            Ok(true) => "removed".to_string(),
            Ok(false) => "left alone: it may belong to a write still under way".to_string(),
            Err(e) => format!("could not remove it: {e}"),
        });
        report.findings.push(Finding {
            kind: "temp-file",
            path,
            message: message.to_string(),
            fixed,
            next: None,
        });
    }
}

/// A hook as a finding names it: `the Stop hook`, or `a hook` when the
/// event is not known.
fn hook_named(event: &str) -> String {
    if event.trim().is_empty() {
        "a hook".into()
    } else {
        format!("the {event} hook")
    }
}

#[cfg(test)]
mod tests {
    use super::hook_named;

    #[test]
    fn a_hook_is_named_without_a_wrong_article() {
        assert_eq!(hook_named("event"), "the event hook");
        assert_eq!(hook_named("Stop"), "the Stop hook");
        assert_eq!(hook_named(" "), "a hook");
    }
}
