//! How things are timed: medians and percentiles of repeated timings, and
//! the real `logbook` binary run as a process for its wall time and peak
//! memory.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};

/// A duration in milliseconds, as the rows give them.
pub(crate) fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The `p` quantile (0–1) of `xs`, which it sorts; NaN when empty.
pub(crate) fn percentile(xs: &mut [f64], p: f64) -> f64 {
    xs.sort_by(|a, b| a.total_cmp(b));
    if xs.is_empty() {
        return f64::NAN;
    }
    let i = ((xs.len() as f64 - 1.0) * p).round() as usize;
    xs[i.min(xs.len() - 1)]
}

/// How long `f` took, with what it returned.
pub(crate) fn time<T>(f: impl FnOnce() -> Result<T>) -> Result<(Duration, T)> {
    let t = Instant::now();
    let v = f()?;
    Ok((t.elapsed(), v))
}

/// Runs the real `logbook` binary and returns its peak resident memory in
/// MiB (see [`peak_rss_and_time`]).
pub(crate) fn peak_rss_mib(bin: &Path, root: &Path, args: &[&str]) -> Result<f64> {
    Ok(peak_rss_and_time(bin, root, args, false)?.0)
}

/// Peak memory (MiB, see [`wait_peak`]) and wall time (s) of one run of
/// the real binary; `findings_ok` accepts exit status 1 (`doctor` with
/// problems found).
pub(crate) fn peak_rss_and_time(
    bin: &Path,
    root: &Path,
    args: &[&str],
    findings_ok: bool,
) -> Result<(f64, f64)> {
    let started = Instant::now();
    let child = Command::new(bin)
        .args(args)
        .arg("--root")
        .arg(root)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("running {}", bin.display()))?;
    let (status, peak) = wait_peak(child)?;
    let took = started.elapsed();
    if !(status.success() || findings_ok && status.code() == Some(1)) {
        bail!("{} {:?} failed: {status}", bin.display(), args);
    }
    Ok((peak as f64 / 1_048_576.0, took.as_secs_f64()))
}

/// Waits for `child` and returns its exit status with its peak resident
/// memory in bytes.
///
/// On Linux, VmHWM polled from /proc while it runs (the high-water mark
/// only grows, so the last reading before exit is the peak up to a poll's
/// time). Not `wait4` there: its figure also holds the high-water mark of
/// the address space the child's exec replaced, which for a child spawned
/// with `vfork` (as `Command` does) is this whole benchmark's.
///
/// Elsewhere (macOS, no /proc), `wait4`'s figure for this one child, whose
/// spawn starts a task of its own; it also covers any process the command
/// waited for (`git`; the full-text builder only when the command outlives
/// it).
pub(crate) fn wait_peak(mut child: Child) -> Result<(ExitStatus, u64)> {
    if !cfg!(target_os = "linux") {
        use wait4::Wait4 as _;
        let used = child.wait4().context("waiting for logbook")?;
        return Ok((used.status, used.rusage.maxrss));
    }
    let mut peak = 0u64;
    loop {
        peak = peak.max(vm_hwm(child.id()).unwrap_or(0));
        if let Some(status) = child.try_wait()? {
            return Ok((status, peak));
        }
        std::thread::sleep(Duration::from_micros(500));
    }
}

/// A running process's VmHWM in bytes, from /proc; `None` where there is
/// no /proc (macOS) or the process is gone.
pub(crate) fn vm_hwm(pid: u32) -> Option<u64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kib: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    Some(kib * 1024)
}

/// Runs of the comparison project for the rows that must not grow with
/// the number of runs (fewer when the benchmark's own project is smaller).
pub(crate) const SMALL_RUNS: usize = 10_000;

/// Timed runs of the `find` process per project, after one warm-up each.
pub(crate) const PROCESS_REPS: usize = 21;

/// Runs the real `logbook` binary once and returns its wall time in ms,
/// from spawn to exit.
pub(crate) fn process_ms(bin: &Path, root: &Path, args: &[&str]) -> Result<f64> {
    let t = Instant::now();
    let status = Command::new(bin)
        .args(args)
        .arg("--root")
        .arg(root)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .with_context(|| format!("running {}", bin.display()))?;
    let d = t.elapsed();
    if !status.success() {
        bail!("{} {:?} failed: {status}", bin.display(), args);
    }
    Ok(ms(d))
}

/// The `logbook` binary to run: the one given, else the one beside this one.
pub(crate) fn find_bin(explicit: Option<PathBuf>) -> Option<PathBuf> {
    explicit.or_else(|| {
        let me = std::env::current_exe().ok()?;
        let candidate = me.parent()?.join("logbook");
        candidate.is_file().then_some(candidate)
    })
}

/// The whole-process time of `bin ARGS` in `root` with `stdin` (ms), as an
/// agent runs its hook or status line.
pub(crate) fn timed(bin: &Path, root: &Path, args: &[&str], stdin: Option<&str>) -> Result<f64> {
    let t = Instant::now();
    run(bin, root, args, stdin)?;
    Ok(ms(t.elapsed()))
}

/// Runs `bin ARGS` in `root` with `stdin`, its output dropped; fails
/// unless it succeeds.
pub(crate) fn run(bin: &Path, root: &Path, args: &[&str], stdin: Option<&str>) -> Result<()> {
    let mut child = Command::new(bin)
        .args(args)
        .current_dir(root)
        .env_remove("LOGBOOK_ROOT")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("running {}", bin.display()))?;
    if let (Some(text), Some(mut w)) = (stdin, child.stdin.take()) {
        w.write_all(text.as_bytes())?;
    }
    let status = child.wait()?;
    if !status.success() {
        bail!("{} {args:?} failed: {status}", bin.display());
    }
    Ok(())
}
