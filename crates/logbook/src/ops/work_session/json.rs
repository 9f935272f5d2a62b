//! The JSON every face prints for the work-session operations (`--json`,
//! MCP structured content, the web API): built here once so the faces
//! cannot drift apart.

use crate::error::Result;
use crate::model::work_session::{Listing, WorkSession};

/// `list --json` and `GET /api/sessions`: the active id, the live and the
/// archived sessions (each list empty unless asked for) and the files that
/// could not be read.
pub fn listing_json(listing: &Listing, live: bool, archived: bool) -> Result<serde_json::Value> {
    let to_json = |v: &[WorkSession], shown: bool| -> Result<Vec<serde_json::Value>> {
        if !shown {
            return Ok(vec![]);
        }
        v.iter().map(WorkSession::to_json).collect()
    };
    Ok(serde_json::json!({
        "active": listing.active,
        "sessions": to_json(&listing.sessions, live)?,
        "archived": to_json(&listing.archived, archived)?,
        "corrupt": listing.corrupt,
    }))
}

/// `switch --json`: the session switched to plus its restored `context`.
pub fn switched_json(ws: &WorkSession, context: &str) -> Result<serde_json::Value> {
    let mut json = ws.to_json()?;
    if let serde_json::Value::Object(m) = &mut json {
        m.insert("context".into(), context.into());
    }
    Ok(json)
}

/// `agent spawn --json`: exactly `{"id": …}`, as docs/interface.md promises.
pub fn spawned_json(agent_id: &str) -> serde_json::Value {
    serde_json::json!({ "id": agent_id })
}
