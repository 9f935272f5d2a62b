//! What another program writes is what the next read answers, without a
//! sync: runs finished in place by their engine, manifests torn and
//! repaired, run folders without a manifest; and `doctor` names what the
//! listings skip, from an index it brought up to date first.

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::harness::{Run, TestProject};
use crate::mcp::Mcp;
use crate::serve::{get, serve};

/// A run folder name no run was started in.
const BARE: &str = "5d1c0f3e-8a2b-4c7d-9e6f-0a1b2c3d4e5f";

fn start(t: &TestProject, agent: &str) -> (String, PathBuf) {
    let v = t.start_run(
        agent,
        "nightly-review",
        &["--bundle", "bmad/bmm", "--description", "Review"],
    );
    (
        v["session_id"].as_str().unwrap().to_string(),
        PathBuf::from(v["folder"].as_str().unwrap()),
    )
}

/// The ids `find --json ARGS` lists, and its stderr.
fn find(t: &TestProject, args: &[&str]) -> (Vec<String>, String) {
    let mut all = vec!["--json", "find"];
    all.extend_from_slice(args);
    let r = t.run(&all);
    let ids = ids_of(&r.json());
    (ids, r.stderr)
}

/// The `session_id`s of a JSON array of runs (a `find --json` answer).
pub(crate) fn ids_of(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|e| e["session_id"].as_str().unwrap().to_string())
        .collect()
}

/// A manifest's status as a running run's.
const RUNNING: &str = "\"status\": \"running\"";

/// Finishes run `folder` by rewriting its manifest in place.
fn finish_in_place(folder: &std::path::Path) {
    edit_in_place(folder, RUNNING, "\"status\": \"completed\"");
}

/// Rewrites a manifest in place as another program would: the same file
/// opened and overwritten (no rename, so no folder's mtime moves).
fn edit_in_place(folder: &std::path::Path, from: &str, to: &str) {
    use std::io::Write;
    let path = folder.join("manifest.json");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{from} not in {text}");
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(&path)
        .unwrap();
    f.write_all(text.replacen(from, to, 1).as_bytes()).unwrap();
}

/// A `logbook serve` child, stopped however the test ends.
struct Server(std::process::Child, String);

impl Server {
    fn start(t: &TestProject) -> Server {
        let (child, url) = serve(t, &["--bind", "127.0.0.1:0"], None);
        Server(child, url)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The body of an HTTP answer, parsed as JSON.
fn api(url: &str, path: &str) -> Value {
    let answer = get(url, path, "");
    assert!(answer.starts_with("HTTP/1.1 200"), "{path}: {answer}");
    let body = answer.split("\r\n\r\n").nth(1).unwrap_or_default();
    // Chunked or not: the JSON array is the body's one bracketed span.
    let start = body.find('[').unwrap_or_else(|| panic!("{answer}"));
    let end = body.rfind(']').unwrap_or_else(|| panic!("{answer}"));
    serde_json::from_str(&body[start..=end]).unwrap_or_else(|e| panic!("{e}: {answer}"))
}

#[test]
fn a_run_finished_in_place_by_another_program_moves_to_its_new_status_in_every_face_at_once() {
    let t = TestProject::new();
    let (by_cli, cli_folder) = start(&t, "engine");
    let (by_mcp, mcp_folder) = start(&t, "engine");
    let (by_http, http_folder) = start(&t, "engine");
    let (still, _) = start(&t, "engine");
    // Indexed as running by a listing, and a server of each kind is up.
    assert_eq!(find(&t, &["--status", "running"]).0.len(), 4);
    let mut mcp = Mcp::start(&t);
    assert_eq!(
        mcp.ok("find_runs", json!({"status": "running"}))["total"],
        4
    );
    let server = Server::start(&t);
    let url = server.1.clone();

    // Seed 000's engine finalizes a run by rewriting its manifest.
    finish_in_place(&cli_folder);
    // Narrowed by another filter (only that agent's running runs are
    // checked) here; the faces below ask by status alone.
    let cli_completed = find(&t, &["--agent", "engine", "--status", "completed"]).0;
    edit_in_place(&mcp_folder, RUNNING, "\"status\": \"failed\"");
    let mcp_failed = ids_of(&mcp.ok("find_runs", json!({"status": "failed"}))["runs"]);
    edit_in_place(&http_folder, RUNNING, "\"status\": \"cancelled\"");
    let http_cancelled = ids_of(&api(&url, "/api/runs?status=cancelled"));
    let http_running = ids_of(&api(&url, "/api/runs?status=running"));
    drop(server);
    let cli_running = find(&t, &["--status", "running"]).0;

    assert_eq!(cli_completed, vec![by_cli], "CLI find --status completed");
    assert_eq!(mcp_failed, vec![by_mcp], "MCP find_runs status failed");
    assert_eq!(
        http_cancelled,
        vec![by_http],
        "GET /api/runs?status=cancelled"
    );
    assert_eq!(
        http_running,
        vec![still.clone()],
        "GET /api/runs?status=running"
    );
    assert_eq!(cli_running, vec![still], "CLI find --status running");
}

#[test]
fn a_running_run_whose_start_time_is_rewritten_in_place_is_found_by_since_at_once() {
    let t = TestProject::new();
    let (id, folder) = start(&t, "engine");
    assert_eq!(find(&t, &["--since", "2098-01-01"]).0, Vec::<String>::new());
    let text = std::fs::read_to_string(folder.join("manifest.json")).unwrap();
    let m: Value = serde_json::from_str(&text).unwrap();
    let started = m["execution"]["started_at"].as_str().unwrap().to_string();
    edit_in_place(&folder, &started, "2099-01-01T00:00:00.000Z");
    assert_eq!(find(&t, &["--since", "2098-01-01"]).0, vec![id]);
}

#[test]
fn a_torn_manifest_repaired_in_place_comes_back_at_the_next_read_and_the_warning_goes() {
    let t = TestProject::new();
    let (torn, folder) = start(&t, "engine");
    let (other, _) = start(&t, "engine");
    let good = std::fs::read_to_string(folder.join("manifest.json")).unwrap();
    assert_eq!(find(&t, &[]).0.len(), 2);

    std::fs::write(folder.join("manifest.json"), "{ torn").unwrap();
    let (ids, stderr) = find(&t, &["--status", "running"]);
    assert_eq!(ids, vec![other.clone()]);
    assert!(stderr.contains("skipped 1 invalid manifest"), "{stderr}");
    let report = t.doctor(&[]);
    let named: Vec<&Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "corrupt-manifest")
        .collect();
    assert_eq!(named.len(), 1, "{report:#}");
    assert!(
        named[0]["path"].as_str().unwrap().contains(&torn),
        "{report:#}"
    );

    std::fs::write(folder.join("manifest.json"), &good).unwrap();
    let (ids, stderr) = find(&t, &["--status", "running"]);
    assert_eq!(ids.len(), 2, "repaired: {ids:?}");
    assert!(ids.contains(&torn));
    assert!(!stderr.contains("skipped"), "{stderr}");
}

#[test]
fn doctor_judges_from_a_synced_index_so_its_first_pass_and_fix_agree() {
    let t = TestProject::new();
    let (child, child_folder) = start(&t, "engine");
    let (parent, parent_folder) = start(&t, "engine");
    t.run(&["run", "finish", &child]).ok();
    t.run(&["run", "finish", &parent]).ok();
    assert_eq!(find(&t, &[]).0.len(), 2);
    // Behind logbook's back: a link to a run that does not exist, and a
    // finished run's manifest torn (neither is seen by a listing that does
    // not return them).
    edit_in_place(
        &child_folder,
        "\"outputs\"",
        "\"related_sessions\": [\"0b0e3f2a-1111-4222-8333-444455556666\"],\n  \"outputs\"",
    );
    std::fs::write(parent_folder.join("manifest.json"), "{ torn").unwrap();

    let problems = |report: &Value| -> Vec<(String, String)> {
        let mut v: Vec<(String, String)> = report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["kind"] != "index-stale")
            .map(|f| {
                (
                    f["kind"].as_str().unwrap().to_string(),
                    f["path"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        v.sort();
        v
    };
    let first = t.doctor(&[]);
    let fixed = t.doctor(&["--fix"]);
    assert_eq!(problems(&first), problems(&fixed), "{first:#}\n{fixed:#}");
    let kinds: Vec<String> = problems(&first).into_iter().map(|(k, _)| k).collect();
    assert!(kinds.contains(&"dangling-link".to_string()), "{first:#}");
    assert!(kinds.contains(&"corrupt-manifest".to_string()), "{first:#}");
    // The first pass synced: the index is behind no more.
    let stale = t.json(&["index", "status"]);
    assert_eq!(
        stale["stale"],
        json!({"new": 0, "changed": 0, "deleted": 0}),
        "{stale:#}"
    );
}

#[test]
fn a_link_to_a_run_whose_manifest_is_a_fifo_calls_it_broken_and_names_the_fifo() {
    let t = TestProject::new();
    let (parent, parent_folder) = start(&t, "engine");
    let v = t.start_run("engine", "nightly-review", &["--related", &parent]);
    let child = v["session_id"].as_str().unwrap().to_string();
    assert_eq!(find(&t, &[]).0.len(), 2);
    let manifest = parent_folder.join("manifest.json");
    std::fs::remove_file(&manifest).unwrap();
    t.mkfifo(&manifest);

    for args in [&[][..], &["--fix"][..]] {
        let report = t.doctor(args);
        let findings = report["findings"].as_array().unwrap();
        let fifo = findings
            .iter()
            .find(|f| f["kind"] == "corrupt-manifest")
            .unwrap_or_else(|| panic!("{report:#}"));
        assert!(
            fifo["message"].as_str().unwrap().contains("FIFO"),
            "{report:#}"
        );
        let link = findings
            .iter()
            .find(|f| f["kind"] == "dangling-link")
            .unwrap_or_else(|| panic!("{report:#}"));
        let message = link["message"].as_str().unwrap();
        assert!(message.contains(&child), "{message}");
        assert!(message.contains("is broken"), "{message}");
        assert!(message.contains("FIFO"), "{message}");
        assert!(!message.contains("not a run here"), "{message}");
    }
}

#[test]
fn a_run_folder_without_a_manifest_is_listed_by_its_uuid_as_unknown_in_every_face() {
    let t = TestProject::new();
    let (run, _) = start(&t, "engine");
    assert_eq!(find(&t, &[]).0, vec![run.clone()]);
    let bare = t.path("docs/agent-outputs").join(BARE);
    std::fs::create_dir_all(&bare).unwrap();
    std::fs::create_dir_all(t.path("docs/agent-outputs/scratch")).unwrap();

    let all = t.json(&["find"]);
    let listed = ids_of(&all);
    assert_eq!(listed.len(), 2, "{all:#}");
    assert!(listed.contains(&BARE.to_string()), "{all:#}");
    let unknown = t.json(&["find", "--status", "unknown"]);
    assert_eq!(ids_of(&unknown), vec![BARE.to_string()]);
    assert_eq!(unknown[0]["manifest"], Value::Null, "{unknown:#}");
    assert_eq!(unknown[0]["display_name"], BARE, "{unknown:#}");
    assert!(
        unknown[0]["folder"].as_str().unwrap().ends_with(BARE),
        "{unknown:#}"
    );
    let human = t.run(&["find", "--status", "unknown"]);
    assert!(human.ok().contains(BARE), "{human:?}");
    assert!(human.stdout.contains("unknown"), "{human:?}");
    assert_eq!(find(&t, &["--status", "running"]).0, vec![run.clone()]);

    // `run show` says what is wrong rather than "not found", whether given
    // the whole UUID or the prefix a listing shows.
    for given in [BARE, &BARE[..8]] {
        let shown: Run = t.run(&["run", "show", given]);
        shown.not_found();
        assert!(
            shown.stderr.contains("has no manifest"),
            "{given}: {shown:?}"
        );
        assert!(!shown.stderr.contains("not found"), "{given}: {shown:?}");
    }

    let mut mcp = Mcp::start(&t);
    let via_mcp = mcp.ok("find_runs", json!({"status": "unknown"}));
    assert_eq!(ids_of(&via_mcp["runs"]), vec![BARE.to_string()]);
    assert_eq!(via_mcp["runs"][0]["manifest"], Value::Null);
    let server = Server::start(&t);
    let url = server.1.clone();
    let via_http = api(&url, "/api/runs?status=unknown");
    let every = api(&url, "/api/runs");
    let viewer = get(&url, "/", "");
    drop(server);
    assert_eq!(ids_of(&via_http), vec![BARE.to_string()]);
    assert_eq!(via_http[0]["manifest"], Value::Null);
    assert_eq!(ids_of(&every).len(), 2, "{every:#}");
    assert!(viewer.contains(BARE), "the viewer's run list: {viewer}");

    // Its engine writes the manifest: the run shows as what it says, at once.
    let m = std::fs::read_to_string(
        t.path("docs/agent-outputs")
            .join(&run)
            .join("manifest.json"),
    )
    .unwrap()
    .replace(&run, BARE);
    std::fs::write(bare.join("manifest.json"), m).unwrap();
    assert_eq!(find(&t, &["--status", "unknown"]).0, Vec::<String>::new());
    let running = find(&t, &["--status", "running"]).0;
    assert_eq!(running.len(), 2, "{running:?}");
    assert!(running.contains(&BARE.to_string()));
}

#[test]
fn unknown_is_a_status_to_ask_for_never_one_to_write() {
    let t = TestProject::new();
    let (run, _) = start(&t, "engine");
    let refused = t.run(&["run", "finish", &run, "--status", "unknown"]);
    refused.usage();
    let typo = t.run(&["find", "--status", "unkown"]);
    assert!(typo.err().contains("unknown"), "{typo:?}");
}

/// Writes a run as another program would, started `minute` minutes into
/// a day, with `status` and `title`.
fn write_run(t: &TestProject, id: &str, minute: u32, status: &str, title: &str) -> PathBuf {
    let folder = t.path("docs/agent-outputs").join(id);
    std::fs::create_dir_all(&folder).unwrap();
    let m = json!({
        "version": "1.0.0",
        "session_id": id,
        "agent": {"name": "engine", "title": title},
        "workflow": {"name": "nightly-review", "description": "a review"},
        "execution": {"started_at": format!("2025-10-05T10:{minute:02}:00.000Z"), "status": status},
        "outputs": [],
    });
    std::fs::write(
        folder.join("manifest.json"),
        serde_json::to_string_pretty(&m).unwrap(),
    )
    .unwrap();
    folder
}

#[test]
fn a_full_page_checks_the_running_runs_that_could_enter_it_and_those_enter_it() {
    let t = TestProject::new();
    let id = |n: u32| format!("5d1c0f3e-8a2b-4c7d-9e6f-0a1b2c3d4e{n:02}");
    // Newest first: a running run, four finished ones saying "zebra", and
    // an old running run.
    let newest = write_run(&t, &id(1), 50, "running", "An engine at work");
    for n in 2..6 {
        write_run(&t, &id(n), 50 - n, "completed", "A zebra count");
    }
    let oldest = write_run(&t, &id(9), 1, "running", "An engine at work");
    assert_eq!(find(&t, &["--status", "running"]).0, vec![id(1), id(9)]);
    let page = |args: &[&str]| find(&t, args).0;
    assert_eq!(
        page(&["--status", "completed", "--limit", "2"]),
        [id(2), id(3)]
    );

    // The old running run finishes in place: not on the first page, but on
    // the page that reaches it.
    finish_in_place(&oldest);
    assert_eq!(
        page(&["--status", "completed", "--limit", "2"]),
        [id(2), id(3)]
    );
    assert_eq!(
        page(&["--status", "completed", "--limit", "2", "--offset", "4"]),
        [id(9)]
    );
    // The newest finishes in place, and comes first on a full page; its
    // new title is found by a full page of text matches too.
    finish_in_place(&newest);
    assert_eq!(
        page(&["--status", "completed", "--limit", "2"]),
        [id(1), id(2)]
    );
    let newest_running = write_run(&t, &id(10), 55, "running", "An engine at work");
    assert_eq!(page(&["--text", "zebra", "--limit", "2"]), [id(2), id(3)]);
    edit_in_place(
        &newest_running,
        "An engine at work",
        "A zebra engine at work",
    );
    assert_eq!(page(&["--text", "zebra", "--limit", "2"]), [id(10), id(2)]);
}
