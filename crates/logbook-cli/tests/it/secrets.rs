//! Secrets (issue 50): `secrets scan` over stored transcripts, run outputs
//! and work sessions with a made-up key of every kind planted, masked in
//! what it prints; `doctor`'s notice; and redaction of what leaves the
//! machine (`export otlp --content`, the team catalog, a shared page),
//! undone only by `--no-redact`, which says so.

use logbook::model::secrets::Kind;
use logbook::model::secrets::samples::sample;
use serde_json::{Value, json};

use crate::harness::{Run, TestProject};

pub(crate) const TRANSCRIPT_ID: &str = "5e0c7a1b-9d2f-4b6e-8a3c-1f2e3d4c5b6a";

/// Every kind's made-up secret (seed `seed`) and the text that plants it.
pub(crate) fn planted(seed: u64) -> Vec<(Kind, String, String)> {
    Kind::ALL
        .iter()
        .map(|k| {
            let (secret, text) = sample(*k, seed);
            (*k, secret, text)
        })
        .collect()
}

/// A transcript whose messages say each planted text, in prose, in a tool
/// call's input and in its result.
pub(crate) fn transcript_with(seed: u64) -> Value {
    let mut messages = vec![];
    for (i, (kind, _, text)) in planted(seed).into_iter().enumerate() {
        messages.push(json!({
            "role": "user",
            "blocks": [{"type": "text", "content": format!("my {kind} is {text} ok")}],
        }));
        messages.push(json!({
            "role": "assistant",
            "blocks": [
                {"type": "tool_use", "id": format!("t{i}"), "name": "Bash", "input": {"command": format!("echo '{text}'")}},
            ],
        }));
        messages.push(json!({
            "role": "user",
            "blocks": [{"type": "tool_result", "tool_use_id": format!("t{i}"), "content": format!("{text}\n")}],
        }));
    }
    json!({
        "id": TRANSCRIPT_ID,
        "timestamp": "2026-01-18T10:42:07.512Z",
        "version": "1.0.0",
        "messages": messages,
        "metadata": {
            "workdir": "/tmp/app",
            "startedAt": "2026-01-18T10:30:00.000Z",
            "lastActiveAt": "2026-01-18T10:42:07.512Z",
            "latestTotalTokens": 2242
        }
    })
}

/// Imports [`transcript_with`] into `t`.
pub(crate) fn import_planted(t: &TestProject, seed: u64) {
    t.write("in/planted.json", &transcript_with(seed).to_string());
    t.json(&["transcript", "import", "in/planted.json"]);
}

/// Whether any planted secret of `seed` shows in `text`.
#[track_caller]
pub(crate) fn assert_none_of(seed: u64, text: &str, what: &str) {
    for (kind, secret, _) in planted(seed) {
        assert!(!text.contains(&secret), "{what} holds the {kind}: {secret}");
    }
}

fn scan(t: &TestProject) -> (Run, Vec<Value>) {
    let r = t.run(&["--json", "secrets", "scan"]);
    let found: Value = serde_json::from_str(&r.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", r.stdout, r.stderr));
    (r, found.as_array().unwrap().clone())
}

#[test]
fn a_clean_project_scans_clean_and_exits_zero() {
    let t = TestProject::new();
    t.json(&["start", "--client", "ACME", "--project", "P", "--yes"]);
    t.json(&[
        "note",
        "the budget is 40k; token budget 150000; password: ${DB_PASSWORD}",
    ]);
    t.write(
        "in/clean.json",
        &shared_fixture_with("sk-learn-and-other-words-that-look-like-a-key-but-are-not"),
    );
    t.json(&["transcript", "import", "in/clean.json"]);
    let (r, found) = scan(&t);
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(found, Vec::<Value>::new());
    let human = t.run(&["secrets", "scan"]);
    assert_eq!(human.code, 0);
    assert!(
        human.stdout.starts_with("No secrets found ("),
        "{}",
        human.stdout
    );
}

fn shared_fixture_with(text: &str) -> String {
    json!({
        "id": "6f1c2b9e-3d4a-4c5b-9e8f-1a2b3c4d5e6f",
        "version": "1.0.0",
        "messages": [{"role": "user", "blocks": [{"type": "text", "content": text}]}],
        "metadata": {"workdir": "/tmp/app", "startedAt": "2026-01-18T10:30:00.000Z",
                     "lastActiveAt": "2026-01-18T10:42:07.512Z", "latestTotalTokens": 1}
    })
    .to_string()
}

#[test]
fn the_scan_finds_every_kind_in_transcripts_outputs_and_sessions_masked() {
    let t = TestProject::new();
    let seed = 21;
    import_planted(&t, seed);
    // A run output and a work session note hold them too.
    let run = t.start_run("casey", "deep-dive", &[]);
    let folder = run["folder"].as_str().unwrap().to_string();
    let env: String = planted(seed)
        .iter()
        .map(|(_, _, text)| format!("{text}\n"))
        .collect();
    std::fs::write(std::path::Path::new(&folder).join("notes.env"), &env).unwrap();
    t.json(&["start", "--client", "ACME", "--project", "P", "--yes"]);
    let (noted, secret, text) = &planted(seed)[1];
    t.json(&["note", &format!("pasted {text} by mistake")]);
    // A key split across JSON escapes, in a file another tool wrote.
    let (gh, _) = sample(Kind::GithubToken, seed + 1);
    let escaped = gh.replacen("ghp_", "gh\\u0070_", 1);
    let mut other = shared_fixture_with("placeholder");
    other = other.replace("placeholder", &escaped);
    t.write(".logbook/transcripts/session_3c4d5e6f.json", &other);

    let (r, found) = scan(&t);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(r.stderr.contains("secrets found"), "{}", r.stderr);
    let everything = format!("{}{}", r.stdout, r.stderr);
    assert_none_of(seed, &everything, "the scan's output");
    assert!(!everything.contains(secret.as_str()));
    assert!(!everything.contains(&gh));
    for f in &found {
        let keys: Vec<&str> = f.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["file", "location", "kind", "masked"], "{f}");
        let masked = f["masked"].as_str().unwrap();
        assert!(masked.replace("...", "").chars().count() <= 6, "{masked}");
    }
    let in_file = |file: &str| -> Vec<&str> {
        found
            .iter()
            .filter(|f| f["file"].as_str().unwrap().ends_with(file))
            .map(|f| f["kind"].as_str().unwrap())
            .collect()
    };
    // The planted transcript: each kind in its prompt, its tool input and
    // its result.
    let transcript = in_file("session_3d4c5b6a.json");
    for k in Kind::ALL {
        assert_eq!(
            transcript.iter().filter(|f| **f == k.as_str()).count(),
            3,
            "{k}: {transcript:?}"
        );
    }
    let output: Vec<&str> = in_file("notes.env");
    assert_eq!(output.len(), Kind::ALL.len(), "{output:?}");
    assert_eq!(in_file("session_3c4d5e6f.json"), ["github-token"]);
    let sessions: Vec<&Value> = found
        .iter()
        .filter(|f| f["file"].as_str().unwrap().contains(".logbook/sessions/"))
        .collect();
    assert_eq!(sessions.len(), 1, "{found:#?}");
    assert_eq!(sessions[0]["kind"], noted.as_str());
    // Where: a message's field, a line.
    let loc = found
        .iter()
        .find(|f| f["file"].as_str().unwrap().ends_with("notes.env"))
        .unwrap();
    assert_eq!(loc["location"], "line 1");
    assert!(
        found
            .iter()
            .any(|f| f["location"] == "messages[0].blocks[0].content"),
        "{found:#?}"
    );

    // People see one line a finding.
    let human = t.run(&["secrets", "scan"]);
    assert_eq!(human.code, 1);
    assert_eq!(human.stdout.lines().count(), found.len());
    assert_none_of(seed, &human.stdout, "the scan's text");

    // Doctor says how many, and its exit code is its own.
    let d = t.run(&["doctor"]);
    assert_eq!(d.code, 0, "{d:?}");
    assert!(
        d.stderr
            .contains(&format!("{} secrets found in stored", found.len())),
        "{}",
        d.stderr
    );
    // Nothing was rewritten.
    assert_eq!(
        std::fs::read_to_string(std::path::Path::new(&folder).join("notes.env")).unwrap(),
        env
    );
}
