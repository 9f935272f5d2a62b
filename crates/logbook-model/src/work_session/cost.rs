//! A work session's dollar budget (issue 52), beside seed 002's token
//! budget: `cost.max_usd` in its file, and the tool calls the hooks denied
//! once the counted cost passed it (`cost.blocks`). What was spent is not
//! stored: it is the cost of the agent sessions linked to it, as the import
//! counted them, computed when asked.
//!
//! The seed's thresholds apply to each limit (yellow above 80 %, red above
//! 95 %), and the indicator shows the nearer one ([`indicator_with_cost`]).

use serde_json::{Map, Value, json};

use super::{Indicator, WorkSession};

/// The key of the dollar budget in a session's file.
pub const COST_KEY: &str = "cost";

/// The most blocks a session's file keeps (the newest); `blocked` counts all.
pub const BLOCKS_KEPT: usize = 20;

/// The session's dollar limit, when it has one.
pub fn max_cost(ws: &WorkSession) -> Option<f64> {
    ws.extra
        .get(COST_KEY)?
        .get("max_usd")?
        .as_f64()
        .filter(|v| v.is_finite() && *v > 0.0)
}

fn cost_map(ws: &mut WorkSession) -> &mut Map<String, Value> {
    let slot = ws
        .extra
        .entry(COST_KEY.to_string())
        .or_insert_with(|| Value::Object(Map::new()));
    if !slot.is_object() {
        *slot = Value::Object(Map::new());
    }
    match slot {
        Value::Object(m) => m,
        _ => unreachable!("made an object just above"),
    }
}

/// Sets the dollar limit.
pub fn set_max_cost(ws: &mut WorkSession, usd: f64) {
    cost_map(ws).insert("max_usd".into(), json!(crate::price::round_usd(usd)));
}

/// Records one tool call a hook denied: when, which tool, which agent
/// session, and the counted cost it saw.
pub fn record_block(ws: &mut WorkSession, at: &str, tool: &str, agent_session: &str, counted: f64) {
    let m = cost_map(ws);
    let total = m.get("blocked").and_then(Value::as_u64).unwrap_or(0) + 1;
    m.insert("blocked".into(), json!(total));
    let list = m
        .entry("blocks".to_string())
        .or_insert_with(|| Value::Array(vec![]));
    if !list.is_array() {
        *list = Value::Array(vec![]);
    }
    if let Value::Array(items) = list {
        items.push(json!({
            "at": at,
            "tool": tool,
            "agent_session": agent_session,
            "counted_usd": crate::price::round_usd(counted),
        }));
        let extra = items.len().saturating_sub(BLOCKS_KEPT);
        items.drain(..extra);
    }
}

/// How many tool calls were denied, and the newest ones kept.
pub fn blocks(ws: &WorkSession) -> (u64, Vec<Value>) {
    let Some(m) = ws.extra.get(COST_KEY) else {
        return (0, vec![]);
    };
    let kept = m
        .get("blocks")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let n = m
        .get("blocked")
        .and_then(Value::as_u64)
        .unwrap_or(kept.len() as u64);
    (n, kept)
}

/// Links a transcript measured by `usage --from-transcript`: its cost (and
/// its subagents') counts toward the session's.
pub fn link_transcript(ws: &mut WorkSession, id: &str) {
    let m = cost_map(ws);
    let list = m
        .entry("transcripts".to_string())
        .or_insert_with(|| Value::Array(vec![]));
    if !list.is_array() {
        *list = Value::Array(vec![]);
    }
    if let Value::Array(items) = list
        && !items.iter().any(|v| v.as_str() == Some(id))
    {
        items.push(Value::from(id));
    }
}

/// The agent sessions whose cost is the session's: those the hooks linked,
/// and the transcripts `usage --from-transcript` measured.
pub fn linked(ws: &WorkSession) -> Vec<String> {
    let mut out: Vec<String> = ws
        .agent_sessions
        .iter()
        .map(|a| a.session_id.to_ascii_lowercase())
        .collect();
    let more = ws
        .extra
        .get(COST_KEY)
        .and_then(|m| m.get("transcripts"))
        .and_then(Value::as_array);
    for id in more.into_iter().flatten().filter_map(Value::as_str) {
        let id = id.to_ascii_lowercase();
        if !out.contains(&id) {
            out.push(id);
        }
    }
    out
}

/// The seed's level for a share of a limit (1.0 is all of it).
pub fn level(ratio: f64) -> Indicator {
    if ratio > 0.95 {
        Indicator::Critical
    } else if ratio > 0.80 {
        Indicator::Warning
    } else {
        Indicator::Active
    }
}

/// The session's indicator with its dollar limit too: of the two limits,
/// the nearer one (the larger share used) decides. A paused, closed or
/// blocked session keeps its own.
pub fn indicator_with_cost(ws: &WorkSession, cost_ratio: Option<f64>) -> Indicator {
    let own = ws.indicator();
    let Some(ratio) = cost_ratio else {
        return own;
    };
    if !matches!(
        own,
        Indicator::Active | Indicator::Warning | Indicator::Critical
    ) {
        return own;
    }
    let rank = |i: Indicator| match i {
        Indicator::Critical => 2,
        Indicator::Warning => 1,
        _ => 0,
    };
    let by_cost = level(ratio);
    if rank(by_cost) > rank(own) {
        by_cost
    } else {
        own
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(tokens_used: u64) -> WorkSession {
        let mut ws: WorkSession = serde_saphyr::from_str(
            "session_id: SES202601-A-B\ncreated: '2026-01-01T00:00:00Z'\nlast_updated: '2026-01-01T00:00:00Z'\nstatus: active\nclient: A\nproject: B\nprefix: SES\ntokens: {max: 100}\n",
        )
        .unwrap();
        ws.tokens.current = tokens_used;
        ws
    }

    #[test]
    fn the_nearer_limit_decides() {
        let mut ws = session(10);
        set_max_cost(&mut ws, 25.0);
        assert_eq!(max_cost(&ws), Some(25.0));
        assert_eq!(indicator_with_cost(&ws, Some(0.5)), Indicator::Active);
        assert_eq!(indicator_with_cost(&ws, Some(0.81)), Indicator::Warning);
        assert_eq!(indicator_with_cost(&ws, Some(0.96)), Indicator::Critical);
        let ws = session(90);
        assert_eq!(indicator_with_cost(&ws, Some(0.1)), Indicator::Warning);
        assert_eq!(indicator_with_cost(&ws, None), Indicator::Warning);
    }

    #[test]
    fn blocks_are_counted_and_the_newest_kept() {
        let mut ws = session(0);
        for i in 0..25 {
            record_block(&mut ws, "t", &format!("tool{i}"), "s", 26.0);
        }
        let (n, kept) = blocks(&ws);
        assert_eq!(n, 25);
        assert_eq!(kept.len(), BLOCKS_KEPT);
        assert_eq!(kept[BLOCKS_KEPT - 1]["tool"], "tool24");
    }
}
