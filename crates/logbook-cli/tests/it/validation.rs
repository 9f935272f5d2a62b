//! One validation for every face: exit codes by kind (docs/interface.md), the
//! same refusal of bad query values from the CLI and MCP, query text the
//! full-text engine cannot take, and bounded free text.

use logbook::ops::params::FindParams;
use serde_json::json;

use crate::harness::{TestProject, sentence};
use crate::mcp::Mcp;

const UNKNOWN_RUN: &str = "0b7e4c52-3f1a-4d8e-9c6b-2a5f8e1d7c30";
/// 2^63: one more than SQLite's largest integer.
const TOO_LARGE: &str = "9223372036854775808";
const LIMIT: usize = 64 * 1024;

fn project() -> TestProject {
    let mut t = TestProject::new();
    t.now = Some("2025-10-06T17:09:00.000Z".into());
    t
}

#[test]
fn what_does_not_exist_exits_4() {
    let t = project();
    let shown = t.run(&["run", "show", UNKNOWN_RUN]);
    assert!(shown.not_found().contains(UNKNOWN_RUN));
    t.run(&["status", "SES202510-ACME-NONE"]).not_found();
    t.run(&["transcript", "import", "no-such-file.jsonl"])
        .not_found();
    // A prefix that matches nothing is not found either; a bad value is 1.
    t.run(&["run", "show", "0b7e4c52"]).not_found();
    t.run(&["find", "--since", "yesterday"]).err();
}

#[test]
fn a_lost_compare_and_swap_exits_3() {
    let t = project();
    t.json(&["start", "--client", "ACME", "--project", "AUDIT"]);
    t.json(&["workflow", "invoke", "analyst", "--prompt", "a"]);
    let lost = t.run(&[
        "workflow",
        "invoke",
        "qa",
        "--prompt",
        "q",
        "--expect-version",
        "1",
    ]);
    assert!(
        lost.conflict().contains("expected version 1"),
        "{}",
        lost.stderr
    );
}

#[test]
fn a_lock_not_had_in_time_exits_3() {
    let mut t = project();
    let run = t.start_run("casey", "deep-dive", &[]);
    let id = run["session_id"].as_str().unwrap().to_string();
    // Another process is in the middle of writing this run.
    let held = t.hold_run_lock(&id);
    t.envs.push(("LOGBOOK_LOCK_TIMEOUT".into(), "0.2".into()));
    let waited = t.run(&["run", "finish", &id]);
    assert!(waited.conflict().contains("timed out"), "{}", waited.stderr);
    held.unlock().unwrap();
    t.run(&["run", "finish", &id]).ok();
}

#[test]
fn an_index_held_by_another_writer_is_a_conflict_that_exits_3() {
    let mut t = project();
    t.start_run("casey", "deep-dive", &[]);
    // Another process is in the middle of a write to the index.
    let held = rusqlite::Connection::open(t.path(".logbook/index.db")).unwrap();
    held.execute_batch("BEGIN EXCLUSIVE").unwrap();
    // The index's wait follows the lock timeout, as the hint says.
    t.envs.push(("LOGBOOK_LOCK_TIMEOUT".into(), "0.2".into()));
    let busy = t.run(&["index", "sync"]);
    let err = busy.conflict();
    assert!(
        err.starts_with("error: index ") && err.contains("database is locked"),
        "{err}"
    );
    assert!(err.contains("LOGBOOK_LOCK_TIMEOUT"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    held.execute_batch("COMMIT").unwrap();
    t.run(&["index", "sync"]).ok();
}

#[test]
fn bad_query_values_get_the_same_first_line_from_the_cli_and_mcp() {
    let t = project();
    t.start_run("casey", "deep-dive", &[]);
    let mut m = Mcp::start(&t);
    for (option, value, field) in [
        ("--status", "bogus", "status"),
        ("--limit", TOO_LARGE, "limit"),
        ("--offset", TOO_LARGE, "offset"),
    ] {
        let cli = t.run(&["find", option, value]);
        let cli = sentence(cli.err());
        assert!(
            cli.starts_with(&format!("invalid {field} \"{value}\"")),
            "{cli}"
        );
        // The library's sentence, which the web API answers 400 with.
        let mut params = FindParams::default();
        *match field {
            "status" => &mut params.status,
            "limit" => &mut params.limit,
            _ => &mut params.offset,
        } = Some(value.to_string());
        let library = params.query(logbook::clock::now()).unwrap_err();
        assert_eq!(cli, library.to_string());
        let args = match field {
            "status" => json!({ "status": value }),
            _ => json!({ field: value.parse::<u64>().unwrap() }),
        };
        let mcp = m.err("find_runs", args);
        assert_eq!(sentence(&mcp), cli, "{mcp}");
    }
    // The largest count SQLite takes is still a count.
    t.run(&["find", "--limit", "9223372036854775807"]).ok();
}

#[test]
fn query_text_is_searched_as_typed_or_refused_never_blamed_on_the_index() {
    let t = project();
    t.start_run("casey", "deep-dive", &["--input", "topic=laptop budget"]);
    // FTS5 syntax is searched for as typed, not read as syntax.
    for typed in ["-laptop*", "laptop:", "\"laptop", "budget)"] {
        let found = t.json(&["find", &format!("--text={typed}")]);
        assert_eq!(found.as_array().unwrap().len(), 1, "{typed}: {found}");
    }
    for typed in ["NEAR(laptop budget)", "\"", "*", ":", "-", "laptop OR"] {
        let found = t.run(&["find", &format!("--text={typed}")]);
        found.ok();
        assert!(
            !found.stderr.contains("rebuild"),
            "{typed}: {}",
            found.stderr
        );
    }
    // A NUL cannot come through argv; an agent can send one.
    let mut m = Mcp::start(&t);
    let refused = m.err("find_runs", json!({"text": "laptop\u{0}budget"}));
    assert!(refused.starts_with("error: invalid text"), "{refused}");
    assert!(!refused.contains("rebuild"), "{refused}");
    assert!(!refused.contains("index"), "{refused}");
    let found = m.ok("find_runs", json!({"text": "NEAR(laptop"}));
    assert!(found["runs"].is_array(), "{found}");
}

#[test]
fn free_text_above_64_kib_is_refused_in_the_cli_and_mcp_naming_field_and_limit() {
    let t = project();
    t.json(&["start", "--client", "ACME", "--project", "AUDIT"]);
    let at_limit = "n".repeat(LIMIT);
    let over = "n".repeat(LIMIT + 1);
    t.run(&["note", &at_limit]).ok();
    let refused = t.run(&["note", &over]);
    let msg = refused.err();
    assert!(msg.contains("note") && msg.contains("64 KiB"), "{msg}");
    assert!(
        msg.len() < 400,
        "the text is not echoed: {} bytes",
        msg.len()
    );
    let refused = t.run(&["milestone", "add", &over]);
    assert!(refused.err().contains("milestone name"));
    let refused = t.run(&["workflow", "invoke", "analyst", "--prompt", &over]);
    assert!(refused.err().contains("prompt"));
    let run = t.start_run("casey", "deep-dive", &[]);
    let id = run["session_id"].as_str().unwrap();
    std::fs::write(format!("{}/r.md", run["folder"].as_str().unwrap()), "r").unwrap();
    let refused = t.run(&[
        "run",
        "output",
        id,
        "r.md",
        "--type",
        "report",
        "--description",
        &over,
    ]);
    assert!(refused.err().contains("description"));

    let mut m = Mcp::start(&t);
    let refused = m.err("session_update", json!({ "note": over }));
    assert!(
        refused.contains("note") && refused.contains("64 KiB"),
        "{refused}"
    );
    // Worded for an agent: a tool to call, not a command to type.
    assert!(refused.contains("run_register_output"), "{refused}");
    assert!(!refused.contains("`logbook"), "{refused}");
    let refused = m.err(
        "workflow_verdict",
        json!({"agent": "qa", "decision": "approved", "confidence": 0.9,
               "reasoning": "ok", "condition": [over]}),
    );
    assert!(refused.contains("condition"), "{refused}");
    let notes = t.json(&["status"])["notes"].as_array().unwrap().len();
    assert_eq!(notes, 1, "only the note at the limit was kept");
}

#[test]
fn the_brief_resume_context_stays_within_16_kib_whatever_is_stored() {
    let t = project();
    t.json(&["start", "--client", "ACME", "--project", "AUDIT"]);
    let big = |c: char| c.to_string().repeat(60 * 1024);
    for i in 0..12 {
        t.run(&["milestone", "add", &format!("{i} {}", big('m'))])
            .ok();
        t.run(&["note", &format!("{i}\n{}", big('n'))]).ok();
        t.run(&["artifact", "add", &format!("{i}-{}", big('a'))])
            .ok();
    }
    t.run(&["workflow", "invoke", "analyst", "--prompt", &big('p')])
        .ok();
    let brief = t.run(&["resume-context"]);
    let text = brief.ok();
    assert!(text.len() <= 16 * 1024, "{} bytes", text.len());
    assert!(text.contains("# Resume: work session"), "{text}");
    assert!(
        text.trim_end().ends_with("shows everything]"),
        "says it was cut: {}",
        &text[text.len() - 300..]
    );
    assert!(text.contains("--detail full"));
    let json = t.json(&["resume-context"]);
    assert!(json["text"].as_str().unwrap().len() <= 16 * 1024);
    let mut m = Mcp::start(&t);
    let over_mcp = m.ok("resume_context", json!({}));
    assert!(over_mcp["text"].as_str().unwrap().len() <= 16 * 1024);
    // The full detail shows everything.
    let full = t.run(&["resume-context", "--detail", "full"]);
    assert!(full.ok().len() > 12 * 3 * 60 * 1024);
}
