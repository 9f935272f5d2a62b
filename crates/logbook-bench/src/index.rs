//! The index rows: `index rebuild` of a new project and over an existing
//! index, and `index sync` with nothing and with 1 % changed.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use logbook::Logbook;
use logbook_index::Index;

use crate::measure::time;
use crate::report::RowSink;

/// `index rebuild` twice: a new project, then replacing the index just built.
pub(crate) fn rebuild_rows(project: &Logbook, row: RowSink<'_>) -> Result<()> {
    // Rebuild: everything read and parsed, in parallel.
    eprintln!("index rebuild …");
    let (rebuild_time, report) = time(|| Ok(Index::rebuild(project, None)?))?;
    let per_s = report.indexed as f64 / rebuild_time.as_secs_f64();
    row(
        "`index rebuild`, new project",
        format!(
            "{per_s:.0} manifests/s ({:.1} s)",
            rebuild_time.as_secs_f64()
        ),
        String::new(),
        String::new(),
        "≥ 20,000 manifests/s",
        Some(per_s >= 20_000.0),
    );

    // The same again over the index just built: what a user's
    // `logbook index rebuild` of an existing project costs (the old index
    // is emptied in the same transaction).
    eprintln!("index rebuild over an existing index …");
    let (again_time, again) = time(|| Ok(Index::rebuild(project, None)?))?;
    let again_per_s = again.indexed as f64 / again_time.as_secs_f64();
    row(
        "`index rebuild`, replacing an existing index",
        format!(
            "{again_per_s:.0} manifests/s ({:.1} s)",
            again_time.as_secs_f64()
        ),
        String::new(),
        String::new(),
        "≥ 20,000 manifests/s",
        Some(again_per_s >= 20_000.0),
    );
    Ok(())
}

/// `index sync` with nothing changed, then after 1 % of the `n` manifests
/// under `outputs_dir` changed behind logbook's back.
pub(crate) fn sync_rows(
    project: &Logbook,
    outputs_dir: &Path,
    n: usize,
    row: RowSink<'_>,
) -> Result<()> {
    eprintln!("sync …");
    let (sync0, r0) = time(|| Ok(Index::open(project)?.upkeep().sync()?))?;
    if r0.indexed != 0 {
        bail!("sync after rebuild re-read {} files", r0.indexed);
    }
    row(
        "`index sync`, nothing changed",
        format!("{:.2} s", sync0.as_secs_f64()),
        String::new(),
        String::new(),
        "< 1 s",
        Some(sync0.as_secs_f64() < 1.0),
    );
    // 1 % changed behind logbook's back.
    let changed = (n / 100).max(1);
    let mut names: Vec<PathBuf> = std::fs::read_dir(outputs_dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    names.sort();
    for folder in names
        .iter()
        .step_by((names.len() / changed).max(1))
        .take(changed)
    {
        let path = folder.join("manifest.json");
        let text = std::fs::read_to_string(&path)?;
        std::fs::write(
            &path,
            text.replace("\"running\"", "\"failed\"")
                .replace("\"bryan\"", "\"brian\""),
        )?;
    }
    let (sync1, r1) = time(|| Ok(Index::open(project)?.upkeep().sync()?))?;
    row(
        "`index sync`, 1 % changed",
        format!(
            "{:.2} s ({} files re-read)",
            sync1.as_secs_f64(),
            r1.indexed
        ),
        String::new(),
        String::new(),
        "",
        None,
    );
    Ok(())
}
