//! A `kill -9` during `archive` or `unarchive` with the archive on another
//! file system (forced here with `LOGBOOK_MOVE_BY_COPY=1`: the copy,
//! verify, rename, remove path), at each point the move passes
//! (`LOGBOOK_FAULT=move-…`): `doctor` names what was left, `doctor --fix`
//! finishes or rolls the move back without losing a byte, and listings and
//! `unarchive` work again.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::harness::{Held, TestProject};

/// Every file and folder under `dir`: relative path, mode, bytes.
fn tree(dir: &Path) -> BTreeMap<String, (u32, Vec<u8>)> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, (u32, Vec<u8>)>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let path = e.unwrap().path();
            let rel = path.strip_prefix(root).unwrap().display().to_string();
            let m = std::fs::symlink_metadata(&path).unwrap();
            if m.is_dir() {
                out.insert(rel, (m.permissions().mode(), vec![]));
                walk(root, &path, out);
            } else {
                out.insert(rel, (m.permissions().mode(), std::fs::read(&path).unwrap()));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// A project with one finished run long ago (out.md, notes/a.md, an
/// executable bin/run.sh): its id.
fn project_with_old_run() -> (TestProject, String) {
    let mut t = TestProject::new();
    t.run(&["init"]).ok();
    t.now = Some("2025-01-01T00:00:00Z".into());
    let started = t.start_run("casey", "deep-dive", &[]);
    let id = started["session_id"].as_str().unwrap().to_string();
    let folder = PathBuf::from(started["folder"].as_str().unwrap());
    std::fs::write(folder.join("out.md"), "notes of deep-dive\n").unwrap();
    std::fs::create_dir(folder.join("bin")).unwrap();
    std::fs::write(folder.join("bin/run.sh"), "#!/bin/sh\necho hi\n").unwrap();
    std::fs::set_permissions(
        folder.join("bin/run.sh"),
        std::fs::Permissions::from_mode(0o750),
    )
    .unwrap();
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
    t.run(&["run", "finish", &id, "--status", "completed"]).ok();
    t.now = None;
    t.envs.push(("LOGBOOK_MOVE_BY_COPY".into(), "1".into()));
    (t, id)
}

fn live(t: &TestProject, id: &str) -> PathBuf {
    t.path(&format!("docs/agent-outputs/{id}"))
}

fn archived(t: &TestProject, id: &str) -> PathBuf {
    t.path(&format!("docs/agent-outputs-archive/{id}"))
}

/// `archive --older-than 90d` killed at the `n`th pass of `point`.
fn archive_killed_at(t: &TestProject, point: &str, n: u32) {
    Held::start(t.cmd(&["archive", "--older-than", "90d"]), point, n).kill();
}

/// The findings of kind `kind` in a doctor report.
fn of_kind<'a>(report: &'a Value, kind: &str) -> Vec<&'a Value> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == kind)
        .collect()
}

/// (session_id, status; `unknown` without a manifest) of every run `find` lists (`--archived`: the archive's).
fn listed(t: &TestProject, archived: bool) -> Vec<(String, String)> {
    let mut args = vec!["find"];
    if archived {
        args.push("--archived");
    }
    t.json(&args)
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["session_id"].as_str().unwrap().to_string(),
                r["manifest"]["execution"]["status"]
                    .as_str()
                    // No manifest: what the human listing calls `unknown`.
                    .unwrap_or("unknown")
                    .to_string(),
            )
        })
        .collect()
}

/// The temp copies (`.{id}.{pid}.tmp`) in the archive folder.
fn temp_copies(t: &TestProject) -> Vec<PathBuf> {
    std::fs::read_dir(t.path("docs/agent-outputs-archive"))
        .map(|d| {
            d.map(|e| e.unwrap().path())
                .filter(|p| {
                    let n = p.file_name().unwrap().to_string_lossy().into_owned();
                    n.starts_with('.') && n.ends_with(".tmp")
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Killed while removing the live folder (after its manifest went, after it
/// was emptied) or before removing anything: the run is whole in the
/// archive, and the live leftover shadows it until `doctor --fix` removes
/// it, after which listings and `unarchive` work as if the move had ended.
#[test]
fn an_archive_killed_while_removing_the_live_folder_is_finished_by_doctor_fix() {
    for point in ["move-emptied", "move-unkeyed", "move-renamed"] {
        let (t, id) = project_with_old_run();
        let before = tree(&live(&t, &id));
        archive_killed_at(&t, point, 1);
        assert_eq!(
            tree(&archived(&t, &id)),
            before,
            "{point}: the archive is whole"
        );
        assert!(
            live(&t, &id).is_dir(),
            "{point}: the live leftover is there"
        );

        if point != "move-renamed" {
            // The reproduction: the leftover shadows the archived run.
            assert!(
                listed(&t, false).contains(&(id.clone(), "unknown".into())),
                "{point}: {:?}",
                listed(&t, false)
            );
            let refused = t.run(&["unarchive", &id]).err().to_string();
            assert!(refused.contains("doctor --fix"), "{point}: {refused}");
        }

        let report = t.doctor(&[]);
        let found = of_kind(&report, "interrupted-archive");
        assert_eq!(found.len(), 1, "{point}: {report}");
        assert_eq!(found[0]["path"], live(&t, &id).display().to_string());
        assert!(
            of_kind(&report, "orphan-folder").is_empty(),
            "{point}: not an orphan: {report}"
        );

        let fixed = t.doctor(&["--fix"]);
        let found = of_kind(&fixed, "interrupted-archive");
        assert!(
            found[0]["fixed"].as_str().unwrap().starts_with("removed"),
            "{point}: {fixed}"
        );
        assert!(!live(&t, &id).exists(), "{point}");
        assert_eq!(tree(&archived(&t, &id)), before, "{point}");
        assert_eq!(t.doctor(&[])["findings"], serde_json::json!([]), "{point}");
        assert!(
            listed(&t, false).is_empty(),
            "{point}: {:?}",
            listed(&t, false)
        );
        assert_eq!(
            listed(&t, true),
            vec![(id.clone(), "completed".into())],
            "{point}"
        );

        t.json(&["unarchive", &id]);
        assert_eq!(tree(&live(&t, &id)), before, "{point}");
        assert!(!archived(&t, &id).exists(), "{point}");
    }
}

/// Killed while copying, or with the copy whole but not in place: the run
/// is whole where it was, and the `.{id}.{pid}.tmp` copy in the archive is
/// named by doctor and removed by `--fix`; archiving again then works.
#[test]
fn an_archive_killed_before_its_copy_was_in_place_leaves_a_temp_copy_doctor_removes() {
    for (point, n) in [("move-copying", 2), ("move-copied", 1)] {
        let (t, id) = project_with_old_run();
        let before = tree(&live(&t, &id));
        archive_killed_at(&t, point, n);
        assert_eq!(tree(&live(&t, &id)), before, "{point}: the run is whole");
        let copies = temp_copies(&t);
        assert_eq!(copies.len(), 1, "{point}: {copies:?}");

        let report = t.doctor(&[]);
        let found = of_kind(&report, "temp-copy");
        assert_eq!(found.len(), 1, "{point}: {report}");
        assert_eq!(found[0]["path"], copies[0].display().to_string());
        assert!(
            found[0]["message"].as_str().unwrap().contains(&id),
            "{point}: {report}"
        );

        let fixed = t.doctor(&["--fix"]);
        let found = of_kind(&fixed, "temp-copy");
        assert!(
            found[0]["fixed"].as_str().unwrap().starts_with("removed"),
            "{point}: {fixed}"
        );
        assert!(temp_copies(&t).is_empty(), "{point}");
        assert_eq!(tree(&live(&t, &id)), before, "{point}");

        let moved = t.json(&["archive", "--older-than", "90d"]);
        assert_eq!(moved["count"], 1, "{point}: {moved}");
        assert_eq!(tree(&archived(&t, &id)), before, "{point}");
    }
}

/// An unarchive killed while removing the archived folder: the run is
/// whole and live, and `--fix` removes the archived remainder.
#[test]
fn an_unarchive_killed_while_removing_the_archived_folder_is_finished_by_doctor_fix() {
    let (t, id) = project_with_old_run();
    let before = tree(&live(&t, &id));
    t.json(&["archive", "--older-than", "90d"]);
    Held::start(t.cmd(&["unarchive", &id]), "move-unkeyed", 1).kill();
    assert_eq!(tree(&live(&t, &id)), before);

    let report = t.doctor(&[]);
    let found = of_kind(&report, "interrupted-unarchive");
    assert_eq!(found.len(), 1, "{report}");
    assert_eq!(found[0]["path"], archived(&t, &id).display().to_string());

    let fixed = t.doctor(&["--fix"]);
    let found = of_kind(&fixed, "interrupted-unarchive");
    assert!(
        found[0]["fixed"].as_str().unwrap().starts_with("removed"),
        "{fixed}"
    );
    assert!(!archived(&t, &id).exists());
    assert_eq!(listed(&t, false), vec![(id.clone(), "completed".into())]);
    assert!(listed(&t, true).is_empty());
}

/// What is not shown to be a duplicate is never removed: a leftover with a
/// file changed since, and a temp copy whose run's lock a live move holds.
#[test]
fn doctor_fix_leaves_alone_what_it_cannot_prove_a_duplicate() {
    let (t, id) = project_with_old_run();
    archive_killed_at(&t, "move-unkeyed", 1);
    std::fs::write(live(&t, &id).join("out.md"), "edited after the kill\n").unwrap();
    let fixed = t.doctor(&["--fix"]);
    let found = of_kind(&fixed, "interrupted-archive");
    let said = found[0]["fixed"].as_str().unwrap();
    assert!(said.starts_with("left alone: "), "{fixed}");
    assert!(said.contains("out.md"), "{said}");
    assert_eq!(
        std::fs::read_to_string(live(&t, &id).join("out.md")).unwrap(),
        "edited after the kill\n"
    );

    // A move still under way holds the run's lock: its copy is not touched.
    let (t, id) = project_with_old_run();
    let held = Held::start(t.cmd(&["archive", "--older-than", "90d"]), "move-copied", 1);
    let fixed = t.doctor(&["--fix"]);
    let found = of_kind(&fixed, "temp-copy");
    let said = found[0]["fixed"].as_str().unwrap();
    assert!(
        said.starts_with("left alone: ") && said.contains("lock"),
        "{fixed}"
    );
    held.finish();
    assert!(temp_copies(&t).is_empty());
    assert!(archived(&t, &id).join("manifest.json").is_file());
    assert!(!live(&t, &id).exists());
}
