//! Format drift made visible: records of a type the reader does not know
//! are counted and said by `transcript import`, and `doctor` names
//! transcripts an older reader derived, which `doctor --fix` imports again
//! where the log still exists.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::harness::TestProject;

const PARENT: &str = "0199bbbb-0000-7000-8000-000000000001";

fn parent_log() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!(
        "../logbook/tests/fixtures/codex_forks/sessions/2026/01/20/rollout-2026-01-20T09-00-00-{PARENT}.jsonl"
    ))
}

/// The parent log with `extra` lines appended, in `logs/` of the project.
fn log_with(t: &TestProject, extra: &[&str]) -> PathBuf {
    let dir = t.path("logs");
    std::fs::create_dir_all(&dir).unwrap();
    let to = dir.join(parent_log().file_name().unwrap());
    let mut text = std::fs::read_to_string(parent_log()).unwrap();
    for line in extra {
        text.push_str(line);
        text.push('\n');
    }
    std::fs::write(&to, text).unwrap();
    to
}

#[test]
fn import_says_how_many_records_of_an_unknown_type_it_kept_as_raw_lines() {
    let t = TestProject::new();
    let ping =
        r#"{"timestamp":"2026-01-20T09:00:20.000Z","type":"telemetry_ping","payload":{"n":1}}"#;
    let log = log_with(&t, &[ping, ping]);
    let r = t.run(&["transcript", "import", log.to_str().unwrap()]);
    let out = r.ok();
    assert!(
        out.contains("2 records of an unknown type `telemetry_ping`, kept as raw lines"),
        "{out}"
    );
    let json = t.json(&["transcript", "import", log.to_str().unwrap()]);
    // Unchanged now; the first import's report carried the counts.
    assert_eq!(
        json["unchanged"].as_array().map(Vec::len),
        Some(1),
        "{json:#}"
    );
    let shown = t.json(&["transcript", "show", PARENT]);
    assert_eq!(
        shown["metadata"]["source"]["unknownTypes"]["telemetry_ping"],
        2
    );
    assert_eq!(shown["rawLines"].as_array().map(Vec::len), Some(15));
}

/// Sets the parser version the stored transcript says derived it.
fn mark_older(t: &TestProject) -> PathBuf {
    let dir = t.path(".logbook/transcripts");
    let file = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            std::fs::read_to_string(p).is_ok_and(|s| s.contains(&format!("\"id\": \"{PARENT}\"")))
        })
        .unwrap();
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    v["metadata"]["source"]["parser"] = 5.into();
    std::fs::write(&file, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    file
}

fn old_parser_findings(report: &Value) -> Vec<Value> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "old-parser-transcript")
        .cloned()
        .collect()
}

#[test]
fn doctor_names_transcripts_an_older_reader_made_and_fix_imports_them_again() {
    let t = TestProject::new();
    let log = log_with(&t, &[]);
    t.json(&["transcript", "import", log.to_str().unwrap()]);
    assert!(old_parser_findings(&t.doctor(&[])).is_empty());

    mark_older(&t);
    let found = old_parser_findings(&t.doctor(&[]));
    assert_eq!(found.len(), 1, "{found:#?}");
    let message = found[0]["message"].as_str().unwrap();
    assert!(message.contains("version 5"), "{message}");
    assert!(message.contains("doctor --fix"), "{message}");

    let fixed = old_parser_findings(&t.doctor(&["--fix"]));
    assert_eq!(fixed.len(), 1);
    assert!(
        fixed[0]["fixed"]
            .as_str()
            .unwrap()
            .contains("imported again"),
        "{fixed:#?}"
    );
    assert!(old_parser_findings(&t.doctor(&[])).is_empty());
    let shown = t.json(&["transcript", "show", PARENT]);
    assert!(shown["metadata"]["source"]["parser"].as_u64().unwrap() > 5);

    // Without its log, it is named and left as it is.
    mark_older(&t);
    std::fs::remove_file(&log).unwrap();
    let left = old_parser_findings(&t.doctor(&["--fix"]));
    assert_eq!(left.len(), 1);
    assert!(left[0].get("fixed").is_none(), "{left:#?}");
    assert!(left[0]["message"].as_str().unwrap().contains("is gone"));
}
