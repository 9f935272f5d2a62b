//! The MCP row: an agent's `find_runs` tool call to a running `logbook mcp`
//! over stdio, against the protocol's own `ping`.

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
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

/// Starts `logbook mcp` on `root`, warms it up, then times `calls`
/// sequential `find_runs` calls and as many `ping`s (the protocol's own
/// cost, the baseline), alternated so that drifting load on a shared
/// machine hits both alike. Returns the two lists of milliseconds.
fn round_trips(bin: &Path, root: &Path, calls: usize) -> Result<(Vec<f64>, Vec<f64>)> {
    let mut server = McpServer::start(bin, root)?;
    let (mut finds, mut pings) = (Vec::with_capacity(calls), Vec::with_capacity(calls));
    for _ in 0..calls {
        finds.push(server.find_ms()?);
        pings.push(server.ping_ms()?);
    }
    Ok((finds, pings))
}

/// A running `logbook mcp` over stdio, initialized and warmed up, whose
/// round trips are timed from writing the request to reading its
/// response: by the MCP row here and by the release-against-release rows
/// (`baseline`), one per binary.
pub(crate) struct McpServer {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    line: String,
    next_id: usize,
}

impl McpServer {
    /// `bin mcp` on `root`, initialized, after 20 untimed `find_runs`.
    pub(crate) fn start(bin: &Path, root: &Path) -> Result<McpServer> {
        let mut child = Command::new(bin)
            .args(["mcp", "--root"])
            .arg(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("running {} mcp", bin.display()))?;
        let stdin = child.stdin.take().context("mcp stdin")?;
        let stdout = BufReader::new(child.stdout.take().context("mcp stdout")?);
        let mut server = McpServer {
            child,
            stdin: Some(stdin),
            stdout,
            line: String::new(),
            next_id: 1,
        };
        server.exchange(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "logbook-bench", "version": "1"}}}),
            true,
        )?;
        server.exchange(
            &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            false,
        )?;
        for _ in 0..20 {
            server.find_ms()?;
        }
        Ok(server)
    }

    /// One `find_runs` tool call (agent, workflow regex, status, limit
    /// 20), in ms.
    pub(crate) fn find_ms(&mut self) -> Result<f64> {
        let id = self.id();
        self.exchange(
            &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
                "name": "find_runs", "arguments": {"agent": "agent03", "workflow": "^deep-",
                "status": "completed", "limit": 20}}}),
            true,
        )
    }

    /// One `ping`, in ms.
    pub(crate) fn ping_ms(&mut self) -> Result<f64> {
        let id = self.id();
        self.exchange(&json!({"jsonrpc": "2.0", "id": id, "method": "ping"}), true)
    }

    fn id(&mut self) -> usize {
        self.next_id += 1;
        self.next_id
    }

    /// Writes `msg` and, with `reply`, reads the answer, which must not be
    /// an error; in ms.
    fn exchange(&mut self, msg: &serde_json::Value, reply: bool) -> Result<f64> {
        // One write per message, as a client sends it: `writeln!` on the
        // unbuffered pipe would send each piece of the JSON on its own.
        let mut bytes = serde_json::to_vec(msg)?;
        bytes.push(b'\n');
        let stdin = self.stdin.as_mut().context("mcp stdin closed")?;
        let t = Instant::now();
        stdin.write_all(&bytes)?;
        if reply {
            self.line.clear();
            if self.stdout.read_line(&mut self.line)? == 0 {
                bail!("logbook mcp closed its stdout");
            }
            if self.line.contains("\"isError\":true") || self.line.contains("\"error\":") {
                bail!("logbook mcp answered an error: {}", self.line.trim_end());
            }
        }
        Ok(ms(t.elapsed()))
    }
}

impl Drop for McpServer {
    /// Closes the server's stdin, which ends it, and waits for it.
    fn drop(&mut self) {
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}
