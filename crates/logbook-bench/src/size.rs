//! The size of the `logbook` binary people get, each build against its
//! target: the `release` build, which `cargo install --path
//! crates/logbook-cli` installs (no debug info, symbols kept), and the
//! `dist` build the release archives hold (LTO, one codegen unit,
//! stripped). The bench builds neither: it reads them as cargo last left
//! them in the target folder of the binary under test (`release/` and
//! `dist/` beside its own folder), names the file it read, and says which
//! build is missing and how to make it.

use std::path::Path;

use anyhow::{Context, Result};

use crate::report::RowSink;

/// The builds with a target: profile, what it is for, the most it may
/// weigh in MB.
const BUILDS: [(&str, &str, f64); 2] = [
    ("release", "what `cargo install` installs", 35.0),
    ("dist", "what the release archives hold", 30.0),
];

/// One row per build found; `bin` is the binary under test, whose target
/// folder holds the builds, and which gets a row without a target when it
/// is neither (a debug build).
pub(crate) fn rows(bin: &Path, row: RowSink<'_>) -> Result<()> {
    let name = bin
        .file_name()
        .context("the `logbook` binary's path has no file name")?;
    let folder = bin.parent().unwrap_or(Path::new("."));
    let profile_of_bin = folder.file_name().and_then(|n| n.to_str()).unwrap_or("?");
    for (profile, what, max_mb) in BUILDS {
        let path = folder.with_file_name(profile).join(name);
        if !path.is_file() {
            eprintln!(
                "no {}: skipping the size row of `{profile}` (cargo build --profile {profile} -p logbook-cli --locked)",
                path.display()
            );
            continue;
        }
        let mb = megabytes(&path)?;
        row(
            &format!(
                "size of the `logbook` binary, `{profile}` ({what}), read from {}",
                path.display()
            ),
            format!("{mb:.1} MB"),
            String::new(),
            format!("{:.2}× the target", mb / max_mb),
            &format!("≤ {max_mb:.0} MB"),
            Some(mb <= max_mb),
        );
    }
    if !BUILDS
        .iter()
        .any(|(profile, ..)| *profile == profile_of_bin)
    {
        row(
            &format!(
                "size of the `logbook` binary under test (profile `{profile_of_bin}`), read from {}",
                bin.display()
            ),
            format!("{:.1} MB", megabytes(bin)?),
            String::new(),
            String::new(),
            "none for this profile",
            None,
        );
    }
    Ok(())
}

fn megabytes(path: &Path) -> Result<f64> {
    let bytes = std::fs::metadata(path)
        .with_context(|| format!("reading the size of {}", path.display()))?
        .len();
    Ok(bytes as f64 / 1_000_000.0)
}
