//! What to do after an error, as data: a [`Next`] is prose the same for
//! every face with [`Step`]s in it, and each face words a step its own way
//! (a shell command at the CLI, a tool call with its arguments over MCP).
//!
//! The trap this avoids: a hint written as CLI prose reaches an agent over
//! MCP, which cannot run `logbook …`. So no hint in the library names a
//! command in its text; it names a [`Step`], and [`Step::word`] is the one
//! place a command or a tool name is spelled.
//!
//! ```
//! use logbook_model::error::{Face, Next, Step};
//! let next = Next::of(Step::FindRuns { agent: None, team: false }, " lists the runs there are");
//! assert_eq!(next.word(Face::Cli), "`logbook find` lists the runs there are");
//! assert_eq!(next.word(Face::Mcp), "find_runs lists the runs there are");
//! ```

use std::borrow::Cow;

use super::Face;

/// One thing a caller can do next, with its arguments; `None` in an
/// argument stands for a placeholder the caller fills in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// List runs, of one agent or all; `team` over the team catalog.
    FindRuns {
        /// The agent whose runs to list (`NAME` for the caller to fill in).
        agent: Option<String>,
        /// Every machine's runs, from the team catalog.
        team: bool,
    },
    /// Show a run (its manifest and outputs).
    ShowRun {
        /// The run, or a placeholder.
        id: Option<String>,
    },
    /// Show what a run builds on and what builds on it.
    Lineage {
        /// The run.
        id: String,
    },
    /// Register a file of a running run as one of its outputs.
    RegisterOutput,
    /// Link a run to an earlier one it builds on.
    LinkRun,
    /// List the work sessions.
    ListSessions,
    /// Start a work session; `yes` closes the active one first.
    StartSession {
        /// Close the active session first.
        yes: bool,
    },
    /// Close the active work session.
    CloseSession,
    /// Resume a paused work session.
    ResumeSession {
        /// The session, or a placeholder.
        id: Option<String>,
    },
    /// Show a work session: tokens, milestones, agents spawned.
    SessionStatus {
        /// The session, or the active one.
        id: Option<String>,
    },
    /// Add a milestone to the work session.
    AddMilestone {
        /// Its name.
        name: String,
    },
    /// Mark a milestone of the work session done.
    FinishMilestone {
        /// Its name.
        name: String,
    },
    /// Record the main session's token usage.
    SetUsage,
    /// Read a work session's workflow state (and its version).
    WorkflowState {
        /// The session, or the active one.
        session: Option<String>,
    },
    /// Record an invocation of an agent in the workflow.
    InvokeAgent {
        /// The agent type.
        agent: String,
    },
    /// List the stored transcripts; `all` with the archived ones.
    ListTranscripts {
        /// Include archived transcripts.
        all: bool,
        /// Only those of this agent (`claude-code`, `codex`), where the
        /// face can filter so.
        source: Option<String>,
    },
    /// Import an agent's logs as transcripts (a person's step).
    ImportTranscripts,
    /// Install Logbook's hooks in an agent (a person's step).
    InstallHooks {
        /// `claude-code` or `codex`.
        agent: String,
    },
    /// Bring the index up to date with the files (a person's step).
    SyncIndex,
    /// Bring the index up to date with the files and every run's outputs
    /// (a person's step).
    SyncIndexFull,
    /// Rebuild the index from the files (a person's step).
    RebuildIndex,
    /// Show how far the index and its full-text part are (a person's step).
    IndexStatus,
    /// Check every file and the index; `fix` repairs what it can.
    Doctor {
        /// Repair what can be repaired.
        fix: bool,
    },
    /// Check every file reading every manifest and output in full (a
    /// person's step).
    DoctorFull,
    /// List the secrets in stored files (a person's step).
    SecretsScan,
    /// Read the resume text of the work session; `full` with every item.
    ResumeContext {
        /// Every milestone, run and invocation, not only the last few.
        full: bool,
    },
    /// Write `logbook.yaml` with the defaults (a person's step).
    Init,
    /// Fill a new folder with an example project (a person's step).
    Demo,
    /// Serve the web viewer (a person's step).
    Serve,
    /// Create the team catalog's tables (a person's step).
    TeamInit,
    /// Send what waits to the team catalog (a person's step).
    TeamPush,
    /// Move an archived run back into the live set.
    Unarchive {
        /// The run.
        id: String,
    },
    /// Delete a run for good; `force` even though runs link to it.
    DeleteRun {
        /// The run.
        id: String,
        /// Delete a run others link to.
        force: bool,
    },
    /// Archive the runs finished longer ago than an age.
    ArchiveOlderThan,
    /// Try again, waiting longer for a lock.
    WaitLonger,
    /// Remove Logbook's hooks from an agent's settings file (a person's
    /// step).
    UninstallHooks,
}

impl Step {
    /// Every run of this project: what a person lists to find a run id.
    pub fn find_runs() -> Step {
        Step::FindRuns {
            agent: None,
            team: false,
        }
    }

    /// The stored transcripts (with the archived ones when `all`), of every
    /// agent.
    pub fn list_transcripts(all: bool) -> Step {
        Step::ListTranscripts { all, source: None }
    }
}

/// A tool call's argument: a string (a value, or a placeholder such as
/// `ID` for the caller to fill in) or `true`.
enum Arg<'a> {
    Text(&'a str),
    Flag,
}

impl Step {
    /// The step worded for `face`: a command at the CLI and in the web
    /// viewer (whose readers use the CLI), a tool call over MCP.
    pub fn word(&self, face: Face) -> String {
        match (face, self) {
            (Face::Cli | Face::Web, Step::WaitLonger) => {
                "Set LOGBOOK_LOCK_TIMEOUT (seconds) to wait longer".into()
            }
            (Face::Cli | Face::Web, _) => format!("`logbook {}`", self.command()),
            (Face::Mcp, _) => self.tool_call(),
        }
    }

    /// The CLI command, after `logbook `.
    fn command(&self) -> String {
        let or_id = |id: &Option<String>, placeholder: &str| {
            id.clone().unwrap_or_else(|| placeholder.to_string())
        };
        match self {
            Step::FindRuns { agent, team } => {
                let mut c = "find".to_string();
                if *team {
                    c.push_str(" --team");
                }
                if let Some(agent) = agent {
                    c.push_str(&format!(" --agent {agent}"));
                }
                c
            }
            Step::ShowRun { id } => format!("run show {}", or_id(id, "ID")),
            Step::Lineage { id } => format!("lineage {id}"),
            Step::RegisterOutput => "run output".into(),
            Step::LinkRun => "run link".into(),
            Step::ListSessions => "list".into(),
            Step::StartSession { yes: false } => "start".into(),
            Step::StartSession { yes: true } => "start --yes".into(),
            Step::CloseSession => "close".into(),
            Step::ResumeSession { id } => format!("resume {}", or_id(id, "ID")),
            Step::SessionStatus { id: None } => "status".into(),
            Step::SessionStatus { id: Some(id) } => format!("status {id}"),
            Step::AddMilestone { name } => format!("milestone add {name:?}"),
            Step::FinishMilestone { name } => format!("milestone done {name:?}"),
            Step::SetUsage => "usage --current N".into(),
            Step::WorkflowState { session: None } => "workflow show".into(),
            Step::WorkflowState { session: Some(s) } => format!("workflow show --session {s}"),
            Step::InvokeAgent { agent } => format!("workflow invoke {agent} --prompt …"),
            Step::ListTranscripts { all, source } => {
                let mut c = "transcript list".to_string();
                if *all {
                    c.push_str(" --all");
                }
                if let Some(source) = source {
                    c.push_str(&format!(" --source {source}"));
                }
                c
            }
            Step::ImportTranscripts => "transcript import --from-home".into(),
            Step::InstallHooks { agent } => format!("hooks install {agent}"),
            Step::SyncIndex => "index sync".into(),
            Step::SyncIndexFull => "index sync --full".into(),
            Step::RebuildIndex => "index rebuild".into(),
            Step::IndexStatus => "index status".into(),
            Step::DoctorFull => "doctor --full".into(),
            Step::SecretsScan => "secrets scan".into(),
            Step::ResumeContext { full: false } => "resume-context".into(),
            Step::ResumeContext { full: true } => "resume-context --detail full".into(),
            Step::Doctor { fix: false } => "doctor".into(),
            Step::Doctor { fix: true } => "doctor --fix".into(),
            Step::Init => "init".into(),
            Step::Demo => "demo DIR".into(),
            Step::Serve => "serve".into(),
            Step::TeamInit => "team init".into(),
            Step::TeamPush => "team push".into(),
            Step::Unarchive { id } => format!("unarchive {id}"),
            Step::DeleteRun { id, force: false } => format!("delete {id} --yes"),
            Step::DeleteRun { id, force: true } => format!("delete {id} --yes --force"),
            Step::ArchiveOlderThan => "archive --older-than 90d".into(),
            Step::WaitLonger => String::new(),
            Step::UninstallHooks => "hooks uninstall".into(),
        }
    }

    /// The tool call an agent makes, or, for a step only a person at the
    /// command line can take, that step in words.
    fn tool_call(&self) -> String {
        let (tool, args): (&str, Vec<(&str, Arg)>) = match self {
            Step::FindRuns { agent, team } => {
                let mut args = vec![];
                if let Some(agent) = agent {
                    args.push(("agent", Arg::Text(agent)));
                }
                if *team {
                    args.push(("scope", Arg::Text("team")));
                }
                ("find_runs", args)
            }
            Step::ShowRun { id } => ("run_show", vec![("id", id_arg(id))]),
            Step::Lineage { id } => ("run_lineage", vec![("id", Arg::Text(id))]),
            Step::RegisterOutput => ("run_register_output", vec![]),
            Step::LinkRun => ("run_link", vec![]),
            Step::ListSessions => ("session_list", vec![]),
            Step::StartSession { yes } => (
                "session_start",
                if *yes {
                    vec![("yes", Arg::Flag)]
                } else {
                    vec![]
                },
            ),
            Step::CloseSession => ("session_close", vec![]),
            Step::ResumeSession { id } => ("session_resume", vec![("id", id_arg(id))]),
            Step::SessionStatus { id } => (
                "session_status",
                id.iter().map(|id| ("id", Arg::Text(id))).collect(),
            ),
            Step::AddMilestone { name } => {
                ("session_update", vec![("milestone_add", Arg::Text(name))])
            }
            Step::FinishMilestone { name } => {
                ("session_update", vec![("milestone_done", Arg::Text(name))])
            }
            Step::SetUsage => ("session_update", vec![("current", Arg::Text("N"))]),
            Step::WorkflowState { session } => (
                "workflow_state",
                session.iter().map(|s| ("session", Arg::Text(s))).collect(),
            ),
            Step::InvokeAgent { agent } => (
                "workflow_invoke",
                vec![("agent", Arg::Text(agent)), ("prompt", Arg::Text("…"))],
            ),
            Step::ListTranscripts { all, .. } => (
                "transcript_list",
                if *all {
                    vec![("all", Arg::Flag)]
                } else {
                    vec![]
                },
            ),
            Step::ResumeContext { full } => (
                "resume_context",
                if *full {
                    vec![("detail", Arg::Text("full"))]
                } else {
                    vec![]
                },
            ),
            Step::WaitLonger => return "Retry the call in a moment".into(),
            Step::ImportTranscripts => return person("transcript import"),
            Step::InstallHooks { agent } => return person(&format!("hooks install for {agent}")),
            Step::SyncIndex => return person("index sync"),
            Step::SyncIndexFull => return person("index sync with its full option"),
            Step::RebuildIndex => return person("index rebuild"),
            Step::IndexStatus => return person("index status"),
            Step::DoctorFull => return person("doctor with its full option"),
            Step::SecretsScan => return person("secrets scan"),
            Step::Doctor { fix: false } => return person("doctor"),
            Step::Doctor { fix: true } => return person("doctor with its fix option"),
            Step::Init => return person("init"),
            Step::Demo => return person("demo"),
            Step::Serve => return person("serve"),
            Step::TeamInit => return person("team init"),
            Step::TeamPush => return person("team push"),
            Step::Unarchive { id } => return person(&format!("unarchive of {id}")),
            Step::DeleteRun { id, force: false } => return person(&format!("delete of {id}")),
            Step::DeleteRun { id, force: true } => {
                return person(&format!("delete of {id}, forced"));
            }
            Step::ArchiveOlderThan => return person("archive by age"),
            Step::UninstallHooks => return person("hooks uninstall"),
        };
        if args.is_empty() {
            return tool.to_string();
        }
        let args: Vec<String> = args
            .into_iter()
            .map(|(key, value)| {
                let value = match value {
                    Arg::Text(t) => json_string(t),
                    Arg::Flag => "true".to_string(),
                };
                format!("{}: {value}", json_string(key))
            })
            .collect();
        format!("{tool} {{{}}}", args.join(", "))
    }

    /// Whether an agent can take this step itself (a tool does it).
    pub fn has_tool(&self) -> bool {
        !matches!(
            self,
            Step::WaitLonger
                | Step::ImportTranscripts
                | Step::InstallHooks { .. }
                | Step::SyncIndex
                | Step::SyncIndexFull
                | Step::RebuildIndex
                | Step::IndexStatus
                | Step::Doctor { .. }
                | Step::DoctorFull
                | Step::SecretsScan
                | Step::Init
                | Step::Demo
                | Step::Serve
                | Step::TeamInit
                | Step::TeamPush
                | Step::Unarchive { .. }
                | Step::DeleteRun { .. }
                | Step::ArchiveOlderThan
                | Step::UninstallHooks
        )
    }
}

fn id_arg(id: &Option<String>) -> Arg<'_> {
    id.as_deref().map_or(Arg::Text("ID"), Arg::Text)
}

/// A step no tool takes, named so the agent can tell a person what to run
/// without being handed a command line it might try to execute.
fn person(what: &str) -> String {
    format!("the command line's {what} (a person's step)")
}

fn json_string(s: &str) -> String {
    serde_json::Value::from(s).to_string()
}

/// One piece of a [`Next`].
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    /// Prose, the same for every face; it names no command.
    Say(Cow<'static, str>),
    /// A step, worded by the face.
    Do(Step),
    /// An option's name (snake_case), as the face spells it: `--max-tokens`
    /// on the command line, `max_tokens` in a tool's arguments.
    Opt(&'static str),
}

/// What to do next after an error: prose and [`Step`]s, in order. Empty
/// when there is nothing to say.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Next {
    parts: Vec<Part>,
}

impl Next {
    /// Nothing to say.
    pub fn none() -> Next {
        Next::default()
    }

    /// Prose alone; it must name no command (name a [`Step`] instead).
    pub fn say(text: impl Into<Cow<'static, str>>) -> Next {
        Next::none().text(text)
    }

    /// A step followed by what it does, the commonest shape
    /// ("`logbook find` lists the runs there are").
    pub fn of(step: Step, then: impl Into<Cow<'static, str>>) -> Next {
        Next::none().step(step).text(then)
    }

    /// This, then prose.
    pub fn text(mut self, text: impl Into<Cow<'static, str>>) -> Next {
        let text = text.into();
        if !text.is_empty() {
            self.parts.push(Part::Say(text));
        }
        self
    }

    /// This, then a step.
    pub fn step(mut self, step: Step) -> Next {
        self.parts.push(Part::Do(step));
        self
    }

    /// This, then an option's name (snake_case), spelled as the face
    /// spells its options.
    pub fn option(mut self, name: &'static str) -> Next {
        self.parts.push(Part::Opt(name));
        self
    }

    /// This, then all of `more`.
    pub fn then(mut self, more: Next) -> Next {
        self.parts.extend(more.parts);
        self
    }

    /// Whether there is nothing to say.
    pub fn is_empty(&self) -> bool {
        self.parts.is_empty()
    }

    /// The steps named, in order, for a face that offers them as actions.
    pub fn steps(&self) -> impl Iterator<Item = &Step> {
        self.parts.iter().filter_map(|p| match p {
            Part::Do(s) => Some(s),
            Part::Say(_) | Part::Opt(_) => None,
        })
    }

    /// The whole sentence, each step worded for `face`.
    pub fn word(&self, face: Face) -> String {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Say(text) => out.push_str(text),
                Part::Do(step) => out.push_str(&step.word(face)),
                Part::Opt(name) => match face {
                    Face::Cli | Face::Web => {
                        out.push_str("--");
                        out.push_str(&name.replace('_', "-"));
                    }
                    Face::Mcp => out.push_str(name),
                },
            }
        }
        out
    }
}

impl From<Step> for Next {
    fn from(step: Step) -> Next {
        Next::none().step(step)
    }
}

impl From<&str> for Next {
    fn from(text: &str) -> Next {
        Next::say(text.to_string())
    }
}

impl From<&String> for Next {
    fn from(text: &String) -> Next {
        Next::say(text.clone())
    }
}

impl From<String> for Next {
    fn from(text: String) -> Next {
        Next::say(text)
    }
}
