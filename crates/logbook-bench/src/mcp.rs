//! The MCP row: an agent's `find_runs` tool call to a running `logbook mcp`
//! over stdio, against the protocol's own `ping`.

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context as _, Result, bail};
use serde_json::json;

use crate::measure::{ms, percentile};
use crate::report::RowSink;

/// `find_runs` round trips to `bin mcp` on the project at `root` of `n` runs.
pub(crate) fn rows(bin: &Path, root: &Path, n: usize, row: RowSink<'_>) -> Result<()> {
    // An agent's view: a `find_runs` tool call to a running
    // `logbook mcp`, request written to response read, over stdio.
    eprintln!("MCP find_runs round trips …");
    let (mut calls, mut pings) = round_trips(bin, root, MCP_CALLS)?;
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
    Ok(())
}

/// Tool calls timed by [`round_trips`].
const MCP_CALLS: usize = 1000;

/// Starts `logbook mcp` on `root`, initializes it, warms it up, then times
/// `calls` sequential `find_runs` calls and as many `ping`s (the protocol's
/// own cost, the baseline), each from writing the request to reading its
/// response. Returns the two lists of milliseconds.
fn round_trips(bin: &Path, root: &Path, calls: usize) -> Result<(Vec<f64>, Vec<f64>)> {
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
        // One write per message, as a client sends it: `writeln!` on the
        // unbuffered pipe would send each piece of the JSON on its own.
        let mut bytes = serde_json::to_vec(msg)?;
        bytes.push(b'\n');
        let t = Instant::now();
        stdin.write_all(&bytes)?;
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
