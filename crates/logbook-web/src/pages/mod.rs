//! The viewer's HTML pages, rendered on the server from askama templates
//! (compiled into the binary). Each page is one or two `ops` calls and
//! reads a page of records, never every run.
//!
//! One submodule per kind of page; this one holds the routes, the assets
//! and the frame every page shares. Each page's handler reads in three
//! steps: it parses the request (path and query string into a typed
//! request, refused before any read), queries through `ops` in the
//! server's scope (one `blocking` call), and renders the template from
//! what was read, the row builders being plain functions of a record.

mod run;
mod run_list;
mod sessions;
mod transcript_find;
mod transcripts;
mod usage;
mod workflow;

use std::sync::Arc;

use askama::Template;
use axum::Router;
use axum::http::{HeaderValue, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;

use crate::AppState;
use crate::guard::Refusal;

const STYLE: &str = include_str!("../../assets/style.css");
const SCRIPT: &str = include_str!("../../assets/app.js");

/// The routes of every page and of the assets.
pub(crate) fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/", get(run_list::runs))
        .route("/runs/{id}", get(run::run_page))
        .route("/runs/{id}/lineage", get(run::lineage_page))
        .route("/runs/{id}/files/{*path}", get(run::file_page))
        .route("/sessions", get(sessions::sessions))
        .route("/sessions/{id}", get(sessions::session_page))
        .route("/sessions/{id}/workflow", get(workflow::workflow_page))
        .route("/transcripts", get(transcripts::transcripts))
        .route("/transcripts/{id}", get(transcripts::transcript_page))
        .route("/usage", get(usage::usage_page))
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
