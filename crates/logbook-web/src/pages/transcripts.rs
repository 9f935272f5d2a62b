//! The transcript pages: the paged list of main and subagent transcripts,
//! and one transcript's messages.

use std::collections::HashMap;
use std::sync::Arc;

use askama::Template;
use axum::extract::{Path, Query, State};
use axum::response::Response;
use logbook::model::transcript::Summary;
use logbook::ops::query::Transcripts;
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
    /// The parent's page, percent-encoded (an id from a log is data).
    parent_href: String,
    /// The parent column names the session it was forked from (`forkOf`),
    /// not a subagent's parent.
    fork: bool,
    /// The machine it came from, under `serve --team` (another's only).
    origin: String,
    /// An agent is writing it now.
    live: bool,
    /// Where following it starts: its last message, on its last page.
    follow: String,
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
    /// Only the live ones (`live=1`).
    live_only: bool,
}

/// The filters the list's form sends, kept in its paging links.
const FILTERS: &[&str] = &[
    "source", "model", "since", "until", "text", "repo", "kind", "live",
];

/// What else a paging link keeps: the page's size.
const KEPT: &[&str] = &[
    "source", "model", "since", "until", "text", "repo", "kind", "live", "limit",
];

/// `GET /transcripts`: main and subagent transcripts, newest first, paged,
/// narrowed by `transcript list`'s filters (a plain GET form).
pub(super) async fn transcripts(
    State(state): State<Arc<AppState>>,
    Query(pairs): Query<Vec<(String, String)>>,
) -> Result<Response, Refusal> {
    let (q, opts) = api::transcript_list_options(pairs, &state.project, state.scope)?;
    let (offset, limit) = (opts.offset, opts.limit.unwrap_or(50));
    let form = ListForm::of(&q);
    let listing = read_listing(&state, opts, limit).await?;
    render(&list_page(&state, form, &listing, offset, limit))
}

/// The list's filters as its form shows them and its paging links keep
/// them.
struct ListForm {
    /// `key=value&` for each filter given, and the page's size.
    kept: String,
    /// Some filter narrows the list.
    filtered: bool,
    source: String,
    kind: String,
    model: String,
    since: String,
    until: String,
    text: String,
    repo: String,
    live_only: bool,
}

impl ListForm {
    fn of(q: &HashMap<String, String>) -> ListForm {
        let given = |k: &str| {
            q.get(k)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
        };
        ListForm {
            kept: KEPT
                .iter()
                .filter_map(|k| given(k).map(|v| format!("{k}={}&", enc(&v))))
                .collect(),
            filtered: FILTERS.iter().any(|k| given(k).is_some()),
            source: given("source").unwrap_or_default().to_ascii_lowercase(),
            kind: given("kind").unwrap_or_default(),
            model: given("model").unwrap_or_default(),
            since: given("since").unwrap_or_default(),
            until: given("until").unwrap_or_default(),
            text: given("text").unwrap_or_default(),
            repo: given("repo").unwrap_or_default(),
            live_only: given("live").is_some(),
        }
    }
}

/// The page's transcripts and one more, which tells whether a next page
/// exists, from the server's scope (under `serve --team`, every
/// machine's).
async fn read_listing(
    state: &Arc<AppState>,
    opts: transcript::ListOptions,
    limit: usize,
) -> Result<Transcripts, Refusal> {
    let scope = state.scope;
    blocking(state, move |p| {
        let mut opts = opts;
        // One more than shown, to know whether there is a next page.
        opts.limit = Some(limit + 1);
        Ok(logbook::ops::transcript::listing::listed(p, scope, &opts)?)
    })
    .await
}

fn list_page(
    state: &AppState,
    form: ListForm,
    listing: &Transcripts,
    offset: usize,
    limit: usize,
) -> TranscriptsPage {
    let more = listing.rows.len() > limit;
    let own = state.project.config.origin();
    let rows: Vec<TranscriptRow> = listing
        .rows
        .iter()
        .take(limit)
        .map(|r| {
            let mut row = transcript_row(&r.summary, r.live);
            row.origin = r.origin.clone().filter(|o| *o != own).unwrap_or_default();
            // A fork shows under its parent as a subagent does: the same
            // column, marked as a fork.
            if let Some(parent) = r.fork_of.as_deref().filter(|_| row.parent.is_empty()) {
                row.parent = parent.to_string();
                row.parent_short = parent.chars().take(8).collect();
                row.parent_href = format!("/transcripts/{}", enc(parent));
                row.fork = true;
            }
            row
        })
        .collect();
    let kept = &form.kept;
    let href = |o: usize| format!("/transcripts?{kept}offset={o}");
    let mut layout = Layout::new(state, "Transcripts", "transcripts");
    // The list follows what it lists: sessions that grow, start and end.
    layout.live = format!("/api/live?view=transcripts&{kept}offset={offset}");
    TranscriptsPage {
        layout,
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
        sources: choices(&form.source, SOURCES),
        kinds: choices(&form.kind, KINDS),
        model: form.model,
        since: form.since,
        until: form.until,
        text: form.text,
        repo: form.repo,
        filtered: form.filtered,
        live_only: form.live_only,
    }
}

const SOURCES: &[(&str, &str)] = &[
    ("", "Any agent"),
    ("claude-code", "Claude Code"),
    ("codex", "Codex"),
    ("logbook", "seed 003"),
];

const KINDS: &[(&str, &str)] = &[
    ("", "Main and subagents"),
    ("main", "Main"),
    ("subagent", "Subagents"),
];

fn choices(on: &str, all: &[(&'static str, &'static str)]) -> Vec<Choice> {
    all.iter()
        .map(|(value, label)| Choice {
            value,
            label,
            on: *value == on,
        })
        .collect()
}

fn transcript_row(t: &Summary, live: bool) -> TranscriptRow {
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
        parent_href: t
            .parent_session_id
            .as_deref()
            .map(|p| format!("/transcripts/{}", enc(p)))
            .unwrap_or_default(),
        fork: false,
        origin: String::new(),
        live,
        follow: format!(
            "/transcripts/{}?at={last}#m{last}",
            enc(&t.id),
            last = t.messages.saturating_sub(1)
        ),
    }
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
    /// The session it was forked from, and the transcripts forked from it.
    forks: ForkLinks,
    run: String,
    turns: Vec<Turn>,
    /// How many of the page's turns were left out before `turns`
    /// (`?turns_from=K`, a live page's refresh).
    turns_from: usize,
    /// How many messages the transcript holds.
    total: usize,
    /// `messages 201–400 of 1,234`.
    shown: String,
    page_size: usize,
    pager: Pager,
    find: Option<super::transcript_find::FindBar>,
    /// An agent is writing it now: the page follows it.
    live: bool,
    /// Links kept as text (the shared page's turns; never here).
    inert: bool,
}

/// The links between a transcript's pages; empty where there is none.
struct Pager {
    first: String,
    prev: String,
    next: String,
    last: String,
}

/// How many messages one page of a transcript shows.
pub(crate) const PAGE_MESSAGES: usize = 200;

/// How many messages are read before and after a page, to pair its tool
/// calls and results across its edges (a result a few messages after its
/// call is the rule; further than this shows as pending or orphan).
const AROUND: usize = 50;

/// The first message of the page a query asks for, and the message asked
/// for if any: `?at=N` (0-based message index, the page holding it; the
/// link shape `?at=N#mN` lands on it) or `?page=K` (1-based). Neither: the first page. Not a whole
/// number, page 0 or both given: 400. Beyond the end is clamped later.
fn page_start(q: &HashMap<String, String>) -> Result<(usize, Option<usize>), Refusal> {
    match (api::number(q, "at")?, api::number(q, "page")?) {
        (Some(_), Some(_)) => Err(Refusal::BadRequest(
            "give at (a message index) or page, not both".into(),
        )),
        (Some(at), None) => Ok((at / PAGE_MESSAGES * PAGE_MESSAGES, Some(at))),
        (None, Some(0)) => Err(Refusal::BadRequest("page counts from 1".into())),
        (None, Some(k)) => Ok(((k - 1).saturating_mul(PAGE_MESSAGES), None)),
        (None, None) => Ok((0, None)),
    }
}

/// `GET /transcripts/{id}`: one page of the messages (`?at=N`, `?page=K`),
/// read from the file without the others, so a session of hundreds of MiB
/// opens as fast as a small one.
pub(super) async fn transcript_page(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    Query(pairs): Query<Vec<(String, String)>>,
) -> Result<Response, Refusal> {
    let request = PageRequest::parse(&id, pairs)?;
    let keep = request.keep();
    let turns_from = request.turns_from;
    let read = read_page(&state, request).await?;
    let mut page = transcript_page_of(&state, read, &keep);
    // A live page asks only for its last turn and what came after it: a
    // hundred pages that follow a session then each take a few turns, not
    // the whole page, when it grows.
    page.turns_from = turns_from.min(page.turns.len());
    page.turns.drain(..page.turns_from);
    render(&page)
}

/// One page of a transcript as asked for.
struct PageRequest {
    id: String,
    /// The first message of the page asked for (clamped when read).
    start: usize,
    /// The message asked for, if any.
    at: Option<usize>,
    /// The words of the find bar, or empty.
    words: String,
    /// The first of the page's turns to show (`turns_from`; 0: all).
    turns_from: usize,
}

impl PageRequest {
    fn parse(id: &str, pairs: Vec<(String, String)>) -> Result<PageRequest, Refusal> {
        let q = api::once(pairs, &["at", "page", "turns_from"])?;
        let id = transcript_id(id)?;
        let (start, at) = page_start(&q)?;
        let words = super::transcript_find::words(&q)?;
        Ok(PageRequest {
            id,
            start,
            at,
            words,
            turns_from: api::number(&q, "turns_from")?.unwrap_or(0),
        })
    }

    /// What the pager's links keep of the request: the words looked for.
    fn keep(&self) -> String {
        if self.words.is_empty() {
            String::new()
        } else {
            format!("&find={}", enc(&self.words))
        }
    }
}

/// A page of a transcript as read: its window of messages (with those
/// around it), where the page starts, what its turns link to, its find bar
/// and whether an agent is writing it now.
struct PageRead {
    stored: transcript::StoredWindow,
    start: usize,
    extras: view::transcript::Extras,
    find: Option<super::transcript_find::FindBar>,
    live: bool,
    forks: transcript::listing::Forks,
}

async fn read_page(state: &Arc<AppState>, request: PageRequest) -> Result<PageRead, Refusal> {
    let PageRequest {
        id,
        mut start,
        at,
        words,
        turns_from,
    } = request;
    let scope = state.scope;
    blocking(state, move |p| {
        let read = |start: usize| {
            let from = start.saturating_sub(AROUND);
            let count = (start - from).saturating_add(PAGE_MESSAGES + AROUND);
            transcript::load_window(p, &id, from, count, transcript::WindowStop::Early)
        };
        let mut stored = read(start)?;
        let total = stored.window.total;
        // Past the end (a link made when the session was shorter): its
        // last page, or the first of a session without messages.
        if start > 0 && start >= total {
            start = total.saturating_sub(1) / PAGE_MESSAGES * PAGE_MESSAGES;
            stored = read(start)?;
        }
        let w = &stored.window;
        let extras = view::transcript::Extras {
            charged: transcript::links::charged_in(&w.transcript, w.from, w.total),
            subagents: transcript::links::subagents(p, &w.transcript),
        };
        // The bar's "next" links go on from the message asked for, or
        // from the page's first.
        let shown = at.or(start.checked_sub(1));
        let find = super::transcript_find::bar(p, &w.transcript.id, shown, words)?;
        let live = !stored.archived && transcript::live::watch(p, &w.transcript.id)?.live;
        // By the listing's rule, as `transcript list --json` says forkOf;
        // a live page's refresh (only new turns) leaves them out.
        let forks = if turns_from == 0 {
            transcript::listing::forks(p, scope, &w.transcript.id)?
        } else {
            Default::default()
        };
        Ok(PageRead {
            stored,
            start,
            extras,
            find,
            live,
            forks,
        })
    })
    .await
}

fn transcript_page_of(state: &AppState, read: PageRead, keep: &str) -> TranscriptPage {
    let PageRead {
        stored,
        start,
        extras,
        find,
        live,
        forks,
    } = read;
    let w = &stored.window;
    let t = &w.transcript;
    let total = w.total;
    let at = start.saturating_sub(w.from);
    let turns = view::transcript::page_turns(&t.messages, w.from, at..at + PAGE_MESSAGES, &extras);
    let end = (start + PAGE_MESSAGES).min(total);
    let mut layout = Layout::new(state, format!("Transcript {}", t.id), "transcripts");
    if live {
        // Until it ends: the page then stops listening (see `live`).
        layout.live = format!("/api/live?view=transcript&id={}", enc(&t.id));
    }
    TranscriptPage {
        layout,
        id: t.id.clone(),
        kind: stored.kind.as_str().to_string(),
        workdir: t.metadata.workdir.clone(),
        started: when(&t.metadata.started_at),
        active: when(&t.metadata.last_active_at),
        tokens: thousands(t.metadata.latest_total_tokens),
        parent: t.metadata.parent_session_id.clone().unwrap_or_default(),
        forks: ForkLinks::of(&forks, &state.project.config.origin()),
        run: t
            .run_id()
            .and_then(|r| run_id(r).ok())
            .map(|r| r.to_string())
            .unwrap_or_default(),
        turns,
        turns_from: 0,
        shown: format!(
            "messages {}–{} of {}",
            thousands((start + 1) as u64),
            thousands(end as u64),
            thousands(total as u64)
        ),
        page_size: PAGE_MESSAGES,
        pager: Pager::of(&t.id, start, total, keep),
        total,
        find,
        live,
        inert: false,
    }
}

impl Pager {
    /// The links around the page starting at `start` of a transcript of
    /// `total` messages, each keeping `keep`.
    fn of(id: &str, start: usize, total: usize, keep: &str) -> Pager {
        let end = (start + PAGE_MESSAGES).min(total);
        let href = |k: usize| {
            format!(
                "/transcripts/{}?page={}{keep}",
                enc(id),
                k / PAGE_MESSAGES + 1
            )
        };
        let last = total.saturating_sub(1) / PAGE_MESSAGES * PAGE_MESSAGES;
        Pager {
            first: if start > 0 { href(0) } else { String::new() },
            prev: if start > 0 {
                href(start - PAGE_MESSAGES)
            } else {
                String::new()
            },
            next: if end < total {
                href(end)
            } else {
                String::new()
            },
            last: if start < last {
                href(last)
            } else {
                String::new()
            },
        }
    }
}

/// A transcript's links to the session it was forked from and to its
/// forks, each its title (else its id) and its page; a transcript not
/// stored here (not imported, another machine's) is named, not linked.
#[derive(Default)]
struct ForkLinks {
    /// "forked from …", or `None` for a transcript that is not a fork.
    of: Option<ForkLink>,
    /// Its forks, newest first.
    forks: Vec<ForkLink>,
}

/// One end of a fork link.
struct ForkLink {
    id: String,
    title: String,
    /// Its page, or empty when it has none here.
    href: String,
}

impl ForkLinks {
    fn of(f: &transcript::listing::Forks, own: &str) -> ForkLinks {
        let link = |id: &str, row: Option<&logbook::ops::query::TranscriptRow>| ForkLink {
            id: id.to_string(),
            title: row.map(|r| r.summary.title.clone()).unwrap_or_default(),
            href: row
                .filter(|r| r.origin.as_deref().is_none_or(|o| o == own))
                .map(|r| format!("/transcripts/{}", enc(&r.summary.id)))
                .unwrap_or_default(),
        };
        ForkLinks {
            of: f.fork_of.as_deref().map(|id| link(id, f.parent.as_ref())),
            forks: f
                .forks
                .iter()
                .map(|r| link(&r.summary.id, Some(r)))
                .collect(),
        }
    }
}
