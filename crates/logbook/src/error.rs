//! The library's one error type: every variant names the file, id or field
//! involved and, where there is one, the fix.

use std::path::PathBuf;
use std::time::Duration;

/// Shorthand used across the library.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in Logbook, each variant carrying what a
/// person needs to act on it.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file or folder could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file or folder involved.
        path: PathBuf,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },

    /// A file exists but is not valid in its format (YAML, JSON) or schema.
    #[error("{path}: not a valid {what}: {reason}")]
    Corrupt {
        /// The file that failed to parse.
        path: PathBuf,
        /// What the file was expected to be ("work session", "manifest", …).
        what: &'static str,
        /// The parser's message, with line and column where known.
        reason: String,
    },

    /// `logbook.yaml` is unreadable or refers to something unknown.
    #[error("{path}: {reason}")]
    Config {
        /// The config file.
        path: PathBuf,
        /// What is wrong, naming the line and the key.
        reason: String,
    },

    /// A value given by a user or an agent is not acceptable.
    #[error("invalid {field} {value:?}: {reason}")]
    Invalid {
        /// The option or field that carried the value.
        field: &'static str,
        /// The value as given.
        value: String,
        /// What is allowed instead.
        reason: String,
    },

    /// A record named by id does not exist.
    #[error("{kind} {id} not found{hint}")]
    NotFound {
        /// What was looked for ("work session", "run", …).
        kind: &'static str,
        /// The id as given.
        id: String,
        /// A sentence (with leading separator) telling what to do, or empty.
        hint: String,
    },

    /// A command needs the active work session and there is none.
    #[error("no active work session; start one with `logbook start` or name one with its id")]
    NoActiveSession,

    /// `start` was asked while another work session is active.
    #[error(
        "work session {id} is active; close it first (`logbook close`) or pass --yes to close it and start the new one"
    )]
    SessionActive {
        /// The session that is active now.
        id: String,
    },

    /// The operation does not apply to the record in its current state.
    #[error("{0}")]
    State(String),

    /// A cross-process lock could not be taken in time.
    #[error(
        "timed out after {waited:?} waiting for lock {lock} (held by process {holder}); is another logbook still running? Set LOGBOOK_LOCK_TIMEOUT (seconds) to wait longer"
    )]
    LockTimeout {
        /// The lock file.
        lock: PathBuf,
        /// The process id written by the holder, or "unknown".
        holder: String,
        /// How long we waited.
        waited: Duration,
    },

    /// A compare-and-swap update named a version that is no longer current.
    #[error(
        "version conflict on {what}: expected version {expected}, but it is at {actual}; another writer got there first, reload and retry"
    )]
    Conflict {
        /// The record (file or id) being updated.
        what: String,
        /// The version the caller expected.
        expected: u64,
        /// The version found on disk.
        actual: u64,
    },

    /// The SQLite index failed.
    #[error("index {path}: {source}; `logbook index rebuild` recreates it from the files")]
    Index {
        /// The index database.
        path: PathBuf,
        /// What SQLite said.
        #[source]
        source: rusqlite::Error,
    },
}

impl Error {
    /// Wraps an I/O error with the path it concerns.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    /// Builds an [`Error::Invalid`] for a value that failed validation.
    pub fn invalid(
        field: &'static str,
        value: impl Into<String>,
        reason: impl Into<String>,
    ) -> Self {
        Error::Invalid {
            field,
            value: value.into(),
            reason: reason.into(),
        }
    }

    /// Builds an [`Error::NotFound`], with an optional hint sentence.
    pub fn not_found(kind: &'static str, id: impl Into<String>, hint: &str) -> Self {
        Error::NotFound {
            kind,
            id: id.into(),
            hint: if hint.is_empty() {
                String::new()
            } else {
                format!("; {hint}")
            },
        }
    }
}
