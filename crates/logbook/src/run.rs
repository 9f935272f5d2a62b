//! Runs (seed 000): one agent workflow execution, one folder
//! `{agent_outputs_folder}/{uuid}/` and its `manifest.json`.
//!
//! The principal types are [`Manifest`] (the seed's schema, field for field,
//! plus Logbook's `tags`), [`OutputRecord`], [`RunQuery`] (discovery filters,
//! shared with the index so SQLite and a scan of the files agree) and
//! [`RunEntry`] (what `find --json` prints).
//!
//! Reading is lenient: unknown output types and statuses are kept as written,
//! any RFC 4122 UUID is accepted, optional fields may be missing, and unknown
//! keys anywhere are preserved on rewrite. A manifest that is not JSON or
//! lacks `agent.name`, `workflow.name` or `execution.started_at` is invalid:
//! listings skip it and `logbook doctor` names it. Writing is strict: Logbook
//! only writes the seed's output types and statuses and creates v4 ids.
//!
//! Every change goes through [`store`]: the run's lock (`run-{uuid}`), read,
//! change, atomic write. Lock order (DESIGN §8): pointer → work session → run;
//! the work session link is made before the run lock is taken.

mod lineage;
mod query;
mod variables;

use std::path::{Component, Path, PathBuf};

use jiff::Timestamp;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};
use uuid::Uuid;

use crate::clock;
use crate::error::{Error, Result};
use crate::project::Project;
use crate::store;
use crate::work_session::{self, CorruptFile};

pub use lineage::{Lineage, LineageEdge, LineageNode, lineage, lineage_of};
pub use query::{RunMatcher, RunQuery, parse_since};
pub use variables::{WorkflowFile, read_workflow_file};

/// Every run folder holds exactly this file.
pub const MANIFEST_FILE: &str = "manifest.json";
/// The manifest schema version Logbook writes.
pub const MANIFEST_VERSION: &str = "1.0.0";

/// One run's manifest: the seed's fields (note its mix of `session_id` and
/// `displayName` spellings) plus whatever else the file carried.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Manifest schema version (semver), "1.0.0".
    #[serde(default = "default_version")]
    pub version: String,
    /// The run's UUID; the folder carries the same name.
    pub session_id: String,
    /// Which agent ran.
    pub agent: AgentInfo,
    /// Which workflow it ran.
    pub workflow: WorkflowInfo,
    /// When, by whom, and how it ended.
    pub execution: Execution,
    /// Files the agent registered, in registration order.
    #[serde(default)]
    pub outputs: Vec<OutputRecord>,
    /// Workflow input parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs: Option<Map<String, Value>>,
    /// Earlier runs this one builds on (lineage parents).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub related_sessions: Option<Vec<String>>,
    /// Workflow-specific data; Logbook adds `work_session` and `abandoned`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    /// Logbook's extension (the seed's "Session Tagging"): labels for `find --tag`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Story 6.3 display name as stored at creation; shown fresh via `naming`.
    #[serde(
        rename = "displayName",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub display_name: Option<String>,
    /// Story 6.3 smart timestamp as stored at creation.
    #[serde(
        rename = "displayTimestamp",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub display_timestamp: Option<String>,
    /// Story 6.3: the first user message, truncated.
    #[serde(
        rename = "userSummary",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub user_summary: Option<String>,
    /// Story 6.3: messages in the conversation.
    #[serde(
        rename = "messageCount",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub message_count: Option<u64>,
    /// Keys Logbook does not know, preserved on rewrite.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

fn default_version() -> String {
    MANIFEST_VERSION.to_string()
}

/// The seed's `agent` object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentInfo {
    /// Agent identifier ("alex"); required.
    pub name: String,
    /// Human-readable title ("Alex the Facilitator").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Bundle path ("bmad/bmm").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bundle: Option<String>,
    /// Keys Logbook does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The seed's `workflow` object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WorkflowInfo {
    /// Workflow identifier ("intake-app"); required.
    pub name: String,
    /// Description from workflow.yaml.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Keys Logbook does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The seed's `execution` object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Execution {
    /// When the workflow started (RFC 3339); required.
    pub started_at: String,
    /// When it finished, once it has.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<String>,
    /// Lifecycle state; a file without one is taken as still running.
    #[serde(default)]
    pub status: RunStatus,
    /// Who started the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// Keys Logbook does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One registered output file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutputRecord {
    /// Path relative to the run folder, `/`-separated.
    pub file: String,
    /// document, data, report or artifact (others kept as read).
    #[serde(rename = "type", default)]
    pub output_type: OutputType,
    /// What the file is for.
    #[serde(default)]
    pub description: String,
    /// When it was first registered (RFC 3339).
    #[serde(default)]
    pub created_at: String,
    /// Keys Logbook does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

macro_rules! string_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident = $text:literal),+ $(,)? } field $field:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
        pub enum $name {
            $($(#[$vdoc])* $variant,)+
            /// A value another tool wrote; kept as is, never written by Logbook.
            Other(String),
        }

        impl $name {
            /// The values Logbook writes.
            pub const KNOWN: &'static [&'static str] = &[$($text),+];

            /// The word written to the file.
            pub fn as_str(&self) -> &str {
                match self {
                    $($name::$variant => $text,)+
                    $name::Other(s) => s,
                }
            }

            /// Strict parse for values about to be written.
            pub fn parse_strict(s: &str) -> Result<Self> {
                match Self::lenient(s) {
                    $name::Other(_) => Err(Error::invalid(
                        $field,
                        s,
                        format!("expected one of {}", Self::KNOWN.join(", ")),
                    )),
                    v => Ok(v),
                }
            }

            fn lenient(s: &str) -> Self {
                match s {
                    $($text => $name::$variant,)+
                    _ => $name::Other(s.to_string()),
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
                Ok(Self::lenient(&String::deserialize(d)?))
            }
        }
    };
}

string_enum! {
    /// A run's lifecycle state.
    RunStatus {
        /// Started, not finished (also assumed when a file has no status).
        #[default]
        Running = "running",
        /// Finished successfully.
        Completed = "completed",
        /// Finished unsuccessfully (or abandoned, see `doctor --fix`).
        Failed = "failed",
        /// Stopped on purpose.
        Cancelled = "cancelled",
    } field "status"
}

string_enum! {
    /// What kind of file an output is.
    OutputType {
        /// Prose for people.
        #[default]
        Document = "document",
        /// Machine-readable data.
        Data = "data",
        /// A generated report.
        Report = "report",
        /// Anything else the agent produced.
        Artifact = "artifact",
    } field "type"
}

impl Manifest {
    /// Checks the fields without which a manifest cannot be listed or
    /// ordered; the message names the field.
    pub fn validate(&self) -> std::result::Result<(), String> {
        if self.agent.name.trim().is_empty() {
            return Err("agent.name is empty".into());
        }
        if self.workflow.name.trim().is_empty() {
            return Err("workflow.name is empty".into());
        }
        if clock::parse(&self.execution.started_at).is_none() {
            return Err(format!(
                "execution.started_at {:?} is not an ISO 8601 timestamp",
                self.execution.started_at
            ));
        }
        Ok(())
    }

    /// `started_at` as an instant (validated manifests always have one).
    pub fn started_at(&self) -> Timestamp {
        clock::parse(&self.execution.started_at).unwrap_or(Timestamp::UNIX_EPOCH)
    }

    /// `completed_at` as an instant, when present and parseable.
    pub fn completed_at(&self) -> Option<Timestamp> {
        self.execution
            .completed_at
            .as_deref()
            .and_then(clock::parse)
    }

    /// `agent.title`, else `agent.name`: what people call the agent.
    pub fn agent_label(&self) -> &str {
        self.agent
            .title
            .as_deref()
            .filter(|t| !t.trim().is_empty())
            .unwrap_or(&self.agent.name)
    }

    /// The lineage parents (`related_sessions`), empty when absent.
    pub fn related(&self) -> &[String] {
        self.related_sessions.as_deref().unwrap_or(&[])
    }

    /// The work session this run was started under, if any.
    pub fn work_session(&self) -> Option<&str> {
        self.metadata
            .as_ref()
            .and_then(|m| m.get("work_session"))
            .and_then(Value::as_str)
    }
}

/// Parses manifest text leniently, returning the typed manifest and the raw
/// JSON (kept so a rewrite preserves key order).
pub fn parse_manifest(path: &Path, text: &str) -> Result<(Manifest, Value)> {
    let (manifest, raw): (Manifest, Value) = store::parse_json_with_raw(path, "manifest", text)?;
    manifest.validate().map_err(|reason| Error::Corrupt {
        path: path.to_path_buf(),
        what: "manifest",
        reason,
    })?;
    Ok((manifest, raw))
}

/// Checks that `id` is a UUID in its hyphenated form before it becomes part
/// of a path. Any RFC 4122 version is accepted (the seed's own example id is
/// not v4); new runs get v4.
pub fn validate_id(id: &str) -> Result<()> {
    let ok = id.len() == 36
        && id.chars().all(|c| c.is_ascii_hexdigit() || c == '-')
        && Uuid::try_parse(id).is_ok();
    if ok {
        Ok(())
    } else {
        Err(Error::invalid(
            "run id",
            id,
            "expected a UUID such as 3f2c9d14-4b5e-4789-81ab-cdef12345678; `logbook find` lists runs",
        ))
    }
}

/// A run on disk: its id (the folder name), folder and manifest.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Run {
    /// The folder name, a UUID.
    pub id: String,
    /// Absolute path of the run folder.
    pub folder: PathBuf,
    /// The parsed manifest.
    pub manifest: Manifest,
}

impl Run {
    /// Absolute path of the manifest.
    pub fn manifest_file(&self) -> PathBuf {
        self.folder.join(MANIFEST_FILE)
    }

    /// Absolute path of an output registered with relative path `file`.
    pub fn output_path(&self, file: &str) -> PathBuf {
        file.split('/').fold(self.folder.clone(), |p, c| p.join(c))
    }

    /// What `find --json` prints for this run, display names computed now.
    pub fn entry(&self, now: Timestamp, tz: &jiff::tz::TimeZone) -> RunEntry {
        RunEntry {
            session_id: self.manifest.session_id.clone(),
            folder: self.folder.clone(),
            display_name: crate::naming::display_name(&self.manifest, now, tz),
            label: crate::naming::folder_label(&self.manifest, tz),
            manifest: self.manifest.clone(),
        }
    }
}

/// One element of `find --json`: identity, display names computed at read
/// time, and the manifest as stored.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunEntry {
    /// The manifest's `session_id`.
    pub session_id: String,
    /// Absolute path of the run folder.
    pub folder: PathBuf,
    /// Story 6.3 display name, fresh for "now".
    pub display_name: String,
    /// Story 5.2.1 folder label.
    pub label: String,
    /// The manifest, every field kept.
    pub manifest: Manifest,
}

/// What a scan of `agent_outputs_folder` found.
#[derive(Debug, Default)]
pub struct ScanResult {
    /// Every valid run, in folder-name order.
    pub runs: Vec<Run>,
    /// Manifests that could not be read or are invalid; never fatal.
    pub corrupt: Vec<CorruptFile>,
}

/// The folder of run `id` (validated).
pub fn folder(p: &Project, id: &str) -> Result<PathBuf> {
    validate_id(id)?;
    Ok(p.config.agent_outputs_folder.join(id))
}

fn lock_name(id: &str) -> String {
    format!("run-{id}")
}

/// Takes run `id`'s write lock, for repairs that must not race a writer.
pub fn lock(p: &Project, id: &str) -> Result<store::LockGuard> {
    validate_id(id)?;
    p.locks.exclusive(&lock_name(id))
}

/// Reads run `id`; a missing folder or manifest is [`Error::NotFound`].
pub fn load(p: &Project, id: &str) -> Result<Run> {
    Ok(load_raw(p, id)?.0)
}

fn load_raw(p: &Project, id: &str) -> Result<(Run, Value)> {
    let folder = folder(p, id)?;
    let path = folder.join(MANIFEST_FILE);
    let Some(text) = store::read_optional(&path)? else {
        return Err(Error::not_found(
            "run",
            id,
            "`logbook find` lists the runs there are",
        ));
    };
    let (manifest, raw) = parse_manifest(&path, &text)?;
    Ok((
        Run {
            id: id.to_string(),
            folder,
            manifest,
        },
        raw,
    ))
}

/// Reads and parses every manifest under `agent_outputs_folder` (the seed's
/// discovery algorithm). Folders without a manifest are not runs; broken
/// manifests are reported in [`ScanResult::corrupt`].
pub fn scan(p: &Project) -> Result<ScanResult> {
    let dir = &p.config.agent_outputs_folder;
    let mut result = ScanResult::default();
    for (name, folder) in store::entries(dir, store::EntryKind::Dir)? {
        let path = folder.join(MANIFEST_FILE);
        let text = match store::read_optional(&path) {
            Ok(Some(t)) => t,
            Ok(None) => continue,
            Err(e) => {
                result.corrupt.push(CorruptFile {
                    path,
                    reason: e.to_string(),
                });
                continue;
            }
        };
        if validate_id(&name).is_err() {
            result.corrupt.push(CorruptFile {
                path,
                reason: format!("folder name {name:?} is not a run id (a UUID)"),
            });
            continue;
        }
        match parse_manifest(&path, &text) {
            Ok((manifest, _)) => result.runs.push(Run {
                id: name,
                folder,
                manifest,
            }),
            Err(e) => result.corrupt.push(CorruptFile {
                path,
                reason: e.to_string(),
            }),
        }
    }
    Ok(result)
}

/// Runs matching `query`, newest `started_at` first, after `offset` and up
/// to `limit`, answered by reading every manifest.
pub fn find_scan(p: &Project, query: &RunQuery) -> Result<Vec<Run>> {
    filter_sorted(scan(p)?.runs, query)
}

/// Keeps the runs matching `query`, newest `started_at` first, paged.
pub fn filter_sorted(runs: Vec<Run>, query: &RunQuery) -> Result<Vec<Run>> {
    let matcher = query.matcher()?;
    let mut runs: Vec<Run> = runs
        .into_iter()
        .filter(|r| matcher.matches(&r.manifest))
        .collect();
    sort_newest_first(&mut runs);
    Ok(query.page(runs))
}

/// Newest `started_at` first; ties broken by id so the order is stable.
pub fn sort_newest_first(runs: &mut [Run]) {
    runs.sort_by(|a, b| {
        b.manifest
            .started_at()
            .cmp(&a.manifest.started_at())
            .then_with(|| a.id.cmp(&b.id))
    });
}

/// The seed's "find latest output" pattern: the newest completed-or-not run
/// of `agent` whose workflow matches, and in it the last output of
/// `output_type` (any type when `None`). Returns the run and the absolute path.
pub fn latest_output(
    p: &Project,
    agent: &str,
    workflow: Option<&str>,
    output_type: Option<&str>,
) -> Result<(Run, OutputRecord, PathBuf)> {
    let query = RunQuery {
        agent: Some(agent.to_string()),
        workflow: workflow.map(str::to_string),
        ..RunQuery::default()
    };
    for run in find_scan(p, &query)? {
        let found = run
            .manifest
            .outputs
            .iter()
            .rev()
            .find(|o| output_type.is_none_or(|t| o.output_type.as_str() == t))
            .cloned();
        if let Some(out) = found {
            let path = run.output_path(&out.file);
            return Ok((run, out, path));
        }
    }
    let what = match (workflow, output_type) {
        (Some(w), Some(t)) => format!("{agent} (workflow {w}, type {t})"),
        (Some(w), None) => format!("{agent} (workflow {w})"),
        (None, Some(t)) => format!("{agent} (type {t})"),
        (None, None) => agent.to_string(),
    };
    Err(Error::not_found(
        "output of agent",
        what,
        "`logbook find --agent NAME` shows that agent's runs and their outputs",
    ))
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
    pub session_id: String,
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
    let id = Uuid::new_v4().to_string();
    let folder = p.config.agent_outputs_folder.join(&id);
    let mut warnings = vec![];

    let workflow_file = match &opts.workflow_file {
        Some(path) => Some(read_workflow_file(p, path)?),
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

    let mut related = vec![];
    for r in &opts.related {
        validate_id(r)?;
        load(p, r).map_err(|e| match e {
            Error::NotFound { .. } => Error::not_found(
                "related run",
                r.as_str(),
                "`--related` must name an existing run; `logbook find` lists them",
            ),
            e => e,
        })?;
        if !related.contains(r) {
            related.push(r.clone());
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
    match work_session::spawn_agent(p, None, &agent, Some(&id), Some(&folder.to_string_lossy())) {
        Ok((ws, _)) => {
            metadata.insert("work_session".into(), Value::String(ws.session_id));
        }
        Err(Error::NoActiveSession) => {}
        Err(e) => warnings.push(format!("run not linked to the active work session: {e}")),
    }

    let now = clock::now();
    let mut manifest = Manifest {
        version: MANIFEST_VERSION.into(),
        session_id: id.clone(),
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
    let tz = clock::local_zone();
    manifest.display_timestamp = Some(crate::naming::smart_timestamp(now, now, &tz));
    manifest.display_name = Some(crate::naming::display_name(&manifest, now, &tz));

    let _lock = p.locks.exclusive(&lock_name(&id))?;
    let path = folder.join(MANIFEST_FILE);
    save(p, &id, &path, || {
        std::fs::create_dir_all(&p.config.agent_outputs_folder)
            .map_err(|e| Error::io(&p.config.agent_outputs_folder, e))?;
        std::fs::create_dir(&folder).map_err(|e| Error::io(&folder, e))?;
        store::write_atomic(&path, store::to_json(&path, &manifest, None)?.as_bytes())
    })?;
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

/// Applies `change` to run `id`'s manifest under its lock and writes it back,
/// keeping the key order and every unknown field of the file.
pub fn update<T>(
    p: &Project,
    id: &str,
    change: impl FnOnce(&mut Run) -> Result<T>,
) -> Result<(Run, T)> {
    validate_id(id)?;
    let _lock = p.locks.exclusive(&lock_name(id))?;
    let (mut run, raw) = load_raw(p, id)?;
    let out = change(&mut run)?;
    let path = run.manifest_file();
    save(p, id, &path, || {
        store::write_atomic(
            &path,
            store::to_json(&path, &run.manifest, Some(&raw))?.as_bytes(),
        )
    })?;
    Ok((run, out))
}

/// The one place a manifest is written: the index marks the run pending,
/// `write` changes the file (under the run lock the caller holds), then the
/// index re-reads it (see [`crate::index::write_through`]).
fn save(p: &Project, id: &str, manifest: &Path, write: impl FnOnce() -> Result<()>) -> Result<()> {
    crate::index::write_through(
        p,
        &[crate::index::Touched {
            kind: crate::index::Kind::Run,
            path: manifest.to_path_buf(),
            lock: lock_name(id),
        }],
        write,
    )
}

/// Checks an output path an agent gave and returns it normalised
/// (`/`-separated, no `.` parts): relative, no `..`, no NUL, not the
/// manifest itself.
pub fn normalize_output_path(file: &str) -> Result<String> {
    let refuse = |reason: &str| Err(Error::invalid("output file", file, reason.to_string()));
    if file.contains('\0') {
        return refuse("contains a NUL byte");
    }
    if file.trim().is_empty() {
        return refuse("is empty; give a path relative to the run folder");
    }
    if file.starts_with('/') || file.starts_with('\\') || Path::new(file).is_absolute() {
        return refuse("is absolute; give a path relative to the run folder, e.g. report.md");
    }
    let mut parts = vec![];
    for c in Path::new(file).components() {
        match c {
            Component::Normal(s) => {
                let s = s.to_string_lossy();
                if s.contains('\\') {
                    return refuse("contains a backslash; use / between folders");
                }
                parts.push(s.into_owned());
            }
            Component::CurDir => {}
            Component::ParentDir => {
                return refuse("contains `..`; outputs must stay inside the run folder");
            }
            Component::RootDir | Component::Prefix(_) => {
                return refuse("is absolute; give a path relative to the run folder");
            }
        }
    }
    if parts.is_empty() {
        return refuse("names the run folder itself; name a file inside it");
    }
    if parts.len() == 1 && parts[0] == MANIFEST_FILE {
        return refuse("is the manifest itself; register the files the agent wrote");
    }
    Ok(parts.join("/"))
}

/// Registers (or re-registers) output `file` of run `id`. The file must
/// exist inside the run folder, symlinks included; registering the same path
/// again updates its type and description and keeps its first `created_at`.
pub fn register_output(
    p: &Project,
    id: &str,
    file: &str,
    output_type: OutputType,
    description: &str,
) -> Result<(Run, OutputRecord)> {
    validate_id(id)?;
    if let OutputType::Other(t) = &output_type {
        return Err(Error::invalid(
            "type",
            t.as_str(),
            format!("expected one of {}", OutputType::KNOWN.join(", ")),
        ));
    }
    let rel = normalize_output_path(file)?;
    let description = required("description", description)?;
    update(p, id, |run| {
        if run.manifest.execution.status != RunStatus::Running {
            return Err(Error::State(format!(
                "run {id} is {}; outputs can only be registered while it is running (start a new run, or link one with `logbook run link`)",
                run.manifest.execution.status
            )));
        }
        check_inside(&run.folder, &rel, file)?;
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

/// Refuses an output whose real location (symlinks followed) is not inside
/// the run's real folder, or that does not exist.
fn check_inside(folder: &Path, rel: &str, given: &str) -> Result<()> {
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
    if real == real_folder || !real.starts_with(&real_folder) {
        return Err(Error::invalid(
            "output file",
            given,
            "leads outside the run folder (through a symlink); copy the file into the run folder instead",
        ));
    }
    Ok(())
}

/// Finishes run `id` with `status` (completed, failed or cancelled).
pub fn finish(p: &Project, id: &str, status: RunStatus) -> Result<Run> {
    if matches!(status, RunStatus::Running | RunStatus::Other(_)) {
        return Err(Error::invalid(
            "status",
            status.as_str(),
            "a run finishes as completed, failed or cancelled",
        ));
    }
    Ok(update(p, id, |run| {
        if run.manifest.execution.status != RunStatus::Running {
            return Err(Error::State(format!(
                "run {id} is already {}; it finished at {}",
                run.manifest.execution.status,
                run.manifest
                    .execution
                    .completed_at
                    .as_deref()
                    .unwrap_or("an unknown time")
            )));
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
    validate_id(id)?;
    validate_id(related)?;
    if id == related {
        return Err(Error::invalid(
            "related run",
            related,
            "a run cannot be related to itself",
        ));
    }
    load(p, related).map_err(|e| match e {
        Error::NotFound { .. } => Error::not_found(
            "related run",
            related,
            "both runs must exist; `logbook find` lists them",
        ),
        e => e,
    })?;
    update(p, id, |run| {
        let list = run.manifest.related_sessions.get_or_insert_with(Vec::new);
        if list.iter().any(|r| r == related) {
            return Ok(false);
        }
        list.push(related.to_string());
        Ok(true)
    })
}

/// Marks a run that is still `running` as `failed` with
/// `metadata.abandoned = true`; never deletes anything. Returns `false` when
/// it had finished meanwhile.
pub fn mark_abandoned(p: &Project, id: &str) -> Result<bool> {
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

#[cfg(test)]
mod tests {
    use super::*;

    const SEED_EXAMPLE: &str = r#"{
  "version": "1.0.0",
  "session_id": "a3f2c9d1-4b5e-6789-01ab-cdef12345678",
  "agent": {"name": "alex", "title": "Alex the Facilitator", "bundle": "bmad/bmm"},
  "workflow": {"name": "intake-app", "description": "Initial requirements gathering"},
  "execution": {"started_at": "2025-10-05T23:01:45.123Z", "completed_at": "2025-10-05T23:05:22.456Z", "status": "completed", "user": "Bryan"},
  "outputs": [{"file": "initial-requirements.md", "type": "document", "description": "d", "created_at": "2025-10-05T23:05:20.789Z"}],
  "inputs": {"category": "Application Development"},
  "related_sessions": ["b4e3d8c2-5c6f-7890-12bc-def123456789"],
  "metadata": {"custom_field": "value"},
  "displayName": "2:30p - I need to purchase 10 laptops...",
  "displayTimestamp": "2:30p",
  "userSummary": "I need to purchase 10 laptops for the...",
  "messageCount": 8
}"#;

    #[test]
    fn seed_example_round_trips() {
        let (m, raw) = parse_manifest(Path::new("m.json"), SEED_EXAMPLE).unwrap();
        assert_eq!(m.execution.status, RunStatus::Completed);
        assert_eq!(serde_json::to_value(&m).unwrap(), raw);
    }

    #[test]
    fn lenient_reading_keeps_unknowns() {
        let text = r#"{"session_id":"x","agent":{"name":"a","color":"red"},"workflow":{"name":"w"},
            "execution":{"started_at":"2025-01-01T00:00:00Z","status":"paused"},
            "outputs":[{"file":"f","type":"video","description":"","created_at":"","size":3}],"zzz":1}"#;
        let (m, raw) = parse_manifest(Path::new("m.json"), text).unwrap();
        assert_eq!(m.execution.status, RunStatus::Other("paused".into()));
        assert_eq!(m.outputs[0].output_type, OutputType::Other("video".into()));
        let back = serde_json::to_value(&m).unwrap();
        assert_eq!(back["agent"]["color"], raw["agent"]["color"]);
        assert_eq!(back["outputs"][0]["size"], 3);
        assert_eq!(back["zzz"], 1);
    }

    #[test]
    fn invalid_manifests_name_the_field() {
        for (text, field) in [
            (
                r#"{"session_id":"x","agent":{},"workflow":{"name":"w"},"execution":{"started_at":"2025-01-01"}}"#,
                "name",
            ),
            (
                r#"{"session_id":"x","agent":{"name":"a"},"workflow":{"name":""},"execution":{"started_at":"2025-01-01"}}"#,
                "workflow.name",
            ),
            (
                r#"{"session_id":"x","agent":{"name":"a"},"workflow":{"name":"w"},"execution":{}}"#,
                "started_at",
            ),
            (
                r#"{"session_id":"x","agent":{"name":"a"},"workflow":{"name":"w"},"execution":{"started_at":"soon"}}"#,
                "started_at",
            ),
            ("not json", "manifest"),
        ] {
            let err = parse_manifest(Path::new("m.json"), text)
                .unwrap_err()
                .to_string();
            assert!(err.contains(field), "{field}: {err}");
        }
    }

    #[test]
    fn ids() {
        assert!(validate_id("a3f2c9d1-4b5e-6789-01ab-cdef12345678").is_ok());
        assert!(validate_id(&Uuid::new_v4().to_string()).is_ok());
        for bad in [
            "",
            "..",
            "a3f2c9d14b5e678901abcdef12345678",
            "../../etc/passwd",
            "a3f2c9d1-4b5e-6789-01ab-cdef1234567/",
        ] {
            assert!(validate_id(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn output_paths() {
        assert_eq!(normalize_output_path("./a//b.md").unwrap(), "a/b.md");
        for bad in [
            "../x",
            "/etc/passwd",
            "a/../../x",
            "a\0b",
            "",
            ".",
            "manifest.json",
            "a/..",
        ] {
            assert!(normalize_output_path(bad).is_err(), "{bad:?}");
        }
    }
}
