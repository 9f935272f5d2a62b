//! Runs (seed 000): lifecycle, path safety, workflow variables, discovery,
//! lineage, display names, doctor, and the concurrency and crash guarantees.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::{TestProject, shared, shared_text};

const SEED_ID: &str = "a3f2c9d1-4b5e-6789-01ab-cdef12345678";

fn start(p: &TestProject, extra: &[&str]) -> String {
    let mut args = vec!["run", "start"];
    args.extend_from_slice(extra);
    p.json(&args)["session_id"].as_str().unwrap().to_string()
}

fn run_dir(p: &TestProject, id: &str) -> PathBuf {
    p.path(&format!("docs/agent-outputs/{id}"))
}

fn manifest(p: &TestProject, id: &str) -> Value {
    let text = std::fs::read_to_string(run_dir(p, id).join("manifest.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn touch(p: &TestProject, id: &str, rel: &str) {
    p.write(&format!("docs/agent-outputs/{id}/{rel}"), "content\n");
}

/// The JSON block under "### Manifest Structure" in the seed, verbatim.
fn seed_manifest() -> String {
    let seed = shared_text("seeds/000_b12f3bcc02d88840.txt");
    let after = &seed[seed.find("### Manifest Structure").unwrap()..];
    let start = after.find("```json\n").unwrap() + "```json\n".len();
    let end = start + after[start..].find("```").unwrap();
    after[start..end].to_string()
}

fn keys_in_order(v: &Value, out: &mut Vec<String>, prefix: &str) {
    if let Value::Object(m) = v {
        for (k, v) in m {
            out.push(format!("{prefix}{k}"));
            keys_in_order(v, out, &format!("{prefix}{k}."));
        }
    }
}

#[test]
fn seed_example_loads_lists_and_round_trips() {
    let mut p = TestProject::new();
    p.now = Some("2025-10-06T12:00:00Z".into());
    let text = seed_manifest();
    p.write(
        &format!("docs/agent-outputs/{SEED_ID}/manifest.json"),
        &text,
    );
    let before: Value = serde_json::from_str(&text).unwrap();

    let found = p.json(&["find"]);
    assert_eq!(found.as_array().unwrap().len(), 1);
    let entry = &found[0];
    assert_eq!(entry["session_id"], SEED_ID);
    assert_eq!(
        entry["manifest"], before,
        "find --json shows the manifest as stored"
    );
    assert_eq!(
        entry["label"],
        "Alex the Facilitator - intake-app (Oct 5, 2025, 11:05 PM)"
    );
    // Computed at read time from the clock, not the stored "2:30p".
    assert_eq!(
        entry["display_name"],
        "Yday 11:01p - I need to purchase 10 laptops..."
    );
    assert_eq!(p.json(&["run", "show", SEED_ID])["manifest"], before);

    // A rewrite through logbook changes only what it was asked to change,
    // and refreshes Story 6.3's display fields (other tools read them).
    let other = start(&p, &["--agent", "casey", "--workflow", "deep-dive-app"]);
    p.json(&["run", "link", SEED_ID, &other]);
    let after = manifest(&p, SEED_ID);
    let mut expected = before.clone();
    expected["related_sessions"]
        .as_array_mut()
        .unwrap()
        .push(json!(other));
    expected["displayTimestamp"] = json!("Yday 11:01p");
    expected["displayName"] = json!("Yday 11:01p - I need to purchase 10 laptops...");
    assert_eq!(after, expected);
    let (mut k1, mut k2) = (vec![], vec![]);
    keys_in_order(&before, &mut k1, "");
    keys_in_order(&after, &mut k2, "");
    assert_eq!(k1, k2, "key order kept");
    assert!(
        p.read(&format!("docs/agent-outputs/{SEED_ID}/manifest.json"))
            .contains("\n  \"version\": \"1.0.0\",\n")
    );
    // Streamed item by item, the listing is the one pretty-printed array
    // a whole value prints as.
    let streamed = p.run(&["--json", "find"]);
    let listed: Value = serde_json::from_str(streamed.ok()).unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 2);
    assert_eq!(
        streamed.ok(),
        format!("{}\n", serde_json::to_string_pretty(&listed).unwrap())
    );
}

#[test]
fn invalid_manifests_are_skipped_and_named() {
    let p = TestProject::new();
    let good = start(&p, &["--agent", "alex", "--workflow", "intake-app"]);
    let bad1 = "11111111-1111-4111-8111-111111111111";
    let bad2 = "22222222-2222-4222-8222-222222222222";
    p.write(
        &format!("docs/agent-outputs/{bad1}/manifest.json"),
        "{ not json",
    );
    p.write(
        &format!("docs/agent-outputs/{bad2}/manifest.json"),
        r#"{"session_id":"x","agent":{"title":"no name"},"workflow":{"name":"w"},"execution":{"started_at":"2025-01-01T00:00:00Z"}}"#,
    );
    let r = p.run(&["--json", "find"]);
    let found: Value = serde_json::from_str(r.ok()).unwrap();
    assert_eq!(found.as_array().unwrap().len(), 1);
    assert_eq!(found[0]["session_id"], good.as_str());
    assert!(r.stderr.contains("skipped 2 invalid"), "{}", r.stderr);
    let report = p.doctor(&[]);
    let text = report.to_string();
    assert!(text.contains(bad1) && text.contains(bad2), "{text}");
    assert!(
        text.contains("agent.name") || text.contains("`name`"),
        "{text}"
    );
}

#[test]
fn lifecycle() {
    let mut p = TestProject::new();
    p.now = Some("2025-10-05T23:01:45.123Z".into());
    let out = p.json(&[
        "run",
        "start",
        "--agent",
        "alex",
        "--title",
        "Alex the Facilitator",
        "--bundle",
        "bmad/bmm",
        "--workflow",
        "intake-app",
        "--description",
        "Intake",
        "--input",
        "category=Hardware",
        "--input",
        "project_name=Laptops",
        "--tag",
        "q4",
        "--user",
        "Bryan",
    ]);
    let id = out["session_id"].as_str().unwrap().to_string();
    assert_eq!(uuid::Uuid::parse_str(&id).unwrap().get_version_num(), 4);
    let folder = PathBuf::from(out["folder"].as_str().unwrap());
    assert!(folder.is_absolute() && folder.ends_with(&id));
    let m = manifest(&p, &id);
    assert_eq!(out["manifest"], m);
    assert_eq!(m["version"], "1.0.0");
    assert_eq!(
        m["execution"],
        json!({"started_at": "2025-10-05T23:01:45.123Z", "status": "running", "user": "Bryan"})
    );
    assert_eq!(
        m["agent"],
        json!({"name": "alex", "title": "Alex the Facilitator", "bundle": "bmad/bmm"})
    );
    assert_eq!(
        m["inputs"],
        json!({"category": "Hardware", "project_name": "Laptops"})
    );
    assert_eq!(m["outputs"], json!([]));
    assert_eq!(m["tags"], json!(["q4"]));
    assert_eq!(m["displayName"], "11:01p - intake-app: Laptops");
    assert_eq!(m["displayTimestamp"], "11:01p");
    let vars = &out["variables"];
    assert_eq!(vars["session_id"], id.as_str());
    assert_eq!(vars["session_folder"], folder.to_str().unwrap());
    assert_eq!(
        vars["manifest_file"],
        folder.join("manifest.json").to_str().unwrap()
    );
    assert_eq!(
        vars["default_output_file"],
        folder.join("output.md").to_str().unwrap()
    );

    touch(&p, &id, "requirements.md");
    touch(&p, &id, "data/analysis.json");
    p.now = Some("2025-10-05T23:05:20.789Z".into());
    p.json(&[
        "run",
        "output",
        &id,
        "requirements.md",
        "--type",
        "document",
        "--description",
        "Draft",
    ]);
    p.json(&[
        "run",
        "output",
        &id,
        "./data/analysis.json",
        "--type",
        "data",
        "--description",
        "Numbers",
    ]);
    p.now = Some("2025-10-05T23:06:00.000Z".into());
    let again = p.json(&[
        "run",
        "output",
        &id,
        "requirements.md",
        "--type",
        "report",
        "--description",
        "Final",
    ]);
    assert_eq!(
        again["path"],
        folder.join("requirements.md").to_str().unwrap()
    );
    let m = manifest(&p, &id);
    assert_eq!(
        m["outputs"],
        json!([
            {"file": "requirements.md", "type": "report", "description": "Final", "created_at": "2025-10-05T23:05:20.789Z"},
            {"file": "data/analysis.json", "type": "data", "description": "Numbers", "created_at": "2025-10-05T23:05:20.789Z"},
        ])
    );

    let env = p.run(&["run", "env", &id]);
    assert!(
        env.ok().contains(&format!("LOGBOOK_SESSION_ID='{id}'\n")),
        "{}",
        env.stdout
    );
    assert!(env.stdout.contains(&format!(
        "LOGBOOK_DEFAULT_OUTPUT_FILE='{}'",
        folder.join("output.md").display()
    )));
    let sh = std::process::Command::new("sh")
        .arg("-c")
        .arg("eval \"$(cat)\"; printf %s \"$LOGBOOK_SESSION_FOLDER\"")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(env.stdout.as_bytes())?;
            c.wait_with_output()
        })
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&sh.stdout),
        folder.to_str().unwrap()
    );

    p.now = Some("2025-10-05T23:10:00.000Z".into());
    let fin = p.json(&["run", "finish", &id, "--status", "failed"]);
    assert_eq!(fin["manifest"]["execution"]["status"], "failed");
    assert_eq!(
        manifest(&p, &id)["execution"]["completed_at"],
        "2025-10-05T23:10:00.000Z"
    );
    let before = p.read(&format!("docs/agent-outputs/{id}/manifest.json"));
    let err = p.run(&[
        "run",
        "output",
        &id,
        "requirements.md",
        "--type",
        "document",
        "--description",
        "x",
    ]);
    assert!(
        err.err()
            .contains("is failed; outputs can only be registered while it is running"),
        "{}",
        err.stderr
    );
    assert!(
        p.run(&["run", "finish", &id])
            .err()
            .contains("already failed")
    );
    assert_eq!(
        p.read(&format!("docs/agent-outputs/{id}/manifest.json")),
        before
    );

    let bad_status = p.run(&["run", "finish", &id, "--status", "running"]);
    assert_eq!(bad_status.code, 2, "bad usage");
    let bad_type = p.run(&[
        "run",
        "output",
        &id,
        "requirements.md",
        "--type",
        "video",
        "--description",
        "x",
    ]);
    assert_eq!(bad_type.code, 2, "bad usage");
}

#[test]
fn path_attacks_are_refused_and_change_nothing() {
    let p = TestProject::new();
    let id = start(&p, &["--agent", "alex", "--workflow", "intake-app"]);
    touch(&p, &id, "ok.md");
    p.json(&[
        "run",
        "output",
        &id,
        "ok.md",
        "--type",
        "document",
        "--description",
        "fine",
    ]);
    let outside = p.write("secret.txt", "secret\n");
    std::os::unix::fs::symlink(&outside, run_dir(&p, &id).join("link.md")).unwrap();
    std::os::unix::fs::symlink(p.root(), run_dir(&p, &id).join("rootlink")).unwrap();
    let manifest_path = run_dir(&p, &id).join("manifest.json");
    let before = std::fs::read(&manifest_path).unwrap();

    let cases: &[(&str, &str, &str)] = &[
        (&id, "../x", "contains `..`"),
        (&id, "/etc/passwd", "is absolute"),
        (&id, "a/../../x", "contains `..`"),
        (&id, "link.md", "leads outside the run folder"),
        (&id, "rootlink/secret.txt", "leads outside the run folder"),
        (&id, "missing.md", "missing.md not found"),
        (&id, "manifest.json", "the manifest itself"),
        (&id, ".", "names the run folder itself"),
        ("not-a-uuid", "ok.md", "invalid run id \"not-a-uuid\""),
        ("../../etc", "ok.md", "invalid run id"),
        (
            "33333333-3333-4333-8333-333333333333",
            "ok.md",
            "run 33333333-3333-4333-8333-333333333333 not found",
        ),
    ];
    for (run, file, message) in cases {
        let r = p.run(&[
            "run",
            "output",
            run,
            file,
            "--type",
            "document",
            "--description",
            "x",
        ]);
        // A run that does not exist exits 4, a refused path 1.
        let stderr = r.fails_with(if message.contains("not found") { 4 } else { 1 });
        assert!(stderr.contains(message), "{run} {file}: {stderr}");
        assert_eq!(
            std::fs::read(&manifest_path).unwrap(),
            before,
            "{file} changed the manifest"
        );
    }
    // A NUL cannot travel through argv; the library refuses it (unit test
    // `run::tests::output_paths`) before any path is touched.
    assert!(
        !p.path("docs/agent-outputs/33333333-3333-4333-8333-333333333333")
            .exists()
    );
}

#[test]
fn workflow_file_variables_resolve_with_the_fixture() {
    let p = TestProject::new();
    p.write(
        "bmad/bmm/config.yaml",
        &shared_text("fixtures/bmad-config.yaml"),
    );
    let wf = shared("fixtures/workflow.yaml");
    let out = p.json(&[
        "run",
        "start",
        "--agent",
        "alex",
        "--workflow-file",
        wf.to_str().unwrap(),
    ]);
    let id = out["session_id"].as_str().unwrap();
    let folder = p.root().join("docs/agent-outputs").join(id);
    let f = |rel: &str| folder.join(rel).to_str().unwrap().to_string();
    let vars = &out["variables"];
    assert_eq!(vars["session_folder"], folder.to_str().unwrap());
    assert_eq!(vars["manifest_file"], f("manifest.json"));
    assert_eq!(vars["default_output_file"], f("output.md"));
    assert_eq!(vars["requirements_file"], f("initial-requirements.md"));
    assert_eq!(vars["attachments_folder"], f("attachments"));
    assert_eq!(
        vars["config_source"],
        p.path("bmad/bmm/config.yaml").to_str().unwrap()
    );
    for (k, v) in vars.as_object().unwrap() {
        let v = v.as_str().unwrap();
        assert!(!v.contains('{') && !v.contains('}'), "{k} = {v}");
        assert!(
            k == "session_id" || v.starts_with('/'),
            "{k} = {v} is absolute"
        );
    }
    let m = &out["manifest"];
    assert_eq!(m["workflow"]["name"], "intake-app");
    assert_eq!(
        m["workflow"]["description"],
        "Initial requirements gathering for application development"
    );
    assert_eq!(
        m["inputs"],
        json!({"category": "Application Development", "request_type": "application"})
    );
    assert_eq!(
        m["execution"]["user"], "Bryan",
        "user_name from the bundle config"
    );

    // The bundle config decides where runs go unless logbook.yaml sets a
    // folder (issue 45): the run follows it, never refused.
    p.write(
        "bmad/bmm/config.yaml",
        "output_folder: '{project-root}/elsewhere'\nagent_outputs_folder: '{output_folder}/runs'\n",
    );
    let run = |p: &TestProject| {
        p.run(&[
            "--json",
            "run",
            "start",
            "--agent",
            "alex",
            "--workflow-file",
            wf.to_str().unwrap(),
        ])
    };
    let r = run(&p);
    let out = r.json();
    assert!(out["folder"].as_str().unwrap().contains("/elsewhere/runs/"));
    assert_eq!(out["variables"]["session_folder"], out["folder"]);
    // A disagreement with logbook.yaml: logbook.yaml's folder, and a warning,
    // never a silent run in either place.
    p.write(
        "logbook.yaml",
        "agent_outputs_folder: '{project-root}/docs/agent-outputs'\n",
    );
    let r = run(&p);
    let out = r.json();
    assert!(
        out["folder"]
            .as_str()
            .unwrap()
            .contains("/docs/agent-outputs/")
    );
    assert!(
        r.stderr.contains("warning:") && r.stderr.contains("/elsewhere/runs"),
        "{}",
        r.stderr
    );
}

#[test]
fn unknown_placeholder_is_named_and_nothing_is_created() {
    let p = TestProject::new();
    for (body, placeholder) in [
        ("report: '{session_folder}/{nope}.md'\n", "{nope}"),
        ("report: '{{project_slug}}/x.md'\n", "{{project_slug}}"),
        (
            "report: '{config_source}:nokey/x'\n",
            "{config_source}:nokey",
        ),
        ("a: '{b}'\nb: '{a}'\n", "refers back to itself"),
    ] {
        let wf = p.write(
            "wf.yaml",
            &format!("name: w\nconfig_source: '{{project-root}}/cfg.yaml'\n{body}"),
        );
        let r = p.run(&[
            "run",
            "start",
            "--agent",
            "x",
            "--workflow-file",
            wf.to_str().unwrap(),
        ]);
        let err = r.err();
        assert!(err.contains(placeholder), "{placeholder}: {err}");
        assert!(err.contains("wf.yaml"), "names the file: {err}");
    }
    assert!(
        !p.path("docs/agent-outputs").exists()
            || std::fs::read_dir(p.path("docs/agent-outputs"))
                .unwrap()
                .count()
                == 0
    );
}

fn started_at(p: &mut TestProject, when: &str, args: &[&str]) -> String {
    p.now = Some(when.into());
    start(p, args)
}

#[test]
fn find_filters_and_orders_newest_first() {
    let mut p = TestProject::new();
    let a = started_at(
        &mut p,
        "2025-10-01T10:00:00Z",
        &[
            "--agent",
            "casey",
            "--workflow",
            "deep-dive-app",
            "--tag",
            "hw",
            "--user",
            "ann",
        ],
    );
    let b = started_at(
        &mut p,
        "2025-10-03T10:00:00Z",
        &[
            "--agent",
            "casey",
            "--workflow",
            "deep-dive-itsm",
            "--input",
            "category=Laptop refresh",
        ],
    );
    let c = started_at(
        &mut p,
        "2025-10-02T10:00:00Z",
        &["--agent", "alex", "--workflow", "intake-app", "--tag", "hw"],
    );
    let d = started_at(
        &mut p,
        "2025-10-04T10:00:00Z",
        &["--agent", "casey", "--workflow", "summary"],
    );
    p.now = Some("2025-10-05T10:00:00Z".into());
    p.json(&["run", "finish", &a]);
    p.json(&["run", "finish", &c, "--status", "cancelled"]);

    let ids = |args: &[&str]| -> Vec<String> {
        let mut all = vec!["find"];
        all.extend_from_slice(args);
        p.json(&all)
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["session_id"].as_str().unwrap().to_string())
            .collect()
    };
    let s = |xs: &[&String]| xs.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    assert_eq!(ids(&[]), s(&[&d, &b, &c, &a]));
    assert_eq!(ids(&["--agent", "casey"]), s(&[&d, &b, &a]));
    assert_eq!(ids(&["--agent", "case"]), Vec::<String>::new());
    assert_eq!(
        ids(&["--agent", "casey", "--workflow", "^deep-dive-"]),
        s(&[&b, &a])
    );
    assert_eq!(ids(&["--workflow", "summary"]), s(&[&d]));
    assert_eq!(
        ids(&[
            "--agent",
            "casey",
            "--workflow",
            "^deep-dive-",
            "--status",
            "completed"
        ]),
        s(&[&a])
    );
    assert_eq!(ids(&["--status", "running"]), s(&[&d, &b]));
    assert_eq!(ids(&["--user", "ann"]), s(&[&a]));
    assert_eq!(ids(&["--tag", "hw"]), s(&[&c, &a]));
    assert_eq!(ids(&["--since", "2025-10-02T10:00:00Z"]), s(&[&d, &b, &c]));
    assert_eq!(ids(&["--since", "2025-10-03"]), s(&[&d, &b]));
    assert_eq!(ids(&["--since", "2d"]), s(&[&d, &b]));
    assert_eq!(ids(&["--text", "LAPTOP"]), s(&[&b]));
    assert_eq!(ids(&["--limit", "2"]), s(&[&d, &b]));
    assert_eq!(ids(&["--limit", "2", "--offset", "1"]), s(&[&b, &c]));
    let entry = &p.json(&["find", "--agent", "casey", "--limit", "1"])[0];
    let keys: Vec<_> = entry.as_object().unwrap().keys().cloned().collect();
    assert_eq!(
        keys,
        ["session_id", "folder", "display_name", "label", "manifest"]
    );
    assert_eq!(entry["label"], "casey - summary (In Progress)");
    assert_eq!(entry["display_name"], "Yday 10:00a - summary");
    assert!(p.run(&["find", "--workflow", "a(b"]).err().contains("a(b"));
    assert!(p.run(&["find", "--since", "soon"]).err().contains("since"));
    let human = p.run(&["find", "--agent", "casey"]);
    assert!(
        human.ok().contains("casey - summary (In Progress)"),
        "{}",
        human.stdout
    );
}

#[test]
fn latest_output_follows_the_seed_pattern() {
    let mut p = TestProject::new();
    let old = started_at(
        &mut p,
        "2025-10-01T10:00:00Z",
        &["--agent", "casey", "--workflow", "deep-dive-app"],
    );
    let new = started_at(
        &mut p,
        "2025-10-02T10:00:00Z",
        &["--agent", "casey", "--workflow", "deep-dive-itsm"],
    );
    let other = started_at(
        &mut p,
        "2025-10-03T10:00:00Z",
        &["--agent", "casey", "--workflow", "notes"],
    );
    for (id, file, ty) in [
        (&old, "req.md", "document"),
        (&old, "data.json", "data"),
        (&new, "req2.md", "document"),
        (&other, "n.md", "document"),
    ] {
        touch(&p, id, file);
        p.json(&[
            "run",
            "output",
            id,
            file,
            "--type",
            ty,
            "--description",
            "x",
        ]);
    }
    // These runs are still running: asked for by that status.
    let path = |args: &[&str]| {
        let mut all = vec!["latest-output", "--status", "running"];
        all.extend_from_slice(args);
        p.run(&all).ok().trim_end().to_string()
    };
    assert_eq!(
        path(&["--agent", "casey"]),
        run_dir(&p, &other).join("n.md").to_str().unwrap()
    );
    assert_eq!(
        path(&[
            "--agent",
            "casey",
            "--workflow",
            "^deep-dive-",
            "--type",
            "document"
        ]),
        run_dir(&p, &new).join("req2.md").to_str().unwrap()
    );
    assert_eq!(
        path(&[
            "--agent",
            "casey",
            "--workflow",
            "^deep-dive-",
            "--type",
            "data"
        ]),
        run_dir(&p, &old).join("data.json").to_str().unwrap()
    );
    let j = p.json(&[
        "latest-output",
        "--agent",
        "casey",
        "--type",
        "data",
        "--status",
        "running",
    ]);
    assert_eq!(j["session_id"], old.as_str());
    assert!(
        p.run(&["latest-output", "--agent", "pixel"])
            .not_found()
            .contains("not found")
    );
}

#[test]
fn lineage_in_every_format_with_a_cycle_and_a_dangling_id() {
    let p = TestProject::new();
    let a = start(&p, &["--agent", "alex", "--workflow", "intake-app"]);
    let b = start(
        &p,
        &[
            "--agent",
            "casey",
            "--workflow",
            "deep-dive-app",
            "--related",
            &a,
        ],
    );
    let c = start(&p, &["--agent", "pixel", "--workflow", "build-stories"]);
    p.json(&["run", "link", &c, &b]);
    let unrelated = start(&p, &["--agent", "zed", "--workflow", "other"]);

    let g = p.json(&["lineage", &b]);
    assert_eq!(g["ancestors"], json!([a]));
    assert_eq!(g["descendants"], json!([c]));
    assert_eq!(g["edges"].as_array().unwrap().len(), 2);
    assert_eq!(g["cycles"], json!([]));
    assert!(!g.to_string().contains(&unrelated));
    let tree = p.run(&["lineage", &c]);
    let tree = tree.ok();
    assert!(
        tree.contains("builds on:") && tree.contains(&a) && tree.contains(&b),
        "{tree}"
    );
    let dot = p.run(&["lineage", &a, "--format", "dot"]);
    assert!(dot.ok().starts_with("digraph lineage {"));
    assert!(
        dot.stdout.contains(&format!("\"{a}\" -> \"{b}\";"))
            && dot.stdout.contains(&format!("\"{b}\" -> \"{c}\";")),
        "{}",
        dot.stdout
    );
    let mermaid = p.run(&["lineage", &a, "--format", "mermaid"]);
    assert!(mermaid.ok().starts_with("graph LR\n"));
    assert_eq!(
        mermaid.stdout.matches(" --> ").count(),
        2,
        "{}",
        mermaid.stdout
    );
    let as_json: Value =
        serde_json::from_str(p.run(&["lineage", &a, "--format", "json"]).ok()).unwrap();
    assert_eq!(as_json["descendants"], json!([b, c]));

    // a builds on c: a → b → c → a. `run link` refuses it (naming the
    // cycle); another tool writes it anyway: reported, never looped on.
    let refused = p.run(&["run", "link", &a, &c]);
    assert!(
        refused
            .err()
            .contains(&format!("cycle: {a} -> {c} -> {b} -> {a}")),
        "{}",
        refused.stderr
    );
    let ma = run_dir(&p, &a).join("manifest.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&ma).unwrap()).unwrap();
    v["related_sessions"] = json!([c]);
    std::fs::write(&ma, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    p.run(&["index", "sync"]).ok();
    let dangling = "44444444-4444-4444-8444-444444444444";
    let m = run_dir(&p, &c).join("manifest.json");
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&m).unwrap()).unwrap();
    v["related_sessions"]
        .as_array_mut()
        .unwrap()
        .push(json!(dangling));
    std::fs::write(&m, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    let g = p.json(&["lineage", &a]);
    assert_eq!(g["cycles"].as_array().unwrap().len(), 1, "{g}");
    let cycle: BTreeSet<_> = g["cycles"][0]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        cycle,
        [a.clone(), b.clone(), c.clone()].into_iter().collect()
    );
    assert_eq!(g["dangling"], json!([dangling]));
    let tree = p.run(&["lineage", &a]);
    assert!(tree.ok().contains("cycle:"), "{}", tree.stdout);
    assert!(tree.stdout.contains("dangling:"));
    for f in ["dot", "mermaid"] {
        let r = p.run(&["lineage", &b, "--format", f]);
        r.ok();
        assert!(r.stderr.contains("cycle"), "{f}: {}", r.stderr);
    }
    assert!(p.run(&["run", "link", &a, &a]).err().contains("itself"));
    assert!(
        p.run(&["run", "link", &a, dangling])
            .not_found()
            .contains("not found")
    );
    assert!(
        p.run(&[
            "run",
            "start",
            "--agent",
            "x",
            "--workflow",
            "y",
            "--related",
            dangling
        ])
        .not_found()
        .contains("not found")
    );
}

#[test]
fn run_started_in_a_work_session_is_linked_both_ways() {
    let p = TestProject::new();
    let ws = p.json(&["start", "--client", "ACME", "--project", "AUDIT"]);
    let ws_id = ws["session_id"].as_str().unwrap();
    let out = p.json(&[
        "run",
        "start",
        "--agent",
        "alex",
        "--workflow",
        "intake-app",
    ]);
    let id = out["session_id"].as_str().unwrap();
    assert_eq!(out["manifest"]["metadata"]["work_session"], ws_id);
    let status = p.json(&["status"]);
    let spawned = status["agents_spawned"].as_array().unwrap();
    assert_eq!(spawned.len(), 1);
    assert_eq!(spawned[0]["id"], id);
    assert_eq!(spawned[0]["output_file"], out["folder"]);
}

#[test]
fn doctor_reports_and_marks_abandoned_runs() {
    let mut p = TestProject::new();
    let old = started_at(
        &mut p,
        "2025-10-01T10:00:00Z",
        &[
            "--agent",
            "alex",
            "--workflow",
            "intake-app",
            "--bundle",
            "bmad/bmm",
            "--description",
            "Intake",
        ],
    );
    let fresh = started_at(
        &mut p,
        "2025-10-02T09:00:00Z",
        &[
            "--agent",
            "alex",
            "--workflow",
            "intake-app",
            "--bundle",
            "bmad/bmm",
            "--description",
            "Intake",
        ],
    );
    let done = started_at(
        &mut p,
        "2025-10-01T09:00:00Z",
        &[
            "--agent",
            "alex",
            "--workflow",
            "intake-app",
            "--bundle",
            "bmad/bmm",
            "--description",
            "Intake",
        ],
    );
    p.json(&["run", "finish", &done]);
    p.write(
        &format!("docs/agent-outputs/{old}/.manifest.json.999.abc.tmp"),
        "{\"half",
    );
    p.now = Some("2025-10-02T11:00:00Z".into());
    let report = p.doctor(&[]);
    let kinds: Vec<_> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["kind"].as_str().unwrap().to_string(),
                f["path"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    // The temp file moved the run folder's mtime, but nothing the index
    // holds changed: it is not reported stale. Exactly these two.
    let mut by_kind: Vec<&str> = kinds.iter().map(|(k, _)| k.as_str()).collect();
    by_kind.sort();
    assert_eq!(by_kind, ["abandoned-run", "temp-file"], "{report}");
    assert!(
        kinds
            .iter()
            .any(|(k, path)| k == "abandoned-run" && path.contains(&old))
    );
    assert!(
        kinds
            .iter()
            .any(|(k, path)| k == "temp-file" && path.contains(&old))
    );
    let later = p.doctor(&["--abandoned-after", "48"]);
    let mut later: Vec<&str> = later["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap())
        .collect();
    later.sort();
    assert_eq!(later, ["temp-file"]);
    assert_eq!(
        manifest(&p, &old)["execution"]["status"],
        "running",
        "no fix without --fix"
    );

    let fixed = p.doctor(&["--fix"]);
    assert!(fixed.to_string().contains("marked failed"), "{fixed}");
    let m = manifest(&p, &old);
    assert_eq!(m["execution"]["status"], "failed");
    assert_eq!(m["execution"]["completed_at"], "2025-10-02T11:00:00.000Z");
    assert_eq!(m["metadata"]["abandoned"], true);
    assert_eq!(manifest(&p, &fresh)["execution"]["status"], "running");
    assert!(
        !p.path(&format!(
            "docs/agent-outputs/{old}/.manifest.json.999.abc.tmp"
        ))
        .exists()
    );
    assert!(p.run(&["doctor"]).ok().contains("No problems found"));
}

/// Runs `logbook ARGS` in `threads` threads at once, each `per` times with
/// its own arguments; returns each call's (exit code, stderr).
fn parallel<F>(
    p: &Arc<TestProject>,
    threads: usize,
    per: usize,
    args: F,
) -> Vec<(usize, usize, i32, String)>
where
    F: Fn(usize, usize) -> Vec<String> + Send + Sync + 'static,
{
    let args = Arc::new(args);
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let p = Arc::clone(p);
            let args = Arc::clone(&args);
            std::thread::spawn(move || {
                (0..per)
                    .map(|i| {
                        let a = args(t, i);
                        let a: Vec<&str> = a.iter().map(String::as_str).collect();
                        let r = p.run(&a);
                        (t, i, r.code, r.stderr)
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect()
}

#[test]
fn concurrent_registrations_on_one_run_lose_nothing() {
    const PROCS: usize = 8;
    const EACH: usize = 200;
    let mut p = TestProject::new();
    p.envs.push(("LOGBOOK_LOCK_TIMEOUT".into(), "120".into()));
    let id = start(&p, &["--agent", "alex", "--workflow", "load"]);
    for t in 0..PROCS {
        for i in 0..EACH {
            touch(&p, &id, &format!("p{t}/f{i}.md"));
        }
    }
    let p = Arc::new(p);
    let began = Instant::now();
    let id2 = id.clone();
    let results = parallel(&p, PROCS, EACH, move |t, i| {
        [
            "run",
            "output",
            &id2,
            &format!("p{t}/f{i}.md"),
            "--type",
            "document",
            "--description",
            &format!("{t}-{i}"),
        ]
        .map(str::to_string)
        .to_vec()
    });
    eprintln!(
        "{} registrations by {PROCS} writers in {:?}",
        PROCS * EACH,
        began.elapsed()
    );
    for (t, i, code, stderr) in &results {
        assert_eq!(*code, 0, "writer {t} call {i}: {stderr}");
    }
    let m = manifest(&p, &id);
    let files: BTreeSet<_> = m["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["file"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(m["outputs"].as_array().unwrap().len(), PROCS * EACH);
    assert_eq!(files.len(), PROCS * EACH);
}

#[test]
fn finishing_runs_while_others_register_loses_nothing() {
    let mut p = TestProject::new();
    p.envs.push(("LOGBOOK_LOCK_TIMEOUT".into(), "120".into()));
    let ids: Vec<String> = (0..16)
        .map(|i| start(&p, &["--agent", &format!("a{i}"), "--workflow", "w"]))
        .collect();
    for id in &ids {
        for i in 0..20 {
            touch(&p, id, &format!("f{i}.md"));
        }
    }
    let p = Arc::new(p);
    // Threads 0–7 finish runs 0–7 after a few registrations of their own;
    // threads 8–15 register 20 outputs on run t-8 (being finished) and 20
    // on run t (never finished).
    let ids2 = ids.clone();
    let results = parallel(&p, 16, 40, move |t, i| {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        if t < 8 {
            if i == 5 {
                s(&["run", "finish", &ids2[t]])
            } else {
                s(&["--version"])
            }
        } else {
            let (run, f) = if i % 2 == 0 {
                (&ids2[t - 8], i / 2)
            } else {
                (&ids2[t], i / 2)
            };
            s(&[
                "run",
                "output",
                run,
                &format!("f{f}.md"),
                "--type",
                "data",
                "--description",
                "x",
            ])
        }
    });
    for (t, i, code, stderr) in &results {
        let (t, i) = (*t, *i);
        if t < 8 || i % 2 == 1 {
            assert_eq!(*code, 0, "thread {t} call {i}: {stderr}");
        } else if *code != 0 {
            assert!(
                stderr.contains("is completed; outputs can only be registered while it is running"),
                "{stderr}"
            );
        }
    }
    for (n, id) in ids.iter().enumerate() {
        let m = manifest(&p, id);
        let got: BTreeSet<String> = m["outputs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["file"].as_str().unwrap().to_string())
            .collect();
        if n < 8 {
            assert_eq!(m["execution"]["status"], "completed");
            let accepted: BTreeSet<String> = results
                .iter()
                .filter(|(t, i, code, _)| *t == n + 8 && i % 2 == 0 && *code == 0)
                .map(|(_, i, _, _)| format!("f{}.md", i / 2))
                .collect();
            assert_eq!(
                got, accepted,
                "run {n}: every accepted registration is kept"
            );
        } else {
            assert_eq!(m["execution"]["status"], "running");
            assert_eq!(got.len(), 20, "run {n}");
        }
    }
}

#[test]
fn killed_writers_never_leave_a_torn_manifest() {
    let mut p = TestProject::new();
    p.envs.push(("LOGBOOK_LOCK_TIMEOUT".into(), "60".into()));
    let id = start(&p, &["--agent", "alex", "--workflow", "crash"]);
    for i in 0..200 {
        touch(&p, &id, &format!("f{i}.md"));
    }
    // A tiny deterministic generator: no extra dependency, reproducible.
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let mut killed = 0;
    for round in 0..50 {
        let children: Vec<_> = (0..4)
            .map(|w| {
                let file = format!("f{}.md", (round * 4 + w) % 200);
                let args: Vec<String> = if w == 3 && round % 10 == 9 {
                    ["run", "start", "--agent", "k", "--workflow", "w"]
                        .map(str::to_string)
                        .to_vec()
                } else {
                    [
                        "run",
                        "output",
                        &id,
                        &file,
                        "--type",
                        "document",
                        "--description",
                        "x",
                    ]
                    .map(str::to_string)
                    .to_vec()
                };
                let a: Vec<&str> = args.iter().map(String::as_str).collect();
                p.cmd(&a)
                    .stdout(std::process::Stdio::null())
                    .stderr(std::process::Stdio::null())
                    .spawn()
                    .unwrap()
            })
            .collect();
        std::thread::sleep(Duration::from_micros(next(30_000)));
        for mut c in children {
            if c.try_wait().unwrap().is_none() {
                killed += 1;
            }
            let _ = c.kill(); // SIGKILL on Unix
            let _ = c.wait();
        }
        let text = std::fs::read_to_string(run_dir(&p, &id).join("manifest.json")).unwrap();
        let v: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("round {round}: torn manifest ({e})"));
        assert_eq!(v["session_id"], id.as_str());
    }
    eprintln!("killed {killed} writers mid-flight in 50 rounds");
    assert!(
        killed > 0,
        "no writer was killed while running; the test proved nothing"
    );
    // Every manifest parses (runs half-created by a killed `run start` may
    // have a folder without a manifest, which is not a run).
    for entry in std::fs::read_dir(p.path("docs/agent-outputs")).unwrap() {
        let m = entry.unwrap().path().join("manifest.json");
        if let Ok(text) = std::fs::read_to_string(&m) {
            serde_json::from_str::<Value>(&text).unwrap_or_else(|e| panic!("{}: {e}", m.display()));
        }
    }
    let report = p.doctor(&["--fix"]);
    assert!(!report.to_string().contains("corrupt-manifest"), "{report}");
    let found = p.run(&["find"]);
    found.ok();
    assert!(!found.stderr.contains("skipped"), "{}", found.stderr);
}

#[test]
fn colour_keeps_the_status_column_padded_on_a_terminal() {
    let p = TestProject::new();
    let done = start(&p, &["--agent", "casey", "--workflow", "deep-dive"]);
    p.run(&["run", "finish", &done]).ok();
    start(&p, &["--agent", "casey", "--workflow", "deep-dive"]);
    let out = crate::harness::on_terminal(&p, "find", "", false);
    assert_eq!(out.code, 0, "{out:?}");
    assert!(out.stdout.contains("\x1b["), "expected colour: {out:?}");
    // Padded to 9 characters inside the colour codes, then the gap.
    assert!(
        out.stdout.contains("\x1b[33mrunning  \x1b[0m  "),
        "{:?}",
        out.stdout
    );
    assert!(
        out.stdout.contains("\x1b[32mcompleted\x1b[0m  "),
        "{:?}",
        out.stdout
    );
}
