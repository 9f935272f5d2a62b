//! Words said in transcripts, through the index's full text: `find --text`
//! lists the transcripts that say them after its runs, and `transcript list
//! --text` answers from the index; both follow rebuilds, edits made by other
//! tools, and transcripts that are removed or pruned.

use serde_json::Value;

use crate::harness::TestProject;

const CLAUDE_ID: &str = "5b0c1d2e-3f40-4a5b-8c6d-7e8f90a1b2c3";
const SEED_ID: &str = "6f1c2b9e-3d4a-4c5b-9e8f-1a2b3c4d5e6f";

/// A Claude Code log (user text, assistant thinking and text, a tool
/// result) and a seed 003 transcript, imported into a fresh project.
fn project() -> TestProject {
    let mut t = TestProject::new();
    t.now = Some("2026-03-01T00:00:00.000Z".into());
    let line = |json: String| json + "\n";
    let log = [
        format!(
            r#"{{"type":"user","sessionId":"{CLAUDE_ID}","cwd":"/work/shop","timestamp":"2026-01-18T09:00:00.000Z","uuid":"u1","message":{{"role":"user","content":"Add a shopping cart for the wombats"}}}}"#
        ),
        format!(
            r#"{{"type":"assistant","sessionId":"{CLAUDE_ID}","cwd":"/work/shop","timestamp":"2026-01-18T09:00:05.000Z","uuid":"u2","requestId":"req_1","message":{{"id":"msg_1","model":"claude-sonnet-4-5","content":[{{"type":"thinking","thinking":"The kiwifruit checkout comes first."}},{{"type":"text","text":"Adding it to cart.py now."}}],"usage":{{"input_tokens":900,"output_tokens":30}}}}}}"#
        ),
        format!(
            r#"{{"type":"user","sessionId":"{CLAUDE_ID}","cwd":"/work/shop","timestamp":"2026-01-18T09:00:09.000Z","uuid":"u3","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"t1","content":"wrote 12 lines of marsupial code"}}]}}}}"#
        ),
    ]
    .map(line)
    .concat();
    t.write(&format!("history/{CLAUDE_ID}.jsonl"), &log);
    t.write(
        "conversation.json",
        &format!(
            r#"{{"id": "{SEED_ID}", "version": "1.0.0",
 "messages": [{{"role": "user", "blocks": [{{"type": "text", "content": "Compare three laptops for the quokka team"}}]}},
              {{"role": "assistant", "blocks": [{{"type": "tool", "name": "write_file", "parameters": "{{\"path\":\"echidna.md\"}}", "result": "ok"}}]}}],
 "metadata": {{"workdir": "/work/office", "startedAt": "2026-02-20T10:00:00.000Z", "lastActiveAt": "2026-02-20T10:05:00.000Z"}}}}"#
        ),
    );
    let imported = t.json(&["transcript", "import", "history"]);
    assert_eq!(
        imported["imported"].as_array().unwrap().len(),
        1,
        "{imported:#}"
    );
    t.json(&["transcript", "import", "conversation.json"]);
    t
}

/// The ids `transcript list --all --text WORDS` prints, sorted.
fn said(t: &TestProject, words: &str) -> Vec<String> {
    let mut ids: Vec<String> = t
        .json(&["transcript", "list", "--all", "--text", words])
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap().to_string())
        .collect();
    ids.sort();
    ids
}

#[test]
fn find_text_shows_the_transcripts_that_say_the_words() {
    let t = project();
    let out = t.run(&["find", "--text", "wombat"]);
    let human = out.ok();
    // No run says it; the transcript does, stemmed ("wombat" is "wombats"),
    // with its kind, workdir, last activity in local time and a snippet.
    assert!(human.starts_with("No runs match.\n"), "{human}");
    assert!(human.contains("Transcripts that say it (1):"), "{human}");
    assert!(
        human.contains(&format!("{CLAUDE_ID}  main      /work/shop  ")),
        "{human}"
    );
    assert!(
        human.contains("Add a shopping cart for the [wombats]"),
        "{human}"
    );
    assert!(!human.contains(SEED_ID), "{human}");
    // The seed 003 transcript's message, too.
    let human = t.run(&["find", "--text", "laptop"]).ok().to_string();
    assert!(human.contains(SEED_ID), "{human}");
    assert!(human.contains("Compare three [laptops]"), "{human}");
    // `find --json` stays the array of runs: no transcript in it.
    assert_eq!(t.json(&["find", "--text", "wombat"]), Value::Array(vec![]));
    // Words said nowhere, and filters only runs have, show no section.
    assert!(
        !t.run(&["find", "--text", "zebra"])
            .ok()
            .contains("Transcripts")
    );
    assert!(
        !t.run(&["find", "--text", "wombat", "--agent", "casey"])
            .ok()
            .contains("Transcripts")
    );
    // --since applies to the transcripts' last activity.
    let since = t.run(&[
        "find",
        "--text",
        "wombat",
        "--since",
        "2026-02-01T00:00:00Z",
    ]);
    assert!(!since.ok().contains("Transcripts"), "{}", since.ok());
}

#[test]
fn find_text_caps_the_transcripts_it_shows_and_says_how_to_see_the_rest() {
    let t = project();
    for i in 0..6 {
        t.write(
            &format!("more/{i}.json"),
            &format!(
                r#"{{"id": "6f1c2b9e-3d4a-4c5b-9e8f-00000000000{i}", "messages": [{{"role": "user", "blocks": [{{"type": "text", "content": "the quokka again, take {i}"}}]}}], "metadata": {{"workdir": "/w"}}}}"#
            ),
        );
        t.json(&["transcript", "import", &format!("more/{i}.json")]);
    }
    let human = t.run(&["find", "--text", "quokka"]).ok().to_string();
    assert!(human.contains("Transcripts that say it (7):"), "{human}");
    assert_eq!(human.matches("[quokka]").count(), 5, "{human}");
    assert!(
        human.contains("2 more: logbook transcript list --all --text 'quokka'"),
        "{human}"
    );
    assert_eq!(said(&t, "quokka").len(), 7);
}

#[test]
fn transcript_list_text_answers_from_the_index() {
    let t = project();
    assert_eq!(said(&t, "wombat"), vec![CLAUDE_ID]);
    assert_eq!(said(&t, "WOMBATS cart"), vec![CLAUDE_ID]);
    // Thinking and tool results are said too; tool call parameters are not.
    assert_eq!(said(&t, "kiwifruit"), vec![CLAUDE_ID]);
    assert_eq!(said(&t, "marsupial"), vec![CLAUDE_ID]);
    assert!(said(&t, "echidna").is_empty());
    assert_eq!(said(&t, "quokka laptops"), vec![SEED_ID]);
    // Every word must be said, in one transcript.
    assert!(said(&t, "wombat quokka").is_empty());
    assert!(said(&t, "zebra").is_empty());
    // The other filters still apply, and the JSON shape is the listing's.
    let codex = t.json(&[
        "transcript",
        "list",
        "--all",
        "--source",
        "codex",
        "--text",
        "wombat",
    ]);
    assert_eq!(codex, Value::Array(vec![]));
    let row = &t.json(&["transcript", "list", "--all", "--text", "wombat"])[0];
    assert_eq!(row["kind"], "main");
    assert_eq!(row["workdir"], "/work/shop");
    assert!(
        row["file"]
            .as_str()
            .unwrap()
            .ends_with("/session_90a1b2c3.json"),
        "{row:#}"
    );
}

#[test]
fn words_survive_a_rebuild_and_follow_edits_by_other_tools() {
    let t = project();
    t.json(&["index", "rebuild"]);
    assert_eq!(said(&t, "wombat"), vec![CLAUDE_ID]);
    assert_eq!(said(&t, "quokka"), vec![SEED_ID]);
    // Deleted index: rebuilt on first use, words included.
    std::fs::remove_file(t.path(".logbook/index.db")).unwrap();
    assert_eq!(said(&t, "kiwifruit"), vec![CLAUDE_ID]);

    // Another tool rewrites the seed transcript's message in place.
    let file = t.path(".logbook/transcripts/session_3c4d5e6f.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    v["messages"][0]["blocks"][0]["content"] = "Order a platypus instead".into();
    std::fs::write(&file, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    t.json(&["index", "sync"]);
    assert_eq!(said(&t, "platypus"), vec![SEED_ID]);
    assert!(said(&t, "quokka").is_empty(), "the old words are gone");
    let human = t.run(&["find", "--text", "platypus"]).ok().to_string();
    assert!(human.contains("Order a [platypus] instead"), "{human}");
}

#[test]
fn a_removed_or_pruned_transcript_is_no_longer_found() {
    let t = project();
    assert_eq!(said(&t, "quokka"), vec![SEED_ID]);
    // Pruned: the Claude session (last active 2026-01-18) moves to the
    // archive, the seed one (2026-02-20) stays; now is 2026-03-01.
    let pruned = t.json(&["transcript", "prune", "--older-than", "20"]);
    assert_eq!(pruned["moved"].as_array().unwrap().len(), 1, "{pruned:#}");
    assert!(said(&t, "wombat").is_empty());
    assert_eq!(said(&t, "quokka"), vec![SEED_ID]);
    // Deleted by hand.
    std::fs::remove_file(t.path(".logbook/transcripts/session_3c4d5e6f.json")).unwrap();
    t.json(&["index", "sync"]);
    assert!(said(&t, "quokka").is_empty());
    assert!(
        !t.run(&["find", "--text", "quokka"])
            .ok()
            .contains("Transcripts")
    );
}
