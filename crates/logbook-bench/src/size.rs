//! The size of the `logbook` binary people download: the `dist` profile's
//! (LTO, one codegen unit, stripped) has a target; other builds are only
//! reported, since debug info and line tables make them larger by design.

use std::path::Path;

use anyhow::{Context, Result};

use crate::report::RowSink;

/// The most a `dist` build may weigh.
const DIST_MAX_MB: f64 = 30.0;

/// One row: the binary measured, its profile (the folder cargo built it
/// in) and its size.
pub(crate) fn rows(bin: &Path, row: RowSink<'_>) -> Result<()> {
    let bytes = std::fs::metadata(bin)
        .with_context(|| format!("reading the size of {}", bin.display()))?
        .len();
    let mb = bytes as f64 / 1_000_000.0;
    let profile = bin
        .parent()
        .and_then(Path::file_name)
        .and_then(|n| n.to_str())
        .unwrap_or("?")
        .to_string();
    let dist = profile == "dist";
    row(
        &format!("size of the `logbook` binary (profile `{profile}`)"),
        format!("{mb:.1} MB"),
        String::new(),
        format!("{:.2}× the target", mb / DIST_MAX_MB),
        "≤ 30 MB for `--profile dist`",
        dist.then_some(mb <= DIST_MAX_MB),
    );
    Ok(())
}
