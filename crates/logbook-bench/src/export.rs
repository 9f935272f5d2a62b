//! The export rows: `logbook export otlp --all` of every run to a loopback
//! receiver that reads and discards each request, so what is measured is
//! Logbook's side (reading, mapping, encoding, sending). Its time is set
//! against `find` listing the same runs in the same run; its peak memory
//! against the same export of a project a tenth the size (at most the
//! smaller comparison project), so that even CI's small run shows whether
//! memory grows with the history; the size of the endpoint's cursor (a
//! high-water mark, not a map of every record) beside it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;

use anyhow::{Context as _, Result};
use logbook::Logbook;
use logbook_index::Index;

use crate::measure::{SMALL_RUNS, peak_rss_and_time};
use crate::report::RowSink;
use crate::synth::synthesize;

/// Starts a receiver on a free loopback port that answers every request
/// with an empty 200 (a full success); returns its base URL.
fn discard_receiver() -> Result<String> {
    let listener = TcpListener::bind("127.0.0.1:0").context("binding the loopback receiver")?;
    let addr = listener.local_addr()?;
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || discard(stream));
        }
    });
    Ok(format!("http://{addr}"))
}

/// Reads each request of a kept-alive connection and answers it.
fn discard(stream: TcpStream) {
    let Ok(mut out) = stream.try_clone() else {
        return;
    };
    let mut r = BufReader::new(stream);
    loop {
        let mut len = 0usize;
        let mut line = String::new();
        if r.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        loop {
            line.clear();
            if r.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            if let Some((k, v)) = l.split_once(':')
                && k.eq_ignore_ascii_case("content-length")
            {
                len = v.trim().parse().unwrap_or(0);
            }
        }
        if std::io::copy(&mut (&mut r).take(len as u64), &mut std::io::sink()).is_err()
            || out
                .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
                .is_err()
        {
            return;
        }
    }
}

/// Peak memory (MiB) and time (s) of `export otlp --all`, and how many
/// records it sent: a second export's count of unchanged records (one span
/// each, as the synthetic project holds only runs).
fn exported(bin: &Path, root: &Path, url: &str) -> Result<(f64, f64, u64)> {
    let args = ["export", "otlp", "--all", "--json", "--endpoint", url];
    let (mib, secs) = peak_rss_and_time(bin, root, &args, false)?;
    let out = std::process::Command::new(bin)
        .args(["export", "otlp", "--json", "--endpoint", url, "--root"])
        .arg(root)
        .output()?;
    // A second export, with the cursor full, sends nothing: its summary
    // still counts every record it found unchanged.
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)?;
    Ok((mib, secs, v["unchanged"].as_u64().unwrap_or(0)))
}

/// The rows of `bin` exporting the project at `root` of `n` runs.
pub(crate) fn rows(bin: &Path, root: &Path, n: usize, row: RowSink<'_>) -> Result<()> {
    eprintln!("export otlp …");
    let url = discard_receiver()?;
    // Warm: the first export after the index was built also syncs it.
    exported(bin, root, &url)?;
    let (big_mib, secs, spans) = exported(bin, root, &url)?;
    // One span per finished run: the synthetic project holds only runs.
    let find = ["find", "--json", "--limit", &n.to_string()];
    let (_, find_secs) = peak_rss_and_time(bin, root, &find, false)?;
    row(
        "`export otlp --all`, every run to a loopback receiver that discards",
        format!(
            "{:.0} spans/s ({spans} spans in {secs:.2} s)",
            spans as f64 / secs
        ),
        format!("`find --limit {n}` of the same runs: {find_secs:.2} s"),
        format!("{:.2}×", secs / find_secs),
        "",
        None,
    );
    let small_dir = tempfile::Builder::new()
        .prefix("logbook-bench-export-")
        .tempdir()?;
    let small_project = Logbook::open(small_dir.path())?;
    let small_runs = SMALL_RUNS.min(n / 10).max(100);
    synthesize(&small_project.config.agent_outputs_folder, small_runs, 44)?;
    Index::open(&small_project)?;
    exported(bin, small_dir.path(), &url)?;
    let (small_mib, _, _) = exported(bin, small_dir.path(), &url)?;
    let cursor = cursor_bytes(root)?;
    row(
        "peak memory of `export otlp --all`",
        format!("{big_mib:.1} MiB at {n} runs (cursor file: {cursor} bytes)"),
        format!("{small_mib:.1} MiB at {small_runs} runs"),
        format!("{:.2}×", big_mib / small_mib),
        "≤ 128 MiB at any size: batches stream, the cursor is a high-water mark",
        Some(big_mib <= 128.0),
    );
    Ok(())
}

/// The size of the export cursors of the project at `root`: the marks the
/// exports above left, which must not grow with the runs.
fn cursor_bytes(root: &Path) -> Result<u64> {
    let dir = logbook_store::export_cursor::dir(&Logbook::open(root)?.config.state_dir());
    let mut bytes = 0;
    for entry in std::fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))? {
        bytes += entry?.metadata()?.len();
    }
    Ok(bytes)
}
