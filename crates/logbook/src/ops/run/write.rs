//! Starting a run and every later change to its manifest (finish, link,
//! abandon, conversation fields), each under the run's lock and through the
//! index.

use crate::Logbook;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use jiff::Timestamp;
use serde::Serialize;
use serde_json::{Map, Value};

use super::resolve;
use crate::clock;
use crate::error::{Error, Next, Result, Step};
use crate::model::ids::RunId;
use crate::model::limits::{bounded, bounded_each};
use crate::model::notice::Notice;
use crate::model::repo::Casing;
use crate::model::run::{
    AgentInfo, Execution, MANIFEST_VERSION, Manifest, Run, RunStatus, WorkflowInfo,
};
use crate::model::work_session::AgentOutcome;
use crate::model::{naming, text};
use crate::ops::{work_session, write_through};
use logbook_index::{Index, Kind, Pending, Record};
use logbook_store::variables;

/// Options of [`start`].
#[derive(Debug, Clone, Default)]
pub struct StartOptions {
    /// Agent identifier (required).
    pub agent: String,
    /// Agent title; the agent name when `None`.
    pub title: Option<String>,
    /// Bundle path (`bmad/bmm`); else the workflow file's bundle, else
    /// `default_bundle` in logbook.yaml, else empty (and a warning).
    pub bundle: Option<String>,
    /// Workflow name (required unless `workflow_file` gives one).
    pub workflow: Option<String>,
    /// Workflow description; from the workflow file, else empty (and a
    /// warning).
    pub description: Option<String>,
    /// `--input KEY=VALUE` pairs, after the workflow file's inputs.
    pub inputs: Vec<(String, String)>,
    /// Earlier runs this one builds on; each must exist.
    pub related: Vec<String>,
    /// Tags for `find --tag`.
    pub tags: Vec<String>,
    /// The manifest's `metadata` (seed 000: "custom workflow-specific
    /// metadata"); Logbook's own keys (`work_session`, the repository) are
    /// added after and win.
    pub metadata: Map<String, Value>,
    /// The user; else the bundle config's `user_name`, else Logbook's config.
    pub user: Option<String>,
    /// A workflow.yaml to take name, description, inputs and variables from.
    pub workflow_file: Option<PathBuf>,
    /// Who named `workflow_file`: an MCP or HTTP caller may name only files
    /// inside the project root (and so may its `config_source`).
    pub path_trust: logbook_store::PathTrust,
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
    pub warnings: Vec<Notice>,
}

/// Starts a run: a v4 id, its folder and a `running` manifest, linked to the
/// active work session if there is one.
pub fn start(p: &Logbook, opts: StartOptions) -> Result<Started> {
    let agent = checked_fields(&opts)?;
    let id = RunId::new_v4();
    let folder = logbook_store::run::folder(p, &id);
    let mut warnings = vec![];

    let workflow_file = match &opts.workflow_file {
        Some(path) => Some(variables::read_workflow_file(p, path, opts.path_trust)?),
        None => None,
    };
    let mut variables = variables::base(&id, &folder);
    if let Some(wf) = &workflow_file {
        variables::resolve_into(p, wf, &id, &folder, &mut variables)?;
        warnings.extend(wf.warnings.iter().map(Notice::new));
    }
    let described = describe(p, &opts, workflow_file.as_ref(), &mut warnings)?;
    // The work-session link is made first, under the session's own locks and
    // before the run lock exists (lock order pointer → session → run).
    let metadata = linked_metadata(p, &opts, &agent, &id, &folder, &mut warnings);
    let now = p.clock.now();
    let title = opts.title.filter(|t| !t.trim().is_empty());
    let mut manifest = new_manifest(&id, agent, title, described, metadata, now);
    refresh_display(&mut manifest, now);

    let _lock = p.locks.exclusive(&id.lock_name())?;
    let run = Run {
        id: id.clone(),
        folder: folder.clone(),
        manifest,
    };
    write_through(p, vec![pending(&run)], || {
        logbook_store::run::create(p, &run.id, &run.manifest)?;
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

/// Refuses a start whose free text is over its limits or whose agent or
/// metadata keys are blank; returns the agent.
fn checked_fields(opts: &StartOptions) -> Result<String> {
    let agent = required("agent", &opts.agent)?;
    for (field, value) in [
        ("title", &opts.title),
        ("bundle", &opts.bundle),
        ("description", &opts.description),
        ("user", &opts.user),
    ] {
        bounded(field, value.as_deref().unwrap_or_default())?;
    }
    bounded_each(
        "input",
        &opts.inputs.iter().map(|(_, v)| v).collect::<Vec<_>>(),
    )?;
    bounded_each("tag", &opts.tags)?;
    for (k, v) in &opts.metadata {
        required("metadata key", k)?;
        bounded("metadata", &v.to_string())?;
    }
    Ok(agent)
}

/// What a new run's manifest says about its work, each field from the
/// options, else the workflow file, else the config.
struct Described {
    workflow: String,
    description: String,
    bundle: String,
    user: String,
    inputs: Map<String, Value>,
    related: Vec<String>,
    tags: Vec<String>,
}

/// Decides the run's workflow, description, bundle, user, inputs, related
/// runs and tags, and warns about the blank or surprising ones.
fn describe(
    p: &Logbook,
    opts: &StartOptions,
    workflow_file: Option<&variables::WorkflowFile>,
    warnings: &mut Vec<Notice>,
) -> Result<Described> {
    let workflow = workflow_name(opts, workflow_file)?;
    let description = nonblank(&opts.description)
        .or_else(|| workflow_file.and_then(|w| w.description.clone()))
        .unwrap_or_default();
    let bundle = nonblank(&opts.bundle)
        .or_else(|| workflow_file.and_then(|w| w.bundle.clone()))
        .or_else(|| p.config.default_bundle.clone())
        .unwrap_or_default();
    warnings.extend(blank_fields_warning(&bundle, &description));
    warnings.extend(folder_warning(p, workflow_file));

    let mut inputs = workflow_file.map(|w| w.inputs.clone()).unwrap_or_default();
    for (k, v) in &opts.inputs {
        let k = required("input key", k)?;
        inputs.insert(k, Value::String(v.clone()));
    }
    let related = related_runs(p, &opts.related)?;
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
        .or_else(|| workflow_file.and_then(|w| w.user.clone()))
        .unwrap_or_else(|| p.config.user.clone());
    Ok(Described {
        workflow,
        description,
        bundle,
        user,
        inputs,
        related,
        tags,
    })
}

/// The workflow's name: given, else the workflow file's `name:`.
fn workflow_name(
    opts: &StartOptions,
    workflow_file: Option<&variables::WorkflowFile>,
) -> Result<String> {
    match (&opts.workflow, workflow_file) {
        (Some(w), _) => required("workflow", w),
        (None, Some(wf)) => wf.name.clone().ok_or_else(|| {
            Error::invalid(
                "workflow-file",
                wf.path.display().to_string(),
                "it has no `name:`; add one or pass --workflow NAME",
            )
        }),
        (None, None) => Err(Error::invalid(
            "workflow",
            "",
            "pass --workflow NAME or --workflow-file PATH",
        )),
    }
}

/// The related runs, resolved, each once; one that does not exist is
/// refused.
fn related_runs(p: &Logbook, given: &[String]) -> Result<Vec<String>> {
    let mut related: Vec<String> = vec![];
    for given in given {
        let r = resolve(p, given).and_then(|r| logbook_store::run::load(p, &r).map(|_| r));
        let r = r.map_err(|e| match e {
            Error::NotFound { .. } => Error::not_found(
                "related run",
                given.trim(),
                Next::say("a related run must exist; ")
                    .step(Step::find_runs())
                    .text(" lists them"),
            ),
            e => e,
        })?;
        if !related.iter().any(|x| r == x.as_str()) {
            related.push(r.to_string());
        }
    }
    Ok(related)
}

/// The manifest's metadata: the caller's, then the active work session the
/// run is linked to (a failed link is a warning, not a failure) and the
/// project's repository.
fn linked_metadata(
    p: &Logbook,
    opts: &StartOptions,
    agent: &str,
    id: &RunId,
    folder: &std::path::Path,
    warnings: &mut Vec<Notice>,
) -> Map<String, Value> {
    let mut metadata = opts.metadata.clone();
    match work_session::spawn_agent(
        p,
        None,
        agent,
        Some(id.as_str()),
        Some(&folder.to_string_lossy()),
    ) {
        Ok((ws, _)) => {
            metadata.insert("work_session".into(), Value::String(ws.session_id));
        }
        Err(Error::NoActiveSession) => {}
        Err(e) => warnings.push(Notice::new(format!(
            "run not linked to the active work session: {e}"
        ))),
    }
    if let Some(repo) = work_session::project_repository(p) {
        repo.record_in(&mut metadata, Casing::Snake);
    }
    metadata
}

/// A `running` manifest of seed 000's version, started `now`; the title
/// is the agent's name unless one is given.
fn new_manifest(
    id: &RunId,
    agent: String,
    title: Option<String>,
    d: Described,
    metadata: Map<String, Value>,
    now: Timestamp,
) -> Manifest {
    Manifest {
        version: MANIFEST_VERSION.into(),
        session_id: id.to_string(),
        agent: AgentInfo {
            name: agent.clone(),
            title: Some(title.unwrap_or(agent)),
            bundle: Some(d.bundle),
            extra: Map::new(),
        },
        workflow: WorkflowInfo {
            name: d.workflow,
            description: Some(d.description),
            extra: Map::new(),
        },
        execution: Execution {
            started_at: clock::format(now),
            completed_at: None,
            status: RunStatus::Running,
            user: Some(d.user),
            extra: Map::new(),
        },
        outputs: vec![],
        inputs: Some(d.inputs),
        related_sessions: (!d.related.is_empty()).then_some(d.related),
        metadata: (!metadata.is_empty()).then_some(metadata),
        tags: d.tags,
        display_name: None,
        display_timestamp: None,
        user_summary: None,
        message_count: None,
        extra: Map::new(),
    }
}

/// `value` trimmed, when there is something in it.
fn nonblank(value: &Option<String>) -> Option<String> {
    value
        .as_deref()
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_string)
}

/// The one line `run start` says when seed 000's required `agent.bundle`
/// or `workflow.description` is written empty: seed readers show a blank.
fn blank_fields_warning(bundle: &str, description: &str) -> Option<Notice> {
    let mut blank = vec![];
    let mut next = Next::none();
    if bundle.is_empty() {
        blank.push("agent.bundle");
        next = next
            .text("for agent.bundle give ")
            .option("bundle")
            .text(", a workflow file under bmad/BUNDLE/, or default_bundle in logbook.yaml");
    }
    if description.is_empty() {
        blank.push("workflow.description");
        if !next.is_empty() {
            next = next.text("; ");
        }
        next = next
            .text("for workflow.description give ")
            .option("description")
            .text(" or a workflow file with a description");
    }
    (!blank.is_empty()).then(|| {
        Notice::new(format!(
            "{} empty; seed 000 requires {}, so its readers will show a blank",
            blank.join(" and "),
            if blank.len() == 1 { "it" } else { "them" }
        ))
        .next(next)
    })
}

/// The one line `run start` says when the bundle config keeps runs in
/// another folder than the one this run goes to: the project's bundle
/// against `logbook.yaml`, or the bundle a workflow file names.
fn folder_warning(p: &Logbook, wf: Option<&variables::WorkflowFile>) -> Option<Notice> {
    let ours = &p.config.agent_outputs_folder;
    let named = wf
        .and_then(|wf| Some((wf.bundle_config.clone()?, wf.agent_outputs_folder.clone())))
        .filter(|(_, theirs)| theirs != ours);
    let (config, theirs) = named.or_else(|| {
        p.config
            .bundle_disagreement()
            .map(|(c, t)| (c.to_path_buf(), t.to_path_buf()))
    })?;
    Some(
        Notice::new(format!(
            "bundle config {} keeps runs in {}, but this run goes to {} ({})",
            config.display(),
            theirs.display(),
            ours.display(),
            match &p.config.agent_outputs_source {
                logbook_store::config::FolderSource::LogbookYaml =>
                    "agent_outputs_folder in logbook.yaml",
                logbook_store::config::FolderSource::Bundle(_) => "the project's bundle config",
                logbook_store::config::FolderSource::Default => "Logbook's default",
            }
        ))
        .next(Next::of(
            Step::Doctor { fix: false },
            " says how to make them agree",
        )),
    )
}

pub(super) fn required(field: &'static str, value: &str) -> Result<String> {
    bounded(field, value)?;
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
pub(super) fn update<T>(
    p: &Logbook,
    id: &RunId,
    change: impl FnOnce(&mut Run) -> Result<T>,
) -> Result<(Run, T)> {
    let _lock = p.locks.exclusive(&id.lock_name())?;
    let (mut run, raw) = logbook_store::run::load_raw(p, id)?;
    // Under the lock `archive` takes to move the run: the move landed
    // before this write, which must not land in the archive nor make the
    // run again in the live set.
    if logbook_store::archive::is_archived(p, &run.folder) {
        return Err(Error::RunArchived {
            id: id.to_string(),
            folder: run.folder,
        });
    }
    let read = text::to_value(&run.manifest_file(), &run.manifest)?;
    let out = change(&mut run)?;
    refresh_display(&mut run.manifest, p.clock.now());
    write_through(p, vec![pending(&run)], || {
        logbook_store::run::save(&run, &raw, &read)?;
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
    p: &Logbook,
    id: &RunId,
    transcript: &str,
    user_summary: Option<String>,
    message_count: u64,
) -> Result<Run> {
    Ok(update(p, id, |run| {
        // Named in the manifest so that `finish` finds the run's measured
        // tokens without reading every transcript.
        let metadata = run.manifest.metadata.get_or_insert_with(Map::new);
        metadata.insert(TRANSCRIPT_KEY.into(), Value::String(transcript.into()));
        // Every conversation that named the run, not only the last: the run
        // page links them all without reading any transcript.
        let list = metadata
            .entry(TRANSCRIPTS_KEY)
            .or_insert_with(|| Value::Array(vec![]));
        if !list.is_array() {
            *list = Value::Array(vec![]);
        }
        if let Value::Array(ids) = list
            && !ids.iter().any(|v| v.as_str() == Some(transcript))
        {
            ids.push(Value::String(transcript.into()));
        }
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
pub(super) fn finished(run: &Run, registering: bool) -> Error {
    Error::RunFinished {
        id: run.id.to_string(),
        status: run.manifest.execution.status.to_string(),
        finished_at: run.manifest.execution.completed_at.clone(),
        registering,
    }
}

/// Finishes run `id` with `status` (completed, failed or cancelled).
pub fn finish(p: &Logbook, id: &str, status: RunStatus) -> Result<Run> {
    let id = resolve(p, id)?;
    if !status.is_final() {
        return Err(Error::invalid("status", status.as_str(), RunStatus::FINAL));
    }
    let (run, ()) = update(p, &id, |run| {
        if run.manifest.execution.status != RunStatus::Running {
            return Err(finished(run, false));
        }
        run.manifest.execution.status = status;
        run.manifest.execution.completed_at = Some(p.clock.now_string());
        Ok(())
    })?;
    // The run is finished whatever happens to its work session's entry; a
    // failure there is told, not raised. Taken after the run's lock is let
    // go: the session's lock comes before a run's, never inside it.
    if let Err(e) = complete_spawned(p, &run) {
        p.notices.push(format!(
            "run {} finished, but its entry in the work session's agents_spawned was not completed: {e}",
            run.id
        ));
    }
    Ok(run)
}

/// The manifest metadata key naming the transcript of the run's own
/// conversation (set when a transcript names the run in `runId`).
const TRANSCRIPT_KEY: &str = "transcript";

/// The manifest metadata key listing every transcript that named the run
/// in its `runId`, oldest first.
const TRANSCRIPTS_KEY: &str = "transcripts";

/// The transcripts `run`'s manifest says named it (`runId`), oldest first:
/// what [`crate::ops::transcript::links::of_run`] checks.
pub fn conversations(run: &Run) -> Vec<String> {
    let metadata = run.manifest.metadata.as_ref();
    let mut out: Vec<String> = metadata
        .and_then(|m| m.get(TRANSCRIPTS_KEY))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect();
    if let Some(last) = metadata
        .and_then(|m| m.get(TRANSCRIPT_KEY))
        .and_then(Value::as_str)
        && !out.iter().any(|t| t == last)
    {
        out.push(last.to_string());
    }
    out
}

/// Completes the `agents_spawned` entry `start` made for `run` in its work
/// session, as seed 002 readers expect of a finished agent: `completed`,
/// `status`, and `tokens_used` measured from its transcript where it has one
/// (else the figure already there stays). A closed session is read-only and
/// is left as it was.
fn complete_spawned(p: &Logbook, run: &Run) -> Result<()> {
    let metadata = run.manifest.metadata.as_ref();
    let Some(session) = metadata
        .and_then(|m| m.get("work_session"))
        .and_then(Value::as_str)
    else {
        return Ok(());
    };
    let tokens = metadata
        .and_then(|m| m.get(TRANSCRIPT_KEY))
        .and_then(Value::as_str)
        .and_then(|t| crate::ops::transcript::measured(p, t).ok())
        .map(|m| m.peak_total_tokens);
    let outcome = match run.manifest.execution.status {
        RunStatus::Completed => AgentOutcome::Completed,
        RunStatus::Cancelled => AgentOutcome::Cancelled,
        _ => AgentOutcome::Failed,
    };
    match work_session::complete_spawned(p, session, run.id.as_str(), tokens, outcome) {
        Err(Error::SessionClosed { .. }) => Ok(()),
        other => other.map(drop),
    }
}

/// Adds `related` to run `id`'s `related_sessions` (both must exist). Only
/// the child's manifest changes; the reverse edge is found by scanning.
pub fn link(p: &Logbook, id: &str, related: &str) -> Result<(Run, bool)> {
    let id = resolve(p, id)?;
    let related_given = related;
    let related = resolve(p, related).map_err(|e| match e {
        Error::NotFound { .. } => Error::not_found(
            "related run",
            related_given.trim(),
            Next::say("both runs must exist; ")
                .step(Step::find_runs())
                .text(" lists them"),
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
    logbook_store::run::load(p, &related).map_err(|e| match e {
        Error::NotFound { .. } => Error::not_found(
            "related run",
            related.as_str(),
            Next::say("both runs must exist; ")
                .step(Step::find_runs())
                .text(" lists them"),
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
fn ancestor_path(p: &Logbook, from: &RunId, target: &RunId) -> Result<Option<Vec<String>>> {
    let index = Index::open_synced(p).ok();
    let parents_of = |id: &str| -> Result<Vec<String>> {
        let run = match &index {
            Some(index) => index.read().run(id)?,
            None => match RunId::parse(id).and_then(|id| logbook_store::run::load(p, &id)) {
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
pub fn mark_abandoned(p: &Logbook, id: &RunId) -> Result<bool> {
    Ok(update(p, id, |run| {
        if run.manifest.execution.status != RunStatus::Running {
            return Ok(false);
        }
        run.manifest.execution.status = RunStatus::Failed;
        run.manifest.execution.completed_at = Some(p.clock.now_string());
        run.manifest
            .metadata
            .get_or_insert_with(Map::new)
            .insert("abandoned".into(), Value::Bool(true));
        Ok(true)
    })?
    .1)
}
