//! The run folders, checked in one streamed pass on every core: each
//! manifest is read and parsed once for all run checks (corrupt, wrong
//! folder, wrong-typed fields, abandoned, interrupted writes, no manifest),
//! and only findings are kept, so doctor's time is linear in the runs and its
//! memory does not grow with them, rather than reading each manifest once
//! per check and holding them all at once.
//!
//! By default a finished run whose manifest's stamp is the one the index
//! parsed is not read again
//! ([`Reader::settled_runs`](logbook_index::Reader::settled_runs)): its
//! folder is listed (interrupted writes), and each registered output `lstat`ed (a
//! symlink or hard link swapped in), nothing more. What only a parse
//! finds in such a manifest (a wrong-typed field, an id that is not its
//! folder's) is `doctor --full`'s, which reads every manifest.

use crate::Logbook;
use std::ffi::OsStr;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use jiff::{SignedDuration, Timestamp};
use serde_json::Value;

use super::{Finding, Options, Report, reason_without_path, temp_file_findings};
use crate::error::{Error, Result};
use crate::model::ids::RunId;
use crate::model::run::{MANIFEST_FILE, Manifest, RunStatus, parse_manifest};
use crate::model::text;
use crate::ops::run;
use logbook_index::{FolderStamps, Index, SettledRun, WalkedNames};
use logbook_store::runs::{ManifestStamp, ReadBuffers, RunFolder, RunsDir};

/// Run folders handed to a worker at a time: big enough that the channel
/// costs nothing, small enough that the folder names in flight stay few.
const BATCH: usize = 256;

/// Progress of a long check: called with the number of run folders done.
pub type Progress<'a> = &'a (dyn Fn(u64) + Sync);

/// Checks every run folder; findings come out sorted by folder. Returns
/// the folder names it walked, which the index check after it compares
/// with the index instead of listing the runs folder again.
pub(super) fn check(
    p: &Logbook,
    opts: &Options,
    report: &mut Report,
    progress: Option<Progress<'_>>,
) -> Result<WalkedNames> {
    let dir = &p.config.agent_outputs_folder;
    // Begun before the listing, so its names stand for the folder as listed.
    let walked = Mutex::new(WalkedNames::begin(p));
    let listing = logbook_store::runs::walk(dir)?;
    // Each run folder is opened relative to this one (`{run}`, not the
    // whole path, resolved per run); without it, by path.
    let runs_dir = RunsDir::open(dir).ok().flatten();
    let now = p.clock.now();
    let limit = SignedDuration::from_secs_f64(opts.abandoned_after_hours.max(0.0) * 3600.0);
    let cutoff = now.checked_sub(limit).unwrap_or(Timestamp::MIN);
    let pass = Pass {
        p,
        opts,
        runs_dir: runs_dir.as_ref(),
        times: (cutoff, now),
        progress,
        found: Mutex::new(vec![]),
        checked: AtomicUsize::new(0),
        done: AtomicUsize::new(0),
        walked,
    };
    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(1, 8);
    // The index is trusted for unchanged finished runs unless `--full`;
    // without a usable one, every manifest is read.
    let index = (!opts.full).then(|| Index::open_existing(p)).flatten();
    let (tx, rx) = std::sync::mpsc::sync_channel::<Batch>(workers * 2);
    let rx = Mutex::new(rx);
    std::thread::scope(|scope| -> Result<()> {
        for _ in 0..workers {
            let (pass, rx) = (&pass, &rx);
            scope.spawn(move || pass.work(rx));
        }
        let mut batch = Vec::with_capacity(BATCH);
        for folder in listing {
            batch.push(folder?);
            if batch.len() == BATCH {
                let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH));
                if tx.send(with_settled(index.as_ref(), full)).is_err() {
                    break;
                }
            }
        }
        if !batch.is_empty() {
            let _ = tx.send(with_settled(index.as_ref(), batch));
        }
        drop(tx);
        Ok(())
    })?;
    let mut walked = pass
        .walked
        .into_inner()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let mut found = pass
        .found
        .into_inner()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    // By folder name, read from each finding's path rather than kept beside
    // it: at a million runs a tenth may be abandoned, and each byte kept
    // per finding counts. Stable: one folder's findings keep the order its
    // checks made them in.
    found.sort_by(|a, b| folder_name(dir, a).cmp(folder_name(dir, b)));
    report.runs_checked = pass.checked.into_inner();
    if report.findings.is_empty() {
        report.findings = found;
    } else {
        report.findings.append(&mut found);
    }
    walked.finish();
    Ok(walked)
}

/// What the workers of one pass share: what they check with, and what
/// they found.
struct Pass<'a> {
    p: &'a Logbook,
    opts: &'a Options,
    runs_dir: Option<&'a RunsDir>,
    /// `(cutoff, now)`: a run still running that started before `cutoff`
    /// is abandoned.
    times: (Timestamp, Timestamp),
    progress: Option<Progress<'a>>,
    found: Mutex<Vec<Finding>>,
    /// Run folders that held a manifest.
    checked: AtomicUsize,
    /// Run folders done, for `progress`.
    done: AtomicUsize,
    walked: Mutex<WalkedNames>,
}

impl Pass<'_> {
    /// One worker: checks batches until the channel closes.
    fn work(&self, rx: &Mutex<std::sync::mpsc::Receiver<Batch>>) {
        let mut buffers = ReadBuffers::default();
        let mut stamps = Vec::with_capacity(BATCH);
        loop {
            let batch = match rx.lock() {
                Ok(rx) => rx.recv(),
                Err(_) => return,
            };
            let Ok(batch) = batch else { return };
            self.check_batch(&batch, &mut buffers, &mut stamps);
        }
    }

    /// Checks one batch of run folders (a settled run only as far as its
    /// index row allows), then adds its findings, walked names and
    /// progress to the pass's.
    fn check_batch(
        &self,
        batch: &Batch,
        buffers: &mut ReadBuffers,
        stamps: &mut Vec<Option<FolderStamps>>,
    ) {
        let (p, opts) = (self.p, self.opts);
        let mut mine = vec![];
        stamps.clear();
        for (folder, settled) in batch {
            // Held until all are sorted: no spare capacity.
            let mut push = |mut f: Finding| {
                f.message.shrink_to_fit();
                f.path.shrink_to_fit();
                mine.push(f);
            };
            let at = (self.runs_dir, folder);
            let trusted = settled
                .as_ref()
                .is_some_and(|s| check_settled(p, opts, at, s, buffers, &mut push));
            let checked_now = match trusted {
                true => Checked::Run(None),
                false => check_folder(p, opts, self.times, at, buffers, &mut push),
            };
            let read = match checked_now {
                Checked::Run(read) => {
                    self.checked.fetch_add(1, Ordering::Relaxed);
                    read
                }
                Checked::NoManifest => None,
            };
            stamps.push(read);
        }
        if let Ok(mut all) = self.found.lock() {
            all.append(&mut mine);
        }
        if let Ok(mut walked) = self.walked.lock() {
            for ((folder, _), read) in batch.iter().zip(stamps.iter()) {
                walked.push(folder.name_bytes(), *read);
            }
        }
        let n = self.done.fetch_add(batch.len(), Ordering::Relaxed) + batch.len();
        if let Some(cb) = self.progress {
            cb(n as u64);
        }
    }
}

/// The run folder a finding of [`check`] is about: the first component of
/// its path below the runs folder `dir` (every such finding is in one).
fn folder_name<'a>(dir: &Path, f: &'a Finding) -> &'a OsStr {
    f.path
        .strip_prefix(dir)
        .ok()
        .and_then(|rel| rel.iter().next())
        .unwrap_or(f.path.as_os_str())
}

/// Run folders handed to a worker, each with what the index holds of it
/// if it is a finished run the index may be trusted for.
type Batch = Vec<(RunFolder, Option<SettledRun>)>;

/// `folders` with what `index` holds of each as a finished run (nothing
/// without an index, or when it cannot answer: then each is read).
fn with_settled(index: Option<&Index>, folders: Vec<RunFolder>) -> Batch {
    let settled = index.and_then(|index| {
        let manifests: Vec<_> = folders.iter().map(RunFolder::manifest).collect();
        index.read().settled_runs(&manifests).ok()
    });
    match settled {
        Some(settled) => folders.into_iter().zip(settled).collect(),
        None => folders.into_iter().map(|f| (f, None)).collect(),
    }
}

/// The checks of a finished run the index parsed, if its manifest's stamp
/// is still the one parsed: interrupted writes from its folder's listing,
/// and outputs swapped for a symlink or a hard link from one `lstat` each.
/// Returns false, having checked nothing, when the folder must be read
/// ([`check_folder`]): the stamp moved, or the folder could not be listed.
fn check_settled(
    p: &Logbook,
    opts: &Options,
    (runs_dir, at): (Option<&RunsDir>, &RunFolder),
    settled: &SettledRun,
    buffers: &mut ReadBuffers,
    push: &mut dyn FnMut(Finding),
) -> bool {
    let Some(runs_dir) = runs_dir else {
        return false;
    };
    let manifest_temp = format!(".{MANIFEST_FILE}.");
    let Some(probe) = runs_dir.probe_folder(at, &manifest_temp, buffers) else {
        return false;
    };
    let (size, mtime) = settled.stamp;
    if probe.manifest != ManifestStamp::Stamp(size, mtime) {
        return false;
    }
    let Some(id) = at.id() else {
        return false;
    };
    if probe.temp {
        manifest_temp_findings(p, opts, &at.path, &id, &manifest_temp, push);
    }
    for file in &settled.outputs {
        if let Some(u) = runs_dir.output_unconfined(at, file) {
            push(super::outputs::unconfined_finding(&at.path, file, u));
        }
    }
    true
}

/// The temp files an interrupted manifest write left in run `folder`, and
/// with `--fix` their removal under the run's lock.
fn manifest_temp_findings(
    p: &Logbook,
    opts: &Options,
    folder: &Path,
    id: &RunId,
    manifest_temp: &str,
    push: &mut dyn FnMut(Finding),
) {
    let mut temps = Report::default();
    temp_file_findings(
        folder,
        |name| name.starts_with(manifest_temp),
        "a manifest write was interrupted here; the manifest itself is intact",
        opts,
        // Under the run's lock no writer is between temp file and rename, so
        // the file is an orphan.
        |temp| {
            let _guard = p.locks.exclusive(&id.lock_name())?;
            logbook_store::fs::remove_temp_file(temp)?;
            Ok(true)
        },
        &mut temps,
    );
    temps.findings.into_iter().for_each(push);
}

/// Why a manifest could not be read, for its finding (which names the
/// path itself).
fn unreadable(e: &Error) -> String {
    match e {
        Error::NotARegularFile { found, .. } => format!("{found}, not a regular file"),
        e => e.to_string(),
    }
}

/// The finding for a manifest that cannot be read or parsed, `reason`
/// as its reader gave it.
pub(super) fn corrupt_manifest(path: &Path, reason: &str) -> Finding {
    Finding {
        kind: "corrupt-manifest",
        message: format!(
            "{}; listings skip this run until the file is repaired",
            unreadable_reason(reason, path)
        ),
        path: path.to_path_buf(),
        fixed: None,
        next: None,
    }
}

/// Why the manifest at `path` could not be read, without the path (the
/// finding names it): as [`unreadable`] words it, whether `reason` came
/// from this pass or from the index.
pub(super) fn unreadable_reason<'a>(reason: &'a str, path: &Path) -> &'a str {
    let reason = reason_without_path(reason, path);
    reason
        .strip_prefix(&format!("manifest {} is ", path.display()))
        .unwrap_or(reason)
}

/// A folder without a manifest, unless it is the live remainder of an
/// interrupted archive (`moves` names that).
fn orphan_folder(p: &Logbook, name: &OsStr, folder: &Path) -> Option<Finding> {
    if super::moves::is_move_remainder(p, &name.to_string_lossy()) {
        return None;
    }
    Some(Finding {
        kind: "orphan-folder",
        path: folder.to_path_buf(),
        message: if RunId::parse(&name.to_string_lossy()).is_ok() {
            "a run folder without manifest.json; listings show it by its UUID with status unknown until its manifest is written".into()
        } else {
            "a folder in agent_outputs_folder without manifest.json whose name is not a run id; it is not listed as a run".into()
        },
        fixed: None,
        next: None,
    })
}

/// The run a folder holds: its id (the folder's name) and its manifest
/// parsed, with the raw value read; else why it is corrupt.
fn parsed_run(
    name: &OsStr,
    path: &Path,
    text: &str,
) -> std::result::Result<(RunId, Manifest, Value), String> {
    let name = name.to_string_lossy();
    let Ok(id) = RunId::parse(&name) else {
        return Err(format!("folder name {name:?} is not a run id (a UUID)"));
    };
    let (manifest, raw) = parse_manifest(path, text).map_err(|e| e.to_string())?;
    Ok((id, manifest, raw))
}

/// A manifest whose `session_id` is not its folder's run id (a copied
/// run folder).
fn id_mismatch(path: &Path, id: &RunId, manifest: &Manifest) -> Option<Finding> {
    if manifest.session_id.eq_ignore_ascii_case(id.as_str()) {
        return None;
    }
    Some(Finding {
        kind: "id-mismatch",
        path: path.to_path_buf(),
        message: format!(
            "the folder is run {id} but its manifest says session_id {:?}; a copied run folder needs its own id: set session_id to the folder name (or remove the copy)",
            manifest.session_id
        ),
        fixed: None,
        next: None,
    })
}

/// A run still running that started before `cutoff`; `--fix` marks it
/// failed.
fn abandoned_run(
    p: &Logbook,
    opts: &Options,
    (cutoff, now): (Timestamp, Timestamp),
    id: &RunId,
    path: &Path,
    manifest: &Manifest,
) -> Option<Finding> {
    if manifest.execution.status != RunStatus::Running || manifest.started_at() >= cutoff {
        return None;
    }
    let mut f = Finding {
        kind: "abandoned-run",
        path: path.to_path_buf(),
        message: format!(
            "run {id} ({} - {}) has been running since {} ({} ago)",
            manifest.agent_label(),
            manifest.workflow.name,
            manifest.execution.started_at,
            crate::clock::age(manifest.started_at(), now),
        ),
        fixed: None,
        next: super::fix_does(" marks it failed"),
    };
    if opts.fix {
        f.fixed = Some(match run::mark_abandoned(p, id) {
            Ok(true) => "marked failed with metadata.abandoned = true".into(),
            Ok(false) => "finished meanwhile; left as it is".into(),
            Err(e) => format!("could not mark it: {e}"),
        });
    }
    Some(f)
}

/// A manifest seed 000's own schema would reject, with its `problems`.
fn seed_schema_finding(path: &Path, problems: &[String]) -> Finding {
    Finding {
        kind: "seed-schema",
        path: path.to_path_buf(),
        message: format!(
            "seed 000's schema would reject this manifest: {}; Logbook still lists the run, but the seed's own readers refuse it; fix these fields in the file",
            problems.join("; ")
        ),
        fixed: None,
        next: None,
    }
}

/// What [`check_folder`] found a folder to be.
enum Checked {
    /// A folder without a manifest: no run.
    NoManifest,
    /// A run, readable or not, with the stamps the check read of its files
    /// when it read them all (for the index's comparison after the pass).
    Run(Option<FolderStamps>),
}

/// Every check of one run folder. `(cutoff, now)`: a run still running
/// that started before `cutoff` is abandoned.
fn check_folder(
    p: &Logbook,
    opts: &Options,
    (cutoff, now): (Timestamp, Timestamp),
    (runs_dir, at): (Option<&RunsDir>, &RunFolder),
    buffers: &mut ReadBuffers,
    push: &mut dyn FnMut(Finding),
) -> Checked {
    let (name, folder) = (&at.name, at.path.as_path());
    let path = at.manifest();
    let manifest_temp = format!(".{MANIFEST_FILE}.");
    let owned;
    let opened = runs_dir.and_then(|runs| runs.read_folder(at, &manifest_temp, buffers));
    let (read, temp) = match &opened {
        Some(opened) => (
            opened.manifest.as_ref().map(|t| *t).map_err(unreadable),
            opened.temp,
        ),
        None => {
            owned = logbook_store::read_optional(&path, "manifest");
            let read = owned.as_ref().map(|t| t.as_deref());
            (read.map_err(unreadable), true)
        }
    };
    let corrupt = |reason: String| corrupt_manifest(&path, &reason);
    let text = match read {
        Ok(Some(t)) => t,
        Ok(None) => {
            if let Some(f) = orphan_folder(p, name, folder) {
                push(f);
            }
            return Checked::NoManifest;
        }
        Err(e) => {
            push(corrupt(e));
            return Checked::Run(None);
        }
    };
    let (id, manifest, raw) = match parsed_run(name, &path, text) {
        Ok(parsed) => parsed,
        Err(reason) => {
            push(corrupt(reason));
            return Checked::Run(None);
        }
    };
    if let Some(f) = id_mismatch(&path, &id, &manifest) {
        push(f);
    }
    let abandoned = abandoned_run(p, opts, (cutoff, now), &id, &path, &manifest);
    // Its stamps are the old manifest's once `--fix` marked it failed.
    let rewritten = abandoned.is_some() && opts.fix;
    if let Some(f) = abandoned {
        push(f);
    }
    // Listed again by path only when the listing above saw such a file.
    if temp {
        manifest_temp_findings(p, opts, folder, &id, &manifest_temp, push);
    }
    for field in text::wrong_type_fields_of(&raw, &manifest) {
        push(super::wrong_type_finding(&path, &field));
    }
    let problems = manifest.seed_schema_problems();
    if !problems.is_empty() {
        push(seed_schema_finding(&path, &problems));
    }
    let files = manifest.outputs.iter().map(|o| o.file.as_str());
    let Some(opened) = opened.filter(|_| !rewritten) else {
        super::outputs::unconfined_outputs(folder, &manifest, push);
        return Checked::Run(None);
    };
    let outputs = opened.outputs(folder, files, |file, u| {
        push(super::outputs::unconfined_finding(folder, file, u));
    });
    Checked::Run(
        opened
            .stamp
            .map(|manifest| FolderStamps { manifest, outputs }),
    )
}
