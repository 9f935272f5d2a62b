//! The run folders, checked in one streamed pass on every core: each
//! manifest is read and parsed once for all run checks (corrupt, wrong
//! folder, wrong-typed fields, abandoned, interrupted writes, no manifest),
//! and only findings are kept, so doctor's time is linear in the runs and its
//! memory does not grow with them, rather than reading each manifest once
//! per check and holding them all at once.

use std::ffi::OsString;
use std::io::Read as _;
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use jiff::{SignedDuration, Timestamp};
use rustix::fs::{FileType, Mode, OFlags, RawDir};

use super::{Finding, Options, Report, reason_without_path, temp_file_findings};
use crate::error::{Error, Result};
use crate::model::ids::RunId;
use crate::model::run::{MANIFEST_FILE, RunStatus, parse_manifest};
use crate::model::text;
use crate::ops::run;
use crate::store::{self, Project};

/// Run folders handed to a worker at a time: big enough that the channel
/// costs nothing, small enough that the folder names in flight stay few.
const BATCH: usize = 256;

/// Progress of a long check: called with the number of run folders done.
pub type Progress<'a> = &'a (dyn Fn(u64) + Sync);

/// Checks every run folder; findings come out sorted by folder.
pub(super) fn check(
    p: &Project,
    opts: &Options,
    report: &mut Report,
    progress: Option<Progress<'_>>,
) -> Result<()> {
    let dir = &p.config.agent_outputs_folder;
    let listing = match std::fs::read_dir(dir) {
        Ok(l) => l,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io(dir, e)),
    };
    // Each run folder is opened relative to this one (`{run}`, not the
    // whole path, resolved per run); without it, by path.
    let runs_fd = open_dir(rustix::fs::CWD, dir).ok();
    let runs_fd = runs_fd.as_ref().map(|fd| fd.as_fd());
    let now = crate::clock::now();
    let limit = SignedDuration::from_secs_f64(opts.abandoned_after_hours.max(0.0) * 3600.0);
    let cutoff = now.checked_sub(limit).unwrap_or(Timestamp::MIN);
    let found: Mutex<Vec<(OsString, Finding)>> = Mutex::new(vec![]);
    let checked = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(1, 8);
    let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<(OsString, PathBuf)>>(workers * 2);
    let rx = Mutex::new(rx);
    let walked = std::thread::scope(|scope| -> Result<()> {
        for _ in 0..workers {
            let (rx, found, checked, done) = (&rx, &found, &checked, &done);
            scope.spawn(move || {
                let mut scratch = Scratch::default();
                loop {
                    let batch = match rx.lock() {
                        Ok(rx) => rx.recv(),
                        Err(_) => return,
                    };
                    let Ok(batch) = batch else { return };
                    let mut mine = vec![];
                    let size = batch.len();
                    for (name, folder) in batch {
                        let mut push = |f: Finding| mine.push((name.clone(), f));
                        let at = Folder {
                            runs: runs_fd,
                            name: &name,
                            path: &folder,
                        };
                        if check_folder(p, opts, cutoff, now, at, &mut scratch, &mut push) {
                            checked.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    if let Ok(mut all) = found.lock() {
                        all.append(&mut mine);
                    }
                    let n = done.fetch_add(size, Ordering::Relaxed) + size;
                    if let Some(cb) = progress {
                        cb(n as u64);
                    }
                }
            });
        }
        let mut batch = Vec::with_capacity(BATCH);
        for entry in listing {
            let entry = entry.map_err(|e| Error::io(dir, e))?;
            if !entry.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            batch.push((entry.file_name(), entry.path()));
            if batch.len() == BATCH
                && tx
                    .send(std::mem::replace(&mut batch, Vec::with_capacity(BATCH)))
                    .is_err()
            {
                break;
            }
        }
        if !batch.is_empty() {
            let _ = tx.send(batch);
        }
        drop(tx);
        Ok(())
    });
    walked?;
    let mut found = found
        .into_inner()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    // Stable: one folder's findings keep the order its checks made them in.
    found.sort_by(|a, b| a.0.cmp(&b.0));
    report.runs_checked = checked.into_inner();
    report.findings.extend(found.into_iter().map(|(_, f)| f));
    Ok(())
}

/// What a worker reuses from one run folder to the next, so a folder
/// costs no allocation for its listing or its manifest's bytes.
struct Scratch {
    dents: Vec<MaybeUninit<u8>>,
    text: Vec<u8>,
}

impl Default for Scratch {
    fn default() -> Self {
        Scratch {
            dents: vec![MaybeUninit::uninit(); 16 * 1024],
            text: Vec::with_capacity(64 * 1024),
        }
    }
}

/// One run folder: its name in the open runs folder `runs`, and its path.
#[derive(Clone, Copy)]
struct Folder<'a> {
    runs: Option<BorrowedFd<'a>>,
    name: &'a OsString,
    path: &'a Path,
}

fn open_dir(at: BorrowedFd<'_>, path: impl rustix::path::Arg) -> rustix::io::Result<OwnedFd> {
    rustix::fs::openat(
        at,
        path,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

/// The manifest's text (`None`: there is none) and whether the folder
/// holds a temp file of an interrupted manifest write, read through the
/// open folder: one `openat` of the folder, its listing, one `openat` of
/// the manifest (no `stat`, no path walked again). `None` when the folder
/// cannot be opened so: the caller then reads by path, as before.
fn read_folder<'s>(
    at: Folder<'_>,
    manifest_temp: &str,
    scratch: &'s mut Scratch,
) -> Option<(Result<Option<&'s str>>, bool)> {
    let fd = open_dir(at.runs?, at.name.as_os_str()).ok()?;
    let mut temp = false;
    // What the listing says the manifest is: a regular file needs no `stat`.
    let mut manifest_type = None;
    let mut listing = RawDir::new(&fd, &mut scratch.dents);
    while let Some(entry) = listing.next() {
        let Ok(entry) = entry else {
            // Unlistable: let the by-path check decide.
            return None;
        };
        let name = entry.file_name().to_bytes();
        if name == MANIFEST_FILE.as_bytes() {
            manifest_type = Some(entry.file_type());
        }
        if name.starts_with(manifest_temp.as_bytes())
            && store::is_temp_file(&String::from_utf8_lossy(name))
        {
            temp = true;
        }
    }
    let path = || at.path.join(MANIFEST_FILE);
    // Without blocking: another tool's FIFO in the manifest's place would
    // hold the open until a writer came.
    let file = match rustix::fs::openat(
        &fd,
        MANIFEST_FILE,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        Ok(f) => std::fs::File::from(f),
        Err(rustix::io::Errno::NOENT) => return Some((Ok(None), temp)),
        Err(e) => return Some((Err(Error::io(path(), e.into())), temp)),
    };
    // Only a regular file is read: a device would be read without end. The
    // listing's type answers for nearly every folder; a symlink, or a file
    // system that does not say, is asked of the open file.
    if manifest_type != Some(FileType::RegularFile) {
        match file.metadata() {
            Ok(m) if m.is_file() => {}
            Ok(m) => {
                let e = Error::NotARegularFile {
                    what: "manifest",
                    path: path(),
                    found: store::fs::describe_file_type(m.file_type()),
                };
                return Some((Err(e), temp));
            }
            Err(e) => return Some((Err(Error::io(path(), e)), temp)),
        }
    }
    scratch.text.clear();
    // Through `Take`: `File`'s own `read_to_end` first asks for the size
    // and position (a `statx` and an `lseek` per manifest) to size a
    // buffer this one already has.
    if let Err(e) = file.take(u64::MAX).read_to_end(&mut scratch.text) {
        return Some((Err(Error::io(path(), e)), temp));
    }
    let text = std::str::from_utf8(&scratch.text).map_err(|_| {
        // What `read_to_string` says of such a file.
        Error::io(
            path(),
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "stream did not contain valid UTF-8",
            ),
        )
    });
    Some((text.map(Some), temp))
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

/// Every check of one run folder. Returns whether it held a manifest (a
/// run checked, readable or not).
fn check_folder(
    p: &Project,
    opts: &Options,
    cutoff: Timestamp,
    now: Timestamp,
    at: Folder<'_>,
    scratch: &mut Scratch,
    push: &mut dyn FnMut(Finding),
) -> bool {
    let (name, folder) = (at.name, at.path);
    let path = folder.join(MANIFEST_FILE);
    let manifest_temp = format!(".{MANIFEST_FILE}.");
    let owned;
    let (read, temp) = match read_folder(at, &manifest_temp, scratch) {
        Some((read, temp)) => (read.map_err(|e| unreadable(&e)), temp),
        None => {
            owned = store::read_optional(&path, "manifest");
            let read = owned.as_ref().map(|t| t.as_deref());
            (read.map_err(unreadable), true)
        }
    };
    let corrupt = |reason: String| corrupt_manifest(&path, &reason);
    let text = match read {
        Ok(Some(t)) => t,
        Ok(None) => {
            push(Finding {
                kind: "orphan-folder",
                path: folder.to_path_buf(),
                message: if RunId::parse(&name.to_string_lossy()).is_ok() {
                    "a run folder without manifest.json; listings show it by its UUID with status unknown until its manifest is written".into()
                } else {
                    "a folder in agent_outputs_folder without manifest.json whose name is not a run id; it is not listed as a run".into()
                },
                fixed: None,
            });
            return false;
        }
        Err(e) => {
            push(corrupt(e));
            return true;
        }
    };
    let name = name.to_string_lossy();
    let id = match RunId::parse(&name) {
        Ok(id) => id,
        Err(_) => {
            push(corrupt(format!(
                "folder name {name:?} is not a run id (a UUID)"
            )));
            return true;
        }
    };
    let (manifest, raw) = match parse_manifest(&path, text) {
        Ok(x) => x,
        Err(e) => {
            push(corrupt(e.to_string()));
            return true;
        }
    };
    if !manifest.session_id.eq_ignore_ascii_case(id.as_str()) {
        push(Finding {
            kind: "id-mismatch",
            path: path.clone(),
            message: format!(
                "the folder is run {id} but its manifest says session_id {:?}; a copied run folder needs its own id: set session_id to the folder name (or remove the copy)",
                manifest.session_id
            ),
            fixed: None,
        });
    }
    if manifest.execution.status == RunStatus::Running && manifest.started_at() < cutoff {
        let mut f = Finding {
            kind: "abandoned-run",
            path: path.clone(),
            message: format!(
                "run {id} ({} - {}) has been running since {} ({} ago); `logbook doctor --fix` marks it failed",
                manifest.agent_label(),
                manifest.workflow.name,
                manifest.execution.started_at,
                crate::clock::age(manifest.started_at(), now),
            ),
            fixed: None,
        };
        if opts.fix {
            f.fixed = Some(match run::mark_abandoned(p, &id) {
                Ok(true) => "marked failed with metadata.abandoned = true".into(),
                Ok(false) => "finished meanwhile; left as it is".into(),
                Err(e) => format!("could not mark it: {e}"),
            });
        }
        push(f);
    }
    let mut temps = Report::default();
    // Listed again by path only when the listing above saw such a file.
    if temp {
        temp_file_findings(
            folder,
            |name| name.starts_with(&manifest_temp),
            "a manifest write was interrupted here; the manifest itself is intact",
            opts,
            // Under the run's lock no writer is between temp file and rename, so
            // the file is an orphan.
            |temp| {
                let _guard = p.locks.exclusive(&id.lock_name())?;
                std::fs::remove_file(temp).map_err(|e| Error::io(temp, e))?;
                Ok(true)
            },
            &mut temps,
        );
    }
    temps.findings.into_iter().for_each(&mut *push);
    for field in text::wrong_type_fields_of(&raw, &manifest) {
        push(super::wrong_type_finding(&path, &field));
    }
    super::outputs::unconfined_outputs(folder, &manifest, push);
    true
}
