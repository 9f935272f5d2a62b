//! `logbook-bench --baseline PATH`: every compared row is printed with
//! this build's figure, the baseline's and their ratio; a build more than
//! 10 % slower is called out; a command the baseline lacks is "n/a".
//! Run on 200 runs against the `logbook` under test itself (CI builds no
//! older release), and against wrappers of it made slow or made to lack
//! commands.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The compared rows, by the start of their names.
const ROWS: &[&str] = &[
    "first `find` after upgrading the baseline's index in place",
    "first `find` after the index is lost",
    "`index rebuild`",
    "`index sync`, nothing changed",
    "default `doctor`",
    "`find --agent X --workflow '^deep-' --status completed --limit 10`, whole process",
    "MCP `find_runs`",
    "`logbook hook` Stop after one more exchange",
    "`logbook hook` SessionStart after a compaction",
];

/// The `logbook` binary beside the bench (built by `cargo test
/// --workspace`; built here when a lone `cargo test -p logbook-bench`
/// left none).
fn logbook() -> PathBuf {
    let bench = PathBuf::from(env!("CARGO_BIN_EXE_logbook-bench"));
    let bin = bench.with_file_name("logbook");
    if !bin.is_file() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            .args(["build", "-p", "logbook-cli", "--bin", "logbook"])
            .status()
            .expect("cargo runs");
        assert!(status.success(), "cargo build -p logbook-cli failed");
    }
    assert!(bin.is_file(), "no logbook binary at {}", bin.display());
    bin
}

/// A shell script at `path` that runs `body` (a POSIX sh script).
fn script(path: &Path, body: &str) -> PathBuf {
    std::fs::write(path, format!("#!/bin/sh\n{body}")).expect("write script");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path.to_path_buf()
}

/// `logbook-bench --runs 200 --only baseline` in `dir`, with `new` as the
/// build under test and `old` as the baseline; its stdout.
fn bench(dir: &Path, new: &Path, old: &Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_logbook-bench"))
        .args(["--runs", "200", "--only", "baseline", "--dir"])
        .arg(dir.join("project"))
        .arg("--logbook")
        .arg(new)
        .arg("--baseline")
        .arg(old)
        .output()
        .expect("logbook-bench runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "logbook-bench failed: {}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// The table line of the compared row named `name`.
fn row<'a>(stdout: &'a str, name: &str) -> &'a str {
    let lines: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with(&format!("| vs baseline: {name}")))
        .collect();
    assert_eq!(lines.len(), 1, "one row {name:?} in:\n{stdout}");
    lines[0]
}

/// The cells of a table line: measure, result, baseline, ratio, target, met.
fn cells(line: &str) -> Vec<&str> {
    line.trim_matches('|').split(" | ").map(str::trim).collect()
}

#[test]
fn against_itself_every_row_has_both_figures_and_a_ratio() {
    let dir = tempfile::tempdir().expect("temp dir");
    let bin = logbook();
    let stdout = bench(dir.path(), &bin, &bin);
    for name in ROWS {
        let c = cells(row(&stdout, name));
        assert_eq!(c.len(), 6, "six cells in {c:?}");
        assert!(c[0].ends_with(", 200 runs"), "{c:?}");
        assert!(c[1].contains(" median of "), "this build's figure in {c:?}");
        assert!(
            c[2].contains(" median of "),
            "the baseline's figure in {c:?}"
        );
        assert!(!c[2].contains("n/a"), "the baseline did the row: {c:?}");
        let ratio: f64 = c[3]
            .split('×')
            .next()
            .and_then(|r| r.parse().ok())
            .unwrap_or_else(|| panic!("a ratio in {c:?}"));
        assert!(ratio > 0.0, "{c:?}");
        assert_eq!(c[4], "≤ 1.10× the baseline");
        // Called out exactly when it says so, whatever this machine's noise.
        assert_eq!(c[3].contains("CALLED OUT"), c[5] == "**no**", "{c:?}");
    }
    let summary = format!(
        "Against the baseline {}",
        bin.canonicalize().expect("path").display()
    );
    assert!(
        stdout.contains(&summary)
            || stdout.contains(&format!("Against the baseline {}", bin.display())),
        "{stdout}"
    );
    // The hook projects are gone; the two projects on the run folders stay
    // for a reused --dir.
    let project = dir.path().join("project");
    assert!(!project.join("baseline-hook-old").exists());
    assert!(project.join("baseline-old/logbook.yaml").is_file());
    assert!(project.join("baseline-new/.logbook/index.db").is_file());
}

#[test]
fn a_slower_build_is_called_out_and_what_the_baseline_lacks_is_na() {
    let dir = tempfile::tempdir().expect("temp dir");
    let bin = logbook();
    let real = bin.display().to_string();
    // This build half a second slower to start than the baseline, which
    // has no `hook` and no `mcp` (as an older release may lack a command).
    let slow = script(
        &dir.path().join("slow-logbook"),
        &format!("sleep 0.5\nexec '{real}' \"$@\"\n"),
    );
    let lacking = script(
        &dir.path().join("old-logbook"),
        &format!(
            "case \"$1\" in hook|mcp) echo \"error: unrecognized subcommand '$1'\" >&2; exit 2;; esac\nexec '{real}' \"$@\"\n"
        ),
    );
    let stdout = bench(dir.path(), &slow, &lacking);
    let find = cells(row(&stdout, ROWS[5]));
    assert!(find[3].contains("CALLED OUT"), "{find:?}");
    assert_eq!(find[5], "**no**");
    for (name, lacks) in [(ROWS[6], "mcp"), (ROWS[7], "hook"), (ROWS[8], "hook")] {
        let c = cells(row(&stdout, name));
        assert_eq!(c[2], format!("n/a (baseline has no `{lacks}`)"), "{c:?}");
        assert!(
            c[1].contains(" median of "),
            "this build still timed: {c:?}"
        );
        assert_eq!(c[3], "");
        assert_eq!(c[5], "");
    }
    assert!(stdout.contains("CALLED OUT: "), "{stdout}");
    let listed = stdout
        .lines()
        .any(|l| l.starts_with("- `find --agent X") && l.contains(" against "));
    assert!(listed, "the find row listed after the table:\n{stdout}");
}
