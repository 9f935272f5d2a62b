//! Work sessions (seed 002): long-lived units of work with a token budget,
//! milestones, artifacts, notes and the agents spawned for them.
//!
//! One YAML file per session, `{sessions_dir}/{id}.yaml`, in the seed's key
//! order. Files written by hand or by another tool are read leniently (legacy
//! token keys, missing fields, unknown keys kept); Logbook writes only valid
//! records.

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use jiff::Timestamp;

use crate::clock;
use crate::error::{Error, Result};
use crate::model::CorruptFile;
use crate::model::enums::string_enum;
use crate::model::text;
use crate::model::workflow::{AgentInvocation, InvocationStatus, SessionState};

/// The largest token count Logbook reads, stores or adds up to: 10^15,
/// thousands of times any model's context, yet small enough that sums and
/// percentages of counts can never overflow.
pub const MAX_TOKENS: u64 = 1_000_000_000_000_000;

/// Prefixes the seed names; others of 2–5 capital letters are allowed too.
pub const KNOWN_PREFIXES: [&str; 5] = ["SES", "ENG", "ANA", "DES", "TST"];

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

/// Token tracking with the seed's defaults and legacy-key migration.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(try_from = "RawTokens")]
pub struct Tokens {
    /// Budget; 0 here only until [`load`] fills in the configured default.
    pub max: u64,
    /// Usage when the session started.
    pub initial: u64,
    /// Usage now.
    pub current: u64,
    /// Highest usage seen; never below `current`.
    pub peak: u64,
    /// Tokens spent in isolated agents rather than the main context.
    pub saved: u64,
    /// Unknown token keys, preserved.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

#[derive(Deserialize)]
struct RawTokens {
    max: Option<Value>,
    max_limit: Option<Value>,
    initial: Option<Value>,
    current: Option<Value>,
    peak: Option<Value>,
    saved: Option<Value>,
    saved_by_isolation: Option<Value>,
    #[serde(flatten)]
    extra: Map<String, Value>,
}

impl TryFrom<RawTokens> for Tokens {
    type Error = String;
    fn try_from(r: RawTokens) -> std::result::Result<Self, String> {
        let max = count("tokens.max", r.max)?.or(count("tokens.max_limit", r.max_limit)?);
        let current = count("tokens.current", r.current)?.unwrap_or(0);
        let saved = count("tokens.saved", r.saved)?
            .or(count("tokens.saved_by_isolation", r.saved_by_isolation)?)
            .unwrap_or(0);
        Ok(Tokens {
            max: max.unwrap_or(0),
            initial: count("tokens.initial", r.initial)?.unwrap_or(0),
            current,
            peak: count("tokens.peak", r.peak)?.unwrap_or(0).max(current),
            saved,
            extra: r.extra,
        })
    }
}

/// Reads a token count leniently: integers, whole floats, digit strings with
/// separators ("45,000"); null is "missing". Counts above [`MAX_TOKENS`]
/// are refused ([`check_token_counts`] names the file for them).
fn count(field: &str, v: Option<Value>) -> std::result::Result<Option<u64>, String> {
    let parsed = match v {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Number(n)) => n
            .as_u64()
            .or_else(|| {
                n.as_f64()
                    .filter(|f| *f >= 0.0 && *f <= MAX_TOKENS as f64)
                    .map(|f| f.round() as u64)
            })
            .ok_or_else(|| {
                format!("{field} must be a whole number from 0 to {MAX_TOKENS}, not {n}")
            })?,
        Some(Value::String(s)) => {
            let digits: String = s
                .chars()
                .filter(|c| !matches!(c, ',' | '_' | ' '))
                .collect();
            digits
                .parse::<u64>()
                .map_err(|_| format!("{field} must be a number, not {s:?}"))?
        }
        Some(other) => return Err(format!("{field} must be a number, not {other}")),
    };
    if parsed > MAX_TOKENS {
        return Err(format!(
            "{field} is {parsed}, above the largest count Logbook keeps ({MAX_TOKENS})"
        ));
    }
    Ok(Some(parsed))
}

/// A token count that is a number (or digits) above [`MAX_TOKENS`], as the
/// file spells it: such a count would overflow every sum Logbook makes.
fn too_large(v: &Value) -> Option<String> {
    let text = match v {
        Value::Number(n) => n.to_string(),
        Value::String(s) => s
            .chars()
            .filter(|c| !matches!(c, ',' | '_' | ' '))
            .collect(),
        Value::Object(m) => return m.get(text::YAML_FLOAT_KEY)?.as_str().map(str::to_string),
        _ => return None,
    };
    let big = match text.parse::<u128>() {
        Ok(u) => u > u128::from(MAX_TOKENS),
        Err(_) => text.parse::<f64>().is_ok_and(|f| f > MAX_TOKENS as f64),
    };
    big.then(|| match v {
        Value::String(s) => s.clone(),
        _ => text,
    })
}

/// The legacy token keys [`Tokens`] migrates (to `saved` and `max`).
pub const MIGRATED_TOKEN_KEYS: [&str; 2] = ["saved_by_isolation", "max_limit"];

/// Forgets the legacy token keys of a file's raw value before a rewrite
/// merges with it: the record took them over, so they are not left
/// behind beside their new names.
pub fn forget_migrated_keys(raw: &mut Value) {
    if let Some(tokens) = raw.get_mut("tokens").and_then(Value::as_object_mut) {
        for key in MIGRATED_TOKEN_KEYS {
            tokens.shift_remove(key);
        }
    }
}

/// Refuses a session file holding a token count above [`MAX_TOKENS`], with
/// an error naming the file and the field.
pub fn check_token_counts(path: &std::path::Path, raw: &Value) -> Result<()> {
    let refuse = |field: String, value: String| Error::TokensOutOfRange {
        what: format!("{} in {}", field, path.display()),
        value,
        max: MAX_TOKENS,
    };
    if let Some(tokens) = raw.get("tokens").and_then(Value::as_object) {
        for (key, v) in tokens {
            let known = [
                "max",
                "max_limit",
                "initial",
                "current",
                "peak",
                "saved",
                "saved_by_isolation",
            ];
            if known.contains(&key.as_str())
                && let Some(value) = too_large(v)
            {
                return Err(refuse(format!("tokens.{key}"), value));
            }
        }
    }
    if let Some(agents) = raw.get("agents_spawned").and_then(Value::as_array) {
        for (i, agent) in agents.iter().enumerate() {
            if let Some(value) = agent.get("tokens_used").and_then(too_large) {
                return Err(refuse(format!("agents_spawned[{i}].tokens_used"), value));
            }
        }
    }
    Ok(())
}

/// Checks a token count given on the command line or by an agent.
pub fn check_count(what: &str, n: u64) -> Result<u64> {
    if n > MAX_TOKENS {
        Err(Error::TokensOutOfRange {
            what: what.to_string(),
            value: n.to_string(),
            max: MAX_TOKENS,
        })
    } else {
        Ok(n)
    }
}

/// Adds two token counts, refusing a sum above [`MAX_TOKENS`].
pub fn add_counts(what: &str, a: u64, b: u64) -> Result<u64> {
    match a.checked_add(b) {
        Some(sum) => check_count(what, sum),
        None => Err(Error::TokensOutOfRange {
            what: what.to_string(),
            value: format!("{a} + {b}"),
            max: MAX_TOKENS,
        }),
    }
}

fn lenient_count<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<u64, D::Error> {
    count("tokens_used", Option::<Value>::deserialize(d)?)
        .map(Option::unwrap_or_default)
        .map_err(serde::de::Error::custom)
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

/// The status indicator of the seed's `status` and `list` layouts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Indicator {
    /// On track.
    Active,
    /// Blocked or failed: its status says so, or its workflow holds a
    /// blocked or failed invocation not yet taken up again.
    Blocked,
    /// Over 80 % of the budget.
    Warning,
    /// Over 95 % of the budget.
    Critical,
    /// Paused.
    Paused,
    /// Closed.
    Closed,
}

impl Indicator {
    /// The word used in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Indicator::Active => "active",
            Indicator::Blocked => "blocked",
            Indicator::Warning => "warning",
            Indicator::Critical => "critical",
            Indicator::Paused => "paused",
            Indicator::Closed => "closed",
        }
    }

    /// The seed's visual indicator.
    pub fn emoji(self) -> &'static str {
        match self {
            Indicator::Active => "🟢",
            Indicator::Blocked => "🔴",
            Indicator::Warning => "🟡",
            Indicator::Critical => "🔴",
            Indicator::Paused => "⏸️",
            Indicator::Closed => "✅",
        }
    }
}

impl WorkSession {
    /// current / max × 100 (0 when there is no budget).
    pub fn percentage(&self) -> f64 {
        if self.tokens.max == 0 {
            0.0
        } else {
            self.tokens.current as f64 * 100.0 / self.tokens.max as f64
        }
    }

    /// The seed's indicator: paused/closed by status; red when blocked or
    /// failed (a `blocked` or `failed` status another tool wrote, or a
    /// blocked or failed invocation in the workflow); else by budget use
    /// (yellow above 80 %, red above 95 %).
    pub fn indicator(&self) -> Indicator {
        match &self.status {
            SessionStatus::Closed => Indicator::Closed,
            SessionStatus::Paused => Indicator::Paused,
            SessionStatus::Other(s)
                if s.eq_ignore_ascii_case("blocked") || s.eq_ignore_ascii_case("failed") =>
            {
                Indicator::Blocked
            }
            _ if self.workflow_blocked => Indicator::Blocked,
            _ => {
                let ratio = self.percentage() / 100.0;
                if ratio > 0.95 {
                    Indicator::Critical
                } else if ratio > 0.80 {
                    Indicator::Warning
                } else {
                    Indicator::Active
                }
            }
        }
    }

    /// How long the session ran: from `created` to now, or to its close
    /// (`last_updated`, the close being its last write) once closed.
    pub fn duration(&self, now: Timestamp) -> Option<String> {
        let created = clock::parse(&self.created)?;
        let end = match self.status {
            SessionStatus::Closed => clock::parse(&self.last_updated).unwrap_or(now),
            _ => now,
        };
        Some(clock::duration(created, end))
    }

    /// The record as JSON plus the computed `indicator` and `percentage`, the
    /// shape `start`, `resume` and `status` print with `--json`.
    pub fn to_json(&self) -> Value {
        let mut v = serde_json::to_value(self).unwrap_or(Value::Null);
        if let Value::Object(m) = &mut v {
            m.insert("indicator".into(), self.indicator().as_str().into());
            m.insert(
                "percentage".into(),
                serde_json::json!((self.percentage() * 10.0).round() / 10.0),
            );
        }
        v
    }

    /// The token report behind `tokens` and `savings`.
    pub fn token_report(&self) -> TokenReport {
        let t = &self.tokens;
        // Both are at most MAX_TOKENS, so this cannot overflow.
        let total = t.current.saturating_add(t.saved);
        TokenReport {
            session_id: self.session_id.clone(),
            max: t.max,
            current: t.current,
            peak: t.peak,
            remaining: t.max.saturating_sub(t.current),
            percentage: self.percentage(),
            agents: self
                .agents_spawned
                .iter()
                .map(|a| AgentTokens {
                    id: a.id.clone(),
                    agent_type: a.agent_type.clone(),
                    tokens_used: a.tokens_used,
                })
                .collect(),
            saved: t.saved,
            total_without_isolation: total,
            savings_percentage: if total == 0 {
                0.0
            } else {
                t.saved as f64 * 100.0 / total as f64
            },
            exceeds_limit_by: total.saturating_sub(t.max),
            indicator: self.indicator(),
        }
    }
}

/// Figures of the seed's `tokens` and `savings` reports.
#[derive(Debug, Clone, Serialize)]
pub struct TokenReport {
    /// The session reported on.
    pub session_id: String,
    /// Budget.
    pub max: u64,
    /// Main-session usage.
    pub current: u64,
    /// Highest main-session usage.
    pub peak: u64,
    /// Budget left.
    pub remaining: u64,
    /// current / max × 100.
    pub percentage: f64,
    /// Each spawned agent's isolated usage.
    pub agents: Vec<AgentTokens>,
    /// Tokens kept out of the main context.
    pub saved: u64,
    /// "Total Consumed (if no isolation)": current + saved.
    pub total_without_isolation: u64,
    /// saved / total × 100.
    pub savings_percentage: f64,
    /// How far the total would overrun the budget without isolation (0: fits).
    pub exceeds_limit_by: u64,
    /// The session's indicator.
    pub indicator: Indicator,
}

/// One line of the report's "Subprocess Agents".
#[derive(Debug, Clone, Serialize)]
pub struct AgentTokens {
    /// Agent id.
    pub id: String,
    /// Agent type.
    #[serde(rename = "type")]
    pub agent_type: String,
    /// Its usage.
    pub tokens_used: u64,
}

/// Checks a session id prefix: 2–5 capital letters.
pub fn validate_prefix(prefix: &str) -> Result<()> {
    if (2..=5).contains(&prefix.len()) && prefix.chars().all(|c| c.is_ascii_uppercase()) {
        Ok(())
    } else {
        Err(Error::invalid(
            "prefix",
            prefix,
            format!(
                "use 2 to 5 capital letters, e.g. {}",
                KNOWN_PREFIXES.join(", ")
            ),
        ))
    }
}

/// Upper-cases a client or project name and refuses anything but letters
/// and digits, because `-` separates the id's parts.
pub fn id_part(field: &'static str, value: &str) -> Result<String> {
    let up = value.trim().to_ascii_uppercase();
    if !up.is_empty() && up.chars().all(|c| c.is_ascii_alphanumeric()) {
        Ok(up)
    } else {
        Err(Error::invalid(
            field,
            value,
            "use letters and digits only (they are upper-cased), e.g. ACME",
        ))
    }
}

/// The seed's context summary (key decisions, outcomes, next steps) from
/// what the session and its workflow state recorded, for `close` without
/// `--summary` and for `switch` restoring a session's context. Only facts
/// are listed, no times, so the same records always give the same text.
pub fn compose_summary(ws: &WorkSession, state: Option<&SessionState>) -> String {
    let wf = state.and_then(|s| s.orchestrator_workflow.as_ref());
    let mut out = format!(
        "Work session {} for {} / {}.\n",
        ws.session_id, ws.client, ws.project
    );
    let mut section = |title: &str, items: Vec<String>| {
        if !items.is_empty() {
            out.push_str(&format!("\n{title}:\n"));
            for item in items {
                out.push_str(&format!("- {item}\n"));
            }
        }
    };

    let mut outcomes = vec![];
    let done: Vec<_> = ws
        .milestones
        .iter()
        .filter(|m| m.completed.is_some())
        .map(|m| m.name.as_str())
        .collect();
    if !done.is_empty() {
        outcomes.push(format!("Milestones done: {}", done.join(", ")));
    }
    if !ws.artifacts.is_empty() {
        let paths: Vec<_> = ws
            .artifacts
            .iter()
            .map(|a| match &a.agent {
                Some(agent) => format!("{} ({agent})", a.path),
                None => a.path.clone(),
            })
            .collect();
        outcomes.push(format!("Artifacts: {}", paths.join(", ")));
    }
    if !ws.agents_spawned.is_empty() {
        outcomes.push(format!(
            "Agents spawned: {} ({} tokens kept out of the main context)",
            ws.agents_spawned.len(),
            ws.tokens.saved
        ));
    }
    if let Some(wf) = wf {
        outcomes.push(format!(
            "Workflow: phase {}, {} agent invocations",
            wf.workflow_phase,
            wf.total_invocations()
        ));
        for inv in wf.agent_history.iter().filter(|i| {
            i.status == InvocationStatus::Completed
                && i.output
                    .as_ref()
                    .is_some_and(|o| !o.summary.trim().is_empty())
        }) {
            let summary = inv.output.as_ref().map_or("", |o| o.summary.as_str());
            outcomes.push(format!("{} completed: {}", inv.agent, first_line(summary)));
        }
    }
    section("Outcomes", outcomes);

    if let Some(wf) = wf {
        let decisions = wf
            .decisions
            .iter()
            .map(|d| {
                let mut who = d.decided_by.to_string();
                if !d.approved_by.is_empty() {
                    who.push_str(&format!("; approved by {}", joined(&d.approved_by)));
                }
                if !d.rejected_by.is_empty() {
                    who.push_str(&format!("; rejected by {}", joined(&d.rejected_by)));
                }
                let mut line = format!("[{}] {} ({who})", d.kind, first_line(&d.description));
                if !d.rationale.trim().is_empty() {
                    line.push_str(&format!(": {}", first_line(&d.rationale)));
                }
                line
            })
            .collect();
        section("Key decisions", decisions);
        let verdicts = wf
            .verdicts
            .iter()
            .map(|v| {
                let mut line = format!("{} {} ({:.2})", v.agent, v.decision, v.confidence);
                if !v.reasoning.trim().is_empty() {
                    line.push_str(&format!(": {}", first_line(&v.reasoning)));
                }
                for (label, items) in [("conditions", &v.conditions), ("blockers", &v.blockers)] {
                    if let Some(items) = items.as_ref().filter(|i| !i.is_empty()) {
                        line.push_str(&format!("; {label}: {}", items.join(", ")));
                    }
                }
                line
            })
            .collect();
        section("Verdicts", verdicts);
    }

    section(
        "Notes and learnings",
        ws.notes.iter().map(|n| first_line(n).to_string()).collect(),
    );

    let mut next = vec![];
    for m in ws.milestones.iter().filter(|m| m.completed.is_none()) {
        next.push(format!("Milestone open: {}", m.name));
    }
    if let Some(wf) = wf {
        for h in &wf.pending_handoffs {
            let mut line = format!("Handoff {} → {} pending", h.from_agent, h.to_agent);
            if !h.reason.trim().is_empty() {
                line.push_str(&format!(": {}", first_line(&h.reason)));
            }
            next.push(line);
        }
        for inv in &wf.agent_history {
            match inv.status {
                InvocationStatus::InProgress => next.push(format!(
                    "{} in progress: {}",
                    inv.agent,
                    first_line(&inv.input.prompt)
                )),
                _ if unresolved(&wf.agent_history, inv) => {
                    let blockers = inv
                        .output
                        .as_ref()
                        .filter(|o| !o.blockers.is_empty())
                        .map(|o| format!(": {}", o.blockers.join(", ")))
                        .unwrap_or_default();
                    next.push(format!("{} {}{blockers}", inv.agent, inv.status));
                }
                _ => {}
            }
        }
        if let Some(last) = wf.agent_history.iter().rev().find(|i| {
            i.output
                .as_ref()
                .is_some_and(|o| !o.recommendations.is_empty())
        }) && let Some(out) = &last.output
        {
            for r in &out.recommendations {
                next.push(format!("Recommended by {}: {}", last.agent, first_line(r)));
            }
        }
    }
    section("Next steps", next);
    out
}

fn first_line(text: &str) -> &str {
    text.trim().lines().next().unwrap_or_default()
}

fn joined<T: std::fmt::Display>(items: &[T]) -> String {
    items
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether `inv` is blocked or failed and no later invocation of the same
/// agent took the work up again.
fn unresolved(history: &[AgentInvocation], inv: &AgentInvocation) -> bool {
    matches!(
        inv.status,
        InvocationStatus::Blocked | InvocationStatus::Failed
    ) && !history
        .iter()
        .skip_while(|i| !std::ptr::eq(*i, inv))
        .skip(1)
        .any(|later| later.agent == inv.agent)
}

/// Whether a workflow state holds a blocked or failed invocation that no
/// later invocation of the same agent took up again (the seed's red
/// "Blocked / Failed" indicator).
pub fn workflow_blocked(state: &SessionState) -> bool {
    state.orchestrator_workflow.as_ref().is_some_and(|wf| {
        wf.agent_history
            .iter()
            .any(|inv| unresolved(&wf.agent_history, inv))
    })
}

/// The name among `candidates` closest to `name` by edit distance, ignoring
/// case, when it is close enough to be a typo of it (at most a third of the
/// name's letters differ, and never more than 3).
pub fn nearest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let wanted: Vec<char> = name.trim().to_lowercase().chars().collect();
    let limit = (wanted.len() / 3).clamp(1, 3);
    candidates
        .into_iter()
        .map(|c| {
            let have: Vec<char> = c.trim().to_lowercase().chars().collect();
            (edit_distance(&wanted, &have), c)
        })
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Levenshtein distance: insertions, deletions and substitutions.
fn edit_distance(a: &[char], b: &[char]) -> usize {
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = if ca == cb {
                diagonal
            } else {
                1 + diagonal.min(above).min(row[j])
            };
            diagonal = above;
        }
    }
    row[b.len()]
}

/// Whether two milestone names are the same milestone: people retype a
/// name with other capitals or spaces around it.
pub fn same_milestone(a: &str, b: &str) -> bool {
    a.trim().eq_ignore_ascii_case(b.trim())
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
    }
}

/// Refuses an empty (or all-blank) value for `field`.
pub fn non_empty(field: &'static str, value: &str) -> Result<String> {
    if value.trim().is_empty() {
        Err(Error::invalid(field, value, "must not be empty"))
    } else {
        Ok(value.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legacy_tokens_migrate() {
        let t: Tokens = serde_saphyr::from_str(
            "saved_by_isolation: 145000\nmax_limit: 200000\ncurrent: 10\npeak: 5\n",
        )
        .unwrap();
        assert_eq!(t.saved, 145_000);
        assert_eq!(t.max, 200_000);
        assert_eq!(t.peak, 10);
        assert!(t.extra.is_empty());
    }

    #[test]
    fn missing_max_is_zero_until_loaded() {
        let t: Tokens = serde_saphyr::from_str("max: null\ncurrent: '45,000'\n").unwrap();
        assert_eq!(t.max, 0);
        assert_eq!(t.current, 45_000);
    }

    #[test]
    fn near_names_are_typos_far_ones_are_not() {
        let names = ["Design", "Requirements Complete", "Ship"];
        assert_eq!(nearest("Desing", names), Some("Design"));
        assert_eq!(nearest("design", names), Some("Design"));
        assert_eq!(
            nearest("requirements compete", names),
            Some("Requirements Complete")
        );
        assert_eq!(nearest("Deploy", names), None);
        assert_eq!(nearest("Shop", names), Some("Ship"));
        assert_eq!(nearest("X", names), None);
    }

    #[test]
    fn a_closed_session_lasts_until_its_close() {
        let mut ws: WorkSession = serde_saphyr::from_str(
            "session_id: SES202501-ACME-AUDIT\ncreated: 2025-01-15T10:00:00Z\nlast_updated: 2025-01-15T10:05:00Z\nstatus: closed\n",
        )
        .unwrap();
        let later: Timestamp = "2025-01-17T10:00:00Z".parse().unwrap();
        assert_eq!(ws.duration(later).as_deref(), Some("5m"));
        ws.status = SessionStatus::Active;
        assert_eq!(ws.duration(later).as_deref(), Some("2d 0h"));
    }

    #[test]
    fn red_means_blocked_or_failed() {
        let mut ws: WorkSession =
            serde_saphyr::from_str("session_id: SES202501-ACME-AUDIT\nstatus: blocked\n").unwrap();
        ws.tokens.max = 100;
        assert_eq!(ws.indicator(), Indicator::Blocked);
        ws.status = SessionStatus::Other("failed".into());
        assert_eq!(ws.indicator(), Indicator::Blocked);
        ws.status = SessionStatus::Active;
        assert_eq!(ws.indicator(), Indicator::Active);
        ws.workflow_blocked = true;
        assert_eq!(ws.indicator(), Indicator::Blocked);
        assert_eq!(ws.indicator().emoji(), "🔴");
        assert_eq!(ws.to_json()["indicator"], "blocked");
    }

    #[test]
    fn prefixes() {
        assert!(validate_prefix("ENGX").is_ok());
        assert!(validate_prefix("E").is_err());
    }

    #[test]
    fn seed_report_figures() {
        let mut ws: WorkSession = serde_saphyr::from_str(
            "session_id: SES202501-ACME-AUDIT\ntokens:\n  max: 150000\n  current: 45000\n  saved: 145000\n",
        )
        .unwrap();
        ws.status = SessionStatus::Active;
        let r = ws.token_report();
        assert_eq!(r.total_without_isolation, 190_000);
        assert_eq!(r.exceeds_limit_by, 40_000);
        assert_eq!(r.savings_percentage.round(), 76.0);
        assert_eq!(r.percentage.round(), 30.0);
    }
}
