//! Runs (seed 000): start one, register the files it writes, finish it,
//! link it to the runs it builds on; find runs, the latest output of an
//! agent, and the lineage around a run.
//!
//! Every change takes the run's lock, reads the manifest, changes it and
//! writes it through the index ([`write_through`]). Lock order (DESIGN §8):
//! pointer → work session → run, so the work session link of a new run is
//! made before its run lock is taken. Reads answer from the index, which is
//! synced cheaply first and verifies every run it returns against its file.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use jiff::Timestamp;
use jiff::tz::TimeZone;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::clock;
use crate::error::{Error, Result};
use crate::index::{Hit, Index, Kind, Pending, Record};
use crate::model::ids::{IdArg, RunId};
use crate::model::lineage::{Lineage, lineage_of};
use crate::model::query::{RunQuery, filter_sorted};
use crate::model::run::{
    AgentInfo, Execution, MANIFEST_VERSION, Manifest, OutputRecord, OutputType, Run, RunStatus,
    WorkflowInfo, normalize_output_path,
};
use crate::model::{naming, text};
use crate::ops::{work_session, write_through};
use crate::store::{self, Project, variables};

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
        self.total
            .saturating_sub(offset as u64)
            .saturating_sub(self.hits.len() as u64)
    }
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
    let prefix = match IdArg::parse("run id", text, "`logbook find` lists runs")? {
        IdArg::Full(id) => return RunId::parse(&id),
        IdArg::Prefix(prefix) => prefix,
    };
    let exists = |id: &RunId| {
        store::run::locate(p, id).is_ok_and(|f| f.join(crate::model::run::MANIFEST_FILE).is_file())
    };
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
            "no run id starts with that; `logbook find` lists the runs there are",
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
        return Ok(LatestOutput {
            run,
            output,
            path,
            missing,
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
        "`logbook find --agent NAME` shows that agent's runs and their outputs",
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

/// Options of [`start`].
#[derive(Debug, Clone, Default)]
pub struct StartOptions {
    /// Agent identifier (required).
    pub agent: String,
    /// Agent title; the agent name when `None`.
    pub title: Option<String>,
    /// Bundle path; empty when `None`.
    pub bundle: Option<String>,
    /// Workflow name (required unless `workflow_file` gives one).
    pub workflow: Option<String>,
    /// Workflow description; from the workflow file, else empty.
    pub description: Option<String>,
    /// `--input KEY=VALUE` pairs, after the workflow file's inputs.
    pub inputs: Vec<(String, String)>,
    /// Earlier runs this one builds on; each must exist.
    pub related: Vec<String>,
    /// Tags for `find --tag`.
    pub tags: Vec<String>,
    /// The user; else the bundle config's `user_name`, else Logbook's config.
    pub user: Option<String>,
    /// A workflow.yaml to take name, description, inputs and variables from.
    pub workflow_file: Option<PathBuf>,
}

/// What [`start`] created.
#[derive(Debug, Clone, Serialize)]
pub struct Started {
    /// The new run's UUID.
    pub session_id: RunId,
    /// Absolute run folder.
    pub folder: PathBuf,
    /// The manifest as written.
    pub manifest: Manifest,
    /// Workflow-engine variables, all absolute paths.
    pub variables: Map<String, Value>,
    /// Things the caller should tell the user (e.g. no work-session link).
    #[serde(skip)]
    pub warnings: Vec<String>,
}

/// Starts a run: a v4 id, its folder and a `running` manifest, linked to the
/// active work session if there is one.
pub fn start(p: &Project, opts: StartOptions) -> Result<Started> {
    let agent = required("agent", &opts.agent)?;
    let id = RunId::new_v4();
    let folder = store::run::folder(p, &id);
    let mut warnings = vec![];

    let workflow_file = match &opts.workflow_file {
        Some(path) => Some(variables::read_workflow_file(p, path)?),
        None => None,
    };
    let mut variables = variables::base(&id, &folder);
    if let Some(wf) = &workflow_file {
        variables::resolve_into(p, wf, &id, &folder, &mut variables)?;
        warnings.extend(wf.warnings.iter().cloned());
    }

    let workflow = match (&opts.workflow, &workflow_file) {
        (Some(w), _) => required("workflow", w)?,
        (None, Some(wf)) => wf.name.clone().ok_or_else(|| {
            Error::invalid(
                "workflow-file",
                wf.path.display().to_string(),
                "it has no `name:`; add one or pass --workflow NAME",
            )
        })?,
        (None, None) => {
            return Err(Error::invalid(
                "workflow",
                "",
                "pass --workflow NAME or --workflow-file PATH",
            ));
        }
    };
    let description = opts
        .description
        .clone()
        .or_else(|| workflow_file.as_ref().and_then(|w| w.description.clone()))
        .unwrap_or_default();

    let mut inputs = workflow_file
        .as_ref()
        .map(|w| w.inputs.clone())
        .unwrap_or_default();
    for (k, v) in &opts.inputs {
        let k = required("input key", k)?;
        inputs.insert(k, Value::String(v.clone()));
    }

    let mut related: Vec<String> = vec![];
    for given in &opts.related {
        let r = resolve(p, given).and_then(|r| store::run::load(p, &r).map(|_| r));
        let r = r.map_err(|e| match e {
            Error::NotFound { .. } => Error::not_found(
                "related run",
                given.trim(),
                "`--related` must name an existing run; `logbook find` lists them",
            ),
            e => e,
        })?;
        if !related.iter().any(|x| r == x.as_str()) {
            related.push(r.to_string());
        }
    }
    let mut tags: Vec<String> = vec![];
    for t in &opts.tags {
        let t = required("tag", t)?;
        if !tags.contains(&t) {
            tags.push(t);
        }
    }
    let user = opts
        .user
        .clone()
        .filter(|u| !u.trim().is_empty())
        .or_else(|| workflow_file.as_ref().and_then(|w| w.user.clone()))
        .unwrap_or_else(|| p.config.user.clone());

    // The work-session link is made first, under the session's own locks and
    // before the run lock exists (lock order pointer → session → run).
    let mut metadata = Map::new();
    match work_session::spawn_agent(
        p,
        None,
        &agent,
        Some(id.as_str()),
        Some(&folder.to_string_lossy()),
    ) {
        Ok((ws, _)) => {
            metadata.insert("work_session".into(), Value::String(ws.session_id));
        }
        Err(Error::NoActiveSession) => {}
        Err(e) => warnings.push(format!("run not linked to the active work session: {e}")),
    }

    let now = clock::now();
    let mut manifest = Manifest {
        version: MANIFEST_VERSION.into(),
        session_id: id.to_string(),
        agent: AgentInfo {
            name: agent.clone(),
            title: Some(
                opts.title
                    .clone()
                    .filter(|t| !t.trim().is_empty())
                    .unwrap_or(agent),
            ),
            bundle: Some(opts.bundle.clone().unwrap_or_default()),
            extra: Map::new(),
        },
        workflow: WorkflowInfo {
            name: workflow,
            description: Some(description),
            extra: Map::new(),
        },
        execution: Execution {
            started_at: clock::format(now),
            completed_at: None,
            status: RunStatus::Running,
            user: Some(user),
            extra: Map::new(),
        },
        outputs: vec![],
        inputs: Some(inputs),
        related_sessions: (!related.is_empty()).then_some(related),
        metadata: (!metadata.is_empty()).then_some(metadata),
        tags,
        display_name: None,
        display_timestamp: None,
        user_summary: None,
        message_count: None,
        extra: Map::new(),
    };
    refresh_display(&mut manifest, now);

    let _lock = p.locks.exclusive(&id.lock_name())?;
    let run = Run {
        id: id.clone(),
        folder: folder.clone(),
        manifest,
    };
    write_through(p, vec![pending(&run)], || {
        store::run::create(p, &run.id, &run.manifest)?;
        Ok(((), vec![Some(Record::run(&run))]))
    })?;
    let manifest = run.manifest;
    Ok(Started {
        session_id: id,
        folder,
        manifest,
        variables,
        warnings,
    })
}

fn required(field: &'static str, value: &str) -> Result<String> {
    let v = value.trim();
    if v.is_empty() {
        return Err(Error::invalid(field, value, "must not be empty"));
    }
    if v.contains('\0') {
        return Err(Error::invalid(field, value, "must not contain NUL"));
    }
    Ok(v.to_string())
}

/// The workflow-engine variables of an existing run (no workflow file).
pub fn variables_of(run: &Run) -> Map<String, Value> {
    variables::base(&run.id, &run.folder)
}

/// Applies `change` to run `id`'s manifest under its lock and writes it back
/// through the index, keeping the key order and every unknown field of the
/// file.
fn update<T>(
    p: &Project,
    id: &RunId,
    change: impl FnOnce(&mut Run) -> Result<T>,
) -> Result<(Run, T)> {
    let _lock = p.locks.exclusive(&id.lock_name())?;
    let (mut run, raw) = store::run::load_raw(p, id)?;
    let read = text::to_value(&run.manifest_file(), &run.manifest)?;
    let out = change(&mut run)?;
    refresh_display(&mut run.manifest, clock::now());
    write_through(p, vec![pending(&run)], || {
        store::run::save(&run, &raw, &read)?;
        Ok(((), vec![Some(Record::run(&run))]))
    })?;
    Ok((run, out))
}

/// Story 6.3's `displayTimestamp` and `displayName` as of `now`, written
/// into the manifest on every write: other tools read them from the file
/// (Logbook's own output computes them fresh at read time).
fn refresh_display(m: &mut Manifest, now: Timestamp) {
    let tz = clock::local_zone();
    m.display_timestamp = Some(naming::smart_timestamp(m.started_at(), now, &tz));
    m.display_name = Some(naming::display_name(m, now, &tz));
}

/// Records Story 6.3's conversation fields of run `id` from the transcript
/// linked to it: `userSummary` (its first user message, truncated as the
/// seed says) and `messageCount`. The display name follows.
pub fn record_conversation(
    p: &Project,
    id: &RunId,
    user_summary: Option<String>,
    message_count: u64,
) -> Result<Run> {
    Ok(update(p, id, |run| {
        if let Some(s) = user_summary {
            run.manifest.user_summary = Some(naming::truncate(&s));
        }
        run.manifest.message_count = Some(message_count);
        Ok(())
    })?
    .0)
}

/// The index's pending mark for a write of `run`'s manifest.
fn pending(run: &Run) -> Pending {
    Pending {
        kind: Kind::Run,
        path: run.manifest_file(),
        lock: run.id.lock_name(),
    }
}

/// The error for a change a finished run refuses.
fn finished(run: &Run, registering: bool) -> Error {
    Error::RunFinished {
        id: run.id.to_string(),
        status: run.manifest.execution.status.to_string(),
        finished_at: run.manifest.execution.completed_at.clone(),
        registering,
    }
}

/// Registers (or re-registers) output `file` of run `id`. The file must be a
/// regular file inside the run folder; it is recorded under its real path
/// there (symlinks resolved), so registering it again under any alias
/// updates its one record's type and description and keeps its first
/// `created_at`.
pub fn register_output(
    p: &Project,
    id: &str,
    file: &str,
    output_type: OutputType,
    description: &str,
) -> Result<(Run, OutputRecord)> {
    if let OutputType::Other(t) = &output_type {
        return Err(Error::invalid(
            "type",
            t.as_str(),
            format!("expected one of {}", OutputType::KNOWN.join(", ")),
        ));
    }
    let rel = normalize_output_path(file)?;
    let description = required("description", description)?;
    let id = resolve(p, id)?;
    update(p, &id, |run| {
        if run.manifest.execution.status != RunStatus::Running {
            return Err(finished(run, true));
        }
        let rel = canonical_output(&run.folder, &rel, file)?;
        let now = clock::now_string();
        let record = match run.manifest.outputs.iter_mut().find(|o| o.file == rel) {
            Some(existing) => {
                existing.output_type = output_type;
                existing.description = description;
                if existing.created_at.is_empty() {
                    existing.created_at = now;
                }
                existing.clone()
            }
            None => {
                let record = OutputRecord {
                    file: rel.clone(),
                    output_type,
                    description,
                    created_at: now,
                    extra: Map::new(),
                };
                run.manifest.outputs.push(record.clone());
                record
            }
        };
        Ok(record)
    })
}

/// Where output `given` (`rel` once normalised) really is: its path
/// relative to the run's real folder with every symlink resolved, so the
/// aliases of one file (`sub/a.md`, `self/sub/a.md`, `up/<id>/sub/a.md`)
/// make one record. Refuses a path that does not exist, leads outside the
/// run folder, or is not a regular file (a folder, FIFO, device).
fn canonical_output(folder: &Path, rel: &str, given: &str) -> Result<String> {
    if plain_file(folder, rel) {
        return Ok(rel.to_string());
    }
    let real_folder = folder.canonicalize().map_err(|e| Error::io(folder, e))?;
    let target = rel.split('/').fold(folder.to_path_buf(), |p, c| p.join(c));
    let real = match target.canonicalize() {
        Ok(r) => r,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::invalid(
                "output file",
                given,
                format!(
                    "{} does not exist; write the file into the run folder first, then register it",
                    target.display()
                ),
            ));
        }
        Err(e) => return Err(Error::io(&target, e)),
    };
    let inside = match real.strip_prefix(&real_folder) {
        Ok(inside) if !inside.as_os_str().is_empty() => inside,
        _ => {
            return Err(Error::invalid(
                "output file",
                given,
                "leads outside the run folder (through a symlink); copy the file into the run folder instead",
            ));
        }
    };
    let meta = std::fs::metadata(&real).map_err(|e| Error::io(&real, e))?;
    if !meta.is_file() {
        return Err(Error::NotARegularFile {
            what: "output file",
            path: target,
            found: store::fs::describe_file_type(meta.file_type()),
        });
    }
    let mut parts = vec![];
    for c in inside.components() {
        let Some(part) = c.as_os_str().to_str() else {
            return Err(Error::invalid(
                "output file",
                given,
                "its real name is not UTF-8 text; rename the file",
            ));
        };
        parts.push(part);
    }
    // The real name passes the same rules as the one given (a symlink may
    // lead to `manifest.json`, or to a name with a newline).
    normalize_output_path(&parts.join("/")).map_err(|e| match e {
        Error::Invalid { value, reason, .. } if value != given => Error::invalid(
            "output file",
            given,
            format!("leads to {value:?}, which {reason}"),
        ),
        e => e,
    })
}

/// Whether `rel` reaches a regular file from `folder` through folders
/// that are not symlinks: then it already is its own real path, and
/// resolving both paths (a `readlink` for every component of each, a dozen
/// system calls on every registration) would only say so again. Anything
/// else, a symlink on the way included, takes the resolving path.
fn plain_file(folder: &Path, rel: &str) -> bool {
    let mut path = folder.to_path_buf();
    let mut parts = rel.split('/').peekable();
    while let Some(part) = parts.next() {
        path.push(part);
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            return false;
        };
        let wanted = if parts.peek().is_some() {
            meta.is_dir()
        } else {
            meta.is_file()
        };
        if !wanted {
            return false;
        }
    }
    true
}

/// Finishes run `id` with `status` (completed, failed or cancelled).
pub fn finish(p: &Project, id: &str, status: RunStatus) -> Result<Run> {
    let id = resolve(p, id)?;
    if matches!(status, RunStatus::Running | RunStatus::Other(_)) {
        return Err(Error::invalid(
            "status",
            status.as_str(),
            "a run finishes as completed, failed or cancelled",
        ));
    }
    Ok(update(p, &id, |run| {
        if run.manifest.execution.status != RunStatus::Running {
            return Err(finished(run, false));
        }
        run.manifest.execution.status = status;
        run.manifest.execution.completed_at = Some(clock::now_string());
        Ok(())
    })?
    .0)
}

/// Adds `related` to run `id`'s `related_sessions` (both must exist). Only
/// the child's manifest changes; the reverse edge is found by scanning.
pub fn link(p: &Project, id: &str, related: &str) -> Result<(Run, bool)> {
    let id = resolve(p, id)?;
    let related_given = related;
    let related = resolve(p, related).map_err(|e| match e {
        Error::NotFound { .. } => Error::not_found(
            "related run",
            related_given.trim(),
            "both runs must exist; `logbook find` lists them",
        ),
        e => e,
    })?;
    if id == related {
        return Err(Error::invalid(
            "related run",
            related.as_str(),
            "a run cannot be related to itself",
        ));
    }
    store::run::load(p, &related).map_err(|e| match e {
        Error::NotFound { .. } => Error::not_found(
            "related run",
            related.as_str(),
            "both runs must exist; `logbook find` lists them",
        ),
        e => e,
    })?;
    if let Some(path) = ancestor_path(p, &related, &id)? {
        let mut cycle = vec![id.to_string()];
        cycle.extend(path);
        return Err(Error::LineageCycle {
            child: id.to_string(),
            parent: related.to_string(),
            cycle,
        });
    }
    update(p, &id, |run| {
        let list = run.manifest.related_sessions.get_or_insert_with(Vec::new);
        if list
            .iter()
            .any(|r| r.eq_ignore_ascii_case(related.as_str()))
        {
            return Ok(false);
        }
        list.push(related.to_string());
        Ok(true)
    })
}

/// The chain `from`, its parent, …, `target` when `target` is an ancestor
/// of `from` (or `from` itself), found by walking `related_sessions`
/// upwards through the index (each run verified against its file), or
/// through the manifests when the index cannot be opened. Runs named but
/// missing end their branch.
fn ancestor_path(p: &Project, from: &RunId, target: &RunId) -> Result<Option<Vec<String>>> {
    let index = Index::open_synced(p).ok();
    let parents_of = |id: &str| -> Result<Vec<String>> {
        let run = match &index {
            Some(index) => index.run(id)?,
            None => match RunId::parse(id).and_then(|id| store::run::load(p, &id)) {
                Ok(run) => Some(run),
                Err(Error::NotFound { .. } | Error::Invalid { .. }) => None,
                Err(e) => return Err(e),
            },
        };
        Ok(run.map_or_else(Vec::new, |r| {
            r.manifest
                .related()
                .iter()
                .map(|s| s.to_ascii_lowercase())
                .collect()
        }))
    };
    // Breadth first, remembering who led where, so the cycle named is a
    // shortest one.
    let mut came_from: HashMap<String, String> = HashMap::new();
    let mut queue = std::collections::VecDeque::from([from.to_string()]);
    let mut seen = HashSet::from([from.to_string()]);
    while let Some(n) = queue.pop_front() {
        if n == target.as_str() {
            let mut path = vec![n.clone()];
            let mut at = n;
            while let Some(prev) = came_from.get(&at) {
                path.push(prev.clone());
                at = prev.clone();
            }
            path.reverse();
            return Ok(Some(path));
        }
        for parent in parents_of(&n)? {
            if seen.insert(parent.clone()) {
                came_from.insert(parent.clone(), n.clone());
                queue.push_back(parent);
            }
        }
    }
    Ok(None)
}

/// Marks a run that is still `running` as `failed` with
/// `metadata.abandoned = true`; never deletes anything. Returns `false` when
/// it had finished meanwhile.
pub fn mark_abandoned(p: &Project, id: &RunId) -> Result<bool> {
    Ok(update(p, id, |run| {
        if run.manifest.execution.status != RunStatus::Running {
            return Ok(false);
        }
        run.manifest.execution.status = RunStatus::Failed;
        run.manifest.execution.completed_at = Some(clock::now_string());
        run.manifest
            .metadata
            .get_or_insert_with(Map::new)
            .insert("abandoned".into(), Value::Bool(true));
        Ok(true)
    })?
    .1)
}

// The JSON every face prints for these operations (`--json`, MCP structured
// content, the web API): built here once so the faces cannot drift apart.

/// `run start --json`: the new run's id, folder, manifest and variables.
pub fn started_json(started: &Started) -> Value {
    serde_json::to_value(started).unwrap_or(Value::Null)
}

/// `run show|finish|link --json`: the run as `find` lists it, display names
/// computed for `now`.
pub fn entry_json(run: &Run, now: Timestamp) -> Value {
    serde_json::to_value(entry(run, now)).unwrap_or(Value::Null)
}

/// `run output --json`: the run, the output record and its absolute path.
pub fn output_json(run: &Run, record: &OutputRecord) -> Value {
    serde_json::json!({
        "session_id": run.manifest.session_id,
        "output": record,
        "path": run.output_path(&record.file),
    })
}

/// `find --json`: the page's runs, newest first, each with its full-text
/// `snippet` when the query had text.
pub fn page_json(page: &Page, now: Timestamp) -> Value {
    serde_json::to_value(found(&page.hits, now)).unwrap_or(Value::Null)
}

/// `latest-output --json`: the path, its run, its record and whether the
/// file is still there.
pub fn latest_output_json(found: &LatestOutput) -> Value {
    serde_json::json!({
        "path": found.path,
        "session_id": found.run.manifest.session_id,
        "output": found.output,
        "missing": found.missing,
    })
}

/// The most a face reads of one run file into memory ([`read_output`]).
pub const READ_LIMIT: u64 = 16 * 1024 * 1024;

/// A run's file as [`read_output`] returns it.
#[derive(Debug, Clone)]
pub struct OutputFile {
    /// The run it belongs to.
    pub run: RunId,
    /// Its path relative to the run folder (symlinks resolved).
    pub file: String,
    /// Its absolute path.
    pub path: PathBuf,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

/// Reads file `file` of run `id` with the path rules of
/// [`register_output`]: relative, no `..`, no symlink leading out of the
/// run folder, a regular file (not the manifest), at most [`READ_LIMIT`]
/// bytes. Faces that serve run files (MCP resources, the web viewer) read
/// through this, so the rules live in one place.
pub fn read_output(p: &Project, id: &str, file: &str) -> Result<OutputFile> {
    use std::io::Read as _;
    let rel = normalize_output_path(file)?;
    let id = resolve(p, id)?;
    let folder = store::run::folder(p, &id);
    let rel = canonical_output(&folder, &rel, file)?;
    let path = rel.split('/').fold(folder, |p, c| p.join(c));
    let mut reader = store::fs::open_regular(&path, "run file", READ_LIMIT)?.ok_or_else(|| {
        Error::not_found(
            "run file",
            format!("{id}/{rel}"),
            "`logbook run show ID` lists the run's outputs",
        )
    })?;
    let mut bytes = vec![];
    reader
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(&path, e))?;
    Ok(OutputFile {
        run: id,
        file: rel,
        path,
        bytes,
    })
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
