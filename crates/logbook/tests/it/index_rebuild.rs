//! The index rebuilt, deleted or damaged under its users: a rebuild answers
//! as the index built write by write did, a deleted one is built again on
//! open, and writers caught by a rebuild or killed mid-write are repaired.

use std::path::PathBuf;

use logbook::Logbook;
use logbook::model::ids::RunId;
use logbook::model::query::RunQuery;
use logbook::model::run::{MANIFEST_FILE, OutputType, RunStatus};
use logbook_index::{Index, Kind, Pending, Record, SCHEMA_VERSION};
use serde_json::json;

use crate::index_common::*;

#[test]
fn rebuild_answers_find_exactly_like_the_incremental_index() {
    let (_dir, p, runs) = populated();
    let [a, b, c, d] = [&runs[0], &runs[1], &runs[2], &runs[3]];

    // Built write by write.
    let incremental = Index::open(&p).unwrap();
    let before = answers(&incremental);
    let status_before = incremental.upkeep().status().unwrap();
    assert_eq!(counts(&status_before), [4, 3, 2, 1, 1, 1, 0, 0]);
    assert_eq!(before[0].len(), 4);
    assert_eq!(
        sorted(before[1].iter().map(|(r, _)| r.id.to_string()).collect()),
        sorted(vec![a.clone(), c.clone()])
    );
    assert_eq!(before[2].len(), 2, "intake and intake-v2");
    let only =
        |i: usize| -> Vec<String> { before[i].iter().map(|(r, _)| r.id.to_string()).collect() };
    assert_eq!(only(3), [a.as_str()]);
    assert_eq!(only(4), [b.as_str()]);
    assert_eq!(only(5), [a.as_str()]);
    assert_eq!(only(6), [b.as_str()]);
    assert_eq!(before[7].len(), 2);
    assert!(before[0].iter().any(|(r, _)| r.id.as_str() == d));
    drop(incremental);

    // Built by rebuild alone, from nothing.
    remove_index(&p);
    let report = Index::rebuild(&p, None).unwrap();
    let rebuilt = Index::open(&p).unwrap();
    assert_eq!(
        report.indexed, 7,
        "4 runs, 1 session, 1 state, 1 transcript"
    );
    assert_eq!(report.removed, 0);
    assert!(report.corrupt.is_empty(), "{:?}", report.corrupt);
    assert_eq!(answers(&rebuilt), before);
    let status_after = rebuilt.upkeep().status().unwrap();
    assert_eq!(counts(&status_after), counts(&status_before));
    assert_eq!(rebuilt.read().children(a).unwrap(), [b.as_str()]);
    assert_eq!(rebuilt.read().children(b).unwrap(), [d.as_str()]);
    assert_eq!(stale(&rebuilt), [0, 0, 0]);

    // A second rebuild over a full index changes nothing.
    Index::rebuild(&p, None).unwrap();
    let rebuilt = Index::open(&p).unwrap();
    assert_eq!(answers(&rebuilt), before);
    assert_eq!(
        counts(&rebuilt.upkeep().status().unwrap()),
        counts(&status_before)
    );
}

#[test]
fn the_full_text_a_rebuild_builds_beside_is_whole_and_takes_later_changes() {
    let (_dir, p, runs) = populated();
    let (a, b, d) = (&runs[0], &runs[1], &runs[3]);
    remove_index(&p);
    Index::rebuild(&p, None).unwrap();
    // Built on its own thread in a file of its own, copied in: FTS5 finds
    // its own structures consistent…
    let index = Index::open(&p).unwrap();
    let check = "INSERT INTO runs_fts(runs_fts) VALUES ('integrity-check')";
    raw(&p).execute(check, []).unwrap();
    assert_eq!(ids(&find(&index, by_text("keyboards"))), [a.as_str()]);
    drop(index);
    // … and later writes replace and add rows in the copied index.
    output(
        &p,
        d,
        "late.md",
        "A quokka was sighted.\n",
        OutputType::Document,
        "late notes",
    );
    output(
        &p,
        b,
        "more.md",
        "Ergonomic keyboards for the sales team too.\n",
        OutputType::Document,
        "follow-up",
    );
    let index = Index::open(&p).unwrap();
    raw(&p).execute(check, []).unwrap();
    assert_eq!(ids(&find(&index, by_text("quokka"))), [d.as_str()]);
    assert_eq!(
        sorted(ids(&find(&index, by_text("keyboards")))),
        sorted(vec![a.clone(), b.clone()])
    );
    assert_eq!(ids(&find(&index, by_text("budget approved"))), [b.as_str()]);
}

#[test]
fn the_index_deleted_entirely_is_rebuilt_on_open() {
    let (_dir, p, runs) = populated();
    let before = answers(&Index::open(&p).unwrap());
    let status_before = counts(&Index::open(&p).unwrap().upkeep().status().unwrap());

    remove_index(&p);
    let index = Index::open(&p).unwrap();
    assert!(p.index_path().is_file());
    let status = index.upkeep().status().unwrap();
    assert_eq!(counts(&status), status_before);
    assert_eq!(status.schema_version, SCHEMA_VERSION);
    assert!(status.last_sync.is_some());
    assert_eq!(answers(&index), before);
    assert_eq!(index.read().children(&runs[0]).unwrap(), [runs[1].clone()]);
    assert_eq!(index.read().work_sessions().unwrap().sessions.len(), 1);
    assert_eq!(
        index
            .read()
            .transcripts(None, None, None, None)
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn the_wal_outlives_connections_but_never_a_deleted_database() {
    let (_dir, p, runs) = populated();
    let before = answers(&Index::open(&p).unwrap());
    // Writes after the last checkpoint stay in the WAL when the connection
    // closes: the next writer does not pay for creating it again.
    output(
        &p,
        &runs[3],
        "late.md",
        "late words",
        OutputType::Document,
        "late",
    );
    let wal = PathBuf::from(format!("{}-wal", p.index_path().display()));
    assert!(
        wal.metadata().is_ok_and(|m| m.len() > 0),
        "the WAL should survive its connection"
    );
    let with_late = answers(&Index::open(&p).unwrap());
    assert_ne!(with_late, before);

    // Deleting only index.db (what a user does to force a rebuild) must not
    // replay the old WAL onto the new file.
    std::fs::remove_file(p.index_path()).unwrap();
    let index = Index::open(&p).unwrap();
    assert_eq!(Index::damage(&p).unwrap(), None);
    assert_eq!(answers(&index), with_late);
    assert_eq!(ids(&find(&index, by_text("late"))), [runs[3].clone()]);
}

#[test]
fn damaged_pages_of_the_full_text_tables_are_still_found() {
    let (_dir, p, _runs) = populated();
    Index::rebuild(&p, None).unwrap();
    // The root page of FTS5's inverted index, a real table the page check
    // goes through table by table (FTS5's own check is left out).
    let (root, size): (i64, i64) = {
        let conn = raw(&p);
        let root = conn
            .query_row(
                "SELECT rootpage FROM sqlite_schema WHERE name = 'runs_fts_data'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        let size = conn
            .query_row("PRAGMA page_size", [], |r| r.get(0))
            .unwrap();
        (root, size)
    };
    assert_eq!(Index::damage(&p).unwrap(), None);
    let mut bytes = std::fs::read(p.index_path()).unwrap();
    let at = ((root - 1) * size) as usize;
    bytes[at..at + size as usize].fill(0xA5);
    std::fs::write(p.index_path(), bytes).unwrap();
    assert!(Index::damage(&p).unwrap().is_some());
}

#[test]
fn the_names_check_before_a_listing_answers_what_a_rebuild_answers() {
    let (_dir, p) = project();
    let runs: Vec<String> = (0..40).map(|i| start(&p, &format!("a{i}"), "w")).collect();
    let text = std::fs::read_to_string(manifest_path(&p, &runs[0])).unwrap();
    let add = |name: &str| {
        std::fs::create_dir(folder(&p, name)).unwrap();
        std::fs::write(folder(&p, name).join(MANIFEST_FILE), &text).unwrap();
    };
    // Folder names that are not run ids sort among the UUIDs as paths do
    // ("a-b/…" before "a/…"), and are indexed as corrupt runs.
    add("a");
    add("a-b");
    let before = Index::open_synced(&p).unwrap().upkeep().status().unwrap();
    assert_eq!((before.runs, before.corrupt), (40, 2));

    // Another tool removes and adds folders, of both kinds of name, and
    // is midway through one more (a folder with no manifest yet: a run of
    // status unknown).
    for id in &runs[5..8] {
        std::fs::remove_dir_all(folder(&p, id)).unwrap();
    }
    std::fs::remove_dir_all(folder(&p, &runs[39])).unwrap();
    add("00000000-0000-4000-8000-000000000001");
    add("ffffffff-ffff-4fff-bfff-ffffffffffff");
    std::fs::remove_dir_all(folder(&p, "a")).unwrap();
    add("zz");
    std::fs::create_dir(folder(&p, "11111111-1111-4111-8111-111111111111")).unwrap();

    let synced = Index::open_synced(&p).unwrap();
    let got = counts(&synced.upkeep().status().unwrap());
    let listed = sorted(ids(&find(&synced, RunQuery::default())));
    assert_eq!((got[0], got[6]), (39, 2));
    Index::rebuild(&p, None).unwrap();
    let rebuilt = Index::open(&p).unwrap();
    assert_eq!(got, counts(&rebuilt.upkeep().status().unwrap()));
    assert_eq!(listed, sorted(ids(&find(&rebuilt, RunQuery::default()))));
}

#[test]
fn a_pending_mark_left_by_a_dead_writer_is_repaired_on_open() {
    let (_dir, p) = project();
    let a = start(&p, "alex", "intake");
    let lock = RunId::parse(&a).unwrap().lock_name();
    {
        // A writer marks the manifest, writes it, and dies before it
        // updates the index.
        let mut index = Index::open(&p).unwrap();
        index
            .write()
            .mark_pending(&[Pending {
                kind: Kind::Run,
                path: manifest_path(&p, &a),
                lock: lock.clone(),
            }])
            .unwrap();
        edit_manifest(&p, &a, |m| {
            m["execution"]["status"] = json!("failed");
            m["tags"] = json!(["repaired"]);
        });
        assert_eq!(index.upkeep().status().unwrap().pending, 1);
    }
    {
        // A writer still holding the run's lock is mid-write: left alone.
        let _held = p.locks.exclusive(&lock).unwrap();
        let index = Index::open(&p).unwrap();
        assert_eq!(index.upkeep().status().unwrap().pending, 1);
    }
    let index = Index::open(&p).unwrap();
    assert_eq!(index.upkeep().status().unwrap().pending, 0);
    // The tag is only in the file: found by it, the index holds the file.
    let hits = find(&index, by_tag("repaired"));
    assert_eq!(ids(&hits), [a.as_str()]);
    assert_eq!(hits[0].run.manifest.execution.status, RunStatus::Failed);
    let failed = RunQuery {
        status: Some("failed".into()),
        ..RunQuery::default()
    };
    assert_eq!(ids(&find(&index, failed)), [a]);
}

#[test]
fn writes_after_the_index_is_deleted_reach_the_new_index() {
    let (_dir, p) = project();
    // This thread now holds a cached writer, as a long-running server does.
    let a = start(&p, "alex", "intake");
    remove_index(&p);
    assert_eq!(Index::open(&p).unwrap().upkeep().status().unwrap().runs, 1);

    output(
        &p,
        &a,
        "notes.md",
        "xylophone",
        OutputType::Document,
        "notes",
    );
    let index = Index::open_synced(&p).unwrap();
    assert_eq!(ids(&find(&index, by_text("xylophone"))), [a]);
    assert_eq!(index.upkeep().status().unwrap().outputs, 1);
}

/// The marks a live index holds for the pending table, read without the
/// repair an open does.
fn pending_marks(p: &Logbook) -> i64 {
    raw(p)
        .query_row("SELECT count(*) FROM pending", [], |r| r.get(0))
        .unwrap()
}

#[test]
fn a_writer_whose_index_a_rebuild_replaced_writes_into_the_new_one() {
    let (_dir, p) = project();
    let a = start(&p, "alex", "intake");
    let lock = RunId::parse(&a).unwrap().lock_name();
    let pending = Pending {
        kind: Kind::Run,
        path: manifest_path(&p, &a),
        lock: lock.clone(),
    };
    // A writer holding the run's lock has marked the manifest in the index
    // as it was …
    let held = p.locks.exclusive(&lock).unwrap();
    let mut writer = Index::open(&p).unwrap();
    writer
        .write()
        .mark_pending(std::slice::from_ref(&pending))
        .unwrap();
    // … when another process rebuilds it: the mark moves to the new file.
    Index::rebuild(&p, None).unwrap();
    assert!(!writer.is_current());
    assert_eq!(pending_marks(&p), 1);
    // The writer writes its file and records it on its old connection.
    edit_manifest(&p, &a, |m| m["tags"] = json!(["after-swap"]));
    let run = logbook_store::run::load(&p, &RunId::parse(&a).unwrap()).unwrap();
    writer
        .write()
        .record_written(vec![(pending, Some(Record::run(&run)))])
        .unwrap();
    drop(held);
    // The record is in the live index, the mark cleared there: no repair
    // was needed to find it.
    assert_eq!(pending_marks(&p), 0);
    let index = Index::open(&p).unwrap();
    assert_eq!(ids(&find(&index, by_tag("after-swap"))), [a]);
}

#[test]
fn a_writer_that_dies_after_a_rebuild_replaced_its_index_is_repaired() {
    let (_dir, p) = project();
    let a = start(&p, "alex", "intake");
    let lock = RunId::parse(&a).unwrap().lock_name();
    {
        let _held = p.locks.exclusive(&lock).unwrap();
        let mut writer = Index::open(&p).unwrap();
        writer
            .write()
            .mark_pending(&[Pending {
                kind: Kind::Run,
                path: manifest_path(&p, &a),
                lock: lock.clone(),
            }])
            .unwrap();
        Index::rebuild(&p, None).unwrap();
        edit_manifest(&p, &a, |m| m["tags"] = json!(["written-then-died"]));
    }
    let index = Index::open(&p).unwrap();
    assert_eq!(index.upkeep().status().unwrap().pending, 0);
    assert_eq!(ids(&find(&index, by_tag("written-then-died"))), [a]);
}

#[test]
fn a_rebuild_leaves_no_wal_of_the_old_index_and_no_building_file() {
    let (_dir, p) = project();
    start(&p, "alex", "intake");
    // A connection of the old index, idle in this process, as a server's is.
    let old = Index::open(&p).unwrap();
    let report = Index::rebuild(&p, None).unwrap();
    assert_eq!(report.indexed, 1);
    let dir = p.index_path().parent().unwrap().to_path_buf();
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("index.db"))
        .collect();
    names.sort();
    assert_eq!(names, ["index.db"], "the old WAL and shm are gone");
    // The old connection still reads its own (unlinked) file consistently;
    // a new one reads the new file.
    assert_eq!(old.upkeep().status().unwrap().runs, 1);
    assert!(!old.is_current());
    let new = Index::open(&p).unwrap();
    assert!(new.is_current());
    assert_eq!(new.upkeep().status().unwrap().runs, 1);
}
