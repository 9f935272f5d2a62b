//! `transcript import PATH` of Claude Code and Codex logs and `transcript
//! usage`, through the real binary, on the hand-built fixtures of the
//! library crate (`crates/logbook/tests/fixtures/agent_log`, whose tests
//! work the totals out line by line).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::harness::TestProject;

const MAIN_ID: &str = "11111111-2222-4333-8444-555566667777";
const CODEX: &str =
    "codex/2026/01/18/rollout-2026-01-18T10-00-00-0199aaaa-bbbb-7ccc-8ddd-eeeeffff0001.jsonl";
const CUT: &str = "claude/-work-cut/44444444-5555-4666-8777-888899990000.jsonl";

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../logbook/tests/fixtures/agent_log")
}

/// Copies the fixture tree into `history/` of the project (so a test can
/// grow a log) and returns that folder.
fn history(t: &TestProject) -> PathBuf {
    fn copy(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                copy(&e.path(), &to.join(e.file_name()));
            } else {
                std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
            }
        }
    }
    let to = t.path("history");
    copy(&fixtures(), &to);
    to
}

/// Every stored transcript file, by name, with its bytes.
pub(crate) fn stored(t: &TestProject) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(t.path(".logbook/transcripts"))
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_file())
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect()
}

fn ids(list: &Value) -> Vec<String> {
    let mut out: Vec<String> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_str().unwrap().to_string())
        .collect();
    out.sort();
    out
}

#[test]
fn a_folder_imports_once_and_again_changes_nothing() {
    let t = TestProject::new();
    let h = history(&t);
    let first = t.json(&["transcript", "import", h.to_str().unwrap()]);
    // 5 Claude Code sessions (one a subagent) and 1 Codex session.
    assert_eq!(first["imported"].as_array().unwrap().len(), 6, "{first:#}");
    for key in ["updated", "unchanged", "skipped"] {
        assert_eq!(first[key], Value::Array(vec![]), "{key}: {first:#}");
    }
    let before = stored(&t);
    assert_eq!(before.len(), 6);
    assert!(before.contains_key("session_66667777.json"));
    assert!(before.contains_key("session_ffff0001.json"));
    let sub = first["imported"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["kind"] == "subagent")
        .unwrap();
    assert_eq!(sub["parentSessionId"], MAIN_ID);
    assert!(
        sub["file"]
            .as_str()
            .unwrap()
            .contains(".logbook/transcripts/subagent_session_")
    );

    // Twice: the same files, byte for byte, and nothing written.
    let second = t.json(&["transcript", "import", h.to_str().unwrap()]);
    assert_eq!(ids(&second["unchanged"]), ids(&first["imported"]));
    // Known by the log's name, size and bytes, without parsing it again.
    let main = second["unchanged"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["id"] == MAIN_ID)
        .unwrap();
    assert_eq!(main["messages"], 5);
    assert_eq!(main["totalTokens"], 2617);
    assert_eq!(second["imported"], Value::Array(vec![]));
    assert_eq!(second["updated"], Value::Array(vec![]));
    assert_eq!(stored(&t), before);

    // The stored file is seed 003's 2-space JSON, with every source line.
    let text = String::from_utf8(before["session_66667777.json"].clone()).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        format!("{}\n", serde_json::to_string_pretty(&v).unwrap()),
        text
    );
    let source =
        std::fs::read_to_string(h.join(format!("claude/-work-demo/{MAIN_ID}.jsonl"))).unwrap();
    let raw: Vec<&str> = v["rawLines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    assert_eq!(raw, source.lines().collect::<Vec<_>>());
    // Line 10 is of an unknown type: kept as it was, fields and all.
    assert!(raw[9].contains("\"futureField\":{\"nested\":[1,2,3]}"));
    assert_eq!(v["metadata"]["source"]["unknownTypes"]["telemetry-ping"], 1);
    assert_eq!(v["metadata"]["workdir"], "/work/demo");
    assert_eq!(v["metadata"]["startedAt"], "2026-01-18T10:00:01.000Z");
    assert_eq!(v["metadata"]["lastActiveAt"], "2026-01-18T10:00:09.000Z");
    assert_eq!(v["timestamp"], "2026-01-18T10:00:09.000Z");
    assert_eq!(v["messages"].as_array().unwrap().len(), 5);

    // Listed, shown and counted like any transcript.
    let list = t.json(&["transcript", "list", "--all"]);
    assert_eq!(list.as_array().unwrap().len(), 6);
    let shown = t.json(&["transcript", "show", MAIN_ID]);
    assert_eq!(shown["messages"][0]["blocks"][0]["content"], "Add a README");
}

#[test]
fn a_grown_log_is_updated_in_place() {
    let t = TestProject::new();
    let h = history(&t);
    let log = h.join(CODEX);
    let first = t.json(&["transcript", "import", log.to_str().unwrap()]);
    let file = first["imported"][0]["file"].as_str().unwrap().to_string();
    assert_eq!(first["imported"][0]["totalTokens"], 2760);

    // The agent goes on: half a line first (a write in progress).
    let more = concat!(
        r#"{"timestamp":"2026-01-18T10:05:00.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Also updated the docs."}]}}"#,
        "\n",
        r#"{"timestamp":"2026-01-18T10:05:01.000Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":4000,"cached_input_tokens":2500,"output_tokens":300,"reasoning_output_tokens":50,"total_tokens":4300},"last_token_usage":{"input_tokens":1500,"cached_input_tokens":700,"output_tokens":40,"reasoning_output_tokens":0,"total_tokens":1540}}}}"#,
        "\n"
    );
    let (head, tail) = more.split_at(60);
    let append = |s: &str| {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
        f.write_all(s.as_bytes()).unwrap();
    };
    append(head);
    let mid = t.run(&["--json", "transcript", "import", log.to_str().unwrap()]);
    let mid_json = mid.json();
    assert_eq!(mid_json["updated"][0]["file"], file.as_str());
    // Line 16 is cut off: reported, the other 15 imported as before.
    assert_eq!(mid_json["updated"][0]["badLines"][0]["line"], 16);
    assert!(
        mid.stderr.contains(&format!(
            "{}:16: truncated line",
            log.canonicalize().unwrap().display()
        )),
        "{}",
        mid.stderr
    );
    assert_eq!(mid_json["updated"][0]["totalTokens"], 2760);

    append(tail);
    let after = t.json(&["transcript", "import", log.to_str().unwrap()]);
    // Same transcript, same file: 2760 grew to 4300 (+1540 for gpt-5).
    assert_eq!(after["updated"][0]["file"], file.as_str());
    assert_eq!(after["updated"][0]["totalTokens"], 4300);
    assert_eq!(after["updated"][0]["badLines"], Value::Array(vec![]));
    assert_eq!(after["updated"][0]["messages"], 7);
    let shown = t.json(&["transcript", "show", "0199aaaa-bbbb-7ccc-8ddd-eeeeffff0001"]);
    assert_eq!(shown["rawLines"].as_array().unwrap().len(), 17);
    assert_eq!(
        shown["metadata"]["usage"]["byModel"]["gpt-5"]["total_tokens"],
        3100
    );
    assert_eq!(
        shown["metadata"]["lastActiveAt"],
        "2026-01-18T10:05:01.000Z"
    );
    assert_eq!(
        std::fs::read_dir(t.path(".logbook/transcripts"))
            .unwrap()
            .count(),
        1
    );
    // And once more: unchanged.
    let again = t.json(&["transcript", "import", log.to_str().unwrap()]);
    assert_eq!(again["unchanged"].as_array().unwrap().len(), 1);
}

#[test]
fn a_corrupt_line_is_named_by_file_and_line_and_the_rest_imported() {
    let t = TestProject::new();
    let h = history(&t);
    let log = h.join(CUT);
    let r = t.run(&["transcript", "import", log.to_str().unwrap()]);
    let out = r.ok();
    assert!(
        out.contains("Imported main 44444444-5555-4666-8777-888899990000"),
        "{out}"
    );
    let at = log.canonicalize().unwrap().display().to_string();
    assert!(
        r.stderr.contains(&format!("{at}:2: not JSON")),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains(&format!("{at}:4: truncated line")),
        "{}",
        r.stderr
    );
    let shown = t.json(&["transcript", "show", "44444444"]);
    // Lines 1 and 3 became messages; all four lines are kept.
    assert_eq!(shown["messages"].as_array().unwrap().len(), 2);
    assert_eq!(shown["rawLines"][1], "{oops this line is not JSON");
    assert_eq!(shown["metadata"]["source"]["badLines"][0]["line"], 2);
}

#[test]
fn files_that_are_not_agent_logs_are_skipped_with_a_reason() {
    let t = TestProject::new();
    t.write("in/notes.jsonl", "{\"a\":1}\n{\"b\":2}\n");
    t.write("in/empty.jsonl", "");
    t.write("in/readme.txt", "not looked at");
    let r = t.json(&["transcript", "import", "in"]);
    let skipped = r["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 2, "{r:#}");
    let reasons: Vec<&str> = skipped
        .iter()
        .map(|s| s["reason"].as_str().unwrap())
        .collect();
    assert!(
        reasons
            .iter()
            .any(|r| r.contains("not a Claude Code or Codex log")),
        "{reasons:?}"
    );
    // Forcing the format reads it, and finds nothing to keep: a file named
    // on its own that imports nothing fails.
    let forced = t.run(&[
        "transcript",
        "import",
        "in/notes.jsonl",
        "--format",
        "claude-code",
    ]);
    assert!(forced.err().contains("no messages"), "{}", forced.stderr);
    let missing = t.run(&["transcript", "import", "nowhere"]);
    assert!(
        missing.not_found().contains("nowhere"),
        "{}",
        missing.stderr
    );
}

#[test]
fn a_named_file_that_imports_nothing_fails_and_says_why() {
    let t = TestProject::new();
    t.write("junk.jsonl", "<html>not a log</html>\n");
    t.write("junk.txt", "%PDF-1.7 binary-ish\n");
    t.write("empty.jsonl", "");
    t.write("empty.json", "");
    for (file, why) in [
        ("junk.jsonl", "not a recognised transcript format"),
        ("junk.txt", "not a recognised transcript format"),
        ("empty.jsonl", "empty file"),
        ("empty.json", "empty file"),
    ] {
        let r = t.run(&["transcript", "import", file]);
        let e = r.err();
        assert!(
            e.starts_with(&format!("error: {file}: nothing imported: {why}")),
            "{file}: {e}"
        );
        assert!(r.stdout.is_empty(), "{file}: {}", r.stdout);
    }
    assert!(!t.path(".logbook/transcripts").exists());
}

#[test]
fn every_file_skipped_in_a_folder_is_named_once_with_its_reason() {
    let t = TestProject::new();
    let dir = history(&t);
    t.write("history/junk.jsonl", "{\"a\":1}\n");
    t.write("history/empty.jsonl", "");
    let fifo = dir.join("live.jsonl");
    t.mkfifo(&fifo);
    std::os::unix::fs::symlink(dir.join(CUT), dir.join("alias.jsonl")).unwrap();
    let r = t.run_bounded(&["transcript", "import", "history"]);
    let out = r.ok();
    for (file, why) in [
        ("junk.jsonl", "not a recognised transcript format"),
        ("empty.jsonl", "empty file"),
        ("live.jsonl", "FIFO"),
        ("alias.jsonl", "symlink"),
    ] {
        let lines: Vec<&str> = out
            .lines()
            .filter(|l| l.starts_with("Skipped ") && l.contains(file))
            .collect();
        assert_eq!(lines.len(), 1, "{file} named once: {out}");
        assert!(lines[0].contains(why), "{file}: {}", lines[0]);
    }
    assert!(out.contains(" 4 skipped"), "{out}");
    let json = t.json(&["transcript", "import", "history"]);
    assert_eq!(json["skipped"].as_array().unwrap().len(), 4, "{json:#}");
}

#[test]
fn a_symlink_loop_is_called_a_symlink_loop() {
    let t = TestProject::new();
    std::os::unix::fs::symlink(t.path("b.jsonl"), t.path("a.jsonl")).unwrap();
    std::os::unix::fs::symlink(t.path("a.jsonl"), t.path("b.jsonl")).unwrap();
    let r = t.run(&["transcript", "import", "a.jsonl"]);
    let e = r.err();
    assert!(e.contains("symlink loop") && e.contains("a.jsonl"), "{e}");
    assert!(!e.contains("not found"), "{e}");
}

#[test]
fn usage_is_exact_and_subagents_roll_up() {
    let t = TestProject::new();
    let h = history(&t);
    t.json(&["transcript", "import", h.to_str().unwrap()]);

    // The main session alone: opus 2615 + haiku 2 = 2617 (see the library
    // test); its subagent: haiku 185. Rolled up: 2802.
    let one = t.json(&["transcript", "usage", MAIN_ID]);
    let ts = one["transcripts"].as_array().unwrap();
    assert_eq!(ts.len(), 2);
    let main = ts.iter().find(|t| t["id"] == MAIN_ID).unwrap();
    let sub = ts.iter().find(|t| t["kind"] == "subagent").unwrap();
    assert_eq!(main["usage"]["total_tokens"], 2617);
    assert_eq!(main["usage"]["output_tokens"], 201);
    assert_eq!(main["withSubagents"]["total_tokens"], 2802);
    assert_eq!(sub["usage"]["total_tokens"], 185);
    assert_eq!(sub["parentSessionId"], MAIN_ID);
    assert_eq!(one["total"]["total_tokens"], 2802);
    let rows: BTreeMap<String, u64> = one["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["key"].as_str().unwrap().to_string(),
                r["total_tokens"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(rows["claude-opus-4-5"], 2615);
    assert_eq!(rows["claude-haiku-4-5"], 187);
    for key in [
        "input_tokens",
        "output_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
        "cached_input_tokens",
        "reasoning_output_tokens",
        "total_tokens",
    ] {
        assert!(one["total"].get(key).is_some(), "missing {key}");
    }

    // Everything: 2802 + Codex 2760 + old 415 + compacted 490 + cut 15 =
    // 6482, each counted once; per session the subagent is in its parent.
    let all = t.json(&["transcript", "usage", "--all", "--by", "session"]);
    assert_eq!(all["total"]["total_tokens"], 6482);
    let rows = all["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 5);
    assert_eq!(rows[0]["key"], MAIN_ID);
    assert_eq!(rows[0]["total_tokens"], 2802);
    let days = t.json(&["transcript", "usage", "--all", "--by", "day"]);
    assert_eq!(days["rows"][0]["key"], "2026-01-17");
    assert_eq!(days["rows"][0]["total_tokens"], 120);
    assert_eq!(days["rows"][1]["total_tokens"], 6362);
    // The project's own workdir has none of them.
    let here = t.run(&["transcript", "usage"]);
    assert!(
        here.ok().contains("No measured usage for this project"),
        "{}",
        here.stdout
    );
}

#[test]
fn work_sessions_take_measured_tokens_from_transcripts() {
    let t = TestProject::new();
    let h = history(&t);
    t.json(&["transcript", "import", h.to_str().unwrap()]);
    t.json(&["start", "--client", "acme", "--project", "AUDIT"]);

    // The compacted session: 330 before the compaction (its peak), 160 at
    // its last call after it.
    let s = t.json(&["usage", "--from-transcript", "33333333"]);
    assert_eq!(s["tokens"]["current"], 160);
    assert_eq!(s["tokens"]["peak"], 330);

    // The subagent's calls reached 60, 80 and 105 tokens of context: 105 is
    // what its work would have added to the main context.
    let sub = t.json(&["transcript", "list", "--all", "--subagents"]);
    let sub_id = sub[0]["id"].as_str().unwrap().to_string();
    let agent = t.json(&["agent", "spawn", "analyst"]);
    let agent_id = agent["id"].as_str().unwrap();
    let s = t.json(&["agent", "done", agent_id, "--transcript", &sub_id]);
    assert_eq!(s["agents_spawned"][0]["tokens_used"], 105);
    assert_eq!(s["tokens"]["saved"], 105);
    // --tokens and --transcript are one or the other.
    t.run(&[
        "agent",
        "done",
        agent_id,
        "--tokens",
        "5",
        "--transcript",
        &sub_id,
    ])
    .usage();
    let missing = t.run(&["usage", "--from-transcript", "99999999"]);
    assert!(
        missing.not_found().contains("transcript"),
        "{}",
        missing.stderr
    );
}

#[test]
fn watch_imports_what_the_agent_writes_next() {
    use std::io::{BufRead, BufReader, Write};
    let t = TestProject::new();
    let h = history(&t);
    let dir = h.join("codex");
    let mut child = t
        .cmd(&[
            "--json",
            "transcript",
            "import",
            dir.to_str().unwrap(),
            "--watch",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if tx.send(line.unwrap()).is_err() {
                break;
            }
        }
    });
    let wait = std::time::Duration::from_secs(30);
    // One JSON line per round: first the initial import.
    let first: Value = serde_json::from_str(&rx.recv_timeout(wait).unwrap()).unwrap();
    assert_eq!(first["imported"].as_array().unwrap().len(), 1, "{first}");
    // The watcher is set up before that line is printed: the line is the
    // readiness signal, so the append below is seen without waiting.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(h.join(CODEX))
        .unwrap();
    writeln!(
        f,
        r#"{{"timestamp":"2026-01-18T10:06:00.000Z","type":"response_item","payload":{{"type":"message","role":"user","content":[{{"type":"input_text","text":"And the docs?"}}]}}}}"#
    )
    .unwrap();
    drop(f);
    let next = rx.recv_timeout(wait);
    let _ = child.kill();
    let _ = child.wait();
    let next: Value = serde_json::from_str(&next.expect("no import after the log grew")).unwrap();
    assert_eq!(next["updated"][0]["messages"], 7, "{next}");
}

#[test]
fn from_home_imports_the_agents_own_folders() {
    let mut t = TestProject::new();
    let h = history(&t);
    let home = t.path("home");
    let copy = |from: &str, to: PathBuf| {
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(h.join(from), to).unwrap();
    };
    copy(
        &format!("claude/-work-demo/{MAIN_ID}.jsonl"),
        home.join(format!(".claude/projects/-work-demo/{MAIN_ID}.jsonl")),
    );
    copy(CODEX, home.join(".codex/sessions/2026/01/18/rollout.jsonl"));
    // A second Claude Code config folder, as $CLAUDE_CONFIG_DIR names it.
    copy(
        CUT,
        t.path("other-claude/projects/-work-cut/44444444-5555-4666-8777-888899990000.jsonl"),
    );
    t.envs
        .push(("HOME".into(), home.to_string_lossy().into_owned()));
    t.envs.push((
        "CLAUDE_CONFIG_DIR".into(),
        t.path("other-claude").to_string_lossy().into_owned(),
    ));
    let r = t.json(&["transcript", "import", "--from-home"]);
    assert_eq!(ids(&r["imported"]).len(), 3, "{r:#}");
    assert!(ids(&r["imported"]).contains(&MAIN_ID.to_string()));
    // Neither a PATH nor --from-home: bad usage.
    t.run(&["transcript", "import"]).usage();
}

#[test]
fn list_filters_by_source_model_workdir_and_time() {
    let t = TestProject::new();
    let h = history(&t);
    t.json(&["transcript", "import", h.to_str().unwrap()]);
    let count = |args: &[&str]| {
        let mut all = vec!["transcript", "list"];
        all.extend_from_slice(args);
        t.json(&all).as_array().unwrap().len()
    };
    assert_eq!(count(&["--all"]), 6);
    assert_eq!(count(&["--all", "--source", "codex"]), 1);
    assert_eq!(count(&["--all", "--source", "claude-code"]), 5);
    assert_eq!(count(&["--all", "--source", "logbook"]), 0);
    // Opus: only the main demo session; haiku: it and its subagent.
    assert_eq!(count(&["--all", "--model", "opus"]), 1);
    assert_eq!(count(&["--all", "--model", "HAIKU"]), 2);
    // --workdir looks beyond this project by itself.
    assert_eq!(count(&["--workdir", "/work/demo"]), 2);
    assert_eq!(count(&["--workdir", "/work/demo", "--subagents"]), 1);
    // Active since noon: the compacted session (12:03) and the cut one (13:00).
    assert_eq!(count(&["--all", "--since", "2026-01-18T12:00:00Z"]), 2);
    // Begun before midnight: the old session (23:59 on the 17th).
    assert_eq!(count(&["--all", "--until", "2026-01-18T00:00:00Z"]), 1);
    // Words said in the messages, all of them, case aside.
    assert_eq!(count(&["--all", "--text", "readme"]), 1);
    assert_eq!(count(&["--all", "--text", "FAILING tests"]), 1);
    assert_eq!(count(&["--all", "--text", "config Cargo.toml"]), 1);
    assert_eq!(count(&["--all", "--text", "failing readme"]), 0);
    assert_eq!(
        count(&["--all", "--source", "codex", "--text", "readme"]),
        0
    );
}

#[test]
fn a_call_copied_into_a_resumed_session_counts_once() {
    let t = TestProject::new();
    let h = history(&t);
    // A resumed session: Claude Code copied msg_B (line 7 of the demo
    // session: 5 + 20 + 1300 = 1325) into the new file, then made one new
    // call, msg_E: 7 + 3 = 10.
    let demo =
        std::fs::read_to_string(h.join(format!("claude/-work-demo/{MAIN_ID}.jsonl"))).unwrap();
    let resumed = "55555555-6666-4777-8888-999900001111";
    let copied = demo
        .lines()
        .nth(6)
        .unwrap()
        .replace(MAIN_ID, resumed)
        .replace(
            "00000000-0000-4000-8000-000000000007",
            "00000000-0000-4000-8000-0000000000e1",
        );
    let new_call = format!(
        r#"{{"type":"assistant","sessionId":"{resumed}","cwd":"/work/demo","uuid":"00000000-0000-4000-8000-0000000000e2","timestamp":"2026-01-18T11:00:05.000Z","requestId":"req_E","message":{{"id":"msg_E","model":"claude-opus-4-5","content":[{{"type":"text","text":"Resumed."}}],"usage":{{"input_tokens":7,"output_tokens":3}}}}}}"#
    );
    let first = format!(
        r#"{{"type":"user","sessionId":"{resumed}","cwd":"/work/demo","uuid":"00000000-0000-4000-8000-0000000000e0","timestamp":"2026-01-18T11:00:00.000Z","message":{{"role":"user","content":"Go on"}}}}"#
    );
    t.write(
        &format!("history/claude/-work-demo/{resumed}.jsonl"),
        &format!("{first}\n{copied}\n{new_call}\n"),
    );
    t.json(&["transcript", "import", h.to_str().unwrap()]);
    // On its own, the resumed session's log holds 1325 + 10 = 1335.
    let alone = t.json(&["transcript", "usage", resumed]);
    assert_eq!(alone["total"]["total_tokens"], 1335);
    // With the session it was resumed from (which began first), msg_B
    // counts once: 6482 (see usage_is_exact_and_subagents_roll_up) + 10.
    let all = t.json(&["transcript", "usage", "--all"]);
    assert_eq!(all["total"]["total_tokens"], 6492);
    assert_eq!(all["duplicates"]["total_tokens"], 1325);
    let r = all["transcripts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == resumed)
        .unwrap();
    assert_eq!(r["usage"]["total_tokens"], 10);
    assert_eq!(r["duplicates"]["output_tokens"], 20);
    let human = t.run(&["transcript", "usage", "--all"]);
    assert!(
        human
            .ok()
            .contains("1,325 tokens of calls found in more than one log"),
        "{}",
        human.stdout
    );
}

#[test]
fn on_a_terminal_the_import_shows_progress_and_then_its_summary() {
    let t = TestProject::new();
    let h = history(&t);
    let r =
        crate::harness::on_terminal(&t, &format!("transcript import {}", h.display()), "", true);
    assert!(
        r.stdout
            .contains("6 imported, 0 updated, 0 unchanged, 0 skipped"),
        "{}",
        r.stdout
    );
}

/// A Claude Code log whose first line is huge (a pasted file): recognised
/// by the start of that line, and imported holding the line about once,
/// not six times; the stored raw line is the log's, byte for byte.
#[test]
fn a_log_whose_first_line_is_huge_is_recognised_and_imported_in_bounded_memory() {
    const LINE: usize = 32 << 20;
    let t = TestProject::new();
    let id = "55555555-6666-4777-8888-999900001111";
    let filler = "pasted text with \"quotes\", a tab\tand a newline\n";
    let text = filler.repeat(LINE / filler.len());
    // In the order Claude Code writes its keys: what names the agent comes
    // before the message.
    let first = format!(
        r#"{{"parentUuid":null,"isSidechain":false,"cwd":"/w","sessionId":"{id}","version":"2.0.1","type":"user","message":{{"role":"user","content":{}}},"uuid":"u1","timestamp":"2026-01-18T10:00:00.000Z"}}"#,
        serde_json::to_string(&text).unwrap()
    );
    let second = serde_json::json!({
        "sessionId": id, "type": "assistant", "requestId": "r1", "uuid": "u2",
        "timestamp": "2026-01-18T10:00:01.000Z",
        "message": {"id": "m1", "role": "assistant", "model": "claude-x",
            "content": [{"type": "text", "text": "ok"}],
            "usage": {"input_tokens": 10, "output_tokens": 5}},
    })
    .to_string();
    let log = t.write(&format!("{id}.jsonl"), &format!("{first}\n{second}\n"));
    let longest = first.len() as u64;
    let (r, peak) = t.run_peak_memory(
        &["--json", "transcript", "import", log.to_str().unwrap()],
        Duration::from_secs(300),
    );
    let report: Value = serde_json::from_str(r.ok()).unwrap();
    assert_eq!(report["imported"][0]["format"], "claude-code", "{report:#}");
    assert_eq!(report["imported"][0]["messages"], 2);
    let limit = 3 * longest + (64 << 20);
    assert!(
        peak <= limit,
        "peak {} MiB over 3 x the {} MiB line + 64 MiB",
        peak >> 20,
        longest >> 20
    );
    let (_, stored) = stored(&t).into_iter().next().unwrap();
    let stored: Value = serde_json::from_slice(&stored).unwrap();
    assert_eq!(stored["rawLines"][0].as_str().unwrap(), first);
    assert_eq!(
        stored["messages"][0]["blocks"][0]["content"]
            .as_str()
            .unwrap(),
        text
    );
}

/// Each listed transcript's title and source, by id.
fn titles(t: &TestProject) -> BTreeMap<String, (String, String)> {
    t.json(&["transcript", "list", "--all"])
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let s = |k: &str| r[k].as_str().unwrap().to_string();
            (s("id"), (s("title"), s("source")))
        })
        .collect()
}

#[test]
fn list_titles_are_the_name_else_the_agents_summary_else_the_first_prompt() {
    let t = TestProject::new();
    let h = history(&t);
    t.json(&["transcript", "import", h.to_str().unwrap()]);
    let got = titles(&t);
    let title = |id: &str| got[id].clone();
    // Its log's `summary` line, not its first prompt ("Plan the release").
    assert_eq!(
        title("22222222-3333-4444-8555-666677778888"),
        ("Release planning".into(), "claude-code".into())
    );
    // No summary: the first prompt.
    assert_eq!(
        title(MAIN_ID),
        ("Add a README".into(), "claude-code".into())
    );
    assert_eq!(
        title("0199aaaa-bbbb-7ccc-8ddd-eeeeffff0001"),
        ("Fix the failing tests".into(), "codex".into())
    );
    // A name given wins over both, and the human listing shows it.
    t.run(&["transcript", "name", "22222222", "Q1 release"])
        .ok();
    t.run(&["transcript", "name", MAIN_ID, "Docs pass"]).ok();
    let named = titles(&t);
    assert_eq!(
        named["22222222-3333-4444-8555-666677778888"].0,
        "Q1 release"
    );
    assert_eq!(named[MAIN_ID].0, "Docs pass");
    let human = t.run(&["transcript", "list", "--all"]);
    let line = human
        .ok()
        .lines()
        .find(|l| l.contains(MAIN_ID))
        .unwrap()
        .to_string();
    assert!(
        line.contains("claude-code") && line.ends_with("Docs pass"),
        "{line}"
    );
    assert!(line.contains("5 msgs"), "{line}");
    // A rebuilt index, and a re-import, keep every title.
    t.run(&["index", "rebuild"]).ok();
    assert_eq!(titles(&t), named);
    t.json(&["transcript", "import", h.to_str().unwrap()]);
    assert_eq!(titles(&t), named);
}

#[test]
fn a_title_from_the_first_prompt_skips_what_the_agent_wrote_and_is_cut_at_a_word() {
    let t = TestProject::new();
    let id = "55555555-6666-4777-8888-999900001111";
    let prompt = "Please look at the importer and make the transcript list show a title \
                  for each session that people can recognise";
    let line = |n: u32, content: &str| {
        serde_json::json!({
            "sessionId": id, "type": "user", "cwd": "/w", "uuid": format!("u{n}"),
            "timestamp": format!("2026-01-18T10:00:0{n}.000Z"),
            "message": {"role": "user", "content": content},
        })
        .to_string()
    };
    let log = [
        line(1, "<command-name>/clear</command-name>"),
        line(
            2,
            "Caveat: The messages below were generated by the user while running local commands.",
        ),
        line(3, prompt),
    ]
    .join("\n");
    let file = t.write(&format!("logs/{id}.jsonl"), &format!("{log}\n"));
    t.json(&["transcript", "import", file.to_str().unwrap()]);
    let (title, source) = titles(&t)[id].clone();
    assert_eq!(source, "claude-code");
    let kept = title.strip_suffix('…').expect("cut with …");
    assert!(title.chars().count() <= 80, "{title}");
    assert!(prompt.starts_with(kept), "{title}");
    assert!(
        prompt[kept.len()..].starts_with(' '),
        "cut between words: {title}"
    );
    assert_eq!(
        kept,
        "Please look at the importer and make the transcript list show a title for each"
    );
}

/// Issue 45: `transcript import --json` prints the documented import report
/// for every input kind: a seed 003 file as for a Claude Code log, a Codex
/// log and a folder, each entry with the documented keys.
#[test]
fn every_input_kind_prints_the_import_report() {
    let t = TestProject::new();
    let h = history(&t);
    let seed = t.write(
        "exports/session_9d8e7f6a.json",
        r#"{"id": "0d9e8f7a-6b5c-4d3e-8f2a-1b0c9d8e7f6a", "timestamp": "2026-03-02T14:05:00.000Z",
 "version": "1.0.0",
 "messages": [{"role": "user", "blocks": [{"type": "text", "content": "Order 12 monitors"}]},
              {"role": "assistant", "blocks": [{"type": "text", "content": "Quotes requested"}],
               "usage": {"prompt_tokens": 640, "completion_tokens": 96, "total_tokens": 736}}],
 "metadata": {"workdir": "/srv/procurement", "startedAt": "2026-03-02T14:00:00.000Z",
              "lastActiveAt": "2026-03-02T14:05:00.000Z", "latestTotalTokens": 736}}"#,
    );
    let entry_keys = [
        "source",
        "format",
        "id",
        "kind",
        "file",
        "messages",
        "parentSessionId",
        "totalTokens",
        "badLines",
        "bytesRead",
    ];
    let check = |report: &Value, list: &str, format: &str| {
        for key in ["imported", "updated", "unchanged", "skipped"] {
            assert!(report[key].is_array(), "{key} in {report}");
        }
        let entry = &report[list][0];
        for key in entry_keys {
            assert!(
                entry.get(key).is_some(),
                "{key} missing in {list} of {report}"
            );
        }
        assert_eq!(entry["format"], format, "{entry}");
    };
    let first = t.json(&["transcript", "import", seed.to_str().unwrap()]);
    check(&first, "imported", "logbook");
    let entry = &first["imported"][0];
    assert_eq!(entry["id"], "0d9e8f7a-6b5c-4d3e-8f2a-1b0c9d8e7f6a");
    assert_eq!(entry["kind"], "main");
    assert_eq!(entry["messages"], 2);
    assert_eq!(entry["totalTokens"], 736);
    // What the answer was before, still there for earlier scripts.
    assert_eq!(first["id"], entry["id"]);
    assert_eq!(first["file"], entry["file"]);
    // Again: unchanged, in the same report.
    let again = t.json(&["transcript", "import", seed.to_str().unwrap()]);
    check(&again, "unchanged", "logbook");
    assert_eq!(again["imported"], serde_json::json!([]));
    // --format logbook and --subagent take the same path.
    let sub = t.write(
        "exports/subagent_session_49382716.json",
        r#"{"id": "5e4d3c2b-1a09-4f8e-9d7c-6b5a49382716", "timestamp": "2026-03-02T14:03:00.000Z",
 "messages": [], "metadata": {"workdir": "/srv/procurement",
 "startedAt": "2026-03-02T14:01:00.000Z", "lastActiveAt": "2026-03-02T14:03:00.000Z"}}"#,
    );
    let r = t.json(&[
        "transcript",
        "import",
        sub.to_str().unwrap(),
        "--subagent",
        "--parent",
        "0d9e8f7a-6b5c-4d3e-8f2a-1b0c9d8e7f6a",
    ]);
    check(&r, "imported", "logbook");
    assert_eq!(r["imported"][0]["kind"], "subagent");
    assert_eq!(
        r["imported"][0]["parentSessionId"],
        "0d9e8f7a-6b5c-4d3e-8f2a-1b0c9d8e7f6a"
    );
    // A Claude Code log, a Codex log and a folder: the same shape.
    let log = h.join("claude/-work-demo").join(format!("{MAIN_ID}.jsonl"));
    check(
        &t.json(&["transcript", "import", log.to_str().unwrap()]),
        "imported",
        "claude-code",
    );
    check(
        &t.json(&["transcript", "import", h.join(CODEX).to_str().unwrap()]),
        "imported",
        "codex",
    );
    let folder = t.json(&["transcript", "import", t.path("exports").to_str().unwrap()]);
    assert_eq!(folder["imported"], serde_json::json!([]), "{folder}");
    check(&folder, "unchanged", "logbook");
    assert!(folder.get("id").is_none(), "{folder}");
}

/// Seed 003's reader, written from the seed: `listSessions` keeps the files
/// that start with `session_` or `subagent_session_`, and
/// `getSessionFilePath` names one `{prefix}_{shortId}.json` with `shortId`
/// the id's last 8 characters (an id without `_`).
fn seed_003_load_all(dir: &Path) -> Vec<Value> {
    let mut out = vec![];
    for e in std::fs::read_dir(dir).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        if !(name.starts_with("session_") || name.starts_with("subagent_session_")) {
            continue;
        }
        let file: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join(&name)).unwrap()).unwrap();
        let id = file["id"].as_str().unwrap();
        let short = id.split('_').nth(2).unwrap_or(&id[id.len() - 8..]);
        let prefix = if name.starts_with("sub") {
            "subagent_session"
        } else {
            "session"
        };
        assert_eq!(name, format!("{prefix}_{short}.json"));
        out.push(file);
    }
    out
}

/// Issue 45: an imported Claude Code or Codex session is in seed 003's shape
/// as well: a tool's result is in its `tool` block, and a message's usage
/// carries `prompt_tokens`, `completion_tokens` and `total_tokens` (prompt
/// and completion adding up to the total, by the rule OTLP export uses),
/// while the `tool_result` blocks and the agents' own counts stay.
#[test]
fn imported_sessions_read_in_seed_003s_shape() {
    let t = TestProject::new();
    let h = history(&t);
    let log = h.join("claude/-work-demo").join(format!("{MAIN_ID}.jsonl"));
    t.json(&["transcript", "import", log.to_str().unwrap()]);
    t.json(&["transcript", "import", h.join(CODEX).to_str().unwrap()]);
    let all = seed_003_load_all(&t.path(".logbook/transcripts"));
    assert!(all.len() >= 2, "{}", all.len());
    let mut with_result = 0;
    let mut with_tokens = 0;
    for file in &all {
        let source = file["metadata"]["source"]["format"].clone();
        for m in file["messages"].as_array().unwrap() {
            for b in m["blocks"].as_array().unwrap() {
                if b["type"] == "tool" {
                    assert!(
                        b["result"].is_string(),
                        "{source}: a tool without result: {b}"
                    );
                    with_result += 1;
                }
            }
            if m["usage"].is_object() {
                let u = &m["usage"];
                let (p, c, total) = (
                    u["prompt_tokens"].as_u64().unwrap(),
                    u["completion_tokens"].as_u64().unwrap(),
                    u["total_tokens"].as_u64().unwrap(),
                );
                assert_eq!(p + c, total, "{u}");
                assert_eq!(
                    p,
                    u["input_tokens"].as_u64().unwrap()
                        + u["cache_creation_input_tokens"].as_u64().unwrap()
                        + u["cache_read_input_tokens"].as_u64().unwrap(),
                    "{u}"
                );
                assert_eq!(c, u["output_tokens"].as_u64().unwrap());
                with_tokens += 1;
            }
        }
        // Nothing read before is lost: the tool_result blocks stay.
        let text = file.to_string();
        if text.contains("\"type\":\"tool\"") {
            assert!(text.contains("\"type\":\"tool_result\""), "{source}");
        }
    }
    assert!(
        with_result >= 2,
        "tool blocks with their result: {with_result}"
    );
    assert!(
        with_tokens >= 1,
        "messages with seed 003 token counts: {with_tokens}"
    );
    // The same results and counts through `transcript show`.
    let shown = t.json(&["transcript", "show", MAIN_ID]);
    let tool = shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["blocks"].as_array().unwrap())
        .find(|b| b["type"] == "tool")
        .cloned()
        .unwrap();
    assert!(tool["result"].is_string(), "{tool}");
}
