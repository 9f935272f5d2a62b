//! Reading runs: find them (paged, bounded or streamed), resolve an id or
//! prefix, the latest output of an agent, and the lineage around a run.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use jiff::Timestamp;
use jiff::tz::TimeZone;
use serde::Serialize;

use crate::clock;
use crate::error::{Error, Next, Result, Step};
use crate::index::{Hit, Index, Kind};
use crate::model::ids::{IdArg, RunId};
use crate::model::lineage::{Lineage, lineage_of};
use crate::model::naming;
use crate::model::query::{RunQuery, filter_sorted};
use crate::model::run::{OutputRecord, Run};
use crate::ops::run_files::Unconfined;
use crate::store::{self, Project};

/// Runs matching `query`, newest `started_at` first (or by relevance for a
/// text query), paged; answered by the index. Also returns how many run
/// manifests listings skip because they could not be parsed (`doctor`
/// names them).
pub fn find(p: &Project, query: &RunQuery) -> Result<(Vec<Hit>, u64)> {
    let index = Index::open_synced(p)?;
    let hits = index.find_runs(query)?;
    Ok((hits, index.corrupt_count(Kind::Run)?))
}

/// How many runs `find` shows when no limit is given: a screenful, not
/// months of runs.
pub const DEFAULT_PAGE: usize = 50;

/// One page of [`find_page`].
#[derive(Debug, Clone)]
pub struct Page {
    /// The runs on this page, in `find`'s order.
    pub hits: Vec<Hit>,
    /// How many runs match in all, paging aside; with `exact` false, how
    /// many at least (counting stopped there).
    pub total: u64,
    /// Whether `total` is the whole count rather than a lower bound.
    pub exact: bool,
    /// How many manifests listings skip as unparseable (`doctor` names them).
    pub skipped: u64,
}

impl Page {
    /// How many matching runs come after this page.
    pub fn more(&self, offset: usize) -> u64 {
        more_after(self.total, offset, self.hits.len())
    }
}

/// How many of `total` matching runs come after a page of `shown` runs at
/// `offset`: what every listing's "N more" says (local, team, streamed).
pub fn more_after(total: u64, offset: usize, shown: usize) -> u64 {
    total
        .saturating_sub(offset as u64)
        .saturating_sub(shown as u64)
}

/// [`find`] as `logbook find` pages it: [`DEFAULT_PAGE`] runs when `query`
/// sets no limit, and how many match in all, so the caller can say how many
/// more there are.
pub fn find_page(p: &Project, query: &RunQuery) -> Result<Page> {
    let query = RunQuery {
        limit: Some(query.limit.unwrap_or(DEFAULT_PAGE)),
        ..query.clone()
    };
    let index = Index::open_synced(p)?;
    let hits = index.find_runs(&query)?;
    let total = if hits.len() < query.limit.unwrap_or(0) && (query.offset == 0 || !hits.is_empty())
    {
        // A short page is the last one: no count query needed.
        (query.offset + hits.len()) as u64
    } else {
        index.count_runs(&query)?
    };
    Ok(Page {
        hits,
        total,
        exact: true,
        skipped: index.corrupt_count(Kind::Run)?,
    })
}

/// How many matches of a text query [`find_page_bounded`] counts and ranks
/// at most.
pub const RANKED_MATCHES: u64 = 1000;

/// [`find_page`] for a page a person waits on (the viewer): a text query
/// matched by more than [`RANKED_MATCHES`] runs is counted only that far
/// (`exact` false: "1,000+"), since counting reads every match and a
/// common word matches most runs. The page itself is `find`'s, whose
/// ranking of a common word looks at its most recent matches only.
pub fn find_page_bounded(p: &Project, query: &RunQuery) -> Result<Page> {
    if query.text.as_deref().is_none_or(|t| t.trim().is_empty()) {
        return find_page(p, query);
    }
    let query = RunQuery {
        limit: Some(query.limit.unwrap_or(DEFAULT_PAGE)),
        ..query.clone()
    };
    let index = Index::open_synced(p)?;
    let hits = index.find_runs(&query)?;
    // Far enough to say whether a page follows this one.
    let reach = ((query.offset + hits.len()) as u64 + 1).max(RANKED_MATCHES + 1);
    let counted = index.count_runs_upto(&query, Some(reach))?;
    Ok(Page {
        hits,
        total: counted,
        exact: counted < reach,
        skipped: index.corrupt_count(Kind::Run)?,
    })
}

/// What [`find_each`] streamed.
#[derive(Debug, Clone, Copy)]
pub struct Streamed {
    /// Runs handed over.
    pub shown: usize,
    /// How many runs match in all, paging aside.
    pub total: u64,
    /// How many manifests listings skip as unparseable (`doctor` names them).
    pub skipped: u64,
}

/// [`find_page`] streamed: each run is handed to `each` as it is read from
/// the index, its display names computed for `now`, so a listing of every
/// run holds one run at a time (`logbook find --limit 1000000`). `each`
/// returns `Break` to stop (a closed pipe); the total is then not counted.
pub fn find_each(
    p: &Project,
    query: &RunQuery,
    now: Timestamp,
    each: &mut dyn FnMut(FoundRun) -> std::ops::ControlFlow<()>,
) -> Result<Streamed> {
    let query = RunQuery {
        limit: Some(query.limit.unwrap_or(DEFAULT_PAGE)),
        ..query.clone()
    };
    let index = Index::open_synced(p)?;
    let mut stopped = false;
    let shown = index.each_run(&query, &mut |hit| {
        let flow = each(FoundRun {
            entry: entry(&hit.run, now),
            snippet: hit.snippet,
        });
        stopped = flow.is_break();
        flow
    })?;
    let total = if stopped {
        (query.offset + shown) as u64
    } else if shown < query.limit.unwrap_or(0) && (query.offset == 0 || shown > 0) {
        // A short page is the last one: no count query needed.
        (query.offset + shown) as u64
    } else {
        index.count_runs(&query)?
    };
    // Counted after the listing, whose verify-on-read may have found a
    // manifest broken since it was indexed.
    let skipped = index.corrupt_count(Kind::Run)?;
    Ok(Streamed {
        shown,
        total,
        skipped,
    })
}

/// Every agent with runs and how many it has, by name, from the index.
pub fn agents(p: &Project) -> Result<Vec<(String, u64)>> {
    Index::open_synced(p)?.agents()
}

/// [`find`] answered by reading every manifest, the seed's discovery
/// algorithm: the baseline the index is measured and checked against.
pub fn find_scan(p: &Project, query: &RunQuery) -> Result<Vec<Run>> {
    filter_sorted(store::run::scan(p)?.runs, query)
}

/// How many candidates an ambiguous id error lists.
const AMBIGUOUS_SHOWN: usize = 10;

/// The run a command-line id names: a whole UUID in any case, or a unique
/// prefix of at least [`crate::model::ids::MIN_PREFIX`] characters. A prefix
/// is looked up in the index (synced with the folder names first, so new
/// and removed folders are seen); its candidates are checked against the
/// folders, and when the index has none, or cannot be opened, the folder
/// names themselves answer, so a stale or broken index never hides a run.
/// A prefix naming several runs is an [`Error::AmbiguousId`] listing them.
pub fn resolve(p: &Project, text: &str) -> Result<RunId> {
    let prefix = match IdArg::parse("run id", text, Next::of(Step::find_runs(), " lists runs"))? {
        IdArg::Full(id) => return RunId::parse(&id),
        IdArg::Prefix(prefix) => prefix,
    };
    // An index row whose folder was removed since is no run; a folder
    // without a manifest is one (listed as unknown), so its prefix resolves.
    let exists = |id: &RunId| store::run::locate(p, id).is_ok_and(|f| f.is_dir());
    let mut ids: Vec<RunId> = Index::open_synced(p)
        .and_then(|index| index.run_ids_with_prefix(&prefix, AMBIGUOUS_SHOWN))
        .unwrap_or_default()
        .iter()
        .filter_map(|id| RunId::parse(id).ok())
        .filter(|id| exists(id))
        .collect();
    if ids.is_empty() {
        ids = store::run::ids_with_prefix(p, &prefix)?;
    }
    match ids.len() {
        1 => Ok(ids.remove(0)),
        0 => Err(Error::not_found(
            "run",
            text.trim(),
            Next::say("no run id starts with that; ")
                .step(Step::find_runs())
                .text(" lists the runs there are"),
        )),
        _ => Err(Error::AmbiguousId {
            kind: "run",
            given: text.trim().to_string(),
            candidates: ids
                .into_iter()
                .take(AMBIGUOUS_SHOWN)
                .map(|id| id.to_string())
                .collect(),
        }),
    }
}

/// Reads run `id` (a UUID or a unique prefix, see [`resolve`]) from its
/// folder.
pub fn show(p: &Project, id: &str) -> Result<Run> {
    store::run::load(p, &resolve(p, id)?)
}

/// [`show`] for a caller that is not the project's user (an agent over
/// MCP, a browser): a run folder that is a symlink leading out of the runs
/// folder is refused, as its files are.
pub fn show_confined(p: &Project, id: &str) -> Result<Run> {
    let id = resolve(p, id)?;
    // Loaded first, so a run that is not there is "not found" as in `show`.
    let run = store::run::load(p, &id)?;
    store::run_files::check_root(p, &id)?;
    Ok(run)
}

/// What [`latest_output`] found.
#[derive(Debug, Clone)]
pub struct LatestOutput {
    /// The run that registered it.
    pub run: Run,
    /// Its record in the manifest.
    pub output: OutputRecord,
    /// Its absolute path.
    pub path: PathBuf,
    /// The file is no longer there (deleted or moved after registration).
    /// It is still the answer: the manifest is the record of what the run
    /// produced, and silently answering an older file would be wrong too.
    pub missing: bool,
    /// The file is there but not the run's own (a symlink leading out of
    /// the run folder, a hard link): named, so no caller takes it for the
    /// run's output unawares.
    pub unconfined: Option<Unconfined>,
}

/// The seed's "find latest output" pattern: the newest run of `agent` whose
/// workflow matches, and in it the last output of `output_type` (any type
/// when `None`), with whether its file is still there.
pub fn latest_output(
    p: &Project,
    agent: &str,
    workflow: Option<&str>,
    output_type: Option<&str>,
) -> Result<LatestOutput> {
    if let Some((run, output, path)) =
        Index::open_synced(p)?.latest_output(agent, workflow, output_type)?
    {
        let missing = !path.is_file();
        let unconfined = crate::ops::run_files::unconfined(&run, &output.file);
        return Ok(LatestOutput {
            run,
            output,
            path,
            missing,
            unconfined,
        });
    }
    let what = match (workflow, output_type) {
        (Some(w), Some(t)) => format!("{agent} (workflow {w}, type {t})"),
        (Some(w), None) => format!("{agent} (workflow {w})"),
        (None, Some(t)) => format!("{agent} (type {t})"),
        (None, None) => agent.to_string(),
    };
    // The pattern must be valid for the answer "none" to mean anything.
    RunQuery {
        workflow: workflow.map(str::to_string),
        ..RunQuery::default()
    }
    .matcher()?;
    Err(Error::not_found(
        "output of agent",
        what,
        Next::of(
            Step::FindRuns {
                agent: Some("NAME".into()),
                team: false,
            },
            " shows that agent's runs and their outputs",
        ),
    ))
}

/// The lineage around run `id`: only the runs on its ancestor and descendant
/// chains are loaded from the index, never every manifest.
pub fn lineage(p: &Project, id: &str, tz: &TimeZone) -> Result<Lineage> {
    let root = resolve(p, id)?;
    store::run::load(p, &root)?;
    let index = Index::open_synced(p)?;
    let mut runs: HashMap<String, Run> = HashMap::new();
    for up in [true, false] {
        let mut stack = vec![root.to_string()];
        let mut seen = HashSet::new();
        while let Some(n) = stack.pop() {
            if !seen.insert(n.clone()) {
                continue;
            }
            let next = if up {
                match index.run(&n)? {
                    Some(r) => {
                        let parents = r.manifest.related().to_vec();
                        runs.insert(n.clone(), r);
                        parents
                    }
                    None => vec![],
                }
            } else {
                if !runs.contains_key(&n)
                    && let Some(r) = index.run(&n)?
                {
                    runs.insert(n.clone(), r);
                }
                index.children(&n)?
            };
            stack.extend(next);
        }
    }
    Ok(lineage_of(root.as_str(), runs, tz))
}

/// What `find --json` prints for a run, display names computed for `now`.
pub fn entry(run: &Run, now: Timestamp) -> crate::model::run::RunEntry {
    naming::run_entry(run, now, &clock::local_zone())
}

/// What `find --json` and `GET /api/runs` give for each run: its
/// [`entry`], plus for a text query the matching fragment (hits in `[…]`).
#[derive(Debug, Clone, Serialize)]
pub struct FoundRun {
    /// The run with its display names.
    #[serde(flatten)]
    pub entry: crate::model::run::RunEntry,
    /// For text queries: a fragment of the matching text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snippet: Option<String>,
}

/// The [`FoundRun`]s of a page of [`find_page`], display names for `now`.
pub fn found(hits: &[Hit], now: Timestamp) -> Vec<FoundRun> {
    hits.iter()
        .map(|h| FoundRun {
            entry: entry(&h.run, now),
            snippet: h.snippet.clone(),
        })
        .collect()
}
