//! The release-against-release rows (`--baseline PATH`): the rows a user
//! feels when they upgrade (the first `find` after an upgrade, `index
//! rebuild`, the first `find` after the index is lost, `index sync`,
//! `doctor`, a filtered `find`, the hooks and an MCP `find_runs`), each
//! timed for the `logbook` under test and for an older `logbook` binary
//! on the same run folders, in the same run, alternating one with the
//! other, as medians. A row more than 10 % slower than the baseline is
//! called out in its ratio cell and after the table, so that a slowdown
//! cannot land unnoticed (as `index rebuild`'s 1.6× once did).
//!
//! Both binaries run as whole processes, each on a project of its own
//! (`baseline-old/`, `baseline-new/` under the bench's project) whose
//! `logbook.yaml` points at the bench's run folders: the same files, and
//! each binary's own index. A row the baseline cannot do (a command it
//! lacks, or one that fails) says "n/a" and why, rather than failing.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use logbook::Logbook;
use logbook_index::Index;

use crate::find::FIND_ARGS;
use crate::hook::HookProject;
use crate::mcp::McpServer;
use crate::measure::{PROCESS_REPS, SMALL_RUNS, peak_rss_and_time, percentile, process_ms};
use crate::report::{Row, RowSink};

/// How much slower than the baseline a row may be before it is called out.
const SLOWER_BY: f64 = 0.10;

/// The target of every compared row; [`crate::report::print_callouts`]
/// finds the compared rows by it.
pub(crate) const TARGET: &str = "≤ 1.10× the baseline";

/// What each compared row's name starts with.
const PREFIX: &str = "vs baseline:";

/// How many timed runs each row takes of each binary.
#[derive(Clone, Copy)]
struct Reps {
    /// The rows that take seconds (an index built, `doctor`): at least 3.
    heavy: usize,
    /// `index sync` with nothing changed.
    sync: usize,
    /// The filtered `find`.
    find: usize,
    /// Hooks of each kind.
    hook: usize,
    /// MCP `find_runs` calls.
    mcp: usize,
}

impl Reps {
    /// Below [`SMALL_RUNS`] (CI's size), where the run checks that every
    /// row works and the ratios mean little, fewer of the quick rows.
    fn at(n: usize) -> Reps {
        if n < SMALL_RUNS {
            Reps {
                heavy: 3,
                sync: 3,
                find: 5,
                hook: 3,
                mcp: 100,
            }
        } else {
            Reps {
                heavy: 3,
                sync: 7,
                find: PROCESS_REPS,
                hook: 21,
                mcp: 1000,
            }
        }
    }
}

/// The filtered `find`: [`FIND_ARGS`] with `--limit 10`.
fn find_args() -> Vec<&'static str> {
    let mut args = vec!["find"];
    args.extend_from_slice(&FIND_ARGS[..6]);
    args.extend(["--limit", "10"]);
    args
}

/// Whether a row whose median is `new` against the baseline's `old` (both
/// times) is more than 10 % slower, and so called out.
pub(crate) fn called_out(new: f64, old: f64) -> bool {
    new > old * (1.0 + SLOWER_BY)
}

/// The ratio cell of a compared row, with the call-out when it is one.
fn ratio_cell(new: f64, old: f64) -> String {
    let ratio = new / old;
    if called_out(new, old) {
        format!(
            "{ratio:.2}× **CALLED OUT: {:.0} % slower than the baseline**",
            (ratio - 1.0) * 100.0
        )
    } else {
        format!("{ratio:.2}×")
    }
}

/// One timed run: its wall time (ms) and, for the rows that take it, its
/// peak resident memory (MiB).
#[derive(Clone, Copy)]
struct Sample {
    ms: f64,
    mib: Option<f64>,
}

impl Sample {
    fn time(ms: f64) -> Sample {
        Sample { ms, mib: None }
    }

    /// The median time of `samples`, with the largest peak among them.
    fn median(samples: &[Sample]) -> Sample {
        let mut times: Vec<f64> = samples.iter().map(|s| s.ms).collect();
        let mib = samples.iter().filter_map(|s| s.mib).reduce(f64::max);
        Sample {
            ms: percentile(&mut times, 0.5),
            mib,
        }
    }

    /// The cell a row shows it in: ms below a second, else s.
    fn cell(&self, of: usize) -> String {
        let time = if self.ms < 1000.0 {
            format!("{:.2} ms", self.ms)
        } else {
            format!("{:.2} s", self.ms / 1000.0)
        };
        let peak = self
            .mib
            .map_or(String::new(), |m| format!(", peak {m:.0} MiB"));
        format!("{time} median of {of}{peak}")
    }
}

/// Times one process: the binary, its project, its arguments.
type Timer = dyn Fn(&Path, &Path, &[&str]) -> Result<Sample>;

/// The baseline's medians, or why it has none.
type Old = std::result::Result<Vec<Sample>, String>;

/// Why the baseline could not do a step, in one line.
fn failed(e: &anyhow::Error) -> String {
    let text = format!("{e:#}");
    let line = text.lines().next().unwrap_or("").trim();
    let short: String = line.chars().take(120).collect();
    format!("baseline failed: {short}")
}

/// Whether `bin` knows the subcommand `sub` (its `--help` succeeds).
fn has(bin: &Path, sub: &[&str]) -> bool {
    Command::new(bin)
        .args(sub)
        .arg("--help")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// `Ok` when the baseline has `sub`, else the row's "n/a" reason.
fn capable(bin: &Path, sub: &[&str]) -> std::result::Result<(), String> {
    if has(bin, sub) {
        Ok(())
    } else {
        Err(format!("baseline has no `{}`", sub.join(" ")))
    }
}

/// Whether a process given `--root ROOT` is running (Linux: from /proc;
/// elsewhere, where `index status` alone decides, never): the detached
/// builder a first `find` starts is one.
fn busy(root: &Path) -> bool {
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return false;
    };
    let root = root.as_os_str().as_encoded_bytes();
    procs.filter_map(|e| e.ok()).any(|e| {
        let Ok(cmdline) = std::fs::read(e.path().join("cmdline")) else {
            return false;
        };
        let args: Vec<&[u8]> = cmdline.split(|b| *b == 0).collect();
        args.windows(2)
            .any(|w| w[0] == b"--root".as_slice() && w[1] == root)
    })
}

/// The two binaries and their projects on the same run folders.
struct Pair {
    old: PathBuf,
    new: PathBuf,
    old_root: PathBuf,
    new_root: PathBuf,
    dir: PathBuf,
    n: usize,
    reps: Reps,
}

/// The `logbook.yaml` of a project whose runs are the folders at
/// `outputs` (a YAML single-quoted string doubles its quotes).
fn config_text(outputs: &Path) -> String {
    let path = outputs.to_string_lossy().replace('\'', "''");
    format!(
        "# logbook-bench --baseline: the bench's run folders.\nagent_outputs_folder: '{path}'\n"
    )
}

/// A project at `root` on the run folders at `outputs`, its index kept
/// when it is already there (a reused --dir).
fn project_on(root: &Path, outputs: &Path) -> Result<()> {
    std::fs::create_dir_all(root)?;
    std::fs::write(root.join("logbook.yaml"), config_text(outputs))
        .with_context(|| format!("writing {}", root.join("logbook.yaml").display()))
}

/// The version the binary at `bin` says it is, for the call-out's heading.
fn version(bin: &Path) -> String {
    Command::new(bin)
        .arg("--version")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map_or_else(
            || "version unknown".into(),
            |o| String::from_utf8_lossy(&o.stdout).trim().to_string(),
        )
}

impl Pair {
    /// Waits until the new binary's index at `root` has nothing left to
    /// build in the background (`index status` says its full text is
    /// complete) and no process it started on `root` is still running (a
    /// builder may exit a moment after its work is done), so that none
    /// competes with the next timing.
    fn settle(&self, root: &Path) -> Result<()> {
        let started = Instant::now();
        loop {
            let phase = self.text_phase(root)?;
            if phase == "complete" && !busy(root) {
                return Ok(());
            }
            if started.elapsed() > Duration::from_secs(4 * 3600) {
                bail!(
                    "the index at {} was still {phase} after four hours",
                    root.display()
                );
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// The full text's phase, as the new binary's `index status` says it.
    fn text_phase(&self, root: &Path) -> Result<String> {
        let out = Command::new(&self.new)
            .args(["--json", "index", "status", "--root"])
            .arg(root)
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .with_context(|| format!("running {} index status", self.new.display()))?;
        if !out.status.success() {
            bail!("{} index status failed: {}", self.new.display(), out.status);
        }
        let status: serde_json::Value =
            serde_json::from_slice(&out.stdout).context("index status --json printed no JSON")?;
        Ok(status["text"]["phase"]
            .as_str()
            .unwrap_or("complete")
            .into())
    }

    /// Forgets the index of the project at `root`, whichever binary made it.
    fn discard(&self, root: &Path) -> Result<()> {
        let project = Logbook::open(root)?;
        Ok(Index::discard(&project)?)
    }

    /// One whole process of `bin` on `root`, with its peak memory.
    fn heavy(bin: &Path, root: &Path, args: &[&str], findings_ok: bool) -> Result<Sample> {
        let (mib, s) = peak_rss_and_time(bin, root, args, findings_ok)?;
        Ok(Sample {
            ms: s * 1000.0,
            mib: Some(mib),
        })
    }

    /// The upgrade and first-answer rows: per round, the index is lost,
    /// the baseline's first `find` builds its own, this build's first
    /// `find` upgrades that one in place, then the index is lost again
    /// and this build's first `find` answers without one.
    fn upgrade_rows(&self, row: RowSink<'_>) -> Result<()> {
        let find = find_args();
        let mut old: Old = capable(&self.old, &["find"]).map(|()| vec![]);
        let (mut upgraded, mut lost) = (vec![], vec![]);
        for round in 0..self.reps.heavy {
            eprintln!("baseline: upgrade and first answer, round {} …", round + 1);
            self.discard(&self.new_root)?;
            if let Ok(samples) = &mut old {
                match Pair::heavy(&self.old, &self.new_root, &find, false) {
                    Ok(s) => samples.push(s),
                    Err(e) => old = Err(failed(&e)),
                }
            }
            if old.is_ok() {
                upgraded.push(Pair::heavy(&self.new, &self.new_root, &find, false)?);
                self.settle(&self.new_root)?;
                self.discard(&self.new_root)?;
            }
            lost.push(Pair::heavy(&self.new, &self.new_root, &find, false)?);
            self.settle(&self.new_root)?;
        }
        let name = "first `find` after upgrading the baseline's index in place (baseline: its first `find` without an index it can read, a full rebuild)";
        match &old {
            Ok(_) => self.emit(row, name, &upgraded, &old),
            Err(why) => row(
                &format!("{PREFIX} {name}"),
                "not measured: no index of the baseline's".into(),
                format!("n/a ({why})"),
                String::new(),
                TARGET,
                None,
            ),
        }
        self.emit(
            row,
            "first `find` after the index is lost (baseline: the same)",
            &lost,
            &old,
        );
        Ok(())
    }

    /// Times `args` by each binary on its own project, alternating, after
    /// `warm` untimed runs of each: `reps` medians, the baseline's failure
    /// kept as its reason (this build's is an error). `run` times one
    /// process; `after_new` runs untimed after each of this build's.
    fn alternate(
        &self,
        sub: &[&str],
        args: &[&str],
        (warm, reps): (usize, usize),
        run: &Timer,
        after_new: &dyn Fn() -> Result<()>,
    ) -> Result<(Vec<Sample>, Old)> {
        let mut old: Old = capable(&self.old, sub).map(|()| vec![]);
        let mut new = vec![];
        for i in 0..warm + reps {
            if let Ok(samples) = &mut old {
                match run(&self.old, &self.old_root, args) {
                    Ok(s) if i >= warm => samples.push(s),
                    Ok(_) => {}
                    Err(e) => old = Err(failed(&e)),
                }
            }
            let s = run(&self.new, &self.new_root, args)?;
            after_new()?;
            if i >= warm {
                new.push(s);
            }
        }
        Ok((new, old))
    }

    /// `index rebuild`, `index sync` with nothing changed, default
    /// `doctor` and the filtered `find`, each alternating.
    fn process_rows(&self, row: RowSink<'_>) -> Result<()> {
        let heavy = |bin: &Path, root: &Path, args: &[&str]| Pair::heavy(bin, root, args, false);
        let settle = || self.settle(&self.new_root);
        let rebuild = ["index", "rebuild"];
        eprintln!("baseline: index rebuild …");
        let (new, old) =
            self.alternate(&rebuild, &rebuild, (0, self.reps.heavy), &heavy, &settle)?;
        self.emit(row, "`index rebuild`", &new, &old);

        let sync = ["index", "sync"];
        eprintln!("baseline: index sync …");
        let (new, old) = self.alternate(&sync, &sync, (1, self.reps.sync), &heavy, &|| Ok(()))?;
        self.emit(row, "`index sync`, nothing changed", &new, &old);

        // `doctor` exits 1 when it finds something (the bench's project
        // has abandoned runs to report).
        let doctor = |bin: &Path, root: &Path, args: &[&str]| Pair::heavy(bin, root, args, true);
        eprintln!("baseline: doctor …");
        let (new, old) = self.alternate(
            &["doctor"],
            &["doctor"],
            (1, self.reps.heavy),
            &doctor,
            &|| Ok(()),
        )?;
        self.emit(row, "default `doctor`", &new, &old);

        let find = find_args();
        let quick =
            |bin: &Path, root: &Path, args: &[&str]| Ok(Sample::time(process_ms(bin, root, args)?));
        eprintln!("baseline: find …");
        let (new, old) =
            self.alternate(&["find"], &find, (1, self.reps.find), &quick, &|| Ok(()))?;
        self.emit(
            row,
            "`find --agent X --workflow '^deep-' --status completed --limit 10`, whole process",
            &new,
            &old,
        );
        Ok(())
    }

    /// The hooks: a Stop after one more exchange and a SessionStart after
    /// a compaction, each binary in a hook project of its own,
    /// alternating.
    fn hook_rows(&self, row: RowSink<'_>) -> Result<()> {
        eprintln!("baseline: hooks …");
        let mut old = capable(&self.old, &["hook"]).and_then(|()| {
            HookProject::new(&self.old, &self.dir.join("baseline-hook-old")).map_err(|e| failed(&e))
        });
        let mut new = HookProject::new(&self.new, &self.dir.join("baseline-hook-new"))?;
        let (mut old_stops, mut old_starts, mut why) = (vec![], vec![], None);
        let (mut stops, mut starts) = (vec![], vec![]);
        for _ in 0..self.reps.hook {
            if let Ok(hooks) = &mut old {
                match hooks.stop_ms().and_then(|s| Ok((s, hooks.compact_ms()?))) {
                    Ok((s, c)) => {
                        old_stops.push(Sample::time(s));
                        old_starts.push(Sample::time(c));
                    }
                    Err(e) => why = Some(failed(&e)),
                }
                if let Some(why) = why.take() {
                    old = Err(why);
                }
            }
            stops.push(Sample::time(new.stop_ms()?));
            starts.push(Sample::time(new.compact_ms()?));
        }
        let (old_stops, old_starts) = match &old {
            Ok(_) => (Ok(old_stops), Ok(old_starts)),
            Err(why) => (Err(why.clone()), Err(why.clone())),
        };
        self.emit(
            row,
            "`logbook hook` Stop after one more exchange, whole process",
            &stops,
            &old_stops,
        );
        self.emit(
            row,
            "`logbook hook` SessionStart after a compaction, whole process",
            &starts,
            &old_starts,
        );
        drop(old);
        for side in ["old", "new"] {
            let _ = std::fs::remove_dir_all(self.dir.join(format!("baseline-hook-{side}")));
        }
        Ok(())
    }

    /// MCP `find_runs` round trips, a server of each binary, alternating
    /// call by call.
    fn mcp_row(&self, row: RowSink<'_>) -> Result<()> {
        eprintln!("baseline: MCP find_runs …");
        let mut old = capable(&self.old, &["mcp"])
            .and_then(|()| McpServer::start(&self.old, &self.old_root).map_err(|e| failed(&e)));
        let mut new = McpServer::start(&self.new, &self.new_root)?;
        let (mut old_calls, mut calls) = (vec![], vec![]);
        for _ in 0..self.reps.mcp {
            if let Ok(server) = &mut old {
                match server.find_ms() {
                    Ok(ms) => old_calls.push(Sample::time(ms)),
                    Err(e) => old = Err(failed(&e)),
                }
            }
            calls.push(Sample::time(new.find_ms()?));
        }
        let old_calls = old.map(|_| old_calls);
        self.emit(
            row,
            "MCP `find_runs` (agent, workflow regex, status, limit 20), stdio round trip",
            &calls,
            &old_calls,
        );
        Ok(())
    }

    /// One compared row: this build's median, the baseline's (or why it
    /// has none), their ratio with its call-out, and whether it is within
    /// 10 % of the baseline.
    fn emit(&self, row: RowSink<'_>, name: &str, new: &[Sample], old: &Old) {
        let n = self.n;
        let measure = format!("{PREFIX} {name}, {n} runs");
        let this = Sample::median(new);
        match old {
            Ok(samples) if !samples.is_empty() => {
                let base = Sample::median(samples);
                row(
                    &measure,
                    this.cell(new.len()),
                    base.cell(samples.len()),
                    ratio_cell(this.ms, base.ms),
                    TARGET,
                    Some(!called_out(this.ms, base.ms)),
                );
            }
            Ok(_) => row(
                &measure,
                this.cell(new.len()),
                "n/a (baseline not timed)".into(),
                String::new(),
                TARGET,
                None,
            ),
            Err(why) => row(
                &measure,
                this.cell(new.len()),
                format!("n/a ({why})"),
                String::new(),
                TARGET,
                None,
            ),
        }
    }
}

/// The compared rows of `new` (the `logbook` under test) against `old`
/// on the run folders of `project` (`n` runs); returns what the baseline
/// calls itself.
pub(crate) fn rows(
    old: &Path,
    new: &Path,
    project: &Logbook,
    n: usize,
    row: RowSink<'_>,
) -> Result<String> {
    if !old.is_file() {
        bail!(
            "--baseline {}: no such file; give the path of an older `logbook` binary",
            old.display()
        );
    }
    let dir = project.root().to_path_buf();
    let outputs = project.config.agent_outputs_folder.clone();
    // Absolute: the hooks run in a project folder of their own.
    let absolute = |bin: &Path| {
        std::fs::canonicalize(bin).with_context(|| format!("{}: no such binary", bin.display()))
    };
    let pair = Pair {
        old: absolute(old)?,
        new: absolute(new)?,
        old_root: dir.join("baseline-old"),
        new_root: dir.join("baseline-new"),
        dir,
        n,
        reps: Reps::at(n),
    };
    project_on(&pair.old_root, &outputs)?;
    project_on(&pair.new_root, &outputs)?;
    pair.upgrade_rows(row)?;
    pair.process_rows(row)?;
    pair.mcp_row(row)?;
    pair.hook_rows(row)?;
    Ok(version(old))
}

/// The compared rows among `rows` that are more than 10 % slower than
/// the baseline, each as a line of the call-out.
pub(crate) fn callouts(rows: &[Row]) -> Vec<String> {
    rows.iter()
        .filter(|r| r.target == TARGET && r.met == Some(false))
        .map(|r| {
            let name = r.measure.strip_prefix(PREFIX).unwrap_or(&r.measure).trim();
            format!("{name}: {} against {}", r.result, r.baseline)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_is_called_out_only_past_ten_percent_slower() {
        assert!(!called_out(100.0, 100.0));
        assert!(!called_out(110.0, 100.0));
        assert!(called_out(110.5, 100.0));
        assert!(called_out(160.0, 100.0));
        assert!(!called_out(50.0, 100.0));
        assert!(ratio_cell(116.0, 100.0).contains("CALLED OUT: 16 % slower"));
        assert_eq!(ratio_cell(105.0, 100.0), "1.05×");
    }

    #[test]
    fn the_callouts_list_the_compared_rows_that_missed() {
        let row = |measure: &str, target: &str, met| Row {
            measure: measure.into(),
            result: "2.00 s".into(),
            baseline: "1.00 s".into(),
            ratio: "2.00×".into(),
            target: target.into(),
            met,
        };
        let rows = [
            row(
                "vs baseline: `index rebuild`, 100 runs",
                TARGET,
                Some(false),
            ),
            row("vs baseline: `index sync`, 100 runs", TARGET, Some(true)),
            row("vs baseline: `hook`, 100 runs", TARGET, None),
            row("`find`", "< 5 ms", Some(false)),
        ];
        assert_eq!(
            callouts(&rows),
            ["`index rebuild`, 100 runs: 2.00 s against 1.00 s"]
        );
    }

    #[test]
    fn the_config_points_at_the_folders_with_quotes_doubled() {
        assert_eq!(
            config_text(Path::new("/tmp/it's")),
            "# logbook-bench --baseline: the bench's run folders.\nagent_outputs_folder: '/tmp/it''s'\n"
        );
    }
}
