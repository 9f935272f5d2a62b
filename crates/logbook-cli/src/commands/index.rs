//! `logbook index rebuild | sync | status`: the derived SQLite index.

use std::fmt::Write as _;

use anyhow::Result;
use clap::Subcommand;
use logbook::error::Step;
use logbook::ops::index as ops;
use logbook::ops::index::SyncReport;
use serde_json::json;

use super::{Context, worded};
use crate::printer::{Output, thousands};

#[derive(Debug, Subcommand)]
pub(crate) enum IndexCommand {
    /// Forget the index and re-read every file (parallel, with a progress bar).
    Rebuild,
    /// Read only new, changed or deleted files (by directory listing, size and mtime).
    Sync {
        /// Also check every output of finished runs (a normal sync trusts
        /// them once the run is finished and its manifest unchanged).
        #[arg(long)]
        full: bool,
    },
    /// Counts, size and staleness of the index.
    Status,
    /// Writes the full text of an index rebuilt in two phases (started
    /// detached by the command that rebuilt it).
    #[command(hide = true)]
    BuildText,
}

pub(crate) fn run(ctx: &Context, cmd: &IndexCommand) -> Result<Output> {
    match cmd {
        IndexCommand::Rebuild => {
            let report = ctx.printer.with_progress(
                "indexing [{bar:30}] {pos}/{len} files ({per_sec}, {eta})",
                |progress| ops::rebuild(&ctx.project, Some(progress)),
            )?;
            Ok(report_output(ctx, "Rebuilt", &report))
        }
        IndexCommand::BuildText => {
            ops::build_text(&ctx.project)?;
            Ok(Output::new(json!({ "text": "complete" }), ""))
        }
        IndexCommand::Sync { full } => {
            let report = ops::sync(&ctx.project, *full)?;
            Ok(report_output(ctx, "Synced", &report))
        }
        IndexCommand::Status => {
            let s = ops::status(&ctx.project)?;
            Ok(Output::new(serde_json::to_value(&s)?, status_text(&s)))
        }
    }
}

/// `index status` as text: counts, the full text's progress, staleness
/// and the schema's history.
fn status_text(s: &ops::Status) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Index: {} (schema {})",
        s.path.display(),
        s.schema_version
    );
    let _ = writeln!(
        out,
        "  Size:          {:.1} MiB",
        s.size_bytes as f64 / 1048576.0
    );
    let _ = writeln!(out, "  Runs:          {}", thousands(s.runs));
    let _ = writeln!(out, "  Outputs:       {}", thousands(s.outputs));
    let _ = writeln!(out, "  Lineage edges: {}", thousands(s.edges));
    let _ = writeln!(out, "  Work sessions: {}", thousands(s.work_sessions));
    let _ = writeln!(out, "  Transcripts:   {}", thousands(s.transcripts));
    let _ = writeln!(out, "  Workflows:     {}", thousands(s.workflow_states));
    let _ = writeln!(out, "  Corrupt files: {}", thousands(s.corrupt));
    let _ = writeln!(out, "  Pending:       {}", thousands(s.pending));
    let _ = writeln!(
        out,
        "  Last sync:     {}",
        s.last_sync.as_deref().unwrap_or("never")
    );
    if s.text.phase == "complete" {
        let _ = writeln!(out, "  Full text:     complete");
    } else {
        let _ = writeln!(
            out,
            "  Full text:     being built, {}% ({} of {} runs and transcripts); text searches may miss matches until then",
            s.text.percent,
            thousands(s.text.done),
            thousands(s.text.total)
        );
    }
    let stale = s.stale.new + s.stale.changed + s.stale.deleted;
    if stale == 0 {
        let _ = writeln!(out, "  Up to date with the files.");
    } else {
        let _ = writeln!(
            out,
            "  Stale: {} new, {} changed, {} deleted file(s); run {}.",
            s.stale.new,
            s.stale.changed,
            s.stale.deleted,
            worded(Step::SyncIndex)
        );
    }
    if !s.schema_history.is_empty() {
        let _ = writeln!(out, "  Schema history:");
        for h in &s.schema_history {
            let _ = writeln!(
                out,
                "    {:>3}  {:<32} {}  (logbook {})",
                h.version, h.step, h.applied_at, h.logbook
            );
        }
    }
    out
}

fn report_output(ctx: &Context, verb: &str, r: &SyncReport) -> Output {
    let skipped: Vec<_> = r
        .corrupt
        .iter()
        .map(|c| logbook::model::CorruptFile {
            path: c.path.clone(),
            reason: c.reason.clone(),
        })
        .collect();
    ctx.warn_skipped(&skipped);
    let human = format!(
        "{verb} the index in {:.2}s: {} file(s) scanned, {} read, {} removed, {} corrupt.\n",
        r.seconds,
        thousands(r.scanned),
        thousands(r.indexed),
        thousands(r.removed),
        r.corrupt.len()
    );
    let json = json!({
        "scanned": r.scanned,
        "indexed": r.indexed,
        "removed": r.removed,
        "corrupt": r.corrupt,
        "seconds": r.seconds,
    });
    Output::new(json, human)
}
