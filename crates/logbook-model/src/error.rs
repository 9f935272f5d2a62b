//! The library's one error type. Every variant names the file, id or field
//! involved; what to do about it is a separate [`Error::next`], structured
//! data that each face words its own way ([`Next`], [`Step`]), and
//! [`Error::kind`] tells a face which exit code or status it maps to.
//!
//! Every face prints an error through [`message`], so the CLI's stderr line,
//! an MCP tool error and the web viewer's answer differ only in how the next
//! step is worded:
//!
//! ```
//! use logbook_model::error::{Error, Face, Next, Step, message};
//! let e = Error::not_found("run", "3f2c9d14", Next::of(Step::FindRuns { agent: None, team: false }, " lists the runs there are"));
//! assert_eq!(message(&e, Face::Cli), "run 3f2c9d14 not found; `logbook find` lists the runs there are");
//! assert_eq!(message(&e, Face::Mcp), "run 3f2c9d14 not found; find_runs lists the runs there are");
//! assert_eq!(e.kind().exit_code(), 4);
//! ```

mod hints;
mod next;

use std::path::PathBuf;
use std::time::Duration;

pub use next::{Next, Step};

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

impl ErrorKind {
    /// The process exit code for this kind, as INTERFACE.md lists them for
    /// scripts: 3 a conflict (a compare-and-swap lost, a lock or the index
    /// not had in time), 4 not found, 1 anything else. Bad usage (arguments
    /// the parser refused) exits 2 before a library error can arise.
    pub fn exit_code(self) -> u8 {
        match self {
            ErrorKind::Conflict => 3,
            ErrorKind::NotFound => 4,
            ErrorKind::Invalid | ErrorKind::State | ErrorKind::Data | ErrorKind::Environment => 1,
        }
    }

    /// The HTTP status the read-only web viewer answers with: 404 for what
    /// does not exist, 403 for an id or path that reaches outside what is
    /// served (a bad query value is the viewer's own 400), and 500 for the
    /// rest, whose details stay on the server.
    pub fn http_status(self) -> u16 {
        match self {
            ErrorKind::NotFound => 404,
            ErrorKind::Invalid => 403,
            ErrorKind::State | ErrorKind::Conflict | ErrorKind::Data | ErrorKind::Environment => {
                500
            }
        }
    }

    /// The kind of the first library [`Error`] in `err`'s chain of causes,
    /// or, for an I/O error a binary met on its own (a file it opened),
    /// not found when the file does not exist.
    pub fn of(err: &(dyn std::error::Error + 'static)) -> Option<ErrorKind> {
        Error::in_chain(err).map(Error::kind).or_else(|| {
            causes(err)
                .filter_map(|c| c.downcast_ref::<std::io::Error>())
                .any(|e| e.kind() == std::io::ErrorKind::NotFound)
                .then_some(ErrorKind::NotFound)
        })
    }
}

/// The exit code of a failed command whose error is `err` (with its causes):
/// by its kind ([`ErrorKind::exit_code`]), 1 when it has none.
pub fn exit_code(err: &(dyn std::error::Error + 'static)) -> u8 {
    ErrorKind::of(err).map_or(1, ErrorKind::exit_code)
}

/// Who an error's next step is worded for: the same error names a shell
/// command to a person at the CLI and a tool to an agent over MCP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Face {
    /// The `logbook` command.
    Cli,
    /// An agent calling the MCP server's tools.
    Mcp,
    /// The web viewer, whose readers act through the CLI.
    Web,
}

/// The error as every face prints it (after `error: `): its message, its
/// causes not already quoted, and what to do next worded for `face`, on one
/// line, because scripts and agents read one line per error. Library errors
/// quote their source in their own text, so printing every cause as `{:#}`
/// does would repeat "No such file or directory".
pub fn message(err: &(dyn std::error::Error + 'static), face: Face) -> String {
    let mut out = String::new();
    for cause in causes(err) {
        let text = cause.to_string();
        if out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    if let Some(hint) = Error::in_chain(err).and_then(|e| e.hint_for(face)) {
        out.push_str("; ");
        out.push_str(&hint);
    }
    out
}

/// `err` and its causes, outermost first.
fn causes<'a>(
    err: &'a (dyn std::error::Error + 'static),
) -> impl Iterator<Item = &'a (dyn std::error::Error + 'static)> {
    std::iter::successors(Some(err), |e| e.source())
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
        /// What to do about it, or nothing.
        next: Next,
    },

    /// A value given by a user or an agent is not acceptable.
    #[error("invalid {field} {}: {reason}", quoted_short(value))]
    Invalid {
        /// The option or field that carried the value.
        field: &'static str,
        /// The value as given (the message quotes its first
        /// [`SHOWN_VALUE`] characters).
        value: String,
        /// What is allowed instead.
        reason: String,
        /// Where to find an acceptable value, or nothing.
        next: Next,
    },

    /// Free text sent by a caller (a note, a prompt, a summary…) is longer
    /// than one field may be, so no caller can grow a record without bound.
    #[error("{field} is {len} bytes long, above the limit of {} per field", human_bytes(*limit as u64))]
    TextTooLong {
        /// The field or option that carried the text.
        field: &'static str,
        /// Its length in bytes.
        len: usize,
        /// The limit in bytes.
        limit: usize,
    },

    /// A record named by id does not exist.
    #[error("{kind} {id} not found")]
    NotFound {
        /// What was looked for ("work session", "run", …).
        kind: &'static str,
        /// The id as given.
        id: String,
        /// What to do, or nothing.
        hint: Next,
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

    /// A file named for import holds nothing that can be imported (empty,
    /// not a transcript format Logbook reads, no messages).
    #[error("{path}: nothing imported: {reason}")]
    NotImported {
        /// The file as named.
        path: PathBuf,
        /// Why nothing came of it.
        reason: String,
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

    /// A handoff or an agent resume found no session of that agent in scope.
    #[error("no {agent} session found in this project")]
    NoAgentSession {
        /// `claude-code` or `codex`.
        agent: &'static str,
    },

    /// A transcript asked to resume in its agent was not imported from an
    /// agent log, so no agent knows its session.
    #[error("transcript {id} was not imported from a Claude Code or Codex log")]
    NotAnAgentSession {
        /// The transcript id.
        id: String,
    },

    /// A command needs the active work session and there is none.
    #[error("no active work session")]
    NoActiveSession,

    /// `resume` without an id found no active session and several paused
    /// ones, and will not guess which to resume.
    #[error("no active work session, and {} are paused", ids.len())]
    SeveralPaused {
        /// The paused sessions, most recently updated first.
        ids: Vec<String>,
    },

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

    /// A write to a run that `logbook archive` moved out of the live set:
    /// refused whole, so no write lands half in the archive.
    #[error("run {id} was archived to {}", folder.display())]
    RunArchived {
        /// The run.
        id: String,
        /// Its folder in `archive_folder`.
        folder: PathBuf,
    },

    /// A run `logbook delete` removed; its tombstone says when.
    #[error("run {id} was deleted at {deleted_at} by {by} (its record: {})", tombstone.display())]
    RunDeleted {
        /// The run.
        id: String,
        /// When.
        deleted_at: String,
        /// Who.
        by: String,
        /// Its tombstone file.
        tombstone: PathBuf,
    },

    /// `delete` of a run other runs build on, without `--force`.
    #[error("run {id} is linked from {}: {}", if linking.len() == 1 { "run" } else { "runs" }, linking.join(", "))]
    RunLinked {
        /// The run.
        id: String,
        /// The runs naming it in `related_sessions`.
        linking: Vec<String>,
    },

    /// `delete` without `--yes`: nothing removed, and what would be said.
    #[error("not deleted: {what}")]
    NotConfirmed {
        /// What the command would remove.
        what: String,
        /// The run.
        id: String,
        /// Whether deleting it needs `--force` too (runs link to it).
        force: bool,
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

    /// Neither `LOGBOOK_HOME` nor `HOME` says where the per-user home is.
    #[error("no per-user Logbook home: neither LOGBOOK_HOME nor HOME is set")]
    NoUserHome,

    /// A file Logbook would create already exists.
    #[error("{path} already exists")]
    AlreadyExists {
        /// The file or folder.
        path: PathBuf,
        /// What to do instead.
        hint: Next,
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

    /// A backend cannot answer a filter (the team catalog keeps no
    /// workdirs, no archive and no message text), so the query is refused
    /// before it runs rather than answered as if the filter were left out.
    #[error("the {scope} scope cannot filter by {filter}: {why}")]
    Unsupported {
        /// The filter as every face names its option (`repo`, `archived`).
        filter: &'static str,
        /// The scope that cannot answer it (`team`).
        scope: &'static str,
        /// What that backend lacks.
        why: &'static str,
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

    /// An agent's settings file (Claude Code's, Codex's) that Logbook was
    /// asked to change cannot be changed safely; it is left as it was.
    #[error("{path}: {reason}")]
    AgentSettings {
        /// The settings file.
        path: PathBuf,
        /// What is wrong with it, with line and column where known.
        reason: String,
        /// What to do about it.
        hint: Next,
    },

    /// Another process holds the SQLite index's write lock past the wait
    /// allowed (a writer that is slow or stuck), as a lock timeout is.
    #[error("index {path}: {message}")]
    IndexBusy {
        /// The index database.
        path: PathBuf,
        /// What SQLite said.
        message: String,
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
        hint: Next,
    },

    /// An export's receiver (an OTLP endpoint) could not be reached, or
    /// refused a batch.
    #[error("export to {endpoint}: {message}")]
    Export {
        /// The endpoint, as resolved (never a header's value).
        endpoint: String,
        /// What went wrong.
        message: String,
        /// What to do about it.
        hint: Next,
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
            next: Next::none(),
        }
    }

    /// Builds an [`Error::Config`] about the config file `path`.
    pub fn config(path: impl Into<PathBuf>, reason: impl Into<String>) -> Self {
        Error::Config {
            path: path.into(),
            reason: reason.into(),
            next: Next::none(),
        }
    }

    /// Builds an [`Error::NotFound`], with what to do next (prose, a
    /// [`Step`], or a [`Next`] of both; nothing when empty).
    pub fn not_found(kind: &'static str, id: impl Into<String>, hint: impl Into<Next>) -> Self {
        Error::NotFound {
            kind,
            id: id.into(),
            hint: hint.into(),
        }
    }

    /// This error with `next` as what to do next, for the variants that
    /// carry one from where they arise ([`Error::Invalid`],
    /// [`Error::Config`], [`Error::NotFound`]); others keep their own.
    pub fn with_next(mut self, next: impl Into<Next>) -> Self {
        match &mut self {
            Error::Invalid { next: n, .. }
            | Error::Config { next: n, .. }
            | Error::NotFound { hint: n, .. } => *n = next.into(),
            _ => {}
        }
        self
    }

    /// The first library error in `err`'s chain of causes: a face holding
    /// an error of its own (the CLI's, with context) finds the library's.
    pub fn in_chain<'a>(err: &'a (dyn std::error::Error + 'static)) -> Option<&'a Error> {
        causes(err).find_map(|c| c.downcast_ref::<Error>())
    }

    /// What sort of failure this is.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Invalid { .. }
            | Error::TokensOutOfRange { .. }
            | Error::Unsupported { .. }
            | Error::AmbiguousId { .. }
            | Error::LineageCycle { .. }
            | Error::NotARegularFile { .. }
            | Error::FileTooLarge { .. }
            | Error::TextTooLong { .. }
            | Error::IdTooLong { .. } => ErrorKind::Invalid,
            Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                ErrorKind::NotFound
            }
            Error::NotFound { .. }
            | Error::NoAgentSession { .. }
            | Error::RunWithoutManifest { .. }
            | Error::NoActiveSession
            | Error::RunDeleted { .. }
            | Error::MilestoneNotFound {
                already_done: false,
                ..
            } => ErrorKind::NotFound,
            Error::SessionActive { .. }
            | Error::NotAnAgentSession { .. }
            | Error::SeveralPaused { .. }
            | Error::SessionClosed { .. }
            | Error::RunFinished { .. }
            | Error::RunArchived { .. }
            | Error::RunLinked { .. }
            | Error::NotConfirmed { .. }
            | Error::NoInvocationInProgress { .. }
            | Error::AlreadyExists { .. }
            | Error::MilestoneExists { .. }
            | Error::MilestoneNotFound { .. } => ErrorKind::State,
            Error::RootMissing { .. } => ErrorKind::NotFound,
            Error::LockTimeout { .. } | Error::Conflict { .. } | Error::IndexBusy { .. } => {
                ErrorKind::Conflict
            }
            Error::Corrupt { .. }
            | Error::NotImported { .. }
            | Error::Config { .. }
            | Error::SessionInTwoPlaces { .. }
            | Error::IdMismatch { .. }
            | Error::AgentSettings { .. }
            | Error::HistoryIncomplete { .. } => ErrorKind::Data,
            Error::Io { .. }
            | Error::Index { .. }
            | Error::Team { .. }
            | Error::Export { .. }
            | Error::NoUserHome => ErrorKind::Environment,
        }
    }
}

/// A long id cut to what a person can read in one error line.
fn abbreviate(id: &str) -> String {
    match cut_point(id, 40) {
        Some(i) => format!("{}…", &id[..i]),
        None => id.to_string(),
    }
}

/// How many characters of a refused value an error quotes: enough to
/// recognise it, never the whole of a value a caller made huge.
pub const SHOWN_VALUE: usize = 200;

/// `value` quoted as `{:?}` quotes it, cut after [`SHOWN_VALUE`] characters.
fn quoted_short(value: &str) -> String {
    match cut_point(value, SHOWN_VALUE) {
        Some(i) => format!("{:?}…", &value[..i]),
        None => format!("{value:?}"),
    }
}

/// The byte offset after `shown` characters of `text`, if it is longer.
fn cut_point(text: &str, shown: usize) -> Option<usize> {
    text.char_indices().nth(shown).map(|(i, _)| i)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_huge_refused_value_is_quoted_short() {
        let huge = "é".repeat(1_000_000);
        let text = Error::invalid("agent type", huge, "expected one of: qa").to_string();
        assert!(text.len() < 1000, "{} bytes", text.len());
        assert!(
            text.starts_with("invalid agent type \"éé")
                && text.ends_with("\"…: expected one of: qa")
        );
        let small = Error::invalid("status", "a\0b", "no").to_string();
        assert_eq!(small, "invalid status \"a\\0b\": no");
    }

    #[test]
    fn only_a_damaged_index_is_worth_a_rebuild() {
        let index = |corrupt| Error::Index {
            path: "index.db".into(),
            message: "fts5: syntax error".into(),
            corrupt,
        };
        assert!(
            index(true)
                .hint()
                .is_some_and(|h| h.contains("index rebuild"))
        );
        assert_eq!(index(false).hint(), None);
        assert_eq!(index(false).hint_for(Face::Mcp), None);
    }

    /// The MCP tools INTERFACE.md lists, and the resume tool the server
    /// also has: a step an agent can take names one.
    const TOOLS: [&str; 32] = [
        "resume_context",
        "session_start",
        "session_resume",
        "session_status",
        "session_close",
        "session_list",
        "session_switch",
        "session_tokens",
        "session_update",
        "agent_spawn",
        "agent_done",
        "run_start",
        "run_register_output",
        "run_finish",
        "run_show",
        "run_link",
        "find_runs",
        "latest_output",
        "run_lineage",
        "workflow_state",
        "workflow_invoke",
        "workflow_complete",
        "workflow_decide",
        "workflow_verdict",
        "workflow_handoff",
        "workflow_phase",
        "mode_set",
        "transcript_save",
        "transcript_load",
        "transcript_list",
        "agent_resume",
        "agent_handoff",
    ];

    /// One of every step. The match has no catch-all, so a new step does
    /// not compile until it is listed here and so checked.
    fn every_step() -> Vec<Step> {
        let some = || Some("SES202501-ACME-AUDIT".to_string());
        let all = vec![
            Step::find_runs(),
            Step::FindRuns {
                agent: Some("casey".into()),
                team: true,
            },
            Step::ShowRun { id: None },
            Step::ShowRun { id: some() },
            Step::Lineage {
                id: "3f2c9d14".into(),
            },
            Step::RegisterOutput,
            Step::LinkRun,
            Step::ListSessions,
            Step::StartSession { yes: false },
            Step::StartSession { yes: true },
            Step::CloseSession,
            Step::ResumeSession { id: None },
            Step::ResumeSession { id: some() },
            Step::SessionStatus { id: None },
            Step::SessionStatus { id: some() },
            Step::AddMilestone {
                name: "Ship it".into(),
            },
            Step::FinishMilestone {
                name: "Ship it".into(),
            },
            Step::SetUsage,
            Step::WorkflowState { session: None },
            Step::WorkflowState { session: some() },
            Step::InvokeAgent {
                agent: "architect".into(),
            },
            Step::ListTranscripts {
                all: true,
                source: Some("codex".into()),
            },
            Step::list_transcripts(false),
            Step::ImportTranscripts,
            Step::InstallHooks {
                agent: "codex".into(),
            },
            Step::SyncIndex,
            Step::SyncIndexFull,
            Step::RebuildIndex,
            Step::IndexStatus,
            Step::Doctor { fix: false },
            Step::Doctor { fix: true },
            Step::DoctorFull,
            Step::SecretsScan,
            Step::ResumeContext { full: false },
            Step::ResumeContext { full: true },
            Step::Init,
            Step::Demo,
            Step::Serve,
            Step::TeamInit,
            Step::TeamPush,
            Step::Unarchive {
                id: "3f2a9c1d".into(),
            },
            Step::DeleteRun {
                id: "3f2a9c1d".into(),
                force: false,
            },
            Step::DeleteRun {
                id: "3f2a9c1d".into(),
                force: true,
            },
            Step::ArchiveOlderThan,
            Step::WaitLonger,
            Step::UninstallHooks,
        ];
        for step in &all {
            match step {
                Step::FindRuns { .. }
                | Step::ShowRun { .. }
                | Step::Lineage { .. }
                | Step::RegisterOutput
                | Step::LinkRun
                | Step::ListSessions
                | Step::StartSession { .. }
                | Step::CloseSession
                | Step::ResumeSession { .. }
                | Step::SessionStatus { .. }
                | Step::AddMilestone { .. }
                | Step::FinishMilestone { .. }
                | Step::SetUsage
                | Step::WorkflowState { .. }
                | Step::InvokeAgent { .. }
                | Step::ListTranscripts { .. }
                | Step::ImportTranscripts
                | Step::InstallHooks { .. }
                | Step::SyncIndex
                | Step::SyncIndexFull
                | Step::RebuildIndex
                | Step::IndexStatus
                | Step::Doctor { .. }
                | Step::DoctorFull
                | Step::SecretsScan
                | Step::ResumeContext { .. }
                | Step::Init
                | Step::Demo
                | Step::Serve
                | Step::TeamInit
                | Step::TeamPush
                | Step::Unarchive { .. }
                | Step::DeleteRun { .. }
                | Step::ArchiveOlderThan
                | Step::WaitLonger
                | Step::UninstallHooks => {}
            }
        }
        all
    }

    /// One of every error, each with the richest next step it can carry.
    /// As in [`every_step`], the match has no catch-all.
    fn every_error() -> Vec<Error> {
        let find = || Step::find_runs();
        let io = || std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        let all = vec![
            Error::io("/p/x", io()),
            Error::Corrupt {
                path: "/p/x".into(),
                what: "manifest",
                reason: "bad".into(),
            },
            Error::config("/p/logbook.yaml", "bad")
                .with_next(Next::say("see ").step(Step::Init).text(" for the keys")),
            Error::invalid("run id", "x", "expected a UUID")
                .with_next(Next::of(find(), " lists runs")),
            Error::TextTooLong {
                field: "note",
                len: 70_000,
                limit: 65_536,
            },
            Error::not_found("run", "x", Next::of(find(), " lists the runs there are")),
            Error::RunWithoutManifest {
                id: "x".into(),
                folder: "/p/x".into(),
            },
            Error::AmbiguousId {
                kind: "run",
                given: "3f2c9d14".into(),
                candidates: vec!["a".into(), "b".into()],
            },
            Error::LineageCycle {
                child: "a".into(),
                parent: "b".into(),
                cycle: vec!["a".into(), "b".into(), "a".into()],
            },
            Error::NotARegularFile {
                what: "workflow file",
                path: "/p/x".into(),
                found: "a folder",
            },
            Error::NotImported {
                path: "/p/x".into(),
                reason: "empty".into(),
            },
            Error::FileTooLarge {
                what: "workflow file",
                path: "/p/x".into(),
                limit: 1024,
            },
            Error::NoAgentSession {
                agent: "claude-code",
            },
            Error::NotAnAgentSession { id: "x".into() },
            Error::NoActiveSession,
            Error::SeveralPaused {
                ids: vec!["A".into(), "B".into()],
            },
            Error::SessionActive { id: "A".into() },
            Error::SessionClosed {
                id: "A".into(),
                workflow: true,
            },
            Error::SessionClosed {
                id: "A".into(),
                workflow: false,
            },
            Error::IdTooLong {
                id: "A".repeat(300),
                max: 200,
            },
            Error::MilestoneExists {
                session: "A".into(),
                name: "M".into(),
                done: false,
            },
            Error::MilestoneNotFound {
                session: "A".into(),
                name: "M".into(),
                already_done: false,
                near: Some("N".into()),
            },
            Error::MilestoneNotFound {
                session: "A".into(),
                name: "M".into(),
                already_done: false,
                near: None,
            },
            Error::SessionInTwoPlaces {
                live: "/p/a".into(),
                archived: "/p/b".into(),
            },
            Error::RunFinished {
                id: "x".into(),
                status: "completed".into(),
                finished_at: None,
                registering: true,
            },
            Error::NoInvocationInProgress {
                agent: "architect".into(),
            },
            Error::HistoryIncomplete {
                problems: vec!["gone".into()],
            },
            Error::IdMismatch {
                path: "/p/x".into(),
                expected: "a".into(),
                found: "b".into(),
            },
            Error::RootMissing { path: "/p".into() },
            Error::RunArchived {
                id: "3f2a9c1d".into(),
                folder: "/p/.archive/3f2a9c1d".into(),
            },
            Error::RunDeleted {
                id: "3f2a9c1d".into(),
                deleted_at: "2026-01-01T00:00:00.000Z".into(),
                by: "dana".into(),
                tombstone: "/p/.archive/.tombstones/3f2a9c1d.json".into(),
            },
            Error::RunLinked {
                id: "3f2a9c1d".into(),
                linking: vec!["77aa0011".into()],
            },
            Error::NotConfirmed {
                what: "run 3f2a9c1d would be removed".into(),
                id: "3f2a9c1d".into(),
                force: true,
            },
            Error::NoUserHome,
            Error::AlreadyExists {
                path: "/p/x".into(),
                hint: Next::say("give ").step(Step::Demo).text(" a new folder"),
            },
            Error::LockTimeout {
                lock: "/p/l".into(),
                holder: "1".into(),
                waited: Duration::from_secs(1),
            },
            Error::Conflict {
                what: "state".into(),
                expected: 1,
                actual: 2,
            },
            Error::Unsupported {
                filter: "repo",
                scope: "team",
                why: "the catalog keeps no workdirs",
            },
            Error::TokensOutOfRange {
                what: "usage".into(),
                value: "9".into(),
                max: 8,
            },
            Error::AgentSettings {
                path: "/p/s.json".into(),
                reason: "bad".into(),
                hint: "fix it".into(),
            },
            Error::IndexBusy {
                path: "/p/index.db".into(),
                message: "database is locked".into(),
            },
            Error::Index {
                path: "/p/index.db".into(),
                message: "malformed".into(),
                corrupt: true,
            },
            Error::Team {
                server: "h:5432/db".into(),
                message: "down".into(),
                hint: Next::say("then ").step(Step::TeamPush),
            },
            Error::Export {
                endpoint: "http://127.0.0.1:4318/v1/traces".into(),
                message: "connection refused".into(),
                hint: Next::say("point ")
                    .option("endpoint")
                    .text(" at a running receiver"),
            },
        ];
        for e in &all {
            match e {
                Error::Io { .. }
                | Error::Corrupt { .. }
                | Error::Config { .. }
                | Error::Invalid { .. }
                | Error::TextTooLong { .. }
                | Error::NotFound { .. }
                | Error::RunWithoutManifest { .. }
                | Error::AmbiguousId { .. }
                | Error::LineageCycle { .. }
                | Error::NotARegularFile { .. }
                | Error::NotImported { .. }
                | Error::FileTooLarge { .. }
                | Error::NoAgentSession { .. }
                | Error::NotAnAgentSession { .. }
                | Error::NoActiveSession
                | Error::SeveralPaused { .. }
                | Error::SessionActive { .. }
                | Error::SessionClosed { .. }
                | Error::IdTooLong { .. }
                | Error::MilestoneExists { .. }
                | Error::MilestoneNotFound { .. }
                | Error::SessionInTwoPlaces { .. }
                | Error::RunFinished { .. }
                | Error::RunArchived { .. }
                | Error::RunDeleted { .. }
                | Error::RunLinked { .. }
                | Error::NotConfirmed { .. }
                | Error::NoInvocationInProgress { .. }
                | Error::HistoryIncomplete { .. }
                | Error::IdMismatch { .. }
                | Error::RootMissing { .. }
                | Error::NoUserHome
                | Error::AlreadyExists { .. }
                | Error::LockTimeout { .. }
                | Error::Conflict { .. }
                | Error::TokensOutOfRange { .. }
                | Error::Unsupported { .. }
                | Error::AgentSettings { .. }
                | Error::IndexBusy { .. }
                | Error::Index { .. }
                | Error::Team { .. }
                | Error::Export { .. } => {}
            }
        }
        all
    }

    /// What an agent must never be told: a command line it cannot run.
    fn names_a_command(text: &str) -> bool {
        text.contains("`logbook") || text.contains("logbook ") || text.contains(" --")
    }

    #[test]
    fn every_step_is_a_command_at_the_cli_and_a_tool_or_words_over_mcp() {
        for step in every_step() {
            let cli = step.word(Face::Cli);
            let mcp = step.word(Face::Mcp);
            assert!(!names_a_command(&mcp), "{step:?}: {mcp}");
            assert_eq!(step.word(Face::Web), cli, "{step:?}");
            if step == Step::WaitLonger {
                assert!(cli.contains("LOGBOOK_LOCK_TIMEOUT"), "{cli}");
                continue;
            }
            assert!(
                cli.starts_with("`logbook ") && cli.ends_with('`'),
                "{step:?}: {cli}"
            );
            let tool = mcp.split(' ').next().unwrap_or_default();
            assert_eq!(TOOLS.contains(&tool), step.has_tool(), "{step:?}: {mcp}");
            // A tool call's arguments are one JSON object.
            if let Some(args) = mcp
                .strip_prefix(tool)
                .filter(|a| step.has_tool() && !a.is_empty())
            {
                let args: serde_json::Value = serde_json::from_str(args.trim()).unwrap();
                assert!(args.is_object(), "{step:?}: {mcp}");
            }
        }
        let find = Step::FindRuns {
            agent: Some("casey".into()),
            team: true,
        };
        assert_eq!(find.word(Face::Cli), "`logbook find --team --agent casey`");
        assert_eq!(
            find.word(Face::Mcp),
            r#"find_runs {"agent": "casey", "scope": "team"}"#
        );
    }

    #[test]
    fn no_error_tells_an_agent_to_run_a_command() {
        let mut with_steps = 0;
        for e in every_error() {
            let mcp = e.hint_for(Face::Mcp).unwrap_or_default();
            assert!(!names_a_command(&mcp), "{e:?}: {mcp}");
            let line = message(&e, Face::Mcp);
            assert!(!names_a_command(&line), "{e:?}: {line}");
            if e.next().is_some_and(|n| n.steps().next().is_some()) {
                with_steps += 1;
                assert_ne!(e.hint(), e.hint_for(Face::Mcp), "{e:?}");
            }
        }
        assert!(with_steps > 20, "{with_steps}");
    }

    #[test]
    fn exit_codes_and_statuses_follow_the_kind() {
        let codes: Vec<(Error, u8)> = vec![
            (Error::NoActiveSession, 4),
            (
                Error::Conflict {
                    what: "s".into(),
                    expected: 1,
                    actual: 2,
                },
                3,
            ),
            (
                Error::IndexBusy {
                    path: "i".into(),
                    message: "database is locked".into(),
                },
                3,
            ),
            (
                Error::Index {
                    path: "i".into(),
                    message: "no such table".into(),
                    corrupt: false,
                },
                1,
            ),
            (Error::invalid("status", "x", "no"), 1),
        ];
        for (e, code) in codes {
            assert_eq!(exit_code(&e), code, "{e}");
        }
        assert_eq!(ErrorKind::NotFound.http_status(), 404);
        assert_eq!(ErrorKind::Conflict.http_status(), 500);
        // An I/O error a binary met on its own: a missing file is not found.
        let missing = std::io::Error::from(std::io::ErrorKind::NotFound);
        assert_eq!(exit_code(&missing), 4);
        let denied = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        assert_eq!(exit_code(&denied), 1);
    }

    #[test]
    fn a_message_quotes_each_cause_once_and_words_the_next_step_for_its_face() {
        let e = Error::io("/p/x", std::io::Error::from(std::io::ErrorKind::NotFound));
        let line = message(&e, Face::Cli);
        assert_eq!(line.matches("not found").count(), 1, "{line}");
        let e = Error::NoActiveSession;
        assert_eq!(
            message(&e, Face::Cli),
            "no active work session; start one with `logbook start`, or resume a paused one with `logbook resume ID` (`logbook list` shows them)"
        );
        assert_eq!(
            message(&e, Face::Mcp),
            r#"no active work session; start one with session_start, or resume a paused one with session_resume {"id": "ID"} (session_list shows them)"#
        );
    }
}
