//! Files changed behind Logbook's back (edited in place, copied, removed,
//! torn): verify-on-read and `sync` bring the index back to what the files
//! say.

use std::path::Path;

use logbook::model::query::RunQuery;
use logbook::model::run::RunStatus;
use logbook::ops::query::{self, FindOptions, Scope};
use logbook_index::{Index, Kind};
use serde_json::{Value, json};

use crate::index_common::*;

#[test]
fn a_manifest_edited_in_place_is_seen_by_find_and_by_sync() {
    let (_dir, p) = project();
    let a = start(&p, "alex", "intake");
    let b = start(&p, "alex", "intake");
    let index = Index::open(&p).unwrap();
    assert_eq!(stale(&index), [0, 0, 0]);

    // Verify-on-read: a run the query returns is checked against its file.
    edit_manifest(&p, &a, |m| {
        m["execution"]["status"] = json!("completed");
        m["execution"]["completed_at"] = json!("2025-10-06T17:09:30Z");
        m["tags"] = json!(["edited"]);
    });
    let hits = find(&index, by_agent("alex"));
    let hit = hits.iter().find(|h| h.run.id.as_str() == a).unwrap();
    assert_eq!(hit.run.manifest.execution.status, RunStatus::Completed);
    assert_eq!(hit.run.manifest.tags, ["edited"]);
    // …and the re-read went into the index, filters included.
    assert_eq!(ids(&find(&index, by_tag("edited"))), [a.as_str()]);
    assert_eq!(stale(&index), [0, 0, 0]);

    // Sync: the edit is found by its size and mtime.
    edit_manifest(&p, &b, |m| {
        m["workflow"]["name"] = json!("renamed-workflow")
    });
    assert_eq!(stale(&index), [0, 1, 0]);
    let report = index.upkeep().sync().unwrap();
    assert_eq!(report.indexed, 1);
    assert_eq!(report.removed, 0);
    let renamed = RunQuery {
        workflow: Some("renamed-workflow".into()),
        ..RunQuery::default()
    };
    let hits = find(&index, renamed);
    assert_eq!(ids(&hits), [b.as_str()]);
    assert_eq!(hits[0].run.manifest.workflow.name, "renamed-workflow");
    assert_eq!(stale(&index), [0, 0, 0]);
    assert_eq!(index.upkeep().status().unwrap().runs, 2);
}

#[test]
fn a_sync_of_in_place_edits_replaces_changed_words_and_keeps_the_others() {
    let (_dir, p) = project();
    let runs: Vec<String> = (0..8)
        .map(|i| start(&p, &format!("agent{i}"), "intake"))
        .collect();
    for (i, id) in runs.iter().enumerate() {
        edit_manifest(&p, id, |m| {
            m["agent"]["title"] = json!(format!("oldword{i}"))
        });
    }
    let index = Index::open(&p).unwrap();
    index.upkeep().sync().unwrap();
    // Several runs in one sync group: the even ones change a word, the
    // odd ones change no searchable text (a status, and the formatting).
    for (i, id) in runs.iter().enumerate() {
        if i % 2 == 0 {
            edit_manifest(&p, id, |m| {
                m["agent"]["title"] = json!(format!("newword{i}"))
            });
        } else {
            let path = manifest_path(&p, id);
            let mut m: Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            m["execution"]["status"] = json!("failed");
            std::fs::write(&path, serde_json::to_string(&m).unwrap()).unwrap();
        }
    }
    assert_eq!(stale(&index), [0, 8, 0]);
    assert_eq!(index.upkeep().sync().unwrap().indexed, 8);
    let text = |index: &Index, words: &str| ids(&find(index, by_text(words)));
    let check = |index: &Index| {
        for (i, id) in runs.iter().enumerate() {
            let (old, new) = (format!("oldword{i}"), format!("newword{i}"));
            if i % 2 == 0 {
                assert_eq!(text(index, &new), [id.as_str()], "{new}");
                assert!(text(index, &old).is_empty(), "{old} outlived its edit");
            } else {
                assert_eq!(text(index, &old), [id.as_str()], "{old} was lost");
            }
            assert_eq!(text(index, &format!("agent{i}")), [id.as_str()]);
        }
    };
    check(&index);
    let synced = answers(&index);
    drop(index);
    Index::rebuild(&p, None).unwrap();
    let rebuilt = Index::open(&p).unwrap();
    assert_eq!(answers(&rebuilt), synced);
    check(&rebuilt);
}

#[test]
fn sync_picks_up_runs_added_and_removed_by_another_tool() {
    let (_dir, p) = project();
    let a = start(&p, "alex", "intake");
    let index = Index::open(&p).unwrap();

    // Another tool copies a run under a new id and deletes the original.
    let copy = "0b7e9d2a-8c1f-4e3d-a6b5-9c8d7e6f5a4b";
    std::fs::create_dir(folder(&p, copy)).unwrap();
    let mut m: Value =
        serde_json::from_str(&std::fs::read_to_string(manifest_path(&p, &a)).unwrap()).unwrap();
    m["session_id"] = json!(copy);
    m["agent"]["name"] = json!("other-tool");
    std::fs::write(manifest_path(&p, copy), m.to_string()).unwrap();
    std::fs::remove_dir_all(folder(&p, &a)).unwrap();

    assert_eq!(stale(&index), [1, 0, 1]);
    let report = index.upkeep().sync().unwrap();
    assert_eq!((report.indexed, report.removed), (1, 1));
    let hits = find(&index, RunQuery::default());
    assert_eq!(ids(&hits), [copy.to_string()]);
    assert_eq!(hits[0].run.manifest.agent.name, "other-tool");
    assert_eq!(stale(&index), [0, 0, 0]);
}

#[test]
fn a_run_folder_deleted_by_hand_disappears_after_open_synced() {
    let (_dir, p) = project();
    let a = start(&p, "alex", "intake");
    let b = start(&p, "blake", "design");
    assert_eq!(
        Index::open_synced(&p)
            .unwrap()
            .upkeep()
            .status()
            .unwrap()
            .runs,
        2
    );

    std::fs::remove_dir_all(folder(&p, &a)).unwrap();
    let index = Index::open_synced(&p).unwrap();
    // Counted before any query could re-read it.
    assert_eq!(index.upkeep().status().unwrap().runs, 1);
    assert_eq!(ids(&find(&index, RunQuery::default())), [b.as_str()]);
    assert!(find(&index, by_agent("alex")).is_empty());
    let page = found(&p, Scope::Local, &RunQuery::default());
    assert_eq!((found_ids(&page), page.skipped), (vec![b], 0));
}

#[test]
fn a_corrupt_manifest_is_listed_and_skipped() {
    let (_dir, p) = project();
    let good = start(&p, "alex", "intake");
    let not_json = "11111111-1111-4111-8111-111111111111";
    let no_agent = "22222222-2222-4222-8222-222222222222";
    std::fs::create_dir(folder(&p, not_json)).unwrap();
    std::fs::write(manifest_path(&p, not_json), "{ not json").unwrap();
    std::fs::create_dir(folder(&p, no_agent)).unwrap();
    let valid = |id: &str, agent: &str| {
        json!({
            "session_id": id,
            "agent": {"name": agent},
            "workflow": {"name": "intake"},
            "execution": {"started_at": "2025-10-06T17:00:00Z", "status": "completed"},
        })
        .to_string()
    };
    std::fs::write(manifest_path(&p, no_agent), valid(no_agent, "")).unwrap();

    let index = Index::open_synced(&p).unwrap();
    let corrupt = index.read().corrupt_files().unwrap();
    let paths: Vec<&Path> = corrupt.iter().map(|c| c.path.as_path()).collect();
    assert_eq!(
        paths,
        [
            manifest_path(&p, not_json).as_path(),
            manifest_path(&p, no_agent).as_path()
        ]
    );
    assert!(corrupt.iter().all(|c| c.kind == Kind::Run));
    assert!(!corrupt[0].reason.is_empty());
    assert!(
        corrupt[1].reason.contains("agent.name is empty"),
        "{}",
        corrupt[1].reason
    );
    assert_eq!(ids(&find(&index, RunQuery::default())), [good.as_str()]);
    assert!(
        find(&index, by_text("intake"))
            .iter()
            .all(|h| h.run.id.as_str() == good)
    );
    let status = index.upkeep().status().unwrap();
    assert_eq!((status.runs, status.corrupt), (1, 2));
    assert_eq!(index.read().corrupt_count(Kind::Run).unwrap(), 2);
    assert_eq!(found(&p, Scope::Local, &RunQuery::default()).skipped, 2);

    // Repaired by hand: the next sync lists it and forgets the complaint.
    std::fs::write(manifest_path(&p, no_agent), valid(no_agent, "fixer")).unwrap();
    index.upkeep().sync().unwrap();
    assert_eq!(index.read().corrupt_files().unwrap().len(), 1);
    assert_eq!(
        ids(&find(&index, by_agent("fixer"))),
        [no_agent.to_string()]
    );
    assert_eq!(find(&index, RunQuery::default()).len(), 2);
}

#[test]
fn the_faces_page_reads_back_a_run_edited_in_place_and_counts_it_so() {
    // The faces' page (MCP find_runs, the web API) re-reads a run edited in
    // place, as `find` does, and counts it with its new fields.
    let (_dir, p) = project();
    let ids: Vec<String> = (0..3).map(|_| start(&p, "alex", "intake")).collect();
    let query = RunQuery {
        agent: Some("alex".into()),
        limit: Some(2),
        ..Default::default()
    };
    let before = query::find(&p, &query, FindOptions::new(Scope::Local)).unwrap();
    assert_eq!(before.total, 3);
    let edited = before.hits[0].run.id.to_string();
    edit_manifest(&p, &edited, |m| {
        m["execution"]["status"] = json!("completed");
        m["tags"] = json!(["edited"]);
    });
    let page = query::find(&p, &query, FindOptions::new(Scope::Local)).unwrap();
    let hit = page
        .hits
        .iter()
        .find(|h| h.run.id.as_str() == edited)
        .unwrap();
    assert_eq!(hit.run.manifest.tags, ["edited"]);
    assert_eq!(page.total, 3);
    let completed = RunQuery {
        status: Some("completed".into()),
        ..query
    };
    assert_eq!(
        query::find(&p, &completed, FindOptions::new(Scope::Local))
            .unwrap()
            .total,
        1
    );
    assert!(ids.contains(&edited));
}

#[test]
fn a_workflow_pattern_sees_names_written_since_by_any_connection() {
    let (_dir, p) = project();
    let intake = start(&p, "alex", "intake");
    let reader = Index::open_synced(&p).unwrap();
    let review = || RunQuery {
        workflow: Some("^review-".into()),
        ..RunQuery::default()
    };
    assert!(find(&reader, review()).is_empty());
    assert_eq!(reader.read().count_runs(&review()).unwrap(), 0);

    // Another connection (the writer's, as another process's would be)
    // commits a run of a new workflow: the reader's remembered names are
    // of an older version and are read again.
    let first = start(&p, "alex", "review-1");
    assert_eq!(ids(&find(&reader, review())), std::slice::from_ref(&first));
    assert_eq!(reader.read().count_runs(&review()).unwrap(), 1);

    // The reader's own connection writes the next name: a run edited in
    // place by another tool, re-read when the reader verifies its page.
    edit_manifest(&p, &intake, |m| m["workflow"]["name"] = json!("review-2"));
    let all = find(&reader, RunQuery::default());
    assert_eq!(all.len(), 2);
    assert_eq!(
        sorted(ids(&find(&reader, review()))),
        sorted(vec![first, intake])
    );
    assert_eq!(reader.read().count_runs(&review()).unwrap(), 2);
}

/// What another program leaves a run's manifest as, between two reads.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Left {
    /// As written at start (indexed as running).
    Running,
    /// Finished in place, with one of the final statuses.
    Finished,
    /// Half-written (`{ torn`).
    Torn,
    /// Removed, the folder kept.
    Absent,
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]

    /// Edits made in place behind Logbook's back (a running run finished,
    /// a manifest torn, repaired or removed) are answered by the next `find`
    /// of every status exactly as reading every manifest answers, with no
    /// sync in between. (A run once finished is the engine's to leave:
    /// editing it again is seen by verify-on-read and `index sync`.)
    #[test]
    fn in_place_edits_are_answered_by_the_next_find_as_the_files_say(
        steps in proptest::collection::vec((0usize..4, 0usize..4, 0usize..3, 0usize..6), 1..10)
    ) {
        let (_dir, p) = project();
        let runs: Vec<String> = (0..4).map(|i| start(&p, &format!("a{i}"), "w")).collect();
        let written: Vec<String> = runs
            .iter()
            .map(|id| std::fs::read_to_string(manifest_path(&p, id)).unwrap())
            .collect();
        let mut left = vec![Left::Running; runs.len()];
        let statuses = ["completed", "failed", "cancelled"];
        let queries: Vec<RunQuery> = [None, Some("running"), Some("unknown")]
            .into_iter()
            .chain(statuses.iter().map(|s| Some(*s)))
            .map(|status| RunQuery {
                status: status.map(str::to_string),
                ..RunQuery::default()
            })
            .collect();
        found(&p, Scope::Local, &RunQuery::default());
        for (i, action, status, first) in steps {
            let path = manifest_path(&p, &runs[i]);
            let finished = written[i].replacen(
                "\"status\": \"running\"",
                &format!("\"status\": \"{}\"", statuses[status]),
                1,
            );
            let next = match (left[i], action) {
                (Left::Finished, _) => continue,
                (Left::Running, 0) | (Left::Torn | Left::Absent, 0) => {
                    std::fs::write(&path, &finished).unwrap();
                    Left::Finished
                }
                (Left::Torn | Left::Absent, 1) => {
                    std::fs::write(&path, &written[i]).unwrap();
                    Left::Running
                }
                (Left::Torn, _) | (Left::Running, 2) => {
                    std::fs::remove_file(&path).unwrap();
                    Left::Absent
                }
                _ => {
                    std::fs::write(&path, "{ torn").unwrap();
                    Left::Torn
                }
            };
            left[i] = next;
            // The first query after an edit is the one that must see it
            // before its filter decides: each status takes that turn.
            for q in queries[first..].iter().chain(&queries[..first]) {
                let page = found(&p, Scope::Local, q);
                let scanned = logbook_store::run::scan(&p).unwrap();
                let want = found_ids(&found(&p, Scope::Files, q));
                proptest::prop_assert_eq!(found_ids(&page), want, "{:?} after {:?}", q.status, left);
                proptest::prop_assert_eq!(page.skipped, scanned.corrupt.len() as u64);
            }
        }
    }
}

/// More runs than one batch of the scan (4,096 index rows): each batch's
/// files are stat'ed while the next is read from the index, and its
/// changes are written before the next batch's. Edits, deletions and new
/// folders in the first, a middle and the last batch are each seen once,
/// and the index then answers what a rebuild answers.
#[test]
fn a_sync_over_many_batches_sees_every_change_once() {
    let (_dir, p) = project();
    let template = start(&p, "template", "intake");
    let mut m: Value =
        serde_json::from_str(&std::fs::read_to_string(manifest_path(&p, &template)).unwrap())
            .unwrap();
    std::fs::remove_dir_all(folder(&p, &template)).unwrap();
    // Written by another tool, as a copy of one manifest under new ids.
    let mut write = |id: &str, i: usize| {
        m["session_id"] = json!(id);
        m["agent"]["name"] = json!(format!("agent{}", i % 7));
        m["execution"]["status"] = json!(if i.is_multiple_of(3) {
            "running"
        } else {
            "completed"
        });
        std::fs::create_dir_all(folder(&p, id)).unwrap();
        std::fs::write(manifest_path(&p, id), m.to_string()).unwrap();
    };
    let mut runs: Vec<String> = (0..10_000)
        .map(|_| uuid::Uuid::new_v4().to_string())
        .collect();
    for (i, id) in runs.iter().enumerate() {
        write(id, i);
    }
    let index = Index::open(&p).unwrap();
    index.upkeep().sync().unwrap();
    assert_eq!(index.upkeep().status().unwrap().runs, 10_000);

    // In path order, the index's order: rows 0..4096 are the first batch.
    runs.sort();
    let edited = [&runs[5], &runs[4_100], &runs[9_990]];
    for id in edited {
        edit_manifest(&p, id, |m| m["agent"]["name"] = json!("edited"));
    }
    for id in [&runs[6], &runs[6_000], &runs[9_999]] {
        std::fs::remove_dir_all(folder(&p, id)).unwrap();
    }
    // New folders that sort before the first, between batches and after
    // the last row.
    let new = [
        "00000000-0000-4000-8000-000000000001",
        "7fffffff-0000-4000-8000-000000000001",
        "ffffffff-ffff-4fff-bfff-ffffffffffff",
    ];
    for (i, id) in new.iter().enumerate() {
        write(id, i);
    }

    let report = index.upkeep().sync().unwrap();
    assert_eq!((report.indexed, report.removed), (6, 3));
    assert_eq!(stale(&index), [0, 0, 0]);
    assert_eq!(index.upkeep().status().unwrap().runs, 10_000);
    let mut got = ids(&find(&index, by_agent("edited")));
    got.sort();
    assert_eq!(got, edited.map(|id| id.clone()));
    // A second sync finds nothing left to do.
    let again = index.upkeep().sync().unwrap();
    assert_eq!((again.indexed, again.removed), (0, 0));
    let synced = answers(&index);
    drop(index);
    Index::rebuild(&p, None).unwrap();
    assert_eq!(answers(&Index::open(&p).unwrap()), synced);
}
