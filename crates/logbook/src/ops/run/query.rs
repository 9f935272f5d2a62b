//! Reading runs: find them (paged, bounded or streamed), resolve an id or
//! prefix, the latest output of an agent, and the lineage around a run.

use crate::Logbook;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use jiff::Timestamp;
use jiff::tz::TimeZone;

use crate::error::{Error, Next, Result, Step};
use crate::model::ids::{RunId, RunRef};
use crate::model::lineage::{Lineage, lineage_of};
use crate::model::query::{ArchiveScope, RunQuery, filter_sorted, query_status};
use crate::model::run::{OutputRecord, Run};
use crate::ops::query::{COUNTED_MATCHES, Count, Found, FoundRun, Page, entry, paged, scan};
use crate::ops::run_files::Unconfined;
use logbook_index::{Hit, Index, Kind};

/// A page of the index's hits, as every backend's page.
fn page_of(hits: Vec<Hit>, total: u64, exact: bool, skipped: u64) -> Page {
    Page {
        shown: hits.len(),
        hits: hits
            .into_iter()
            .map(|h| Found {
                run: h.run,
                snippet: h.snippet,
                origin: None,
            })
            .collect(),
        total,
        exact,
        skipped,
        archived: 0,
        partial: None,
    }
}

/// How many runs match `query` in all when a page of it showed `shown`, and
/// whether that is the whole count: a short page is the last one, so no
/// count query is needed; otherwise the index counts, a text query only as
/// far as [`COUNTED_MATCHES`] past the page when `count` is bounded, since
/// counting reads every match and a common word matches most runs.
fn total(index: &Index, query: &RunQuery, shown: usize, count: Count) -> Result<(u64, bool)> {
    if shown < query.limit.unwrap_or(0) && (query.offset == 0 || shown > 0) {
        return Ok(((query.offset + shown) as u64, true));
    }
    let has_text = query.text.as_deref().is_some_and(|t| !t.trim().is_empty());
    if count == Count::Bounded && has_text {
        // Far enough to say whether a page follows this one.
        let reach = ((query.offset + shown) as u64 + 1).max(COUNTED_MATCHES + 1);
        let counted = index.read().count_runs_upto(query, Some(reach))?;
        return Ok((counted, counted < reach));
    }
    Ok((index.read().count_runs(query)?, true))
}

/// A page of `find`, [`crate::ops::query::DEFAULT_PAGE`] runs when `query`
/// sets no limit, with how many match in all, counted as `count` says (see
/// [`total`]).
pub(crate) fn find_page(p: &Logbook, query: &RunQuery, count: Count) -> Result<Page> {
    // A lost index: the manifests answer while it is built behind.
    if let Some(page) = scan::answer_while_lost(p, query, p.clock.now(), None)? {
        return Ok(page);
    }
    let query = paged(query);
    let index = Index::open_synced(p)?;
    let hits = index.read().find_runs(&query)?;
    let (total, exact) = total(&index, &query, hits.len(), count)?;
    let skipped = index.read().corrupt_count(Kind::Run)?;
    let mut page = page_of(hits, total, exact, skipped);
    page.archived = archived_left_out(&index, &query)?;
    page.partial = text_partial(&index, &query)?;
    Ok(page)
}

/// How far the full-text index is, for a text query answered while it is
/// still being built (the page may miss matches): what every face says.
fn text_partial(index: &Index, query: &RunQuery) -> Result<Option<logbook_index::TextProgress>> {
    match query.text.is_some() {
        true => index.read().text_progress(),
        false => Ok(None),
    }
}

/// How many archived runs match `query` too when it lists the live set:
/// what every face says it left out. Asked only when the archive holds
/// any run (one look at the partial index `runs_archived`).
fn archived_left_out(index: &Index, query: &RunQuery) -> Result<u64> {
    if query.archive != ArchiveScope::Live || !index.read().has_archived()? {
        return Ok(0);
    }
    let archived = RunQuery {
        archive: ArchiveScope::Archived,
        limit: None,
        offset: 0,
        ..query.clone()
    };
    match archived.text {
        Some(_) => index
            .read()
            .count_runs_upto(&archived, Some(COUNTED_MATCHES)),
        None => index.read().count_runs(&archived),
    }
}

/// [`find_page`] streamed: each run is handed to `each` as it is read from
/// the index, its display names computed for `now`, so a listing of every
/// run holds one run at a time. `each` returns `Break` to stop (a closed
/// pipe); the total is then not counted.
pub(crate) fn find_each(
    p: &Logbook,
    query: &RunQuery,
    count: Count,
    now: Timestamp,
    each: &mut dyn FnMut(FoundRun) -> std::ops::ControlFlow<()>,
) -> Result<Page> {
    if let Some(page) = scan::answer_while_lost(p, query, now, Some(&mut *each))? {
        return Ok(page);
    }
    let query = paged(query);
    let index = Index::open_synced(p)?;
    let mut stopped = false;
    let shown = index.read().each_run(&query, &mut |hit| {
        let flow = each(FoundRun {
            entry: entry(&hit.run, now),
            origin: None,
            snippet: hit.snippet,
        });
        stopped = flow.is_break();
        flow
    })?;
    let (total, exact) = if stopped {
        ((query.offset + shown) as u64, true)
    } else {
        total(&index, &query, shown, count)?
    };
    // Counted after the listing, whose verify-on-read may have found a
    // manifest broken since it was indexed.
    let skipped = index.read().corrupt_count(Kind::Run)?;
    Ok(Page {
        hits: vec![],
        shown,
        total,
        exact,
        skipped,
        archived: if stopped {
            0
        } else {
            archived_left_out(&index, &query)?
        },
        partial: text_partial(&index, &query)?,
    })
}

/// Every agent with runs and how many it has, by name, from the index.
pub fn agents(p: &Logbook) -> Result<Vec<(String, u64)>> {
    Index::open_synced(p)?.read().agents()
}

/// The seed's discovery algorithm as a page: every manifest read, the matches counted, and
/// the page cut from them.
pub(crate) fn find_scan_page(p: &Logbook, query: &RunQuery) -> Result<Page> {
    let query = paged(query);
    let scan = logbook_store::run::scan_in(p, query.archive)?;
    let skipped = scan.corrupt.len() as u64;
    let all = filter_sorted(
        scan.runs,
        &RunQuery {
            limit: None,
            offset: 0,
            ..query.clone()
        },
    )?;
    let total = all.len() as u64;
    let hits = query
        .page(all)
        .into_iter()
        .map(|run| Hit { run, snippet: None })
        .collect();
    Ok(page_of(hits, total, true, skipped))
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
pub fn resolve(p: &Logbook, text: &str) -> Result<RunId> {
    resolve_ref(p, &RunRef::parse(text)?)
}

/// [`resolve`] of an id already parsed.
pub(crate) fn resolve_ref(p: &Logbook, run: &RunRef) -> Result<RunId> {
    let prefix = match run {
        RunRef::Full(id) => return Ok(id.clone()),
        RunRef::Prefix(prefix) => prefix.clone(),
    };
    let text = prefix.as_str();
    // An index row whose folder was removed since is no run; a folder
    // without a manifest is one (listed as unknown), so its prefix resolves.
    let exists = |id: &RunId| logbook_store::run::exists(p, id);
    let mut ids: Vec<RunId> = Index::open_synced(p)
        .and_then(|index| index.read().run_ids_with_prefix(&prefix, AMBIGUOUS_SHOWN))
        .unwrap_or_default()
        .iter()
        .filter_map(|id| RunId::parse(id).ok())
        .filter(|id| exists(id))
        .collect();
    if ids.is_empty() {
        ids = logbook_store::run::ids_with_prefix(p, &prefix)?;
    }
    match ids.len() {
        1 => Ok(ids.remove(0)),
        0 => Err(Error::not_found(
            "run",
            text,
            Next::say("no run id starts with that; ")
                .step(Step::find_runs())
                .text(" lists the runs there are"),
        )),
        _ => Err(Error::AmbiguousId {
            kind: "run",
            given: text.to_string(),
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
pub fn show(p: &Logbook, id: &str) -> Result<Run> {
    logbook_store::run::load(p, &resolve(p, id)?)
}

/// [`show`] for a caller that is not the project's user (an agent over
/// MCP, a browser): a run folder that is a symlink leading out of the runs
/// folder is refused, as its files are.
pub fn show_confined(p: &Logbook, run: &RunRef) -> Result<Run> {
    let id = resolve_ref(p, run)?;
    // Loaded first, so a run that is not there is "not found" as in `show`.
    let run = logbook_store::run::load(p, &id)?;
    logbook_store::run_files::check_root(p, &id)?;
    // What is shown comes from the files; the index is brought to what they
    // say too (an output of a finished run edited in place is otherwise
    // only read by `index sync --full`). The index is derived: one that is
    // not built yet is not built for this, and a failure to refresh it
    // never keeps a run from being shown.
    if let Some(index) = Index::open_existing(p) {
        let _ = index.read().recheck_run(&run.folder);
    }
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
    /// In team scope: the machine that pushed it (`path` is on that
    /// machine), its stored text and whether that was cut.
    pub origin: Option<String>,
    /// Its stored text (team scope only).
    pub text: Option<String>,
    /// Whether `text` was cut (team scope only).
    pub truncated: bool,
}

/// What `latest-output` asks, as a face was given it: one value every
/// backend answers, so the status rule ([`LatestQuery::status_filter`]) is
/// applied in one place.
#[derive(Debug, Clone, Copy, Default)]
pub struct LatestQuery<'a> {
    /// `agent.name`, exactly.
    pub agent: &'a str,
    /// `workflow.name`, exactly or as a regular expression.
    pub workflow: Option<&'a str>,
    /// The output type; any when `None`.
    pub output_type: Option<&'a str>,
    /// The run status as given (`--status`, MCP `status`): `None` is
    /// [`LATEST_STATUS`], [`ANY_STATUS`] takes every status.
    pub status: Option<&'a str>,
}

/// The status `latest-output` answers from unless asked: seed 000's
/// discovery pattern filters `status: "completed"`, so a downstream agent
/// never builds on a failed run or a half-written file of a running one.
pub const LATEST_STATUS: &str = "completed";
/// The `--status` value that takes the newest run whatever its status.
pub const ANY_STATUS: &str = "any";

impl<'a> LatestQuery<'a> {
    /// The status a run must have to answer: [`LATEST_STATUS`] when none
    /// was given, `None` (every status) for [`ANY_STATUS`], else the one
    /// given, checked as `find --status` checks it (a typo is an error,
    /// never "not found").
    pub fn status_filter(&self) -> Result<Option<String>> {
        match self.status.map(str::trim) {
            None => Ok(Some(LATEST_STATUS.to_string())),
            Some(ANY_STATUS) => Ok(None),
            Some(s) => query_status(s).map(Some).map_err(|e| match e {
                Error::Invalid { value, reason, .. } => Error::invalid(
                    "status",
                    value,
                    format!("{reason}, or {ANY_STATUS} for every status"),
                ),
                e => e,
            }),
        }
    }

    /// How a "none found" error names what was asked.
    pub fn describe(&self) -> String {
        let mut parts = vec![];
        if let Some(w) = self.workflow {
            parts.push(format!("workflow {w}"));
        }
        if let Some(t) = self.output_type {
            parts.push(format!("type {t}"));
        }
        match self.status_filter() {
            Ok(Some(s)) => parts.push(format!("status {s}")),
            Ok(None) | Err(_) => parts.push(format!("status {ANY_STATUS}")),
        }
        format!("{} ({})", self.agent, parts.join(", "))
    }

    /// The "none found" error for this question: names what was asked
    /// and, when only completed runs were looked at, that a status widens it.
    pub(crate) fn none_found(&self, team: bool) -> Error {
        let widen = if self.status.is_none() {
            format!(
                "only {LATEST_STATUS} runs answer unless a status is given ({ANY_STATUS} takes every run); "
            )
        } else {
            String::new()
        };
        let step = Step::FindRuns {
            agent: Some("NAME".into()),
            team,
        };
        let after = if team {
            " shows that agent's runs on every machine"
        } else {
            " shows that agent's runs and their outputs"
        };
        Error::not_found(
            "output of agent",
            self.describe(),
            Next::say(widen).step(step).text(after),
        )
    }
}

/// The seed's "find latest output" pattern: the newest run of `agent` whose
/// workflow matches and whose status is the one asked (completed unless
/// asked), and in it the last output of `output_type` (any type when
/// `None`), with whether its file is still there.
pub fn latest_output(p: &Logbook, ask: &LatestQuery<'_>) -> Result<LatestOutput> {
    let status = ask.status_filter()?;
    if let Some((run, output, path)) = Index::open_synced(p)?.read().latest_output(
        ask.agent,
        ask.workflow,
        ask.output_type,
        status.as_deref(),
    )? {
        let missing = !logbook_store::run_files::is_present(&path);
        let unconfined = logbook_store::run_files::unconfined(&run.folder, &output.file);
        return Ok(LatestOutput {
            run,
            output,
            path,
            missing,
            unconfined,
            origin: None,
            text: None,
            truncated: false,
        });
    }
    // The pattern must be valid for the answer "none" to mean anything.
    RunQuery {
        workflow: ask.workflow.map(str::to_string),
        ..RunQuery::default()
    }
    .matcher()?;
    Err(ask.none_found(false))
}

/// The lineage around run `id`: only the runs on its ancestor and descendant
/// chains are loaded from the index, never every manifest.
pub fn lineage(p: &Logbook, id: &str, tz: &TimeZone) -> Result<Lineage> {
    lineage_ref(p, &RunRef::parse(id)?, tz)
}

/// [`lineage`] of an id already parsed.
pub(crate) fn lineage_ref(p: &Logbook, run: &RunRef, tz: &TimeZone) -> Result<Lineage> {
    let root = resolve_ref(p, run)?;
    logbook_store::run::load(p, &root)?;
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
                match index.read().run(&n)? {
                    Some(r) => {
                        let parents = r.manifest.related().to_vec();
                        runs.insert(n.clone(), r);
                        parents
                    }
                    None => vec![],
                }
            } else {
                if !runs.contains_key(&n)
                    && let Some(r) = index.read().run(&n)?
                {
                    runs.insert(n.clone(), r);
                }
                index.read().children(&n)?
            };
            stack.extend(next);
        }
    }
    let mut lineage = lineage_of(root.as_str(), runs, tz);
    // A run deleted on purpose is not "missing": say when it went. A
    // tombstone that cannot be read leaves the node as it was.
    for n in lineage.nodes.iter_mut().filter(|n| n.missing) {
        if let Ok(id) = RunId::parse(&n.session_id)
            && let Ok(Some((_, t))) = logbook_store::archive::read_tombstone(p, &id)
        {
            n.deleted_at = Some(t.deleted_at);
        }
    }
    Ok(lineage)
}
