//! A work session's dollar budget at the command line: `logbook budget
//! --add-cost USD`, and the cost lines `status`, `tokens` and `close` add.

use std::fmt::Write as _;

use anyhow::Result;
use clap::Args;
use logbook::model::terminal::cell;
use logbook::model::work_session::{Indicator, WorkSession};
use logbook::ops::spend::{self, SessionCost};
use serde_json::Value;

use super::Context;
use super::transcript::{table_cell, usd_cell};
use crate::printer::{Output, Style};

#[derive(Debug, Args)]
pub(crate) struct BudgetArgs {
    /// Raise the work session's dollar limit by USD (sets it when it had none).
    #[arg(long, value_name = "USD")]
    add_cost: f64,
    /// Work session id (default: the active one).
    #[arg(long)]
    id: Option<String>,
}

/// `logbook budget --add-cost USD`.
pub(crate) fn budget(ctx: &Context, a: &BudgetArgs) -> Result<Output> {
    let s = spend::add_cost(&ctx.project, a.id.as_deref(), a.add_cost)?;
    let (json, cost) = with_cost(ctx, &s)?;
    let human = format!(
        "Dollar budget of {}: {}\n{}",
        s.session_id,
        usd_cell(cost.max_usd),
        cost_lines(ctx.style(), &s, &cost)
    );
    Ok(Output::new(json, human))
}

/// The session's JSON with `cost` (and the indicator of the nearer limit),
/// and what it spent.
pub(crate) fn with_cost(ctx: &Context, s: &WorkSession) -> Result<(Value, SessionCost)> {
    let cost = spend::session_cost(&ctx.project, s)?;
    let json = spend::session_json(&ctx.project, s)?;
    Ok((json, cost))
}

/// The indicator of the nearer of the two limits.
pub(crate) fn indicator(s: &WorkSession, cost: &SessionCost) -> Indicator {
    spend::indicator(s, cost)
}

/// The cost lines of `status`, `tokens` and `close`.
pub(crate) fn cost_lines(st: Style, s: &WorkSession, c: &SessionCost) -> String {
    let mut out = String::new();
    // A session with no dollar limit and nothing linked has nothing to say.
    if c.max_usd.is_none()
        && c.agent_sessions.is_empty()
        && c.not_counted.is_empty()
        && c.blocked == 0
    {
        return out;
    }
    let spent = usd_cell(c.counted_usd);
    match (c.max_usd, c.ratio()) {
        (Some(max), Some(r)) => {
            let pct = r * 100.0;
            let filled = ((pct / 10.0).round() as i64).clamp(0, 10) as usize;
            let _ = writeln!(
                out,
                "Cost: {spent} / ${max:.2} ({}%) [{}{}] {}",
                pct.round() as i64,
                "█".repeat(filled),
                "░".repeat(10 - filled),
                spend::indicator(s, c).emoji()
            );
        }
        (Some(max), None) => {
            let _ = writeln!(out, "Cost: {spent} / ${max:.2}");
        }
        (None, _) => {
            let _ = writeln!(out, "Cost: {spent} (no dollar limit)");
        }
    }
    if !c.not_counted.is_empty() {
        let _ = writeln!(
            out,
            "{}",
            st.dim(&format!(
                "Not imported yet (not counted): {}",
                cell(&c.not_counted.join(", "))
            ))
        );
    }
    if c.blocked > 0 {
        let _ = writeln!(
            out,
            "{}",
            st.red(&format!(
                "Tool calls denied past the dollar limit: {}",
                c.blocked
            ))
        );
        for b in c.blocks.iter().rev().take(3) {
            let field = |k: &str| b.get(k).and_then(Value::as_str).unwrap_or("").to_string();
            let _ = writeln!(
                out,
                "  {} {} ({})",
                cell(&field("at")),
                cell(&field("tool")),
                cell(&field("agent_session"))
            );
        }
    }
    for n in &c.notes {
        let _ = writeln!(out, "{}", st.dim(&cell(n)));
    }
    let _ = writeln!(
        out,
        "{}",
        st.dim(&format!("Prices: {}", table_cell(&c.prices)))
    );
    out
}
