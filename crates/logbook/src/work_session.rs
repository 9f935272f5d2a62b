//! Work sessions (seed 002): long-lived units of work with a token budget,
//! milestones, artifacts, notes and the agents spawned for them.
//!
//! One YAML file per session, `{sessions_dir}/{id}.yaml`, in the seed's key
//! order; the active one is named by `{sessions_dir}/active-session.yaml`;
//! closed ones move to `{session_archive_dir}/`. Files written by hand or by
//! another tool are read leniently (legacy token keys, missing fields, unknown
//! keys kept); Logbook writes only valid records.
//!
//! Locks are taken in the order DESIGN §8 fixes: the active-session pointer,
//! then one work session, never two sessions at once.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use crate::clock;
use crate::error::{Error, Result};
use crate::project::Project;
use crate::store;

/// File naming the active session inside `sessions_dir`.
pub const POINTER_FILE: &str = "active-session.yaml";
/// Prefixes the seed names; others of 2–5 capital letters are allowed too.
pub const KNOWN_PREFIXES: [&str; 5] = ["SES", "ENG", "ANA", "DES", "TST"];
/// Lock guarding the active-session pointer; taken shared by writers of a
/// session's companions (workflow state) so `close` cannot move them midway.
pub const POINTER_LOCK: &str = "active-session";

static ID_RE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[A-Z]{2,5}[0-9]{6}-[A-Z0-9]+-[A-Z0-9]+(-[0-9]+)?$")
        .unwrap_or_else(|_| unreachable!())
});

/// One work session, exactly the seed's fields and nesting, plus whatever
/// other keys the file carried (kept on rewrite).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WorkSession {
    /// `{PREFIX}{YYYYMM}-{CLIENT}-{PROJECT}`, maybe with a `-N` suffix.
    pub session_id: String,
    /// When the session was started (UTC, RFC 3339).
    #[serde(default, deserialize_with = "null_default")]
    pub created: String,
    /// When the file was last written.
    #[serde(default, deserialize_with = "null_default")]
    pub last_updated: String,
    /// active, paused or closed.
    #[serde(default, deserialize_with = "null_default")]
    pub status: SessionStatus,
    /// Who the work is for.
    #[serde(default, deserialize_with = "null_default")]
    pub client: String,
    /// What the work is.
    #[serde(default, deserialize_with = "null_default")]
    pub project: String,
    /// The id's prefix (SES, ENG, …).
    #[serde(default, deserialize_with = "null_default")]
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
    #[serde(default, deserialize_with = "null_default")]
    pub context_summary: String,
    /// Free-form notes.
    #[serde(default, deserialize_with = "null_default")]
    pub notes: Vec<String>,
    /// Keys Logbook does not know, preserved on rewrite.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A session's lifecycle state; anything unexpected in a hand-edited file is
/// kept as written rather than refused.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum SessionStatus {
    /// The one being worked on.
    #[default]
    Active,
    /// Set aside by `switch` or `pause`; resumable.
    Paused,
    /// Finished and archived.
    Closed,
    /// A value another tool wrote.
    Other(String),
}

impl SessionStatus {
    /// The word written to the file.
    pub fn as_str(&self) -> &str {
        match self {
            SessionStatus::Active => "active",
            SessionStatus::Paused => "paused",
            SessionStatus::Closed => "closed",
            SessionStatus::Other(s) => s,
        }
    }
}

impl Serialize for SessionStatus {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for SessionStatus {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Ok(match s.as_str() {
            "active" => SessionStatus::Active,
            "paused" => SessionStatus::Paused,
            "closed" => SessionStatus::Closed,
            _ => SessionStatus::Other(s),
        })
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
/// separators ("45,000"); null is "missing".
fn count(field: &str, v: Option<Value>) -> std::result::Result<Option<u64>, String> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_u64()
            .or_else(|| n.as_f64().filter(|f| *f >= 0.0).map(|f| f.round() as u64))
            .map(Some)
            .ok_or_else(|| format!("{field} must be a non-negative number, not {n}")),
        Some(Value::String(s)) => {
            let digits: String = s
                .chars()
                .filter(|c| !matches!(c, ',' | '_' | ' '))
                .collect();
            digits
                .parse::<u64>()
                .map(Some)
                .map_err(|_| format!("{field} must be a number, not {s:?}"))
        }
        Some(other) => Err(format!("{field} must be a number, not {other}")),
    }
}

fn lenient_count<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<u64, D::Error> {
    count("tokens_used", Option::<Value>::deserialize(d)?)
        .map(Option::unwrap_or_default)
        .map_err(serde::de::Error::custom)
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
    pub id: String,
    /// The agent type (analyst, architect, …).
    #[serde(rename = "type", default, deserialize_with = "null_default")]
    pub agent_type: String,
    /// When it was spawned.
    #[serde(default)]
    pub started: Option<String>,
    /// When it reported back; null while running.
    #[serde(default)]
    pub completed: Option<String>,
    /// Tokens it used in its own context.
    #[serde(default, deserialize_with = "lenient_count")]
    pub tokens_used: u64,
    /// Where its output went (a file, or a run folder).
    #[serde(default)]
    pub output_file: Option<String>,
    /// completed or failed, once done (Logbook's addition; absent in the seed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// Unknown keys, preserved.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A file produced during the session.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Artifact {
    /// Path as given (usually relative to the project root).
    pub path: String,
    /// When it was first recorded.
    #[serde(default)]
    pub created: Option<String>,
    /// When it was recorded again, if ever.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modified: Option<String>,
    /// Who produced it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// Unknown keys, preserved.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A progress checkpoint; `completed` is null until it is done.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Milestone {
    /// What the milestone is.
    pub name: String,
    /// When it was reached.
    #[serde(default)]
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

    /// The seed's indicator: paused/closed by status, else by budget use
    /// (yellow above 80 %, red above 95 %).
    pub fn indicator(&self) -> Indicator {
        match self.status {
            SessionStatus::Closed => Indicator::Closed,
            SessionStatus::Paused => Indicator::Paused,
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
        let total = t.current + t.saved;
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

/// Checks a work session id before it becomes part of a path.
pub fn validate_id(id: &str) -> Result<()> {
    if ID_RE.is_match(id) {
        Ok(())
    } else {
        Err(Error::invalid(
            "work session id",
            id,
            "expected {PREFIX}{YYYYMM}-{CLIENT}-{PROJECT}, e.g. SES202501-ACME-AUDIT (capital letters and digits, optional -N suffix)",
        ))
    }
}

/// Upper-cases a client or project name and refuses anything but letters
/// and digits, because `-` separates the id's parts.
fn id_part(field: &'static str, value: &str) -> Result<String> {
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

/// Where a session's file is.
fn live_path(p: &Project, id: &str) -> PathBuf {
    p.config.sessions_dir.join(format!("{id}.yaml"))
}

fn archived_path(p: &Project, id: &str) -> PathBuf {
    p.config.session_archive_dir.join(format!("{id}.yaml"))
}

fn lock_name(id: &str) -> String {
    format!("session-{id}")
}

/// Reads one session file, filling the configured budget where none is set.
pub fn read_file(p: &Project, path: &Path) -> Result<WorkSession> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let mut ws: WorkSession = store::parse_yaml(path, "work session", &text)?;
    if ws.tokens.max == 0 {
        ws.tokens.max = p.config.token_budget;
    }
    Ok(ws)
}

fn write_file(path: &Path, ws: &WorkSession) -> Result<()> {
    store::write_atomic(path, store::to_yaml(path, ws)?.as_bytes())
}

/// Finds a session by id, live or archived: its record and file.
pub fn load(p: &Project, id: &str) -> Result<(WorkSession, PathBuf)> {
    validate_id(id)?;
    for path in [live_path(p, id), archived_path(p, id)] {
        if path.is_file() {
            return Ok((read_file(p, &path)?, path));
        }
    }
    Err(Error::not_found(
        "work session",
        id,
        "`logbook list` shows the sessions there are",
    ))
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Pointer {
    #[serde(default)]
    session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    activated: Option<String>,
    #[serde(flatten)]
    extra: Map<String, Value>,
}

fn pointer_path(p: &Project) -> PathBuf {
    p.config.sessions_dir.join(POINTER_FILE)
}

/// The active session's id (no lock: a reader). It is the one
/// `active-session.yaml` names; without that file, the one live session whose
/// own status is `active`, so a session file written by hand or by a start
/// killed before it wrote the pointer is still found.
pub fn active_id(p: &Project) -> Result<Option<String>> {
    let path = pointer_path(p);
    match store::read_optional(&path)? {
        Some(text) if !text.trim().is_empty() => pointer_id(&path, &text),
        _ => sole_active_session(p),
    }
}

/// Reads the pointer leniently: Logbook writes `session_id: ID`; other tools
/// may write the bare id or another obvious key.
fn pointer_id(path: &Path, text: &str) -> Result<Option<String>> {
    let value: Value = store::parse_yaml(path, "active-session pointer", text)?;
    let id = match &value {
        Value::String(s) => Some(s.clone()),
        Value::Object(m) => ["session_id", "active_session", "active_session_id", "id"]
            .iter()
            .find_map(|k| m.get(*k))
            .and_then(|v| v.as_str().map(str::to_string)),
        _ => None,
    };
    Ok(id.map(|s| s.trim().to_string()).filter(|s| !s.is_empty()))
}

fn sole_active_session(p: &Project) -> Result<Option<String>> {
    let mut active = session_files(&p.config.sessions_dir)?
        .into_iter()
        .filter_map(|path| read_file(p, &path).ok())
        .filter(|ws| ws.status == SessionStatus::Active && validate_id(&ws.session_id).is_ok());
    match (active.next(), active.next()) {
        (Some(ws), None) => Ok(Some(ws.session_id)),
        _ => Ok(None),
    }
}

fn set_pointer(p: &Project, id: Option<&str>) -> Result<()> {
    let path = pointer_path(p);
    match id {
        Some(id) => {
            let ptr = Pointer {
                session_id: Some(id.to_string()),
                activated: Some(clock::now_string()),
                extra: Map::new(),
            };
            store::write_atomic(&path, store::to_yaml(&path, &ptr)?.as_bytes())
        }
        None => match std::fs::remove_file(&path) {
            Ok(()) => store::sync_dir(&p.config.sessions_dir),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(Error::io(&path, e)),
        },
    }
}

/// Options of [`start`].
#[derive(Debug, Clone, Default)]
pub struct StartOptions {
    /// Id prefix; the config's default when `None`.
    pub prefix: Option<String>,
    /// Client; `INTERNAL` when `None`.
    pub client: Option<String>,
    /// Project; the project folder's name when `None`.
    pub project: Option<String>,
    /// Budget; the config's `token_budget` when `None`.
    pub max_tokens: Option<u64>,
    /// Close the active session first instead of refusing.
    pub close_active: bool,
}

/// Starts a new session and makes it the active one.
pub fn start(p: &Project, opts: StartOptions) -> Result<WorkSession> {
    let prefix = opts
        .prefix
        .map(|s| s.trim().to_ascii_uppercase())
        .unwrap_or_else(|| p.config.default_prefix.clone());
    validate_prefix(&prefix)?;
    let client = match &opts.client {
        Some(c) => id_part("client", c)?,
        None => "INTERNAL".to_string(),
    };
    let project = match &opts.project {
        Some(c) => id_part("project", c)?,
        None => default_project_name(p.root()),
    };
    if opts.max_tokens == Some(0) {
        return Err(Error::invalid(
            "max-tokens",
            "0",
            "the budget must be at least 1",
        ));
    }

    let _pointer = p.locks.exclusive(POINTER_LOCK)?;
    if let Some(active) = active_id(p)? {
        let still_active = load(p, &active)
            .map(|(ws, _)| ws.status != SessionStatus::Closed)
            .unwrap_or(false);
        if still_active {
            if !opts.close_active {
                return Err(Error::SessionActive { id: active });
            }
            close_locked(p, &active, None)?;
        }
        set_pointer(p, None)?;
    }

    let now = clock::now();
    let month = now
        .to_zoned(jiff::tz::TimeZone::UTC)
        .strftime("%Y%m")
        .to_string();
    let base = format!("{prefix}{month}-{client}-{project}");
    let mut id = base.clone();
    let mut n = 1;
    while live_path(p, &id).exists() || archived_path(p, &id).exists() {
        n += 1;
        id = format!("{base}-{n}");
    }
    validate_id(&id)?;
    let stamp = clock::format(now);
    let ws = WorkSession {
        session_id: id.clone(),
        created: stamp.clone(),
        last_updated: stamp,
        status: SessionStatus::Active,
        client,
        project,
        prefix,
        tokens: Tokens {
            max: opts.max_tokens.unwrap_or(p.config.token_budget),
            ..Tokens::default()
        },
        agents_spawned: vec![],
        artifacts: vec![],
        milestones: vec![],
        context_summary: String::new(),
        notes: vec![],
        extra: Map::new(),
    };
    {
        let _session = p.locks.exclusive(&lock_name(&id))?;
        write_file(&live_path(p, &id), &ws)?;
    }
    set_pointer(p, Some(&id))?;
    Ok(ws)
}

fn default_project_name(root: &Path) -> String {
    let name: String = root
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_uppercase())
        .unwrap_or_default()
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect();
    if name.is_empty() {
        "PROJECT".into()
    } else {
        name
    }
}

/// The session `id` names, or the active one.
pub fn resolve(p: &Project, id: Option<&str>) -> Result<String> {
    match id {
        Some(id) => {
            validate_id(id)?;
            Ok(id.to_string())
        }
        None => active_id(p)?.ok_or(Error::NoActiveSession),
    }
}

/// Reads a session (the active one without `id`).
pub fn get(p: &Project, id: Option<&str>) -> Result<WorkSession> {
    let id = resolve(p, id)?;
    Ok(load(p, &id)?.0)
}

/// Applies `change` to a live session under its lock and writes it back;
/// `last_updated` is set and `peak` kept at or above `current`. Closed
/// sessions are refused.
pub fn update<T>(
    p: &Project,
    id: Option<&str>,
    change: impl FnOnce(&mut WorkSession) -> Result<T>,
) -> Result<(WorkSession, T)> {
    // A shared hold on the pointer keeps `switch` and `close` from moving the
    // active session while this update resolves and writes it.
    let _pointer = p.locks.shared(POINTER_LOCK)?;
    let id = resolve(p, id)?;
    let _session = p.locks.exclusive(&lock_name(&id))?;
    update_locked(p, &id, change)
}

fn update_locked<T>(
    p: &Project,
    id: &str,
    change: impl FnOnce(&mut WorkSession) -> Result<T>,
) -> Result<(WorkSession, T)> {
    let (mut ws, path) = load(p, id)?;
    if ws.status == SessionStatus::Closed || path != live_path(p, id) {
        return Err(Error::State(format!(
            "work session {id} is closed and archived; start a new one with `logbook start`"
        )));
    }
    let out = change(&mut ws)?;
    ws.last_updated = clock::now_string();
    ws.tokens.peak = ws.tokens.peak.max(ws.tokens.current);
    write_file(&path, &ws)?;
    Ok((ws, out))
}

/// Resumes a session: without `id` the active one; with `id` a paused one
/// becomes active (the previously active one is paused).
pub fn resume(p: &Project, id: Option<&str>) -> Result<WorkSession> {
    match id {
        None => get(p, None),
        Some(id) => switch(p, id),
    }
}

/// Saves and pauses the active session, then activates `id`.
pub fn switch(p: &Project, id: &str) -> Result<WorkSession> {
    validate_id(id)?;
    let _pointer = p.locks.exclusive(POINTER_LOCK)?;
    let (target, _) = load(p, id)?;
    if target.status == SessionStatus::Closed {
        return Err(Error::State(format!(
            "work session {id} is closed and archived; start a new one with `logbook start`"
        )));
    }
    if let Some(current) = active_id(p)?
        && current != id
        && live_path(p, &current).is_file()
    {
        let _lock = p.locks.exclusive(&lock_name(&current))?;
        update_locked(p, &current, |ws| {
            ws.status = SessionStatus::Paused;
            Ok(())
        })?;
    }
    let (ws, ()) = {
        let _lock = p.locks.exclusive(&lock_name(id))?;
        update_locked(p, id, |ws| {
            ws.status = SessionStatus::Active;
            Ok(())
        })?
    };
    set_pointer(p, Some(id))?;
    Ok(ws)
}

/// Pauses a session (the active one without `id`) and clears the pointer if
/// it was active.
pub fn pause(p: &Project, id: Option<&str>) -> Result<WorkSession> {
    let _pointer = p.locks.exclusive(POINTER_LOCK)?;
    let id = resolve(p, id)?;
    let (ws, ()) = {
        let _lock = p.locks.exclusive(&lock_name(&id))?;
        update_locked(p, &id, |ws| {
            ws.status = SessionStatus::Paused;
            Ok(())
        })?
    };
    if active_id(p)?.as_deref() == Some(id.as_str()) {
        set_pointer(p, None)?;
    }
    Ok(ws)
}

/// Closes a session (the active one without `id`): writes the context
/// summary (given, or composed from milestones, artifacts and notes), marks
/// it closed, moves it and its workflow state to the archive and clears the
/// pointer if it was active.
pub fn close(p: &Project, id: Option<&str>, summary: Option<String>) -> Result<WorkSession> {
    let _pointer = p.locks.exclusive(POINTER_LOCK)?;
    let id = resolve(p, id)?;
    let ws = close_locked(p, &id, summary)?;
    if active_id(p)?.as_deref() == Some(id.as_str()) {
        set_pointer(p, None)?;
    }
    Ok(ws)
}

fn close_locked(p: &Project, id: &str, summary: Option<String>) -> Result<WorkSession> {
    let _lock = p.locks.exclusive(&lock_name(id))?;
    let (ws, ()) = update_locked(p, id, |ws| {
        ws.context_summary = match summary {
            Some(s) if !s.trim().is_empty() => s,
            _ => compose_summary(ws),
        };
        ws.status = SessionStatus::Closed;
        Ok(())
    })?;
    // The file is already marked closed, so a crash before the move leaves a
    // closed session in the live folder, which listings show as archived and
    // `doctor --fix` moves with `finish_archiving`.
    move_to_archive(p, id)?;
    Ok(ws)
}

fn move_to_archive(p: &Project, id: &str) -> Result<()> {
    for name in [
        format!("{id}.yaml"),
        format!("{id}.state.json"),
        format!("{id}.history"),
    ] {
        let from = p.config.sessions_dir.join(&name);
        if from.exists() {
            store::move_durably(&from, &p.config.session_archive_dir.join(&name))?;
        }
    }
    Ok(())
}

/// Completes a close that a crash interrupted: a session marked closed but
/// still in the live folder is moved, with its workflow state, to the
/// archive. Returns whether anything moved.
pub fn finish_archiving(p: &Project, id: &str) -> Result<bool> {
    validate_id(id)?;
    let _pointer = p.locks.exclusive(POINTER_LOCK)?;
    let _lock = p.locks.exclusive(&lock_name(id))?;
    let live = live_path(p, id);
    if !live.is_file() || read_file(p, &live)?.status != SessionStatus::Closed {
        return Ok(false);
    }
    if archived_path(p, id).exists() {
        return Err(Error::State(format!(
            "{} and {} both exist; compare them by hand and remove the stale one",
            live.display(),
            archived_path(p, id).display()
        )));
    }
    move_to_archive(p, id)?;
    if active_id(p).ok().flatten().as_deref() == Some(id) {
        set_pointer(p, None)?;
    }
    Ok(true)
}

/// Clears `active-session.yaml` when it names a session that is missing,
/// closed or unreadable, so commands stop resolving to it. Returns the stale
/// id it cleared.
pub fn clear_stale_pointer(p: &Project) -> Result<Option<String>> {
    let _pointer = p.locks.exclusive(POINTER_LOCK)?;
    let id = match active_id(p) {
        Ok(Some(id)) => id,
        Ok(None) => return Ok(None),
        Err(_) => {
            set_pointer(p, None)?;
            return Ok(Some(String::new()));
        }
    };
    let usable = validate_id(&id).is_ok()
        && read_file(p, &live_path(p, &id)).is_ok_and(|ws| ws.status != SessionStatus::Closed);
    if usable {
        return Ok(None);
    }
    set_pointer(p, None)?;
    Ok(Some(id))
}

/// A context summary from what the session recorded, for `close` without
/// `--summary`.
pub fn compose_summary(ws: &WorkSession) -> String {
    let mut lines = vec![format!(
        "Work session {} for {} / {}.",
        ws.session_id, ws.client, ws.project
    )];
    let done: Vec<_> = ws
        .milestones
        .iter()
        .filter(|m| m.completed.is_some())
        .map(|m| m.name.as_str())
        .collect();
    let open: Vec<_> = ws
        .milestones
        .iter()
        .filter(|m| m.completed.is_none())
        .map(|m| m.name.as_str())
        .collect();
    if !done.is_empty() {
        lines.push(format!("Completed: {}.", done.join(", ")));
    }
    if !open.is_empty() {
        lines.push(format!("Open: {}.", open.join(", ")));
    }
    if !ws.artifacts.is_empty() {
        let paths: Vec<_> = ws.artifacts.iter().map(|a| a.path.as_str()).collect();
        lines.push(format!("Artifacts: {}.", paths.join(", ")));
    }
    if !ws.agents_spawned.is_empty() {
        lines.push(format!(
            "Agents spawned: {} ({} tokens kept out of the main context).",
            ws.agents_spawned.len(),
            ws.tokens.saved
        ));
    }
    for note in &ws.notes {
        lines.push(format!("Note: {note}"));
    }
    lines.join("\n") + "\n"
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

/// A file a listing skipped.
#[derive(Debug, Clone, Serialize)]
pub struct CorruptFile {
    /// The file.
    pub path: PathBuf,
    /// Why it was skipped.
    pub reason: String,
}

/// Every session, live and archived; unreadable files are reported in
/// [`Listing::corrupt`], never fatal.
pub fn list(p: &Project) -> Result<Listing> {
    let mut listing = Listing {
        active: active_id(p).unwrap_or(None),
        ..Listing::default()
    };
    for (dir, archived) in [
        (&p.config.sessions_dir, false),
        (&p.config.session_archive_dir, true),
    ] {
        for path in session_files(dir)? {
            match read_file(p, &path) {
                Ok(ws) if archived || ws.status == SessionStatus::Closed => {
                    listing.archived.push(ws)
                }
                Ok(ws) => listing.sessions.push(ws),
                Err(e) => listing.corrupt.push(CorruptFile {
                    path,
                    reason: e.to_string(),
                }),
            }
        }
    }
    listing
        .sessions
        .sort_by(|a, b| b.last_updated.cmp(&a.last_updated));
    listing
        .archived
        .sort_by(|a, b| b.last_updated.cmp(&a.last_updated));
    Ok(listing)
}

/// The session YAML files in `dir` (not the pointer, not temp files).
pub fn session_files(dir: &Path) -> Result<Vec<PathBuf>> {
    Ok(store::entries(dir, store::EntryKind::File)?
        .into_iter()
        .filter(|(name, _)| {
            (name.ends_with(".yaml") || name.ends_with(".yml")) && name != POINTER_FILE
        })
        .map(|(_, path)| path)
        .collect())
}

/// How `usage` changes the main session's token count.
#[derive(Debug, Clone, Copy)]
pub enum Usage {
    /// The main session now uses this many tokens.
    Current(u64),
    /// The main session used this many more.
    Add(u64),
}

/// Records main-session token usage; `peak` follows.
pub fn record_usage(p: &Project, id: Option<&str>, usage: Usage) -> Result<WorkSession> {
    Ok(update(p, id, |ws| {
        ws.tokens.current = match usage {
            Usage::Current(n) => n,
            Usage::Add(n) => ws.tokens.current.saturating_add(n),
        };
        Ok(())
    })?
    .0)
}

/// Appends a milestone that is not yet done.
pub fn add_milestone(p: &Project, id: Option<&str>, name: &str) -> Result<WorkSession> {
    let name = non_empty("milestone name", name)?;
    Ok(update(p, id, |ws| {
        ws.milestones.push(Milestone {
            name,
            completed: None,
            extra: Map::new(),
        });
        Ok(())
    })?
    .0)
}

/// Marks the first open milestone called `name` done (adding it, done, if
/// there is none).
pub fn complete_milestone(p: &Project, id: Option<&str>, name: &str) -> Result<WorkSession> {
    let name = non_empty("milestone name", name)?;
    Ok(update(p, id, |ws| {
        let now = Some(clock::now_string());
        match ws
            .milestones
            .iter_mut()
            .find(|m| m.name == name && m.completed.is_none())
        {
            Some(m) => m.completed = now,
            None => ws.milestones.push(Milestone {
                name,
                completed: now,
                extra: Map::new(),
            }),
        }
        Ok(())
    })?
    .0)
}

/// Records an artifact; recording the same path again marks it modified.
pub fn add_artifact(
    p: &Project,
    id: Option<&str>,
    path: &str,
    agent: Option<&str>,
) -> Result<WorkSession> {
    let path = non_empty("artifact path", path)?;
    Ok(update(p, id, |ws| {
        let now = clock::now_string();
        match ws.artifacts.iter_mut().find(|a| a.path == path) {
            Some(a) => {
                a.modified = Some(now);
                if let Some(agent) = agent {
                    a.agent = Some(agent.to_string());
                }
            }
            None => ws.artifacts.push(Artifact {
                path,
                created: Some(now),
                modified: None,
                agent: agent.map(str::to_string),
                extra: Map::new(),
            }),
        }
        Ok(())
    })?
    .0)
}

/// Appends a note.
pub fn add_note(p: &Project, id: Option<&str>, text: &str) -> Result<WorkSession> {
    let text = non_empty("note", text)?;
    Ok(update(p, id, |ws| {
        ws.notes.push(text);
        Ok(())
    })?
    .0)
}

/// Records a spawned agent and returns its id (`agent-xxxxxxxx` unless given).
pub fn spawn_agent(
    p: &Project,
    id: Option<&str>,
    agent_type: &str,
    agent_id: Option<&str>,
    output_file: Option<&str>,
) -> Result<(WorkSession, String)> {
    let agent_type = non_empty("agent type", agent_type)?;
    let agent_id = match agent_id {
        Some(a) => non_empty("agent id", a)?,
        None => format!("agent-{}", &uuid::Uuid::new_v4().simple().to_string()[..8]),
    };
    update(p, id, |ws| {
        if ws.agents_spawned.iter().any(|a| a.id == agent_id) {
            return Err(Error::invalid(
                "agent id",
                &agent_id,
                "this session already has an agent with that id; pick another or omit --id",
            ));
        }
        ws.agents_spawned.push(SpawnedAgent {
            id: agent_id.clone(),
            agent_type,
            started: Some(clock::now_string()),
            completed: None,
            tokens_used: 0,
            output_file: output_file.map(str::to_string),
            status: None,
            extra: Map::new(),
        });
        Ok(agent_id.clone())
    })
}

/// How a spawned agent ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentOutcome {
    /// It did its work.
    Completed,
    /// It did not.
    Failed,
}

/// Records that a spawned agent finished: its tokens count towards `saved`
/// (reporting again replaces its earlier figure rather than adding twice).
pub fn finish_agent(
    p: &Project,
    id: Option<&str>,
    agent_id: &str,
    tokens: u64,
    output_file: Option<&str>,
    outcome: AgentOutcome,
) -> Result<WorkSession> {
    Ok(update(p, id, |ws| {
        let session_id = ws.session_id.clone();
        let agent = ws
            .agents_spawned
            .iter_mut()
            .find(|a| a.id == agent_id)
            .ok_or_else(|| {
                Error::not_found(
                    "agent",
                    agent_id,
                    &format!("`logbook status {session_id}` lists the agents spawned"),
                )
            })?;
        let before = agent.tokens_used;
        agent.tokens_used = tokens;
        agent.completed = Some(clock::now_string());
        agent.status = Some(match outcome {
            AgentOutcome::Completed => "completed".into(),
            AgentOutcome::Failed => "failed".into(),
        });
        if let Some(out) = output_file {
            agent.output_file = Some(out.to_string());
        }
        ws.tokens.saved = ws
            .tokens
            .saved
            .saturating_sub(before)
            .saturating_add(tokens);
        Ok(())
    })?
    .0)
}

fn non_empty(field: &'static str, value: &str) -> Result<String> {
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
    fn ids() {
        assert!(validate_id("SES202501-ACME-AUDIT").is_ok());
        assert!(validate_id("SES202501-ACME-AUDIT-2").is_ok());
        assert!(validate_id("../etc").is_err());
        assert!(validate_id("ses202501-acme-audit").is_err());
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
