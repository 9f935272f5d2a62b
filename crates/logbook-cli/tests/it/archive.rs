//! `logbook archive`, `unarchive` and `delete`: finished runs move out of
//! the live set byte for byte and back, listings leave them out (and say
//! how many), reads still reach them, writers racing an archive either land
//! before the move or are refused, and delete is the one way a run goes,
//! leaving a tombstone.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::harness::TestProject;
use crate::mcp::Mcp;

/// When the old runs were started and finished: long before the archive's
/// real "now".
const LONG_AGO: &str = "2025-01-01T00:00:00Z";

/// Every file and folder under `dir`: its relative path, mode, and bytes
/// (a symlink: its target).
fn tree(dir: &Path) -> BTreeMap<String, (u32, Vec<u8>)> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, (u32, Vec<u8>)>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            let path = e.path();
            let rel = path.strip_prefix(root).unwrap().display().to_string();
            let m = std::fs::symlink_metadata(&path).unwrap();
            let mode = m.permissions().mode();
            if m.is_symlink() {
                let target = std::fs::read_link(&path).unwrap();
                out.insert(rel, (mode, target.display().to_string().into_bytes()));
            } else if m.is_dir() {
                out.insert(rel, (mode, vec![]));
                walk(root, &path, out);
            } else {
                out.insert(rel, (mode, std::fs::read(&path).unwrap()));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// A project whose runs start and finish `LONG_AGO` unless `t.now` is reset.
fn project() -> TestProject {
    let mut t = TestProject::new();
    t.run(&["init"]).ok();
    t.now = Some(LONG_AGO.into());
    t
}

/// Starts a run of `agent` and `workflow`, writes `out.md` (and a
/// subfolder with an executable file) into it, registers the file and
/// finishes it as `status` (`None`: left running). Its id.
fn run_with_files(t: &TestProject, agent: &str, workflow: &str, status: Option<&str>) -> String {
    let started = t.start_run(agent, workflow, &[]);
    let id = started["session_id"].as_str().unwrap().to_string();
    let folder = PathBuf::from(started["folder"].as_str().unwrap());
    std::fs::write(folder.join("out.md"), format!("notes of {workflow}\n")).unwrap();
    std::fs::create_dir(folder.join("bin")).unwrap();
    let script = folder.join("bin/run.sh");
    std::fs::write(&script, "#!/bin/sh\necho hi\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o750)).unwrap();
    t.run(&[
        "run",
        "output",
        &id,
        "out.md",
        "--type",
        "document",
        "--description",
        "notes",
    ])
    .ok();
    if let Some(status) = status {
        t.run(&["run", "finish", &id, "--status", status]).ok();
    }
    id
}

fn live(t: &TestProject, id: &str) -> PathBuf {
    t.path(&format!("docs/agent-outputs/{id}"))
}

fn archived(t: &TestProject, id: &str) -> PathBuf {
    t.path(&format!("docs/agent-outputs-archive/{id}"))
}

fn ids(found: &Value) -> Vec<String> {
    let mut v: Vec<String> = found
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["session_id"].as_str().unwrap().to_string())
        .collect();
    v.sort();
    v
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

#[test]
fn archive_then_unarchive_gives_byte_identical_trees() {
    let mut t = project();
    let id = run_with_files(&t, "casey", "deep-dive", Some("completed"));
    std::os::unix::fs::symlink("out.md", live(&t, &id).join("latest.md")).unwrap();
    let before = tree(&live(&t, &id));
    t.now = None;

    let moved = t.json(&["archive", "--older-than", "90d"]);
    assert_eq!(moved["count"], 1, "{moved}");
    assert_eq!(moved["moved"][0]["session_id"], id.as_str());
    assert!(!live(&t, &id).exists(), "the live folder is gone");
    assert_eq!(tree(&archived(&t, &id)), before);

    let back = t.json(&["unarchive", &id]);
    assert_eq!(back["folder"], live(&t, &id).display().to_string());
    assert!(!archived(&t, &id).exists());
    assert_eq!(tree(&live(&t, &id)), before);
}

#[test]
fn a_dry_run_changes_nothing_and_says_what_would_move() {
    let mut t = project();
    let id = run_with_files(&t, "casey", "deep-dive", Some("completed"));
    t.now = None;
    let outputs = t.path("docs/agent-outputs");
    let before = tree(&outputs);
    let listed = t.json(&["find"]);

    let out = t.run(&["archive", "--older-than", "90d", "--dry-run"]);
    let text = out.ok();
    assert!(text.contains(&format!("would move {id}")), "{text}");
    assert!(text.contains("Would archive 1 run(s)"), "{text}");
    let json = t.json(&["archive", "--older-than", "90d", "--dry-run"]);
    assert_eq!(json["dry_run"], true);
    assert_eq!(json["count"], 1);

    assert_eq!(tree(&outputs), before);
    assert_eq!(t.json(&["find"]), listed);
}

#[test]
fn the_status_filter_and_age_choose_and_running_runs_never_move() {
    let mut t = project();
    let done = run_with_files(&t, "casey", "a", Some("completed"));
    let failed = run_with_files(&t, "casey", "b", Some("failed"));
    let running = run_with_files(&t, "casey", "c", None);
    t.now = None;
    let recent = run_with_files(&t, "casey", "d", Some("completed"));

    let moved = t.json(&["archive", "--older-than", "90d", "--status", "failed"]);
    assert_eq!(moved["count"], 1, "{moved}");
    assert!(archived(&t, &failed).is_dir());
    assert!(live(&t, &done).is_dir());

    // Every finished status; the running run and the recent one stay.
    let moved = t.json(&["archive", "--older-than", "2w"]);
    assert_eq!(moved["count"], 1, "{moved}");
    assert!(archived(&t, &done).is_dir());
    assert!(live(&t, &running).is_dir());
    assert!(live(&t, &recent).is_dir());

    // Asking for running runs is refused, whatever the age.
    let err = t
        .run(&["archive", "--older-than", "1m", "--status", "running"])
        .err()
        .to_string();
    assert!(err.contains("running runs are never archived"), "{err}");
    for bad in ["90", "d", "0d", "1.5w", "3y"] {
        let err = t.run(&["archive", "--older-than", bad]).err().to_string();
        assert!(err.contains("e.g. 90d"), "{bad}: {err}");
    }
    assert!(live(&t, &running).is_dir());
}

#[test]
fn the_retention_policy_is_applied_only_with_policy() {
    let mut t = project();
    let mut config = t.read("logbook.yaml");
    config = config.replace(
        "retention: {}",
        "retention: {archive_after: 30d, statuses: [completed]}",
    );
    std::fs::write(t.path("logbook.yaml"), config).unwrap();
    let done = run_with_files(&t, "casey", "a", Some("completed"));
    let failed = run_with_files(&t, "casey", "b", Some("failed"));
    t.now = None;

    // Nothing else ever applies it.
    t.run(&["find"]).ok();
    t.run(&["index", "sync"]).ok();
    t.run(&["index", "rebuild"]).ok();
    t.doctor(&[]);
    assert!(live(&t, &done).is_dir());

    let would = t.json(&["archive", "--policy", "--dry-run"]);
    assert_eq!(would["count"], 1, "{would}");
    assert!(live(&t, &done).is_dir());
    let moved = t.json(&["archive", "--policy"]);
    assert_eq!(moved["moved"][0]["session_id"], done.as_str(), "{moved}");
    assert!(archived(&t, &done).is_dir());
    assert!(live(&t, &failed).is_dir(), "failed is not in the policy");
}

#[test]
fn a_policy_that_is_not_there_or_is_wrong_is_said() {
    let t = project();
    let err = t.run(&["archive", "--policy"]).err().to_string();
    assert!(err.contains("has no retention policy"), "{err}");
    std::fs::write(t.path("logbook.yaml"), "retention: {archive_after: soon}\n").unwrap();
    let err = t.run(&["find"]).err().to_string();
    assert!(
        err.contains("line 1: key retention: archive_after"),
        "{err}"
    );
    std::fs::write(
        t.path("logbook.yaml"),
        "retention: {archive_after: 9d, statuses: [running]}\n",
    )
    .unwrap();
    let err = t.run(&["find"]).err().to_string();
    assert!(err.contains("not a finished status"), "{err}");
}

#[test]
fn find_leaves_archived_runs_out_says_how_many_and_lists_them_on_request() {
    let mut t = project();
    let old = run_with_files(&t, "casey", "deep-dive", Some("completed"));
    let old2 = run_with_files(&t, "casey", "deep-dive", Some("failed"));
    t.now = None;
    let new = run_with_files(&t, "casey", "deep-dive", Some("completed"));
    t.json(&["archive", "--older-than", "90d"]);

    let out = t.run(&["--json", "find", "--agent", "casey"]);
    let found: Value = serde_json::from_str(out.ok()).unwrap();
    assert_eq!(ids(&found), vec![new.clone()]);
    assert!(
        out.stderr.contains(
            "2 archived run(s) match too, left out; `logbook find --archived` lists them"
        ),
        "{}",
        out.stderr
    );
    let out = t.run(&["find", "--status", "failed"]);
    assert!(out.ok().contains("No runs match"), "{}", out.stdout);
    assert!(
        out.stderr.contains("1 archived run(s) match too"),
        "{}",
        out.stderr
    );

    let found = t.json(&["find", "--archived"]);
    assert_eq!(ids(&found), sorted(vec![old.clone(), old2.clone()]));
    let found = t.json(&["find", "--archived", "--text", "notes"]);
    assert_eq!(ids(&found), sorted(vec![old.clone(), old2.clone()]));
    let found = t.json(&["find", "--archived", "--status", "failed"]);
    assert_eq!(ids(&found), vec![old2.clone()]);
    // No note when nothing was left out.
    let out = t.run(&["find", "--agent", "nobody"]);
    assert!(!out.stderr.contains("archived"), "{}", out.stderr);

    // After the index is thrown away, a rebuild walks the archive too.
    std::fs::remove_file(t.path(".logbook/index.db")).unwrap();
    assert_eq!(ids(&t.json(&["find"])), vec![new.clone()]);
    assert_eq!(
        ids(&t.json(&["find", "--archived"])),
        sorted(vec![old.clone(), old2.clone()])
    );

    // MCP and HTTP add the count beside what they always said.
    let mut m = Mcp::start(&t);
    let page = m.ok("find_runs", json!({"agent": "casey"}));
    assert_eq!(page["archivedMatches"], 2, "{page}");
    assert_eq!(page["total"], 1, "{page}");
    let page = m.ok("find_runs", json!({"archived": true}));
    assert_eq!(page["total"], 2, "{page}");
    drop(m);
    let (mut server, url) = crate::serve::serve(&t, &["--bind", "127.0.0.1:0"], None);
    let answer = crate::serve::get(&url, "/api/runs", "");
    let _ = server.kill();
    let _ = server.wait();
    assert!(
        answer
            .to_ascii_lowercase()
            .contains("x-logbook-archived: 2"),
        "{answer}"
    );
}

#[test]
fn an_archived_run_is_still_shown_linked_and_its_latest_output_found() {
    let mut t = project();
    let parent = run_with_files(&t, "casey", "research", Some("completed"));
    t.now = None;
    let child = t.start_run("casey", "write-up", &["--related", &parent]);
    let child = child["session_id"].as_str().unwrap().to_string();
    t.json(&["archive", "--older-than", "90d"]);
    assert!(archived(&t, &parent).is_dir());

    let shown = t.json(&["run", "show", &parent]);
    assert_eq!(shown["folder"], archived(&t, &parent).display().to_string());
    let shown = t.json(&["run", "show", &parent[..8]]);
    assert_eq!(shown["session_id"], parent.as_str());
    let lineage = t.json(&["lineage", &child, "--format", "json"]);
    assert!(lineage.to_string().contains(&parent), "{lineage}");
    let path = t.run(&["latest-output", "--agent", "casey"]);
    assert_eq!(
        path.ok().trim(),
        archived(&t, &parent).join("out.md").display().to_string()
    );

    let mut m = Mcp::start(&t);
    let shown = m.ok("run_show", json!({"id": parent}));
    assert_eq!(shown["session_id"], parent.as_str());
    let out = m.ok("latest_output", json!({"agent": "casey"}));
    assert!(out.to_string().contains("agent-outputs-archive"), "{out}");
    let lineage = m.ok("run_lineage", json!({"id": child}));
    assert!(lineage.to_string().contains(&parent), "{lineage}");
}

#[test]
fn the_viewer_serves_an_archived_run_but_refuses_a_symlink_out_of_the_archive() {
    let mut t = project();
    let id = run_with_files(&t, "casey", "research", Some("completed"));
    let other = run_with_files(&t, "casey", "research", Some("completed"));
    t.now = None;
    t.json(&["archive", "--older-than", "90d"]);
    // `other`'s archived folder becomes a symlink to a copy elsewhere.
    let outside = t.path("elsewhere");
    std::fs::rename(archived(&t, &other), &outside).unwrap();
    std::os::unix::fs::symlink(&outside, archived(&t, &other)).unwrap();

    let (mut server, url) = crate::serve::serve(&t, &["--bind", "127.0.0.1:0"], None);
    let ok = crate::serve::get(&url, &format!("/api/runs/{id}/files/out.md"), "");
    let refused = crate::serve::get(&url, &format!("/api/runs/{other}"), "");
    let refused_file = crate::serve::get(&url, &format!("/api/runs/{other}/files/out.md"), "");
    let _ = server.kill();
    let _ = server.wait();
    assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
    assert!(ok.contains("notes of research"), "{ok}");
    assert!(refused.starts_with("HTTP/1.1 403"), "{refused}");
    assert!(refused_file.starts_with("HTTP/1.1 403"), "{refused_file}");
}

#[test]
fn a_write_to_an_archived_run_is_refused_and_makes_no_live_folder() {
    let mut t = project();
    let id = run_with_files(&t, "casey", "research", Some("completed"));
    let other = run_with_files(&t, "casey", "other", None);
    t.now = None;
    t.json(&["archive", "--older-than", "90d"]);
    let err = t.run(&["run", "link", &id, &other]).err().to_string();
    assert!(
        err.contains(&format!(
            "run {id} was archived to {}; run `logbook unarchive {id}` first",
            archived(&t, &id).display()
        )),
        "{err}"
    );
    assert!(!live(&t, &id).exists());
    let err = t.run(&["run", "finish", &id]).err().to_string();
    assert!(err.contains("was archived to"), "{err}");
    assert!(!live(&t, &id).exists());

    // Unarchive refuses when a folder of that name is live again.
    std::fs::create_dir(live(&t, &id)).unwrap();
    let err = t.run(&["unarchive", &id]).err().to_string();
    assert!(err.contains("already exists"), "{err}");
    assert!(err.contains("in the live set"), "{err}");
    assert!(archived(&t, &id).join("manifest.json").is_file());
}

#[test]
fn writers_racing_an_archive_land_before_the_move_or_are_refused() {
    let mut t = project();
    let running: Vec<String> = (0..4)
        .map(|i| run_with_files(&t, "casey", &format!("live-{i}"), None))
        .collect();
    let finished: Vec<String> = (0..16)
        .map(|i| run_with_files(&t, "casey", &format!("old-{i}"), Some("completed")))
        .collect();
    t.now = None;

    // 8 writer processes at once, each linking its share of the finished
    // runs to a running one and registering an output of a running run,
    // while an archive moves the finished runs.
    let t = &t;
    let results: Vec<(String, String, bool, String)> = std::thread::scope(|s| {
        let archiver = s.spawn(|| t.run(&["--json", "archive", "--older-than", "90d"]));
        let writers: Vec<_> = (0..8)
            .map(|w| {
                let finished = &finished;
                let running = &running;
                s.spawn(move || {
                    let mut out = vec![];
                    for (j, child) in finished.iter().enumerate().filter(|(j, _)| j % 8 == w) {
                        let parent = &running[(w + j) % running.len()];
                        let r = t.run(&["run", "link", child, parent]);
                        out.push((child.clone(), parent.clone(), r.code == 0, r.stderr));
                        let run = &running[w % running.len()];
                        let r = t.run(&[
                            "run",
                            "output",
                            run,
                            "out.md",
                            "--type",
                            "document",
                            "--description",
                            &format!("writer {w}"),
                        ]);
                        assert_eq!(r.code, 0, "{}", r.stderr);
                    }
                    out
                })
            })
            .collect();
        let results = writers
            .into_iter()
            .flat_map(|w| w.join().unwrap())
            .collect();
        let archived = archiver.join().unwrap();
        assert_eq!(archived.code, 0, "{}", archived.stderr);
        results
    });
    assert_eq!(results.len(), 16);
    for (child, parent, landed, stderr) in &results {
        let (here, there) = (live(t, child), archived(t, child));
        // All in one place: never half moved.
        assert!(
            here.is_dir() != there.is_dir(),
            "{child} in both or neither"
        );
        let folder = if here.is_dir() { here } else { there };
        for f in ["manifest.json", "out.md", "bin/run.sh"] {
            assert!(folder.join(f).is_file(), "{child}: {f} missing");
        }
        let manifest: Value =
            serde_json::from_str(&std::fs::read_to_string(folder.join("manifest.json")).unwrap())
                .unwrap();
        let linked = manifest["related_sessions"]
            .as_array()
            .is_some_and(|r| r.iter().any(|p| p == parent.as_str()));
        if *landed {
            assert!(linked, "{child}: a write that succeeded was lost");
        } else {
            assert!(
                stderr.contains("was archived to") && stderr.contains("logbook unarchive"),
                "{child}: refused for another reason: {stderr}"
            );
            assert!(!linked, "{child}: a refused write landed");
            assert!(folder.starts_with(t.path("docs/agent-outputs-archive")));
        }
    }
    // The archive took every finished run, in the end.
    for id in &finished {
        assert!(archived(t, id).is_dir(), "{id} not archived");
    }
    for id in &running {
        assert!(live(t, id).is_dir(), "{id} (running) moved");
    }
    assert_eq!(ids(&t.json(&["find", "--archived"])).len(), 16);
}

#[test]
fn delete_asks_for_yes_refuses_a_linked_run_and_leaves_a_tombstone() {
    let mut t = project();
    let parent = run_with_files(&t, "casey", "research", Some("completed"));
    let lone = run_with_files(&t, "casey", "alone", Some("completed"));
    let child = t.start_run("casey", "write-up", &["--related", &parent]);
    let child = child["session_id"].as_str().unwrap().to_string();
    t.run(&["run", "finish", &child]).ok();
    t.now = None;

    let err = t.run(&["delete", &lone]).err().to_string();
    assert!(err.contains("not deleted"), "{err}");
    assert!(
        err.contains(&live(&t, &lone).display().to_string()),
        "{err}"
    );
    assert!(
        err.contains(&format!("logbook delete {lone} --yes")),
        "{err}"
    );
    assert!(live(&t, &lone).is_dir());

    let gone = t.json(&["delete", &lone, "--yes"]);
    assert_eq!(gone["session_id"], lone.as_str());
    assert!(!live(&t, &lone).exists());
    let tomb = t.path(&format!(
        "docs/agent-outputs-archive/.tombstones/{lone}.json"
    ));
    let record: Value = serde_json::from_str(&std::fs::read_to_string(&tomb).unwrap()).unwrap();
    assert_eq!(record["id"], lone.as_str());
    assert_eq!(record["agent"], "casey");
    assert_eq!(record["workflow"], "alone");
    assert_eq!(record["status"], "completed");
    assert_eq!(record["by"], "tester");
    assert_eq!(record["manifest"]["session_id"], lone.as_str());
    assert!(record["deleted_at"].is_string());
    let err = t.run(&["run", "show", &lone]).not_found().to_string();
    assert!(err.contains(&format!("run {lone} was deleted at")), "{err}");
    assert!(ids(&t.json(&["find"])).iter().all(|i| *i != lone));

    let err = t.run(&["delete", &parent, "--yes"]).err().to_string();
    assert!(err.contains(&format!("linked from run: {child}")), "{err}");
    assert!(err.contains("--force"), "{err}");
    assert!(live(&t, &parent).is_dir());

    // Archived runs are deleted the same way.
    t.now = Some("2026-01-01T00:00:00Z".into());
    t.json(&["archive", "--older-than", "1m", "--status", "completed"]);
    t.now = None;
    assert!(archived(&t, &parent).is_dir());
    let gone = t.json(&["delete", &parent, "--yes", "--force"]);
    assert_eq!(gone["linked_from"], json!([child]));
    assert!(!archived(&t, &parent).exists());
    // The child, archived with it, stays; only the parent went.
    assert_eq!(ids(&t.json(&["find", "--archived"])), vec![child.clone()]);
    let shown = t.json(&["run", "show", &child]);
    assert_eq!(shown["manifest"]["related_sessions"], json!([parent]));

    // A project with an archive and tombstones is clean to doctor.
    let report = t.doctor(&[]);
    assert_eq!(report["findings"], json!([]), "{report}");
}

#[test]
fn doctor_and_sync_take_the_archive_for_no_run_folder() {
    let mut t = project();
    let id = run_with_files(&t, "casey", "research", Some("completed"));
    t.now = None;
    run_with_files(&t, "casey", "fresh", Some("completed"));
    t.json(&["archive", "--older-than", "90d"]);
    let report = t.doctor(&[]);
    assert_eq!(report["findings"], json!([]), "{report}");
    t.run(&["index", "sync"]).ok();
    assert_eq!(ids(&t.json(&["find", "--archived"])), vec![id.clone()]);

    // A run another tool moved into the archive by hand is found by sync.
    let moved = run_with_files(&t, "casey", "by-hand", Some("completed"));
    std::fs::rename(live(&t, &moved), archived(&t, &moved)).unwrap();
    t.run(&["index", "sync"]).ok();
    assert_eq!(
        ids(&t.json(&["find", "--archived"])),
        sorted(vec![id, moved])
    );
}

#[test]
fn lineage_says_a_deleted_run_was_deleted_not_missing() {
    let mut t = project();
    t.now = None;
    let draft = t.start_run("robin", "draft", &[]);
    let draft = draft["session_id"].as_str().unwrap().to_string();
    let review = t.start_run("robin", "review", &["--related", &draft]);
    let review = review["session_id"].as_str().unwrap().to_string();
    t.json(&["delete", &draft, "--yes", "--force"]);

    let tree = t.run(&["lineage", &review]).ok().to_string();
    assert!(tree.contains(&format!("{draft} (deleted ")), "{tree}");
    assert!(!tree.contains("missing"), "{tree}");
    let json = t.json(&["lineage", &review, "--format", "json"]);
    let node = json["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["session_id"] == draft.as_str())
        .unwrap_or_else(|| panic!("{json}"));
    assert!(node["deleted_at"].is_string(), "{node}");
}

/// An archive where Logbook kept it before, inside the runs folder (with
/// `logbook.yaml` as `init` wrote it then): it keeps working, `doctor`
/// names it, and `doctor --fix` or the next `archive` moves it beside the
/// runs folder with every run and tombstone; a namesake with other bytes
/// stays and is named.
#[test]
fn an_archive_inside_the_runs_folder_is_moved_beside_it_with_every_tombstone() {
    for by in ["doctor", "archive"] {
        let mut t = project();
        std::fs::write(
            t.path("logbook.yaml"),
            "archive_folder: '{agent_outputs_folder}/.archive'\n",
        )
        .unwrap();
        let kept = run_with_files(&t, "casey", "kept", Some("completed"));
        let gone = run_with_files(&t, "casey", "gone", Some("completed"));
        t.now = None;
        t.json(&["archive", "--older-than", "90d"]);
        t.run(&["delete", &gone, "--yes"]).ok();
        run_with_files(&t, "casey", "fresh", Some("completed"));
        // Where the older layout had them: inside the runs folder.
        let (new, old) = (
            t.path("docs/agent-outputs-archive"),
            t.path("docs/agent-outputs/.archive"),
        );
        std::fs::rename(&new, &old).unwrap();
        t.run(&["index", "sync"]).ok();
        assert_eq!(ids(&t.json(&["find", "--archived"])), vec![kept.clone()]);
        let report = t.doctor(&[]);
        assert_eq!(
            report["findings"][0]["kind"], "archive-in-runs-folder",
            "{report}"
        );
        if by == "doctor" {
            let fixed = t.doctor(&["--fix"]);
            let said = fixed["findings"][0]["fixed"].as_str().unwrap();
            assert!(
                said.starts_with("moved 1 run(s) and 1 tombstone(s)"),
                "{said}"
            );
        } else {
            t.json(&["archive", "--older-than", "90d"]);
        }
        assert!(!old.exists(), "{by}");
        assert!(new.join(&kept).join("manifest.json").is_file());
        assert!(new.join(format!(".tombstones/{gone}.json")).is_file());
        // Found where it now is, without a sync: the move told the index.
        assert_eq!(ids(&t.json(&["find", "--archived"])), vec![kept.clone()]);
        let err = t.run(&["run", "show", &gone]).not_found().to_string();
        assert!(err.contains(&format!("run {gone} was deleted at")), "{err}");
        assert_eq!(t.doctor(&[])["findings"], json!([]));
        t.run(&["unarchive", &kept]).ok();
    }
}

#[test]
fn a_namesake_in_the_new_archive_is_never_overwritten_by_the_move() {
    let mut t = project();
    let id = run_with_files(&t, "casey", "twice", Some("completed"));
    t.now = None;
    t.json(&["archive", "--older-than", "90d"]);
    let new = t.path("docs/agent-outputs-archive");
    let old = t.path("docs/agent-outputs/.archive");
    // The same run in both places, the older copy edited since.
    copy_dir(&new, &old);
    std::fs::write(old.join(&id).join("notes.md"), "other bytes").unwrap();
    let fixed = t.doctor(&["--fix"]);
    let finding = &fixed["findings"][0];
    assert_eq!(finding["kind"], "archive-in-runs-folder", "{fixed}");
    let said = finding["fixed"].as_str().unwrap();
    assert!(said.starts_with("could not move everything"), "{said}");
    assert_eq!(
        std::fs::read_to_string(old.join(&id).join("notes.md")).unwrap(),
        "other bytes"
    );
    assert!(new.join(&id).join("manifest.json").is_file());
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}
