//! The work session pages: the list of live and archived sessions with
//! their budgets, and one session in full.

use std::collections::BTreeSet;
use std::sync::Arc;

use askama::Template;
use axum::extract::{Path, State};
use axum::response::Response;
use logbook::model::work_session::{AgentSession, Artifact, SpawnedAgent, WorkSession};
use logbook::ops::work_session;

use super::{Layout, render};
use crate::AppState;
use crate::api::{blocking, run_id, session_id};
use crate::guard::Refusal;
use crate::view::{self, enc, thousands, when};

struct SessionRow {
    id: String,
    active: bool,
    indicator: String,
    status_class: &'static str,
    tokens: String,
    bar: String,
    agents: usize,
    saved: String,
    updated: String,
}

#[derive(Template)]
#[template(path = "sessions.html")]
struct SessionsPage {
    layout: Layout,
    summary: String,
    rows: Vec<SessionRow>,
}

fn indicator_class(indicator: &str) -> &'static str {
    match indicator {
        "active" => "s-completed",
        "warning" => "s-running",
        "critical" => "s-failed",
        _ => "s-other",
    }
}

/// `GET /sessions`: live and archived work sessions with their budgets.
pub(super) async fn sessions(State(state): State<Arc<AppState>>) -> Result<Response, Refusal> {
    let listing = blocking(&state, |p| Ok(work_session::list(p)?)).await?;
    render(&SessionsPage {
        layout: Layout::new(&state, "Work sessions", "sessions"),
        summary: format!(
            "{} live, {} archived",
            listing.sessions.len(),
            listing.archived.len()
        ),
        rows: listing
            .sessions
            .iter()
            .chain(&listing.archived)
            .map(|s| session_row(s, listing.active.as_deref() == Some(s.session_id.as_str())))
            .collect(),
    })
}

fn session_row(s: &WorkSession, active: bool) -> SessionRow {
    let ind = s.indicator().as_str().to_string();
    SessionRow {
        id: s.session_id.clone(),
        active,
        status_class: indicator_class(&ind),
        bar: view::token_bar(s.percentage(), &ind),
        indicator: ind,
        tokens: format!(
            "{} / {}",
            thousands(s.tokens.current),
            thousands(s.tokens.max)
        ),
        agents: s.agents_spawned.len(),
        saved: thousands(s.tokens.saved),
        updated: when(&s.last_updated),
    }
}

/// An agent session the hooks linked to the work session.
struct AgentSessionRow {
    agent: String,
    id: String,
    href: String,
    source: String,
    last_seen: String,
    /// An agent is writing it now.
    live: bool,
}

struct AgentRow {
    kind: String,
    id: String,
    run_href: String,
    status: String,
    tokens: String,
    started: String,
    output: String,
}

#[derive(Template)]
#[template(path = "session.html")]
struct SessionPage {
    layout: Layout,
    id: String,
    indicator: String,
    status_class: &'static str,
    client: String,
    project: String,
    status: String,
    created: String,
    duration: String,
    bar: String,
    current: String,
    max: String,
    peak: String,
    remaining: String,
    percentage: String,
    agents_count: usize,
    saved: String,
    savings_pct: String,
    total_without: String,
    milestones: Vec<(String, String)>,
    artifacts: Vec<(String, String)>,
    agents: Vec<AgentRow>,
    agent_sessions: Vec<AgentSessionRow>,
    notes: Vec<String>,
    summary_text: String,
}

/// `GET /sessions/{id}`: token bar and thresholds, milestones, artifacts,
/// spawned agents and savings.
pub(super) async fn session_page(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Response, Refusal> {
    let id = session_id(&id)?;
    let (session, live) = read_session(&state, id).await?;
    render(&page(&state, &session, &live))
}

/// The work session, and which of the agent sessions linked to it an agent
/// is writing now.
async fn read_session(
    state: &Arc<AppState>,
    id: String,
) -> Result<(WorkSession, BTreeSet<String>), Refusal> {
    blocking(state, move |p| {
        let s = work_session::get(p, Some(&id))?;
        let ids = s.agent_sessions.iter().map(|a| a.session_id.as_str());
        let live = logbook::ops::transcript::live::live_among(p, ids);
        Ok((s, live))
    })
    .await
}

fn page(state: &AppState, s: &WorkSession, live: &BTreeSet<String>) -> SessionPage {
    let report = s.token_report();
    let ind = s.indicator().as_str().to_string();
    let mut layout = Layout::new(state, s.session_id.clone(), "sessions");
    layout.live = format!("/api/live?view=session&id={}", enc(&s.session_id));
    SessionPage {
        layout,
        id: s.session_id.clone(),
        status_class: indicator_class(&ind),
        bar: view::token_bar(s.percentage(), &ind),
        indicator: ind,
        client: s.client.clone(),
        project: s.project.clone(),
        status: s.status.as_str().to_string(),
        created: when(&s.created),
        duration: s.duration(state.project.clock.now()).unwrap_or_default(),
        current: thousands(report.current),
        max: thousands(report.max),
        peak: thousands(report.peak),
        remaining: thousands(report.remaining),
        percentage: format!("{:.1} %", report.percentage),
        agents_count: s.agents_spawned.len(),
        saved: thousands(report.saved),
        savings_pct: format!("{:.1} %", report.savings_percentage),
        total_without: thousands(report.total_without_isolation),
        milestones: s
            .milestones
            .iter()
            .map(|m| {
                (
                    m.name.clone(),
                    m.completed.as_deref().map(when).unwrap_or_default(),
                )
            })
            .collect(),
        artifacts: s.artifacts.iter().map(artifact_pair).collect(),
        agents: s.agents_spawned.iter().map(agent_row).collect(),
        agent_sessions: s
            .agent_sessions
            .iter()
            .map(|a| agent_session_row(a, live.contains(&a.session_id)))
            .collect(),
        notes: s.notes.clone(),
        summary_text: s.context_summary.trim().to_string(),
    }
}

/// An artifact's path and when (and by which agent) it was last touched.
fn artifact_pair(a: &Artifact) -> (String, String) {
    let mut note = a
        .modified
        .as_deref()
        .or(a.created.as_deref())
        .map(when)
        .unwrap_or_default();
    if let Some(agent) = &a.agent {
        note = format!("{note} · {agent}");
    }
    (a.path.clone(), note)
}

fn agent_row(a: &SpawnedAgent) -> AgentRow {
    AgentRow {
        kind: a.agent_type.clone(),
        run_href: run_id(&a.id)
            .map(|r| format!("/runs/{r}"))
            .unwrap_or_default(),
        id: a.id.clone(),
        status: a.status.clone().unwrap_or_default(),
        tokens: thousands(a.tokens_used),
        started: a.started.as_deref().map(when).unwrap_or_default(),
        output: a.output_file.clone().unwrap_or_default(),
    }
}

fn agent_session_row(a: &AgentSession, live: bool) -> AgentSessionRow {
    AgentSessionRow {
        agent: view::usage::agent_name(&a.agent).to_string(),
        id: a.session_id.clone(),
        href: format!("/transcripts/{}", enc(&a.session_id)),
        source: a.source.clone().unwrap_or_default(),
        last_seen: a.last_seen.as_deref().map(when).unwrap_or_default(),
        live,
    }
}
