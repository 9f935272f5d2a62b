//! One run's pages: the run itself (manifest fields, outputs, file tree,
//! lineage), its lineage graph, and each of its files.

use std::io::Read;
use std::sync::Arc;

use askama::Template;
use axum::extract::{Path, State};
use axum::http::Uri;
use axum::response::Response;
use logbook::clock;
use logbook::model::ids::RunRef;
use logbook::model::lineage::Lineage;
use logbook::model::run::{Manifest, OutputRecord, Run, RunEntry};
use logbook::ops::query;
use logbook::ops::run_files::{self, Tree, TreeEntry};
use serde_json::Value;

use super::{Layout, render};
use crate::AppState;
use crate::api::{blocking, run_ref};
use crate::files;
use crate::guard::Refusal;
use crate::view::{self, enc, enc_path, esc, status_class, when};

/// How much of a file the file page shows.
pub(crate) const SHOWN_BYTES: u64 = 1024 * 1024;

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
pub(super) async fn run_page(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Response, Refusal> {
    let id = run_ref(&id)?;
    let read = read_run(&state, id).await?;
    render(&page(&state, read))
}

/// A run as its page shows it, read in the server's scope.
struct RunRead {
    run: Run,
    /// Its folder's tree; another machine's run gives its outputs.
    tree: Tree,
    lineage: Lineage,
    /// The transcripts that name it (this machine's runs only).
    transcripts: Vec<String>,
}

async fn read_run(state: &Arc<AppState>, id: RunRef) -> Result<RunRead, Refusal> {
    let scope = state.scope;
    blocking(state, move |p| {
        let backend = query::backend(p, scope)?;
        let shown = backend.show(&id)?;
        // Another machine's run: its outputs stand for its folder.
        let tree = query::tree(p, &shown)?;
        let lineage = backend.lineage(&id, &clock::local_zone())?.graph;
        let transcripts = match shown.origin {
            None => logbook::ops::transcript::links::of_run(p, &shown.run),
            Some(_) => vec![],
        };
        Ok(RunRead {
            run: shown.run,
            tree,
            lineage,
            transcripts,
        })
    })
    .await
}

fn page(state: &AppState, read: RunRead) -> RunPage {
    let now = state.project.clock.now();
    let e = query::entry(&read.run, now);
    let m = &e.manifest;
    let running = m.execution.status.as_str() == "running";
    let mut layout = Layout::new(state, e.label.clone(), "runs");
    layout.refresh = running;
    layout.live = format!("/api/live?view=run&id={}", e.session_id);
    let manifest_json = serde_json::to_string(m).unwrap_or_default();
    RunPage {
        layout,
        id: e.session_id.clone(),
        agent: m.agent.name.clone(),
        agent_enc: enc(&m.agent.name),
        label: e.label.clone(),
        display_name: e.display_name.clone(),
        status: m.execution.status.to_string(),
        status_class: status_class(m.execution.status.as_str()),
        fields: fields(&e, now, read.transcripts),
        tree: read.tree.entries.iter().map(tree_row).collect(),
        truncated: read.tree.truncated,
        outputs: m.outputs.iter().map(output_row).collect(),
        lineage_svg: view::lineage_svg(&read.lineage),
        manifest_html: view::json_html(&manifest_json),
    }
}

/// The run's facts as (name, value, link) rows, empty values left out.
fn fields(
    e: &RunEntry,
    now: jiff::Timestamp,
    transcripts: Vec<String>,
) -> Vec<(String, String, String)> {
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
    add("Duration", duration(m, now), String::new());
    add("User", m.execution.user.clone(), String::new());
    add("Tags", Some(m.tags.join(", ")), String::new());
    if let Some(ws) = m.work_session() {
        add(
            "Work session",
            Some(ws.to_string()),
            format!("/sessions/{}", enc(ws)),
        );
    }
    for (k, v) in m.inputs.iter().flatten() {
        let v = match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        add(&format!("Input: {k}"), Some(v), String::new());
    }
    add(
        "Folder",
        Some(e.folder.display().to_string()),
        String::new(),
    );
    // The conversations that name this run (`metadata.runId`); each
    // transcript page links back.
    for t in transcripts {
        if let Ok(t) = crate::api::transcript_id(&t) {
            let href = format!("/transcripts/{t}");
            add("Transcript", Some(t), href);
        }
    }
    fields
}

/// How long the run took, or has taken so far while it runs.
fn duration(m: &Manifest, now: jiff::Timestamp) -> Option<String> {
    let started = clock::parse(&m.execution.started_at)?;
    let ended = m
        .execution
        .completed_at
        .as_deref()
        .and_then(clock::parse)
        .or_else(|| (m.execution.status.as_str() == "running").then_some(now))?;
    Some(clock::duration(started, ended))
}

fn tree_row(t: &TreeEntry) -> TreeRow {
    TreeRow {
        name: t.path.rsplit('/').next().unwrap_or_default().to_string(),
        href: enc_path(&t.path),
        size: view::size(t.size),
        dir: t.kind == "dir",
        class: depth_class(t.depth, t.kind == "dir"),
    }
}

fn output_row(o: &OutputRecord) -> OutputRow {
    OutputRow {
        file: o.file.clone(),
        href: enc_path(&o.file),
        kind: o.output_type.to_string(),
        description: o.description.clone(),
        created: when(&o.created_at),
    }
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
pub(super) async fn lineage_page(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Response, Refusal> {
    let id = run_ref(&id)?;
    let scope = state.scope;
    let g = blocking(&state, move |p| {
        Ok(query::backend(p, scope)?
            .lineage(&id, &clock::local_zone())?
            .graph)
    })
    .await?;
    render(&lineage_page_of(&state, &g))
}

fn lineage_page_of(state: &AppState, g: &Lineage) -> LineagePage {
    let label_of = |id: &str| {
        g.nodes
            .iter()
            .find(|n| n.session_id == id)
            .map_or_else(|| id.to_string(), |n| n.label.clone())
    };
    let label = label_of(&g.root);
    LineagePage {
        layout: Layout::new(state, format!("Lineage of {label}"), "runs"),
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
        svg: view::lineage_svg(g),
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
    }
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
pub(super) async fn file_page(
    State(state): State<Arc<AppState>>,
    uri: Uri,
) -> Result<Response, Refusal> {
    let rest = uri.path().strip_prefix("/runs/").ok_or(Refusal::NotFound)?;
    let (id, path) = files::split_raw(rest)?;
    let page = match read_file(&state, id, path.clone()).await? {
        FileRead::Here {
            shown,
            opened,
            head,
        } => here_file_page(&state, &shown, &opened, &head),
        FileRead::Remote { shown, text } => {
            remote_file_page(&state, &shown, &path, &text.text, text.truncated)
        }
    };
    render(&page)
}

/// A run file as read for its page.
enum FileRead {
    /// A file of this machine's run: the first [`SHOWN_BYTES`] of it.
    Here {
        shown: query::Shown,
        opened: run_files::RunFile,
        head: Vec<u8>,
    },
    /// A file of another machine's run: its text as the catalog keeps it.
    Remote {
        shown: query::Shown,
        text: query::OutputText,
    },
}

async fn read_file(state: &Arc<AppState>, id: RunRef, path: String) -> Result<FileRead, Refusal> {
    let scope = state.scope;
    blocking(state, move |p| {
        let backend = query::backend(p, scope)?;
        let shown = backend.show(&id)?;
        if let Some(text) = files::remote(p, backend.as_ref(), &shown, &path)? {
            return Ok(FileRead::Remote { shown, text });
        }
        let opened = run_files::open(p, &shown.run.id, &path)?;
        let mut head = vec![];
        (&opened.file)
            .take(SHOWN_BYTES)
            .read_to_end(&mut head)
            .map_err(|_| Refusal::Internal)?;
        Ok(FileRead::Here {
            shown,
            opened,
            head,
        })
    })
    .await
}

/// A file of this machine's run, from its first bytes: shown as an image,
/// offered as a binary, or as text by its extension ([`text_view`]).
fn here_file_page(
    state: &AppState,
    shown: &query::Shown,
    opened: &run_files::RunFile,
    head: &[u8],
) -> FilePage {
    let r = &shown.run;
    let id = r.manifest.session_id.clone();
    let label = query::entry(r, state.project.clock.now()).label;
    let path = opened.path.clone();
    let name = file_name(&path);
    let truncated = opened.size > SHOWN_BYTES;
    let binary = head.iter().take(8192).any(|b| *b == 0);
    let text = String::from_utf8_lossy(head);
    let (mode, body, kind) = if files::is_image(&path) {
        ("image", String::new(), "image")
    } else if binary || std::str::from_utf8(head).is_err() && !truncated {
        ("binary", String::new(), "binary")
    } else {
        text_view(&path, &id, &text, truncated)
    };
    let mut layout = Layout::new(state, format!("{name} · {label}"), "runs");
    layout.live = String::new();
    FilePage {
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
    }
}

/// A file of another machine's run, from the text the team catalog keeps
/// (Markdown rendered and sanitized, JSON coloured, the rest as text).
fn remote_file_page(
    state: &AppState,
    r: &query::Shown,
    path: &str,
    text: &str,
    truncated: bool,
) -> FilePage {
    let id = r.run.manifest.session_id.clone();
    let label = format!(
        "{} @{}",
        query::entry(&r.run, state.project.clock.now()).label,
        r.origin.as_deref().unwrap_or_default()
    );
    let name = file_name(path);
    let (mode, body, kind) = text_view(path, &id, text, truncated);
    let mut layout = Layout::new(state, format!("{name} · {label}"), "runs");
    layout.live = String::new();
    FilePage {
        layout,
        raw: format!("/api/runs/{id}/files/{}", enc_path(path)),
        id,
        run_label: label,
        path: path.to_string(),
        name,
        size: view::size(text.len() as u64),
        kind: kind.to_string(),
        truncated,
        mode,
        body,
    }
}

/// The last component of a run file's path.
fn file_name(path: &str) -> String {
    path.rsplit('/').next().unwrap_or_default().to_string()
}

/// A run file's text as the file page shows it, by its extension: Markdown
/// rendered and sanitized, JSON coloured (when whole), the rest escaped;
/// with the page's mode and what the file is shown as. One choice for the
/// files of this machine and those of other machines' runs.
fn text_view(
    path: &str,
    id: &str,
    text: &str,
    truncated: bool,
) -> (&'static str, String, &'static str) {
    let dir = path.rsplit_once('/').map(|(d, _)| d).unwrap_or_default();
    let ext = file_name(path)
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    if matches!(ext.as_str(), "md" | "markdown") {
        ("markdown", view::markdown(text, id, dir), "Markdown")
    } else if ext == "json" && !truncated {
        ("text", view::json_html(text), "JSON")
    } else {
        ("text", esc(text), "text")
    }
}
