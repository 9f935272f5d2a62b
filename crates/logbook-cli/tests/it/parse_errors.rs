//! A file another tool (or a person) wrote with a value of the wrong type
//! is refused with a message that names the file, the field (and the line
//! where the format has lines) and what is needed there, in the file's
//! words: never serde's Rust type names ("Option<String>", "u64",
//! "struct Manifest") or its "invalid type: …, expected …" sentence.

use regex::Regex;
use serde_json::{Value, json};

use crate::harness::TestProject;

const SES: &str = "SES202501-ACME-PARSE";

/// Words only a Rust programmer would recognise.
fn assert_plain(msg: &str) {
    let rust = Regex::new(
        r"Option<|Vec<|Map<|String\b|\b[ui](8|16|32|64|128|size)\b|\bf(32|64)\b|\bstruct\b|\benum\b|invalid type|invalid value|, expected|\b(Manifest|WorkSession|SessionState|Tokens|AgentInfo|Execution|OrchestratorWorkflow|Milestone)\b",
    )
    .unwrap();
    assert!(!rust.is_match(msg), "Rust words in: {msg}");
}

/// Fails `args`, and checks the message names `file` and `field` in plain words.
fn refused(t: &TestProject, args: &[&str], file: &str, field: &str, needed: &str) -> String {
    let r = t.run(args);
    let msg = r.err().to_string();
    assert_plain(&msg);
    assert!(msg.contains(file), "file {file} not named in: {msg}");
    assert!(
        msg.contains(&format!("`{field}`")),
        "field {field} not named in: {msg}"
    );
    assert!(msg.contains(needed), "{needed:?} not said in: {msg}");
    assert!(msg.contains("fix the file"), "no advice in: {msg}");
    msg
}

fn run_with(t: &TestProject, edit: impl Fn(&mut Value)) -> (String, String) {
    let v = t.json(&["run", "start", "--agent", "alex", "--workflow", "intake"]);
    let id = v["session_id"].as_str().unwrap().to_string();
    let path = format!("docs/agent-outputs/{id}/manifest.json");
    let mut m: Value = serde_json::from_str(&t.read(&path)).unwrap();
    edit(&mut m);
    t.write(&path, &serde_json::to_string_pretty(&m).unwrap());
    (id, path)
}

#[test]
fn a_manifest_value_of_the_wrong_type_names_the_field_in_plain_words() {
    let t = TestProject::new();
    // A number where text belongs.
    let (id, path) = run_with(&t, |m| m["execution"]["started_at"] = json!(5));
    let msg = refused(
        &t,
        &["run", "show", &id],
        &path,
        "execution.started_at",
        "text is needed here, not the number 5",
    );
    assert!(msg.contains("manifest"), "{msg}");
    // A list where an object belongs.
    let (id, path) = run_with(&t, |m| m["agent"] = json!(["alex"]));
    refused(
        &t,
        &["run", "show", &id],
        &path,
        "agent",
        "an object is needed here, not an array",
    );
    // An object where a list belongs, and inside a list.
    let (id, path) = run_with(&t, |m| m["outputs"] = json!({"file": "a.md"}));
    refused(
        &t,
        &["run", "show", &id],
        &path,
        "outputs",
        "an array is needed here, not an object",
    );
    let (id, path) = run_with(
        &t,
        |m| m["outputs"] = json!([{"file": 7, "type": "document", "description": "d", "created_at": "2025-10-05T10:00:00Z"}]),
    );
    refused(
        &t,
        &["run", "show", &id],
        &path,
        "outputs[0].file",
        "not the number 7",
    );
    // A required field missing.
    let (id, path) = run_with(&t, |m| {
        m["agent"].as_object_mut().unwrap().remove("name");
    });
    refused(&t, &["run", "show", &id], &path, "agent.name", "missing");
    // `doctor` names them in the same words.
    let r = t.run(&["doctor"]);
    assert_plain(&r.stdout);
    assert!(r.stdout.contains("`execution.started_at`"), "{}", r.stdout);
}

fn session(t: &mut TestProject) -> String {
    t.now = Some("2025-01-19T09:00:00.000Z".into());
    t.run(&["start", "--client", "ACME", "--project", "PARSE", "--yes"])
        .ok();
    t.now = None;
    format!(".logbook/sessions/{SES}.yaml")
}

#[test]
fn a_session_value_of_the_wrong_type_names_the_field_and_line() {
    let mut t = TestProject::new();
    let path = session(&mut t);
    let good = t.read(&path);
    assert!(good.contains("\ntokens:\n"), "{good}");
    // Text where a number belongs.
    let bad = Regex::new(r"(?m)^  current: \d+$")
        .unwrap()
        .replace(&good, "  current: plenty");
    assert_ne!(bad, good);
    t.write(&path, &bad);
    let msg = refused(
        &t,
        &["status"],
        &path,
        "tokens",
        "tokens.current must be a number, not \"plenty\"",
    );
    assert!(msg.contains("line "), "{msg}");
    // A list where a mapping belongs.
    let bad = good.replace("\ntokens:\n", "\ntokens: [1, 2]\nold_tokens:\n");
    t.write(&path, &bad);
    refused(
        &t,
        &["status"],
        &path,
        "tokens",
        "a mapping is needed here, not a list",
    );
    // A mapping where a list belongs.
    let bad = Regex::new(r"(?m)^milestones:.*$")
        .unwrap()
        .replace(&good, "milestones: {design: done}");
    assert_ne!(bad, good, "{good}");
    t.write(&path, &bad);
    refused(
        &t,
        &["status"],
        &path,
        "milestones",
        "a list is needed here, not a mapping",
    );
}

#[test]
fn a_workflow_state_value_of_the_wrong_type_names_the_field() {
    let mut t = TestProject::new();
    session(&mut t);
    t.json(&["workflow", "invoke", "analyst", "--prompt", "Research"]);
    let path = format!(".logbook/sessions/{SES}.state.json");
    let good: Value = serde_json::from_str(&t.read(&path)).unwrap();
    let mut bad = good.clone();
    bad["version"] = json!("three");
    t.write(&path, &serde_json::to_string_pretty(&bad).unwrap());
    refused(
        &t,
        &["workflow", "show"],
        &path,
        "version",
        "a whole number is needed here, not the text \"three\"",
    );
    let mut bad = good.clone();
    bad["orchestratorWorkflow"] = json!([1]);
    t.write(&path, &serde_json::to_string_pretty(&bad).unwrap());
    refused(
        &t,
        &["workflow", "show"],
        &path,
        "orchestratorWorkflow",
        "an object is needed here, not an array",
    );
    let mut bad = good.clone();
    bad["currentMode"] = json!(5);
    t.write(&path, &serde_json::to_string_pretty(&bad).unwrap());
    refused(
        &t,
        &["workflow", "show"],
        &path,
        "currentMode",
        "not the number 5",
    );
}

#[test]
fn a_transcript_value_of_the_wrong_type_names_the_field() {
    let t = TestProject::new();
    let good: Value = serde_json::from_str(&crate::harness::shared_text(
        "fixtures/transcript-main.json",
    ))
    .unwrap();
    let mut bad = good.clone();
    bad["messages"] = json!({"role": "user"});
    t.write("in/t.json", &serde_json::to_string_pretty(&bad).unwrap());
    let msg = refused(
        &t,
        &["transcript", "import", "in/t.json"],
        "in/t.json",
        "messages",
        "an array is needed here, not an object",
    );
    assert!(msg.contains("line "), "{msg}");
    let mut bad = good.clone();
    bad["id"] = json!(12);
    t.write("in/t.json", &serde_json::to_string_pretty(&bad).unwrap());
    refused(
        &t,
        &["transcript", "import", "in/t.json"],
        "in/t.json",
        "id",
        "not the number 12",
    );
}
