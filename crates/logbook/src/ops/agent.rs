//! The coding agents' own sessions, as imported from their logs: which one
//! to resume and with what command ([`agent_resume`], [`transcript_resume`]),
//! and a handover from the latest session of one agent to the other
//! ([`handoff`]).
//!
//! Every lookup of "the latest agent session" goes through
//! [`latest_agent_session`], whose one `scope` decides which transcripts
//! count: the repository's of the folder asked from (wherever its checkout
//! was when they were recorded), and those without one inside the project.
//!
//! ```no_run
//! use logbook::{Logbook, model::agent_log::Format, ops::agent};
//! let cwd = std::env::current_dir()?;
//! let project = Logbook::discover(&cwd, None)?;
//! if let Some(r) = agent::agent_resume(&project, &cwd)? {
//!     println!("{}", r.shell_line());
//! }
//! let h = agent::handoff(&project, &cwd, Format::Codex)?;
//! println!("{}", h.render(agent::DEFAULT_MAX_BYTES));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::Logbook;
use std::path::Path;

use serde_json::Value;

use crate::error::{Error, Result};
use crate::model::agent_handoff::{AgentResume, Handoff, PendingHandoff};
use crate::model::agent_log::{Format, Source, source_of};
use crate::model::hook::event::session_start_answer;
use crate::model::transcript::{Kind, Summary};
use crate::ops::transcript::{self, ListOptions};
use crate::ops::{work_session, workflow};

/// The handoff text's size unless asked otherwise: what fits in an agent's
/// fresh context beside its own instructions.
pub const DEFAULT_MAX_BYTES: usize = 8 * 1024;
/// The smallest `max_bytes` a handoff takes: below it, the heading alone
/// would not fit.
pub const MIN_MAX_BYTES: usize = 512;

/// An agent's main session imported from its log: the listing's row and
/// where it came from.
#[derive(Debug, Clone)]
pub struct AgentSession {
    /// The transcript's listing row.
    pub summary: Summary,
    /// The log it was imported from (its agent, its session id).
    pub source: Source,
}

impl AgentSession {
    /// The command that resumes it in its agent.
    pub fn resume(&self) -> AgentResume {
        AgentResume::of(&self.summary.id, &self.source, &self.summary.workdir)
    }
}

/// The transcripts an agent session is looked for in: the main sessions
/// of the repository `cwd` is in (wherever its checkout was when they were
/// recorded), and those without a repository inside the project, as
/// `transcript list` scopes them.
fn scope(p: &Logbook, cwd: &Path) -> ListOptions {
    let (within, repo) = transcript::default_scope(p, cwd);
    ListOptions {
        within,
        repo,
        kind: Some(Kind::Main),
        ..ListOptions::default()
    }
}

/// The latest (`lastActiveAt`) main session in scope imported from an
/// agent's log (`agent`'s, or either's), or `None` when there is none.
pub fn latest_agent_session(
    p: &Logbook,
    cwd: &Path,
    agent: Option<Format>,
) -> Result<Option<AgentSession>> {
    let mut opts = scope(p, cwd);
    opts.filter.source = agent.map(|a| a.as_str().to_string());
    // Outside a repository the listing's scope is folder containment, and
    // a folder such as `$HOME` or `/` contains every checkout: a session
    // of another repository would be handed over as this one's. Here only
    // a session without a repository counts, and in the per-user home only
    // one run in this very folder.
    let outside_git = !opts.repo.as_ref().is_some_and(|r| r.in_git());
    let exact = outside_git && p.is_user_home();
    // With an agent named, the listing keeps only its transcripts (reading
    // each one's head); either agent's means reading heads newest first
    // until one came from a log.
    for summary in transcript::list(p, &opts)?.transcripts {
        if outside_git && summary.repository.as_ref().is_some_and(|r| r.in_git()) {
            continue;
        }
        if exact && !logbook_store::transcript::is_workdir(&summary.workdir, cwd) {
            continue;
        }
        let Ok(head) = logbook_store::transcript::read_head(&summary.file) else {
            continue;
        };
        if let Some(source) = source_of(&head.metadata)
            && agent.is_none_or(|a| a == source.format)
        {
            return Ok(Some(AgentSession { summary, source }));
        }
    }
    Ok(None)
}

/// How to resume the latest agent session in scope, in its agent; `None`
/// when no transcript in scope was imported from an agent's log.
pub fn agent_resume(p: &Logbook, cwd: &Path) -> Result<Option<AgentResume>> {
    Ok(latest_agent_session(p, cwd, None)?.map(|s| s.resume()))
}

/// How to resume transcript `id` (a UUID or a unique part) in the agent
/// whose log it was imported from; a subagent's command resumes its main
/// session. [`Error::NotAnAgentSession`] when it was not imported from one.
pub fn transcript_resume(p: &Logbook, id: &str) -> Result<AgentResume> {
    let id = transcript::resolve(p, id)?;
    // Only the head is read of a live transcript: an imported log's
    // messages can be hundreds of MiB.
    let live = logbook_store::transcript::find_live(&p.config.transcripts_dir, id.as_str());
    let (tid, metadata) = match live {
        Some((_, path)) => {
            let head = logbook_store::transcript::read_head(&path)?;
            (head.id, head.metadata)
        }
        None => {
            let t = transcript::load(p, id.as_str())?.transcript;
            (t.id, t.metadata)
        }
    };
    let source =
        source_of(&metadata).ok_or_else(|| Error::NotAnAgentSession { id: tid.clone() })?;
    Ok(AgentResume::of(&tid, &source, &metadata.workdir))
}

/// A handover for agent `to` from the latest session in scope of the other
/// agent, with the active work session's open milestones and its
/// workflow's pending handoffs. [`Error::NoAgentSession`] when the other
/// agent has no session in scope.
pub fn handoff(p: &Logbook, cwd: &Path, to: Format) -> Result<Handoff> {
    let from = to.other();
    let session = latest_agent_session(p, cwd, Some(from))?.ok_or(Error::NoAgentSession {
        agent: from.as_str(),
    })?;
    let stored = transcript::load(p, &session.summary.id)?;
    let mut h = Handoff::compose(to, session.resume(), &stored.transcript);
    // The agent's session is the handoff; a work session that cannot be
    // read only leaves its part out, and says so.
    if let Err(e) = add_work_session(p, &mut h) {
        p.notices.push(format!(
            "the handoff leaves out the work session's milestones and handoffs: {e}"
        ));
    }
    Ok(h)
}

/// Adds the active work session's open milestones and its workflow's
/// pending handoffs to `h`; nothing when no session is active.
fn add_work_session(p: &Logbook, h: &mut Handoff) -> Result<()> {
    let Some(active) = work_session::active(p)? else {
        return Ok(());
    };
    let ws = work_session::get(p, Some(&active))?;
    h.open_milestones = ws
        .milestones
        .iter()
        .filter(|m| m.completed.is_none())
        .map(|m| m.name.clone())
        .collect();
    let state = workflow::load(p, Some(&ws.session_id))?.state;
    if let Some(w) = &state.orchestrator_workflow {
        h.pending_handoffs = w
            .pending_handoffs
            .iter()
            .map(|x| PendingHandoff {
                from: x.from_agent.to_string(),
                to: x.to_agent.to_string(),
                reason: x.reason.clone(),
                context: x.context.clone(),
            })
            .collect();
    }
    h.work_session = Some(ws.session_id);
    Ok(())
}

/// `max_bytes` as given by a face, checked: at least [`MIN_MAX_BYTES`].
pub fn max_bytes(given: Option<u64>) -> Result<usize> {
    let Some(n) = given else {
        return Ok(DEFAULT_MAX_BYTES);
    };
    match usize::try_from(n) {
        Ok(n) if n >= MIN_MAX_BYTES => Ok(n),
        _ => Err(Error::invalid(
            "max-bytes",
            n.to_string(),
            format!("expected at least {MIN_MAX_BYTES}"),
        )),
    }
}

// The JSON every face prints (`--json`, MCP structured content).

/// `handoff --json`: the structured handoff, plus `text`, the rendered
/// handover within `max_bytes`.
pub fn handoff_json(h: &Handoff, max_bytes: usize) -> Result<Value> {
    let mut json = crate::model::to_json("handoff", h)?;
    if let Value::Object(o) = &mut json {
        o.insert("text".into(), Value::String(h.render(max_bytes)));
    }
    Ok(json)
}

/// `handoff --hook`: the rendered handover as a SessionStart hook's
/// `additionalContext`.
pub fn handoff_hook_json(h: &Handoff, max_bytes: usize) -> Value {
    session_start_answer(&h.render(max_bytes))
}

/// `"agent_resume"` of `resume --json`: the object, or `null`.
pub fn resume_json(r: Option<&AgentResume>) -> Result<Value> {
    r.map_or(Ok(Value::Null), |r| {
        crate::model::to_json("agent_resume", r)
    })
}

/// The line `resume` ends with (and the MCP `resume` prompt): how to resume
/// the agent, or that there is no agent session to resume.
pub fn resume_line(r: Option<&AgentResume>) -> String {
    match r {
        Some(r) => format!("Resume the agent: {}", r.shell_line()),
        None => "No Claude Code or Codex session is recorded for this project, so there is no agent to resume.".into(),
    }
}
