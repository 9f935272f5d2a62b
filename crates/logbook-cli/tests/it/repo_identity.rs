//! Repository identity with real git: a checkout that moves and whose
//! remote changes spelling keeps its transcripts, runs and work session;
//! `--repo` narrows by any spelling of a remote; another repository's
//! transcripts stay out of the default listing; a clone outside any
//! project finds what the per-user home recorded of its repository.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::harness::{Run, TestProject};

const MAIN_ID: &str = "6f1c2b9e-3d4a-4c5b-9e8f-1a2b3c4d5e6f";
const OTHER_ID: &str = "0b7d9c1e-2f3a-4b5c-8d6e-7f8091a2b3c4";
const SSH: &str = "git@example.com:org/proj.git";

/// A TestProject whose git and Logbook see only the temp dir: no system
/// or user git config, HOME and the data folder inside it.
pub(crate) fn sandbox() -> TestProject {
    let mut t = TestProject::new();
    let home = t.path("home");
    std::fs::create_dir_all(&home).unwrap();
    for (k, v) in [
        ("HOME", home.to_str().unwrap().to_string()),
        ("XDG_DATA_HOME", t.path("xdg").to_str().unwrap().to_string()),
        ("GIT_CONFIG_NOSYSTEM", "1".into()),
        ("GIT_AUTHOR_NAME", "T".into()),
        ("GIT_AUTHOR_EMAIL", "t@example.com".into()),
        ("GIT_COMMITTER_NAME", "T".into()),
        ("GIT_COMMITTER_EMAIL", "t@example.com".into()),
    ] {
        t.envs.push((k.into(), v));
    }
    t
}

pub(crate) fn git(t: &TestProject, dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .current_dir(dir)
        .envs(t.envs.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .args(args)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A repository at `dir` with one commit and `origin` as its remote.
pub(crate) fn repo(t: &TestProject, dir: &Path, origin: &str, file: &str) {
    std::fs::create_dir_all(dir).unwrap();
    git(t, dir, &["init", "-q", "-b", "main"]);
    std::fs::write(dir.join(file), "x\n").unwrap();
    git(t, dir, &["add", "."]);
    git(t, dir, &["commit", "-q", "-m", "first"]);
    git(t, dir, &["remote", "add", "origin", origin]);
}

/// `logbook ARGS` run in `dir`.
pub(crate) fn run_in(t: &TestProject, dir: &Path, args: &[&str]) -> Run {
    t.cmd(args)
        .current_dir(dir)
        .output()
        .expect("run logbook")
        .into()
}

pub(crate) fn json_in(t: &TestProject, dir: &Path, args: &[&str]) -> Value {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    run_in(t, dir, &all).json()
}

/// A small Claude Code log of session `id` run in `cwd`, written outside
/// any repository.
fn claude_log(t: &TestProject, id: &str, cwd: &Path, said: &str) -> PathBuf {
    let cwd = cwd.to_str().unwrap();
    let user = format!(
        r#"{{"type":"user","sessionId":"{id}","cwd":"{cwd}","uuid":"00000000-0000-4000-8000-0000000000a1","timestamp":"2026-01-18T10:00:00.000Z","message":{{"role":"user","content":"{said}"}}}}"#
    );
    let assistant = format!(
        r#"{{"type":"assistant","sessionId":"{id}","cwd":"{cwd}","uuid":"00000000-0000-4000-8000-0000000000a2","timestamp":"2026-01-18T10:00:05.000Z","requestId":"req_A","message":{{"id":"msg_A","model":"claude-opus-4-5","content":[{{"type":"text","text":"Done."}}],"usage":{{"input_tokens":7,"output_tokens":3}}}}}}"#
    );
    t.write(
        &format!("logs/{id}.jsonl"),
        &format!("{user}\n{assistant}\n"),
    )
}

fn ids(listing: &Value) -> Vec<String> {
    listing
        .as_array()
        .or_else(|| listing["transcripts"].as_array())
        .or_else(|| listing["runs"].as_array())
        .expect("a listing")
        .iter()
        .map(|t| {
            t["id"]
                .as_str()
                .or_else(|| t["session_id"].as_str())
                .unwrap()
                .to_string()
        })
        .collect()
}

#[test]
fn a_moved_checkout_with_a_respelled_remote_keeps_its_history() {
    let t = sandbox();
    let old = t.path("a/proj");
    repo(&t, &old, SSH, "README");
    // Another repository inside the project's folder, with its own agent.
    let nested = old.join("vendor/other");
    repo(&t, &nested, "https://example.com/else/lib", "LIB");

    let ws = json_in(&t, &old, &["start", "--client", "ACME", "--project", "X"]);
    let ws_id = ws["session_id"].as_str().unwrap().to_string();
    let yaml =
        std::fs::read_to_string(old.join(format!(".logbook/sessions/{ws_id}.yaml"))).unwrap();
    assert!(yaml.contains("origin: example.com/org/proj"), "{yaml}");
    let run = json_in(
        &t,
        &old,
        &["run", "start", "--agent", "casey", "--workflow", "w"],
    );
    let run_id = run["session_id"].as_str().unwrap().to_string();
    let manifest_of = |run: &Value| -> Value {
        let folder = Path::new(run["folder"].as_str().unwrap());
        serde_json::from_str(&std::fs::read_to_string(folder.join("manifest.json")).unwrap())
            .unwrap()
    };
    assert_eq!(
        manifest_of(&run)["metadata"]["repository"]["origin"],
        "example.com/org/proj"
    );
    // A run another checkout recorded into this project: `find` lists it,
    // `--repo` does not.
    let foreign = json_in(
        &t,
        &old,
        &["run", "start", "--agent", "fin", "--workflow", "w"],
    );
    let manifest = Path::new(foreign["folder"].as_str().unwrap()).join("manifest.json");
    let mut m = manifest_of(&foreign);
    m["metadata"]["repository"] =
        serde_json::json!({"origin": "example.com/fork/proj", "folder": "/x"});
    std::fs::write(&manifest, serde_json::to_string_pretty(&m).unwrap()).unwrap();
    let foreign_id = foreign["session_id"].as_str().unwrap().to_string();

    let main_log = claude_log(&t, MAIN_ID, &old, "plan the audit");
    let other_log = claude_log(&t, OTHER_ID, &nested, "fix the lib");
    for log in [&main_log, &other_log] {
        json_in(&t, &old, &["transcript", "import", log.to_str().unwrap()]);
    }
    let listed = json_in(&t, &old, &["transcript", "list"]);
    assert_eq!(ids(&listed), [MAIN_ID], "{listed}");
    let all = json_in(&t, &old, &["transcript", "list", "--all"]);
    assert_eq!(ids(&all).len(), 2, "{all}");

    // Moved to another folder, and its remote now spelled as https.
    let new = t.path("b/moved");
    std::fs::create_dir_all(new.parent().unwrap()).unwrap();
    std::fs::rename(&old, &new).unwrap();
    git(
        &t,
        &new,
        &[
            "remote",
            "set-url",
            "origin",
            "https://user:tok@Example.com/org/proj/",
        ],
    );

    let listed = json_in(&t, &new, &["transcript", "list"]);
    assert_eq!(ids(&listed), [MAIN_ID], "{listed}");
    let found = ids(&json_in(&t, &new, &["find"]));
    assert!(
        found.contains(&run_id) && found.contains(&foreign_id),
        "{found:?}"
    );
    let status = json_in(&t, &new, &["status"]);
    assert_eq!(status["session_id"], ws_id.as_str(), "{status}");
    // A key another tool added under `repository` survives a rewrite, and
    // the identity first recorded is kept.
    let yaml_path = new.join(format!(".logbook/sessions/{ws_id}.yaml"));
    let yaml = std::fs::read_to_string(&yaml_path).unwrap();
    std::fs::write(
        &yaml_path,
        yaml.replace("repository:\n", "repository:\n  team: blue\n"),
    )
    .unwrap();
    run_in(&t, &new, &["note", "moved"]).ok();
    let yaml = std::fs::read_to_string(&yaml_path).unwrap();
    assert!(
        yaml.contains("team: blue") && yaml.contains("origin: example.com/org/proj"),
        "{yaml}"
    );

    // The old ssh spelling names the same repository.
    let narrowed = ids(&json_in(&t, &new, &["find", "--repo", SSH]));
    assert_eq!(narrowed, [run_id]);
    let by_ssh = json_in(&t, &new, &["transcript", "list", "--repo", SSH]);
    assert_eq!(ids(&by_ssh), [MAIN_ID], "{by_ssh}");
    let by_folder = json_in(&t, &new, &["transcript", "list", "--repo", "vendor/other"]);
    assert_eq!(ids(&by_folder), [OTHER_ID], "{by_folder}");
    let bad = run_in(&t, &new, &["find", "--repo", "no-such-folder"]);
    assert!(
        bad.err().contains("--repo") || bad.stderr.contains("repo"),
        "{}",
        bad.stderr
    );
}

#[test]
fn a_clone_outside_any_project_reads_the_user_homes_records_of_its_repository() {
    let mut t = sandbox();
    let lbhome = t.path("lbhome");
    std::fs::create_dir_all(&lbhome).unwrap();
    t.envs
        .push(("LOGBOOK_HOME".into(), lbhome.to_str().unwrap().into()));
    let first = t.path("first");
    repo(&t, &first, SSH, "README");
    let unrelated = t.path("unrelated");
    repo(&t, &unrelated, "git@example.com:org/unrelated.git", "U");
    for (id, dir) in [(MAIN_ID, &first), (OTHER_ID, &unrelated)] {
        let log = claude_log(&t, id, dir, "work");
        // What a user-level hook does: record into the per-user home.
        let r = t
            .cmd(&[
                "--json",
                "--root",
                lbhome.to_str().unwrap(),
                "transcript",
                "import",
            ])
            .arg(&log)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    }
    assert!(
        !first.join(".logbook").exists(),
        "nothing written into the repository"
    );

    let clone = t.path("elsewhere/clone");
    std::fs::create_dir_all(clone.parent().unwrap()).unwrap();
    git(
        &t,
        t.root(),
        &[
            "clone",
            "-q",
            first.to_str().unwrap(),
            clone.to_str().unwrap(),
        ],
    );
    git(
        &t,
        &clone,
        &[
            "remote",
            "set-url",
            "origin",
            "ssh://git@example.com:22/org/proj",
        ],
    );

    let listed = json_in(&t, &clone, &["transcript", "list"]);
    assert_eq!(ids(&listed), [MAIN_ID], "{listed}");
    // Each log measured 10 tokens: only this repository's are counted.
    let usage = json_in(&t, &clone, &["transcript", "usage"]);
    assert_eq!(usage["total"]["total_tokens"], 10, "{usage}");
    let shown = json_in(&t, &clone, &["transcript", "show", &MAIN_ID[..8]]);
    assert_eq!(shown["id"], MAIN_ID);
    assert!(!clone.join(".logbook").exists(), "a read made no project");
    // With a project marked above, that project is read, not the home.
    std::fs::create_dir_all(clone.join(".logbook")).unwrap();
    let listed = json_in(&t, &clone, &["transcript", "list"]);
    assert_eq!(ids(&listed), Vec::<String>::new(), "{listed}");
}

#[test]
fn mcp_narrows_by_a_remote_url_or_this_project_and_refuses_folders() {
    let t = sandbox();
    repo(&t, t.root(), SSH, "README");
    let ours = t.start_run("casey", "w", &[]);
    let foreign = t.start_run("fin", "w", &[]);
    let manifest = Path::new(foreign["folder"].as_str().unwrap()).join("manifest.json");
    let mut m: Value = serde_json::from_str(&std::fs::read_to_string(&manifest).unwrap()).unwrap();
    m["metadata"]["repository"] = serde_json::json!({"origin": "example.com/fork/proj"});
    std::fs::write(&manifest, serde_json::to_string_pretty(&m).unwrap()).unwrap();
    let ours = ours["session_id"].as_str().unwrap().to_string();

    let mut mcp = crate::mcp::Mcp::start(&t);
    for repo in ["https://example.com/org/proj", "."] {
        let found = mcp.ok("find_runs", serde_json::json!({ "repo": repo }));
        assert_eq!(ids(&found), [ours.as_str()], "{repo}: {found}");
    }
    assert_eq!(ids(&mcp.ok("find_runs", serde_json::json!({}))).len(), 2);
    let refused = mcp.err("find_runs", serde_json::json!({ "repo": "/etc" }));
    assert!(refused.contains("repo"), "{refused}");
    let listed = mcp.ok("transcript_list", serde_json::json!({ "repo": SSH }));
    assert_eq!(ids(&listed), Vec::<String>::new(), "{listed}");
}

/// Every file under `dir`, read as bytes, that holds `secret`.
fn files_holding(dir: &Path, secret: &str) -> Vec<PathBuf> {
    let mut out = vec![];
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                // git's own config holds the remote as it was given.
                if p.file_name().is_some_and(|n| n != ".git") {
                    todo.push(p);
                }
            } else if std::fs::read(&p)
                .unwrap_or_default()
                .windows(secret.len())
                .any(|w| w == secret.as_bytes())
            {
                out.push(p);
            }
        }
    }
    out
}

#[test]
fn a_remotes_token_in_its_query_or_fragment_is_never_stored_or_printed() {
    let t = sandbox();
    let dir = t.path("tok/proj");
    repo(
        &t,
        &dir,
        "https://builder:PW-77@git.example.net/team/x.git?access_token=TOK-91#frag-TOK-92",
        "README",
    );
    let run = json_in(
        &t,
        &dir,
        &["run", "start", "--agent", "casey", "--workflow", "w"],
    );
    let folder = Path::new(run["folder"].as_str().unwrap());
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(folder.join("manifest.json")).unwrap())
            .unwrap();
    assert_eq!(
        manifest["metadata"]["repository"]["origin"],
        "git.example.net/team/x"
    );
    let found = run_in(&t, &dir, &["find", "--json", "--repo", "."]);
    let listing = found.ok();
    for secret in ["TOK-91", "TOK-92", "PW-77", "builder"] {
        assert!(!listing.contains(secret), "{secret} printed: {listing}");
        let holding: Vec<PathBuf> = [dir.clone(), t.path("xdg"), t.path("home")]
            .iter()
            .filter(|d| d.exists())
            .flat_map(|d| files_holding(d, secret))
            .collect();
        assert!(holding.is_empty(), "{secret} stored in {holding:?}");
    }
    // The same remote spelled with its token narrows to the run.
    let narrowed = json_in(
        &t,
        &dir,
        &[
            "find",
            "--repo",
            "https://git.example.net/team/x?access_token=OTHER",
        ],
    );
    assert_eq!(ids(&narrowed), [run["session_id"].as_str().unwrap()]);
}

#[test]
fn one_path_on_two_hosts_is_two_repositories_and_github_paths_ignore_case() {
    let t = sandbox();
    let hub = t.path("hub/widget");
    let lab = t.path("lab/widget");
    repo(&t, &hub, "https://github.com/Acme/Widget.git", "A");
    repo(&t, &lab, "git@gitlab.com:Acme/Widget.git", "B");
    let run = json_in(
        &t,
        &hub,
        &["run", "start", "--agent", "casey", "--workflow", "w"],
    );
    let run_id = run["session_id"].as_str().unwrap().to_string();
    let hub_log = claude_log(&t, MAIN_ID, &hub, "tune the widget");
    let lab_log = claude_log(&t, OTHER_ID, &lab, "port the widget");
    for log in [&hub_log, &lab_log] {
        json_in(&t, &hub, &["transcript", "import", log.to_str().unwrap()]);
    }
    let usage = json_in(&t, &hub, &["transcript", "usage", "--all", "--by", "repo"]);
    let mut keys: Vec<&str> = usage["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["key"].as_str().unwrap())
        .collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        ["github.com/Acme/Widget", "gitlab.com/Acme/Widget"],
        "{usage}"
    );

    // The remote re-spelled in lower case is still the same repository on
    // GitHub: its transcript and its `--repo` stay.
    git(
        &t,
        &hub,
        &[
            "remote",
            "set-url",
            "origin",
            "https://github.com/acme/widget.git",
        ],
    );
    let listed = json_in(&t, &hub, &["transcript", "list"]);
    assert_eq!(ids(&listed), [MAIN_ID], "{listed}");
    let by_url = json_in(
        &t,
        &hub,
        &[
            "transcript",
            "list",
            "--repo",
            "https://github.com/ACME/widget",
        ],
    );
    assert_eq!(ids(&by_url), [MAIN_ID], "{by_url}");
    let runs = ids(&json_in(
        &t,
        &hub,
        &["find", "--repo", "git@github.com:ACME/Widget"],
    ));
    assert_eq!(runs, [run_id]);
}

#[test]
fn handoff_outside_any_repository_takes_only_a_session_run_in_that_folder() {
    let t = sandbox();
    let home = t.path("home");
    let checkout = home.join("code/ledger");
    repo(&t, &checkout, "https://example.com/acct/ledger", "L");
    let log = claude_log(&t, MAIN_ID, &checkout, "reconcile the ledger");
    run_in(
        &t,
        &checkout,
        &["transcript", "import", log.to_str().unwrap()],
    )
    .ok();
    // From the home folder (which contains the checkout) nothing is
    // handed over: that session is the checkout's.
    let from_home = run_in(&t, &home, &["handoff", "--to", "codex"]);
    let said = format!("{}{}", from_home.stdout, from_home.stderr);
    assert!(!said.contains("reconcile the ledger"), "{said}");
    assert!(from_home.not_found().contains("claude-code"), "{said}");
    // A session run in the home folder itself is this folder's.
    let own = claude_log(&t, OTHER_ID, &home, "sort the inbox");
    run_in(&t, &home, &["transcript", "import", own.to_str().unwrap()]).ok();
    let here = run_in(&t, &home, &["handoff", "--to", "codex"])
        .ok()
        .to_string();
    assert!(
        here.contains("sort the inbox") && !here.contains("ledger"),
        "{here}"
    );
    // In the checkout its own session is still found.
    let there = run_in(&t, &checkout, &["handoff", "--to", "codex"])
        .ok()
        .to_string();
    assert!(there.contains("reconcile the ledger"), "{there}");
}

#[test]
fn a_hooks_log_with_another_cwd_is_recorded_as_the_projects_repository() {
    use std::io::Write as _;
    let t = sandbox();
    let proj = t.path("work/billing");
    repo(&t, &proj, "git@example.com:acct/billing.git", "B");
    run_in(&t, &proj, &["init"]).ok();
    // The log says the agent ran in a folder that is gone now.
    let log = claude_log(&t, MAIN_ID, &t.path("tmp/gone"), "split the invoices");
    let payload = serde_json::json!({
        "hook_event_name": "Stop",
        "session_id": MAIN_ID,
        "transcript_path": log,
        "cwd": proj,
    })
    .to_string();
    let mut hook = t
        .cmd(&["hook"])
        .current_dir(&proj)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    hook.stdin
        .take()
        .unwrap()
        .write_all(payload.as_bytes())
        .unwrap();
    hook.wait().unwrap();
    // The hook may leave the import to its worker.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let listed = loop {
        let listed = ids(&json_in(&t, &proj, &["transcript", "list"]));
        if !listed.is_empty() || std::time::Instant::now() > deadline {
            break listed;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    };
    assert_eq!(listed, [MAIN_ID]);
    let shown = json_in(&t, &proj, &["transcript", "show", MAIN_ID]);
    assert_eq!(
        shown["metadata"]["repository"]["origin"], "example.com/acct/billing",
        "{shown}"
    );
}
