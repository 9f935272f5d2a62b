//! `transcript import --watch`: keeps importing as the agents write.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;
use logbook::ops::transcript::{ImportFormat, ImportReport};

use super::Context;

/// How long the sources must be quiet before they are imported again.
const SETTLE: Duration = Duration::from_secs(2);

/// Prints the first import, then re-imports the roots whenever they change
/// (checked every [`SETTLE`]); only new and grown sources are written.
pub(crate) fn watch(
    ctx: &Context,
    roots: &[PathBuf],
    format: ImportFormat,
    first: ImportReport,
) -> Result<()> {
    super::transcript::print_report(ctx, &first);
    loop {
        std::thread::sleep(SETTLE);
        let report = super::transcript::import_roots(ctx, roots, format)?;
        if !report.imported.is_empty() || !report.updated.is_empty() {
            super::transcript::print_report(ctx, &report);
        }
    }
}
