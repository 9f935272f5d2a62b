//! The web rows: the viewer's pages and `/api/runs` served by `logbook
//! serve`'s server, on the project and on a smaller one, with the runs,
//! work session and transcript each page needs.

use std::io::Write as _;
use std::path::Path;
use std::time::Instant;

use anyhow::{Context as _, Result, bail};
use logbook::Logbook;
use logbook_index::Index;
use serde_json::json;

use crate::measure::{PROCESS_REPS, SMALL_RUNS, ms, percentile};
use crate::report::RowSink;
use crate::synth::{Rng, Vocab, synthesize, ts};

/// Each page on the project of `n` runs against the same page on a smaller one.
pub(crate) fn rows(project: &Logbook, n: usize, row: RowSink<'_>) -> Result<()> {
    // The web viewer: a page of the run list and of `/api/runs`, served by
    // `logbook serve`'s server on a loopback port, against a small project
    // served the same way (the first request of each warms the index).
    eprintln!("web viewer …");
    let small_web = tempfile::Builder::new()
        .prefix("logbook-bench-web-")
        .tempdir()?;
    let small_web_project = Logbook::open(small_web.path())?;
    let small_web_runs = SMALL_RUNS.min(n);
    synthesize(
        &small_web_project.config.agent_outputs_folder,
        small_web_runs,
        44,
    )?;
    Index::rebuild(&small_web_project, None)?;
    let big_fx = web_fixtures(project)?;
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
    Ok(())
}

/// Starts the web viewer's server for `project` on an ephemeral loopback
/// port, in a thread that lives as long as the benchmark.
fn serve(project: Logbook) -> Result<std::net::SocketAddr> {
    let server = logbook_web::Server::bind(
        project,
        logbook_web::Options {
            bind: "127.0.0.1:0".parse()?,
            token: None,
            ..Default::default()
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
fn web_fixtures(project: &Logbook) -> Result<WebFixtures> {
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
    let demo_project = Logbook::open(&demo.root)?;
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
    Index::open(project)?.upkeep().sync()?;
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
