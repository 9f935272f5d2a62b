//! The team catalog: pushing this machine's records to the shared database,
//! and the team queries (`find --team`, `latest-output --team`, `lineage
//! --team`, `transcript list|usage --team`, MCP `find_runs` with `scope:
//! "team"`, `serve --team`).
//!
//! Nothing here runs unless `team_url` (or `LOGBOOK_TEAM_URL`) is set. The
//! database driver is not the library's: a face installs a
//! [`Connector`] once ([`install`]); the queries then answer from the
//! catalog with the local JSON shapes plus `"origin"`.
//!
//! Local work never waits on the team: every write notes its record in the
//! index's outbox in its own transaction (see [`crate::index::catalog`]),
//! and [`after_write`] starts a push in the background, bounded by
//! [`deadline`]. A push that fails or is cut off leaves the notes where
//! they are; the next push (or `logbook team push`) sends them again, and
//! the catalog's upserts make that harmless.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use jiff::Timestamp;
use jiff::tz::TimeZone;
use serde::Serialize;
use serde_json::Value;

use crate::clock;
use crate::error::{Error, Result};
use crate::index::Index;
use crate::index::catalog::{
    Catalog, Change, Connector, PUSH_LANES, PushStats, ServerStatus, TeamRun, lane_of,
};
use crate::model::ids::RunId;
use crate::model::lineage::{Lineage, lineage_of};
use crate::model::query::RunQuery;
use crate::model::run::{OutputRecord, Run, parse_manifest};
use crate::model::transcript::{Kind as TranscriptKind, Metadata, Summary};
use crate::ops::run::{DEFAULT_PAGE, entry};
use crate::ops::transcript::usage::{UsageBy, UsageReport, report};
use crate::store::Project;

/// Changes sent to the catalog in one transaction.
pub const BATCH: usize = 500;

/// Records a `team push` writes before it brings the server's statistics
/// up to date ([`Catalog::settle`]): a bulk push otherwise left the next
/// minute's team queries planned without them (a `find --team` of 93 ms
/// that takes 3 once autovacuum has come by).
pub const SETTLE_AFTER: u64 = 1_000;

/// How long explicit team commands (`team push`, `find --team`…) wait for
/// the server before they give up.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

static CONNECTOR: OnceLock<Box<dyn Connector>> = OnceLock::new();

/// Installs the team catalog's driver; the first one installed stays.
pub fn install(connector: Box<dyn Connector>) {
    let _ = CONNECTOR.set(connector);
}

/// The longest a write's background push may add to it: the
/// `LOGBOOK_TEAM_DEADLINE` environment variable in seconds, else 2 s.
pub fn deadline() -> Duration {
    std::env::var("LOGBOOK_TEAM_DEADLINE")
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map_or(Duration::from_secs(2), Duration::from_secs_f64)
}

fn url(p: &Project) -> Result<&str> {
    p.config.team_url.as_deref().ok_or_else(|| Error::Team {
        server: "(none)".into(),
        message: "no team catalog is configured".into(),
        hint: "set team_url in logbook.yaml, or LOGBOOK_TEAM_URL, to the team's postgres:// URL"
            .into(),
    })
}

fn connector() -> Result<&'static dyn Connector> {
    CONNECTOR
        .get()
        .map(|c| c.as_ref())
        .ok_or_else(|| Error::Team {
            server: "(none)".into(),
            message: "this program was built without a team catalog driver".into(),
            hint: "use the `logbook` command line, which includes the PostgreSQL catalog".into(),
        })
}

/// Opens the project's team catalog, waiting at most `timeout`.
pub fn connect(p: &Project, timeout: Duration) -> Result<Box<dyn Catalog>> {
    connector()?.connect(url(p)?, timeout)
}

/// Creates or migrates the catalog's tables (`logbook team init`); returns
/// the server and the schema version.
pub fn init(p: &Project) -> Result<(String, i64)> {
    let url = url(p)?;
    let version = connector()?.init(url, COMMAND_TIMEOUT)?;
    let catalog = connector()?.connect(url, COMMAND_TIMEOUT)?;
    Ok((catalog.server(), version))
}

/// What [`push`] did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct PushReport {
    /// The catalog.
    pub server: String,
    /// This machine's name in it.
    pub origin: String,
    /// Changes sent.
    pub pushed: u64,
    /// Of those, records the server wrote.
    pub written: u64,
    /// Records the server already held in that state.
    pub unchanged: u64,
    /// Records marked deleted.
    pub deleted: u64,
    /// Changes still waiting (written meanwhile, or cut off by a deadline).
    pub backlog: u64,
}

/// Sends every waiting change to the catalog (`logbook team push`), in
/// batches, reporting `(sent, total)` after each. Safe to run while other
/// processes write or push: a change is forgotten only once the server has
/// it and its record was not written again meanwhile.
pub fn push(p: &Project, progress: Option<&dyn Fn(u64, u64)>) -> Result<PushReport> {
    push_within(p, COMMAND_TIMEOUT, None, progress)
}

fn push_within(
    p: &Project,
    timeout: Duration,
    stop_at: Option<Instant>,
    progress: Option<&dyn Fn(u64, u64)>,
) -> Result<PushReport> {
    let url = url(p)?;
    let index = Index::open(p)?;
    let total = index.outbox_len()?;
    let result = (|| {
        let catalog = connector()?.connect(url, timeout)?;
        let mut report = PushReport {
            server: catalog.server(),
            origin: p.config.origin.clone(),
            ..PushReport::default()
        };
        if let Some(f) = progress {
            f(0, total);
        }
        // Only an explicit push settles the catalog after it (see below):
        // a write's background one has a deadline to keep.
        let bulk = stop_at.is_none() && total >= SETTLE_AFTER;
        // Writers may keep adding changes; a push takes what was there when
        // it began, and as much again, then leaves the rest to the next.
        let budget = total.saturating_mul(2) + BATCH as u64;
        // The next batch is read (index, output files, words) on another
        // thread while the server writes this one.
        let (sender, batches) = std::sync::mpsc::sync_channel::<Result<Vec<Change>>>(1);
        std::thread::scope(|s| -> Result<()> {
            s.spawn(move || read_batches(p, &sender));
            while report.pushed < budget {
                if stop_at.is_some_and(|t| Instant::now() >= t) {
                    break;
                }
                let Ok(batch) = batches.recv() else {
                    break;
                };
                let batch = batch?;
                if batch.is_empty() {
                    break;
                }
                let done: Vec<_> = batch
                    .iter()
                    .map(|c| (c.kind, c.id.clone(), c.version))
                    .collect();
                let PushStats {
                    written,
                    unchanged,
                    deleted,
                } = if bulk {
                    push_lanes(catalog.as_ref(), &p.config.origin, batch)?
                } else {
                    catalog.push(&p.config.origin, &batch, false)?
                };
                index.outbox_done(&done)?;
                report.pushed += done.len() as u64;
                report.written += written;
                report.unchanged += unchanged;
                report.deleted += deleted;
                if let Some(f) = progress {
                    f(
                        report.pushed.min(total.max(report.pushed)),
                        total.max(report.pushed),
                    );
                }
            }
            // Ends the reader at its next batch.
            drop(batches);
            Ok(())
        })?;
        // Every record was queued again (a rebuilt index, a new catalog)
        // and all of it is on the server now: what the server holds beyond
        // it was deleted while this index was not looking.
        if let Some(due) = index.reconcile_due()?
            && index.outbox_len()? == 0
            && stop_at.is_none_or(|t| Instant::now() < t)
        {
            report.deleted += catalog.reconcile(&p.config.origin, &|| index.live_ids())?;
            index.reconciled(&due)?;
        }
        // Only an explicit push: a write's background one has a deadline
        // to keep.
        if stop_at.is_none()
            && report.written >= SETTLE_AFTER
            && let Err(e) = catalog.settle()
        {
            crate::notice::push(format!(
                "the push is complete, but the server's statistics were not updated ({e}); its autovacuum will"
            ));
        }
        report.backlog = index.outbox_len()?;
        Ok(report)
    })();
    // Notes for `team status`; a failure to note is not the push's failure.
    let _ = match &result {
        Ok(_) => index
            .set_team_note("last_push", Some(&clock::now_string()))
            .and_then(|()| index.set_team_note("last_error", None)),
        Err(e) => index.set_team_note("last_error", Some(&format!("{} {e}", clock::now_string()))),
    };
    result
}

/// Pushes `batch` over [`PUSH_LANES`] connections at once, each lane's
/// changes in a transaction of its own (the server takes turns per lane,
/// so no record is written by two at once), and adds up what they did.
fn push_lanes(catalog: &dyn Catalog, origin: &str, batch: Vec<Change>) -> Result<PushStats> {
    let mut lanes: Vec<Vec<Change>> = vec![vec![]; PUSH_LANES];
    for c in batch {
        lanes[lane_of(&c.id)].push(c);
    }
    let results: Vec<Result<PushStats>> = std::thread::scope(|s| {
        let running: Vec<_> = lanes
            .iter()
            .filter(|l| !l.is_empty())
            .map(|lane| s.spawn(move || catalog.push(origin, lane, true)))
            .collect();
        running
            .into_iter()
            // A lane's panic is a bug: it goes on as one here.
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    });
    let mut total = PushStats::default();
    for r in results {
        let s = r?;
        total.written += s.written;
        total.unchanged += s.unchanged;
        total.deleted += s.deleted;
    }
    Ok(total)
}

/// Reads the outbox batch after batch for [`push_within`], until it is
/// empty, an error, or the pusher stops listening.
fn read_batches(p: &Project, sender: &std::sync::mpsc::SyncSender<Result<Vec<Change>>>) {
    let index = match Index::open(p) {
        Ok(index) => index,
        Err(e) => {
            let _ = sender.send(Err(e));
            return;
        }
    };
    let mut after = i64::MIN;
    loop {
        let (batch, last) = match index.outbox_batch_after(after, BATCH) {
            Ok(read) => read,
            Err(e) => {
                let _ = sender.send(Err(e));
                return;
            }
        };
        let end = last == after;
        after = last;
        if sender.send(Ok(batch)).is_err() || end {
            return;
        }
    }
}

struct Background {
    running: bool,
    again: bool,
}

static BACKGROUND: Mutex<Background> = Mutex::new(Background {
    running: false,
    again: false,
});
static SETTLED: Condvar = Condvar::new();

/// Called after every write through the index: when the project has a team
/// catalog, pushes the waiting changes on a background thread, bounded by
/// [`deadline`]. A down or slow server only leaves them waiting.
pub(crate) fn after_write(p: &Project) {
    if p.config.team_url.is_none() || CONNECTOR.get().is_none() {
        return;
    }
    let Ok(mut state) = BACKGROUND.lock() else {
        return;
    };
    if state.running {
        state.again = true;
        return;
    }
    state.running = true;
    state.again = false;
    drop(state);
    let p = p.clone();
    let spawned = std::thread::Builder::new()
        .name("logbook-team-push".into())
        .spawn(move || {
            loop {
                let limit = deadline();
                let _ = push_within(&p, limit, Some(Instant::now() + limit), None);
                let Ok(mut state) = BACKGROUND.lock() else {
                    return;
                };
                if !state.again {
                    state.running = false;
                    SETTLED.notify_all();
                    return;
                }
                state.again = false;
            }
        });
    if spawned.is_err()
        && let Ok(mut state) = BACKGROUND.lock()
    {
        state.running = false;
    }
}

/// Waits for a background push to finish, at most [`deadline`] (a process
/// about to exit calls this, so its last write reaches the team when the
/// server answers, and never waits long when it does not).
pub fn settle() {
    let Ok(state) = BACKGROUND.lock() else {
        return;
    };
    let _ = SETTLED.wait_timeout_while(state, deadline(), |s| s.running);
}

/// What `logbook team status` shows.
#[derive(Debug, Clone, Serialize)]
pub struct TeamStatus {
    /// The catalog (host, port, database), or `None` without a team.
    pub server: Option<String>,
    /// This machine's name in the team.
    pub origin: String,
    /// Changes waiting to be pushed.
    pub backlog: u64,
    /// When a push last succeeded.
    pub last_push: Option<String>,
    /// The last push's error (with its time), cleared by a successful one.
    pub last_error: Option<String>,
    /// Whether the server answered now.
    pub reachable: bool,
    /// Why it did not.
    pub error: Option<String>,
    /// What the server holds.
    pub catalog: Option<ServerStatus>,
}

/// The team catalog's state as this machine sees it: never fails because
/// the server is down (that is what it reports).
pub fn status(p: &Project) -> Result<TeamStatus> {
    let Some(url) = p.config.team_url.as_deref() else {
        return Ok(TeamStatus {
            server: None,
            origin: p.config.origin.clone(),
            backlog: 0,
            last_push: None,
            last_error: None,
            reachable: false,
            error: None,
            catalog: None,
        });
    };
    let index = Index::open(p)?;
    let mut status = TeamStatus {
        server: Some(redact(url)),
        origin: p.config.origin.clone(),
        backlog: index.outbox_len()?,
        last_push: index.team_note("last_push")?,
        last_error: index.team_note("last_error")?,
        reachable: false,
        error: None,
        catalog: None,
    };
    match connector().and_then(|c| c.connect(url, deadline().max(Duration::from_secs(5)))) {
        Ok(catalog) => {
            status.server = Some(catalog.server());
            match catalog.status() {
                Ok(s) => {
                    status.reachable = true;
                    status.catalog = Some(s);
                }
                Err(e) => status.error = Some(e.to_string()),
            }
        }
        Err(e) => status.error = Some(e.to_string()),
    }
    Ok(status)
}

/// A URL without its password, for people to read.
fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let creds = &url[scheme + 3..at];
            match creds.split_once(':') {
                Some((user, _)) => format!("{}{user}:***{}", &url[..scheme + 3], &url[at..]),
                None => url.to_string(),
            }
        }
        _ => url.to_string(),
    }
}

/// A run from the catalog, with the machine it came from.
#[derive(Debug, Clone)]
pub struct OriginRun {
    /// The machine that pushed it.
    pub origin: String,
    /// The run; `folder` is its folder on that machine.
    pub run: Run,
}

fn run_of(t: TeamRun) -> Option<OriginRun> {
    let id = RunId::parse(&t.id).ok()?;
    let folder = PathBuf::from(&t.folder);
    let (manifest, _) = parse_manifest(&folder.join("manifest.json"), &t.manifest).ok()?;
    Some(OriginRun {
        origin: t.origin,
        run: Run {
            id,
            folder,
            manifest,
        },
    })
}

/// One run of a [`find`] page.
#[derive(Debug, Clone)]
pub struct TeamHit {
    /// The run, with its machine.
    pub run: OriginRun,
    /// For text queries: a fragment of the matching text, as a local
    /// `find --text` cuts it.
    pub snippet: Option<String>,
}

/// One page of [`find`].
#[derive(Debug, Clone)]
pub struct TeamPage {
    /// The runs on the page, newest first.
    pub runs: Vec<TeamHit>,
    /// How many match in all.
    pub total: u64,
}

/// `find --team`: runs of every machine matching `query`, newest first
/// (text matches too: the catalog keeps each run's words, not the counts
/// a rank needs), [`DEFAULT_PAGE`] unless the query sets a limit.
pub fn find(p: &Project, query: &RunQuery) -> Result<TeamPage> {
    query.matcher()?;
    let query = RunQuery {
        limit: Some(query.limit.unwrap_or(DEFAULT_PAGE)),
        ..query.clone()
    };
    let catalog = connect(p, COMMAND_TIMEOUT)?;
    let (runs, total) = catalog.find_runs(&query)?;
    let mut runs: Vec<TeamHit> = runs
        .into_iter()
        .filter_map(run_of)
        .map(|run| TeamHit { run, snippet: None })
        .collect();
    if let Some(words) = &query.text {
        snippets(catalog.as_ref(), &mut runs, words)?;
    }
    Ok(TeamPage { runs, total })
}

/// Cuts each hit's snippet as the local index does: from the manifest
/// when the words are there, else from the outputs' stored text, read in
/// one round trip for the runs that need it.
fn snippets(catalog: &dyn Catalog, hits: &mut [TeamHit], words: &str) -> Result<()> {
    let cut = crate::index::Snippets::new(words)?;
    let mut rest = vec![];
    for (i, hit) in hits.iter_mut().enumerate() {
        hit.snippet = cut.of_manifest(&hit.run.run.manifest)?;
        if hit.snippet.is_none() && !hit.run.run.manifest.outputs.is_empty() {
            rest.push(i);
        }
    }
    if rest.is_empty() {
        return Ok(());
    }
    let keys: Vec<(String, String)> = rest
        .iter()
        .map(|&i| (hits[i].run.origin.clone(), hits[i].run.run.id.to_string()))
        .collect();
    let texts = catalog.output_texts(&keys)?;
    for &i in &rest {
        let hit = &mut hits[i];
        let id = hit.run.run.id.to_string();
        for (_, _, text) in texts
            .iter()
            .filter(|(o, r, _)| *o == hit.run.origin && *r == id)
        {
            if let Some(s) = cut.of_text(text)? {
                hit.snippet = Some(s);
                break;
            }
        }
    }
    Ok(())
}

/// A run as `find --json` prints it, plus `"origin"`.
pub fn run_json(r: &OriginRun, now: Timestamp) -> Value {
    let mut v = serde_json::to_value(entry(&r.run, now)).unwrap_or(Value::Null);
    if let Value::Object(m) = &mut v {
        m.insert("origin".into(), Value::String(r.origin.clone()));
    }
    v
}

/// `find --team --json`: the page's runs with their origin, and for a text
/// query each one's snippet, as `find --json` gives them.
pub fn page_json(page: &TeamPage, now: Timestamp) -> Value {
    Value::Array(
        page.runs
            .iter()
            .map(|h| {
                let mut v = run_json(&h.run, now);
                if let (Value::Object(m), Some(s)) = (&mut v, &h.snippet) {
                    m.insert("snippet".into(), Value::String(s.clone()));
                }
                v
            })
            .collect(),
    )
}

/// What [`latest_output`] found in the catalog.
#[derive(Debug, Clone)]
pub struct TeamLatest {
    /// The run that registered it.
    pub run: OriginRun,
    /// Its record in the manifest.
    pub output: OutputRecord,
    /// Its path on the origin machine.
    pub path: PathBuf,
    /// Its stored text, when it is text.
    pub text: Option<String>,
    /// Whether `text` was cut.
    pub truncated: bool,
}

/// `latest-output --team`: the newest matching output of any machine.
pub fn latest_output(
    p: &Project,
    agent: &str,
    workflow: Option<&str>,
    output_type: Option<&str>,
) -> Result<TeamLatest> {
    RunQuery {
        workflow: workflow.map(str::to_string),
        ..RunQuery::default()
    }
    .matcher()?;
    let found = connect(p, COMMAND_TIMEOUT)?.latest_output(agent, workflow, output_type)?;
    let found = found.and_then(|o| {
        let seq = o.seq as usize;
        let run = run_of(o.run)?;
        let output = run.run.manifest.outputs.get(seq)?.clone();
        Some(TeamLatest {
            path: run.run.output_path(&output.file),
            run,
            output,
            text: o.text,
            truncated: o.truncated,
        })
    });
    found.ok_or_else(|| {
        Error::not_found(
            "output of agent",
            agent,
            "`logbook find --team --agent NAME` shows that agent's runs on every machine",
        )
    })
}

/// `latest-output --team --json`: the local shape plus origin and text.
pub fn latest_json(found: &TeamLatest) -> Value {
    serde_json::json!({
        "path": found.path,
        "session_id": found.run.run.manifest.session_id,
        "output": found.output,
        "missing": false,
        "origin": found.run.origin,
        "text": found.text,
        "truncated": found.truncated,
    })
}

/// Lineage across machines: the runs on the ancestor and descendant chains
/// of `id` in the catalog, and each one's origin.
pub fn lineage(p: &Project, id: &str, tz: &TimeZone) -> Result<(Lineage, HashMap<String, String>)> {
    let catalog = connect(p, COMMAND_TIMEOUT)?;
    let root = resolve(id)?;
    let mut runs: HashMap<String, OriginRun> = HashMap::new();
    let mut seen: HashSet<String> = HashSet::new();
    // Up and down, one level per round trip.
    let mut frontier: Vec<String> = vec![root.clone()];
    let mut down: Vec<String> = vec![root.clone()];
    while !frontier.is_empty() || !down.is_empty() {
        let fetch: Vec<String> = frontier
            .iter()
            .chain(down.iter())
            .filter(|i| !runs.contains_key(*i))
            .cloned()
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        for r in catalog.runs(&fetch)?.into_iter().filter_map(run_of) {
            runs.insert(r.run.id.to_string(), r);
        }
        let mut next_up = vec![];
        for n in frontier.drain(..) {
            if !seen.insert(format!("up:{n}")) {
                continue;
            }
            if let Some(r) = runs.get(&n) {
                next_up.extend(r.run.manifest.related().iter().cloned());
            }
        }
        let asked: Vec<String> = down
            .drain(..)
            .filter(|n| seen.insert(format!("down:{n}")))
            .collect();
        let mut next_down = vec![];
        if !asked.is_empty() {
            for (_, child) in catalog.children(&asked)? {
                next_down.push(child);
            }
        }
        frontier = next_up;
        down = next_down;
    }
    let origins = runs
        .iter()
        .map(|(k, v)| (k.clone(), v.origin.clone()))
        .collect();
    let runs = runs.into_iter().map(|(k, v)| (k, v.run)).collect();
    Ok((lineage_of(&root, runs, tz), origins))
}

/// A run id for a team query: the whole UUID (a prefix means little
/// across twenty machines' runs).
fn resolve(text: &str) -> Result<String> {
    RunId::parse(text).map(|id| id.to_string()).map_err(|_| {
        Error::invalid(
            "run id",
            text,
            "a team query takes the whole run UUID (`logbook find --team` lists them)",
        )
    })
}

/// A transcript in the catalog, as `transcript list` shows one.
#[derive(Debug, Clone, Serialize)]
pub struct OriginTranscript {
    /// The machine that pushed it.
    pub origin: String,
    /// What the local listing shows.
    #[serde(flatten)]
    pub summary: Summary,
    /// Its metadata, measured usage included.
    #[serde(skip)]
    pub metadata: Option<Metadata>,
}

/// `transcript list --team`: every machine's transcripts, newest first.
pub fn transcripts(p: &Project) -> Result<Vec<OriginTranscript>> {
    let rows = connect(p, COMMAND_TIMEOUT)?.transcripts()?;
    Ok(rows
        .into_iter()
        .map(|t| {
            let kind = if t.body.kind == "subagent" {
                TranscriptKind::Subagent
            } else {
                TranscriptKind::Main
            };
            OriginTranscript {
                origin: t.origin,
                metadata: serde_json::from_str(&t.body.metadata).ok(),
                summary: Summary {
                    id: t.id,
                    kind,
                    file: PathBuf::from(&t.body.file),
                    workdir: t.body.workdir,
                    started_at: t.body.started_at,
                    last_active_at: t.body.last_active_at,
                    latest_total_tokens: t.body.latest_total_tokens.max(0) as u64,
                    parent_session_id: t.body.parent_session_id,
                },
            }
        })
        .collect())
}

/// `transcript usage --all --team`: the usage of every machine's
/// transcripts, each call counted once across the team.
pub fn usage(p: &Project, by: UsageBy) -> Result<UsageReport> {
    let entries = transcripts(p)?
        .into_iter()
        .map(|t| (Some(t.origin), t.summary, t.metadata))
        .collect();
    Ok(report(entries, by))
}

/// The stored text of one output of a run in the catalog, for the viewer.
pub fn output_text(p: &Project, run_id: &str, file: &str) -> Result<Option<(String, bool)>> {
    Ok(connect(p, COMMAND_TIMEOUT)?
        .output(run_id, file)?
        .and_then(|o| o.text.map(|t| (t, o.truncated))))
}

/// Whether `path` is on this machine's side: team answers name folders on
/// other machines, which must not be opened here.
pub fn is_local(p: &Project, origin: &str, path: &Path) -> bool {
    origin == p.config.origin && path.starts_with(&p.config.agent_outputs_folder)
}

/// A run for the team viewer: this machine's own when it has the run, else
/// the catalog's copy (with the machine it came from).
pub fn show(p: &Project, id: &RunId) -> Result<OriginRun> {
    if let Ok(run) = crate::ops::run::show(p, id.as_str()) {
        return Ok(OriginRun {
            origin: p.config.origin.clone(),
            run,
        });
    }
    connect(p, COMMAND_TIMEOUT)?
        .runs(&[id.to_string()])?
        .into_iter()
        .find_map(run_of)
        .ok_or_else(|| {
            Error::not_found(
                "run",
                id.to_string(),
                "`logbook find --team` lists the team's runs",
            )
        })
}

/// [`find`] as the viewer pages it: the local page type, so a team list
/// renders like a local one.
pub fn find_page(p: &Project, query: &RunQuery) -> Result<crate::ops::run::Page> {
    let page = find(p, query)?;
    Ok(crate::ops::run::Page {
        hits: page
            .runs
            .into_iter()
            .map(|h| crate::index::Hit {
                run: h.run.run,
                snippet: h.snippet,
            })
            .collect(),
        total: page.total,
        exact: true,
        skipped: 0,
    })
}

/// A run's file list when its folder is on another machine: its registered
/// outputs (the files the catalog holds the text of).
pub fn tree_of(run: &OriginRun) -> crate::store::run_files::Tree {
    crate::store::run_files::Tree {
        session_id: run.run.id.to_string(),
        entries: run
            .run
            .manifest
            .outputs
            .iter()
            .map(|o| crate::store::run_files::TreeEntry {
                path: o.file.clone(),
                kind: "file",
                size: 0,
                depth: o.file.matches('/').count(),
            })
            .collect(),
        truncated: false,
    }
}
