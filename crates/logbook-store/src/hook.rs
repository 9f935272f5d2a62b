//! What the agents' hooks leave for later, under `{root}/.logbook/hooks/`:
//!
//! - `queue/`: one file per event whose work is not done yet. A hook writes
//!   its event here before it acts and removes it once done, so work cut
//!   short (the hook's time ran out, a worker was killed, the disk filled)
//!   is found and finished by the next hook, the detached worker or
//!   `doctor --fix`. Every job can be done twice without harm.
//! - `failures.log`: one JSON line per hook that failed; the agent never
//!   sees the failure, `doctor` reports it. Kept to [`MAX_FAILURE_LOG`]
//!   bytes: the older half goes to `failures.log.1`.

use std::fs::{self, OpenOptions};
use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::{EntryKind, Project};
use logbook_model::agent_log::Format;
use logbook_model::clock::Clock;
use logbook_model::error::{Error, Result};
use logbook_model::hook::event::HookEvent;

/// The lock a worker holds while it drains the queue: one at a time.
pub const WORKER_LOCK: &str = "hooks-worker";

/// How large `failures.log` grows before it is rotated.
pub const MAX_FAILURE_LOG: u64 = 256 * 1024;

/// One queued event and what the hook had settled about it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Job {
    /// When the hook received it (RFC 3339): the time its records carry,
    /// so doing the job again records the same thing.
    pub received_at: String,
    /// The agent that sent it, if the hook could tell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<Format>,
    /// The folder the event is about.
    pub cwd: PathBuf,
    /// The event as the agent sent it.
    pub event: HookEvent,
    /// How many times a worker failed at it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub attempts: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A queued job's file.
#[derive(Debug, Clone)]
pub struct Queued {
    /// The file (its name orders the queue by arrival).
    pub path: PathBuf,
    /// The job, or why its file could not be read.
    pub job: std::result::Result<Job, String>,
    /// How long ago it was queued.
    pub age: std::time::Duration,
}

fn hooks_dir(p: &Project) -> PathBuf {
    p.config.state_dir().join("hooks")
}

fn queue_dir(p: &Project) -> PathBuf {
    hooks_dir(p).join("queue")
}

/// `{root}/.logbook/hooks/failures.log`.
pub fn failure_log(p: &Project) -> PathBuf {
    hooks_dir(p).join("failures.log")
}

/// Writes `job` to the queue, durably, and returns its file.
pub fn enqueue(p: &Project, job: &Job) -> Result<PathBuf> {
    // The name orders the queue, oldest first: the system clock even when
    // `LOGBOOK_NOW` pins "now", or every job of a pinned test would share
    // one number and be done in no particular order.
    let nanos = Clock::SYSTEM.now().as_nanosecond().max(0);
    let name = format!(
        "{nanos:024}-{}-{}.json",
        std::process::id(),
        &uuid::Uuid::new_v4().simple().to_string()[..8]
    );
    let path = queue_dir(p).join(name);
    rewrite_job(&path, job)?;
    Ok(path)
}

/// Writes `job` to its queue file `path` (a new one, or again with its
/// attempts counted).
pub fn rewrite_job(path: &Path, job: &Job) -> Result<()> {
    let bytes = serde_json::to_vec(job).map_err(|e| Error::Corrupt {
        path: path.to_path_buf(),
        what: "hook job",
        reason: e.to_string(),
    })?;
    // A queued event holds the agent's prompt and paths: its owner's only.
    crate::write_atomic_private(path, &bytes)
}

/// What every job's lock name starts with.
const JOB_LOCK_PREFIX: &str = "hook-job-";

/// The lock that keeps two processes from doing one job at once: taken
/// with [`crate::Locks::try_exclusive_once`], so its file goes with it.
pub fn job_lock_name(path: &Path) -> String {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!("{JOB_LOCK_PREFIX}{stem}")
}

/// Removes the lock files of jobs that are no longer queued (their holder
/// was killed before it let go); returns how many (`doctor --fix`).
pub fn remove_stale_job_locks(p: &Project) -> Result<usize> {
    let queue = queue_dir(p);
    p.locks.remove_stale(JOB_LOCK_PREFIX, &|name| {
        name.strip_prefix(JOB_LOCK_PREFIX)
            .is_some_and(|stem| job_gone(&queue, stem))
    })
}

/// Whether the job whose lock is `hook-job-{stem}` is no longer queued.
fn job_gone(queue: &Path, stem: &str) -> bool {
    !queue.join(format!("{stem}.json")).exists()
}

/// The lock files of jobs that are no longer queued, for `doctor`.
pub fn stale_job_locks(p: &Project) -> Result<Vec<PathBuf>> {
    let queue = queue_dir(p);
    Ok(crate::entries(p.locks.dir(), EntryKind::File)?
        .into_iter()
        .filter(|(name, _)| {
            name.strip_prefix(JOB_LOCK_PREFIX)
                .and_then(|n| n.strip_suffix(".lock"))
                .is_some_and(|stem| job_gone(&queue, stem))
        })
        .map(|(_, path)| path)
        .collect())
}

/// Every queued job, oldest first, each with its age by the clock
/// (the project's, which `LOGBOOK_NOW` sets), so a test can age a job
/// without waiting.
pub fn queued(p: &Project) -> Result<Vec<Queued>> {
    let now = p.clock.system_time();
    let mut out = vec![];
    for (name, path) in crate::fs::entries(&queue_dir(p), EntryKind::File)? {
        if !name.ends_with(".json") {
            continue;
        }
        let read = crate::read_with_metadata(&path, "hook job");
        let (job, age) = match read {
            // Done and removed by another process since the listing.
            Ok(None) => continue,
            Ok(Some((m, text))) => (
                serde_json::from_str::<Job>(&text).map_err(|e| e.to_string()),
                m.modified()
                    .ok()
                    .and_then(|t| now.duration_since(t).ok())
                    .unwrap_or_default(),
            ),
            Err(e) => (Err(e.to_string()), Default::default()),
        };
        out.push(Queued { path, job, age });
    }
    Ok(out)
}

/// Whether queued job `path` is still there (another worker may have done
/// it meanwhile).
pub fn job_exists(path: &Path) -> bool {
    path.exists()
}

/// Whether `path` is a file that may be run: a regular file with an
/// execute bit (the `logbook` a hook calls).
pub fn is_runnable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Removes a job that is done (or that no one can do: an unreadable file).
pub fn remove_job(path: &Path) -> Result<()> {
    match fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io(path, e)),
    }
}

/// One line of `failures.log`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    /// When it failed.
    pub at: String,
    /// The event (`Stop`, …), or `worker`.
    pub event: String,
    /// The agent session, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// What went wrong.
    pub error: String,
}

/// Appends `failure` to the failure log (rotating it when large). A log
/// that cannot be written either is reported to the caller, who has
/// nowhere else to put it.
pub fn log_failure(p: &Project, failure: &Failure) -> Result<()> {
    let path = failure_log(p);
    let mut line = serde_json::to_string(failure).map_err(|e| Error::Corrupt {
        path: path.clone(),
        what: "hook failure",
        reason: e.to_string(),
    })?;
    line.push('\n');
    if fs::metadata(&path).is_ok_and(|m| m.len() > MAX_FAILURE_LOG) {
        let _ = fs::rename(&path, path.with_extension("log.1"));
    }
    // A failure names the agent's files and what went wrong with them:
    // its owner's only, like the queue beside it.
    let open = || {
        OpenOptions::new()
            .create(true)
            .append(true)
            .mode(crate::fs::PRIVATE_FILE_MODE)
            .open(&path)
    };
    let mut f = match open() {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let dir = hooks_dir(p);
            fs::DirBuilder::new()
                .recursive(true)
                .mode(crate::fs::PRIVATE_FOLDER_MODE)
                .create(&dir)
                .map_err(|e| Error::io(&dir, e))?;
            open()
        }
        other => other,
    }
    .map_err(|e| Error::io(&path, e))?;
    #[cfg(feature = "testing")]
    if let Some(e) = crate::testing::write_fault() {
        return Err(Error::io(&path, e));
    }
    // One write of one line: appends of concurrent hooks do not interleave.
    f.write_all(line.as_bytes())
        .map_err(|e| Error::io(&path, e))
}

/// The failures logged and not yet cleared, oldest first; lines that do
/// not parse are given as their text.
pub fn failures(p: &Project) -> Result<Vec<Failure>> {
    let path = failure_log(p);
    let text = crate::read_optional(&path, "hook failure log")?.unwrap_or_default();
    Ok(text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            serde_json::from_str(l).unwrap_or_else(|_| Failure {
                at: String::new(),
                event: String::new(),
                session_id: None,
                error: l.to_string(),
            })
        })
        .collect())
}

/// Clears the failure log once its failures were reported and dealt with
/// (`doctor --fix`): it is kept as `failures.log.1` for reading.
pub fn clear_failures(p: &Project) -> Result<()> {
    let path = failure_log(p);
    match fs::rename(&path, path.with_extension("log.1")) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io(&path, e)),
    }
}
