//! Workflow state (seed 004) through the real binary: operations, version
//! compare-and-swap, compaction and the full history, restarts, concurrent
//! writers and closing the work session.

use std::collections::HashSet;

use serde_json::Value;

use crate::harness::{TestProject, shared_text};

const SES: &str = "SES202601-ACME-FLOW";

fn project() -> TestProject {
    let mut t = TestProject::new();
    t.now = Some("2026-01-19T09:00:00.000Z".into());
    t.run(&["start", "--client", "ACME", "--project", "FLOW", "--yes"])
        .ok();
    t.now = None;
    t
}

fn state_path() -> String {
    format!(".logbook/sessions/{SES}.state.json")
}

fn pair(t: &TestProject, agent: &str, n: usize) -> Value {
    let prompt = format!("task {n}");
    t.json(&["workflow", "invoke", agent, "--prompt", &prompt]);
    t.json(&[
        "workflow",
        "complete",
        agent,
        "--summary",
        &format!("done {n}"),
    ])
}

fn wf(state: &Value) -> &Value {
    &state["orchestratorWorkflow"]
}

fn prompts(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|i| i["input"]["prompt"].as_str().unwrap().to_string())
        .collect()
}

fn expected(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("task {i}")).collect()
}

fn compacted_total(state: &Value) -> u64 {
    wf(state)["compactionHistory"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["count"].as_u64().unwrap())
        .sum()
}

#[test]
fn a_new_state_starts_in_analysis_at_version_1() {
    let t = project();
    let s = t.json(&["workflow", "show"]);
    assert_eq!(s["currentMode"], "analysis");
    assert_eq!(s["modeHistory"].as_array().unwrap().len(), 1);
    assert_eq!(s["version"], 1);
    assert_eq!(s["orchestratorWorkflow"], Value::Null);
    assert!(!t.path(&state_path()).exists(), "show must not write");
    let s = t.json(&["workflow", "invoke", "analyst", "--prompt", "Research"]);
    assert_eq!(s["version"], 2);
    assert_eq!(wf(&s)["workflowPhase"], "planning");
}

#[test]
fn invoke_complete_and_handoff_semantics() {
    let t = project();
    let s = t.json(&[
        "workflow",
        "invoke",
        "architect",
        "--prompt",
        "Design it",
        "--context",
        r#"{"run_id":"6f1c2b9e-3d4a-4c5b-9e8f-1a2b3c4d5e6f"}"#,
        "--artifact",
        "docs/prd.md",
        "--from",
        "planner",
    ]);
    let inv = &wf(&s)["agentHistory"][0];
    assert_eq!(inv["status"], "in_progress");
    assert_eq!(inv["completedAt"], Value::Null);
    assert_eq!(inv["output"], Value::Null);
    assert_eq!(inv["handoffFrom"], "planner");
    assert_eq!(
        inv["input"]["context"]["run_id"],
        "6f1c2b9e-3d4a-4c5b-9e8f-1a2b3c4d5e6f"
    );
    assert_eq!(inv["input"]["artifacts"][0], "docs/prd.md");
    assert_eq!(wf(&s)["activeAgent"], "architect");

    let s = t.json(&[
        "workflow",
        "complete",
        "architect",
        "--summary",
        "Designed",
        "--artifact",
        "docs/arch.md",
        "--recommendation",
        "Lock a separate file",
        "--handoff-to",
        "implementer",
        "--reason",
        "Ready to build",
    ]);
    let inv = &wf(&s)["agentHistory"][0];
    assert_eq!(inv["status"], "completed");
    assert!(inv["completedAt"].is_string());
    assert_eq!(inv["output"]["summary"], "Designed");
    assert_eq!(inv["output"]["recommendations"][0], "Lock a separate file");
    assert_eq!(inv["output"]["blockers"], serde_json::json!([]));
    assert_eq!(inv["handoffTo"], "implementer");
    assert_eq!(inv["handoffReason"], "Ready to build");
    assert_eq!(wf(&s)["activeAgent"], "implementer");
    let pending = &wf(&s)["pendingHandoffs"];
    assert_eq!(pending[0]["fromAgent"], "architect");
    assert_eq!(pending[0]["toAgent"], "implementer");
    assert_eq!(pending[0]["artifacts"][0], "docs/arch.md");

    // Invoking the target clears the handoff and records where work came from.
    let s = t.json(&["workflow", "invoke", "implementer", "--prompt", "Build"]);
    assert_eq!(wf(&s)["pendingHandoffs"], serde_json::json!([]));
    assert_eq!(wf(&s)["agentHistory"][1]["handoffFrom"], "architect");

    // Blockers make it blocked; no target hands back to the orchestrator.
    let s = t.json(&[
        "workflow",
        "complete",
        "implementer",
        "--summary",
        "Stuck",
        "--blocker",
        "No CI",
    ]);
    assert_eq!(wf(&s)["agentHistory"][1]["status"], "blocked");
    assert_eq!(wf(&s)["activeAgent"], "orchestrator");

    // Nothing in progress: a clear error.
    let err = t.run(&["workflow", "complete", "implementer", "--summary", "again"]);
    assert!(
        err.err()
            .contains("implementer has no invocation in progress"),
        "{}",
        err.stderr
    );

    // Explicit handoff, decision, verdict, phase, mode.
    let s = t.json(&[
        "workflow",
        "handoff",
        "implementer",
        "qa",
        "--reason",
        "Test it",
        "--context",
        "Run the crash tests",
        "--preserved-context",
        r#"{"branch":"flow"}"#,
    ]);
    assert_eq!(
        wf(&s)["pendingHandoffs"][0]["preservedContext"]["branch"],
        "flow"
    );
    let s = t.json(&[
        "workflow",
        "decide",
        "--type",
        "architectural",
        "--description",
        "Files are the truth",
        "--rationale",
        "Rebuildable",
        "--by",
        "architect",
        "--approved-by",
        "critic",
        "--approved-by",
        "high-level-advisor",
        "--rejected-by",
        "independent-thinker",
    ]);
    let d = &wf(&s)["decisions"][0];
    assert_eq!(d["type"], "architectural");
    assert_eq!(
        d["approvedBy"],
        serde_json::json!(["critic", "high-level-advisor"])
    );
    let id = d["id"].as_str().unwrap();
    assert_eq!(uuid::Uuid::parse_str(id).unwrap().get_version_num(), 4);
    let s = t.json(&[
        "workflow",
        "verdict",
        "critic",
        "--decision",
        "needs_revision",
        "--confidence",
        "0.25",
        "--reasoning",
        "Index repair untested",
        "--condition",
        "Test the repair",
    ]);
    let v = &wf(&s)["verdicts"][0];
    assert_eq!(v["confidence"], 0.25);
    assert_eq!(v["conditions"][0], "Test the repair");
    // Seed 004's Verdict has both lists: stored as [] when none were given.
    assert_eq!(v["blockers"], serde_json::json!([]), "{v}");
    let s = t.json(&["workflow", "phase", "validation"]);
    assert_eq!(wf(&s)["workflowPhase"], "validation");
    let s = t.json(&["mode", "coding"]);
    assert_eq!(s["currentMode"], "coding");
    assert_eq!(s["modeHistory"][1]["mode"], "coding");
    // The same mode again changes nothing.
    let again = t.json(&["mode", "coding"]);
    assert_eq!(again["version"], s["version"]);
}

#[test]
fn invalid_values_are_refused_with_the_valid_ones() {
    let t = project();
    let e = t.run(&["workflow", "invoke", "wizard", "--prompt", "x"]);
    let msg = e.usage();
    assert!(
        msg.contains("\"wizard\"")
            && msg.contains("pr-comment-responder")
            && msg.contains("high-level-advisor"),
        "{msg}"
    );
    let e = t.run(&[
        "workflow",
        "verdict",
        "qa",
        "--decision",
        "approve",
        "--confidence",
        "1.5",
        "--reasoning",
        "r",
    ]);
    assert!(
        e.usage().contains("confidence 1.5 is outside 0 to 1"),
        "{}",
        e.stderr
    );
    let e = t.run(&[
        "workflow",
        "verdict",
        "qa",
        "--decision",
        "maybe",
        "--confidence",
        "0.5",
        "--reasoning",
        "r",
    ]);
    assert!(e.usage().contains("needs_revision"), "{}", e.stderr);
    let e = t.run(&["mode", "dreaming"]);
    assert!(
        e.usage().contains("analysis, planning, coding, disabled"),
        "{}",
        e.stderr
    );
    let e = t.run(&["workflow", "phase", "done"]);
    assert!(
        e.usage()
            .contains("planning, implementation, validation, complete"),
        "{}",
        e.stderr
    );
    let e = t.run(&[
        "workflow",
        "decide",
        "--type",
        "political",
        "--description",
        "d",
        "--rationale",
        "r",
        "--by",
        "qa",
    ]);
    assert!(
        e.usage()
            .contains("architectural, technical, process, scope"),
        "{}",
        e.stderr
    );
    let e = t.run(&[
        "workflow",
        "invoke",
        "qa",
        "--prompt",
        "x",
        "--context",
        "[1]",
    ]);
    assert!(
        e.err().contains("--context must be a JSON object"),
        "{}",
        e.stderr
    );
    // Nothing was written by any of these.
    assert!(!t.path(&state_path()).exists());

    // A hand-edited state with a bad decision id is refused naming file and value.
    let bad = shared_text("fixtures/session-state.json")
        .replace("5c0e8a1d-2f3b-4c6d-8e9f-0a1b2c3d4e5f", "decision-1");
    t.write(&state_path(), &bad);
    let e = t.run(&["workflow", "show"]);
    let msg = e.err();
    assert!(
        msg.contains(&format!("{SES}.state.json")) && msg.contains("\"decision-1\" is not a UUID"),
        "{msg}"
    );
}

#[test]
fn expect_version_is_compare_and_swap() {
    let t = project();
    let s = t.json(&["workflow", "invoke", "analyst", "--prompt", "a"]);
    assert_eq!(s["version"], 2);
    let s = t.json(&[
        "workflow",
        "--expect-version",
        "2",
        "complete",
        "analyst",
        "--summary",
        "s",
    ]);
    assert_eq!(s["version"], 3);
    let e = t.run(&[
        "workflow",
        "invoke",
        "qa",
        "--prompt",
        "q",
        "--expect-version",
        "2",
    ]);
    let msg = e.conflict();
    assert!(msg.contains("expected version 2, but it is at 3"), "{msg}");
    assert_eq!(t.json(&["workflow", "show"])["version"], 3);
    let s = t.json(&["mode", "planning", "--expect-version", "3"]);
    assert_eq!(s["version"], 4);
}

#[test]
fn restart_reads_identical_state() {
    let t = project();
    t.json(&["workflow", "invoke", "analyst", "--prompt", "Research"]);
    t.json(&[
        "workflow",
        "complete",
        "analyst",
        "--summary",
        "Found",
        "--handoff-to",
        "architect",
    ]);
    t.json(&[
        "workflow",
        "decide",
        "--type",
        "scope",
        "--description",
        "d",
        "--rationale",
        "r",
        "--by",
        "orchestrator",
    ]);
    t.json(&[
        "workflow",
        "verdict",
        "critic",
        "--decision",
        "approve",
        "--confidence",
        "0.9",
        "--reasoning",
        "ok",
    ]);
    let last = t.json(&["mode", "planning"]);
    let first_read = t.json(&["workflow", "show"]);
    let second_read = t.json(&["workflow", "show", "--session", SES]);
    assert_eq!(first_read, last);
    assert_eq!(second_read, last);
    let on_disk: Value = serde_json::from_str(&t.read(&state_path())).unwrap();
    assert_eq!(on_disk, last);
    assert!(
        t.read(&state_path())
            .contains("\n  \"currentMode\": \"planning\""),
        "2-space JSON"
    );
}

#[test]
fn unknown_fields_and_key_order_survive_a_rewrite() {
    let t = project();
    let fixture = shared_text("fixtures/session-state.json").replacen(
        "\"currentMode\"",
        "\"x-editor\": {\"by\": \"hand\"},\n  \"currentMode\"",
        1,
    );
    t.write(&state_path(), &fixture);
    let s = t.json(&["workflow", "show"]);
    assert_eq!(s["version"], 27);
    let s = t.json(&[
        "workflow",
        "complete",
        "implementer",
        "--summary",
        "Built",
        "--handoff-to",
        "qa",
    ]);
    assert_eq!(s["version"], 28);
    let text = t.read(&state_path());
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["x-editor"]["by"], "hand");
    assert_eq!(v["activeFeature"], "session-state");
    assert_eq!(
        v["orchestratorWorkflow"]["verdicts"][0]["conditions"][0],
        "Crash between file and index write is repaired on open"
    );
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(keys[0], "x-editor", "key order kept: {keys:?}");
    // The fixture's own archive does not exist here: --full says so clearly
    // on stderr and still shows the invocations it has.
    let e = t.run(&["--json", "workflow", "show", "--full"]);
    let full = e.json();
    assert!(
        e.stderr.contains("compactionHistory[0] is missing"),
        "{}",
        e.stderr
    );
    assert!(full["fullHistory"].is_array(), "{full}");
}

#[test]
fn histories_of_8_and_10_do_not_compact() {
    for n in [8, 10] {
        let t = project();
        let mut s = Value::Null;
        for i in 0..n {
            s = pair(&t, "analyst", i);
        }
        assert_eq!(wf(&s)["agentHistory"].as_array().unwrap().len(), n);
        assert_eq!(wf(&s)["compactionHistory"], serde_json::json!([]));
        assert!(!t.path(&format!(".logbook/sessions/{SES}.history")).exists());
    }
}

#[test]
fn histories_of_11_and_15_compact_and_full_reproduces_the_sequence() {
    for n in [11, 15] {
        let t = project();
        t.json(&[
            "workflow",
            "decide",
            "--type",
            "process",
            "--description",
            "d",
            "--rationale",
            "r",
            "--by",
            "orchestrator",
        ]);
        t.json(&[
            "workflow",
            "verdict",
            "qa",
            "--decision",
            "approve",
            "--confidence",
            "0.5",
            "--reasoning",
            "r",
        ]);
        let mut s = Value::Null;
        for i in 0..n {
            s = pair(&t, if i % 2 == 0 { "analyst" } else { "critic" }, i);
        }
        let current = wf(&s)["agentHistory"].as_array().unwrap().len();
        let history = wf(&s)["compactionHistory"].as_array().unwrap();
        assert_eq!(history.len(), 1, "n={n}");
        assert_eq!(
            history[0]["count"], 8,
            "compacted at the 11th completion, n={n}"
        );
        assert_eq!(current, n - 8);
        assert_eq!(current as u64 + compacted_total(&s), n as u64);
        let note = history[0]["notePath"].as_str().unwrap();
        assert!(
            note.starts_with(&format!("{SES}.history/")) && note.ends_with(".json"),
            "{note}"
        );
        let archive: Value =
            serde_json::from_str(&t.read(&format!(".logbook/sessions/{note}"))).unwrap();
        assert_eq!(archive["invocations"].as_array().unwrap().len(), 8);
        assert_eq!(wf(&s)["decisions"].as_array().unwrap().len(), 1);
        assert_eq!(wf(&s)["verdicts"].as_array().unwrap().len(), 1);
        let full = t.json(&["workflow", "show", "--full"]);
        assert_eq!(prompts(&full["fullHistory"]), expected(n));
        // `--full` only adds; the stored state is unchanged.
        let mut stripped = full.clone();
        stripped.as_object_mut().unwrap().remove("fullHistory");
        assert_eq!(stripped, s);
    }
}

#[test]
fn twelve_entries_archive_9_and_keep_3() {
    let t = project();
    // A hand-written history of 11 completed invocations, then a 12th
    // through the binary: its invocation compacts.
    let mut base: Value =
        serde_json::from_str(&shared_text("fixtures/session-state.json")).unwrap();
    let w = base["orchestratorWorkflow"].as_object_mut().unwrap();
    let done = w["agentHistory"][0].clone();
    let list: Vec<Value> = (0..11)
        .map(|i| {
            let mut x = done.clone();
            x["input"]["prompt"] = format!("task {i}").into();
            x
        })
        .collect();
    w.insert("agentHistory".into(), list.into());
    w.insert("compactionHistory".into(), serde_json::json!([]));
    t.write(&state_path(), &serde_json::to_string_pretty(&base).unwrap());
    t.json(&["workflow", "invoke", "qa", "--prompt", "task 11"]);
    let s = t.json(&["workflow", "complete", "qa", "--summary", "ok"]);
    assert_eq!(wf(&s)["compactionHistory"][0]["count"], 9);
    assert_eq!(
        prompts(&wf(&s)["agentHistory"]),
        ["task 9", "task 10", "task 11"]
    );
    let full = t.json(&["workflow", "show", "--full"]);
    assert_eq!(prompts(&full["fullHistory"]), expected(12));
}

#[test]
fn repeated_compactions_add_up_and_keep_in_progress_in_place() {
    let t = project();
    // A memory agent that never reports back sits at position 0 for good.
    t.json(&["workflow", "invoke", "memory", "--prompt", "task 0"]);
    t.json(&[
        "workflow",
        "decide",
        "--type",
        "technical",
        "--description",
        "d",
        "--rationale",
        "r",
        "--by",
        "architect",
    ]);
    let mut s = Value::Null;
    for i in 1..40 {
        s = pair(&t, "implementer", i);
        if i == 20 {
            t.json(&[
                "workflow",
                "verdict",
                "critic",
                "--decision",
                "reject",
                "--confidence",
                "0",
                "--reasoning",
                "r",
            ]);
        }
    }
    let history = wf(&s)["compactionHistory"].as_array().unwrap();
    assert!(history.len() >= 4, "{}", history.len());
    let current = wf(&s)["agentHistory"].as_array().unwrap();
    assert_eq!(current[0]["input"]["prompt"], "task 0");
    assert_eq!(current[0]["status"], "in_progress");
    assert_eq!(current.len() as u64 + compacted_total(&s), 40);
    let names: HashSet<&str> = history
        .iter()
        .map(|h| h["notePath"].as_str().unwrap())
        .collect();
    assert_eq!(
        names.len(),
        history.len(),
        "every compaction has its own archive"
    );
    assert_eq!(wf(&s)["decisions"].as_array().unwrap().len(), 1);
    assert_eq!(wf(&s)["verdicts"].as_array().unwrap().len(), 1);
    let full = t.json(&["workflow", "show", "--full"]);
    assert_eq!(prompts(&full["fullHistory"]), expected(40));
    // The memory agent can still complete; order stays exact.
    t.json(&["workflow", "complete", "memory", "--summary", "late"]);
    let full = t.json(&["workflow", "show", "--full"]);
    assert_eq!(prompts(&full["fullHistory"]), expected(40));
    assert_eq!(full["fullHistory"][0]["status"], "completed");
}

#[test]
fn an_archive_written_before_a_crash_is_not_counted_twice() {
    let t = project();
    for i in 0..10 {
        pair(&t, "analyst", i);
    }
    let before = t.read(&state_path());
    pair(&t, "analyst", 10);
    // Simulate a crash after the archive write but before the state write:
    // the archive exists, the state is the old one.
    t.write(&state_path(), &before);
    let full = t.json(&["workflow", "show", "--full"]);
    assert_eq!(prompts(&full["fullHistory"]), expected(10));
    // Work goes on; the orphan archive is never read.
    pair(&t, "analyst", 10);
    pair(&t, "analyst", 11);
    let full = t.json(&["workflow", "show", "--full"]);
    assert_eq!(prompts(&full["fullHistory"]), expected(12));
    let dir = t.path(&format!(".logbook/sessions/{SES}.history"));
    assert_eq!(
        std::fs::read_dir(dir).unwrap().count(),
        2,
        "orphan kept, not overwritten"
    );
}

#[test]
fn eight_processes_fifty_pairs_each_lose_nothing() {
    let mut t = project();
    t.envs.push(("LOGBOOK_LOCK_TIMEOUT".into(), "120".into()));
    let agents = [
        "analyst",
        "architect",
        "planner",
        "implementer",
        "critic",
        "qa",
        "security",
        "devops",
    ];
    let versions: Vec<u64> = std::thread::scope(|scope| {
        let handles: Vec<_> = agents
            .iter()
            .map(|agent| {
                let t = &t;
                scope.spawn(move || {
                    let mut seen = vec![];
                    for i in 0..50 {
                        let prompt = format!("{agent} {i}");
                        let s = t.json(&["workflow", "invoke", agent, "--prompt", &prompt]);
                        seen.push(s["version"].as_u64().unwrap());
                        let s = t.json(&["workflow", "complete", agent, "--summary", &prompt]);
                        seen.push(s["version"].as_u64().unwrap());
                    }
                    // Each process sees its own versions strictly increase.
                    assert!(seen.windows(2).all(|w| w[0] < w[1]), "{agent}: {seen:?}");
                    seen
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    assert_eq!(versions.len(), 800);
    let unique: HashSet<u64> = versions.iter().copied().collect();
    assert_eq!(unique.len(), 800, "every write got its own version");
    assert_eq!(unique, (2..=801).collect::<HashSet<u64>>());
    let full = t.json(&["workflow", "show", "--full"]);
    assert_eq!(full["version"], 801);
    let current = wf(&full)["agentHistory"].as_array().unwrap().len() as u64;
    assert_eq!(current + compacted_total(&full), 400);
    let all = full["fullHistory"].as_array().unwrap();
    assert_eq!(all.len(), 400);
    assert!(all.iter().all(|i| i["status"] == "completed"));
    for agent in agents {
        let mine: Vec<String> = all
            .iter()
            .filter(|i| i["agent"] == agent)
            .map(|i| i["input"]["prompt"].as_str().unwrap().to_string())
            .collect();
        let want: Vec<String> = (0..50).map(|i| format!("{agent} {i}")).collect();
        assert_eq!(mine, want, "{agent}'s invocations in the order they began");
    }
}

#[test]
fn close_moves_state_and_history_to_the_archive() {
    let t = project();
    for i in 0..11 {
        pair(&t, "qa", i);
    }
    let live = t.json(&["workflow", "show", "--full"]);
    t.run(&["close"]).ok();
    assert!(!t.path(&state_path()).exists());
    assert!(!t.path(&format!(".logbook/sessions/{SES}.history")).exists());
    assert!(
        t.path(&format!(".logbook/sessions/archive/{SES}.state.json"))
            .is_file()
    );
    assert!(
        t.path(&format!(".logbook/sessions/archive/{SES}.history"))
            .is_dir()
    );
    // Still readable, with the full history, from the archive.
    let archived = t.json(&["workflow", "show", "--full", "--session", SES]);
    assert_eq!(archived, live);
    // But no longer writable.
    let e = t.run(&[
        "workflow",
        "invoke",
        "qa",
        "--prompt",
        "x",
        "--session",
        SES,
    ]);
    assert!(e.err().contains("closed and archived"), "{}", e.stderr);
    let e = t.run(&["workflow", "show"]);
    assert!(
        e.not_found().contains("no active work session"),
        "{}",
        e.stderr
    );
}

#[test]
fn verdicts_store_conditions_and_blockers_always() {
    let t = project();
    t.json(&[
        "workflow",
        "verdict",
        "critic",
        "--decision",
        "approve",
        "--confidence",
        "0.9",
        "--reasoning",
        "Fine",
    ]);
    t.json(&[
        "workflow",
        "verdict",
        "security",
        "--decision",
        "conditional",
        "--confidence",
        "0.6",
        "--reasoning",
        "Mostly",
        "--condition",
        "Rotate keys",
        "--condition",
        "Pin TLS",
        "--blocker",
        "No audit log",
        "--blocker",
        "Open port",
    ]);
    let file: Value = serde_json::from_str(&t.read(&state_path())).unwrap();
    let verdicts = &wf(&file)["verdicts"];
    assert_eq!(verdicts[0]["conditions"], serde_json::json!([]));
    assert_eq!(verdicts[0]["blockers"], serde_json::json!([]));
    assert_eq!(
        verdicts[1]["conditions"],
        serde_json::json!(["Rotate keys", "Pin TLS"])
    );
    assert_eq!(
        verdicts[1]["blockers"],
        serde_json::json!(["No audit log", "Open port"])
    );
}

/// A state file holding `n` completed invocations, as another tool wrote it.
fn hand_written_history(t: &TestProject, n: usize) {
    let mut base: Value =
        serde_json::from_str(&shared_text("fixtures/session-state.json")).unwrap();
    let w = base["orchestratorWorkflow"].as_object_mut().unwrap();
    let done = w["agentHistory"][0].clone();
    let list: Vec<Value> = (0..n)
        .map(|i| {
            let mut x = done.clone();
            x["input"]["prompt"] = format!("task {i}").into();
            x
        })
        .collect();
    w.insert("agentHistory".into(), list.into());
    w.insert("compactionHistory".into(), serde_json::json!([]));
    t.write(&state_path(), &serde_json::to_string_pretty(&base).unwrap());
}

#[test]
fn compaction_is_checked_on_every_change() {
    // The 11th entry comes from an invocation, not a completion.
    let t = project();
    hand_written_history(&t, 10);
    let s = t.json(&["workflow", "invoke", "qa", "--prompt", "task 10"]);
    assert_eq!(wf(&s)["compactionHistory"][0]["count"], 8, "{s}");
    assert_eq!(
        prompts(&wf(&s)["agentHistory"]),
        ["task 8", "task 9", "task 10"]
    );
    // A history another tool left too long is compacted by any change.
    for change in [
        vec!["workflow", "phase", "validation"],
        vec!["workflow", "handoff", "qa", "devops", "--reason", "Ship"],
        vec!["mode", "planning"],
    ] {
        let t = project();
        hand_written_history(&t, 12);
        let s = t.json(&change);
        assert_eq!(
            wf(&s)["compactionHistory"][0]["count"],
            9,
            "{change:?}: {s}"
        );
        let full = t.json(&["workflow", "show", "--full"]);
        assert_eq!(prompts(&full["fullHistory"]), expected(12));
    }
}

#[test]
fn decide_prints_the_bare_id() {
    let t = project();
    let out = t.run(&[
        "workflow",
        "decide",
        "--type",
        "technical",
        "--description",
        "d",
        "--rationale",
        "r",
        "--by",
        "architect",
    ]);
    let id = out.ok().trim_end();
    assert!(uuid::Uuid::try_parse(id).is_ok(), "{id:?}");
    assert_eq!(out.stdout, format!("{id}\n"));
    let s = t.json(&["workflow", "show"]);
    assert_eq!(wf(&s)["decisions"][0]["id"], id);
}

#[test]
fn human_times_are_local() {
    let mut t = project();
    t.now = Some("2026-01-19T23:30:00.000Z".into());
    t.envs.push(("TZ".into(), "Asia/Tokyo".into()));
    t.json(&["workflow", "invoke", "qa", "--prompt", "Test it"]);
    let show = t.run(&["workflow", "show"]);
    let text = show.ok();
    assert!(text.contains("2026-01-20 08:30:00 JST"), "{text}");
    assert!(!text.contains("23:30:00"), "{text}");
    let json = t.json(&["workflow", "show"]);
    assert_eq!(
        wf(&json)["agentHistory"][0]["startedAt"],
        "2026-01-19T23:30:00.000Z",
        "JSON keeps UTC"
    );
}

#[test]
fn long_prompts_are_shown_cut_between_words() {
    let t = project();
    let prompt = "Überprüfe die Lösungsvorschläge für die Straßenbäume im Gewerbegebiet \
                  Nord und schreibe eine Zusammenfassung";
    t.json(&["workflow", "invoke", "analyst", "--prompt", prompt]);
    let out = t.run(&["workflow", "show"]);
    let out = out.ok();
    let line = out
        .lines()
        .find(|l| l.contains("Überprüfe"))
        .unwrap_or_else(|| panic!("no invocation line:\n{out}"));
    let shown = &line[line.find("Überprüfe").unwrap()..];
    assert!(shown.ends_with('…'), "{line}");
    let words: Vec<&str> = prompt.split_whitespace().collect();
    for w in shown.trim_end_matches('…').split_whitespace() {
        assert!(words.contains(&w), "cut word {w:?} in {line:?}");
    }
}

/// Issue 45: every SessionState field seed 004 names can be set: the two
/// protocols with their evidence, the feature and the task (empty clears),
/// each with the compare-and-swap every state write has.
#[test]
fn protocols_feature_and_task_are_writable() {
    let t = project();
    let s = t.json(&[
        "workflow",
        "protocol",
        "start",
        "--evidence",
        "branchVerified=release/2.4",
        "--evidence",
        r#"{"contextLoaded": "2026-02-03T08:15:00.000Z"}"#,
        "--evidence",
        "Read the handover notes",
    ]);
    assert_eq!(s["protocolStartComplete"], true);
    assert_eq!(s["protocolEndComplete"], false);
    assert_eq!(
        s["protocolStartEvidence"],
        serde_json::json!({
            "branchVerified": "release/2.4",
            "contextLoaded": "2026-02-03T08:15:00.000Z",
            "note": "Read the handover notes"
        })
    );
    let v = s["version"].as_u64().unwrap();
    // More evidence joins what is there; a stale version is refused.
    let stale = t.run(&[
        "workflow",
        "protocol",
        "start",
        "--evidence",
        "x=y",
        "--expect-version",
        &(v - 1).to_string(),
    ]);
    assert!(stale.conflict().contains(&format!("but it is at {v}")));
    let s = t.json(&[
        "workflow",
        "--expect-version",
        &v.to_string(),
        "protocol",
        "start",
        "--evidence",
        "testsRun=412",
    ]);
    assert_eq!(s["protocolStartEvidence"]["testsRun"], "412");
    assert_eq!(s["protocolStartEvidence"]["branchVerified"], "release/2.4");
    let s = t.json(&["workflow", "protocol", "end", "--evidence", "pushed=yes"]);
    assert_eq!(s["protocolEndComplete"], true);
    assert_eq!(
        s["protocolEndEvidence"],
        serde_json::json!({"pushed": "yes"})
    );
    let s = t.json(&["workflow", "protocol", "end", "--undo"]);
    assert_eq!(s["protocolEndComplete"], false);
    assert_eq!(s["protocolEndEvidence"], serde_json::json!({}));
    let bad = t.run(&["workflow", "protocol", "middle"]);
    assert!(bad.usage().contains("middle"), "{}", bad.stderr);

    let s = t.json(&["workflow", "feature", "invoice-export"]);
    assert_eq!(s["activeFeature"], "invoice-export");
    let s = t.json(&["workflow", "task", "implementer:7"]);
    assert_eq!(s["activeTask"], "implementer:7");
    let human = t.run(&["workflow", "task", "qa:2"]);
    assert!(human.ok().contains("Task: qa:2"), "{}", human.stdout);
    let s = t.json(&["workflow", "feature", ""]);
    assert!(s.get("activeFeature").is_none(), "{s}");
    assert_eq!(s["activeTask"], "qa:2");
    // The file holds the seed's keys, as a seed-004 reader loads them.
    let file: Value = serde_json::from_str(&t.read(&state_path())).unwrap();
    assert_eq!(file["protocolStartComplete"], true);
    assert_eq!(file["protocolStartEvidence"]["testsRun"], "412");
    assert_eq!(file["activeTask"], "qa:2");
    assert!(file.get("activeFeature").is_none());
    // Setting what is already set changes nothing, not even the version.
    let before = t.json(&["workflow", "show"])["version"].clone();
    let s = t.json(&["workflow", "task", "qa:2"]);
    assert_eq!(s["version"], before);
}

/// Issue 45: a confidence another tool wrote as a percentage (85) is read
/// as its fraction with a warning, `doctor` names it, and every workflow
/// command goes on working; a value that is no percentage is kept as
/// written.
#[test]
fn a_confidence_out_of_range_is_read_leniently_and_named() {
    let t = project();
    t.json(&[
        "workflow",
        "invoke",
        "critic",
        "--prompt",
        "Review the schema",
    ]);
    t.json(&[
        "workflow",
        "verdict",
        "critic",
        "--decision",
        "approve",
        "--confidence",
        "0.7",
        "--reasoning",
        "fine",
    ]);
    let text = t
        .read(&state_path())
        .replace("\"confidence\": 0.7", "\"confidence\": 85");
    assert!(text.contains("\"confidence\": 85"), "{text}");
    t.write(&state_path(), &text);

    let shown = t.run(&["--json", "workflow", "show"]);
    let state: Value = serde_json::from_str(shown.ok()).unwrap();
    let verdict = &state["orchestratorWorkflow"]["verdicts"][0];
    assert_eq!(verdict["confidence"], 0.85, "{state}");
    assert!(
        shown
            .stderr
            .contains("confidence 85 is read as a percentage, the fraction 0.85"),
        "{}",
        shown.stderr
    );
    let human = t.run(&["workflow", "show"]);
    assert!(
        human.ok().contains("critic approve (0.85)"),
        "{}",
        human.stdout
    );
    let report = t.doctor(&[]);
    let found = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "workflow-value-out-of-range")
        .unwrap_or_else(|| panic!("{report}"));
    assert!(
        found["message"]
            .as_str()
            .unwrap()
            .contains("verdict 1 (critic)"),
        "{found}"
    );
    // Writes go on; the file keeps the value as the other tool wrote it
    // (a write owns only what it changed), the answer says the fraction.
    let s = t.json(&["workflow", "phase", "validation"]);
    assert_eq!(s["orchestratorWorkflow"]["verdicts"][0]["confidence"], 0.85);
    assert_eq!(s["orchestratorWorkflow"]["workflowPhase"], "validation");
    assert!(t.read(&state_path()).contains("\"confidence\": 85"));

    // A value that is no percentage: every command still works, and the
    // value is kept exactly as the other tool wrote it.
    let text = t
        .read(&state_path())
        .replace("\"confidence\": 85", "\"confidence\": -40");
    t.write(&state_path(), &text);
    let s = t.json(&["workflow", "phase", "complete"]);
    assert_eq!(s["orchestratorWorkflow"]["verdicts"][0]["confidence"], -40);
    assert!(t.read(&state_path()).contains("\"confidence\": -40"));
    assert!(t.run(&["status"]).ok().contains("SES202601-ACME-FLOW"));
    let report = t.doctor(&[]).to_string();
    assert!(report.contains("kept as written"), "{report}");
}
