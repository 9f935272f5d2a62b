//! The transcript page rows: a stored transcript of about 100 MB served by
//! the real `logbook serve`, its first page's time to the first byte
//! against the same page of a 1 MB session served by the same process, and
//! the server's peak memory against the file's size.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Instant;

use anyhow::{Context as _, Result, bail};
use logbook::Logbook;
use logbook::model::transcript::{Kind, file_name};
use serde_json::json;

use crate::measure::{PROCESS_REPS, ms, peak_rss_and_time, percentile, vm_hwm, wait_peak};
use crate::report::RowSink;

/// The big session, about this many MB.
const BIG_MB: u64 = 100;
/// The baseline session, about this many MB.
const SMALL_MB: u64 = 1;
/// Timed requests of a page that reads the whole file (each reads 100 MB);
/// one in a debug build, as CI's smoke run of the benchmark is.
const WHOLE_FILE_REPS: usize = if cfg!(debug_assertions) { 1 } else { 5 };

/// The big session (an imported log's order: metadata, with its message
/// count, before the messages).
const BIG_ID: &str = "b16b16b1-0000-4000-8000-00000000b16b";
/// The same messages in seed 003's order (metadata after the messages), so
/// the page cannot stop reading after its window.
const BIG_LAST_ID: &str = "b16b16b1-0000-4000-8000-0000000a57b1";
/// The baseline session.
const SMALL_ID: &str = "5a11a11a-0000-4000-8000-00000005a11a";

/// The rows, with `bin serve` on a project of its own holding the three
/// sessions.
pub(crate) fn rows(bin: &Path, row: RowSink<'_>) -> Result<()> {
    eprintln!("transcript page of a {BIG_MB} MB session …");
    let dir = tempfile::Builder::new()
        .prefix("logbook-bench-page-")
        .tempdir()?;
    let project = Logbook::open(dir.path())?;
    let transcripts = &project.config.transcripts_dir;
    std::fs::create_dir_all(transcripts)?;
    let (big_bytes, big_messages) = synthesize(
        &transcripts.join(file_name(Kind::Main, BIG_ID, false)),
        BIG_ID,
        BIG_MB,
        true,
    )?;
    synthesize(
        &transcripts.join(file_name(Kind::Main, BIG_LAST_ID, false)),
        BIG_LAST_ID,
        BIG_MB,
        false,
    )?;
    let (small_bytes, small_messages) = synthesize(
        &transcripts.join(file_name(Kind::Main, SMALL_ID, false)),
        SMALL_ID,
        SMALL_MB,
        true,
    )?;
    let big_mb = big_bytes as f64 / 1e6;
    let small_mb = small_bytes as f64 / 1e6;

    // What the page did before: the whole transcript parsed (as `transcript
    // show` still does), its time and memory.
    // (Not in a debug build, CI's smoke run, where it alone would dominate.)
    let show = ["transcript", "show", BIG_ID, "--json"];
    let whole = if cfg!(debug_assertions) {
        None
    } else {
        Some(peak_rss_and_time(bin, dir.path(), &show, false)?)
    };
    let (whole_text, whole_ms) = match whole {
        Some((mib, s)) => (
            format!(
                "{:.0} ms, {mib:.0} MiB: `transcript show --json` (whole parse, as the page did before)",
                s * 1000.0
            ),
            s * 1000.0,
        ),
        None => (
            "whole parse not timed in a debug build".to_string(),
            f64::NAN,
        ),
    };

    let server = Served::start(bin, dir.path())?;
    let first = |id: &str| format!("/transcripts/{id}");
    let last =
        |id: &str, messages: usize| format!("/transcripts/{id}?at={}", messages.saturating_sub(1));
    // Warm: each file's first read brings it into the page cache.
    for target in [
        first(BIG_ID),
        first(SMALL_ID),
        first(BIG_LAST_ID),
        last(BIG_ID, big_messages),
    ] {
        server.ttfb_ms(&target)?;
    }
    let (mut big_ms, mut small_ms) = (vec![], vec![]);
    for _ in 0..PROCESS_REPS {
        big_ms.push(server.ttfb_ms(&first(BIG_ID))?);
        small_ms.push(server.ttfb_ms(&first(SMALL_ID))?);
    }
    let (b50, s50) = (percentile(&mut big_ms, 0.5), percentile(&mut small_ms, 0.5));
    row(
        "transcript page of a 100 MB session (imported log), first page: time to first byte, `logbook serve`",
        format!("{b50:.2} ms median, {big_mb:.0} MB, {big_messages} messages"),
        format!(
            "{s50:.2} ms median, same page of a {small_mb:.1} MB session ({small_messages} messages)"
        ),
        format!("{:.2}×", b50 / s50),
        "≤ 5×",
        Some(b50 / s50 <= 5.0),
    );
    // Pages that must read the whole file: the last page, and the first
    // page of a session whose metadata comes after its messages.
    for (measure, target) in [
        (
            "transcript page of the 100 MB session, last page (the file read to its end, messages skipped unparsed)",
            last(BIG_ID, big_messages),
        ),
        (
            "transcript page of a 100 MB session in seed 003's order (metadata last), first page",
            first(BIG_LAST_ID),
        ),
    ] {
        let mut times = vec![];
        for _ in 0..WHOLE_FILE_REPS {
            times.push(server.ttfb_ms(&target)?);
        }
        let t50 = percentile(&mut times, 0.5);
        row(
            measure,
            format!("{t50:.0} ms median of {WHOLE_FILE_REPS}"),
            whole_text.clone(),
            if whole_ms.is_nan() {
                String::new()
            } else {
                format!("{:.2}×", t50 / whole_ms)
            },
            "",
            None,
        );
    }
    let peak_mib = server.stop()?;
    let file_mib = big_bytes as f64 / 1_048_576.0;
    row(
        "peak memory of `logbook serve` over these pages",
        format!("{peak_mib:.1} MiB"),
        format!("{file_mib:.0} MiB, the session's file"),
        format!("{:.3}×", peak_mib / file_mib),
        "≤ 0.25× the file (release build)",
        // A debug build's own footprint is not the product's.
        (!cfg!(debug_assertions)).then_some(peak_mib / file_mib <= 0.25),
    );
    Ok(())
}

/// Writes a stored transcript of about `mb` MB to `path`, as a long agent
/// session reads: prompts, replies, tool calls and results of a few KB
/// each. With `head_first`, the metadata (recording the message count, as
/// an import does) comes before the messages. Returns the bytes written
/// and the message count.
fn synthesize(path: &Path, id: &str, mb: u64, head_first: bool) -> Result<(u64, usize)> {
    let filler: String = (0..40)
        .map(|k| format!("line {k} of the tool output, "))
        .collect();
    let target = mb * 1_000_000;
    // Messages first, into memory in pieces, to know the count the head
    // records; a few KB each, written straight after.
    let mut body: Vec<u8> = Vec::with_capacity(target as usize + 4096);
    let mut messages = 0usize;
    let mut i = 0u64;
    while (body.len() as u64) < target {
        for m in [
            json!({"role": "user", "blocks": [{"type": "text", "content": format!("Step {i}: refactor module {}", i % 97)}]}),
            json!({"role": "assistant", "metadata": {"model": "claude-sonnet-4-5"}, "blocks": [
                {"type": "thinking", "content": "Plan the change."},
                {"type": "text", "content": format!("Changing **module {}**.", i % 97)},
                {"type": "tool", "id": format!("t{i}"), "name": "Bash",
                 "parameters": json!({"command": format!("cargo test -p m{}", i % 97)}).to_string()}]}),
            json!({"role": "user", "blocks": [{"type": "tool_result", "toolUseId": format!("t{i}"), "result": filler}]}),
        ] {
            if messages > 0 {
                body.extend_from_slice(b",\n    ");
            }
            serde_json::to_writer(&mut body, &m)?;
            messages += 1;
        }
        i += 1;
    }
    let metadata = json!({
        "workdir": "/work/bench",
        "startedAt": "2026-01-01T00:00:00.000Z",
        "lastActiveAt": "2026-01-01T09:00:00.000Z",
        "source": {"agent": "claude-code", "messages": messages},
    });
    let head = format!(
        "  \"id\": {},\n  \"timestamp\": \"2026-01-01T09:00:00.000Z\",\n  \"version\": \"1.0.0\"",
        json!(id)
    );
    let metadata = format!("  \"metadata\": {metadata}");
    let mut w = std::io::BufWriter::new(std::fs::File::create(path)?);
    if head_first {
        write!(w, "{{\n{head},\n{metadata},\n  \"messages\": [\n    ")?;
        w.write_all(&body)?;
        write!(w, "\n  ]\n}}\n")?;
    } else {
        write!(w, "{{\n{head},\n  \"messages\": [\n    ")?;
        w.write_all(&body)?;
        write!(w, "\n  ],\n{metadata}\n}}\n")?;
    }
    w.flush()?;
    Ok((std::fs::metadata(path)?.len(), messages))
}

/// `logbook serve` on a loopback port; stopped on drop if not before.
struct Served {
    child: Option<Child>,
    addr: SocketAddr,
}

impl Served {
    /// Starts `bin serve` on the project at `root`, waiting for the URL it
    /// prints.
    fn start(bin: &Path, root: &Path) -> Result<Served> {
        let mut child = Command::new(bin)
            .args(["serve", "--bind", "127.0.0.1:0", "--root"])
            .arg(root)
            .env_remove("LOGBOOK_TOKEN")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("running {} serve", bin.display()))?;
        let stdout = child.stdout.take().context("serve's stdout")?;
        let mut out = BufReader::new(stdout);
        let mut line = String::new();
        let url = loop {
            line.clear();
            if out.read_line(&mut line)? == 0 {
                let _ = child.kill();
                bail!("logbook serve printed no URL");
            }
            if let Some(at) = line.find("http://") {
                break line[at..].trim().to_string();
            }
        };
        let addr = url
            .trim_start_matches("http://")
            .split('/')
            .next()
            .unwrap_or_default()
            .parse()
            .with_context(|| format!("serve's URL {url}"))?;
        // The rest of what it prints is not read; a thread drains it so a
        // full pipe never blocks the server.
        std::thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()));
        Ok(Served {
            child: Some(child),
            addr,
        })
    }

    /// One `GET target` over a fresh connection: milliseconds until the
    /// first byte of the answer; the rest is read (and must be a 200).
    fn ttfb_ms(&self, target: &str) -> Result<f64> {
        let start = Instant::now();
        let mut c = std::net::TcpStream::connect(self.addr)?;
        write!(
            c,
            "GET {target} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
            self.addr
        )?;
        let mut first = [0u8; 1];
        c.read_exact(&mut first)?;
        let took = ms(start.elapsed());
        let mut buf = first.to_vec();
        c.read_to_end(&mut buf)?;
        if !buf.starts_with(b"HTTP/1.1 200") {
            bail!(
                "GET {target} did not answer 200: {}",
                String::from_utf8_lossy(&buf[..buf.len().min(200)])
            );
        }
        Ok(took)
    }

    /// Stops the server and returns its peak resident memory over its
    /// whole life, in MiB: the high-water mark the pages left.
    fn stop(mut self) -> Result<f64> {
        let mut child = self.child.take().context("the server is stopped")?;
        // On Linux, read before the kill: a dead process's /proc has no
        // VmHWM. Elsewhere `wait_peak` has the figure from `wait4`.
        let before = vm_hwm(child.id()).unwrap_or(0);
        // Killed outright, so that no shutdown work of its own counts.
        child.kill()?;
        let (_, peak) = wait_peak(child)?;
        Ok(before.max(peak) as f64 / 1_048_576.0)
    }
}

impl Drop for Served {
    /// The server lives as long as its rows, whatever ends them.
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
