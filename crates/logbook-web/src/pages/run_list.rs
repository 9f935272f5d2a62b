//! The run list (`GET /`): runs grouped by agent, the filters, full-text
//! search and paging.

use std::collections::HashMap;
use std::sync::Arc;

use askama::Template;
use axum::extract::{Query, State};
use axum::response::Response;
use logbook::error::{Face, Next, Step};
use logbook::model::query::RunQuery;
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
    let request = ListRequest::parse(q, state.project.clock.now())?;
    let read = read_runs(&state, request.query.clone()).await?;
    render(&page(&state, request, read))
}

/// What the run list is asked for: the filters as its form shows them, and
/// the query they make or why they make none (shown on the page, not a
/// refusal, so the form stays to correct them).
struct ListRequest {
    /// The query string, which every link of the page keeps.
    q: HashMap<String, String>,
    agent: String,
    workflow: String,
    status: String,
    since: String,
    text: String,
    query: Option<RunQuery>,
    error: Option<String>,
}

impl ListRequest {
    fn parse(q: HashMap<String, String>, now: jiff::Timestamp) -> Result<ListRequest, Refusal> {
        let (query, error) = match api::run_query(&q, now) {
            Ok(query) => (Some(query), None),
            Err(Refusal::BadRequest(m)) => (None, Some(m)),
            Err(e) => return Err(e),
        };
        let get = |k: &str| q.get(k).map(|s| s.trim().to_string()).unwrap_or_default();
        Ok(ListRequest {
            agent: get("agent"),
            workflow: get("workflow"),
            status: get("status"),
            since: get("since"),
            text: get("q"),
            q,
            query,
            error,
        })
    }
}

/// A page of runs, where it starts and how many a page holds.
struct PageAt {
    page: query::Page,
    offset: usize,
    limit: usize,
}

/// What the run list reads: its page (`None` when the library found the
/// filters invalid) and every agent with its run count.
struct ListRead {
    page: Option<PageAt>,
    agents: Vec<(String, u64)>,
}

async fn read_runs(state: &Arc<AppState>, query: Option<RunQuery>) -> Result<ListRead, Refusal> {
    let cached = cached_agents(state);
    let scope = state.scope;
    let (page, agents, counted) = blocking(state, move |p| {
        let page = match query {
            Some(query) => match query::find(p, &query, FindOptions::new(scope)) {
                Ok(page) => Some(PageAt {
                    page,
                    offset: query.offset,
                    limit: query.limit.unwrap_or(50),
                }),
                Err(e) if e.kind() == logbook::ErrorKind::Invalid => None,
                Err(e) => return Err(e.into()),
            },
            None => None,
        };
        let (agents, counted) = match cached {
            Some(a) => (a, false),
            None => (run::agents(p)?, true),
        };
        Ok((page, agents, counted))
    })
    .await?;
    if counted && let Ok(mut c) = state.agents.lock() {
        *c = Some((std::time::Instant::now(), agents.clone()));
    }
    Ok(ListRead { page, agents })
}

/// The agent counts of a few seconds ago, when there are such.
fn cached_agents(state: &AppState) -> Option<Vec<(String, u64)>> {
    state
        .agents
        .lock()
        .ok()
        .and_then(|c| c.clone())
        .filter(|(at, _)| at.elapsed() < AGENTS_FRESH)
        .map(|(_, a)| a)
}

const STATUSES: &[(&str, &str)] = &[
    ("", "Any status"),
    ("running", "Running"),
    ("completed", "Completed"),
    ("failed", "Failed"),
    ("cancelled", "Cancelled"),
];

const SINCES: &[(&str, &str)] = &[
    ("", "Any time"),
    ("1h", "Last hour"),
    ("24h", "Last 24 hours"),
    ("7d", "Last 7 days"),
    ("30d", "Last 30 days"),
];

fn page(state: &AppState, request: ListRequest, read: ListRead) -> RunsPage {
    let ListRequest {
        q,
        agent,
        workflow,
        status,
        since,
        text,
        query: _,
        error,
    } = request;
    let error = error.or_else(|| {
        read.page
            .is_none()
            .then(|| "the filters are not valid; check the workflow pattern".into())
    });
    let listed = read
        .page
        .as_ref()
        .map(|at| Listed::of(at, &q, state.project.clock.now()))
        .unwrap_or_default();
    let mut layout = Layout::new(state, "Runs", "runs");
    layout.q = text.clone();
    layout.refresh = listed.running || listed.partial.is_some();
    layout.live = format!(
        "/api/live?view=list&{}",
        with_param(&q, "", "")
            .trim_start_matches("/?")
            .trim_start_matches('/')
    );
    RunsPage {
        layout,
        total_runs: read.agents.iter().map(|a| a.1).sum(),
        agents: read
            .agents
            .into_iter()
            .map(|(name, count)| AgentLink {
                href: with_param(&q, "agent", &name),
                on: name == agent,
                name,
                count,
            })
            .collect(),
        all_agents_href: with_param(&q, "agent", ""),
        agent,
        workflow,
        q: text,
        statuses: choices(&status, STATUSES),
        sinces: choices(&since, SINCES),
        groups: listed.groups,
        summary: listed.summary,
        error,
        partial: listed.partial,
        prev: listed.prev,
        next: listed.next,
        range: listed.range,
    }
}

fn choices(cur: &str, opts: &[(&'static str, &'static str)]) -> Vec<Choice> {
    opts.iter()
        .map(|(v, l)| Choice {
            value: v,
            label: l,
            on: *v == cur,
        })
        .collect()
}

/// A page of runs as the list shows it: grouped, summed up and linked to
/// the pages around it.
#[derive(Default)]
struct Listed {
    groups: Vec<Group>,
    summary: String,
    prev: String,
    next: String,
    range: String,
    /// A run on the page is running (the page then refreshes).
    running: bool,
    partial: Option<String>,
}

impl Listed {
    fn of(at: &PageAt, q: &HashMap<String, String>, now: jiff::Timestamp) -> Listed {
        let PageAt {
            page,
            offset,
            limit,
        } = at;
        let (offset, limit) = (*offset, *limit);
        let total = total(page);
        let paged = |o: usize| {
            let base = with_param(q, "offset", "");
            let sep = if base.contains('?') { '&' } else { '?' };
            if o == 0 {
                base
            } else {
                format!("{base}{sep}offset={o}")
            }
        };
        Listed {
            groups: groups(page, q, now),
            summary: summary(page, &total),
            prev: if offset > 0 {
                paged(offset.saturating_sub(limit))
            } else {
                String::new()
            },
            next: if page.more(offset) > 0 {
                paged(offset + page.hits.len())
            } else {
                String::new()
            },
            range: if page.hits.is_empty() {
                String::new()
            } else {
                format!(
                    "{}–{} of {}",
                    thousands(offset as u64 + 1),
                    thousands((offset + page.hits.len()) as u64),
                    total
                )
            },
            running: page
                .hits
                .iter()
                .any(|hit| hit.run.manifest.execution.status.as_str() == "running"),
            partial: page.partial.map(|p| p.notice().word(Face::Web)),
        }
    }
}

/// The page's runs grouped by agent, the groups in the order of their
/// newest run.
fn groups(page: &query::Page, q: &HashMap<String, String>, now: jiff::Timestamp) -> Vec<Group> {
    let mut groups: Vec<Group> = vec![];
    for hit in &page.hits {
        let m = &hit.run.manifest;
        let r = row(&hit.run, now, hit.snippet.as_deref());
        match groups.iter_mut().find(|g| g.agent == m.agent.name) {
            Some(g) => g.runs.push(r),
            None => groups.push(Group {
                agent: m.agent.name.clone(),
                title: m.agent_label().to_string(),
                href: with_param(q, "agent", &m.agent.name),
                runs: vec![r],
            }),
        }
    }
    groups
}

/// How many runs match; past the count's cap, what is known is a lower
/// bound: "1,000+".
fn total(page: &query::Page) -> String {
    if page.exact {
        thousands(page.total)
    } else {
        format!("{}+", thousands(page.total.saturating_sub(1)))
    }
}

fn summary(page: &query::Page, total: &str) -> String {
    let mut summary = format!(
        "{total} run{} match{}",
        if page.total == 1 { "" } else { "s" },
        if page.total == 1 { "es" } else { "" }
    );
    if page.skipped > 0 {
        summary.push_str(&format!(
            " · {} unreadable manifest(s) skipped ({})",
            page.skipped,
            Next::of(Step::Doctor { fix: false }, " names them").word(Face::Web)
        ));
    }
    summary
}
