//! Hostile environments (issue 14, items 3, 14 and 15): an index that cannot
//! be opened or written, reads where no project is, and a `--root` that does
//! not exist. Files are the truth: none of these loses a write or fails a read.

use std::path::Path;

use crate::harness::TestProject;

/// Every file and folder under `root`, relative, sorted.
fn tree(root: &Path) -> Vec<String> {
    let mut out = vec![];
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            out.push(path.strip_prefix(root).unwrap().display().to_string());
            if path.is_dir() {
                stack.push(path);
            }
        }
    }
    out.sort();
    out
}

fn start_run(t: &TestProject) -> String {
    t.start_run("casey", "deep-dive", &[])["session_id"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Replaces the index file with a folder: SQLite cannot open it, as on a
/// read-only mount or a full disk, whoever the test runs as.
fn break_index(t: &TestProject) {
    let index = t.path(".logbook/index.db");
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", index.display()));
    }
    std::fs::create_dir_all(&index).unwrap();
}

#[test]
fn reads_where_no_project_is_create_nothing() {
    let t = TestProject::new();
    for args in [
        vec!["list"],
        vec!["find"],
        vec!["transcript", "list", "--all"],
        vec!["index", "status"],
        vec!["status"],
    ] {
        let r = t.run(&args);
        assert!(r.code == 0 || r.code == 4, "{args:?}: {r:?}");
        assert!(
            tree(t.root()).is_empty(),
            "{args:?} created {:?}",
            tree(t.root())
        );
    }
    assert_eq!(t.json(&["find"]), serde_json::json!([]));
}

#[test]
fn a_relative_or_file_logbook_home_is_an_error_naming_it_and_creates_nothing() {
    let mut t = TestProject::new();
    t.envs.push(("LOGBOOK_HOME".into(), "records/mine".into()));
    let said = t.run(&["transcript", "list"]).err().to_string();
    assert!(
        said.contains("LOGBOOK_HOME") && said.contains("absolute"),
        "{said}"
    );
    assert!(tree(t.root()).is_empty(), "{:?}", tree(t.root()));

    let file = t.write("notes.txt", "not a folder\n");
    t.envs = vec![("LOGBOOK_HOME".into(), file.to_str().unwrap().into())];
    let said = t.run(&["transcript", "list"]).err().to_string();
    assert!(
        said.contains("LOGBOOK_HOME") && said.contains("not a folder"),
        "{said}"
    );
    assert!(!said.contains("No transcripts"), "{said}");
}

#[test]
fn a_later_start_in_a_subfolder_makes_its_own_project() {
    let t = TestProject::new();
    assert_eq!(t.run(&["list"]).code, 0);
    let sub = t.path("work/api");
    std::fs::create_dir_all(&sub).unwrap();
    let r: crate::harness::Run = t
        .cmd(&["start", "--client", "ACME", "--project", "API", "--yes"])
        .current_dir(&sub)
        .output()
        .unwrap()
        .into();
    r.ok();
    assert!(sub.join(".logbook/sessions").is_dir());
    assert!(!t.path(".logbook").exists(), "{:?}", tree(t.root()));
}

#[test]
fn a_root_that_does_not_exist_is_an_error_except_for_start_and_init() {
    let t = TestProject::new();
    let missing = t.path("no/such/root");
    let m = missing.to_str().unwrap();
    for args in [vec!["--root", m, "list"], vec!["--root", m, "find"]] {
        let err = t.run(&args).not_found().to_string();
        assert!(err.contains("does not exist") && err.contains(m), "{err}");
    }
    let r = t
        .cmd(&["list"])
        .env("LOGBOOK_ROOT", &missing)
        .output()
        .unwrap();
    assert_eq!(r.status.code(), Some(4));
    assert!(!missing.exists());
    t.run(&[
        "--root",
        m,
        "start",
        "--client",
        "A",
        "--project",
        "B",
        "--yes",
    ])
    .ok();
    assert!(missing.join(".logbook/sessions").is_dir());
    let other = t.path("fresh");
    t.run(&["--root", other.to_str().unwrap(), "init"]).ok();
    assert!(other.join("logbook.yaml").is_file());
}

#[test]
fn an_index_that_cannot_be_opened_never_fails_a_write_or_a_read() {
    let t = TestProject::new();
    let id = start_run(&t);
    t.write(&format!("docs/agent-outputs/{id}/notes.md"), "quokka\n");
    break_index(&t);
    let r = t.run(&[
        "run",
        "output",
        &id,
        "notes.md",
        "--type",
        "document",
        "--description",
        "notes",
    ]);
    r.ok();
    assert!(
        r.stderr.contains("warning:") && r.stderr.contains("index"),
        "{}",
        r.stderr
    );
    let manifest = t.read(&format!("docs/agent-outputs/{id}/manifest.json"));
    assert!(manifest.contains("notes.md"), "{manifest}");
    // Reads answer from the files, with a one-line warning.
    let r = t.run(&["--json", "find", "--agent", "casey"]);
    let found: serde_json::Value = serde_json::from_str(r.ok()).unwrap();
    assert_eq!(found[0]["manifest"]["outputs"][0]["file"], "notes.md");
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(r.stderr.starts_with("warning: "), "{}", r.stderr);
    let r = t.run(&["lineage", &id]);
    r.ok();
    // Once the index can be written again, it catches up by itself.
    std::fs::remove_dir(t.path(".logbook/index.db")).unwrap();
    let found = t.json(&["find", "--text", "quokka"]);
    assert_eq!(found[0]["session_id"], id.as_str());
}

#[test]
fn a_session_write_with_a_broken_index_still_lands() {
    let t = TestProject::new();
    t.run(&["start", "--client", "ACME", "--project", "B", "--yes"])
        .ok();
    break_index(&t);
    let r = t.run(&["note", "kept"]);
    r.ok();
    assert!(r.stderr.contains("warning:"), "{}", r.stderr);
    let status = t.json(&["status"]);
    assert_eq!(status["notes"][0], "kept");
}

#[test]
fn runs_another_tool_wrote_get_an_index_kept_on_disk() {
    // Run folders in Logbook's format make a project worth indexing: without
    // a kept index every listing would read every manifest again.
    let t = TestProject::new();
    let id = "0b6f3b8e-8c7e-4b7a-9d41-1f2e3d4c5b6a";
    t.write(
        &format!("docs/agent-outputs/{id}/manifest.json"),
        &format!(
            r#"{{"version":"1.0.0","session_id":"{id}","agent":{{"name":"alex"}},"workflow":{{"name":"intake"}},"execution":{{"started_at":"2025-10-05T23:01:45.123Z","status":"completed"}},"outputs":[]}}"#
        ),
    );
    let found = t.json(&["find"]);
    assert_eq!(found[0]["session_id"], id);
    assert!(
        t.path(".logbook/index.db").is_file(),
        "{:?}",
        tree(t.root())
    );
}
