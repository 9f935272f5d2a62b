//! Unit tests of the index: its write path, sync, queries and repairs, on
//! real SQLite files in temp folders.

use std::path::{Path, PathBuf};

use jiff::tz::TimeZone;
use serde_json::{Value, json};
use tempfile::TempDir;

use super::*;
use crate::model::ids::RunId;
use crate::model::query::RunQuery;
use crate::model::run::{MANIFEST_FILE, OutputType, RunStatus};
use crate::model::workflow::AgentType;
use crate::ops::run::{self, StartOptions};
use crate::ops::{transcript, work_session, workflow};

/// A project in a temp folder with Logbook's default paths.
/// A temp folder that is a project already (its `.logbook/` exists), so the
/// index lives in a file: where no project is, reads use a throwaway index.
fn project() -> (TempDir, Project) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".logbook")).unwrap();
    let p = Project::open(dir.path()).unwrap();
    (dir, p)
}

fn start_with(p: &Project, opts: StartOptions) -> String {
    run::start(p, opts).unwrap().session_id.to_string()
}

/// Starts a run of `agent` running `workflow`; returns its id.
fn start(p: &Project, agent: &str, workflow: &str) -> String {
    start_with(
        p,
        StartOptions {
            agent: agent.into(),
            workflow: Some(workflow.into()),
            ..StartOptions::default()
        },
    )
}

fn fixture(name: &str) -> PathBuf {
    Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/fixtures"
    ))
    .join(name)
}

fn folder(p: &Project, id: &str) -> PathBuf {
    p.config.agent_outputs_folder.join(id)
}

fn manifest_path(p: &Project, id: &str) -> PathBuf {
    folder(p, id).join(MANIFEST_FILE)
}

/// Writes `file` into run `id`'s folder and registers it.
fn output(p: &Project, id: &str, file: &str, text: &str, ty: OutputType, description: &str) {
    std::fs::write(folder(p, id).join(file), text).unwrap();
    run::register_output(p, id, file, ty, description).unwrap();
}

/// Changes a manifest the way another tool would: in place, no lock, no
/// index.
fn edit_manifest(p: &Project, id: &str, change: impl FnOnce(&mut Value)) {
    let path = manifest_path(p, id);
    let mut m: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    change(&mut m);
    std::fs::write(&path, serde_json::to_string_pretty(&m).unwrap()).unwrap();
}

/// Pins `started_at` so the order of runs does not depend on the clock.
fn set_started(p: &Project, id: &str, at: &str) {
    edit_manifest(p, id, |m| m["execution"]["started_at"] = json!(at));
}

fn ids(hits: &[Hit]) -> Vec<String> {
    hits.iter().map(|h| h.run.id.to_string()).collect()
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

fn find(index: &Index, query: RunQuery) -> Vec<Hit> {
    index.find_runs(&query).unwrap()
}

fn by_agent(agent: &str) -> RunQuery {
    RunQuery {
        agent: Some(agent.into()),
        ..RunQuery::default()
    }
}

fn by_text(text: &str) -> RunQuery {
    RunQuery {
        text: Some(text.into()),
        ..RunQuery::default()
    }
}

fn by_tag(tag: &str) -> RunQuery {
    RunQuery {
        tag: Some(tag.into()),
        ..RunQuery::default()
    }
}

/// The counts of `index status`, in a comparable form:
/// runs, outputs, edges, work sessions, transcripts, workflow states,
/// corrupt, pending.
fn counts(s: &Status) -> [u64; 8] {
    [
        s.runs,
        s.outputs,
        s.edges,
        s.work_sessions,
        s.transcripts,
        s.workflow_states,
        s.corrupt,
        s.pending,
    ]
}

fn remove_index(p: &Project) {
    let db = p.index_path();
    assert!(db.is_file(), "{} should exist", db.display());
    for suffix in ["", "-wal", "-shm"] {
        let f = PathBuf::from(format!("{}{suffix}", db.display()));
        if f.exists() {
            std::fs::remove_file(f).unwrap();
        }
    }
}

fn stale(index: &Index) -> [u64; 3] {
    let s = index.staleness().unwrap();
    [s.new, s.changed, s.deleted]
}

/// A project with a bit of everything: a work session with a workflow
/// state, four runs (outputs, lineage, tags, statuses) and a transcript.
/// Returns the run ids in start order.
fn populated() -> (TempDir, Project, Vec<String>) {
    let (dir, p) = project();
    work_session::start(
        &p,
        work_session::StartOptions {
            client: Some("ACME".into()),
            project: Some("AUDIT".into()),
            ..Default::default()
        },
    )
    .unwrap();
    workflow::invoke(
        &p,
        &workflow::Target::default(),
        workflow::Invoke {
            agent: AgentType::Analyst,
            prompt: "Gather the requirements".into(),
            ..Default::default()
        },
    )
    .unwrap();
    let a = start(&p, "alex", "intake");
    output(
        &p,
        &a,
        "notes.md",
        "The procurement of ergonomic keyboards was approved.\n",
        OutputType::Document,
        "meeting notes",
    );
    output(
        &p,
        &a,
        "data.json",
        "{\"count\": 10}\n",
        OutputType::Data,
        "raw numbers",
    );
    run::finish(&p, &a, RunStatus::Completed).unwrap();
    let b = start_with(
        &p,
        StartOptions {
            agent: "blake".into(),
            workflow: Some("design".into()),
            related: vec![a.clone()],
            tags: vec!["urgent".into()],
            ..StartOptions::default()
        },
    );
    output(
        &p,
        &b,
        "report.md",
        "Budget approved for the sales team.\n",
        OutputType::Report,
        "the design report",
    );
    let c = start(&p, "alex", "intake-v2");
    run::finish(&p, &c, RunStatus::Failed).unwrap();
    let d = start(&p, "casey", "build");
    run::link(&p, &d, &b).unwrap();
    transcript::import(&p, &fixture("transcript-main.json"), false, None, None).unwrap();
    (dir, p, vec![a, b, c, d])
}

/// The queries two indexes are compared on.
fn queries() -> Vec<RunQuery> {
    vec![
        RunQuery::default(),
        by_agent("alex"),
        RunQuery {
            workflow: Some("^intake".into()),
            ..RunQuery::default()
        },
        RunQuery {
            status: Some("completed".into()),
            ..RunQuery::default()
        },
        by_tag("urgent"),
        by_text("keyboards"),
        by_text("budget approved"),
        RunQuery {
            limit: Some(2),
            offset: 1,
            ..RunQuery::default()
        },
    ]
}

fn answers(index: &Index) -> Vec<Vec<(Run, Option<String>)>> {
    queries()
        .into_iter()
        .map(|q| {
            find(index, q)
                .into_iter()
                .map(|h| (h.run, h.snippet))
                .collect()
        })
        .collect()
}

#[test]
fn rebuild_answers_find_exactly_like_the_incremental_index() {
    let (_dir, p, runs) = populated();
    let [a, b, c, d] = [&runs[0], &runs[1], &runs[2], &runs[3]];

    // Built write by write.
    let incremental = Index::open(&p).unwrap();
    let before = answers(&incremental);
    let status_before = incremental.status().unwrap();
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
    let status_after = rebuilt.status().unwrap();
    assert_eq!(counts(&status_after), counts(&status_before));
    assert_eq!(rebuilt.children(a).unwrap(), [b.as_str()]);
    assert_eq!(rebuilt.children(b).unwrap(), [d.as_str()]);
    assert_eq!(stale(&rebuilt), [0, 0, 0]);

    // A second rebuild over a full index changes nothing.
    Index::rebuild(&p, None).unwrap();
    let rebuilt = Index::open(&p).unwrap();
    assert_eq!(answers(&rebuilt), before);
    assert_eq!(counts(&rebuilt.status().unwrap()), counts(&status_before));
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
    index.conn.execute(check, []).unwrap();
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
    index.conn.execute(check, []).unwrap();
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
    let status_before = counts(&Index::open(&p).unwrap().status().unwrap());

    remove_index(&p);
    let index = Index::open(&p).unwrap();
    assert!(p.index_path().is_file());
    let status = index.status().unwrap();
    assert_eq!(counts(&status), status_before);
    assert_eq!(status.schema_version, SCHEMA_VERSION);
    assert!(status.last_sync.is_some());
    assert_eq!(answers(&index), before);
    assert_eq!(index.children(&runs[0]).unwrap(), [runs[1].clone()]);
    assert_eq!(index.work_sessions().unwrap().sessions.len(), 1);
    assert_eq!(index.transcripts(None, None, None, None).unwrap().len(), 1);
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
fn a_manifest_edited_in_place_is_seen_by_find_and_by_sync() {
    let (_dir, p) = project();
    let a = start(&p, "alex", "intake");
    let b = start(&p, "alex", "intake");
    let mut index = Index::open(&p).unwrap();
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
    let report = index.sync().unwrap();
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
    assert_eq!(index.status().unwrap().runs, 2);
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
    let mut index = Index::open(&p).unwrap();
    index.sync().unwrap();
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
    assert_eq!(index.sync().unwrap().indexed, 8);
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
fn damaged_pages_of_the_full_text_tables_are_still_found() {
    let (_dir, p, _runs) = populated();
    Index::rebuild(&p, None).unwrap();
    // The root page of FTS5's inverted index, a real table the page check
    // goes through table by table (FTS5's own check is left out).
    let (root, size): (i64, i64) = {
        let index = Index::open(&p).unwrap();
        let root = index
            .conn
            .query_row(
                "SELECT rootpage FROM sqlite_schema WHERE name = 'runs_fts_data'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        let size = index
            .conn
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
fn sync_picks_up_runs_added_and_removed_by_another_tool() {
    let (_dir, p) = project();
    let a = start(&p, "alex", "intake");
    let mut index = Index::open(&p).unwrap();

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
    let report = index.sync().unwrap();
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
    assert_eq!(Index::open_synced(&p).unwrap().status().unwrap().runs, 2);

    std::fs::remove_dir_all(folder(&p, &a)).unwrap();
    let index = Index::open_synced(&p).unwrap();
    // Counted before any query could re-read it.
    assert_eq!(index.status().unwrap().runs, 1);
    assert_eq!(ids(&find(&index, RunQuery::default())), [b.as_str()]);
    assert!(find(&index, by_agent("alex")).is_empty());
    let (hits, corrupt) = run::find(&p, &RunQuery::default()).unwrap();
    assert_eq!((ids(&hits), corrupt), (vec![b], 0));
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
    let before = Index::open_synced(&p).unwrap().status().unwrap();
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
    let got = counts(&synced.status().unwrap());
    let listed = sorted(ids(&find(&synced, RunQuery::default())));
    assert_eq!((got[0], got[6]), (39, 2));
    Index::rebuild(&p, None).unwrap();
    let rebuilt = Index::open(&p).unwrap();
    assert_eq!(got, counts(&rebuilt.status().unwrap()));
    assert_eq!(listed, sorted(ids(&find(&rebuilt, RunQuery::default()))));
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

    let mut index = Index::open_synced(&p).unwrap();
    let corrupt = index.corrupt_files().unwrap();
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
    let status = index.status().unwrap();
    assert_eq!((status.runs, status.corrupt), (1, 2));
    assert_eq!(index.corrupt_count(Kind::Run).unwrap(), 2);
    assert_eq!(run::find(&p, &RunQuery::default()).unwrap().1, 2);

    // Repaired by hand: the next sync lists it and forgets the complaint.
    std::fs::write(manifest_path(&p, no_agent), valid(no_agent, "fixer")).unwrap();
    index.sync().unwrap();
    assert_eq!(index.corrupt_files().unwrap().len(), 1);
    assert_eq!(
        ids(&find(&index, by_agent("fixer"))),
        [no_agent.to_string()]
    );
    assert_eq!(find(&index, RunQuery::default()).len(), 2);
}

#[test]
fn full_text_finds_words_of_output_files_with_a_snippet() {
    let (_dir, p) = project();
    let a = start(&p, "alex", "intake");
    output(
        &p,
        &a,
        "notes.md",
        "The procurement of ergonomic keyboards was approved.\n",
        OutputType::Document,
        "meeting notes",
    );
    let b = start(&p, "blake", "design");
    output(
        &p,
        &b,
        "other.md",
        "Nothing about peripherals here.\n",
        OutputType::Document,
        "unrelated",
    );
    let index = Index::open_synced(&p).unwrap();

    let hits = find(&index, by_text("ergonomic"));
    assert_eq!(ids(&hits), [a.as_str()]);
    assert_eq!(
        hits[0].snippet.as_deref(),
        Some("The procurement of [ergonomic] keyboards was approved.")
    );
    // Every word must match; case does not matter; each hit is marked.
    let hits = find(&index, by_text("KEYBOARDS ergonomic"));
    assert_eq!(ids(&hits), [a.as_str()]);
    assert_eq!(
        hits[0].snippet.as_deref(),
        Some("The procurement of [ergonomic] [keyboards] was approved.")
    );
    assert!(find(&index, by_text("ergonomic peripherals")).is_empty());
    assert_eq!(ids(&find(&index, by_text("peripherals"))), [b.as_str()]);
    assert!(find(&index, by_text("zebra")).is_empty());

    // Words of the manifest itself (an output's description) are found
    // too, the snippet cut from the manifest's text.
    let hits = find(&index, by_text("meeting"));
    assert_eq!(ids(&hits), [a.as_str()]);
    let snippet = hits[0].snippet.as_deref().unwrap();
    assert!(snippet.contains("[meeting] notes"), "{snippet}");

    // Text combines with the other filters.
    let q = RunQuery {
        agent: Some("blake".into()),
        ..by_text("ergonomic")
    };
    assert!(find(&index, q).is_empty());
    let (hits, _) = run::find(&p, &by_text("ergonomic")).unwrap();
    assert_eq!(ids(&hits), [a]);
}

#[test]
fn a_runs_full_text_follows_every_change_and_is_kept_when_nothing_changed() {
    let (_dir, p) = project();
    let a = start(&p, "alex", "intake");
    output(
        &p,
        &a,
        "a.md",
        "alpha words\n",
        OutputType::Document,
        "first notes",
    );
    let segments = |p: &Project| -> i64 {
        Index::open(p)
            .unwrap()
            .conn
            .query_row("SELECT count(*) FROM runs_fts_data", [], |r| r.get(0))
            .unwrap()
    };
    let text = |words: &str| ids(&find(&Index::open_synced(&p).unwrap(), by_text(words)));
    assert_eq!(text("alpha"), [a.as_str()]);

    // The same output registered again: the same text, no new FTS segment.
    let before = segments(&p);
    run::register_output(&p, &a, "a.md", OutputType::Document, "first notes").unwrap();
    assert_eq!(segments(&p), before, "the unchanged text was indexed again");
    assert_eq!(text("alpha"), [a.as_str()]);

    // The file rewritten, then registered again: the new words replace
    // the old ones (the index is told through the write, not a re-read).
    std::fs::write(folder(&p, &a).join("a.md"), "bravo instead\n").unwrap();
    run::register_output(&p, &a, "a.md", OutputType::Document, "first notes").unwrap();
    assert_eq!(text("bravo"), [a.as_str()]);
    assert!(text("alpha").is_empty());
    // A new description, and a new output.
    run::register_output(&p, &a, "a.md", OutputType::Document, "charlie notes").unwrap();
    assert_eq!(text("charlie"), [a.as_str()]);
    assert!(text("first").is_empty());
    output(&p, &a, "b.md", "delta\n", OutputType::Data, "second");
    assert_eq!(text("delta bravo charlie second"), [a.as_str()]);
    // Finishing changes no searchable text, and loses none.
    run::finish(&p, &a, RunStatus::Completed).unwrap();
    assert_eq!(text("delta bravo charlie"), [a.as_str()]);
}

#[test]
fn a_text_count_stops_at_its_cap() {
    let (_dir, p) = project();
    let runs: Vec<String> = (0..5).map(|_| start(&p, "alex", "intake")).collect();
    for (i, id) in runs.iter().enumerate() {
        let words = if i % 2 == 0 { "common even" } else { "common" };
        output(&p, id, "n.md", words, OutputType::Document, "notes");
        set_started(&p, id, &format!("2025-01-0{}T00:00:00.000Z", i + 1));
    }
    let index = Index::open_synced(&p).unwrap();
    Index::open(&p).unwrap().sync().unwrap();
    let common = by_text("common");
    assert_eq!(index.count_runs(&common).unwrap(), 5);
    assert_eq!(index.count_runs_upto(&common, Some(3)).unwrap(), 3);
    assert_eq!(index.count_runs_upto(&common, Some(9)).unwrap(), 5);
    let even = by_text("even");
    assert_eq!(index.count_runs_upto(&even, Some(2)).unwrap(), 2);
    assert_eq!(index.count_runs_upto(&even, None).unwrap(), 3);
}

#[test]
fn latest_output_is_the_newest_runs_last_output_of_the_type() {
    let (_dir, p) = project();
    let old = start(&p, "alex", "intake");
    output(&p, &old, "old.md", "old", OutputType::Report, "old report");
    let new = start(&p, "alex", "intake");
    output(&p, &new, "draft.md", "d", OutputType::Document, "draft");
    output(
        &p,
        &new,
        "final.md",
        "f",
        OutputType::Report,
        "final report",
    );
    output(&p, &new, "numbers.json", "{}", OutputType::Data, "numbers");
    // The newest run of all has no output yet: it is passed over.
    let empty = start(&p, "alex", "intake");
    let design = start(&p, "alex", "design");
    output(
        &p,
        &design,
        "design.md",
        "x",
        OutputType::Report,
        "design report",
    );
    let blake = start(&p, "blake", "intake");
    output(
        &p,
        &blake,
        "b.md",
        "b",
        OutputType::Report,
        "blake's report",
    );
    for (id, at) in [
        (&old, "2025-01-01T10:00:00Z"),
        (&new, "2025-01-02T10:00:00Z"),
        (&empty, "2025-01-03T10:00:00Z"),
        (&design, "2025-01-04T10:00:00Z"),
        (&blake, "2025-01-05T10:00:00Z"),
    ] {
        set_started(&p, id, at);
    }
    assert_eq!(Index::open(&p).unwrap().sync().unwrap().indexed, 5);

    let latest = |workflow: Option<&str>, ty: Option<&str>| {
        run::latest_output(&p, "alex", workflow, ty)
            .map(|l| (l.run.id.to_string(), l.output.file, l.path))
    };
    let (id, file, path) = latest(Some("^intake$"), Some("report")).unwrap();
    assert_eq!((id.as_str(), file.as_str()), (new.as_str(), "final.md"));
    assert_eq!(path, folder(&p, &new).join("final.md"));
    let (id, file, _) = latest(Some("intake"), None).unwrap();
    assert_eq!((id.as_str(), file.as_str()), (new.as_str(), "numbers.json"));
    let (id, file, _) = latest(None, Some("report")).unwrap();
    assert_eq!((id.as_str(), file.as_str()), (design.as_str(), "design.md"));
    let (id, file, _) = latest(Some("intake"), Some("document")).unwrap();
    assert_eq!((id.as_str(), file.as_str()), (new.as_str(), "draft.md"));

    let err = latest(Some("intake"), Some("artifact")).unwrap_err();
    assert!(
        matches!(&err, crate::Error::NotFound { id, .. } if id == "alex (workflow intake, type artifact)"),
        "{err:?}"
    );
    // The index answers the same without the ops layer.
    let (run, out, _) = Index::open(&p)
        .unwrap()
        .latest_output("blake", None, Some("report"))
        .unwrap()
        .unwrap();
    assert_eq!(
        (run.id.as_str(), out.file.as_str()),
        (blake.as_str(), "b.md")
    );
}

#[test]
fn children_follow_link() {
    let (_dir, p) = project();
    let a = start(&p, "alex", "intake");
    let b = start(&p, "blake", "design");
    let c = start(&p, "casey", "build");
    assert!(run::link(&p, &b, &a).unwrap().1);
    assert!(run::link(&p, &c, &a).unwrap().1);
    assert!(!run::link(&p, &c, &a).unwrap().1, "already linked");
    assert!(run::link(&p, &c, &b).unwrap().1);
    assert!(run::link(&p, &a, &a).is_err());

    let index = Index::open(&p).unwrap();
    assert_eq!(
        index.children(&a).unwrap(),
        sorted(vec![b.clone(), c.clone()])
    );
    assert_eq!(index.children(&b).unwrap(), [c.as_str()]);
    assert!(index.children(&c).unwrap().is_empty());
    assert_eq!(index.status().unwrap().edges, 3);
    assert!(index.dangling_edges().unwrap().is_empty());

    let lineage = run::lineage(&p, &c, &TimeZone::UTC).unwrap();
    assert_eq!(
        sorted(lineage.ancestors.clone()),
        sorted(vec![a.clone(), b.clone()])
    );
    assert!(lineage.descendants.is_empty());
    assert_eq!(lineage.edges.len(), 3);
    let lineage = run::lineage(&p, &a, &TimeZone::UTC).unwrap();
    assert_eq!(sorted(lineage.descendants), sorted(vec![b, c]));
    assert!(lineage.cycles.is_empty() && lineage.dangling.is_empty());
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
        assert_eq!(index.status().unwrap().pending, 1);
    }
    {
        // A writer still holding the run's lock is mid-write: left alone.
        let _held = p.locks.exclusive(&lock).unwrap();
        let index = Index::open(&p).unwrap();
        assert_eq!(index.status().unwrap().pending, 1);
    }
    let index = Index::open(&p).unwrap();
    assert_eq!(index.status().unwrap().pending, 0);
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
fn work_session_workflow_and_transcript_writes_are_counted() {
    let (_dir, p) = project();
    let index = Index::open(&p).unwrap();
    assert_eq!(counts(&index.status().unwrap()), [0; 8]);

    let ws = work_session::start(
        &p,
        work_session::StartOptions {
            client: Some("ACME".into()),
            project: Some("AUDIT".into()),
            ..Default::default()
        },
    )
    .unwrap();
    let status = index.status().unwrap();
    assert_eq!((status.work_sessions, status.workflow_states), (1, 0));
    let listing = index.work_sessions().unwrap();
    let live: Vec<&str> = listing
        .sessions
        .iter()
        .map(|w| w.session_id.as_str())
        .collect();
    assert_eq!(live, [ws.session_id.as_str()]);
    assert!(listing.archived.is_empty() && listing.corrupt.is_empty());

    let target = workflow::Target::default();
    let invoke = |agent: AgentType| {
        workflow::invoke(
            &p,
            &target,
            workflow::Invoke {
                agent,
                prompt: "Do the work".into(),
                ..Default::default()
            },
        )
        .unwrap()
    };
    assert_eq!(invoke(AgentType::Analyst).version, 2);
    assert_eq!(index.status().unwrap().workflow_states, 1);
    assert_eq!(invoke(AgentType::Architect).version, 3);
    assert_eq!(index.status().unwrap().workflow_states, 1, "the same file");

    // A run started under the session is linked to it, in both records.
    let r = start(&p, "alex", "intake");
    let hits = find(&index, RunQuery::default());
    assert_eq!(
        hits[0].run.manifest.work_session(),
        Some(ws.session_id.as_str())
    );
    let listing = index.work_sessions().unwrap();
    assert_eq!(listing.sessions[0].agents_spawned.len(), 1);
    assert_eq!(
        counts(&index.status().unwrap()),
        [1, 0, 0, 1, 0, 1, 0, 0],
        "run {r}"
    );

    transcript::import(&p, &fixture("transcript-main.json"), false, None, None).unwrap();
    assert_eq!(index.status().unwrap().transcripts, 1);
    let listed = index.transcripts(None, None, None, None).unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].id, "6f1c2b9e-3d4a-4c5b-9e8f-1a2b3c4d5e6f");
    assert_eq!(listed[0].latest_total_tokens, 2242);
    assert_eq!(listed[0].workdir, "/home/bryan/projects/acme");
    assert!(
        index
            .transcripts(
                Some(crate::model::transcript::Kind::Subagent),
                None,
                None,
                None
            )
            .unwrap()
            .is_empty()
    );
    // Everything above went through the index: nothing for a sync to do.
    assert_eq!(stale(&index), [0, 0, 0]);

    // Closing moves the session and its state to the archive.
    work_session::close(&p, None, Some("done".into())).unwrap();
    let listing = index.work_sessions().unwrap();
    assert!(listing.sessions.is_empty());
    let archived: Vec<&str> = listing
        .archived
        .iter()
        .map(|w| w.session_id.as_str())
        .collect();
    assert_eq!(archived, [ws.session_id.as_str()]);
    let status = index.status().unwrap();
    assert_eq!((status.work_sessions, status.workflow_states), (1, 1));
}

#[test]
fn closing_a_session_moves_its_workflow_state_in_the_index_too() {
    let (_dir, p) = project();
    let ws = work_session::start(&p, work_session::StartOptions::default()).unwrap();
    workflow::invoke(
        &p,
        &workflow::Target::default(),
        workflow::Invoke::default(),
    )
    .unwrap();
    let index = Index::open(&p).unwrap();
    assert_eq!(stale(&index), [0, 0, 0]);

    work_session::close(&p, None, None).unwrap();
    let id = crate::model::ids::WorkSessionId::parse(&ws.session_id).unwrap();
    let archived = id.state_file(&p.config.session_archive_dir);
    assert!(archived.is_file());
    let indexed: Vec<String> = index
        .conn
        .prepare("SELECT path FROM workflow_states")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<std::result::Result<_, _>>()
        .unwrap();
    assert_eq!(indexed, [path_str(&archived)]);
    assert_eq!(stale(&index), [0, 0, 0]);
}

#[test]
fn writes_after_the_index_is_deleted_reach_the_new_index() {
    let (_dir, p) = project();
    // This thread now holds a cached writer, as a long-running server does.
    let a = start(&p, "alex", "intake");
    remove_index(&p);
    assert_eq!(Index::open(&p).unwrap().status().unwrap().runs, 1);

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
    assert_eq!(index.status().unwrap().outputs, 1);
}

/// The marks a live index holds for the pending table, read without the
/// repair an open does.
fn pending_marks(p: &Project) -> i64 {
    let index = Index::connect(p, &p.index_path()).unwrap();
    index
        .conn
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
    writer.mark_pending(std::slice::from_ref(&pending)).unwrap();
    // … when another process rebuilds it: the mark moves to the new file.
    Index::rebuild(&p, None).unwrap();
    assert!(!writer.is_current());
    assert_eq!(pending_marks(&p), 1);
    // The writer writes its file and records it on its old connection.
    edit_manifest(&p, &a, |m| m["tags"] = json!(["after-swap"]));
    let run = crate::store::run::load(&p, &RunId::parse(&a).unwrap()).unwrap();
    writer
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
    assert_eq!(index.status().unwrap().pending, 0);
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
    assert_eq!(old.status().unwrap().runs, 1);
    assert!(!old.is_current());
    let new = Index::open(&p).unwrap();
    assert!(new.is_current());
    assert_eq!(new.status().unwrap().runs, 1);
}

#[test]
fn a_word_in_most_runs_lists_its_most_recent_matches_newest_first() {
    let (_d, p) = project();
    let dir = p.config.agent_outputs_folder.clone();
    // 200 runs, one a minute; "common" in all but every tenth (three times
    // over in the older half, which bm25 over all matches would rank
    // first), "rare" in the oldest few only.
    let mut ids = vec![];
    for i in 0..200u32 {
        let id = uuid::Uuid::from_u128(0x1000_0000_0000_4000_8000_0000_0000_0000 + u128::from(i))
            .to_string();
        let words = match i {
            _ if i % 10 == 0 => "nothing here",
            1..5 => "common rare",
            5..100 => "common common common",
            _ => "common",
        };
        let folder = dir.join(&id);
        std::fs::create_dir_all(&folder).unwrap();
        let m = json!({
            "version": "1.0.0", "session_id": id,
            "agent": {"name": "alex"}, "workflow": {"name": "w", "description": words},
            "execution": {"started_at": format!("2025-10-05T{:02}:{:02}:00.000Z", i / 60, i % 60), "status": "completed"},
            "outputs": [],
        });
        std::fs::write(folder.join(MANIFEST_FILE), m.to_string()).unwrap();
        ids.push(id);
    }
    let index = Index::open(&p).unwrap();
    let found = |text: &str, limit: usize| -> Vec<String> {
        index
            .find_runs(&RunQuery {
                text: Some(text.into()),
                limit: Some(limit),
                ..RunQuery::default()
            })
            .unwrap()
            .into_iter()
            .map(|h| h.run.id.to_string())
            .collect()
    };
    // Common: a page of 3 is its 3 newest matches, newest first.
    let page = found("common", 3);
    let newest: Vec<String> = ids
        .iter()
        .enumerate()
        .rev()
        .filter(|(i, _)| i % 10 != 0)
        .take(3)
        .map(|(_, id)| id.clone())
        .collect();
    assert_eq!(page, newest);
    assert!(index.conn.is_autocommit());
    // A page larger than the narrowed set ranks every match after all.
    assert_eq!(found("common", 50).len(), 50);
    // Rare words rank every match, and combined with a filter that the
    // recent matches do not meet, the page is filled from all matches.
    assert_eq!(found("rare", 10).len(), 4);
    let none_recent = index
        .find_runs(&RunQuery {
            text: Some("common".into()),
            since: None,
            user: None,
            limit: Some(2),
            offset: 170,
            ..RunQuery::default()
        })
        .unwrap();
    assert_eq!(none_recent.len(), 2);
}

#[test]
fn a_common_words_recent_page_equals_a_full_scan_whatever_the_rowid_order() {
    let (_d, p) = project();
    let dir = p.config.agent_outputs_folder.clone();
    // Start times in no relation to the folder names (the rebuild's
    // insertion order), with ties; "common" in two runs of three.
    let write = |i: u32, minute: u32, words: &str| -> (String, i64, String) {
        let id = uuid::Uuid::from_u128(
            0x2000_0000_0000_4000_8000_0000_0000_0000 + u128::from((i * 7919) % 1000),
        )
        .to_string();
        let started = format!("2025-10-05T{:02}:{:02}:00.000Z", minute / 60, minute % 60);
        let folder = dir.join(&id);
        std::fs::create_dir_all(&folder).unwrap();
        let m = json!({
            "version": "1.0.0", "session_id": id,
            "agent": {"name": "alex"}, "workflow": {"name": "w", "description": words},
            "execution": {"started_at": started, "status": "completed"},
            "outputs": [],
        });
        std::fs::write(folder.join(MANIFEST_FILE), m.to_string()).unwrap();
        let ns = jiff::Timestamp::from_str(&started).unwrap().as_nanosecond() as i64;
        (id, ns, words.to_string())
    };
    use std::str::FromStr;
    let mut runs = vec![];
    for i in 0..200u32 {
        let words = if i % 3 == 0 { "other" } else { "common word" };
        runs.push(write(i, (i * 37) % 120, words));
    }
    let mut index = Index::open(&p).unwrap();
    // Synced late: an old start time, the largest rowid; and a run rewritten
    // in place to start last, keeping its small rowid.
    runs.push(write(500, 0, "common"));
    let (old_id, _, _) = runs[1].clone();
    runs[1] = write(1, 300, "common");
    assert_eq!(runs[1].0, old_id);
    index.sync().unwrap();
    let expected = |limit: usize| -> Vec<String> {
        let mut m: Vec<&(String, i64, String)> =
            runs.iter().filter(|r| r.2.contains("common")).collect();
        m.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        m.into_iter().take(limit).map(|r| r.0.clone()).collect()
    };
    for limit in [1, 2, 3] {
        let found: Vec<String> = index
            .find_runs(&RunQuery {
                text: Some("common".into()),
                limit: Some(limit),
                ..RunQuery::default()
            })
            .unwrap()
            .into_iter()
            .map(|h| h.run.id.to_string())
            .collect();
        assert_eq!(found, expected(limit), "limit {limit}");
    }
    assert_eq!(expected(1), [old_id]);
}

/// A project whose logbook.yaml names a team catalog (never contacted here:
/// no driver is installed in unit tests).
fn team_project() -> (TempDir, Project) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".logbook")).unwrap();
    std::fs::write(
        dir.path().join("logbook.yaml"),
        "team_url: 'postgres://nobody@127.0.0.1:1/none'\norigin: unit\n",
    )
    .unwrap();
    let p = Project::open(dir.path()).unwrap();
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
    assert_eq!(index.outbox_len().unwrap(), 2);
    let batch = index.outbox_batch(10).unwrap();
    let ids: Vec<&str> = batch.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, vec![b.as_str(), a.as_str()]);
    assert!(batch.iter().all(|c| c.body.is_some() && c.hash.len() == 64));
    // Written again after the batch was read: that note must survive.
    run::finish(&p, &b, RunStatus::Failed).unwrap();
    let done: Vec<_> = batch
        .iter()
        .map(|c| (c.kind, c.id.clone(), c.version))
        .collect();
    index.outbox_done(&done).unwrap();
    let left = index.outbox_batch(10).unwrap();
    assert_eq!(left.len(), 1);
    assert_eq!(left[0].id, b);
    assert!(left[0].version > batch[0].version);
    // A removed run is a change without a body (a tombstone on the server).
    std::fs::remove_dir_all(folder(&p, &a)).unwrap();
    let mut index = Index::open(&p).unwrap();
    index.sync().unwrap();
    let gone = index.outbox_batch(10).unwrap();
    assert!(gone.iter().any(|c| c.id == a && c.body.is_none()));
}

#[test]
fn without_a_team_the_outbox_stays_empty_and_its_triggers_go() {
    let (d, p) = team_project();
    start(&p, "casey", "deep-dive");
    assert_eq!(Index::open(&p).unwrap().outbox_len().unwrap(), 1);
    std::fs::remove_file(d.path().join("logbook.yaml")).unwrap();
    let p = Project::open(d.path()).unwrap();
    start(&p, "casey", "deep-dive");
    assert_eq!(Index::open(&p).unwrap().outbox_len().unwrap(), 0);
}

#[test]
fn a_rebuild_queues_every_record_again_with_newer_versions() {
    let (_d, p) = team_project();
    start(&p, "casey", "deep-dive");
    start(&p, "pixel", "build");
    let index = Index::open(&p).unwrap();
    let before = index.outbox_batch(10).unwrap();
    let done: Vec<_> = before
        .iter()
        .map(|c| (c.kind, c.id.clone(), c.version))
        .collect();
    index.outbox_done(&done).unwrap();
    drop(index);
    Index::rebuild(&p, None).unwrap();
    let index = Index::open(&p).unwrap();
    let after = index.outbox_batch(10).unwrap();
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
        .outbox_batch(10)
        .unwrap()
        .iter()
        .map(|c| (c.kind, c.id.clone(), c.version))
        .collect();
    index.outbox_done(&done).unwrap();
    drop(index);
    // Another tool deletes a run; a sync notes the deletion; a rebuild comes
    // before the next push. No file says the run existed: only the note does.
    std::fs::remove_dir_all(folder(&p, &gone)).unwrap();
    Index::open(&p).unwrap().sync().unwrap();
    Index::rebuild(&p, None).unwrap();
    let index = Index::open(&p).unwrap();
    let waiting = index.outbox_batch(10).unwrap();
    let deletion = waiting
        .iter()
        .find(|c| c.id == gone)
        .expect("the deletion is still waiting");
    assert!(deletion.body.is_none(), "pushed as a deletion");
    assert!(waiting.iter().any(|c| c.id == kept && c.body.is_some()));
}

/// SQLite's plan of a statement, its steps' details joined.
fn plan(index: &Index, (sql, args): &super::filter::Sql) -> String {
    let mut stmt = index
        .conn
        .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
        .unwrap();
    stmt.query_map(rusqlite::params_from_iter(args.iter()), |r| {
        r.get::<_, String>(3)
    })
    .unwrap()
    .map(Result::unwrap)
    .collect::<Vec<_>>()
    .join("; ")
}

#[test]
fn counts_take_the_tally_index_and_pages_never_do() {
    let (_d, p, _) = populated();
    let queries = [
        by_agent("alex"),
        RunQuery {
            agent: Some("alex".into()),
            status: Some("completed".into()),
            workflow: Some("^intake".into()),
            ..Default::default()
        },
        RunQuery {
            agent: Some("alex".into()),
            status: Some("failed".into()),
            ..Default::default()
        },
    ];
    // Without statistics (written run by run), then with the ones a
    // rebuild gathers.
    for stats in ["none", "after a rebuild"] {
        if stats != "none" {
            Index::rebuild(&p, None).unwrap();
        }
        let index = Index::open(&p).unwrap();
        for q in &queries {
            let count = plan(&index, &index.count_sql(q, None).unwrap().unwrap());
            assert!(count.contains("runs_tally"), "{stats}: {q:?}: {count}");
            let (page, _) = index.page_sql(q, false).unwrap().unwrap();
            let page = plan(&index, &page);
            assert!(
                !page.contains("runs_tally") && !page.contains("TEMP B-TREE"),
                "{stats}: {q:?}: {page}"
            );
            // And both answer the same, the page's one read transaction
            // ended (a pooled connection must come back out of it).
            let found = index
                .find_runs(&RunQuery {
                    limit: None,
                    ..q.clone()
                })
                .unwrap();
            assert!(index.conn.is_autocommit());
            assert_eq!(index.count_runs(q).unwrap(), found.len() as u64, "{q:?}");
        }
    }
}

#[test]
fn a_cached_statement_is_not_prepared_again_for_each_new_binding() {
    let (_d, p, _) = populated();
    Index::rebuild(&p, None).unwrap();
    let index = Index::open(&p).unwrap();
    let (rids, folders): (Vec<i64>, Vec<String>) = index
        .conn
        .prepare("SELECT rid, folder FROM runs ORDER BY rid LIMIT 3")
        .unwrap()
        .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))
        .unwrap()
        .map(|r| r.unwrap())
        .unzip();
    // What a registration's index update reads, run by run.
    for (sql, by_rid) in [
        (
            "SELECT rid, id, agent, workflow, status, started_ns, manifest FROM runs WHERE folder = ?1",
            false,
        ),
        (
            "SELECT file, type, description, created_at FROM outputs WHERE rid = ?1 ORDER BY seq",
            true,
        ),
        (
            "SELECT parent FROM edges WHERE rid = ?1 ORDER BY parent",
            true,
        ),
        ("SELECT tag FROM tags WHERE rid = ?1 ORDER BY tag", true),
    ] {
        let mut stmt = index.conn.prepare_cached(sql).unwrap();
        for (rid, folder) in rids.iter().zip(&folders) {
            let key: rusqlite::types::Value = if by_rid {
                (*rid).into()
            } else {
                folder.clone().into()
            };
            let mut rows = stmt.query([key]).unwrap();
            while rows.next().unwrap().is_some() {}
        }
        assert_eq!(
            stmt.get_status(rusqlite::StatementStatus::RePrepare),
            0,
            "{sql}"
        );
    }
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
    let before = run::find_page(&p, &query).unwrap();
    assert_eq!(before.total, 3);
    let edited = before.hits[0].run.id.to_string();
    edit_manifest(&p, &edited, |m| {
        m["execution"]["status"] = json!("completed");
        m["tags"] = json!(["edited"]);
    });
    let page = run::find_page(&p, &query).unwrap();
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
    assert_eq!(run::find_page(&p, &completed).unwrap().total, 1);
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
    assert_eq!(reader.count_runs(&review()).unwrap(), 0);

    // Another connection (the writer's, as another process's would be)
    // commits a run of a new workflow: the reader's remembered names are
    // of an older version and are read again.
    let first = start(&p, "alex", "review-1");
    assert_eq!(ids(&find(&reader, review())), std::slice::from_ref(&first));
    assert_eq!(reader.count_runs(&review()).unwrap(), 1);

    // The reader's own connection writes the next name: a run edited in
    // place by another tool, re-read when the reader verifies its page.
    edit_manifest(&p, &intake, |m| m["workflow"]["name"] = json!("review-2"));
    let all = find(&reader, RunQuery::default());
    assert_eq!(all.len(), 2);
    assert_eq!(
        sorted(ids(&find(&reader, review()))),
        sorted(vec![first, intake])
    );
    assert_eq!(reader.count_runs(&review()).unwrap(), 2);
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
        run::find(&p, &RunQuery::default()).unwrap();
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
                let (hits, skipped) = run::find(&p, q).unwrap();
                let scanned = crate::store::run::scan(&p).unwrap();
                let want: Vec<String> = run::find_scan(&p, q)
                    .unwrap()
                    .iter()
                    .map(|r| r.id.to_string())
                    .collect();
                proptest::prop_assert_eq!(ids(&hits), want, "{:?} after {:?}", q.status, left);
                proptest::prop_assert_eq!(skipped, scanned.corrupt.len() as u64);
            }
        }
    }
}
