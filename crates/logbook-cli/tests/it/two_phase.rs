//! A lost index rebuilt in two phases: the first command answers from the
//! rows-only index (phase 1), a detached `logbook index build-text` writes the full text,
//! and until it is done every face flags its text answers partial (CLI
//! notice, MCP `partial`, HTTP `X-Logbook-Partial`). A builder or a
//! rows phase killed with SIGKILL is resumed by the next command; writes
//! while the text is built leave no duplicate or missing text rows. The
//! builder is held between its batches with `LOGBOOK_FAULT=text-batch:N`.

use std::path::PathBuf;

use logbook::Logbook;
use logbook::testing::index::Index;
use serde_json::{Value, json};

use crate::harness::{Held, TestProject};
use crate::mcp::Mcp;
use crate::serve::{get, serve};
use crate::transcript_find::{ID, import, messages};

/// The word of each run's output file; every output also says `tapir`.
const WORDS: [&str; 5] = ["walrus", "ocelot", "marmot", "bison", "heron"];

/// What the notice of a partial text answer says.
const BUILDING: &str = "full-text index is still being built";

/// Five runs, each with an output saying its word and `tapir`, and a
/// transcript (`narwhal`, `zebra` in its messages). Returns the runs' ids
/// and folders.
fn history(t: &TestProject) -> Vec<(String, PathBuf)> {
    let mut runs = vec![];
    for (i, word) in WORDS.iter().enumerate() {
        let v = t.start_run("alex", "intake", &[]);
        let id = v["session_id"].as_str().unwrap().to_string();
        let folder = PathBuf::from(v["folder"].as_str().unwrap());
        add_output(
            t,
            &id,
            &folder,
            &format!("out{i}.md"),
            &format!("{word} tapir"),
        );
        runs.push((id, folder));
    }
    import(t, &messages());
    runs
}

fn add_output(t: &TestProject, id: &str, folder: &std::path::Path, file: &str, text: &str) {
    std::fs::write(folder.join(file), text).unwrap();
    t.run(&[
        "run",
        "output",
        id,
        file,
        "--type",
        "document",
        "--description",
        "notes",
    ])
    .ok();
}

/// The runs `find --text WORDS` answers, sorted.
fn found(t: &TestProject, words: &str) -> Vec<String> {
    let mut ids: Vec<String> = t
        .json(&["find", "--text", words, "--limit", "100"])
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["session_id"].as_str().unwrap().to_string())
        .collect();
    ids.sort();
    ids
}

/// Every text answer of the project: runs by word, transcripts by word,
/// a transcript's messages by word.
fn answers(t: &TestProject, extra: &[&str]) -> Vec<String> {
    let mut out = vec![];
    for w in WORDS.iter().chain(["tapir"].iter()).chain(extra) {
        out.push(format!("{w}: {:?}", found(t, w)));
        let listed = t.json(&["transcript", "list", "--all", "--text", w]);
        out.push(format!(
            "transcripts {w}: {}",
            listed.as_array().unwrap().len()
        ));
    }
    for w in ["narwhal", "zebra", "walrus"].iter().chain(extra) {
        let r = t.json(&["transcript", "find", ID, w]);
        out.push(format!("messages {w}: {}", r["matches"]));
    }
    out
}

/// The index's rows as the library lists them (the text complete), and
/// the names of its secondary indexes.
fn fingerprint(t: &TestProject) -> Vec<String> {
    let p = Logbook::open(t.root()).unwrap();
    let index = Index::open(&p).unwrap();
    assert_eq!(
        index.read().text_progress().unwrap(),
        None,
        "text not complete"
    );
    let mut rows = index.upkeep().fingerprint().unwrap();
    let db = rusqlite::Connection::open(t.path(".logbook/index.db")).unwrap();
    let mut stmt = db
        .prepare("SELECT name FROM sqlite_schema WHERE type = 'index' AND sql IS NOT NULL")
        .unwrap();
    let names = stmt.query_map([], |r| r.get::<_, String>(0)).unwrap();
    rows.extend(names.map(|n| format!("index {}", n.unwrap())));
    rows.sort();
    rows
}

/// Lets the text be completed and asserts that the index then answers,
/// and holds, what a one-phase rebuild made (`want`, `want_rows`).
#[track_caller]
fn assert_ends_as(t: &TestProject, want: &[String], want_rows: &[String]) {
    finish_text(t);
    assert_eq!(answers(t, &[]), want);
    assert_eq!(fingerprint(t), want_rows);
}

fn lose_index(t: &TestProject) {
    Index::discard(&Logbook::open(t.root()).unwrap()).unwrap();
}

/// Waits for the full text: a builder at work holds its lock until it is
/// done, and this one then writes whatever is left.
fn finish_text(t: &TestProject) {
    t.run(&["index", "build-text"]).ok();
    assert_eq!(t.json(&["index", "status"])["text"]["phase"], "complete");
}

/// `logbook ARGS` held at `point`'s `n`th pass, with the text builder's
/// batches `batch` runs long.
fn hold(t: &TestProject, args: &[&str], point: &str, n: u32, batch: u32) -> Held {
    let mut cmd = t.cmd(args);
    cmd.env("LOGBOOK_TEXT_BATCH", batch.to_string());
    Held::start(cmd, point, n)
}

/// A project whose lost index is rebuilt in two phases however small it is.
fn project() -> TestProject {
    let mut t = TestProject::new();
    t.envs.push(("LOGBOOK_TWO_PHASE_FROM".into(), "0".into()));
    t
}

/// No builder starts by itself: the test holds its own.
fn no_detached_builder(t: &mut TestProject) {
    t.envs.push(("LOGBOOK_NO_TEXT_BUILDER".into(), "1".into()));
}

fn building(t: &TestProject) -> Value {
    let status = t.json(&["index", "status"]);
    assert_eq!(status["text"]["phase"], "building", "{status}");
    status["text"].clone()
}

#[test]
fn a_lost_index_answers_from_its_rows_and_flags_text_answers_partial_on_every_face() {
    let mut t = project();
    let runs = history(&t);
    no_detached_builder(&mut t);
    lose_index(&t);

    // The first command answers from the rows-only index: every run is there.
    let all = t.json(&["find", "--agent", "alex", "--limit", "100"]);
    assert_eq!(all.as_array().unwrap().len(), runs.len(), "{all}");
    let text = building(&t);
    assert_eq!(text["done"], 0);
    assert_eq!(text["total"], 6, "five runs and a transcript: {text}");
    let human = t.run(&["index", "status"]).ok().to_string();
    assert!(human.contains("Full text:     being built, 0%"), "{human}");

    // The builder held after its first batch (two runs' text; the rows-only index
    // made the secondary indexes).
    let held = hold(&t, &["index", "build-text"], "text-batch", 2, 2);
    assert_eq!(building(&t)["done"], 2);

    // CLI: the matches so far, a notice on stderr, exit 0.
    let r = t.run(&["find", "--text", "tapir", "--json"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let so_far: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(so_far.as_array().unwrap().len(), 2, "{so_far}");
    assert!(r.stderr.contains(BUILDING), "{}", r.stderr);
    assert!(r.stderr.contains("33%"), "{}", r.stderr);
    let r = t.run(&["transcript", "find", ID, "narwhal"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains(BUILDING), "{}", r.stderr);
    // A query without text is whole: no notice.
    let r = t.run(&["find", "--agent", "alex"]);
    assert!(!r.stderr.contains(BUILDING), "{}", r.stderr);

    // MCP: `partial` and the notice in the result.
    let mut mcp = Mcp::start(&t);
    let found = mcp.ok("find_runs", json!({"text": "tapir"}));
    assert_eq!(found["partial"], true, "{found}");
    assert!(
        found["notice"].as_str().unwrap().contains(BUILDING),
        "{found}"
    );
    assert_eq!(found["runs"].as_array().unwrap().len(), 2, "{found}");
    let found = mcp.ok("transcript_find", json!({"id": ID, "text": "narwhal"}));
    assert_eq!(found["partial"], true, "{found}");
    let whole = mcp.ok("find_runs", json!({"agent": "alex"}));
    assert!(whole.get("partial").is_none(), "{whole}");

    // HTTP: the header on the API, the notice on the page.
    let (mut server, url) = serve(&t, &[], None);
    let api = get(&url, "/api/runs?q=tapir", "").to_ascii_lowercase();
    assert!(api.contains("x-logbook-partial: text 33%"), "{api}");
    let page = get(&url, "/?q=tapir", "");
    assert!(page.contains(BUILDING), "{page}");
    let plain = get(&url, "/api/runs", "").to_ascii_lowercase();
    assert!(!plain.contains("x-logbook-partial"), "{plain}");

    // Once the builder is done, every answer is whole and unflagged.
    held.finish();
    assert_eq!(t.json(&["index", "status"])["text"]["phase"], "complete");
    let r = t.run(&["find", "--text", "tapir", "--json"]);
    assert!(!r.stderr.contains(BUILDING), "{}", r.stderr);
    let whole: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(whole.as_array().unwrap().len(), 5);
    let found = mcp.ok("find_runs", json!({"text": "tapir"}));
    assert!(found.get("partial").is_none(), "{found}");
    let api = get(&url, "/api/runs?q=tapir", "").to_ascii_lowercase();
    assert!(!api.contains("x-logbook-partial"), "{api}");
    server.kill().unwrap();
    server.wait().unwrap();
}

#[test]
fn a_rows_phase_killed_is_started_again_and_ends_as_a_full_rebuild() {
    let t = project();
    history(&t);
    t.run(&["index", "rebuild"]).ok();
    let (want, want_rows) = (answers(&t, &[]), fingerprint(&t));
    lose_index(&t);

    let held = hold(&t, &["find", "--agent", "alex"], "rows-built", 1, 2);
    held.kill();
    // The next command runs the rows phase again and starts the builder.
    let all = t.json(&["find", "--agent", "alex"]);
    assert_eq!(all.as_array().unwrap().len(), 5, "{all}");
    assert_ends_as(&t, &want, &want_rows);
}

#[test]
fn a_text_builder_killed_is_resumed_by_the_next_command() {
    let mut t = project();
    history(&t);
    t.run(&["index", "rebuild"]).ok();
    let (want, want_rows) = (answers(&t, &[]), fingerprint(&t));
    no_detached_builder(&mut t);
    lose_index(&t);
    t.run(&["find"]).ok();

    // Killed after two batches: four runs' text written.
    hold(&t, &["index", "build-text"], "text-batch", 3, 2).kill();
    assert_eq!(building(&t)["done"], 4);

    // The next command (builders allowed again) starts one that resumes.
    t.envs.retain(|(k, _)| k != "LOGBOOK_NO_TEXT_BUILDER");
    let r = t.run(&["find", "--text", "tapir"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_ends_as(&t, &want, &want_rows);
}

#[test]
fn writes_while_the_text_is_built_leave_no_duplicate_or_missing_text() {
    let mut t = project();
    let runs = history(&t);
    no_detached_builder(&mut t);
    lose_index(&t);
    t.run(&["find"]).ok();
    let held = hold(&t, &["index", "build-text"], "text-batch", 3, 2);

    // A run whose text is written and one whose text is not yet both gain
    // an output; a new run; an output rewritten behind logbook's back and
    // synced; the transcript imported again with one more message.
    let (first, first_folder) = &runs[0];
    add_output(&t, first, first_folder, "more.md", "gecko notes");
    let (last, last_folder) = &runs[4];
    add_output(&t, last, last_folder, "more.md", "gecko notes");
    let v = t.start_run("casey", "deep-dive", &[]);
    let new = v["session_id"].as_str().unwrap().to_string();
    add_output(
        &t,
        &new,
        &PathBuf::from(v["folder"].as_str().unwrap()),
        "n.md",
        "gecko tapir",
    );
    std::fs::write(runs[3].1.join("out3.md"), "lemur tapir").unwrap();
    t.run(&["index", "sync"]).ok();
    let mut more = messages();
    more.push(
        json!({"role": "assistant", "blocks": [{"type": "text", "content": "an iguana too"}]}),
    );
    import(&t, &more);

    held.finish();
    let extra = ["gecko", "lemur", "iguana"];
    let two_phase = (answers(&t, &extra), fingerprint(&t));
    assert_eq!(found(&t, "gecko").len(), 3, "{:?}", two_phase.0);
    assert!(found(&t, "bison").is_empty(), "out3 was rewritten");
    t.run(&["index", "rebuild"]).ok();
    let one_phase = (answers(&t, &extra), fingerprint(&t));
    assert_eq!(two_phase.0, one_phase.0);
    assert_eq!(two_phase.1, one_phase.1);
}

/// The runs whose `runs_fts` row says `word`, read straight from the index
/// (no verify-on-read, which would re-read a stale run and hide a stale row).
fn fts_rows(t: &TestProject, word: &str) -> Vec<i64> {
    let db = rusqlite::Connection::open(t.path(".logbook/index.db")).unwrap();
    let mut stmt = db
        .prepare("SELECT rowid FROM runs_fts WHERE runs_fts MATCH ?1 ORDER BY rowid")
        .unwrap();
    stmt.query_map([word], |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap()
}

#[test]
fn a_text_row_a_writer_wrote_first_is_replaced_not_doubled() {
    let mut t = project();
    let runs = history(&t);
    no_detached_builder(&mut t);
    lose_index(&t);
    t.run(&["find"]).ok();
    let held = hold(&t, &["index", "build-text"], "text-batch", 3, 2);
    // Every run gets a text row from a writer (before or after the
    // builder's pass over it), then its new output changes behind
    // logbook's back: the builder, reading the files now, writes `ferret`
    // where it had not passed yet.
    for (i, (id, folder)) in runs.iter().enumerate() {
        add_output(&t, id, folder, &format!("more{i}.md"), "gecko notes");
    }
    for (i, (_, folder)) in runs.iter().enumerate() {
        std::fs::write(folder.join(format!("more{i}.md")), "ferret notes").unwrap();
    }
    held.finish();
    let (gecko, ferret) = (fts_rows(&t, "gecko"), fts_rows(&t, "ferret"));
    assert_eq!(
        gecko.len() + ferret.len(),
        runs.len(),
        "{gecko:?} {ferret:?}"
    );
    assert!(
        gecko.iter().all(|r| !ferret.contains(r)),
        "a run holds two text rows: {gecko:?} {ferret:?}"
    );
    assert!(
        !ferret.is_empty(),
        "the builder wrote no run after the writes"
    );
}

/// The runs the index stores as manifest stubs (their manifest in the file
/// only, until the text phase or a sync has been there).
fn stubs(t: &TestProject) -> Vec<String> {
    let db = rusqlite::Connection::open(t.path(".logbook/index.db")).unwrap();
    let mut stmt = db
        .prepare("SELECT id FROM runs WHERE manifest LIKE '{\"logbook:catalog\"%' ORDER BY id")
        .unwrap();
    stmt.query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[test]
fn the_rows_only_index_shows_every_run_whole_though_it_stores_their_manifests_as_stubs() {
    let mut t = project();
    let runs = history(&t);
    // One run names its repository, which a stub keeps for `--repo`.
    let manifest = runs[1].1.join("manifest.json");
    let mut m: Value = serde_json::from_str(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
    m["metadata"] = json!({"repository": {"origin": "example.com/org/proj"}});
    std::fs::write(&manifest, serde_json::to_string_pretty(&m).unwrap()).unwrap();
    let ask = |t: &TestProject| {
        let mut out = vec![t.json(&["find", "--limit", "100"])];
        // Runs of another repository are left out; runs naming none stay.
        out.push(t.json(&["find", "--repo", "git@other.example:x/y.git"]));
        out.extend(runs.iter().map(|(id, _)| t.json(&["run", "show", id])));
        out.push(t.json(&["lineage", &runs[0].0]));
        out
    };
    t.run(&["run", "finish", &runs[2].0]).ok();
    let want = ask(&t);
    let others = want[1].as_array().unwrap();
    assert_eq!(others.len(), runs.len() - 1, "{}", want[1]);
    assert!(others.iter().all(|r| r["session_id"] != runs[1].0.as_str()));
    t.run(&["index", "rebuild"]).ok();
    let want_rows = fingerprint(&t);

    no_detached_builder(&mut t);
    lose_index(&t);
    assert_eq!(
        ask(&t),
        want,
        "the rows-only index answers as the full index"
    );
    // (A run whose files look just written may be read again whole at
    // once, as a sync would: not every run need still be a stub.)
    assert!(!stubs(&t).is_empty());

    // The rows phase did not stamp the finished run's outputs: `sync --full`
    // reads the run again, and its text is searchable before the rest.
    std::fs::write(runs[2].1.join("out2.md"), "marmot tapir quokka").unwrap();
    t.run(&["index", "sync", "--full"]).ok();
    assert_eq!(found(&t, "quokka"), vec![runs[2].0.clone()]);
    assert!(!stubs(&t).contains(&runs[2].0));

    // One batch of three runs written: those are whole in the index again.
    hold(&t, &["index", "build-text"], "text-batch", 2, 3).kill();
    assert!(stubs(&t).len() <= 2, "{:?}", stubs(&t));
    assert_eq!(ask(&t), want);
    finish_text(&t);
    assert_eq!(stubs(&t), Vec::<String>::new());
    assert_eq!(ask(&t), want);
    assert_eq!(found(&t, "quokka"), vec![runs[2].0.clone()]);
    assert_eq!(fingerprint(&t), want_rows);
}

#[test]
fn a_manifest_rewritten_while_the_rows_phase_runs_is_caught_up_by_the_builder() {
    let mut t = project();
    let runs = history(&t);
    t.run(&["run", "finish", &runs[0].0]).ok();
    no_detached_builder(&mut t);
    lose_index(&t);
    // The files are read (each stamp taken before its file), then held
    // before its swap while another tool rewrites a finished run's
    // manifest in place: no folder's mtime moves.
    let held = hold(&t, &["find"], "rows-built", 1, 2);
    let path = runs[0].1.join("manifest.json");
    let mut m: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    m["workflow"]["name"] = json!("renamed");
    std::fs::write(&path, serde_json::to_string_pretty(&m).unwrap()).unwrap();
    held.finish();
    // The rows-only index went live without its catch-up sync; the builder runs it
    // before any text.
    finish_text(&t);
    let renamed = t.json(&["find", "--workflow", "renamed"]);
    let ids: Vec<&str> = renamed
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["session_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, vec![runs[0].0.as_str()], "{renamed}");
    let rows = fingerprint(&t);
    t.run(&["index", "rebuild"]).ok();
    assert_eq!(fingerprint(&t), rows);
}
