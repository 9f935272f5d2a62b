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
