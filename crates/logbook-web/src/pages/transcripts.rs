//! The transcript pages: the paged list of main and subagent transcripts,
//! and one transcript's messages.

use std::collections::HashMap;
use std::sync::Arc;

use askama::Template;
use axum::extract::{Path, Query, State};
use axum::response::Response;
use logbook::ops::transcript;

use super::{Layout, render};
use crate::AppState;
use crate::api::{self, blocking, run_id, transcript_id};
use crate::guard::Refusal;
use crate::view::transcript::{Input, Item, Turn};
use crate::view::{self, enc, thousands, when};

struct TranscriptRow {
    id: String,
    title: String,
    agent: String,
    repo: String,
    models: String,
    duration: String,
    messages: String,
    kind: String,
    active: String,
    /// The measured total (input, output and cache), or empty.
    tokens: String,
    /// The cache's part of it (read and written), or empty.
    cache: String,
    /// Every count, for the tooltip.
    tokens_detail: String,
    parent: String,
    parent_short: String,
}

/// One choice of a filter's `<select>`.
struct Choice {
    value: &'static str,
    label: &'static str,
    on: bool,
}

#[derive(Template)]
#[template(path = "transcripts.html")]
struct TranscriptsPage {
    layout: Layout,
    summary: String,
    rows: Vec<TranscriptRow>,
    prev: String,
    next: String,
    sources: Vec<Choice>,
    kinds: Vec<Choice>,
    model: String,
    since: String,
    until: String,
    text: String,
    repo: String,
    filtered: bool,
}

/// The filters the list's form sends, kept in its paging links.
const FILTERS: &[&str] = &["source", "model", "since", "until", "text", "repo", "kind"];

/// What else a paging link keeps: the page's size.
const KEPT: &[&str] = &[
    "source", "model", "since", "until", "text", "repo", "kind", "limit",
];

/// `GET /transcripts`: main and subagent transcripts, newest first, paged,
/// narrowed by `transcript list`'s filters (a plain GET form).
pub(super) async fn transcripts(
    State(state): State<Arc<AppState>>,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Response, Refusal> {
    let opts = api::transcript_options(&q)?;
    let (offset, limit) = (opts.offset, opts.limit.unwrap_or(50));
    let listing = blocking(&state, move |p| {
        let mut opts = api::scoped(p, opts);
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
        .map(|t| {
            let (tokens, cache, tokens_detail) = match &t.usage {
                Some(u) => (
                    thousands(u.total_tokens),
                    thousands(view::usage::cache_of(u)),
                    view::usage::detail(u),
                ),
                None => (
                    String::new(),
                    String::new(),
                    format!(
                        "not measured; context size {}",
                        thousands(t.latest_total_tokens)
                    ),
                ),
            };
            TranscriptRow {
                id: t.id.clone(),
                title: t.title.clone(),
                agent: view::usage::agent_name(&t.source).to_string(),
                repo: t.repo_label(),
                models: t.models.join(", "),
                duration: t.duration().unwrap_or_default(),
                messages: thousands(t.messages),
                kind: t.kind.as_str().to_string(),
                active: when(&t.last_active_at),
                tokens,
                cache,
                tokens_detail,
                parent_short: t
                    .parent_session_id
                    .as_deref()
                    .map(|p| p.chars().take(8).collect())
                    .unwrap_or_default(),
                parent: t.parent_session_id.clone().unwrap_or_default(),
            }
        })
        .collect();
    let given = |k: &str| {
        q.get(k)
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    let kept: String = KEPT
        .iter()
        .filter_map(|k| given(k).map(|v| format!("{k}={}&", enc(&v))))
        .collect();
    let filtered = FILTERS.iter().any(|k| given(k).is_some());
    let href = |o: usize| format!("/transcripts?{kept}offset={o}");
    let source = given("source").unwrap_or_default().to_ascii_lowercase();
    let kind = given("kind").unwrap_or_default();
    let choices = |on: &str, all: &[(&'static str, &'static str)]| {
        all.iter()
            .map(|(value, label)| Choice {
                value,
                label,
                on: *value == on,
            })
            .collect()
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
        sources: choices(
            &source,
            &[
                ("", "Any agent"),
                ("claude-code", "Claude Code"),
                ("codex", "Codex"),
                ("logbook", "seed 003"),
            ],
        ),
        kinds: choices(
            &kind,
            &[
                ("", "Main and subagents"),
                ("main", "Main"),
                ("subagent", "Subagents"),
            ],
        ),
        model: given("model").unwrap_or_default(),
        since: given("since").unwrap_or_default(),
        until: given("until").unwrap_or_default(),
        text: given("text").unwrap_or_default(),
        repo: given("repo").unwrap_or_default(),
        filtered,
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
    turns: Vec<Turn>,
    more: usize,
}

/// How many messages the transcript page shows; the API gives them all.
const SHOWN_MESSAGES: usize = 500;

/// `GET /transcripts/{id}`: the messages.
pub(super) async fn transcript_page(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Response, Refusal> {
    let id = transcript_id(&id)?;
    let (stored, extras) = blocking(&state, move |p| {
        let stored = transcript::load(p, &id)?;
        let t = &stored.transcript;
        let extras = view::transcript::Extras {
            charged: transcript::links::charged(t),
            subagents: transcript::links::subagents(p, t),
        };
        Ok((stored, extras))
    })
    .await?;
    let t = &stored.transcript;
    let turns = view::transcript::turns_with(&t.messages, SHOWN_MESSAGES, &extras);
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
        turns,
        more: t.messages.len().saturating_sub(SHOWN_MESSAGES),
    })
}
