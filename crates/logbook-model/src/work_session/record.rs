//! The record of a work session, as its YAML file holds it: read
//! leniently (hand-edited values of the wrong type read as empty, unknown
//! keys kept), written in the seed's key order.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use super::tokens::{Tokens, lenient_count};
use crate::CorruptFile;
use crate::enums::string_enum;

/// One work session, exactly the seed's fields and nesting, plus whatever
/// other keys the file carried (kept on rewrite).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WorkSession {
    /// `{PREFIX}{YYYYMM}-{CLIENT}-{PROJECT}`, maybe with a `-N` suffix.
    #[serde(deserialize_with = "required_text")]
    pub session_id: String,
    /// When the session was started (UTC, RFC 3339).
    #[serde(default, deserialize_with = "scalar_text")]
    pub created: String,
    /// When the file was last written.
    #[serde(default, deserialize_with = "scalar_text")]
    pub last_updated: String,
    /// active, paused or closed.
    #[serde(default, deserialize_with = "null_default")]
    pub status: SessionStatus,
    /// Who the work is for.
    #[serde(default, deserialize_with = "scalar_text")]
    pub client: String,
    /// What the work is.
    #[serde(default, deserialize_with = "scalar_text")]
    pub project: String,
    /// The id's prefix (SES, ENG, …).
    #[serde(default, deserialize_with = "scalar_text")]
    pub prefix: String,
    /// Token budget and usage.
    #[serde(default, deserialize_with = "null_default")]
    pub tokens: Tokens,
    /// Agents (and runs) spawned for this session, whose tokens are "saved".
    #[serde(default, deserialize_with = "null_default")]
    pub agents_spawned: Vec<SpawnedAgent>,
    /// Files produced during the session.
    #[serde(default, deserialize_with = "null_default")]
    pub artifacts: Vec<Artifact>,
    /// Progress checkpoints, done or not.
    #[serde(default, deserialize_with = "null_default")]
    pub milestones: Vec<Milestone>,
    /// What a resuming conversation needs to know.
    #[serde(default, deserialize_with = "scalar_text")]
    pub context_summary: String,
    /// Free-form notes.
    #[serde(default, deserialize_with = "texts")]
    pub notes: Vec<String>,
    /// The Claude Code and Codex sessions that worked in this one, as their
    /// hooks recorded them (Logbook's addition; absent when none did).
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub agent_sessions: Vec<AgentSession>,
    /// Keys Logbook does not know, preserved on rewrite.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
    /// Whether its workflow state holds a blocked or failed invocation that
    /// no later invocation of the same agent took up again. Not in the file:
    /// the state file is the truth, and whoever reads the session from disk
    /// fills this in from it.
    #[serde(skip)]
    pub workflow_blocked: bool,
}

string_enum! {
    /// A session's lifecycle state; anything unexpected in a hand-edited file
    /// is kept as written rather than refused.
    pub enum SessionStatus("status") {
        /// The one being worked on.
        Active = "active",
        /// Set aside by `switch` or `pause`; resumable.
        Paused = "paused",
        /// Finished and archived.
        Closed = "closed",
    }
}

impl Default for SessionStatus {
    /// A session file without a status is one being worked on.
    fn default() -> Self {
        SessionStatus::Active
    }
}

/// A YAML scalar as text: a hand-written `client: 2024` or `name: yes` is
/// the text it looks like, as it was before the file reached Logbook.
fn text_of(v: Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// A text field that may be missing, null or of the wrong type (read as
/// empty; the value is kept on rewrite and `doctor` names it).
fn scalar_text<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<String, D::Error> {
    Ok(text_of(Value::deserialize(d)?).unwrap_or_default())
}

fn opt_text<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Option<String>, D::Error> {
    Ok(text_of(Value::deserialize(d)?))
}

fn required_text<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<String, D::Error> {
    let v = Value::deserialize(d)?;
    let shown = v.to_string();
    text_of(v).ok_or_else(|| serde::de::Error::custom(format!("expected text, not {shown}")))
}

fn texts<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Vec<String>, D::Error> {
    Ok(match Value::deserialize(d)? {
        // Same length as the file's list, so a rewrite keeps odd items in place.
        Value::Array(items) => items
            .into_iter()
            .map(|v| text_of(v).unwrap_or_default())
            .collect(),
        _ => vec![],
    })
}

fn null_default<'de, D, T>(d: D) -> std::result::Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// An agent (or run) spawned for the session.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SpawnedAgent {
    /// The agent id, or the run UUID for runs.
    #[serde(deserialize_with = "required_text")]
    pub id: String,
    /// The agent type (analyst, architect, …).
    #[serde(rename = "type", default, deserialize_with = "scalar_text")]
    pub agent_type: String,
    /// When it was spawned.
    #[serde(default, deserialize_with = "opt_text")]
    pub started: Option<String>,
    /// When it reported back; null while running.
    #[serde(default, deserialize_with = "opt_text")]
    pub completed: Option<String>,
    /// Tokens it used in its own context.
    #[serde(default, deserialize_with = "lenient_count")]
    pub tokens_used: u64,
    /// Where its output went (a file, or a run folder).
    #[serde(default, deserialize_with = "opt_text")]
    pub output_file: Option<String>,
    /// completed or failed, once done (Logbook's addition; absent in the seed).
    #[serde(
        default,
        deserialize_with = "opt_text",
        skip_serializing_if = "Option::is_none"
    )]
    pub status: Option<String>,
    /// Unknown keys, preserved.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// An agent session (Claude Code, Codex) linked to the work session by its
/// hooks: what `resume` and `handoff` look for, and the compactions it went
/// through, which the work session would otherwise never hear of.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentSession {
    /// `claude-code`, `codex`, or `unknown`.
    #[serde(default, deserialize_with = "scalar_text")]
    pub agent: String,
    /// The agent's own session id.
    #[serde(deserialize_with = "required_text")]
    pub session_id: String,
    /// When Logbook first heard of it.
    #[serde(default, deserialize_with = "opt_text")]
    pub started: Option<String>,
    /// When its last hook fired.
    #[serde(default, deserialize_with = "opt_text")]
    pub last_seen: Option<String>,
    /// How it last (re)started: `startup`, `resume`, `clear`, `compact`.
    #[serde(
        default,
        deserialize_with = "opt_text",
        skip_serializing_if = "Option::is_none"
    )]
    pub source: Option<String>,
    /// The agent's log.
    #[serde(
        default,
        deserialize_with = "opt_text",
        skip_serializing_if = "Option::is_none"
    )]
    pub transcript: Option<String>,
    /// The folder it works in.
    #[serde(
        default,
        deserialize_with = "opt_text",
        skip_serializing_if = "Option::is_none"
    )]
    pub cwd: Option<String>,
    /// Its compactions, oldest first.
    #[serde(
        default,
        deserialize_with = "null_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub compactions: Vec<Compaction>,
    /// Unknown keys, preserved.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A compaction of an agent's context, recorded by its PreCompact hook.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Compaction {
    /// When the hook fired.
    #[serde(deserialize_with = "required_text")]
    pub at: String,
    /// `manual` or `auto`.
    #[serde(
        default,
        deserialize_with = "opt_text",
        skip_serializing_if = "Option::is_none"
    )]
    pub trigger: Option<String>,
    /// Unknown keys, preserved.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// What one hook event says of an agent session, for
/// [`WorkSession::record_agent_event`].
#[derive(Debug, Clone, Default)]
pub struct AgentEvent<'a> {
    /// `claude-code` or `codex`, when known.
    pub agent: Option<&'a str>,
    /// The agent's session id.
    pub session_id: &'a str,
    /// When the hook received the event.
    pub at: &'a str,
    /// A SessionStart's `source`.
    pub source: Option<&'a str>,
    /// The agent's log.
    pub transcript: Option<&'a str>,
    /// The folder it works in.
    pub cwd: Option<&'a str>,
    /// A PreCompact's `trigger`: the event is a compaction.
    pub compaction: Option<&'a str>,
}

impl WorkSession {
    /// Records `e` on its agent session (added when new). Doing it twice
    /// records it once: a hook's queued job may run again after a crash, so
    /// a compaction is known by its time.
    pub fn record_agent_event(&mut self, e: &AgentEvent<'_>) {
        let at = Some(e.at.to_string());
        let i = match self
            .agent_sessions
            .iter()
            .position(|a| a.session_id == e.session_id)
        {
            Some(i) => i,
            None => {
                self.agent_sessions.push(AgentSession {
                    agent: e.agent.unwrap_or("unknown").to_string(),
                    session_id: e.session_id.to_string(),
                    started: at.clone(),
                    last_seen: None,
                    source: None,
                    transcript: None,
                    cwd: None,
                    compactions: vec![],
                    extra: Map::new(),
                });
                self.agent_sessions.len() - 1
            }
        };
        let a = &mut self.agent_sessions[i];
        if a.last_seen.as_deref().is_none_or(|seen| seen < e.at) {
            a.last_seen = at;
        }
        if let Some(agent) = e.agent {
            a.agent = agent.to_string();
        }
        let set = |field: &mut Option<String>, v: Option<&str>| {
            if let Some(v) = v.filter(|v| !v.is_empty()) {
                *field = Some(v.to_string());
            }
        };
        set(&mut a.source, e.source);
        set(&mut a.transcript, e.transcript);
        set(&mut a.cwd, e.cwd);
        if let Some(trigger) = e.compaction
            && !a.compactions.iter().any(|c| c.at == e.at)
        {
            a.compactions.push(Compaction {
                at: e.at.to_string(),
                trigger: (!trigger.is_empty()).then(|| trigger.to_string()),
                extra: Map::new(),
            });
        }
    }
}

/// A file produced during the session.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Artifact {
    /// Path as given (usually relative to the project root).
    #[serde(deserialize_with = "required_text")]
    pub path: String,
    /// When it was first recorded.
    #[serde(default, deserialize_with = "opt_text")]
    pub created: Option<String>,
    /// When it was recorded again, if ever.
    #[serde(
        default,
        deserialize_with = "opt_text",
        skip_serializing_if = "Option::is_none"
    )]
    pub modified: Option<String>,
    /// Who produced it.
    #[serde(
        default,
        deserialize_with = "opt_text",
        skip_serializing_if = "Option::is_none"
    )]
    pub agent: Option<String>,
    /// Unknown keys, preserved.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A progress checkpoint; `completed` is null until it is done.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Milestone {
    /// What the milestone is.
    #[serde(deserialize_with = "required_text")]
    pub name: String,
    /// When it was reached.
    #[serde(default, deserialize_with = "opt_text")]
    pub completed: Option<String>,
    /// Unknown keys, preserved.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// What `list` shows.
#[derive(Debug, Default, Serialize)]
pub struct Listing {
    /// The active session's id, if any.
    pub active: Option<String>,
    /// Active and paused sessions, most recently updated first.
    pub sessions: Vec<WorkSession>,
    /// Closed sessions, most recently closed first.
    pub archived: Vec<WorkSession>,
    /// Files that could not be read, with the reason; never fatal.
    pub corrupt: Vec<CorruptFile>,
}

/// How `usage` changes the main session's token count.
#[derive(Debug, Clone, Copy)]
pub enum Usage {
    /// The main session now uses this many tokens.
    Current(u64),
    /// The main session used this many more.
    Add(u64),
}

string_enum! {
    /// How a spawned agent ended.
    pub enum AgentOutcome("status") {
        /// It did its work.
        Completed = "completed",
        /// It did not.
        Failed = "failed",
        /// Its run was stopped before it was done (`run finish --status cancelled`).
        Cancelled = "cancelled",
    }
}
