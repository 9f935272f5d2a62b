//! Index upgrades: an index made by each older Logbook (the fixtures in
//! crates/logbook/tests/fixtures/upgrade, see make.sh there) is migrated in
//! place, not rebuilt, and then answers exactly as a fresh rebuild of the
//! same files does; a migration killed mid-way is taken up again; an index
//! newer than this binary is rebuilt with a notice.
//!
//! The fixture project lives at one fixed path (its index holds absolute
//! paths, and an index found under another root is rebuilt by design), so
//! these tests take turns at it: a lock within this process and a lock file
//! between processes.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use serde_json::Value;

use crate::harness::{Held, Run, command_in};

/// Where make.sh built the fixtures' indexes.
const ROOT: &str = "/tmp/logbook-upgrade-fixture/project";

/// The mtime make.sh gave every file and folder of the project.
const MTIME: u64 = 1_764_000_000;

/// The fixtures: index-v<N>.db for each old schema (13a: schema 13 before
/// the transcripts' models and usage columns).
const VERSIONS: &[(&str, i64)] = &[
    ("9", 9),
    ("10", 10),
    ("11", 11),
    ("12", 12),
    ("13a", 13),
    ("13", 13),
    ("14", 14),
    ("15", 15),
];

/// The steps of the migration, by the version they bring the index to
/// (as `index status --json`'s `schema_history` names them).
const STEPS_TO: &[(i64, &str)] = &[
    (10, "run-folders-without-manifest"),
    (11, "repository-columns"),
    (11, "live-runs"),
    (12, "transcript-titles"),
    (13, "transcript-messages"),
    (13, "transcript-usage"),
    (14, "schema-history"),
    (14, "transcript-usage-of-early-13"),
    (15, "catalog-stubs"),
    (16, "text-keys"),
];

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../logbook/tests/fixtures/upgrade")
}

static TURN: Mutex<()> = Mutex::new(());

/// The fixture project at [`ROOT`], with the index of one old version,
/// held by this test until dropped.
struct Fixture {
    _turn: MutexGuard<'static, ()>,
    _lock: File,
}

impl Fixture {
    /// Puts the project and `index-v{version}.db` at [`ROOT`].
    fn place(version: &str) -> Fixture {
        let turn = TURN.lock().unwrap_or_else(|p| p.into_inner());
        let parent = Path::new(ROOT).parent().unwrap();
        std::fs::create_dir_all(parent).unwrap();
        let lock = File::create(parent.with_extension("lock")).unwrap();
        lock.lock().unwrap();
        let _ = std::fs::remove_dir_all(ROOT);
        copy_tree(&fixtures().join("project"), Path::new(ROOT));
        settle(Path::new(ROOT));
        let index = Path::new(ROOT).join(".logbook");
        std::fs::create_dir_all(&index).unwrap();
        std::fs::copy(
            fixtures().join(format!("index-v{version}.db")),
            index.join("index.db"),
        )
        .unwrap();
        restamp_outputs(&index.join("index.db"));
        Fixture {
            _turn: turn,
            _lock: lock,
        }
    }
}

/// Gives each run's outputs in the old index the stamp of the copies just
/// made. An output's stamp takes its inode and ctime, which no copy keeps
/// (a user's upgrade does not copy the files, so it has no such step);
/// the stamp function and the `outs` encoding are the same in every
/// fixture's Logbook as today (checked when the fixtures were made: each
/// old binary's rebuild stored today's stamps), so this is the index that
/// old binary would have built over these very files.
fn restamp_outputs(db: &Path) {
    let conn = rusqlite::Connection::open(db).unwrap();
    let rows: Vec<(String, Vec<u8>)> = conn
        .prepare("SELECT path, outs FROM files WHERE out_stamp <> 0 AND outs IS NOT NULL")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    for (path, outs) in rows {
        let folder = Path::new(&path).parent().unwrap();
        let names = logbook::testing::store::run_outputs::decode_outs(&outs).expect("outs");
        let stamp = logbook::testing::store::run_outputs::outputs_stamp(folder, names);
        conn.execute(
            "UPDATE files SET out_stamp = ?1 WHERE path = ?2",
            rusqlite::params![stamp, path],
        )
        .unwrap();
    }
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Gives every file and folder under `dir` (and `dir`) make.sh's mtime,
/// children first, so the stamps in the fixture's index match.
fn settle(dir: &Path) {
    let when = SystemTime::UNIX_EPOCH + Duration::from_secs(MTIME);
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            settle(&path);
        } else {
            File::options()
                .write(true)
                .open(&path)
                .unwrap()
                .set_modified(when)
                .unwrap();
        }
    }
    File::open(dir).unwrap().set_modified(when).unwrap();
}

fn lb(args: &[&str]) -> Run {
    command_in(Path::new(ROOT), args)
        .output()
        .expect("run logbook")
        .into()
}

fn json(args: &[&str]) -> Value {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    lb(&all).json()
}

fn index_db() -> PathBuf {
    Path::new(ROOT).join(".logbook/index.db")
}

/// The `(version, step)` rows of the index's schema history.
fn history() -> Vec<(i64, String)> {
    json(&["index", "status"])["schema_history"]
        .as_array()
        .expect("schema_history")
        .iter()
        .map(|h| {
            (
                h["version"].as_i64().unwrap(),
                h["step"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The marker make.sh put into each fixture's index: no rebuild makes it.
fn marker() -> Option<String> {
    let conn = rusqlite::Connection::open(index_db()).unwrap();
    conn.query_row("SELECT value FROM meta WHERE key = 'fixture'", [], |r| {
        r.get(0)
    })
    .ok()
}

/// The tables of the index named like `pattern` (SQL LIKE).
fn tables_like(pattern: &str) -> Vec<String> {
    let conn = rusqlite::Connection::open(index_db()).unwrap();
    let mut stmt = conn
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name LIKE ?1")
        .unwrap();
    stmt.query_map([pattern], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

fn user_version() -> i64 {
    let conn = rusqlite::Connection::open(index_db()).unwrap();
    conn.pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap()
}

/// The ids of the fixture's runs and transcripts, from a listing.
fn ids(listing: &Value, key: &str) -> Vec<String> {
    listing
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v[key].as_str().unwrap().to_string())
        .collect()
}

/// Every answer the fixture project gives, each with its command. Reads
/// only, so asking twice of the same files gives the same answers.
fn answers() -> Vec<(String, String)> {
    let mut out = vec![];
    let mut ask = |args: &[&str]| {
        let r = lb(args);
        out.push((
            args.join(" "),
            format!("exit {}\n{}\n{}", r.code, r.stdout, r.stderr),
        ));
        r
    };
    let all = ask(&["--json", "find", "--limit", "100"]).json();
    ask(&["find", "--limit", "100"]);
    for filter in [
        &["--agent", "casey"][..],
        &["--workflow", "research"],
        &["--status", "running"],
        &["--status", "failed"],
        &["--status", "unknown"],
        &["--user", "alice"],
        &["--tag", "alpha"],
        &["--since", "2020-01-01T00:00:00Z"],
        &["--text", "laptop"],
        &["--text", "three changes"],
        &["--agent", "robin", "--text", "review"],
    ] {
        let mut args = vec!["--json", "find"];
        args.extend_from_slice(filter);
        ask(&args);
    }
    let runs = ids(&all, "session_id");
    assert!(runs.len() >= 6, "the fixture's runs: {runs:?}");
    for id in &runs {
        ask(&["--json", "run", "show", id]);
        ask(&["--json", "lineage", id, "--format", "json"]);
    }
    for agent in ["casey", "robin", "dana"] {
        ask(&["latest-output", "--agent", agent]);
    }
    let transcripts = ask(&["--json", "transcript", "list", "--all"]).json();
    ask(&["transcript", "list", "--all"]);
    let tids = ids(&transcripts, "id");
    assert!(tids.len() >= 3, "the fixture's transcripts: {tids:?}");
    for id in &tids {
        ask(&["--json", "transcript", "show", id]);
        ask(&["--json", "transcript", "find", id, "the"]);
        ask(&["--json", "transcript", "find", id, "--errors"]);
    }
    ask(&["--json", "list"]);
    ask(&["--json", "workflow", "show", "--full"]);
    // Everything the index holds about the files, and what a sync
    // compares (the stamps, and which runs a listing checks first), as the
    // reads above left them: before `doctor`, which syncs.
    let held = rows_held();
    ask(&["--json", "doctor"]);
    let status = ask(&["--json", "index", "status"]).json();
    let counts: Vec<String> = [
        "schema_version",
        "runs",
        "outputs",
        "edges",
        "work_sessions",
        "transcripts",
        "workflow_states",
        "corrupt",
        "pending",
        "stale",
    ]
    .iter()
    .map(|k| format!("{k}: {}", status[k]))
    .collect();
    out.retain(|(cmd, _)| cmd != "--json index status");
    out.push(("the index's rows".into(), held));
    out.push(("query plans".into(), plans()));
    out.push(("index status counts".into(), counts.join("\n")));
    out
}

/// How SQLite plans the statements of a listing's hot path: a migration
/// that left the planner without what a rebuild gives it (an index, its
/// statistics) would answer the same, only slower, which the answers
/// alone do not show.
fn plans() -> String {
    let conn = rusqlite::Connection::open(index_db()).unwrap();
    let statements = [
        "SELECT path, size, mtime_ns FROM files WHERE live > 0 AND live >= 1",
        "SELECT path, size, mtime_ns, out_stamp, outs, live FROM files \
         WHERE path > '/' AND path < '0' AND kind = 'run' ORDER BY path LIMIT 10",
        "SELECT id FROM runs ORDER BY started_ns DESC, id LIMIT 20",
        "SELECT id FROM runs WHERE agent = 'x' ORDER BY started_ns DESC, id LIMIT 20",
        "SELECT id FROM runs WHERE status = 'running' ORDER BY started_ns DESC, id LIMIT 20",
        "SELECT id FROM runs WHERE folder = '/x'",
    ];
    let mut out = vec![];
    for sql in statements {
        let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
        let steps: Vec<String> = stmt
            .query_map([], |r| r.get::<_, String>(3))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        out.push(format!("{sql}: {}", steps.join("; ")));
    }
    out.join("\n")
}

/// The index's rows (`Index::fingerprint`) and its `files` table, one
/// line each, sorted.
fn rows_held() -> String {
    let p = logbook::Logbook::discover(Path::new(ROOT), None).unwrap();
    let mut rows = logbook::testing::index::Index::open(&p)
        .unwrap()
        .upkeep()
        .fingerprint()
        .unwrap();
    let conn = rusqlite::Connection::open(index_db()).unwrap();
    let files: Vec<String> = conn
        .prepare("SELECT path, kind, size, mtime_ns, out_stamp, hex(outs), live FROM files")
        .unwrap()
        .query_map([], |r| {
            Ok(format!(
                "file {} {} {} {} {} {} {}",
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, i64>(3)?,
                r.get::<_, i64>(4)?,
                r.get::<_, String>(5)?,
                r.get::<_, i64>(6)?
            ))
        })
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    rows.extend(files);
    rows.sort();
    rows.join("\n")
}

/// The answers of a fresh rebuild of the same files.
fn rebuilt_answers() -> Vec<(String, String)> {
    lb(&["index", "rebuild"]).ok();
    answers()
}

fn assert_same(migrated: &[(String, String)], rebuilt: &[(String, String)], what: &str) {
    assert_eq!(migrated.len(), rebuilt.len());
    for ((cmd, m), (_, r)) in migrated.iter().zip(rebuilt) {
        assert_eq!(
            m, r,
            "{what}: `logbook {cmd}` answers otherwise after the upgrade"
        );
    }
}

/// Asserts that the schema history shows a migration from `from`, each
/// step once: `found` at `from` (or `built`, by a binary of 14 or later,
/// which kept a history), then the steps of [`STEPS_TO`] past it in their
/// order (other steps of the same versions may come between: the other
/// parts of a schema add theirs), every row past `from`, no `built`.
#[track_caller]
fn assert_migrated_from(from: i64, what: &str) {
    let h = history();
    let start = if from >= 14 { "built" } else { "found" };
    assert_eq!(h.first(), Some(&(from, start.to_string())), "{what}: {h:?}");
    let rest = &h[1..];
    assert!(
        rest.iter()
            .all(|(v, s)| *v > from && s != "built" && s != "found"),
        "{what}: {h:?}"
    );
    let mine: Vec<(i64, String)> = rest
        .iter()
        .filter(|(_, s)| STEPS_TO.iter().any(|(_, n)| n == s))
        .cloned()
        .collect();
    let expected: Vec<(i64, String)> = STEPS_TO
        .iter()
        .filter(|(to, _)| *to > from)
        .map(|(to, s)| (*to, s.to_string()))
        .collect();
    assert_eq!(mine, expected, "{what}: {h:?}");
    assert!(rest.windows(2).all(|w| w[0].0 <= w[1].0), "{what}: {h:?}");
}

#[test]
fn every_old_index_is_migrated_in_place_and_answers_as_a_rebuild() {
    for (name, version) in VERSIONS {
        let _f = Fixture::place(name);
        assert_eq!(user_version(), *version, "fixture index-v{name}.db");
        // The first answer migrates.
        let first = lb(&["--json", "find", "--limit", "100"]);
        first.ok();
        assert!(
            !first.stderr.contains("rebuilding"),
            "v{name}: {}",
            first.stderr
        );
        assert_eq!(user_version(), logbook::testing::index::SCHEMA_VERSION);
        assert_migrated_from(*version, &format!("v{name}"));
        // A small project's text is keyed anew before the first answer,
        // the old text table gone with it.
        assert_eq!(tables_like("runs_fts_retired%"), Vec::<String>::new());
        assert_eq!(
            marker().as_deref(),
            Some(format!("index-v{name}").as_str()),
            "v{name}: the old index's own row is gone: it was rebuilt"
        );
        let migrated = answers();
        assert_eq!(
            marker().as_deref(),
            Some(format!("index-v{name}").as_str()),
            "v{name}: a later command rebuilt the migrated index"
        );
        let rebuilt = rebuilt_answers();
        assert_eq!(
            history(),
            vec![(logbook::testing::index::SCHEMA_VERSION, "built".to_string())]
        );
        assert_same(&migrated, &rebuilt, &format!("v{name}"));
    }
}

#[test]
fn a_migration_killed_mid_step_is_taken_up_by_the_next_command() {
    let _f = Fixture::place("9");
    // Pass 3 is version 11's second step, after its first ran in the same
    // transaction: a kill there must leave version 10, committed, and
    // nothing of 11.
    Held::start(
        command_in(Path::new(ROOT), &["--json", "find"]),
        "migrate-step",
        3,
    )
    .kill();
    assert_eq!(user_version(), 10, "version 10 committed, 11 rolled back");
    lb(&["--json", "find"]).ok();
    assert_eq!(user_version(), logbook::testing::index::SCHEMA_VERSION);
    assert_migrated_from(9, "killed at step 3: each step recorded once");
    assert_eq!(marker().as_deref(), Some("index-v9"));
    let migrated = answers();
    assert_same(&migrated, &rebuilt_answers(), "killed at step 3");
}

#[test]
fn an_index_newer_than_this_binary_is_rebuilt_with_a_notice_and_one_too_old_silently() {
    for (set, says) in [(99, Some("newer Logbook")), (8, None)] {
        let _f = Fixture::place("13");
        let conn = rusqlite::Connection::open(index_db()).unwrap();
        conn.pragma_update(None, "user_version", set).unwrap();
        drop(conn);
        let first = lb(&["find"]);
        first.ok();
        match says {
            Some(says) => {
                assert!(first.stderr.contains(says), "{set}: {}", first.stderr);
                assert!(first.stderr.contains("rebuilding"), "{}", first.stderr);
            }
            None => assert!(!first.stderr.contains("rebuilding"), "{}", first.stderr),
        }
        assert_eq!(user_version(), logbook::testing::index::SCHEMA_VERSION);
        assert_eq!(
            history(),
            vec![(logbook::testing::index::SCHEMA_VERSION, "built".to_string())]
        );
        assert_eq!(marker(), None, "{set}: the old index was kept");
    }
}

#[test]
fn index_status_shows_the_schema_history() {
    let _f = Fixture::place("12");
    let text = lb(&["index", "status"]);
    let out = text.ok();
    assert!(out.contains("Schema history:"), "{out}");
    assert!(out.contains("transcript-messages"), "{out}");
    assert!(out.contains(" 12  found"), "{out}");
}

#[test]
fn an_old_index_of_a_project_moved_elsewhere_is_rebuilt_not_migrated() {
    // 11 kept no project root (its paths are checked), 12 did.
    for name in ["11", "12"] {
        let moved = tempfile::Builder::new()
            .prefix("logbook-it-moved-")
            .tempdir()
            .unwrap();
        {
            let _f = Fixture::place(name);
            copy_tree(Path::new(ROOT), moved.path());
        }
        let r: Run = command_in(moved.path(), &["--json", "index", "status"])
            .output()
            .unwrap()
            .into();
        let h = r.json()["schema_history"].clone();
        assert_eq!(h.as_array().map(Vec::len), Some(1), "v{name}: {h}");
        assert_eq!(h[0]["step"], "built", "v{name}: {h}");
        let runs: Run = command_in(moved.path(), &["--json", "find"])
            .output()
            .unwrap()
            .into();
        let folder = runs.json()[0]["folder"].as_str().unwrap().to_string();
        assert!(
            folder.starts_with(&moved.path().to_string_lossy().to_string()),
            "v{name}: {folder}"
        );
    }
}

#[test]
fn an_upgrade_that_keys_the_text_anew_answers_at_once_and_flags_text_partial_until_it_is_written() {
    let _f = Fixture::place("15");
    // As in a project too large to write its text before the first
    // answer, with no builder started by itself: the test runs it.
    let lb_large = |args: &[&str]| -> Run {
        command_in(Path::new(ROOT), args)
            .env("LOGBOOK_TWO_PHASE_FROM", "0")
            .env("LOGBOOK_NO_TEXT_BUILDER", "1")
            .output()
            .expect("run logbook")
            .into()
    };
    let first = lb_large(&["--json", "find", "--text", "laptop"]);
    assert_eq!(first.json(), serde_json::json!([]), "{}", first.stderr);
    assert!(
        first
            .stderr
            .contains("full-text index is still being built"),
        "{}",
        first.stderr
    );
    assert_eq!(user_version(), logbook::testing::index::SCHEMA_VERSION);
    assert_migrated_from(15, "v15, its text keyed anew");
    // The old text is set aside for the builder to free, not dropped by
    // the first command (a drop reads every page of it).
    assert!(
        tables_like("runs_fts_retired%").contains(&"runs_fts_retired".to_string()),
        "{:?}",
        tables_like("runs_fts%")
    );
    // Every answer without text is whole meanwhile.
    let listed = lb_large(&["--json", "find", "--limit", "100"]);
    lb_large(&["index", "build-text"]).ok();
    assert_eq!(
        json(&["index", "status"])["text"]["phase"],
        "complete",
        "the builder wrote every run's text"
    );
    assert_eq!(tables_like("runs_fts_retired%"), Vec::<String>::new());
    let migrated = answers();
    assert_eq!(marker().as_deref(), Some("index-v15"), "it was rebuilt");
    let rebuilt = rebuilt_answers();
    assert_same(&migrated, &rebuilt, "v15 keyed anew");
    let listed = format!("exit {}\n{}\n{}", listed.code, listed.stdout, listed.stderr);
    assert_eq!(
        (rebuilt[0].0.as_str(), &listed),
        ("--json find --limit 100", &rebuilt[0].1)
    );
}

#[test]
fn an_upgrade_whose_background_work_is_killed_answers_as_a_rebuild_once_it_is_done() {
    // Each old index upgraded as a large project's is: the first command
    // leaves what needs every row (the live runs' marks from before 11,
    // the text keyed anew) to the builder, which is killed (SIGKILL)
    // between two of its batches, then started again by the next command.
    for (name, version) in VERSIONS {
        let _f = Fixture::place(name);
        let large = |args: &[&str]| -> std::process::Command {
            let mut c = command_in(Path::new(ROOT), args);
            c.env("LOGBOOK_TWO_PHASE_FROM", "0")
                .env("LOGBOOK_NO_TEXT_BUILDER", "1")
                .env("LOGBOOK_TEXT_BATCH", "1");
            c
        };
        let run = |args: &[&str]| -> Run { large(args).output().unwrap().into() };
        run(&["--json", "find", "--limit", "100"]).ok();
        let phase = || run(&["--json", "index", "status"]).json()["text"]["phase"].clone();
        assert_eq!(user_version(), logbook::testing::index::SCHEMA_VERSION);
        assert_eq!(
            phase(),
            "building",
            "v{name}: the text is left to the builder"
        );
        Held::start(large(&["index", "build-text"]), "text-batch", 2).kill();
        assert_eq!(phase(), "building", "v{name}: killed before its end");
        lb(&["index", "build-text"]).ok();
        assert_eq!(json(&["index", "status"])["text"]["phase"], "complete");
        assert_eq!(tables_like("runs_fts_retired%"), Vec::<String>::new());
        // (Only now: `lb` registers the builder, which would start.)
        assert_migrated_from(*version, &format!("v{name}"));
        let migrated = answers();
        assert_eq!(
            marker().as_deref(),
            Some(format!("index-v{name}").as_str()),
            "v{name}: it was rebuilt"
        );
        assert_same(&migrated, &rebuilt_answers(), &format!("v{name}, killed"));
    }
}
