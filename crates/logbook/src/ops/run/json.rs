//! The JSON every face prints for these operations (`--json`, MCP structured
//! content, the web API): built here once so the faces cannot drift apart.

use jiff::Timestamp;
use serde_json::Value;

use super::{LatestOutput, Started, entry};
use crate::error::Result;
use crate::model::run::{OutputRecord, Run};
use crate::model::to_json;

/// `run start --json`: the new run's id, folder, manifest and variables.
pub fn started_json(started: &Started) -> Result<Value> {
    to_json("run", started)
}

/// `run show|finish|link --json`: the run as `find` lists it, display names
/// computed for `now`.
pub fn entry_json(run: &Run, now: Timestamp) -> Result<Value> {
    to_json("run", &entry(run, now))
}

/// `run output --json`: the run, the output record and its absolute path.
pub fn output_json(run: &Run, record: &OutputRecord) -> Value {
    serde_json::json!({
        "session_id": run.manifest.session_id,
        "output": record,
        "path": run.output_path(&record.file),
    })
}

/// `latest-output --json`: the path, its run and that run's status (which
/// `--status any` may make other than completed), its record, whether the
/// file is still there and, if it is not the run's own, why (`unsafe`).
/// In team scope, plus the machine it came from and its stored text;
/// `unsafe` is then always null, since the catalog answers with the text
/// that was pushed, never through a link on the machine it came from.
pub fn latest_output_json(found: &LatestOutput) -> Result<Value> {
    let mut json = serde_json::json!({
        "path": found.path,
        "session_id": found.run.manifest.session_id,
        "status": found.run.manifest.execution.status.as_str(),
        "output": found.output,
        "missing": found.missing,
        "unsafe": found.unconfined.map(|u| u.as_str()),
    });
    if let (Some(origin), Value::Object(m)) = (&found.origin, &mut json) {
        m.insert("origin".into(), Value::String(origin.clone()));
        m.insert("text".into(), to_json("output text", &found.text)?);
        m.insert("truncated".into(), Value::Bool(found.truncated));
    }
    Ok(json)
}
