//! `logbook demo`: a realistic project every other command can explore.

use crate::harness::TestProject;

#[test]
fn demo_fills_every_view() {
    let t = TestProject::new();
    let demo = t.json(&["demo", "example"]);
    let root = t.path("example");
    assert_eq!(demo["root"], root.to_string_lossy().as_ref());
    let r = root.to_str().unwrap();
    let runs = demo["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 4);

    let status = t.json(&["--root", r, "status"]);
    assert_eq!(status["session_id"], demo["work_session"]);
    assert_eq!(status["agents_spawned"].as_array().unwrap().len(), 4);
    assert_eq!(status["tokens"]["saved"], 20000 + 27000 + 41000);

    let found = t.json(&["--root", r, "find", "--tag", "demo"]);
    assert_eq!(found.as_array().unwrap().len(), 4);
    let completed = t.json(&["--root", r, "find", "--status", "completed"]);
    assert_eq!(completed.as_array().unwrap().len(), 2);

    let lineage = t
        .run(&["--root", r, "lineage", runs[2].as_str().unwrap()])
        .ok()
        .to_string();
    for id in runs {
        assert!(lineage.contains(id.as_str().unwrap()), "{lineage}");
    }

    let full = t.json(&["--root", r, "workflow", "show", "--full"]);
    assert_eq!(full["fullHistory"].as_array().unwrap().len(), 12);
    let compacted = full["orchestratorWorkflow"]["compactionHistory"]
        .as_array()
        .unwrap();
    assert!(!compacted.is_empty(), "the demo should show a compaction");

    let transcripts = t.json(&["--root", r, "transcript", "list", "--all"]);
    let kinds: Vec<_> = transcripts
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["kind"].as_str().unwrap().to_string())
        .collect();
    assert!(kinds.contains(&"main".to_string()) && kinds.contains(&"subagent".to_string()));

    let latest = t
        .run(&["--root", r, "latest-output", "--agent", "alex"])
        .ok()
        .trim()
        .to_string();
    assert!(std::path::Path::new(&latest).is_file(), "{latest}");

    // A second demo into the same folder is refused, leaving it intact.
    let err = t.run(&["demo", "example"]).err().to_string();
    assert!(err.contains("already holds a Logbook project"), "{err}");
}
