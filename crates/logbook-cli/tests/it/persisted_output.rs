//! Claude Code's large tool outputs (`<persisted-output>` stubs, the whole
//! text in `<session>/tool-results/<name>.txt`) through the real binary:
//! words past the 2 KB preview are found, the stored log copy stays as
//! Claude Code wrote it. Fixture: `crates/logbook/tests/fixtures/claude_persisted`
//! (usage: msg_P1 10 + 5 + 0 + 100 = 115, msg_P2 20 + 8 + 50 + 100 = 178,
//! 293 in all).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::harness::TestProject;

const ID: &str = "55555555-6666-4777-8888-999900001111";

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../logbook/tests/fixtures/claude_persisted")
}

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

fn results(shown: &Value) -> Vec<String> {
    shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["blocks"].as_array().unwrap().clone())
        .filter(|b| b["type"] == "tool_result")
        .map(|b| b["result"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_persisted_output_is_read_back_so_words_past_its_preview_are_found() {
    let mut t = TestProject::new();
    let home = t.path("home");
    copy(&fixtures(), &home.join(".claude/projects"));
    t.envs
        .push(("HOME".into(), home.to_string_lossy().into_owned()));
    t.envs.push((
        "CLAUDE_CONFIG_DIR".into(),
        home.join(".claude").to_string_lossy().into_owned(),
    ));
    let r = t.json(&["transcript", "import", "--from-home"]);
    assert_eq!(r["imported"].as_array().unwrap().len(), 1, "{r:#}");

    let shown = t.json(&["transcript", "show", ID]);
    let full = std::fs::read_to_string(
        fixtures().join(format!("-work-big/{ID}/tool-results/toolu_01BIG.txt")),
    )
    .unwrap();
    assert_eq!(results(&shown), [full]);
    // The raw line is the stub, byte for byte.
    let raw = shown["rawLines"][2].as_str().unwrap();
    assert!(raw.contains("<persisted-output>"), "{raw}");
    assert!(!raw.contains("zanzibar"));
    assert_eq!(
        shown["metadata"]["usage"]["byModel"]["claude-sonnet-4-5"]["total_tokens"],
        293
    );

    let found = t.json(&["transcript", "list", "--all", "--text", "zanzibar"]);
    assert_eq!(found.as_array().unwrap().len(), 1, "{found:#}");
    assert_eq!(found[0]["id"], ID);
    // Find in the transcript names the message that holds it.
    let within = t.json(&["transcript", "find", ID, "zanzibar"]);
    assert!(within.to_string().contains("zanzibar"), "{within:#}");
}

#[test]
fn a_missing_persisted_file_leaves_the_preview() {
    let t = TestProject::new();
    let dir = t.path("logs");
    copy(&fixtures(), &dir);
    std::fs::remove_dir_all(dir.join(format!("-work-big/{ID}"))).unwrap();
    t.json(&["transcript", "import", dir.to_str().unwrap()]);
    let shown = t.json(&["transcript", "show", ID]);
    let r = results(&shown);
    assert!(r[0].starts_with("<persisted-output>"), "{r:?}");
    let found = t.json(&["transcript", "list", "--all", "--text", "zanzibar"]);
    assert_eq!(found.as_array().map(Vec::len), Some(0));
}
