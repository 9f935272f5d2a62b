//! The outbox of changes waiting for the team catalog: one note per
//! record, kept when written again, queued anew by a rebuild, deletions
//! surviving one.

use logbook::Logbook;
use logbook::model::run::RunStatus;
use logbook::ops::run::{self};
use logbook_index::Index;
use tempfile::TempDir;

use crate::index_common::*;

/// A project whose logbook.yaml names a team catalog (never contacted here:
/// no driver is installed in these tests).
fn team_project() -> (TempDir, Logbook) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".logbook")).unwrap();
    std::fs::write(
        dir.path().join("logbook.yaml"),
        "team_url: 'postgres://nobody@127.0.0.1:1/none'\norigin: unit\n",
    )
    .unwrap();
    let p = Logbook::open(dir.path()).unwrap();
    (dir, p)
}

#[test]
fn the_outbox_notes_every_write_once_and_keeps_a_record_written_again() {
    let (_d, p) = team_project();
    let a = start(&p, "casey", "deep-dive");
    let b = start(&p, "pixel", "build");
    run::finish(&p, &a, RunStatus::Completed).unwrap();
    let index = Index::open(&p).unwrap();
    // Two runs, one note each however often written.
    assert_eq!(index.upkeep().outbox_len().unwrap(), 2);
    let batch = index.upkeep().outbox_batch(10).unwrap();
    let ids: Vec<&str> = batch.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, vec![b.as_str(), a.as_str()]);
    assert!(batch.iter().all(|c| c.body.is_some() && c.hash.len() == 64));
    // Written again after the batch was read: that note must survive.
    run::finish(&p, &b, RunStatus::Failed).unwrap();
    let done: Vec<_> = batch
        .iter()
        .map(|c| (c.kind, c.id.clone(), c.version))
        .collect();
    index.upkeep().outbox_done(&done).unwrap();
    let left = index.upkeep().outbox_batch(10).unwrap();
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].id, b);
    assert!(left[0].version > batch[0].version);
    // A removed run is a change without a body (a tombstone on the server).
    std::fs::remove_dir_all(folder(&p, &a)).unwrap();
    let index = Index::open(&p).unwrap();
    index.upkeep().sync().unwrap();
    let gone = index.upkeep().outbox_batch(10).unwrap();
    assert!(gone.iter().any(|c| c.id == a && c.body.is_none()));
}

#[test]
fn without_a_team_the_outbox_stays_empty_and_its_triggers_go() {
    let (d, p) = team_project();
    start(&p, "casey", "deep-dive");
    assert_eq!(Index::open(&p).unwrap().upkeep().outbox_len().unwrap(), 1);
    std::fs::remove_file(d.path().join("logbook.yaml")).unwrap();
    let p = Logbook::open(d.path()).unwrap();
    start(&p, "casey", "deep-dive");
    assert_eq!(Index::open(&p).unwrap().upkeep().outbox_len().unwrap(), 0);
}

#[test]
fn a_rebuild_queues_every_record_again_with_newer_versions() {
    let (_d, p) = team_project();
    start(&p, "casey", "deep-dive");
    start(&p, "pixel", "build");
    let index = Index::open(&p).unwrap();
    let before = index.upkeep().outbox_batch(10).unwrap();
    let done: Vec<_> = before
        .iter()
        .map(|c| (c.kind, c.id.clone(), c.version))
        .collect();
    index.upkeep().outbox_done(&done).unwrap();
    drop(index);
    Index::rebuild(&p, None).unwrap();
    let index = Index::open(&p).unwrap();
    let after = index.upkeep().outbox_batch(10).unwrap();
    assert_eq!(after.len(), 2);
    let newest = before.iter().map(|c| c.version).max().unwrap();
    assert!(after.iter().all(|c| c.version > newest));
}

#[test]
fn a_deletion_not_yet_pushed_survives_a_rebuild() {
    let (_d, p) = team_project();
    let kept = start(&p, "casey", "deep-dive");
    let gone = start(&p, "pixel", "build");
    let index = Index::open(&p).unwrap();
    let done: Vec<_> = index
        .upkeep()
        .outbox_batch(10)
        .unwrap()
        .iter()
        .map(|c| (c.kind, c.id.clone(), c.version))
        .collect();
    index.upkeep().outbox_done(&done).unwrap();
    drop(index);
    // Another tool deletes a run; a sync notes the deletion; a rebuild comes
    // before the next push. No file says the run existed: only the note does.
    std::fs::remove_dir_all(folder(&p, &gone)).unwrap();
    Index::open(&p).unwrap().upkeep().sync().unwrap();
    Index::rebuild(&p, None).unwrap();
    let index = Index::open(&p).unwrap();
    let waiting = index.upkeep().outbox_batch(10).unwrap();
    let deletion = waiting
        .iter()
        .find(|c| c.id == gone)
        .expect("the deletion is still waiting");
    assert!(deletion.body.is_none(), "pushed as a deletion");
    assert!(waiting.iter().any(|c| c.id == kept && c.body.is_some()));
}
