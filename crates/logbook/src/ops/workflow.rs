//! Workflow state (seed 004): what the orchestrator records as it works —
//! invocations, completions, decisions, verdicts, handoffs, phase and mode —
//! and reads back after a compaction or a restart.
//!
//! Every change goes through [`update`]: the state's lock, read, change,
//! bump `version`, compact, atomic write (archive first, then state). A
//! caller may name the version it expects ([`Target::expect_version`]) and
//! gets [`Error::Conflict`] if another writer got there first.
//!
//! ```no_run
//! use logbook::{Logbook, ops::workflow::{self, Invoke, Target}, model::workflow::AgentType};
//! let project = Logbook::discover(&std::env::current_dir()?, None)?;
//! let state = workflow::invoke(&project, &Target::default(), Invoke {
//!     agent: AgentType::Analyst,
//!     prompt: "Research the options".into(),
//!     ..Invoke::default()
//! })?;
//! println!("version {}", state.version);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::Logbook;
use std::path::PathBuf;

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::model::ids::WorkSessionId;
use crate::model::limits::{bounded, bounded_each, bounded_json};
use crate::model::workflow::{
    AgentInvocation, AgentType, Confidence, Decision, DecisionType, Focus, Handoff,
    InvocationInput, InvocationOutput, InvocationStatus, Mode, ModeChange, Phase, Protocol,
    SessionState, Verdict, VerdictDecision, compact,
};
use crate::ops::{work_session, write_through};
use logbook_index::{Kind, Pending, Record};
use logbook_store::work_session::POINTER_LOCK;

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
    pub session_id: WorkSessionId,
    /// The state (a fresh one, not yet written, when there is no file).
    pub state: SessionState,
    /// The state file (live or archived).
    pub path: PathBuf,
    /// Whether the file exists yet.
    pub exists: bool,
    /// The file as read, so output can keep its key order.
    pub original: Option<Value>,
}

/// Reads the workflow state of a work session (the active one by default),
/// live or archived. A session without a state file gets a fresh state
/// (version 1), which is not written until something changes.
pub fn load(p: &Logbook, session: Option<&str>) -> Result<Loaded> {
    let id = work_session::resolve(p, session)?;
    let live = id.state_file(&p.config.sessions_dir);
    let archived = id.state_file(&p.config.session_archive_dir);
    for path in [&live, &archived] {
        if let Some((state, original)) = logbook_store::workflow::read_state(path)? {
            say_lenient(p, path, &state);
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
    logbook_store::work_session::load(p, &id)?;
    Ok(Loaded {
        session_id: id,
        state: SessionState::new(&p.clock.now_string()),
        path: live,
        exists: false,
        original: None,
    })
}

/// Tells the face (a notice) of each value of the state at `path` read
/// leniently, so a value out of range is never silently reinterpreted.
fn say_lenient(p: &Logbook, path: &std::path::Path, state: &SessionState) {
    for what in state.lenient_values() {
        p.notices.push(format!("{}: {what}", path.display()));
    }
}

/// Every invocation, archived and current, in the order they began; fails
/// naming every compaction archive that is missing or unreadable.
pub fn full_history(loaded: &Loaded) -> Result<Vec<AgentInvocation>> {
    let (history, problems) = full_history_lenient(loaded);
    if problems.is_empty() {
        Ok(history)
    } else {
        Err(Error::HistoryIncomplete { problems })
    }
}

/// [`full_history`] for display: archives that cannot be read are left out
/// and described in the returned problems, so the rest still shows.
pub fn full_history_lenient(loaded: &Loaded) -> (Vec<AgentInvocation>, Vec<String>) {
    logbook_store::workflow::full_history(&loaded.path, &loaded.state)
}

/// Applies `change` to a live session's state under its lock: checks the
/// expected version, bumps `version` and `updatedAt` when something changed,
/// compacts if the history grew too long (whatever the change: every append
/// counts, as seed 004 tracks compaction whenever `agentHistory` exceeds 10
/// entries) and writes (archive first, then state) through the index.
/// Returns the state as written and what `change` returned.
pub fn update<T>(
    p: &Logbook,
    target: &Target,
    change: impl FnOnce(&mut SessionState, &str) -> Result<T>,
) -> Result<(SessionState, T)> {
    // Shared with other writers, exclusive for `close`, which moves the
    // state file: no write can land after the move.
    let _pointer = p.locks.shared(POINTER_LOCK)?;
    let id = work_session::resolve(p, target.session.as_deref())?;
    let (ws, ws_path) = logbook_store::work_session::load(p, &id)?;
    if ws.status == crate::model::work_session::SessionStatus::Closed
        || ws_path.parent() != Some(p.config.sessions_dir.as_path())
    {
        return Err(Error::SessionClosed {
            id: id.to_string(),
            workflow: true,
        });
    }
    let _lock = p.locks.exclusive(&id.state_lock_name())?;
    let dir = &p.config.sessions_dir;
    let path = id.state_file(dir);
    let now = p.clock.now_string();
    let (mut state, original) = match logbook_store::workflow::read_state(&path)? {
        Some((s, o)) => (s, Some(o)),
        None => (SessionState::new(&now), None),
    };
    say_lenient(p, &path, &state);
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
    let archive = compact(&mut state, id.as_str(), &now, |note_path| {
        logbook_store::workflow::archive_exists(&dir.join(note_path))
    });
    state.version = before.version + 1;
    state.updated_at = now;
    let pending = Pending {
        kind: Kind::WorkflowState,
        path: path.clone(),
        lock: id.state_lock_name(),
    };
    write_through(p, vec![pending], || {
        let archive = archive
            .as_ref()
            .map(|(note_path, a)| (dir.join(note_path), a));
        logbook_store::workflow::write_state(
            &path,
            &state,
            original.as_ref(),
            archive.as_ref().map(|(path, a)| (path.as_path(), *a)),
        )?;
        Ok((
            (),
            vec![Some(Record::workflow_state(&path, id.as_str(), &state))],
        ))
    })?;
    Ok((state, out))
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
pub fn invoke(p: &Logbook, target: &Target, inv: Invoke) -> Result<SessionState> {
    bounded("prompt", &inv.prompt)?;
    bounded_json("context", &inv.context)?;
    bounded_each("artifact", &inv.artifacts)?;
    let (state, ()) = update(p, target, |s, now| {
        let wf = s.workflow_mut(now);
        let pending_from = wf
            .pending_handoffs
            .iter()
            .rev()
            .find(|h| h.to_agent == inv.agent)
            .map(|h| h.from_agent.clone());
        wf.pending_handoffs.retain(|h| h.to_agent != inv.agent);
        wf.agent_history.push(AgentInvocation {
            agent: inv.agent.clone(),
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
pub fn complete(p: &Logbook, target: &Target, c: Complete) -> Result<SessionState> {
    bounded("summary", &c.summary)?;
    bounded("reason", &c.reason)?;
    bounded_each("artifact", &c.artifacts)?;
    bounded_each("recommendation", &c.recommendations)?;
    bounded_each("blocker", &c.blockers)?;
    let (state, ()) = update(p, target, |s, now| {
        let wf = s.workflow_mut(now);
        let Some(inv) = wf
            .agent_history
            .iter_mut()
            .rev()
            .find(|i| i.agent == c.agent && i.status == InvocationStatus::InProgress)
        else {
            return Err(Error::NoInvocationInProgress {
                agent: c.agent.to_string(),
            });
        };
        inv.completed_at = Some(now.to_string());
        inv.status = if c.failed {
            InvocationStatus::Failed
        } else if c.blockers.is_empty() {
            InvocationStatus::Completed
        } else {
            InvocationStatus::Blocked
        };
        inv.handoff_to = c.handoff_to.clone();
        inv.handoff_reason = c.reason.clone();
        inv.output = Some(InvocationOutput {
            artifacts: c.artifacts.clone(),
            summary: c.summary.clone(),
            recommendations: c.recommendations,
            blockers: c.blockers,
            extra: Map::new(),
        });
        if let Some(to) = c.handoff_to.clone() {
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
pub fn decide(p: &Logbook, target: &Target, d: NewDecision) -> Result<(SessionState, Decision)> {
    bounded("description", &d.description)?;
    bounded("rationale", &d.rationale)?;
    update(p, target, |s, now| {
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
    /// Conditions (stored as `[]` when none, as the seed's Verdict has them).
    pub conditions: Vec<String>,
    /// Blockers (stored as `[]` when none).
    pub blockers: Vec<String>,
}

/// Appends a verdict; the confidence must lie in 0..=1.
pub fn verdict(p: &Logbook, target: &Target, v: NewVerdict) -> Result<SessionState> {
    bounded("reasoning", &v.reasoning)?;
    bounded_each("condition", &v.conditions)?;
    bounded_each("blocker", &v.blockers)?;
    let confidence = Confidence::new(v.confidence)
        .map_err(|reason| Error::invalid("confidence", v.confidence.to_string(), reason))?;
    let (state, ()) = update(p, target, |s, now| {
        s.workflow_mut(now).verdicts.push(Verdict {
            agent: v.agent,
            decision: v.decision,
            confidence,
            reasoning: v.reasoning,
            conditions: Some(v.conditions),
            blockers: Some(v.blockers),
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
pub fn handoff(p: &Logbook, target: &Target, h: NewHandoff) -> Result<SessionState> {
    bounded("reason", &h.reason)?;
    bounded("context", &h.context)?;
    bounded_each("artifact", &h.artifacts)?;
    if let Some(preserved) = &h.preserved_context {
        bounded_json("preserved context", preserved)?;
    }
    let (state, ()) = update(p, target, |s, now| {
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
pub fn set_phase(p: &Logbook, target: &Target, phase: Phase) -> Result<SessionState> {
    let (state, ()) = update(p, target, |s, now| {
        s.workflow_mut(now).workflow_phase = phase;
        Ok(())
    })?;
    Ok(state)
}

/// Switches the session's mode and records it in `modeHistory`; setting the
/// mode it is already in changes nothing.
pub fn set_mode(p: &Logbook, target: &Target, mode: Mode) -> Result<SessionState> {
    let (state, ()) = update(p, target, |s, now| {
        if s.current_mode != mode {
            s.current_mode = mode.clone();
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

/// Records whether a session protocol ran (seed 004's
/// `protocolStartComplete` / `protocolEndComplete`) and its evidence: a
/// completed protocol's evidence gains the keys given (see
/// [`evidence_from`](crate::model::workflow::evidence_from)), keeping the
/// others; marking it not complete replaces the evidence with what is given.
pub fn set_protocol(
    p: &Logbook,
    target: &Target,
    protocol: Protocol,
    complete: bool,
    evidence: Map<String, Value>,
) -> Result<SessionState> {
    bounded_json("evidence", &evidence)?;
    if let Protocol::Other(word) = &protocol {
        return Err(Error::invalid("protocol", word, "expected start or end"));
    }
    let (state, ()) = update(p, target, |s, _| {
        let (flag, kept) = match protocol {
            Protocol::Start | Protocol::Other(_) => (
                &mut s.protocol_start_complete,
                &mut s.protocol_start_evidence,
            ),
            Protocol::End => (&mut s.protocol_end_complete, &mut s.protocol_end_evidence),
        };
        *flag = complete;
        if !complete {
            kept.clear();
        }
        kept.extend(evidence);
        Ok(())
    })?;
    Ok(state)
}

/// Sets the session's `activeFeature` or `activeTask` (seed 004); an empty
/// (or blank) name clears it, and the key leaves the file.
pub fn set_focus(p: &Logbook, target: &Target, focus: Focus, name: &str) -> Result<SessionState> {
    let name = name.trim();
    let field = match &focus {
        Focus::Feature => "feature",
        Focus::Task => "task",
        Focus::Other(word) => {
            return Err(Error::invalid("focus", word, "expected feature or task"));
        }
    };
    bounded(field, name)?;
    let value = (!name.is_empty()).then(|| name.to_string());
    let (state, ()) = update(p, target, |s, _| {
        if focus == Focus::Feature {
            s.active_feature = value;
        } else {
            s.active_task = value;
        }
        Ok(())
    })?;
    Ok(state)
}

// The JSON every face prints for these operations (`--json`, MCP structured
// content, the web API): built here once so the faces cannot drift apart.

/// `workflow invoke|complete|decide|…|mode --json`: the state as written.
pub fn state_json(state: &SessionState) -> Result<Value> {
    crate::model::to_json("workflow state", state)
}

/// `workflow show [--full] --json` and `GET /api/sessions/{id}/workflow`:
/// the state in its file's key order, with
/// `fullHistory` (every invocation, archived and current) when `history`
/// is given.
pub fn loaded_json(loaded: &Loaded, history: Option<&[AgentInvocation]>) -> Result<Value> {
    let mut json = state_json(&loaded.state)?;
    if let Some(original) = &loaded.original {
        crate::model::text::order_like(&mut json, original);
    }
    if let (Some(h), Value::Object(m)) = (history, &mut json) {
        m.insert(
            "fullHistory".into(),
            crate::model::to_json("fullHistory", h)?,
        );
    }
    Ok(json)
}
