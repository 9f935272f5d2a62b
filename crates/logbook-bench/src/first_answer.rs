//! The first-answer rows: the index lost at N runs. The first `find` is
//! answered by a scan of the manifests on every core while the index is
//! built behind it in two phases by a detached builder (see
//! `logbook::ops::query::scan` and `logbook_index`: the rows phase, then
//! the full text), next to the seed's own scan (every manifest read and
//! parsed, one thread) and today's one-phase rebuild of the same files,
//! measured in the same run. Each runs as a process of this very binary
//! (its builder modes below), so each one's peak memory is its own.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use logbook::Logbook;
use logbook::ops::query::{self, FindOptions, Scope};
use logbook_index::Index;

use crate::find::find_query;
use crate::measure::time;
use crate::report::RowSink;

/// `logbook-bench --root R first-find`: opens the lost or old index (phase
/// 1 or the migration, which start this binary detached as the text
/// builder) and answers `find`; prints its peak memory (MiB) on stdout,
/// and whether the text was still to build when the index opened.
pub(crate) const FIRST_FIND: &str = "first-find";

/// `logbook-bench --root R seed-scan`: `find` by the seed's discovery
/// (every manifest read and parsed, one thread, all held); prints its peak
/// memory (MiB).
const SEED_SCAN: &str = "seed-scan";

/// The file under the project root where the detached builder leaves
/// its peak memory (MiB) when the text is complete.
const TEXT_HWM_FILE: &str = "bench-text-peak-mib";

/// Runs this binary's builder modes (`--root R first-find`, `--root R
/// index build-text`); `None` when the arguments are the bench's own.
pub(crate) fn builder_mode() -> Option<Result<()>> {
    let argv: Vec<String> = std::env::args().collect();
    let (root, mode) = match argv.as_slice() {
        [_, flag, root, rest @ ..] if flag == "--root" => (Path::new(root), rest),
        _ => return None,
    };
    let run = || -> Result<()> {
        let project = Logbook::open(root)?;
        match mode {
            [m] if m == FIRST_FIND => {
                let project = project.with_text_builder(std::env::current_exe()?);
                // As the CLI's `find` asks it: a lost index is answered by
                // the scan, with the builder started behind it.
                let lost = !project.index_path().exists();
                let page = query::find(&project, &find_query(), FindOptions::new(Scope::Local))?;
                if page.hits.is_empty() {
                    bail!("the first find answered nothing");
                }
                let building = lost || Index::open(&project)?.read().text_progress()?.is_some();
                println!("{:.1} {building}", peak_mib()?);
            }
            [m] if m == SEED_SCAN => {
                let page = query::find(&project, &find_query(), FindOptions::new(Scope::Files))?;
                if page.hits.is_empty() {
                    bail!("the seed's scan answered nothing");
                }
                println!("{:.1}", peak_mib()?);
            }
            [i, b] if i == "index" && b == "build-text" => {
                // As the CLI's builder is: a lost index is built in two
                // phases, the rows first.
                let project = project.with_text_builder(std::env::current_exe()?);
                Index::build_text(&project)?;
                std::fs::write(root.join(TEXT_HWM_FILE), format!("{:.1}", peak_mib()?))?;
            }
            _ => bail!("unknown builder mode {mode:?}"),
        }
        Ok(())
    };
    Some(run())
}

/// This process's peak resident memory, MiB: VmHWM from /proc on Linux,
/// `getrusage` elsewhere (macOS). Not `getrusage` on Linux: its figure
/// also holds the high-water mark of the address space this process's
/// exec replaced, which for a process spawned with `vfork` is its parent's.
fn peak_mib() -> Result<f64> {
    if cfg!(target_os = "linux") {
        let bytes =
            crate::measure::vm_hwm(std::process::id()).context("no VmHWM in /proc/self/status")?;
        return Ok(bytes as f64 / 1_048_576.0);
    }
    use nix::sys::resource::{UsageWho, getrusage};
    let max_rss = getrusage(UsageWho::RUSAGE_SELF)
        .context("getrusage of this process")?
        .max_rss() as f64;
    // KiB on the BSDs, bytes on Apple's systems.
    let bytes = if cfg!(target_vendor = "apple") {
        max_rss
    } else {
        max_rss * 1024.0
    };
    Ok(bytes / 1_048_576.0)
}

/// What the first command after an index loss or an upgrade measured,
/// from its start: its answer, and the full text complete.
pub(crate) struct Phases {
    pub(crate) first: Duration,
    pub(crate) first_mib: f64,
    pub(crate) text_done: Duration,
    /// The detached builder's peak; `None` when the first command wrote
    /// the text itself (a small project).
    pub(crate) text_mib: Option<f64>,
}

/// Runs `first-find` as a process of this binary and waits for the text
/// builder it started to finish.
pub(crate) fn first_find_and_text(project: &Logbook) -> Result<Phases> {
    first_find_timed(project).map(|(phases, _)| phases)
}

/// [`first_find_and_text`], and when the index file was in place (the rows
/// phase done, so commands answer from it), from the first command's start.
fn first_find_timed(project: &Logbook) -> Result<(Phases, Duration)> {
    let marker = project.root().join(TEXT_HWM_FILE);
    let _ = std::fs::remove_file(&marker);
    let started = Instant::now();
    let out = std::process::Command::new(std::env::current_exe()?)
        .arg("--root")
        .arg(project.root())
        .arg(FIRST_FIND)
        .output()?;
    let first = started.elapsed();
    if !out.status.success() {
        bail!("first find: {}", String::from_utf8_lossy(&out.stderr));
    }
    let said = String::from_utf8_lossy(&out.stdout);
    let (first_mib, building) = said
        .trim()
        .split_once(' ')
        .context("first find printed no peak and state")?;
    let first_mib: f64 = first_mib.parse()?;
    let index = project.index_path();
    let mut rows_done = None;
    // The detached builder writes its peak when it is done.
    let text_mib = match building {
        "true" => Some(loop {
            if rows_done.is_none() && index.exists() {
                rows_done = Some(started.elapsed());
            }
            if let Ok(text) = std::fs::read_to_string(&marker)
                && let Ok(mib) = text.trim().parse()
            {
                break mib;
            }
            if started.elapsed() > Duration::from_secs(4 * 3600) {
                bail!("no text builder finished within four hours");
            }
            std::thread::sleep(Duration::from_millis(20));
        }),
        _ => None,
    };
    let text_done = started.elapsed();
    let _ = std::fs::remove_file(&marker);
    if Index::open(project)?.read().text_progress()?.is_some() {
        bail!("the builder ended with its text unfinished");
    }
    let phases = Phases {
        first,
        first_mib,
        text_done,
        text_mib,
    };
    Ok((phases, rows_done.unwrap_or(first)))
}

/// `seed-scan` as a process of this binary: its time and peak memory.
fn seed_scan(project: &Logbook) -> Result<(Duration, f64)> {
    let started = Instant::now();
    let out = std::process::Command::new(std::env::current_exe()?)
        .arg("--root")
        .arg(project.root())
        .arg(SEED_SCAN)
        .output()?;
    let took = started.elapsed();
    if !out.status.success() {
        bail!("seed scan: {}", String::from_utf8_lossy(&out.stderr));
    }
    let mib = String::from_utf8_lossy(&out.stdout).trim().parse()?;
    Ok((took, mib))
}

/// The builder's peak, as a row says it.
pub(crate) fn builder_peak(text_mib: Option<f64>) -> String {
    match text_mib {
        Some(mib) => format!("builder peak {mib:.0} MiB"),
        None => "written by the first command".into(),
    }
}

/// The rows: the one-phase rebuild and the seed's scan (the baselines,
/// the rebuild also warming the page cache), then the index lost again and
/// the first answer, the rows phase behind it and the full text timed from
/// the first command's start.
pub(crate) fn rows(project: &Logbook, n: usize, row: RowSink<'_>) -> Result<()> {
    eprintln!("first answer: one-phase rebuild …");
    Index::discard(project)?;
    let (full, _) = time(|| Ok(Index::rebuild(project, None)?))?;
    eprintln!("first answer: the seed's scan …");
    let (seed, seed_mib) = seed_scan(project)?;
    eprintln!("first answer: index lost, first find …");
    Index::discard(project)?;
    let (phases, rows_done) = first_find_timed(project)?;
    let secs = |d: Duration| d.as_secs_f64();
    let (first, text_done, full_s) = (phases.first, phases.text_done, secs(full));
    let ratio = secs(first) / secs(seed);
    row(
        "first `find` after the index is lost (scan on every core)",
        format!(
            "{:.2} s at {n} runs, peak {:.0} MiB",
            secs(first),
            phases.first_mib
        ),
        format!(
            "{:.2} s the seed's scan (one thread), peak {seed_mib:.0} MiB",
            secs(seed)
        ),
        format!("{ratio:.2}×"),
        "< 1× the seed's scan, ≤ 128 MiB (≤ 10 s at 1M)",
        Some(ratio < 1.0 && phases.first_mib <= 128.0),
    );
    row(
        "the same first `find`, against a rebuild",
        format!("{:.2} s", secs(first)),
        format!("{full_s:.1} s one-phase rebuild"),
        format!("{:.2}×", secs(first) / full_s),
        "≤ 0.20× the one-phase rebuild",
        Some(secs(first) / full_s <= 0.20),
    );
    row(
        "rows phase in place behind it (the index answers)",
        format!("{:.1} s from the first command's start", secs(rows_done)),
        format!("{full_s:.1} s one-phase rebuild"),
        format!("{:.2}×", secs(rows_done) / full_s),
        "–",
        None,
    );
    let text = text_done.saturating_sub(rows_done);
    row(
        "phase 2 (full text) after the index is lost",
        format!(
            "{:.1} s ({:.1} s from the start), {}",
            secs(text),
            secs(text_done),
            builder_peak(phases.text_mib)
        ),
        format!("{full_s:.1} s one-phase rebuild"),
        format!("{:.2}×", secs(text) / full_s),
        "≤ 1× the one-phase rebuild, ≤ 256 MiB",
        Some(secs(text) <= full_s && phases.text_mib.unwrap_or(0.0) <= 256.0),
    );
    Ok(())
}
