//! `find` after the index is deleted: answered by a scan of the manifests
//! (`ops::query::scan`) exactly as the index answered before, the index
//! then built behind the answer by a detached builder.
//! `LOGBOOK_SCAN_FROM=0` takes the scan however small the project is.

use logbook::Logbook;
use logbook::testing::index::Index;
use serde_json::json;

use crate::harness::TestProject;

/// Runs another tool wrote: agent, workflow, status, minute started.
const RUNS: [(&str, &str, &str, u8); 7] = [
    ("alex", "deep-dive-app", "completed", 1),
    ("alex", "deep-dive-app", "failed", 2),
    ("casey", "intake", "running", 3),
    ("alex", "deep-review", "completed", 3),
    ("sam", "intake", "paused", 4),
    ("alex", "intake", "completed", 5),
    ("casey", "deep-dive-app", "completed", 5),
];

/// The project: [`RUNS`], a folder without a manifest, a broken manifest.
fn project() -> TestProject {
    let mut t = TestProject::new();
    t.envs.push(("LOGBOOK_SCAN_FROM".into(), "0".into()));
    std::fs::create_dir_all(t.path(".logbook")).unwrap();
    for (i, (agent, workflow, status, minute)) in RUNS.iter().enumerate() {
        let id = format!("00000000-0000-4000-8000-00000000000{i}");
        let manifest = json!({
            "version": "1.0",
            "session_id": id,
            "agent": {"name": agent, "title": "T"},
            "workflow": {"name": workflow, "description": "D"},
            "execution": {
                "started_at": format!("2025-10-05T10:0{minute}:00Z"),
                "status": status,
                "user": "bryan",
            },
            "tags": ["alpha"],
            "outputs": [],
        });
        t.write(
            &format!("docs/agent-outputs/{id}/manifest.json"),
            &manifest.to_string(),
        );
    }
    std::fs::create_dir_all(t.path("docs/agent-outputs/00000000-0000-4000-8000-0000000000aa"))
        .unwrap();
    t.write(
        "docs/agent-outputs/00000000-0000-4000-8000-0000000000bb/manifest.json",
        "{ torn",
    );
    t
}

/// What `find` is asked, as a person would.
const ASKED: [&[&str]; 7] = [
    &["find"],
    &[
        "find",
        "--agent",
        "alex",
        "--workflow",
        "^deep-",
        "--status",
        "completed",
        "--limit",
        "10",
    ],
    &["find", "--status", "unknown"],
    &["find", "--status", "paused"],
    &["find", "--limit", "2", "--offset", "1"],
    &["find", "--workflow", "intake", "--json"],
    &[
        "find", "--tag", "alpha", "--user", "bryan", "--json", "--limit", "3",
    ],
];

/// Every answer of [`ASKED`]: exit code, stdout and stderr.
fn answers(t: &TestProject) -> Vec<(i32, String, String)> {
    ASKED
        .iter()
        .map(|args| {
            let r = t.run(args);
            (r.code, r.stdout, r.stderr)
        })
        .collect()
}

fn lose_index(t: &TestProject) {
    Index::discard(&Logbook::open(t.root()).unwrap()).unwrap();
}

fn index_file(t: &TestProject) -> std::path::PathBuf {
    Logbook::open(t.root()).unwrap().index_path()
}

#[test]
fn find_after_the_index_is_deleted_answers_as_the_index_did() {
    let mut t = project();
    let by_index = answers(&t);
    assert!(
        by_index[1]
            .1
            .contains("00000000-0000-4000-8000-000000000003"),
        "{}",
        by_index[1].1
    );
    assert!(
        by_index[0].2.contains("skipped 1 invalid manifest"),
        "{}",
        by_index[0].2
    );

    // No builder: the index stays lost, so every answer is the scan's.
    t.envs.push(("LOGBOOK_NO_TEXT_BUILDER".into(), "1".into()));
    lose_index(&t);
    let by_scan = answers(&t);
    assert!(
        !index_file(&t).exists(),
        "the scan answered, nothing built the index"
    );
    for ((args, scanned), indexed) in ASKED.iter().zip(&by_scan).zip(&by_index) {
        assert_eq!(scanned, indexed, "{args:?}");
    }
}

#[test]
fn the_index_is_built_behind_the_first_answer() {
    let t = project();
    let by_index = answers(&t);
    lose_index(&t);
    let first = t.run(ASKED[1]);
    assert_eq!(
        (first.code, &first.stdout, &first.stderr),
        (by_index[1].0, &by_index[1].1, &by_index[1].2)
    );
    // The detached builder holds its lock until the text is done; this
    // waits for it (or, if it has not begun, builds the index itself).
    t.run(&["index", "build-text"]).ok();
    assert!(index_file(&t).exists());
    assert_eq!(t.json(&["index", "status"])["text"]["phase"], "complete");
    assert_eq!(answers(&t), by_index);
}
