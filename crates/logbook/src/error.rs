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

/// Who a hint is worded for: the same error names a shell command to a
/// person at the CLI and a tool to an agent over MCP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Face {
    /// The `logbook` command (and the web viewer, whose readers use it).
    Cli,
    /// An agent calling the MCP server's tools.
    Mcp,
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
    #[error("invalid {field} {}: {reason}", quoted_short(value))]
    Invalid {
        /// The option or field that carried the value.
        field: &'static str,
        /// The value as given (the message quotes its first
        /// [`SHOWN_VALUE`] characters).
        value: String,
        /// What is allowed instead.
        reason: String,
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

    /// An agent's settings file (Claude Code's, Codex's) that Logbook was
    /// asked to change cannot be changed safely; it is left as it was.
    #[error("{path}: {reason}")]
    AgentSettings {
        /// The settings file.
        path: PathBuf,
        /// What is wrong with it, with line and column where known.
        reason: String,
        /// What to do about it.
        hint: String,
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

    /// An export's receiver (an OTLP endpoint) could not be reached, or
    /// refused a batch.
    #[error("export to {endpoint}: {message}")]
    Export {
        /// The endpoint, as resolved (never a header's value).
        endpoint: String,
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
            | Error::TextTooLong { .. }
            | Error::IdTooLong { .. } => ErrorKind::Invalid,
            Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                ErrorKind::NotFound
            }
            Error::NotFound { .. }
            | Error::NoAgentSession { .. }
            | Error::RunWithoutManifest { .. }
            | Error::NoActiveSession
            | Error::MilestoneNotFound {
                already_done: false,
                ..
            } => ErrorKind::NotFound,
            Error::SessionActive { .. }
            | Error::NotAnAgentSession { .. }
            | Error::SeveralPaused { .. }
            | Error::SessionClosed { .. }
            | Error::RunFinished { .. }
            | Error::NoInvocationInProgress { .. }
            | Error::AlreadyExists { .. }
            | Error::MilestoneExists { .. }
            | Error::MilestoneNotFound { .. } => ErrorKind::State,
            Error::RootMissing { .. } => ErrorKind::NotFound,
            Error::LockTimeout { .. } | Error::Conflict { .. } => ErrorKind::Conflict,
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

    /// What the person should do next, when there is something to say,
    /// worded for the command line.
    pub fn hint(&self) -> Option<String> {
        self.hint_for(Face::Cli)
    }

    /// What to do next, worded for `face`: an agent over MCP is told which
    /// tool to call where a person at the CLI is told which command to run.
    pub fn hint_for(&self, face: Face) -> Option<String> {
        if face == Face::Mcp
            && let Some(text) = self.mcp_hint()
        {
            return Some(text);
        }
        self.cli_hint()
    }

    /// The hints whose CLI wording names a command an agent cannot call.
    fn mcp_hint(&self) -> Option<String> {
        let text = match self {
            Error::TextTooLong { .. } => {
                "shorten it; a long text belongs in a file in the run's folder, registered with run_register_output".into()
            }
            Error::NotFound { kind: "run", .. } => "find_runs lists the runs there are".into(),
            Error::NotFound {
                kind: "work session",
                ..
            } => "session_list lists the work sessions".into(),
            Error::NotFound {
                kind: "transcript", ..
            } => "transcript_list lists the transcripts".into(),
            Error::NoActiveSession => {
                "start one with session_start, or name one by its id (session_id; session_list shows them)".into()
            }
            Error::SessionActive { .. } => {
                "close it first (session_close), or call session_start with yes: true to close it and start the new one".into()
            }
            Error::SessionClosed { .. } => "start a new one with session_start".into(),
            Error::SeveralPaused { ids } => format!(
                "call session_resume with the id of one: {}",
                ids.join(", ")
            ),
            Error::LockTimeout { .. } => {
                "another logbook holds the lock; retry the call in a moment".into()
            }
            Error::Conflict { .. } => {
                "read the state again (workflow_state) and retry with its version".into()
            }
            Error::RunFinished {
                registering: true, ..
            } => "outputs can only be registered while it is running (start a new run with run_start, or link one with run_link)".into(),
            Error::NoInvocationInProgress { .. } => {
                "record one first with workflow_invoke".into()
            }
            Error::NoAgentSession { .. } => {
                "its sessions are recorded by Logbook's hooks in that agent, or imported from its logs; transcript_list lists the transcripts there are".into()
            }
            Error::NotAnAgentSession { .. } => {
                "call agent_resume without transcript_id for the latest agent session, or name one imported from an agent log (transcript_list shows them)".into()
            }
            _ => return None,
        };
        Some(text)
    }

    fn cli_hint(&self) -> Option<String> {
        let text = match self {
            Error::NotFound { hint, .. } if !hint.is_empty() => hint.clone(),
            Error::Team { hint, .. } if !hint.is_empty() => hint.clone(),
            Error::Export { hint, .. } if !hint.is_empty() => hint.clone(),
            Error::AgentSettings { hint, .. } => hint.clone(),
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
            Error::NoAgentSession { agent } => format!(
                "record its sessions with `logbook hooks install {agent}`, or import them with `logbook transcript import --from-home`; `logbook transcript list --source {agent}` lists those there are"
            ),
            Error::NotAnAgentSession { .. } => {
                "only sessions imported from an agent's log resume in that agent; `logbook transcript list --source claude-code` (or codex) lists them".into()
            }
            Error::NoActiveSession => {
                "start one with `logbook start`, or resume a paused one with `logbook resume ID` (`logbook list` shows them)".into()
            }
            Error::SeveralPaused { ids } => format!(
                "resume one by its id: {}",
                ids.iter()
                    .map(|id| format!("`logbook resume {id}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
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
            Error::NoUserHome => {
                "set LOGBOOK_HOME to the folder where records outside any project should go".into()
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
            Error::NotImported { .. } => {
                "give a Claude Code or Codex log (`--format claude-code` or `--format codex` when its first lines do not say which agent wrote it), a seed 003 transcript, or a folder of them".into()
            }
            Error::Corrupt { .. } => {
                "fix the file or move it aside (`logbook doctor` lists every problem)".into()
            }
            Error::TextTooLong { .. } => {
                "shorten it; a long text belongs in a file in the run's folder, registered with `logbook run output`".into()
            }
            // Only a damaged database is worth rebuilding: a query SQLite
            // refused says nothing about the index's health.
            Error::Index { corrupt: true, .. } => {
                "`logbook index rebuild` recreates it from the files".into()
            }
            _ => return None,
        };
        Some(text)
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

    #[test]
    fn hints_for_an_agent_name_tools_not_commands() {
        for e in [
            Error::NoActiveSession,
            Error::not_found("run", "x", "`logbook find` lists the runs there are"),
            Error::TextTooLong {
                field: "note",
                len: 70_000,
                limit: 65_536,
            },
        ] {
            let cli = e.hint().unwrap_or_default();
            let mcp = e.hint_for(Face::Mcp).unwrap_or_default();
            assert!(cli.contains("logbook "), "{cli}");
            assert!(!mcp.contains("logbook ") && mcp.contains('_'), "{mcp}");
        }
    }
}
