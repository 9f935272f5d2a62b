//! Outputs changed after registration into something that is not the run's
//! own: a symlink leading out of the run folder, a hard link to a file
//! outside it. They are named by `latest-output` and `doctor`, refused by
//! `run output` and never served by MCP.

use std::path::PathBuf;

use serde_json::json;

use crate::harness::TestProject;
use crate::mcp::Mcp;

const SECRET: &str = "aws_secret_access_key: NOT-FOR-AGENTS-4411\n";

/// A project with a secret beside it and run of `casey` whose output
/// `req.md` is registered; returns the run id and its folder.
fn registered(t: &TestProject) -> (String, PathBuf) {
    t.write("secret.txt", SECRET);
    let seed_complete = ["--bundle", "bmad/bmm", "--description", "Deep dive"];
    let id = t.start_run("casey", "deep-dive", &seed_complete)["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    let dir = t.path(&format!("docs/agent-outputs/{id}"));
    std::fs::write(dir.join("req.md"), "requirements\n").unwrap();
    t.json(&[
        "run",
        "output",
        &id,
        "req.md",
        "--type",
        "document",
        "--description",
        "R",
    ]);
    (id, dir)
}

#[test]
fn an_output_replaced_later_by_a_symlink_or_a_hard_link_is_named_by_latest_output_and_doctor() {
    for (unsafe_kind, replace) in [
        (
            "symlink-outside-run",
            (|from: &std::path::Path, to: &std::path::Path| {
                std::os::unix::fs::symlink(from, to).unwrap()
            }) as fn(&std::path::Path, &std::path::Path),
        ),
        ("hard-link", |from, to| {
            std::fs::hard_link(from, to).unwrap()
        }),
    ] {
        let t = TestProject::new();
        let (id, dir) = registered(&t);
        let found = t.json(&["latest-output", "--agent", "casey", "--status", "running"]);
        assert_eq!(found["unsafe"], json!(null), "{found}");

        let file = dir.join("req.md");
        std::fs::remove_file(&file).unwrap();
        replace(&t.path("secret.txt"), &file);

        let found = t.json(&["latest-output", "--agent", "casey", "--status", "running"]);
        assert_eq!(found["missing"], false, "{found}");
        assert_eq!(found["unsafe"], unsafe_kind, "{found}");
        let r = t.run(&["latest-output", "--agent", "casey", "--status", "running"]);
        assert_eq!(r.ok().trim_end(), file.to_str().unwrap());
        assert!(
            r.stderr.starts_with("warning:")
                && r.stderr.contains("not the run's own")
                && r.stderr.contains(&id),
            "{unsafe_kind}: {}",
            r.stderr
        );

        // Its words never reach the full-text index, so no snippet, MCP
        // answer or team push carries them.
        t.run(&["index", "sync"]).ok();
        for words in ["aws_secret_access_key", "NOT-FOR-AGENTS-4411"] {
            let hits = t.json(&["find", "--text", words]);
            assert_eq!(hits, json!([]), "{unsafe_kind}: {words}: {hits}");
        }
        t.run(&["index", "rebuild"]).ok();
        let hits = t.json(&["find", "--text", "NOT-FOR-AGENTS-4411"]);
        assert_eq!(hits, json!([]), "{unsafe_kind} after a rebuild: {hits}");

        let report = t.doctor(&[]);
        let f = report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["kind"] == "unsafe-output")
            .unwrap_or_else(|| panic!("{unsafe_kind}: no unsafe-output in {report:#}"));
        assert_eq!(f["path"], file.to_str().unwrap());
        assert!(f["message"].as_str().unwrap().contains(unsafe_kind), "{f}");
        // Nothing is repaired: the file is the user's.
        t.doctor(&["--fix"]);
        assert!(std::fs::symlink_metadata(&file).is_ok());
    }
}

#[test]
fn a_hard_link_to_a_file_outside_is_neither_registered_nor_served() {
    let t = TestProject::new();
    let (id, dir) = registered(&t);
    std::fs::hard_link(t.path("secret.txt"), dir.join("creds.yaml")).unwrap();
    // The CLI refuses it too: every reader would refuse the record.
    let e = t.run(&[
        "run",
        "output",
        &id,
        "creds.yaml",
        "--type",
        "document",
        "--description",
        "C",
    ]);
    assert!(e.err().contains("hard link"), "{}", e.stderr);

    let mut m = Mcp::start(&t);
    let e = m.err(
        "run_register_output",
        json!({"id": id, "file": "creds.yaml", "type": "document", "description": "C"}),
    );
    assert!(e.contains("hard link"), "{e}");

    // A registered output turned into a hard link afterwards is not served.
    let uri = format!("logbook://runs/{id}/req.md");
    let listed = m.request("resources/list", json!({}));
    assert!(listed.to_string().contains(&uri), "{listed}");
    let read = m.request("resources/read", json!({"uri": uri}));
    assert_eq!(read["result"]["contents"][0]["text"], "requirements\n");
    std::fs::remove_file(dir.join("req.md")).unwrap();
    std::fs::hard_link(t.path("secret.txt"), dir.join("req.md")).unwrap();
    let read = m.request("resources/read", json!({"uri": uri}));
    assert!(read.get("error").is_some(), "{read}");
    let listed = m.request("resources/list", json!({}));
    assert!(
        !listed.to_string().contains(&uri),
        "still offered: {listed}"
    );
    assert!(!read.to_string().contains("NOT-FOR-AGENTS"), "{read}");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["outputs"].as_array().unwrap().len(), 1);
}

#[test]
fn the_manifest_is_not_a_resource_but_is_shown_by_run_show() {
    let t = TestProject::new();
    let (id, _) = registered(&t);
    let mut m = Mcp::start(&t);
    for uri in [
        format!("logbook://runs/{id}/manifest.json"),
        format!("logbook://runs/{id}/./manifest.json"),
    ] {
        let read = m.request("resources/read", json!({"uri": uri}));
        // -32002: resource not found, as for a file that is not there.
        assert_eq!(read["error"]["code"], -32002, "{uri}: {read}");
    }
    let shown = t.json(&["run", "show", &id]);
    assert_eq!(shown["manifest"]["session_id"], id.as_str());
}

#[test]
fn a_run_folder_linked_from_elsewhere_is_shown_by_the_cli_but_not_over_mcp() {
    let t = TestProject::new();
    let (id, dir) = registered(&t);
    // The run's folder moves out of the project; a symlink takes its place.
    let elsewhere = t.path("elsewhere");
    std::fs::rename(&dir, &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &dir).unwrap();
    // Its user may name any folder of theirs.
    let shown = t.json(&["run", "show", &id]);
    assert_eq!(shown["session_id"], id.as_str(), "{shown}");
    // An agent may not: run_show refuses it, as the viewer does.
    let mut m = Mcp::start(&t);
    let refused = m.err("run_show", json!({"id": id}));
    assert!(!refused.contains(SECRET.trim()), "{refused}");
    assert!(!refused.contains("req.md"), "{refused}");
}
