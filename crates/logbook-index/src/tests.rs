//! Unit tests of the index's internals, on real SQLite files in temp
//! folders: the plans its SQL builders make, the statement cache of its
//! connections, and the paths a text query's page takes (chosen by the
//! words' share of the runs, so a small project takes each).
//! What the index answers through its public calls is tested in
//! `tests/it/index_*.rs`.

use std::str::FromStr;

use serde_json::json;
use tempfile::TempDir;

use super::*;
use logbook_model::clock::Clock;
use logbook_model::query::RunQuery;
use logbook_model::run::MANIFEST_FILE;

/// A temp folder that is a project already (its `.logbook/` exists), so the
/// index lives in a file: where no project is, reads use a throwaway index.
fn project() -> (TempDir, Project) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".logbook")).unwrap();
    let p = Project::open(dir.path()).unwrap();
    (dir, p)
}

/// One run as another tool would write it: its manifest and output files.
struct Written<'a> {
    id: &'a str,
    agent: &'a str,
    workflow: &'a str,
    status: &'a str,
    outputs: &'a [(&'a str, &'a str, &'a str)],
    related: &'a [&'a str],
    tags: &'a [&'a str],
}

fn write_run(p: &Project, (i, run): (usize, &Written)) {
    let folder = p.config.agent_outputs_folder.join(run.id);
    std::fs::create_dir_all(&folder).unwrap();
    let outputs: Vec<_> = run
        .outputs
        .iter()
        .map(|(file, ty, text)| {
            std::fs::write(folder.join(file), text).unwrap();
            json!({"file": file, "type": ty, "description": format!("the {file}"),
                "created_at": "2025-10-05T11:00:00.000Z"})
        })
        .collect();
    let m = json!({
        "version": "1.0.0", "session_id": run.id,
        "agent": {"name": run.agent}, "workflow": {"name": run.workflow},
        "execution": {"started_at": format!("2025-10-05T10:0{i}:00.000Z"), "status": run.status},
        "outputs": outputs, "related_sessions": run.related, "tags": run.tags,
    });
    std::fs::write(folder.join(MANIFEST_FILE), m.to_string()).unwrap();
}

/// A project of four runs (outputs, lineage, a tag, three statuses),
/// indexed file by file by a sync of the index made before them: no
/// statistics, as when the runs are written one by one.
fn populated() -> (TempDir, Project) {
    let (dir, p) = project();
    drop(Index::open(&p).unwrap());
    let (a, b) = (
        "0a1b2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d",
        "1b2c3d4e-5f6a-4b7c-9d8e-9f0a1b2c3d4e",
    );
    let runs = [
        Written {
            id: a,
            agent: "alex",
            workflow: "intake",
            status: "completed",
            outputs: &[
                ("notes.md", "document", "Ergonomic keyboards approved.\n"),
                ("data.json", "data", "{\"count\": 10}\n"),
            ],
            related: &[],
            tags: &[],
        },
        Written {
            id: b,
            agent: "blake",
            workflow: "design",
            status: "running",
            outputs: &[("report.md", "report", "Budget approved.\n")],
            related: &[a],
            tags: &["urgent"],
        },
        Written {
            id: "2c3d4e5f-6a7b-4c8d-8e9f-0a1b2c3d4e5f",
            agent: "alex",
            workflow: "intake-v2",
            status: "failed",
            outputs: &[],
            related: &[],
            tags: &[],
        },
        Written {
            id: "3d4e5f6a-7b8c-4d9e-af0a-1b2c3d4e5f6a",
            agent: "casey",
            workflow: "build",
            status: "running",
            outputs: &[],
            related: &[b],
            tags: &[],
        },
    ];
    runs.iter().enumerate().for_each(|r| write_run(&p, r));
    assert_eq!(Index::open(&p).unwrap().upkeep().sync().unwrap().indexed, 4);
    (dir, p)
}

fn by_agent(agent: &str) -> RunQuery {
    RunQuery {
        agent: Some(agent.into()),
        ..RunQuery::default()
    }
}

/// SQLite's plan of a statement, its steps' details joined.
fn plan(index: &Index, (sql, args): &crate::read::filter::Sql) -> String {
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
    let (_d, p) = populated();
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
            let count = plan(&index, &index.read().count_sql(q, None).unwrap().unwrap());
            assert!(count.contains("runs_tally"), "{stats}: {q:?}: {count}");
            let (page, _) = index.read().page_sql(q).unwrap().unwrap();
            let page = plan(&index, &page);
            assert!(
                !page.contains("runs_tally") && !page.contains("TEMP B-TREE"),
                "{stats}: {q:?}: {page}"
            );
            // And both answer the same, the page's one read transaction
            // ended (a pooled connection must come back out of it).
            let found = index
                .read()
                .find_runs(&RunQuery {
                    limit: None,
                    ..q.clone()
                })
                .unwrap();
            assert!(index.conn.is_autocommit());
            assert_eq!(
                index.read().count_runs(q).unwrap(),
                found.len() as u64,
                "{q:?}"
            );
        }
    }
}

#[test]
fn a_cached_statement_is_not_prepared_again_for_each_new_binding() {
    let (_d, p) = populated();
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
fn every_text_page_lists_its_matches_newest_first_whichever_path_finds_them() {
    let (_d, p) = project();
    let dir = p.config.agent_outputs_folder.clone();
    // 200 runs, one a minute, two agents; "common" in all but every tenth
    // (three times over in the older half, which a ranking by relevance
    // would put first), "rare" in a few old ones only, "mid" in one of
    // twelve (joined and sorted, too rare for the ordered walk).
    let mut runs = vec![];
    for i in 0..200u32 {
        let id = uuid::Uuid::from_u128(0x1000_0000_0000_4000_8000_0000_0000_0000 + u128::from(i))
            .to_string();
        let mut words = match i {
            _ if i % 10 == 0 => "nothing here".to_string(),
            1..5 => "common rare".to_string(),
            5..100 => "common common common".to_string(),
            _ => "common".to_string(),
        };
        if i % 12 == 7 {
            words.push_str(" mid");
        }
        let agent = if i % 3 == 0 { "casey" } else { "alex" };
        let folder = dir.join(&id);
        std::fs::create_dir_all(&folder).unwrap();
        let m = json!({
            "version": "1.0.0", "session_id": id,
            "agent": {"name": agent}, "workflow": {"name": "w", "description": words},
            "execution": {"started_at": format!("2025-10-05T{:02}:{:02}:00.000Z", i / 60, i % 60), "status": "completed"},
            "outputs": [],
        });
        std::fs::write(folder.join(MANIFEST_FILE), m.to_string()).unwrap();
        runs.push((id, agent, words));
    }
    let index = Index::open(&p).unwrap();
    for (text, agent) in [
        ("common", None),
        ("common", Some("casey")),
        ("rare", None),
        ("mid", None),
        ("mid", Some("alex")),
        ("absent", None),
    ] {
        let all: Vec<String> = runs
            .iter()
            .rev()
            .filter(|(_, a, w)| w.contains(text) && agent.is_none_or(|x| x == *a))
            .map(|(id, _, _)| id.clone())
            .collect();
        for (limit, offset) in [
            (Some(1), 0),
            (Some(3), 0),
            (Some(3), 2),
            (Some(50), 0),
            (Some(40), 130),
            (None, 0),
            (None, 5),
        ] {
            let found: Vec<String> = index
                .read()
                .find_runs(&RunQuery {
                    text: Some(text.into()),
                    agent: agent.map(str::to_string),
                    limit,
                    offset,
                    ..RunQuery::default()
                })
                .unwrap()
                .into_iter()
                .map(|h| h.run.id.to_string())
                .collect();
            let expected: Vec<String> = all
                .iter()
                .skip(offset)
                .take(limit.unwrap_or(usize::MAX))
                .cloned()
                .collect();
            assert_eq!(found, expected, "{text} {agent:?} {limit:?} +{offset}");
            assert!(index.conn.is_autocommit());
        }
    }
}

#[test]
fn a_common_words_page_equals_a_full_scan_whatever_the_rowid_order() {
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
    let mut runs = vec![];
    for i in 0..200u32 {
        let words = if i % 3 == 0 { "other" } else { "common word" };
        runs.push(write(i, (i * 37) % 120, words));
    }
    let index = Index::open(&p).unwrap();
    // Synced late: an old start time, the largest rowid; and a run rewritten
    // in place to start last, keeping its small rowid.
    runs.push(write(500, 0, "common"));
    let (old_id, _, _) = runs[1].clone();
    runs[1] = write(1, 300, "common");
    assert_eq!(runs[1].0, old_id);
    index.upkeep().sync().unwrap();
    let expected = |limit: usize| -> Vec<String> {
        let mut m: Vec<&(String, i64, String)> =
            runs.iter().filter(|r| r.2.contains("common")).collect();
        m.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        m.into_iter().take(limit).map(|r| r.0.clone()).collect()
    };
    for limit in [1, 2, 3] {
        let found: Vec<String> = index
            .read()
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

/// What a pass over the run folders read of each (as `doctor` reads it),
/// handed to the comparison after it: `wrong` gets stamps that disagree
/// with its files. The pass runs a second after the runs folder last
/// changed, by a clock set there rather than slept towards.
fn walked(p: &Project, wrong: Option<&str>) -> WalkedNames {
    let mut w = WalkedNames::begin_at(p, a_second_after_runs_folder_changed(p));
    for folder in logbook_store::runs::walk(&p.config.agent_outputs_folder).unwrap() {
        let folder = folder.unwrap();
        let stamp = logbook_store::stamp::of_path(&folder.manifest()).unwrap();
        let text = std::fs::read_to_string(folder.manifest()).unwrap();
        let (m, _) = logbook_model::run::parse_manifest(&folder.manifest(), &text).unwrap();
        let files = m.outputs.iter().map(|o| o.file.as_str());
        let mut stamps = FolderStamps {
            manifest: stamp,
            outputs: logbook_store::run_outputs::outputs_stamp(&folder.path, files),
        };
        if wrong == folder.name.to_str() {
            stamps.outputs ^= 1;
        }
        w.push(folder.name_bytes(), Some(stamps));
    }
    w.finish();
    w
}

#[test]
fn the_comparison_after_a_pass_trusts_the_stamps_the_pass_read() {
    let (_dir, p) = populated();
    let index = Index::open(&p).unwrap();
    let changed = |w: &WalkedNames, outputs| {
        let s = index.upkeep().staleness_after(Some(w), outputs).unwrap();
        assert_eq!((s.new, s.deleted), (0, 0));
        s.changed
    };
    // The stamps the index took, as the pass read them: nothing to do.
    assert_eq!(changed(&walked(&p, None), Outputs::All), 0);
    // Stamps that disagree, though no file changed: the pass's word is
    // taken, no `stat` asked again.
    let (finished, running) = (
        "0a1b2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d",
        "1b2c3d4e-5f6a-4b7c-9d8e-9f0a1b2c3d4e",
    );
    assert_eq!(changed(&walked(&p, Some(finished)), Outputs::All), 1);
    assert_eq!(changed(&walked(&p, Some(running)), Outputs::All), 1);
    // A finished run's outputs are compared only when the sync would
    // compare them; a running run's always are.
    assert_eq!(changed(&walked(&p, Some(finished)), Outputs::Unsettled), 0);
    assert_eq!(changed(&walked(&p, Some(running)), Outputs::Unsettled), 1);
    // Names the runs folder no longer stands for are not trusted, nor
    // their stamps: a run folder made since is found.
    let w = walked(&p, Some(running));
    std::fs::create_dir(
        p.config
            .agent_outputs_folder
            .join("4e5f6a7b-8c9d-4eaf-8a1b-2c3d4e5f6a7b"),
    )
    .unwrap();
    let s = index
        .upkeep()
        .staleness_after(Some(&w), Outputs::All)
        .unwrap();
    assert_eq!((s.new, s.changed), (1, 0));
}

/// A clock one second past the runs folder's mtime: past the window in
/// which a listing of it is not trusted yet.
fn a_second_after_runs_folder_changed(p: &Project) -> Clock {
    let mtime = logbook_store::stamp::mtime_ns(&p.config.agent_outputs_folder);
    let changed = jiff::Timestamp::from_nanosecond(i128::from(mtime)).unwrap();
    Clock::fixed(changed + jiff::SignedDuration::from_secs(1))
}

#[test]
fn a_folder_listing_is_trusted_once_the_clock_is_past_its_racy_window() {
    let (_dir, p) = populated();
    let runs = &p.config.agent_outputs_folder;
    let mtime = logbook_store::stamp::mtime_ns(runs);
    let at = |ns: i64| Clock::fixed(jiff::Timestamp::from_nanosecond(i128::from(ns)).unwrap());
    // The same tick as the last change: an entry made in it could hide
    // behind an unchanged mtime.
    assert!(!sync::settled(runs, at(mtime)));
    assert!(!WalkedNames::begin_at(&p, at(mtime)).current(&p));
    // The clock moved on, not the test's time: trusted at once.
    let later = a_second_after_runs_folder_changed(&p);
    assert!(sync::settled(runs, later));
    assert!(WalkedNames::begin_at(&p, later).current(&p));
}
