//! Runs and transcripts given hostile or unusual input: ids in any case and
//! by prefix, paging numbers out of range, outputs that are not plain files
//! or are aliases, files read on a user's say-so that are devices, FIFOs or
//! huge, and the Story 6.3 fields other tools read from manifest.json.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::harness::{TestProject, bin, shared_text};

fn start(p: &TestProject, extra: &[&str]) -> String {
    p.start_run("casey", "deep-dive", extra)["session_id"]
        .as_str()
        .unwrap()
        .to_string()
}

fn run_dir(p: &TestProject, id: &str) -> PathBuf {
    p.path(&format!("docs/agent-outputs/{id}"))
}

fn manifest(p: &TestProject, id: &str) -> Value {
    let text = std::fs::read_to_string(run_dir(p, id).join("manifest.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// A manifest written by another tool, in folder `folder` (any spelling).
fn hand_written(p: &TestProject, folder: &str, started: &str) {
    let m = json!({
        "version": "1.0.0",
        "session_id": folder,
        "agent": {"name": "alex", "title": "Alex", "bundle": ""},
        "workflow": {"name": "intake-app", "description": "Intake"},
        "execution": {"started_at": started, "status": "running", "user": "bryan"},
        "outputs": [],
    });
    p.write(
        &format!("docs/agent-outputs/{folder}/manifest.json"),
        &serde_json::to_string_pretty(&m).unwrap(),
    );
}

#[test]
fn paging_numbers_beyond_sqlite_integers_are_refused() {
    let p = TestProject::new();
    start(&p, &[]);
    // Refused by the library, as the MCP server and the web API refuse them.
    for args in [
        ["find", "--offset", "9223372036854775808"],
        ["find", "--limit", "9223372036854775808"],
        ["find", "--offset", "99999999999999999999999"],
    ] {
        let r = p.run(&args);
        let e = r.err();
        assert!(e.contains(args[2]), "{args:?}: {e}");
    }
    // An option where its value should be is bad usage.
    let e = p.run(&["find", "--limit", "-1"]);
    assert!(e.usage().contains("-1"), "{e:?}");
    // The largest value is accepted and means what it says.
    assert_eq!(
        p.json(&["find", "--offset", "9223372036854775807"]),
        json!([])
    );
    assert_eq!(
        p.json(&["find", "--limit", "9223372036854775807"])
            .as_array()
            .unwrap()
            .len(),
        1
    );
    let r = p.run(&["transcript", "list", "--offset", "9223372036854775808"]);
    assert!(r.err().contains("invalid offset"), "{r:?}");
}

#[test]
fn find_shows_a_page_by_default_and_says_how_many_more() {
    let p = TestProject::new();
    for i in 0..53 {
        hand_written(
            &p,
            &format!("00000000-0000-4000-8000-{i:012}"),
            &format!("2025-10-05T10:{:02}:{:02}Z", i / 60, i % 60),
        );
    }
    let r = p.run(&["find"]);
    let out = r.ok();
    assert_eq!(out.matches("intake-app").count(), 2 * 50, "{out}");
    assert!(
        r.stderr.contains("3 more run(s) match") && r.stderr.contains("--offset 50"),
        "{}",
        r.stderr
    );
    let r = p.run(&["--json", "find"]);
    assert_eq!(r.json().as_array().unwrap().len(), 50);
    let r = p.run(&["--json", "find", "--offset", "50"]);
    assert_eq!(r.json().as_array().unwrap().len(), 3);
    assert!(!r.stderr.contains("more"), "{}", r.stderr);
    let r = p.run(&["find", "--limit", "60"]);
    assert_eq!(r.ok().matches("intake-app").count(), 2 * 53);
    assert!(r.stderr.is_empty(), "{}", r.stderr);
    let r = p.run(&["find", "--agent", "alex", "--limit", "10", "--offset", "40"]);
    assert!(r.stderr.contains("3 more run(s)"), "{}", r.stderr);
}

#[test]
fn find_text_shows_its_snippet_in_plain_output_cut_at_words() {
    let p = TestProject::new();
    let long = "We compared many vendors before choosing: the laptop budget for the \
                whole sales team is twelve thousand euros, including docks and monitors \
                and three years of on-site support from the reseller";
    let id = start(&p, &["--description", long]);
    let out = p.run(&["find", "--text", "budget"]);
    let out = out.ok();
    let line = out
        .lines()
        .find(|l| l.contains("[budget]"))
        .unwrap_or_else(|| panic!("no snippet line:\n{out}"));
    assert!(out.contains(&id));
    let words: Vec<&str> = long.split_whitespace().collect();
    for w in line.split_whitespace() {
        let w = w.trim_matches(|c| c == '…' || c == '[' || c == ']');
        assert!(
            w.is_empty() || words.contains(&w),
            "cut word {w:?} in {line:?}"
        );
    }
}

#[test]
fn run_env_exports_the_variables_to_programs_started_from_that_shell() {
    let p = TestProject::new();
    let id = start(&p, &[]);
    let script = format!(
        "eval \"$('{}' --root '{}' run env {id})\" && sh -c 'echo \"$LOGBOOK_SESSION_ID|$LOGBOOK_SESSION_FOLDER\"'",
        bin(),
        p.root().display()
    );
    let out = Command::new("sh")
        .arg("-c")
        .arg(&script)
        .env_remove("LOGBOOK_SESSION_ID")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let seen = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        seen.trim(),
        format!("{id}|{}", run_dir(&p, &id).display()),
        "a child process sees the variables"
    );
}

#[test]
fn run_ids_are_one_whatever_the_case_and_unique_prefixes_name_them() {
    let p = TestProject::new();
    // A folder another tool made in capitals; commands name it in lowercase.
    let upper = "A3F2C9D1-4B5E-4789-81AB-CDEF12345678";
    hand_written(&p, upper, "2025-10-05T10:00:00Z");
    let lower = upper.to_ascii_lowercase();
    let shown = p.json(&["run", "show", &lower]);
    assert_eq!(shown["session_id"], upper);
    assert_eq!(p.json(&["run", "show", "a3F2c9d1"])["session_id"], upper);
    p.write(&format!("docs/agent-outputs/{upper}/notes.md"), "n\n");
    p.json(&[
        "run",
        "output",
        "a3f2c9d1",
        "notes.md",
        "--type",
        "document",
        "--description",
        "Notes",
    ]);
    assert_eq!(manifest(&p, upper)["outputs"][0]["file"], "notes.md");

    // Every command that takes a run id takes a unique prefix.
    let casey = start(&p, &[]);
    let prefix = &casey[..8];
    let pixel = start(&p, &["--related", prefix]);
    assert_eq!(manifest(&p, &pixel)["related_sessions"], json!([casey]));
    assert_eq!(
        p.json(&["run", "show", prefix])["session_id"],
        casey.as_str()
    );
    let env = p.run(&["run", "env", &casey[..13]]);
    assert!(env.ok().contains(&casey));
    let lineage = p.json(&["lineage", &pixel[..10]]);
    assert_eq!(lineage["ancestors"], json!([casey]));
    p.json(&["run", "link", &pixel[..8], "A3F2C9D1"]);
    assert_eq!(
        manifest(&p, &pixel)["related_sessions"],
        json!([casey, lower])
    );
    std::fs::write(run_dir(&p, &casey).join("r.md"), "r\n").unwrap();
    p.json(&[
        "run",
        "output",
        prefix,
        "r.md",
        "--type",
        "report",
        "--description",
        "R",
    ]);
    p.json(&["run", "finish", &casey.to_ascii_uppercase()[..9]]);
    assert_eq!(manifest(&p, &casey)["execution"]["status"], "completed");

    // Two runs sharing a prefix: refused, both named.
    hand_written(
        &p,
        "bbbbbbbb-1111-4000-8000-000000000001",
        "2025-10-05T11:00:00Z",
    );
    hand_written(
        &p,
        "bbbbbbbb-2222-4000-8000-000000000002",
        "2025-10-05T12:00:00Z",
    );
    for args in [
        vec!["run", "show", "bbbbbbbb"],
        vec!["run", "finish", "BBBBBBBB-"],
        vec!["lineage", "bbbbbbbb"],
        vec!["run", "link", &pixel, "bbbbbbbb"],
    ] {
        let r = p.run(&args);
        let e = r.err();
        assert!(
            e.contains("ambiguous")
                && e.contains("bbbbbbbb-1111-4000-8000-000000000001")
                && e.contains("bbbbbbbb-2222-4000-8000-000000000002"),
            "{args:?}: {e}"
        );
    }
    assert_eq!(
        p.json(&["run", "show", "bbbbbbbb-2"])["session_id"],
        "bbbbbbbb-2222-4000-8000-000000000002"
    );
    // Too short, or not an id at all.
    p.run(&["run", "show", "bbbbbbb"]).err();
    p.run(&["run", "show", "../../etc"]).err();
    let missing = p.run(&["run", "show", "cccccccc"]);
    assert!(
        missing.not_found().contains("not found"),
        "{}",
        missing.stderr
    );
}

#[test]
fn run_id_prefixes_resolve_from_the_folders_when_the_index_cannot_answer() {
    let p = TestProject::new();
    let id = start(&p, &[]);
    // The index is not a file SQLite can open; the folders still answer.
    std::fs::remove_file(p.path(".logbook/index.db")).unwrap();
    std::fs::create_dir(p.path(".logbook/index.db")).unwrap();
    let r = p.run(&["--json", "run", "show", &id[..8]]);
    assert_eq!(r.json()["session_id"], id.as_str());
    hand_written(
        &p,
        &format!("{}-0000-4000-8000-000000000000", &id[..8]),
        "2025-10-05T10:00:00Z",
    );
    let r = p.run(&["run", "show", &id[..8]]);
    // A warning that the index cannot be used comes first, then the error.
    assert_eq!(r.code, 1, "{r:?}");
    let last = r.stderr.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("error: ") && last.contains("ambiguous"),
        "{}",
        r.stderr
    );
}

#[test]
fn run_output_registers_regular_files_once_under_their_real_path() {
    let p = TestProject::new();
    let id = start(&p, &[]);
    let dir = run_dir(&p, &id);
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(dir.join("sub/a.md"), "a\n").unwrap();
    std::os::unix::fs::symlink(".", dir.join("self")).unwrap();
    std::os::unix::fs::symlink("..", dir.join("up")).unwrap();
    let register = |file: &str| {
        p.run(&[
            "--json",
            "run",
            "output",
            &id,
            file,
            "--type",
            "document",
            "--description",
            "A",
        ])
    };
    for alias in [
        "sub/a.md",
        "self/sub/a.md",
        &format!("up/{id}/sub/a.md"),
        "./self/self/sub/a.md",
    ] {
        let r = register(alias);
        assert_eq!(r.json()["output"]["file"], "sub/a.md", "{alias}");
    }
    let outputs = manifest(&p, &id)["outputs"].clone();
    assert_eq!(outputs.as_array().unwrap().len(), 1, "{outputs}");

    // Folders, FIFOs and devices are not outputs.
    p.mkfifo(&dir.join("pipe"));
    std::os::unix::fs::symlink("/dev/null", dir.join("null")).unwrap();
    for (file, what) in [("sub", "folder"), ("self", "folder"), ("pipe", "FIFO")] {
        let e = register(file);
        assert!(e.err().contains(what), "{file}: {}", e.stderr);
    }
    register("null").err();
    // Names with control characters, given or reached through a symlink.
    std::fs::write(dir.join("two\nlines.md"), "x\n").unwrap();
    std::os::unix::fs::symlink("two\nlines.md", dir.join("plain.md")).unwrap();
    for file in ["two\nlines.md", "plain.md"] {
        let e = register(file);
        assert!(
            e.err().contains("control character"),
            "{file:?}: {}",
            e.stderr
        );
    }
    // A symlink to the manifest is the manifest.
    std::os::unix::fs::symlink("manifest.json", dir.join("m.json")).unwrap();
    assert!(register("m.json").err().contains("manifest"));
    assert_eq!(
        manifest(&p, &id)["outputs"].as_array().unwrap().len(),
        1,
        "nothing refused was recorded"
    );
}

#[test]
fn latest_output_marks_a_deleted_file_missing() {
    let p = TestProject::new();
    let id = start(&p, &[]);
    let file = run_dir(&p, &id).join("req.md");
    std::fs::write(&file, "r\n").unwrap();
    p.json(&[
        "run",
        "output",
        &id,
        "req.md",
        "--type",
        "document",
        "--description",
        "R",
    ]);
    let found = p.json(&["latest-output", "--agent", "casey", "--status", "running"]);
    assert_eq!(found["missing"], false);
    std::fs::remove_file(&file).unwrap();
    let found = p.json(&["latest-output", "--agent", "casey", "--status", "running"]);
    assert_eq!(found["missing"], true);
    assert_eq!(found["path"], file.to_str().unwrap());
    assert_eq!(found["output"]["file"], "req.md");
    let r = p.run(&["latest-output", "--agent", "casey", "--status", "running"]);
    assert_eq!(r.ok().trim_end(), file.to_str().unwrap());
    assert!(
        r.stderr.starts_with("warning:") && r.stderr.contains("no longer there"),
        "{}",
        r.stderr
    );
}

#[test]
fn run_link_refuses_a_lineage_cycle_and_names_it() {
    let p = TestProject::new();
    let a = start(&p, &[]);
    let b = start(&p, &["--related", &a]);
    let c = start(&p, &["--related", &b]);
    let before = manifest(&p, &a);
    let r = p.run(&["run", "link", &a, &c]);
    let e = r.err();
    assert!(
        e.contains(&format!("cycle: {a} -> {c} -> {b} -> {a}")),
        "{e}"
    );
    assert_eq!(manifest(&p, &a), before, "nothing written");
    let r = p.run(&["run", "link", &b, &c]);
    assert!(
        r.err().contains(&format!("{b} -> {c} -> {b}")),
        "{}",
        r.stderr
    );
    // Not a cycle: a second parent further up.
    let d = start(&p, &[]);
    p.json(&["run", "link", &c, &d]);
    p.json(&["run", "link", &c, &a]);
}

#[test]
fn files_named_by_the_user_must_be_small_regular_files() {
    let p = TestProject::new();
    let fifo = p.path("wf.fifo");
    p.mkfifo(&fifo);
    let big = p.write(
        "big/workflow.yaml",
        &format!("name: big\n#{}\n", "x".repeat(1 << 20)),
    );
    let bundle = p.write("bundle/config.yaml", &format!("#{}\n", "x".repeat(1 << 20)));
    let uses_bundle = p.write(
        "wf/workflow.yaml",
        &format!("name: wf\nconfig_source: '{}'\n", bundle.display()),
    );
    for (path, want) in [
        (
            Path::new("/dev/zero"),
            "/dev/zero is a device, not a regular file",
        ),
        (fifo.as_path(), "FIFO"),
        (p.root(), "is a folder"),
        (big.as_path(), "larger than the limit of 1 MiB"),
        (uses_bundle.as_path(), "larger than the limit of 1 MiB"),
    ] {
        let r = p.run_bounded(&[
            "run",
            "start",
            "--agent",
            "a",
            "--workflow-file",
            path.to_str().unwrap(),
        ]);
        let e = r.err();
        assert!(e.contains(want), "{}: {e}", path.display());
    }
    assert!(!p.path("docs/agent-outputs").exists(), "no run was created");

    // A transcript to import: the same rules, with a generous limit.
    let tfifo = p.path("t.fifo");
    p.mkfifo(&tfifo);
    for (path, want) in [
        (Path::new("/dev/zero"), "device"),
        (tfifo.as_path(), "FIFO"),
    ] {
        let r = p.run_bounded(&["transcript", "import", path.to_str().unwrap()]);
        assert!(r.err().contains(want), "{}: {}", path.display(), r.stderr);
    }
    // logbook.yaml too: every command reads it.
    let other = TestProject::new();
    p.mkfifo(&other.path("logbook.yaml"));
    let r = other.run_bounded(&["find"]);
    assert!(r.err().contains("FIFO"), "{}", r.stderr);
}

#[test]
fn records_another_tool_replaced_with_a_fifo_are_refused_not_waited_on() {
    let p = TestProject::new();
    p.json(&["start", "--client", "acme", "--project", "FIFO"]);
    let id = start(&p, &[]);
    let kept = start(&p, &[]);
    let manifest = run_dir(&p, &id).join("manifest.json");
    std::fs::remove_file(&manifest).unwrap();
    p.mkfifo(&manifest);

    // Commands on that run say what is there instead of a manifest.
    for args in [
        vec!["run", "show", &id],
        vec!["lineage", &id],
        vec![
            "run",
            "output",
            &id,
            "a.md",
            "--type",
            "document",
            "--description",
            "A",
        ],
    ] {
        let r = p.run_bounded(&args);
        let e = r.err();
        assert!(
            e.contains("manifest") && e.contains("FIFO"),
            "{args:?}: {e}"
        );
    }
    // Listings and upkeep skip it, name it, and go on with the others.
    for args in [["index", "rebuild"], ["index", "sync"]] {
        p.run_bounded(&args).ok();
    }
    let found = p.run_bounded(&["find", "--json"]);
    assert!(found.ok().contains(&kept) && !found.stdout.contains(&id));
    let doctor = p.run_bounded(&["doctor"]);
    assert_eq!(doctor.code, 1);
    assert!(
        doctor.stdout.contains("corrupt-manifest") && doctor.stdout.contains("FIFO"),
        "{}",
        doctor.stdout
    );

    // The active-session pointer, read by `status` and every write.
    let pointer = p.path(".logbook/sessions/active-session.yaml");
    std::fs::remove_file(&pointer).unwrap();
    p.mkfifo(&pointer);
    let r = p.run_bounded(&["status"]);
    assert!(r.err().contains("FIFO"), "{}", r.stderr);
}

#[test]
fn display_fields_are_refreshed_on_every_manifest_write() {
    let mut p = TestProject::new();
    p.now = Some("2025-10-06T14:30:00Z".into());
    let id = start(&p, &["--input", "project_name=Laptops"]);
    let m = manifest(&p, &id);
    assert_eq!(m["displayTimestamp"], "2:30p");
    assert_eq!(m["displayName"], "2:30p - deep-dive: Laptops");
    p.now = Some("2025-10-07T09:00:00Z".into());
    std::fs::write(run_dir(&p, &id).join("a.md"), "a\n").unwrap();
    p.json(&[
        "run",
        "output",
        &id,
        "a.md",
        "--type",
        "document",
        "--description",
        "A",
    ]);
    let m = manifest(&p, &id);
    assert_eq!(m["displayTimestamp"], "Yday 2:30p");
    assert_eq!(m["displayName"], "Yday 2:30p - deep-dive: Laptops");
    p.now = Some("2025-10-20T09:00:00Z".into());
    p.json(&["run", "finish", &id]);
    let m = manifest(&p, &id);
    assert_eq!(m["displayTimestamp"], "Oct 6");
    assert_eq!(m["displayName"], "Oct 6 - deep-dive: Laptops");
}

#[test]
fn a_transcript_linked_to_a_run_fills_user_summary_and_message_count() {
    let mut p = TestProject::new();
    p.now = Some("2026-01-18T11:00:00Z".into());
    let id = start(&p, &[]);
    p.write(
        "in/main.json",
        &shared_text("fixtures/transcript-main.json"),
    );
    let r = p.json(&["transcript", "import", "in/main.json", "--run", &id[..8]]);
    assert_eq!(r["run"], id.as_str());
    let m = manifest(&p, &id);
    assert_eq!(m["userSummary"], "I need to purchase 10 laptops...");
    assert_eq!(m["messageCount"], 3);
    assert_eq!(
        m["displayName"],
        "11:00a - I need to purchase 10 laptops..."
    );
    let shown = p.json(&["transcript", "show", "6f1c2b9e"]);
    assert_eq!(shown["metadata"]["runId"], id.as_str());
    // `run show` names the transcript back.
    let main_id = "6f1c2b9e-3d4a-4c5b-9e8f-1a2b3c4d5e6f";
    let run = p.json(&["run", "show", &id]);
    assert_eq!(run["transcripts"], json!([main_id]), "{run}");
    let text = p.run(&["run", "show", &id]);
    assert!(
        text.stdout.contains(&format!("Transcripts: {main_id}")),
        "{}",
        text.stdout
    );

    // metadata.runId in the file does the same, and a re-import updates it.
    let other = start(&p, &[]);
    let mut t: Value =
        serde_json::from_str(&shared_text("fixtures/transcript-subagent.json")).unwrap();
    t["metadata"]["runId"] = json!(other);
    t["messages"]
        .as_array_mut()
        .unwrap()
        .insert(0, json!({"role": "user", "blocks": [{"type": "text", "content": "Compare   the\nthree vendors"}]}));
    let n = t["messages"].as_array().unwrap().len();
    p.write("in/sub.json", &t.to_string());
    p.json(&["transcript", "import", "in/sub.json"]);
    let m = manifest(&p, &other);
    assert_eq!(m["userSummary"], "Compare the three vendors");
    assert_eq!(m["messageCount"], n);
    let run = p.json(&["run", "show", &other]);
    assert_eq!(run["transcripts"], json!([t["id"]]), "{run}");

    // A runId naming no run is refused before anything is written.
    t["id"] = json!("11111111-2222-4333-8444-555555555555");
    t["metadata"]["runId"] = json!("99999999-9999-4999-8999-999999999999");
    p.write("in/bad.json", &t.to_string());
    let r = p.run(&["transcript", "import", "in/bad.json"]);
    assert!(r.err().contains("metadata.runId"), "{}", r.stderr);
    let r = p.run(&["transcript", "import", "in/main.json", "--run", "99999999"]);
    assert!(r.not_found().contains("not found"), "{}", r.stderr);
    assert!(
        !p.path(".logbook/transcripts/subagent_session_55555555.json")
            .exists()
    );
}

#[test]
fn transcript_ids_are_one_whatever_the_case_and_parts_must_be_unique() {
    let p = TestProject::new();
    let main = shared_text("fixtures/transcript-main.json");
    let lower = "6f1c2b9e-3d4a-4c5b-9e8f-1a2b3c4d5e6f";
    let upper = lower.to_ascii_uppercase();
    p.write("lower.json", &main);
    p.write("upper.json", &main.replace(lower, &upper));
    p.json(&["transcript", "import", "upper.json"]);
    p.json(&["transcript", "import", "lower.json"]);
    let list = p.json(&["transcript", "list", "--all"]);
    assert_eq!(list.as_array().unwrap().len(), 1, "{list}");
    assert_eq!(list[0]["id"], lower);
    for given in [
        upper.as_str(),
        lower,
        "6F1C2B9E",
        "3C4D5E6F",
        "6f1c2b9e-3d4a",
    ] {
        assert_eq!(
            p.json(&["transcript", "show", given])["id"],
            lower,
            "{given}"
        );
    }

    // A file another tool wrote with capitals in its name and id is found
    // and rewritten in place, not duplicated.
    let dir = p.path(".logbook/transcripts");
    std::fs::remove_dir_all(&dir).unwrap();
    p.write(
        ".logbook/transcripts/session_3C4D5E6F.json",
        &main.replace(lower, &upper),
    );
    assert_eq!(p.json(&["transcript", "show", lower])["id"], upper.as_str());
    p.json(&["transcript", "import", "lower.json"]);
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    assert_eq!(names, ["session_3C4D5E6F.json"]);

    // Two ids sharing a prefix: refused, both named.
    let twin = "6f1c2b9e-0000-4000-8000-000000000000";
    p.write("twin.json", &main.replace(lower, twin));
    p.json(&["transcript", "import", "twin.json"]);
    let r = p.run(&["transcript", "show", "6f1c2b9e"]);
    let e = r.err();
    assert!(
        e.contains("ambiguous") && e.contains(lower) && e.contains(twin),
        "{e}"
    );
}
