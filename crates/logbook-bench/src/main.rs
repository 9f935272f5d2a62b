//! `logbook-bench`: builds a synthetic project the way another tool would
//! (manifests of 1–3 KB with 1–5 output files, 20 agents, 50 workflows,
//! lineage chains, written straight to disk) and prints one markdown table.
//! Every figure is measured in the same run, each against a baseline from
//! the same run on the same files: the seed's read-every-manifest scan, a
//! bare write+fsync+rename of the same bytes.
//!
//! ```text
//! cargo build --release -p logbook-cli          # for the peak-memory rows
//! cargo run --release -p logbook-bench -- --runs 100000
//! ```

#![allow(clippy::print_stdout, clippy::print_stderr)]

mod scale;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail};
use logbook::Project;
use logbook::index::Index;
use logbook::model::query::RunQuery;
use logbook::model::run::{OutputType, RunStatus};
use logbook::ops::run;
use serde_json::json;

mod pg;

struct Args {
    /// Also measure the team catalog on a PostgreSQL started for the run.
    team: bool,
    runs: usize,
    log_mib: u64,
    dir: Option<PathBuf>,
    logbook: Option<PathBuf>,
    /// Row groups to measure; all when empty.
    only: Vec<String>,
}

/// The row groups `--only` can name.
const GROUPS: &[&str] = &[
    "rebuild", "find", "fts", "sync", "register", "memory", "web", "scale",
];

impl Args {
    fn wants(&self, group: &str) -> bool {
        self.only.is_empty() || self.only.iter().any(|g| g == group)
    }
}

/// Where the scale rows keep their baseline project when `--dir` is given.
fn baseline_dir(dir: &Path) -> PathBuf {
    let mut name = dir.as_os_str().to_owned();
    name.push("-baseline");
    PathBuf::from(name)
}

fn parse_args() -> Result<Args> {
    let mut args = Args {
        team: false,
        runs: 100_000,
        log_mib: 200,
        dir: None,
        logbook: None,
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
                    "logbook-bench [--runs N] [--dir DIR] [--logbook PATH] [--log-mib N] [--only GROUP,…] [--team]\n\
                     Builds a synthetic project of N runs (default 100000) in DIR (default: a temp dir;\n\
                     a DIR that already holds N runs is reused, with its baseline project in DIR-baseline)\n\
                     and prints one markdown table. --only measures some row groups: rebuild, find, fts,\n\
                     sync, register, memory, web, scale (issue 15's targets at N and at a baseline size). The peak-memory rows run the `logbook` binary found\n\
                     beside this one (cargo build --release -p logbook-cli) or at --logbook PATH;\n\
                     the transcript import rows import a generated Claude Code log of N MiB (default 200).\n\
                     --team adds the team catalog rows (push, find --team) on a PostgreSQL it starts."
                );
                std::process::exit(0);
            }
            other => bail!("unknown argument {other:?}; see --help"),
        }
    }
    if args.runs < 100 {
        bail!("--runs must be at least 100");
    }
    Ok(args)
}

/// xorshift64*: deterministic synthetic data without a crate.
#[derive(Clone)]
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn uuid(&mut self) -> String {
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&self.next().to_le_bytes());
        bytes[8..].copy_from_slice(&self.next().to_le_bytes());
        uuid::Builder::from_random_bytes(bytes)
            .into_uuid()
            .to_string()
    }
}

const WORDS: &[&str] = &[
    "laptop",
    "procurement",
    "onboarding",
    "requirements",
    "budget",
    "vendor",
    "security",
    "audit",
    "network",
    "migration",
    "database",
    "latency",
    "invoice",
    "contract",
    "roadmap",
    "backlog",
    "sprint",
    "incident",
    "postmortem",
    "compliance",
    "dashboard",
    "metrics",
    "pipeline",
    "release",
    "customer",
    "feedback",
    "interview",
    "persona",
    "wireframe",
    "prototype",
    "estimate",
    "risk",
    "dependency",
    "architecture",
    "kubernetes",
    "terraform",
    "observability",
    "alerting",
    "capacity",
    "forecast",
    "quokka",
    "zephyr",
    "tundra",
    "meridian",
    "lattice",
    "harbor",
    "glacier",
    "ember",
];

/// Words in the synthetic text: the 48 domain words above are the most
/// frequent ranks, then generated syllable words up to this many in all.
const VOCAB: usize = 6000;
/// Zipf exponent: word frequency ∝ 1 / rank^s. Natural-language text is
/// close to 1, so a few words are in nearly every run and most words in
/// few, which is what decides how many runs a full-text query matches.
const ZIPF_S: f64 = 1.0;

/// The synthetic vocabulary with its Zipf distribution. With a uniform
/// 48-word vocabulary any two-word query matched ~99.8 % of runs, which is
/// not what searches over real manifests look like.
struct Vocab {
    words: Vec<String>,
    /// Cumulative weights, for sampling a rank by binary search.
    cum: Vec<f64>,
}

impl Vocab {
    fn new() -> Vocab {
        const ONSETS: &[&str] = &[
            "b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w",
            "z", "br", "ch", "cl", "dr", "fl", "gr", "pl", "pr", "sh", "st", "th", "tr",
        ];
        const VOWELS: &[&str] = &["a", "e", "i", "o", "u", "ai", "ea", "io", "ou"];
        const CODAS: &[&str] = &["", "", "", "n", "r", "s", "l", "m", "t", "x", "nd", "st"];
        let mut words: Vec<String> = WORDS.iter().map(|w| w.to_string()).collect();
        let mut taken: std::collections::HashSet<String> = words.iter().cloned().collect();
        let mut rng = Rng(0x005E_ED0F_C0DE);
        while words.len() < VOCAB {
            // Mostly two syllables: words of about eight letters, like the
            // domain words, so manifests stay 1–3 KB.
            let syllables = [1, 2, 2, 3][rng.below(4)];
            let mut w = String::new();
            for _ in 0..syllables {
                w.push_str(ONSETS[rng.below(ONSETS.len())]);
                w.push_str(VOWELS[rng.below(VOWELS.len())]);
                w.push_str(CODAS[rng.below(CODAS.len())]);
            }
            if taken.insert(w.clone()) {
                words.push(w);
            }
        }
        let mut total = 0.0;
        let cum = (0..words.len())
            .map(|r| {
                total += 1.0 / ((r + 1) as f64).powf(ZIPF_S);
                total
            })
            .collect();
        Vocab { words, cum }
    }

    /// A word drawn by its Zipf frequency.
    fn word(&self, rng: &mut Rng) -> &str {
        let total = self.cum.last().copied().unwrap_or(1.0);
        let u = (rng.next() >> 11) as f64 / (1u64 << 53) as f64 * total;
        let r = self
            .cum
            .partition_point(|&c| c <= u)
            .min(self.words.len() - 1);
        &self.words[r]
    }

    fn sentence(&self, rng: &mut Rng, min: usize, spread: usize) -> String {
        let n = min + if spread > 0 { rng.below(spread) } else { 0 };
        (0..n).map(|_| self.word(rng)).collect::<Vec<_>>().join(" ")
    }
}

fn agents() -> Vec<String> {
    (0..20).map(|i| format!("agent{i:02}")).collect()
}

fn workflows() -> Vec<String> {
    let kinds = ["deep-dive", "intake", "build", "review", "triage"];
    (0..50)
        .map(|i| format!("{}-{:02}", kinds[i % kinds.len()], i))
        .collect()
}

/// Writes `n` runs under `dir` from `threads` threads, like another tool
/// would (plain writes, no locks, no index). Returns the ids in start order.
fn synthesize(dir: &Path, n: usize, seed: u64) -> Result<Vec<String>> {
    std::fs::create_dir_all(dir)?;
    let mut rng = Rng(seed | 1);
    let ids: Vec<String> = (0..n).map(|_| rng.uuid()).collect();
    let agents = agents();
    let workflows = workflows();
    let vocab = Vocab::new();
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .max(2);
    let base: i64 = 1_735_689_600; // 2025-01-01
    std::thread::scope(|s| -> Result<()> {
        let mut handles = vec![];
        for t in 0..threads {
            let ids = &ids;
            let agents = &agents;
            let workflows = &workflows;
            let vocab = &vocab;
            handles.push(s.spawn(move || -> Result<()> {
                for i in (t..ids.len()).step_by(threads) {
                    let mut rng = Rng((seed ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)) | 1);
                    let folder = dir.join(&ids[i]);
                    std::fs::create_dir_all(&folder)?;
                    let started = base + (i as i64) * 60 + rng.below(50) as i64;
                    let status = match rng.below(10) {
                        0..=6 => "completed",
                        7 => "failed",
                        8 => "cancelled",
                        _ => "running",
                    };
                    let n_out = 1 + rng.below(5);
                    let mut outputs = vec![];
                    for o in 0..n_out {
                        let file = format!("output-{o}.md");
                        let text = format!("# {}\n\n{}\n", vocab.sentence(&mut rng, 4, 0), vocab.sentence(&mut rng, 40, 80));
                        std::fs::write(folder.join(&file), text)?;
                        outputs.push(json!({
                            "file": file,
                            "type": (["document", "data", "report", "artifact"][rng.below(4)]),
                            "description": vocab.sentence(&mut rng, 6, 10),
                            "created_at": ts(started + 30 + o as i64),
                        }));
                    }
                    let mut m = json!({
                        "version": "1.0.0",
                        "session_id": ids[i],
                        "agent": {"name": agents[rng.below(agents.len())], "title": format!("The {} Agent", vocab.sentence(&mut rng, 1, 0)), "bundle": "bmad/bmm"},
                        "workflow": {"name": workflows[rng.below(workflows.len())], "description": vocab.sentence(&mut rng, 10, 20)},
                        "execution": {"started_at": ts(started), "status": status, "user": (["bryan", "dana", "lee"][rng.below(3)])},
                        "outputs": outputs,
                        "inputs": {"category": vocab.sentence(&mut rng, 2, 0), "request_type": vocab.sentence(&mut rng, 1, 0), "notes": vocab.sentence(&mut rng, 10, 30)},
                        "metadata": {"priority": rng.below(5), "summary": vocab.sentence(&mut rng, 10, 40)},
                        "tags": [WORDS[rng.below(8)]],
                    });
                    if status != "running" {
                        m["execution"]["completed_at"] = json!(ts(started + 55));
                    }
                    // Lineage chains: most runs build on a recent earlier one.
                    if i > 0 && rng.below(3) > 0 {
                        let back = 1 + rng.below(20.min(i));
                        m["related_sessions"] = json!([ids[i - back]]);
                    }
                    let text = serde_json::to_string_pretty(&m)?;
                    std::fs::write(folder.join("manifest.json"), text)?;
                }
                Ok(())
            }));
        }
        for h in handles {
            h.join()
                .map_err(|_| anyhow::anyhow!("writer thread panicked"))??;
        }
        Ok(())
    })?;
    Ok(ids)
}

fn ts(secs: i64) -> String {
    logbook::clock::format(
        jiff::Timestamp::from_second(secs).unwrap_or(jiff::Timestamp::UNIX_EPOCH),
    )
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn percentile(xs: &mut [f64], p: f64) -> f64 {
    xs.sort_by(|a, b| a.total_cmp(b));
    if xs.is_empty() {
        return f64::NAN;
    }
    let i = ((xs.len() as f64 - 1.0) * p).round() as usize;
    xs[i.min(xs.len() - 1)]
}

fn time<T>(f: impl FnOnce() -> Result<T>) -> Result<(Duration, T)> {
    let t = Instant::now();
    let v = f()?;
    Ok((t.elapsed(), v))
}

/// Runs the real `logbook` binary and returns its peak resident memory in
/// MiB (VmHWM, polled from /proc while it runs; the high-water mark only
/// grows, so the last reading before exit is the peak up to a few ms).
fn peak_rss_mib(bin: &Path, root: &Path, args: &[&str]) -> Result<f64> {
    Ok(peak_rss_and_time(bin, root, args, false)?.0)
}

/// Peak memory (MiB) and wall time (s) of one run of the real binary;
/// `findings_ok` accepts exit status 1 (`doctor` with problems found).
fn peak_rss_and_time(
    bin: &Path,
    root: &Path,
    args: &[&str],
    findings_ok: bool,
) -> Result<(f64, f64)> {
    let started = Instant::now();
    let mut child = Command::new(bin)
        .args(args)
        .arg("--root")
        .arg(root)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("running {}", bin.display()))?;
    let status_path = format!("/proc/{}/status", child.id());
    let mut peak_kb = 0u64;
    loop {
        if let Ok(text) = std::fs::read_to_string(&status_path)
            && let Some(line) = text.lines().find(|l| l.starts_with("VmHWM:"))
            && let Some(kb) = line
                .split_whitespace()
                .nth(1)
                .and_then(|v| v.parse::<u64>().ok())
        {
            peak_kb = peak_kb.max(kb);
        }
        if let Some(status) = child.try_wait()? {
            if !(status.success() || findings_ok && status.code() == Some(1)) {
                bail!("{} {:?} failed: {status}", bin.display(), args);
            }
            break;
        }
        std::thread::sleep(Duration::from_micros(500));
    }
    Ok((peak_kb as f64 / 1024.0, started.elapsed().as_secs_f64()))
}

/// Runs of the comparison project for the rows that must not grow with
/// the number of runs (fewer when the benchmark's own project is smaller).
const SMALL_RUNS: usize = 10_000;

/// Timed runs of the `find` process per project, after one warm-up each.
const PROCESS_REPS: usize = 21;

/// Runs the real `logbook` binary once and returns its wall time in ms,
/// from spawn to exit.
fn process_ms(bin: &Path, root: &Path, args: &[&str]) -> Result<f64> {
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

fn find_bin(explicit: Option<PathBuf>) -> Option<PathBuf> {
    explicit.or_else(|| {
        let me = std::env::current_exe().ok()?;
        let candidate = me.parent()?.join("logbook");
        candidate.is_file().then_some(candidate)
    })
}

struct Row {
    measure: String,
    result: String,
    baseline: String,
    ratio: String,
    target: String,
    met: Option<bool>,
}

/// The allocator the `logbook` binary runs with, so that what runs in this
/// process is measured as it runs there.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> Result<()> {
    let args = parse_args()?;
    let n = args.runs;
    let tmp;
    let root = match &args.dir {
        Some(d) => d.clone(),
        None => {
            tmp = tempfile::Builder::new()
                .prefix("logbook-bench-")
                .tempdir()?;
            tmp.path().to_path_buf()
        }
    };
    std::fs::create_dir_all(&root)?;
    let project = Project::open(&root)?;
    let outputs_dir = project.config.agent_outputs_folder.clone();
    let mut rows: Vec<Row> = vec![];
    let mut row = |measure: &str,
                   result: String,
                   baseline: String,
                   ratio: String,
                   target: &str,
                   met: Option<bool>| {
        rows.push(Row {
            measure: measure.into(),
            result,
            baseline,
            ratio,
            target: target.into(),
            met,
        })
    };

    let reused = std::fs::read_dir(&outputs_dir).map_or(0, |d| d.count()) >= n
        && project.index_path().is_file();
    let gen_time = if reused {
        Duration::ZERO
    } else {
        eprintln!("synthesizing {n} runs in {} …", root.display());
        let (gen_time, _ids) = time(|| synthesize(&outputs_dir, n, 42))?;
        eprintln!("  {:.1}s", gen_time.as_secs_f64());
        gen_time
    };

    if reused {
        eprintln!("reusing the {n} runs and the index in {}", root.display());
    } else if !args.wants("rebuild") {
        Index::rebuild(&project, None)?;
    } else {
        // Rebuild: everything read and parsed, in parallel.
        eprintln!("index rebuild …");
        let (rebuild_time, report) = time(|| Ok(Index::rebuild(&project, None)?))?;
        let per_s = report.indexed as f64 / rebuild_time.as_secs_f64();
        row(
            "`index rebuild`, new project",
            format!(
                "{per_s:.0} manifests/s ({:.1} s)",
                rebuild_time.as_secs_f64()
            ),
            String::new(),
            String::new(),
            "≥ 20,000 manifests/s",
            Some(per_s >= 20_000.0),
        );

        // The same again over the index just built: what a user's
        // `logbook index rebuild` of an existing project costs (the old index
        // is emptied in the same transaction).
        eprintln!("index rebuild over an existing index …");
        let (again_time, again) = time(|| Ok(Index::rebuild(&project, None)?))?;
        let again_per_s = again.indexed as f64 / again_time.as_secs_f64();
        row(
            "`index rebuild`, replacing an existing index",
            format!(
                "{again_per_s:.0} manifests/s ({:.1} s)",
                again_time.as_secs_f64()
            ),
            String::new(),
            String::new(),
            "≥ 20,000 manifests/s",
            Some(again_per_s >= 20_000.0),
        );
    }
    // The team rows compare `find --team` with this local query.
    let mut local_find_ms = f64::NAN;
    if args.wants("find") || args.team {
        // find through the index vs the seed's scan.
        eprintln!("find …");
        let query = RunQuery {
            agent: Some("agent03".into()),
            workflow: Some("^deep-".into()),
            status: Some("completed".into()),
            limit: Some(20),
            ..RunQuery::default()
        };
        let mut idx_ms = vec![];
        let mut expected = vec![];
        for _ in 0..50 {
            let (d, hits) = time(|| Ok(run::find(&project, &query)?.0))?;
            idx_ms.push(ms(d));
            expected = hits.into_iter().map(|h| h.run.id).collect::<Vec<_>>();
        }
        let mut scan_ms = vec![];
        for _ in 0..3 {
            let (d, runs) = time(|| Ok(run::find_scan(&project, &query)?))?;
            scan_ms.push(ms(d));
            let got: Vec<_> = runs.into_iter().map(|r| r.id).collect();
            if got != expected {
                bail!("index and scan disagree on find: {got:?} vs {expected:?}");
            }
        }
        let (fi, fs) = (percentile(&mut idx_ms, 0.5), percentile(&mut scan_ms, 0.5));
        local_find_ms = fi;
        row(
            "`find --agent X --workflow '^deep-' --status completed --limit 20`",
            format!("{fi:.2} ms median"),
            format!("{fs:.0} ms (scan)"),
            format!("{:.0}×", fs / fi),
            "≥ 100× and < 5 ms",
            Some(fs / fi >= 100.0 && fi < 5.0),
        );

        eprintln!("latest-output …");
        let mut idx_ms = vec![];
        let mut expected = None;
        for _ in 0..50 {
            let (d, found) = time(|| {
                Ok(run::latest_output(
                    &project,
                    "agent07",
                    Some("^review-"),
                    Some("report"),
                )?)
            })?;
            idx_ms.push(ms(d));
            expected = Some(found.path);
        }
        let mut scan_ms = vec![];
        for _ in 0..3 {
            let (d, found) =
                time(|| latest_output_scan(&project, "agent07", "^review-", "report"))?;
            scan_ms.push(ms(d));
            if Some(&found.2) != expected.as_ref() {
                bail!("index and scan disagree on latest-output");
            }
        }
        let (li, ls) = (percentile(&mut idx_ms, 0.5), percentile(&mut scan_ms, 0.5));
        row(
            "`latest-output --agent X --workflow '^review-' --type report`",
            format!("{li:.2} ms median"),
            format!("{ls:.0} ms (scan)"),
            format!("{:.0}×", ls / li),
            "≥ 100×",
            Some(ls / li >= 100.0),
        );
    }
    if args.wants("fts") {
        eprintln!("full-text …");
        // Two kinds of search, as people type them: one common word (among the
        // ten most frequent, so it is in most runs and bm25 must rank nearly
        // all of them), and two rarer words (ranks 200–6000, each in a few
        // percent of runs or less) that must both occur.
        let vocab = Vocab::new();
        let index = Index::open(&project)?;
        let mut rng = Rng(7);
        let mut fts = |words: &mut dyn FnMut(&mut Rng) -> String| -> Result<(f64, f64, f64)> {
            let mut lat = vec![];
            let mut hits = 0usize;
            for _ in 0..200 {
                let q = RunQuery {
                    text: Some(words(&mut rng)),
                    limit: Some(20),
                    ..RunQuery::default()
                };
                let (d, found) = time(|| Ok(index.find_runs(&q)?))?;
                hits += found.len();
                lat.push(ms(d));
            }
            Ok((
                percentile(&mut lat, 0.5),
                percentile(&mut lat, 0.99),
                hits as f64 / 200.0,
            ))
        };
        let (c50, c99, chits) = fts(&mut |rng| vocab.words[rng.below(10)].clone())?;
        let rare = |rng: &mut Rng| vocab.words[200 + rng.below(VOCAB - 200)].clone();
        let (r50, r99, rhits) = fts(&mut |rng| format!("{} {}", rare(rng), rare(rng)))?;
        drop(index);
        row(
            "`find --text 'common-word' --limit 20`",
            format!("{c50:.2} ms median, {c99:.2} ms p99 ({chits:.1} hits per page)"),
            String::new(),
            String::new(),
            "",
            None,
        );
        row(
            "`find --text 'two rarer-words' --limit 20`",
            format!("{r50:.2} ms median, {r99:.2} ms p99 ({rhits:.1} hits per page)"),
            String::new(),
            String::new(),
            "",
            None,
        );
    }
    if args.wants("sync") {
        eprintln!("sync …");
        let (sync0, r0) = time(|| Ok(Index::open(&project)?.sync()?))?;
        if r0.indexed != 0 {
            bail!("sync after rebuild re-read {} files", r0.indexed);
        }
        row(
            "`index sync`, nothing changed",
            format!("{:.2} s", sync0.as_secs_f64()),
            String::new(),
            String::new(),
            "< 1 s",
            Some(sync0.as_secs_f64() < 1.0),
        );
        // 1 % changed behind logbook's back.
        let changed = (n / 100).max(1);
        let mut names: Vec<PathBuf> = std::fs::read_dir(&outputs_dir)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        names.sort();
        for folder in names
            .iter()
            .step_by((names.len() / changed).max(1))
            .take(changed)
        {
            let path = folder.join("manifest.json");
            let text = std::fs::read_to_string(&path)?;
            std::fs::write(
                &path,
                text.replace("\"running\"", "\"failed\"")
                    .replace("\"bryan\"", "\"brian\""),
            )?;
        }
        let (sync1, r1) = time(|| Ok(Index::open(&project)?.sync()?))?;
        row(
            "`index sync`, 1 % changed",
            format!(
                "{:.2} s ({} files re-read)",
                sync1.as_secs_f64(),
                r1.indexed
            ),
            String::new(),
            String::new(),
            "",
            None,
        );
    }
    if args.wants("register") {
        // Durable registration vs the physical floor.
        eprintln!("registration …");
        let started = run::start(
            &project,
            run::StartOptions {
                agent: "bench".into(),
                workflow: Some("registration".into()),
                ..run::StartOptions::default()
            },
        )?;
        let reps = 200;
        for i in 0..reps {
            std::fs::write(started.folder.join(format!("f{i}.md")), "x")?;
        }
        // The floor is measured turn about with the registrations, so both
        // see the same disk and cache state (measured in a block after
        // them, it ran 15 % faster than the same write did in between),
        // writing the manifest as the registration just left it, into the
        // same folder.
        let (mut reg_ms, mut floor_ms) = (vec![], vec![]);
        let register =
            |id: &str, folder: &Path, file: &str, description: &str| -> Result<(f64, f64)> {
                let (d, _) = time(|| {
                    Ok(run::register_output(
                        &project,
                        id,
                        file,
                        OutputType::Document,
                        description,
                    )?)
                })?;
                let bytes = std::fs::read(folder.join("manifest.json"))?;
                let floor_path = folder.join("floor.json");
                let (f, _) = time(|| Ok(logbook::store::write_atomic(&floor_path, &bytes)?))?;
                Ok((ms(d), ms(f)))
            };
        for i in 0..reps {
            let (d, f) = register(
                started.session_id.as_str(),
                &started.folder,
                &format!("f{}.md", i % 20),
                "a registered output",
            )?;
            reg_ms.push(d);
            floor_ms.push(f);
        }
        let (r50, r99) = (percentile(&mut reg_ms, 0.5), percentile(&mut reg_ms, 0.99));
        let (f50, f99) = (
            percentile(&mut floor_ms, 0.5),
            percentile(&mut floor_ms, 0.99),
        );
        row(
            "`run output` registration, durable (20 files registered in turn: after the first round, each again with the same type and description)",
            format!("{r50:.2} ms p50, {r99:.2} ms p99"),
            format!("{f50:.2} ms p50, {f99:.2} ms p99 (write+fsync+rename+fsync dir)"),
            format!("{:.2}× (p50)", r50 / f50),
            "≤ 1.5×",
            Some(r50 / f50 <= 1.5),
        );
        // The other case: each registration adds an output, so the run's
        // full text is made again from its manifest and every output file.
        let (mut new_ms, mut floor_ms) = (vec![], vec![]);
        for r in 0..reps / 5 {
            let started = run::start(
                &project,
                run::StartOptions {
                    agent: "bench".into(),
                    workflow: Some(format!("registration-{r}")),
                    ..run::StartOptions::default()
                },
            )?;
            for i in 0..5 {
                let file = format!("part-{i}.md");
                std::fs::write(started.folder.join(&file), format!("part {i} of run {r}\n"))?;
                let (d, f) = register(
                    started.session_id.as_str(),
                    &started.folder,
                    &file,
                    &format!("part {i}"),
                )?;
                new_ms.push(d);
                floor_ms.push(f);
            }
        }
        let (n50, n99) = (percentile(&mut new_ms, 0.5), percentile(&mut new_ms, 0.99));
        let f50 = percentile(&mut floor_ms, 0.5);
        row(
            "`run output` registration of a new output (full text made again), durable",
            format!(
                "{n50:.2} ms p50, {n99:.2} ms p99 ({} runs, 5 outputs each)",
                reps / 5
            ),
            format!("{f50:.2} ms p50 (write+fsync+rename+fsync dir)"),
            format!("{:.2}× (p50)", n50 / f50),
            "",
            None,
        );

        eprintln!("8 concurrent writers …");
        let per_writer = 50;
        let mut runs = vec![];
        for w in 0..8 {
            let s = run::start(
                &project,
                run::StartOptions {
                    agent: format!("writer{w}"),
                    workflow: Some("concurrency".into()),
                    ..run::StartOptions::default()
                },
            )?;
            for i in 0..per_writer {
                std::fs::write(s.folder.join(format!("o{i}.md")), "y")?;
            }
            runs.push(s.session_id);
        }
        let (wall, ()) = time(|| {
            std::thread::scope(|s| -> Result<()> {
                let handles: Vec<_> = runs
                    .iter()
                    .map(|id| {
                        let p = project.clone();
                        s.spawn(move || -> Result<()> {
                            for i in 0..per_writer {
                                run::register_output(
                                    &p,
                                    id.as_str(),
                                    &format!("o{i}.md"),
                                    OutputType::Data,
                                    "concurrent",
                                )?;
                            }
                            Ok(())
                        })
                    })
                    .collect();
                for h in handles {
                    h.join().map_err(|_| anyhow::anyhow!("writer panicked"))??;
                }
                Ok(())
            })
        })?;
        for id in &runs {
            let r = run::show(&project, id.as_str())?;
            if r.manifest.outputs.len() != per_writer {
                bail!(
                    "lost update: run {id} has {} outputs",
                    r.manifest.outputs.len()
                );
            }
            run::finish(&project, id.as_str(), RunStatus::Completed)?;
        }
        let total = (8 * per_writer) as f64;
        row(
            "8 concurrent writers on different runs",
            format!("{:.0} registrations/s", total / wall.as_secs_f64()),
            String::new(),
            String::new(),
            "",
            None,
        );
    }
    if args.wants("memory") {
        // Peak memory of the real binary.
        match find_bin(args.logbook.clone()) {
            Some(bin) => {
                eprintln!("peak memory ({}) …", bin.display());
                let find_args = [
                    "find",
                    "--agent",
                    "agent03",
                    "--workflow",
                    "^deep-",
                    "--status",
                    "completed",
                    "--limit",
                    "20",
                    "--json",
                ];
                // Steady state: the first listing after run folders were
                // created (the registration rows above started runs) compares
                // the folder names with the index once; that one-off cost is
                // not what a listing costs.
                peak_rss_mib(&bin, &root, &find_args)?;
                let big = peak_rss_mib(&bin, &root, &find_args)?;
                // The comparison project: large enough that the query fills its
                // page of 20 there too, so both sizes do the same work per hit.
                let small_dir = tempfile::Builder::new()
                    .prefix("logbook-bench-small-")
                    .tempdir()?;
                let small_project = Project::open(small_dir.path())?;
                let small_runs = SMALL_RUNS.min(n);
                synthesize(&small_project.config.agent_outputs_folder, small_runs, 43)?;
                Index::open(&small_project)?;
                peak_rss_mib(&bin, small_dir.path(), &find_args)?;
                let small = peak_rss_mib(&bin, small_dir.path(), &find_args)?;
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
                process_ms(&bin, &root, &find_args)?;
                process_ms(&bin, small_dir.path(), &find_args)?;
                for _ in 0..PROCESS_REPS {
                    big_ms.push(process_ms(&bin, &root, &find_args)?);
                    small_ms.push(process_ms(&bin, small_dir.path(), &find_args)?);
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
                // Warm, as README's doctor rows: each project's first run
                // reads its files into the page cache (the find rows above
                // read other files), and only the second is timed. Timed
                // once and cold, the same 100k project gave 3.6–23.7 s.
                peak_rss_and_time(&bin, &root, &doctor, true)?;
                let (big_mib, big_s) = peak_rss_and_time(&bin, &root, &doctor, true)?;
                peak_rss_and_time(&bin, small_dir.path(), &doctor, true)?;
                let (small_mib, small_s) =
                    peak_rss_and_time(&bin, small_dir.path(), &doctor, true)?;
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
                    Some(
                        per_run(big_s, n) / per_run(small_s, small_runs) <= 1.5 && big_mib <= 128.0,
                    ),
                );
                // An agent's view: a `find_runs` tool call to a running
                // `logbook mcp`, request written to response read, over stdio.
                eprintln!("MCP find_runs round trips …");
                let (mut calls, mut pings) = mcp_round_trips(&bin, &root, MCP_CALLS)?;
                let (c50, c99) = (percentile(&mut calls, 0.5), percentile(&mut calls, 0.99));
                let p50 = percentile(&mut pings, 0.5);
                row(
                    "MCP `find_runs` tool call (agent, workflow regex, status, limit 20), stdio round trip",
                    format!("{c50:.3} ms median, {c99:.3} ms p99 of {MCP_CALLS} at {n} runs"),
                    format!("{p50:.3} ms median `ping` round trip"),
                    format!("{:.2}×", c50 / p50),
                    "median under 1 ms",
                    Some(c50 < 1.0),
                );
                let rebuild = peak_rss_mib(&bin, &root, &["index", "rebuild", "--json"])?;
                row(
                    "peak memory of `index rebuild`",
                    format!("{rebuild:.1} MiB at {n} runs"),
                    String::new(),
                    String::new(),
                    "",
                    None,
                );
                transcript_import_rows(&bin, args.log_mib, &mut row)?;
            }
            None => eprintln!(
                "no `logbook` binary beside this one: skipping the memory rows (cargo build --release -p logbook-cli)"
            ),
        }
    }
    if args.wants("web") {
        // The web viewer: a page of the run list and of `/api/runs`, served by
        // `logbook serve`'s server on a loopback port, against a small project
        // served the same way (the first request of each warms the index).
        eprintln!("web viewer …");
        let small_web = tempfile::Builder::new()
            .prefix("logbook-bench-web-")
            .tempdir()?;
        let small_web_project = Project::open(small_web.path())?;
        let small_web_runs = SMALL_RUNS.min(n);
        synthesize(
            &small_web_project.config.agent_outputs_folder,
            small_web_runs,
            44,
        )?;
        Index::rebuild(&small_web_project, None)?;
        let big_fx = web_fixtures(&project)?;
        let small_fx = web_fixtures(&small_web_project)?;
        let big_addr = serve(project.clone())?;
        let small_addr = serve(small_web_project)?;
        for (measure, big_t, small_t) in [
            ("run list page `GET /`, 50 runs grouped by agent", "/"),
            ("`GET /api/runs` (50 runs as `find --json`)", "/api/runs"),
            (
                "run list page filtered by agent and status",
                "/?agent=agent03&status=completed",
            ),
            (
                "run list page with a full-text search of two words",
                "/?q=quokka+harbor",
            ),
            (
                "run list page with a full-text search of one common word",
                "/?q=laptop",
            ),
        ]
        .into_iter()
        .map(|(m, t)| (m, t.to_string(), t.to_string()))
        .chain(
            big_fx
                .pages()
                .into_iter()
                .zip(small_fx.pages())
                .map(|((m, big), (_, small))| (m, big, small)),
        ) {
            let (mut big_ms, mut small_ms) = (vec![], vec![]);
            http_ms(big_addr, &big_t)?;
            http_ms(small_addr, &small_t)?;
            for _ in 0..PROCESS_REPS {
                big_ms.push(http_ms(big_addr, &big_t)?);
                small_ms.push(http_ms(small_addr, &small_t)?);
            }
            let (b50, s50) = (percentile(&mut big_ms, 0.5), percentile(&mut small_ms, 0.5));
            row(
                measure,
                format!("{b50:.2} ms median at {n} runs"),
                format!("{s50:.2} ms median at {small_web_runs} runs"),
                format!("{:.2}×", b50 / s50),
                "< 50 ms",
                Some(b50 < 50.0),
            );
        }
    }

    if args.wants("scale") {
        match find_bin(args.logbook.clone()) {
            Some(bin) => scale::rows(
                &bin,
                &project,
                n,
                args.dir.as_ref().map(|d| baseline_dir(d)).as_deref(),
                &mut row,
            )?,
            None => eprintln!(
                "no `logbook` binary beside this one: skipping the scale rows (cargo build --release -p logbook-cli)"
            ),
        }
    }

    if args.team {
        match find_bin(args.logbook.clone()) {
            Some(bin) => team_rows(&bin, &root, n, local_find_ms, &mut row)?,
            None => {
                bail!("--team needs the `logbook` binary (cargo build --release -p logbook-cli)")
            }
        }
    }

    let status = Index::open(&project)?.status()?;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "\n{} runs, {} outputs, {} lineage edges; index {:.0} MiB; {} cores; synthesized in {:.1} s\n",
        n,
        status.outputs,
        status.edges,
        status.size_bytes as f64 / 1048576.0,
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        gen_time.as_secs_f64()
    )?;
    writeln!(
        out,
        "| measure | result | baseline (same run) | ratio | target | met |"
    )?;
    writeln!(out, "|---|---|---|---|---|---|")?;
    for r in &rows {
        let met = match r.met {
            Some(true) => "yes",
            Some(false) => "**no**",
            None => "",
        };
        writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} |",
            r.measure, r.result, r.baseline, r.ratio, r.target, met
        )?;
    }
    Ok(())
}

/// Tool calls timed by [`mcp_round_trips`].
const MCP_CALLS: usize = 1000;

/// Starts `logbook mcp` on `root`, initializes it, warms it up, then times
/// `calls` sequential `find_runs` calls and as many `ping`s (the protocol's
/// own cost, the baseline), each from writing the request to reading its
/// response. Returns the two lists of milliseconds.
fn mcp_round_trips(bin: &Path, root: &Path, calls: usize) -> Result<(Vec<f64>, Vec<f64>)> {
    use std::io::{BufRead, BufReader};
    let mut child = Command::new(bin)
        .args(["mcp", "--root"])
        .arg(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .with_context(|| format!("running {} mcp", bin.display()))?;
    let mut stdin = child.stdin.take().context("mcp stdin")?;
    let mut stdout = BufReader::new(child.stdout.take().context("mcp stdout")?);
    let mut line = String::new();
    let mut exchange = |msg: &serde_json::Value, reply: bool| -> Result<f64> {
        let t = Instant::now();
        writeln!(stdin, "{msg}")?;
        stdin.flush()?;
        if reply {
            line.clear();
            if stdout.read_line(&mut line)? == 0 {
                bail!("logbook mcp closed its stdout");
            }
            if line.contains("\"isError\":true") || line.contains("\"error\":") {
                bail!("logbook mcp answered an error: {line}");
            }
        }
        Ok(ms(t.elapsed()))
    };
    exchange(
        &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "logbook-bench", "version": "1"}}}),
        true,
    )?;
    exchange(
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        false,
    )?;
    let find = |id: usize| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "find_runs", "arguments": {"agent": "agent03", "workflow": "^deep-",
            "status": "completed", "limit": 20}}})
    };
    for i in 0..20 {
        exchange(&find(i + 1), true)?;
    }
    let (mut finds, mut pings) = (Vec::with_capacity(calls), Vec::with_capacity(calls));
    for i in 0..calls {
        // Alternated, so drifting load on a shared machine hits both alike.
        finds.push(exchange(&find(100 + 2 * i), true)?);
        pings.push(exchange(
            &json!({"jsonrpc": "2.0", "id": 101 + 2 * i, "method": "ping"}),
            true,
        )?);
    }
    drop(stdin);
    let _ = child.wait();
    Ok((finds, pings))
}

/// Starts the web viewer's server for `project` on an ephemeral loopback
/// port, in a thread that lives as long as the benchmark.
fn serve(project: Project) -> Result<std::net::SocketAddr> {
    let server = logbook_web::Server::bind(
        project,
        logbook_web::Options {
            bind: "127.0.0.1:0".parse()?,
            token: None,
        },
    )?;
    let addr = server.local_addr()?;
    std::thread::spawn(move || server.run());
    Ok(addr)
}

/// One `GET target` over a fresh connection, as a browser's first request
/// costs: milliseconds until the whole answer has arrived.
fn http_ms(addr: std::net::SocketAddr, target: &str) -> Result<f64> {
    use std::io::Read as _;
    let start = Instant::now();
    let mut c = std::net::TcpStream::connect(addr)?;
    write!(
        c,
        "GET {target} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )?;
    let mut buf = vec![];
    c.read_to_end(&mut buf)?;
    let took = ms(start.elapsed());
    if !buf.starts_with(b"HTTP/1.1 200") {
        bail!(
            "GET {target} did not answer 200: {}",
            String::from_utf8_lossy(&buf[..buf.len().min(200)])
        );
    }
    Ok(took)
}

/// The seed's "find latest output" by reading every manifest: the baseline
/// `latest-output` through the index is measured against.
fn latest_output_scan(
    project: &Project,
    agent: &str,
    workflow: &str,
    output_type: &str,
) -> Result<(String, String, PathBuf)> {
    let query = RunQuery {
        agent: Some(agent.to_string()),
        workflow: Some(workflow.to_string()),
        ..RunQuery::default()
    };
    for r in run::find_scan(project, &query)? {
        if let Some(out) = r
            .manifest
            .outputs
            .iter()
            .rev()
            .find(|o| o.output_type.as_str() == output_type)
        {
            return Ok((r.id.to_string(), out.file.clone(), r.output_path(&out.file)));
        }
    }
    bail!("no {output_type} output of {agent} in the scan")
}

/// Writes a Claude Code session log of about `mib` MiB to `path`: user
/// prompts, replies streamed over three lines each (the same `message.id`,
/// growing `output_tokens`), tool calls and tool results with a few KB of
/// output, as a long real session has. Returns the bytes written and the
/// output tokens an exact count must find.
fn synthesize_claude_log(path: &Path, mib: u64) -> Result<(u64, u64)> {
    let session = "7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";
    let mut w = std::io::BufWriter::new(std::fs::File::create(path)?);
    let target = mib * 1024 * 1024;
    let (mut bytes, mut output, mut i) = (0u64, 0u64, 0u64);
    let filler: String = (0..40)
        .map(|k| format!("line {k} of the tool output, "))
        .collect();
    while bytes < target {
        let ts = ts(1_768_730_400 + i as i64);
        let mut lines = vec![json!({
            "type": "user", "sessionId": session, "cwd": "/work/bench", "uuid": format!("u{i}"),
            "timestamp": ts, "message": {"role": "user", "content": format!("Step {i}: refactor module {}", i % 97)},
        })];
        for (k, out) in [3u64, 40, 180].into_iter().enumerate() {
            let content = match k {
                0 => {
                    json!([{"type": "thinking", "thinking": "Plan the change.", "signature": "s"}])
                }
                1 => json!([{"type": "text", "text": format!("Changing module {}.", i % 97)}]),
                _ => {
                    json!([{"type": "tool_use", "id": format!("t{i}"), "name": "Edit", "input": {"file_path": format!("src/m{}.rs", i % 97)}}])
                }
            };
            lines.push(json!({
                "type": "assistant", "sessionId": session, "cwd": "/work/bench", "uuid": format!("a{i}-{k}"),
                "timestamp": ts, "requestId": format!("req_{i}"),
                "message": {"id": format!("msg_{i}"), "model": "claude-sonnet-4-5", "content": content,
                    "usage": {"input_tokens": 12, "cache_creation_input_tokens": 300, "cache_read_input_tokens": 40_000, "output_tokens": out}},
            }));
        }
        output += 180;
        lines.push(json!({
            "type": "user", "sessionId": session, "cwd": "/work/bench", "uuid": format!("r{i}"), "timestamp": ts,
            "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("t{i}"), "content": filler}]},
        }));
        for l in lines {
            let text = l.to_string();
            bytes += text.len() as u64 + 1;
            writeln!(w, "{text}")?;
        }
        i += 1;
    }
    w.flush()?;
    Ok((bytes, output))
}

/// Imports a generated Claude Code log of `mib` MiB with the real binary:
/// its throughput against reading and parsing the same lines (the least any
/// exact reader does), and its peak memory (target: under 256 MiB whatever
/// the log's size).
fn transcript_import_rows(
    bin: &Path,
    mib: u64,
    row: &mut impl FnMut(&str, String, String, String, &str, Option<bool>),
) -> Result<()> {
    eprintln!("transcript import of a {mib} MiB Claude Code log …");
    let dir = tempfile::Builder::new()
        .prefix("logbook-bench-log-")
        .tempdir()?;
    let log = dir
        .path()
        .join("7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d.jsonl");
    let (bytes, output) = synthesize_claude_log(&log, mib)?;
    let mb = bytes as f64 / 1e6;
    // Baseline: every line read and parsed as JSON, nothing kept.
    let (parse, ()) = time(|| {
        let reader = std::io::BufReader::new(std::fs::File::open(&log)?);
        for line in std::io::BufRead::lines(reader) {
            let _: serde_json::Value = serde_json::from_str(&line?)?;
        }
        Ok(())
    })?;
    let project = dir.path().join("project");
    std::fs::create_dir_all(&project)?;
    let log_arg = log.to_string_lossy().into_owned();
    let args = ["transcript", "import", log_arg.as_str(), "--json"];
    let t = Instant::now();
    let peak = peak_rss_mib(bin, &project, &args)?;
    let import = t.elapsed();
    let p = Project::open(&project)?;
    let report = logbook::ops::transcript::usage(
        &p,
        &logbook::ops::transcript::UsageScope::All,
        logbook::ops::transcript::UsageBy::Model,
    )?;
    if report.total.output_tokens != output {
        bail!(
            "the import counted {} output tokens, the generator wrote {output}",
            report.total.output_tokens
        );
    }
    row(
        "`transcript import` of a Claude Code log (whole process: parse, count, write the transcript with every line)",
        format!(
            "{:.1} MB/s ({mb:.0} MB in {:.1} s)",
            mb / import.as_secs_f64(),
            import.as_secs_f64()
        ),
        format!("{:.1} MB/s read + parse only", mb / parse.as_secs_f64()),
        format!("{:.2}×", import.as_secs_f64() / parse.as_secs_f64()),
        "",
        None,
    );
    row(
        "peak memory of `transcript import`",
        format!("{peak:.1} MiB for {mb:.0} MB"),
        String::new(),
        String::new(),
        "< 256 MiB",
        Some(peak < 256.0),
    );
    Ok(())
}

/// Push throughput and `find --team` latency against a PostgreSQL started
/// for the run: the whole project pushed by the real binary, then the
/// local `find` row's query answered by the catalog.
fn team_rows(
    bin: &Path,
    root: &Path,
    n: usize,
    local_find_ms: f64,
    row: &mut impl FnMut(&str, String, String, String, &str, Option<bool>),
) -> Result<()> {
    eprintln!("team catalog: starting PostgreSQL …");
    let pg = pg::Pg::start()?;
    let config = Restore::new(root.join("logbook.yaml"))?;
    let mut text = config.before.clone().unwrap_or_default();
    text.push_str(&format!("\nteam_url: '{}'\norigin: bench\n", pg.url()));
    std::fs::write(&config.path, text)?;
    process_ms(bin, root, &["team", "init", "--json"])?;
    eprintln!("team push of {n} runs …");
    let push_ms = process_ms(bin, root, &["team", "push", "--json"])?;
    logbook::ops::team::install(Box::new(logbook_team_pg::PgConnector));
    let project = Project::open(root)?;
    let status = logbook::ops::team::status(&project)?;
    let pushed = status
        .catalog
        .as_ref()
        .and_then(|c| c.origins.first())
        .map_or(0, |o| o.runs);
    // A reused project may hold a few runs more than it was made with.
    let local = Index::open(&project)?.count_runs(&RunQuery::default())? as i64;
    if pushed != local || status.backlog != 0 {
        bail!(
            "team push left {pushed} of {local} runs on the server, {} waiting",
            status.backlog
        );
    }
    let per_s = local as f64 / (push_ms / 1000.0);
    row(
        "`team push` of every run, new catalog (whole process)",
        format!("{per_s:.0} runs/s ({:.1} s)", push_ms / 1000.0),
        String::new(),
        String::new(),
        "≥ 5,000 runs/s",
        Some(per_s >= 5000.0),
    );
    eprintln!("find --team …");
    let catalog = logbook::ops::team::connect(&project, logbook::ops::team::COMMAND_TIMEOUT)?;
    let query = RunQuery {
        agent: Some("agent03".into()),
        workflow: Some("^deep-".into()),
        status: Some("completed".into()),
        limit: Some(20),
        ..RunQuery::default()
    };
    let local = run::find(&project, &query)?.0.len();
    let mut team_ms = vec![];
    for _ in 0..50 {
        let (d, (runs, _)) = time(|| Ok(catalog.find_runs(&query)?))?;
        if runs.len() != local {
            bail!(
                "find --team found {} runs, the local index {local}",
                runs.len()
            );
        }
        team_ms.push(ms(d));
    }
    let t50 = percentile(&mut team_ms, 0.5);
    row(
        "`find --team --agent X --workflow '^deep-' --status completed --limit 20`, query on a connected catalog",
        format!("{t50:.2} ms median at {n} runs"),
        format!("{local_find_ms:.2} ms median (local index)"),
        format!("{:.2}×", t50 / local_find_ms),
        "< 10 ms",
        Some(t50 < 10.0),
    );
    let args = [
        "find",
        "--team",
        "--agent",
        "agent03",
        "--workflow",
        "^deep-",
        "--status",
        "completed",
        "--limit",
        "20",
        "--json",
    ];
    process_ms(bin, root, &args)?;
    let mut whole = vec![];
    for _ in 0..11 {
        whole.push(process_ms(bin, root, &args)?);
    }
    let w50 = percentile(&mut whole, 0.5);
    row(
        "`find --team` (same query), whole process: connect, check schema, query",
        format!("{w50:.2} ms median"),
        String::new(),
        String::new(),
        "< 10 ms",
        Some(w50 < 10.0),
    );
    Ok(())
}

/// A file put back as it was (or removed, if it was not there) when this
/// is dropped: the team rows point a reused project at a server that is
/// gone once they end, and later writes there would each try to reach it.
struct Restore {
    path: PathBuf,
    before: Option<String>,
}

impl Restore {
    fn new(path: PathBuf) -> Result<Restore> {
        let before = match std::fs::read_to_string(&path) {
            Ok(text) => Some(text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
        };
        Ok(Restore { path, before })
    }
}

impl Drop for Restore {
    fn drop(&mut self) {
        let _ = match &self.before {
            Some(text) => std::fs::write(&self.path, text),
            None => std::fs::remove_file(&self.path),
        };
    }
}

/// Runs of a lineage chain that [`web_fixtures`] writes.
const CHAIN: usize = 200;

/// What the web rows open besides the run list.
struct WebFixtures {
    /// A run in the middle of a chain of [`CHAIN`] runs.
    chain_mid: String,
    /// A work session with milestones, spawned agents and a workflow
    /// history that was compacted.
    work_session: String,
    /// A saved transcript.
    transcript: String,
}

/// Gives `project` what the other pages show: a lineage chain of
/// [`CHAIN`] runs written straight to disk (fixed ids, so a reused project
/// keeps them), and the demo's work session, workflow history and
/// transcripts (made in a project of their own, copied in once). Then syncs
/// the index.
fn web_fixtures(project: &Project) -> Result<WebFixtures> {
    let outputs = &project.config.agent_outputs_folder;
    let mut rng = Rng(0xC4A1_0001);
    let ids: Vec<String> = (0..CHAIN).map(|_| rng.uuid()).collect();
    let vocab = Vocab::new();
    let base: i64 = 1_700_000_000;
    for (i, id) in ids.iter().enumerate() {
        let folder = outputs.join(id);
        if folder.join("manifest.json").exists() {
            continue;
        }
        std::fs::create_dir_all(&folder)?;
        let text = format!("# Step {i}\n\n{}\n", vocab.sentence(&mut rng, 40, 80));
        std::fs::write(folder.join("output-0.md"), text)?;
        let mut m = json!({
            "version": "1.0.0",
            "session_id": id,
            "agent": {"name": "chain", "title": "The Chain Agent"},
            "workflow": {"name": "chain-step"},
            "execution": {"started_at": ts(base + i as i64 * 60), "completed_at": ts(base + i as i64 * 60 + 50), "status": "completed"},
            "outputs": [{"file": "output-0.md", "type": "document", "description": format!("step {i}"), "created_at": ts(base + i as i64 * 60 + 30)}],
        });
        if i > 0 {
            m["related_sessions"] = json!([ids[i - 1]]);
        }
        std::fs::write(
            folder.join("manifest.json"),
            serde_json::to_string_pretty(&m)?,
        )?;
    }
    let demo_dir = tempfile::Builder::new()
        .prefix("logbook-bench-demo-")
        .tempdir()?;
    let demo = logbook::ops::demo::fill(&demo_dir.path().join("demo"))?;
    let demo_project = Project::open(&demo.root)?;
    let (from, to) = (&demo_project.config, &project.config);
    for (a, b) in [
        (&from.sessions_dir, &to.sessions_dir),
        (&from.transcripts_dir, &to.transcripts_dir),
    ] {
        copy_missing(a, b)?;
    }
    // The demo's ids are new each time; a reused project keeps the first
    // ones it was given, so the pages named are those on disk.
    let work_session = first_name(&to.sessions_dir, ".state.json")?;
    let transcript_file = to.transcripts_dir.join(format!(
        "{}.json",
        first_name(&to.transcripts_dir, ".json")?
    ));
    let stored: serde_json::Value = serde_json::from_slice(&std::fs::read(&transcript_file)?)?;
    let transcript = stored["id"]
        .as_str()
        .with_context(|| format!("no id in {}", transcript_file.display()))?
        .to_string();
    Index::open(project)?.sync()?;
    Ok(WebFixtures {
        chain_mid: ids[CHAIN / 2].clone(),
        work_session,
        transcript,
    })
}

impl WebFixtures {
    /// Each page measured, with its target.
    fn pages(&self) -> Vec<(&'static str, String)> {
        let (run, ws, t) = (&self.chain_mid, &self.work_session, &self.transcript);
        vec![
            (
                "run page (fields, outputs, file tree, lineage graph) in a chain of 200 runs",
                format!("/runs/{run}"),
            ),
            (
                "lineage page of a run in the middle of a chain of 200 runs",
                format!("/runs/{run}/lineage"),
            ),
            (
                "file page (Markdown rendered)",
                format!("/runs/{run}/files/output-0.md"),
            ),
            ("work sessions page `GET /sessions`", "/sessions".into()),
            ("work session page", format!("/sessions/{ws}")),
            (
                "workflow page (timeline with compacted entries)",
                format!("/sessions/{ws}/workflow"),
            ),
            ("transcripts page `GET /transcripts`", "/transcripts".into()),
            ("transcript page", format!("/transcripts/{t}")),
        ]
    }
}

/// Copies the files and folders under `from` that `to` does not have.
fn copy_missing(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to)?;
    for e in std::fs::read_dir(from)? {
        let e = e?;
        let dest = to.join(e.file_name());
        if e.file_type()?.is_dir() {
            copy_missing(&e.path(), &dest)?;
        } else if !dest.exists() {
            std::fs::copy(e.path(), &dest)?;
        }
    }
    Ok(())
}

/// The name, less `suffix`, of the first file in `dir` ending in `suffix`.
fn first_name(dir: &Path, suffix: &str) -> Result<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            e.file_name()
                .to_str()?
                .strip_suffix(suffix)
                .map(str::to_string)
        })
        .collect();
    names.sort();
    names
        .into_iter()
        .next()
        .with_context(|| format!("no *{suffix} in {}", dir.display()))
}
