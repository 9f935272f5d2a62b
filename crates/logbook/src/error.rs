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

    /// A run folder that holds no `manifest.json`: listed by its UUID with
    /// status `unknown` (seed 000), but there is no record to show or change.
    #[error("run {id} has no manifest: its folder {folder} holds no manifest.json")]
    RunWithoutManifest {
        /// The run id (the folder name).
        id: String,
        /// The run folder.
        folder: PathBuf,
    },

    /// A short id (a prefix, or a transcript's last 8 characters) names
    /// more than one record; guessing would act on the wrong one.
    #[error("{kind} id {given:?} is ambiguous: it matches {}", candidates.join(", "))]
    AmbiguousId {
        /// What was looked for ("run", "transcript").
        kind: &'static str,
        /// The id as given.
        given: String,
        /// Every full id it matches, sorted.
        candidates: Vec<String>,
    },

    /// `run link` would make a run its own ancestor.
    #[error("linking run {child} to {parent} would make a lineage cycle: {}", cycle.join(" -> "))]
    LineageCycle {
        /// The run whose manifest would change.
        child: String,
        /// The run it would build on.
        parent: String,
        /// The cycle the link would close, from `child` back to `child`.
        cycle: Vec<String>,
    },

    /// A file Logbook was asked to read is a folder, FIFO, device…
    #[error("{what} {path} is {found}, not a regular file")]
    NotARegularFile {
        /// What the file was meant to be ("workflow file", …).
        what: &'static str,
        /// The path as resolved.
        path: PathBuf,
        /// What it is instead ("a folder", "a FIFO", …).
        found: &'static str,
    },

    /// A file Logbook was asked to read is larger than it reads.
    #[error("{what} {path} is larger than the limit of {}", human_bytes(*limit))]
    FileTooLarge {
        /// What the file was meant to be.
        what: &'static str,
        /// The path as resolved.
        path: PathBuf,
        /// The limit in bytes.
        limit: u64,
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

    /// A work session id longer than a file name allows (ids name files and
    /// locks).
    #[error("invalid work session id {}: it is {} bytes long, and at most {max} fit in the file names made from it", abbreviate(id), id.len())]
    IdTooLong {
        /// The id as given or as it would have been built.
        id: String,
        /// The longest id allowed, in bytes.
        max: usize,
    },

    /// `milestone add` with a name the session already has.
    #[error("work session {session} already has a milestone {name:?}{}", if *done { " (done)" } else { "" })]
    MilestoneExists {
        /// The session.
        session: String,
        /// The name as already recorded.
        name: String,
        /// Whether that milestone is done.
        done: bool,
    },

    /// `milestone done` with a name the session has no open milestone of.
    #[error("work session {session} has no open milestone {name:?}{}", if *already_done { "; it is already done" } else { "" })]
    MilestoneNotFound {
        /// The session.
        session: String,
        /// The name as given.
        name: String,
        /// Whether a milestone of exactly that name exists and is done.
        already_done: bool,
        /// The open milestone whose name is closest, if any is close.
        near: Option<String>,
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

    /// A file named for one id holds another (renamed or copied by hand).
    #[error("{path} is named for {expected} but holds {found}")]
    IdMismatch {
        /// The file.
        path: PathBuf,
        /// The id its name gives.
        expected: String,
        /// The id inside it.
        found: String,
    },

    /// The project root named by `--root` or `LOGBOOK_ROOT` does not exist.
    #[error("project root {path} does not exist")]
    RootMissing {
        /// The root as resolved.
        path: PathBuf,
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

    /// The team catalog (PostgreSQL) could not be reached, or refused.
    #[error("team catalog {server}: {message}")]
    Team {
        /// The server, as host:port/database (never the password).
        server: String,
        /// What went wrong.
        message: String,
        /// What to do about it.
        hint: String,
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
            Error::Invalid { .. }
            | Error::TokensOutOfRange { .. }
            | Error::AmbiguousId { .. }
            | Error::LineageCycle { .. }
            | Error::NotARegularFile { .. }
            | Error::FileTooLarge { .. }
            | Error::IdTooLong { .. } => ErrorKind::Invalid,
            Error::NotFound { .. }
            | Error::RunWithoutManifest { .. }
            | Error::NoActiveSession
            | Error::MilestoneNotFound {
                already_done: false,
                ..
            } => ErrorKind::NotFound,
            Error::SessionActive { .. }
            | Error::SessionClosed { .. }
            | Error::RunFinished { .. }
            | Error::NoInvocationInProgress { .. }
            | Error::AlreadyExists { .. }
            | Error::MilestoneExists { .. }
            | Error::MilestoneNotFound { .. } => ErrorKind::State,
            Error::RootMissing { .. } => ErrorKind::NotFound,
            Error::LockTimeout { .. } | Error::Conflict { .. } => ErrorKind::Conflict,
            Error::Corrupt { .. }
            | Error::Config { .. }
            | Error::SessionInTwoPlaces { .. }
            | Error::IdMismatch { .. }
            | Error::HistoryIncomplete { .. } => ErrorKind::Data,
            Error::Io { .. } | Error::Index { .. } | Error::Team { .. } => ErrorKind::Environment,
        }
    }

    /// What the person should do next, when there is something to say.
    pub fn hint(&self) -> Option<String> {
        let text = match self {
            Error::NotFound { hint, .. } if !hint.is_empty() => hint.clone(),
            Error::Team { hint, .. } if !hint.is_empty() => hint.clone(),
            Error::RunWithoutManifest { .. } => {
                "the tool that made the folder writes the manifest when it starts the run; until then listings show it with status unknown".into()
            }
            Error::AmbiguousId { .. } => {
                "give more characters of the id, or the whole UUID".into()
            }
            Error::LineageCycle { parent, .. } => format!(
                "a run can only build on earlier work; `logbook lineage {parent}` shows what {parent} already builds on"
            ),
            Error::NotARegularFile { .. } => {
                "Logbook reads only regular files (not folders, FIFOs or devices): name one, or put one in its place".into()
            }
            Error::FileTooLarge { .. } => {
                "check that this is the file you meant; Logbook reads files of that kind only up to this size".into()
            }
            Error::NoActiveSession => {
                "start one with `logbook start`, or name one by its id (`--session ID`, or `logbook status ID`; `logbook list` shows them)".into()
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
            Error::IdTooLong { max, .. } => format!(
                "shorten --client or --project: the id is {{PREFIX}}{{YYYYMM}}-{{CLIENT}}-{{PROJECT}} and must stay within {max} bytes"
            ),
            Error::MilestoneExists { name, done: false, .. } => format!(
                "mark it done with `logbook milestone done {name:?}`, or give the new one another name"
            ),
            Error::MilestoneExists { .. } => {
                "give the new milestone another name".into()
            }
            Error::MilestoneNotFound {
                near: Some(near), ..
            } => format!("did you mean {near:?}? (`logbook status` lists the milestones)"),
            Error::MilestoneNotFound {
                already_done: true,
                ..
            } => "`logbook status` lists the milestones".into(),
            Error::MilestoneNotFound { name, .. } => format!(
                "add it first with `logbook milestone add {name:?}` (`logbook status` lists the milestones)"
            ),
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
            Error::IdMismatch { .. } => {
                "rename the file after the id it holds, or fix the id inside (`logbook doctor` lists every such file)".into()
            }
            Error::RootMissing { .. } => {
                "check --root / LOGBOOK_ROOT; `logbook init` or `logbook start` creates a project there".into()
            }
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

/// A long id cut to what a person can read in one error line.
fn abbreviate(id: &str) -> String {
    const SHOWN: usize = 40;
    match id.char_indices().nth(SHOWN) {
        Some((i, _)) => format!("{}…", &id[..i]),
        None => id.to_string(),
    }
}

/// `1 MiB`, `512 MiB`, or bytes when not a whole number of KiB.
fn human_bytes(n: u64) -> String {
    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * KIB;
    if n >= MIB && n.is_multiple_of(MIB) {
        format!("{} MiB", n / MIB)
    } else if n >= KIB && n.is_multiple_of(KIB) {
        format!("{} KiB", n / KIB)
    } else {
        format!("{n} bytes")
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
