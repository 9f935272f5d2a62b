//! The library's one error type. Every variant names the file, id or field
//! involved; what to do about it is a separate [`Error::hint`], and
//! [`Error::kind`] tells a face which exit code or status it maps to.

use std::path::PathBuf;
use std::time::Duration;

/// Shorthand used across the library.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What sort of failure an [`Error`] is, so every face maps it the same way
/// (the CLI to exit codes, the web viewer to HTTP statuses).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// A value given on the command line or in a tool call is not acceptable.
    Invalid,
    /// The named record does not exist.
    NotFound,
    /// The record exists but is in a state where the operation does not apply.
    State,
    /// Another writer got there first, or holds the lock.
    Conflict,
    /// A file on disk is not valid in its format, or the config is wrong.
    Data,
    /// The operating system or the index failed.
    Environment,
}

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
    #[error("{kind} {id} not found")]
    NotFound {
        /// What was looked for ("work session", "run", …).
        kind: &'static str,
        /// The id as given.
        id: String,
        /// What to do, or empty.
        hint: String,
    },

    /// A command needs the active work session and there is none.
    #[error("no active work session")]
    NoActiveSession,

    /// `start` was asked while another work session is active.
    #[error("work session {id} is active")]
    SessionActive {
        /// The session that is active now.
        id: String,
    },

    /// A change was asked of a work session that is closed and archived.
    #[error("work session {id} is closed and archived")]
    SessionClosed {
        /// The closed session.
        id: String,
        /// Whether the change was to its workflow state (read-only now).
        workflow: bool,
    },

    /// A work session file exists both live and in the archive.
    #[error("{live} and {archived} both exist")]
    SessionInTwoPlaces {
        /// The file in `sessions_dir`.
        live: PathBuf,
        /// The file in `session_archive_dir`.
        archived: PathBuf,
    },

    /// Outputs can only be registered while a run is running; finishing
    /// twice is refused too.
    #[error("{}", run_finished(id, status, finished_at.as_deref(), *registering))]
    RunFinished {
        /// The run.
        id: String,
        /// Its status (completed, failed, cancelled, or another tool's word).
        status: String,
        /// When it finished, if recorded.
        finished_at: Option<String>,
        /// Whether the refused operation was an output registration.
        registering: bool,
    },

    /// `workflow complete` for an agent with nothing in progress.
    #[error("agent {agent} has no invocation in progress")]
    NoInvocationInProgress {
        /// The agent type as given.
        agent: String,
    },

    /// A compaction archive named in `compactionHistory` is missing or unreadable.
    #[error("{}", problems.join("; "))]
    HistoryIncomplete {
        /// One sentence per archive that could not be read.
        problems: Vec<String>,
    },

    /// A file Logbook would create already exists.
    #[error("{path} already exists")]
    AlreadyExists {
        /// The file or folder.
        path: PathBuf,
        /// What to do instead.
        hint: &'static str,
    },

    /// A cross-process lock could not be taken in time.
    #[error("timed out after {waited:?} waiting for lock {lock} (held by process {holder})")]
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
        "version conflict on {what}: expected version {expected}, but it is at {actual}; another writer got there first"
    )]
    Conflict {
        /// The record (file or id) being updated.
        what: String,
        /// The version the caller expected.
        expected: u64,
        /// The version found on disk.
        actual: u64,
    },

    /// A token count is above the largest Logbook keeps (`MAX_TOKENS` of
    /// the work session model), so sums of it would overflow.
    #[error("{what}: {value} tokens is above the largest count Logbook keeps ({max})")]
    TokensOutOfRange {
        /// The field or option, and the file when it came from one.
        what: String,
        /// The count as given.
        value: String,
        /// The largest count allowed.
        max: u64,
    },

    /// The SQLite index failed.
    #[error("index {path}: {message}")]
    Index {
        /// The index database.
        path: PathBuf,
        /// What SQLite said.
        message: String,
        /// Whether SQLite found the database damaged (so it is rebuilt).
        corrupt: bool,
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

    /// Builds an [`Error::NotFound`], with a hint sentence (or none when empty).
    pub fn not_found(kind: &'static str, id: impl Into<String>, hint: &str) -> Self {
        Error::NotFound {
            kind,
            id: id.into(),
            hint: hint.to_string(),
        }
    }

    /// What sort of failure this is.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Invalid { .. } | Error::TokensOutOfRange { .. } => ErrorKind::Invalid,
            Error::NotFound { .. } | Error::NoActiveSession => ErrorKind::NotFound,
            Error::SessionActive { .. }
            | Error::SessionClosed { .. }
            | Error::RunFinished { .. }
            | Error::NoInvocationInProgress { .. }
            | Error::AlreadyExists { .. } => ErrorKind::State,
            Error::LockTimeout { .. } | Error::Conflict { .. } => ErrorKind::Conflict,
            Error::Corrupt { .. }
            | Error::Config { .. }
            | Error::SessionInTwoPlaces { .. }
            | Error::HistoryIncomplete { .. } => ErrorKind::Data,
            Error::Io { .. } | Error::Index { .. } => ErrorKind::Environment,
        }
    }

    /// What the person should do next, when there is something to say.
    pub fn hint(&self) -> Option<String> {
        let text = match self {
            Error::NotFound { hint, .. } if !hint.is_empty() => hint.clone(),
            Error::NoActiveSession => {
                "start one with `logbook start`, or name one with its id (`--session ID`)".into()
            }
            Error::SessionActive { .. } => {
                "close it first (`logbook close`) or pass --yes to close it and start the new one"
                    .into()
            }
            Error::SessionClosed {
                id, workflow: true, ..
            } => format!(
                "its workflow state is read-only (`logbook workflow show --session {id}`); start a new session with `logbook start`"
            ),
            Error::SessionClosed { .. } => "start a new one with `logbook start`".into(),
            Error::SessionInTwoPlaces { .. } => {
                "compare them by hand and remove the stale one".into()
            }
            Error::RunFinished {
                registering: true, ..
            } => "outputs can only be registered while it is running (start a new run, or link one with `logbook run link`)".into(),
            Error::NoInvocationInProgress { agent } => format!(
                "record one first with `logbook workflow invoke {agent} --prompt …`"
            ),
            Error::AlreadyExists { hint, .. } => (*hint).to_string(),
            Error::LockTimeout { .. } => {
                "is another logbook still running? Set LOGBOOK_LOCK_TIMEOUT (seconds) to wait longer"
                    .into()
            }
            Error::Conflict { .. } => "reload and retry".into(),
            Error::TokensOutOfRange { max, .. } => format!(
                "token counts go from 0 to {max}; give the real count (`logbook usage --current N`), or fix the file by hand"
            ),
            Error::Corrupt { .. } => {
                "fix the file or move it aside (`logbook doctor` lists every problem)".into()
            }
            Error::Index { .. } => "`logbook index rebuild` recreates it from the files".into(),
            _ => return None,
        };
        Some(text)
    }
}

fn run_finished(id: &str, status: &str, finished_at: Option<&str>, registering: bool) -> String {
    if registering {
        format!("run {id} is {status}")
    } else {
        format!(
            "run {id} is already {status}; it finished at {}",
            finished_at.unwrap_or("an unknown time")
        )
    }
}

/// Turns SQLite's error into the library's without exposing `rusqlite` types.
pub(crate) fn index_error(path: &std::path::Path, e: &rusqlite::Error) -> Error {
    let corrupt = matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase)
    );
    Error::Index {
        path: path.to_path_buf(),
        message: e.to_string(),
        corrupt,
    }
}
