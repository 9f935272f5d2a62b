//! What a work session spent against its dollar budget (issue 52): the cost
//! of the agent sessions linked to it (and their subagents), from what the
//! import counted, at the project's price table. `status`, `tokens`,
//! `close`, the hooks' budget check and the status line read it here.

use serde::Serialize;
use serde_json::Value;

use crate::Logbook;
use crate::error::{Error, Result};
use crate::model::price::{TableId, round_usd};
use crate::model::work_session::cost::{self as ws_cost, indicator_with_cost};
use crate::model::work_session::{Indicator, WorkSession};
use crate::ops::transcript::{UsageBy, UsageScope, usage};

/// A work session's spending.
#[derive(Debug, Clone, Serialize)]
pub struct SessionCost {
    /// Its dollar limit (`start --max-cost`, raised by `budget --add-cost`).
    pub max_usd: Option<f64>,
    /// What its linked agent sessions and their subagents cost, as counted;
    /// `null` when some of it is of a model not priced.
    pub counted_usd: Option<f64>,
    /// counted / max × 100, when both are known.
    pub percentage: Option<f64>,
    /// Each linked agent session's cost (with its subagents').
    pub agent_sessions: Vec<(String, Option<f64>)>,
    /// Linked agent sessions not imported yet (their cost is not counted).
    pub not_counted: Vec<String>,
    /// How many tool calls the hooks denied past the limit.
    pub blocked: u64,
    /// The newest of them.
    pub blocks: Vec<Value>,
    /// The price table.
    pub prices: TableId,
    /// What was assumed, and what is not priced.
    pub notes: Vec<String>,
}

impl SessionCost {
    /// The share of the dollar limit used, when both are known.
    pub fn ratio(&self) -> Option<f64> {
        Some(self.counted_usd? / self.max_usd?)
    }

    /// Dollars left before the limit (never below zero).
    pub fn left(&self) -> Option<f64> {
        Some(round_usd((self.max_usd? - self.counted_usd?).max(0.0)))
    }
}

/// What `ws` spent: each linked agent session's usage report (its
/// subagents rolled in), read from the transcripts' stored counts.
pub fn session_cost(p: &Logbook, ws: &WorkSession) -> Result<SessionCost> {
    let table = crate::ops::price::table(p)?;
    let mut counted = Some(0.0);
    let mut per = vec![];
    let mut not_counted = vec![];
    let mut notes: Vec<String> = vec![];
    for id in ws_cost::linked(ws) {
        let report = match usage(p, &UsageScope::One(id.clone()), UsageBy::Session) {
            Ok(r) if !r.transcripts.is_empty() => r,
            Ok(_) | Err(_) => {
                not_counted.push(id);
                continue;
            }
        };
        counted = match (counted, report.cost_usd) {
            (Some(a), Some(b)) => Some(a + b),
            _ => None,
        };
        for n in report.cost_basis.notes {
            if !notes.contains(&n) {
                notes.push(n);
            }
        }
        per.push((id, report.cost_usd));
    }
    let max_usd = ws_cost::max_cost(ws);
    let (blocked, blocks) = ws_cost::blocks(ws);
    let percentage = match (counted, max_usd) {
        (Some(c), Some(m)) => Some((c / m * 1000.0).round() / 10.0),
        _ => None,
    };
    Ok(SessionCost {
        max_usd,
        counted_usd: counted.map(round_usd),
        percentage,
        agent_sessions: per,
        not_counted,
        blocked,
        blocks,
        prices: table.id,
        notes,
    })
}

/// The session's indicator with both limits: the nearer one decides.
pub fn indicator(ws: &WorkSession, cost: &SessionCost) -> Indicator {
    indicator_with_cost(ws, cost.ratio())
}

/// The session as `status`, `tokens` and `close` print it with `--json`:
/// the record, its `indicator` (the nearer limit's) and `percentage`, and
/// `cost`.
pub fn session_json(p: &Logbook, ws: &WorkSession) -> Result<Value> {
    let mut v = ws.to_json()?;
    let cost = session_cost(p, ws)?;
    if let Value::Object(m) = &mut v {
        m.insert("indicator".into(), indicator(ws, &cost).as_str().into());
        m.insert(
            "cost".into(),
            crate::model::to_json("work session cost", &cost)?,
        );
    }
    Ok(v)
}

/// The token report as `tokens --json` prints it, with the session's
/// `cost` beside it, so every face answers the same object.
pub fn token_report_json(p: &Logbook, ws: &WorkSession) -> Result<Value> {
    let mut v = crate::model::to_json("token report", &ws.token_report())?;
    let cost = session_cost(p, ws)?;
    if let Value::Object(m) = &mut v {
        m.insert(
            "cost".into(),
            crate::model::to_json("work session cost", &cost)?,
        );
    }
    Ok(v)
}

/// Checks a dollar amount a face received (`--max-cost`, `--add-cost`).
pub fn checked_usd(option: &'static str, usd: f64) -> Result<f64> {
    if usd.is_finite() && usd > 0.0 && usd < 1e9 {
        Ok(usd)
    } else {
        Err(Error::invalid(
            option,
            usd.to_string(),
            "expected a positive number of US dollars, e.g. 25",
        ))
    }
}

/// `budget --add-cost`: raises the session's dollar limit by `usd` (sets
/// it, when it had none).
pub fn add_cost(p: &Logbook, id: Option<&str>, usd: f64) -> Result<WorkSession> {
    let usd = checked_usd("add_cost", usd)?;
    Ok(crate::ops::work_session::update(p, id, |ws| {
        let now = ws_cost::max_cost(ws).unwrap_or(0.0);
        ws_cost::set_max_cost(ws, now + usd);
        Ok(())
    })?
    .0)
}
