//! `logbook doctor` on every broken state it must name (issue 14, item 4):
//! each is reported with a non-zero exit, `--fix` repairs what it safely can,
//! and a clean project exits 0.

use std::io::{Seek, SeekFrom, Write};

use serde_json::Value;

use crate::harness::TestProject;

/// The kinds of a doctor report's findings, in order.
pub(crate) fn kinds(report: &Value) -> Vec<String> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap().to_string())
        .collect()
}

/// The first finding of `kind` in a doctor report (the test fails without one).
pub(crate) fn finding<'a>(report: &'a Value, kind: &str) -> &'a Value {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == kind)
        .unwrap_or_else(|| panic!("no {kind} finding in {report:#}"))
}

fn session(t: &TestProject, client: &str) -> String {
    t.json(&["start", "--client", client, "--project", "P", "--yes"])["session_id"]
        .as_str()
        .unwrap()
        .to_string()
}

fn run(t: &TestProject, agent: &str) -> String {
    // Seed-complete (bundle and description), so a clean project is clean.
    t.json(&[
        "run",
        "start",
        "--agent",
        agent,
        "--workflow",
        "w",
        "--bundle",
        "bmad/bmm",
        "--description",
        "d",
    ])["session_id"]
        .as_str()
        .unwrap()
        .to_string()
}

#[test]
fn a_clean_project_exits_zero_and_a_broken_one_exits_one() {
    let t = TestProject::new();
    session(&t, "ACME");
    run(&t, "casey");
    let r = t.run(&["doctor"]);
    assert_eq!(r.code, 0, "{r:?}");
    t.write(
        ".logbook/sessions/SES202501-BAD-ONE.yaml",
        "session_id: [\n",
    );
    let r = t.run(&["doctor"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr.starts_with("error: 1 problem(s) found"),
        "{}",
        r.stderr
    );
    // The path is named once per finding, not repeated by the parser's reason.
    let line = r
        .stdout
        .lines()
        .find(|l| l.starts_with("corrupt-work-session"))
        .unwrap();
    assert_eq!(line.matches("SES202501-BAD-ONE.yaml").count(), 1, "{line}");
}

#[test]
fn an_index_with_damaged_pages_is_reported_and_rebuilt() {
    let t = TestProject::new();
    let ids: Vec<String> = (0..40).map(|i| run(&t, &format!("agent{i}"))).collect();
    t.run(&["run", "link", &ids[1], &ids[0]]).ok();
    // Everything in the main file, then pages in its middle overwritten.
    t.run(&["index", "rebuild"]).ok();
    let path = t.path(".logbook/index.db");
    let len = std::fs::metadata(&path).unwrap().len();
    assert!(len > 4096 * 8, "index too small to damage: {len}");
    let mut f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    f.seek(SeekFrom::Start(4096 * 2)).unwrap();
    f.write_all(&vec![0xA5; (len - 4096 * 3) as usize]).unwrap();
    drop(f);
    let report = t.doctor(&[]);
    let bad = finding(&report, "index-corrupt");
    assert!(
        bad["message"].as_str().unwrap().contains("rebuild"),
        "{bad}"
    );
    let fixed = t.doctor(&["--fix"]);
    assert!(
        finding(&fixed, "index-corrupt")["fixed"]
            .as_str()
            .unwrap()
            .starts_with("rebuilt"),
        "{fixed:#}"
    );
    assert!(!kinds(&t.doctor(&[])).contains(&"index-corrupt".to_string()));
    let lineage = t.json(&["lineage", &ids[0], "--format", "json"]);
    assert_eq!(lineage["descendants"][0], ids[1].as_str());
}

#[test]
fn a_run_folder_copied_under_a_second_id_is_named() {
    let t = TestProject::new();
    let id = run(&t, "casey");
    let copy = "0b6f3b8e-8c7e-4b7a-9d41-1f2e3d4c5b6a";
    let from = t.path(&format!("docs/agent-outputs/{id}/manifest.json"));
    t.write(
        &format!("docs/agent-outputs/{copy}/manifest.json"),
        &std::fs::read_to_string(from).unwrap(),
    );
    let report = t.doctor(&[]);
    let f = finding(&report, "id-mismatch");
    assert!(f["path"].as_str().unwrap().contains(copy), "{f}");
    assert!(f["message"].as_str().unwrap().contains(&id), "{f}");
}

#[test]
fn a_session_file_renamed_by_hand_is_named_and_never_written_through() {
    let t = TestProject::new();
    let two = session(&t, "TWO");
    t.run(&["close"]).ok();
    let four = two.replace("TWO", "FOUR");
    let text = t.read(&format!(".logbook/sessions/archive/{two}.yaml"));
    let text = text.replace("status: closed", "status: paused");
    t.write(&format!(".logbook/sessions/{four}.yaml"), &text);
    let before = t.read(&format!(".logbook/sessions/{four}.yaml"));
    let err = t.run(&["note", "x", "--session", &four]).err().to_string();
    assert!(err.contains(&four) && err.contains(&two), "{err}");
    assert_eq!(t.read(&format!(".logbook/sessions/{four}.yaml")), before);
    let report = t.doctor(&[]);
    let f = finding(&report, "id-mismatch");
    assert!(
        f["path"]
            .as_str()
            .unwrap()
            .ends_with(&format!("{four}.yaml")),
        "{f}"
    );
}

#[test]
fn a_transcript_under_another_ids_name_is_named() {
    let t = TestProject::new();
    let id = "6f1c2b9e-3d4a-4c5b-9e8f-1a2b3c4d5e6f";
    let file = t.write(
        "in.json",
        &format!(
            r#"{{"id":"{id}","timestamp":"2025-01-01T00:00:00Z","version":"1.0.0","messages":[],"metadata":{{"workdir":"{}","startedAt":"2025-01-01T00:00:00Z","lastActiveAt":"2025-01-01T00:00:00Z","latestTotalTokens":0}}}}"#,
            t.root().display()
        ),
    );
    t.run(&["transcript", "import", file.to_str().unwrap()])
        .ok();
    let stored = t.read(".logbook/transcripts/session_3c4d5e6f.json");
    t.write(".logbook/transcripts/session_aaaabbbb.json", &stored);
    let report = t.doctor(&[]);
    let f = finding(&report, "id-mismatch");
    assert!(
        f["path"]
            .as_str()
            .unwrap()
            .ends_with("session_aaaabbbb.json"),
        "{f}"
    );
}

#[test]
fn spawned_runs_without_a_manifest_are_named_and_marked_failed() {
    let mut t = TestProject::new();
    t.now = Some("2025-10-06T12:00:00Z".into());
    let ses = session(&t, "ACME");
    run(&t, "casey");
    // What a `run start` killed between its session link and its folder
    // leaves behind: agents whose run folder never got a manifest.
    let path = format!(".logbook/sessions/{ses}.yaml");
    let mut text = t.read(&path);
    let outputs = t.path("docs/agent-outputs");
    let ghosts = [
        "11111111-1111-4111-8111-111111111111",
        "22222222-2222-4222-8222-222222222222",
    ];
    let mut extra = String::new();
    for g in ghosts {
        extra.push_str(&format!(
            "- id: {g}\n  type: casey\n  started: '2025-10-06T11:00:00.000Z'\n  completed: null\n  tokens_used: 0\n  output_file: {}/{g}\n",
            outputs.display()
        ));
    }
    text = text.replacen("agents_spawned:\n", &format!("agents_spawned:\n{extra}"), 1);
    t.write(&path, &text);
    let report = t.doctor(&[]);
    let f = finding(&report, "agent-without-run");
    let msg = f["message"].as_str().unwrap();
    assert!(msg.contains(ghosts[0]) && msg.contains(ghosts[1]), "{msg}");
    assert!(msg.contains("2 spawned run(s)"), "{msg}");
    let fixed = t.doctor(&["--fix"]);
    assert!(
        finding(&fixed, "agent-without-run")["fixed"]
            .as_str()
            .unwrap()
            .contains("marked 2"),
        "{fixed:#}"
    );
    let status = t.json(&["status"]);
    let marked: Vec<_> = status["agents_spawned"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["run_missing"] == true)
        .collect();
    assert_eq!(marked.len(), 2, "{status:#}");
    assert!(!kinds(&t.doctor(&[])).contains(&"agent-without-run".to_string()));
}

#[test]
fn an_archive_no_compaction_names_is_found_and_a_duplicate_removed() {
    let t = TestProject::new();
    let ses = session(&t, "ACME");
    for i in 0..11 {
        t.run(&["workflow", "invoke", "qa", "--prompt", &format!("p{i}")])
            .ok();
        t.run(&["workflow", "complete", "qa", "--summary", "s"])
            .ok();
    }
    let history = t.path(&format!(".logbook/sessions/{ses}.history"));
    let named: Vec<_> = std::fs::read_dir(&history).unwrap().collect();
    assert_eq!(named.len(), 1, "one compaction expected");
    // A compaction killed after its archive write and before its state
    // write: an archive nobody names, whose invocations are all still in
    // the state.
    let state: Value =
        serde_json::from_str(&t.read(&format!(".logbook/sessions/{ses}.state.json"))).unwrap();
    let current = state["orchestratorWorkflow"]["agentHistory"].clone();
    let orphan = serde_json::json!({
        "sessionId": ses,
        "compactedAt": "2025-10-06T12:00:00.000Z",
        "count": current.as_array().unwrap().len(),
        "invocations": current,
    });
    t.write(
        &format!(".logbook/sessions/{ses}.history/2099-01-01T00-00-00-000Z.json"),
        &orphan.to_string(),
    );
    let report = t.doctor(&[]);
    let f = finding(&report, "orphan-archive");
    assert!(f["path"].as_str().unwrap().contains("2099-01-01"), "{f}");
    let fixed = t.doctor(&["--fix"]);
    assert!(
        finding(&fixed, "orphan-archive")["fixed"]
            .as_str()
            .unwrap()
            .starts_with("removed"),
        "{fixed:#}"
    );
    assert_eq!(std::fs::read_dir(&history).unwrap().count(), 1);
    let r = t.run(&["doctor"]);
    assert_eq!(r.code, 0, "{r:?}");
}

#[test]
fn a_second_session_left_active_by_an_interrupted_start_is_named_and_paused() {
    let t = TestProject::new();
    let old = session(&t, "ACME");
    let new = session(&t, "GLOBEX");
    // What a `start --yes` killed after writing the new session, before
    // closing the old one, leaves: both marked active, the pointer on the new.
    let old_file = format!(".logbook/sessions/archive/{old}.yaml");
    let text = t.read(&old_file);
    std::fs::remove_file(t.path(&old_file)).unwrap();
    t.write(
        &format!(".logbook/sessions/{old}.yaml"),
        &text.replace("status: closed", "status: active"),
    );
    let report = t.doctor(&[]);
    let f = finding(&report, "extra-active-session");
    assert!(
        f["path"]
            .as_str()
            .unwrap()
            .ends_with(&format!("{old}.yaml")),
        "{f:#}"
    );
    assert!(f["message"].as_str().unwrap().contains(&new), "{f:#}");
    assert_eq!(t.run(&["doctor"]).code, 1);

    t.doctor(&["--fix"]);
    assert!(!kinds(&t.doctor(&[])).contains(&"extra-active-session".to_string()));
    assert_eq!(t.json(&["status"])["session_id"], new.as_str());
    assert_eq!(t.json(&["status", &old])["status"], "paused");
}

#[test]
fn runs_another_tool_added_and_removed_are_synced_from_doctors_one_listing() {
    let t = TestProject::new();
    let kept = run(&t, "casey");
    let gone = run(&t, "riley");
    t.json(&["index", "sync"]);
    // Another tool copies a run in under a new id and removes one.
    let runs = t.path("docs/agent-outputs");
    let added = "0b7e6a4c-1d2e-4f3a-8b9c-0d1e2f3a4b5c";
    let manifest = std::fs::read_to_string(runs.join(&kept).join("manifest.json")).unwrap();
    std::fs::create_dir(runs.join(added)).unwrap();
    std::fs::write(
        runs.join(added).join("manifest.json"),
        manifest.replace(&kept, added),
    )
    .unwrap();
    std::fs::remove_dir_all(runs.join(&gone)).unwrap();
    // The runs folder's mtime old enough to be trusted, so doctor's
    // listing of the run folders stands for it in the index check.
    std::fs::File::open(&runs)
        .unwrap()
        .set_modified(
            logbook::clock::Clock::SYSTEM.system_time() - std::time::Duration::from_secs(3600),
        )
        .unwrap();
    let report = t.doctor(&[]);
    let stale = finding(&report, "index-stale");
    let message = stale["message"].as_str().unwrap();
    assert!(
        message.contains("1 new, 0 changed, 1 deleted"),
        "{report:#}"
    );
    let mut found: Vec<String> = t
        .json(&["find"])
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["session_id"].as_str().unwrap().to_string())
        .collect();
    found.sort();
    let mut want = vec![kept, added.to_string()];
    want.sort();
    assert_eq!(found, want);
    let status = t.json(&["index", "status"]);
    assert_eq!(status["stale"]["new"], 0, "{status:#}");
    assert_eq!(status["stale"]["deleted"], 0, "{status:#}");
}
