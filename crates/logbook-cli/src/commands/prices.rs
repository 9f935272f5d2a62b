//! `logbook prices show [MODEL]` and `logbook prices update FILE`: the
//! price table costs are computed with, per million tokens.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::Result;
use clap::Subcommand;
use logbook::model::price::Rates;
use logbook::model::terminal::cell;
use logbook::ops::price;

use super::Context;
use crate::printer::Output;

#[derive(Debug, Subcommand)]
pub(crate) enum PricesCommand {
    /// The prices costs are computed with (USD per million tokens), or
    /// only MODEL's.
    Show {
        /// A model as an agent's log names it.
        #[arg(value_name = "MODEL")]
        model: Option<String>,
    },
    /// Load a newer copy of LiteLLM's model_prices_and_context_window.json
    /// (offline: the file is given) as this project's table.
    Update {
        /// The JSON file (in the litellm package on PyPI, or LiteLLM's repository).
        #[arg(value_name = "FILE")]
        file: PathBuf,
    },
}

pub(crate) fn run(ctx: &Context, cmd: &PricesCommand) -> Result<Output> {
    match cmd {
        PricesCommand::Show { model } => show(ctx, model.as_deref()),
        PricesCommand::Update { file } => update(ctx, file),
    }
}

fn show(ctx: &Context, model: Option<&str>) -> Result<Output> {
    let shown = price::show(&ctx.project, model)?;
    let st = ctx.style();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}",
        st.dim(&format!(
            "Prices: {} ({}, {}); USD per million tokens; a tier's rates apply to a whole call whose prompt passed it.",
            cell(&shown.table.source),
            cell(&shown.table.date),
            shown.origin
        ))
    );
    let _ = writeln!(
        out,
        "{}",
        st.bold(&format!(
            "{:<40} {:>9} {:>9} {:>10} {:>10} {:>10} {:>10}",
            "Model", "input", "output", "write 5m", "write 1h", "cache read", "reasoning"
        ))
    );
    for row in &shown.models {
        let p = &row.price;
        line(&mut out, &cell(&row.model), &p.base, p.reasoning);
        for t in &p.tiers {
            let label = format!("  above {}k", t.above_tokens / 1000);
            line(&mut out, &label, &t.rates, None);
        }
    }
    Ok(Output::new(serde_json::to_value(&shown)?, out))
}

/// One row: each rate per million tokens, `-` where the table has none.
fn line(out: &mut String, label: &str, r: &Rates, reasoning: Option<f64>) {
    let m = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| format!("{:.4}", v * 1e6));
    let _ = writeln!(
        out,
        "{label:<40} {:>9} {:>9} {:>10} {:>10} {:>10} {:>10}",
        m(Some(r.input)),
        m(Some(r.output)),
        m(r.cache_write_5m),
        m(r.cache_write_1h),
        m(r.cache_read),
        m(reasoning)
    );
}

fn update(ctx: &Context, file: &std::path::Path) -> Result<Output> {
    let done = price::update(&ctx.project, file)?;
    let human = format!(
        "Stored {} models' prices from {} ({}) in {}\n",
        done.models,
        cell(&done.table.source),
        done.table.date,
        cell(&done.path.display().to_string())
    );
    Ok(Output::new(serde_json::to_value(&done)?, human))
}
