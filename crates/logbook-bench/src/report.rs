//! The rows measured and the markdown table they are printed as.

use std::io::Write as _;
use std::time::Duration;

use anyhow::Result;
use logbook_index::Status;

/// Where a row goes: measure, result, baseline, ratio, target, met.
pub(crate) type RowSink<'a> = &'a mut dyn FnMut(&str, String, String, String, &str, Option<bool>);

/// One line of the table.
pub(crate) struct Row {
    pub(crate) measure: String,
    pub(crate) result: String,
    pub(crate) baseline: String,
    pub(crate) ratio: String,
    pub(crate) target: String,
    pub(crate) met: Option<bool>,
}

/// The project summary line and the table of `rows` on stdout.
pub(crate) fn print(status: &Status, n: usize, gen_time: Duration, rows: &[Row]) -> Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "\n{} runs, {} outputs, {} lineage edges; index {:.0} MiB; {} cores; synthesized in {:.1} s\n",
        n,
        status.outputs,
        status.edges,
        status.size_bytes as f64 / 1048576.0,
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        gen_time.as_secs_f64()
    )?;
    writeln!(
        out,
        "| measure | result | baseline (same run) | ratio | target | met |"
    )?;
    writeln!(out, "|---|---|---|---|---|---|")?;
    for r in rows {
        let met = match r.met {
            Some(true) => "yes",
            Some(false) => "**no**",
            None => "",
        };
        writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            r.measure, r.result, r.baseline, r.ratio, r.target, met
        )?;
    }
    Ok(())
}

/// After the table, the release-against-release verdict: the baseline
/// compared with, and every compared row more than 10 % slower than it,
/// called out by name (or that none is).
pub(crate) fn print_callouts(
    baseline: &std::path::Path,
    version: &str,
    rows: &[Row],
) -> Result<()> {
    let mut out = std::io::stdout().lock();
    let slower = crate::baseline::callouts(rows);
    writeln!(
        out,
        "\nAgainst the baseline {} ({version}), medians of alternating runs on the same files:",
        baseline.display()
    )?;
    if slower.is_empty() {
        writeln!(out, "no row is more than 10 % slower than the baseline.")?;
        return Ok(());
    }
    writeln!(
        out,
        "CALLED OUT: {} row(s) more than 10 % slower than the baseline:",
        slower.len()
    )?;
    for line in slower {
        writeln!(out, "- {line}")?;
    }
    Ok(())
}
