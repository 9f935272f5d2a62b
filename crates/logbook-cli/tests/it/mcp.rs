//! `logbook mcp`: the real binary as a child process, spoken to as an MCP
//! client does (JSON-RPC lines on stdio, by hand, so that garbage can be
//! sent too). Results are compared with the CLI's `--json` output of the
//! same operation.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{TestProject, sentence, shared_text};

/// How long a test waits for an answer it is owed.
const ANSWER_WAIT: Duration = Duration::from_secs(60);

/// One `logbook mcp` process, initialized.
pub(crate) struct Mcp {
    child: Child,
    /// `None` once the test closed it (the end of the server's input).
    stdin: Option<ChildStdin>,
    /// stdout's lines, read by a thread of their own so that a missing
    /// answer fails the test after a while instead of hanging it.
    lines: Receiver<String>,
    next_id: u64,
    /// Responses read while waiting for another id (requests are answered
    /// concurrently, so out of order).
    early: HashMap<u64, Value>,
    init: Value,
}

impl Mcp {
    pub(crate) fn start(t: &TestProject) -> Mcp {
        let mut child = t
            .cmd(&["mcp"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start logbook mcp");
        let stdin = child.stdin.take();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let (send, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            while stdout.read_line(&mut line).is_ok_and(|n| n > 0) {
                if send.send(std::mem::take(&mut line)).is_err() {
                    break;
                }
            }
        });
        let mut m = Mcp {
            child,
            stdin,
            lines,
            next_id: 0,
            early: HashMap::new(),
            init: Value::Null,
        };
        let init = m.request(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "logbook-tests", "version": "1"}
            }),
        );
        m.init = init["result"].clone();
        m.send_raw(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string());
        m
    }

    pub(crate) fn send_raw(&mut self, line: &str) {
        self.send_bytes(line.as_bytes());
    }

    /// Sends one line of any bytes (not necessarily UTF-8).
    pub(crate) fn send_bytes(&mut self, line: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(line).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// Sends a request and returns its id without waiting.
    pub(crate) fn send(&mut self, method: &str, params: Value) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send_raw(&msg.to_string());
        id
    }

    /// The next answer (or error) from the server, skipping notifications,
    /// or `None` once `deadline` passes without one: for a test that
    /// asserts an answer comes soon, and fails instead of waiting longer.
    pub(crate) fn answer_by(&mut self, deadline: Instant) -> Option<Value> {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match self.lines.recv_timeout(left) {
                Ok(line) => line,
                Err(RecvTimeoutError::Timeout) => return None,
                Err(RecvTimeoutError::Disconnected) => panic!("the server closed stdout"),
            };
            let v: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"));
            if v.get("id").is_some() || v.get("error").is_some() {
                return Some(v);
            }
        }
    }

    /// The next message from the server (skipping notifications).
    pub(crate) fn read_message(&mut self) -> Value {
        loop {
            let line = match self.lines.recv_timeout(ANSWER_WAIT) {
                Ok(line) => line,
                Err(RecvTimeoutError::Timeout) => {
                    panic!("no answer from the server within {ANSWER_WAIT:?}")
                }
                Err(RecvTimeoutError::Disconnected) => panic!("the server closed stdout"),
            };
            let v: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"));
            if v.get("id").is_some() || v.get("error").is_some() {
                return v;
            }
        }
    }

    /// The answer to request `id`, read past (and kept) answers to others.
    pub(crate) fn wait(&mut self, id: u64) -> Value {
        if let Some(v) = self.early.remove(&id) {
            return v;
        }
        loop {
            let v = self.read_message();
            match v["id"].as_u64() {
                Some(got) if got == id => return v,
                Some(got) => {
                    self.early.insert(got, v);
                }
                None => panic!("error without id while waiting for {id}: {v}"),
            }
        }
    }

    pub(crate) fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send(method, params);
        self.wait(id)
    }

    /// `tools/call`; returns the whole result (content, structuredContent, isError).
    fn call(&mut self, tool: &str, args: Value) -> Value {
        let r = self.request("tools/call", json!({"name": tool, "arguments": args}));
        assert!(r.get("error").is_none(), "{tool}: protocol error {r}");
        r["result"].clone()
    }

    /// A call that must succeed; its structured content.
    #[track_caller]
    pub(crate) fn ok(&mut self, tool: &str, args: Value) -> Value {
        let r = self.call(tool, args.clone());
        assert_ne!(r["isError"], json!(true), "{tool} {args} failed: {r}");
        let s = r["structuredContent"].clone();
        assert!(s.is_object(), "{tool}: no structured content: {r}");
        // The text block carries the same JSON, for clients without
        // structured content.
        let text: Value = serde_json::from_str(r["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(text, s, "{tool}: text and structured content differ");
        s
    }

    /// A call that must fail as a tool result; its message.
    #[track_caller]
    pub(crate) fn err(&mut self, tool: &str, args: Value) -> String {
        let r = self.call(tool, args.clone());
        assert_eq!(r["isError"], json!(true), "{tool} {args} should fail: {r}");
        r["content"][0]["text"].as_str().unwrap().to_string()
    }
}

impl Drop for Mcp {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Tools INTERFACE.md already lists for work that has not landed (issue
/// 28: agents that resume and hand over through hooks). Each must still be
/// missing, so this list empties as they land rather than going stale.
const NOT_YET: &[&str] = &[];

/// The tool names INTERFACE.md promises.
fn promised_tools() -> Vec<String> {
    let text = shared_text("INTERFACE.md");
    let section = text
        .split("## MCP tools")
        .nth(1)
        .and_then(|s| s.split("```").nth(1))
        .expect("INTERFACE.md has an MCP tools block");
    section
        .split_whitespace()
        .filter(|w| w.chars().all(|c| c.is_ascii_lowercase() || c == '_') && w.contains('_'))
        .map(str::to_string)
        .collect()
}

pub(crate) fn project() -> TestProject {
    let mut t = TestProject::new();
    t.now = Some("2025-10-06T17:09:00.000Z".into());
    t
}

#[test]
fn initialize_names_the_server_and_lists_every_tool_with_schema_and_annotations() {
    let t = project();
    let mut m = Mcp::start(&t);
    assert_eq!(m.init["serverInfo"]["name"], "logbook");
    assert_eq!(m.init["serverInfo"]["version"], env!("CARGO_PKG_VERSION"));
    assert!(m.init["instructions"].as_str().unwrap().contains("resume"));
    for cap in ["tools", "resources", "prompts"] {
        assert!(m.init["capabilities"][cap].is_object(), "{cap}");
    }
    let tools = m.request("tools/list", json!({}))["result"]["tools"].clone();
    let tools: HashMap<String, Value> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["name"].as_str().unwrap().to_string(), t.clone()))
        .collect();
    let promised = promised_tools();
    assert!(promised.len() >= 28, "{promised:?}");
    for name in &promised {
        if NOT_YET.contains(&name.as_str()) {
            assert!(
                !tools.contains_key(name),
                "{name} has landed: take it off NOT_YET"
            );
            continue;
        }
        let tool = tools
            .get(name)
            .unwrap_or_else(|| panic!("tool {name} missing"));
        assert_eq!(tool["inputSchema"]["type"], "object", "{name}");
        assert!(
            tool["description"].as_str().unwrap().len() > 30,
            "{name} needs a description that says when to use it"
        );
        assert_eq!(tool["outputSchema"]["type"], "object", "{name}");
        let ann = &tool["annotations"];
        assert!(ann["readOnlyHint"].is_boolean(), "{name}: {ann}");
        // Every argument is described.
        for (arg, schema) in tool["inputSchema"]["properties"].as_object().unwrap() {
            assert!(
                schema["description"]
                    .as_str()
                    .is_some_and(|d| !d.is_empty()),
                "{name}.{arg} has no description"
            );
        }
    }
    let hint = |name: &str, h: &str| tools[name]["annotations"][h].clone();
    for q in [
        "session_status",
        "session_list",
        "session_tokens",
        "run_show",
        "find_runs",
        "latest_output",
        "run_lineage",
        "workflow_state",
        "transcript_load",
        "transcript_list",
    ] {
        assert_eq!(hint(q, "readOnlyHint"), json!(true), "{q}");
    }
    for d in ["session_close", "run_finish"] {
        assert_eq!(hint(d, "destructiveHint"), json!(true), "{d}");
        assert_eq!(hint(d, "readOnlyHint"), json!(false), "{d}");
    }
    for i in [
        "run_link",
        "run_register_output",
        "workflow_phase",
        "mode_set",
    ] {
        assert_eq!(hint(i, "idempotentHint"), json!(true), "{i}");
    }
    assert_eq!(hint("workflow_invoke", "idempotentHint"), json!(false));
    // Argument names are the CLI's options in snake_case.
    let props = |name: &str| {
        tools[name]["inputSchema"]["properties"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(
        props("run_register_output"),
        ["id", "file", "type", "description"]
    );
    assert!(props("workflow_complete").contains(&"handoff_to".to_string()));
    assert!(props("session_start").contains(&"max_tokens".to_string()));
}

/// Writes `rel` in a run folder.
fn write_run_file(folder: &str, rel: &str, text: &str) {
    let p = std::path::Path::new(folder).join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

#[test]
fn every_tool_answers_what_the_cli_prints() {
    let t = project();
    let mut m = Mcp::start(&t);

    // Work session.
    let s = m.ok(
        "session_start",
        json!({"client": "ACME", "project": "AUDIT", "max_tokens": 100000}),
    );
    let sid = s["session_id"].as_str().unwrap().to_string();
    assert_eq!(sid, "SES202510-ACME-AUDIT");
    assert_eq!(m.ok("session_status", json!({})), t.json(&["status"]));
    m.ok("session_update", json!({"current": 42000}));
    m.ok("session_update", json!({"add": 1000}));
    m.ok("session_update", json!({"milestone_add": "Design"}));
    m.ok("session_update", json!({"milestone_done": "Design"}));
    m.ok("session_update", json!({"milestone_add": "Build"}));
    m.ok(
        "session_update",
        json!({"artifact": "docs/design.md", "agent": "architect"}),
    );
    let after_note = m.ok("session_update", json!({"note": "chose SQLite"}));
    assert_eq!(after_note["tokens"]["current"], 43000);
    assert_eq!(after_note["milestones"][0]["name"], "Design");
    let spawned = m.ok("agent_spawn", json!({"agent_type": "analyst"}));
    let agent_id = spawned["id"].as_str().unwrap().to_string();
    assert_eq!(spawned, json!({"id": agent_id}));
    let done = m.ok("agent_done", json!({"id": agent_id, "tokens": 5000}));
    assert_eq!(done["tokens"]["saved"], 5000);
    assert_eq!(m.ok("session_tokens", json!({})), t.json(&["tokens"]));
    assert_eq!(m.ok("session_list", json!({})), t.json(&["list"]));
    assert_eq!(
        m.ok("session_list", json!({"archived": true})),
        t.json(&["list", "--archived"])
    );

    // Runs.
    let started = m.ok(
        "run_start",
        json!({"agent": "casey", "workflow": "deep-dive", "title": "Casey",
               "input": {"topic": "laptops"}, "tag": ["budget"]}),
    );
    let run = started["session_id"].as_str().unwrap().to_string();
    let folder = started["folder"].as_str().unwrap().to_string();
    assert_eq!(
        started["manifest"]["metadata"]["work_session"],
        sid.as_str()
    );
    assert_eq!(started["manifest"]["inputs"]["topic"], "laptops");
    write_run_file(&folder, "report.md", "# Laptop budget\nMoney matters.\n");
    let out = m.ok(
        "run_register_output",
        json!({"id": run, "file": "report.md", "type": "report", "description": "the findings"}),
    );
    assert_eq!(out["output"]["type"], "report");
    assert_eq!(
        out["path"],
        json!(format!("{folder}/report.md")),
        "absolute path"
    );
    assert_eq!(
        m.ok("run_show", json!({"id": &run[..8]})),
        t.json(&["run", "show", &run])
    );
    let second = m.ok("run_start", json!({"agent": "alex", "workflow": "intake"}));
    let run2 = second["session_id"].as_str().unwrap().to_string();
    let linked = m.ok("run_link", json!({"id": run2, "related_id": run}));
    assert_eq!(linked["manifest"]["related_sessions"], json!([run]));
    assert_eq!(
        m.ok("run_lineage", json!({"id": run})),
        t.json(&["lineage", &run])
    );
    let finished = m.ok("run_finish", json!({"id": run}));
    assert_eq!(finished["manifest"]["execution"]["status"], "completed");
    let found = m.ok("find_runs", json!({}));
    assert_eq!(found["runs"], t.json(&["find"]));
    assert_eq!(found["total"], 2);
    assert_eq!(found["totalExact"], true);
    assert_eq!(found["more"], 0);
    assert!(found.get("nextOffset").is_none(), "{found}");
    let by_text = m.ok("find_runs", json!({"text": "laptop budget"}));
    assert_eq!(
        by_text["runs"],
        t.json(&["find", "--text", "laptop budget"])
    );
    assert_eq!(by_text["runs"].as_array().unwrap().len(), 1);
    let paged = m.ok("find_runs", json!({"limit": 1}));
    assert_eq!(paged["more"], 1);
    assert_eq!(paged["nextOffset"], 1);
    assert_eq!(
        m.ok("latest_output", json!({"agent": "casey", "type": "report"})),
        t.json(&["latest-output", "--agent", "casey", "--type", "report"])
    );

    // Workflow.
    m.ok(
        "workflow_invoke",
        json!({"agent": "analyst", "prompt": "Research budgets", "context": {"run_id": run},
               "artifact": ["docs/brief.md"]}),
    );
    m.ok(
        "workflow_complete",
        json!({"agent": "analyst", "summary": "Found three options",
               "recommendation": ["option B"], "handoff_to": "architect", "reason": "design next"}),
    );
    m.ok(
        "workflow_decide",
        json!({"type": "technical", "description": "Use SQLite", "rationale": "local and fast",
               "by": "architect", "approved_by": ["critic"]}),
    );
    m.ok(
        "workflow_verdict",
        json!({"agent": "critic", "decision": "approve", "confidence": 0.8,
               "reasoning": "sound", "condition": ["benchmark it"]}),
    );
    m.ok(
        "workflow_handoff",
        json!({"from": "architect", "to": "implementer", "reason": "build it",
               "context": "schema in docs/design.md", "preserved_context": {"run_id": run}}),
    );
    m.ok("workflow_phase", json!({"phase": "implementation"}));
    let state = m.ok("mode_set", json!({"mode": "coding"}));
    assert_eq!(state["currentMode"], "coding");
    let version = state["version"].as_u64().unwrap();
    let conflict = m.err(
        "workflow_phase",
        json!({"phase": "validation", "expect_version": version - 1}),
    );
    assert!(conflict.contains("version"), "{conflict}");
    assert_eq!(
        m.ok("workflow_state", json!({})),
        t.json(&["workflow", "show"])
    );
    assert_eq!(
        m.ok("workflow_state", json!({"full": true})),
        t.json(&["workflow", "show", "--full"])
    );

    // Transcripts.
    let tid = "0b7e4c52-3f1a-4d8e-9c6b-2a5f8e1d7c30";
    let saved = m.ok(
        "transcript_save",
        json!({"transcript": {
            "id": tid, "timestamp": "2025-10-06T17:00:00.000Z",
            "messages": [{"role": "user", "blocks": [{"type": "text", "content": "hello"}]}],
            "metadata": {"workdir": t.root(), "startedAt": "2025-10-06T16:00:00.000Z",
                         "lastActiveAt": "2025-10-06T17:00:00.000Z", "latestTotalTokens": 1200}
        }, "run": run}),
    );
    assert_eq!(saved["id"], tid);
    assert_eq!(saved["kind"], "main");
    assert_eq!(saved["run"], run.as_str());
    assert_eq!(
        m.ok("transcript_load", json!({"id": &tid[..8]})),
        t.json(&["transcript", "show", tid])
    );
    let listed = m.ok("transcript_list", json!({}));
    assert_eq!(listed["transcripts"], t.json(&["transcript", "list"]));
    assert_eq!(listed["transcripts"].as_array().unwrap().len(), 1);
    assert_eq!(listed["transcripts"][0]["title"], "hello");
    assert_eq!(listed["transcripts"][0]["source"], "logbook");

    // Resume.
    let resume = m.ok("resume_context", json!({}));
    assert_eq!(resume, t.json(&["resume-context"]));
    let text = resume["text"].as_str().unwrap();
    for needle in [
        sid.as_str(),
        "Build",
        "docs/design.md",
        "report.md",
        "Active agent: architect",
        "Use SQLite",
        "critic approve",
        "architect -> implementer",
    ] {
        assert!(
            text.contains(needle),
            "resume text lacks {needle:?}:\n{text}"
        );
    }
}

#[test]
fn session_lifecycle_tools() {
    let t = project();
    let mut m = Mcp::start(&t);
    m.ok("session_start", json!({"client": "ACME", "project": "ONE"}));
    let refused = m.err("session_start", json!({"client": "ACME", "project": "TWO"}));
    assert!(refused.contains("yes"), "{refused}");
    // yes closes the active one first.
    let two = m.ok(
        "session_start",
        json!({"client": "ACME", "project": "TWO", "yes": true}),
    );
    let two = two["session_id"].as_str().unwrap().to_string();
    let paused = m.ok("session_pause", json!({}));
    assert_eq!(paused["status"], "paused");
    let resumed = m.ok("session_resume", json!({"id": two}));
    assert_eq!(resumed["status"], "active");
    m.ok("session_pause", json!({}));
    let three = m.ok(
        "session_start",
        json!({"client": "ACME", "project": "THREE"}),
    );
    assert_eq!(three["status"], "active");
    let switched = m.ok("session_switch", json!({"id": two}));
    assert_eq!(switched["session_id"], two.as_str());
    assert_eq!(switched["status"], "active");
    assert!(switched["context"].is_string());
    let closed = m.ok("session_close", json!({"summary": "done for now"}));
    assert_eq!(closed["status"], "closed");
    assert_eq!(closed["context_summary"], "done for now");
    let listed = m.ok("session_list", json!({}));
    assert_eq!(listed, t.json(&["list"]));
    assert_eq!(listed["archived"].as_array().unwrap().len(), 2);
    assert_eq!(listed["sessions"].as_array().unwrap().len(), 1);
    assert!(
        m.err("session_list", json!({"active": true, "archived": true}))
            .contains("at most one")
    );
}

/// `msg` is a tool error whose next step is the call `tool` (with its
/// arguments as given), and names no command line: an agent cannot run one.
fn names_the_tool(msg: &str, tool: &str) {
    assert!(msg.starts_with("error: "), "{msg}");
    assert!(msg.contains(tool), "expected {tool}: {msg}");
    assert_names_no_command(msg);
}

fn assert_names_no_command(msg: &str) {
    assert!(
        !msg.contains("`logbook") && !msg.contains("logbook ") && !msg.contains(" --"),
        "{msg}"
    );
}

#[test]
fn errors_name_the_tool_to_call_next_never_a_command() {
    let t = project();
    let mut m = Mcp::start(&t);
    // No active session: the CLI is told the command, the agent the tool.
    names_the_tool(&m.err("session_status", json!({})), "session_start");
    assert!(t.run(&["status"]).not_found().contains("`logbook start`"));
    names_the_tool(
        &m.err("workflow_state", json!({})),
        r#"session_resume {"id": "ID"}"#,
    );
    m.ok("session_start", json!({"client": "ACME", "project": "ONE"}));
    // A second session while one is active.
    names_the_tool(
        &m.err("session_start", json!({"client": "ACME", "project": "TWO"})),
        r#"session_start {"yes": true}"#,
    );
    // A run that does not exist, by its whole id, by a prefix, and an id
    // that is no id at all.
    let missing = "0b7e4c52-3f1a-4d8e-9c6b-2a5f8e1d7c30";
    for id in [missing, "0b7e4c52", "not-a-run"] {
        names_the_tool(&m.err("run_show", json!({"id": id})), "find_runs");
    }
    assert!(
        t.run(&["run", "show", "not-a-run"])
            .err()
            .contains("`logbook find` lists runs")
    );
    // A lost compare-and-swap on the workflow state: read it again.
    let version = m.ok("workflow_state", json!({}))["version"]
        .as_u64()
        .unwrap();
    let conflict = m.err(
        "workflow_phase",
        json!({"phase": "validation", "expect_version": version + 5}),
    );
    names_the_tool(&conflict, "workflow_state");
    // Completing an agent that was never invoked.
    names_the_tool(
        &m.err(
            "workflow_complete",
            json!({"agent": "analyst", "summary": "s"}),
        ),
        r#"workflow_invoke {"agent": "analyst", "prompt": "…"}"#,
    );
    // A milestone never added.
    names_the_tool(
        &m.err("session_update", json!({"milestone_done": "Deploy"})),
        r#"session_update {"milestone_add": "Deploy"}"#,
    );
    // A transcript that does not exist.
    names_the_tool(
        &m.err("transcript_load", json!({"id": missing})),
        "transcript_list",
    );
    // Outputs of a finished run.
    let run = m.ok("run_start", json!({"agent": "casey", "workflow": "w"}))["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    t.write(&format!("docs/agent-outputs/{run}/notes.md"), "# notes\n");
    m.ok("run_finish", json!({"id": run}));
    names_the_tool(
        &m.err(
            "run_register_output",
            json!({"id": run, "file": "notes.md", "type": "document", "description": "d"}),
        ),
        "run_link",
    );
    // A run linked to itself, and an enum value that is not one: no next
    // step to name, and still no command.
    assert_names_no_command(&m.err("run_link", json!({"id": run, "related_id": run})));
    let bad = m.err("find_runs", json!({"status": "sleeping"}));
    assert!(bad.contains("sleeping"), "{bad}");
    assert_names_no_command(&bad);
}

#[test]
fn failures_are_tool_errors_with_the_clis_message_and_the_server_keeps_serving() {
    let t = project();
    let mut m = Mcp::start(&t);
    // No session yet: the CLI's sentence, word for word, and a hint that
    // names tools instead of commands.
    let cli = t.run(&["status"]);
    let msg = m.err("session_status", json!({}));
    assert_eq!(sentence(&msg), sentence(cli.not_found()));
    assert!(
        msg.contains("session_start") && !msg.contains("`logbook"),
        "{msg}"
    );
    m.ok("session_start", json!({}));
    let missing = "0b7e4c52-3f1a-4d8e-9c6b-2a5f8e1d7c30";
    let msg = m.err("run_show", json!({"id": missing}));
    let cli = t.run(&["run", "show", missing]);
    assert_eq!(sentence(&msg), sentence(cli.not_found()));
    assert!(msg.contains("find_runs"), "{msg}");
    let msg = m.err("run_show", json!({"id": "abc"}));
    assert!(msg.starts_with("error: "), "{msg}");
    // Arguments that do not fit the schema.
    assert!(m.err("run_show", json!({})).contains("id"));
    assert!(m.err("run_show", json!({"id": 5})).starts_with("error"));
    assert!(
        m.err(
            "run_start",
            json!({"agent": "a", "workflow": "w", "tags": ["x"]})
        )
        .contains("tags")
    );
    let msg = m.err("workflow_invoke", json!({"agent": "nobody", "prompt": "x"}));
    assert!(
        msg.contains("nobody") && msg.contains("orchestrator"),
        "{msg}"
    );
    let msg = m.err(
        "workflow_verdict",
        json!({"agent": "critic", "decision": "approve", "confidence": 1.5, "reasoning": "r"}),
    );
    assert!(msg.contains("confidence"), "{msg}");
    assert!(m.err("session_update", json!({})).contains("exactly one"));
    assert!(
        m.err("find_runs", json!({"status": "sleeping"}))
            .contains("sleeping")
    );
    assert!(
        m.err("find_runs", json!({"workflow": "("}))
            .starts_with("error: ")
    );
    // Output paths are checked as `run output` checks them.
    let started = m.ok("run_start", json!({"agent": "a", "workflow": "w"}));
    let run = started["session_id"].as_str().unwrap().to_string();
    for bad in ["../x.md", "/etc/passwd", "manifest.json", "missing.md"] {
        let msg = m.err(
            "run_register_output",
            json!({"id": run, "file": bad, "type": "document", "description": "d"}),
        );
        assert!(msg.starts_with("error: "), "{bad}: {msg}");
    }
    // A corrupt file is an error for the call, not for the server.
    let state = t.path(".logbook/sessions");
    let sid = m.ok("session_status", json!({}))["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    std::fs::write(state.join(format!("{sid}.state.json")), "{ not json").unwrap();
    let msg = m.err("workflow_state", json!({}));
    assert!(msg.contains("state.json"), "{msg}");
    // Unknown tool.
    let r = m.request(
        "tools/call",
        json!({"name": "no_such_tool", "arguments": {}}),
    );
    assert!(
        r.get("error").is_some() || r["result"]["isError"] == json!(true),
        "{r}"
    );
    // Still serving.
    assert!(m.request("ping", json!({}))["result"].is_object());
    assert_eq!(
        m.ok("session_status", json!({}))["session_id"],
        sid.as_str()
    );
}

#[test]
fn every_unreadable_line_on_stdin_gets_its_error_with_a_null_id_and_the_server_keeps_serving() {
    let t = project();
    let mut m = Mcp::start(&t);
    // One answer per line, whatever it holds: -32700 for what is not one
    // JSON value, -32600 for JSON that is no request, both with a null id.
    let lines: [(&[u8], i64); 8] = [
        (b"this is not json {", -32700),
        (b"[1, 2", -32700),
        (b"\xff\xfe{\"jsonrpc\": \"2.0\"}", -32700),
        (br#""\ud800""#, -32700),
        (
            br#"{"jsonrpc":"2.0","id":1,"method":"ping"}{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
            -32700,
        ),
        (br#"{"hello": "world"}"#, -32600),
        (b"[]", -32600),
        (br#"{"jsonrpc":"2.0","id":0.5,"method":"ping"}"#, -32600),
    ];
    let mut codes = vec![];
    for (line, code) in lines {
        m.send_bytes(line);
        let err = m.read_message();
        assert_eq!(err["id"], Value::Null, "{err}");
        assert!(err.as_object().unwrap().contains_key("id"), "{err}");
        codes.push((err["error"]["code"].as_i64().unwrap(), code));
    }
    for (got, want) in codes {
        assert_eq!(got, want);
    }
    // Parameters that do not fit: -32602 with the request's own id.
    m.send_raw(r#"{"jsonrpc":"2.0","id":"p","method":"tools/call","params":5}"#);
    let err = m.read_message();
    assert_eq!(
        (err["id"].clone(), err["error"]["code"].clone()),
        (json!("p"), json!(-32602)),
        "{err}"
    );
    // An unknown tool: -32602, not a failed call.
    let r = m.request(
        "tools/call",
        json!({"name": "no_such_tool", "arguments": {}}),
    );
    assert_eq!(r["error"]["code"], -32602, "{r}");
    // An unknown method: method not found, with its id.
    let r = m.request("no/such/method", json!({}));
    assert_eq!(r["error"]["code"], -32601, "{r}");
    let r = m.request("ping", json!({}));
    assert!(r["result"].is_object(), "{r}");
    let tools = m.request("tools/list", json!({}));
    assert!(tools["result"]["tools"].as_array().unwrap().len() >= 28);
}

#[test]
fn a_garbage_last_line_is_answered_before_the_server_ends() {
    let t = project();
    let mut m = Mcp::start(&t);
    let mut stdin = m.stdin.take().unwrap();
    stdin.write_all(b"no newline and no json").unwrap();
    // Closing stdin ends the input: the answer still comes, then stdout ends.
    drop(stdin);
    let err = m.read_message();
    assert_eq!(err["error"]["code"], -32700, "{err}");
    assert_eq!(
        m.lines.recv_timeout(ANSWER_WAIT),
        Err(RecvTimeoutError::Disconnected),
        "stdout should end with the input"
    );
}

#[test]
fn run_files_are_resources_read_with_the_path_rules_of_run_output() {
    let t = project();
    let mut m = Mcp::start(&t);
    m.ok("session_start", json!({}));
    let started = m.ok(
        "run_start",
        json!({"agent": "casey", "workflow": "deep-dive"}),
    );
    let run = started["session_id"].as_str().unwrap().to_string();
    let folder = started["folder"].as_str().unwrap().to_string();
    write_run_file(&folder, "notes/first draft.md", "draft text\n");
    m.ok(
        "run_register_output",
        json!({"id": run, "file": "notes/first draft.md", "type": "document", "description": "draft"}),
    );
    t.write("secret.txt", "outside the run\n");
    std::os::unix::fs::symlink(t.path("secret.txt"), format!("{folder}/escape.txt")).unwrap();

    let list = m.request("resources/list", json!({}))["result"].clone();
    let uris: Vec<&str> = list["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    let uri = format!("logbook://runs/{run}/notes/first%20draft.md");
    assert!(uris.contains(&uri.as_str()), "{uris:?}");
    assert!(uris.contains(&"logbook://session/resume"), "{uris:?}");

    let read = m.request("resources/read", json!({"uri": uri}));
    assert_eq!(
        read["result"]["contents"][0]["text"], "draft text\n",
        "{read}"
    );
    assert_eq!(read["result"]["contents"][0]["mimeType"], "text/markdown");

    for bad in [
        format!("logbook://runs/{run}/../{run}/manifest.json"),
        format!("logbook://runs/{run}/manifest.json"),
        format!("logbook://runs/{run}/escape.txt"),
        format!("logbook://runs/{run}/%2e%2e/%2e%2e/secret.txt"),
        format!("logbook://runs/{run}/nope.md"),
        "logbook://elsewhere".to_string(),
    ] {
        let r = m.request("resources/read", json!({"uri": bad}));
        assert!(r.get("error").is_some(), "{bad} should be refused: {r}");
        assert!(!r.to_string().contains("outside the run\\n"), "{bad}: {r}");
    }

    let resume = m.request("resources/read", json!({"uri": "logbook://session/resume"}));
    let text = resume["result"]["contents"][0]["text"].as_str().unwrap();
    assert!(text.contains("first draft.md"), "{text}");

    let templates = m.request("resources/templates/list", json!({}));
    assert_eq!(
        templates["result"]["resourceTemplates"][0]["uriTemplate"],
        "logbook://runs/{uuid}/{path}"
    );
}

#[test]
fn the_resource_listing_is_paged() {
    let t = project();
    let mut m = Mcp::start(&t);
    for i in 0..25 {
        let s = m.ok(
            "run_start",
            json!({"agent": "a", "workflow": format!("w{i}")}),
        );
        let folder = s["folder"].as_str().unwrap().to_string();
        write_run_file(&folder, "out.md", "x");
        m.ok(
            "run_register_output",
            json!({"id": s["session_id"], "file": "out.md", "type": "document", "description": "d"}),
        );
    }
    let first = m.request("resources/list", json!({}))["result"].clone();
    let cursor = first["nextCursor"]
        .as_str()
        .expect("a next page")
        .to_string();
    let n1 = first["resources"].as_array().unwrap().len();
    let second = m.request("resources/list", json!({"cursor": cursor}))["result"].clone();
    let n2 = second["resources"].as_array().unwrap().len();
    assert!(second.get("nextCursor").is_none(), "{second}");
    // The resume summary plus one output per run, over two pages.
    assert_eq!(n1 + n2, 26);
    assert!(n1 < 26);
}

#[test]
fn the_resume_prompt_is_resume_context() {
    let t = project();
    let mut m = Mcp::start(&t);
    let s = m.ok(
        "session_start",
        json!({"client": "ACME", "project": "AUDIT"}),
    );
    let sid = s["session_id"].as_str().unwrap().to_string();
    m.ok("session_update", json!({"milestone_add": "Ship it"}));
    m.ok(
        "workflow_invoke",
        json!({"agent": "planner", "prompt": "Plan the release"}),
    );
    let none = m.request(
        "prompts/get",
        json!({"name": "resume", "arguments": {"session": "SES202510-ACME-NONE"}}),
    );
    let none = none["result"]["messages"][0]["content"]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{none}"))
        .to_string();
    assert!(
        none.contains("nothing to resume") && none.contains("SES202510-ACME-NONE"),
        "{none}"
    );
    let prompts = m.request("prompts/list", json!({}));
    let p = &prompts["result"]["prompts"][0];
    assert_eq!(p["name"], "resume");
    let args: Vec<&str> = p["arguments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(args, ["session", "detail"]);

    let got = m.request(
        "prompts/get",
        json!({"name": "resume", "arguments": {"session": sid, "detail": "full"}}),
    );
    let text = got["result"]["messages"][0]["content"]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{got}"))
        .to_string();
    let cli = t.run(&["resume-context", "--session", &sid, "--detail", "full"]);
    // The resume context, then the agent to resume (none recorded here).
    let (context, agent) = text.trim_end().rsplit_once('\n').unwrap();
    assert!(
        context.trim_end().ends_with(cli.ok().trim_end()),
        "prompt:\n{text}\ncli:\n{}",
        cli.stdout
    );
    assert!(
        agent.starts_with("No Claude Code or Codex session"),
        "{agent}"
    );
    assert!(text.contains("Ship it") && text.contains("Active agent: planner"));
    assert_eq!(
        t.run(&["resume-context"]).ok(),
        t.run(&["resume-context", "--session", &sid]).ok()
    );

    let bad = m.request(
        "prompts/get",
        json!({"name": "resume", "arguments": {"detail": "loud"}}),
    );
    assert!(bad.get("error").is_some(), "{bad}");
    let bad = m.request("prompts/get", json!({"name": "other"}));
    assert!(bad.get("error").is_some(), "{bad}");
}

#[test]
fn a_workflow_recorded_through_one_server_reads_back_identically_through_the_next() {
    let t = project();
    let before = {
        let mut m = Mcp::start(&t);
        m.ok(
            "session_start",
            json!({"client": "ACME", "project": "AUDIT"}),
        );
        // Enough invocations to compact the history into an archive.
        for i in 0..12 {
            m.ok(
                "workflow_invoke",
                json!({"agent": "implementer", "prompt": format!("step {i}")}),
            );
            m.ok(
                "workflow_complete",
                json!({"agent": "implementer", "summary": format!("did {i}")}),
            );
        }
        m.ok(
            "workflow_decide",
            json!({"type": "scope", "description": "cut X", "rationale": "time", "by": "planner"}),
        );
        m.ok(
            "workflow_verdict",
            json!({"agent": "qa", "decision": "conditional", "confidence": 0.6, "reasoning": "flaky"}),
        );
        m.ok(
            "workflow_handoff",
            json!({"from": "qa", "to": "implementer", "reason": "fix flakes"}),
        );
        m.ok("workflow_state", json!({"full": true}))
    };
    let wf = &before["orchestratorWorkflow"];
    assert!(
        !wf["compactionHistory"].as_array().unwrap().is_empty(),
        "{wf}"
    );
    assert_eq!(before["fullHistory"].as_array().unwrap().len(), 12);
    let mut again = Mcp::start(&t);
    assert_eq!(again.ok("workflow_state", json!({"full": true})), before);
    let resume = again.ok("resume_context", json!({}));
    assert!(
        resume["text"]
            .as_str()
            .unwrap()
            .contains("qa -> implementer")
    );
}

#[test]
fn a_run_the_cli_writes_is_found_by_a_running_server_at_once() {
    let t = project();
    let mut m = Mcp::start(&t);
    assert_eq!(m.ok("find_runs", json!({}))["total"], 0);
    let started = t.json(&["run", "start", "--agent", "cli", "--workflow", "fresh"]);
    let found = m.ok("find_runs", json!({"agent": "cli"}));
    assert_eq!(found["runs"][0]["session_id"], started["session_id"]);
    t.run(&["run", "finish", started["session_id"].as_str().unwrap()])
        .ok();
    let found = m.ok("find_runs", json!({"status": "completed"}));
    assert_eq!(found["total"], 1);
}

#[test]
fn a_run_another_program_finishes_in_place_is_seen_by_the_very_next_find_runs() {
    let t = project();
    let mut m = Mcp::start(&t);
    let mut folders = vec![];
    for agent in ["in-place", "renamed"] {
        let started = t.json(&["run", "start", "--agent", agent, "--workflow", "w"]);
        folders.push(std::path::PathBuf::from(
            started["folder"].as_str().unwrap(),
        ));
    }
    // Before a status filter decides, the server checks every running
    // run, several times here: it keeps their stamps between calls.
    for _ in 0..3 {
        assert_eq!(
            m.ok("find_runs", json!({"status": "completed"}))["total"],
            0
        );
    }
    let finished = |folder: &std::path::Path| -> String {
        let text = std::fs::read_to_string(folder.join("manifest.json")).unwrap();
        let mut v: Value = serde_json::from_str(&text).unwrap();
        v["execution"]["status"] = json!("completed");
        v["execution"]["completed_at"] = json!("2025-10-06T17:10:00.000Z");
        serde_json::to_string_pretty(&v).unwrap()
    };
    // Another program rewrites the first manifest in place, and at once
    // the next call sees the run finished.
    std::fs::write(folders[0].join("manifest.json"), finished(&folders[0])).unwrap();
    let done = m.ok("find_runs", json!({"status": "completed"}));
    assert_eq!(done["total"], 1, "{done}");
    assert_eq!(done["runs"][0]["manifest"]["agent"]["name"], "in-place");
    // The second by a new file renamed over it, as Logbook itself writes.
    let tmp = folders[1].join(".manifest.json.tmp");
    std::fs::write(&tmp, finished(&folders[1])).unwrap();
    std::fs::rename(&tmp, folders[1].join("manifest.json")).unwrap();
    assert_eq!(
        m.ok("find_runs", json!({"status": "completed"}))["total"],
        2
    );
    assert_eq!(m.ok("find_runs", json!({"status": "running"}))["total"], 0);
}

#[test]
fn a_config_written_edited_or_removed_while_the_server_runs_counts_from_the_next_call() {
    let t = project();
    t.run(&["init"]).ok();
    let mut m = Mcp::start(&t);
    let user_of = |m: &mut Mcp, agent: &str| -> Value {
        let started = m.ok("run_start", json!({"agent": agent, "workflow": "w"}));
        started["manifest"]["execution"]["user"].clone()
    };
    let before = user_of(&mut m, "first");
    // The server keeps the project it found between calls; a config
    // written since is read by the very next one, even one of the same
    // length written within the same second.
    let config = t.path("logbook.yaml");
    let kept = std::fs::read_to_string(&config).unwrap();
    assert!(kept.contains("user: ''"), "{kept}");
    std::fs::write(&config, kept.replace("user: ''", "user: ann")).unwrap();
    assert_eq!(user_of(&mut m, "second"), "ann");
    std::fs::write(&config, kept.replace("user: ''", "user: bob")).unwrap();
    assert_eq!(user_of(&mut m, "third"), "bob");
    std::fs::remove_file(&config).unwrap();
    assert_eq!(user_of(&mut m, "fourth"), before);
}

#[test]
fn four_servers_and_the_cli_writing_at_once_lose_nothing_and_duplicate_nothing() {
    let mut t = project();
    // Correctness, not speed, is checked here: on a loaded 2-core machine
    // 400 writes to one session file may queue for longer than the default.
    t.envs.push(("LOGBOOK_LOCK_TIMEOUT".into(), "120".into()));
    t.run(&["start", "--client", "ACME", "--project", "LOAD"])
        .ok();
    let mut servers: Vec<Mcp> = (0..4).map(|_| Mcp::start(&t)).collect();
    let per_server = 100;
    // Every server gets all its calls at once (they run concurrently inside
    // it too) while the CLI writes notes of its own.
    let mut pending = vec![];
    for (s, m) in servers.iter_mut().enumerate() {
        let mut ids = vec![];
        for i in 0..per_server {
            let id = match i % 4 {
                0 => m.send(
                    "tools/call",
                    json!({"name": "session_update", "arguments": {"note": format!("s{s}-n{i}")}}),
                ),
                1 => m.send(
                    "tools/call",
                    json!({"name": "workflow_decide", "arguments": {"type": "process",
                        "description": format!("s{s}-d{i}"), "rationale": "r", "by": "orchestrator"}}),
                ),
                2 => m.send(
                    "tools/call",
                    json!({"name": "run_start", "arguments": {"agent": format!("s{s}"),
                        "workflow": "load", "tag": [format!("s{s}-r{i}")]}}),
                ),
                _ => m.send(
                    "tools/call",
                    json!({"name": "find_runs", "arguments": {"limit": 5}}),
                ),
            };
            ids.push(id);
        }
        pending.push(ids);
    }
    let cli_notes = 10;
    for i in 0..cli_notes {
        t.run(&["note", &format!("cli-n{i}")]).ok();
    }
    for (m, ids) in servers.iter_mut().zip(pending) {
        for id in ids {
            let r = m.wait(id);
            assert_ne!(r["result"]["isError"], json!(true), "{r}");
            assert!(r.get("error").is_none(), "{r}");
        }
    }
    let status = t.json(&["status"]);
    let notes: Vec<&str> = status["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    let state = t.json(&["workflow", "show"]);
    let decisions: Vec<&str> = state["orchestratorWorkflow"]["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["description"].as_str().unwrap())
        .collect();
    let runs = t.json(&["find", "--workflow", "load", "--limit", "1000"]);
    let tags: Vec<String> = runs
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["manifest"]["tags"][0].as_str().unwrap().to_string())
        .collect();
    let agents_spawned = status["agents_spawned"].as_array().unwrap().len();
    for s in 0..4 {
        for i in 0..per_server {
            let (want, list): (String, Vec<&str>) = match i % 4 {
                0 => (format!("s{s}-n{i}"), notes.clone()),
                1 => (format!("s{s}-d{i}"), decisions.clone()),
                2 => (
                    format!("s{s}-r{i}"),
                    tags.iter().map(String::as_str).collect(),
                ),
                _ => continue,
            };
            let n = list.iter().filter(|x| **x == want).count();
            assert_eq!(n, 1, "{want} recorded {n} times");
        }
    }
    for i in 0..cli_notes {
        let want = format!("cli-n{i}");
        assert_eq!(notes.iter().filter(|x| **x == want).count(), 1, "{want}");
    }
    assert_eq!(notes.len(), 4 * per_server / 4 + cli_notes);
    assert_eq!(decisions.len(), 4 * per_server / 4);
    assert_eq!(tags.len(), 4 * per_server / 4);
    // Every run started while the session was active is linked to it once.
    assert_eq!(agents_spawned, 4 * per_server / 4);
}

#[test]
fn queries_on_other_connections_are_answered_while_a_write_waits_for_a_lock() {
    let mut t = project();
    t.envs.push(("LOGBOOK_LOCK_TIMEOUT".into(), "60".into()));
    let run = t.start_run("casey", "deep-dive", &[]);
    let id = run["session_id"].as_str().unwrap().to_string();
    let folder = run["folder"].as_str().unwrap().to_string();
    write_run_file(&folder, "report.md", "# Report\n");
    // Another process is in the middle of writing this run.
    let held = t.hold_run_lock(&id);
    let mut m = Mcp::start(&t);
    let mut other = Mcp::start(&t);
    let write = m.send(
        "tools/call",
        json!({"name": "run_register_output",
               "arguments": {"id": id, "file": "report.md", "type": "report",
                             "description": "the report"}}),
    );
    // A query sent after the write on the same connection waits for it
    // (issue 45); pings pass it, and another connection's queries go on.
    let later = m.send(
        "tools/call",
        json!({"name": "find_runs", "arguments": {"agent": "casey"}}),
    );
    for _ in 0..3 {
        assert!(m.request("ping", json!({})).get("result").is_some());
        let found = other.ok("find_runs", json!({"agent": "casey"}));
        assert_eq!(found["runs"][0]["session_id"], id.as_str());
        assert_eq!(found["runs"][0]["manifest"]["outputs"], json!([]));
        assert!(other.ok("run_show", json!({"id": id}))["manifest"].is_object());
    }
    for early in [write, later] {
        assert!(
            !m.early.contains_key(&early),
            "answered while another process held the run's lock: {:?}",
            m.early.get(&early)
        );
    }
    held.unlock().unwrap();
    let written = m.wait(write);
    assert_eq!(written["result"]["isError"], false, "{written}");
    let found = m.wait(later);
    assert_eq!(
        found["result"]["structuredContent"]["runs"][0]["manifest"]["outputs"][0]["file"],
        "report.md",
        "{found}"
    );
}

/// Issue 45: requests pipelined on one connection (all sent before the
/// first answer is read) see the writes sent before them, while reads with
/// no write between them still run side by side.
#[test]
fn a_pipelined_read_sees_the_write_sent_before_it() {
    let t = project();
    let mut m = Mcp::start(&t);
    for round in 0..5 {
        let agent = format!("pipelined-{round}");
        let ids: Vec<u64> = [
            json!({"name": "run_start",
                   "arguments": {"agent": agent, "workflow": "nightly-audit", "title": "Audit"}}),
            json!({"name": "find_runs", "arguments": {"agent": agent}}),
            json!({"name": "latest_output", "arguments": {"agent": agent}}),
            json!({"name": "find_runs", "arguments": {"agent": agent, "status": "running"}}),
        ]
        .into_iter()
        .map(|call| m.send("tools/call", call))
        .collect();
        let started = m.wait(ids[0]);
        let run = started["result"]["structuredContent"]["session_id"].clone();
        assert!(run.is_string(), "{started}");
        for read in [ids[1], ids[3]] {
            let found = m.wait(read);
            let runs = &found["result"]["structuredContent"]["runs"];
            assert_eq!(runs.as_array().map(Vec::len), Some(1), "{found}");
            assert_eq!(runs[0]["session_id"], run, "{found}");
        }
        // No output registered yet: a not-found answer, not a protocol error.
        let latest = m.wait(ids[2]);
        assert_eq!(latest["result"]["isError"], true, "{latest}");
    }
    // A write, then a write that needs it: the run is finished, not missing.
    let start = m.send(
        "tools/call",
        json!({"name": "run_start", "arguments": {"agent": "chained", "workflow": "w"}}),
    );
    let started = m.wait(start);
    let run = started["result"]["structuredContent"]["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    let finish = m.send(
        "tools/call",
        json!({"name": "run_finish", "arguments": {"id": run, "status": "completed"}}),
    );
    let show = m.send(
        "tools/call",
        json!({"name": "run_show", "arguments": {"id": run}}),
    );
    assert_eq!(m.wait(finish)["result"]["isError"], false);
    let shown = m.wait(show);
    assert_eq!(
        shown["result"]["structuredContent"]["manifest"]["execution"]["status"], "completed",
        "{shown}"
    );
}

#[test]
fn run_start_over_mcp_reads_workflow_files_only_inside_the_project_but_the_cli_reads_any() {
    let t = project();
    // A secrets file beside the project, YAML-shaped.
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("credentials.yaml");
    std::fs::write(&secret, "name: leak\naws_secret_access_key: s3cr3t-value\n").unwrap();
    std::os::unix::fs::symlink(&secret, t.path("linked.yaml")).unwrap();
    std::os::unix::fs::symlink(outside.path(), t.path("linked-dir")).unwrap();
    t.write(
        "wf/inside.yaml",
        "name: inside-wf\nreport: '{session_folder}/r.md'\n",
    );
    t.write(
        "wf/sourced.yaml",
        &format!("name: sourced\nconfig_source: '{}'\n", secret.display()),
    );
    let rel_up = format!(
        "../{}/credentials.yaml",
        outside.path().file_name().unwrap().to_str().unwrap()
    );
    let mut m = Mcp::start(&t);
    for path in [
        secret.to_str().unwrap(),
        rel_up.as_str(),
        "linked.yaml",
        "linked-dir/credentials.yaml",
        "wf/../../credentials.yaml",
        "wf/sourced.yaml",
    ] {
        let msg = m.err("run_start", json!({"agent": "a", "workflow_file": path}));
        assert!(
            msg.contains("inside the project root") && !msg.contains("s3cr3t"),
            "{path}: {msg}"
        );
    }
    // A file inside the project still works, by a relative path or an
    // absolute one.
    for path in ["wf/inside.yaml", t.path("wf/inside.yaml").to_str().unwrap()] {
        let started = m.ok("run_start", json!({"agent": "a", "workflow_file": path}));
        assert_eq!(
            started["manifest"]["workflow"]["name"], "inside-wf",
            "{path}"
        );
    }
    // Nothing was started by the refused calls.
    assert_eq!(t.json(&["find"]).as_array().unwrap().len(), 2);
    // The CLI's user may name any file.
    let out = t.json(&[
        "run",
        "start",
        "--agent",
        "a",
        "--workflow-file",
        secret.to_str().unwrap(),
    ]);
    assert_eq!(out["manifest"]["workflow"]["name"], "leak");
}

#[test]
fn tools_that_may_replace_or_close_what_was_recorded_say_they_are_destructive() {
    let t = project();
    let mut m = Mcp::start(&t);
    let tools = m.request("tools/list", json!({}))["result"]["tools"].clone();
    let hints: HashMap<String, Value> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_string(),
                t["annotations"].clone(),
            )
        })
        .collect();
    // session_start with yes closes the active session; transcript_save
    // replaces a stored transcript; registering again replaces the record.
    for d in [
        "session_start",
        "transcript_save",
        "run_register_output",
        "session_close",
        "run_finish",
    ] {
        assert_eq!(
            hints[d]["destructiveHint"],
            json!(true),
            "{d}: {}",
            hints[d]
        );
        assert_eq!(hints[d]["readOnlyHint"], json!(false), "{d}");
    }
    assert_eq!(hints["transcript_save"]["idempotentHint"], json!(true));
    // Every tool that writes says whether it may destroy; every other is
    // read-only; none reaches beyond the project.
    for (name, h) in &hints {
        assert_eq!(h["openWorldHint"], json!(false), "{name}");
        if h["readOnlyHint"] == json!(false) {
            assert!(h["destructiveHint"].is_boolean(), "{name}: {h}");
            assert!(h["idempotentHint"].is_boolean(), "{name}: {h}");
        }
    }
}

/// Issue 45: the protocols, the feature and the task are writable over MCP
/// too, each against an expected version like every workflow write.
#[test]
fn protocol_feature_and_task_tools_write_with_compare_and_swap() {
    let t = project();
    t.run(&[
        "start",
        "--client",
        "GLOBEX",
        "--project",
        "PORTAL",
        "--yes",
    ])
    .ok();
    let mut m = Mcp::start(&t);
    let s = m.ok(
        "workflow_protocol",
        json!({"protocol": "start", "evidence": ["branchVerified=main"],
               "evidence_object": {"contextLoaded": true}}),
    );
    assert_eq!(s["protocolStartComplete"], true);
    assert_eq!(
        s["protocolStartEvidence"],
        json!({"branchVerified": "main", "contextLoaded": true})
    );
    let v = s["version"].as_u64().unwrap();
    let lost = m.err(
        "workflow_feature",
        json!({"name": "sso-login", "expect_version": v + 5}),
    );
    assert!(lost.contains(&format!("but it is at {v}")), "{lost}");
    let s = m.ok(
        "workflow_feature",
        json!({"name": "sso-login", "expect_version": v}),
    );
    assert_eq!(s["activeFeature"], "sso-login");
    let s = m.ok("workflow_task", json!({"name": "qa:4"}));
    assert_eq!(s["activeTask"], "qa:4");
    let s = m.ok("workflow_task", json!({"name": ""}));
    assert!(s.get("activeTask").is_none(), "{s}");
    let s = m.ok("workflow_protocol", json!({"protocol": "end"}));
    assert_eq!(s["protocolEndComplete"], true);
    let bad = m.err("workflow_protocol", json!({"protocol": "halfway"}));
    assert!(bad.contains("halfway"), "{bad}");
    // What the server wrote, the CLI reads.
    let cli = t.json(&["workflow", "show"]);
    assert_eq!(cli["activeFeature"], "sso-login");
    assert_eq!(cli["protocolEndComplete"], true);
}
