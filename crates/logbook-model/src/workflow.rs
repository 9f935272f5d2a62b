//! Workflow state (seed 004): the orchestrator's mode, agent invocations,
//! decisions, verdicts and handoffs for one work session, kept on disk so it
//! survives conversation compaction and server restarts.
//!
//! One camelCase JSON file per work session, `{sessions_dir}/{id}.state.json`
//! ([`SessionState`]).
//!
//! When `agentHistory` holds more than [`COMPACT_ABOVE`] entries after a
//! change, all but the last [`KEEP_AFTER_COMPACTION`] move to an archive
//! in `{sessions_dir}/{id}.history/` (never one still `in_progress`), and a
//! [`CompactionEntry`] names it ([`compact`]). [`merge_history`] rebuilds the
//! whole sequence in the order it began.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use crate::enums::string_enum;
use crate::text;

mod confidence;
pub use confidence::{Confidence, check_confidence};

/// Compaction runs when `agentHistory` holds more than this many entries.
pub const COMPACT_ABOVE: usize = 10;
/// How many of the newest entries compaction always leaves in place.
pub const KEEP_AFTER_COMPACTION: usize = 3;

string_enum! {
    /// The 17 agent types an orchestrator routes work to; anything else is
    /// refused by name so a typo never becomes a new agent.
    pub enum AgentType("agent type") {
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
}

string_enum! {
    /// The session's working mode (seed 004).
    pub enum Mode("mode") {
        /// Understanding the problem.
        Analysis = "analysis",
        /// Planning the work.
        Planning = "planning",
        /// Writing code.
        Coding = "coding",
        /// Protocol enforcement off.
        Disabled = "disabled",
    }
}

string_enum! {
    /// Where the orchestrated workflow stands.
    pub enum Phase("workflow phase") {
        /// Deciding what to do.
        Planning = "planning",
        /// Doing it.
        Implementation = "implementation",
        /// Checking it.
        Validation = "validation",
        /// Done.
        Complete = "complete",
    }
}

string_enum! {
    /// Seed 004's two session protocols, each with its `…Complete` flag and
    /// `…Evidence` object: an orchestrator records that one ran.
    pub enum Protocol("protocol") {
        /// `protocolStartComplete`, `protocolStartEvidence`.
        Start = "start",
        /// `protocolEndComplete`, `protocolEndEvidence`.
        End = "end",
    }
}

string_enum! {
    /// What a session is focused on: seed 004's `activeFeature` or
    /// `activeTask`.
    pub enum Focus("focus") {
        /// `activeFeature`.
        Feature = "feature",
        /// `activeTask`.
        Task = "task",
    }
}

/// The key a free-text piece of protocol evidence is kept under.
pub const EVIDENCE_NOTE: &str = "note";

/// Protocol evidence from the texts an agent gives, so that each face reads
/// them alike: a JSON object adds its keys, `KEY=VALUE` (a key of letters,
/// digits, `_`, `-` or `.`) adds that key with the value as text, and any
/// other text is kept under [`EVIDENCE_NOTE`] (several, one per line).
/// Later texts win over earlier ones for the same key.
pub fn evidence_from<S: AsRef<str>>(texts: &[S]) -> Map<String, Value> {
    let mut out = Map::new();
    let mut notes: Vec<&str> = vec![];
    for text in texts {
        let text = text.as_ref();
        if let Ok(Value::Object(m)) = serde_json::from_str::<Value>(text) {
            out.extend(m);
            continue;
        }
        let pair = text.split_once('=').filter(|(k, _)| {
            !k.is_empty()
                && k.chars()
                    .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'))
        });
        match pair {
            Some((k, v)) => {
                out.insert(k.to_string(), Value::String(v.to_string()));
            }
            None => notes.push(text),
        }
    }
    if !notes.is_empty() {
        out.insert(EVIDENCE_NOTE.into(), Value::String(notes.join("\n")));
    }
    out
}

string_enum! {
    /// The state of one agent invocation.
    pub enum InvocationStatus("invocation status") {
        /// Started, not yet reported back.
        InProgress = "in_progress",
        /// Finished.
        Completed = "completed",
        /// Gave up or crashed.
        Failed = "failed",
        /// Finished but reported blockers.
        Blocked = "blocked",
    }
}

string_enum! {
    /// What a decision is about.
    pub enum DecisionType("decision type") {
        /// System structure.
        Architectural = "architectural",
        /// Technology or implementation choice.
        Technical = "technical",
        /// How the team works.
        Process = "process",
        /// What is in or out.
        Scope = "scope",
    }
}

string_enum! {
    /// A specialist's verdict.
    pub enum VerdictDecision("verdict decision") {
        /// Go ahead.
        Approve = "approve",
        /// Do not.
        Reject = "reject",
        /// Go ahead if the conditions are met.
        Conditional = "conditional",
        /// Rework and resubmit.
        NeedsRevision = "needs_revision",
    }
}

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
    #[serde(default, deserialize_with = "text::lenient")]
    pub protocol_start_complete: bool,
    /// Whether the session-end protocol ran.
    #[serde(default, deserialize_with = "text::lenient")]
    pub protocol_end_complete: bool,
    /// Evidence the start protocol recorded.
    #[serde(default, deserialize_with = "text::lenient")]
    pub protocol_start_evidence: Map<String, Value>,
    /// Evidence the end protocol recorded.
    #[serde(default, deserialize_with = "text::lenient")]
    pub protocol_end_evidence: Map<String, Value>,
    /// The orchestrated workflow, once an agent was first invoked.
    #[serde(default)]
    pub orchestrator_workflow: Option<OrchestratorWorkflow>,
    /// The feature being worked on.
    #[serde(
        default,
        deserialize_with = "text::lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub active_feature: Option<String>,
    /// The task being worked on.
    #[serde(
        default,
        deserialize_with = "text::lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub active_task: Option<String>,
    /// Bumped by every change; the compare-and-swap token. A hand-written
    /// file without one counts as a new state.
    #[serde(default = "first_version")]
    pub version: u64,
    /// When the state was first created.
    #[serde(default, deserialize_with = "text::lenient")]
    pub created_at: String,
    /// When it last changed.
    #[serde(default, deserialize_with = "text::lenient")]
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
    /// From 0 to 1 (read leniently: see [`Confidence`]).
    pub confidence: Confidence,
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

impl Verdict {
    /// The conditions and blockers that are not empty, each with its label:
    /// what every place that prints a verdict shows after its reasoning.
    pub fn terms(&self) -> impl Iterator<Item = (&'static str, &[String])> {
        [
            ("conditions", &self.conditions),
            ("blockers", &self.blockers),
        ]
        .into_iter()
        .filter_map(|(label, items)| {
            items
                .as_deref()
                .filter(|i| !i.is_empty())
                .map(|i| (label, i))
        })
    }
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

/// Moves all but the newest entries out of `agentHistory` when it is too
/// long, leaving `in_progress` ones in place. Returns the archive to write
/// (before the state) and its `notePath`, relative to the sessions folder,
/// or `None` when nothing moves. `taken` says whether an archive name is
/// already used: several compactions in one millisecond (or under a fixed
/// clock) must not overwrite each other's archives.
pub fn compact(
    state: &mut SessionState,
    id: &str,
    now: &str,
    taken: impl Fn(&str) -> bool,
) -> Option<(String, CompactionArchive)> {
    let wf = state.orchestrator_workflow.as_mut()?;
    let len = wf.agent_history.len();
    if len <= COMPACT_ABOVE {
        return None;
    }
    let keep_from = len - KEEP_AFTER_COMPACTION;
    let positions: Vec<usize> = (0..keep_from)
        .filter(|&i| wf.agent_history[i].status != InvocationStatus::InProgress)
        .collect();
    if positions.is_empty() {
        return None;
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

    let stamp: String = now
        .chars()
        .map(|c| if c == ':' || c == '.' { '-' } else { c })
        .collect();
    let mut name = format!("{stamp}.json");
    let mut n = 1;
    while taken(&format!("{id}.history/{name}")) {
        n += 1;
        name = format!("{stamp}-{n}.json");
    }
    let count = archived.len() as u64;
    let note_path = format!("{id}.history/{name}");
    wf.compaction_history.push(CompactionEntry {
        note_path: note_path.clone(),
        compacted_at: now.to_string(),
        count,
        extra: Map::new(),
    });
    Some((
        note_path,
        CompactionArchive {
            session_id: id.to_string(),
            compacted_at: now.to_string(),
            count,
            history_length: Some(len),
            positions: Some(positions),
            invocations: archived,
            extra: Map::new(),
        },
    ))
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

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: &str = include_str!("../../../testdata/shared/fixtures/session-state.json");

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
    fn unknown_words_are_kept_and_invalid_values_refused() {
        // Another tool's words are read, kept and written back as they were.
        let odd = FIXTURE
            .replace("\"decidedBy\": \"architect\"", "\"decidedBy\": \"wizard\"")
            .replace(
                "\"currentMode\": \"coding\"",
                "\"currentMode\": \"dreaming\"",
            )
            .replace("\"decision\": \"conditional\"", "\"decision\": \"maybe\"");
        let s: SessionState = serde_json::from_str(&odd).unwrap();
        assert_eq!(s.current_mode, Mode::Other("dreaming".into()));
        let wf = s.orchestrator_workflow.as_ref().unwrap();
        assert_eq!(
            wf.decisions[0].decided_by,
            AgentType::Other("wizard".into())
        );
        let back = serde_json::to_value(&s).unwrap();
        assert_eq!(back, serde_json::from_str::<Value>(&odd).unwrap());
        // A confidence out of range is read leniently, never refused: a
        // percentage as its fraction, anything else kept as written.
        let pct = FIXTURE.replace("\"confidence\": 0.8", "\"confidence\": 85");
        let s: SessionState = serde_json::from_str(&pct).unwrap();
        let v = &s.orchestrator_workflow.as_ref().unwrap().verdicts[0];
        assert_eq!(v.confidence.fraction(), 0.85);
        assert_eq!(
            serde_json::to_value(&v.confidence).unwrap(),
            serde_json::json!(0.85)
        );
        assert_eq!(s.lenient_values().len(), 1, "{:?}", s.lenient_values());
        for (raw, counts) in [("-2", 0.0), ("250", 1.0), ("\"high\"", 0.0)] {
            let odd = FIXTURE.replace("\"confidence\": 0.8", &format!("\"confidence\": {raw}"));
            let s: SessionState = serde_json::from_str(&odd).unwrap();
            let v = &s.orchestrator_workflow.as_ref().unwrap().verdicts[0];
            assert_eq!(v.confidence.fraction(), counts, "{raw}");
            let back = serde_json::to_value(&v.confidence).unwrap();
            assert_eq!(back, serde_json::from_str::<Value>(raw).unwrap());
            assert!(s.lenient_values()[0].contains("kept as written"), "{raw}");
        }
        let bad_id = FIXTURE.replace("5c0e8a1d-2f3b-4c6d-8e9f-0a1b2c3d4e5f", "decision-1");
        let err = serde_json::from_str::<SessionState>(&bad_id)
            .unwrap_err()
            .to_string();
        assert!(err.contains("\"decision-1\" is not a UUID"), "{err}");
        // Values given by people and agents are strict.
        let err = "wizard".parse::<AgentType>().unwrap_err().to_string();
        assert!(
            err.contains("wizard") && err.contains("orchestrator, analyst"),
            "{err}"
        );
        assert!("maybe".parse::<VerdictDecision>().is_err());
        assert!("political".parse::<DecisionType>().is_err());
        assert_eq!(AgentType::KNOWN.len(), 17);
        for a in AgentType::KNOWN {
            let parsed = a.parse::<AgentType>().unwrap();
            assert!(parsed.is_known());
            assert_eq!(serde_json::to_value(&parsed).unwrap(), *a);
        }
    }

    fn compacted(n: usize) -> (SessionState, Option<(String, CompactionArchive)>) {
        let mut s = SessionState::new("t");
        let wf = s.workflow_mut("t");
        for i in 0..n {
            wf.agent_history
                .push(inv(AgentType::Qa, InvocationStatus::Completed, i));
        }
        let a = compact(&mut s, "SES202601-A-B", "2026-01-19T10:00:00.000Z", |_| {
            false
        });
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
            assert_eq!(path, "SES202601-A-B.history/2026-01-19T10-00-00-000Z.json");
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
        let (_, a) = compact(&mut s, "SES202601-A-B", "now", |_| false).unwrap();
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
        let (_, b) = compact(&mut s, "SES202601-A-B", "now", |_| false).unwrap();
        let wf = s.orchestrator_workflow.as_ref().unwrap();
        assert_eq!(wf.total_invocations(), 18);
        let merged = merge_history(wf.agent_history.clone(), vec![a, b]);
        assert_eq!(merged, all);
    }

    #[test]
    fn compaction_never_reuses_an_archive_name() {
        let mut s = SessionState::new("t");
        for i in 0..11 {
            s.workflow_mut("t").agent_history.push(inv(
                AgentType::Qa,
                InvocationStatus::Completed,
                i,
            ));
        }
        let (path, _) = compact(&mut s, "SES202601-A-B", "2026-01-19T10:00:00.000Z", |p| {
            !p.ends_with("-3.json")
        })
        .unwrap();
        assert_eq!(
            path,
            "SES202601-A-B.history/2026-01-19T10-00-00-000Z-3.json"
        );
    }
}
