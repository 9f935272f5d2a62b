//! The viewer's HTML pages, rendered on the server from askama templates
//! (compiled into the binary). Each page is one or two `ops` calls and
//! reads a page of records, never every run.

use std::collections::HashMap;
use std::io::Read;
use std::sync::Arc;

use askama::Template;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderValue, Uri, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use logbook::clock;
use logbook::model::run::Run;
use logbook::ops::{run, run_files, transcript, work_session, workflow};
use serde_json::Value;

use crate::AppState;
use crate::api::{self, blocking, run_id, session_id, transcript_id};
use crate::files;
use crate::guard::Refusal;
use crate::view::{self, enc, enc_path, esc, status_class, thousands, when};

/// How long the run list reuses its agent counts.
const AGENTS_FRESH: std::time::Duration = std::time::Duration::from_secs(3);

/// How much of a file the file page shows.
pub(crate) const SHOWN_BYTES: u64 = 1024 * 1024;

const STYLE: &str = include_str!("../assets/style.css");
const SCRIPT: &str = include_str!("../assets/app.js");

pub(crate) fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/", get(runs))
        .route("/runs/{id}", get(run_page))
        .route("/runs/{id}/lineage", get(lineage_page))
        .route("/runs/{id}/files/{*path}", get(file_page))
        .route("/sessions", get(sessions))
        .route("/sessions/{id}", get(session_page))
        .route("/sessions/{id}/workflow", get(workflow_page))
        .route("/transcripts", get(transcripts))
        .route("/transcripts/{id}", get(transcript_page))
        .route("/assets/style.css", get(style))
        .route("/assets/app.js", get(script))
}

async fn style() -> Response {
    asset(STYLE, "text/css; charset=utf-8")
}

async fn script() -> Response {
    asset(SCRIPT, "text/javascript; charset=utf-8")
}

fn asset(body: &'static str, kind: &'static str) -> Response {
    let mut r = body.into_response();
    r.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
    r.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=300"),
    );
    r
}

/// What the frame of every page needs.
pub(crate) struct Layout {
    title: String,
    nav: &'static str,
    q: String,
    /// The live-update stream of this page, empty when it has none.
    live: String,
    /// Reload every few seconds without JavaScript (something is running).
    refresh: bool,
    root: String,
}

impl Layout {
    fn new(state: &AppState, title: impl Into<String>, nav: &'static str) -> Layout {
        Layout {
            title: title.into(),
            nav,
            q: String::new(),
            live: String::new(),
            refresh: false,
            root: state.project.root().display().to_string(),
        }
    }
}

fn render(t: &impl Template) -> Result<Response, Refusal> {
    let html = t.render().map_err(|_| Refusal::Internal)?;
    let mut r = Html(html).into_response();
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(r)
}

// ---- run list ----

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
async fn runs(
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
    let query = match api::run_query(&q) {
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
    let team = state.team;
    let (page, agents) = blocking(&state, move |p| {
        let found = |query: &logbook::model::query::RunQuery| {
            if team {
                logbook::ops::team::find_page(p, query)
            } else {
                run::find_page_bounded(p, query)
            }
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
    let now = clock::now();
    let mut groups: Vec<Group> = vec![];
    let mut summary = String::new();
    let (mut prev, mut next, mut range) = (String::new(), String::new(), String::new());
    let mut running = false;
    if let Some((page, offset, limit)) = &page {
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
    layout.refresh = running;
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
        prev,
        next,
        range,
    })
}

// ---- run ----

struct TreeRow {
    name: String,
    href: String,
    size: String,
    dir: bool,
    class: String,
}

struct OutputRow {
    file: String,
    href: String,
    kind: String,
    description: String,
    created: String,
}

#[derive(Template)]
#[template(path = "run.html")]
struct RunPage {
    layout: Layout,
    id: String,
    agent: String,
    agent_enc: String,
    label: String,
    display_name: String,
    status: String,
    status_class: &'static str,
    fields: Vec<(String, String, String)>,
    tree: Vec<TreeRow>,
    truncated: bool,
    outputs: Vec<OutputRow>,
    lineage_svg: String,
    manifest_html: String,
}

fn depth_class(d: usize, dir: bool) -> String {
    let d = if d > 4 {
        "dn".to_string()
    } else {
        format!("d{d}")
    };
    if dir { format!("{d} dir") } else { d }
}

/// `GET /runs/{uuid}`: manifest fields, outputs, file tree, lineage.
async fn run_page(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Response, Refusal> {
    let id = run_id(&id)?;
    let team = state.team;
    let (r, tree, lineage) = blocking(&state, move |p| {
        if team {
            // Another machine's run: its outputs stand for its folder.
            let r = logbook::ops::team::show(p, &id)?;
            let tree = match run_files::tree(p, &id) {
                Ok(tree) => tree,
                Err(_) => logbook::ops::team::tree_of(&r),
            };
            let (lineage, _) = logbook::ops::team::lineage(p, id.as_str(), &clock::local_zone())?;
            return Ok((r.run, tree, lineage));
        }
        let r = run::show(p, id.as_str())?;
        let tree = run_files::tree(p, &id)?;
        let lineage = run::lineage(p, id.as_str(), &clock::local_zone())?;
        Ok((r, tree, lineage))
    })
    .await?;
    let e = run::entry(&r, clock::now());
    let m = &e.manifest;
    let mut fields: Vec<(String, String, String)> = vec![
        ("Id".into(), e.session_id.clone(), String::new()),
        (
            "Agent".into(),
            format!("{} ({})", m.agent_label(), m.agent.name),
            format!("/?agent={}", enc(&m.agent.name)),
        ),
        ("Workflow".into(), m.workflow.name.clone(), String::new()),
    ];
    let mut add = |k: &str, v: Option<String>, href: String| {
        if let Some(v) = v.filter(|v| !v.is_empty()) {
            fields.push((k.to_string(), v, href));
        }
    };
    add("Description", m.workflow.description.clone(), String::new());
    add("Bundle", m.agent.bundle.clone(), String::new());
    add(
        "Started",
        Some(when(&m.execution.started_at)),
        String::new(),
    );
    add(
        "Finished",
        m.execution.completed_at.as_deref().map(when),
        String::new(),
    );
    if let (Some(a), Some(b)) = (
        clock::parse(&m.execution.started_at),
        m.execution
            .completed_at
            .as_deref()
            .and_then(clock::parse)
            .or_else(|| (m.execution.status.as_str() == "running").then(clock::now)),
    ) {
        add("Duration", Some(clock::duration(a, b)), String::new());
    }
    add("User", m.execution.user.clone(), String::new());
    add("Tags", Some(m.tags.join(", ")), String::new());
    if let Some(ws) = m.work_session() {
        add(
            "Work session",
            Some(ws.to_string()),
            format!("/sessions/{}", enc(ws)),
        );
    }
    if let Some(inputs) = &m.inputs {
        for (k, v) in inputs {
            let v = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            add(&format!("Input: {k}"), Some(v), String::new());
        }
    }
    add(
        "Folder",
        Some(e.folder.display().to_string()),
        String::new(),
    );
    let running = m.execution.status.as_str() == "running";
    let mut layout = Layout::new(&state, e.label.clone(), "runs");
    layout.refresh = running;
    layout.live = format!("/api/live?view=run&id={}", e.session_id);
    let manifest_json = serde_json::to_string(m).unwrap_or_default();
    render(&RunPage {
        layout,
        id: e.session_id.clone(),
        agent: m.agent.name.clone(),
        agent_enc: enc(&m.agent.name),
        label: e.label.clone(),
        display_name: e.display_name.clone(),
        status: m.execution.status.to_string(),
        status_class: status_class(m.execution.status.as_str()),
        fields,
        tree: tree
            .entries
            .iter()
            .map(|t| TreeRow {
                name: t.path.rsplit('/').next().unwrap_or_default().to_string(),
                href: enc_path(&t.path),
                size: view::size(t.size),
                dir: t.kind == "dir",
                class: depth_class(t.depth, t.kind == "dir"),
            })
            .collect(),
        truncated: tree.truncated,
        outputs: m
            .outputs
            .iter()
            .map(|o| OutputRow {
                file: o.file.clone(),
                href: enc_path(&o.file),
                kind: o.output_type.to_string(),
                description: o.description.clone(),
                created: when(&o.created_at),
            })
            .collect(),
        lineage_svg: view::lineage_svg(&lineage),
        manifest_html: view::json_html(&manifest_json),
    })
}

#[derive(Template)]
#[template(path = "lineage.html")]
struct LineagePage {
    layout: Layout,
    id: String,
    label: String,
    summary: String,
    svg: String,
    cycles: String,
    ancestors: Vec<(String, String)>,
    descendants: Vec<(String, String)>,
}

/// `GET /runs/{uuid}/lineage`: the graph and both chains.
async fn lineage_page(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Response, Refusal> {
    let id = run_id(&id)?;
    let g = blocking(&state, move |p| {
        Ok(run::lineage(p, id.as_str(), &clock::local_zone())?)
    })
    .await?;
    let label_of = |id: &str| {
        g.nodes
            .iter()
            .find(|n| n.session_id == id)
            .map_or_else(|| id.to_string(), |n| n.label.clone())
    };
    let label = label_of(&g.root);
    render(&LineagePage {
        layout: Layout::new(&state, format!("Lineage of {label}"), "runs"),
        id: g.root.clone(),
        summary: format!(
            "{} run(s) in the graph, {} link(s){}",
            g.nodes.len(),
            g.edges.len(),
            if g.dangling.is_empty() {
                String::new()
            } else {
                format!(", {} naming a missing run", g.dangling.len())
            }
        ),
        svg: view::lineage_svg(&g),
        cycles: g
            .cycles
            .iter()
            .map(|c| c.join(" → "))
            .collect::<Vec<_>>()
            .join("; "),
        ancestors: g
            .ancestors
            .iter()
            .map(|a| (a.clone(), label_of(a)))
            .collect(),
        descendants: g
            .descendants
            .iter()
            .map(|a| (a.clone(), label_of(a)))
            .collect(),
        label,
    })
}

// ---- file ----

#[derive(Template)]
#[template(path = "file.html")]
struct FilePage {
    layout: Layout,
    id: String,
    run_label: String,
    path: String,
    name: String,
    size: String,
    kind: String,
    raw: String,
    truncated: bool,
    mode: &'static str,
    body: String,
}

/// `GET /runs/{uuid}/files/{path}`: Markdown rendered and sanitized, JSON
/// coloured, text as text, images inline, other binaries as a download;
/// only the first MiB of a large file is read.
async fn file_page(State(state): State<Arc<AppState>>, uri: Uri) -> Result<Response, Refusal> {
    let rest = uri.path().strip_prefix("/runs/").ok_or(Refusal::NotFound)?;
    let (id, path) = files::split_raw(rest)?;
    if state.team {
        let (r, text) = blocking(&state, {
            let (id, path) = (id.clone(), path.clone());
            move |p| {
                if run_files::open(p, &id, &path).is_ok() {
                    return Ok((None, None));
                }
                let r = logbook::ops::team::show(p, &id)?;
                let text = logbook::ops::team::output_text(p, id.as_str(), &path)?;
                Ok((Some(r), text))
            }
        })
        .await?;
        if let Some(r) = r {
            let (text, truncated) = text.ok_or(Refusal::NotFound)?;
            return remote_file_page(&state, &r, &path, &text, truncated);
        }
    }
    let (r, opened, head) = blocking(&state, move |p| {
        let opened = run_files::open(p, &id, &path)?;
        let r = run::show(p, id.as_str())?;
        let mut head = vec![];
        (&opened.file)
            .take(SHOWN_BYTES)
            .read_to_end(&mut head)
            .map_err(|_| Refusal::Internal)?;
        Ok((r, opened, head))
    })
    .await?;
    let id = r.manifest.session_id.clone();
    let label = run::entry(&r, clock::now()).label;
    let path = opened.path.clone();
    let name = path.rsplit('/').next().unwrap_or_default().to_string();
    let dir = path.rsplit_once('/').map(|(d, _)| d).unwrap_or_default();
    let ext = name
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    let truncated = opened.size > SHOWN_BYTES;
    let binary = head.iter().take(8192).any(|b| *b == 0);
    let text = String::from_utf8_lossy(&head);
    let (mode, body, kind) = if files::is_image(&path) {
        ("image", String::new(), "image")
    } else if binary || std::str::from_utf8(&head).is_err() && !truncated {
        ("binary", String::new(), "binary")
    } else if matches!(ext.as_str(), "md" | "markdown") {
        ("markdown", view::markdown(&text, &id, dir), "Markdown")
    } else if ext == "json" && !truncated {
        ("text", view::json_html(&text), "JSON")
    } else {
        ("text", esc(&text), "text")
    };
    let mut layout = Layout::new(&state, format!("{name} · {label}"), "runs");
    layout.live = String::new();
    render(&FilePage {
        layout,
        raw: format!("/api/runs/{id}/files/{}", enc_path(&path)),
        id,
        run_label: label,
        path,
        name,
        size: view::size(opened.size),
        kind: kind.to_string(),
        truncated,
        mode,
        body,
    })
}

/// A file of another machine's run, from the text the team catalog keeps
/// (Markdown rendered and sanitized, JSON coloured, the rest as text).
fn remote_file_page(
    state: &Arc<AppState>,
    r: &logbook::ops::team::OriginRun,
    path: &str,
    text: &str,
    truncated: bool,
) -> Result<Response, Refusal> {
    let id = r.run.manifest.session_id.clone();
    let label = format!("{} @{}", run::entry(&r.run, clock::now()).label, r.origin);
    let name = path.rsplit('/').next().unwrap_or_default().to_string();
    let dir = path.rsplit_once('/').map(|(d, _)| d).unwrap_or_default();
    let ext = name
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    let (body, kind) = if matches!(ext.as_str(), "md" | "markdown") {
        (view::markdown(text, &id, dir), "Markdown")
    } else if ext == "json" && !truncated {
        (view::json_html(text), "JSON")
    } else {
        (esc(text), "text")
    };
    let mut layout = Layout::new(state, format!("{name} · {label}"), "runs");
    layout.live = String::new();
    render(&FilePage {
        layout,
        raw: format!("/api/runs/{id}/files/{}", enc_path(path)),
        id,
        run_label: label,
        path: path.to_string(),
        name,
        size: view::size(text.len() as u64),
        kind: kind.to_string(),
        truncated,
        mode: "text",
        body,
    })
}

// ---- work sessions ----

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
async fn sessions(State(state): State<Arc<AppState>>) -> Result<Response, Refusal> {
    let listing = blocking(&state, |p| Ok(work_session::list(p)?)).await?;
    let rows: Vec<SessionRow> = listing
        .sessions
        .iter()
        .chain(&listing.archived)
        .map(|s| {
            let ind = s.indicator().as_str().to_string();
            SessionRow {
                id: s.session_id.clone(),
                active: listing.active.as_deref() == Some(s.session_id.as_str()),
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
        })
        .collect();
    render(&SessionsPage {
        layout: Layout::new(&state, "Work sessions", "sessions"),
        summary: format!(
            "{} live, {} archived",
            listing.sessions.len(),
            listing.archived.len()
        ),
        rows,
    })
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
    notes: Vec<String>,
    summary_text: String,
}

/// `GET /sessions/{id}`: token bar and thresholds, milestones, artifacts,
/// spawned agents and savings.
async fn session_page(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Response, Refusal> {
    let id = session_id(&id)?;
    let s = blocking(&state, move |p| Ok(work_session::get(p, Some(&id))?)).await?;
    let report = s.token_report();
    let ind = s.indicator().as_str().to_string();
    let mut layout = Layout::new(&state, s.session_id.clone(), "sessions");
    layout.live = format!("/api/live?view=session&id={}", enc(&s.session_id));
    render(&SessionPage {
        layout,
        id: s.session_id.clone(),
        status_class: indicator_class(&ind),
        bar: view::token_bar(s.percentage(), &ind),
        indicator: ind,
        client: s.client.clone(),
        project: s.project.clone(),
        status: s.status.as_str().to_string(),
        created: when(&s.created),
        duration: s.duration(clock::now()).unwrap_or_default(),
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
        artifacts: s
            .artifacts
            .iter()
            .map(|a| {
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
            })
            .collect(),
        agents: s
            .agents_spawned
            .iter()
            .map(|a| AgentRow {
                kind: a.agent_type.clone(),
                run_href: run_id(&a.id)
                    .map(|r| format!("/runs/{r}"))
                    .unwrap_or_default(),
                id: a.id.clone(),
                status: a.status.clone().unwrap_or_default(),
                tokens: thousands(a.tokens_used),
                started: a.started.as_deref().map(when).unwrap_or_default(),
                output: a.output_file.clone().unwrap_or_default(),
            })
            .collect(),
        notes: s.notes.clone(),
        summary_text: s.context_summary.trim().to_string(),
    })
}

struct TimelineRow {
    agent: String,
    status: String,
    status_class: &'static str,
    compacted: bool,
    started: String,
    completed: String,
    handoff: String,
    prompt: String,
    summary: String,
    run_href: String,
}

struct DecisionRow {
    kind: String,
    description: String,
    rationale: String,
    by: String,
    when: String,
    approved: String,
}

struct VerdictRow {
    agent: String,
    decision: String,
    class: &'static str,
    confidence: String,
    reasoning: String,
    extra: String,
}

#[derive(Template)]
#[template(path = "workflow.html")]
struct WorkflowPage {
    layout: Layout,
    id: String,
    mode: String,
    phase: String,
    active: String,
    version: u64,
    updated: String,
    problems: Vec<String>,
    timeline: Vec<TimelineRow>,
    decisions: Vec<DecisionRow>,
    verdicts: Vec<VerdictRow>,
    handoffs: Vec<(String, String)>,
    compactions: Vec<String>,
}

fn invocation_class(status: &str) -> &'static str {
    match status {
        "in_progress" => "s-running",
        "completed" => "s-completed",
        "blocked" | "failed" => "s-failed",
        _ => "s-other",
    }
}

/// `GET /sessions/{id}/workflow`: the agent timeline (compacted entries
/// included), decisions, verdicts, handoffs and compactions.
async fn workflow_page(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Response, Refusal> {
    let id = session_id(&id)?;
    let (loaded, history, problems) = blocking(&state, move |p| {
        let loaded = workflow::load(p, Some(&id))?;
        let (history, problems) = workflow::full_history_lenient(&loaded);
        Ok((loaded, history, problems))
    })
    .await?;
    let st = &loaded.state;
    let wf = st.orchestrator_workflow.as_ref();
    let current = wf.map_or(0, |w| w.agent_history.len());
    let archived = history.len().saturating_sub(current);
    let label = |v: &dyn std::fmt::Display| v.to_string();
    let timeline = history
        .iter()
        .enumerate()
        .map(|(i, inv)| {
            let status = label(&inv.status);
            TimelineRow {
                agent: label(&inv.agent),
                status_class: invocation_class(&status),
                status,
                compacted: i < archived,
                started: when(&inv.started_at),
                completed: inv.completed_at.as_deref().map(when).unwrap_or_default(),
                handoff: match (&inv.handoff_from, &inv.handoff_to) {
                    (Some(f), _) => format!("from {f}"),
                    (None, Some(t)) => format!("hands off to {t}"),
                    _ => String::new(),
                },
                prompt: view::clip(&inv.input.prompt, 300),
                summary: inv
                    .output
                    .as_ref()
                    .map(|o| view::clip(&o.summary, 300))
                    .unwrap_or_default(),
                run_href: inv
                    .input
                    .context
                    .get("run_id")
                    .and_then(Value::as_str)
                    .and_then(|r| run_id(r).ok())
                    .map(|r| format!("/runs/{r}"))
                    .unwrap_or_default(),
            }
        })
        .collect();
    let join = |v: &[logbook::model::workflow::AgentType]| {
        v.iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut layout = Layout::new(
        &state,
        format!("Workflow of {}", loaded.session_id),
        "sessions",
    );
    layout.live = format!(
        "/api/live?view=workflow&id={}",
        enc(loaded.session_id.as_str())
    );
    render(&WorkflowPage {
        layout,
        id: loaded.session_id.to_string(),
        mode: label(&st.current_mode),
        phase: wf.map_or_else(|| "—".into(), |w| label(&w.workflow_phase)),
        active: wf
            .and_then(|w| w.active_agent.as_ref())
            .map_or_else(|| "none".into(), |a| a.to_string()),
        version: st.version,
        updated: when(&st.updated_at),
        problems,
        timeline,
        decisions: wf
            .map(|w| {
                w.decisions
                    .iter()
                    .map(|d| DecisionRow {
                        kind: label(&d.kind),
                        description: d.description.clone(),
                        rationale: d.rationale.clone(),
                        by: label(&d.decided_by),
                        when: when(&d.timestamp),
                        approved: join(&d.approved_by),
                    })
                    .collect()
            })
            .unwrap_or_default(),
        verdicts: wf
            .map(|w| {
                w.verdicts
                    .iter()
                    .map(|v| {
                        let decision = label(&v.decision);
                        let mut extra = vec![];
                        if let Some(c) = v.conditions.as_ref().filter(|c| !c.is_empty()) {
                            extra.push(format!("conditions: {}", c.join("; ")));
                        }
                        if let Some(b) = v.blockers.as_ref().filter(|b| !b.is_empty()) {
                            extra.push(format!("blockers: {}", b.join("; ")));
                        }
                        VerdictRow {
                            agent: label(&v.agent),
                            class: if decision.contains("approve")
                                && !decision.contains("conditions")
                            {
                                "s-completed"
                            } else if decision.contains("reject") || decision.contains("block") {
                                "s-failed"
                            } else {
                                "s-running"
                            },
                            decision,
                            confidence: format!("{:.0} %", v.confidence * 100.0),
                            reasoning: v.reasoning.clone(),
                            extra: extra.join(" · "),
                        }
                    })
                    .collect()
            })
            .unwrap_or_default(),
        handoffs: wf
            .map(|w| {
                w.pending_handoffs
                    .iter()
                    .map(|h| {
                        (
                            format!("{} → {}", h.from_agent, h.to_agent),
                            format!("{} · {}", h.reason, when(&h.created_at)),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default(),
        compactions: wf
            .map(|w| {
                w.compaction_history
                    .iter()
                    .map(|c| {
                        format!(
                            "{} · {} invocation(s) archived to {}",
                            when(&c.compacted_at),
                            c.count,
                            c.note_path.rsplit('/').next().unwrap_or_default()
                        )
                    })
                    .collect()
            })
            .unwrap_or_default(),
    })
}

// ---- transcripts ----

struct TranscriptRow {
    id: String,
    kind: String,
    workdir: String,
    active: String,
    tokens: String,
    parent: String,
    parent_short: String,
}

#[derive(Template)]
#[template(path = "transcripts.html")]
struct TranscriptsPage {
    layout: Layout,
    summary: String,
    rows: Vec<TranscriptRow>,
    prev: String,
    next: String,
}

/// `GET /transcripts`: main and subagent transcripts, newest first, paged.
async fn transcripts(
    State(state): State<Arc<AppState>>,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Response, Refusal> {
    let opts = api::transcript_options(&q)?;
    let (offset, limit) = (opts.offset, opts.limit.unwrap_or(50));
    let kind = q.get("kind").cloned().unwrap_or_default();
    let listing = blocking(&state, move |p| {
        let mut opts = opts;
        // One more than shown, to know whether there is a next page.
        opts.limit = Some(limit + 1);
        Ok(transcript::list(p, &opts)?)
    })
    .await?;
    let more = listing.transcripts.len() > limit;
    let rows: Vec<TranscriptRow> = listing
        .transcripts
        .iter()
        .take(limit)
        .map(|t| TranscriptRow {
            id: t.id.clone(),
            kind: t.kind.as_str().to_string(),
            workdir: t.workdir.clone(),
            active: when(&t.last_active_at),
            tokens: thousands(t.latest_total_tokens),
            parent_short: t
                .parent_session_id
                .as_deref()
                .map(|p| p.chars().take(8).collect())
                .unwrap_or_default(),
            parent: t.parent_session_id.clone().unwrap_or_default(),
        })
        .collect();
    let href = |o: usize| {
        let k = if kind.is_empty() {
            String::new()
        } else {
            format!("kind={}&", enc(&kind))
        };
        format!("/transcripts?{k}offset={o}")
    };
    render(&TranscriptsPage {
        layout: Layout::new(&state, "Transcripts", "transcripts"),
        summary: format!("{} shown", rows.len()),
        prev: if offset > 0 {
            href(offset.saturating_sub(limit))
        } else {
            String::new()
        },
        next: if more {
            href(offset + limit)
        } else {
            String::new()
        },
        rows,
    })
}

#[derive(Template)]
#[template(path = "transcript.html")]
struct TranscriptPage {
    layout: Layout,
    id: String,
    kind: String,
    workdir: String,
    started: String,
    active: String,
    tokens: String,
    parent: String,
    run: String,
    messages: Vec<(String, String)>,
    more: usize,
}

/// How many messages the transcript page shows; the API gives them all.
const SHOWN_MESSAGES: usize = 500;

/// `GET /transcripts/{id}`: the messages.
async fn transcript_page(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Response, Refusal> {
    let id = transcript_id(&id)?;
    let stored = blocking(&state, move |p| Ok(transcript::load(p, &id)?)).await?;
    let t = &stored.transcript;
    let messages = t
        .messages
        .iter()
        .take(SHOWN_MESSAGES)
        .map(|m| {
            let text: Vec<String> = m
                .blocks
                .iter()
                .map(|b| match b.get("content").or_else(|| b.get("text")) {
                    Some(Value::String(s)) => s.clone(),
                    Some(other) => other.to_string(),
                    None => b.to_string(),
                })
                .collect();
            (m.role.clone(), view::clip(&text.join("\n\n"), 20_000))
        })
        .collect();
    render(&TranscriptPage {
        layout: Layout::new(&state, format!("Transcript {}", t.id), "transcripts"),
        id: t.id.clone(),
        kind: stored.kind.as_str().to_string(),
        workdir: t.metadata.workdir.clone(),
        started: when(&t.metadata.started_at),
        active: when(&t.metadata.last_active_at),
        tokens: thousands(t.metadata.latest_total_tokens),
        parent: t.metadata.parent_session_id.clone().unwrap_or_default(),
        run: t
            .run_id()
            .and_then(|r| run_id(r).ok())
            .map(|r| r.to_string())
            .unwrap_or_default(),
        messages,
        more: t.messages.len().saturating_sub(SHOWN_MESSAGES),
    })
}
