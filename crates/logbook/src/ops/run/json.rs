//! The JSON every face prints for these operations (`--json`, MCP structured
//! content, the web API): built here once so the faces cannot drift apart.

use jiff::Timestamp;
use serde_json::Value;

use super::{LatestOutput, Page, Started, entry, found};
use crate::model::run::{OutputRecord, Run};

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

/// `latest-output --json`: the path, its run, its record, whether the
/// file is still there and, if it is not the run's own, why (`unsafe`).
pub fn latest_output_json(found: &LatestOutput) -> Value {
    serde_json::json!({
        "path": found.path,
        "session_id": found.run.manifest.session_id,
        "output": found.output,
        "missing": found.missing,
        "unsafe": found.unconfined.map(|u| u.as_str()),
    })
}
