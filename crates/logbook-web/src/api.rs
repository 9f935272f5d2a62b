//! The JSON API of docs/interface.md's "HTTP" part. Each handler is one `ops`
//! call (in a blocking task: the index and the files are synchronous) and
//! answers with the shape the CLI's `--json` prints for the same operation.

use std::collections::HashMap;
use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use logbook::clock::{self, Timestamp};
use logbook::model::ids::{RunId, RunRef};
use logbook::model::query::RunQuery;
use logbook::ops::params::{self, FindParams};
use logbook::ops::query::{self, FindOptions, Scope};
use logbook::ops::transcript::listing::{self, Caller, ListRequest};
use logbook::ops::{transcript, work_session, workflow};
use serde_json::Value;

use crate::AppState;
use crate::files;
use crate::guard::Refusal;

pub(crate) fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/api/runs", get(runs))
        .route("/api/runs/{id}", get(run_show))
        .route("/api/runs/{id}/tree", get(run_tree))
        .route("/api/runs/{id}/lineage", get(run_lineage))
        .route("/api/runs/{id}/files/{*path}", get(files::raw))
        .route("/api/sessions", get(sessions))
        .route("/api/sessions/{id}", get(session))
        .route("/api/sessions/{id}/workflow", get(session_workflow))
        .route("/api/transcripts", get(transcripts))
        .route("/api/transcripts/{id}", get(transcript_show))
        .route("/api/usage", get(usage))
        .route("/api/transcripts/{id}/find", get(transcript_find))
}

/// Runs `f` on the blocking pool with the project, in a context of its own
/// whose notices go with it: the viewer shows none, and a shared sink would
/// keep every request's.
pub(crate) async fn blocking<T: Send + 'static>(
    state: &Arc<AppState>,
    f: impl FnOnce(&logbook::Logbook) -> Result<T, Refusal> + Send + 'static,
) -> Result<T, Refusal> {
    // A hundred live pages fetch themselves at once when their session
    // grows: at most a few read and render at a time, so the memory they
    // hold together stays that of a few pages.
    let _turn = state
        .renders
        .acquire()
        .await
        .map_err(|_| Refusal::Internal)?;
    let state = state.clone();
    tokio::task::spawn_blocking(move || f(&state.project.for_call()))
        .await
        .map_err(|_| Refusal::Internal)?
}

/// A stored run id (a link's target): a whole UUID, nothing else.
pub(crate) fn run_id(text: &str) -> Result<RunId, Refusal> {
    RunId::parse(text).map_err(|_| Refusal::NotFound)
}

/// A run named in a URL: a whole UUID or a unique prefix, as every face
/// reads one ([`RunRef`]); nothing else (no paths).
pub(crate) fn run_ref(text: &str) -> Result<RunRef, Refusal> {
    RunRef::parse(text).map_err(|_| Refusal::NotFound)
}

/// A paging number of a query string (`limit`, `offset`, a page), checked
/// as the CLI's: digits only, not trimmed (`at=%205`, `at=+5` are
/// refused); absent or empty is `None`.
pub(crate) fn number(
    q: &HashMap<String, String>,
    key: &'static str,
) -> Result<Option<usize>, Refusal> {
    q.get(key)
        .filter(|s| !s.is_empty())
        .map(|s| params::paging(key, s))
        .transpose()
        .map_err(|e| Refusal::from_query_error(&e))
}

/// A query string's pairs as a map, refusing any of `once` given twice:
/// which of two `at`s is meant cannot be told, and taking either shows a
/// page nobody asked for.
pub(crate) fn once(
    pairs: Vec<(String, String)>,
    once: &[&str],
) -> Result<HashMap<String, String>, Refusal> {
    let mut q = HashMap::new();
    for (k, v) in pairs {
        if once.contains(&k.as_str()) && q.contains_key(&k) {
            return Err(Refusal::BadRequest(format!("give {k} once")));
        }
        q.insert(k, v);
    }
    Ok(q)
}

fn param(q: &HashMap<String, String>, key: &str) -> Option<String> {
    q.get(key)
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// The [`RunQuery`] of the run list's and `/api/runs`' query string,
/// checked by the library as the CLI's and MCP's are; a page is at most
/// [`query::MAX_PAGE`] runs.
pub(crate) fn run_query(q: &HashMap<String, String>, now: Timestamp) -> Result<RunQuery, Refusal> {
    let mut query = FindParams {
        agent: param(q, "agent"),
        workflow: param(q, "workflow"),
        status: param(q, "status"),
        user: param(q, "user"),
        tag: param(q, "tag"),
        since: param(q, "since"),
        text: param(q, "q"),
        limit: param(q, "limit"),
        offset: param(q, "offset"),
        // A page names a remote URL only: it may not probe folders.
        repo: param(q, "repo"),
        repo_base: params::RepoBase::UrlsOnly,
        archived: param(q, "archived").is_some_and(|v| v != "0" && v != "false"),
    }
    .query(now)
    .map_err(|e| Refusal::from_query_error(&e))?;
    query.limit = Some(query::page_size(query.limit));
    Ok(query)
}

/// `GET /api/runs`: an array as `find --json`, newest first; the total
/// number of matches in `X-Total-Count` (a lower bound when
/// `X-Logbook-Total-Exact` is `false`: a text query is counted only so far),
/// and, when the array is cut, where the next page begins in
/// `X-Logbook-Next-Offset`.
async fn runs(
    State(state): State<Arc<AppState>>,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Response, Refusal> {
    let query = run_query(&q, state.project.clock.now())?;
    let scope = state.scope;
    let found = blocking(&state, move |p| {
        let now = p.clock.now();
        let page = query::find(
            p,
            &query,
            FindOptions {
                now: Some(now),
                ..FindOptions::new(scope)
            },
        )
        .map_err(|e| Refusal::from_query_error(&e))?;
        let next = page.next_offset(query.offset);
        Ok((
            page.json(now)?,
            page.total,
            page.exact,
            next,
            page.archived,
            page.partial,
        ))
    })
    .await?;
    let (found, total, exact, next, archived, partial) = found;
    let mut r = Json(found).into_response();
    let headers = r.headers_mut();
    headers.insert("x-total-count", HeaderValue::from(total));
    headers.insert(
        "x-logbook-total-exact",
        HeaderValue::from_static(if exact { "true" } else { "false" }),
    );
    if let Some(next) = next {
        headers.insert("x-logbook-next-offset", HeaderValue::from(next));
    }
    // How many archived runs match too, left out (`archived=1` lists them).
    headers.insert("x-logbook-archived", HeaderValue::from(archived));
    flag_partial(&mut r, partial);
    Ok(r)
}

/// Sets `X-Logbook-Partial` (`text 41%`) on a text answer given while the
/// full-text index is still being built: the matches may be short.
pub(crate) fn flag_partial(r: &mut Response, progress: Option<logbook::ops::index::TextProgress>) {
    if let Some(progress) = progress
        && let Ok(value) = HeaderValue::from_str(&progress.to_string())
    {
        r.headers_mut().insert("x-logbook-partial", value);
    }
}

/// `GET /api/runs/{id}`: what `run show --json` prints (plus `"origin"`
/// under `serve --team`); the id may be a unique prefix, as in the CLI.
async fn run_show(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Response, Refusal> {
    let id = run_ref(&id)?;
    let scope = state.scope;
    let entry = blocking(&state, move |p| {
        Ok(query::backend(p, scope)?.show(&id)?.json(p.clock.now())?)
    })
    .await?;
    Ok(Json(entry).into_response())
}

/// `GET /api/runs/{uuid}/tree`: the run's files, `manifest.json` hidden;
/// under `serve --team`, the run as the catalog knows it (another
/// machine's run lists its registered outputs, as its page does).
async fn run_tree(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Response, Refusal> {
    let id = run_ref(&id)?;
    let scope = state.scope;
    let tree = blocking(&state, move |p| {
        let shown = query::backend(p, scope)?.show(&id)?;
        Ok(query::tree(p, &shown)?)
    })
    .await?;
    Ok(Json(tree).into_response())
}

/// `GET /api/runs/{uuid}/lineage`: what `lineage --format json` prints.
async fn run_lineage(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Response, Refusal> {
    let id = run_ref(&id)?;
    let scope = state.scope;
    let graph = blocking(&state, move |p| {
        Ok(query::backend(p, scope)?
            .lineage(&id, &clock::local_zone())?
            .json()?)
    })
    .await?;
    Ok(Json(graph).into_response())
}

/// `GET /api/sessions`: what `list --json` prints.
async fn sessions(State(state): State<Arc<AppState>>) -> Result<Response, Refusal> {
    let json = blocking(&state, |p| {
        Ok(work_session::listing_json(
            &work_session::list(p)?,
            true,
            true,
        )?)
    })
    .await?;
    Ok(Json(json).into_response())
}

/// A work session id from a URL: checked before it names a file.
pub(crate) fn session_id(text: &str) -> Result<String, Refusal> {
    logbook::model::ids::WorkSessionId::parse(text)
        .map(|id| id.to_string())
        .map_err(|_| Refusal::NotFound)
}

/// `GET /api/sessions/{id}`: what `status ID --json` prints.
async fn session(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Response, Refusal> {
    let id = session_id(&id)?;
    let json = blocking(&state, move |p| {
        Ok(work_session::get(p, Some(&id))?.to_json()?)
    })
    .await?;
    Ok(Json(json).into_response())
}

/// `GET /api/sessions/{id}/workflow`: what `workflow show --json` prints;
/// `?full=1` adds `fullHistory` as `--full` does.
async fn session_workflow(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Response, Refusal> {
    let id = session_id(&id)?;
    let full = q
        .get("full")
        .is_some_and(|v| matches!(v.as_str(), "1" | "true" | "yes"));
    let json = blocking(&state, move |p| {
        let loaded = workflow::load(p, Some(&id))?;
        let history = full.then(|| workflow::full_history_lenient(&loaded).0);
        Ok(workflow::loaded_json(&loaded, history.as_deref())?)
    })
    .await?;
    Ok(Json(json).into_response())
}

/// The transcript listing options of a query string (`kind=main|subagent`,
/// `limit`, `offset`, and `transcript list`'s filters `source`, `model`,
/// `since`, `until`, `text`, `repo`, and `live=1` for the live ones only),
/// resolved by the library as the CLI's and MCP's are: every workdir, as
/// `--all`, in the server's scope; a page is at most [`query::MAX_PAGE`].
pub(crate) fn transcript_options(
    q: &HashMap<String, String>,
    p: &logbook::Logbook,
    scope: Scope,
) -> Result<transcript::ListOptions, Refusal> {
    let (main, subagents) = match param(q, "kind").as_deref() {
        None => (false, false),
        Some("main") => (true, false),
        Some("subagent") => (false, true),
        Some(_) => return Err(Refusal::BadRequest("kind is main or subagent".into())),
    };
    let live = match param(q, "live").as_deref() {
        None => false,
        Some("1") => true,
        Some(_) => {
            return Err(Refusal::BadRequest(
                "live is 1 (only the sessions an agent is writing now) or left out".into(),
            ));
        }
    };
    let request = ListRequest {
        all: true,
        workdir: None,
        repo: param(q, "repo"),
        filters: params::TranscriptParams {
            source: param(q, "source"),
            model: param(q, "model"),
            since: param(q, "since"),
            until: param(q, "until"),
            text: param(q, "text"),
        },
        main,
        subagents,
        limit: Some(query::page_size(number(q, "limit")?) as u64),
        offset: number(q, "offset")?.unwrap_or(0) as u64,
        live,
        scope,
    };
    request
        .resolve(p, &Caller::Browser)
        .map_err(|e| Refusal::from_query_error(&e))
}

/// The transcript listing options of a list's query string, paged as the
/// list page and `/api/transcripts` both page it: `page` (1-based, as a
/// transcript's page reads it, so a link written for one is not silently
/// the first page of the other) or `offset`, not both; each paging key once.
pub(crate) fn transcript_list_options(
    pairs: Vec<(String, String)>,
    p: &logbook::Logbook,
    scope: Scope,
) -> Result<(HashMap<String, String>, transcript::ListOptions), Refusal> {
    let q = once(pairs, &["page", "offset", "limit", "live"])?;
    let mut opts = transcript_options(&q, p, scope)?;
    match (number(&q, "page")?, q.contains_key("offset")) {
        (Some(_), true) => {
            return Err(Refusal::BadRequest("give offset or page, not both".into()));
        }
        (Some(0), false) => return Err(Refusal::BadRequest("page counts from 1".into())),
        (Some(k), false) => {
            let size = opts.limit.unwrap_or(query::DEFAULT_PAGE);
            opts.offset = (k - 1).saturating_mul(size);
        }
        (None, _) => {}
    }
    Ok((q, opts))
}

/// What `/api/usage` and the usage page take: `by` (`model`, `day`,
/// `session`, `repo`) and `source`; every transcript, as `--all`.
pub(crate) fn usage_params(
    q: &HashMap<String, String>,
    now: Timestamp,
) -> Result<(transcript::UsageBy, logbook::model::transcript::Filter), Refusal> {
    let by = param(q, "by")
        .map(|b| transcript::UsageBy::parse(&b))
        .transpose()
        .map_err(|e| Refusal::from_query_error(&e))?
        .unwrap_or_default();
    let filter = params::TranscriptParams {
        source: param(q, "source"),
        ..Default::default()
    }
    .filter(now)
    .map_err(|e| Refusal::from_query_error(&e))?;
    Ok((by, filter))
}

/// `GET /api/usage`: what `transcript usage --all --json` prints (with
/// `--by` and `--source` from the query string), in the server's scope.
async fn usage(
    State(state): State<Arc<AppState>>,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Response, Refusal> {
    let (by, filter) = usage_params(&q, state.project.clock.now())?;
    let scope = state.scope;
    let report = blocking(&state, move |p| {
        Ok(query::backend(p, scope)?.usage(&transcript::UsageScope::All, by, &filter)?)
    })
    .await?;
    Ok(Json(report).into_response())
}

/// `GET /api/transcripts`: what `transcript list --all --json` prints,
/// paged by `limit` and `offset` or `page` (see [`transcript_list_options`]).
async fn transcripts(
    State(state): State<Arc<AppState>>,
    Query(pairs): Query<Vec<(String, String)>>,
) -> Result<Response, Refusal> {
    let scope = state.scope;
    let (_, opts) = transcript_list_options(pairs, &state.project, scope)?;
    let json = blocking(&state, move |p| {
        Ok(listing::listed(p, scope, &opts)?.json()?)
    })
    .await?;
    Ok(Json(json).into_response())
}

/// A transcript id from a URL: a UUID or a short id, letters, digits and
/// hyphens only.
pub(crate) fn transcript_id(text: &str) -> Result<String, Refusal> {
    if !text.is_empty()
        && text.len() <= 64
        && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
    {
        Ok(text.to_string())
    } else {
        Err(Refusal::NotFound)
    }
}

/// `GET /api/transcripts/{id}`: what `transcript show --json` prints. With
/// `?offset=N` and/or `?limit=L`, only those messages (read from the file
/// without the others), in the same shape, plus `window`: `{offset, count,
/// total}`, so a client pages a large session as the viewer does. An
/// imported log's `rawLines` then holds only the window's lines, and
/// `window.rawLines` says which: `{first, count, total}` (`first` a line
/// number of the log, from 1).
async fn transcript_show(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Response, Refusal> {
    let id = transcript_id(&id)?;
    let (offset, limit) = (number(&q, "offset")?, number(&q, "limit")?);
    let json: Value = blocking(&state, move |p| {
        if offset.is_none() && limit.is_none() {
            return Ok(transcript::load(p, &id)?.transcript.into_value()?);
        }
        let (offset, limit) = (offset.unwrap_or(0), limit.unwrap_or(usize::MAX));
        // Only the window's raw lines are read into memory and sent.
        let w =
            transcript::load_window(p, &id, offset, limit, transcript::WindowStop::WindowLines)?
                .window;
        let (from, total, count) = (w.from, w.total, w.transcript.messages.len());
        let raw = w.raw_lines;
        let mut json = w.transcript.into_value()?;
        if let Value::Object(m) = &mut json {
            let mut window = serde_json::json!({"offset": from, "count": count, "total": total});
            if let (Some(r), Value::Object(w)) = (raw, &mut window) {
                w.insert(
                    "rawLines".into(),
                    serde_json::json!({"first": r.first, "count": r.count, "total": r.total}),
                );
            }
            m.insert("window".into(), window);
        }
        Ok(json)
    })
    .await?;
    let mut r = Json(json).into_response();
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(r)
}

/// `GET /api/transcripts/{id}/find?q=&after=&limit=`: the messages that say
/// `q` (when given) and those holding a failed tool result, after message
/// `after`, at most `limit` of each (50 unless given, at most
/// [`transcript::find::MAX_FOUND`]); the JSON of `transcript find --json
/// --errors`.
async fn transcript_find(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Response, Refusal> {
    use transcript::find::{self, Page};
    let id = transcript_id(&id)?;
    let page = Page {
        after: number(&q, "after")?,
        limit: number(&q, "limit")?.unwrap_or(50).min(find::MAX_FOUND),
    };
    let text = q.get("q").cloned().unwrap_or_default();
    let (json, partial) = blocking(&state, move |p| {
        let query = |e: logbook::Error| Refusal::from_query_error(&e);
        let matches = find::find_in(p, &id, &text, page, true).map_err(query)?;
        let errors = find::errors(p, &id, page)?;
        let partial = match text.trim().is_empty() {
            true => None,
            false => logbook::ops::index::text_progress(p)?,
        };
        Ok((find::found_json(Some(&matches), Some(&errors)), partial))
    })
    .await?;
    let mut r = Json(json).into_response();
    flag_partial(&mut r, partial);
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(r)
}
