//! Upkeep that skips what cannot have changed: a normal `index sync`
//! checks a finished run by its manifest's stamp alone (its outputs are
//! settled), `index sync --full` checks every output; a running run's
//! outputs, and those of a run whose manifest changed, are checked as
//! always. `doctor` trusts the index for an unchanged finished manifest but
//! still `lstat`s every registered output, so an output swapped for a
//! symlink or a hard link is named; `doctor --full` reads everything.

use std::path::{Path, PathBuf};

use crate::doctor::{finding, kinds};
use crate::harness::TestProject;

/// A run of `casey` whose output `notes.md` says `words`, registered, and
/// finished unless `running`; returns its id and folder.
fn run_with_output(t: &TestProject, words: &str, running: bool) -> (String, PathBuf) {
    let id = t.start_run(
        "casey",
        "deep-dive",
        &["--bundle", "bmad/bmm", "--description", "Deep dive"],
    )["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    let dir = t.path(&format!("docs/agent-outputs/{id}"));
    std::fs::write(dir.join("notes.md"), format!("{words}\n")).unwrap();
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
    if !running {
        t.json(&["run", "finish", &id]);
    }
    t.json(&["index", "sync"]);
    (id, dir)
}

/// Rewrites `file` in place, as an editor that keeps the inode would: no
/// rename, so neither the manifest nor any folder's mtime moves.
fn edit_in_place(file: &Path, text: &str) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(file)
        .unwrap();
    f.write_all(text.as_bytes()).unwrap();
}

/// The run ids `find --text words` answers.
fn found(t: &TestProject, words: &str) -> Vec<String> {
    t.json(&["find", "--text", words])
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["session_id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_finished_runs_output_edited_in_place_is_read_by_sync_full_not_by_sync() {
    let t = TestProject::new();
    let (id, dir) = run_with_output(&t, "plainwords", false);
    assert_eq!(found(&t, "plainwords"), std::slice::from_ref(&id));
    edit_in_place(&dir.join("notes.md"), "quokkaparade arrived late\n");

    let sync = t.json(&["index", "sync"]);
    assert_eq!(sync["indexed"], 0, "a normal sync trusts it: {sync}");
    assert!(found(&t, "quokkaparade").is_empty());

    let full = t.json(&["index", "sync", "--full"]);
    assert_eq!(full["indexed"], 1, "{full}");
    assert_eq!(found(&t, "quokkaparade"), [id]);
    assert!(found(&t, "plainwords").is_empty());
    // Nothing left for either to read.
    assert_eq!(t.json(&["index", "sync", "--full"])["indexed"], 0);
}

#[test]
fn a_running_runs_output_edited_in_place_is_read_by_a_normal_sync() {
    let t = TestProject::new();
    let (id, dir) = run_with_output(&t, "plainwords", true);
    edit_in_place(&dir.join("notes.md"), "wombatsymphony in progress\n");
    let sync = t.json(&["index", "sync"]);
    assert_eq!(sync["indexed"], 1, "{sync}");
    assert_eq!(found(&t, "wombatsymphony"), [id]);
}

#[test]
fn a_manifest_edited_in_place_has_its_finished_runs_outputs_read_again() {
    let t = TestProject::new();
    let (id, dir) = run_with_output(&t, "plainwords", false);
    edit_in_place(&dir.join("notes.md"), "narwhalcouncil met twice\n");
    let manifest = dir.join("manifest.json");
    let text = std::fs::read_to_string(&manifest).unwrap();
    assert!(text.contains("\"deep-dive\""), "{text}");
    edit_in_place(
        &manifest,
        &text.replacen("\"deep-dive\"", "\"deeper-dive\"", 1),
    );

    let sync = t.json(&["index", "sync"]);
    assert_eq!(sync["indexed"], 1, "{sync}");
    assert_eq!(found(&t, "narwhalcouncil"), [id]);
}

#[test]
fn default_doctor_names_a_finished_runs_output_swapped_for_a_symlink_or_a_hard_link() {
    for (kind, swap) in [
        (
            "symlink-outside-run",
            (|from: &Path, to: &Path| std::os::unix::fs::symlink(from, to).unwrap())
                as fn(&Path, &Path),
        ),
        ("hard-link", |from, to| {
            std::fs::hard_link(from, to).unwrap()
        }),
    ] {
        let t = TestProject::new();
        let (_, dir) = run_with_output(&t, "plainwords", false);
        assert!(!kinds(&t.doctor(&[])).contains(&"unsafe-output".to_string()));
        let secret = t.write("secret.txt", "not the run's own\n");
        let file = dir.join("notes.md");
        std::fs::remove_file(&file).unwrap();
        swap(&secret, &file);

        for args in [&[][..], &["--full"][..]] {
            let report = t.doctor(args);
            let f = finding(&report, "unsafe-output");
            assert_eq!(f["path"], file.to_str().unwrap());
            assert!(f["message"].as_str().unwrap().contains(kind), "{f}");
        }
    }
}

#[test]
fn doctor_full_finds_a_finished_runs_output_edited_in_place_and_default_doctor_trusts_it() {
    let t = TestProject::new();
    let (id, dir) = run_with_output(&t, "plainwords", false);
    edit_in_place(&dir.join("notes.md"), "pangolinparliament convened\n");

    let report = t.doctor(&[]);
    assert!(
        !kinds(&report).contains(&"index-stale".to_string()),
        "{report:#}"
    );
    let report = t.doctor(&["--full"]);
    let stale = finding(&report, "index-stale");
    assert!(
        stale["message"].as_str().unwrap().contains("1 changed"),
        "{stale}"
    );
    // It synced the index meanwhile: the edit is found now.
    assert_eq!(found(&t, "pangolinparliament"), [id]);
}

#[test]
fn what_only_a_parse_finds_in_an_unchanged_finished_manifest_is_doctor_fulls() {
    let t = TestProject::new();
    let (_, dir) = run_with_output(&t, "plainwords", false);
    let manifest = dir.join("manifest.json");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let text = text.replacen('{', "{\n  \"messageCount\": 8.5,", 1);
    std::fs::write(&manifest, text).unwrap();
    // Changed since the index parsed it: read again by default too.
    assert!(kinds(&t.doctor(&[])).contains(&"wrong-type-field".to_string()));
    // Unchanged since (the doctor above synced it): trusted by default.
    assert!(!kinds(&t.doctor(&[])).contains(&"wrong-type-field".to_string()));
    assert!(kinds(&t.doctor(&["--full"])).contains(&"wrong-type-field".to_string()));
}

#[test]
fn a_run_shown_over_mcp_or_in_the_viewer_is_rechecked_against_its_outputs() {
    use crate::serve::{get, serve};
    let t = crate::mcp::project();
    let (id, dir) = run_with_output(&t, "plainwords", false);

    // MCP: the run is shown from its files, and the index brought to them.
    edit_in_place(&dir.join("notes.md"), "capybaracommittee reports\n");
    assert!(
        found(&t, "capybaracommittee").is_empty(),
        "settled until shown"
    );
    let mut m = crate::mcp::Mcp::start(&t);
    let shown = m.ok("run_show", serde_json::json!({"id": id}));
    assert_eq!(shown["session_id"], id.as_str(), "{shown}");
    drop(m);
    assert_eq!(found(&t, "capybaracommittee"), std::slice::from_ref(&id));

    // The viewer: its page of the run does the same.
    edit_in_place(&dir.join("notes.md"), "okapiassembly adjourned early\n");
    assert!(found(&t, "okapiassembly").is_empty(), "settled until shown");
    let (mut child, url) = serve(&t, &["--bind", "127.0.0.1:0"], None);
    let answer = get(&url, &format!("/api/runs/{id}"), "");
    let _ = child.kill();
    let _ = child.wait();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert_eq!(found(&t, "okapiassembly"), [id]);
}

#[test]
fn doctor_full_reads_each_file_once_and_counts_what_sync_full_would_whatever_the_names() {
    let mut t = TestProject::new();
    let (_, finished) = run_with_output(&t, "plainwords", false);
    let (_, running) = run_with_output(&t, "plainwords", true);
    // Names another tool may register: in a folder of the run's, missing,
    // and leading out of the run folder.
    std::fs::create_dir(finished.join("sub")).unwrap();
    std::fs::write(finished.join("sub/deep.md"), "deepwords\n").unwrap();
    let manifest = finished.join("manifest.json");
    let mut m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
    for file in ["sub/deep.md", "missing.md", "../escape.md"] {
        m["outputs"]
            .as_array_mut()
            .unwrap()
            .push(serde_json::json!({
                "file": file, "type": "document", "description": file,
                "created_at": "2025-10-05T11:00:00.000Z"
            }));
    }
    std::fs::write(&manifest, serde_json::to_string_pretty(&m).unwrap()).unwrap();
    t.json(&["index", "sync"]);
    // The runs folder's listing is trusted once its mtime is not racy: the
    // comparison after the pass then takes the pass's stamps. The clock is
    // set a second on, past that window, instead of waiting it out; no run
    // folder is made from here on, so the listing stays trusted.
    let later = logbook::clock::Clock::SYSTEM.now() + jiff::SignedDuration::from_secs(1);
    t.now = Some(later.to_string());

    // Nothing changed since the sync: the stamps the pass read agree with
    // the index's for every kind of name, again and again.
    for _ in 0..2 {
        let report = t.doctor(&["--full"]);
        assert!(
            !kinds(&report).contains(&"index-stale".to_string()),
            "{report:#}"
        );
    }
    // One output edited in place in each run: both seen, nothing more.
    edit_in_place(&finished.join("sub/deep.md"), "deeperwords\n");
    edit_in_place(&running.join("notes.md"), "otherwords\n");
    let report = t.doctor(&["--full"]);
    let stale = finding(&report, "index-stale");
    assert!(
        stale["message"]
            .as_str()
            .unwrap()
            .contains("0 new, 2 changed, 0 deleted"),
        "{stale}"
    );
    assert!(found(&t, "deeperwords").len() == 1 && found(&t, "otherwords").len() == 1);
    let report = t.doctor(&["--full"]);
    assert!(
        !kinds(&report).contains(&"index-stale".to_string()),
        "{report:#}"
    );
}
