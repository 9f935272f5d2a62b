//! The record of a work session, as its YAML file holds it: read
//! leniently (hand-edited values of the wrong type read as empty, unknown
//! keys kept), written in the seed's key order.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use super::tokens::{Tokens, lenient_count};
use crate::model::CorruptFile;
use crate::model::enums::string_enum;

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
