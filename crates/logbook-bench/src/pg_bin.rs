//! Where PostgreSQL's programs are, on Debian, Ubuntu and macOS: one
//! finder for the benchmark's server and the tests' (the CLI's tests
//! include this file by path), so both look in the same places.

use std::path::PathBuf;
use std::process::{Command, Stdio};

/// The folder of PostgreSQL's programs (`initdb`, `pg_ctl`, `createdb`,
/// `psql`): Debian's newest `/usr/lib/postgresql/N/bin` first (its `PATH`
/// has wrappers but no `initdb`), then `pg_config --bindir`, Homebrew's
/// newest `postgresql@N` keg, Homebrew's `bin` folders and `PATH`.
pub(crate) fn pg_bin() -> Option<PathBuf> {
    /// `parent/{prefix}VERSION/bin` for each such folder, newest first.
    fn newest_first(parent: &str, prefix: &str) -> Vec<PathBuf> {
        let mut found: Vec<(Vec<u32>, PathBuf)> = std::fs::read_dir(parent)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let version = name
                    .strip_prefix(prefix)?
                    .split('.')
                    .map(|n| n.parse().ok())
                    .collect::<Option<Vec<u32>>>()?;
                Some((version, e.path().join("bin")))
            })
            .collect();
        found.sort();
        found.into_iter().rev().map(|(_, bin)| bin).collect()
    }
    fn pg_config_bindir() -> Option<PathBuf> {
        let out = Command::new("pg_config")
            .arg("--bindir")
            .stderr(Stdio::null())
            .output()
            .ok()
            .filter(|o| o.status.success())?;
        Some(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
    }
    let path = std::env::var_os("PATH");
    newest_first("/usr/lib/postgresql", "")
        .into_iter()
        .chain(std::iter::once_with(pg_config_bindir).flatten())
        .chain(newest_first("/opt/homebrew/opt", "postgresql@"))
        .chain(newest_first("/usr/local/opt", "postgresql@"))
        .chain(["/opt/homebrew/bin", "/usr/local/bin"].map(PathBuf::from))
        .chain(path.iter().flat_map(std::env::split_paths))
        .find(|dir| dir.join("initdb").is_file())
}
