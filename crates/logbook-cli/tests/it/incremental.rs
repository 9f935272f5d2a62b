//! Incremental `transcript import` of a growing agent log (what the hooks
//! do at every Stop): each import reads only the bytes appended since the
//! last (`bytesRead`), and the stored transcript is byte for byte what a
//! fresh import of the same log writes. A log truncated or rewritten, a
//! damaged checkpoint or a renamed transcript cost a full import, never a
//! wrong one.

use std::io::Write as _;
use std::path::PathBuf;

use serde_json::Value;

use crate::agent_import::stored;
use crate::harness::TestProject;

const CLAUDE_ID: &str = "5a5a5a5a-1111-4222-8333-444455556666";
const CODEX_ID: &str = "0199bbbb-cccc-7ddd-8eee-ffff00001111";

/// The bytes an import may read besides the new ones: the two windows that
/// show the log is the one checkpointed.
const CHECK: u64 = 2 * 4096;

/// Claude Code turns `from..to`: a prompt, a reply streamed as three lines
/// sharing `message.id` (usage growing), and a tool result.
fn claude_turns(from: usize, to: usize) -> String {
    let mut out = String::new();
    let pad = "lorem ipsum dolor sit amet ".repeat(40);
    for i in from..to {
        let ts = format!(
            "2026-01-{:02}T{:02}:{:02}:00.000Z",
            10 + i % 9,
            i % 24,
            i % 60
        );
        let common = format!(
            r#""isSidechain":false,"cwd":"/work/big","gitBranch":"main","version":"2.0.14","sessionId":"{CLAUDE_ID}","timestamp":"{ts}""#
        );
        out += &format!(
            r#"{{"parentUuid":null,{common},"type":"user","message":{{"role":"user","content":"question {i}: {pad}"}},"uuid":"u-{i}-0"}}"#
        );
        out.push('\n');
        for (k, (block, output)) in [
            (
                r#"{"type":"thinking","thinking":"thinking it over","signature":"s"}"#,
                3,
            ),
            (r#"{"type":"text","text":"here is the answer"}"#, 40),
            (
                r#"{"type":"tool_use","id":"toolu_X","name":"Bash","input":{"command":"ls"}}"#,
                90,
            ),
        ]
        .iter()
        .enumerate()
        {
            out += &format!(
                r#"{{"parentUuid":"u-{i}-0",{common},"type":"assistant","requestId":"req_{i}","message":{{"id":"msg_{i}","type":"message","role":"assistant","model":"claude-opus-4-5","content":[{block}],"usage":{{"input_tokens":{},"cache_creation_input_tokens":10,"cache_read_input_tokens":1000,"output_tokens":{output}}}}},"uuid":"u-{i}-{}"}}"#,
                5 + i,
                k + 1
            );
            out.push('\n');
        }
        out += &format!(
            r#"{{"parentUuid":"u-{i}-3",{common},"type":"user","message":{{"role":"user","content":[{{"tool_use_id":"toolu_X","type":"tool_result","content":"result {i}: {pad}"}}]}},"uuid":"u-{i}-4"}}"#
        );
        out.push('\n');
    }
    out
}

/// Codex turns `from..to` after a `session_meta` line (for `from == 0`):
/// a prompt, a reply, a function call and its output, a token count.
fn codex_turns(from: usize, to: usize) -> String {
    let mut out = String::new();
    let pad = "consectetur adipiscing elit ".repeat(40);
    if from == 0 {
        out += &format!(
            r#"{{"timestamp":"2026-01-18T10:00:00.000Z","type":"session_meta","payload":{{"id":"{CODEX_ID}","cwd":"/work/big","cli_version":"0.50.0","git":{{"branch":"main"}}}}}}"#
        );
        out += "\n";
        out += r#"{"timestamp":"2026-01-18T10:00:00.000Z","type":"turn_context","payload":{"model":"gpt-5","cwd":"/work/big"}}"#;
        out += "\n";
    }
    for i in from..to {
        let ts = format!("2026-01-18T{:02}:{:02}:00.000Z", 10 + i % 12, i % 60);
        let n = (i + 1) as u64;
        for line in [
            format!(
                r#"{{"timestamp":"{ts}","type":"response_item","payload":{{"type":"message","role":"user","content":[{{"type":"input_text","text":"ask {i}: {pad}"}}]}}}}"#
            ),
            format!(
                r#"{{"timestamp":"{ts}","type":"response_item","payload":{{"type":"message","role":"assistant","content":[{{"type":"output_text","text":"answer {i}"}}]}}}}"#
            ),
            format!(
                r#"{{"timestamp":"{ts}","type":"response_item","payload":{{"type":"function_call","name":"shell","arguments":"{{\"cmd\":\"ls\"}}","call_id":"call_{i}"}}}}"#
            ),
            format!(
                r#"{{"timestamp":"{ts}","type":"response_item","payload":{{"type":"function_call_output","call_id":"call_{i}","output":"out {i}: {pad}"}}}}"#
            ),
            format!(
                r#"{{"timestamp":"{ts}","type":"event_msg","payload":{{"type":"token_count","info":{{"total_token_usage":{{"input_tokens":{},"cached_input_tokens":{},"output_tokens":{},"reasoning_output_tokens":0,"total_tokens":{}}}}}}}}}"#,
                100 * n,
                50 * n,
                10 * n,
                110 * n
            ),
        ] {
            out += &line;
            out.push('\n');
        }
    }
    out
}

/// A growing log at `path`, the turns written so far counted.
struct Log {
    path: PathBuf,
    turns: usize,
    gen_: fn(usize, usize) -> String,
}

impl Log {
    fn new(t: &TestProject, rel: &str, gen_: fn(usize, usize) -> String) -> Log {
        let path = t.path(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, b"").unwrap();
        Log {
            path,
            turns: 0,
            gen_,
        }
    }

    fn len(&self) -> u64 {
        std::fs::metadata(&self.path).unwrap().len()
    }

    fn append(&self, bytes: &[u8]) {
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&self.path)
            .unwrap();
        f.write_all(bytes).unwrap();
    }

    /// Appends whole turns until the log is at least `size` bytes long;
    /// returns how many bytes that appended.
    fn grow_to(&mut self, size: u64) -> u64 {
        let before = self.len();
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&self.path)
            .unwrap();
        let mut len = before;
        while len < size {
            let chunk = (self.gen_)(self.turns, self.turns + 200);
            self.turns += 200;
            f.write_all(chunk.as_bytes()).unwrap();
            len += chunk.len() as u64;
        }
        len - before
    }

    fn str(&self) -> &str {
        self.path.to_str().unwrap()
    }
}

/// Imports `log` into `t` and returns the one transcript it reports (new,
/// updated or unchanged).
#[track_caller]
fn import(t: &TestProject, log: &Log) -> Value {
    let r = t.json(&["transcript", "import", log.str()]);
    for key in ["imported", "updated", "unchanged"] {
        if let Some(i) = r[key].as_array().and_then(|a| a.first()) {
            return i.clone();
        }
    }
    panic!("nothing imported: {r:#}");
}

/// Asserts that `t` stores what a fresh import of the same log stores.
#[track_caller]
fn same_as_fresh(t: &TestProject, log: &Log) {
    let fresh = TestProject::new();
    let i = import(&fresh, log);
    assert_eq!(i["bytesRead"], log.len(), "a fresh import reads it all");
    let (mine, theirs) = (stored(t), stored(&fresh));
    assert_eq!(
        mine.keys().collect::<Vec<_>>(),
        theirs.keys().collect::<Vec<_>>()
    );
    for (name, bytes) in &mine {
        assert!(
            *bytes == theirs[name],
            "{name} differs from a fresh import ({} vs {} bytes)",
            bytes.len(),
            theirs[name].len()
        );
    }
}

fn bytes_read(i: &Value) -> u64 {
    i["bytesRead"].as_u64().unwrap()
}

/// The growing log of `gen_`, imported at each step: the first import
/// reads it all, each later one what was appended (and the start of a line
/// cut off the time before), and the stored file is a fresh import's.
fn grows_by_appends(rel: &str, gen_: fn(usize, usize) -> String, size: u64) {
    let t = TestProject::new();
    let mut log = Log::new(&t, rel, gen_);
    log.grow_to(size);
    let started = std::time::Instant::now();
    let first = import(&t, &log);
    let full = started.elapsed();
    assert_eq!(bytes_read(&first), log.len());

    // Whole lines: exactly the new bytes (and the check windows).
    let added = log.grow_to(log.len() + (1 << 20));
    let started = std::time::Instant::now();
    let i = import(&t, &log);
    let incremental = started.elapsed();
    assert!(
        (added..=added + CHECK).contains(&bytes_read(&i)),
        "read {} for {added} appended",
        bytes_read(&i)
    );
    // An append costs a fraction of the whole log (bounded loosely; the
    // release figures are in the benchmark notes of the report).
    assert!(
        incremental * 3 < full,
        "{} MiB log: full import {full:?}, {} KiB append {incremental:?}",
        log.len() >> 20,
        added >> 10
    );

    // The agent is mid-line: that line is imported as it stands (a bad
    // line) and read again next time, once whole.
    let next = (log.gen_)(log.turns, log.turns + 300);
    log.turns += 300;
    let cut = next.len() - 700;
    log.append(&next.as_bytes()[..cut]);
    let i = import(&t, &log);
    assert!(bytes_read(&i) <= cut as u64 + CHECK, "{i:#}");
    assert_eq!(i["badLines"].as_array().unwrap().len(), 1, "{i:#}");
    same_as_fresh(&t, &log);
    let partial = cut - next[..cut].rfind('\n').unwrap() - 1;

    log.append(&next.as_bytes()[cut..]);
    let i = import(&t, &log);
    let added = (next.len() - cut + partial) as u64;
    assert!(
        (added..=added + CHECK).contains(&bytes_read(&i)),
        "read {} for {added} new",
        bytes_read(&i)
    );
    assert_eq!(i["badLines"], Value::Array(vec![]));
    same_as_fresh(&t, &log);

    // Nothing new: unchanged, and read only past the checkpoint.
    let r = t.json(&["transcript", "import", log.str()]);
    assert_eq!(r["unchanged"].as_array().unwrap().len(), 1, "{r:#}");
    assert!(bytes_read(&r["unchanged"][0]) <= CHECK);
}

#[test]
fn a_50_mb_claude_code_log_is_imported_by_its_appends() {
    grows_by_appends(
        &format!("history/-work-big/{CLAUDE_ID}.jsonl"),
        claude_turns,
        50 << 20,
    );
}

#[test]
fn a_codex_log_is_imported_by_its_appends() {
    grows_by_appends(
        &format!("history/2026/01/18/rollout-2026-01-18T10-00-00-{CODEX_ID}.jsonl"),
        codex_turns,
        16 << 20,
    );
}

/// A small growing Claude Code log, imported once.
fn small(t: &TestProject) -> Log {
    let mut log = Log::new(
        t,
        &format!("history/-work-big/{CLAUDE_ID}.jsonl"),
        claude_turns,
    );
    log.grow_to(1 << 20);
    assert_eq!(bytes_read(&import(t, &log)), log.len());
    log
}

#[test]
fn a_truncated_then_regrown_log_is_imported_whole_and_right() {
    let t = TestProject::new();
    let mut log = small(&t);
    // Truncated: shorter than the checkpoint.
    let half = log.len() / 2;
    std::fs::OpenOptions::new()
        .write(true)
        .open(&log.path)
        .unwrap()
        .set_len(half)
        .unwrap();
    let i = import(&t, &log);
    assert_eq!(bytes_read(&i), half);
    same_as_fresh(&t, &log);
    // Rewritten in place from the start, as long again and more: other
    // bytes before the checkpoint.
    log.turns = 10_000;
    let other = claude_turns(10_000, 10_000 + 600);
    std::fs::write(&log.path, &other).unwrap();
    let i = import(&t, &log);
    assert_eq!(bytes_read(&i), log.len());
    same_as_fresh(&t, &log);
    // And it goes on incrementally from there.
    let added = log.grow_to(log.len() + 100_000);
    let i = import(&t, &log);
    assert!(bytes_read(&i) <= added + CHECK, "{i:#}");
    same_as_fresh(&t, &log);
}

fn cursors(t: &TestProject) -> Vec<PathBuf> {
    std::fs::read_dir(t.path(".logbook/import-cursors"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect()
}

#[test]
fn a_damaged_checkpoint_costs_a_full_import_never_a_wrong_one() {
    let t = TestProject::new();
    let mut log = small(&t);
    let cursor = cursors(&t);
    assert_eq!(cursor.len(), 1);
    let good = std::fs::read(&cursor[0]).unwrap();
    for damage in [
        b"{not json".to_vec(),
        good[..good.len() / 2].to_vec(),
        // Valid JSON that points elsewhere in the stored file.
        String::from_utf8(good.clone())
            .unwrap()
            .replacen("\"messages\":[", "\"messages\":[1", 1)
            .into_bytes(),
        // Another parser version.
        String::from_utf8(good.clone())
            .unwrap()
            .replacen("\"parserVersion\":", "\"parserVersion\":9", 1)
            .into_bytes(),
    ] {
        std::fs::write(&cursor[0], &damage).unwrap();
        log.grow_to(log.len() + 50_000);
        let i = import(&t, &log);
        assert_eq!(
            bytes_read(&i),
            log.len(),
            "{}",
            String::from_utf8_lossy(&damage)
        );
        same_as_fresh(&t, &log);
    }
    // Gone: the same.
    std::fs::remove_file(&cursor[0]).unwrap();
    log.grow_to(log.len() + 50_000);
    assert_eq!(bytes_read(&import(&t, &log)), log.len());
    same_as_fresh(&t, &log);
}

#[test]
fn a_renamed_transcript_keeps_its_name_through_the_next_imports() {
    let t = TestProject::new();
    let mut log = small(&t);
    t.run(&["transcript", "name", CLAUDE_ID, "the big one"])
        .ok();
    // The stored file is not the one checkpointed: read whole, name kept.
    log.grow_to(log.len() + 50_000);
    let i = import(&t, &log);
    assert_eq!(bytes_read(&i), log.len());
    let shown = t.json(&["transcript", "show", CLAUDE_ID]);
    assert_eq!(shown["metadata"]["name"], "the big one");
    // Then incremental again, the name still there.
    let added = log.grow_to(log.len() + 50_000);
    let i = import(&t, &log);
    assert!(bytes_read(&i) <= added + CHECK, "{i:#}");
    let shown = t.json(&["transcript", "show", CLAUDE_ID]);
    assert_eq!(shown["metadata"]["name"], "the big one");
    assert_eq!(
        shown["rawLines"].as_array().unwrap().len() as u64,
        std::fs::read_to_string(&log.path).unwrap().lines().count() as u64
    );
}

#[test]
fn what_an_append_says_is_found_after_an_incremental_import() {
    let t = TestProject::new();
    let mut log = small(&t);
    let next = claude_turns(log.turns, log.turns + 2)
        .replace("here is the answer", "here is the zanzibar answer");
    log.turns += 2;
    log.append(next.as_bytes());
    let i = import(&t, &log);
    assert!(bytes_read(&i) <= next.len() as u64 + CHECK, "{i:#}");
    let found = t.run(&["find", "--text", "zanzibar"]);
    assert!(found.ok().contains(CLAUDE_ID), "{}", found.stdout);
    // And what the first import indexed is still there (turn 0 alone says
    // "0"): the index's text went on from the checkpoint, not afresh.
    let found = t.run(&["find", "--text", "0"]);
    assert!(found.ok().contains(CLAUDE_ID), "{}", found.stdout);
    // The row the incremental import wrote (title, source, message count)
    // is the row a rebuild reads from the stored file.
    let listed = t.json(&["transcript", "list", "--all"]);
    assert_eq!(listed[0]["source"], "claude-code", "{listed:#}");
    assert!(
        !listed[0]["title"].as_str().unwrap().is_empty(),
        "{listed:#}"
    );
    t.run(&["index", "rebuild"]).ok();
    assert_eq!(t.json(&["transcript", "list", "--all"]), listed);
}

/// The indexes of the stored messages whose JSON contains `word`.
fn messages_saying(t: &TestProject, word: &str) -> Vec<u64> {
    let shown = t.json(&["transcript", "show", CLAUDE_ID]);
    shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .filter(|(_, m)| m.to_string().contains(word))
        .map(|(i, _)| i as u64)
        .collect()
}

fn find_in(t: &TestProject, args: &[&str]) -> Value {
    let mut all = vec!["transcript", "find", CLAUDE_ID];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--limit", "500"]);
    t.json(&all)
}

#[test]
fn find_in_transcript_goes_on_with_an_incremental_import() {
    let t = TestProject::new();
    let mut log = small(&t);
    let before = t.json(&["transcript", "show", CLAUDE_ID])["messages"]
        .as_array()
        .unwrap()
        .len() as u64;
    assert_eq!(find_in(&t, &["--errors"])["errorCount"], 0);
    let question_0 = find_in(&t, &["question 0:"]);
    assert_eq!(question_0["matches"][0]["message"], 0, "{question_0:#}");
    // Appended: a reply saying a new word, and a tool result that failed.
    let next = claude_turns(log.turns, log.turns + 2)
        .replace("here is the answer", "here is the zanzibar answer")
        .replacen(
            r#""type":"tool_result","content":"result"#,
            r#""type":"tool_result","is_error":true,"content":"result"#,
            1,
        );
    log.turns += 2;
    log.append(next.as_bytes());
    let i = import(&t, &log);
    assert!(bytes_read(&i) <= next.len() as u64 + CHECK, "{i:#}");
    let want = messages_saying(&t, "zanzibar");
    assert_eq!(want.len(), 2, "one reply per appended turn");
    assert!(
        want.iter().all(|m| *m >= before),
        "{want:?} before {before}"
    );
    let found: Vec<u64> = find_in(&t, &["zanzibar"])["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["message"].as_u64().unwrap())
        .collect();
    assert_eq!(found, want);
    let errors = find_in(&t, &["--errors"]);
    assert_eq!(
        errors["errors"],
        serde_json::json!(messages_saying(&t, "\"isError\":true"))
    );
    assert_eq!(errors["errorCount"], 1);
    // The rows of the messages the first import wrote are still there.
    assert_eq!(find_in(&t, &["question 0:"]), question_0);
    // And a rebuild, which reads every message of the stored file, agrees.
    t.run(&["index", "rebuild"]).ok();
    assert_eq!(
        find_in(&t, &["zanzibar"])["matches"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(find_in(&t, &["--errors"]), errors);
    assert_eq!(find_in(&t, &["question 0:"]), question_0);
}
