//! The file-system path macOS takes, against Linux's, on the same files in
//! the same run: whole-process `index sync` with nothing changed, by the
//! `logbook` binary under test and by one built with the `portable-fs`
//! feature (`--portable-logbook PATH`), alternating so that drifting load
//! hits both alike. No target: the row says what the portable path costs
//! where Linux's `statx` and `getdents64` are not to be had.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context as _, Result, bail};

use crate::measure::percentile;
use crate::report::RowSink;

/// Wall time, in seconds, of one `logbook index sync` on `root` by `bin`.
fn sync_secs(bin: &Path, root: &Path) -> Result<f64> {
    let started = Instant::now();
    let status = Command::new(bin)
        .args(["index", "sync", "--root"])
        .arg(root)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .with_context(|| format!("running {}", bin.display()))?;
    if !status.success() {
        bail!("{} index sync failed: {status}", bin.display());
    }
    Ok(started.elapsed().as_secs_f64())
}

/// What `logbook --json index sync --full` by `bin` read again and
/// removed: (indexed, removed).
fn full_sync_changes(bin: &Path, root: &Path) -> Result<(u64, u64)> {
    let out = Command::new(bin)
        .args(["--json", "index", "sync", "--full", "--root"])
        .arg(root)
        .stderr(Stdio::null())
        .output()
        .with_context(|| format!("running {}", bin.display()))?;
    if !out.status.success() {
        bail!("{} index sync --full failed: {}", bin.display(), out.status);
    }
    let report: serde_json::Value = serde_json::from_slice(&out.stdout)
        .with_context(|| format!("{} index sync --full --json", bin.display()))?;
    let count = |k: &str| report.get(k).and_then(serde_json::Value::as_u64);
    match (count("indexed"), count("removed")) {
        (Some(i), Some(r)) => Ok((i, r)),
        _ => bail!("index sync --full --json gave no counts: {report}"),
    }
}

/// The row: `index sync` on `n` runs through both paths. First, the check
/// that makes the comparison fair and the two paths interchangeable: what
/// one path indexed, the other finds unchanged, every output included.
pub(crate) fn rows(
    linux: &Path,
    portable: &Path,
    root: &Path,
    n: usize,
    row: RowSink<'_>,
) -> Result<()> {
    full_sync_changes(linux, root)?;
    for (a, b) in [(portable, linux), (linux, portable)] {
        let changes = full_sync_changes(a, root)?;
        if changes != (0, 0) {
            bail!(
                "{} found {changes:?} (read, removed) changed after {} indexed the same files: the two file-system paths disagree",
                a.display(),
                b.display()
            );
        }
    }
    let (mut a, mut b) = (vec![], vec![]);
    for _ in 0..7 {
        a.push(sync_secs(linux, root)?);
        b.push(sync_secs(portable, root)?);
    }
    let (a, b) = (percentile(&mut a, 0.5), percentile(&mut b, 0.5));
    row(
        &format!(
            "`index sync`, nothing changed, {n} runs: the portable path (macOS's) against Linux's, whole process, median of 7"
        ),
        format!("{:.3} s (portable-fs)", b),
        format!("{:.3} s (Linux's path)", a),
        format!("{:.2}×", b / a.max(1e-9)),
        "none (reported)",
        None,
    );
    Ok(())
}
