//! One query API over two backends. The reads a face offers (find runs,
//! show one, the latest output of an agent, the lineage around a run,
//! transcripts, usage, an output's text) are the methods of [`Backend`],
//! which the local index ([`Scope::Local`]) and the team catalog
//! ([`Scope::Team`]) both implement, as atuin keeps one `Database` trait
//! over SQLite and PostgreSQL. A face passes the scope its user chose
//! (`--team`, MCP `scope: "team"`, `serve --team`) through; how a backend
//! pages, counts and resolves a prefix is decided here, never in a face.
//!
//! Each record has one JSON shape whatever answered it: a team answer is
//! the local shape plus `"origin"` (see [`FoundRun`], [`TranscriptRow`],
//! [`LatestOutput`]).
//!
//! ```no_run
//! # fn main() -> logbook::Result<()> {
//! use logbook::model::query::RunQuery;
//! use logbook::ops::query::{self, FindOptions, Scope};
//! let p = logbook::Logbook::discover(std::path::Path::new("."), None)?;
//! let page = query::find(&p, &RunQuery::default(), FindOptions::new(Scope::Local))?;
//! println!("{} of {} runs", page.shown, page.total);
//! # Ok(())
//! # }
//! ```

mod local;
pub mod scan;

use crate::Logbook;
use std::collections::BTreeMap;
use std::ops::ControlFlow;

use jiff::Timestamp;
use jiff::tz::TimeZone;
use serde::Serialize;
use serde_json::Value;

use crate::clock;
use crate::error::{Error, Result};
use crate::model::CorruptFile;
use crate::model::ids::{RunId, RunRef};
use crate::model::lineage::Lineage;
use crate::model::query::RunQuery;
use crate::model::run::{Run, RunEntry};
use crate::model::to_json;
use crate::model::transcript::{Filter, Summary};
use crate::ops::transcript::ListOptions;
use crate::ops::transcript::usage::{UsageBy, UsageReport, UsageScope};
use logbook_store::run_files::{Tree, TreeEntry};

pub use crate::ops::run::{LatestOutput, LatestQuery};

/// Where a read answers from: what the user chose, passed through by
/// every face unchanged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scope {
    /// This project: its SQLite index, checked against the files.
    #[default]
    Local,
    /// Every machine of the team: the shared catalog (`team_url`).
    Team,
    /// This project answered by reading every manifest, the seed's
    /// discovery algorithm: the baseline the index is measured and checked
    /// against (the benchmark, tests). Only `find` differs from `Local`.
    Files,
}

impl Scope {
    /// The scope of a face's `--team` flag.
    pub fn of_flag(team: bool) -> Scope {
        if team { Scope::Team } else { Scope::Local }
    }

    /// Whether an answer may wait on the network (up to the catalog's
    /// timeout): a server answers such a query off its async threads.
    pub fn is_remote(self) -> bool {
        self == Scope::Team
    }

    /// The scope an agent named (MCP `scope`): `local` (the default) or
    /// `team`.
    pub fn parse(given: Option<&str>) -> Result<Scope> {
        match given {
            None | Some("local") => Ok(Scope::Local),
            Some("team") => Ok(Scope::Team),
            Some(other) => Err(Error::invalid(
                "scope",
                other,
                "\"local\" (this project) or \"team\" (the team catalog)",
            )),
        }
    }
}

/// How many runs `find` shows when no limit is given: a screenful, not
/// months of runs.
pub const DEFAULT_PAGE: usize = 50;

/// How many rows one page holds at most for a caller that is not the
/// project's user (a browser), so no request makes the server build an
/// answer without bound.
pub const MAX_PAGE: usize = 500;

/// A page size as a browser asked it: [`DEFAULT_PAGE`] when it did
/// not, never more than [`MAX_PAGE`].
pub fn page_size(asked: Option<usize>) -> usize {
    asked.unwrap_or(DEFAULT_PAGE).min(MAX_PAGE)
}

/// How many matches of a text query a [`Count::Bounded`] find counts at
/// most.
pub const COUNTED_MATCHES: u64 = 1000;

/// How a find counts the runs that match beyond its page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Count {
    /// Every match, however many a text query has (for a caller that needs
    /// the number itself and can wait for it).
    Exact,
    /// What every face asks: a text query matched by more than
    /// [`COUNTED_MATCHES`] runs past the page is counted only that far (the
    /// page's `exact` is false: "1,000+", and the face says how to page
    /// on), since counting reads every match and a common word matches
    /// most runs.
    #[default]
    Bounded,
}

/// Where a streamed find hands each run as it is read; `Break` stops it (a
/// closed pipe), and the total is then not counted.
pub type Sink<'s> = &'s mut dyn FnMut(FoundRun) -> ControlFlow<()>;

/// How [`find`] answers: from where, counted how, and whether its runs are
/// handed to a sink one at a time instead of returned.
pub struct FindOptions<'s> {
    /// Which backend answers.
    pub scope: Scope,
    /// How the total is counted.
    pub count: Count,
    /// The time display names are computed for; `None`: now, by the
    /// context's clock.
    pub now: Option<Timestamp>,
    /// With a sink, each run goes to it as it is read and [`Page::hits`]
    /// stays empty, so a listing of every run (`logbook find --limit
    /// 1000000`) holds one run at a time.
    pub sink: Option<Sink<'s>>,
}

impl FindOptions<'_> {
    /// A bounded count, for now, nothing streamed.
    pub fn new(scope: Scope) -> FindOptions<'static> {
        FindOptions {
            scope,
            count: Count::Bounded,
            now: None,
            sink: None,
        }
    }
}

/// One run a find returned, with the machine it came from in team scope.
#[derive(Debug, Clone)]
pub struct Found {
    /// The run, its manifest as last read.
    pub run: Run,
    /// For text queries: a fragment of the matching text, hits in `[…]`.
    pub snippet: Option<String>,
    /// The machine that pushed it (team scope only).
    pub origin: Option<String>,
}

impl Found {
    /// What `find --json` prints for it, display names for `now`.
    pub fn row(&self, now: Timestamp) -> FoundRun {
        FoundRun {
            entry: entry(&self.run, now),
            origin: self.origin.clone(),
            snippet: self.snippet.clone(),
        }
    }
}

/// What `find --json`, MCP `find_runs` and `GET /api/runs` give for each
/// run: its [`entry`], in team scope its `origin`, and for a text query the
/// matching fragment.
#[derive(Debug, Clone, Serialize)]
pub struct FoundRun {
    /// The run with its display names.
    #[serde(flatten)]
    pub entry: RunEntry,
    /// The machine that pushed it; absent in local answers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    /// For text queries: a fragment of the matching text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snippet: Option<String>,
}

/// One page of [`find`].
#[derive(Debug, Clone, Default)]
pub struct Page {
    /// The runs on this page in `find`'s order; empty when they went to a
    /// sink.
    pub hits: Vec<Found>,
    /// How many runs the page holds (or handed to the sink).
    pub shown: usize,
    /// How many runs match in all, paging aside; with `exact` false, how
    /// many at least (counting stopped there).
    pub total: u64,
    /// Whether `total` is the whole count rather than a lower bound.
    pub exact: bool,
    /// How many manifests listings skip as unparseable (`doctor` names
    /// them); always 0 in team scope.
    pub skipped: u64,
    /// How many archived runs match too, left out of a listing of the live
    /// set (`find --archived` lists them); 0 when the query lists the
    /// archive or asks for every run, and in team scope. A text query's is
    /// counted up to [`COUNTED_MATCHES`] at most.
    pub archived: u64,
    /// For a text query answered while the full-text index is still being
    /// built: how far it is (the page may miss matches). `None` otherwise.
    pub partial: Option<logbook_index::TextProgress>,
}

impl Page {
    /// How many matching runs come after this page, which began at
    /// `offset`: what every listing's "N more" says.
    pub fn more(&self, offset: usize) -> u64 {
        self.total
            .saturating_sub(offset as u64)
            .saturating_sub(self.shown as u64)
    }

    /// Where the next page begins when runs match after this one, which
    /// began at `offset`: what every face tells its caller to ask for.
    pub fn next_offset(&self, offset: usize) -> Option<usize> {
        (self.more(offset) > 0).then_some(offset + self.shown)
    }

    /// `find --json`: the page's runs, display names for `now`.
    pub fn json(&self, now: Timestamp) -> Result<Value> {
        let rows: Vec<FoundRun> = self.hits.iter().map(|h| h.row(now)).collect();
        to_json("runs", &rows)
    }
}

/// What `find --json` prints for a run, display names computed for `now`.
pub fn entry(run: &Run, now: Timestamp) -> RunEntry {
    crate::model::naming::run_entry(run, now, &clock::local_zone())
}

/// One run, and in team scope the machine it came from.
#[derive(Debug, Clone)]
pub struct Shown {
    /// The run; in team scope, `folder` is its folder on `origin`.
    pub run: Run,
    /// The machine whose run it is (team scope only).
    pub origin: Option<String>,
}

impl Shown {
    /// `run show --json` (plus `"origin"` in team scope).
    pub fn json(&self, now: Timestamp) -> Result<Value> {
        let row = FoundRun {
            entry: entry(&self.run, now),
            origin: self.origin.clone(),
            snippet: None,
        };
        to_json("run", &row)
    }
}

/// The lineage around a run, and in team scope each run's machine.
#[derive(Debug, Clone, Serialize)]
pub struct RunLineage {
    /// The graph.
    #[serde(flatten)]
    pub graph: Lineage,
    /// Each run's machine, by id (team scope only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origins: Option<BTreeMap<String, String>>,
}

impl RunLineage {
    /// `lineage --format json` (plus `"origins"` in team scope).
    pub fn json(&self) -> Result<Value> {
        to_json("lineage", self)
    }
}

/// A transcript as `transcript list` lists it, and in team scope the
/// machine it came from.
#[derive(Debug, Clone, Serialize)]
pub struct TranscriptRow {
    /// The machine that pushed it; absent in local answers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    /// What the listing shows.
    #[serde(flatten)]
    pub summary: Summary,
    /// An agent is writing it now ([`crate::ops::transcript::live`]);
    /// always false from the team catalog, which cannot tell.
    pub live: bool,
    /// What its own calls cost (USD) at the project's prices; `null` when
    /// not measured from a log, or a model of it is not priced.
    #[serde(rename = "cost_usd")]
    pub cost_usd: Option<f64>,
    /// A fork (a Codex `codex fork`): the session it was forked from, as
    /// its metadata's `forkOf` says; absent for any other transcript.
    #[serde(rename = "forkOf", skip_serializing_if = "Option::is_none")]
    pub fork_of: Option<String>,
}

/// What [`Backend::transcripts`] returns.
#[derive(Debug, Clone, Default)]
pub struct Transcripts {
    /// Newest `lastActiveAt` first.
    pub rows: Vec<TranscriptRow>,
    /// Files named like transcripts that could not be read (local only).
    pub corrupt: Vec<CorruptFile>,
    /// How many were left out because their workdir is elsewhere (local
    /// only; `--all` lists them).
    pub elsewhere: usize,
}

impl Transcripts {
    /// `transcript list --json`: the rows, newest `lastActiveAt` first.
    pub fn json(&self) -> Result<Value> {
        to_json("transcripts", &self.rows)
    }
}

/// The text of one output file, as a viewer shows it.
#[derive(Debug, Clone)]
pub struct OutputText {
    /// Its UTF-8 text.
    pub text: String,
    /// Whether `text` was cut (the catalog keeps at most a MiB of it).
    pub truncated: bool,
}

/// The reads every face offers, answered by one backend. Implemented by
/// the local index and the team catalog (and the folder scan, for `find`);
/// the story suite in the CLI's tests asks both the same questions.
pub trait Backend {
    /// Runs matching `query`, newest first (text queries too),
    /// [`DEFAULT_PAGE`] unless the query sets a limit, counted as
    /// `count` says; with `sink`, each run goes there instead of the page.
    fn find(
        &self,
        query: &RunQuery,
        count: Count,
        now: Timestamp,
        sink: Option<Sink<'_>>,
    ) -> Result<Page>;
    /// The run a whole id or a unique prefix names; several is an
    /// [`Error::AmbiguousId`].
    fn resolve(&self, run: &RunRef) -> Result<RunId>;
    /// One run, for a caller that is not the project's user (an agent, a
    /// browser): a local run folder that is a symlink out of the runs
    /// folder is refused.
    fn show(&self, run: &RunRef) -> Result<Shown>;
    /// The newest run that `ask` names (completed unless it asks another
    /// status, see [`LatestQuery::status_filter`]), and in it the last
    /// output of its type (any type when none).
    fn latest_output(&self, ask: &LatestQuery<'_>) -> Result<LatestOutput>;
    /// The runs on the ancestor and descendant chains of `run`.
    fn lineage(&self, run: &RunRef, tz: &TimeZone) -> Result<RunLineage>;
    /// Transcripts, newest first, as `opts` selects them (in team scope,
    /// by kind and page only: the catalog keeps no workdir rules).
    fn transcripts(&self, opts: &ListOptions) -> Result<Transcripts>;
    /// The measured usage of the transcripts in `scope` (in team scope,
    /// every machine's), grouped by `by`.
    fn usage(&self, scope: &UsageScope, by: UsageBy, filter: &Filter) -> Result<UsageReport>;
    /// [`Backend::usage`] grouped several ways at once (a page drawing
    /// usage by day and by repository), each a report of its own.
    fn usage_grouped(
        &self,
        scope: &UsageScope,
        bys: &[UsageBy],
        filter: &Filter,
    ) -> Result<Vec<UsageReport>> {
        bys.iter()
            .map(|by| self.usage(scope, *by, filter))
            .collect()
    }
    /// The text of output `file` of run `run`; `None` when it is not text
    /// (or, in team scope, the catalog holds none).
    fn output_text(&self, run: &RunId, file: &str) -> Result<Option<OutputText>>;
}

/// The backend that answers in `scope`. The team's connects to the
/// catalog now, so a missing or unreachable one is said before any query.
pub fn backend(p: &Logbook, scope: Scope) -> Result<Box<dyn Backend + '_>> {
    match scope {
        Scope::Local => Ok(Box::new(local::Local { p })),
        Scope::Files => Ok(Box::new(local::Files { p })),
        Scope::Team => Ok(Box::new(crate::ops::team::Team::open(p)?)),
    }
}

/// Finds runs: the one entry point every face pages and counts through.
pub fn find(p: &Logbook, query: &RunQuery, opts: FindOptions<'_>) -> Result<Page> {
    let now = opts.now.unwrap_or_else(|| p.clock.now());
    backend(p, opts.scope)?.find(query, opts.count, now, opts.sink)
}

/// `query` with its limit defaulted to [`DEFAULT_PAGE`].
pub(crate) fn paged(query: &RunQuery) -> RunQuery {
    RunQuery {
        limit: Some(query.limit.unwrap_or(DEFAULT_PAGE)),
        ..query.clone()
    }
}

/// The runs of a page handed to `sink` one by one (the team's, whose
/// page is read whole from the server); how many it took.
pub(crate) fn drain(hits: &mut Vec<Found>, now: Timestamp, sink: Option<Sink<'_>>) -> usize {
    let Some(sink) = sink else {
        return hits.len();
    };
    let mut shown = 0;
    for hit in hits.drain(..) {
        shown += 1;
        if sink(hit.row(now)).is_break() {
            break;
        }
    }
    shown
}

/// Whether `shown` is another machine's run, whose folder is not here:
/// team answers name folders on other machines, which must not be opened
/// on this one.
pub fn is_remote(p: &Logbook, shown: &Shown) -> bool {
    shown.origin.as_ref().is_some_and(|origin| {
        *origin != p.config.origin()
            || !(shown.run.folder.starts_with(&p.config.agent_outputs_folder)
                || shown.run.folder.starts_with(&p.config.archive_folder))
    })
}

/// A run's file tree for the viewer: its folder's when it is here; for
/// another machine's run, its registered outputs (the files the catalog
/// holds the text of).
pub fn tree(p: &Logbook, shown: &Shown) -> Result<Tree> {
    let here = crate::ops::run_files::tree(p, &shown.run.id);
    if !is_remote(p, shown) {
        return here;
    }
    Ok(here.unwrap_or_else(|_| Tree {
        session_id: shown.run.id.to_string(),
        entries: shown
            .run
            .manifest
            .outputs
            .iter()
            .map(|o| TreeEntry {
                path: o.file.clone(),
                kind: "file",
                size: 0,
                depth: o.file.matches('/').count(),
            })
            .collect(),
        truncated: false,
    }))
}

/// The transcripts that say a `find --text` query's words, for the human
/// listing after the runs: this project's, so none in team scope (the
/// catalog keeps no messages).
pub fn said_for_find(
    p: &Logbook,
    scope: Scope,
    query: &RunQuery,
) -> Result<Option<crate::ops::transcript::Said>> {
    match scope {
        Scope::Team => Ok(None),
        Scope::Local | Scope::Files => crate::ops::transcript::said_for_find(p, query),
    }
}

/// Refuses a scope that cannot answer a read of a transcript's messages
/// (`what`: the read, as a face names it). The team catalog keeps each
/// transcript's summary and usage, not its messages, and answering from
/// this project instead would give one machine's answer to a question
/// asked of the team.
pub fn transcript_messages(scope: Scope, what: &str) -> Result<()> {
    this_machine_only(
        scope,
        what,
        "a transcript's messages",
        "the machine the transcript came from (a team listing of transcripts names it as `origin`)",
    )
}

/// What only this machine keeps (work sessions, workflow state, the
/// transcripts a resume reads), asked by `tool` in `scope`: the team
/// catalog keeps none of it, so the team scope is refused with where to
/// ask instead rather than answered with this machine's records.
pub fn this_machine_only(scope: Scope, tool: &str, reads: &str, whose: &str) -> Result<()> {
    match scope {
        Scope::Local | Scope::Files => Ok(()),
        Scope::Team => Err(Error::invalid(
            "scope",
            "team",
            format!(
                "{tool} reads {reads}, which the team catalog does not keep; ask in the local \
                 scope on {whose}"
            ),
        )),
    }
}
