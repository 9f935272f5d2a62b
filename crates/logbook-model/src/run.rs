//! Runs (seed 000): one agent workflow execution, one folder
//! `{agent_outputs_folder}/{uuid}/` and its `manifest.json`.
//!
//! The principal types are [`Manifest`] (the seed's schema, field for field,
//! plus Logbook's `tags`), [`OutputRecord`] and [`Run`] (a manifest with its
//! id and folder).
//!
//! Reading is lenient: unknown output types and statuses are kept as written,
//! any RFC 4122 UUID is accepted, optional fields may be missing, and unknown
//! keys anywhere are preserved on rewrite. A manifest that is not JSON or
//! lacks `agent.name`, `workflow.name` or `execution.started_at` is invalid:
//! listings skip it and `logbook doctor` names it. Writing is strict: Logbook
//! only writes the seed's output types and statuses and creates v4 ids.

use std::path::{Path, PathBuf};

use jiff::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::clock;
use crate::enums::string_enum;
use crate::error::{Error, Result};
use crate::ids::RunId;
use crate::text;

/// Every run folder holds exactly this file.
pub const MANIFEST_FILE: &str = "manifest.json";
/// The manifest schema version Logbook writes.
pub const MANIFEST_VERSION: &str = "1.0.0";

/// One run's manifest: the seed's fields (note its mix of `session_id` and
/// `displayName` spellings) plus whatever else the file carried.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Manifest schema version (semver), "1.0.0".
    #[serde(default = "default_version", deserialize_with = "lenient_version")]
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
    #[serde(
        default,
        deserialize_with = "text::lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub inputs: Option<Map<String, Value>>,
    /// Earlier runs this one builds on (lineage parents).
    #[serde(
        default,
        deserialize_with = "text::lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub related_sessions: Option<Vec<String>>,
    /// Workflow-specific data; Logbook adds `work_session` and `abandoned`.
    #[serde(
        default,
        deserialize_with = "text::lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub metadata: Option<Map<String, Value>>,
    /// Logbook's extension (the seed's "Session Tagging"): labels for `find --tag`.
    #[serde(
        default,
        deserialize_with = "text::lenient",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub tags: Vec<String>,
    /// Story 6.3 display name as stored at creation; shown fresh via `naming`.
    #[serde(
        rename = "displayName",
        default,
        deserialize_with = "text::lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub display_name: Option<String>,
    /// Story 6.3 smart timestamp as stored at creation.
    #[serde(
        rename = "displayTimestamp",
        default,
        deserialize_with = "text::lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub display_timestamp: Option<String>,
    /// Story 6.3: the first user message, truncated.
    #[serde(
        rename = "userSummary",
        default,
        deserialize_with = "text::lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub user_summary: Option<String>,
    /// Story 6.3: messages in the conversation.
    #[serde(
        rename = "messageCount",
        default,
        deserialize_with = "text::lenient",
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

fn lenient_version<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<String, D::Error> {
    Ok(Option::<String>::deserialize(Value::deserialize(d)?)
        .ok()
        .flatten()
        .unwrap_or_else(default_version))
}

/// The seed's `agent` object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentInfo {
    /// Agent identifier ("alex"); required.
    pub name: String,
    /// Human-readable title ("Alex the Facilitator").
    #[serde(
        default,
        deserialize_with = "text::lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub title: Option<String>,
    /// Bundle path ("bmad/bmm").
    #[serde(
        default,
        deserialize_with = "text::lenient",
        skip_serializing_if = "Option::is_none"
    )]
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
    #[serde(
        default,
        deserialize_with = "text::lenient",
        skip_serializing_if = "Option::is_none"
    )]
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
    #[serde(
        default,
        deserialize_with = "text::lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub completed_at: Option<String>,
    /// Lifecycle state; a file without one is taken as still running.
    #[serde(default, deserialize_with = "text::lenient")]
    pub status: RunStatus,
    /// Who started the run.
    #[serde(
        default,
        deserialize_with = "text::lenient",
        skip_serializing_if = "Option::is_none"
    )]
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
    #[serde(rename = "type", default, deserialize_with = "text::lenient")]
    pub output_type: OutputType,
    /// What the file is for.
    #[serde(default, deserialize_with = "text::lenient")]
    pub description: String,
    /// When it was first registered (RFC 3339).
    #[serde(default, deserialize_with = "text::lenient")]
    pub created_at: String,
    /// Keys Logbook does not know.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

string_enum! {
    /// A run's lifecycle state.
    pub enum RunStatus("status") {
        /// Started, not finished (also assumed when a file has no status).
        Running = "running",
        /// Finished successfully.
        Completed = "completed",
        /// Finished unsuccessfully (or abandoned, see `doctor --fix`).
        Failed = "failed",
        /// Stopped on purpose.
        Cancelled = "cancelled",
    }
}

impl RunStatus {
    /// Why a status was refused as a run's final one, in the words every
    /// face refuses it with.
    pub const FINAL: &'static str = "expected one of: completed, failed, cancelled";

    /// Whether a run can finish with this status: completed, failed or
    /// cancelled; not running, nor a word another tool wrote.
    pub fn is_final(&self) -> bool {
        matches!(
            self,
            RunStatus::Completed | RunStatus::Failed | RunStatus::Cancelled
        )
    }

    /// `s` as the status a run finishes with (`run finish --status`, MCP
    /// `run_finish`), or why not.
    pub fn parse_final(s: &str) -> crate::Result<RunStatus> {
        s.parse::<RunStatus>()
            .ok()
            .filter(RunStatus::is_final)
            .ok_or_else(|| crate::Error::invalid("status", s, RunStatus::FINAL))
    }
}

impl Default for RunStatus {
    /// A file without a status is taken as still running.
    fn default() -> Self {
        RunStatus::Running
    }
}

string_enum! {
    /// What kind of file an output is.
    pub enum OutputType("type") {
        /// Prose for people.
        Document = "document",
        /// Machine-readable data.
        Data = "data",
        /// A generated report.
        Report = "report",
        /// Anything else the agent produced.
        Artifact = "artifact",
    }
}

impl Default for OutputType {
    /// The seed's examples register prose first.
    fn default() -> Self {
        OutputType::Document
    }
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

    /// What seed 000's schema would reject in this manifest (its
    /// `parseManifest` validates), one entry per field: a status outside
    /// its enum, a timestamp that is not an ISO 8601 date-time with its
    /// offset, a required field missing or empty. Reading stays lenient
    /// (such a run is still listed); `doctor` names these.
    pub fn seed_schema_problems(&self) -> Vec<String> {
        let mut out = vec![];
        let mut required = |field: String, value: Option<&str>| {
            if value.is_none_or(|v| v.trim().is_empty()) {
                out.push(format!("{field} is missing or empty"));
            }
        };
        required("version".into(), Some(&self.version));
        required("session_id".into(), Some(&self.session_id));
        required("agent.name".into(), Some(&self.agent.name));
        required("agent.title".into(), self.agent.title.as_deref());
        required("agent.bundle".into(), self.agent.bundle.as_deref());
        required("workflow.name".into(), Some(&self.workflow.name));
        required(
            "workflow.description".into(),
            self.workflow.description.as_deref(),
        );
        required("execution.user".into(), self.execution.user.as_deref());
        for (i, o) in self.outputs.iter().enumerate() {
            required(format!("outputs[{i}].file"), Some(&o.file));
            required(format!("outputs[{i}].type"), Some(o.output_type.as_str()));
            required(format!("outputs[{i}].description"), Some(&o.description));
        }
        if let RunStatus::Other(s) = &self.execution.status {
            out.push(format!(
                "execution.status {s:?} is not one of {}",
                RunStatus::KNOWN.join(", ")
            ));
        }
        let mut date_time = |field: String, value: Option<&str>| match value {
            Some(v) if v.trim().parse::<Timestamp>().is_err() => out.push(format!(
                "{field} {v:?} is not an ISO 8601 date-time (e.g. 2025-10-05T23:01:45.123Z)"
            )),
            None if field.starts_with("outputs") => {
                out.push(format!("{field} is missing or empty"))
            }
            _ => {}
        };
        date_time(
            "execution.started_at".into(),
            Some(&self.execution.started_at),
        );
        date_time(
            "execution.completed_at".into(),
            self.execution.completed_at.as_deref(),
        );
        for (i, o) in self.outputs.iter().enumerate() {
            date_time(
                format!("outputs[{i}].created_at"),
                Some(&o.created_at)
                    .filter(|c| !c.is_empty())
                    .map(String::as_str),
            );
        }
        out
    }

    /// Whether seed 000's schema would reject this manifest's values: a
    /// status outside the enum, a timestamp that is not a date-time. The
    /// index never trusts such a run as settled, so the default `doctor`
    /// reads and names it. A required field that is absent is named when
    /// doctor reads the manifest (`--full`, or a run not settled): other
    /// tools' manifests often leave out `title` or `user`, and a run never
    /// settled is looked at again by every listing, which at a million
    /// such runs would cost every listing a `stat` each.
    pub fn seed_schema_rejects_shape(&self) -> bool {
        let bad = |v: &str| v.trim().parse::<Timestamp>().is_err();
        matches!(self.execution.status, RunStatus::Other(_))
            || bad(&self.execution.started_at)
            || self.execution.completed_at.as_deref().is_some_and(bad)
            || self.outputs.iter().any(|o| bad(&o.created_at))
    }

    /// What find orders runs by, newest first: `started_at` as
    /// [`clock::order_ns`], `None` when it does not parse (listed last,
    /// as the index's NULL is).
    pub fn start_order(&self) -> Option<i64> {
        clock::parse(&self.execution.started_at).map(clock::order_ns)
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
    let (manifest, raw): (Manifest, Value) = text::parse_json_with_raw(path, "manifest", text)?;
    manifest.validate().map_err(|reason| Error::Corrupt {
        path: path.to_path_buf(),
        what: "manifest",
        reason,
    })?;
    Ok((manifest, raw))
}

/// Seed 000's order of the `execution` keys (its example manifest).
pub const EXECUTION_ORDER: [&str; 4] = ["started_at", "completed_at", "status", "user"];

/// The raw manifest a rewrite of `manifest` should merge over so that a
/// `completed_at` it adds lands in the seed's place (after `started_at`)
/// rather than last: `Some` only when the file's `execution` lacks one,
/// `manifest` sets it, and the keys the file has already follow the seed's
/// order (as every manifest Logbook writes does). A file another tool wrote
/// in its own order keeps it, the new key last, as any lossless rewrite.
pub fn raw_in_seed_order(raw: &Value, manifest: &Manifest) -> Option<Value> {
    manifest.execution.completed_at.as_ref()?;
    let exec = raw.get("execution")?.as_object()?;
    if exec.contains_key("completed_at") || !exec.contains_key("started_at") {
        return None;
    }
    let rank = |k: &str| EXECUTION_ORDER.iter().position(|o| *o == k);
    let ranks: Vec<usize> = exec.keys().filter_map(|k| rank(k)).collect();
    if !ranks.windows(2).all(|w| w[0] < w[1]) {
        return None;
    }
    let mut placed = Map::with_capacity(exec.len() + 1);
    for (k, v) in exec {
        placed.insert(k.clone(), v.clone());
        if k == "started_at" {
            // A slot the merge fills with the new value (the record as read
            // has no `completed_at`, so the slot is never kept as null).
            placed.insert("completed_at".into(), Value::Null);
        }
    }
    let mut out = raw.clone();
    out.as_object_mut()?
        .insert("execution".into(), Value::Object(placed));
    Some(out)
}

/// The status a run folder without `manifest.json` is listed with (seed
/// 000 shows such a folder by its UUID). A query may ask for it; it is never
/// written into a manifest, since [`RunStatus`] does not parse it.
pub const UNKNOWN_STATUS: &str = "unknown";

impl Manifest {
    /// Whether this stands for a run folder without `manifest.json` (see
    /// [`Manifest::absent`]): no manifest that parses has an empty agent.
    pub fn is_absent(&self) -> bool {
        self.agent.name.trim().is_empty()
    }

    /// What a run folder without `manifest.json` is listed as, so every
    /// listing can show it: its id, status [`UNKNOWN_STATUS`], no agent,
    /// workflow or outputs, and `seen_at` (the folder's time) as its start.
    pub fn absent(id: &RunId, seen_at: &str) -> Manifest {
        Manifest {
            version: default_version(),
            session_id: id.to_string(),
            agent: AgentInfo {
                name: String::new(),
                title: None,
                bundle: None,
                extra: Map::new(),
            },
            workflow: WorkflowInfo {
                name: String::new(),
                description: None,
                extra: Map::new(),
            },
            execution: Execution {
                started_at: seen_at.to_string(),
                completed_at: None,
                status: RunStatus::Other(UNKNOWN_STATUS.to_string()),
                user: None,
                extra: Map::new(),
            },
            outputs: vec![],
            inputs: None,
            related_sessions: None,
            metadata: None,
            tags: vec![],
            display_name: None,
            display_timestamp: None,
            user_summary: None,
            message_count: None,
            extra: Map::new(),
        }
    }
}

/// A run on disk: its id (the folder name), folder and manifest.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Run {
    /// The folder name, a UUID.
    pub id: RunId,
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
    /// The manifest, every field kept; `null` for a run folder without one
    /// (docs/interface.md), which holds [`Manifest::absent`] here.
    #[serde(serialize_with = "null_if_absent")]
    pub manifest: Manifest,
}

fn null_if_absent<S: serde::Serializer>(
    m: &Manifest,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    if m.is_absent() {
        s.serialize_none()
    } else {
        m.serialize(s)
    }
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
    fn a_run_finishes_only_as_completed_failed_or_cancelled() {
        for ok in ["completed", "failed", "cancelled"] {
            assert_eq!(
                RunStatus::parse_final(ok).map(|s| s.to_string()).ok(),
                Some(ok.into())
            );
        }
        for bad in ["running", "done", "", "COMPLETED "] {
            let e = RunStatus::parse_final(bad)
                .map(|_| ())
                .unwrap_err()
                .to_string();
            assert!(e.ends_with(RunStatus::FINAL), "{bad:?}: {e}");
        }
    }

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
}
