//! Transcripts (seed 003) through the real binary: both prefixes, workdir
//! filter, short-id collisions, corrupt files, prune, and the memory a large
//! transcript costs to load.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;

use crate::harness::{TestProject, command_in, run_peak_memory, shared_text};

const MAIN_ID: &str = "6f1c2b9e-3d4a-4c5b-9e8f-1a2b3c4d5e6f";
const SUB_ID: &str = "0b7e9d2a-8c1f-4e3d-a6b5-9c8d7e6f5a4b";

/// The fixture with its workdir moved into the test project.
fn fixture_here(t: &TestProject, name: &str) -> String {
    shared_text(&format!("fixtures/{name}")).replace(
        "/home/bryan/projects/acme",
        &t.root().join("app").to_string_lossy(),
    )
}

fn import(t: &TestProject, rel: &str, text: &str, extra: &[&str]) -> Value {
    t.write(rel, text);
    let mut args = vec!["transcript", "import", rel];
    args.extend_from_slice(extra);
    t.json(&args)
}

#[test]
fn both_prefixes_are_saved_listed_and_loaded() {
    let mut t = TestProject::new();
    t.now = Some("2026-01-18T11:00:00.000Z".into());
    let m = import(
        &t,
        "in/main.json",
        &fixture_here(&t, "transcript-main.json"),
        &[],
    );
    assert_eq!(m["kind"], "main");
    assert!(
        m["file"]
            .as_str()
            .unwrap()
            .ends_with(".logbook/transcripts/session_3c4d5e6f.json")
    );
    // The child names its parent, so it is a subagent transcript even without --subagent.
    let s = import(
        &t,
        "in/sub.json",
        &fixture_here(&t, "transcript-subagent.json"),
        &[],
    );
    assert_eq!(s["kind"], "subagent");
    assert!(
        s["file"]
            .as_str()
            .unwrap()
            .ends_with(".logbook/transcripts/subagent_session_7e6f5a4b.json")
    );

    let list = t.json(&["transcript", "list"]);
    let list = list.as_array().unwrap();
    assert_eq!(list.len(), 2);
    // Newest lastActiveAt first: the main session was active later.
    assert_eq!(list[0]["id"], MAIN_ID);
    assert_eq!(list[0]["kind"], "main");
    assert_eq!(list[0]["parentSessionId"], Value::Null);
    assert_eq!(list[0]["latestTotalTokens"], 2242);
    assert_eq!(list[1]["id"], SUB_ID);
    assert_eq!(list[1]["kind"], "subagent");
    assert_eq!(list[1]["parentSessionId"], MAIN_ID);
    for key in [
        "id",
        "kind",
        "file",
        "workdir",
        "startedAt",
        "lastActiveAt",
        "latestTotalTokens",
        "parentSessionId",
    ] {
        assert!(list[0].get(key).is_some(), "missing {key}");
    }
    assert_eq!(
        t.json(&["transcript", "list", "--main"])
            .as_array()
            .unwrap()
            .len(),
        1
    );
    let subs = t.json(&["transcript", "list", "--subagents"]);
    assert_eq!(subs.as_array().unwrap().len(), 1);
    assert_eq!(subs[0]["id"], SUB_ID);

    // Loaded by id, exactly as given: messages, and the file's own
    // timestamp (an import keeps it; seed 003).
    for (id, fixture) in [
        (MAIN_ID, "transcript-main.json"),
        (SUB_ID, "transcript-subagent.json"),
    ] {
        let shown = t.json(&["transcript", "show", id]);
        let given: Value = serde_json::from_str(&fixture_here(&t, fixture)).unwrap();
        assert_eq!(shown["messages"], given["messages"]);
        assert_ne!(shown["timestamp"], "2026-01-18T11:00:00.000Z");
        assert_eq!(shown, given);
    }
    // The short id works too, and the human view names the kind.
    let human = t.run(&["transcript", "show", "7e6f5a4b"]);
    assert!(human.ok().contains("(subagent)"), "{}", human.stdout);
    // Stored file: 2-space JSON, id stays a plain UUID.
    let stored = t.read(".logbook/transcripts/subagent_session_7e6f5a4b.json");
    assert!(
        stored.starts_with(&format!("{{\n  \"id\": \"{SUB_ID}\"")),
        "{stored}"
    );
}

#[test]
fn list_filters_by_workdir_unless_all() {
    let t = TestProject::new();
    import(
        &t,
        "a.json",
        &shared_text("fixtures/transcript-main.json"),
        &[],
    );
    import(
        &t,
        "b.json",
        &fixture_here(&t, "transcript-subagent.json"),
        &[],
    );
    let here = t.json(&["transcript", "list"]);
    assert_eq!(here.as_array().unwrap().len(), 1);
    assert_eq!(here[0]["id"], SUB_ID);
    assert_eq!(
        t.json(&["transcript", "list", "--all"])
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

#[test]
fn import_flags_set_kind_and_parent() {
    let t = TestProject::new();
    let main = fixture_here(&t, "transcript-main.json");
    let r = import(&t, "m.json", &main, &["--subagent"]);
    assert_eq!(r["kind"], "subagent");
    let other = main.replace(MAIN_ID, "99999999-3d4a-4c5b-9e8f-000000000001");
    let r = import(&t, "o.json", &other, &["--parent", MAIN_ID]);
    assert_eq!(r["kind"], "subagent");
    let shown = t.json(&["transcript", "show", "99999999-3d4a-4c5b-9e8f-000000000001"]);
    assert_eq!(shown["metadata"]["parentSessionId"], MAIN_ID);
    let e = t.run(&["transcript", "import", "o.json", "--parent", "nope"]);
    assert!(e.err().contains("parentSessionId"), "{}", e.stderr);
    let bad = main.replace(MAIN_ID, "not-a-uuid");
    t.write("bad.json", &bad);
    let e = t.run(&["transcript", "import", "bad.json"]);
    assert!(
        e.err().contains("\"not-a-uuid\"") && e.stderr.contains("UUID"),
        "{}",
        e.stderr
    );
}

#[test]
fn a_short_id_collision_keeps_both() {
    let t = TestProject::new();
    let main = fixture_here(&t, "transcript-main.json");
    let twin = "aaaaaaaa-bbbb-4ccc-8ddd-1a2b3c4d5e6f"; // same last 8: 3c4d5e6f
    let first = import(&t, "1.json", &main, &[]);
    let second = import(
        &t,
        "2.json",
        &main
            .replace(MAIN_ID, twin)
            .replace("10 laptops", "20 phones"),
        &[],
    );
    assert!(
        first["file"]
            .as_str()
            .unwrap()
            .ends_with("session_3c4d5e6f.json")
    );
    assert!(
        second["file"]
            .as_str()
            .unwrap()
            .ends_with(&format!("session_{twin}.json"))
    );
    let a = t.json(&["transcript", "show", MAIN_ID]);
    let b = t.json(&["transcript", "show", twin]);
    assert_eq!(a["id"], MAIN_ID);
    assert_eq!(b["id"], twin);
    assert!(
        b["messages"][0]["blocks"][0]["content"]
            .as_str()
            .unwrap()
            .contains("20 phones")
    );
    // Saving each again stays in its own file.
    import(&t, "2.json", &main.replace(MAIN_ID, twin), &[]);
    import(&t, "1.json", &main, &[]);
    let list = t.json(&["transcript", "list"]);
    assert_eq!(list.as_array().unwrap().len(), 2);
    assert_eq!(t.json(&["transcript", "show", MAIN_ID])["id"], MAIN_ID);
    // Both ids end in the short id: it names neither, and says so.
    let e = t.run(&["transcript", "show", "3c4d5e6f"]);
    let e = e.err();
    assert!(
        e.contains("ambiguous") && e.contains(MAIN_ID) && e.contains(twin),
        "{e}"
    );
    // A longer part of either id still names it.
    assert_eq!(
        t.json(&["transcript", "show", &MAIN_ID[..13]])["id"],
        MAIN_ID
    );
}

#[test]
fn a_corrupt_file_is_reported_and_the_rest_still_list() {
    let t = TestProject::new();
    import(&t, "m.json", &fixture_here(&t, "transcript-main.json"), &[]);
    import(
        &t,
        "s.json",
        &fixture_here(&t, "transcript-subagent.json"),
        &[],
    );
    t.write(
        ".logbook/transcripts/session_deadbeef.json",
        "{\"id\": \"half-writ",
    );
    t.write(".logbook/transcripts/.session_x.json.1.2.tmp", "temp");
    t.write(".logbook/transcripts/notes.txt", "not a transcript");
    let r = t.run(&["--json", "transcript", "list"]);
    let list: Value = serde_json::from_str(r.ok()).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 2);
    assert!(
        r.stderr.contains("session_deadbeef.json"),
        "reported: {}",
        r.stderr
    );
    assert!(!r.stderr.contains(".tmp"), "{}", r.stderr);
    let e = t.run(&["transcript", "show", "deadbeef"]);
    assert!(
        e.err()
            .contains("session_deadbeef.json: not a valid transcript"),
        "{}",
        e.stderr
    );
}

#[test]
fn prune_archives_old_transcripts_and_never_deletes() {
    let mut t = TestProject::new();
    t.now = Some("2026-03-01T00:00:00.000Z".into());
    import(&t, "m.json", &fixture_here(&t, "transcript-main.json"), &[]);
    let recent = fixture_here(&t, "transcript-subagent.json")
        .replace("2026-01-18T10:36:51.004Z", "2026-02-25T10:00:00.000Z");
    import(&t, "s.json", &recent, &[]);
    let dry = t.json(&["transcript", "prune", "--older-than", "30", "--dry-run"]);
    assert_eq!(dry["moved"].as_array().unwrap().len(), 1);
    assert_eq!(dry["moved"][0]["id"], MAIN_ID);
    assert!(
        t.path(".logbook/transcripts/session_3c4d5e6f.json")
            .is_file(),
        "dry run moves nothing"
    );
    let done = t.json(&["transcript", "prune", "--older-than", "30"]);
    assert_eq!(done["moved"].as_array().unwrap().len(), 1);
    assert!(
        !t.path(".logbook/transcripts/session_3c4d5e6f.json")
            .exists()
    );
    assert!(
        t.path(".logbook/transcripts/archive/session_3c4d5e6f.json")
            .is_file()
    );
    let list = t.json(&["transcript", "list"]);
    assert_eq!(list.as_array().unwrap().len(), 1);
    // Archived transcripts still load by id.
    assert_eq!(t.json(&["transcript", "show", MAIN_ID])["id"], MAIN_ID);
}

/// A transcript of about `bytes` bytes: many messages with realistic text,
/// tool and usage blocks.
fn big_transcript(id: &str, workdir: &Path, bytes: usize) -> String {
    let sentence = "The orchestrator asked the analyst to compare three storage designs and report the trade-offs. ";
    let text: String = sentence.repeat(20);
    let mut out = format!(
        "{{\n  \"id\": \"{id}\",\n  \"timestamp\": \"2026-01-18T10:42:07.512Z\",\n  \"version\": \"1.0.0\",\n  \"messages\": [\n"
    );
    let mut n = 0;
    while out.len() < bytes {
        if n > 0 {
            out.push_str(",\n");
        }
        let role = if n % 2 == 0 { "user" } else { "assistant" };
        out.push_str(&format!(
            "    {{\n      \"role\": \"{role}\",\n      \"blocks\": [\n        {{ \"type\": \"text\", \"content\": \"{n}: {text}\" }},\n        {{ \"type\": \"tool\", \"name\": \"read_file\", \"parameters\": \"{{\\\"path\\\":\\\"src/{n}.rs\\\"}}\", \"result\": \"ok\" }}\n      ],\n      \"usage\": {{ \"prompt_tokens\": {n}, \"completion_tokens\": 10, \"total_tokens\": {} }}\n    }}",
            n + 10
        ));
        n += 1;
    }
    out.push_str(&format!(
        "\n  ],\n  \"metadata\": {{\n    \"workdir\": {},\n    \"startedAt\": \"2026-01-18T10:30:00.000Z\",\n    \"lastActiveAt\": \"2026-01-18T10:42:07.512Z\",\n    \"latestTotalTokens\": 2242\n  }}\n}}\n",
        serde_json::to_string(&workdir.to_string_lossy()).unwrap()
    ));
    out
}

/// Peak resident memory (bytes) of `logbook ARGS` (from /proc on Linux,
/// `wait4` on macOS: see `harness::run_peak_memory`); stdout is discarded
/// so the test holds nothing.
fn peak_rss(t: &TestProject, args: &[&str]) -> u64 {
    let mut c = command_in(t.root(), args);
    c.stdout(Stdio::null()).stderr(Stdio::piped());
    let (run, peak) = run_peak_memory(c, Duration::from_secs(300));
    assert_eq!(run.code, 0, "{args:?} failed: {}", run.stderr);
    peak
}

#[test]
fn a_50_mb_transcript_loads_in_under_4x_its_size() {
    let t = TestProject::new();
    let id = "5a5a5a5a-1111-4222-8333-444455556666";
    let size = 50 * 1024 * 1024;
    let text = big_transcript(id, t.root(), size);
    t.write("big.json", &text);
    drop(text);
    let imported = t.json(&["transcript", "import", "big.json"]);
    let stored = std::fs::metadata(imported["file"].as_str().unwrap())
        .unwrap()
        .len();
    assert!(stored >= size as u64, "{stored}");
    let show = ["transcript", "show", id];
    let show_json = ["--json", "transcript", "show", id];
    let (load, print) = (peak_rss(&t, &show), peak_rss(&t, &show_json));
    let (load_ratio, print_ratio) = (load as f64 / stored as f64, print as f64 / stored as f64);
    eprintln!(
        "50 MB transcript ({stored} bytes): peak RSS {} MB loading ({load_ratio:.2}x), {} MB printing as JSON ({print_ratio:.2}x)",
        load >> 20,
        print >> 20
    );
    assert!(
        load_ratio < 4.0,
        "loading took {load_ratio:.2}x the file size"
    );
    assert!(
        print_ratio < 4.0,
        "show --json took {print_ratio:.2}x the file size"
    );
    // The listing reads only the metadata, not the messages.
    let list = t.json(&["transcript", "list"]);
    assert_eq!(list[0]["id"], id);
}

#[test]
fn an_empty_project_listing_says_how_many_are_elsewhere() {
    let t = TestProject::new();
    // The fixture's workdir is another machine's folder, not this project.
    let file = t.write("in.json", &shared_text("fixtures/transcript-main.json"));
    t.run(&["transcript", "import", file.to_str().unwrap()])
        .ok();
    let out = t.run(&["transcript", "list"]).ok().to_string();
    assert!(
        out.contains("No transcripts for this project; 1 in other workdirs")
            && out.contains("--all"),
        "{out}"
    );
    assert_eq!(
        t.json(&["transcript", "list", "--all"])
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn human_times_are_local() {
    let mut t = TestProject::new();
    t.envs.push(("TZ".into(), "Asia/Tokyo".into()));
    let m = import(
        &t,
        "in/main.json",
        &fixture_here(&t, "transcript-main.json"),
        &[],
    );
    let stored = t.json(&["transcript", "show", MAIN_ID]);
    let utc = stored["metadata"]["lastActiveAt"]
        .as_str()
        .unwrap()
        .to_string();
    let local = utc
        .parse::<jiff::Timestamp>()
        .unwrap()
        .to_zoned(jiff::tz::TimeZone::get("Asia/Tokyo").unwrap())
        .strftime("%Y-%m-%d %H:%M:%S JST")
        .to_string();
    for args in [
        vec!["transcript", "list", "--all"],
        vec!["transcript", "show", MAIN_ID],
    ] {
        let out = t.run(&args);
        let text = out.ok();
        assert!(text.contains(&local), "{args:?}: {local} not in\n{text}");
        assert!(!text.contains(&utc), "{args:?}: {text}");
    }
    assert_eq!(m["kind"], "main");
}
