//! The transcript import rows: a generated Claude Code log imported by the
//! real binary, against reading and parsing the same lines.

use std::io::Write as _;
use std::path::Path;
use std::time::Instant;

use anyhow::{Result, bail};
use logbook::Logbook;
use serde_json::json;

use crate::measure::{peak_rss_mib, time};
use crate::report::RowSink;
use crate::synth::ts;

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
pub(crate) fn import_rows(bin: &Path, mib: u64, row: RowSink<'_>) -> Result<()> {
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
    let p = Logbook::open(&project)?;
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
