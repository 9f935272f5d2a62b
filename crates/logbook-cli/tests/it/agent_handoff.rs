//! `resume`'s agent line, `transcript resume` and `handoff --to`, on a
//! Claude Code log and a Codex log written here by hand (in the shapes of
//! the library's `agent_log` fixtures), each with tool calls, a failing
//! command and a file change, imported into the project.

use serde_json::{Value, json};

use crate::harness::TestProject;

pub(crate) const CLAUDE_ID: &str = "cccccccc-1111-4222-8333-444455556666";
pub(crate) const CODEX_ID: &str = "0199dddd-eeee-7fff-8000-111122223333";

/// A Claude Code session in the project's folder, at 10:00: it edits
/// `src/parse.rs`, runs `cargo test`, which fails, and says so.
pub(crate) fn claude_log(t: &TestProject) -> String {
    let cwd = t.root().to_string_lossy().into_owned();
    let line = |ty: &str, uuid: u32, ts: &str, message: Value| {
        json!({
            "parentUuid": null, "isSidechain": false, "userType": "external",
            "cwd": cwd, "gitBranch": "main", "version": "2.0.14",
            "sessionId": CLAUDE_ID, "type": ty, "message": message,
            "uuid": format!("00000000-0000-4000-8000-{uuid:012}"),
            "timestamp": format!("2026-01-18T10:00:{ts}.000Z"),
        })
        .to_string()
    };
    let assistant = |id: &str, content: Value| {
        json!({"id": id, "type": "message", "role": "assistant", "model": "claude-opus-4-5",
               "content": content,
               "usage": {"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}})
    };
    let lines = [
        line(
            "user",
            1,
            "01",
            json!({"role": "user", "content": "Make the parser strict"}),
        ),
        line(
            "assistant",
            2,
            "02",
            assistant(
                "msg_1",
                json!([
                    {"type": "text", "text": "Editing the parser."},
                    {"type": "tool_use", "id": "toolu_edit", "name": "Edit",
                     "input": {"file_path": format!("{cwd}/src/parse.rs"), "old_string": "a", "new_string": "b"}},
                    {"type": "tool_use", "id": "toolu_bash", "name": "Bash",
                     "input": {"command": "cargo test -p parser", "description": "Run the tests"}}
                ]),
            ),
        ),
        line(
            "user",
            3,
            "03",
            json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_edit", "content": "The file has been updated."},
                {"type": "tool_result", "tool_use_id": "toolu_bash", "content": "test strict ... FAILED", "is_error": true}
            ]}),
        ),
        line(
            "assistant",
            4,
            "04",
            assistant(
                "msg_2",
                json!([{"type": "text", "text": "The parser is strict now; test strict still fails."}]),
            ),
        ),
    ];
    let path = t.write(
        &format!("history/claude/{CLAUDE_ID}.jsonl"),
        &(lines.join("\n") + "\n"),
    );
    path.to_string_lossy().into_owned()
}

/// A Codex session in the project's folder, at 11:00 (after the Claude
/// one): it adds and moves files with `apply_patch`, runs `cargo build`
/// (exit 2) and `ls` (exit 0).
pub(crate) fn codex_log(t: &TestProject) -> String {
    let cwd = t.root().to_string_lossy().into_owned();
    let line = |s: u32, ty: &str, payload: Value| {
        json!({"timestamp": format!("2026-01-18T11:00:{s:02}.000Z"), "type": ty, "payload": payload})
            .to_string()
    };
    let item = |s: u32, payload: Value| line(s, "response_item", payload);
    let patch = "*** Begin Patch\n*** Add File: src/lexer.rs\n+pub fn lex() {}\n*** Update File: src/old.rs\n*** Move to: src/new.rs\n@@\n-a\n+b\n*** End Patch\n";
    let lines = [
        line(
            0,
            "session_meta",
            json!({"id": CODEX_ID, "timestamp": "2026-01-18T11:00:00.000Z", "cwd": cwd,
                   "originator": "codex_cli_rs", "cli_version": "0.50.0"}),
        ),
        line(
            1,
            "turn_context",
            json!({"cwd": cwd, "model": "gpt-5-codex"}),
        ),
        item(
            2,
            json!({"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": "<environment_context>\n  <cwd>/x</cwd>\n</environment_context>"}]}),
        ),
        item(
            3,
            json!({"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": "Split the lexer out of the parser"}]}),
        ),
        item(
            4,
            json!({"type": "custom_tool_call", "status": "completed", "call_id": "call_patch",
                   "name": "apply_patch", "input": patch}),
        ),
        item(
            5,
            json!({"type": "custom_tool_call_output", "call_id": "call_patch",
                   "output": "{\"output\":\"Success. Updated the following files:\\nA src/lexer.rs\\nM src/new.rs\\n\",\"metadata\":{\"exit_code\":0}}"}),
        ),
        item(
            6,
            json!({"type": "function_call", "name": "shell", "call_id": "call_build",
                   "arguments": "{\"command\":[\"bash\",\"-lc\",\"cargo build\"],\"workdir\":\"/x\"}"}),
        ),
        item(
            7,
            json!({"type": "function_call_output", "call_id": "call_build",
                   "output": "{\"output\":\"error[E0432]: unresolved import\",\"metadata\":{\"exit_code\":2,\"duration_seconds\":1.5}}"}),
        ),
        item(
            8,
            json!({"type": "function_call", "name": "exec_command", "call_id": "call_ls",
                   "arguments": "{\"cmd\":\"ls src\"}"}),
        ),
        item(
            9,
            json!({"type": "function_call_output", "call_id": "call_ls",
                   "output": "Exit code: 0\nWall time: 0.1 seconds\nOutput:\nlexer.rs\n"}),
        ),
        item(
            10,
            json!({"type": "message", "role": "assistant", "content": [
                {"type": "output_text", "text": "The lexer is split out; the build fails on an import."}]}),
        ),
    ];
    let path = t.write(
        &format!("history/codex/rollout-2026-01-18T11-00-00-{CODEX_ID}.jsonl"),
        &(lines.join("\n") + "\n"),
    );
    path.to_string_lossy().into_owned()
}

fn import(t: &TestProject, path: &str) {
    t.run(&["transcript", "import", path]).ok();
}

fn root(t: &TestProject) -> String {
    t.root().to_string_lossy().into_owned()
}

#[test]
fn resume_ends_with_the_latest_agent_session() {
    let t = TestProject::new();
    t.run(&["start", "--client", "ACME", "--project", "PARSER"])
        .ok();
    let none = t.json(&["resume", "--json"]);
    assert_eq!(none["agent_resume"], Value::Null, "{none:#}");
    assert!(none["session_id"].is_string());
    assert!(
        t.run(&["resume"])
            .ok()
            .contains("No Claude Code or Codex session")
    );

    import(&t, &claude_log(&t));
    let claude = t.json(&["resume", "--json"]);
    assert_eq!(
        claude["agent_resume"],
        json!({
            "agent": "claude-code",
            "session_id": CLAUDE_ID,
            "command": format!("claude --resume {CLAUDE_ID}"),
            "cwd": root(&t),
            "transcript_id": CLAUDE_ID,
        })
    );

    // The Codex session is later: it is the one to resume now.
    import(&t, &codex_log(&t));
    let codex = t.json(&["resume", "--json"]);
    assert_eq!(codex["agent_resume"]["agent"], "codex");
    assert_eq!(
        codex["agent_resume"]["command"],
        format!("codex resume {CODEX_ID}")
    );
    let human = t.run(&["resume"]);
    let last = human.ok().trim_end().lines().last().unwrap();
    assert!(
        last.starts_with("Resume the agent: cd ")
            && last.ends_with(&format!("&& codex resume {CODEX_ID}")),
        "{last}"
    );
}

#[test]
fn transcript_resume_names_the_agent_command() {
    let t = TestProject::new();
    import(&t, &claude_log(&t));
    import(&t, &codex_log(&t));
    let r = t.json(&["transcript", "resume", &CLAUDE_ID[..8], "--json"]);
    assert_eq!(r["command"], format!("claude --resume {CLAUDE_ID}"));
    assert_eq!(r["cwd"], root(&t));
    let human = t.run(&["transcript", "resume", CODEX_ID]);
    assert!(
        human.ok().contains(&format!("codex resume {CODEX_ID}")),
        "{}",
        human.stdout
    );

    // A seed 003 transcript saved by a tool, not imported from an agent log.
    let fixture = crate::harness::shared("fixtures/transcript-main.json");
    t.run(&["transcript", "import", fixture.to_str().unwrap()])
        .ok();
    let id = "6f1c2b9e-3d4a-4c5b-9e8f-1a2b3c4d5e6f";
    let seed: Value = serde_json::from_str(&crate::harness::shared_text(
        "fixtures/transcript-main.json",
    ))
    .unwrap();
    assert_eq!(seed["id"], id);
    let err = t.run(&["transcript", "resume", id]);
    let stderr = err.err();
    assert!(
        stderr.contains("was not imported from a Claude Code or Codex log")
            && stderr.contains("`logbook transcript list`"),
        "{stderr}"
    );
    t.run(&[
        "transcript",
        "resume",
        "ffffffff-ffff-4fff-8fff-ffffffffffff",
    ])
    .not_found();
}

#[test]
fn handoff_reads_the_other_agents_latest_session() {
    let t = TestProject::new();
    // Nothing of the other agent yet: not found, with what to do.
    let err = t.run(&["handoff", "--to", "codex"]);
    let stderr = err.not_found();
    assert!(
        stderr.contains("no claude-code session") && stderr.contains("hooks install claude-code"),
        "{stderr}"
    );
    // Wired into a hook, nothing to hand over is no failure: no answer.
    let hooked = t.run(&["handoff", "--to", "codex", "--hook"]);
    assert_eq!(hooked.ok(), "");

    import(&t, &claude_log(&t));
    import(&t, &codex_log(&t));
    t.run(&["start", "--client", "ACME", "--project", "PARSER"])
        .ok();
    t.run(&["milestone", "add", "Strict parser"]).ok();
    t.run(&["milestone", "add", "Lexer split"]).ok();
    t.run(&["milestone", "done", "Lexer split"]).ok();
    t.run(&[
        "workflow",
        "handoff",
        "implementer",
        "qa",
        "--reason",
        "Test the strict mode",
        "--context",
        "see parse.rs",
    ])
    .ok();

    let to_codex = t.json(&["handoff", "--to", "codex", "--json"]);
    assert_eq!(to_codex["from"], "claude-code");
    assert_eq!(to_codex["to"], "codex");
    assert_eq!(to_codex["resume"]["session_id"], CLAUDE_ID);
    assert_eq!(to_codex["goal"], "Make the parser strict");
    assert_eq!(to_codex["files_changed"], json!(["src/parse.rs"]));
    assert_eq!(
        to_codex["commands"],
        json!([{"command": "cargo test -p parser", "failed": true, "exit_code": null}])
    );
    assert_eq!(to_codex["open_milestones"], json!(["Strict parser"]));
    assert_eq!(
        to_codex["pending_handoffs"][0]["reason"],
        "Test the strict mode"
    );
    assert_eq!(
        to_codex["last_assistant_message"],
        "The parser is strict now; test strict still fails."
    );
    let text = to_codex["text"].as_str().unwrap();
    for part in [
        "# Handoff from claude-code to codex",
        &format!("claude --resume {CLAUDE_ID}"),
        "## Goal\nMake the parser strict",
        "## Files changed (1)\n- src/parse.rs",
        "## Commands that failed (1)\n- `cargo test -p parser` (failed)",
        "## Open milestones (1)\n- Strict parser",
        "- implementer -> qa: Test the strict mode (context: see parse.rs)",
        "## Last assistant message\nThe parser is strict now",
    ] {
        assert!(text.contains(part), "{part:?} missing from:\n{text}");
    }
    // The human output is the same text.
    assert_eq!(t.run(&["handoff", "--to", "codex"]).ok(), text);

    let to_claude = t.json(&["handoff", "--to", "claude-code", "--json"]);
    assert_eq!(to_claude["from"], "codex");
    assert_eq!(to_claude["goal"], "Split the lexer out of the parser");
    assert_eq!(
        to_claude["files_changed"],
        json!(["src/lexer.rs", "src/old.rs", "src/new.rs"])
    );
    assert_eq!(
        to_claude["commands"],
        json!([
            {"command": "cargo build", "failed": true, "exit_code": 2},
            {"command": "ls src", "failed": false, "exit_code": 0}
        ])
    );
    let text = to_claude["text"].as_str().unwrap();
    assert!(
        text.contains("## Commands that failed (1)\n- `cargo build` (exit 2)"),
        "{text}"
    );
    assert!(text.contains(&format!("codex resume {CODEX_ID}")), "{text}");
}

#[test]
fn handoff_hook_is_a_bounded_session_start_answer() {
    let t = TestProject::new();
    import(&t, &codex_log(&t));
    for max in ["600", "8192"] {
        // With and without --json: the hook's shape either way.
        for json_flag in [false, true] {
            let mut args = vec![
                "handoff",
                "--to",
                "claude-code",
                "--hook",
                "--max-bytes",
                max,
            ];
            if json_flag {
                args.push("--json");
            }
            let out: Value = t.json(&args);
            let hso = out["hookSpecificOutput"].as_object().unwrap();
            assert_eq!(hso.len(), 2, "{out:#}");
            assert_eq!(hso["hookEventName"], "SessionStart");
            let context = hso["additionalContext"].as_str().unwrap();
            assert!(context.len() <= max.parse().unwrap(), "{}", context.len());
            assert!(context.contains("Split the lexer"), "{context}");
            assert_eq!(out.as_object().unwrap().len(), 1);
        }
    }
    // A budget too small for the heading is refused.
    let err = t.run(&["handoff", "--to", "claude-code", "--max-bytes", "10"]);
    assert!(err.err().contains("max-bytes"), "{}", err.stderr);
    t.run(&["handoff", "--to", "gemini"]).usage();
}

#[test]
fn mcp_agent_resume_handoff_and_the_resume_prompt() {
    use crate::mcp::Mcp;
    let t = TestProject::new();
    t.run(&["start", "--client", "ACME", "--project", "PARSER"])
        .ok();
    let mut m = Mcp::start(&t);
    assert_eq!(
        m.ok("agent_resume", json!({})),
        json!({"agent_resume": null})
    );
    let resumed = m.ok("session_resume", json!({}));
    assert_eq!(resumed["agent_resume"], Value::Null, "{resumed:#}");
    let err = m.err("agent_handoff", json!({"to": "codex"}));
    assert!(
        err.starts_with("error: no claude-code session") && err.contains("transcript_list"),
        "{err}"
    );
    assert!(
        !err.contains("logbook "),
        "an agent's hint names tools: {err}"
    );
    let err = m.err("agent_handoff", json!({"to": "gemini"}));
    assert!(err.contains("claude-code or codex"), "{err}");

    import(&t, &claude_log(&t));
    import(&t, &codex_log(&t));
    // The latest agent session, or a named one: as `resume --json` and
    // `transcript resume --json` say it.
    let cli = t.json(&["resume", "--json"]);
    assert_eq!(
        m.ok("agent_resume", json!({}))["agent_resume"],
        cli["agent_resume"]
    );
    assert_eq!(
        m.ok("session_resume", json!({}))["agent_resume"],
        cli["agent_resume"]
    );
    let named = t.json(&["transcript", "resume", CLAUDE_ID, "--json"]);
    assert_eq!(
        m.ok("agent_resume", json!({"transcript_id": CLAUDE_ID}))["agent_resume"],
        named
    );
    let fixture = crate::harness::shared("fixtures/transcript-main.json");
    t.run(&["transcript", "import", fixture.to_str().unwrap()])
        .ok();
    let err = m.err(
        "agent_resume",
        json!({"transcript_id": "6f1c2b9e-3d4a-4c5b-9e8f-1a2b3c4d5e6f"}),
    );
    assert!(
        err.contains("transcript_list") && !err.contains("logbook "),
        "{err}"
    );

    let h = m.ok(
        "agent_handoff",
        json!({"to": "claude-code", "max_bytes": 1024}),
    );
    assert_eq!(
        h,
        t.json(&[
            "handoff",
            "--to",
            "claude-code",
            "--max-bytes",
            "1024",
            "--json"
        ])
    );
    assert_eq!(h["from"], "codex");
    assert!(h["text"].as_str().unwrap().len() <= 1024);
    assert!(
        m.err("agent_handoff", json!({"to": "codex", "max_bytes": 5}))
            .contains("max-bytes")
    );

    let prompt = m.request("prompts/get", json!({"name": "resume"}));
    let text = prompt["result"]["messages"][0]["content"]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{prompt}"));
    let last = text.trim_end().lines().last().unwrap();
    assert_eq!(
        last,
        format!(
            "Resume the agent: cd {} && codex resume {CODEX_ID}",
            root(&t)
        )
    );
}

#[test]
fn an_unreadable_work_session_leaves_only_its_part_out() {
    let t = TestProject::new();
    import(&t, &codex_log(&t));
    let s = t.json(&["start", "--client", "ACME", "--project", "PARSER", "--json"]);
    let id = s["session_id"].as_str().unwrap();
    let file = t.path(&format!(".logbook/sessions/{id}.yaml"));
    assert!(file.exists(), "{}", file.display());
    std::fs::write(&file, "session_id: [unclosed\n").unwrap();
    let run = t.run(&["handoff", "--to", "claude-code", "--json"]);
    let h: Value = serde_json::from_str(run.ok()).unwrap();
    assert_eq!(h["goal"], "Split the lexer out of the parser");
    assert_eq!(h["work_session"], Value::Null);
    assert!(
        run.stderr.contains("leaves out the work session"),
        "{}",
        run.stderr
    );
}
