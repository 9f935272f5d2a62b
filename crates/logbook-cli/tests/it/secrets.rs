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
                {"type": "text", "content": format!("I will keep {text} out of the logs")},
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

/// A piece of `secret` that shows wherever it went, however the carrier
/// escapes it (JSON turns a private key's newlines into `\\n`): its
/// longest line, cut to 24 characters from the middle.
pub(crate) fn needle(secret: &str) -> &str {
    let line = secret.lines().max_by_key(|l| l.len()).unwrap_or(secret);
    let start = line.len().saturating_sub(24) / 2;
    &line[start..(start + 24).min(line.len())]
}

/// That no planted secret of `seed` shows in `text`.
#[track_caller]
pub(crate) fn assert_none_of(seed: u64, text: &str, what: &str) {
    for (kind, secret, _) in planted(seed) {
        assert!(
            !text.contains(needle(&secret)),
            "{what} holds the {kind}: {secret}"
        );
    }
}

/// That every planted secret of `seed` shows in `text`.
#[track_caller]
pub(crate) fn assert_all_of(seed: u64, text: &str, what: &str) {
    for (kind, secret, _) in planted(seed) {
        assert!(text.contains(needle(&secret)), "{what} lacks the {kind}");
    }
}

/// Plants every kind in `t`: a transcript ([`import_planted`]), a finished
/// run's registered output, and a work session's note.
pub(crate) fn plant_everywhere(t: &TestProject, seed: u64) {
    import_planted(t, seed);
    let all: String = planted(seed)
        .iter()
        .map(|(_, _, text)| format!("{text}\n"))
        .collect();
    let run = t.start_run("casey", "deep-dive", &[]);
    let id = run["session_id"].as_str().unwrap().to_string();
    let folder = run["folder"].as_str().unwrap().to_string();
    std::fs::write(std::path::Path::new(&folder).join("notes.md"), &all).unwrap();
    t.json(&[
        "run",
        "output",
        &id,
        "notes.md",
        "--type",
        "document",
        "--description",
        "notes",
    ]);
    t.json(&["run", "finish", &id, "--status", "completed"]);
    t.json(&["start", "--client", "ACME", "--project", "P", "--yes"]);
    t.json(&["note", &format!("pasted:\n{all}")]);
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
    // The planted transcript: each kind in its prompt, the answer, its
    // tool input and its result.
    let transcript = in_file("session_3d4c5b6a.json");
    for k in Kind::ALL {
        assert_eq!(
            transcript.iter().filter(|f| **f == k.as_str()).count(),
            4,
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

    // Doctor says how many as a warning; its findings and exit code are
    // its own (secrets are not a problem it counts).
    let d = t.run(&["doctor", "--json", "--full"]);
    assert!(
        d.stderr
            .contains(&format!("warning: {} secrets found in stored", found.len())),
        "{}",
        d.stderr
    );
    // A default doctor counts what it is quick to: transcripts and work
    // sessions, each file read once until it changes.
    let in_outputs = found
        .iter()
        .filter(|f| {
            f["file"]
                .as_str()
                .unwrap()
                .starts_with("docs/agent-outputs/")
        })
        .count();
    assert!(in_outputs > 0 && in_outputs < found.len(), "{found:#?}");
    for _ in 0..2 {
        let quick = t.run(&["doctor", "--json"]);
        let said = format!(
            "warning: {} secrets found in stored",
            found.len() - in_outputs
        );
        assert!(quick.stderr.contains(&said), "{}", quick.stderr);
        assert!(quick.stderr.contains("doctor --full"), "{}", quick.stderr);
    }
    let report: Value = serde_json::from_str(&d.stdout).unwrap();
    let problems = report["findings"].as_array().unwrap().len();
    assert_eq!(d.code, i32::from(problems > 0), "{d:?}");
    assert!(!d.stdout.contains("secret"), "{}", d.stdout);
    // Nothing was rewritten.
    assert_eq!(
        std::fs::read_to_string(std::path::Path::new(&folder).join("notes.env")).unwrap(),
        env
    );
}

#[test]
fn export_otlp_content_redacts_every_kind_unless_no_redact_which_says_so() {
    let mut t = TestProject::new();
    let seed = 31;
    plant_everywhere(&t, seed);
    let c = crate::export::Collector::start(vec![]);
    t.envs
        .push(("OTEL_EXPORTER_OTLP_ENDPOINT".into(), c.base()));
    let r = t.run(&["export", "otlp", "--protocol", "http/json", "--content"]);
    r.ok();
    assert!(!r.stderr.contains("no-redact"), "{}", r.stderr);
    let sent = |from: usize| -> String {
        c.received()[from..]
            .iter()
            .map(|r| String::from_utf8_lossy(&r.body).into_owned())
            .collect()
    };
    let redacted = sent(0);
    assert!(!redacted.is_empty());
    assert_none_of(seed, &redacted, "the export");
    for k in Kind::ALL {
        assert!(redacted.contains(&format!("[REDACTED:{k}]")), "{k}");
    }
    // The stored files keep them.
    assert!(scan(&t).1.len() > Kind::ALL.len());

    let before = c.received().len();
    let r = t.run(&["export", "otlp", "--content", "--all", "--no-redact"]);
    r.ok();
    assert!(
        r.stderr
            .contains("warning: --no-redact: secrets in what is sent"),
        "{}",
        r.stderr
    );
    assert_all_of(seed, &sent(before), "the export with --no-redact");
}

#[test]
fn team_push_redacts_titles_records_and_output_text_unless_no_redact() {
    let pg = crate::pg::Pg::start();
    let url = pg.database("team");
    let seed = 41;
    // Everything the catalog holds of a machine, as text.
    let dump = |origin: &str| -> String {
        [
            "runs",
            "outputs",
            "work_sessions",
            "transcripts",
            "workflow_states",
        ]
        .iter()
        .flat_map(|table| {
            pg.sql(
                "team",
                &format!("SELECT t::text FROM {table} t WHERE t.origin = '{origin}'"),
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
    };
    let a = crate::pg::machine(&url, "laptop");
    a.run(&["team", "init"]).ok();
    plant_everywhere(&a, seed);
    let r = a.run(&["team", "push"]);
    r.ok();
    let held = dump("laptop");
    assert!(held.contains("casey"), "{held}");
    assert_none_of(seed, &held, "the catalog");
    assert!(held.contains("[REDACTED:anthropic-key]"), "{held}");
    // Another machine that asks for them sends them, and is told.
    let mut b = crate::pg::machine(&url, "desktop");
    // No background push (which redacts) before the one asked for.
    b.envs.push(("LOGBOOK_TEAM_DEADLINE".into(), "0".into()));
    plant_everywhere(&b, seed);
    let r = b.run(&["team", "push", "--no-redact"]);
    r.ok();
    assert!(
        r.stderr
            .contains("warning: --no-redact: secrets in what is pushed"),
        "{}",
        r.stderr
    );
    let held = dump("desktop");
    assert!(held.contains(needle(&planted(seed)[1].1)), "{held}");
    // The output text and the note carry every kind.
    assert_all_of(seed, &held, "the catalog after --no-redact");
}

#[test]
fn transcript_export_writes_a_redacted_page_or_markdown_and_no_redact_says_so() {
    let t = TestProject::new();
    let seed = 51;
    import_planted(&t, seed);
    let r = t.run(&["transcript", "export", &TRANSCRIPT_ID[..8], "--html"]);
    let page = r.ok();
    assert!(page.starts_with("<!doctype html>"), "{page}");
    assert!(page.contains("[REDACTED:private-key]"));
    assert_none_of(seed, page, "the page");
    assert!(r.stderr.is_empty(), "{}", r.stderr);
    let md = t.run(&["transcript", "export", TRANSCRIPT_ID, "--markdown"]);
    assert_none_of(seed, md.ok(), "the Markdown");
    // To a file, written whole.
    let r = t.run(&[
        "--json",
        "transcript",
        "export",
        TRANSCRIPT_ID,
        "--html",
        "-o",
        "s.html",
    ]);
    assert_eq!(r.json()["redacted"], true);
    assert_none_of(seed, &t.read("s.html"), "the file");
    // Asked for, the secrets are kept, and stderr says so.
    let r = t.run(&[
        "transcript",
        "export",
        TRANSCRIPT_ID,
        "--markdown",
        "--no-redact",
    ]);
    assert_all_of(seed, r.ok(), "the Markdown with --no-redact");
    assert!(r.stderr.starts_with("warning: --no-redact"), "{}", r.stderr);
    // A format is required; a missing session is not found.
    t.run(&["transcript", "export", TRANSCRIPT_ID]).usage();
    t.run(&["transcript", "export", "ffffffff", "--html"])
        .not_found();
    // The stored file still holds them.
    assert!(scan(&t).0.code == 1);
}
