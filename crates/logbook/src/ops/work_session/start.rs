//! Starting a work session: its id's parts checked and named, the open
//! session it replaces closed only once the new one is written, and the
//! pointer moved to it.

use crate::Logbook;
use std::path::Path;

use jiff::Timestamp;
use serde_json::Map;

use super::{close_locked, load, pending, project_repository, write};
use crate::clock;
use crate::error::{Error, Result};
use crate::model::ids::WorkSessionId;
use crate::model::repo::{Casing, Repository};
use crate::model::work_session::{
    SessionStatus, Tokens, WorkSession, check_count, id_part, validate_prefix,
};
use crate::ops::write_through;
use logbook_store::work_session::{POINTER_LOCK, active_id, live_path, set_pointer};

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
    /// Dollar budget (`--max-cost`); none when `None`.
    pub max_cost: Option<f64>,
    /// Close the active session first instead of refusing.
    pub close_active: bool,
    /// The repository it belongs to; when `None`, the project folder's
    /// (none for the per-user home, which is no repository: a hook names
    /// the agent's).
    pub repository: Option<Repository>,
}

/// Starts a new session and makes it the active one.
pub fn start(p: &Logbook, opts: StartOptions) -> Result<WorkSession> {
    let named = checked_names(p, &opts)?;
    let _pointer = p.locks.exclusive(POINTER_LOCK)?;
    let to_close = active_to_close(p, opts.close_active)?;
    let now = p.clock.now();
    let id = free_id(p, &named, now)?;
    let mut ws = new_session(&id, named, now);
    if let Some(usd) = opts.max_cost {
        let usd = crate::ops::spend::checked_usd("max_cost", usd)?;
        crate::model::work_session::cost::set_max_cost(&mut ws, usd);
    }
    if let Some(repo) = opts.repository.or_else(|| project_repository(p)) {
        repo.record_in(&mut ws.extra, Casing::Snake);
    }
    // Everything is validated and the new session exists before the active
    // one is closed, so a failure leaves the old one active and the pointer
    // on it. A crash between the two leaves an extra active session that the
    // pointer does not name; nothing is lost.
    {
        let _session = p.locks.exclusive(&id.lock_name())?;
        write(p, &id, &live_path(p, &id), &ws)?;
    }
    if let Some(old) = to_close
        && let Err(e) = close_locked(p, &old, None)
    {
        // The close's error is the one to report; should removing the new
        // file fail too, it stays as an extra session that `list` shows and
        // the pointer does not name.
        let _ = discard_new(p, &id);
        return Err(e);
    }
    set_pointer(p, Some(&id))?;
    Ok(ws)
}

/// The parts of a new session's id, and its budget, checked.
struct Names {
    prefix: String,
    client: String,
    project: String,
    max: u64,
}

/// The new session's prefix, client, project and budget: given, else the
/// config's and the folder's; refused when one cannot be part of an id.
fn checked_names(p: &Logbook, opts: &StartOptions) -> Result<Names> {
    let prefix = opts
        .prefix
        .as_deref()
        .map(|s| s.trim().to_ascii_uppercase())
        .unwrap_or_else(|| p.config.default_prefix.clone());
    validate_prefix(&prefix)?;
    let max = check_count(
        "--max-tokens",
        opts.max_tokens.unwrap_or(p.config.token_budget),
    )?;
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
    Ok(Names {
        prefix,
        client,
        project,
        max,
    })
}

/// The open session a start must close first (`close_active`), else a
/// refusal; `None` when no session is open.
fn active_to_close(p: &Logbook, close_active: bool) -> Result<Option<WorkSessionId>> {
    if let Some(active) = active_id(p)?
        && let Ok(active_id) = WorkSessionId::parse(&active)
        && load(p, &active_id).is_ok_and(|(ws, _)| ws.status != SessionStatus::Closed)
    {
        if !close_active {
            return Err(Error::SessionActive { id: active });
        }
        return Ok(Some(active_id));
    }
    Ok(None)
}

/// The first id not taken of `PREFIXyyyymm-CLIENT-PROJECT`, then `-2`,
/// `-3`… The id is a name people read, chosen once: its month is the
/// local one (DESIGN §8), like every date Logbook shows.
fn free_id(p: &Logbook, named: &Names, now: Timestamp) -> Result<WorkSessionId> {
    let month = now
        .to_zoned(clock::local_zone())
        .strftime("%Y%m")
        .to_string();
    let base = format!("{}{month}-{}-{}", named.prefix, named.client, named.project);
    let mut id = WorkSessionId::parse(&base)?;
    let mut n = 1;
    while logbook_store::work_session::is_taken(p, &id) {
        n += 1;
        id = WorkSessionId::parse(&format!("{base}-{n}"))?;
    }
    Ok(id)
}

/// A new active session, created `now`, with nothing in it yet.
fn new_session(id: &WorkSessionId, named: Names, now: Timestamp) -> WorkSession {
    let stamp = clock::format(now);
    WorkSession {
        session_id: id.to_string(),
        created: stamp.clone(),
        last_updated: stamp,
        status: SessionStatus::Active,
        client: named.client,
        project: named.project,
        prefix: named.prefix,
        tokens: Tokens {
            max: named.max,
            ..Tokens::default()
        },
        agents_spawned: vec![],
        artifacts: vec![],
        milestones: vec![],
        context_summary: String::new(),
        notes: vec![],
        agent_sessions: vec![],
        extra: Map::new(),
        workflow_blocked: false,
    }
}

/// Removes the file of a session `start` created but could not activate.
fn discard_new(p: &Logbook, id: &WorkSessionId) -> Result<()> {
    let _session = p.locks.exclusive(&id.lock_name())?;
    let path = live_path(p, id);
    write_through(p, vec![pending(id, &path)], || {
        logbook_store::work_session::remove_file(p, &path)?;
        Ok(((), vec![None]))
    })
}

/// The project folder's name as an id part: upper case, letters and
/// digits only (`PROJECT` when none is left).
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
