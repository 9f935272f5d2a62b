//! The run list (`GET /`): runs grouped by agent, the filters, full-text
//! search and paging.

use std::collections::HashMap;
use std::sync::Arc;

use askama::Template;
use axum::extract::{Query, State};
use axum::response::Response;
use logbook::model::run::Run;
use logbook::ops::query::{self, FindOptions};
use logbook::ops::run;

use super::{Layout, render};
use crate::AppState;
use crate::api::{self, blocking};
use crate::guard::Refusal;
use crate::view::{self, enc, status_class, thousands};

/// How long the run list reuses its agent counts.
const AGENTS_FRESH: std::time::Duration = std::time::Duration::from_secs(3);

struct AgentLink {
    name: String,
    count: u64,
    href: String,
    on: bool,
}

struct Choice {
    value: &'static str,
    label: &'static str,
    on: bool,
}

struct RunRow {
    id: String,
    label: String,
    display_name: String,
    status: String,
    status_class: &'static str,
    workflow: String,
    outputs: usize,
    user: String,
    snippet: String,
}

struct Group {
    agent: String,
    title: String,
    href: String,
    runs: Vec<RunRow>,
}

#[derive(Template)]
#[template(path = "runs.html")]
struct RunsPage {
    layout: Layout,
    agents: Vec<AgentLink>,
    all_agents_href: String,
    total_runs: u64,
    agent: String,
    workflow: String,
    q: String,
    statuses: Vec<Choice>,
    sinces: Vec<Choice>,
    groups: Vec<Group>,
    summary: String,
    error: Option<String>,
    /// While the full-text index is being built, what a text search may miss.
    partial: Option<String>,
    prev: String,
    next: String,
    range: String,
}

/// The query string of the run list with `key` set to `value` (removed
/// when empty) and the paging reset.
fn with_param(q: &HashMap<String, String>, key: &str, value: &str) -> String {
    let mut pairs: Vec<(String, String)> = q
        .iter()
        .filter(|(k, v)| k.as_str() != key && k.as_str() != "offset" && !v.is_empty())
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if !value.is_empty() {
        pairs.push((key.to_string(), value.to_string()));
    }
    pairs.sort();
    let qs: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{}={}", enc(k), enc(v)))
        .collect();
    if qs.is_empty() {
        "/".into()
    } else {
        format!("/?{}", qs.join("&"))
    }
}

fn row(run: &Run, now: jiff::Timestamp, snippet: Option<&str>) -> RunRow {
    let e = run::entry(run, now);
    let m = &e.manifest;
    RunRow {
        id: e.session_id.clone(),
        label: e.label.clone(),
        display_name: e.display_name.clone(),
        status: m.execution.status.to_string(),
        status_class: status_class(m.execution.status.as_str()),
        workflow: m.workflow.name.clone(),
        outputs: m.outputs.len(),
        user: m.execution.user.clone().unwrap_or_default(),
        snippet: snippet.map(view::snippet_html).unwrap_or_default(),
    }
}

/// `GET /`: runs grouped by agent (groups in the order of their newest run
/// on the page), filters, full-text search, paging.
pub(super) async fn runs(
    State(state): State<Arc<AppState>>,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Response, Refusal> {
    let get = |k: &str| q.get(k).map(|s| s.trim().to_string()).unwrap_or_default();
    let (agent, workflow, status, since, text) = (
        get("agent"),
        get("workflow"),
        get("status"),
        get("since"),
        get("q"),
    );
    let mut error = None;
    let query = match api::run_query(&q, state.project.clock.now()) {
        Ok(query) => Some(query),
        Err(Refusal::BadRequest(m)) => {
            error = Some(m);
            None
        }
        Err(e) => return Err(e),
    };
    let cached = state
        .agents
        .lock()
        .ok()
        .and_then(|c| c.clone())
        .filter(|(at, _)| at.elapsed() < AGENTS_FRESH)
        .map(|(_, a)| a);
    let scope = state.scope;
    let (page, agents) = blocking(&state, move |p| {
        let found = |query: &logbook::model::query::RunQuery| {
            query::find(p, query, FindOptions::new(scope))
        };
        let page = match query {
            Some(query) => match found(&query) {
                Ok(page) => Some((page, query.offset, query.limit.unwrap_or(50))),
                Err(e) if e.kind() == logbook::ErrorKind::Invalid => None,
                Err(e) => return Err(e.into()),
            },
            None => None,
        };
        let agents = match cached {
            Some(a) => (a, false),
            None => (run::agents(p)?, true),
        };
        Ok((page, agents))
    })
    .await?;
    let (agents, counted) = agents;
    if counted && let Ok(mut c) = state.agents.lock() {
        *c = Some((std::time::Instant::now(), agents.clone()));
    }
    if page.is_none() && error.is_none() {
        error = Some("the filters are not valid; check the workflow pattern".into());
    }
    let now = state.project.clock.now();
    let mut groups: Vec<Group> = vec![];
    let mut summary = String::new();
    let (mut prev, mut next, mut range) = (String::new(), String::new(), String::new());
    let mut running = false;
    let mut partial = None;
    if let Some((page, offset, limit)) = &page {
        partial = page
            .partial
            .map(|p| p.notice().word(logbook::error::Face::Web));
        for hit in &page.hits {
            let m = &hit.run.manifest;
            running |= m.execution.status.as_str() == "running";
            let r = row(&hit.run, now, hit.snippet.as_deref());
            match groups.iter_mut().find(|g| g.agent == m.agent.name) {
                Some(g) => g.runs.push(r),
                None => groups.push(Group {
                    agent: m.agent.name.clone(),
                    title: m.agent_label().to_string(),
                    href: with_param(&q, "agent", &m.agent.name),
                    runs: vec![r],
                }),
            }
        }
        // Past the count's cap, what is known is a lower bound: "1,000+".
        let total = if page.exact {
            thousands(page.total)
        } else {
            format!("{}+", thousands(page.total.saturating_sub(1)))
        };
        summary = format!(
            "{total} run{} match{}",
            if page.total == 1 { "" } else { "s" },
            if page.total == 1 { "es" } else { "" }
        );
        if page.skipped > 0 {
            summary.push_str(&format!(
                " · {} unreadable manifest(s) skipped (`logbook doctor` names them)",
                page.skipped
            ));
        }
        if !page.hits.is_empty() {
            range = format!(
                "{}–{} of {}",
                thousands(*offset as u64 + 1),
                thousands((*offset + page.hits.len()) as u64),
                total
            );
        }
        let paged = |o: usize| {
            let base = with_param(&q, "offset", "");
            let sep = if base.contains('?') { '&' } else { '?' };
            if o == 0 {
                base
            } else {
                format!("{base}{sep}offset={o}")
            }
        };
        if *offset > 0 {
            prev = paged(offset.saturating_sub(*limit));
        }
        if page.more(*offset) > 0 {
            next = paged(offset + page.hits.len());
        }
    }
    let total_runs = agents.iter().map(|a| a.1).sum();
    let choice = |cur: &str, opts: &[(&'static str, &'static str)]| {
        opts.iter()
            .map(|(v, l)| Choice {
                value: v,
                label: l,
                on: *v == cur,
            })
            .collect()
    };
    let mut layout = Layout::new(&state, "Runs", "runs");
    layout.q = text.clone();
    layout.refresh = running || partial.is_some();
    layout.live = format!(
        "/api/live?view=list&{}",
        with_param(&q, "", "")
            .trim_start_matches("/?")
            .trim_start_matches('/')
    );
    render(&RunsPage {
        layout,
        agents: agents
            .into_iter()
            .map(|(name, count)| AgentLink {
                href: with_param(&q, "agent", &name),
                on: name == agent,
                name,
                count,
            })
            .collect(),
        all_agents_href: with_param(&q, "agent", ""),
        total_runs,
        agent,
        workflow,
        q: text,
        statuses: choice(
            &status,
            &[
                ("", "Any status"),
                ("running", "Running"),
                ("completed", "Completed"),
                ("failed", "Failed"),
                ("cancelled", "Cancelled"),
            ],
        ),
        sinces: choice(
            &since,
            &[
                ("", "Any time"),
                ("1h", "Last hour"),
                ("24h", "Last 24 hours"),
                ("7d", "Last 7 days"),
                ("30d", "Last 30 days"),
            ],
        ),
        groups,
        summary,
        error,
        partial,
        prev,
        next,
        range,
    })
}
