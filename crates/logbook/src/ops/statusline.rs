//! `logbook statusline`: what Claude Code's status line shows after every
//! message: the model, this agent session's exact tokens and cost (as the
//! hooks' import counted them), today's cost in this repository, and the
//! active work session's nearer limit.
//!
//! It runs after every message, so it reads the index's rows of the
//! sessions active today and prices them from the counts there; a
//! session's stored usage book (its head) is read only when the rows cannot
//! say (several models, a long-context tier, a session begun before today).

use std::path::Path;

use serde::Serialize;

use crate::Logbook;
use crate::error::Result;
use crate::model::price::{PriceTable, round_usd};
use crate::model::transcript::{Filter, Summary};
use crate::ops::transcript::cost::{CostNotes, book_cost, of_summary};
use crate::ops::transcript::{ListOptions, default_scope, list};

/// What the status line shows; every part may be missing.
#[derive(Debug, Clone, Default, Serialize)]
pub struct StatusLine {
    /// This agent session's tokens, subagents included.
    pub tokens: Option<u64>,
    /// Their cost; `None` when not imported yet or not priced.
    pub cost_usd: Option<f64>,
    /// Today's (UTC) cost of this repository's agent sessions.
    pub today_usd: Option<f64>,
    /// The active work session's share of its nearer limit (0..), and
    /// whether that is its dollar limit.
    pub budget: Option<(f64, bool)>,
}

/// The status line's numbers for agent session `session_id` working in `cwd`.
pub fn status_line(p: &Logbook, session_id: Option<&str>, cwd: &Path) -> StatusLine {
    let mut out = StatusLine::default();
    let today: String = p.clock.now_string().chars().take(10).collect();
    let (within, repo) = default_scope(p, cwd);
    let opts = ListOptions {
        within,
        repo,
        filter: Filter {
            since: crate::clock::parse(&format!("{today}T00:00:00Z")),
            ..Filter::default()
        },
        ..ListOptions::default()
    };
    let (Ok(table), Ok(listing)) = (crate::ops::price::table(p), list(p, &opts)) else {
        return out;
    };
    let rows = &listing.transcripts;
    if let Some(id) = session_id.filter(|s| !s.is_empty()) {
        let mine: Vec<&Summary> = rows
            .iter()
            .filter(|s| s.id.eq_ignore_ascii_case(id) || s.parent_session_id.as_deref() == Some(id))
            .collect();
        if mine.iter().any(|s| s.usage.is_some()) {
            out.tokens = Some(
                mine.iter()
                    .filter_map(|s| s.usage)
                    .map(|u| u.total_tokens)
                    .sum(),
            );
            out.cost_usd = sum(mine.iter().map(|s| of_summary(&table, s)));
        } else {
            // Not active today by its records (an import that has not run
            // since midnight): its own report.
            let one = crate::ops::transcript::UsageScope::One(id.to_string());
            let by = crate::ops::transcript::UsageBy::Session;
            if let Ok(r) = crate::ops::transcript::usage(p, &one, by)
                && let Some(t) = r.transcripts.iter().find(|t| t.id.eq_ignore_ascii_case(id))
            {
                out.tokens = Some(t.with_subagents.total_tokens);
                out.cost_usd = t.cost_with_subagents_usd;
            }
        }
    }
    out.today_usd = sum(rows
        .iter()
        .filter(|s| s.usage.is_some())
        .map(|s| today_cost(&table, s, &today)));
    out.budget = budget(p).ok().flatten();
    out
}

/// The sum, unknown once one part is.
fn sum(parts: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    let mut t = 0.0;
    for part in parts {
        t += part?;
    }
    Some(round_usd(t))
}

/// What `s` cost today: all of it when it began today (from the rows when
/// they can say), else its book's calls of today.
fn today_cost(table: &PriceTable, s: &Summary, today: &str) -> Option<f64> {
    if s.started_at.starts_with(today) {
        return of_summary(table, s);
    }
    let head = logbook_store::transcript::read_head(&s.file).ok()?;
    let book = crate::model::agent_log::usage_of(&head.metadata)?;
    let cost = book_cost(table, &book, &mut CostNotes::default());
    let mut t = Some(Default::default());
    for c in cost.by_day.get(today).into_iter().flat_map(|m| m.values()) {
        crate::ops::transcript::cost::add(&mut t, *c);
    }
    crate::ops::transcript::cost::usd(t)
}

/// The active work session's share of its nearer limit.
fn budget(p: &Logbook) -> Result<Option<(f64, bool)>> {
    if crate::ops::work_session::active(p)?.is_none() {
        return Ok(None);
    }
    let ws = crate::ops::work_session::get(p, None)?;
    let tokens = ws.percentage() / 100.0;
    if crate::model::work_session::cost::max_cost(&ws).is_none() {
        return Ok(Some((tokens, false)));
    }
    let cost = crate::ops::spend::session_cost(p, &ws)?.ratio();
    Ok(Some(match cost {
        Some(c) if c >= tokens => (c, true),
        _ => (tokens, false),
    }))
}
