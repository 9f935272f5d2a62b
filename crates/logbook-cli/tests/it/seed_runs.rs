//! Runs as seed 000's own readers take them (issue 45): `latest-output`
//! answers from completed work unless asked, the required manifest fields
//! are filled, the bundle's `agent_outputs_folder` is followed, `execution`
//! keys come in the seed's order, a missing output file is "not found", and
//! `doctor` names what the seed's schema would reject.

use serde_json::{Value, json};

use crate::harness::TestProject;
use crate::mcp::Mcp;

/// Starts a run at `when` (the fixed clock) and returns its id and folder.
fn run_at(p: &mut TestProject, when: &str, agent: &str, workflow: &str) -> (String, String) {
    p.now = Some(when.into());
    let started = p.start_run(agent, workflow, &[]);
    (
        started["session_id"].as_str().unwrap().to_string(),
        started["folder"].as_str().unwrap().to_string(),
    )
}

/// Writes `rel` into the run folder and registers it as a document.
fn register(p: &TestProject, id: &str, folder: &str, rel: &str, text: &str) -> String {
    let path = std::path::Path::new(folder).join(rel);
    std::fs::write(&path, text).unwrap();
    p.json(&[
        "run",
        "output",
        id,
        rel,
        "--type",
        "document",
        "--description",
        "the requirements",
    ]);
    path.to_string_lossy().into_owned()
}

/// The audit's evidence: a completed run, then a failed one and a running
/// one (that registered a half-written file) newer than it.
fn three_runs(p: &mut TestProject) -> [String; 3] {
    let (done, done_dir) = run_at(p, "2026-02-01T09:00:00.000Z", "quill", "gather-needs");
    let done_file = register(p, &done, &done_dir, "needs.md", "# Needs\nall of them\n");
    p.run(&["run", "finish", &done, "--status", "completed"])
        .ok();
    let (failed, failed_dir) = run_at(p, "2026-02-02T09:00:00.000Z", "quill", "gather-needs");
    let failed_file = register(p, &failed, &failed_dir, "needs.md", "# Needs\nbroken\n");
    p.run(&["run", "finish", &failed, "--status", "failed"])
        .ok();
    let (running, running_dir) = run_at(p, "2026-02-03T09:00:00.000Z", "quill", "gather-needs");
    let half = register(p, &running, &running_dir, "needs.md", "# Needs\nhal");
    [done_file, failed_file, half]
}

#[test]
fn latest_output_answers_from_the_newest_completed_run_unless_a_status_is_asked() {
    let mut p = TestProject::new();
    let [done, failed, half] = three_runs(&mut p);

    // The default: the completed run's file, never the newer failed one's
    // or the running one's half-written file.
    let human = p.run(&["latest-output", "--agent", "quill"]);
    assert_eq!(human.ok(), format!("{done}\n"));
    assert!(human.stderr.is_empty(), "{}", human.stderr);
    let j = p.json(&["latest-output", "--agent", "quill", "--type", "document"]);
    assert_eq!(j["path"], done.as_str());
    assert_eq!(j["status"], "completed");

    // Another status, asked for.
    let j = p.json(&["latest-output", "--agent", "quill", "--status", "failed"]);
    assert_eq!(
        (j["path"].as_str(), j["status"].as_str()),
        (Some(failed.as_str()), Some("failed"))
    );
    let j = p.json(&["latest-output", "--agent", "quill", "--status", "running"]);
    assert_eq!(j["path"], half.as_str());

    // `any`: the newest run whatever its status, and the answer says which.
    let any = p.run(&["latest-output", "--agent", "quill", "--status", "any"]);
    assert_eq!(any.ok(), format!("{half}\n"), "stdout stays the path alone");
    assert!(any.stderr.contains("is running"), "{}", any.stderr);
    let j = p.json(&["latest-output", "--agent", "quill", "--status", "any"]);
    assert_eq!(
        (j["path"].as_str(), j["status"].as_str()),
        (Some(half.as_str()), Some("running"))
    );

    // No completed run of a workflow: not found, saying how to widen it.
    p.now = Some("2026-02-04T09:00:00.000Z".into());
    let lone = p.start_run("quill", "draft-plan", &[]);
    let lone_id = lone["session_id"].as_str().unwrap();
    register(
        &p,
        lone_id,
        lone["folder"].as_str().unwrap(),
        "plan.md",
        "wip",
    );
    let err = p.run(&["latest-output", "--agent", "quill", "--workflow", "^draft-"]);
    let err = err.not_found();
    assert!(err.contains("status completed"), "{err}");
    assert!(err.contains("any"), "{err}");
    let err = p.run(&["latest-output", "--agent", "quill", "--status", ""]);
    assert!(err.err().contains("status"), "{}", err.stderr);
}

#[test]
fn mcp_latest_output_takes_a_status_and_defaults_to_completed() {
    let mut p = TestProject::new();
    let [done, failed, half] = three_runs(&mut p);
    let mut m = Mcp::start(&p);
    let out = m.ok("latest_output", json!({"agent": "quill"}));
    assert_eq!(
        (out["path"].as_str(), out["status"].as_str()),
        (Some(done.as_str()), Some("completed"))
    );
    let out = m.ok(
        "latest_output",
        json!({"agent": "quill", "status": "failed"}),
    );
    assert_eq!(out["path"], failed.as_str());
    let out = m.ok("latest_output", json!({"agent": "quill", "status": "any"}));
    assert_eq!(
        (out["path"].as_str(), out["status"].as_str()),
        (Some(half.as_str()), Some("running"))
    );
    // The CLI answers the same.
    let cli: Value = p.json(&["latest-output", "--agent", "quill", "--status", "any"]);
    assert_eq!(cli, out);
}

#[test]
fn registering_an_output_file_that_does_not_exist_is_not_found() {
    let p = TestProject::new();
    let started = p.start_run("quill", "gather-needs", &[]);
    let id = started["session_id"].as_str().unwrap();
    let r = p.run(&[
        "run",
        "output",
        id,
        "notes/never-written.md",
        "--type",
        "document",
        "--description",
        "not there",
    ]);
    let err = r.not_found();
    assert!(err.contains("never-written.md not found"), "{err}");
    assert!(
        err.contains("write the file into the run folder first"),
        "{err}"
    );
    let manifest = p.json(&["run", "show", id]);
    assert_eq!(manifest["manifest"]["outputs"], json!([]));
}

/// The keys of `execution` in the manifest file, in file order.
fn execution_keys(path: &std::path::Path) -> Vec<String> {
    let v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    v["execution"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect()
}

#[test]
fn execution_keys_come_in_the_seeds_order_and_another_tools_order_is_kept() {
    let p = TestProject::new();
    // A run Logbook starts and finishes: the seed's example order.
    let started = p.start_run("quill", "gather-needs", &["--user", "Robin"]);
    let id = started["session_id"].as_str().unwrap();
    let file = std::path::Path::new(started["folder"].as_str().unwrap()).join("manifest.json");
    p.run(&["run", "finish", id, "--status", "failed"]).ok();
    assert_eq!(
        execution_keys(&file),
        ["started_at", "completed_at", "status", "user"]
    );

    // A manifest another tool wrote in its own order: a lossless rewrite
    // keeps that order and adds `completed_at` last, as before.
    let other = "5e1f0c2a-7b3d-4c8e-9f10-2a3b4c5d6e7f";
    let path = p.write(
        &format!("docs/agent-outputs/{other}/manifest.json"),
        &json!({
            "version": "1.0.0",
            "session_id": other,
            "agent": {"name": "quill", "title": "Quill", "bundle": "bmad/bmm"},
            "workflow": {"name": "gather-needs", "description": "Needs"},
            "execution": {"user": "Robin", "status": "running", "started_at": "2026-01-05T10:00:00.000Z"},
            "outputs": []
        })
        .to_string(),
    );
    p.run(&["run", "finish", other]).ok();
    assert_eq!(
        execution_keys(&path),
        ["user", "status", "started_at", "completed_at"]
    );
}

/// The `warning:` lines of `stderr`.
fn warnings(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.starts_with("warning:"))
        .collect()
}

/// A BMAD bundle `bmad/{bundle}/` with a config moving runs to
/// `{project-root}/{folder}` and a workflow file under it.
fn bundle(p: &TestProject, bundle: &str, folder: &str) -> String {
    p.write(
        &format!("bmad/{bundle}/config.yaml"),
        &format!(
            "user_name: Robin\noutput_folder: '{{project-root}}/out'\nagent_outputs_folder: '{folder}'\n"
        ),
    );
    let wf = format!("bmad/{bundle}/workflows/gather/workflow.yaml");
    p.write(
        &wf,
        &format!(
            "name: gather-needs\ndescription: Gather the team's needs\n\
             config_source: '{{project-root}}/bmad/{bundle}/config.yaml'\n\
             session_folder: '{{config_source}}:agent_outputs_folder/{{{{session_id}}}}'\n"
        ),
    );
    wf
}

#[test]
fn required_fields_are_filled_from_the_bundle_the_config_or_the_options() {
    let p = TestProject::new();
    // The workflow file names the bundle by its path and the description.
    let wf = bundle(&p, "cis", "{output_folder}/runs");
    let r = p.run(&[
        "--json",
        "run",
        "start",
        "--agent",
        "quill",
        "--workflow-file",
        &wf,
    ]);
    let m = &r.json()["manifest"];
    assert_eq!(m["agent"]["bundle"], "bmad/cis");
    assert_eq!(m["workflow"]["description"], "Gather the team's needs");
    assert!(warnings(&r.stderr).is_empty(), "{}", r.stderr);

    // Nothing names them: written empty, and one line says seed readers
    // will show a blank.
    let r = p.run(&[
        "--json",
        "run",
        "start",
        "--agent",
        "quill",
        "--workflow",
        "triage",
    ]);
    let m = &r.json()["manifest"];
    assert_eq!(
        (
            m["agent"]["bundle"].as_str(),
            m["workflow"]["description"].as_str()
        ),
        (Some(""), Some(""))
    );
    let lines = warnings(&r.stderr);
    assert_eq!(lines.len(), 1, "{}", r.stderr);
    for word in [
        "agent.bundle",
        "workflow.description",
        "default_bundle",
        "blank",
    ] {
        assert!(lines[0].contains(word), "{word}: {}", lines[0]);
    }

    // default_bundle in logbook.yaml, then the options, which win.
    p.write("logbook.yaml", "default_bundle: bmad/bmm\n");
    let m =
        p.start_run("quill", "triage", &["--description", "Sort the inbox"])["manifest"].clone();
    assert_eq!(m["agent"]["bundle"], "bmad/bmm");
    assert_eq!(m["workflow"]["description"], "Sort the inbox");
    let m = p.start_run(
        "quill",
        "triage",
        &["--bundle", "bmad/core", "--description", "x"],
    )["manifest"]
        .clone();
    assert_eq!(m["agent"]["bundle"], "bmad/core");
}

#[test]
fn metadata_is_set_by_the_cli_and_by_mcp_run_start() {
    let p = TestProject::new();
    let started = p.start_run(
        "quill",
        "triage",
        &[
            "--metadata",
            "ticket=OPS-42",
            "--metadata",
            "priority=high=urgent",
        ],
    );
    assert_eq!(
        started["manifest"]["metadata"],
        json!({"ticket": "OPS-42", "priority": "high=urgent"})
    );
    let r = p.run(&[
        "run",
        "start",
        "--agent",
        "quill",
        "--workflow",
        "triage",
        "--metadata",
        "nokey",
    ]);
    assert!(r.err().contains("KEY=VALUE"), "{}", r.stderr);

    let mut m = Mcp::start(&p);
    let out = m.ok(
        "run_start",
        json!({"agent": "quill", "workflow": "triage", "metadata": {"ticket": "OPS-43", "reviewers": ["ana", "bo"]}}),
    );
    assert_eq!(
        out["manifest"]["metadata"]["reviewers"],
        json!(["ana", "bo"])
    );
    let file = std::path::Path::new(out["folder"].as_str().unwrap()).join("manifest.json");
    let stored: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    assert_eq!(stored["metadata"]["ticket"], "OPS-43");
}

#[test]
fn the_bundles_agent_outputs_folder_is_the_default() {
    let p = TestProject::new();
    let wf = bundle(&p, "bmm", "{output_folder}/bmm-runs");
    // A plain run start and one from the workflow file both go to the
    // bundle's folder, without a word, and are found there.
    let plain = p.start_run(
        "quill",
        "triage",
        &["--bundle", "bmad/bmm", "--description", "d"],
    );
    let folder = p.path("out/bmm-runs");
    assert!(
        plain["folder"]
            .as_str()
            .unwrap()
            .starts_with(folder.to_str().unwrap()),
        "{plain}"
    );
    let r = p.run(&[
        "--json",
        "run",
        "start",
        "--agent",
        "quill",
        "--workflow-file",
        &wf,
    ]);
    let from_file = r.json();
    assert!(warnings(&r.stderr).is_empty(), "{}", r.stderr);
    assert_eq!(
        from_file["variables"]["session_folder"],
        from_file["folder"]
    );
    assert!(
        from_file["folder"]
            .as_str()
            .unwrap()
            .starts_with(folder.to_str().unwrap())
    );
    assert_eq!(p.json(&["find"]).as_array().unwrap().len(), 2);
    let report = p.doctor(&[]);
    assert!(
        !report.to_string().contains("bundle-folder-disagrees"),
        "{report}"
    );
}

#[test]
fn a_folder_logbook_yaml_sets_against_the_bundle_is_warned_and_named_by_doctor() {
    let p = TestProject::new();
    let wf = bundle(&p, "bmm", "{output_folder}/bmm-runs");
    p.write(
        "logbook.yaml",
        "agent_outputs_folder: '{project-root}/docs/runs'\n",
    );
    // Not refused, not written elsewhere silently: logbook.yaml's folder,
    // and one line saying where the bundle keeps runs.
    let r = p.run(&[
        "--json",
        "run",
        "start",
        "--agent",
        "quill",
        "--workflow-file",
        &wf,
    ]);
    let started = r.json();
    assert!(
        started["folder"]
            .as_str()
            .unwrap()
            .starts_with(p.path("docs/runs").to_str().unwrap())
    );
    let lines = warnings(&r.stderr);
    assert_eq!(lines.len(), 1, "{}", r.stderr);
    assert!(
        lines[0].contains("bmad/bmm/config.yaml") && lines[0].contains("bmm-runs"),
        "{}",
        lines[0]
    );
    let r = p.run(&[
        "run",
        "start",
        "--agent",
        "quill",
        "--workflow",
        "triage",
        "--bundle",
        "b",
        "--description",
        "d",
    ]);
    r.ok();
    assert_eq!(warnings(&r.stderr).len(), 1, "{}", r.stderr);

    let report = p.doctor(&[]);
    let finding = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "bundle-folder-disagrees")
        .unwrap_or_else(|| panic!("{report}"));
    let message = finding["message"].as_str().unwrap();
    assert!(
        message.contains(p.path("out/bmm-runs").to_str().unwrap()),
        "{message}"
    );
    assert!(
        message.contains(p.path("docs/runs").to_str().unwrap()),
        "{message}"
    );
    assert!(message.contains("logbook index rebuild"), "{message}");
}

#[test]
fn runs_left_in_the_old_folder_are_named_by_doctor_with_the_move_that_keeps_them() {
    let p = TestProject::new();
    let old = p.start_run(
        "quill",
        "triage",
        &["--bundle", "bmad/bmm", "--description", "d"],
    );
    let id = old["session_id"].as_str().unwrap().to_string();
    assert!(
        old["folder"]
            .as_str()
            .unwrap()
            .contains("docs/agent-outputs")
    );
    // The project gains a bundle config that keeps runs elsewhere.
    bundle(&p, "bmm", "{output_folder}/bmm-runs");
    let report = p.doctor(&[]);
    let finding = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "runs-in-old-folder")
        .unwrap_or_else(|| panic!("{report}"));
    assert_eq!(
        finding["path"],
        p.path("docs/agent-outputs").to_str().unwrap()
    );
    let message = finding["message"].as_str().unwrap();
    assert!(message.starts_with("1 run folder(s) in"), "{message}");
    // Doing what it says finds the run again.
    let new = p.path("out/bmm-runs");
    std::fs::create_dir_all(&new).unwrap();
    std::fs::rename(p.path(&format!("docs/agent-outputs/{id}")), new.join(&id)).unwrap();
    p.run(&["index", "rebuild"]).ok();
    let found = p.json(&["find"]);
    assert_eq!(found[0]["session_id"], id.as_str());
    let report = p.doctor(&[]);
    assert!(
        !report.to_string().contains("runs-in-old-folder"),
        "{report}"
    );
}

#[test]
fn doctor_names_each_manifest_the_seeds_schema_would_reject_and_the_run_is_still_listed() {
    let p = TestProject::new();
    let bad = "7c0e9a41-2d3b-4e5f-8a6b-9c0d1e2f3a4b";
    p.write(
        &format!("docs/agent-outputs/{bad}/manifest.json"),
        &json!({
            "version": "1.0.0",
            "session_id": bad,
            "agent": {"name": "quill"},
            "workflow": {"name": "gather-needs"},
            "execution": {"started_at": "2026-01-05", "status": "done", "user": "Robin"},
            "outputs": [{"file": "n.md", "type": "document", "description": "Needs", "created_at": "yesterday"}]
        })
        .to_string(),
    );
    let good = p.start_run(
        "quill",
        "gather-needs",
        &["--bundle", "bmad/bmm", "--description", "Gather the needs"],
    );
    let good = good["session_id"].as_str().unwrap().to_string();
    p.run(&["run", "finish", &good]).ok();

    // Listed as today (the index has it now, as a finished run), status as written.
    let found = p.json(&["find", "--agent", "quill"]);
    assert_eq!(found.as_array().unwrap().len(), 2);
    let listed = found
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["session_id"] == bad)
        .unwrap();
    assert_eq!(listed["manifest"]["execution"]["status"], "done");

    let report = p.doctor(&[]);
    let seed: Vec<&Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "seed-schema")
        .collect();
    assert_eq!(seed.len(), 1, "one finding per manifest: {report}");
    assert!(seed[0]["path"].as_str().unwrap().contains(bad));
    let message = seed[0]["message"].as_str().unwrap();
    for field in [
        "execution.status \"done\"",
        "execution.started_at \"2026-01-05\"",
        "agent.title",
        "agent.bundle",
        "workflow.description",
        "outputs[0].created_at \"yesterday\"",
    ] {
        assert!(message.contains(field), "{field}: {message}");
    }
    assert!(!message.contains("execution.user"), "{message}");
    // Still listed after doctor, which changed nothing.
    assert_eq!(
        p.json(&["find", "--agent", "quill"])
            .as_array()
            .unwrap()
            .len(),
        2
    );
}
