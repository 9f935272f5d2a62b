//! The one way Logbook changes a file: an exclusive cross-process lock on a
//! separate lock file, read, change, write a temp file beside the target,
//! fsync, rename over, fsync the folder. Readers take no lock and see either
//! the old or the new file, never a torn one.
//!
//! Locks live in `{project-root}/.logbook/locks/`, never next to the file that
//! gets renamed over (a lock on a renamed-over inode protects nothing) and
//! never inside run folders, which the viewer shows to people.

use std::fs::{self, File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::{Error, Result};

/// Environment variable naming how many seconds to wait for a lock.
pub const LOCK_TIMEOUT_ENV: &str = "LOGBOOK_LOCK_TIMEOUT";
const DEFAULT_LOCK_TIMEOUT: Duration = Duration::from_secs(10);

/// Hands out the project's cross-process locks.
#[derive(Debug, Clone)]
pub struct Locks {
    dir: PathBuf,
    timeout: Duration,
}

/// An exclusive (or shared) lock, released when dropped.
#[derive(Debug)]
pub struct LockGuard {
    _file: File,
}

impl Locks {
    /// Locks kept in `dir`, waiting at most `LOGBOOK_LOCK_TIMEOUT` seconds.
    pub fn new(dir: PathBuf) -> Self {
        let timeout = std::env::var(LOCK_TIMEOUT_ENV)
            .ok()
            .and_then(|s| s.trim().parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s >= 0.0)
            .map(Duration::from_secs_f64)
            .unwrap_or(DEFAULT_LOCK_TIMEOUT);
        Locks { dir, timeout }
    }

    /// Takes the exclusive lock called `name` (a validated id with a kind
    /// prefix, e.g. `session-SES202501-ACME-AUDIT`).
    pub fn exclusive(&self, name: &str) -> Result<LockGuard> {
        self.take(name, true)
    }

    /// Takes the lock called `name` shared: many readers that must not see
    /// the guarded thing change under them, no writer.
    pub fn shared(&self, name: &str) -> Result<LockGuard> {
        self.take(name, false)
    }

    /// Takes the exclusive lock called `name` only if nobody holds it:
    /// `Ok(None)` means a live process has it (used to tell a writer still at
    /// work from one that died).
    pub fn try_exclusive(&self, name: &str) -> Result<Option<LockGuard>> {
        fs::create_dir_all(&self.dir).map_err(|e| Error::io(&self.dir, e))?;
        let path = self.dir.join(format!("{name}.lock"));
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| Error::io(&path, e))?;
        match file.try_lock() {
            Ok(()) => Ok(Some(LockGuard { _file: file })),
            Err(TryLockError::WouldBlock) => Ok(None),
            Err(TryLockError::Error(e)) => Err(Error::io(&path, e)),
        }
    }

    fn take(&self, name: &str, exclusive: bool) -> Result<LockGuard> {
        debug_assert!(!name.contains('/') && !name.contains(".."));
        fs::create_dir_all(&self.dir).map_err(|e| Error::io(&self.dir, e))?;
        let path = self.dir.join(format!("{name}.lock"));
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| Error::io(&path, e))?;
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
                    if start.elapsed() >= self.timeout {
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
            // record it does not weaken the lock.
            let _ = file.set_len(0);
            let _ = file.rewind();
            let _ = write!(file, "{}", std::process::id());
        }
        Ok(LockGuard { _file: file })
    }
}

/// Writes `bytes` to `path` so that a reader or a crash sees the old file or
/// the new one, never a mix: temp file in the same folder, fsync, rename,
/// fsync of the folder. The caller holds the lock that serialises writers.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        uuid::Uuid::new_v4().simple()
    ));
    let result = (|| {
        let mut f = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(|e| Error::io(&tmp, e))?;
        f.write_all(bytes).map_err(|e| Error::io(&tmp, e))?;
        f.sync_all().map_err(|e| Error::io(&tmp, e))?;
        drop(f);
        fs::rename(&tmp, path).map_err(|e| Error::io(path, e))?;
        sync_dir(dir)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Makes a rename or a new entry in `dir` durable.
pub fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| Error::io(dir, e))
}

/// Moves `from` to `to` durably (a rename, so atomic on one file system),
/// creating `to`'s folder. Used when archiving.
pub fn move_durably(from: &Path, to: &Path) -> Result<()> {
    let dir = to.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    fs::rename(from, to).map_err(|e| Error::io(from, e))?;
    sync_dir(dir)?;
    if let Some(src_dir) = from.parent() {
        sync_dir(src_dir)?;
    }
    Ok(())
}

/// True for temp files `write_atomic` leaves behind when killed mid-write;
/// listings skip them and `doctor --fix` removes them.
pub fn is_temp_file(name: &str) -> bool {
    name.starts_with('.') && name.ends_with(".tmp")
}

/// Which directory entries [`entries`] returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// Regular files (not temp files left by a killed writer).
    File,
    /// Folders.
    Dir,
}

/// The names and paths of `dir`'s files or folders, sorted by name; a missing
/// folder is empty, and temp files from interrupted writes are never listed.
/// Every listing of a store folder goes through here so they all skip the
/// same things.
pub fn entries(dir: &Path, kind: EntryKind) -> Result<Vec<(String, PathBuf)>> {
    let iter = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
        Err(e) => return Err(Error::io(dir, e)),
    };
    let mut out = vec![];
    for entry in iter {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let wanted = entry.file_type().is_ok_and(|t| match kind {
            EntryKind::File => t.is_file() && !is_temp_file(&name),
            EntryKind::Dir => t.is_dir(),
        });
        if wanted {
            out.push((name, entry.path()));
        }
    }
    out.sort();
    Ok(out)
}

/// Reads a file to a string; `Ok(None)` when it does not exist.
pub fn read_optional(path: &Path) -> Result<Option<String>> {
    match fs::read_to_string(path) {
        Ok(s) => Ok(Some(s)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(path, e)),
    }
}

/// Parses JSON text into a typed record, naming the file on failure.
pub fn parse_json<T: DeserializeOwned>(path: &Path, what: &'static str, text: &str) -> Result<T> {
    serde_json::from_str(text).map_err(|e| Error::Corrupt {
        path: path.to_path_buf(),
        what,
        reason: e.to_string(),
    })
}

/// Parses JSON text once into both the typed record and the raw value: the
/// raw value is what a rewrite keeps the key order (and unknown keys) of.
pub fn parse_json_with_raw<T: DeserializeOwned>(
    path: &Path,
    what: &'static str,
    text: &str,
) -> Result<(T, Value)> {
    let raw: Value = parse_json(path, what, text)?;
    let typed = T::deserialize(&raw).map_err(|e| Error::Corrupt {
        path: path.to_path_buf(),
        what,
        reason: e.to_string(),
    })?;
    Ok((typed, raw))
}

/// Parses YAML text into a typed record, naming the file on failure.
pub fn parse_yaml<T: DeserializeOwned>(path: &Path, what: &'static str, text: &str) -> Result<T> {
    serde_saphyr::from_str(text).map_err(|e| Error::Corrupt {
        path: path.to_path_buf(),
        what,
        reason: yaml_error(&e),
    })
}

/// The first line of a YAML parser error (it goes on with a source excerpt),
/// without its own `error:` prefix, which the CLI already prints.
pub fn yaml_error(e: &serde_saphyr::Error) -> String {
    let text = e.to_string();
    let first = text.lines().next().unwrap_or_default();
    first.strip_prefix("error: ").unwrap_or(first).to_string()
}

/// Serialises a record as YAML, in the struct's (the seed's) key order.
pub fn to_yaml<T: Serialize>(path: &Path, value: &T) -> Result<String> {
    serde_saphyr::to_string(value).map_err(|e| Error::Corrupt {
        path: path.to_path_buf(),
        what: "YAML document",
        reason: e.to_string(),
    })
}

/// Serialises a record as 2-space JSON. When `original` is the JSON the file
/// held before, keys keep the order they were read in, so rewriting another
/// tool's file changes only what changed.
pub fn to_json<T: Serialize>(path: &Path, value: &T, original: Option<&Value>) -> Result<String> {
    let mut new = serde_json::to_value(value).map_err(|e| Error::Corrupt {
        path: path.to_path_buf(),
        what: "JSON document",
        reason: e.to_string(),
    })?;
    if let Some(old) = original {
        order_like(&mut new, old);
    }
    let mut text = serde_json::to_string_pretty(&new).map_err(|e| Error::Corrupt {
        path: path.to_path_buf(),
        what: "JSON document",
        reason: e.to_string(),
    })?;
    text.push('\n');
    Ok(text)
}

/// Reorders the keys of `new` to follow `old` wherever both have them; keys
/// only in `new` follow in their own order. Arrays are matched by position.
pub fn order_like(new: &mut Value, old: &Value) {
    match (new, old) {
        (Value::Object(n), Value::Object(o)) => {
            let mut ordered = serde_json::Map::with_capacity(n.len());
            for key in o.keys() {
                if let Some((k, mut v)) = n.shift_remove_entry(key) {
                    if let Some(ov) = o.get(key) {
                        order_like(&mut v, ov);
                    }
                    ordered.insert(k, v);
                }
            }
            ordered.append(n);
            *n = ordered;
        }
        (Value::Array(n), Value::Array(o)) => {
            for (nv, ov) in n.iter_mut().zip(o) {
                order_like(nv, ov);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_keeps_original_key_order() {
        let old: Value =
            serde_json::from_str(r#"{"b":1,"a":{"y":1,"x":2},"z":[{"q":1,"p":2}]}"#).unwrap();
        let new: Value =
            serde_json::from_str(r#"{"a":{"x":3,"y":1},"b":1,"z":[{"p":2,"q":1}],"c":0}"#).unwrap();
        let text = to_json(Path::new("t.json"), &new, Some(&old)).unwrap();
        let keys: Vec<_> = text.lines().map(str::trim).collect();
        assert_eq!(
            keys.join(""),
            r#"{"b": 1,"a": {"y": 1,"x": 3},"z": [{"q": 1,"p": 2}],"c": 0}"#
        );
    }

    #[test]
    fn atomic_write_replaces_and_leaves_no_temp() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.json");
        write_atomic(&p, b"one").unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(fs::read_to_string(&p).unwrap(), "two");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }

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
        assert!(msg.contains("LOGBOOK_LOCK_TIMEOUT"), "{msg}");
    }
}
