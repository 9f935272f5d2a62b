//! `transcript find ID TEXT [--errors]`: which messages of one transcript
//! say some words (a word in a tool result, in a Bash command), FTS syntax
//! searched as typed, where the failed tool results are, and the index's
//! per-message rows through rebuild, prune and rename.

use logbook::Logbook;
use logbook::testing::index::Index;
use serde_json::{Value, json};

use crate::harness::TestProject;

pub(crate) const ID: &str = "f1f1f1f1-2222-4333-8444-555566667777";

/// A seed 003 transcript whose messages hold, by index: 0 a prompt; 1 a
/// Bash call; 2 its failed result; 3 a Read; 4 its result; 5 a Codex
/// shell call; 6 its result, exit code 2; 7 text full of FTS syntax;
/// 8 text; 9 a failed result whose call is not in the transcript.
pub(crate) fn messages() -> Vec<Value> {
    vec![
        json!({"role": "user", "blocks": [{"type": "text", "content": "Please fix the flaky zebra test"}]}),
        json!({"role": "assistant", "blocks": [
            {"type": "text", "content": "Running the tests"},
            {"type": "tool", "id": "t1", "name": "Bash", "parameters": "{\"command\":\"cargo test --package quokka\"}"}]}),
        json!({"role": "user", "blocks": [
            {"type": "tool_result", "toolUseId": "t1", "result": "test result: FAILED. walrus panicked", "isError": true}]}),
        json!({"role": "assistant", "blocks": [
            {"type": "tool", "id": "t2", "name": "Read", "parameters": "{\"file_path\":\"/w/src/lib.rs\"}"}]}),
        json!({"role": "user", "blocks": [
            {"type": "tool_result", "toolUseId": "t2", "result": "fn narwhal() {}"}]}),
        json!({"role": "assistant", "blocks": [
            {"type": "tool", "id": "t3", "name": "shell", "parameters": "{\"command\":[\"bash\",\"-lc\",\"make lint\"]}"}]}),
        json!({"role": "tool", "blocks": [
            {"type": "tool_result", "toolUseId": "t3", "result": "{\"output\":\"lint failed\",\"metadata\":{\"exit_code\":2}}"}]}),
        json!({"role": "assistant", "blocks": [{"type": "text", "content": "NEAR(alpha beta) \"quoted\" col:val a*b -minus OR ^caret"}]}),
        json!({"role": "assistant", "blocks": [{"type": "text", "content": "the zebra is fixed"}]}),
        json!({"role": "user", "blocks": [
            {"type": "tool_result", "toolUseId": "zz", "result": "orphan failure", "isError": true}]}),
    ]
}

/// The transcript file's JSON with `messages`.
pub(crate) fn transcript(messages: &[Value]) -> String {
    json!({
        "id": ID,
        "timestamp": "2026-01-18T10:42:07.512Z",
        "version": "1.0.0",
        "messages": messages,
        "metadata": {"workdir": "/w", "startedAt": "2026-01-18T10:30:00.000Z",
                     "lastActiveAt": "2026-01-18T10:42:07.512Z", "latestTotalTokens": 10}
    })
    .to_string()
}

/// Imports the transcript of `messages` into `t`.
pub(crate) fn import(t: &TestProject, messages: &[Value]) {
    let file = t.write("in/t.json", &transcript(messages));
    t.run(&["transcript", "import", file.to_str().unwrap()])
        .ok();
}

/// The message indexes `transcript find ID TEXT` answers.
#[track_caller]
fn found(t: &TestProject, text: &str) -> Vec<u64> {
    let r = t.json(&["transcript", "find", ID, text]);
    r["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["message"].as_u64().unwrap())
        .collect()
}

#[track_caller]
fn errors(t: &TestProject) -> Vec<u64> {
    let r = t.json(&["transcript", "find", ID, "--errors"]);
    assert_eq!(r["errorCount"], r["errors"].as_array().unwrap().len());
    r["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_u64().unwrap())
        .collect()
}

fn fingerprint(t: &TestProject) -> Vec<String> {
    let p = Logbook::open(t.root()).unwrap();
    Index::open(&p).unwrap().upkeep().fingerprint().unwrap()
}

/// The index's message rows, as the fingerprint lists them.
fn message_rows(t: &TestProject) -> Vec<String> {
    fingerprint(t)
        .into_iter()
        .filter(|r| r.starts_with("trmsg") || r.starts_with("trerr"))
        .collect()
}

#[test]
fn matches_point_at_the_messages_that_say_the_words() {
    let t = TestProject::new();
    import(&t, &messages());
    assert_eq!(found(&t, "zebra"), [0, 8]);
    // Stemmed as `list --text`: "zebras" is "zebra".
    assert_eq!(found(&t, "Zebras"), [0, 8]);
    assert_eq!(found(&t, "zebra is"), [8]);
    // A word of a Bash command, of a tool result, of a Read's result.
    assert_eq!(found(&t, "quokka"), [1]);
    assert_eq!(found(&t, "walrus"), [2]);
    assert_eq!(found(&t, "narwhal"), [4]);
    // A Codex command (argv) and its JSON-wrapped output.
    assert_eq!(found(&t, "make lint"), [5]);
    assert_eq!(found(&t, "lint failed"), [6]);
    assert!(found(&t, "exit_code").is_empty());
    assert!(found(&t, "giraffe").is_empty());
    // Paging: after a message, and a limit.
    let r = t.json(&["transcript", "find", ID, "zebra", "--after", "0"]);
    assert_eq!(r["matches"][0]["message"], 8);
    assert_eq!(r["matchCount"], 1);
    let r = t.json(&["transcript", "find", ID, "zebra", "--limit", "1"]);
    assert_eq!(r["matches"].as_array().unwrap().len(), 1);
    assert_eq!(r["matchCount"], 2);
    // Each match has a snippet of its own message, the words marked.
    let r = t.json(&["transcript", "find", ID, "walrus"]);
    let snippet = r["matches"][0]["snippet"].as_str().unwrap();
    assert!(snippet.contains("[walrus]"), "{snippet}");
    let human = t.run(&["transcript", "find", &ID[..8], "walrus"]);
    assert!(human.ok().contains("#2"), "{}", human.stdout);
    assert!(human.stdout.contains("[walrus]"), "{}", human.stdout);
}

#[test]
fn a_limit_of_zero_says_to_raise_the_limit_not_to_page_after_message_zero() {
    let t = TestProject::new();
    import(&t, &messages());
    let human = t
        .run(&["transcript", "find", ID, "zebra", "--limit", "0"])
        .ok()
        .to_string();
    assert!(
        human.contains("2 messages say") && human.contains("raise --limit"),
        "{human}"
    );
    assert!(!human.contains("--after"), "{human}");
    // One shown of two still pages on from the one shown.
    let one = t
        .run(&["transcript", "find", ID, "zebra", "--limit", "1"])
        .ok()
        .to_string();
    assert!(one.contains("(1 shown; --after 0 for more)"), "{one}");
}

#[test]
fn fts_syntax_is_searched_as_typed() {
    let t = TestProject::new();
    import(&t, &messages());
    for query in [
        "NEAR(alpha",
        "\"quoted\"",
        "col:val",
        "a*b",
        "-minus",
        "OR",
        "^caret",
        "beta)",
        "\"",
    ] {
        let r = t.run(&["--json", "transcript", "find", ID, "--", query]);
        let v: Value = serde_json::from_str(r.ok()).unwrap();
        let at: Vec<u64> = v["matches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["message"].as_u64().unwrap())
            .collect();
        // A lone quote has no word: it matches nothing, and is no error.
        let want: &[u64] = if query == "\"" { &[] } else { &[7] };
        assert_eq!(at, want, "{query}");
    }
}

#[test]
fn errors_are_the_failed_tool_results() {
    let t = TestProject::new();
    import(&t, &messages());
    // The Bash failure, the exit code 2, the orphan: not the Read's result.
    assert_eq!(errors(&t), [2, 6, 9]);
    let human = t.run(&["transcript", "find", ID, "--errors"]);
    assert!(human.ok().contains("3 errors"), "{}", human.stdout);
    let r = t.json(&["transcript", "find", ID, "--errors", "--after", "2"]);
    assert_eq!(r["errors"], json!([6, 9]));
    assert!(r.get("matches").is_none(), "{r:#}");
    // Words and errors in one call.
    let r = t.json(&["transcript", "find", ID, "zebra", "--errors"]);
    assert_eq!(
        (r["matchCount"].clone(), r["errorCount"].clone()),
        (json!(2), json!(3))
    );
}

#[test]
fn a_rewrite_rebuild_and_prune_keep_the_rows_right() {
    let t = TestProject::new();
    let mut ms = messages();
    import(&t, &ms);
    let rows = message_rows(&t);
    assert_eq!(rows.iter().filter(|r| r.starts_with("trerr")).count(), 3);
    // A rebuild reads the same rows from the file.
    t.run(&["index", "rebuild"]).ok();
    assert_eq!(message_rows(&t), rows);
    assert_eq!(found(&t, "zebra"), [0, 8]);
    // A rewrite with fewer messages (same id, same index row) leaves no row
    // of the messages it no longer has.
    ms.truncate(3);
    ms[0] = json!({"role": "user", "blocks": ["now about an okapi"]});
    import(&t, &ms);
    assert_eq!(found(&t, "zebra"), Vec::<u64>::new());
    assert_eq!(found(&t, "okapi"), [0]);
    assert_eq!(errors(&t), [2]);
    assert!(message_rows(&t).iter().all(|r| !r.contains("orphan")));
    let after_rewrite = message_rows(&t);
    t.run(&["index", "rebuild"]).ok();
    assert_eq!(message_rows(&t), after_rewrite);
    // Pruned (archived): its rows go with it.
    t.run(&["transcript", "prune", "--older-than", "1"]).ok();
    assert_eq!(message_rows(&t), Vec::<String>::new());
    let r = t.run(&["transcript", "find", ID, "okapi"]);
    assert!(r.not_found().contains("live"), "{}", r.stderr);
}

#[test]
fn a_file_changed_by_another_program_is_searched_as_it_is_now() {
    let t = TestProject::new();
    import(&t, &messages());
    assert_eq!(found(&t, "narwhal"), [4]);
    let file = t.path(".logbook/transcripts/session_66667777.json");
    let mut ms = messages();
    ms.insert(0, json!({"role": "user", "blocks": ["a narwhal first"]}));
    std::fs::write(&file, transcript(&ms)).unwrap();
    assert_eq!(found(&t, "narwhal"), [0, 5]);
    assert_eq!(errors(&t), [3, 7, 10]);
    // Deleted by hand: no rows are left behind.
    std::fs::remove_file(&file).unwrap();
    t.run(&["transcript", "list"]).ok();
    assert_eq!(message_rows(&t), Vec::<String>::new());
}

#[test]
fn the_mcp_tool_answers_as_the_cli_and_refuses_bad_input() {
    let t = TestProject::new();
    import(&t, &messages());
    let mut m = crate::mcp::Mcp::start(&t);
    assert_eq!(
        m.ok(
            "transcript_find",
            json!({"id": ID, "text": "zebra", "errors": true})
        ),
        t.json(&["transcript", "find", ID, "zebra", "--errors"])
    );
    assert_eq!(
        m.ok(
            "transcript_find",
            json!({"id": &ID[..8], "errors": true, "after": 2, "limit": 1})
        ),
        json!({"errors": [6], "errorCount": 2})
    );
    // FTS syntax from an agent is searched as typed.
    let r = m.ok(
        "transcript_find",
        json!({"id": ID, "text": "NEAR(alpha col:val"}),
    );
    assert_eq!(r["matches"][0]["message"], 7, "{r:#}");
    for bad in [
        json!({"id": ID}),
        json!({"id": ID, "text": "x", "limit": u64::MAX}),
        json!({"id": ID, "text": "a\u{0}b"}),
        json!({"id": ID, "text": "x".repeat(70_000)}),
        json!({"id": "../../etc/passwd", "text": "x"}),
        json!({"id": ID, "text": "x", "extra": 1}),
    ] {
        let e = m.err("transcript_find", bad.clone());
        assert!(!e.is_empty(), "{bad}");
    }
}

#[test]
fn a_session_past_the_in_memory_budget_is_found_to_its_end() {
    let t = TestProject::new();
    // About 24 MiB of said text: more than a gathering holds in memory
    // (`MESSAGE_TEXT_BUDGET`), so the later messages' rows are read back
    // from the stored file.
    let filler = "lorem ipsum dolor sit amet ".repeat(150);
    let mut ms: Vec<Value> = (0..6000)
        .map(|i| json!({"role": "user", "blocks": [format!("{i} {filler}")]}))
        .collect();
    ms.push(json!({"role": "assistant", "blocks": ["the last okapi"]}));
    ms.push(json!({"role": "user", "blocks": [
        {"type": "tool_result", "toolUseId": "q", "result": "late failure", "isError": true}]}));
    import(&t, &ms);
    assert_eq!(found(&t, "okapi"), [6000]);
    assert_eq!(found(&t, "5999"), [5999]);
    assert_eq!(found(&t, "late failure"), [6001]);
    assert_eq!(errors(&t), [6001]);
    let rows = message_rows(&t);
    assert_eq!(rows.iter().filter(|r| r.starts_with("trmsg")).count(), 6002);
    t.run(&["index", "rebuild"]).ok();
    assert_eq!(message_rows(&t), rows);
}
