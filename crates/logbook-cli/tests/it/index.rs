//! The index: built by rebuild equals built by writes, follows hand edits
//! and deletions through `sync`, repairs a writer killed between its file
//! write and its index update, survives deletion and old schemas, and
//! answers `find` exactly like the seed's scan on randomized histories.

use std::path::{Path, PathBuf};

use logbook::Logbook;
use logbook::model::query::RunQuery;
use logbook::ops::query::Scope;
use logbook::testing::FAIL_AFTER_FILE_WRITE_ENV;
use logbook::testing::index::{self, Index};
use serde_json::{Value, json};

use crate::harness::TestProject;

fn start(t: &TestProject, agent: &str, workflow: &str, extra: &[&str]) -> (String, PathBuf) {
    let v = t.start_run(agent, workflow, extra);
    (
        v["session_id"].as_str().unwrap().to_string(),
        PathBuf::from(v["folder"].as_str().unwrap()),
    )
}

fn output(t: &TestProject, id: &str, folder: &Path, file: &str, text: &str, ty: &str) {
    std::fs::write(folder.join(file), text).unwrap();
    t.run(&[
        "run",
        "output",
        id,
        file,
        "--type",
        ty,
        "--description",
        &format!("the {file}"),
    ])
    .ok();
}

fn find_ids(t: &TestProject, args: &[&str]) -> Vec<String> {
    let mut all = vec!["find"];
    all.extend_from_slice(args);
    t.json(&all)
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["session_id"].as_str().unwrap().to_string())
        .collect()
}

fn fingerprint(t: &TestProject) -> Vec<String> {
    let p = Logbook::open(t.root()).unwrap();
    Index::open(&p).unwrap().upkeep().fingerprint().unwrap()
}

/// A small history through the real binary: starts, outputs, links, finishes.
fn history(t: &TestProject) -> Vec<String> {
    let (a, fa) = start(
        t,
        "alex",
        "intake-app",
        &["--title", "Alex the Facilitator", "--tag", "q4"],
    );
    output(
        t,
        &a,
        &fa,
        "requirements.md",
        "We need ten laptops for onboarding.",
        "document",
    );
    t.run(&["run", "finish", &a]).ok();
    let (b, fb) = start(
        t,
        "casey",
        "deep-dive-app",
        &["--related", &a, "--input", "category=Hardware"],
    );
    output(
        t,
        &b,
        &fb,
        "detail.md",
        "Procurement of zebra keyboards.",
        "document",
    );
    output(t, &b, &fb, "data.json", "{\"n\": 10}", "data");
    t.run(&["run", "finish", &b]).ok();
    let (c, _) = start(t, "pixel", "build-stories", &[]);
    t.run(&["run", "link", &c, &b]).ok();
    vec![a, b, c]
}

#[test]
fn rebuild_equals_incremental_writes() {
    let t = TestProject::new();
    history(&t);
    let incremental = fingerprint(&t);
    assert!(
        incremental
            .iter()
            .filter(|l| l.starts_with("run\u{1f}"))
            .count()
            == 3,
        "{incremental:#?}"
    );
    t.run(&["index", "rebuild"]).ok();
    let rebuilt = fingerprint(&t);
    assert_eq!(incremental, rebuilt);
    let status = t.json(&["index", "status"]);
    assert_eq!(status["runs"], 3);
    assert_eq!(status["outputs"], 3);
    assert_eq!(status["edges"], 2);
    assert_eq!(status["pending"], 0);
    assert_eq!(
        status["stale"],
        json!({"new": 0, "changed": 0, "deleted": 0})
    );
}

#[test]
fn find_text_latest_output_and_lineage_from_the_index() {
    let t = TestProject::new();
    let ids = history(&t);
    let hits = t.json(&["find", "--text", "zebra"]);
    let hits = hits.as_array().unwrap();
    assert_eq!(hits.len(), 1, "{hits:#?}");
    assert_eq!(hits[0]["session_id"], ids[1].as_str());
    assert!(
        hits[0]["snippet"].as_str().unwrap().contains("[zebra]"),
        "{hits:#?}"
    );
    assert_eq!(
        find_ids(&t, &["--text", "laptops onboarding"]),
        vec![ids[0].clone()]
    );
    assert!(find_ids(&t, &["--text", "laptops zebra"]).is_empty());
    // Newest first, paged.
    assert_eq!(
        find_ids(&t, &[]),
        vec![ids[2].clone(), ids[1].clone(), ids[0].clone()]
    );
    assert_eq!(
        find_ids(&t, &["--limit", "1", "--offset", "1"]),
        vec![ids[1].clone()]
    );
    assert_eq!(
        find_ids(&t, &["--workflow", "^deep-"]),
        vec![ids[1].clone()]
    );
    assert_eq!(find_ids(&t, &["--tag", "q4"]), vec![ids[0].clone()]);
    let latest = t.run(&["latest-output", "--agent", "casey", "--type", "document"]);
    assert!(latest.ok().trim_end().ends_with("detail.md"), "{latest:?}");
    let lineage = t.json(&["lineage", &ids[1]]);
    assert_eq!(lineage["ancestors"], json!([ids[0]]));
    assert_eq!(lineage["descendants"], json!([ids[2]]));
}

#[test]
fn a_root_named_relatively_or_through_a_symlink_is_one_project() {
    let t = TestProject::new();
    let ids = history(&t);
    let alias_dir = tempfile::tempdir().unwrap();
    let alias = alias_dir.path().join("alias");
    std::os::unix::fs::symlink(t.root(), &alias).unwrap();
    let dotted = format!("{}/./", t.root().display());
    let sub = t.path("docs");
    for root in [
        ".",
        "./",
        "docs/..",
        dotted.as_str(),
        alias.to_str().unwrap(),
    ] {
        // Each names the project the runs were written in (found from the
        // working directory): nothing is new to its index.
        let report = t.json(&["index", "sync", "--root", root]);
        assert_eq!(
            (&report["indexed"], &report["removed"]),
            (&json!(0), &json!(0)),
            "--root {root}: {report}"
        );
        let found = t.json(&["find", "--root", root]);
        assert_eq!(found.as_array().unwrap().len(), ids.len(), "--root {root}");
    }
    // From a subfolder, `--root ..` is the same project too.
    let out = t
        .cmd(&["--json", "find", "--root", ".."])
        .current_dir(&sub)
        .output()
        .unwrap();
    let found: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(found.as_array().unwrap().len(), ids.len());
    assert_eq!(t.json(&["index", "status"])["runs"], json!(ids.len()));
}

#[test]
fn hand_edited_manifest_is_picked_up_by_sync() {
    let t = TestProject::new();
    let ids = history(&t);
    let folder = t.path("docs/agent-outputs").join(&ids[0]);
    let path = folder.join("manifest.json");
    let text = std::fs::read_to_string(&path).unwrap();
    // In place, as an editor that does not rename would: the parent folder's
    // mtime does not move, so only `sync` can notice.
    std::fs::write(&path, text.replace("\"alex\"", "\"alexandra\"")).unwrap();
    t.run(&["index", "sync"]).ok();
    assert_eq!(
        find_ids(&t, &["--agent", "alexandra"]),
        vec![ids[0].clone()]
    );
    assert!(find_ids(&t, &["--agent", "alex"]).is_empty());
    // A manifest broken by hand is skipped and named, not fatal.
    std::fs::write(&path, "{ not json").unwrap();
    let sync = t.json(&["index", "sync"]);
    assert_eq!(sync["corrupt"][0]["path"], path.to_str().unwrap());
    assert_eq!(find_ids(&t, &[]).len(), 2);
}

#[test]
fn in_place_edit_of_a_returned_run_is_verified_on_read() {
    let t = TestProject::new();
    let ids = history(&t);
    let path = t
        .path("docs/agent-outputs")
        .join(&ids[0])
        .join("manifest.json");
    let text = std::fs::read_to_string(&path).unwrap();
    // In place, no rename, no sync: no directory mtime moves.
    std::fs::write(&path, text.replace("\"alex\"", "\"alexandra\"")).unwrap();
    let all = t.json(&["find"]);
    let first = all
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["session_id"] == ids[0].as_str())
        .unwrap();
    assert_eq!(first["manifest"]["agent"]["name"], "alexandra", "{all}");
    // The re-read went into the index, so filters see it too.
    assert_eq!(
        find_ids(&t, &["--agent", "alexandra"]),
        vec![ids[0].clone()]
    );
    assert!(find_ids(&t, &["--agent", "alex"]).is_empty());
    // A filtered query that still returns the run (stale record matches)
    // re-checks and drops it when the file no longer matches.
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace("\"alexandra\"", "\"al\"")).unwrap();
    assert!(find_ids(&t, &["--agent", "alexandra"]).is_empty());
    assert_eq!(find_ids(&t, &["--agent", "al"]), vec![ids[0].clone()]);
    // A manifest broken in place is skipped and counted, not shown stale.
    std::fs::write(&path, "{ not json").unwrap();
    let r = t.run(&["--json", "find"]);
    let listed: Value = serde_json::from_str(r.ok()).unwrap();
    let listed: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["session_id"].as_str().unwrap())
        .collect();
    assert_eq!(listed, [ids[2].as_str(), ids[1].as_str()]);
    assert!(r.stderr.contains("skipped 1 invalid"), "{}", r.stderr);
}

#[test]
fn runs_created_by_another_tool_after_our_own_start_are_listed() {
    let t = TestProject::new();
    let ids = history(&t);
    let (ours, _) = start(&t, "pixel", "build-stories", &[]);
    // Another tool: a folder first, its manifest a moment later. Until
    // then the folder is listed by its UUID with status unknown.
    let theirs = "55555555-5555-4555-8555-555555555555";
    let folder = t.path("docs/agent-outputs").join(theirs);
    std::fs::create_dir_all(&folder).unwrap();
    assert_eq!(find_ids(&t, &[]).len(), ids.len() + 2);
    assert_eq!(find_ids(&t, &["--status", "unknown"]), vec![theirs]);
    let seed = std::fs::read_to_string(
        t.path("docs/agent-outputs")
            .join(&ours)
            .join("manifest.json"),
    )
    .unwrap()
    .replace(&ours, theirs)
    .replace("\"pixel\"", "\"other-tool\"");
    std::fs::write(folder.join("manifest.json"), seed).unwrap();
    assert_eq!(find_ids(&t, &["--agent", "other-tool"]), vec![theirs]);
    assert_eq!(find_ids(&t, &[]).len(), ids.len() + 2);
    assert!(find_ids(&t, &["--status", "unknown"]).is_empty());
}

#[test]
fn file_deleted_by_hand_disappears_after_sync() {
    let t = TestProject::new();
    let ids = history(&t);
    let manifest = t
        .path("docs/agent-outputs")
        .join(&ids[2])
        .join("manifest.json");
    std::fs::remove_file(manifest).unwrap();
    // The folder stays: listed by its UUID with status unknown (seed 000).
    let sync = t.json(&["index", "sync"]);
    assert_eq!((&sync["removed"], &sync["indexed"]), (&json!(0), &json!(1)));
    assert_eq!(find_ids(&t, &["--status", "unknown"]), vec![ids[2].clone()]);
    std::fs::remove_dir_all(t.path("docs/agent-outputs").join(&ids[2])).unwrap();
    let sync = t.json(&["index", "sync"]);
    assert_eq!(sync["removed"], 1);
    assert_eq!(find_ids(&t, &[]), vec![ids[1].clone(), ids[0].clone()]);
    // A whole folder removed by another tool is seen without an explicit sync
    // (the parent folder's mtime moved).
    std::fs::remove_dir_all(t.path("docs/agent-outputs").join(&ids[1])).unwrap();
    assert_eq!(find_ids(&t, &[]), vec![ids[0].clone()]);
}

#[test]
fn writer_killed_between_file_and_index_is_repaired_on_next_open() {
    let mut t = TestProject::new();
    let (id, folder) = start(&t, "alex", "intake-app", &[]);
    std::fs::write(folder.join("notes.md"), "quokka sightings").unwrap();
    t.envs.push((FAIL_AFTER_FILE_WRITE_ENV.into(), "1".into()));
    let killed = t.run(&[
        "run",
        "output",
        &id,
        "notes.md",
        "--type",
        "document",
        "--description",
        "notes",
    ]);
    assert_eq!(
        killed.code, 86,
        "the injected failure must fire: {killed:?}"
    );
    t.envs.clear();
    // The file has the output; the index was left with the id pending.
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(folder.join("manifest.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["outputs"][0]["file"], "notes.md");
    let p = Logbook::open(t.root()).unwrap();
    {
        let conn = rusqlite::Connection::open(p.index_path()).unwrap();
        let pending: i64 = conn
            .query_row("SELECT count(*) FROM pending", [], |r| r.get(0))
            .unwrap();
        assert_eq!(pending, 1);
        let stored: String = conn
            .query_row("SELECT manifest FROM runs", [], |r| r.get(0))
            .unwrap();
        assert!(
            !stored.contains("notes.md"),
            "index must still be stale here"
        );
    }
    // The next open repairs it: find sees the output and its text.
    let found = t.json(&["find", "--agent", "alex"]);
    assert_eq!(found[0]["manifest"]["outputs"][0]["file"], "notes.md");
    assert_eq!(find_ids(&t, &["--text", "quokka"]), vec![id.clone()]);
    assert_eq!(t.json(&["index", "status"])["pending"], 0);
}

#[test]
fn deleted_index_is_rebuilt_transparently() {
    let t = TestProject::new();
    let ids = history(&t);
    let before = fingerprint(&t);
    let db = t.path(".logbook/index.db");
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
    }
    assert_eq!(
        find_ids(&t, &[]),
        vec![ids[2].clone(), ids[1].clone(), ids[0].clone()]
    );
    assert!(db.is_file());
    assert_eq!(fingerprint(&t), before);
    // Garbage in place of the database is thrown away too.
    drop(std::fs::remove_file(format!("{}-wal", db.display())));
    drop(std::fs::remove_file(format!("{}-shm", db.display())));
    std::fs::write(&db, vec![7u8; 8192]).unwrap();
    assert_eq!(find_ids(&t, &[]).len(), 3);
}

/// A rebuild builds a new file and renames it over the live index while
/// other processes write: every registration made meanwhile must be in the
/// index that is left, with no sync, no pending mark and nothing stale.
#[test]
fn writes_during_rebuilds_all_land_in_the_rebuilt_index() {
    let t = TestProject::new();
    let runs: Vec<(String, PathBuf)> = (0..4)
        .map(|k| start(&t, &format!("agent{k}"), "deep-dive", &[]))
        .collect();
    std::thread::scope(|s| {
        let writers: Vec<_> = runs
            .iter()
            .enumerate()
            .map(|(k, (id, folder))| {
                let t = &t;
                s.spawn(move || {
                    for i in 0..12 {
                        let file = format!("part{i}.md");
                        std::fs::write(folder.join(&file), format!("words qq{k}x{i}")).unwrap();
                        t.run(&[
                            "run",
                            "output",
                            id,
                            &file,
                            "--type",
                            "document",
                            "--description",
                            "a part",
                        ])
                        .ok();
                    }
                })
            })
            .collect();
        let mut rebuilds = 0;
        while rebuilds < 3 || writers.iter().any(|w| !w.is_finished()) {
            t.run(&["index", "rebuild"]).ok();
            rebuilds += 1;
        }
    });
    let p = Logbook::open(t.root()).unwrap();
    let status = Index::open(&p).unwrap().upkeep().status().unwrap();
    assert_eq!(status.pending, 0, "{status:?}");
    assert_eq!(
        (status.stale.new, status.stale.changed, status.stale.deleted),
        (0, 0, 0),
        "{status:?}"
    );
    for (k, (id, _)) in runs.iter().enumerate() {
        for i in 0..12 {
            assert_eq!(
                find_ids(&t, &["--text", &format!("qq{k}x{i}")]),
                vec![id.clone()],
                "output {i} of run {k}"
            );
        }
    }
    let left = fingerprint(&t);
    t.run(&["index", "rebuild"]).ok();
    assert_eq!(fingerprint(&t), left);
}

#[test]
fn index_of_an_older_schema_is_rebuilt() {
    let t = TestProject::new();
    let ids = history(&t);
    let db = t.path(".logbook/index.db");
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
    }
    {
        // What an older logbook might have left: other tables, old version.
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch(
            "CREATE TABLE runs(id TEXT, agent TEXT); INSERT INTO runs VALUES ('bogus', 'alex');
             CREATE TABLE files(path TEXT); PRAGMA user_version = 0;",
        )
        .unwrap();
    }
    assert_eq!(find_ids(&t, &["--agent", "alex"]), vec![ids[0].clone()]);
    let conn = rusqlite::Connection::open(&db).unwrap();
    let v: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(v, index::SCHEMA_VERSION);
}

#[test]
fn work_session_and_transcript_listings_come_from_the_index() {
    let t = TestProject::new();
    t.run(&["start", "--client", "acme", "--project", "audit"])
        .ok();
    let listed = t.json(&["list"]);
    assert!(
        !listed["sessions"][0]["session_id"]
            .as_str()
            .unwrap()
            .is_empty()
    );
    // Edited in place by hand: seen without a sync (session files are stat'ed).
    let id = listed["sessions"][0]["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    let path = t.path(&format!(".logbook/sessions/{id}.yaml"));
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, text.replace("client: ACME", "client: ZETA")).unwrap();
    assert_eq!(t.json(&["list"])["sessions"][0]["client"], "ZETA");
    let status = t.json(&["index", "status"]);
    assert_eq!(status["work_sessions"], 1);
}

// ---------------------------------------------------------------------------
// Property: find through the index equals the seed's scan.

/// xorshift64*: deterministic, no crate needed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len() as u64) as usize]
    }
    fn uuid(&mut self) -> String {
        let (a, b) = (self.next(), self.next());
        let v = uuid::Uuid::from_u64_pair(a, b);
        uuid::Builder::from_random_bytes(*v.as_bytes())
            .into_uuid()
            .to_string()
    }
}

const AGENTS: &[&str] = &["alex", "casey", "pixel", "quinn"];
const WORKFLOWS: &[&str] = &[
    "intake-app",
    "deep-dive-app",
    "deep-dive-itsm",
    "build-stories",
    "review",
];
const STATUSES: &[&str] = &["running", "completed", "failed", "cancelled"];
const USERS: &[&str] = &["bryan", "dana"];
const TAGS: &[&str] = &["q4", "urgent", "infra"];

fn write_manifest(dir: &Path, id: &str, rng: &mut Rng, related: &[String]) {
    let folder = dir.join(id);
    std::fs::create_dir_all(&folder).unwrap();
    // Few distinct minutes so that ties (broken by id) are exercised.
    let started = format!(
        "2025-10-0{}T1{}:0{}:00.000Z",
        1 + rng.below(3),
        rng.below(3),
        rng.below(2)
    );
    let status = rng.pick(STATUSES);
    let mut m = json!({
        "version": "1.0.0",
        "session_id": id,
        "agent": {"name": rng.pick(AGENTS), "title": "Some Agent", "bundle": "bmad/bmm"},
        "workflow": {"name": rng.pick(WORKFLOWS), "description": "a workflow"},
        "execution": {"started_at": started, "status": status, "user": rng.pick(USERS)},
        "outputs": [],
    });
    if rng.below(2) == 0 {
        m["tags"] = json!([rng.pick(TAGS)]);
    }
    if !related.is_empty() && rng.below(2) == 0 {
        m["related_sessions"] = json!([related[rng.below(related.len() as u64) as usize]]);
    }
    if status != "running" {
        m["execution"]["completed_at"] = json!("2025-10-05T00:00:00.000Z");
    }
    std::fs::write(
        folder.join("manifest.json"),
        serde_json::to_string_pretty(&m).unwrap(),
    )
    .unwrap();
}

fn random_query(rng: &mut Rng) -> RunQuery {
    let mut q = RunQuery::default();
    if rng.below(2) == 0 {
        q.agent = Some(rng.pick(AGENTS).into());
    }
    if rng.below(2) == 0 {
        q.workflow = Some(
            rng.pick(&["^deep-", "app$", "review", "intake-app", "nomatch", "e"])
                .into(),
        );
    }
    if rng.below(3) == 0 {
        q.status = Some(rng.pick(STATUSES).into());
    }
    if rng.below(4) == 0 {
        q.user = Some(rng.pick(USERS).into());
    }
    if rng.below(4) == 0 {
        q.tag = Some(rng.pick(TAGS).into());
    }
    if rng.below(4) == 0 {
        q.since = "2025-10-02T10:00:00Z".parse().ok();
    }
    if rng.below(2) == 0 {
        q.limit = Some(1 + rng.below(6) as usize);
    }
    if rng.below(3) == 0 {
        q.offset = rng.below(4) as usize;
    }
    q
}

fn assert_same(p: &Logbook, q: &RunQuery, ctx: &str) {
    let scanned = crate::harness::found(p, q, Scope::Files);
    let indexed = crate::harness::found(p, q, Scope::Local);
    assert_eq!(indexed, scanned, "{ctx}: {q:?}");
}

#[test]
fn find_through_the_index_equals_the_scan_on_random_histories() {
    for seed in 1..=12u64 {
        let t = TestProject::new();
        let p = Logbook::open(t.root()).unwrap();
        let dir = p.config.agent_outputs_folder.clone();
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let mut ids: Vec<String> = vec![];
        for _ in 0..(5 + rng.below(40)) {
            let id = rng.uuid();
            let rel = ids.clone();
            write_manifest(&dir, &id, &mut rng, &rel);
            ids.push(id);
        }
        // A corrupt one and a non-UUID folder: both skipped by both.
        std::fs::create_dir_all(dir.join("not-a-uuid")).unwrap();
        std::fs::write(dir.join("not-a-uuid/manifest.json"), "{}").unwrap();
        let bad = rng.uuid();
        std::fs::create_dir_all(dir.join(&bad)).unwrap();
        std::fs::write(dir.join(&bad).join("manifest.json"), "{\"agent\":").unwrap();
        for _ in 0..25 {
            assert_same(&p, &random_query(&mut rng), &format!("seed {seed}"));
        }
        // Mutate behind logbook's back (rewrite, delete, add), sync, compare.
        for _ in 0..(1 + rng.below(6)) {
            let i = rng.below(ids.len() as u64) as usize;
            match rng.below(3) {
                0 => write_manifest(&dir, &ids[i].clone(), &mut rng, &[]),
                1 => {
                    let _ = std::fs::remove_file(dir.join(&ids[i]).join("manifest.json"));
                }
                _ => {
                    let id = rng.uuid();
                    write_manifest(&dir, &id, &mut rng, &ids.clone());
                    ids.push(id);
                }
            }
        }
        Index::open(&p).unwrap().upkeep().sync().unwrap();
        for _ in 0..25 {
            assert_same(
                &p,
                &random_query(&mut rng),
                &format!("seed {seed} after sync"),
            );
        }
        // And a rebuild gives the same index as the syncs did.
        let synced = Index::open(&p).unwrap().upkeep().fingerprint().unwrap();
        Index::rebuild(&p, None).unwrap();
        assert_eq!(
            Index::open(&p).unwrap().upkeep().fingerprint().unwrap(),
            synced,
            "seed {seed}"
        );
    }
}

#[test]
fn doctor_compares_index_and_files_and_fix_syncs() {
    let t = TestProject::new();
    let ids = history(&t);
    let dir = t.path("docs/agent-outputs");
    // Behind logbook's back: an in-place edit, a dangling link, an orphan folder.
    let path = dir.join(&ids[2]).join("manifest.json");
    let mut m: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    m["related_sessions"] = json!(["0b0e3f2a-1111-4222-8333-444455556666"]);
    std::fs::write(&path, serde_json::to_string_pretty(&m).unwrap()).unwrap();
    std::fs::create_dir_all(dir.join("stray")).unwrap();
    let report = t.doctor(&[]);
    let kinds: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"index-stale"), "{report:#}");
    assert!(kinds.contains(&"orphan-folder"), "{report:#}");
    // Doctor syncs before it judges, so the first pass sees the link too.
    assert!(kinds.contains(&"dangling-link"), "{report:#}");
    let stale = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "index-stale")
        .unwrap();
    assert!(
        stale["fixed"]
            .as_str()
            .unwrap()
            .starts_with("synced: 1 file(s) read"),
        "{report:#}"
    );
    let fixed = t.doctor(&["--fix"]);
    assert!(
        !fixed["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["kind"] == "index-stale"),
        "{fixed:#}"
    );
    let after = t.doctor(&[]);
    let kinds: Vec<&str> = after["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap())
        .collect();
    assert!(!kinds.contains(&"index-stale"), "{after:#}");
    assert!(kinds.contains(&"dangling-link"), "{after:#}");
}

#[test]
fn doctor_counts_what_index_status_counts_as_stale_from_its_own_walk() {
    use std::io::Write;
    let t = TestProject::new();
    let ids = history(&t);
    let (d, _) = start(&t, "dana", "triage", &[]);
    let (e, _) = start(&t, "erin", "triage", &[]);
    let dir = t.path("docs/agent-outputs");
    // Behind logbook's back: one run folder added, a manifest edited, an
    // output appended to, a manifest made unreadable, a folder removed and
    // a manifest removed from a folder that stays.
    let added = "0b0e3f2a-1111-4222-8333-444455556666";
    let mut m: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join(&ids[0]).join("manifest.json")).unwrap(),
    )
    .unwrap();
    m["session_id"] = json!(added);
    std::fs::create_dir_all(dir.join(added)).unwrap();
    std::fs::write(
        dir.join(added).join("manifest.json"),
        serde_json::to_string_pretty(&m).unwrap(),
    )
    .unwrap();
    let edited = dir.join(&ids[2]).join("manifest.json");
    let mut m: Value = serde_json::from_str(&std::fs::read_to_string(&edited).unwrap()).unwrap();
    m["tags"] = json!(["edited"]);
    std::fs::write(&edited, serde_json::to_string_pretty(&m).unwrap()).unwrap();
    std::fs::OpenOptions::new()
        .append(true)
        .open(dir.join(&ids[1]).join("detail.md"))
        .unwrap()
        .write_all(b" And a quokka.")
        .unwrap();
    std::fs::write(dir.join(&ids[0]).join("manifest.json"), "{ not json").unwrap();
    std::fs::remove_dir_all(dir.join(&d)).unwrap();
    std::fs::remove_file(dir.join(&e).join("manifest.json")).unwrap();

    // The folder whose manifest was removed stays, as a run of status
    // unknown: changed, not deleted. The output appended to belongs to a
    // finished run whose manifest is unchanged: settled, so neither counts
    // it (`doctor --full` does).
    let want = (1, 3, 1);
    assert_eq!(stale(&t), want, "index status");
    let report = t.doctor(&[]);
    let stale_finding = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "index-stale")
        .unwrap_or_else(|| panic!("{report:#}"));
    assert!(
        stale_finding["message"]
            .as_str()
            .unwrap()
            .contains("1 new, 3 changed, 1 deleted"),
        "{report:#}"
    );
    assert_eq!(stale(&t), (0, 0, 0), "doctor synced before judging");
    t.run(&["index", "sync"]).ok();
    assert!(
        !t.doctor(&[])["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["kind"] == "index-stale"),
        "synced"
    );
}

fn stale(t: &TestProject) -> (u64, u64, u64) {
    let s = t.json(&["index", "status"]);
    let s = &s["stale"];
    (
        s["new"].as_u64().unwrap(),
        s["changed"].as_u64().unwrap(),
        s["deleted"].as_u64().unwrap(),
    )
}

#[test]
fn output_files_of_a_finished_run_changed_after_registration_are_seen_by_doctor_and_sync_full() {
    use std::io::Write;
    let t = TestProject::new();
    let ids = history(&t);
    let file = t
        .path("docs/agent-outputs")
        .join(&ids[0])
        .join("requirements.md");
    assert_eq!(stale(&t), (0, 0, 0));
    // Appended in place: neither the manifest nor any folder's mtime moves.
    std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .unwrap()
        .write_all(b"Also a quokka for the office.\n")
        .unwrap();
    // A finished run's outputs are settled: `index status` counts what a
    // normal sync reads, which checks such a run by its manifest alone.
    assert_eq!(
        stale(&t),
        (0, 0, 0),
        "index status trusts the settled output"
    );
    assert!(
        !t.doctor(&[])["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["kind"] == "index-stale"),
        "default doctor trusts it too"
    );
    let report = t.doctor(&["--full"]);
    assert!(
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["kind"] == "index-stale"),
        "{report:#}"
    );
    // Doctor synced before judging: nothing is left for `index sync`.
    let sync = t.json(&["index", "sync"]);
    assert_eq!(sync["indexed"], 0, "{sync:#}");
    assert_eq!(find_ids(&t, &["--text", "quokka"]), vec![ids[0].clone()]);
    assert_eq!(stale(&t), (0, 0, 0));

    // Rewritten in place with the same size and the old mtime restored, as
    // `rsync -t` or a careful tool would leave it: still seen.
    let mtime = std::fs::metadata(&file).unwrap().modified().unwrap();
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replace("quokka", "wombat")).unwrap();
    std::fs::File::options()
        .write(true)
        .open(&file)
        .unwrap()
        .set_modified(mtime)
        .unwrap();
    assert_eq!(stale(&t), (0, 0, 0));
    t.run(&["index", "sync", "--full"]).ok();
    assert_eq!(find_ids(&t, &["--text", "wombat"]), vec![ids[0].clone()]);
    assert!(find_ids(&t, &["--text", "quokka"]).is_empty());

    // Deleted: its words go with it.
    std::fs::remove_file(&file).unwrap();
    assert_eq!(stale(&t), (0, 0, 0));
    t.run(&["index", "sync", "--full"]).ok();
    assert!(find_ids(&t, &["--text", "wombat"]).is_empty());
    assert!(find_ids(&t, &["--text", "onboarding"]).is_empty());

    // Re-created under the same name, with other words.
    std::fs::write(&file, "A platypus joins the onboarding.\n").unwrap();
    assert_eq!(stale(&t), (0, 0, 0));
    t.run(&["index", "sync", "--full"]).ok();
    let hits = t.json(&["find", "--text", "platypus"]);
    assert_eq!(hits.as_array().unwrap().len(), 1, "{hits:#}");
    assert_eq!(hits[0]["session_id"], ids[0].as_str());
    assert_eq!(
        hits[0]["snippet"], "A [platypus] joins the onboarding.",
        "{hits:#}"
    );
}

#[test]
fn a_text_query_rechecks_the_output_files_of_the_runs_it_returns() {
    let t = TestProject::new();
    let ids = history(&t);
    let file = t
        .path("docs/agent-outputs")
        .join(&ids[0])
        .join("requirements.md");
    assert_eq!(
        find_ids(&t, &["--text", "onboarding"]),
        vec![ids[0].clone()]
    );
    // The word is gone from the file, no sync: the run the index returns is
    // re-read before it is shown, and no longer matches.
    std::fs::write(&file, "We need ten laptops.\n").unwrap();
    assert!(find_ids(&t, &["--text", "onboarding"]).is_empty());
    assert_eq!(stale(&t), (0, 0, 0), "the re-read reached the index");
}

#[test]
fn text_search_matches_word_forms_and_accents() {
    let t = TestProject::new();
    let ids = history(&t);
    // history's requirements.md says "ten laptops".
    assert_eq!(find_ids(&t, &["--text", "laptop"]), vec![ids[0].clone()]);
    assert_eq!(find_ids(&t, &["--text", "LAPTOP"]), vec![ids[0].clone()]);
    let (run, _) = start(
        &t,
        "pixel",
        "build-stories",
        &["--description", "The nightly job keeps running at the Café"],
    );
    assert_eq!(find_ids(&t, &["--text", "runs"]), vec![run.clone()]);
    assert_eq!(find_ids(&t, &["--text", "cafe"]), vec![run.clone()]);
    let hits = t.json(&["find", "--text", "run cafe"]);
    let snippet = hits[0]["snippet"].as_str().unwrap();
    assert!(
        snippet.contains("[running]") && snippet.contains("[Café]"),
        "{snippet}"
    );
    // Plain output shows the snippet under the hit.
    let out = t.run(&["find", "--text", "laptop"]);
    assert!(out.ok().contains("ten [laptops] for"), "{}", out.ok());
}

#[test]
fn an_index_of_the_previous_schema_is_rebuilt_silently_with_stemming() {
    let t = TestProject::new();
    let ids = history(&t);
    assert_eq!(find_ids(&t, &[]).len(), 3);
    {
        // What the previous version left: the same tables, words not stemmed.
        let conn = rusqlite::Connection::open(t.path(".logbook/index.db")).unwrap();
        conn.execute_batch(
            "DROP TABLE runs_fts;
             CREATE VIRTUAL TABLE runs_fts USING fts5(agent, workflow, body, content = '',
               contentless_delete = 1, tokenize = 'unicode61');
             INSERT INTO runs_fts(rowid, agent, workflow, body)
               SELECT rid, agent, workflow, manifest FROM runs;
             PRAGMA user_version = 3;",
        )
        .unwrap();
    }
    let r = t.run(&["--json", "find", "--text", "laptop"]);
    let hits: Value = serde_json::from_str(r.ok()).unwrap();
    assert_eq!(hits[0]["session_id"], ids[0].as_str(), "{hits:#}");
    assert!(r.stderr.lines().count() <= 1, "{}", r.stderr);
    assert_eq!(
        t.json(&["index", "status"])["schema_version"],
        logbook::testing::index::SCHEMA_VERSION
    );
}
