//! `logbook doctor`: names every file that is corrupt or stale and, with
//! `--fix`, repairs what can be repaired without losing data.

use std::io::IsTerminal;
use std::io::Write as _;

use anyhow::Result;
use clap::Args;
use logbook::error::{Face, Next, Step};
use logbook::ops::doctor::{self, DEFAULT_ABANDONED_AFTER_HOURS, Options};

use super::Context;
use crate::printer::Output;

#[derive(Debug, Args)]
pub(crate) struct DoctorArgs {
    /// Repair what can be repaired (abandoned runs are marked failed, never deleted).
    #[arg(long)]
    fix: bool,
    /// Runs still running after this many hours count as abandoned.
    #[arg(long, value_name = "HOURS", default_value_t = DEFAULT_ABANDONED_AFTER_HOURS)]
    abandoned_after: f64,
    /// Read and parse every manifest and check every output (by default a
    /// finished run whose manifest the index parsed unchanged is trusted,
    /// its outputs only `lstat`ed for symlinks and hard links).
    #[arg(long)]
    full: bool,
}

pub(crate) fn run(ctx: &Context, a: &DoctorArgs) -> Result<Output> {
    let opts = Options {
        fix: a.fix,
        abandoned_after_hours: a.abandoned_after,
        full: a.full,
    };
    let report = check(ctx, &opts)?;
    // Printed here, straight from the report: a large project can have
    // very many findings, not to be held twice more as a JSON value and as
    // text.
    if ctx.printer.json {
        ctx.printer.write_json(&Json(&report))?;
    } else {
        print_findings(ctx, &report)?;
    }
    Ok(verdict(&report, a.fix))
}

/// Every check, with a spinner counting run folders on a terminal: a
/// million of them take a while, and the total is not known before the
/// streamed walk ends.
fn check(ctx: &Context, opts: &Options) -> Result<doctor::Report> {
    let bar = (!ctx.printer.json && std::io::stderr().is_terminal()).then(|| {
        let bar = indicatif::ProgressBar::new_spinner();
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} checking run folders: {pos} ({per_sec})",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
        );
        bar
    });
    let progress = |done: u64| {
        if let Some(bar) = &bar {
            bar.set_position(done);
        }
    };
    let report = doctor::check_with_progress(&ctx.project, opts, Some(&progress))?;
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    Ok(report)
}

/// The findings as text, or that there are none.
fn print_findings(ctx: &Context, report: &doctor::Report) -> Result<()> {
    let style = ctx.style();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    if report.findings.is_empty() {
        let line = format!(
            "{} ({} runs checked)\n",
            style.green("No problems found"),
            report.runs_checked
        );
        out.write_all(crate::printer::render(&line).as_bytes())?;
    }
    for f in &report.findings {
        let f = f.worded(Face::Cli);
        // A finding quotes the file it is about: rendered like all
        // human output, line by line so the report is never held whole.
        let mut line = format!(
            "{} {}: {}\n",
            style.yellow(f.kind),
            // One finding a line: a file's name cannot add another.
            logbook::model::terminal::cell(&f.path.to_string_lossy()),
            f.message
        );
        if let Some(fixed) = f.fixed {
            line.push_str(&format!("  fixed: {fixed}\n"));
        }
        out.write_all(crate::printer::render(&line).as_bytes())?;
    }
    out.flush()?;
    Ok(())
}

/// The printed output, failing while problems remain, with what to do
/// about them.
fn verdict(report: &doctor::Report, fixing: bool) -> Output {
    let out = Output::printed();
    let open = report.unresolved();
    if open == 0 {
        return out;
    }
    let what = if fixing {
        Next::say(format!("{open} problem(s) remain that "))
            .option("fix")
            .text(" cannot repair; see the findings above")
    } else {
        Next::say(format!("{} problem(s) found; ", report.findings.len()))
            .then(Next::of(Step::Doctor { fix: true }, " repairs what it can"))
    };
    out.failing(what.word(Face::Cli))
}

/// The report as `--json` prints it, each finding worded for the CLI one
/// at a time as it is written, so a large report is never held twice.
struct Json<'a>(&'a doctor::Report);

impl serde::Serialize for Json<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct as _;
        let mut st = s.serialize_struct("Report", 2)?;
        st.serialize_field("runs_checked", &self.0.runs_checked)?;
        st.serialize_field("findings", &Findings(&self.0.findings))?;
        st.end()
    }
}

struct Findings<'a>(&'a [doctor::Finding]);

impl serde::Serialize for Findings<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(|f| f.worded(Face::Cli)))
    }
}
