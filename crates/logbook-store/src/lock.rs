//! Cross-process locks: `std`'s `File::lock` on a separate file under
//! `{project-root}/.logbook/locks/`, never on the file that gets renamed over
//! (a lock on a renamed-over inode protects nothing) and never inside run
//! folders, which the viewer shows to people.

use std::fs::{self, File, OpenOptions, TryLockError};
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use logbook_model::error::{Error, Result};

/// Environment variable naming how many seconds to wait for a lock.
pub const LOCK_TIMEOUT_ENV: &str = "LOGBOOK_LOCK_TIMEOUT";
const DEFAULT_LOCK_TIMEOUT: Duration = Duration::from_secs(10);

/// The wait `LOGBOOK_LOCK_TIMEOUT` sets, if it is set to a number of
/// seconds: the index's SQLite lock follows it too, so the one setting the
/// lock-timeout hint names governs every lock wait.
pub fn timeout_from_env() -> Option<Duration> {
    std::env::var(LOCK_TIMEOUT_ENV)
        .ok()
        .and_then(|s| s.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(Duration::from_secs_f64)
}

/// Hands out the project's cross-process locks.
#[derive(Debug, Clone)]
pub struct Locks {
    dir: PathBuf,
    timeout: Duration,
    /// The project's state folder (`.logbook/`), which making `dir` may
    /// create: it gets its `.gitignore` then (see
    /// [`crate::state_ignore`]).
    state_dir: Option<PathBuf>,
}

/// An exclusive (or shared) lock, released when dropped.
#[derive(Debug)]
pub struct LockGuard {
    file: File,
    /// For a lock of one job ([`Locks::try_exclusive_once`]): its file,
    /// removed on release so that finished jobs leave no lock files.
    remove: Option<PathBuf>,
}

impl Drop for LockGuard {
    fn drop(&mut self) {
        // Removed while still held: whoever opened the file meanwhile
        // finds, once it has the lock, that the name no longer leads to
        // it, and opens the name again (see `Locks::try_exclusive_once`).
        if let Some(path) = self.remove.take()
            && same_file(&self.file, &path)
        {
            let _ = fs::remove_file(&path);
        }
    }
}

/// Whether `path` still names the file `file` has open.
fn same_file(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt as _;
    match (file.metadata(), fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

impl Locks {
    /// Locks kept in `dir`, waiting at most `LOGBOOK_LOCK_TIMEOUT` seconds.
    pub fn new(dir: PathBuf) -> Self {
        let timeout = timeout_from_env().unwrap_or(DEFAULT_LOCK_TIMEOUT);
        Locks {
            dir,
            timeout,
            state_dir: None,
        }
    }

    /// The locks of the project whose state folder is `state_dir`, kept in
    /// its `locks/`. Taking a lock is the first thing any write does, so
    /// the `.gitignore` is written when the state folder is first made.
    pub(crate) fn in_state_dir(state_dir: PathBuf) -> Self {
        Locks {
            state_dir: Some(state_dir.clone()),
            ..Locks::new(state_dir.join("locks"))
        }
    }

    /// The folder the lock files are in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Takes the exclusive lock called `name` (a validated id with a kind
    /// prefix, e.g. `session-SES202501-ACME-AUDIT`).
    pub fn exclusive(&self, name: &str) -> Result<LockGuard> {
        self.take(name, true, self.timeout)
    }

    /// Takes the exclusive lock called `name`, waiting up to `wait` (or the
    /// configured timeout, if longer): for locks held through long work,
    /// such as building the index, whose holder is busy, not stuck.
    pub fn exclusive_within(&self, name: &str, wait: Duration) -> Result<LockGuard> {
        self.take(name, true, wait.max(self.timeout))
    }

    /// Takes the lock called `name` shared: many readers that must not see
    /// the guarded thing change under them, no writer.
    pub fn shared(&self, name: &str) -> Result<LockGuard> {
        self.take(name, false, self.timeout)
    }

    /// Takes the exclusive lock called `name` only if nobody holds it:
    /// `Ok(None)` means a live process has it (used to tell a writer still at
    /// work from one that died).
    pub fn try_exclusive(&self, name: &str) -> Result<Option<LockGuard>> {
        let (path, file) = self.lock_file(name)?;
        match file.try_lock() {
            Ok(()) => Ok(Some(LockGuard { file, remove: None })),
            Err(TryLockError::WouldBlock) => Ok(None),
            Err(TryLockError::Error(e)) => Err(Error::io(&path, e)),
        }
    }

    /// [`Locks::try_exclusive`] for a lock that guards one short-lived
    /// thing (a queued hook job): its file is removed when the lock is
    /// released, so a thousand jobs do not leave a thousand files. A lock
    /// taken on a file its last holder removed meanwhile is let go and
    /// taken again on the name's new file; any file left by a killed
    /// holder is removed by [`Locks::remove_stale`].
    pub fn try_exclusive_once(&self, name: &str) -> Result<Option<LockGuard>> {
        loop {
            let (path, file) = self.lock_file(name)?;
            match file.try_lock() {
                Ok(()) if same_file(&file, &path) => {
                    return Ok(Some(LockGuard {
                        file,
                        remove: Some(path),
                    }));
                }
                Ok(()) => continue,
                Err(TryLockError::WouldBlock) => return Ok(None),
                Err(TryLockError::Error(e)) => return Err(Error::io(&path, e)),
            }
        }
    }

    /// [`Locks::try_exclusive_once`], waiting up to `wait` (or the
    /// configured timeout, if longer) for a holder to let go.
    pub fn exclusive_once_within(&self, name: &str, wait: Duration) -> Result<LockGuard> {
        let start = Instant::now();
        let timeout = wait.max(self.timeout);
        let mut pause = Duration::from_micros(200);
        loop {
            if let Some(held) = self.try_exclusive_once(name)? {
                return Ok(held);
            }
            if start.elapsed() >= timeout {
                return Err(Error::LockTimeout {
                    lock: self.dir.join(format!("{name}.lock")),
                    holder: "unknown".into(),
                    waited: start.elapsed(),
                });
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(10));
        }
    }

    /// Removes the lock files whose name starts with `prefix` that no live
    /// process holds and that `stale` says guard nothing any more (their
    /// job is gone): what a holder killed before its release left. Returns
    /// how many were removed.
    pub(crate) fn remove_stale(&self, prefix: &str, stale: &dyn Fn(&str) -> bool) -> Result<usize> {
        let mut removed = 0;
        for (file_name, _) in crate::entries(&self.dir, crate::EntryKind::File)? {
            let Some(name) = file_name
                .strip_suffix(".lock")
                .filter(|n| n.starts_with(prefix))
            else {
                continue;
            };
            if stale(name) && self.try_exclusive_once(name)?.is_some() {
                // Dropping the guard removed the file.
                removed += 1;
            }
        }
        Ok(removed)
    }

    /// The lock file called `name`, created if missing; never truncated,
    /// since another process may hold it and have written its pid there.
    fn lock_file(&self, name: &str) -> Result<(PathBuf, File)> {
        debug_assert!(!name.contains('/') && !name.contains(".."));
        let path = self.dir.join(format!("{name}.lock"));
        let open = || {
            OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
        };
        // The folder is made only when missing: this runs on every write.
        let file = match open() {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let new_state_dir = self.state_dir.as_ref().filter(|d| !d.exists());
                fs::create_dir_all(&self.dir).map_err(|e| Error::io(&self.dir, e))?;
                if let Some(state_dir) = new_state_dir {
                    crate::state_ignore::ensure(state_dir)?;
                }
                open()
            }
            other => other,
        }
        .map_err(|e| Error::io(&path, e))?;
        Ok((path, file))
    }

    fn take(&self, name: &str, exclusive: bool, timeout: Duration) -> Result<LockGuard> {
        let (path, mut file) = self.lock_file(name)?;
        let start = Instant::now();
        let mut pause = Duration::from_micros(200);
        loop {
            let attempt = if exclusive {
                file.try_lock()
            } else {
                file.try_lock_shared()
            };
            match attempt {
                Ok(()) => break,
                Err(TryLockError::WouldBlock) => {
                    if start.elapsed() >= timeout {
                        let mut holder = String::new();
                        let _ = file.read_to_string(&mut holder);
                        let holder = holder.trim();
                        return Err(Error::LockTimeout {
                            lock: path,
                            holder: if holder.is_empty() {
                                "unknown".into()
                            } else {
                                holder.into()
                            },
                            waited: start.elapsed(),
                        });
                    }
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(10));
                }
                Err(TryLockError::Error(e)) => return Err(Error::io(&path, e)),
            }
        }
        if exclusive {
            // Only for the timeout message of whoever waits next; failure to
            // record it does not weaken the lock. Written in place at a fixed
            // width, and not at all when it already names us: truncating
            // the file made ext4 wait for the journal to commit its old
            // block, which a writer's own fsync had just put there.
            let pid = format!("{:<10}", std::process::id());
            let mut held = [0u8; 10];
            if file.read_exact_at(&mut held, 0).is_err() || held != pid.as_bytes() {
                let _ = file.write_all_at(pid.as_bytes(), 0);
            }
        }
        Ok(LockGuard { file, remove: None })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_times_out_naming_holder() {
        let dir = tempfile::tempdir().unwrap();
        let mut locks = Locks::new(dir.path().to_path_buf());
        locks.timeout = Duration::from_millis(50);
        let _held = locks.exclusive("x").unwrap();
        // A second handle in the same process conflicts like another process.
        let err = locks.exclusive("x").unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains(&std::process::id().to_string()), "{msg}");
        assert!(
            err.hint().unwrap().contains("LOGBOOK_LOCK_TIMEOUT"),
            "{err:?}"
        );
    }

    #[test]
    fn a_lock_taken_once_goes_with_its_release_and_is_never_held_twice() {
        let dir = tempfile::tempdir().unwrap();
        let locks = Locks::new(dir.path().to_path_buf());
        let file = dir.path().join("job-1.lock");
        let held = locks.try_exclusive_once("job-1").unwrap().unwrap();
        assert!(locks.try_exclusive_once("job-1").unwrap().is_none());
        // Someone opened the file before the holder let go.
        let waiter = File::open(&file).unwrap();
        drop(held);
        assert!(!file.exists());
        // The waiter gets the lock on the removed file: it guards nothing,
        // and whoever takes the name now is not stopped by it.
        waiter.try_lock().unwrap();
        let again = locks.try_exclusive_once("job-1").unwrap().unwrap();
        assert!(file.exists());
        assert!(locks.try_exclusive_once("job-1").unwrap().is_none());
        drop(again);
        assert!(!file.exists());
        // What a killed holder left is removed only when asked for and free.
        std::fs::write(dir.path().join("job-2.lock"), "").unwrap();
        std::fs::write(dir.path().join("job-3.lock"), "").unwrap();
        let busy = File::open(dir.path().join("job-3.lock")).unwrap();
        busy.try_lock().unwrap();
        assert_eq!(locks.remove_stale("job-", &|_| true).unwrap(), 1);
        assert!(!dir.path().join("job-2.lock").exists());
        assert!(dir.path().join("job-3.lock").exists());
        drop(busy);
        assert_eq!(locks.remove_stale("job-", &|n| n != "job-3").unwrap(), 0);
    }

    #[test]
    fn try_exclusive_sees_a_holder() {
        let dir = tempfile::tempdir().unwrap();
        let locks = Locks::new(dir.path().to_path_buf());
        let held = locks.exclusive("y").unwrap();
        assert!(locks.try_exclusive("y").unwrap().is_none());
        drop(held);
        assert!(locks.try_exclusive("y").unwrap().is_some());
    }
}
