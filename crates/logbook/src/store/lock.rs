//! Cross-process locks: `std`'s `File::lock` on a separate file under
//! `{project-root}/.logbook/locks/`, never on the file that gets renamed over
//! (a lock on a renamed-over inode protects nothing) and never inside run
//! folders, which the viewer shows to people.

use std::fs::{self, File, OpenOptions, TryLockError};
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::error::{Error, Result};

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
    /// [`crate::store::state_ignore`]).
    state_dir: Option<PathBuf>,
}

/// An exclusive (or shared) lock, released when dropped.
#[derive(Debug)]
pub struct LockGuard {
    _file: File,
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
    pub fn in_state_dir(state_dir: PathBuf) -> Self {
        Locks {
            state_dir: Some(state_dir.clone()),
            ..Locks::new(state_dir.join("locks"))
        }
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
            Ok(()) => Ok(Some(LockGuard { _file: file })),
            Err(TryLockError::WouldBlock) => Ok(None),
            Err(TryLockError::Error(e)) => Err(Error::io(&path, e)),
        }
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
                    crate::store::state_ignore::ensure(state_dir)?;
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
        Ok(LockGuard { _file: file })
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
    fn try_exclusive_sees_a_holder() {
        let dir = tempfile::tempdir().unwrap();
        let locks = Locks::new(dir.path().to_path_buf());
        let held = locks.exclusive("y").unwrap();
        assert!(locks.try_exclusive("y").unwrap().is_none());
        drop(held);
        assert!(locks.try_exclusive("y").unwrap().is_some());
    }
}
