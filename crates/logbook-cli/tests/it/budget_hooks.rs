//! Budgets that hold while the agent runs (issue 52): the hooks, driven
//! with the JSON payloads the agents send, warn at 🟡 and 🔴 of either
//! limit and, with `budget_action: block`, deny the next tool call once the
//! counted cost passed `--max-cost`; `budget --add-cost` lets it through.

use serde_json::Value;

use crate::cost::{MAIN, write_logs};
use crate::harness::TestProject;

/// `logbook hook` fed one event; its stdout, parsed (`Null` when empty).
fn hook(t: &TestProject, event: &str, extra: &str) -> Value {
    let payload = format!(
        r#"{{"session_id":"{MAIN}","cwd":"{}","hook_event_name":"{event}"{extra}}}"#,
        t.root().display()
    );
    crate::hooks::hook(t, &payload)
        .answer()
        .unwrap_or(Value::Null)
}

fn tool_call(t: &TestProject) -> Value {
    hook(
        t,
        "PreToolUse",
        r#","tool_name":"Bash","tool_input":{"command":"ls"}"#,
    )
}

/// A project with the logs imported and a work session of `max_cost`
/// dollars linked to the main session ($0.7915 counted).
fn project(max_cost: &str) -> TestProject {
    let t = TestProject::new();
    t.run(&["init"]).ok();
    let logs = write_logs(&t);
    t.json(&["transcript", "import", logs.to_str().unwrap()]);
    t.json(&[
        "start",
        "--yes",
        "--max-cost",
        max_cost,
        "--max-tokens",
        "10000000",
    ]);
    t.json(&["usage", "--from-transcript", MAIN]);
    t
}

fn block_in_config(t: &TestProject) {
    let yaml = t
        .read("logbook.yaml")
        .replace("budget_action: warn", "budget_action: block");
    t.write("logbook.yaml", &yaml);
}

#[test]
fn hooks_warn_at_yellow_and_red_and_never_block_by_default() {
    // 79 % of $1: nothing to say.
    let t = project("1");
    assert_eq!(hook(&t, "Stop", ""), Value::Null);
    // 88 % of $0.90: yellow; the turn's end says what is left.
    t.json(&[
        "start",
        "--yes",
        "--max-cost",
        "0.9",
        "--max-tokens",
        "10000000",
    ]);
    t.json(&["usage", "--from-transcript", MAIN]);
    let warn = hook(&t, "Stop", "");
    let msg = warn["systemMessage"].as_str().unwrap();
    assert!(msg.contains("$0.79 of $0.90"), "{msg}");
    assert!(msg.contains("$0.11 left"), "{msg}");
    let prompt = hook(&t, "UserPromptSubmit", r#","prompt":"go on""#);
    let ctx = prompt["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(ctx.contains("near its budget"), "{ctx}");
    // Past the limit ($0.50): red, but with the default action no tool call
    // is ever denied.
    t.json(&[
        "start",
        "--yes",
        "--max-cost",
        "0.5",
        "--max-tokens",
        "10000000",
    ]);
    t.json(&["usage", "--from-transcript", MAIN]);
    assert!(hook(&t, "Stop", "")["systemMessage"].is_string());
    assert_eq!(tool_call(&t), Value::Null);
}

#[test]
fn with_block_the_next_tool_call_is_denied_until_the_budget_is_raised() {
    let t = project("0.5");
    block_in_config(&t);
    let denied = tool_call(&t);
    let out = &denied["hookSpecificOutput"];
    assert_eq!(out["hookEventName"], "PreToolUse");
    assert_eq!(out["permissionDecision"], "deny");
    let reason = out["permissionDecisionReason"].as_str().unwrap();
    assert!(reason.contains("dollar budget"), "{reason}");
    assert!(reason.contains("$0.50"), "{reason}");
    assert!(reason.contains("add-cost"), "{reason}");
    // Gemini CLI's BeforeTool, in its own shape.
    let gemini = hook(&t, "BeforeTool", r#","tool_name":"shell""#);
    assert_eq!(gemini["decision"], "deny");
    // Every block is logged and shown by status.
    let s = t.json(&["status"]);
    assert_eq!(s["cost"]["blocked"], 2);
    assert_eq!(s["cost"]["blocks"][0]["tool"], "Bash");
    assert!(
        t.run(&["status"])
            .ok()
            .contains("Tool calls denied past the dollar limit: 2")
    );
    // Raised: the next call goes through.
    t.json(&["budget", "--add-cost", "1"]);
    assert_eq!(tool_call(&t), Value::Null);
}

#[test]
fn a_token_budget_never_blocks() {
    let t = TestProject::new();
    t.run(&["init"]).ok();
    let logs = write_logs(&t);
    t.json(&["transcript", "import", logs.to_str().unwrap()]);
    block_in_config(&t);
    // 318,101 tokens of a 1,000 budget and no dollar limit: red, not blocked.
    t.json(&["start", "--yes", "--max-tokens", "1000"]);
    t.json(&["usage", "--from-transcript", MAIN]);
    assert_eq!(t.json(&["status"])["indicator"], "critical");
    assert_eq!(tool_call(&t), Value::Null);
    assert!(hook(&t, "Stop", "")["systemMessage"].is_string());
}

#[test]
fn hooks_install_adds_pre_tool_use_only_with_block_and_the_status_line_once() {
    let t = TestProject::new();
    t.run(&["init"]).ok();
    t.json(&["hooks", "install", "claude-code", "--statusline"]);
    let settings: Value = serde_json::from_str(&t.read(".claude/settings.local.json")).unwrap();
    assert!(settings["hooks"].get("PreToolUse").is_none(), "{settings}");
    let line = settings["statusLine"]["command"].as_str().unwrap();
    assert!(line.ends_with(" statusline"), "{line}");
    // Someone's own status line is never overwritten.
    let mut own = settings.clone();
    own["statusLine"] = serde_json::json!({"type": "command", "command": "my-line"});
    t.write(".claude/settings.local.json", &own.to_string());
    block_in_config(&t);
    t.json(&["hooks", "install", "claude-code", "--statusline"]);
    let settings: Value = serde_json::from_str(&t.read(".claude/settings.local.json")).unwrap();
    assert_eq!(settings["statusLine"]["command"], "my-line");
    assert!(settings["hooks"]["PreToolUse"].is_array(), "{settings}");
}
