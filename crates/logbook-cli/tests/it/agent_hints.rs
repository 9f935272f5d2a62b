//! What an agent is told never names a CLI command (issue 47): failures
//! and notices reach it over MCP and through `logbook hook`, and each next
//! step in them is a tool call or a person's step in words, never
//! `logbook …` or a `--flag` it might try to run.

use std::io::Write as _;
use std::process::Stdio;

use serde_json::{Value, json};

use crate::harness::TestProject;
use crate::mcp::{Mcp, project};

/// The subcommands a hint could name after `logbook `.
const SUBCOMMANDS: &[&str] = &[
    "start",
    "resume",
    "status",
    "close",
    "list",
    "run",
    "find",
    "archive",
    "unarchive",
    "delete",
    "doctor",
    "index",
    "transcript",
    "hooks",
    "hook",
    "secrets",
    "init",
    "demo",
    "team",
    "workflow",
    "milestone",
    "usage",
    "lineage",
    "latest-output",
    "mcp",
    "serve",
    "export",
];

/// Asserts `text`, something an agent reads, names no command: no
/// `logbook SUBCOMMAND` and no `--flag`.
#[track_caller]
fn names_no_command(what: &str, text: &str) {
    for sub in SUBCOMMANDS {
        assert!(
            !text.contains(&format!("logbook {sub}")),
            "{what} names `logbook {sub}`: {text}"
        );
    }
    assert!(!text.contains("`logbook"), "{what}: {text}");
    let flag = text
        .match_indices("--")
        .any(|(i, _)| text[i + 2..].starts_with(|c: char| c.is_ascii_lowercase()));
    assert!(!flag, "{what} spells a --flag: {text}");
}

/// Every text block of a tool result (the error, or the answer's
/// warnings): all the agent reads besides the JSON.
fn texts(result: &Value) -> Vec<String> {
    result["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b["text"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn call(m: &mut Mcp, tool: &str, args: Value) -> Value {
    let r = m.request("tools/call", json!({"name": tool, "arguments": args}));
    assert!(r.get("error").is_none(), "{tool}: protocol error {r}");
    r["result"].clone()
}

/// A call that must fail; every text of its result checked.
#[track_caller]
fn fails_without_a_command(m: &mut Mcp, tool: &str, args: Value) -> String {
    let r = call(m, tool, args.clone());
    assert_eq!(r["isError"], json!(true), "{tool} {args} should fail: {r}");
    for text in texts(&r) {
        names_no_command(&format!("{tool} {args}"), &text);
    }
    texts(&r).join("\n")
}

/// A call that must succeed with at least one warning; every text of its
/// result checked.
#[track_caller]
fn warns_without_a_command(m: &mut Mcp, tool: &str, args: Value) -> (Value, Vec<String>) {
    let r = call(m, tool, args.clone());
    assert_ne!(r["isError"], json!(true), "{tool} {args} failed: {r}");
    let warnings: Vec<String> = texts(&r)
        .into_iter()
        .filter(|t| t.starts_with("warning: "))
        .collect();
    assert!(!warnings.is_empty(), "{tool} {args}: no warning in {r}");
    for w in &warnings {
        names_no_command(&format!("{tool} {args}"), w);
    }
    (r["structuredContent"].clone(), warnings)
}

#[test]
fn failures_and_notices_over_mcp_name_tools_never_commands() {
    let mut t = project();
    // A held lock fails a write after a second, not a minute.
    t.envs.push(("LOGBOOK_LOCK_TIMEOUT".into(), "1".into()));
    let mut m = Mcp::start(&t);
    let missing = "0b7e4c52-3f1a-4d8e-9c6b-2a5f8e1d7c30";
    let mut seen = 0;
    let mut fails = |m: &mut Mcp, tool: &str, args: Value| {
        seen += 1;
        fails_without_a_command(m, tool, args)
    };
    let mut warned = 0;

    // No work session yet.
    let msg = fails(&mut m, "session_status", json!({}));
    assert!(msg.contains("session_start"), "{msg}");
    fails(&mut m, "workflow_state", json!({}));
    fails(&mut m, "session_close", json!({}));
    // Unknown run ids: whole, a prefix, and no id at all.
    for id in [missing, "0b7e4c52", "not-a-run"] {
        let msg = fails(&mut m, "run_show", json!({"id": id}));
        assert!(msg.contains("find_runs"), "{msg}");
    }
    fails(&mut m, "run_lineage", json!({"id": missing}));
    // Values that are not one of an enum's.
    fails(&mut m, "find_runs", json!({"status": "sleeping"}));
    fails(&mut m, "resume_context", json!({"detail": "everything"}));
    // A missing work session, by id.
    fails(
        &mut m,
        "session_status",
        json!({"id": "SES202501-NOPE-NOTHING"}),
    );
    fails(
        &mut m,
        "transcript_load",
        json!({"id": "11111111-2222-4333-8444-555566667777"}),
    );

    // With a session: a second one, a milestone never added, an agent
    // never invoked.
    let started = call(
        &mut m,
        "session_start",
        json!({"client": "ACME", "project": "ONE"}),
    );
    assert_ne!(started["isError"], json!(true), "{started}");
    let msg = fails(
        &mut m,
        "session_start",
        json!({"client": "ACME", "project": "TWO"}),
    );
    assert!(msg.contains("session_start"), "{msg}");
    fails(
        &mut m,
        "session_update",
        json!({"milestone_done": "Deploy"}),
    );
    fails(
        &mut m,
        "workflow_complete",
        json!({"agent": "analyst", "summary": "s"}),
    );

    // A run started with no bundle: a warning whose next step names the
    // option as a tool's argument, not as a flag.
    let (run, warnings) = warns_without_a_command(
        &mut m,
        "run_start",
        json!({"agent": "casey", "workflow": "w"}),
    );
    warned += warnings.len();
    assert!(
        warnings.iter().any(|w| w.contains("agent.bundle")),
        "{warnings:?}"
    );
    let id = run["session_id"].as_str().unwrap().to_string();
    let folder = run["folder"].as_str().unwrap().to_string();
    std::fs::write(format!("{folder}/notes.md"), "# notes\n").unwrap();

    // Another process holds the run's lock: the write gives up, and the
    // agent is told to retry, not to set an environment variable.
    let held = t.hold_run_lock(&id);
    let msg = fails(
        &mut m,
        "run_register_output",
        json!({"id": id, "file": "notes.md", "type": "document", "description": "d"}),
    );
    assert!(!msg.contains("LOGBOOK_LOCK_TIMEOUT"), "{msg}");
    held.unlock().unwrap();

    // A finished run takes no outputs, and a run does not build on itself.
    let finished = call(&mut m, "run_finish", json!({"id": id}));
    assert_ne!(finished["isError"], json!(true), "{finished}");
    let msg = fails(
        &mut m,
        "run_register_output",
        json!({"id": id, "file": "notes.md", "type": "document", "description": "d"}),
    );
    assert!(msg.contains("run_link"), "{msg}");
    fails(&mut m, "run_link", json!({"id": id, "related_id": id}));

    fails(&mut m, "run_link", json!({"id": id, "related_id": missing}));
    assert!(
        seen + warned >= 12,
        "only {seen} failures and {warned} notices driven"
    );
}

/// `logbook hook` fed one event on stdin; its stdout, all the agent reads.
fn hook(t: &TestProject, payload: &str) -> String {
    let mut child = t
        .cmd(&["hook"])
        .current_dir(t.root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn logbook hook");
    let _ = child.stdin.take().unwrap().write_all(payload.as_bytes());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "a hook always exits 0");
    String::from_utf8(out.stdout).unwrap()
}

fn session_start(t: &TestProject, source: &str) -> String {
    json!({
        "session_id": "aaaaaaaa-1111-4222-8333-444455556666",
        "transcript_path": t.path("home/.claude/projects/-proj/none.jsonl"),
        "cwd": t.root(),
        "hook_event_name": "SessionStart",
        "source": source,
    })
    .to_string()
}

#[test]
fn what_a_hook_tells_the_agent_names_no_command() {
    let t = TestProject::new();
    t.run(&["init"]).ok();
    // Events the hook cannot use, and one with no session to resume: no
    // answer, so nothing to misread.
    for payload in [
        "not json".to_string(),
        "[1, 2]".to_string(),
        json!({"hook_event_name": 5}).to_string(),
        session_start(&t, "compact"),
    ] {
        let out = hook(&t, &payload);
        names_no_command(&payload, &out);
    }
    // A resume context too long for the hook's budget is cut, and says how
    // to read the rest: as a tool call.
    std::fs::write(
        t.path("logbook.yaml"),
        std::fs::read_to_string(t.path("logbook.yaml"))
            .unwrap()
            .replace("hook_context_bytes: 8192", "hook_context_bytes: 2048"),
    )
    .unwrap();
    t.run(&["start", "--client", "ACME", "--project", "HOOKS", "--yes"])
        .ok();
    for i in 0..12 {
        t.run(&[
            "milestone",
            "add",
            &format!("milestone {i} {}", "x".repeat(900)),
        ])
        .ok();
    }
    for source in ["compact", "resume"] {
        let out = hook(&t, &session_start(&t, source));
        let answer: Value = serde_json::from_str(out.trim()).unwrap();
        let context = answer["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap();
        assert!(context.contains("[cut:"), "{context}");
        assert!(
            context.contains(r#"resume_context {"detail": "full"}"#),
            "{context}"
        );
        names_no_command(source, context);
    }
    // The CLI's own resume text names the command.
    let cli = t.run(&["resume-context"]);
    names_cli_command_if_cut(cli.ok());
}

/// The CLI's brief resume is cut at 16 KiB, which these milestones do not
/// reach; where it is cut, the note names the command.
fn names_cli_command_if_cut(text: &str) {
    if text.contains("[cut:") {
        assert!(
            text.contains("`logbook resume-context --detail full`"),
            "{text}"
        );
    }
}
