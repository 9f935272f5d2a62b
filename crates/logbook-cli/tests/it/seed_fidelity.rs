//! What a reader of the seeds' own files expects after Logbook wrote them,
//! and the first commands a newcomer tries (issue 27's reproductions).

use serde_json::{Value, json};

use crate::harness::{TestProject, shared_text};

fn session_yaml(t: &TestProject, id: &str) -> Value {
    serde_saphyr::from_str(&t.read(&format!(".logbook/sessions/{id}.yaml"))).expect("valid YAML")
}

fn spawned<'a>(ws: &'a Value, id: &str) -> &'a Value {
    ws["agents_spawned"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["id"] == id)
        .unwrap_or_else(|| panic!("no agents_spawned entry {id}: {ws}"))
}

#[test]
fn pause_then_resume_resumes_the_one_paused_session() {
    let t = TestProject::new();
    let id = t.json(&["start", "--client", "ACME", "--project", "AUDIT"])["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    t.run(&["pause"]).ok();
    let resumed = t.json(&["resume"]);
    assert_eq!(resumed["session_id"], id.as_str());
    assert_eq!(resumed["status"], "active");
    assert_eq!(t.json(&["status"])["session_id"], id.as_str());
}

#[test]
fn resume_with_several_paused_sessions_names_each_exact_command() {
    let t = TestProject::new();
    let mut ids = vec![];
    for project in ["API", "WEB"] {
        let s = t.json(&["start", "--client", "ACME", "--project", project, "--yes"]);
        ids.push(s["session_id"].as_str().unwrap().to_string());
        t.run(&["pause"]).ok();
    }
    let r = t.run(&["resume"]);
    r.err();
    for id in &ids {
        assert!(
            r.stderr.contains(&format!("`logbook resume {id}`")),
            "{r:?}"
        );
    }
    assert!(!r.stderr.contains("--session"), "no such option: {r:?}");
    // Nothing was resumed on a guess.
    for id in &ids {
        assert_eq!(t.json(&["status", id])["status"], "paused");
    }
    // With nothing paused or active, the hint points at start and resume.
    for id in &ids {
        t.run(&["close", id]).ok();
    }
    let r = t.run(&["resume"]);
    r.not_found();
    assert!(r.stderr.contains("logbook start"), "{r:?}");
    assert!(!r.stderr.contains("--session"), "{r:?}");
}

#[test]
fn run_finish_completes_its_agents_spawned_entry() {
    let mut t = TestProject::new();
    t.now = Some("2026-01-18T10:00:00Z".into());
    let ws = t.json(&["start", "--client", "ACME", "--project", "AUDIT"]);
    let ws_id = ws["session_id"].as_str().unwrap().to_string();

    // A run with a linked transcript: its measured tokens are the entry's.
    let measured = t.start_run("casey", "deep-dive", &[]);
    let measured = measured["session_id"].as_str().unwrap().to_string();
    t.write(
        "in/main.json",
        &shared_text("fixtures/transcript-main.json"),
    );
    t.json(&["transcript", "import", "in/main.json", "--run", &measured]);
    // A run without one, cancelled: the entry says so and keeps its tokens.
    let cancelled = t.start_run("pixel", "build-stories", &[]);
    let cancelled = cancelled["session_id"].as_str().unwrap().to_string();

    let entry = spawned(&session_yaml(&t, &ws_id), &measured).clone();
    assert!(entry.get("completed").is_none_or(Value::is_null), "{entry}");

    t.now = Some("2026-01-18T10:30:00Z".into());
    t.json(&["run", "finish", &measured]);
    t.json(&["run", "finish", &cancelled, "--status", "cancelled"]);

    let file = session_yaml(&t, &ws_id);
    let entry = spawned(&file, &measured);
    assert_eq!(entry["completed"], "2026-01-18T10:30:00.000Z", "{entry}");
    assert_eq!(entry["status"], "completed");
    assert_eq!(
        entry["tokens_used"], 2242,
        "latestTotalTokens of the transcript"
    );
    let entry = spawned(&file, &cancelled);
    assert_eq!(entry["status"], "cancelled");
    assert_eq!(entry["tokens_used"], 0);
    assert_eq!(entry["completed"], "2026-01-18T10:30:00.000Z");
    // `saved` is the sum of the spawned agents' tokens, as the seed says.
    assert_eq!(file["tokens"]["saved"], 2242);
    let status = t.json(&["status"]);
    assert_eq!(status["tokens"]["saved"], 2242);
}

#[test]
fn legacy_underscore_transcript_ids_work_in_every_transcript_command() {
    let t = TestProject::new();
    let legacy = "session_1700000000_abc12345";
    let mut file: Value =
        serde_json::from_str(&shared_text("fixtures/transcript-main.json")).unwrap();
    file["id"] = json!(legacy);
    file["metadata"]["workdir"] = json!(t.root().to_string_lossy());
    t.write("in/legacy.json", &file.to_string());

    let imported = t.json(&["transcript", "import", "in/legacy.json"]);
    assert_eq!(imported["id"], legacy, "{imported}");
    assert!(
        t.path(".logbook/transcripts/session_abc12345.json")
            .is_file(),
        "named as seed 003's getSessionFilePath names it"
    );
    let listed = t.json(&["transcript", "list"]);
    assert!(
        listed.as_array().unwrap().iter().any(|s| s["id"] == legacy),
        "{listed}"
    );
    let shown = t.json(&["transcript", "show", legacy]);
    assert_eq!(shown["id"], legacy);
    assert_eq!(shown["messages"].as_array().unwrap().len(), 3);
    let usage = t.json(&["transcript", "usage", legacy]);
    assert!(usage.to_string().contains(legacy), "{usage}");

    // A file the seed's engine wrote itself, not imported: found the same way.
    file["id"] = json!("session_1700000001_feed0001");
    t.write(
        ".logbook/transcripts/session_feed0001.json",
        &file.to_string(),
    );
    let shown = t.json(&["transcript", "show", "session_1700000001_feed0001"]);
    assert_eq!(shown["id"], "session_1700000001_feed0001");

    let pruned = t.json(&["transcript", "prune", "--older-than", "1", "--dry-run"]);
    assert!(pruned.to_string().contains(legacy), "{pruned}");

    // A lookalike that would escape the folder is still refused.
    let r = t.run(&["transcript", "show", "session_1_../../x"]);
    r.err();
}

#[test]
fn verdict_conditions_and_blockers_are_printed_where_verdicts_are() {
    let t = TestProject::new();
    t.run(&["start", "--client", "ACME", "--project", "AUDIT"])
        .ok();
    t.run(&[
        "workflow",
        "verdict",
        "architect",
        "--decision",
        "conditional",
        "--confidence",
        "0.8",
        "--reasoning",
        "Sound overall",
        "--condition",
        "add rate limiting",
        "--condition",
        "document the API",
        "--blocker",
        "no load test yet",
    ])
    .ok();
    let shown = t.run(&["workflow", "show"]);
    let out = shown.ok();
    assert!(
        out.contains("conditions: add rate limiting; document the API"),
        "{out}"
    );
    assert!(out.contains("blockers: no load test yet"), "{out}");
    let brief = t.run(&["resume-context"]);
    let brief = brief.ok();
    assert!(
        brief.contains("conditions: add rate limiting, document the API"),
        "{brief}"
    );
    assert!(brief.contains("blockers: no load test yet"), "{brief}");
}

#[test]
fn workflow_show_without_mode_history_prints_no_empty_since() {
    let t = TestProject::new();
    t.run(&["start", "--client", "ACME", "--project", "AUDIT"])
        .ok();
    let shown = t.run(&["workflow", "show"]);
    let out = shown.ok();
    assert!(out.contains("Mode:"), "{out}");
    assert!(!out.contains("(since )"), "{out}");
}

#[test]
fn summaries_print_token_counts_with_thousands_separators() {
    let t = TestProject::new();
    t.run(&[
        "start",
        "--client",
        "ACME",
        "--project",
        "AUDIT",
        "--max-tokens",
        "200000",
    ])
    .ok();
    t.run(&["usage", "--add", "117000"]).ok();
    let id = t
        .run(&["agent", "spawn", "analyst"])
        .ok()
        .trim()
        .to_string();
    t.run(&["agent", "done", &id, "--tokens", "32000"]).ok();
    let brief = t.run(&["resume-context"]);
    let brief = brief.ok();
    assert!(brief.contains("117,000 of 200,000"), "{brief}");
    assert!(!brief.contains("117000"), "{brief}");
    let closed = t.json(&["close"]);
    let summary = closed["context_summary"].as_str().unwrap();
    assert!(summary.contains("32,000 tokens kept out"), "{summary}");
}

#[test]
fn a_transcript_name_sticks_through_saves_and_re_imports_in_the_cli_and_mcp() {
    let t = TestProject::new();
    t.write(
        "in/main.json",
        &shared_text("fixtures/transcript-main.json"),
    );
    t.json(&["transcript", "import", "in/main.json"]);
    let named = t.json(&["transcript", "name", "6f1c2b9e", "Laptop purchase"]);
    assert_eq!(named["name"], "Laptop purchase", "{named}");
    let shown = t.json(&["transcript", "show", "6f1c2b9e"]);
    assert_eq!(shown["metadata"]["name"], "Laptop purchase");
    // Every other value is as it was: the file's own workdir and tokens.
    assert_eq!(shown["metadata"]["workdir"], "/home/bryan/projects/acme");
    assert_eq!(shown["metadata"]["latestTotalTokens"], 2242);
    assert_eq!(shown["messages"].as_array().unwrap().len(), 3);

    // A re-import of the same file (which has no name) keeps the title.
    t.json(&["transcript", "import", "in/main.json"]);
    let shown = t.json(&["transcript", "show", "6f1c2b9e"]);
    assert_eq!(shown["metadata"]["name"], "Laptop purchase");
    let human = t.run(&["transcript", "show", "6f1c2b9e"]);
    assert!(
        human.ok().contains("Title:     Laptop purchase"),
        "{human:?}"
    );

    // Over MCP, and a blank name removes it.
    let mut m = crate::mcp::Mcp::start(&t);
    let r = m.ok(
        "transcript_name",
        json!({"id": "6f1c2b9e", "name": "Renamed by an agent"}),
    );
    assert_eq!(r["name"], "Renamed by an agent");
    let r = m.ok("transcript_name", json!({"id": "6f1c2b9e", "name": "  "}));
    assert!(r.get("name").is_none(), "{r}");
    let shown = t.json(&["transcript", "show", "6f1c2b9e"]);
    assert!(shown["metadata"].get("name").is_none(), "{shown}");

    // Bounded like every free text, and an unknown id is not found.
    let long = "x".repeat(64 * 1024 + 1);
    let r = t.run(&["transcript", "name", "6f1c2b9e", &long]);
    assert!(r.err().contains("name"), "{r:?}");
    let r = t.run(&[
        "transcript",
        "name",
        "99999999-9999-4999-8999-999999999999",
        "x",
    ]);
    r.not_found();
}
