//! `logbook mcp` while a library call is stuck: a slow call (here a
//! `find_runs` waiting for an index another process holds) must not hold
//! up a `ping`, nor another tool that does not need the index (issue 46).

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::mcp::{Mcp, project};

/// How soon the calls that must not wait are answered: generous, since a
/// loaded machine is slow, yet far below the lock wait the held calls get.
const PROMPT: Duration = Duration::from_secs(5);

#[test]
fn a_held_index_stalls_find_runs_but_not_ping_nor_another_tool() {
    let mut t = project();
    let started = t.start_run("casey", "deep-dive", &[]);
    // The held calls wait for the index far longer than the test's bound
    // (the default 30 s could be near it on a slow machine), so they can
    // only answer once the test lets the index go.
    t.envs.push(("LOGBOOK_LOCK_TIMEOUT".into(), "300".into()));
    let mut m = Mcp::start(&t);
    // Another process is in the middle of a write to the index.
    let held = rusqlite::Connection::open(t.path(".logbook/index.db")).unwrap();
    held.execute_batch("BEGIN EXCLUSIVE").unwrap();
    // A read of an index that is up to date waits for no writer (WAL), so
    // the run changes on disk: `find_runs` must write it to the index
    // first, and wait. Still valid JSON, one byte longer.
    let manifest = std::path::Path::new(started["folder"].as_str().unwrap()).join("manifest.json");
    let mut text = std::fs::read_to_string(&manifest).unwrap();
    text.push('\n');
    std::fs::write(&manifest, text).unwrap();

    // Two held calls, as many as the stdio server's runtime has threads:
    // calls run on the runtime's own threads would leave none to answer.
    let held_calls = [(); 2].map(|()| {
        m.send(
            "tools/call",
            json!({"name": "find_runs", "arguments": {"agent": "casey"}}),
        )
    });
    let ping = m.send("ping", json!({}));
    let listing = m.send(
        "tools/call",
        json!({"name": "session_list", "arguments": {}}),
    );

    let deadline = Instant::now() + PROMPT;
    let mut owed = vec![ping, listing];
    while !owed.is_empty() {
        let Some(answer) = m.answer_by(deadline) else {
            panic!(
                "no answer to requests {owed:?} (ping, session_list) within {PROMPT:?} while find_runs waits for the index"
            );
        };
        let id = answer["id"].as_u64();
        assert!(
            !held_calls.iter().any(|&h| Some(h) == id),
            "find_runs answered while the index was held: {answer}"
        );
        assert!(answer.get("error").is_none(), "{answer}");
        owed.retain(|&o| Some(o) != id);
        if id == Some(listing) {
            assert_ne!(answer["result"]["isError"], json!(true), "{answer}");
        }
    }

    // Let the index go: the held calls now answer, with the run.
    held.execute_batch("ROLLBACK").unwrap();
    for id in held_calls {
        let answer = m.wait(id);
        let result = &answer["result"];
        assert_ne!(result["isError"], json!(true), "{answer}");
        let runs = result["structuredContent"]["runs"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert_eq!(runs.len(), 1, "{answer}");
        assert_eq!(
            runs[0]["manifest"]["agent"]["name"],
            Value::from("casey"),
            "{answer}"
        );
    }
}
