//! Codex forks and spawned subagents through the real binary, on the
//! library's fixtures laid out as Codex writes them
//! (`~/.codex/sessions/YYYY/MM/DD/rollout-…-<id>.jsonl`; the usage of each
//! is worked out by hand in `crates/logbook/tests/it/codex_forks.rs`):
//! parent 2800, spawned subagent 1790, fork 3150, the parent's second
//! page 1600, all 9340.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::harness::TestProject;

const PARENT: &str = "0199bbbb-0000-7000-8000-000000000001";
const SUBAGENT: &str = "0199bbbb-0000-7000-8000-000000000002";
const FORK: &str = "0199bbbb-0000-7000-8000-000000000003";

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../logbook/tests/fixtures/codex_forks/sessions")
}

/// A home whose `.codex/sessions` holds the three logs.
fn home(t: &TestProject) -> PathBuf {
    let home = t.path("home");
    let day = home.join(".codex/sessions/2026/01/20");
    std::fs::create_dir_all(&day).unwrap();
    for e in std::fs::read_dir(fixtures().join("2026/01/20")).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), day.join(e.file_name())).unwrap();
    }
    home
}

fn row<'a>(rows: &'a Value, id: &str) -> &'a Value {
    rows.as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id)
        .unwrap_or_else(|| panic!("{id} not in {rows:#}"))
}

#[test]
fn a_fork_and_a_spawned_subagent_are_billed_once_and_linked_to_their_parent() {
    let mut t = TestProject::new();
    let home = home(&t);
    t.envs
        .push(("HOME".into(), home.to_string_lossy().into_owned()));
    let r = t.json(&["transcript", "import", "--from-home"]);
    assert_eq!(r["imported"].as_array().unwrap().len(), 4, "{r:#}");

    let all = t.json(&["transcript", "usage", "--all", "--by", "session"]);
    assert_eq!(all["total"]["total_tokens"], 9340, "{all:#}");
    assert_eq!(all["total"]["input_tokens"], 2500 + 1700 + 3000 + 1500);
    assert_eq!(all["total"]["cached_input_tokens"], 1400 + 700 + 2500 + 600);

    let sub = t.json(&["transcript", "usage", SUBAGENT]);
    let own = row(&sub["transcripts"], SUBAGENT);
    assert_eq!(own["usage"]["total_tokens"], 1790, "{sub:#}");
    assert_eq!(own["kind"], "subagent");
    assert_eq!(own["parentSessionId"], PARENT);

    let fork = t.json(&["transcript", "usage", FORK]);
    assert_eq!(fork["total"]["total_tokens"], 3150, "{fork:#}");

    let list = t.json(&["transcript", "list", "--all"]);
    assert_eq!(row(&list, SUBAGENT)["kind"], "subagent");
    assert_eq!(row(&list, SUBAGENT)["parentSessionId"], PARENT);
    assert_eq!(row(&list, FORK)["kind"], "main");
    assert!(row(&list, FORK)["parentSessionId"].is_null());
    assert_eq!(row(&list, FORK)["forkOf"], PARENT);
    assert!(row(&list, SUBAGENT).get("forkOf").is_none());
    assert!(row(&list, PARENT).get("forkOf").is_none());
    // Titles are the person's prompts, not Codex's injected instructions.
    assert_eq!(row(&list, PARENT)["title"], "Plan the release");
    assert_eq!(row(&list, FORK)["title"], "Now write the release notes");

    // The fork's own messages only; its metadata names the parent.
    let shown = t.json(&["transcript", "show", FORK]);
    assert_eq!(shown["metadata"]["forkOf"], PARENT);
    let said: Vec<String> = shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|m| m["blocks"].as_array().unwrap().clone())
        .filter_map(|b| b["content"].as_str().map(str::to_string))
        .collect();
    assert!(
        !said.iter().any(|s| s.contains("Plan the release")),
        "{said:?}"
    );
    // The stored log copy keeps every line, the copied ones too.
    assert_eq!(shown["rawLines"].as_array().map(Vec::len), Some(19));
}

/// Codex's compressed old rollouts: `tests/fixtures/codex_zst` holds one
/// `.jsonl.zst` (made with the zstd tool; unpacked: one call of 770 =
/// input 700, output 70).
#[test]
fn a_compressed_rollout_is_imported_and_named_by_its_own_path() {
    const ID: &str = "0199cccc-0000-7000-8000-00000000000a";
    let mut t = TestProject::new();
    let home = t.path("home");
    let day = home.join(".codex/sessions/2026/01/19");
    std::fs::create_dir_all(&day).unwrap();
    let name = format!("rollout-2026-01-19T08-00-00-{ID}.jsonl.zst");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../logbook/tests/fixtures/codex_zst/sessions/2026/01/19")
            .join(&name),
        day.join(&name),
    )
    .unwrap();
    t.envs
        .push(("HOME".into(), home.to_string_lossy().into_owned()));
    let r = t.json(&["transcript", "import", "--from-home"]);
    let imported = r["imported"].as_array().unwrap();
    assert_eq!(imported.len(), 1, "{r:#}");
    assert_eq!(imported[0]["id"], ID);
    assert!(
        imported[0]["source"].as_str().unwrap().ends_with(&name),
        "{r:#}"
    );
    let usage = t.json(&["transcript", "usage", ID]);
    assert_eq!(usage["total"]["total_tokens"], 770, "{usage:#}");
    let shown = t.json(&["transcript", "show", ID]);
    assert!(
        shown["metadata"]["source"]["path"]
            .as_str()
            .unwrap()
            .ends_with(".jsonl.zst")
    );
    // Again: unchanged, and no unpacked copy is left behind.
    let again = t.json(&["transcript", "import", "--from-home"]);
    assert_eq!(
        again["unchanged"].as_array().map(Vec::len),
        Some(1),
        "{again:#}"
    );
    let left = t.path(".logbook/unpacked");
    let n = std::fs::read_dir(&left).unwrap().count();
    assert_eq!(n, 0, "unpacked copies left in {}", left.display());
}
