//! Work sessions (seed 002): start, resume, switch, pause, close; tokens,
//! milestones, artifacts, notes and spawned agents; listings.
//!
//! Locks are taken in the order DESIGN §8 fixes: the active-session pointer,
//! then one work session, never two sessions at once. Every write of a
//! session file goes through the index ([`write_through`]).

use crate::Logbook;
use std::path::{Path, PathBuf};

use serde_json::Map;

use crate::error::{Error, Next, Result, Step};
use crate::model::ids::WorkSessionId;
use crate::model::limits::bounded;
use crate::model::repo::Repository;
use crate::model::work_session::{
    AgentOutcome, Artifact, Listing, Milestone, SessionStatus, SpawnedAgent, Usage, WorkSession,
    add_counts, check_count, compose_summary, nearest, non_empty, same_milestone, workflow_blocked,
};
use crate::model::workflow::SessionState;
use crate::ops::write_through;
use logbook_index::{Index, Kind, Pending, Record};
use logbook_store::work_session::{
    POINTER_LOCK, active_id, archived_path, live_path, move_to_archive, read_file, set_pointer,
};

mod json;
mod start;
pub use json::{listing_json, spawned_json, switched_json};
pub use start::{StartOptions, start};

/// The repository the project folder is in, recorded on the runs and work
/// sessions it starts; none for the per-user home.
pub(crate) fn project_repository(p: &Logbook) -> Option<Repository> {
    (!p.is_user_home())
        .then(|| logbook_store::repo::identify_recorded(p.root()))
        .flatten()
}

/// The repository a session started from `cwd` belongs to, when the
/// project does not say: in the per-user home, `cwd`'s (the home is no
/// repository, and holds many's sessions); elsewhere `None`, the project
/// folder's.
pub fn repository_from(p: &Logbook, cwd: &Path) -> Option<Repository> {
    p.is_user_home()
        .then(|| logbook_store::repo::identify_recorded(cwd))
        .flatten()
}

/// Reads a session, live or archived, with what its workflow state says
/// about it (its indicator turns red on a blocked or failed invocation).
fn load(p: &Logbook, id: &WorkSessionId) -> Result<(WorkSession, PathBuf)> {
    let (mut ws, path) = logbook_store::work_session::load(p, id)?;
    ws.workflow_blocked = workflow_state(p, id).is_some_and(|s| workflow_blocked(&s));
    Ok((ws, path))
}

/// A session's workflow state, live or archived; `None` when there is none
/// or it cannot be read (a reader's view: `workflow show` and `doctor` name
/// an unreadable one).
fn workflow_state(p: &Logbook, id: &WorkSessionId) -> Option<SessionState> {
    [&p.config.sessions_dir, &p.config.session_archive_dir]
        .into_iter()
        .find_map(|dir| {
            logbook_store::workflow::read_state(&id.state_file(dir))
                .ok()
                .flatten()
        })
        .map(|(state, _)| state)
}

/// The seed's context summary of a session as it stands (key decisions,
/// outcomes, next steps), from the session and its workflow state: what
/// `switch` shows to restore a session's context.
pub fn context(p: &Logbook, ws: &WorkSession) -> Result<String> {
    let id = WorkSessionId::parse(&ws.session_id)?;
    Ok(compose_summary(ws, workflow_state(p, &id).as_ref()))
}

/// The session `id` names, or the active one.
pub fn resolve(p: &Logbook, id: Option<&str>) -> Result<WorkSessionId> {
    match id {
        Some(id) => WorkSessionId::parse(id),
        None => WorkSessionId::parse(&active_id(p)?.ok_or(Error::NoActiveSession)?),
    }
}

/// Reads a session (the active one without `id`).
pub fn get(p: &Logbook, id: Option<&str>) -> Result<WorkSession> {
    let id = resolve(p, id)?;
    Ok(load(p, &id)?.0)
}

/// Reads a session (the active one without `id`) and where its file is.
pub fn locate(p: &Logbook, id: Option<&str>) -> Result<(WorkSession, PathBuf)> {
    load(p, &resolve(p, id)?)
}

/// The active session's id, if any (no lock: a reader).
pub fn active(p: &Logbook) -> Result<Option<String>> {
    active_id(p)
}

/// Applies `change` to a live session under its lock and writes it back;
/// `last_updated` is set and `peak` kept at or above `current`. Closed
/// sessions are refused.
pub fn update<T>(
    p: &Logbook,
    id: Option<&str>,
    change: impl FnOnce(&mut WorkSession) -> Result<T>,
) -> Result<(WorkSession, T)> {
    // A shared hold on the pointer keeps `switch` and `close` from moving the
    // active session while this update resolves and writes it.
    let _pointer = p.locks.shared(POINTER_LOCK)?;
    let id = resolve(p, id)?;
    let _session = p.locks.exclusive(&id.lock_name())?;
    update_locked(p, &id, change)
}

fn update_locked<T>(
    p: &Logbook,
    id: &WorkSessionId,
    change: impl FnOnce(&mut WorkSession) -> Result<T>,
) -> Result<(WorkSession, T)> {
    let (mut ws, path) = load(p, id)?;
    if ws.status == SessionStatus::Closed || path != live_path(p, id) {
        return Err(Error::SessionClosed {
            id: id.to_string(),
            workflow: false,
        });
    }
    let out = change(&mut ws)?;
    ws.last_updated = p.clock.now_string();
    ws.tokens.peak = ws.tokens.peak.max(ws.tokens.current);
    write(p, id, &path, &ws)?;
    Ok((ws, out))
}

/// Writes a session file through the index (the caller holds its lock).
fn write(p: &Logbook, id: &WorkSessionId, path: &Path, ws: &WorkSession) -> Result<()> {
    write_through(p, vec![pending(id, path)], || {
        logbook_store::work_session::write_file(path, ws)?;
        Ok(((), vec![Some(Record::work_session(p, path, ws))]))
    })
}

fn pending(id: &WorkSessionId, path: &Path) -> Pending {
    Pending {
        kind: Kind::WorkSession,
        path: path.to_path_buf(),
        lock: id.lock_name(),
    }
}

/// Moves a closed session and its workflow state to the archive, through the
/// index: both files' old paths are forgotten and their new ones recorded
/// (the caller holds the pointer and session locks).
fn archive(p: &Logbook, id: &WorkSessionId, ws: &WorkSession) -> Result<()> {
    let live = live_path(p, id);
    let archived = archived_path(p, id);
    let state_live = id.state_file(&p.config.sessions_dir);
    let state_archived = id.state_file(&p.config.session_archive_dir);
    let state = logbook_store::workflow::read_state(&state_live)?;
    let mut touched = vec![pending(id, &live), pending(id, &archived)];
    if state.is_some() {
        for path in [&state_live, &state_archived] {
            touched.push(Pending {
                kind: Kind::WorkflowState,
                path: path.clone(),
                lock: id.state_lock_name(),
            });
        }
    }
    write_through(p, touched, || {
        move_to_archive(p, id)?;
        let mut records = vec![None, Some(Record::work_session(p, &archived, ws))];
        if let Some((state, _)) = &state {
            records.push(None);
            records.push(Some(Record::workflow_state(
                &state_archived,
                id.as_str(),
                state,
            )));
        }
        Ok(((), records))
    })
}

/// Resumes a session: without `id` the active one; with `id` a paused one
/// becomes active (the previously active one is paused).
pub fn resume(p: &Logbook, id: Option<&str>) -> Result<WorkSession> {
    match id {
        Some(id) => switch(p, id),
        None if active_id(p)?.is_some() => get(p, None),
        // `pause` then `resume` is the seed's own pair: with nothing active,
        // the one paused session is the one meant; with several, guessing
        // would resume the wrong client's work.
        None => match paused(p)?.as_slice() {
            [] => Err(Error::NoActiveSession),
            [only] => switch(p, only),
            several => Err(Error::SeveralPaused {
                ids: several.to_vec(),
            }),
        },
    }
}

/// The ids of the paused sessions, most recently updated first: what a
/// bare `resume` chooses from.
pub fn paused(p: &Logbook) -> Result<Vec<String>> {
    Ok(list(p)?
        .sessions
        .into_iter()
        .filter(|ws| ws.status == SessionStatus::Paused)
        .map(|ws| ws.session_id)
        .collect())
}

/// Saves and pauses the active session, then activates `id`.
pub fn switch(p: &Logbook, id: &str) -> Result<WorkSession> {
    let id = WorkSessionId::parse(id)?;
    let _pointer = p.locks.exclusive(POINTER_LOCK)?;
    let (target, _) = load(p, &id)?;
    if target.status == SessionStatus::Closed {
        return Err(Error::SessionClosed {
            id: id.to_string(),
            workflow: false,
        });
    }
    if let Some(current) = active_id(p)?
        && current != id.as_str()
        && let Ok(current) = WorkSessionId::parse(&current)
        && logbook_store::work_session::is_live(p, &current)
    {
        let _lock = p.locks.exclusive(&current.lock_name())?;
        update_locked(p, &current, |ws| {
            ws.status = SessionStatus::Paused;
            Ok(())
        })?;
    }
    let (ws, ()) = {
        let _lock = p.locks.exclusive(&id.lock_name())?;
        update_locked(p, &id, |ws| {
            ws.status = SessionStatus::Active;
            Ok(())
        })?
    };
    set_pointer(p, Some(&id))?;
    Ok(ws)
}

/// Pauses a session (the active one without `id`) and clears the pointer if
/// it was active.
pub fn pause(p: &Logbook, id: Option<&str>) -> Result<WorkSession> {
    let _pointer = p.locks.exclusive(POINTER_LOCK)?;
    let id = resolve(p, id)?;
    let (ws, ()) = {
        let _lock = p.locks.exclusive(&id.lock_name())?;
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
pub fn close(p: &Logbook, id: Option<&str>, summary: Option<String>) -> Result<WorkSession> {
    bounded("summary", summary.as_deref().unwrap_or_default())?;
    let _pointer = p.locks.exclusive(POINTER_LOCK)?;
    let id = resolve(p, id)?;
    let ws = close_locked(p, &id, summary)?;
    if active_id(p)?.as_deref() == Some(id.as_str()) {
        set_pointer(p, None)?;
    }
    Ok(ws)
}

fn close_locked(p: &Logbook, id: &WorkSessionId, summary: Option<String>) -> Result<WorkSession> {
    let _lock = p.locks.exclusive(&id.lock_name())?;
    // The state's writers hold the pointer lock shared and the caller holds
    // it exclusively, so the state read here is the one that gets archived.
    let state = logbook_store::workflow::read_state(&id.state_file(&p.config.sessions_dir))?;
    let (before, _) = load(p, id)?;
    let (ws, ()) = update_locked(p, id, |ws| {
        ws.context_summary = match summary {
            Some(s) if !s.trim().is_empty() => s,
            _ => compose_summary(ws, state.as_ref().map(|(s, _)| s)),
        };
        ws.status = SessionStatus::Closed;
        Ok(())
    })?;
    // The file is already marked closed, so a crash before the move leaves a
    // closed session in the live folder, which listings show as archived and
    // `doctor --fix` moves with `finish_archiving`. A move that fails (the
    // archive folder unwritable) is undone while nothing has moved yet, so
    // the session stays active rather than closed in the wrong place.
    if let Err(e) = archive(p, id, &ws) {
        if logbook_store::work_session::is_live(p, id)
            && !logbook_store::work_session::is_archived(p, id)
        {
            // Reporting the move's failure matters more than the undo's.
            let _ = write(p, id, &live_path(p, id), &before);
        }
        return Err(e);
    }
    Ok(ws)
}

/// Completes a close that a crash interrupted: a session marked closed but
/// still in the live folder is moved, with its workflow state, to the
/// archive. Returns whether anything moved.
pub fn finish_archiving(p: &Logbook, id: &WorkSessionId) -> Result<bool> {
    let _pointer = p.locks.exclusive(POINTER_LOCK)?;
    let _lock = p.locks.exclusive(&id.lock_name())?;
    let live = live_path(p, id);
    if !logbook_store::work_session::is_live(p, id) {
        return Ok(false);
    }
    let ws = read_file(p, &live)?;
    if ws.status != SessionStatus::Closed {
        return Ok(false);
    }
    if logbook_store::work_session::is_archived(p, id) {
        return Err(Error::SessionInTwoPlaces {
            live,
            archived: archived_path(p, id),
        });
    }
    archive(p, id, &ws)?;
    if active_id(p).ok().flatten().as_deref() == Some(id.as_str()) {
        set_pointer(p, None)?;
    }
    Ok(true)
}

/// Clears `active-session.yaml` when it names a session that is missing,
/// closed or unreadable, so commands stop resolving to it. Returns the stale
/// id it cleared.
pub fn clear_stale_pointer(p: &Logbook) -> Result<Option<String>> {
    let _pointer = p.locks.exclusive(POINTER_LOCK)?;
    let id = match active_id(p) {
        Ok(Some(id)) => id,
        Ok(None) => return Ok(None),
        Err(_) => {
            set_pointer(p, None)?;
            return Ok(Some(String::new()));
        }
    };
    let usable = WorkSessionId::parse(&id).is_ok_and(|typed| {
        read_file(p, &live_path(p, &typed)).is_ok_and(|ws| ws.status != SessionStatus::Closed)
    });
    if usable {
        return Ok(None);
    }
    set_pointer(p, None)?;
    Ok(Some(id))
}

/// Every session, live and archived, from the index (synced first by a stat
/// of each session file); unreadable files are reported in
/// [`Listing::corrupt`], never fatal.
pub fn list(p: &Logbook) -> Result<Listing> {
    let mut listing = Index::open_synced_kind(p, Kind::WorkSession)?
        .read()
        .work_sessions()?;
    listing.active = active_id(p).unwrap_or(None);
    for ws in &mut listing.sessions {
        if let Ok(id) = WorkSessionId::parse(&ws.session_id) {
            ws.workflow_blocked = workflow_state(p, &id).is_some_and(|s| workflow_blocked(&s));
        }
    }
    Ok(listing)
}

/// Records main-session token usage; `peak` follows.
pub fn record_usage(p: &Logbook, id: Option<&str>, usage: Usage) -> Result<WorkSession> {
    Ok(update(p, id, |ws| {
        ws.tokens.current = match usage {
            Usage::Current(n) => check_count("usage --current", n)?,
            Usage::Add(n) => add_counts("usage --add", ws.tokens.current, n)?,
        };
        Ok(())
    })?
    .0)
}

/// Sets main-session usage from a transcript's measured tokens (`usage
/// --from-transcript`): `current` is the context size at its last call,
/// `peak` at least the largest it reached.
pub fn record_measured_usage(
    p: &Logbook,
    id: Option<&str>,
    transcript: &str,
) -> Result<(WorkSession, crate::ops::transcript::Measured)> {
    let m = crate::ops::transcript::measured(p, transcript)?;
    let (ws, ()) = update(p, id, |ws| {
        crate::model::work_session::cost::link_transcript(ws, &m.id);
        ws.tokens.current = check_count("usage --from-transcript", m.latest_total_tokens)?;
        ws.tokens.peak = ws
            .tokens
            .peak
            .max(check_count("usage --from-transcript", m.peak_total_tokens)?);
        Ok(())
    })?;
    Ok((ws, m))
}

/// Appends a milestone that is not yet done; a name the session already has
/// (ignoring case and surrounding spaces) is refused.
pub fn add_milestone(p: &Logbook, id: Option<&str>, name: &str) -> Result<WorkSession> {
    let name = non_empty("milestone name", name)?;
    Ok(update(p, id, |ws| {
        if let Some(m) = ws
            .milestones
            .iter()
            .find(|m| same_milestone(&m.name, &name))
        {
            return Err(Error::MilestoneExists {
                session: ws.session_id.clone(),
                name: m.name.clone(),
                done: m.completed.is_some(),
            });
        }
        ws.milestones.push(Milestone {
            name,
            completed: None,
            extra: Map::new(),
        });
        Ok(())
    })?
    .0)
}

/// Marks the first open milestone called `name` done. A name with no open
/// milestone is refused, naming the closest open one: a typo must not
/// record a new milestone as done.
pub fn complete_milestone(p: &Logbook, id: Option<&str>, name: &str) -> Result<WorkSession> {
    let name = non_empty("milestone name", name)?;
    Ok(update(p, id, |ws| {
        if let Some(m) = ws
            .milestones
            .iter_mut()
            .find(|m| m.name == name && m.completed.is_none())
        {
            m.completed = Some(p.clock.now_string());
            return Ok(());
        }
        let open = ws
            .milestones
            .iter()
            .filter(|m| m.completed.is_none())
            .map(|m| m.name.as_str());
        Err(Error::MilestoneNotFound {
            session: ws.session_id.clone(),
            already_done: ws.milestones.iter().any(|m| m.name == name),
            near: nearest(&name, open).map(str::to_string),
            name,
        })
    })?
    .0)
}

/// Records an artifact; recording the same path again marks it modified.
pub fn add_artifact(
    p: &Logbook,
    id: Option<&str>,
    path: &str,
    agent: Option<&str>,
) -> Result<WorkSession> {
    let path = non_empty("artifact path", path)?;
    bounded("agent", agent.unwrap_or_default())?;
    Ok(update(p, id, |ws| {
        let now = p.clock.now_string();
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
pub fn add_note(p: &Logbook, id: Option<&str>, text: &str) -> Result<WorkSession> {
    let text = non_empty("note", text)?;
    Ok(update(p, id, |ws| {
        ws.notes.push(text);
        Ok(())
    })?
    .0)
}

/// Records a spawned agent and returns its id (`agent-xxxxxxxx` unless given).
pub fn spawn_agent(
    p: &Logbook,
    id: Option<&str>,
    agent_type: &str,
    agent_id: Option<&str>,
    output_file: Option<&str>,
) -> Result<(WorkSession, String)> {
    let agent_type = non_empty("agent type", agent_type)?;
    bounded("output file", output_file.unwrap_or_default())?;
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
            started: Some(p.clock.now_string()),
            completed: None,
            tokens_used: 0,
            output_file: output_file.map(str::to_string),
            status: None,
            extra: Map::new(),
        });
        Ok(agent_id.clone())
    })
}

/// [`finish_agent`] with the tokens measured in the subagent's transcript
/// (`agent done --transcript`): the largest context it reached, which is
/// what its work would have added to the main context.
pub fn finish_agent_measured(
    p: &Logbook,
    id: Option<&str>,
    agent_id: &str,
    transcript: &str,
    output_file: Option<&str>,
    outcome: AgentOutcome,
) -> Result<(WorkSession, crate::ops::transcript::Measured)> {
    let m = crate::ops::transcript::measured(p, transcript)?;
    let ws = finish_agent(p, id, agent_id, m.peak_total_tokens, output_file, outcome)?;
    Ok((ws, m))
}

/// Records that a spawned agent finished: its tokens count towards `saved`
/// (reporting again replaces its earlier figure rather than adding twice).
pub fn finish_agent(
    p: &Logbook,
    id: Option<&str>,
    agent_id: &str,
    tokens: u64,
    output_file: Option<&str>,
    outcome: AgentOutcome,
) -> Result<WorkSession> {
    finish_agent_with(p, id, agent_id, Some(tokens), output_file, outcome)
}

/// Completes the entry of a run that `run start` added to session
/// `session` when the run finishes; `tokens` replaces the entry's figure
/// only when the run's transcript measured one.
pub fn complete_spawned(
    p: &Logbook,
    session: &str,
    run_id: &str,
    tokens: Option<u64>,
    outcome: AgentOutcome,
) -> Result<WorkSession> {
    finish_agent_with(p, Some(session), run_id, tokens, None, outcome)
}

fn finish_agent_with(
    p: &Logbook,
    id: Option<&str>,
    agent_id: &str,
    tokens: Option<u64>,
    output_file: Option<&str>,
    outcome: AgentOutcome,
) -> Result<WorkSession> {
    bounded("output file", output_file.unwrap_or_default())?;
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
                    Next::of(
                        Step::SessionStatus {
                            id: Some(session_id.to_string()),
                        },
                        " lists the agents spawned",
                    ),
                )
            })?;
        let before = agent.tokens_used;
        let tokens = check_count("agent done --tokens", tokens.unwrap_or(before))?;
        agent.tokens_used = tokens;
        agent.completed = Some(p.clock.now_string());
        agent.status = Some(outcome.to_string());
        if let Some(out) = output_file {
            agent.output_file = Some(out.to_string());
        }
        ws.tokens.saved = add_counts(
            "tokens.saved",
            ws.tokens.saved.saturating_sub(before),
            tokens,
        )?;
        Ok(())
    })?
    .0)
}
