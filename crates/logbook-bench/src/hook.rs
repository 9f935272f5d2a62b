//! The hook rows: the whole-process time of `logbook hook` in its usual
//! case (a Stop after one more exchange, a SessionStart after a
//! compaction) against `logbook --version`, the least a process of the
//! same binary costs.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context as _, Result, bail};
use serde_json::json;

use crate::measure::{percentile, run, timed};
use crate::report::RowSink;

/// Timed hooks of each kind, after one warm-up.
const REPS: usize = 41;

/// Exchanges already in the log when the timing starts: a session well
/// under way, so that an import that re-read the log would show.
const HISTORY: usize = 10_000;

const SESSION: &str = "5e551010-0000-4000-8000-000000000001";

/// A project of its own with a Claude Code session well under way, whose
/// hooks are timed as an agent runs them: by the main rows here and by
/// the release-against-release rows (`baseline`), one per binary.
pub(crate) struct HookProject {
    bin: PathBuf,
    root: PathBuf,
    log: PathBuf,
    turn: usize,
}

impl HookProject {
    /// A fresh project at `root` (emptied first: a reused --dir starts
    /// again) with a session, a milestone and a log of [`HISTORY`]
    /// exchanges already imported, its SessionStart hook run once.
    pub(crate) fn new(bin: &Path, root: &Path) -> Result<HookProject> {
        let _ = std::fs::remove_dir_all(root);
        std::fs::create_dir_all(root)?;
        run(bin, root, &["init"], None)?;
        run(
            bin,
            root,
            &["start", "--client", "BENCH", "--project", "HOOKS", "--yes"],
            None,
        )?;
        run(bin, root, &["milestone", "add", "measure the hooks"], None)?;
        let log = root
            .join("agent-home/.claude/projects/-bench")
            .join(format!("{SESSION}.jsonl"));
        std::fs::create_dir_all(log.parent().context("log folder")?)?;
        let mut project = HookProject {
            bin: bin.to_path_buf(),
            root: root.to_path_buf(),
            log,
            turn: 0,
        };
        project.append(HISTORY)?;
        run(
            bin,
            root,
            &["transcript", "import", &project.log_arg()],
            None,
        )?;
        run(
            bin,
            root,
            &["hook"],
            Some(&project.payload("SessionStart", r#","source":"startup""#)),
        )?;
        Ok(project)
    }

    /// The log's path as an argument.
    fn log_arg(&self) -> String {
        self.log.to_string_lossy().into_owned()
    }

    /// `n` more exchanges (a prompt and a reply each) at the log's end.
    fn append(&mut self, n: usize) -> Result<()> {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)?;
        let root = &self.root;
        for _ in 0..n {
            self.turn += 1;
            let turn = self.turn;
            let ts = format!(
                "2026-11-26T10:{:02}:{:02}.000Z",
                (turn / 60) % 60,
                turn % 60
            );
            let user = json!({"type":"user","sessionId":SESSION,"uuid":format!("u{turn}"),"timestamp":ts,"cwd":root,"message":{"role":"user","content":format!("step {turn}: change module {}", turn % 97)}});
            let reply = json!({"type":"assistant","sessionId":SESSION,"uuid":format!("a{turn}"),"timestamp":ts,"cwd":root,"requestId":format!("req_{turn}"),"message":{"id":format!("msg_{turn}"),"role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":format!("Changed module {}.", turn % 97)}],"usage":{"input_tokens":12,"cache_read_input_tokens":40000,"output_tokens":180}}});
            writeln!(f, "{user}\n{reply}")?;
        }
        Ok(())
    }

    /// The JSON a hook of `event` reads on stdin.
    fn payload(&self, event: &str, extra: &str) -> String {
        format!(
            r#"{{"session_id":"{SESSION}","transcript_path":{},"cwd":{},"hook_event_name":"{event}"{extra}}}"#,
            json!(self.log),
            json!(self.root)
        )
    }

    /// One more exchange, then the Stop hook that imports it: its whole
    /// process in ms. A Stop queues its import for the detached worker it
    /// starts; the worker is waited for, untimed, so the next sample does
    /// not share the machine with it.
    pub(crate) fn stop_ms(&mut self) -> Result<f64> {
        self.append(1)?;
        let stop = self.payload("Stop", r#","stop_hook_active":false"#);
        let ms = timed(&self.bin, &self.root, &["hook"], Some(&stop))?;
        self.drained()?;
        Ok(ms)
    }

    /// One more exchange, then `transcript import` of the log: what the
    /// Stop's worker does, as a whole process, in ms.
    fn import_ms(&mut self) -> Result<f64> {
        self.append(1)?;
        timed(
            &self.bin,
            &self.root,
            &["transcript", "import", &self.log_arg()],
            None,
        )
    }

    /// Waits until the hooks' queue is empty: the worker did every job.
    fn drained(&self) -> Result<()> {
        let queue = self.root.join(".logbook/hooks/queue");
        let start = Instant::now();
        while std::fs::read_dir(&queue).is_ok_and(|mut d| d.next().is_some()) {
            if start.elapsed().as_secs() > 120 {
                bail!(
                    "the hook's worker left {} unfinished for 2 minutes",
                    queue.display()
                );
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        Ok(())
    }

    /// The SessionStart hook after a compaction (it answers with the
    /// resume context): its whole process in ms.
    pub(crate) fn compact_ms(&self) -> Result<f64> {
        let compact = self.payload("SessionStart", r#","source":"compact""#);
        timed(&self.bin, &self.root, &["hook"], Some(&compact))
    }

    /// `logbook --version` in this project: the least a process costs.
    fn version_ms(&self) -> Result<f64> {
        timed(&self.bin, &self.root, &["--version"], None)
    }
}

/// Times `logbook hook` in a fresh project of its own under `dir`.
pub(crate) fn rows(bin: &Path, dir: &Path, row: RowSink<'_>) -> Result<()> {
    eprintln!("hook whole-process times …");
    let mut project = HookProject::new(bin, &dir.join("hook-bench"))?;
    // The first import of the history is a hook's rare case (left to a
    // worker when large): timed as the baseline of an import that reads
    // the whole log.
    let log_arg = project.log_arg();
    let mut wholes = vec![];
    for i in 0..3 {
        let fresh = dir.join(format!("hook-bench-whole-{i}"));
        let _ = std::fs::remove_dir_all(&fresh);
        std::fs::create_dir_all(&fresh)?;
        run(bin, &fresh, &["init"], None)?;
        wholes.push(timed(
            bin,
            &fresh,
            &["transcript", "import", &log_arg],
            None,
        )?);
        let _ = std::fs::remove_dir_all(&fresh);
    }
    let mut stops = vec![];
    let mut starts = vec![];
    let mut versions = vec![];
    let mut imports = vec![];
    for i in 0..=REPS {
        let s = project.stop_ms()?;
        let c = project.compact_ms()?;
        let v = project.version_ms()?;
        let m = project.import_ms()?;
        if i > 0 {
            stops.push(s);
            starts.push(c);
            versions.push(v);
            imports.push(m);
        }
    }
    let m50 = percentile(&mut imports, 0.5);
    let v50 = percentile(&mut versions, 0.5);
    let s50 = percentile(&mut stops, 0.5);
    let c50 = percentile(&mut starts, 0.5);
    let s99 = percentile(&mut stops, 0.99);
    row(
        "`logbook hook` Stop after one more exchange (import of the new lines), whole process",
        format!("{s50:.2} ms median, {s99:.2} ms p99 of {REPS}, log of {HISTORY} exchanges"),
        format!("{v50:.2} ms median `logbook --version`"),
        format!("{:.2}×", s50 / v50),
        "under 10× `--version`",
        Some(s50 < 10.0 * v50),
    );
    let w50 = percentile(&mut wholes, 0.5);
    let log_mib = std::fs::metadata(&project.log)?.len() as f64 / (1 << 20) as f64;
    row(
        "Import of one more exchange (incremental: what the Stop's worker does), against importing the whole log",
        format!("{m50:.2} ms median (whole `transcript import` process), log of {log_mib:.1} MiB"),
        format!("{w50:.2} ms median `transcript import` of the whole log"),
        format!("{:.3}×", m50 / w50),
        "under 0.1× the whole import",
        Some(m50 < 0.1 * w50),
    );
    row(
        "`logbook hook` SessionStart after a compaction (answers with the resume context), whole process",
        format!("{c50:.2} ms median of {REPS}"),
        format!("{v50:.2} ms median `logbook --version`"),
        format!("{:.2}×", c50 / v50),
        "under 10× `--version`",
        Some(c50 < 10.0 * v50),
    );
    Ok(())
}
