//! The contract of INTERFACE.md (its copy in `testdata/shared`), checked
//! through the real binary: names, flags, exit codes and JSON shapes; files
//! other tools wrote (the seeds' examples and the fixtures, dropped in by
//! hand); hostile input.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;
use std::process::Stdio;

use serde_json::Value;

use crate::harness::{TestProject, shared, shared_text};

const SEED_RUN: &str = "a3f2c9d1-4b5e-6789-01ab-cdef12345678";
const SEED_SESSION: &str = "SES202501-ACME-AUDIT";
const MAIN_TRANSCRIPT: &str = "6f1c2b9e-3d4a-4c5b-9e8f-1a2b3c4d5e6f";
const SUB_TRANSCRIPT: &str = "0b7e9d2a-8c1f-4e3d-a6b5-9c8d7e6f5a4b";

/// The first fenced JSON block of seed 000: its example manifest.
fn seed_manifest() -> String {
    let text = shared_text("seeds/000_b12f3bcc02d88840.txt");
    let start = text.find("```json\n").unwrap() + "```json\n".len();
    let len = text[start..].find("```").unwrap();
    text[start..start + len].to_string()
}

/// Seed 002's session file example, comments and all.
fn seed_session_yaml() -> String {
    let text = shared_text("seeds/002_e122c2e894953c56.txt");
    let start = text.find("# {session_id}.yaml").unwrap();
    let len = text[start..].find("Token Deserialization").unwrap();
    text[start..start + len].to_string()
}

fn keys(v: &Value) -> Vec<&str> {
    v.as_object()
        .unwrap_or_else(|| panic!("not an object: {v}"))
        .keys()
        .map(String::as_str)
        .collect()
}

fn sorted(mut v: Vec<&str>) -> Vec<&str> {
    v.sort_unstable();
    v
}

/// Every file under `dir` with its bytes, to prove a refused command wrote nothing.
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
            // The derived index and lock files may change on any read.
            if rel.starts_with(".logbook/index.db") || rel.starts_with(".logbook/locks") {
                continue;
            }
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------
// Names, flags and JSON shapes

#[test]
fn work_session_commands_print_the_documented_json() {
    let t = TestProject::new();
    let other = tempfile::tempdir().unwrap();
    let root = t.root().to_str().unwrap();
    // --root from an unrelated working directory.
    let at = |args: &[&str]| {
        let mut all = vec!["--root", root, "--json"];
        all.extend_from_slice(args);
        let mut c = t.cmd(&all);
        c.current_dir(other.path());
        let r: crate::harness::Run = c.output().unwrap().into();
        r.json()
    };
    let record = [
        "session_id",
        "created",
        "last_updated",
        "status",
        "client",
        "project",
        "prefix",
        "tokens",
        "agents_spawned",
        "artifacts",
        "milestones",
        "context_summary",
        "notes",
        "indicator",
        "percentage",
    ];
    let started = at(&[
        "start",
        "--prefix",
        "ENG",
        "--client",
        "acme",
        "--project",
        "audit",
        "--max-tokens",
        "1000",
        "--yes",
    ]);
    assert_eq!(sorted(keys(&started)), sorted(record.to_vec()));
    let id = started["session_id"].as_str().unwrap().to_string();
    assert!(id.starts_with("ENG") && id.ends_with("-ACME-AUDIT"), "{id}");
    assert_eq!(started["indicator"], "active");
    assert_eq!(started["tokens"]["max"], 1000);
    // `resume` adds the agent session to resume (null: none recorded).
    let mut resumed = record.to_vec();
    resumed.push("agent_resume");
    // `status` adds what the session cost (issue 52).
    let mut status = record.to_vec();
    status.push("cost");
    for (cmd, want) in [
        (&["status"][..], &status[..]),
        (&["resume"], &resumed),
        (&["status", &id], &status),
        (&["resume", &id], &resumed),
    ] {
        assert_eq!(sorted(keys(&at(cmd))), sorted(want.to_vec()), "{cmd:?}");
    }
    assert_eq!(at(&["resume"])["agent_resume"], Value::Null);
    let used = at(&["usage", "--current", "850"]);
    assert_eq!(used["tokens"]["peak"], 850);
    let s = at(&["status"]);
    assert_eq!(s["indicator"], "warning");
    assert_eq!(s["percentage"].as_f64(), Some(85.0));
    at(&["usage", "--add", "110"]);
    assert_eq!(at(&["status"])["indicator"], "critical");

    // `agent spawn --json` is exactly {"id": …}.
    let spawned = at(&["agent", "spawn", "analyst"]);
    assert_eq!(keys(&spawned), ["id"]);
    let with_id = at(&["agent", "spawn", "dev", "--id", "dev-1"]);
    assert_eq!(with_id, serde_json::json!({ "id": "dev-1" }));
    at(&[
        "agent", "done", "dev-1", "--tokens", "300", "--output", "out.md", "--status", "failed",
    ]);
    at(&["milestone", "add", "M1"]);
    at(&["milestone", "done", "M1"]);
    at(&["artifact", "add", "docs/prd.md", "--agent", "pm"]);
    at(&["note", "a note"]);
    for cmd in [
        &["tokens"][..],
        &["savings"],
        &["list"],
        &["list", "--active"],
        &["list", "--archived"],
        &["pause"],
        &["switch", &id],
        &["mode", "planning"],
        &["workflow", "show"],
        &["index", "status"],
        &["doctor"],
        &["completions", "fish"],
    ] {
        at(cmd);
    }
    let closed = at(&["close", "--summary", "done"]);
    assert_eq!(closed["status"], "closed");

    let v = t.run(&["--json", "--version"]).json();
    assert_eq!(v["version"], env!("CARGO_PKG_VERSION"));
    assert!(t.run(&["--version"]).ok().starts_with("logbook "));
}

#[test]
fn run_commands_print_the_documented_json() {
    let t = TestProject::new();
    let started = t.json(&[
        "run",
        "start",
        "--agent",
        "alex",
        "--workflow",
        "intake-app",
        "--title",
        "Alex the Facilitator",
        "--bundle",
        "bmad/bmm",
        "--description",
        "Intake",
        "--input",
        "category=Hardware",
        "--tag",
        "t1",
        "--user",
        "Bryan",
    ]);
    assert_eq!(
        sorted(keys(&started)),
        ["folder", "manifest", "session_id", "variables"]
    );
    let id = started["session_id"].as_str().unwrap().to_string();
    let vars = &started["variables"];
    for k in [
        "session_id",
        "session_folder",
        "manifest_file",
        "default_output_file",
    ] {
        assert!(vars[k].is_string(), "{k} missing: {vars}");
    }
    for k in ["session_folder", "manifest_file", "default_output_file"] {
        assert!(Path::new(vars[k].as_str().unwrap()).is_absolute(), "{vars}");
    }
    let folder = started["folder"].as_str().unwrap();
    assert!(Path::new(folder).is_absolute());
    assert!(Path::new(folder).join("manifest.json").is_file());
    assert_eq!(started["manifest"]["execution"]["status"], "running");

    std::fs::write(Path::new(folder).join("out.md"), "hi").unwrap();
    t.json(&[
        "run",
        "output",
        &id,
        "out.md",
        "--type",
        "document",
        "--description",
        "the doc",
    ]);
    // A second run, later, that builds on the first.
    let second = t.json(&[
        "run",
        "start",
        "--agent",
        "casey",
        "--workflow",
        "deep-dive-app",
        "--related",
        &id,
    ]);
    let id2 = second["session_id"].as_str().unwrap().to_string();
    t.json(&["run", "finish", &id, "--status", "completed"]);

    let found = t.json(&["find"]);
    let rows = found.as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for row in rows {
        assert_eq!(
            sorted(keys(row)),
            ["display_name", "folder", "label", "manifest", "session_id"]
        );
    }
    assert_eq!(rows[0]["session_id"], id2.as_str(), "newest first");
    for args in [
        &["find", "--agent", "alex"][..],
        &["find", "--workflow", "^deep-"],
        &["find", "--status", "completed"],
        &["find", "--user", "Bryan"],
        &["find", "--tag", "t1"],
        &["find", "--text", "Hardware"],
        &["find", "--limit", "1"],
    ] {
        assert_eq!(t.json(args).as_array().unwrap().len(), 1, "{args:?}");
    }

    assert_eq!(
        t.json(&["find", "--since", "1d"]).as_array().unwrap().len(),
        2
    );
    assert!(
        t.json(&["find", "--since", "2999-01-01"])
            .as_array()
            .unwrap()
            .is_empty()
    );

    // latest-output prints the absolute path, and nothing else.
    let latest = t.run(&["latest-output", "--agent", "alex", "--type", "document"]);
    let path = latest.ok().trim_end();
    assert!(
        Path::new(path).is_absolute() && path.ends_with("/out.md"),
        "{path}"
    );
    assert!(Path::new(path).is_file());

    for format in ["tree", "json", "dot", "mermaid"] {
        assert_eq!(t.run(&["lineage", &id, "--format", format]).code, 0);
    }
    let lineage = t.json(&["lineage", &id]);
    assert!(lineage.to_string().contains(&id2), "{lineage}");
    t.json(&["run", "show", &id]);
    t.json(&["run", "env", &id]);
    let env = t.run(&["run", "env", &id]);
    assert!(env.ok().contains("LOGBOOK_SESSION_ID="), "{}", env.stdout);
}

#[test]
fn transcript_and_workflow_commands_print_the_documented_json() {
    let t = TestProject::new();
    t.run(&["start", "--client", "ACME", "--project", "STORE"])
        .ok();
    t.json(&[
        "transcript",
        "import",
        shared("fixtures/transcript-main.json").to_str().unwrap(),
    ]);
    t.json(&[
        "transcript",
        "import",
        shared("fixtures/transcript-subagent.json")
            .to_str()
            .unwrap(),
        "--subagent",
        "--parent",
        MAIN_TRANSCRIPT,
    ]);
    let list = t.json(&["transcript", "list", "--all"]);
    let rows = list.as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for row in rows {
        assert_eq!(
            keys(row),
            [
                "id",
                "kind",
                "file",
                "workdir",
                "startedAt",
                "lastActiveAt",
                "latestTotalTokens",
                "parentSessionId",
                "title",
                "source",
                "messages",
                "models",
                "usage",
                "live",
                "cost_usd"
            ]
        );
        assert_eq!(row["source"], "logbook", "{row:#}");
    }
    assert_eq!(rows[0]["id"], MAIN_TRANSCRIPT, "newest lastActiveAt first");
    assert_eq!(
        rows[0]["title"],
        "I need to purchase 10 laptops for the sales team"
    );
    assert_eq!(rows[0]["messages"], 3);
    assert_eq!(rows[1]["parentSessionId"], MAIN_TRANSCRIPT);
    assert_eq!(
        t.json(&["transcript", "list", "--all", "--subagents"])
            .as_array()
            .unwrap()
            .len(),
        1
    );
    let main = t.json(&["transcript", "list", "--all", "--main"]);
    assert_eq!(main[0]["kind"], "main");
    let shown = t.json(&["transcript", "show", SUB_TRANSCRIPT]);
    assert_eq!(shown["id"], SUB_TRANSCRIPT);
    assert!(shown["messages"].is_array() && shown["metadata"].is_object());
    t.json(&["transcript", "prune", "--older-than", "100000", "--dry-run"]);

    let s = t.json(&[
        "workflow",
        "invoke",
        "architect",
        "--prompt",
        "design",
        "--context",
        r#"{"run_id": "x"}"#,
        "--artifact",
        "docs/prd.md",
    ]);
    assert_eq!(s["orchestratorWorkflow"]["activeAgent"], "architect");
    t.json(&[
        "workflow",
        "complete",
        "architect",
        "--summary",
        "done",
        "--artifact",
        "docs/arch.md",
        "--recommendation",
        "r",
        "--handoff-to",
        "implementer",
        "--reason",
        "ready",
    ]);
    t.json(&[
        "workflow",
        "decide",
        "--type",
        "technical",
        "--description",
        "d",
        "--rationale",
        "r",
        "--by",
        "architect",
        "--approved-by",
        "critic",
    ]);
    t.json(&[
        "workflow",
        "verdict",
        "critic",
        "--decision",
        "conditional",
        "--confidence",
        "0.8",
        "--reasoning",
        "r",
        "--condition",
        "c",
    ]);
    t.json(&[
        "workflow",
        "handoff",
        "implementer",
        "qa",
        "--reason",
        "r",
        "--context",
        "c",
    ]);
    t.json(&["workflow", "phase", "validation"]);
    t.json(&["mode", "coding"]);
    let show = t.json(&["workflow", "show"]);
    assert_eq!(show["currentMode"], "coding");
    assert!(show.get("fullHistory").is_none());
    let full = t.json(&["workflow", "show", "--full"]);
    assert_eq!(full["fullHistory"].as_array().unwrap().len(), 1);
}

// ---------------------------------------------------------------------------
// Exit codes, stderr, pipes, environment

#[test]
fn bad_values_are_usage_errors_and_failures_are_errors() {
    let t = TestProject::new();
    let run = t.json(&["run", "start", "--agent", "a", "--workflow", "w"]);
    let id = run["session_id"].as_str().unwrap().to_string();
    t.run(&["start", "--client", "ACME", "--project", "X"]).ok();
    let before = snapshot(t.root());
    // A value outside an option's fixed set is bad usage: exit 2.
    for (args, names) in [
        (vec!["run", "finish", &id, "--status", "done"], "completed"),
        (
            vec![
                "run",
                "output",
                &id,
                "x",
                "--type",
                "pdf",
                "--description",
                "d",
            ],
            "document",
        ),
        (vec!["mode", "fast"], "analysis"),
        (vec!["workflow", "phase", "x"], "validation"),
        (
            vec![
                "workflow",
                "verdict",
                "critic",
                "--decision",
                "approve",
                "--confidence",
                "2",
                "--reasoning",
                "r",
            ],
            "0 to 1",
        ),
        (vec!["workflow", "invoke", "wizard", "--prompt", "p"], "qa"),
        (vec!["lineage", &id, "--format", "svg"], "mermaid"),
        (vec!["completions", "tcsh"], "bash"),
        (vec!["no-such-command"], ""),
        (vec!["find", "--no-such-flag"], ""),
    ] {
        let mut all = vec!["--json"];
        all.extend(args.iter().copied());
        let err = t.run(&all);
        assert!(
            err.usage().contains(names),
            "{args:?} should name {names}: {}",
            err.stderr
        );
    }
    // Failures of a well-formed command: `error: …` on stderr only, exit 4
    // for what does not exist, 1 for the rest (a value the library refuses
    // included, as the MCP server and the web API refuse it).
    for (code, args) in [
        (
            4,
            vec!["run", "show", "00000000-0000-4000-8000-000000000000"],
        ),
        (4, vec!["status", "SES202501-NOPE-NOPE"]),
        (4, vec!["transcript", "show", MAIN_TRANSCRIPT]),
        (4, vec!["transcript", "import", "/no/such/file.json"]),
        (4, vec!["latest-output", "--agent", "nobody"]),
        (1, vec!["find", "--status", "done"]),
        (1, vec!["workflow", "complete", "qa", "--summary", "s"]),
        (1, vec!["start", "--client", "B", "--project", "C"]),
        (1, vec!["init"]),
    ] {
        if args == ["init"] {
            t.write("logbook.yaml", "");
        }
        let mut all = vec!["--json"];
        all.extend(args.iter().copied());
        let r = t.run(&all);
        let err = r.fails_with(code);
        assert!(r.stdout.is_empty(), "{args:?}: {}", r.stdout);
        assert_eq!(err.lines().count(), 1, "one line: {err}");
        // No cause printed twice ("No such file …: No such file …").
        let parts: Vec<&str> = err.trim_end().split(": ").collect();
        for w in parts.windows(2) {
            assert_ne!(w[0], w[1], "{err}");
        }
    }
    std::fs::remove_file(t.path("logbook.yaml")).unwrap();
    assert_eq!(before, snapshot(t.root()), "refused commands wrote nothing");
}

#[test]
fn closed_pipe_no_color_and_logbook_root() {
    let t = TestProject::new();
    for i in 0..3 {
        t.json(&[
            "run",
            "start",
            "--agent",
            "a",
            "--workflow",
            &format!("w{i}"),
        ]);
    }
    // `logbook find | head -1`: the reader goes away; no error, exit 0.
    for args in [&["find"][..], &["--json", "find"], &["completions", "bash"]] {
        let mut child = t
            .cmd(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let mut stderr = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(0), "{args:?}: {stderr}");
        assert!(stderr.is_empty(), "{args:?}: {stderr}");
    }
    // NO_COLOR: no escape codes anywhere.
    t.run(&["start", "--client", "A", "--project", "B"]).ok();
    for args in [
        &["status"][..],
        &["find"],
        &["list"],
        &["status", "SES000000-X-Y"],
    ] {
        let r = t.run(args);
        assert!(!r.stdout.contains('\x1b') && !r.stderr.contains('\x1b'));
    }
    // LOGBOOK_ROOT from another folder.
    let other = tempfile::tempdir().unwrap();
    let mut c = t.cmd(&["--json", "find"]);
    c.current_dir(other.path()).env("LOGBOOK_ROOT", t.root());
    let r: crate::harness::Run = c.output().unwrap().into();
    assert_eq!(r.json().as_array().unwrap().len(), 3);
}

// ---------------------------------------------------------------------------
// Files other tools wrote

#[test]
fn bmad_layout_with_the_seed_session_written_by_hand() {
    let t = TestProject::new();
    t.write(
        "logbook.yaml",
        "sessions_dir: '{project-root}/_bmad-output/sessions'\n",
    );
    let file = format!("_bmad-output/sessions/{SEED_SESSION}.yaml");
    t.write(&file, &seed_session_yaml());
    let list = t.json(&["list"]);
    assert_eq!(list["sessions"][0]["session_id"], SEED_SESSION, "{list}");
    let s = t.json(&["status", SEED_SESSION]);
    assert_eq!(s["tokens"]["current"], 45000);
    assert_eq!(s["percentage"].as_f64(), Some(30.0));
    assert_eq!(s["notes"][0], "Client prefers OAuth2 over JWT");
    let tokens = t.run(&["tokens", SEED_SESSION]);
    assert!(tokens.ok().contains("Tokens Saved: 145,000 (76% savings)"));
    t.json(&["resume", SEED_SESSION]);
    t.json(&["milestone", "done", "Implementation Started"]);
    let text = t.read(&file);
    assert!(text.contains("Client prefers OAuth2 over JWT"), "{text}");
    assert!(text.contains("_bmad-output/temp/analyst-123.md"), "{text}");
    assert!(
        t.path("_bmad-output/sessions/active-session.yaml")
            .is_file()
    );
    let closed = t.json(&["close"]);
    assert_eq!(closed["status"], "closed");
    assert!(!t.path(&file).exists());
}

#[test]
fn seed_manifest_dropped_in_by_hand_and_hand_edits() {
    let t = TestProject::new();
    // An index exists before the hand edits, as in a project in use.
    let mine = t.json(&["run", "start", "--agent", "casey", "--workflow", "w"]);
    let mine = mine["session_id"].as_str().unwrap().to_string();
    let dir = format!("docs/agent-outputs/{SEED_RUN}");
    t.write(&format!("{dir}/manifest.json"), &seed_manifest());
    t.write(&format!("{dir}/initial-requirements.md"), "# reqs\n");

    let found = t.json(&["find", "--agent", "alex"]);
    assert_eq!(found[0]["session_id"], SEED_RUN, "{found}");
    assert_eq!(found[0]["manifest"]["messageCount"], 8);
    let show = t.json(&["run", "show", SEED_RUN]);
    assert_eq!(show["manifest"]["metadata"]["custom_field"], "value");
    let latest = t.run(&[
        "latest-output",
        "--agent",
        "alex",
        "--workflow",
        "intake-app",
    ]);
    assert_eq!(
        latest.ok().trim_end(),
        t.path(&format!("{dir}/initial-requirements.md"))
            .to_str()
            .unwrap()
    );
    let lineage = t.json(&["lineage", SEED_RUN]);
    assert_eq!(
        lineage["dangling"][0],
        "b4e3d8c2-5c6f-7890-12bc-def123456789"
    );

    // run link rewrites the file keeping every key and its order; Story
    // 6.3's display fields are refreshed on every write.
    t.json(&["run", "link", SEED_RUN, &mine]);
    let before: Value = serde_json::from_str(&seed_manifest()).unwrap();
    let after: Value = serde_json::from_str(&t.read(&format!("{dir}/manifest.json"))).unwrap();
    assert_eq!(keys(&before), keys(&after));
    let mut expected = before.clone();
    expected["related_sessions"]
        .as_array_mut()
        .unwrap()
        .push(Value::from(mine.as_str()));
    expected["displayTimestamp"] = "Oct 5".into();
    expected["displayName"] = "Oct 5 - I need to purchase 10 laptops...".into();
    assert_eq!(expected, after);
    let up = t.json(&["lineage", &mine]);
    assert!(up["descendants"].to_string().contains(SEED_RUN), "{up}");

    // Another tool edits the manifest in place: seen after `index sync`.
    let path = t.path(&format!("{dir}/manifest.json"));
    let edited = std::fs::read_to_string(&path)
        .unwrap()
        .replace("\"name\": \"alex\"", "\"name\": \"quinn\"");
    std::fs::write(&path, edited).unwrap();
    t.run(&["index", "sync"]).ok();
    assert_eq!(
        t.json(&["find", "--agent", "quinn"])[0]["session_id"],
        SEED_RUN
    );

    // Another tool deletes a run folder: gone from the next listing.
    std::fs::remove_dir_all(t.path(&format!("docs/agent-outputs/{mine}"))).unwrap();
    let all = t.json(&["find"]);
    assert_eq!(all.as_array().unwrap().len(), 1, "{all}");
    let lineage = t.json(&["lineage", SEED_RUN]);
    assert!(lineage["dangling"].to_string().contains(&mine), "{lineage}");
    t.run(&["run", "show", &mine]).not_found();
}

#[test]
fn fixture_transcripts_and_state_copied_by_hand() {
    let t = TestProject::new();
    t.write(
        ".logbook/transcripts/session_3c4d5e6f.json",
        &shared_text("fixtures/transcript-main.json"),
    );
    t.write(
        ".logbook/transcripts/subagent_session_7e6f5a4b.json",
        &shared_text("fixtures/transcript-subagent.json"),
    );
    let list = t.json(&["transcript", "list", "--all"]);
    let ids: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [MAIN_TRANSCRIPT, SUB_TRANSCRIPT]);
    assert_eq!(list[1]["kind"], "subagent");
    let main: Value = serde_json::from_str(&shared_text("fixtures/transcript-main.json")).unwrap();
    assert_eq!(t.json(&["transcript", "show", MAIN_TRANSCRIPT]), main);

    // A hand-written session and the fixture state beside it.
    let ses = "SES202601-ACME-STORE";
    let yaml = seed_session_yaml().replace(SEED_SESSION, ses);
    t.write(&format!(".logbook/sessions/{ses}.yaml"), &yaml);
    let mut state: Value =
        serde_json::from_str(&shared_text("fixtures/session-state.json")).unwrap();
    state["x-other-tool"] = serde_json::json!({ "kept": true });
    state["orchestratorWorkflow"]["agentHistory"][0]["x-note"] = Value::from("mine");
    let state_file = format!(".logbook/sessions/{ses}.state.json");
    t.write(&state_file, &serde_json::to_string_pretty(&state).unwrap());

    let shown = t.json(&["workflow", "show", "--session", ses]);
    assert_eq!(shown, state, "shown as stored");
    // The fixture's archive is not here: --full still answers, and says so.
    let full = t.run(&["--json", "workflow", "show", "--full", "--session", ses]);
    let full_json = full.json();
    assert_eq!(full_json["fullHistory"].as_array().unwrap().len(), 2);
    assert!(full.stderr.contains("is missing"), "{}", full.stderr);

    t.json(&[
        "workflow",
        "invoke",
        "qa",
        "--prompt",
        "test",
        "--session",
        ses,
    ]);
    let done = t.json(&[
        "workflow",
        "complete",
        "qa",
        "--summary",
        "ok",
        "--session",
        ses,
    ]);
    assert_eq!(done["version"], 29);
    let stored: Value = serde_json::from_str(&t.read(&state_file)).unwrap();
    assert_eq!(keys(&stored), keys(&state), "key order kept");
    assert_eq!(stored["x-other-tool"]["kept"], true);
    assert_eq!(
        stored["orchestratorWorkflow"]["agentHistory"][0]["x-note"],
        "mine"
    );
    assert!(
        stored["orchestratorWorkflow"]["pendingHandoffs"]
            .as_array()
            .unwrap()
            .is_empty(),
        "the handoff to qa was taken up"
    );
}

// ---------------------------------------------------------------------------
// Hostile input

#[test]
fn hostile_ids_and_paths_are_refused_and_change_nothing() {
    let t = TestProject::new();
    let run = t.json(&["run", "start", "--agent", "a", "--workflow", "w"]);
    let id = run["session_id"].as_str().unwrap().to_string();
    t.run(&["start", "--client", "ACME", "--project", "X"]).ok();
    t.write("outside.txt", "x");
    let long = "A".repeat(5000);
    let before = snapshot(t.root());
    let out = |file: &str| {
        vec![
            "run".to_string(),
            "output".into(),
            id.clone(),
            file.into(),
            "--type".into(),
            "data".into(),
            "--description".into(),
            "d".into(),
        ]
    };
    let cases: Vec<Vec<String>> = vec![
        vec!["run".into(), "show".into(), "../x".into()],
        vec!["run".into(), "show".into(), "/etc".into()],
        vec!["run".into(), "show".into(), long.clone()],
        vec!["run".into(), "link".into(), id.clone(), "../x".into()],
        out("../outside.txt"),
        out("/etc/passwd"),
        out("a/../../x"),
        out("ünïcödé-missing.md"),
        vec!["status".into(), "../../etc/passwd".into()],
        vec!["switch".into(), "/tmp".into()],
        vec!["status".into(), format!("SES202501-{long}-X")],
        vec!["transcript".into(), "show".into(), "../x".into()],
        vec![
            "start".into(),
            "--client".into(),
            "../x".into(),
            "--yes".into(),
        ],
        vec![
            "start".into(),
            "--client".into(),
            "ÄÖ".into(),
            "--yes".into(),
        ],
        vec![
            "start".into(),
            "--prefix".into(),
            "../".into(),
            "--yes".into(),
        ],
        vec![
            "workflow".into(),
            "show".into(),
            "--session".into(),
            "../x".into(),
        ],
    ];
    for args in &cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let r = t.run(&args);
        // A file that is not there is "not found" (exit 4), the rest refused.
        let err = if r.code == 4 { r.not_found() } else { r.err() };
        assert!(
            err.contains("invalid") || err.contains("not found"),
            "{args:?}: {err}"
        );
    }
    assert_eq!(before, snapshot(t.root()), "nothing written or lost");
}

#[test]
fn malformed_files_in_every_store_are_named_and_lose_nothing() {
    let t = TestProject::new();
    let good = t.json(&["run", "start", "--agent", "a", "--workflow", "w"]);
    let good = good["session_id"].as_str().unwrap().to_string();
    let ses = t.json(&["start", "--client", "ACME", "--project", "X"]);
    let ses = ses["session_id"].as_str().unwrap().to_string();
    t.json(&["workflow", "invoke", "qa", "--prompt", "p"]);
    t.write(
        "docs/agent-outputs/11111111-1111-4111-8111-111111111111/manifest.json",
        "{\"version\": ",
    );
    t.write(
        ".logbook/sessions/SES202601-BAD-ONE.yaml",
        "session_id: [\n",
    );
    t.write(".logbook/transcripts/session_deadbeef.json", "{");
    let before = snapshot(t.root());

    // Listings skip what they cannot read and still answer in JSON.
    let found = t.run(&["--json", "find"]);
    assert_eq!(found.json().as_array().unwrap().len(), 1);
    let list = t.run(&["--json", "list"]);
    assert_eq!(list.json()["sessions"].as_array().unwrap().len(), 1);
    assert!(
        list.stderr.contains("SES202601-BAD-ONE.yaml"),
        "{}",
        list.stderr
    );
    let tl = t.run(&["--json", "transcript", "list", "--all"]);
    assert!(tl.json().as_array().unwrap().is_empty());
    assert!(tl.stderr.contains("session_deadbeef.json"), "{}", tl.stderr);
    let doctor = t.doctor(&[]);
    let text = doctor.to_string();
    for name in [
        "11111111-1111-4111-8111-111111111111",
        "SES202601-BAD-ONE",
        "session_deadbeef",
    ] {
        assert!(text.contains(name), "doctor names {name}: {text}");
    }
    // Loading one names the file and says what to do.
    for (args, file) in [
        (
            vec!["run", "show", "11111111-1111-4111-8111-111111111111"],
            "manifest.json",
        ),
        (
            vec!["status", "SES202601-BAD-ONE"],
            "SES202601-BAD-ONE.yaml",
        ),
        (
            vec!["transcript", "show", "00000000-0000-4000-8000-0000deadbeef"],
            "session_deadbeef.json",
        ),
    ] {
        let err = t.run(&args).err().to_string();
        assert!(err.contains(file) && err.contains("doctor"), "{err}");
    }
    assert_eq!(before, snapshot(t.root()), "reads changed nothing");

    // A broken state file, pointer or config stops the command that needs
    // it with the file's name, and the other stores still work.
    let state = format!(".logbook/sessions/{ses}.state.json");
    let state_text = t.read(&state);
    t.write(&state, "{\"currentMode\": ");
    let err = t
        .run(&["workflow", "invoke", "qa", "--prompt", "p"])
        .err()
        .to_string();
    assert!(err.contains(".state.json"), "{err}");
    assert_eq!(t.read(&state), "{\"currentMode\": ", "not overwritten");
    t.write(&state, &state_text);

    let pointer = ".logbook/sessions/active-session.yaml";
    let pointer_text = t.read(pointer);
    t.write(pointer, "session_id: [\n");
    let err = t.run(&["status"]).err().to_string();
    assert!(err.contains("active-session.yaml"), "{err}");
    assert_eq!(t.json(&["find"]).as_array().unwrap().len(), 1);
    t.write(pointer, &pointer_text);

    t.write("logbook.yaml", "output_folder: [\n");
    let err = t.run(&["find"]).err().to_string();
    assert!(
        err.contains("logbook.yaml") && err.contains("line 1"),
        "{err}"
    );
    std::fs::remove_file(t.path("logbook.yaml")).unwrap();

    assert_eq!(t.json(&["status"])["session_id"], ses.as_str());
    assert_eq!(t.json(&["run", "show", &good])["session_id"], good.as_str());
}
