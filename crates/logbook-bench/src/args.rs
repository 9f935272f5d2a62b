//! The command line: the project to build or reuse, the `logbook` binary
//! to run, and the row groups to measure.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};

/// What the command line asks for.
pub(crate) struct Args {
    /// Also measure the team catalog on a PostgreSQL started for the run.
    pub(crate) team: bool,
    /// Runs in the synthetic project.
    pub(crate) runs: usize,
    /// Size of the generated Claude Code log, in MiB.
    pub(crate) log_mib: u64,
    /// Where the project is built or reused (default: a temp dir).
    pub(crate) dir: Option<PathBuf>,
    /// The `logbook` binary to run (default: the one beside this one).
    pub(crate) logbook: Option<PathBuf>,
    /// A `logbook` binary built with the `portable-fs` feature, for the
    /// `portable` row (macOS's file-system path against Linux's).
    pub(crate) portable_logbook: Option<PathBuf>,
    /// An older `logbook` binary to compare with, row by row
    /// (`--baseline PATH`: the `baseline` group).
    pub(crate) baseline: Option<PathBuf>,
    /// Row groups to measure; all when empty.
    pub(crate) only: Vec<String>,
}

/// The row groups `--only` can name.
const GROUPS: &[&str] = &[
    "rebuild",
    "find",
    "fts",
    "sync",
    "register",
    "memory",
    "mcp",
    "hook",
    "statusline",
    "web",
    "page",
    "scale",
    "export",
    "size",
    "archive",
    "upkeep",
    "first-answer",
    "upgrade",
    "portable",
    "baseline",
];

impl Args {
    /// Whether the rows of `group` are to be measured.
    pub(crate) fn wants(&self, group: &str) -> bool {
        self.only.is_empty() || self.named(group)
    }

    /// Whether `--only` names `group` itself.
    pub(crate) fn named(&self, group: &str) -> bool {
        self.only.iter().any(|g| g == group)
    }
}

/// Where the scale rows keep their baseline project when `--dir` is given.
pub(crate) fn baseline_dir(dir: &Path) -> PathBuf {
    let mut name = dir.as_os_str().to_owned();
    name.push("-baseline");
    PathBuf::from(name)
}

/// The arguments given (`--help` prints the usage and exits).
pub(crate) fn parse_args() -> Result<Args> {
    let mut args = Args {
        team: false,
        runs: 100_000,
        log_mib: 200,
        dir: None,
        logbook: None,
        portable_logbook: None,
        baseline: None,
        only: vec![],
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--runs" => args.runs = it.next().context("--runs N")?.parse().context("--runs N")?,
            "--team" => args.team = true,
            "--dir" => args.dir = Some(it.next().context("--dir DIR")?.into()),
            "--log-mib" => {
                args.log_mib = it
                    .next()
                    .context("--log-mib N")?
                    .parse()
                    .context("--log-mib N")?
            }
            "--logbook" => args.logbook = Some(it.next().context("--logbook PATH")?.into()),
            "--portable-logbook" => {
                args.portable_logbook = Some(it.next().context("--portable-logbook PATH")?.into())
            }
            "--baseline" => args.baseline = Some(it.next().context("--baseline PATH")?.into()),
            "--only" => {
                for g in it.next().context("--only GROUP,…")?.split(',') {
                    if !GROUPS.contains(&g) {
                        bail!("--only: unknown group {g:?}; groups: {}", GROUPS.join(","));
                    }
                    args.only.push(g.to_string());
                }
            }
            "-h" | "--help" => {
                println!(
                    "logbook-bench [--runs N] [--dir DIR] [--logbook PATH] [--portable-logbook PATH] [--baseline PATH] [--log-mib N] [--only GROUP,…] [--team]\n\
                     Builds a synthetic project of N runs (default 100000) in DIR (default: a temp dir;\n\
                     a DIR that already holds N runs is reused, with its baseline project in DIR-baseline;\n\
                     its index is rebuilt, and timed, only when --only names rebuild)\n\
                     and prints one markdown table. --only measures some row groups: rebuild, find, fts,\n\
                     sync, register, memory, mcp, hook, web, page (a 100 MB transcript's page served), archive (10 % of the runs archived, find before and after), size (the release and dist builds of `logbook` in its target folder, ≤ 35 MB and ≤ 30 MB), upkeep (sync and doctor against the bare walks they do), portable (index sync by a binary built with --features portable-fs, given as --portable-logbook PATH, against the one under test), scale (issue 15's targets at N and at a baseline size). The peak-memory rows run the `logbook` binary found\n\
                     beside this one (cargo build --release -p logbook-cli) or at --logbook PATH;\n\
                     the transcript import rows import a generated Claude Code log of N MiB (default 200).\n\
                     --team adds the team catalog rows (push, find --team) on a PostgreSQL it starts.\n\
                     --baseline PATH adds the baseline group: the upgrade, rebuild, first-answer, sync, doctor,\n\
                     find, MCP and hook rows timed for the `logbook` under test and for the older `logbook` at\n\
                     PATH on the same files, alternating, with their ratios; a row more than 10 % slower than\n\
                     the baseline is called out (--only baseline for those rows alone)."
                );
                std::process::exit(0);
            }
            other => bail!("unknown argument {other:?}; see --help"),
        }
    }
    if args.named("baseline") && args.baseline.is_none() {
        bail!("--only baseline needs --baseline PATH, an older `logbook` binary to compare with");
    }
    if args.runs < 100 {
        bail!("--runs must be at least 100");
    }
    Ok(args)
}
