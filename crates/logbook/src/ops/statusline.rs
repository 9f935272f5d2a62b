//! `logbook statusline`: what Claude Code's status line shows after every
//! message: the model, this agent session's exact tokens and cost (as the
//! hooks' import counted them), today's cost in this repository, and the
//! active work session's dollar (else token) budget.

use std::path::Path;

use serde::Serialize;

use crate::Logbook;
use crate::error::Result;
use crate::ops::transcript::{UsageBy, UsageScope, usage};

/// What the status line shows; every part may be missing.
#[derive(Debug, Clone, Default, Serialize)]
pub struct StatusLine {
    /// This agent session's tokens, subagents included.
    pub tokens: Option<u64>,
    /// Their cost; `None` when not imported yet or not priced.
    pub cost_usd: Option<f64>,
    /// Whether the session was found imported.
    pub counted: bool,
    /// Today's (UTC) cost of this repository's agent sessions.
    pub today_usd: Option<f64>,
    /// The active work session's share of its nearer limit (0..), and
    /// whether that is its dollar limit.
    pub budget: Option<(f64, bool)>,
}

/// The status line's numbers for agent session `session_id` working in `cwd`.
pub fn status_line(p: &Logbook, session_id: Option<&str>, cwd: &Path) -> StatusLine {
    let mut out = StatusLine::default();
    if let Some(id) = session_id.filter(|s| !s.is_empty())
        && let Ok(r) = usage(p, &UsageScope::One(id.to_string()), UsageBy::Session)
        && let Some(main) = r.transcripts.iter().find(|t| t.id.eq_ignore_ascii_case(id))
    {
        out.tokens = Some(main.with_subagents.total_tokens);
        out.cost_usd = main.cost_with_subagents_usd;
        out.counted = true;
    }
    let today: String = p.clock.now_string().chars().take(10).collect();
    if let Ok(r) = usage(p, &UsageScope::Repository(cwd.to_path_buf()), UsageBy::Day) {
        out.today_usd = match r.rows.iter().find(|row| row.key == today) {
            Some(row) => row.cost_usd,
            None => Some(0.0),
        };
    }
    out.budget = budget(p).ok().flatten();
    out
}

/// The active work session's share of its nearer limit.
fn budget(p: &Logbook) -> Result<Option<(f64, bool)>> {
    let Some(_) = crate::ops::work_session::active(p)? else {
        return Ok(None);
    };
    let ws = crate::ops::work_session::get(p, None)?;
    let tokens = ws.percentage() / 100.0;
    let cost = crate::ops::spend::session_cost(p, &ws)?.ratio();
    Ok(Some(match cost {
        Some(c) if c >= tokens => (c, true),
        _ => (tokens, false),
    }))
}
