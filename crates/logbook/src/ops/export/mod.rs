//! `logbook export`: Logbook's history as OpenTelemetry GenAI traces, for
//! the tools teams already watch (Phoenix, Langfuse, Jaeger, Tempo…).
//!
//! The library decides what is sent and under which ids; a [`Receiver`]
//! (the `logbook-otlp` crate's OTLP/HTTP exporter, a test's collector)
//! only carries batches, so no face names a backend and the library holds
//! no HTTP client.
//!
//! - [`span`]: backend-free spans, and ids derived from each record's own
//!   id only;
//! - [`map`]: records to spans, by the GenAI conventions of
//!   [`SEMCONV_VERSION`];
//! - [`export`]: work sessions (with their workflow invocations, decisions,
//!   verdicts and handoffs), finished runs and transcripts, streamed in
//!   batches of [`ExportOptions::batch_spans`]; what the receiver took is
//!   remembered per endpoint in a high-water mark
//!   ([`logbook_store::export_cursor`]), so a second export sends nothing
//!   new, even after the index was rebuilt, and `all` sends everything
//!   again with the same ids.
//!
//! ```no_run
//! use logbook::ops::export::{self, ExportOptions, Receiver, Sent, span::Span};
//! struct Count(usize);
//! impl Receiver for Count {
//!     fn endpoint(&self) -> &str { "count" }
//!     fn send(&mut self, spans: &[Span]) -> logbook::error::Result<Sent> {
//!         self.0 += spans.len();
//!         Ok(Sent { accepted: spans.len() as u64, ..Sent::default() })
//!     }
//! }
//! let p = logbook::Logbook::open(std::path::Path::new("."))?;
//! let summary = export::export(&p, &ExportOptions::default(), &mut Count(0), &mut |_| {})?;
//! println!("{} spans", summary.spans);
//! # Ok::<(), logbook::Error>(())
//! ```

pub mod map;
pub mod span;

use crate::Logbook;
use std::ops::ControlFlow;

use jiff::Timestamp;
use serde::Serialize;

use crate::error::Result;
use crate::model::ids::RunId;
use crate::model::query::RunQuery;
use crate::model::run::{Run, RunStatus};
use logbook_index::Index;
use logbook_store::export_cursor::{self, ExportMark, Record};
use span::{Span, TraceId};

/// The version of the OpenTelemetry semantic conventions (GenAI spans,
/// still marked Development) the spans follow.
pub const SEMCONV_VERSION: &str = "1.40.0";

/// The schema URL of [`SEMCONV_VERSION`], sent with every batch.
pub const SCHEMA_URL: &str = "https://opentelemetry.io/schemas/1.40.0";

/// How many spans a batch holds by default: small enough to stay well under
/// receivers' request limits with `--content`, large enough that 100k runs
/// take a few hundred requests.
pub const BATCH_SPANS: usize = 512;

/// How many batches go between two writes of the cursor: a crash costs
/// at most those again (same ids), and a large export does not write the
/// mark after every batch.
const SAVE_EVERY: u64 = 32;

/// Where spans go: one call per batch. An implementation retries what is
/// worth retrying itself and returns an error only when the batch could
/// not be delivered.
pub trait Receiver {
    /// The endpoint as it may be stored and shown (no user info, query or
    /// fragment: [`crate::model::url::public`]): what the cursor is kept
    /// for, and what messages name.
    fn endpoint(&self) -> &str;
    /// Delivers one batch; what the receiver accepted and rejected.
    fn send(&mut self, spans: &[Span]) -> Result<Sent>;
}

/// What a receiver answered for one batch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sent {
    /// Spans it took.
    pub accepted: u64,
    /// Spans it refused (OTLP's `partial_success.rejected_spans`).
    pub rejected: u64,
    /// What it said about a partial success, if anything.
    pub message: Option<String>,
    /// How many times the batch was sent again before this answer.
    pub retries: u64,
}

/// What to export.
#[derive(Debug, Clone)]
pub struct ExportOptions {
    /// Which runs (`find`'s filters; `since` also bounds sessions and
    /// transcripts by their last activity).
    pub query: RunQuery,
    /// Only runs: set when a filter only runs have (agent, workflow,
    /// status, user, tag, text) was given.
    pub runs_only: bool,
    /// Message text, tool arguments and results: off by default, as
    /// transcripts hold secrets.
    pub content: bool,
    /// Replace every secret in what is sent (names, attributes, events,
    /// message text) by `[REDACTED:kind]` ([`crate::model::secrets`]): on
    /// by default, off only when asked for (`--no-redact`).
    pub redact: bool,
    /// Send everything again (same ids), whatever the cursor says.
    pub all: bool,
    /// Spans per request.
    pub batch_spans: usize,
}

impl Default for ExportOptions {
    fn default() -> Self {
        ExportOptions {
            query: RunQuery::default(),
            runs_only: false,
            content: false,
            redact: true,
            all: false,
            batch_spans: BATCH_SPANS,
        }
    }
}

/// What an export did.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ExportSummary {
    /// The endpoint.
    pub endpoint: String,
    /// Spans sent.
    pub spans: u64,
    /// Spans the receiver accepted.
    pub accepted: u64,
    /// Spans it rejected.
    pub rejected: u64,
    /// What it said about the batches it partly rejected.
    pub partial: Vec<String>,
    /// Requests sent.
    pub batches: u64,
    /// Requests sent again (the receiver was busy or down for a moment).
    pub retries: u64,
    /// Work sessions sent.
    pub work_sessions: u64,
    /// Finished runs sent.
    pub runs: u64,
    /// Transcripts sent.
    pub transcripts: u64,
    /// Records left out because the cursor says the endpoint has them.
    pub unchanged: u64,
    /// Runs left out because they are still running (sent once finished).
    pub running: u64,
}

/// Exports what `opts` selects to `receiver`, reporting after each batch
/// through `progress`. The cursor is saved every few batches and at the
/// end, and also when a batch fails, so what was delivered is not sent
/// again.
pub fn export(
    p: &Logbook,
    opts: &ExportOptions,
    receiver: &mut dyn Receiver,
    progress: &mut dyn FnMut(&ExportSummary),
) -> Result<ExportSummary> {
    let dir = export_cursor::dir(&p.config.state_dir());
    let endpoint = receiver.endpoint().to_string();
    // Two exports to one receiver at once would both send what neither
    // cursor holds yet: the second waits for the first, or says who holds it.
    let _running = p.locks.exclusive(&export_cursor::lock_name(&endpoint))?;
    let cursor = export_cursor::load(&dir, &endpoint);
    let mut out = Batcher {
        receiver,
        progress,
        spans: Vec::with_capacity(opts.batch_spans.max(1)),
        limit: opts.batch_spans.max(1),
        pending: vec![],
        floors: vec![],
        cursor,
        delivered: false,
        moved: false,
        incomplete: false,
        dir,
        all: opts.all,
        redact: opts.redact,
        summary: ExportSummary {
            endpoint,
            ..ExportSummary::default()
        },
    };
    let result = run_export(p, opts, &mut out);
    // Delivered batches are remembered even when a later one failed; an
    // export that delivered nothing leaves no cursor behind (but a floor
    // raised over a stored one is kept).
    let saved = if out.delivered || (out.moved && out.cursor.stored) {
        out.save()
    } else {
        Ok(())
    };
    result?;
    saved?;
    Ok(out.summary)
}

fn run_export(p: &Logbook, opts: &ExportOptions, out: &mut Batcher<'_>) -> Result<()> {
    let since = opts.query.since;
    if !opts.runs_only {
        export_sessions(p, since, out)?;
    }
    export_runs(p, &opts.query, out)?;
    if !opts.runs_only {
        export_transcripts(p, opts, out)?;
    }
    out.flush()
}

fn after(time: &str, since: Option<Timestamp>) -> bool {
    match since {
        None => true,
        Some(since) => map::ns(time).is_none_or(|t| i128::from(t) >= since.as_nanosecond()),
    }
}

/// The floor a listing taken now may raise its selection's mark to: the
/// file system's own clock (not a test's `LOGBOOK_NOW`), as the mark
/// compares files' change times, less [`export_cursor::SLACK_NS`].
fn listing_floor() -> i64 {
    let now = crate::model::clock::Clock::SYSTEM.now().as_nanosecond();
    i64::try_from(now).unwrap_or(i64::MAX) - export_cursor::SLACK_NS
}

/// The mark's selection of the runs `query` chooses: the kind alone for
/// every run, else with the filters (a time bound is not one: it never
/// raises a floor).
fn runs_selection(query: &RunQuery) -> String {
    let filters = RunQuery {
        since: None,
        limit: None,
        offset: 0,
        ..query.clone()
    };
    if filters == RunQuery::default() {
        return RUN.to_string();
    }
    format!(
        "{RUN} {}",
        serde_json::to_string(&filters).unwrap_or_default()
    )
}

/// The kinds of records the mark keeps apart.
const RUN: &str = "run";
const TRANSCRIPT: &str = "transcript";
const WORK_SESSION: &str = "work-session";

fn export_sessions(p: &Logbook, since: Option<Timestamp>, out: &mut Batcher<'_>) -> Result<()> {
    let floor = listing_floor();
    let listing = crate::ops::work_session::list(p)?;
    let live = listing.sessions.iter().map(|ws| (ws, false));
    for (ws, archived) in live.chain(listing.archived.iter().map(|ws| (ws, true))) {
        if !after(&ws.last_updated, since) {
            continue;
        }
        let file = crate::model::ids::WorkSessionId::parse(&ws.session_id)
            .ok()
            .map(|id| match archived {
                true => logbook_store::work_session::archived_path(p, &id),
                false => logbook_store::work_session::live_path(p, &id),
            });
        let rec = Record {
            kind: WORK_SESSION,
            key: format!("{WORK_SESSION}:{}", ws.session_id),
            changed: file.as_deref().and_then(export_cursor::changed_ns),
            fingerprint: ws.last_updated.clone(),
        };
        if out.unchanged(WORK_SESSION, &rec) {
            continue;
        }
        let loaded = crate::ops::workflow::load(p, Some(&ws.session_id)).ok();
        out.push(map::work_session(ws, loaded.as_ref().map(|l| &l.state)))?;
        if let Some(loaded) = &loaded {
            let (history, _) = crate::ops::workflow::full_history_lenient(loaded);
            for inv in &history {
                if let Some(span) = map::invocation(&ws.session_id, inv) {
                    out.push(span)?;
                }
            }
        }
        out.done(rec);
        out.summary.work_sessions += 1;
    }
    if since.is_none() {
        out.raise_floor(WORK_SESSION, WORK_SESSION, floor);
    }
    Ok(())
}

/// What a run's span depends on: a change to any of it sends it again.
fn run_fingerprint(run: &Run) -> String {
    let m = &run.manifest;
    format!(
        "{}|{}|{}|{}",
        m.execution.status.as_str(),
        m.execution.completed_at.as_deref().unwrap_or(""),
        m.outputs.len(),
        m.related_sessions.as_ref().map_or(0, Vec::len),
    )
}

fn export_runs(p: &Logbook, query: &RunQuery, out: &mut Batcher<'_>) -> Result<()> {
    // Only a listing of every run the selection has raises its floor.
    let whole = query.since.is_none() && query.limit.is_none() && query.offset == 0;
    let selection = runs_selection(query);
    let floor = listing_floor();
    let query = RunQuery {
        limit: Some(query.limit.unwrap_or(RunQuery::MAX_PAGING)),
        ..query.clone()
    };
    let index = Index::open_synced(p)?;
    let mut failed = None;
    // A related run's trace is its work session's: read from its manifest.
    let mut trace_of = |rel: &str| {
        let id = RunId::parse(rel).ok()?;
        let run = logbook_store::run::load(p, &id).ok()?;
        Some(map::run_trace(rel, run.manifest.work_session()))
    };
    index.read().each_run(&query, &mut |hit| {
        let run = hit.run;
        if run.manifest.execution.status == RunStatus::Running {
            out.summary.running += 1;
            return ControlFlow::Continue(());
        }
        let rec = Record {
            kind: RUN,
            key: format!("{RUN}:{}", run.id.as_str()),
            changed: export_cursor::changed_ns(&run.manifest_file()),
            fingerprint: run_fingerprint(&run),
        };
        if out.unchanged(&selection, &rec) {
            return ControlFlow::Continue(());
        }
        if let Some(span) = map::run(&run, &mut trace_of)
            && let Err(e) = out.push(span)
        {
            failed = Some(e);
            return ControlFlow::Break(());
        }
        out.done(rec);
        out.summary.runs += 1;
        ControlFlow::Continue(())
    })?;
    match failed {
        Some(e) => Err(e),
        None => {
            if whole {
                out.raise_floor(&selection, RUN, floor);
            }
            Ok(())
        }
    }
}

fn export_transcripts(p: &Logbook, opts: &ExportOptions, out: &mut Batcher<'_>) -> Result<()> {
    let floor = listing_floor();
    let selection = match &opts.query.repo {
        None => TRANSCRIPT.to_string(),
        Some(repo) => format!(
            "{TRANSCRIPT} {}",
            serde_json::to_string(repo).unwrap_or_default()
        ),
    };
    let listing = crate::ops::transcript::list(
        p,
        &crate::ops::transcript::ListOptions {
            repo: opts.query.repo.clone(),
            filter: crate::model::transcript::Filter {
                since: opts.query.since,
                ..Default::default()
            },
            ..Default::default()
        },
    )?;
    // A Claude Code call written into several sessions' files counts in
    // the session that began first, as `transcript usage` counts it: each
    // call's first owner, from the transcripts' heads.
    let mut order: Vec<&crate::model::transcript::Summary> = listing.transcripts.iter().collect();
    order.sort_by(|a, b| (&a.started_at, &a.id).cmp(&(&b.started_at, &b.id)));
    let mut owner: std::collections::HashMap<String, String> = std::collections::HashMap::new();
    // Each turn's cost at the project's prices (`gen_ai.usage.cost`).
    let prices = crate::ops::price::table(p).ok();
    for s in order {
        let Some(book) = logbook_store::transcript::read_head(&s.file)
            .ok()
            .and_then(|h| crate::model::agent_log::usage_of(&h.metadata))
        else {
            continue;
        };
        for call in book.calls {
            owner
                .entry(call.key().to_string())
                .or_insert_with(|| s.id.clone());
        }
    }
    for s in &listing.transcripts {
        let rec = Record {
            kind: TRANSCRIPT,
            key: format!("{TRANSCRIPT}:{}", s.id),
            changed: export_cursor::changed_ns(&s.file),
            fingerprint: format!("{}|{}", s.last_active_at, s.messages),
        };
        if out.unchanged(&selection, &rec) {
            continue;
        }
        // A transcript that cannot be read now is left for the next export
        // (`logbook doctor` names it), so the floor stays below it; the
        // rest still goes.
        let Ok(t) = logbook_store::transcript::read_file(&s.file) else {
            out.incomplete = true;
            continue;
        };
        let elsewhere = |call: &str| owner.get(call).is_some_and(|o| *o != s.id);
        for span in map::transcript_priced(&t, s.kind, opts.content, &elsewhere, prices.as_ref()) {
            out.push(span)?;
        }
        out.done(rec);
        out.summary.transcripts += 1;
    }
    if opts.query.since.is_none() {
        out.raise_floor(&selection, TRANSCRIPT, floor);
    }
    Ok(())
}

/// Spans on their way: sent when a batch is full; each record's cursor
/// entry is committed once every batch holding its spans was delivered.
struct Batcher<'a> {
    receiver: &'a mut dyn Receiver,
    progress: &'a mut dyn FnMut(&ExportSummary),
    spans: Vec<Span>,
    limit: usize,
    /// Records whose spans are all queued, not yet all delivered.
    pending: Vec<Record>,
    /// Floors (selection, kind, instant) whose records are all queued:
    /// raised once they are delivered.
    floors: Vec<(String, &'static str, i64)>,
    cursor: ExportMark,
    /// Whether the cursor holds anything this export delivered.
    delivered: bool,
    /// Whether a floor was raised.
    moved: bool,
    /// Whether a record was left for the next export: the floor of its
    /// selection then stays where it is.
    incomplete: bool,
    dir: std::path::PathBuf,
    all: bool,
    redact: bool,
    summary: ExportSummary,
}

impl Batcher<'_> {
    fn unchanged(&mut self, selection: &str, rec: &Record) -> bool {
        let same = !self.all && self.cursor.has(selection, rec);
        if same {
            self.cursor.seen(rec);
            self.summary.unchanged += 1;
        }
        same
    }

    fn push(&mut self, mut span: Span) -> Result<()> {
        if self.redact {
            redact_span(&mut span);
        }
        self.spans.push(span);
        if self.spans.len() >= self.limit {
            self.flush()?;
        }
        Ok(())
    }

    fn done(&mut self, rec: Record) {
        self.pending.push(rec);
    }

    /// Raises `selection`'s floor to `to` once what is queued is delivered
    /// (unless a record of it was left for later).
    fn raise_floor(&mut self, selection: &str, kind: &'static str, to: i64) {
        if !std::mem::take(&mut self.incomplete) {
            self.floors.push((selection.to_string(), kind, to));
        }
    }

    fn flush(&mut self) -> Result<()> {
        if !self.spans.is_empty() {
            let sent = self.receiver.send(&self.spans)?;
            let s = &mut self.summary;
            s.batches += 1;
            s.spans += self.spans.len() as u64;
            s.accepted += sent.accepted;
            s.rejected += sent.rejected;
            s.retries += sent.retries;
            if let Some(m) = sent.message.filter(|m| !m.is_empty()) {
                s.partial.push(m);
            }
            self.spans.clear();
        }
        // A batch the receiver partly rejected is not sent again: it said
        // what it will not take, and the same spans would be refused alike.
        for rec in self.pending.drain(..) {
            self.cursor.remember(&rec);
            self.delivered = true;
        }
        for (selection, kind, to) in self.floors.drain(..) {
            self.cursor.raise_floor(&selection, kind, to);
            self.moved = true;
        }
        (self.progress)(&self.summary);
        if self.delivered && self.summary.batches.is_multiple_of(SAVE_EVERY) {
            self.save()?;
        }
        Ok(())
    }

    fn save(&self) -> Result<()> {
        export_cursor::save(&self.dir, &self.cursor)
    }
}

/// Redacts every text of `span`: whatever a record holds (a title, a
/// note, a prompt, a tool's output) may hold a secret, and the receiver is
/// another machine. Ids are not texts: they derive from record ids.
fn redact_span(span: &mut Span) {
    use crate::model::secrets::redact_string;
    let attributes = |attrs: &mut Vec<span::Attribute>| {
        for (_, v) in attrs.iter_mut() {
            match v {
                span::AttrValue::Str(s) => {
                    redact_string(s);
                }
                span::AttrValue::StrList(list) => {
                    for s in list {
                        redact_string(s);
                    }
                }
                span::AttrValue::Int(_) | span::AttrValue::Double(_) | span::AttrValue::Bool(_) => {
                }
            }
        }
    };
    redact_string(&mut span.name);
    attributes(&mut span.attributes);
    for e in &mut span.events {
        redact_string(&mut e.name);
        attributes(&mut e.attributes);
    }
    for l in &mut span.links {
        attributes(&mut l.attributes);
    }
    if let span::SpanStatus::Error(m) = &mut span.status {
        redact_string(m);
    }
}

/// The trace id a test or a receiver's query looks a transcript up by.
pub fn transcript_trace(main_id: &str) -> TraceId {
    map::transcript_trace(main_id)
}
