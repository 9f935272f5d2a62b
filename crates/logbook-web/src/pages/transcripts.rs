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
    source: String,
    duration: String,
    messages: String,
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
pub(super) async fn transcripts(
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
            title: t.title.clone(),
            source: t.source.clone(),
            duration: t.duration().unwrap_or_default(),
            messages: thousands(t.messages),
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
    turns: Vec<Turn>,
    more: usize,
    find: Option<super::transcript_find::FindBar>,
}

/// How many messages the transcript page shows; the API gives them all.
const SHOWN_MESSAGES: usize = 500;

/// `GET /transcripts/{id}`: the messages.
pub(super) async fn transcript_page(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Response, Refusal> {
    let id = transcript_id(&id)?;
    let (at, words) = super::transcript_find::params(&q)?;
    let (stored, find) = blocking(&state, move |p| {
        let stored = transcript::load(p, &id)?;
        let bar = super::transcript_find::bar(p, &stored.transcript.id, at, words)?;
        Ok((stored, bar))
    })
    .await?;
    let t = &stored.transcript;
    let turns = view::transcript::turns(&t.messages, SHOWN_MESSAGES);
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
        find,
    })
}
