//! Live updates: `GET /api/live?view=…` is a server-sent event stream that
//! sends a short stamp of what a page shows whenever it changes (checked
//! every second through the same `ops` calls the page makes, so records
//! other processes create or change are seen without a restart). The
//! page's script fetches the page again when the stamp moves: what it
//! shows is always the page's own rendering, escaped and sanitized as the
//! page is, never a second path. `once=1` answers one stamp as plain text
//! for clients that poll instead.
//!
//! A transcript's stream (`view=transcript`) follows a live session: its
//! stamp moves as the session grows, and once the session is over
//! ([`logbook::ops::transcript::live`]) it says so (`… ended`) and ends;
//! the page then stops listening.
//!
//! Bounds: the streams are read-only GETs under the viewer's guard, and a
//! browser page of another origin is refused (403). Each stream holds one
//! task and a channel of at most [`QUEUED`] stamps; a stamp is computed
//! once a second per view however many pages watch it ([`Stamps`]); at
//! most [`MAX_STREAMS`] are open at once (503 beyond, and the browser
//! retries); a stream whose client stops reading (its queue full) is
//! dropped, and every stream ends after [`LIFETIME`], which the browser's
//! `EventSource` reconnects by itself, so a page that went away unnoticed
//! costs the server that long at most.

use std::collections::HashMap;
use std::convert::Infallible;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{Query, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use logbook::Logbook;
use logbook::ops::query::{self, FindOptions, Scope};
use logbook::ops::transcript::{self, UsageBy, UsageScope};
use logbook::ops::{budget, work_session, workflow};

use crate::AppState;
use crate::api::{self, run_ref, session_id, transcript_id};
use crate::guard::Refusal;

/// How often a stream looks for a change.
const EVERY: Duration = Duration::from_secs(1);

/// How long one stream lasts before the browser reconnects.
const LIFETIME: Duration = Duration::from_secs(5 * 60);

/// How many stamps wait for a client before it counts as not reading.
const QUEUED: usize = 4;

/// How many streams one server keeps open at once.
pub(crate) const MAX_STREAMS: usize = 512;

/// How long a browser waits before it reconnects a stream that ended.
const RETRY: Duration = Duration::from_secs(2);

pub(crate) fn routes() -> Router<Arc<AppState>> {
    Router::new().route("/api/live", get(live))
}

/// What a stream watches.
#[derive(Debug, Clone)]
enum Watch {
    List(Box<logbook::model::query::RunQuery>),
    Run(logbook::model::ids::RunRef),
    Session(String),
    Workflow(String),
    Transcript(String),
    Transcripts(Box<transcript::ListOptions>),
    Usage(Box<logbook::model::transcript::Filter>),
}

fn watch_of(q: &HashMap<String, String>, state: &AppState) -> Result<Watch, Refusal> {
    let now = state.project.clock.now();
    let id = || q.get("id").map(String::as_str).unwrap_or_default();
    match q.get("view").map(String::as_str) {
        Some("list") | None => Ok(Watch::List(Box::new(api::run_query(q, now)?))),
        Some("run") => Ok(Watch::Run(run_ref(id())?)),
        Some("session") => Ok(Watch::Session(session_id(id())?)),
        Some("workflow") => Ok(Watch::Workflow(session_id(id())?)),
        Some("transcript") => Ok(Watch::Transcript(transcript_id(id())?)),
        Some("transcripts") => Ok(Watch::Transcripts(Box::new(api::transcript_options(
            q,
            &state.project,
            state.scope,
        )?))),
        Some("usage") => Ok(Watch::Usage(Box::new(api::usage_params(q, now)?.1))),
        Some(_) => Err(Refusal::NotFound),
    }
}

/// What a page shows, reduced to a stamp that moves when it does; `over`
/// once a transcript is no longer live (its stream then ends).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stamp {
    hash: String,
    over: bool,
}

impl Stamp {
    /// The event's data: the hash, and `ended` once over.
    fn data(&self) -> String {
        if self.over {
            format!("{} ended", self.hash)
        } else {
            self.hash.clone()
        }
    }
}

fn hash_json(value: &impl serde::Serialize, h: &mut DefaultHasher) {
    serde_json::to_string(value).unwrap_or_default().hash(h);
}

/// A stamp of what `w` shows now, read in `scope` as the page it watches
/// reads (the server's: `serve --team` watches the catalog).
fn stamp(p: &Logbook, scope: Scope, w: &Watch) -> Stamp {
    let mut h = DefaultHasher::new();
    let mut over = false;
    match w {
        Watch::List(query) => hash_list(p, scope, query, &mut h),
        Watch::Run(id) => hash_run(p, scope, id, &mut h),
        Watch::Session(id) => hash_session(p, id, &mut h),
        Watch::Workflow(id) => match workflow::load(p, Some(id)) {
            Ok(l) => (l.state.version, &l.state.updated_at).hash(&mut h),
            Err(e) => e.to_string().hash(&mut h),
        },
        Watch::Transcript(id) => over = hash_transcript(p, id, &mut h),
        Watch::Transcripts(opts) => hash_transcripts(p, scope, opts, &mut h),
        Watch::Usage(filter) => hash_usage(p, scope, filter, &mut h),
    }
    Stamp {
        hash: format!("{:016x}", h.finish()),
        over,
    }
}

/// The run list's page: how many match and the runs on it.
fn hash_list(
    p: &Logbook,
    scope: Scope,
    query: &logbook::model::query::RunQuery,
    h: &mut DefaultHasher,
) {
    match query::find(p, query, FindOptions::new(scope)) {
        Ok(page) => {
            page.total.hash(h);
            for hit in &page.hits {
                hash_json(&hit.run.manifest, h);
            }
        }
        Err(e) => e.to_string().hash(h),
    }
}

/// A run's manifest and the tree its page shows.
fn hash_run(p: &Logbook, scope: Scope, id: &logbook::model::ids::RunRef, h: &mut DefaultHasher) {
    let shown = query::backend(p, scope).and_then(|b| b.show(id));
    match &shown {
        Ok(r) => hash_json(&r.run.manifest, h),
        Err(e) => e.to_string().hash(h),
    }
    // The tree the run page shows: another machine's run's outputs.
    if let Ok(tree) = shown.and_then(|r| query::tree(p, &r)) {
        for e in &tree.entries {
            (&e.path, e.size).hash(h);
        }
    }
}

/// A work session, and which of its agents' sessions are live: they start
/// and end without the work session being written.
fn hash_session(p: &Logbook, id: &str, h: &mut DefaultHasher) {
    match work_session::get(p, Some(id)) {
        Ok(s) => {
            hash_json(&s, h);
            let ids = s.agent_sessions.iter().map(|a| a.session_id.as_str());
            transcript::live::live_among(p, ids).hash(h);
        }
        Err(e) => e.to_string().hash(h),
    }
}

/// A transcript as it grows; whether it is over (no longer live, or gone).
fn hash_transcript(p: &Logbook, id: &str, h: &mut DefaultHasher) -> bool {
    match transcript::live::watch(p, id) {
        Ok(w) => {
            w.hash(h);
            !w.live
        }
        Err(e) => {
            e.to_string().hash(h);
            true
        }
    }
}

/// The transcript list: each transcript's length and last activity, and
/// which are live.
fn hash_transcripts(
    p: &Logbook,
    scope: Scope,
    opts: &transcript::ListOptions,
    h: &mut DefaultHasher,
) {
    match query::backend(p, scope).and_then(|b| b.transcripts(opts)) {
        Ok(l) => {
            for r in &l.rows {
                let t = &r.summary;
                (&t.id, t.messages, &t.last_active_at, r.live).hash(h);
            }
        }
        Err(e) => e.to_string().hash(h),
    }
}

/// The usage page's reports and the budgets drawn from them.
fn hash_usage(
    p: &Logbook,
    scope: Scope,
    filter: &logbook::model::transcript::Filter,
    h: &mut DefaultHasher,
) {
    let by = [UsageBy::Day, UsageBy::Repo];
    let reports =
        query::backend(p, scope).and_then(|b| b.usage_grouped(&UsageScope::All, &by, filter));
    match reports {
        Ok(reports) => {
            for r in &reports {
                hash_json(r, h);
            }
            if let Some(day) = reports.first().filter(|_| !scope.is_remote()) {
                budget::budgets(p, day)
                    .map(|b| hash_json(&b, h))
                    .unwrap_or_else(|e| e.to_string().hash(h));
            }
        }
        Err(e) => e.to_string().hash(h),
    }
}

/// The stamps computed in the last second, by view: a hundred pages of one
/// session cost one look a second, not a hundred.
#[derive(Debug)]
pub(crate) struct Stamps {
    fresh: Mutex<HashMap<String, (Instant, Stamp)>>,
    /// Streams open now.
    open: AtomicUsize,
    /// Looks under way at once. Without it, a hundred streams that find
    /// their shared stamp stale in the same instant each took a look of
    /// their own, on a hundred blocking threads, each with its index
    /// connection: that, not the pages, was the memory a hundred live
    /// pages cost.
    looks: tokio::sync::Semaphore,
}

/// How many stamps are computed at once.
const LOOKS: usize = 2;

impl Default for Stamps {
    fn default() -> Stamps {
        Stamps {
            fresh: Mutex::default(),
            open: AtomicUsize::new(0),
            looks: tokio::sync::Semaphore::new(LOOKS),
        }
    }
}

/// How many views' stamps are kept before the stale ones are dropped.
const KEPT_STAMPS: usize = 256;

impl Stamps {
    fn get(&self, key: &str) -> Option<Stamp> {
        let fresh = self.fresh.lock().unwrap_or_else(|e| e.into_inner());
        fresh
            .get(key)
            .filter(|(at, _)| at.elapsed() < EVERY)
            .map(|(_, s)| s.clone())
    }

    fn put(&self, key: String, stamp: Stamp) {
        let mut fresh = self.fresh.lock().unwrap_or_else(|e| e.into_inner());
        if fresh.len() >= KEPT_STAMPS {
            fresh.retain(|_, (at, _)| at.elapsed() < EVERY);
            if fresh.len() >= KEPT_STAMPS {
                fresh.clear();
            }
        }
        fresh.insert(key, (Instant::now(), stamp));
    }
}

/// One open stream, counted while it lives.
struct Open(Arc<AppState>);

impl Open {
    fn new(state: &Arc<AppState>) -> Option<Open> {
        let was = state.stamps.open.fetch_add(1, Ordering::SeqCst);
        let open = Open(state.clone());
        (was < MAX_STREAMS).then_some(open)
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        self.0.stamps.open.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The stamp of `watch` now, from the shared ones when fresh.
async fn current(state: &Arc<AppState>, key: &str, watch: &Watch) -> Option<Stamp> {
    if let Some(s) = state.stamps.get(key) {
        return Some(s);
    }
    let _look = state.stamps.looks.acquire().await.ok()?;
    // Another stream of the view may have looked while this one waited.
    if let Some(s) = state.stamps.get(key) {
        return Some(s);
    }
    let (s, w) = (state.clone(), watch.clone());
    let now = tokio::task::spawn_blocking(move || stamp(&s.project.for_call(), s.scope, &w))
        .await
        .ok()?;
    state.stamps.put(key.to_string(), now.clone());
    Some(now)
}

/// The key of a view in [`Stamps`]: its query, sorted, `once` aside.
fn key_of(q: &HashMap<String, String>) -> String {
    let mut pairs: Vec<(&String, &String)> = q.iter().filter(|(k, _)| *k != "once").collect();
    pairs.sort();
    format!("{pairs:?}")
}

/// `GET /api/live?view=list|run|session|workflow|transcript|transcripts|usage[&id=…][&filters]`.
async fn live(
    State(state): State<Arc<AppState>>,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Response, Refusal> {
    let watch = watch_of(&q, &state)?;
    let key = key_of(&q);
    if q.get("once").is_some_and(|v| v == "1") {
        let stamp = current(&state, &key, &watch)
            .await
            .ok_or(Refusal::Internal)?;
        return Ok(stamp.data().into_response());
    }
    let Some(open) = Open::new(&state) else {
        return Err(Refusal::Busy);
    };
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Event, Infallible>>(QUEUED);
    tokio::spawn(async move {
        let _open = open;
        let until = Instant::now() + LIFETIME;
        let mut last = None;
        let mut first = true;
        while !tx.is_closed() && Instant::now() < until {
            let Some(now) = current(&state, &key, &watch).await else {
                break;
            };
            if last.as_ref() != Some(&now) {
                let mut event = Event::default().data(now.data());
                if first {
                    event = event.retry(RETRY);
                    first = false;
                }
                // A client that does not read is let go, not waited for.
                if tx.try_send(Ok(event)).is_err() || now.over {
                    break;
                }
                last = Some(now);
            }
            tokio::time::sleep(EVERY).await;
        }
    });
    let stream = tokio_stream::wrappers::ReceiverStream::new(rx);
    Ok(Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response())
}
