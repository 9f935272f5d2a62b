//! The usage page: tokens per day stacked by model (cache reads in a chart
//! of their own), per repository, and per work session against its budget.
//! The numbers are `transcript usage`'s ([`transcript::usage_filtered`],
//! every transcript as `--all`) and the work sessions' own.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use askama::Template;
use axum::extract::{Query, State};
use axum::response::Response;
use logbook::model::agent_log::Usage;
use logbook::model::transcript::Filter;
use logbook::ops::budget::{self, Budget};
use logbook::ops::query;
use logbook::ops::transcript::{UsageBy, UsageReport, UsageRow, UsageScope};

use super::{Layout, render};
use crate::AppState;
use crate::api::{self, blocking};
use crate::guard::Refusal;
use crate::view::thousands;
use crate::view::usage::{
    Column, agent_name, budget_rows, cache_reads, series, stacked_columns, stacked_rows,
};

/// One line of a usage table, numbers already formatted; `total` is the
/// exact figure, unformatted, for whoever reads the page by machine.
struct Line {
    key: String,
    model: String,
    input: String,
    output: String,
    cache_write: String,
    cache_read: String,
    total: String,
    exact: u64,
    /// A group's own line (its models follow), not a model's.
    head: bool,
}

fn line(key: &str, model: &str, u: &Usage, head: bool) -> Line {
    Line {
        key: key.to_string(),
        model: model.to_string(),
        input: thousands(u.input_tokens),
        output: thousands(u.output_tokens),
        cache_write: thousands(u.cache_creation_input_tokens),
        cache_read: thousands(cache_reads(u)),
        total: thousands(u.total_tokens),
        exact: u.total_tokens,
        head,
    }
}

struct Legend {
    model: String,
    class: String,
}

struct BudgetLine {
    id: String,
    name: String,
    status: String,
    current: String,
    peak: String,
    max: String,
    measured: String,
}

struct Choice {
    value: &'static str,
    label: &'static str,
    on: bool,
}

#[derive(Template)]
#[template(path = "usage.html")]
struct UsagePage {
    layout: Layout,
    sources: Vec<Choice>,
    source: String,
    total: String,
    cache_total: String,
    measured: usize,
    unmeasured: usize,
    legend: Vec<Legend>,
    day_chart: String,
    cache_chart: String,
    days: Vec<Line>,
    repo_chart: String,
    repos: Vec<Line>,
    budget_chart: String,
    budgets: Vec<BudgetLine>,
}

/// `GET /usage`: the measured tokens, drawn; `?source=` keeps one agent.
pub(super) async fn usage_page(
    State(state): State<Arc<AppState>>,
    Query(q): Query<HashMap<String, String>>,
) -> Result<Response, Refusal> {
    let (_, filter) = api::usage_params(&q, state.project.clock.now())?;
    let source = filter.source.clone().unwrap_or_default();
    let read = read_usage(&state, filter).await?;
    render(&page(&state, &source, read))
}

/// The usage by day and by repository, and the work sessions' budgets
/// against it.
struct UsageRead {
    by_day: UsageReport,
    by_repo: UsageReport,
    budgets: Vec<Budget>,
}

/// The usage in the server's scope (under `serve --team`, every
/// machine's); the budgets are this machine's work sessions', so they are
/// drawn against this machine's usage only.
async fn read_usage(state: &Arc<AppState>, filter: Filter) -> Result<UsageRead, Refusal> {
    let scope = state.scope;
    blocking(state, move |p| {
        let mut reports = query::backend(p, scope)?
            .usage_grouped(&UsageScope::All, &[UsageBy::Day, UsageBy::Repo], &filter)?
            .into_iter();
        let (Some(by_day), Some(by_repo)) = (reports.next(), reports.next()) else {
            return Err(Refusal::Internal);
        };
        let budgets = if scope.is_remote() {
            vec![]
        } else {
            budget::budgets(p, &by_day)?
        };
        Ok(UsageRead {
            by_day,
            by_repo,
            budgets,
        })
    })
    .await
}

fn page(state: &AppState, source: &str, read: UsageRead) -> UsagePage {
    let UsageRead {
        by_day,
        by_repo,
        budgets,
    } = read;
    let models: Vec<String> = by_day
        .rows
        .iter()
        .chain(&by_repo.rows)
        .flat_map(|r| r.by_model.keys().cloned())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let colours = series(&models);
    let mut layout = Layout::new(state, "Usage", "usage");
    // Sessions that grow change the numbers: the page follows them.
    layout.live = format!("/api/live?view=usage&source={}", crate::view::enc(source));
    UsagePage {
        layout,
        sources: source_choices(source),
        source: agent_name(source).to_string(),
        total: thousands(by_day.total.total_tokens),
        cache_total: thousands(cache_reads(&by_day.total)),
        measured: by_day.transcripts.len(),
        unmeasured: by_day.unmeasured.len(),
        legend: models
            .iter()
            .map(|m| Legend {
                model: m.clone(),
                class: format!("series-{}", colours.get(m).copied().unwrap_or(0)),
            })
            .collect(),
        day_chart: stacked_columns(
            "Tokens per day (UTC), stacked by model, cache reads left out",
            &columns(without_cache_reads, &by_day.rows),
            &colours,
            "tokens",
        ),
        cache_chart: stacked_columns(
            "Cache reads per day (UTC), stacked by model",
            &columns(cache_reads, &by_day.rows),
            &colours,
            "cache-read tokens",
        ),
        days: table(&by_day.rows),
        repo_chart: stacked_rows(
            "Tokens per repository, stacked by model, cache reads left out",
            &columns(without_cache_reads, &by_repo.rows),
            &colours,
            "tokens",
        ),
        repos: table(&by_repo.rows),
        budget_chart: budget_rows(&budgets),
        budgets: budgets.iter().map(budget_line).collect(),
    }
}

fn source_choices(source: &str) -> Vec<Choice> {
    [
        ("", "Both agents"),
        ("claude-code", "Claude Code"),
        ("codex", "Codex"),
    ]
    .into_iter()
    .map(|(value, label)| Choice {
        value,
        label,
        on: value == source,
    })
    .collect()
}

/// The tokens other than cache reads, which would dwarf them in one chart.
fn without_cache_reads(u: &Usage) -> u64 {
    u.total_tokens.saturating_sub(cache_reads(u))
}

/// A chart's columns: each row's `part` of its usage, by model.
fn columns(part: fn(&Usage) -> u64, rows: &[UsageRow]) -> Vec<Column> {
    rows.iter()
        .map(|r| Column {
            label: r.key.clone(),
            parts: r
                .by_model
                .iter()
                .map(|(m, u)| (m.clone(), part(u)))
                .collect(),
        })
        .collect()
}

/// A usage table: each group's line, then a line for each of its models.
fn table(rows: &[UsageRow]) -> Vec<Line> {
    let mut out = vec![];
    for r in rows {
        out.push(line(&r.key, "", &r.usage, true));
        for (m, u) in &r.by_model {
            out.push(line(&r.key, m, u, false));
        }
    }
    out
}

fn budget_line(b: &Budget) -> BudgetLine {
    BudgetLine {
        id: b.id.clone(),
        name: b.name.clone(),
        status: b.status.clone(),
        current: thousands(b.current),
        peak: thousands(b.peak),
        max: thousands(b.max),
        measured: b.measured.map(thousands).unwrap_or_default(),
    }
}
