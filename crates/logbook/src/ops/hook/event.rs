//! `logbook hook`: what Claude Code's and Codex's hooks call, one event at
//! a time, so that an agent records itself without anyone remembering to.
//!
//! - SessionStart links the agent session to the active work session and,
//!   after a compaction or on a resume, answers with the resume context.
//! - PreCompact imports the log as it stands before the agent summarizes
//!   it, and records the compaction on the work session.
//! - Stop, SubagentStop, SessionEnd and PostCompact import what the log
//!   gained since the last import (a subagent's log too), incrementally;
//!   a Stop's import is always the worker's, the hook only queues it.
//! - SessionStart and SessionEnd mark the session live and over
//!   ([`crate::ops::transcript::live`]).
//!
//! A hook must never be in the agent's way: [`receive`] settles the event
//! and the project, the job is queued durably ([`logbook_store::hook`]) before
//! anything else is written, [`perform`] does it (every step can be done
//! twice without harm), and whatever does not finish in the hook's time is
//! done by a detached worker ([`drain`]) or the next hook. Failures go to a
//! log that `doctor` reports; the agent sees nothing or one valid answer.

use crate::Logbook;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use crate::error::{Error, Face, Result};
use crate::model::agent_log::Format;
use crate::model::hook::event::{EventName, HookEvent, session_start_answer};
use crate::model::ids::TranscriptId;
use crate::model::repo::Repository;
use crate::model::work_session::{AgentEvent, WorkSession};
use crate::ops::transcript::{self as import, ImportFormat, live};
use crate::ops::{resume, work_session};
use logbook_store::hook::{self as queue, Failure, Job, Queued};

/// How many bytes of logs a hook imports itself before it leaves the rest
/// to a worker: what a 2-second answer affords with room to spare.
pub const INLINE_BYTES: u64 = 8 << 20;

/// How old a queued job is before a hook takes it for abandoned (its own
/// hook or worker died) and starts a worker for it.
pub const STALE_JOB: Duration = Duration::from_secs(5);

/// How many times a worker tries a job before leaving it to `doctor --fix`.
pub const MAX_ATTEMPTS: u64 = 3;

/// An event received and the project it belongs to.
#[derive(Debug)]
pub struct Received {
    /// Where its records go (the face adds its catalog driver, as to every
    /// context it opens).
    pub project: Logbook,
    /// The event and what was settled about it.
    pub job: Job,
}

/// Parses the event a hook read on stdin and settles where it goes: `root`
/// when one was named (`--root`, `LOGBOOK_ROOT`), else the nearest project
/// above the event's `cwd`, else the per-user home.
pub fn receive(text: &str, process_cwd: &Path, root: Option<&Path>) -> Result<Received> {
    let event = HookEvent::parse(text)?;
    let cwd = event.folder(process_cwd);
    let project = match root {
        Some(root) => Logbook::discover(process_cwd, Some(root))?,
        None => Logbook::for_agent(&cwd)?,
    };
    let agent = event.agent_hint().or_else(|| {
        event
            .logs()
            .first()
            .and_then(|log| logbook_store::agent_log::detect(log).ok().flatten())
    });
    let received_at = project.clock.now_string();
    Ok(Received {
        project,
        job: Job {
            received_at,
            agent,
            cwd,
            event,
            attempts: 0,
        },
    })
}

/// What the agent reads back: after a compaction or on a resume, the
/// active work session's resume context (at most `hook_context_bytes`);
/// otherwise nothing.
pub fn answer(p: &Logbook, job: &Job) -> Result<Option<Value>> {
    let e = &job.event;
    let resuming = matches!(e.source.as_deref(), Some("compact" | "resume"));
    if e.name() != EventName::SessionStart || !resuming {
        // The work session's budget: a warning, or a tool call denied.
        return crate::ops::budget_check::hook_answer(p, job);
    }
    if work_session::active(p)?.is_none() {
        return Ok(None);
    }
    // The agent reads this, and acts through tools, not a shell: a step in
    // it is worded as the MCP face words it.
    let text = resume::context_within(p, None, p.config.hook_context_bytes, Face::Mcp)?;
    Ok(Some(session_start_answer(&text)))
}

/// How many bytes of logs [`perform`] would read now: what decides whether
/// a hook does the job itself or leaves it to a worker.
fn pending(job: &Job, p: &Logbook) -> u64 {
    logs_to_import(job)
        .iter()
        .map(|log| log_pending(p, log, job.agent))
        .sum()
}

/// The logs an event imports: none for a SessionStart with nothing written
/// yet, the session's (and a subagent's) log otherwise; a SessionEnd also
/// the session's subagent folder, so no subagent is left behind.
fn logs_to_import(job: &Job) -> Vec<PathBuf> {
    let e = &job.event;
    if matches!(e.name(), EventName::Other(_)) {
        return vec![];
    }
    let mut logs: Vec<PathBuf> = e.logs().into_iter().filter(|l| is_log(l)).collect();
    if matches!(e.name(), EventName::SessionEnd | EventName::SubagentStop)
        && e.agent_transcript_path.is_none()
        && let Some(main) = e.transcript_path.as_deref()
        && let Some(dir) = logbook_store::agent_log::subagents_of(Path::new(main))
    {
        logs.push(dir);
    }
    logs
}

/// The bytes an import of `log` reads now: what it gained since the last
/// import, or all of it for a log not imported yet (or a folder's logs).
fn log_pending(p: &Logbook, log: &Path, agent: Option<Format>) -> u64 {
    let whole = || logbook_store::agent_log::log_len(log).unwrap_or(0);
    match agent {
        Some(f) if logbook_store::fs::is_file(log) => {
            import::pending_bytes(p, log, f).unwrap_or_else(|_| whole())
        }
        _ => whole(),
    }
}

fn is_log(path: &Path) -> bool {
    logbook_store::agent_log::log_len(path).is_ok_and(|n| n > 0)
}

/// What [`perform`] did.
#[derive(Debug, Default, Serialize)]
pub struct Performed {
    /// The work session the agent session is linked to, if one is active.
    pub work_session: Option<String>,
    /// Transcripts written (imported or updated).
    pub imported: Vec<String>,
    /// Files the import skipped, with the reason.
    pub skipped: Vec<String>,
}

/// Does an event's work: links the agent session to the active work
/// session (recording a compaction), then imports what its logs gained.
/// Doing it again does nothing more.
pub fn perform(p: &Logbook, job: &Job) -> Result<Performed> {
    let e = &job.event;
    let name = e.name();
    let mut done = Performed::default();
    if matches!(name, EventName::Other(_)) {
        return Ok(done);
    }
    if let Some(session_id) = e.session_id.as_deref().filter(|s| !s.is_empty()) {
        done.work_session = link_session(p, job, &name, session_id)?;
    }
    import_logs(p, job, &mut done)?;
    Ok(done)
}

/// Links the agent session to the active work session (a Stop only when
/// it is not linked yet) and marks it live; returns the work session.
fn link_session(
    p: &Logbook,
    job: &Job,
    name: &EventName,
    session_id: &str,
) -> Result<Option<String>> {
    let e = &job.event;
    let compaction =
        (*name == EventName::PreCompact).then(|| e.trigger.as_deref().unwrap_or_default());
    let event = AgentEvent {
        agent: job.agent.map(Format::as_str),
        session_id,
        at: &job.received_at,
        source: e.source.as_deref(),
        transcript: e.transcript_path.as_deref(),
        cwd: job.cwd.to_str(),
        compaction,
    };
    let mut work_session = None;
    if !every_turn(name) || !linked(p, session_id, event.agent)? {
        // The per-user home holds many repositories' sessions.
        let repo = if p.is_user_home() {
            Some(logbook_store::repo::identify(&job.cwd).unwrap_or_default())
        } else {
            None
        };
        work_session = record_agent_event(p, &event, repo.as_ref())?.map(|ws| ws.session_id);
    }
    // What makes the session live in the viewer; a session id that is
    // no UUID names no transcript, so there is nothing to mark.
    if TranscriptId::parse(session_id).is_ok() {
        let at = &job.received_at;
        match name {
            EventName::SessionStart => live::began(p, session_id, at)?,
            EventName::SessionEnd => live::ended(p, session_id, at)?,
            _ => live::seen(p, session_id, at)?,
        }
    }
    Ok(work_session)
}

/// Imports what the event's logs gained into `done`; the last log that
/// could not be imported is the event's failure.
fn import_logs(p: &Logbook, job: &Job, done: &mut Performed) -> Result<()> {
    let format = match job.agent {
        Some(Format::ClaudeCode) => ImportFormat::ClaudeCode,
        Some(Format::Codex) => ImportFormat::Codex,
        None => ImportFormat::Auto,
    };
    // The log's own `cwd` may name no repository (a folder since removed);
    // the event's says where the agent runs.
    let ran_in = logbook_store::repo::identify(&job.cwd).filter(Repository::in_git);
    let mut failed = None;
    for log in logs_to_import(job) {
        // A subagent folder may hold the other agent's files: decided per file.
        let format = if logbook_store::fs::is_folder(&log) {
            ImportFormat::Auto
        } else {
            format
        };
        match import::import_path_in(p, &log, format, None, ran_in.as_ref()) {
            Ok(report) => {
                let written = report.imported.iter().chain(&report.updated);
                done.imported.extend(written.map(|i| i.id.clone()));
                done.skipped.extend(
                    report
                        .skipped
                        .iter()
                        .map(|s| format!("{}: {}", s.source.display(), s.reason)),
                );
                // A log that could not be read, or whose transcript could
                // not be written, is this event's failure: no one reads a
                // hook's report, so it goes to the failure log and `doctor`.
                if let Some(s) = report.skipped.iter().find(|s| s.failed) {
                    failed = Some(Error::NotImported {
                        path: s.source.clone(),
                        reason: s.reason.clone(),
                    });
                }
            }
            Err(e) => failed = Some(e),
        }
    }
    match failed {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Records an agent's hook event on the active work session (see
/// [`WorkSession::record_agent_event`]); `Ok(None)` when no session is
/// active, or (with `of`) when the active one belongs to another
/// repository: the per-user home holds the sessions of many, and an agent
/// is linked only to its own repository's.
fn record_agent_event(
    p: &Logbook,
    e: &AgentEvent<'_>,
    of: Option<&Repository>,
) -> Result<Option<WorkSession>> {
    if work_session::active(p)?.is_none() {
        return Ok(None);
    }
    if let Some(repo) = of {
        let ws = work_session::get(p, None)?;
        if !Repository::in_map(&ws.extra).is_some_and(|r| r.matches(repo)) {
            return Ok(None);
        }
    }
    match work_session::update(p, None, |ws| {
        ws.record_agent_event(e);
        Ok(())
    }) {
        Ok((ws, ())) => Ok(Some(ws)),
        // Closed or switched away between the look and the lock.
        Err(Error::NoActiveSession | Error::SessionClosed { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Whether the active work session already has this agent session (and
/// knows which agent it is: a Codex SessionStart without a log does not
/// say), so a Stop, which fires every turn, need not write it again.
fn linked(p: &Logbook, session_id: &str, agent: Option<&str>) -> Result<bool> {
    if work_session::active(p)?.is_none() {
        return Ok(true);
    }
    Ok(match work_session::get(p, None) {
        Ok(ws) => ws
            .agent_sessions
            .iter()
            .any(|a| a.session_id == session_id && agent.is_none_or(|g| a.agent == g)),
        Err(Error::NoActiveSession) => true,
        Err(e) => return Err(e),
    })
}

/// What a hook leaves to do once it answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Nothing: its job is done.
    Done,
    /// Start a detached worker ([`drain`]): the job was too large to do in
    /// the hook's time, or older jobs wait with no worker.
    Worker,
}

/// Handles one received event: queues it, gives `answered` the answer as
/// soon as it is known (the agent is waiting for it), then does the job
/// unless it is a Stop's (see [`every_turn`]) or too large for a hook's
/// time. An error after the job was queued leaves it queued for a worker.
pub fn handle(r: &Received, answered: &mut dyn FnMut(Option<Value>)) -> Result<Next> {
    let (p, job) = (&r.project, &r.job);
    // Queued before anything is written, so work cut short is found again.
    let queued = queue::enqueue(p, job);
    let reply = answer(p, job);
    answered(reply.as_ref().ok().cloned().flatten());
    let path = queued?;
    reply?;
    // A Stop fires after every turn and the agent waits for it: once its
    // job is durably queued it is the worker's, so the hook reads neither
    // the log, the checkpoint nor the transcript.
    if every_turn(&job.event.name()) || pending(job, p) > INLINE_BYTES {
        return Ok(Next::Worker);
    }
    // A worker that found the job first does it; this hook need not wait.
    if let Some(_job) = p.locks.try_exclusive_once(&queue::job_lock_name(&path))? {
        perform(p, job)?;
        queue::remove_job(&path)?;
    }
    Ok(if needs_worker(p)? {
        Next::Worker
    } else {
        Next::Done
    })
}

/// Whether `name` is an event an agent sends after every turn (Stop,
/// SubagentStop): its work is always left to the detached worker.
pub fn every_turn(name: &EventName) -> bool {
    matches!(name, EventName::Stop | EventName::SubagentStop)
}

/// Records a failure in the hook failure log, for `doctor`.
pub fn log_failure(
    p: &Logbook,
    event: &str,
    session_id: Option<&str>,
    error: &Error,
) -> Result<()> {
    queue::log_failure(
        p,
        &Failure {
            at: p.clock.now_string(),
            event: event.to_string(),
            session_id: session_id.map(str::to_string),
            error: error.to_string(),
        },
    )
}

/// What [`drain`] did.
#[derive(Debug, Default, Serialize)]
pub struct Drained {
    /// Jobs done and removed.
    pub done: usize,
    /// Jobs that failed this time (left queued, or given up on).
    pub failed: usize,
    /// Whether another worker was draining already (this one did nothing).
    pub busy: bool,
}

/// Does every queued job, oldest first, one worker at a time: what the
/// detached worker runs, and `doctor --fix` with `retry_all` (jobs that
/// failed [`MAX_ATTEMPTS`] times are tried again only then). A job a hook
/// is doing right now is waited for, then found done.
pub fn drain(p: &Logbook, retry_all: bool) -> Result<Drained> {
    let mut out = Drained::default();
    loop {
        let Some(_worker) = p.locks.try_exclusive(queue::WORKER_LOCK)? else {
            out.busy = out.done == 0 && out.failed == 0;
            return Ok(out);
        };
        let mut tried = vec![];
        loop {
            let next = queue::queued(p)?
                .into_iter()
                .find(|q| !tried.contains(&q.path) && (retry_all || attempts(q) < MAX_ATTEMPTS));
            let Some(q) = next else { break };
            tried.push(q.path.clone());
            match run_queued(p, &q) {
                Ok(true) => out.done += 1,
                Ok(false) => {}
                Err(_) => out.failed += 1,
            }
        }
        drop(_worker);
        // A job queued between the last look and the release would wait
        // for the next hook: look once more.
        let left = queue::queued(p)?
            .into_iter()
            .any(|q| !tried.contains(&q.path) && (retry_all || attempts(&q) < MAX_ATTEMPTS));
        if !left {
            return Ok(out);
        }
    }
}

fn attempts(q: &Queued) -> u64 {
    q.job.as_ref().map_or(0, |j| j.attempts)
}

/// Does one queued job under its lock; `Ok(false)` when someone else did
/// it meanwhile.
fn run_queued(p: &Logbook, q: &Queued) -> Result<bool> {
    let _job = p
        .locks
        .exclusive_once_within(&queue::job_lock_name(&q.path), Duration::from_secs(30))?;
    if !queue::job_exists(&q.path) {
        return Ok(false);
    }
    let job = match &q.job {
        Ok(job) => job.clone(),
        Err(reason) => {
            let e = Error::Corrupt {
                path: q.path.clone(),
                what: "hook job",
                reason: reason.clone(),
            };
            let _ = log_failure(p, "worker", None, &e);
            queue::remove_job(&q.path)?;
            return Err(e);
        }
    };
    match perform(p, &job) {
        Ok(_) => {
            queue::remove_job(&q.path)?;
            Ok(true)
        }
        Err(e) => {
            let _ = log_failure(
                p,
                job.event.hook_event_name.as_str(),
                job.event.session_id.as_deref(),
                &e,
            );
            let mut again = job;
            again.attempts += 1;
            let _ = queue::rewrite_job(&q.path, &again);
            Err(e)
        }
    }
}

/// Whether a queued job is no one's: its hook and any worker that took it
/// are gone (its lock is free). A hook holds it from just after queueing.
fn abandoned(p: &Logbook, q: &Queued) -> Result<bool> {
    Ok(p.locks
        .try_exclusive_once(&queue::job_lock_name(&q.path))?
        .is_some())
}

/// Whether a worker should be started: a job no one is doing has waited
/// longer than [`STALE_JOB`], and no worker is draining.
pub fn needs_worker(p: &Logbook) -> Result<bool> {
    let mut stale = false;
    for q in queue::queued(p)? {
        if q.age >= STALE_JOB && attempts(&q) < MAX_ATTEMPTS && abandoned(p, &q)? {
            stale = true;
            break;
        }
    }
    Ok(stale && p.locks.try_exclusive(queue::WORKER_LOCK)?.is_some())
}

/// What the hooks left for `doctor`: jobs no hook or worker is doing (or
/// given up on) and failures not yet cleared.
#[derive(Debug, Default, Serialize)]
pub struct Leftovers {
    /// Queued jobs no hook or worker is doing: (file, event, why).
    pub jobs: Vec<(PathBuf, String, String)>,
    /// Logged failures, oldest first.
    pub failures: Vec<Failure>,
}

/// The leftovers `doctor` reports.
pub fn leftovers(p: &Logbook) -> Result<Leftovers> {
    let mut out = Leftovers {
        failures: queue::failures(p)?,
        ..Leftovers::default()
    };
    let queued = queue::queued(p)?;
    // Asked only when there is a queue: a lock file is a write.
    let working = !queued.is_empty() && p.locks.try_exclusive(queue::WORKER_LOCK)?.is_none();
    for q in queued {
        let tries = attempts(&q);
        let why = match &q.job {
            Err(reason) => format!("unreadable: {reason}"),
            Ok(_) if tries >= MAX_ATTEMPTS => format!("failed {tries} times"),
            Ok(_) if !working && abandoned(p, &q)? => {
                format!("waiting {} s with no hook or worker at it", q.age.as_secs())
            }
            Ok(_) => continue,
        };
        let event = q
            .job
            .as_ref()
            .map(|j| j.event.hook_event_name.clone())
            .unwrap_or_default();
        out.jobs.push((q.path, event, why));
    }
    Ok(out)
}

/// `doctor --fix`: does every queued job again, and clears the failure log
/// once what it reported is dealt with.
pub fn repair(p: &Logbook) -> Result<Drained> {
    let drained = drain(p, true)?;
    if drained.failed == 0 {
        queue::clear_failures(p)?;
    }
    Ok(drained)
}
