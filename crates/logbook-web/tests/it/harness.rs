//! A demo project, a server on 127.0.0.1:0 in a background thread, and a
//! raw HTTP/1.1 client that sends the request line exactly as given.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

use logbook::Logbook;

/// A temp project filled by `logbook demo`, served on an ephemeral port.
pub(crate) struct Served {
    /// Kept so the folder lives as long as the server.
    pub(crate) _dir: tempfile::TempDir,
    pub(crate) root: PathBuf,
    pub(crate) addr: SocketAddr,
    pub(crate) demo: logbook::ops::demo::Demo,
}

impl Served {
    /// The demo project, served without a token.
    pub(crate) fn demo() -> Served {
        Served::demo_with(None, |_| {})
    }

    /// The demo project, changed by `prepare` before the server starts.
    pub(crate) fn demo_with(token: Option<&str>, prepare: impl FnOnce(&Path)) -> Served {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("project");
        let demo = logbook::ops::demo::fill(&root).unwrap();
        prepare(&root);
        let project = Logbook::open(&root).unwrap();
        let server = logbook_web::Server::bind(
            project,
            logbook_web::Options {
                bind: "127.0.0.1:0".parse().unwrap(),
                token: token.map(str::to_string),
                ..Default::default()
            },
        )
        .unwrap();
        let addr = server.local_addr().unwrap();
        std::thread::spawn(move || server.run());
        Served {
            _dir: dir,
            root,
            addr,
            demo,
        }
    }

    /// The demo project plus a hand-written Claude Code log (Bash, Read,
    /// Edit, a long and a failed result, thinking, Markdown, two Task
    /// calls of which one's subagent log is there, a compaction, streamed
    /// replies) with its subagent's log, and a Codex rollout (shell,
    /// apply_patch, token counts), imported; hostile text in a command, a
    /// result, a file path, a Task's description and subagent type, the
    /// compaction's summary and the subagent's model.
    pub(crate) fn with_agent_logs() -> Served {
        Served::demo_with(None, |root| {
            let logs = root.join("agent-logs");
            write_agent_logs(&logs);
            let p = Logbook::open(root).unwrap();
            let r = logbook::ops::transcript::import_path(
                &p,
                &logs,
                logbook::ops::transcript::ImportFormat::Auto,
                None,
            )
            .unwrap();
            assert_eq!(r.imported.len(), 3, "{r:?}");
        })
    }

    pub(crate) fn project(&self) -> Logbook {
        Logbook::open(&self.root).unwrap()
    }

    pub(crate) fn outputs(&self) -> PathBuf {
        self.root.join("docs/agent-outputs")
    }

    /// `GET target` with a loopback Host header.
    pub(crate) fn get(&self, target: &str) -> Reply {
        self.request("GET", target, &[])
    }

    pub(crate) fn get_json(&self, target: &str) -> serde_json::Value {
        let r = self.get(target);
        assert_eq!(r.status, 200, "GET {target}: {}", r.text());
        serde_json::from_slice(&r.body).unwrap()
    }

    pub(crate) fn request(&self, method: &str, target: &str, headers: &[(&str, &str)]) -> Reply {
        let mut head = format!("{method} {target} HTTP/1.1\r\n");
        if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
            head.push_str(&format!("Host: {}\r\n", self.addr));
        }
        for (k, v) in headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str("Connection: close\r\n");
        if method != "GET" && method != "HEAD" {
            head.push_str("Content-Length: 0\r\n");
        }
        head.push_str("\r\n");
        raw(self.addr, head.as_bytes())
    }
}

/// What came back.
#[derive(Debug)]
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

impl Reply {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Sends `bytes` as they are and reads the whole response.
pub(crate) fn raw(addr: SocketAddr, bytes: &[u8]) -> Reply {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(bytes).unwrap();
    let mut buf = vec![];
    let _ = s.read_to_end(&mut buf);
    parse(&buf)
}

fn parse(buf: &[u8]) -> Reply {
    let split = buf
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or(buf.len());
    let head = String::from_utf8_lossy(&buf[..split]).into_owned();
    let mut body = buf.get(split + 4..).unwrap_or_default().to_vec();
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    if headers
        .iter()
        .any(|(k, v)| k == "transfer-encoding" && v.contains("chunked"))
    {
        body = dechunk(&body);
    }
    Reply {
        status,
        headers,
        body,
    }
}

fn dechunk(mut b: &[u8]) -> Vec<u8> {
    let mut out = vec![];
    loop {
        let Some(eol) = b.windows(2).position(|w| w == b"\r\n") else {
            return out;
        };
        let size = usize::from_str_radix(
            String::from_utf8_lossy(&b[..eol])
                .split(';')
                .next()
                .unwrap_or("0")
                .trim(),
            16,
        )
        .unwrap_or(0);
        if size == 0 || b.len() < eol + 2 + size {
            return out;
        }
        out.extend_from_slice(&b[eol + 2..eol + 2 + size]);
        b = &b[(eol + 4 + size).min(b.len())..];
    }
}

/// The Claude Code session of [`Served::with_agent_logs`].
pub(crate) const CLAUDE_ID: &str = "5e55a0c1-0000-4000-8000-00000000c1a0";
/// The Codex session of [`Served::with_agent_logs`].
pub(crate) const CODEX_ID: &str = "0199c0de-0000-7000-8000-00000000c0de";
/// The subagent the Claude Code session's first Task call ran, whose log
/// is imported with it.
pub(crate) const AGENT_ID: &str = "a1b2c3d";
/// The subagent of the second Task call, whose log is not there.
pub(crate) const MISSING_AGENT_ID: &str = "f0f0f0f";
/// Hostile text put in a command, a result, a file path, an edit and the
/// assistant's Markdown.
pub(crate) const HOSTILE: &str = "<script>alert(1)</script>\"><img src=x onerror=alert(2)>";

fn write_agent_logs(dir: &Path) {
    use serde_json::{Value, json};
    let claude_dir = dir.join("claude/-w-demo");
    std::fs::create_dir_all(&claude_dir).unwrap();
    let mut n = 0;
    let mut raw = |ty: &str, message: Value, more: Value| {
        n += 1;
        let mut o = json!({
            "parentUuid": null, "isSidechain": false, "cwd": "/w/demo", "version": "2.0.14",
            "sessionId": CLAUDE_ID, "type": ty, "message": message,
            "uuid": format!("00000000-0000-4000-8000-{n:012}"),
            "timestamp": format!("2026-01-18T10:00:{n:02}.000Z"),
        });
        if let (Value::Object(o), Value::Object(more)) = (&mut o, more) {
            o.extend(more);
        }
        o.to_string()
    };
    let mut line = |ty: &str, message: Value| raw(ty, message, json!({}));
    let assistant = |id: &str, content: Value| {
        json!({"id": id, "type": "message", "role": "assistant", "model": "claude-opus-4-5",
               "content": content, "usage": {"input_tokens": 10, "output_tokens": 5}})
    };
    let result = |id: &str, content: &str, err: bool| {
        json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": id, "content": content, "is_error": err}]})
    };
    let long: String = (1..=40)
        .map(|i| format!("{i:>6}\tfn line_{i}() {{}}\n"))
        .collect();
    let mut lines = vec![
        line("user", json!({"role": "user", "content": "Fix the build"})),
        line(
            "assistant",
            assistant(
                "m1",
                json!([{"type": "thinking", "thinking": "The build fails; look first.", "signature": "s"}]),
            ),
        ),
        line(
            "assistant",
            assistant(
                "m1",
                json!([{"type": "text", "text": "Let me **run** the tests."}]),
            ),
        ),
        line(
            "assistant",
            assistant(
                "m1",
                json!([{"type": "tool_use", "id": "tu_bash", "name": "Bash",
            "input": {"command": format!("cargo test --quiet # {HOSTILE}"), "description": "run tests"}}]),
            ),
        ),
        line(
            "user",
            result(
                "tu_bash",
                &format!("error[E0425]: oops {HOSTILE}\nExit code 101"),
                true,
            ),
        ),
        line(
            "assistant",
            assistant(
                "m2",
                json!([{"type": "tool_use", "id": "tu_read", "name": "Read",
            "input": {"file_path": format!("/w/demo/src/{HOSTILE}.rs")}}]),
            ),
        ),
        line("user", result("tu_read", &long, false)),
        line(
            "assistant",
            assistant(
                "m3",
                json!([{"type": "tool_use", "id": "tu_edit", "name": "Edit",
            "input": {"file_path": "/w/demo/src/lib.rs", "old_string": "fn a() {\n    old_call();\n}", "new_string": format!("fn a() {{\n    new_call();\n    // {HOSTILE}\n}}")}}]),
            ),
        ),
        line(
            "user",
            result(
                "tu_edit",
                "The file /w/demo/src/lib.rs has been updated.",
                false,
            ),
        ),
        line(
            "assistant",
            assistant(
                "m4",
                json!([{"type": "text", "text": format!("Fixed: `new_call` replaces `old_call`. {HOSTILE} [x](javascript:alert(3))")}]),
            ),
        ),
    ];
    // Calls with both ids and the cache used: a streamed reply is written
    // as several lines of one call, its output growing.
    let call = |id: &str, content: Value, output: u64| {
        json!({"id": id, "type": "message", "role": "assistant", "model": "claude-opus-4-5",
               "content": content, "usage": {"input_tokens": 3, "output_tokens": output,
               "cache_creation_input_tokens": 1200, "cache_read_input_tokens": 4000}})
    };
    let task = |id: &str, description: &str, kind: &str| {
        json!([{"type": "tool_use", "id": id, "name": "Task", "input": {
            "description": description, "prompt": "Find the flaky tests", "subagent_type": kind}}])
    };
    let task_result = |id: &str, agent: &str| {
        (
            json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id,
                "content": [{"type": "text", "text": format!("Found 2 flaky tests.\nagentId: {agent} (for resuming)")}]}]}),
            json!({"toolUseResult": {"status": "completed", "agentId": agent, "totalTokens": 999}}),
        )
    };
    let rid = |r: &str| json!({"requestId": r});
    lines.push(raw(
        "assistant",
        call(
            "m5",
            task("tu_task", &format!("Survey the tests {HOSTILE}"), "Explore"),
            20,
        ),
        rid("req_5"),
    ));
    let (m, more) = task_result("tu_task", AGENT_ID);
    lines.push(raw("user", m, more));
    lines.push(raw(
        "assistant",
        call(
            "m6",
            task("tu_task2", "Check the docs", &format!("docs {HOSTILE}")),
            30,
        ),
        rid("req_6"),
    ));
    let (m, more) = task_result("tu_task2", MISSING_AGENT_ID);
    lines.push(raw("user", m, more));
    lines.push(raw(
        "system",
        Value::Null,
        json!({"subtype": "compact_boundary", "content": "Conversation compacted",
               "compactMetadata": {"trigger": "auto", "preTokens": 12345}}),
    ));
    lines.push(raw(
        "user",
        json!({"role": "user", "content": format!("This session is being continued from a previous conversation. Summary: the build was fixed {HOSTILE}")}),
        json!({"isCompactSummary": true, "isVisibleInTranscriptOnly": true}),
    ));
    lines.push(raw(
        "user",
        json!({"role": "user", "content": "Now run them again"}),
        json!({}),
    ));
    // One reply streamed as two lines of one call: counted once, at its
    // largest.
    for (output, block) in [
        (
            4,
            json!({"type": "thinking", "thinking": "Run them.", "signature": "s"}),
        ),
        (9, json!({"type": "text", "text": "All green."})),
    ] {
        lines.push(raw(
            "assistant",
            call("m7", json!([block]), output),
            rid("req_7"),
        ));
    }
    std::fs::write(
        claude_dir.join(format!("{CLAUDE_ID}.jsonl")),
        lines.join("\n") + "\n",
    )
    .unwrap();
    // The first Task's subagent, where newer Claude Code writes it; its
    // model's name is hostile.
    let sub_dir = claude_dir.join(CLAUDE_ID).join("subagents");
    std::fs::create_dir_all(&sub_dir).unwrap();
    let sub = |k: u64, ty: &str, message: Value| {
        json!({
            "parentUuid": null, "isSidechain": true, "agentId": AGENT_ID, "cwd": "/w/demo",
            "sessionId": CLAUDE_ID, "type": ty, "message": message, "requestId": format!("sreq_{k}"),
            "uuid": format!("00000000-0000-4000-9000-{k:012}"),
            "timestamp": format!("2026-01-18T10:00:{:02}.500Z", 11 + k),
        })
        .to_string()
    };
    let sub_lines = [
        sub(
            1,
            "user",
            json!({"role": "user", "content": "Find the flaky tests"}),
        ),
        sub(
            2,
            "assistant",
            json!({"id": "sm1", "type": "message", "role": "assistant", "model": format!("haiku {HOSTILE}"),
                   "content": [{"type": "text", "text": "The flaky ones: tests/net.rs and tests/clock.rs"}],
                   "usage": {"input_tokens": 50, "output_tokens": 60}}),
        ),
    ];
    std::fs::write(
        sub_dir.join(format!("agent-{AGENT_ID}.jsonl")),
        sub_lines.join("\n") + "\n",
    )
    .unwrap();

    let codex_dir = dir.join("codex/2026/01/18");
    std::fs::create_dir_all(&codex_dir).unwrap();
    let mut t = 0;
    let mut item = |ty: &str, payload: Value| {
        t += 1;
        json!({"timestamp": format!("2026-01-18T11:00:{t:02}.000Z"), "type": ty, "payload": payload})
            .to_string()
    };
    let count = |input: u64, cached: u64, output: u64| {
        json!({"type": "token_count", "info": {"total_token_usage": {
            "input_tokens": input, "cached_input_tokens": cached, "output_tokens": output,
            "reasoning_output_tokens": output / 2, "total_tokens": input + output}}})
    };
    let patch = "*** Begin Patch\n*** Update File: src/main.rs\n@@\n-    println!(\"old\");\n+    println!(\"new\");\n*** End Patch";
    let lines = [
        item(
            "session_meta",
            json!({"id": CODEX_ID, "timestamp": "2026-01-18T11:00:00.000Z", "cwd": "/w/codex", "originator": "codex_cli_rs", "cli_version": "0.50.0"}),
        ),
        item(
            "turn_context",
            json!({"cwd": "/w/codex", "model": "gpt-5-codex"}),
        ),
        item(
            "response_item",
            json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Make it print new"}]}),
        ),
        item(
            "response_item",
            json!({"type": "function_call", "name": "shell", "arguments": json!({"command": ["bash", "-lc", "rg -n println src"], "workdir": "/w/codex"}).to_string(), "call_id": "call_sh"}),
        ),
        item("event_msg", count(100, 80, 10)),
        item(
            "response_item",
            json!({"type": "function_call_output", "call_id": "call_sh", "output": json!({"output": "src/main.rs:2: println!(\"old\");\n", "metadata": {"exit_code": 0}}).to_string()}),
        ),
        item(
            "response_item",
            json!({"type": "custom_tool_call", "name": "apply_patch", "input": patch, "call_id": "call_patch"}),
        ),
        item(
            "response_item",
            json!({"type": "custom_tool_call_output", "call_id": "call_patch", "output": "Success. Updated the following files:\nM src/main.rs\n"}),
        ),
        // Counted after the output; a repeat of it adds nothing.
        item("event_msg", count(250, 180, 30)),
        item("event_msg", count(250, 180, 30)),
        item(
            "response_item",
            json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Say when done"}]}),
        ),
        item(
            "response_item",
            json!({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Done."}]}),
        ),
        item("event_msg", count(400, 300, 45)),
        item(
            "compacted",
            json!({"message": format!("Summary: main.rs prints new {HOSTILE}"), "replacement_history": []}),
        ),
    ];
    std::fs::write(
        codex_dir.join(format!("rollout-2026-01-18T11-00-00-{CODEX_ID}.jsonl")),
        lines.join("\n") + "\n",
    )
    .unwrap();
}
