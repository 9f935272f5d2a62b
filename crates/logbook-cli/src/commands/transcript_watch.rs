//! `transcript import --watch`: keeps importing as the agents write.
//!
//! An event-based watcher (inotify, FSEvents… through `notify`) on each
//! root, debounced: the files that changed are collected until the folders
//! have been quiet for [`SETTLE`] (an agent writes a streamed reply as a
//! burst of lines), then only those files are imported. A live session is
//! thus updated in place a moment after each burst, and an unchanged file
//! is never rewritten. A session imported here is live (the viewer follows
//! it) until it goes 10 minutes without a change. Each round that imported or updated something prints
//! its summary (a JSON line with `--json`).

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

use anyhow::{Context as _, Result};
use logbook::ops::transcript::{self, ImportFormat, ImportReport};
use notify::{EventKind, RecursiveMode, Watcher};

use super::Context;

/// How long the watched folders must be quiet before the changed files are
/// imported.
const SETTLE: Duration = Duration::from_millis(500);

/// Prints the first import, then imports each file that changes, until the
/// process is interrupted.
pub(crate) fn watch(
    ctx: &Context,
    roots: &[PathBuf],
    format: ImportFormat,
    first: ImportReport,
) -> Result<()> {
    let (tx, rx) = mpsc::channel();
    let mut watcher = notify::recommended_watcher(tx).context("starting the file watcher")?;
    for root in roots {
        watcher
            .watch(root, RecursiveMode::Recursive)
            .with_context(|| format!("watching {}", root.display()))?;
    }
    super::transcript::print_report(ctx, &first)?;
    if !ctx.printer.json {
        ctx.printer.warn(&format!(
            "watching {} for new lines (Ctrl-C stops)",
            roots
                .iter()
                .map(|r| r.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    loop {
        let mut changed = BTreeSet::new();
        // Block for the first event, then gather until quiet.
        let mut next = rx.recv().map(Some);
        loop {
            match next {
                Ok(Some(Ok(event))) => {
                    if matches!(event.kind, EventKind::Create(_) | EventKind::Modify(_)) {
                        changed.extend(
                            event
                                .paths
                                .into_iter()
                                .filter(|p| logbook::ops::project::is_file(p)),
                        );
                    }
                }
                Ok(Some(Err(e))) => ctx.printer.warn(&format!("file watcher: {e}")),
                Ok(None) => break,
                Err(_) => return Ok(()), // the watcher is gone
            }
            next = match rx.recv_timeout(SETTLE) {
                Ok(ev) => Ok(Some(ev)),
                Err(mpsc::RecvTimeoutError::Timeout) => Ok(None),
                Err(mpsc::RecvTimeoutError::Disconnected) => Err(mpsc::RecvError),
            };
        }
        let mut report = ImportReport::default();
        for file in changed {
            let wanted = file.extension().is_some_and(|e| e == "jsonl")
                || file
                    .file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| logbook::model::transcript::parse_file_name(n).is_some());
            if !wanted {
                continue;
            }
            let r = transcript::live::import_watched(&ctx.project, &file, format)?;
            report.imported.extend(r.imported);
            report.updated.extend(r.updated);
            report.unchanged.extend(r.unchanged);
            report.skipped.extend(r.skipped);
        }
        if !report.imported.is_empty() || !report.updated.is_empty() {
            super::transcript::print_report(ctx, &report)?;
        }
    }
}
