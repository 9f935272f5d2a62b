//! The rows of issue 15's targets: each a whole `logbook` process on the
//! benchmark's project and on a baseline project (100,000 runs, or 10,000
//! when the project has 100,000 or fewer) built in the same run, with its
//! wall time, its peak memory and the ratio of the two sizes. The machine's
//! load average is printed with every row: the cores may be shared.

use std::path::Path;
use std::time::Duration;

use anyhow::Result;
use logbook::Logbook;
use logbook_index::Index;

use crate::measure::peak_rss_and_time;
use crate::report::RowSink;
use crate::synth::synthesize;

/// The baseline project's size for a project of `n` runs.
pub(crate) fn baseline_runs(n: usize) -> usize {
    if n > 100_000 { 100_000 } else { 10_000.min(n) }
}

/// The one-minute load average, as `/proc/loadavg` gives it on Linux and
/// `sysctl -n vm.loadavg` (`{ 1.92 2.05 2.11 }`) on macOS; `?` when
/// neither answers.
pub(crate) fn load() -> String {
    let text = std::fs::read_to_string("/proc/loadavg").ok().or_else(|| {
        let out = std::process::Command::new("sysctl")
            .args(["-n", "vm.loadavg"])
            .stderr(std::process::Stdio::null())
            .output()
            .ok()
            .filter(|o| o.status.success())?;
        Some(String::from_utf8_lossy(&out.stdout).into_owned())
    });
    text.as_deref()
        .and_then(|s| s.split_whitespace().find(|w| *w != "{"))
        .map_or_else(|| "?".into(), str::to_string)
}

/// One measured process: seconds and peak MiB.
#[derive(Clone, Copy)]
struct Measure {
    s: f64,
    mib: f64,
}

impl Measure {
    fn show(&self, runs: usize) -> String {
        format!(
            "{} s, {:.1} MiB at {runs} runs (load {})",
            secs(self.s),
            self.mib,
            load()
        )
    }
}

fn secs(s: f64) -> String {
    if s < 1.0 {
        format!("{s:.3}")
    } else {
        format!("{s:.2}")
    }
}

fn run(bin: &Path, root: &Path, args: &[&str]) -> Result<Measure> {
    let (mib, s) = peak_rss_and_time(bin, root, args, true)?;
    Ok(Measure { s, mib })
}

/// Rewrites every `step`-th manifest (from `skip`) in place, one byte
/// longer each time, as an editor would: `count` of them.
fn edit_manifests(project: &Logbook, count: usize, skip: usize) -> Result<usize> {
    let dir = &project.config.agent_outputs_folder;
    let mut names: Vec<_> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    names.sort();
    let step = (names.len() / count.max(1)).max(1);
    let mut edited = 0;
    for folder in names.iter().skip(skip % step).step_by(step).take(count) {
        let path = folder.join("manifest.json");
        let Ok(mut text) = std::fs::read_to_string(&path) else {
            continue;
        };
        text.push('\n');
        std::fs::write(&path, text)?;
        edited += 1;
    }
    Ok(edited)
}

/// Adds one run folder as another tool would (a manifest copied from an
/// existing run under a new id).
fn add_folder(project: &Logbook, nth: u64) -> Result<()> {
    let dir = &project.config.agent_outputs_folder;
    let Some(first) = std::fs::read_dir(dir)?.filter_map(|e| e.ok()).next() else {
        return Ok(());
    };
    let old = first.file_name().to_string_lossy().into_owned();
    let text = std::fs::read_to_string(first.path().join("manifest.json"))?;
    let id = uuid::Uuid::from_u64_pair(0x5ca1_e000_0000_4000 | nth, 0x8000_0000_0000_0000 | nth)
        .to_string();
    let folder = dir.join(&id);
    std::fs::create_dir_all(&folder)?;
    std::fs::write(folder.join("manifest.json"), text.replace(&old, &id))?;
    Ok(())
}

/// Measures every row on `big` (`n` runs) and on a baseline project built
/// here, and hands each to `row`.
pub(crate) fn rows(
    bin: &Path,
    big: &Logbook,
    n: usize,
    baseline_dir: Option<&Path>,
    row: RowSink<'_>,
) -> Result<()> {
    let b = baseline_runs(n);
    let tmp;
    let small_root = match baseline_dir {
        Some(d) => d.to_path_buf(),
        None => {
            tmp = tempfile::Builder::new()
                .prefix("logbook-bench-base-")
                .tempdir()?;
            tmp.path().to_path_buf()
        }
    };
    std::fs::create_dir_all(&small_root)?;
    let small = Logbook::open(&small_root)?;
    let have = std::fs::read_dir(&small.config.agent_outputs_folder)
        .map(|d| d.count())
        .unwrap_or(0);
    if have < b {
        eprintln!("baseline project: {b} runs in {} …", small_root.display());
        synthesize(&small.config.agent_outputs_folder, b, 43)?;
        Index::rebuild(&small, None)?;
    }
    let projects = [(big, n), (&small, b)];
    // Both projects synced and settled first, so "nothing changed" is true.
    // Nothing adds a run folder from here on, so each runs folder's mtime
    // is set a second back, past the window in which it is not trusted,
    // rather than waiting for it to age.
    for (p, _) in projects {
        let runs = &p.config.agent_outputs_folder;
        let aged = logbook::clock::Clock::from_env().system_time() - Duration::from_secs(1);
        std::fs::File::open(runs)?.set_modified(aged)?;
        Index::open(p)?.upkeep().sync()?;
    }
    for (p, _) in projects {
        run(bin, p.root(), &["find", "--limit", "1"])?;
    }
    let both = |args: &[&str]| -> Result<(Measure, Measure)> {
        // Alternated, warm cache for both, so drifting load hits both alike.
        run(bin, big.root(), args)?;
        run(bin, small.root(), args)?;
        Ok((run(bin, big.root(), args)?, run(bin, small.root(), args)?))
    };
    let emit =
        |measure: &str, (x, y): (Measure, Measure), target: &str, met: bool, row: RowSink<'_>| {
            let ratio = format!("{:.2}× time, {:.2}× memory", x.s / y.s, x.mib / y.mib);
            // As it is measured too, so a long run that is cut off still tells.
            eprintln!("  {measure}: {} | {} | {ratio}", x.show(n), y.show(b));
            row(measure, x.show(n), y.show(b), ratio, target, Some(met));
        };
    let cap = 128.0;

    eprintln!("scale: find, every run streamed …");
    let all = n.to_string();
    let m = both(&["--json", "find", "--limit", &all])?;
    emit(
        "`find --json --limit N` (every run, streamed to stdout)",
        m,
        "≤ 128 MiB",
        m.0.mib <= cap,
        row,
    );

    eprintln!("scale: find --text, a word in every run …");
    // "agent" is in every synthesized run's title: the word whose count
    // and ranking once read every match.
    let m = both(&["find", "--text", "agent", "--limit", "20"])?;
    emit(
        "`find --text` of a word in every run, `--limit 20`",
        m,
        "≤ 0.3 s at 1M, ≤ 128 MiB",
        m.0.s <= 0.3 && m.0.mib <= cap,
        row,
    );

    eprintln!("scale: list, status …");
    let m = both(&["list"])?;
    emit(
        "`list` (no work sessions)",
        m,
        "flat in run count (≤ 1.5× time), ≤ 128 MiB",
        m.0.s / m.1.s <= 1.5 && m.0.mib <= cap,
        row,
    );
    for (p, _) in projects {
        if logbook::ops::work_session::active(p)?.is_none() {
            logbook::ops::work_session::start(
                p,
                logbook::ops::work_session::StartOptions {
                    prefix: None,
                    client: Some("BENCH".into()),
                    project: Some("SCALE".into()),
                    max_tokens: None,
                    max_cost: None,
                    close_active: false,
                    repository: None,
                },
            )?;
        }
    }
    let m = both(&["status"])?;
    emit(
        "`status` (the active work session)",
        m,
        "flat in run count (≤ 1.5× time), ≤ 128 MiB",
        m.0.s / m.1.s <= 1.5 && m.0.mib <= cap,
        row,
    );

    eprintln!("scale: index sync and status, nothing changed …");
    let sync_target = if n <= 100_000 { 0.3 } else { 2.0 };
    let nothing = both(&["index", "sync"])?;
    emit(
        "`index sync`, nothing changed",
        nothing,
        if n <= 100_000 {
            "≤ 0.3 s at 100k, ≤ 128 MiB"
        } else {
            "≤ 2 s at 1M, ≤ 128 MiB"
        },
        nothing.0.s <= sync_target && nothing.0.mib <= cap,
        row,
    );
    let m = both(&["index", "status"])?;
    emit(
        "`index status` (counts and staleness)",
        m,
        "≤ 128 MiB",
        m.0.mib <= cap,
        row,
    );

    eprintln!("scale: index sync, 1 % changed …");
    // A different slice of manifests each time the bench runs, so no run
    // edits the files a previous one just edited.
    let skip = usize::try_from(logbook::clock::now().as_second()).unwrap_or(0);
    let mut changed = [0usize; 2];
    let mut once = [Measure { s: 0.0, mib: 0.0 }; 2];
    for (i, (p, runs)) in projects.iter().enumerate() {
        changed[i] = edit_manifests(p, runs / 100, skip)?;
        once[i] = run(bin, p.root(), &["index", "sync"])?;
    }
    let per_ms = |i: usize, base: f64| (once[i].s - base) * 1000.0 / changed[i].max(1) as f64;
    let (big_per, small_per) = (per_ms(0, nothing.0.s), per_ms(1, nothing.1.s));
    eprintln!(
        "  sync 1 %: {} ({} changed, {big_per:.3} ms each) | {} ({} changed, {small_per:.3} ms each)",
        once[0].show(n),
        changed[0],
        once[1].show(b),
        changed[1]
    );
    row(
        "`index sync`, 1 % of manifests edited in place",
        format!(
            "{} ({} changed: {small:.3} ms each over nothing-changed)",
            once[0].show(n),
            changed[0],
            small = big_per
        ),
        format!(
            "{} ({} changed: {small_per:.3} ms each)",
            once[1].show(b),
            changed[1]
        ),
        format!(
            "{:.2}× per changed manifest, {:.2}× memory",
            big_per / small_per,
            once[0].mib / once[1].mib
        ),
        "nothing-changed + ≤ 0.3 ms per changed manifest, ≤ 128 MiB",
        Some(big_per <= 0.3 && once[0].mib <= cap),
    );

    eprintln!("scale: first find after another tool adds a folder …");
    let mut first = [Measure { s: 0.0, mib: 0.0 }; 2];
    for (i, (p, _)) in projects.iter().enumerate() {
        add_folder(p, skip as u64)?;
        first[i] = run(bin, p.root(), &["find", "--limit", "20"])?;
    }
    emit(
        "first `find --limit 20` after another tool adds a run folder",
        (first[0], first[1]),
        "≤ 1 s at 1M, ≤ 128 MiB",
        first[0].s <= 1.0 && first[0].mib <= cap,
        row,
    );

    eprintln!("scale: doctor …");
    let m = (
        run(bin, big.root(), &["doctor", "--json"])?,
        run(bin, small.root(), &["doctor", "--json"])?,
    );
    let doctor_target = 30.0 * n as f64 / 1_000_000.0;
    emit(
        "`doctor`",
        m,
        "≤ 30 s at 1M (linear: ≤ 30 µs a run), ≤ 128 MiB",
        m.0.s <= doctor_target.max(0.5) && m.0.mib <= cap,
        row,
    );
    Ok(())
}
