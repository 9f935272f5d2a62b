//! Workflow state (seed 004): the orchestrator's mode, agent invocations,
//! decisions, verdicts and handoffs for one work session, kept on disk so it
//! survives conversation compaction and server restarts.
//!
//! One camelCase JSON file per work session, `{sessions_dir}/{id}.state.json`
//! ([`SessionState`]). Every change goes through [`update`]: the store's
//! lock, read, change, bump `version`, atomic write. A caller may name the
//! version it expects ([`Target::expect_version`]) and gets
//! [`Error::Conflict`] if another writer got there first.
//!
//! When `agentHistory` holds more than [`COMPACT_ABOVE`] entries after a
//! completion, all but the last [`KEEP_AFTER_COMPACTION`] move to an archive
//! in `{sessions_dir}/{id}.history/` (never one still `in_progress`), and a
//! [`CompactionEntry`] names it. The archive is written before the state, and
//! only archives named in `compactionHistory` are read back, so a crash
//! between the two writes neither loses nor duplicates an invocation.
//! [`full_history`] rebuilds the whole sequence in the order it began.
//!
//! ```no_run
//! use logbook::{Project, workflow::{self, AgentType, Invoke, Target}};
//! let project = Project::discover(&std::env::current_dir()?, None)?;
//! let state = workflow::invoke(&project, &Target::default(), Invoke {
//!     agent: AgentType::Analyst,
//!     prompt: "Research the options".into(),
//!     ..Invoke::default()
//! })?;
//! println!("version {}", state.version);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use crate::clock;
use crate::error::{Error, Result};
use crate::project::Project;
use crate::store;
use crate::work_session::{self, SessionStatus};

/// Compaction runs when `agentHistory` holds more than this many entries.
pub const COMPACT_ABOVE: usize = 10;
/// How many of the newest entries compaction always leaves in place.
pub const KEEP_AFTER_COMPACTION: usize = 3;

/// Declares a closed set of string values: serde names, `as_str`, the list of
/// valid values and a `FromStr` whose error lists them.
macro_rules! string_enum {
    ($(#[$meta:meta])* $name:ident, $field:literal, { $($(#[$vmeta:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum $name {
            $($(#[$vmeta])* #[serde(rename = $text)] $variant),+
        }

        impl $name {
            /// Every valid value, in the seed's order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The value as written in files and on the command line.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }

            /// The valid values, comma separated, for error messages.
            pub fn valid() -> String {
                [$($text),+].join(", ")
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl std::str::FromStr for $name {
            type Err = Error;
            fn from_str(s: &str) -> Result<Self> {
                match s.trim() {
                    $($text => Ok($name::$variant),)+
                    _ => Err(Error::invalid($field, s, format!("expected one of: {}", $name::valid()))),
                }
            }
        }
    };
}

string_enum!(
    /// The 17 agent types an orchestrator routes work to; anything else is
    /// refused by name so a typo never becomes a new agent.
    AgentType, "agent type", {
        /// Routes work and owns the workflow.
        Orchestrator = "orchestrator",
        /// Researches and gathers requirements.
        Analyst = "analyst",
        /// Designs the system.
        Architect = "architect",
        /// Breaks work into steps.
        Planner = "planner",
        /// Writes the code.
        Implementer = "implementer",
        /// Reviews plans and designs.
        Critic = "critic",
        /// Tests.
        Qa = "qa",
        /// Reviews security.
        Security = "security",
        /// Builds and deploys.
        Devops = "devops",
        /// Looks back on what happened.
        Retrospective = "retrospective",
        /// Keeps long-term memory.
        Memory = "memory",
        /// Keeps the skill book.
        Skillbook = "skillbook",
        /// Challenges the consensus.
        IndependentThinker = "independent-thinker",
        /// Advises on direction.
        HighLevelAdvisor = "high-level-advisor",
        /// Explains.
        Explainer = "explainer",
        /// Turns plans into tasks.
        TaskGenerator = "task-generator",
        /// Answers pull-request comments.
        PrCommentResponder = "pr-comment-responder",
    }
);

string_enum!(
    /// The session's working mode (seed 004).
    Mode, "mode", {
        /// Understanding the problem.
        Analysis = "analysis",
        /// Planning the work.
        Planning = "planning",
        /// Writing code.
        Coding = "coding",
        /// Protocol enforcement off.
        Disabled = "disabled",
    }
);

string_enum!(
    /// Where the orchestrated workflow stands.
    Phase, "workflow phase", {
        /// Deciding what to do.
        Planning = "planning",
        /// Doing it.
        Implementation = "implementation",
        /// Checking it.
        Validation = "validation",
        /// Done.
        Complete = "complete",
    }
);

string_enum!(
    /// The state of one agent invocation.
    InvocationStatus, "invocation status", {
        /// Started, not yet reported back.
        InProgress = "in_progress",
        /// Finished.
        Completed = "completed",
        /// Gave up or crashed.
        Failed = "failed",
        /// Finished but reported blockers.
        Blocked = "blocked",
    }
);

string_enum!(
    /// What a decision is about.
    DecisionType, "decision type", {
        /// System structure.
        Architectural = "architectural",
        /// Technology or implementation choice.
        Technical = "technical",
        /// How the team works.
        Process = "process",
        /// What is in or out.
        Scope = "scope",
    }
);

string_enum!(
    /// A specialist's verdict.
    VerdictDecision, "verdict decision", {
        /// Go ahead.
        Approve = "approve",
        /// Do not.
        Reject = "reject",
        /// Go ahead if the conditions are met.
        Conditional = "conditional",
        /// Rework and resubmit.
        NeedsRevision = "needs_revision",
    }
);

/// The whole workflow state of one work session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionState {
    /// The mode the session is in now.
    pub current_mode: Mode,
    /// Every mode change, oldest first.
    #[serde(default)]
    pub mode_history: Vec<ModeChange>,
    /// Whether the session-start protocol ran.
    #[serde(default)]
    pub protocol_start_complete: bool,
    /// Whether the session-end protocol ran.
    #[serde(default)]
    pub protocol_end_complete: bool,
    /// Evidence the start protocol recorded.
    #[serde(default)]
    pub protocol_start_evidence: Map<String, Value>,
    /// Evidence the end protocol recorded.
    #[serde(default)]
    pub protocol_end_evidence: Map<String, Value>,
    /// The orchestrated workflow, once an agent was first invoked.
    #[serde(default)]
    pub orchestrator_workflow: Option<OrchestratorWorkflow>,
    /// The feature being worked on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_feature: Option<String>,
    /// The task being worked on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_task: Option<String>,
    /// Bumped by every change; the compare-and-swap token. A hand-written
    /// file without one counts as a new state.
    #[serde(default = "first_version")]
    pub version: u64,
    /// When the state was first created.
    #[serde(default)]
    pub created_at: String,
    /// When it last changed.
    #[serde(default)]
    pub updated_at: String,
    /// Keys Logbook does not know, kept on rewrite.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One entry of `modeHistory`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModeChange {
    /// The mode entered.
    pub mode: Mode,
    /// When.
    pub timestamp: String,
    /// Keys Logbook does not know, kept on rewrite.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The orchestrator's routing record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OrchestratorWorkflow {
    /// The agent working now (`null` when none).
    #[serde(default)]
    pub active_agent: Option<AgentType>,
    /// Where the workflow stands.
    pub workflow_phase: Phase,
    /// Invocations not yet compacted, in the order they began.
    #[serde(default)]
    pub agent_history: Vec<AgentInvocation>,
    /// Decisions taken (never compacted).
    #[serde(default)]
    pub decisions: Vec<Decision>,
    /// Verdicts given (never compacted).
    #[serde(default)]
    pub verdicts: Vec<Verdict>,
    /// Handoffs whose target has not been invoked yet.
    #[serde(default)]
    pub pending_handoffs: Vec<Handoff>,
    /// Where compacted invocations went.
    #[serde(default)]
    pub compaction_history: Vec<CompactionEntry>,
    /// When the workflow began.
    #[serde(default)]
    pub started_at: String,
    /// When `activeAgent` last changed.
    #[serde(default)]
    pub last_agent_change: String,
    /// Keys Logbook does not know, kept on rewrite.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One delegation of work to an agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentInvocation {
    /// Who was invoked.
    pub agent: AgentType,
    /// When.
    pub started_at: String,
    /// When it reported back (`null` while in progress).
    #[serde(default)]
    pub completed_at: Option<String>,
    /// in_progress, completed, failed or blocked.
    pub status: InvocationStatus,
    /// What it was asked.
    #[serde(default)]
    pub input: InvocationInput,
    /// What it reported (`null` while in progress).
    #[serde(default)]
    pub output: Option<InvocationOutput>,
    /// The agent that handed the work over.
    #[serde(default)]
    pub handoff_from: Option<AgentType>,
    /// The agent it handed the work to.
    #[serde(default)]
    pub handoff_to: Option<AgentType>,
    /// Why it handed over.
    #[serde(default)]
    pub handoff_reason: String,
    /// Keys Logbook does not know, kept on rewrite.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// What an agent was asked.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct InvocationInput {
    /// The task.
    #[serde(default)]
    pub prompt: String,
    /// Structured context (e.g. `run_id` linking a run).
    #[serde(default)]
    pub context: Map<String, Value>,
    /// Files it was given.
    #[serde(default)]
    pub artifacts: Vec<String>,
    /// Keys Logbook does not know, kept on rewrite.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// What an agent reported back.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct InvocationOutput {
    /// Files it produced.
    #[serde(default)]
    pub artifacts: Vec<String>,
    /// What it did.
    #[serde(default)]
    pub summary: String,
    /// What it suggests next.
    #[serde(default)]
    pub recommendations: Vec<String>,
    /// What stops it.
    #[serde(default)]
    pub blockers: Vec<String>,
    /// Keys Logbook does not know, kept on rewrite.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A decision taken during the workflow.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Decision {
    /// A UUID.
    #[serde(deserialize_with = "uuid_string")]
    pub id: String,
    /// architectural, technical, process or scope.
    #[serde(rename = "type")]
    pub kind: DecisionType,
    /// What was decided.
    pub description: String,
    /// Why.
    #[serde(default)]
    pub rationale: String,
    /// Who decided.
    pub decided_by: AgentType,
    /// Who agreed.
    #[serde(default)]
    pub approved_by: Vec<AgentType>,
    /// Who disagreed.
    #[serde(default)]
    pub rejected_by: Vec<AgentType>,
    /// When.
    pub timestamp: String,
    /// Keys Logbook does not know, kept on rewrite.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A specialist's judgement with its confidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// Who judged.
    pub agent: AgentType,
    /// approve, reject, conditional or needs_revision.
    pub decision: VerdictDecision,
    /// From 0 to 1.
    #[serde(deserialize_with = "unit_interval")]
    pub confidence: f64,
    /// Why.
    #[serde(default)]
    pub reasoning: String,
    /// What must hold for a conditional approval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<String>>,
    /// What stands in the way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blockers: Option<Vec<String>>,
    /// When.
    pub timestamp: String,
    /// Keys Logbook does not know, kept on rewrite.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Work handed from one agent to another, pending until the target is invoked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Handoff {
    /// Who hands over.
    pub from_agent: AgentType,
    /// Who takes over.
    pub to_agent: AgentType,
    /// Why.
    #[serde(default)]
    pub reason: String,
    /// What the next agent needs to know.
    #[serde(default)]
    pub context: String,
    /// Files passed along.
    #[serde(default)]
    pub artifacts: Vec<String>,
    /// Structured context to carry across compaction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preserved_context: Option<Map<String, Value>>,
    /// When.
    pub created_at: String,
    /// Keys Logbook does not know, kept on rewrite.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Where one compaction moved invocations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionEntry {
    /// The archive, relative to the folder of the state file.
    pub note_path: String,
    /// When.
    pub compacted_at: String,
    /// How many invocations it holds.
    pub count: u64,
    /// Keys Logbook does not know, kept on rewrite.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The content of one compaction archive. `positions` and `historyLength`
/// record where the archived entries sat among the ones kept, so the full
/// history can be rebuilt exactly even when an `in_progress` entry stayed
/// behind between them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompactionArchive {
    /// The work session.
    pub session_id: String,
    /// When.
    pub compacted_at: String,
    /// How many invocations.
    pub count: u64,
    /// Length of `agentHistory` just before compaction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_length: Option<usize>,
    /// Index in that history of each archived invocation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub positions: Option<Vec<usize>>,
    /// The archived invocations, in order.
    pub invocations: Vec<AgentInvocation>,
    /// Keys Logbook does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

fn first_version() -> u64 {
    1
}

fn unit_interval<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<f64, D::Error> {
    let x = f64::deserialize(d)?;
    check_confidence(x).map_err(serde::de::Error::custom)?;
    Ok(x)
}

/// Checks a verdict's confidence is a finite number from 0 to 1.
pub fn check_confidence(x: f64) -> std::result::Result<(), String> {
    if x.is_finite() && (0.0..=1.0).contains(&x) {
        Ok(())
    } else {
        Err(format!("confidence {x} is outside 0 to 1 (e.g. 0.8)"))
    }
}

fn uuid_string<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<String, D::Error> {
    let s = String::deserialize(d)?;
    if uuid::Uuid::try_parse(&s).is_err() {
        return Err(serde::de::Error::custom(format!(
            "decision id {s:?} is not a UUID (e.g. 5c0e8a1d-2f3b-4c6d-8e9f-0a1b2c3d4e5f)"
        )));
    }
    Ok(s)
}

impl SessionState {
    /// A new state: `analysis` mode with one history entry, version 1, no
    /// workflow yet.
    pub fn new(now: &str) -> SessionState {
        SessionState {
            current_mode: Mode::Analysis,
            mode_history: vec![ModeChange {
                mode: Mode::Analysis,
                timestamp: now.to_string(),
                extra: Map::new(),
            }],
            protocol_start_complete: false,
            protocol_end_complete: false,
            protocol_start_evidence: Map::new(),
            protocol_end_evidence: Map::new(),
            orchestrator_workflow: None,
            active_feature: None,
            active_task: None,
            version: 1,
            created_at: now.to_string(),
            updated_at: now.to_string(),
            extra: Map::new(),
        }
    }

    /// The workflow, created (phase `planning`) if the session has none yet.
    pub fn workflow_mut(&mut self, now: &str) -> &mut OrchestratorWorkflow {
        self.orchestrator_workflow
            .get_or_insert_with(|| OrchestratorWorkflow::new(now))
    }
}

impl OrchestratorWorkflow {
    /// An empty workflow in the planning phase.
    pub fn new(now: &str) -> OrchestratorWorkflow {
        OrchestratorWorkflow {
            active_agent: None,
            workflow_phase: Phase::Planning,
            agent_history: vec![],
            decisions: vec![],
            verdicts: vec![],
            pending_handoffs: vec![],
            compaction_history: vec![],
            started_at: now.to_string(),
            last_agent_change: now.to_string(),
            extra: Map::new(),
        }
    }

    /// Invocations ever recorded: those here plus those compacted away.
    pub fn total_invocations(&self) -> u64 {
        self.agent_history.len() as u64
            + self.compaction_history.iter().map(|c| c.count).sum::<u64>()
    }
}

/// Which state an operation changes, and the version the caller expects.
#[derive(Debug, Clone, Default)]
pub struct Target {
    /// The work session (default: the active one).
    pub session: Option<String>,
    /// Fail with [`Error::Conflict`] unless the state is at this version.
    pub expect_version: Option<u64>,
}

/// A work session's state as read from disk.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The work session id.
    pub session_id: String,
    /// The state (a fresh one, not yet written, when there is no file).
    pub state: SessionState,
    /// The state file (live or archived).
    pub path: PathBuf,
    /// Whether the file exists yet.
    pub exists: bool,
    /// The file as read, so output can keep its key order.
    pub original: Option<Value>,
}

/// `{dir}/{id}.state.json`.
pub fn state_file(dir: &Path, id: &str) -> PathBuf {
    dir.join(format!("{id}.state.json"))
}

/// `{dir}/{id}.history`, where compaction archives go.
pub fn history_dir(dir: &Path, id: &str) -> PathBuf {
    dir.join(format!("{id}.history"))
}

fn read_state(path: &Path) -> Result<Option<(SessionState, Value)>> {
    let Some(text) = store::read_optional(path)? else {
        return Ok(None);
    };
    store::parse_json_with_raw(path, "workflow state", &text).map(Some)
}

/// Reads the workflow state of a work session (the active one by default),
/// live or archived. A session without a state file gets a fresh state
/// (version 1), which is not written until something changes.
pub fn load(p: &Project, session: Option<&str>) -> Result<Loaded> {
    let id = work_session::resolve(p, session)?;
    let live = state_file(&p.config.sessions_dir, &id);
    let archived = state_file(&p.config.session_archive_dir, &id);
    for path in [&live, &archived] {
        if let Some((state, original)) = read_state(path)? {
            return Ok(Loaded {
                session_id: id,
                state,
                path: path.clone(),
                exists: true,
                original: Some(original),
            });
        }
    }
    // Only a session that exists has a state, even an empty one.
    work_session::load(p, &id)?;
    Ok(Loaded {
        session_id: id,
        state: SessionState::new(&clock::now_string()),
        path: live,
        exists: false,
        original: None,
    })
}

/// Applies `change` to a live session's state under its lock: checks the
/// expected version, bumps `version` and `updatedAt` when something changed,
/// compacts when asked and writes (archive first, then state). Returns the
/// state as written and what `change` returned.
pub fn update<T>(
    p: &Project,
    target: &Target,
    compact: bool,
    change: impl FnOnce(&mut SessionState, &str) -> Result<T>,
) -> Result<(SessionState, T)> {
    // Shared with other writers, exclusive for `close`, which moves the
    // state file: no write can land after the move.
    let _pointer = p.locks.shared(work_session::POINTER_LOCK)?;
    let id = work_session::resolve(p, target.session.as_deref())?;
    let (ws, ws_path) = work_session::load(p, &id)?;
    if ws.status == SessionStatus::Closed
        || ws_path.parent() != Some(p.config.sessions_dir.as_path())
    {
        return Err(Error::State(format!(
            "work session {id} is closed and archived; its workflow state is read-only (`logbook workflow show --session {id}`); start a new session with `logbook start`"
        )));
    }
    let _lock = p.locks.exclusive(&format!("state-{id}"))?;
    let dir = &p.config.sessions_dir;
    let path = state_file(dir, &id);
    let now = clock::now_string();
    let (mut state, original) = match read_state(&path)? {
        Some((s, o)) => (s, Some(o)),
        None => (SessionState::new(&now), None),
    };
    if let Some(expected) = target.expect_version
        && expected != state.version
    {
        return Err(Error::Conflict {
            what: format!("workflow state of {id} ({})", path.display()),
            expected,
            actual: state.version,
        });
    }
    let before = state.clone();
    let out = change(&mut state, &now)?;
    if state == before {
        return Ok((state, out));
    }
    let archive = if compact {
        compact_history(&mut state, dir, &id, &now)?
    } else {
        None
    };
    state.version = before.version + 1;
    state.updated_at = now;
    if let Some((archive_path, archive)) = archive {
        let text = store::to_json(&archive_path, &archive, None)?;
        store::write_atomic(&archive_path, text.as_bytes())?;
    }
    let text = store::to_json(&path, &state, original.as_ref())?;
    store::write_atomic(&path, text.as_bytes())?;
    Ok((state, out))
}

/// Moves all but the newest entries out of `agentHistory` when it is too
/// long, leaving `in_progress` ones in place. Returns the archive to write
/// (before the state) or `None` when nothing moves.
fn compact_history(
    state: &mut SessionState,
    dir: &Path,
    id: &str,
    now: &str,
) -> Result<Option<(PathBuf, CompactionArchive)>> {
    let Some(wf) = state.orchestrator_workflow.as_mut() else {
        return Ok(None);
    };
    let len = wf.agent_history.len();
    if len <= COMPACT_ABOVE {
        return Ok(None);
    }
    let keep_from = len - KEEP_AFTER_COMPACTION;
    let positions: Vec<usize> = (0..keep_from)
        .filter(|&i| wf.agent_history[i].status != InvocationStatus::InProgress)
        .collect();
    if positions.is_empty() {
        return Ok(None);
    }
    let mut archived = Vec::with_capacity(positions.len());
    let mut kept = Vec::with_capacity(len - positions.len());
    for (i, inv) in std::mem::take(&mut wf.agent_history)
        .into_iter()
        .enumerate()
    {
        if positions.binary_search(&i).is_ok() {
            archived.push(inv);
        } else {
            kept.push(inv);
        }
    }
    wf.agent_history = kept;

    let history = history_dir(dir, id);
    let stamp: String = now
        .chars()
        .map(|c| if c == ':' || c == '.' { '-' } else { c })
        .collect();
    let mut name = format!("{stamp}.json");
    let mut n = 1;
    // Several compactions in one millisecond (or under a fixed clock) must
    // not overwrite each other's archives.
    while history.join(&name).exists() {
        n += 1;
        name = format!("{stamp}-{n}.json");
    }
    let count = archived.len() as u64;
    wf.compaction_history.push(CompactionEntry {
        note_path: format!("{id}.history/{name}"),
        compacted_at: now.to_string(),
        count,
        extra: Map::new(),
    });
    Ok(Some((
        history.join(name),
        CompactionArchive {
            session_id: id.to_string(),
            compacted_at: now.to_string(),
            count,
            history_length: Some(len),
            positions: Some(positions),
            invocations: archived,
            extra: Map::new(),
        },
    )))
}

/// Resolves a `notePath` against the folder of the state file, refusing
/// anything that would leave it.
fn archive_path(state_dir: &Path, note_path: &str) -> Result<PathBuf> {
    let rel = Path::new(note_path);
    if rel.components().all(|c| matches!(c, Component::Normal(_))) && !note_path.is_empty() {
        Ok(state_dir.join(rel))
    } else {
        Err(Error::invalid(
            "compactionHistory.notePath",
            note_path,
            "expected a path relative to the sessions folder, e.g. SES202601-ACME-STORE.history/2026-01-19T09-29-00-000Z.json",
        ))
    }
}

/// Every invocation of the workflow, archived and current, in the order they
/// began. Only archives named in `compactionHistory` are read, so an archive
/// left by a crash before its state write is not counted twice.
pub fn full_history(loaded: &Loaded) -> Result<Vec<AgentInvocation>> {
    let (history, problems) = full_history_lenient(loaded);
    if problems.is_empty() {
        Ok(history)
    } else {
        Err(Error::State(problems.join("; ")))
    }
}

/// [`full_history`] for display: an archive that is missing or unreadable
/// (say, a state file copied from another machine without its `.history/`
/// folder) is left out and described in the returned problems instead of
/// failing, so the rest of the history still shows. `logbook doctor` uses the
/// strict [`full_history`] and reports the same archives.
pub fn full_history_lenient(loaded: &Loaded) -> (Vec<AgentInvocation>, Vec<String>) {
    let Some(wf) = &loaded.state.orchestrator_workflow else {
        return (vec![], vec![]);
    };
    let state_dir = loaded.path.parent().unwrap_or(Path::new("."));
    let mut archives = Vec::with_capacity(wf.compaction_history.len());
    let mut problems = Vec::new();
    for (i, entry) in wf.compaction_history.iter().enumerate() {
        let read = archive_path(state_dir, &entry.note_path).and_then(|path| {
            match store::read_optional(&path)? {
                Some(text) => {
                    store::parse_json::<CompactionArchive>(&path, "compaction archive", &text)
                        .map(Some)
                }
                None => {
                    problems.push(format!(
                        "{}: compaction archive named in compactionHistory[{i}] is missing; its {} invocations are left out of fullHistory (`logbook doctor` reports it)",
                        path.display(),
                        entry.count
                    ));
                    Ok(None)
                }
            }
        });
        match read {
            Ok(Some(archive)) => archives.push(archive),
            Ok(None) => {}
            Err(e) => problems.push(format!(
                "{e}; its {} invocations are left out of fullHistory (`logbook doctor` reports it)",
                entry.count
            )),
        }
    }
    (merge_history(wf.agent_history.clone(), archives), problems)
}

/// Rebuilds the original sequence: undoes compactions newest first, putting
/// each archived entry back at its recorded position among the entries that
/// were kept. An archive without positions (another tool's) goes in front.
pub fn merge_history(
    current: Vec<AgentInvocation>,
    archives: Vec<CompactionArchive>,
) -> Vec<AgentInvocation> {
    let mut seq = current;
    for archive in archives.into_iter().rev() {
        let n = archive.invocations.len();
        let layout = match (archive.history_length, &archive.positions) {
            (Some(len), Some(pos))
                if pos.len() == n
                    && len >= n
                    && len - n <= seq.len()
                    && pos.windows(2).all(|w| w[0] < w[1])
                    && pos.last().is_none_or(|&l| l < len) =>
            {
                Some((len, pos.clone()))
            }
            _ => None,
        };
        match layout {
            Some((len, pos)) => {
                let tail = seq.split_off(len - n);
                let mut kept = seq.into_iter();
                let mut moved = archive.invocations.into_iter();
                let mut out = Vec::with_capacity(len + tail.len());
                let mut next = pos.iter().peekable();
                for i in 0..len {
                    let from_archive = next.next_if(|&&p| p == i).is_some();
                    let item = if from_archive {
                        moved.next()
                    } else {
                        kept.next()
                    };
                    out.extend(item);
                }
                out.extend(tail);
                seq = out;
            }
            None => {
                let mut out = archive.invocations;
                out.append(&mut seq);
                seq = out;
            }
        }
    }
    seq
}

/// What `invoke` records.
#[derive(Debug, Clone)]
pub struct Invoke {
    /// The agent invoked.
    pub agent: AgentType,
    /// Its task.
    pub prompt: String,
    /// Structured context (e.g. `run_id`).
    pub context: Map<String, Value>,
    /// Files given to it.
    pub artifacts: Vec<String>,
    /// Who handed the work over (default: a pending handoff to this agent).
    pub from: Option<AgentType>,
}

impl Default for Invoke {
    fn default() -> Self {
        Invoke {
            agent: AgentType::Orchestrator,
            prompt: String::new(),
            context: Map::new(),
            artifacts: vec![],
            from: None,
        }
    }
}

/// Records that an agent was invoked: creates the workflow if absent, appends
/// an `in_progress` invocation, makes it the active agent and clears pending
/// handoffs addressed to it.
pub fn invoke(p: &Project, target: &Target, inv: Invoke) -> Result<SessionState> {
    let (state, ()) = update(p, target, false, |s, now| {
        let wf = s.workflow_mut(now);
        let pending_from = wf
            .pending_handoffs
            .iter()
            .rev()
            .find(|h| h.to_agent == inv.agent)
            .map(|h| h.from_agent);
        wf.pending_handoffs.retain(|h| h.to_agent != inv.agent);
        wf.agent_history.push(AgentInvocation {
            agent: inv.agent,
            started_at: now.to_string(),
            completed_at: None,
            status: InvocationStatus::InProgress,
            input: InvocationInput {
                prompt: inv.prompt,
                context: inv.context,
                artifacts: inv.artifacts,
                extra: Map::new(),
            },
            output: None,
            handoff_from: inv.from.or(pending_from),
            handoff_to: None,
            handoff_reason: String::new(),
            extra: Map::new(),
        });
        wf.active_agent = Some(inv.agent);
        wf.last_agent_change = now.to_string();
        Ok(())
    })?;
    Ok(state)
}

/// What `complete` records.
#[derive(Debug, Clone)]
pub struct Complete {
    /// The agent reporting back.
    pub agent: AgentType,
    /// What it did.
    pub summary: String,
    /// Files it produced.
    pub artifacts: Vec<String>,
    /// What it suggests next.
    pub recommendations: Vec<String>,
    /// What stops it; any makes the invocation `blocked`.
    pub blockers: Vec<String>,
    /// Who takes over (default: back to the orchestrator).
    pub handoff_to: Option<AgentType>,
    /// Why.
    pub reason: String,
    /// Marks the invocation `failed` instead of completed.
    pub failed: bool,
}

/// Records that an agent reported back: fills the output of its most recent
/// `in_progress` invocation, sets `completed` (`blocked` with blockers,
/// `failed` when asked), hands off (to the orchestrator when no target) and
/// compacts the history when it grew too long.
pub fn complete(p: &Project, target: &Target, c: Complete) -> Result<SessionState> {
    let (state, ()) = update(p, target, true, |s, now| {
        let wf = s.workflow_mut(now);
        let Some(inv) = wf
            .agent_history
            .iter_mut()
            .rev()
            .find(|i| i.agent == c.agent && i.status == InvocationStatus::InProgress)
        else {
            return Err(Error::State(format!(
                "agent {} has no invocation in progress; record one first with `logbook workflow invoke {} --prompt …`",
                c.agent, c.agent
            )));
        };
        inv.completed_at = Some(now.to_string());
        inv.status = if c.failed {
            InvocationStatus::Failed
        } else if c.blockers.is_empty() {
            InvocationStatus::Completed
        } else {
            InvocationStatus::Blocked
        };
        inv.handoff_to = c.handoff_to;
        inv.handoff_reason = c.reason.clone();
        inv.output = Some(InvocationOutput {
            artifacts: c.artifacts.clone(),
            summary: c.summary.clone(),
            recommendations: c.recommendations,
            blockers: c.blockers,
            extra: Map::new(),
        });
        if let Some(to) = c.handoff_to {
            wf.pending_handoffs.push(Handoff {
                from_agent: c.agent,
                to_agent: to,
                reason: c.reason,
                context: c.summary,
                artifacts: c.artifacts,
                preserved_context: None,
                created_at: now.to_string(),
                extra: Map::new(),
            });
        }
        wf.active_agent = Some(c.handoff_to.unwrap_or(AgentType::Orchestrator));
        wf.last_agent_change = now.to_string();
        Ok(())
    })?;
    Ok(state)
}

/// What `decide` records.
#[derive(Debug, Clone)]
pub struct NewDecision {
    /// What it is about.
    pub kind: DecisionType,
    /// What was decided.
    pub description: String,
    /// Why.
    pub rationale: String,
    /// Who decided.
    pub decided_by: AgentType,
    /// Who agreed.
    pub approved_by: Vec<AgentType>,
    /// Who disagreed.
    pub rejected_by: Vec<AgentType>,
}

/// Appends a decision with a new UUID; returns the state and the decision.
pub fn decide(p: &Project, target: &Target, d: NewDecision) -> Result<(SessionState, Decision)> {
    update(p, target, false, |s, now| {
        let decision = Decision {
            id: uuid::Uuid::new_v4().to_string(),
            kind: d.kind,
            description: d.description,
            rationale: d.rationale,
            decided_by: d.decided_by,
            approved_by: d.approved_by,
            rejected_by: d.rejected_by,
            timestamp: now.to_string(),
            extra: Map::new(),
        };
        s.workflow_mut(now).decisions.push(decision.clone());
        Ok(decision)
    })
}

/// What `verdict` records.
#[derive(Debug, Clone)]
pub struct NewVerdict {
    /// Who judged.
    pub agent: AgentType,
    /// The judgement.
    pub decision: VerdictDecision,
    /// From 0 to 1.
    pub confidence: f64,
    /// Why.
    pub reasoning: String,
    /// Conditions (omitted from the file when none).
    pub conditions: Vec<String>,
    /// Blockers (omitted from the file when none).
    pub blockers: Vec<String>,
}

/// Appends a verdict; the confidence must lie in 0..=1.
pub fn verdict(p: &Project, target: &Target, v: NewVerdict) -> Result<SessionState> {
    check_confidence(v.confidence)
        .map_err(|reason| Error::invalid("confidence", v.confidence.to_string(), reason))?;
    let (state, ()) = update(p, target, false, |s, now| {
        s.workflow_mut(now).verdicts.push(Verdict {
            agent: v.agent,
            decision: v.decision,
            confidence: v.confidence,
            reasoning: v.reasoning,
            conditions: (!v.conditions.is_empty()).then_some(v.conditions),
            blockers: (!v.blockers.is_empty()).then_some(v.blockers),
            timestamp: now.to_string(),
            extra: Map::new(),
        });
        Ok(())
    })?;
    Ok(state)
}

/// What `handoff` records.
#[derive(Debug, Clone)]
pub struct NewHandoff {
    /// Who hands over.
    pub from: AgentType,
    /// Who takes over.
    pub to: AgentType,
    /// Why.
    pub reason: String,
    /// What the next agent needs to know.
    pub context: String,
    /// Files passed along.
    pub artifacts: Vec<String>,
    /// Structured context to carry across compaction.
    pub preserved_context: Option<Map<String, Value>>,
}

/// Appends a pending handoff; it is cleared when its target is invoked.
pub fn handoff(p: &Project, target: &Target, h: NewHandoff) -> Result<SessionState> {
    let (state, ()) = update(p, target, false, |s, now| {
        s.workflow_mut(now).pending_handoffs.push(Handoff {
            from_agent: h.from,
            to_agent: h.to,
            reason: h.reason,
            context: h.context,
            artifacts: h.artifacts,
            preserved_context: h.preserved_context,
            created_at: now.to_string(),
            extra: Map::new(),
        });
        Ok(())
    })?;
    Ok(state)
}

/// Moves the workflow to `phase` (creating the workflow if absent).
pub fn set_phase(p: &Project, target: &Target, phase: Phase) -> Result<SessionState> {
    let (state, ()) = update(p, target, false, |s, now| {
        s.workflow_mut(now).workflow_phase = phase;
        Ok(())
    })?;
    Ok(state)
}

/// Switches the session's mode and records it in `modeHistory`; setting the
/// mode it is already in changes nothing.
pub fn set_mode(p: &Project, target: &Target, mode: Mode) -> Result<SessionState> {
    let (state, ()) = update(p, target, false, |s, now| {
        if s.current_mode != mode {
            s.current_mode = mode;
            s.mode_history.push(ModeChange {
                mode,
                timestamp: now.to_string(),
                extra: Map::new(),
            });
        }
        Ok(())
    })?;
    Ok(state)
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &str = include_str!("../../../../shared/fixtures/session-state.json");

    fn inv(agent: AgentType, status: InvocationStatus, n: usize) -> AgentInvocation {
        AgentInvocation {
            agent,
            started_at: format!("2026-01-19T10:{n:02}:00.000Z"),
            completed_at: None,
            status,
            input: InvocationInput {
                prompt: format!("task {n}"),
                ..InvocationInput::default()
            },
            output: None,
            handoff_from: None,
            handoff_to: None,
            handoff_reason: String::new(),
            extra: Map::new(),
        }
    }

    #[test]
    fn fixture_with_every_optional_field_round_trips() {
        let s: SessionState = serde_json::from_str(FIXTURE).unwrap();
        let wf = s.orchestrator_workflow.as_ref().unwrap();
        assert_eq!(wf.active_agent, Some(AgentType::Implementer));
        assert!(wf.verdicts[0].conditions.is_some());
        assert!(wf.pending_handoffs[0].preserved_context.is_some());
        assert_eq!(s.active_feature.as_deref(), Some("session-state"));
        let back = serde_json::to_value(&s).unwrap();
        let orig: Value = serde_json::from_str(FIXTURE).unwrap();
        assert_eq!(back, orig);
    }

    #[test]
    fn state_with_every_optional_field_absent_round_trips() {
        let text = r#"{
          "currentMode": "analysis",
          "modeHistory": [{"mode": "analysis", "timestamp": "2026-01-19T09:00:00.000Z"}],
          "protocolStartComplete": false, "protocolEndComplete": false,
          "protocolStartEvidence": {}, "protocolEndEvidence": {},
          "orchestratorWorkflow": {
            "activeAgent": null, "workflowPhase": "planning",
            "agentHistory": [{"agent": "qa", "startedAt": "t", "completedAt": null, "status": "in_progress",
              "input": {"prompt": "p", "context": {}, "artifacts": []}, "output": null,
              "handoffFrom": null, "handoffTo": null, "handoffReason": ""}],
            "decisions": [], "verdicts": [{"agent": "qa", "decision": "approve", "confidence": 0.9, "reasoning": "r", "timestamp": "t"}],
            "pendingHandoffs": [{"fromAgent": "qa", "toAgent": "devops", "reason": "r", "context": "c", "artifacts": [], "createdAt": "t"}],
            "compactionHistory": [], "startedAt": "t", "lastAgentChange": "t"
          },
          "version": 1, "createdAt": "t", "updatedAt": "t"
        }"#;
        let s: SessionState = serde_json::from_str(text).unwrap();
        assert_eq!(s.active_feature, None);
        let wf = s.orchestrator_workflow.as_ref().unwrap();
        assert_eq!(wf.verdicts[0].conditions, None);
        assert_eq!(wf.pending_handoffs[0].preserved_context, None);
        let orig: Value = serde_json::from_str(text).unwrap();
        assert_eq!(serde_json::to_value(&s).unwrap(), orig);
        // A state without any workflow at all.
        let bare = r#"{"currentMode":"coding","modeHistory":[],"protocolStartComplete":true,"protocolEndComplete":false,
            "protocolStartEvidence":{},"protocolEndEvidence":{},"orchestratorWorkflow":null,"version":3,"createdAt":"t","updatedAt":"t"}"#;
        let s: SessionState = serde_json::from_str(bare).unwrap();
        let orig: Value = serde_json::from_str(bare).unwrap();
        assert_eq!(serde_json::to_value(&s).unwrap(), orig);
    }

    #[test]
    fn every_shape_round_trips_on_its_own() {
        let s: SessionState = serde_json::from_str(FIXTURE).unwrap();
        let wf = s.orchestrator_workflow.unwrap();
        fn rt<T: Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug>(x: &T) {
            let text = serde_json::to_string(x).unwrap();
            assert_eq!(&serde_json::from_str::<T>(&text).unwrap(), x);
        }
        rt(&wf.agent_history[0]);
        rt(&wf.agent_history[1]);
        rt(&wf.decisions[0]);
        rt(&wf.verdicts[0]);
        rt(&wf.pending_handoffs[0]);
        rt(&wf.compaction_history[0]);
        rt(&s.mode_history[0]);
    }

    #[test]
    fn unknown_keys_are_kept() {
        let text = FIXTURE
            .replacen(
                "\"currentMode\"",
                "\"x-editor\": {\"by\": \"hand\"}, \"currentMode\"",
                1,
            )
            .replacen(
                "\"agent\": \"architect\"",
                "\"agent\": \"architect\", \"cost\": 0.5",
                1,
            );
        let s: SessionState = serde_json::from_str(&text).unwrap();
        let back = serde_json::to_value(&s).unwrap();
        assert_eq!(back["x-editor"]["by"], "hand");
        assert_eq!(back["orchestratorWorkflow"]["agentHistory"][0]["cost"], 0.5);
    }

    #[test]
    fn invalid_values_are_refused_clearly() {
        let bad_agent =
            FIXTURE.replace("\"decidedBy\": \"architect\"", "\"decidedBy\": \"wizard\"");
        let err = serde_json::from_str::<SessionState>(&bad_agent)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("wizard") && err.contains("pr-comment-responder"),
            "{err}"
        );
        let bad_mode = FIXTURE.replace(
            "\"currentMode\": \"coding\"",
            "\"currentMode\": \"dreaming\"",
        );
        let err = serde_json::from_str::<SessionState>(&bad_mode)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("dreaming") && err.contains("analysis"),
            "{err}"
        );
        let bad_status = FIXTURE.replace("\"status\": \"in_progress\"", "\"status\": \"running\"");
        assert!(
            serde_json::from_str::<SessionState>(&bad_status)
                .unwrap_err()
                .to_string()
                .contains("running")
        );
        let bad_verdict =
            FIXTURE.replace("\"decision\": \"conditional\"", "\"decision\": \"maybe\"");
        assert!(
            serde_json::from_str::<SessionState>(&bad_verdict)
                .unwrap_err()
                .to_string()
                .contains("needs_revision")
        );
        let bad_conf = FIXTURE.replace("\"confidence\": 0.8", "\"confidence\": 1.5");
        let err = serde_json::from_str::<SessionState>(&bad_conf)
            .unwrap_err()
            .to_string();
        assert!(err.contains("confidence 1.5 is outside 0 to 1"), "{err}");
        let bad_id = FIXTURE.replace("5c0e8a1d-2f3b-4c6d-8e9f-0a1b2c3d4e5f", "decision-1");
        let err = serde_json::from_str::<SessionState>(&bad_id)
            .unwrap_err()
            .to_string();
        assert!(err.contains("\"decision-1\" is not a UUID"), "{err}");
        let bad_type = FIXTURE.replace("\"type\": \"architectural\"", "\"type\": \"political\"");
        assert!(
            serde_json::from_str::<SessionState>(&bad_type)
                .unwrap_err()
                .to_string()
                .contains("scope")
        );
        let err = "wizard".parse::<AgentType>().unwrap_err().to_string();
        assert!(
            err.contains("wizard") && err.contains("orchestrator, analyst"),
            "{err}"
        );
        assert_eq!(AgentType::ALL.len(), 17);
        for a in AgentType::ALL {
            assert_eq!(a.as_str().parse::<AgentType>().unwrap(), *a);
            assert_eq!(serde_json::to_value(a).unwrap(), a.as_str());
        }
    }

    fn compacted(n: usize) -> (SessionState, Option<(PathBuf, CompactionArchive)>) {
        let mut s = SessionState::new("t");
        let wf = s.workflow_mut("t");
        for i in 0..n {
            wf.agent_history
                .push(inv(AgentType::Qa, InvocationStatus::Completed, i));
        }
        let a = compact_history(
            &mut s,
            Path::new("/nonexistent"),
            "SES202601-A-B",
            "2026-01-19T10:00:00.000Z",
        )
        .unwrap();
        (s, a)
    }

    #[test]
    fn compaction_thresholds() {
        for n in [8, 10] {
            let (s, a) = compacted(n);
            assert!(a.is_none());
            assert_eq!(s.orchestrator_workflow.unwrap().agent_history.len(), n);
        }
        for n in [11, 12, 15] {
            let (s, a) = compacted(n);
            let (path, a) = a.unwrap();
            assert_eq!(
                path,
                Path::new("/nonexistent/SES202601-A-B.history/2026-01-19T10-00-00-000Z.json")
            );
            let wf = s.orchestrator_workflow.unwrap();
            assert_eq!(wf.agent_history.len(), 3);
            assert_eq!(a.count as usize, n - 3);
            assert_eq!(wf.compaction_history[0].count as usize, n - 3);
            assert_eq!(wf.agent_history[0].input.prompt, format!("task {}", n - 3));
        }
    }

    #[test]
    fn in_progress_stays_in_place_and_merge_restores_order() {
        let mut s = SessionState::new("t");
        let wf = s.workflow_mut("t");
        for i in 0..12 {
            let status = if i == 1 || i == 5 {
                InvocationStatus::InProgress
            } else {
                InvocationStatus::Completed
            };
            wf.agent_history.push(inv(AgentType::Analyst, status, i));
        }
        let original = wf.agent_history.clone();
        let (_, a) = compact_history(&mut s, Path::new("/x"), "SES202601-A-B", "now")
            .unwrap()
            .unwrap();
        let wf = s.orchestrator_workflow.as_mut().unwrap();
        assert_eq!(a.count, 7);
        let prompts: Vec<_> = wf
            .agent_history
            .iter()
            .map(|i| i.input.prompt.clone())
            .collect();
        assert_eq!(
            prompts,
            ["task 1", "task 5", "task 9", "task 10", "task 11"]
        );
        // More work, then a second compaction.
        for i in 12..18 {
            wf.agent_history
                .push(inv(AgentType::Analyst, InvocationStatus::Completed, i));
        }
        wf.agent_history[0].status = InvocationStatus::Completed;
        let mut all = original.clone();
        all[1].status = InvocationStatus::Completed;
        for i in 12..18 {
            all.push(inv(AgentType::Analyst, InvocationStatus::Completed, i));
        }
        let (_, b) = compact_history(&mut s, Path::new("/x"), "SES202601-A-B", "now")
            .unwrap()
            .unwrap();
        let wf = s.orchestrator_workflow.as_ref().unwrap();
        assert_eq!(wf.total_invocations(), 18);
        let merged = merge_history(wf.agent_history.clone(), vec![a, b]);
        assert_eq!(merged, all);
    }
}
