//! The team catalog against a real PostgreSQL (the server of `pg.rs`):
//! pushes, two machines sharing runs and lineage, killed and racing
//! pushes, a stopped server. Two project roots stand for two machines.
//! What both backends must answer alike is the story suite's (`stories.rs`).

use std::collections::BTreeSet;

use std::process::Command;

use serde_json::Value;

use crate::harness::{Held, TestProject};
use crate::pg::{Pg, machine};

fn start_run(t: &TestProject, agent: &str, workflow: &str, related: Option<&str>) -> String {
    let extra = related.map(|r| vec!["--related", r]).unwrap_or_default();
    t.start_run(agent, workflow, &extra)["session_id"]
        .as_str()
        .unwrap()
        .to_string()
}

fn backlog(t: &TestProject) -> u64 {
    t.json(&["team", "status"])["backlog"].as_u64().unwrap()
}

fn ids(v: &Value) -> BTreeSet<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|r| r["session_id"].as_str().unwrap().to_string())
        .collect()
}

/// Every (id, status) of `origin`'s live runs in the catalog, and their count
/// with duplicates (the primary key forbids them; counted to be sure).
fn server_runs(pg: &Pg, db: &str, origin: &str) -> (BTreeSet<String>, usize) {
    let rows = pg.sql(
        db,
        &format!(
            "SELECT id || ' ' || status || ' ' || jsonb_array_length(manifest->'outputs') \
             FROM runs WHERE origin = '{origin}' AND NOT deleted"
        ),
    );
    let n = rows.len();
    (rows.into_iter().collect(), n)
}

/// A `team push` held at its `n`th batch on the server, before it noted the
/// batch sent: a known point to kill it at, or to let it go on from.
fn stopped_push(t: &TestProject, n: u32) -> Held {
    Held::start(t.cmd(&["team", "push"]), "push-sent", n)
}

/// The same from the local index: what the server must equal.
fn local_runs(t: &TestProject) -> BTreeSet<String> {
    t.json(&["find", "--limit", "100000"])
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            format!(
                "{} {} {}",
                r["session_id"].as_str().unwrap(),
                r["manifest"]["execution"]["status"].as_str().unwrap(),
                r["manifest"]["outputs"].as_array().unwrap().len()
            )
        })
        .collect()
}

#[test]
fn two_machines_share_runs_and_lineage_and_a_killed_push_is_repeated() {
    let pg = Pg::start();
    let url = pg.database("team");
    let a = machine(&url, "laptop-a");
    let b = machine(&url, "ci-b");

    // Before `team init`, a team query says what to run; local work goes on.
    let early = start_run(&a, "casey", "deep-dive-app", None);
    let err = a.run(&["find", "--team"]);
    assert!(err.err().contains("team init"), "{}", err.err());
    a.run(&["team", "init"]).ok();
    a.run(&["team", "init"]).ok(); // idempotent

    // A lineage that starts on A and continues on B.
    let root = early;
    std::fs::write(
        a.path("docs/agent-outputs").join(&root).join("laptops.md"),
        "# Laptops deep-dive\nThe budget laptop wins, says the Café.\n",
    )
    .unwrap();
    a.run(&[
        "run",
        "output",
        &root,
        "laptops.md",
        "--type",
        "document",
        "--description",
        "Deep-dive",
    ])
    .ok();
    a.run(&["run", "finish", &root]).ok();
    a.run(&["team", "push"]).ok();
    // B's run names A's run as its parent: the link crosses machines, so it
    // is written into the manifest as another tool would, and synced.
    let child = start_run(&b, "pixel", "build-stories", None);
    let manifest = b
        .path("docs/agent-outputs")
        .join(&child)
        .join("manifest.json");
    let mut m: Value = serde_json::from_str(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
    m["related_sessions"] = serde_json::json!([root]);
    std::fs::write(&manifest, serde_json::to_string_pretty(&m).unwrap()).unwrap();
    b.run(&["index", "sync"]).ok();
    let grandchild = start_run(&b, "quinn", "review-stories", Some(&child));
    b.run(&["team", "push"]).ok();

    // A finds B's runs; B finds A's, with its origin and output text.
    let found = a.json(&["find", "--team", "--agent", "pixel"]);
    assert_eq!(ids(&found), BTreeSet::from([child.clone()]));
    assert_eq!(found[0]["origin"], "ci-b");
    let by_text = b.json(&["find", "--team", "--text", "budget laptop"]);
    assert_eq!(ids(&by_text), BTreeSet::from([root.clone()]));
    assert_eq!(by_text[0]["origin"], "laptop-a");
    // The catalog folds words as the local index does: stems, case, accents.
    for words in ["Laptops BUDGET", "cafe", "café says", "win"] {
        let local = a.json(&["find", "--text", words]);
        let team = b.json(&["find", "--team", "--text", words]);
        assert_eq!(ids(&team), ids(&local), "{words}");
        assert_eq!(ids(&team), BTreeSet::from([root.clone()]), "{words}");
    }
    assert_eq!(
        ids(&b.json(&["find", "--team", "--text", "!!"])),
        BTreeSet::new()
    );
    // A pattern's literal prefix narrows the search, never the matches.
    for pattern in [
        "^deep-",
        "^deep\\-dive",
        "^deep.dive",
        "^dx?eep",
        "^review-stor(ies)?$",
        "^(build|review)-",
        "^build-stories|^review",
        "^b+uild",
        "stories$",
        "build-stories",
    ] {
        for (m, origin) in [(&a, "laptop-a"), (&b, "ci-b")] {
            let local = ids(&m.json(&["find", "--workflow", pattern]));
            let team: BTreeSet<String> = a
                .json(&["find", "--team", "--workflow", pattern])
                .as_array()
                .unwrap()
                .iter()
                .filter(|r| r["origin"] == origin)
                .map(|r| r["session_id"].as_str().unwrap().to_string())
                .collect();
            assert_eq!(team, local, "{pattern} on {origin}");
        }
    }
    assert_eq!(
        ids(&a.json(&["find", "--team", "--workflow", "^deep-"])),
        BTreeSet::from([root.clone()])
    );
    let latest = b.json(&[
        "latest-output",
        "--team",
        "--agent",
        "casey",
        "--type",
        "document",
    ]);
    assert_eq!(latest["origin"], "laptop-a");
    assert!(
        latest["text"]
            .as_str()
            .unwrap()
            .contains("budget laptop wins")
    );

    // The lineage is drawn whole from either machine.
    for t in [&a, &b] {
        let graph = t.json(&["lineage", "--team", &child, "--format", "json"]);
        let text = graph.to_string();
        for id in [&root, &child, &grandchild] {
            assert!(text.contains(id.as_str()), "{id} missing from {text}");
        }
        assert_eq!(graph["origins"][&root], "laptop-a");
        assert_eq!(graph["origins"][&grandchild], "ci-b");
    }
    let tree = a.run(&["lineage", "--team", &root]).ok().to_string();
    assert!(tree.contains(&grandchild[..8]), "{tree}");

    // MCP find_runs with scope "team", from B.
    let mut m = crate::mcp::Mcp::start(&b);
    let r = m.ok(
        "find_runs",
        serde_json::json!({"scope": "team", "agent": "casey"}),
    );
    assert_eq!(r["runs"][0]["session_id"], root.as_str());
    assert_eq!(r["runs"][0]["origin"], "laptop-a");
    drop(m);

    // The viewer over the team, on B: A's run, and its output from the
    // catalog's stored text.
    let (mut viewer, url) = crate::serve::serve(&b, &["--team", "--bind", "127.0.0.1:0"], None);
    let api = crate::serve::get(&url, "/api/runs?agent=casey", "");
    assert!(api.contains(&root) && api.contains("laptop-a"), "{api}");
    let page = crate::serve::get(&url, &format!("/runs/{root}/files/laptops.md"), "");
    assert!(page.contains("budget laptop wins"), "{page}");
    // Rendered as Markdown, as a file of this machine's run is.
    assert!(
        page.contains(r#"<article class="doc">"#) && page.contains("<h1"),
        "{page}"
    );
    let run_page = crate::serve::get(&url, &format!("/runs/{root}"), "");
    assert!(run_page.contains("laptops.md"), "{run_page}");
    let _ = viewer.kill();
    let _ = viewer.wait();

    // Measured usage crosses the wire: a Claude Code log imported on A is
    // counted in B's team report.
    a.write(
        "history/s.jsonl",
        concat!(
            r#"{"type":"user","sessionId":"5b0c1d2e-3f40-4a5b-8c6d-7e8f90a1b2c3","cwd":"/work/shop","timestamp":"2026-01-18T09:00:00.000Z","uuid":"u1","message":{"role":"user","content":"Add a cart"}}"#,
            "\n",
            r#"{"type":"assistant","sessionId":"5b0c1d2e-3f40-4a5b-8c6d-7e8f90a1b2c3","cwd":"/work/shop","timestamp":"2026-01-18T09:00:05.000Z","uuid":"u2","requestId":"req_1","message":{"id":"msg_1","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Adding it."}],"usage":{"input_tokens":900,"output_tokens":3,"cache_read_input_tokens":5000}}}"#,
            "\n"
        ),
    );
    a.run(&[
        "transcript",
        "import",
        "history/s.jsonl",
        "--format",
        "claude-code",
    ])
    .ok();
    a.run(&["team", "push"]).ok();
    let usage = b.json(&["transcript", "usage", "--all", "--team"]);
    assert_eq!(usage["total"]["total_tokens"], 5903, "{usage}");
    assert_eq!(usage["transcripts"][0]["origin"], "laptop-a");
    let listed = b.json(&["transcript", "list", "--team"]);
    assert_eq!(listed[0]["origin"], "laptop-a");

    // A push killed mid-batch, then repeated: no duplicate, no loss.
    for i in 0..40 {
        start_run(&a, "bulk", &format!("wf-{i}"), None);
    }
    // Rebuilding the index re-queues every record: a bigger push to cut.
    a.run(&["index", "rebuild"]).ok();
    assert!(backlog(&a) >= 41);
    // Killed with its batch on the server, before it noted it sent: the
    // next push sends it all again.
    stopped_push(&a, 1).kill();
    assert!(backlog(&a) >= 41);
    a.run(&["team", "push"]).ok();
    assert_eq!(backlog(&a), 0);
    let (server, n) = server_runs(&pg, "team", "laptop-a");
    assert_eq!(n, server.len(), "duplicate rows");
    assert_eq!(server, local_runs(&a));
    assert_eq!(server.len(), 41);
    let dupes = pg.sql(
        "team",
        "SELECT count(*) FROM (SELECT origin, run_id, seq FROM outputs GROUP BY 1, 2, 3 HAVING count(*) > 1) d",
    );
    assert_eq!(dupes, vec!["0"]);

    // Status names the server, both origins and no error.
    let status = a.json(&["team", "status"]);
    assert_eq!(status["reachable"], true);
    assert_eq!(status["origin"], "laptop-a");
    let origins: Vec<&str> = status["catalog"]["origins"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["origin"].as_str().unwrap())
        .collect();
    assert_eq!(origins, vec!["ci-b", "laptop-a"]);
}

#[test]
fn a_stopped_server_never_fails_local_writes_and_the_backlog_converges() {
    let pg = Pg::start();
    let url = pg.database("team");
    let a = machine(&url, "laptop-a");
    a.run(&["team", "init"]).ok();
    let first = start_run(&a, "casey", "deep-dive-app", None);
    a.run(&["team", "push"]).ok();

    pg.down();
    let mut made = vec![first];
    for i in 0..5 {
        made.push(start_run(&a, "casey", &format!("offline-{i}"), None));
    }
    a.run(&["run", "finish", &made[1]]).ok();
    // Local writes succeed (asserted by `json`), and the backlog grows.
    assert_eq!(backlog(&a), 5);
    let status = a.json(&["team", "status"]);
    assert_eq!(status["reachable"], false);
    assert!(status["last_error"].is_string(), "{status}");
    let err = a.run(&["team", "push"]);
    assert!(err.err().contains("team catalog"), "{}", err.err());
    assert!(a.json(&["find"]).as_array().unwrap().len() == 6);

    pg.up();
    a.run(&["team", "push"]).ok();
    assert_eq!(backlog(&a), 0);
    let (server, n) = server_runs(&pg, "team", "laptop-a");
    assert_eq!(n, 6);
    assert_eq!(server, local_runs(&a));
    assert_eq!(a.json(&["team", "status"])["last_error"], Value::Null);

    // A deleted run folder becomes a tombstone, not a stale row.
    std::fs::remove_dir_all(a.path("docs/agent-outputs").join(&made[2])).unwrap();
    a.run(&["index", "sync"]).ok();
    a.run(&["team", "push"]).ok();
    let (server, _) = server_runs(&pg, "team", "laptop-a");
    assert_eq!(server, local_runs(&a));
    assert_eq!(server.len(), 5);
}

#[test]
fn eight_writers_while_pushing_leave_the_server_equal_to_the_index() {
    let pg = Pg::start();
    let url = pg.database("team");
    let a = machine(&url, "laptop-a");
    a.run(&["team", "init"]).ok();
    let runs: Vec<String> = (0..8)
        .map(|i| start_run(&a, "writer", &format!("wf-{i}"), None))
        .collect();
    let writers: Vec<_> = runs
        .iter()
        .map(|id| {
            let root = a.root().to_path_buf();
            let id = id.clone();
            std::thread::spawn(move || {
                for j in 0..6 {
                    let name = format!("out-{j}.md");
                    let folder = root.join("docs/agent-outputs").join(&id);
                    std::fs::write(folder.join(&name), format!("text {j}\n")).unwrap();
                    let out = Command::new(crate::harness::bin())
                        .args(["--root"])
                        .arg(&root)
                        .args([
                            "run",
                            "output",
                            &id,
                            &name,
                            "--type",
                            "document",
                            "--description",
                            "d",
                        ])
                        .env_remove("LOGBOOK_TEAM_URL")
                        .env("NO_COLOR", "1")
                        .output()
                        .unwrap();
                    assert!(
                        out.status.success(),
                        "{}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                }
            })
        })
        .collect();
    let pusher = {
        let root = a.root().to_path_buf();
        std::thread::spawn(move || {
            for _ in 0..6 {
                let _ = Command::new(crate::harness::bin())
                    .args(["--root"])
                    .arg(&root)
                    .args(["team", "push"])
                    .output();
            }
        })
    };
    for w in writers {
        w.join().unwrap();
    }
    pusher.join().unwrap();
    a.run(&["team", "push"]).ok();
    let (server, n) = server_runs(&pg, "team", "laptop-a");
    assert_eq!(n, 8);
    assert_eq!(server, local_runs(&a));
    let outputs = pg.sql(
        "team",
        "SELECT count(*) FROM outputs WHERE origin = 'laptop-a'",
    );
    assert_eq!(outputs, vec!["48"]);
}

#[test]
fn a_bulk_push_settles_the_catalog_and_a_small_one_leaves_it_alone() {
    let pg = Pg::start();
    let url = pg.database("team");
    let a = machine(&url, "bulk");
    a.run(&["team", "init"]).ok();
    // `team init` sets the storage the push is fastest with (Debian's
    // server has LZ4).
    let compression = pg.sql(
        "team",
        "SELECT attname || ' ' || attcompression::text FROM pg_attribute \
         WHERE attrelid IN ('runs'::regclass, 'outputs'::regclass) \
           AND attname IN ('manifest', 'text') ORDER BY attname",
    );
    assert_eq!(compression, ["manifest l", "text l"]);
    // And the index a page's count reads.
    let tally = pg.sql(
        "team",
        "SELECT indexdef FROM pg_indexes WHERE indexname = 'runs_tally'",
    );
    assert_eq!(tally.len(), 1, "{tally:?}");
    assert!(tally[0].contains("(agent, status, workflow)"), "{tally:?}");
    // Runs written by another tool, as a first push of a whole project.
    let dir = a.path("docs/agent-outputs");
    for i in 0..1_200 {
        let id = uuid::Uuid::new_v4().to_string();
        std::fs::create_dir_all(dir.join(&id)).unwrap();
        let manifest = serde_json::json!({
            "version": "1.0.0",
            "session_id": id,
            "agent": {"name": "bulk"},
            "workflow": {"name": "import"},
            "execution": {"started_at": format!("2025-10-05T10:{:02}:{:02}.000Z", i / 60 % 60, i % 60),
                "status": "completed"},
            "outputs": [],
        });
        std::fs::write(dir.join(&id).join("manifest.json"), manifest.to_string()).unwrap();
    }
    a.run(&["index", "sync"]).ok();
    assert_eq!(a.json(&["team", "push"])["written"], 1_200);
    let vacuums = || {
        pg.sql(
            "team",
            "SELECT relname || ' ' || vacuum_count || ' ' || analyze_count FROM pg_stat_user_tables \
             WHERE relname IN ('runs', 'outputs', 'edges') ORDER BY relname",
        )
    };
    assert_eq!(vacuums(), ["edges 1 1", "outputs 1 1", "runs 1 1"]);
    // The planner knows the table now: its row count, and its pages all
    // visible (what an index-only scan needs).
    let known = pg.sql(
        "team",
        "SELECT reltuples::int8 || ' ' || (relallvisible > 0) FROM pg_class WHERE relname = 'runs'",
    );
    assert_eq!(known, ["1200 true"]);
    // A push of a few records does not scan the server's tables again.
    start_run(&a, "casey", "deep-dive", None);
    a.run(&["team", "push"]).ok();
    assert_eq!(vacuums(), ["edges 1 1", "outputs 1 1", "runs 1 1"]);
    assert_eq!(
        a.json(&["find", "--team", "--agent", "bulk", "--limit", "2000"])
            .as_array()
            .unwrap()
            .len(),
        1_200
    );
}

/// A bulk push writes over two connections at once, one per share of the
/// runs (lanes). Two of them racing, one killed halfway, then a third:
/// every run once, with its outputs once.
#[test]
fn bulk_pushes_racing_and_killed_leave_every_run_once() {
    let pg = Pg::start();
    let url = pg.database("team");
    let a = machine(&url, "lanes");
    a.run(&["team", "init"]).ok();
    let dir = a.path("docs/agent-outputs");
    for i in 0..2_400 {
        let id = uuid::Uuid::new_v4().to_string();
        std::fs::create_dir_all(dir.join(&id)).unwrap();
        std::fs::write(dir.join(&id).join("out.md"), format!("result {i}\n")).unwrap();
        let manifest = serde_json::json!({
            "version": "1.0.0",
            "session_id": id,
            "agent": {"name": "bulk"},
            "workflow": {"name": format!("flow-{}", i % 7)},
            "execution": {"started_at": format!("2025-10-05T10:{:02}:{:02}.000Z", i / 60 % 60, i % 60),
                "status": "completed"},
            "outputs": [{"file": "out.md", "type": "document", "description": "Result",
                "created_at": "2025-10-05T11:00:00.000Z"}],
        });
        std::fs::write(dir.join(&id).join("manifest.json"), manifest.to_string()).unwrap();
    }
    a.run(&["index", "sync"]).ok();
    // Both have written their first batch (the same runs, over the same
    // lanes); one goes on while the other is killed before noting it sent.
    let first = stopped_push(&a, 1);
    let killed = stopped_push(&a, 1);
    killed.kill();
    first.finish();
    a.run(&["team", "push"]).ok();
    assert_eq!(backlog(&a), 0);
    let (server, n) = server_runs(&pg, "team", "lanes");
    assert_eq!(n, server.len(), "duplicate rows");
    assert_eq!(server, local_runs(&a));
    assert_eq!(server.len(), 2_400);
    let outputs = pg.sql(
        "team",
        "SELECT count(*) || ' ' || count(DISTINCT run_id) FROM outputs WHERE origin = 'lanes'",
    );
    assert_eq!(outputs, ["2400 2400"]);
}

#[test]
fn a_project_pointed_at_another_catalog_sends_it_everything() {
    let pg = Pg::start();
    let first = pg.database("first");
    let a = machine(&first, "laptop");
    a.run(&["team", "init"]).ok();
    let old = start_run(&a, "casey", "deep-dive", None);
    a.run(&["team", "push"]).ok();
    assert_eq!(backlog(&a), 0);
    // The same machine moves to a new server (here a new database): what
    // the old one holds must reach it too, not only what is written next.
    let second = pg.database("second");
    a.write(
        "logbook.yaml",
        &format!("team_url: '{second}'\norigin: laptop\n"),
    );
    a.run(&["team", "init"]).ok();
    let new = start_run(&a, "casey", "review", None);
    a.run(&["team", "push"]).ok();
    assert_eq!(
        server_runs(&pg, "second", "laptop").0.len(),
        2,
        "{old} and {new} on the new server"
    );
    // Options that change how, not where, queue nothing again.
    a.write(
        "logbook.yaml",
        &format!("team_url: '{second}&connect_timeout=5'\norigin: laptop\n"),
    );
    assert_eq!(backlog(&a), 0);
}

#[test]
fn deletions_made_while_the_index_was_gone_reach_the_catalog() {
    let pg = Pg::start();
    let url = pg.database("team");
    let a = machine(&url, "laptop");
    let b = machine(&url, "ci");
    a.run(&["team", "init"]).ok();
    let runs: Vec<String> = (0..3)
        .map(|i| start_run(&a, "casey", &format!("flow-{i}"), None))
        .collect();
    let other = start_run(&b, "pixel", "build", None);
    a.run(&["team", "push"]).ok();
    b.run(&["team", "push"]).ok();
    assert_eq!(server_runs(&pg, "team", "laptop").0.len(), 3);
    // The index is lost, and a run folder goes while it is: no write ever
    // saw that run go, so no change says so.
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(a.path(&format!(".logbook/index.db{suffix}")));
    }
    std::fs::remove_dir_all(a.path("docs/agent-outputs").join(&runs[0])).unwrap();
    let pushed = a.json(&["team", "push"]);
    assert_eq!(pushed["deleted"], 1, "{pushed}");
    let live = pg.sql(
        "team",
        "SELECT origin || ' ' || id FROM runs WHERE NOT deleted ORDER BY origin, id",
    );
    let mut expected = vec![
        format!("ci {other}"),
        format!("laptop {}", runs[1]),
        format!("laptop {}", runs[2]),
    ];
    expected.sort();
    assert_eq!(live, expected);
    assert!(ids(&a.json(&["find", "--team", "--agent", "casey"])).len() == 2);
    // Reconciled once: the next push marks nothing.
    assert_eq!(a.json(&["team", "push"])["deleted"], 0);
}

#[test]
fn a_push_from_a_catalog_sends_each_run_its_whole_manifest_not_the_stub() {
    let pg = Pg::start();
    let url = pg.database("team");
    let mut a = machine(&url, "laptop");
    a.run(&["team", "init"]).ok();
    let run = start_run(&a, "casey", "flow", None);
    // The index is lost before the run was pushed; the next command builds
    // a catalog (its text left to a builder that never starts), whose
    // `runs.manifest` is a stub.
    a.envs.push(("LOGBOOK_TWO_PHASE_FROM".into(), "0".into()));
    a.envs.push(("LOGBOOK_NO_TEXT_BUILDER".into(), "1".into()));
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(a.path(&format!(".logbook/index.db{suffix}")));
    }
    a.run(&["find"]).ok();
    let stub: String = rusqlite::Connection::open(a.path(".logbook/index.db"))
        .unwrap()
        .query_row("SELECT manifest FROM runs", [], |r| r.get(0))
        .unwrap();
    assert!(stub.starts_with("{\"logbook:catalog\""), "{stub}");
    a.run(&["team", "push"]).ok();
    let pushed = pg.sql(
        "team",
        "SELECT manifest->>'session_id' || ' ' || (manifest->'agent'->>'name') FROM runs",
    );
    assert_eq!(pushed, vec![format!("{run} casey")]);
}

#[test]
fn without_team_url_nothing_is_queued() {
    let t = TestProject::new();
    t.json(&["run", "start", "--agent", "a", "--workflow", "w"]);
    let db = t.path(".logbook/index.db");
    let conn = rusqlite::Connection::open(db).unwrap();
    let n: i64 = conn
        .query_row("SELECT count(*) FROM team_outbox", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 0);
    let triggers: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'trigger'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(triggers, 0);
    let status = t.json(&["team", "status"]);
    assert_eq!(status["server"], Value::Null);
    let err = t.run(&["find", "--team"]);
    assert!(err.err().contains("LOGBOOK_TEAM_URL"), "{}", err.err());
}

#[test]
fn a_catalog_on_another_schema_version_is_named_and_nothing_is_written_to_it() {
    let pg = Pg::start();
    let url = pg.database("team");
    let a = machine(&url, "laptop");
    a.run(&["team", "init"]).ok();
    let first = start_run(&a, "casey", "deep-dive", None);
    a.run(&["team", "push"]).ok();
    let latest = pg.sql("team", "SELECT max(version) FROM logbook_schema");

    // Behind: every team command says to migrate, and no push writes.
    pg.sql(
        "team",
        &format!("DELETE FROM logbook_schema WHERE version = {}", latest[0]),
    );
    let second = start_run(&a, "casey", "review", None);
    for args in [
        &["find", "--team"][..],
        &["latest-output", "--team", "--agent", "casey"],
        &["team", "push"],
    ] {
        let err = a.run(args);
        assert!(
            err.err().contains("older than this logbook's")
                && err.err().contains("logbook team init"),
            "{args:?}: {}",
            err.err()
        );
    }
    let status = a.json(&["team", "status"]);
    assert_eq!(status["reachable"], false, "{status}");
    assert!(
        status["error"].as_str().unwrap().contains("older than"),
        "{status}"
    );
    assert_eq!(backlog(&a), 1);
    assert_eq!(
        server_runs(&pg, "team", "laptop").0.len(),
        1,
        "{first} only"
    );

    // Ahead (a newer logbook migrated it): this one says to upgrade itself.
    pg.sql(
        "team",
        &format!(
            "INSERT INTO logbook_schema(version) VALUES ({}), ({} + 1)",
            latest[0], latest[0]
        ),
    );
    let err = a.run(&["find", "--team"]);
    assert!(err.err().contains("upgrade logbook"), "{}", err.err());
    let err = a.run(&["team", "push"]);
    assert!(err.err().contains("upgrade logbook"), "{}", err.err());
    assert_eq!(server_runs(&pg, "team", "laptop").0.len(), 1);

    // Back on this version, the waiting run arrives.
    pg.sql(
        "team",
        &format!("DELETE FROM logbook_schema WHERE version > {}", latest[0]),
    );
    a.run(&["team", "push"]).ok();
    assert_eq!(
        ids(&a.json(&["find", "--team", "--agent", "casey"])),
        [first, second].into_iter().collect()
    );
}
