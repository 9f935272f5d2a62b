//! The memory rows: the real `logbook` binary on the project and on a
//! smaller one, for the peak memory and whole-process time of `find`,
//! `doctor` and `index rebuild`; the MCP and transcript import rows, which
//! run the binary too, are measured from here.

use std::path::Path;

use anyhow::Result;
use logbook::Logbook;
use logbook_index::Index;

use crate::find::FIND_ARGS;
use crate::measure::{
    PROCESS_REPS, SMALL_RUNS, peak_rss_and_time, peak_rss_mib, percentile, process_ms,
};
use crate::report::RowSink;
use crate::synth::synthesize;
use crate::transcripts;

/// The rows of `bin` run on the project at `root` of `n` runs; the
/// transcript import rows import a log of `log_mib` MiB.
pub(crate) fn rows(
    bin: &Path,
    root: &Path,
    n: usize,
    log_mib: u64,
    row: RowSink<'_>,
) -> Result<()> {
    eprintln!("peak memory ({}) …", bin.display());
    let find_args = [&["find", "--json"][..], &FIND_ARGS].concat();
    // Steady state: the first listing after run folders were
    // created (the registration rows above started runs) compares
    // the folder names with the index once; that one-off cost is
    // not what a listing costs.
    peak_rss_mib(bin, root, &find_args)?;
    let big = peak_rss_mib(bin, root, &find_args)?;
    // The comparison project: large enough that the query fills its
    // page of 20 there too, so both sizes do the same work per hit.
    let small_dir = tempfile::Builder::new()
        .prefix("logbook-bench-small-")
        .tempdir()?;
    let small_project = Logbook::open(small_dir.path())?;
    let small_runs = SMALL_RUNS.min(n);
    synthesize(&small_project.config.agent_outputs_folder, small_runs, 43)?;
    Index::open(&small_project)?;
    peak_rss_mib(bin, small_dir.path(), &find_args)?;
    let small = peak_rss_mib(bin, small_dir.path(), &find_args)?;
    row(
        "peak memory of `find`",
        format!("{big:.1} MiB at {n} runs"),
        format!("{small:.1} MiB at {small_runs} runs"),
        format!("{:.2}×", big / small),
        "independent of run count",
        Some(big / small < 1.5),
    );
    // What a user or an agent waits for: the whole process (start,
    // open, query, print, exit), alternating the two projects so
    // drifting load on a shared machine hits both alike.
    eprintln!("find as a process …");
    let (mut big_ms, mut small_ms) = (vec![], vec![]);
    process_ms(bin, root, &find_args)?;
    process_ms(bin, small_dir.path(), &find_args)?;
    for _ in 0..PROCESS_REPS {
        big_ms.push(process_ms(bin, root, &find_args)?);
        small_ms.push(process_ms(bin, small_dir.path(), &find_args)?);
    }
    let (b50, s50) = (percentile(&mut big_ms, 0.5), percentile(&mut small_ms, 0.5));
    row(
        "`find --agent X --workflow '^deep-' --status completed --limit 20`, whole process, nothing changed",
        format!("{b50:.2} ms median at {n} runs"),
        format!("{s50:.2} ms median at {small_runs} runs"),
        format!("{:.2}×", b50 / s50),
        "flat in run count (≤ 1.5×)",
        Some(b50 / s50 <= 1.5),
    );
    // Doctor reads every manifest once, on both cores, keeping only
    // findings: its time per run and its memory should not grow.
    eprintln!("doctor …");
    let doctor = ["doctor", "--json"];
    // Warm, as docs/performance.md's doctor rows: each project's
    // first run reads its files into the page cache (the find rows
    // above read other files), and only the second is timed: timed
    // once and cold, the figure swings with whatever the cache held.
    peak_rss_and_time(bin, root, &doctor, true)?;
    let (big_mib, big_s) = peak_rss_and_time(bin, root, &doctor, true)?;
    peak_rss_and_time(bin, small_dir.path(), &doctor, true)?;
    let (small_mib, small_s) = peak_rss_and_time(bin, small_dir.path(), &doctor, true)?;
    let per_run = |s: f64, runs: usize| s * 1e6 / runs as f64;
    row(
        "`doctor`: time per run, peak memory",
        format!(
            "{big_s:.2} s ({:.0} µs/run), {big_mib:.1} MiB at {n} runs",
            per_run(big_s, n)
        ),
        format!(
            "{small_s:.2} s ({:.0} µs/run), {small_mib:.1} MiB at {small_runs} runs",
            per_run(small_s, small_runs)
        ),
        format!(
            "{:.2}× per run, {:.2}× memory",
            per_run(big_s, n) / per_run(small_s, small_runs),
            big_mib / small_mib
        ),
        "linear (≤ 1.5× per run), memory ≤ 128 MiB",
        Some(per_run(big_s, n) / per_run(small_s, small_runs) <= 1.5 && big_mib <= 128.0),
    );
    let rebuild = peak_rss_mib(bin, root, &["index", "rebuild", "--json"])?;
    row(
        "peak memory of `index rebuild`",
        format!("{rebuild:.1} MiB at {n} runs"),
        String::new(),
        String::new(),
        "",
        None,
    );
    transcripts::import_rows(bin, log_mib, row)
}
