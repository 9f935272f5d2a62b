//! Live updates: `GET /api/live?view=…` is a server-sent event stream that
//! sends a short stamp of what a page shows whenever it changes (checked
//! every second through the same `ops` calls the page makes, so runs other
//! processes create or change are seen without a restart). The page's
//! script reloads its content when the stamp moves; `once=1` answers one
//! stamp as plain text for clients that poll instead.

use std::collections::HashMap;
use std::convert::Infallible;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{Query, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use logbook::Project;
use logbook::ops::query::{self, FindOptions, Scope};
use logbook::ops::{run_files, work_session, workflow};

use crate::AppState;
use crate::api::{self, run_ref, session_id};
use crate::guard::Refusal;

/// How often a stream looks for a change.
const EVERY: Duration = Duration::from_secs(1);

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
}

fn watch_of(q: &HashMap<String, String>) -> Result<Watch, Refusal> {
    let id = || q.get("id").map(String::as_str).unwrap_or_default();
    match q.get("view").map(String::as_str) {
        Some("list") | None => Ok(Watch::List(Box::new(api::run_query(q)?))),
        Some("run") => Ok(Watch::Run(run_ref(id())?)),
        Some("session") => Ok(Watch::Session(session_id(id())?)),
        Some("workflow") => Ok(Watch::Workflow(session_id(id())?)),
        Some(_) => Err(Refusal::NotFound),
    }
}

/// A stamp of what `w` shows now; it changes when the page would.
fn stamp(p: &Project, w: &Watch) -> String {
    let mut h = DefaultHasher::new();
    match w {
        Watch::List(query) => match query::find(p, query, FindOptions::new(Scope::Local)) {
            Ok(page) => {
                page.total.hash(&mut h);
                for hit in &page.hits {
                    serde_json::to_string(&hit.run.manifest)
                        .unwrap_or_default()
                        .hash(&mut h);
                }
            }
            Err(e) => e.to_string().hash(&mut h),
        },
        Watch::Run(id) => {
            let shown = query::backend(p, Scope::Local).and_then(|b| b.show(id));
            match &shown {
                Ok(r) => serde_json::to_string(&r.run.manifest)
                    .unwrap_or_default()
                    .hash(&mut h),
                Err(e) => e.to_string().hash(&mut h),
            }
            if let Ok(tree) = shown.and_then(|r| run_files::tree(p, &r.run.id)) {
                for e in &tree.entries {
                    (&e.path, e.size).hash(&mut h);
                }
            }
        }
        Watch::Session(id) => match work_session::get(p, Some(id)) {
            Ok(s) => serde_json::to_string(&s).unwrap_or_default().hash(&mut h),
            Err(e) => e.to_string().hash(&mut h),
        },
        Watch::Workflow(id) => match workflow::load(p, Some(id)) {
            Ok(l) => (l.state.version, &l.state.updated_at).hash(&mut h),
            Err(e) => e.to_string().hash(&mut h),
        },
    }
    format!("{:016x}", h.finish())
}

/// `GET /api/live?view=list|run|session|workflow[&id=…][&filters]`.
async fn live(
    State(state): State<Arc<AppState>>,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Response, Refusal> {
    let watch = watch_of(&q)?;
    if q.get("once").is_some_and(|v| v == "1") {
        let s = state.clone();
        let stamp = tokio::task::spawn_blocking(move || stamp(&s.project, &watch))
            .await
            .map_err(|_| Refusal::Internal)?;
        return Ok(stamp.into_response());
    }
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Event, Infallible>>(4);
    tokio::spawn(async move {
        let mut last = String::new();
        while !tx.is_closed() {
            let (s, w) = (state.clone(), watch.clone());
            let Ok(now) = tokio::task::spawn_blocking(move || stamp(&s.project, &w)).await else {
                break;
            };
            if now != last {
                if tx.send(Ok(Event::default().data(&now))).await.is_err() {
                    break;
                }
                last = now;
            }
            tokio::time::sleep(EVERY).await;
        }
    });
    let stream = tokio_stream::wrappers::ReceiverStream::new(rx);
    Ok(Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response())
}
