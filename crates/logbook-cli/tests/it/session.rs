//! Work sessions (seed 002) through the real binary.

use std::collections::BTreeSet;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::harness::{TestProject, shared_text};

const SEED_ID: &str = "SES202501-ACME-AUDIT";

/// The seed's full session YAML example, verbatim.
fn seed_yaml() -> String {
    let text = shared_text("seeds/002_e122c2e894953c56.txt");
    let start = text
        .find("# {session_id}.yaml")
        .expect("seed example start");
    let end = text[start..]
        .find("Token Deserialization and Defaults")
        .expect("seed example end");
    text[start..start + end].to_string()
}

fn yaml(text: &str) -> Value {
    serde_saphyr::from_str(text).expect("valid YAML")
}

fn session_yaml(t: &TestProject, id: &str) -> Value {
    yaml(&t.read(&format!(".logbook/sessions/{id}.yaml")))
}

#[test]
fn start_creates_the_seed_layout_and_activates() {
    let mut t = TestProject::new();
    t.now = Some("2025-01-15T10:30:00Z".into());
    let s = t.json(&["start", "--client", "acme", "--project", "AUDIT"]);
    assert_eq!(s["session_id"], SEED_ID);
    assert_eq!(s["status"], "active");
    assert_eq!(s["indicator"], "active");
    assert_eq!(s["percentage"], 0.0);
    assert_eq!(s["created"], "2025-01-15T10:30:00.000Z");
    let file = session_yaml(&t, SEED_ID);
    let keys: Vec<_> = file.as_object().unwrap().keys().cloned().collect();
    assert_eq!(
        keys,
        [
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
            "notes"
        ]
    );
    assert_eq!(
        file["tokens"],
        serde_json::json!({"max": 150000, "initial": 0, "current": 0, "peak": 0, "saved": 0})
    );
    assert!(
        t.read(".logbook/sessions/active-session.yaml")
            .contains(SEED_ID)
    );
}

#[test]
fn defaults_and_taken_ids() {
    let mut t = TestProject::new();
    t.now = Some("2025-03-02T08:00:00Z".into());
    let a = t.json(&["start", "--project", "x1"]);
    let id = a["session_id"].as_str().unwrap();
    assert_eq!(id, "SES202503-INTERNAL-X1");
    let b = t.json(&["start", "--project", "x1", "--yes", "--prefix", "eng"]);
    assert_eq!(b["session_id"], "ENG202503-INTERNAL-X1");
    let c = t.json(&["start", "--project", "x1", "--yes", "--prefix", "ENG"]);
    assert_eq!(c["session_id"], "ENG202503-INTERNAL-X1-2");
    let d = t.json(&["start", "--project", "x1", "--yes", "--prefix", "ENG"]);
    assert_eq!(d["session_id"], "ENG202503-INTERNAL-X1-3");
    // Default project: the project folder's name, reduced to letters and digits.
    let e = t.json(&["start", "--yes"]);
    let folder: String = t
        .root()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .to_ascii_uppercase()
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect();
    assert_eq!(e["session_id"], format!("SES202503-INTERNAL-{folder}"));
}

#[test]
fn bad_ids_are_refused_with_what_is_allowed() {
    let t = TestProject::new();
    let err = t.run(&["start", "--prefix", "TOOLONG"]).err().to_string();
    assert!(err.contains("2 to 5 capital letters"), "{err}");
    let err = t.run(&["start", "--client", "ac-me"]).err().to_string();
    assert!(err.contains("letters and digits"), "{err}");
    let err = t.run(&["start", "--client", "../x"]).err().to_string();
    assert!(err.contains("letters and digits"), "{err}");
    let err = t.run(&["status", "../../etc/passwd"]).err().to_string();
    assert!(err.contains("SES202501-ACME-AUDIT"), "{err}");
    let err = t.run(&["start", "--max-tokens", "0"]).err().to_string();
    assert!(err.contains("max-tokens"), "{err}");
    assert!(
        !t.path(".logbook/sessions").exists()
            || t.json(&["list"])["sessions"] == serde_json::json!([])
    );
    // Wrong enum values are usage errors (exit 2).
    let r = t.run(&["agent", "done", "x", "--tokens", "1", "--status", "weird"]);
    assert_eq!(r.code, 2, "{r:?}");
}

#[test]
fn start_without_terminal_refuses_while_active_unless_yes() {
    let t = TestProject::new();
    t.json(&["start", "--client", "A", "--project", "ONE"]);
    let err = t
        .run(&["start", "--client", "B", "--project", "TWO"])
        .err()
        .to_string();
    assert!(err.contains("--yes"), "{err}");
    let s = t.json(&["start", "--client", "B", "--project", "TWO", "--yes"]);
    let new_id = s["session_id"].as_str().unwrap();
    let list = t.json(&["list"]);
    assert_eq!(list["active"], new_id);
    assert_eq!(list["archived"].as_array().unwrap().len(), 1);
    assert_eq!(list["archived"][0]["status"], "closed");
}

#[test]
fn seed_example_round_trips_without_loss() {
    let t = TestProject::new();
    let original = seed_yaml();
    t.write(&format!(".logbook/sessions/{SEED_ID}.yaml"), &original);
    let before = yaml(&original);
    let status = t.json(&["status", SEED_ID]);
    assert_eq!(status["tokens"]["current"], 45000);
    assert_eq!(status["percentage"], 30.0);
    assert_eq!(status["indicator"], "active");
    t.run(&["note", "round trip", "--session", SEED_ID]).ok();
    let after = session_yaml(&t, SEED_ID);
    for (key, value) in before.as_object().unwrap() {
        match key.as_str() {
            "last_updated" => assert_ne!(&after[key], value),
            "notes" => {
                let mut expected = value.as_array().unwrap().clone();
                expected.push("round trip".into());
                assert_eq!(after[key], Value::Array(expected));
            }
            _ => assert_eq!(&after[key], value, "key {key} changed"),
        }
    }
    let human = t.run(&["tokens", SEED_ID]).ok().to_string();
    assert!(human.contains("Used: 45,000 / 150,000 (30%)"), "{human}");
    assert!(
        human.contains("Total Consumed (if no isolation): 190,000"),
        "{human}"
    );
    assert!(
        human.contains("Tokens Saved: 145,000 (76% savings)"),
        "{human}"
    );
    let savings = t.run(&["savings", SEED_ID]).ok().to_string();
    assert!(
        savings.contains("Would exceed limit by: 40,000 tokens"),
        "{savings}"
    );
    assert!(
        savings.contains("Savings: 145,000 tokens (76%)"),
        "{savings}"
    );
    assert!(savings.contains("Within budget"), "{savings}");
}

#[test]
fn legacy_tokens_and_unknown_keys_survive() {
    let t = TestProject::new();
    let id = "ANA202412-OLD-TOOL";
    t.write(
        &format!(".logbook/sessions/{id}.yaml"),
        "session_id: ANA202412-OLD-TOOL\ncreated: 2024-12-01T09:00:00Z\nstatus: paused\n\
         tokens:\n  current: 1000\n  saved_by_isolation: 5000\n  custom_meter: 7\n\
         owner_team: platform\nreview:\n  by: [ana, bo]\n  depth: 3\n",
    );
    let s = t.json(&["status", id]);
    assert_eq!(s["tokens"]["max"], 150000);
    assert_eq!(s["tokens"]["saved"], 5000);
    assert_eq!(s["tokens"]["peak"], 1000);
    assert_eq!(s["indicator"], "paused");
    t.run(&["usage", "--add", "10", "--session", id]).ok();
    let file = session_yaml(&t, id);
    assert_eq!(file["tokens"]["saved"], 5000);
    assert_eq!(file["tokens"]["max"], 150000);
    assert_eq!(file["tokens"]["current"], 1010);
    assert_eq!(file["tokens"]["custom_meter"], 7);
    assert!(file["tokens"].get("saved_by_isolation").is_none());
    assert_eq!(file["owner_team"], "platform");
    assert_eq!(
        file["review"],
        serde_json::json!({"by": ["ana", "bo"], "depth": 3})
    );
    // A config budget replaces the default for files without max.
    t.write("logbook.yaml", "token_budget: 2000\n");
    t.write(
        ".logbook/sessions/ANA202412-OLD-TWO.yaml",
        "session_id: ANA202412-OLD-TWO\ntokens:\n  max_limit: null\n  current: 1700\n",
    );
    let s = t.json(&["status", "ANA202412-OLD-TWO"]);
    assert_eq!(s["tokens"]["max"], 2000);
    assert_eq!(s["indicator"], "warning");
}

#[test]
fn malformed_yaml_is_named_and_others_still_list() {
    let t = TestProject::new();
    t.json(&["start", "--client", "GOOD", "--project", "ONE"]);
    let bad = t.write(
        ".logbook/sessions/SES202501-BAD-FILE.yaml",
        "session_id: [unclosed\ntokens: {max: 1\n",
    );
    let err = t.run(&["status", "SES202501-BAD-FILE"]).err().to_string();
    assert!(err.contains(&bad.display().to_string()), "{err}");
    assert!(err.contains("not a valid work session"), "{err}");
    let r = t.run(&["--json", "list"]);
    let list = r.json();
    assert_eq!(list["sessions"].as_array().unwrap().len(), 1);
    assert_eq!(list["corrupt"].as_array().unwrap().len(), 1);
    assert!(r.stderr.contains("SES202501-BAD-FILE.yaml"), "{}", r.stderr);
    let human = t.run(&["list"]);
    assert!(human.ok().contains("-GOOD-ONE"));
}

#[test]
fn thresholds_and_peak() {
    let t = TestProject::new();
    t.json(&[
        "start",
        "--client",
        "T",
        "--project",
        "P",
        "--max-tokens",
        "1000",
    ]);
    assert_eq!(
        t.json(&["usage", "--current", "800"])["indicator"],
        "active"
    );
    assert_eq!(
        t.json(&["usage", "--current", "801"])["indicator"],
        "warning"
    );
    assert_eq!(
        t.json(&["usage", "--current", "951"])["indicator"],
        "critical"
    );
    let s = t.json(&["usage", "--current", "100"]);
    assert_eq!(s["tokens"]["current"], 100);
    assert_eq!(s["tokens"]["peak"], 951);
    let human = t.run(&["status"]).ok().to_string();
    assert!(human.contains("Progress Bar: [█░░░░░░░░░] 10%"), "{human}");
    let r = t.run(&["usage"]);
    assert_eq!(r.code, 2, "{r:?}");
}

#[test]
fn status_layout_milestones_artifacts_agents() {
    let mut t = TestProject::new();
    t.now = Some("2025-01-15T10:30:00Z".into());
    t.json(&["start", "--client", "ACME", "--project", "AUDIT"]);
    t.now = Some("2025-01-15T11:00:00Z".into());
    t.run(&["milestone", "add", "Requirements Complete"]).ok();
    t.run(&["milestone", "add", "Implementation Started"]).ok();
    t.run(&["milestone", "done", "Requirements Complete"]).ok();
    t.run(&["artifact", "add", "docs/prd.md", "--agent", "pm"])
        .ok();
    let spawned = t.json(&["agent", "spawn", "analyst"]);
    let agent = spawned["id"].as_str().unwrap().to_string();
    assert!(agent.starts_with("agent-"));
    t.json(&["agent", "spawn", "dev", "--id", "dev-1"]);
    t.run(&[
        "agent", "done", &agent, "--tokens", "32000", "--output", "out/a.md",
    ])
    .ok();
    t.run(&[
        "agent", "done", "dev-1", "--tokens", "85000", "--status", "failed",
    ])
    .ok();
    // Reporting again replaces the figure rather than adding twice.
    t.run(&["agent", "done", "dev-1", "--tokens", "80000"]).ok();
    t.run(&["usage", "--add", "45000"]).ok();
    t.now = Some("2025-01-15T13:00:00Z".into());
    t.run(&["artifact", "add", "docs/prd.md"]).ok();
    let human = t.run(&["status"]).ok().to_string();
    for line in [
        "Session: SES202501-ACME-AUDIT 🟢",
        "Duration: 2h 30m",
        "Tokens: 45,000/150,000 (30%)",
        "Progress Bar: [███░░░░░░░] 30%",
        "- [x] Requirements Complete",
        "- [ ] Implementation Started",
        "- docs/prd.md (modified 0s ago)",
        "Agents Spawned This Session: 2",
        "Token Savings from Isolation: 112,000",
    ] {
        assert!(human.contains(line), "missing {line:?} in\n{human}");
    }
    let s = t.json(&["status"]);
    assert_eq!(s["tokens"]["saved"], 112000);
    assert_eq!(s["agents_spawned"][0]["output_file"], "out/a.md");
    assert_eq!(s["agents_spawned"][1]["status"], "completed");
    let err = t
        .run(&["agent", "done", "nobody", "--tokens", "1"])
        .err()
        .to_string();
    assert!(err.contains("agent nobody not found"), "{err}");
}

#[test]
fn switch_pause_resume_close_and_list() {
    let mut t = TestProject::new();
    t.now = Some("2024-12-10T10:00:00Z".into());
    let a = t.json(&[
        "start",
        "--client",
        "TESLA",
        "--project",
        "API",
        "--prefix",
        "ENG",
    ])["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    t.run(&["milestone", "add", "Design"]).ok();
    t.run(&["milestone", "done", "Design"]).ok();
    t.run(&["note", "Client prefers OAuth2"]).ok();
    t.run(&["pause"]).ok();
    assert!(t.run(&["status"]).err().contains("no active work session"));
    let b = t.json(&["start", "--client", "ACME", "--project", "AUDIT"])["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    let switched = t.json(&["switch", &a]);
    assert_eq!(switched["status"], "active");
    assert_eq!(t.json(&["status", &b])["indicator"], "paused");
    let resumed = t.run(&["resume"]).ok().to_string();
    assert!(
        resumed.contains(&format!("Resuming Session: {a}")),
        "{resumed}"
    );
    assert!(resumed.contains("Milestones: 1"), "{resumed}");
    assert_eq!(t.json(&["resume", &b])["session_id"], b.as_str());
    assert_eq!(t.json(&["status", &a])["status"], "paused");

    t.now = Some("2024-12-28T10:00:00Z".into());
    let closed = t.json(&["close", &a]);
    assert_eq!(closed["status"], "closed");
    let summary = closed["context_summary"].as_str().unwrap();
    assert!(summary.contains("Completed: Design."), "{summary}");
    assert!(summary.contains("Client prefers OAuth2"), "{summary}");
    assert!(
        t.path(&format!(".logbook/sessions/archive/{a}.yaml"))
            .is_file()
    );
    assert!(!t.path(&format!(".logbook/sessions/{a}.yaml")).exists());
    // b is still the active one: closing a paused session leaves the pointer alone.
    assert_eq!(t.json(&["list"])["active"], b.as_str());
    let human = t.run(&["list"]).ok().to_string();
    assert!(human.contains(&format!("{b} 🟢 (18 days)")), "{human}");
    assert!(
        human.contains(&format!("{a} ✅ (closed 2024-12-28)")),
        "{human}"
    );
    let closed = t.json(&["close", "--summary", "Done; next: phase 2"]);
    assert_eq!(closed["context_summary"], "Done; next: phase 2");
    assert!(!t.path(".logbook/sessions/active-session.yaml").exists());
    assert_eq!(
        t.json(&["list", "--archived"])["archived"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(
        t.json(&["list", "--active"])["archived"],
        serde_json::json!([])
    );
    // Closed sessions are read-only and cannot be switched to.
    assert!(
        t.run(&["note", "late", "--session", &a])
            .err()
            .contains("closed")
    );
    assert!(t.run(&["switch", &a]).err().contains("closed"));
    assert_eq!(t.json(&["tokens", &a])["session_id"], a.as_str());
}

#[test]
fn config_errors_name_file_line_and_key() {
    let t = TestProject::new();
    t.write(
        "logbook.yaml",
        "user: me\nagent_outputs_folder: '{nowhere}/runs'\n",
    );
    let err = t.run(&["list"]).err().to_string();
    assert!(err.contains("logbook.yaml"), "{err}");
    assert!(err.contains("line 2"), "{err}");
    assert!(err.contains("agent_outputs_folder"), "{err}");
    assert!(err.contains("{nowhere}"), "{err}");
    t.write("logbook.yaml", "token_budget: lots\n");
    let err = t.run(&["list"]).err().to_string();
    assert!(
        err.contains("logbook.yaml") && err.contains("line 1"),
        "{err}"
    );
}

#[test]
fn init_root_discovery_and_env_root() {
    let t = TestProject::new();
    let out = t.json(&["init"]);
    assert!(out["config"].as_str().unwrap().ends_with("logbook.yaml"));
    assert!(t.run(&["init"]).err().contains("already exists"));
    // From a subfolder the project root is found upward.
    std::fs::create_dir_all(t.path("deep/er")).unwrap();
    let mut c = t.cmd(&["--json", "start", "--client", "SUB", "--project", "DIR"]);
    c.current_dir(t.path("deep/er"));
    assert_eq!(crate::harness::Run::from(c.output().unwrap()).code, 0);
    assert!(t.path(".logbook/sessions").read_dir().unwrap().count() >= 2);
    // LOGBOOK_ROOT points elsewhere.
    let other = TestProject::new();
    let mut c = t.cmd(&["--json", "list"]);
    c.env("LOGBOOK_ROOT", other.root());
    let listed = crate::harness::Run::from(c.output().unwrap()).json();
    assert_eq!(listed["sessions"], serde_json::json!([]));
    // Completions for every shell the interface names.
    for shell in ["bash", "zsh", "fish", "powershell"] {
        assert!(t.run(&["completions", shell]).ok().contains("logbook"));
    }
}

#[test]
fn concurrent_writers_lose_nothing() {
    let t = TestProject::new();
    let id = t.json(&["start", "--client", "RACE", "--project", "TEST"])["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    let root = t.root().to_path_buf();
    let workers: Vec<_> = (0..8)
        .map(|w| {
            let root = root.clone();
            std::thread::spawn(move || {
                let run = |args: &[&str]| {
                    let out = Command::new(crate::harness::bin())
                        .args(args)
                        .current_dir(&root)
                        .env("LOGBOOK_LOCK_TIMEOUT", "120")
                        .env_remove("LOGBOOK_ROOT")
                        .output()
                        .unwrap();
                    assert!(
                        out.status.success(),
                        "{}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                };
                for i in 0..100 {
                    run(&["usage", "--add", "1"]);
                    run(&["milestone", "add", &format!("w{w}-m{i}")]);
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    let file = session_yaml(&t, &id);
    assert_eq!(file["tokens"]["current"], 800);
    let names: BTreeSet<_> = file["milestones"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names.len(), 800);
}

/// A tiny deterministic generator, so kill timings vary without a crate.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self, bound: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % bound
    }
}

#[test]
fn killed_writers_never_leave_a_torn_file() {
    let t = TestProject::new();
    let id = t.json(&["start", "--client", "KILL", "--project", "TEST"])["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    // A large file makes each write long enough to be interrupted mid-way.
    let long = "x".repeat(2000);
    for i in 0..40 {
        t.run(&["note", &format!("{i} {long}")]).ok();
    }
    let mut rng = Lcg(0x5eed);
    let mut killed = 0;
    for round in 0..50 {
        let mut child = t
            .cmd(&["note", &format!("round {round} {long}")])
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_micros(rng.next(8000)));
        if child.try_wait().unwrap().is_none() {
            killed += 1;
        }
        let _ = child.kill(); // SIGKILL on Unix
        let _ = child.wait();
        let text = t.read(&format!(".logbook/sessions/{id}.yaml"));
        let v = yaml(&text);
        assert!(
            v["notes"].as_array().unwrap().len() >= 40,
            "round {round} lost notes"
        );
    }
    assert!(
        killed > 0,
        "no writer was interrupted; the test proved nothing"
    );
    // Leftover temp files are ignored by listings.
    let start = Instant::now();
    let list = t.json(&["list"]);
    assert_eq!(list["corrupt"], serde_json::json!([]));
    assert!(start.elapsed() < Duration::from_secs(30));
}

/// Runs `logbook ARGS` on a pseudo-terminal (util-linux `script`), feeding `input`.
fn on_terminal(t: &TestProject, args: &str, input: &str, no_color: bool) -> crate::harness::Run {
    use std::io::Write;
    let mut c = Command::new("script");
    c.args([
        "-qec",
        &format!("{} {args}", crate::harness::bin()),
        "/dev/null",
    ])
    .current_dir(t.root())
    .env_remove("LOGBOOK_ROOT")
    .env_remove("NO_COLOR")
    .stdin(std::process::Stdio::piped())
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::piped());
    if no_color {
        c.env("NO_COLOR", "1");
    }
    let mut child = c.spawn().expect("util-linux script");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap().into()
}

#[test]
fn terminal_start_asks_and_colours_only_without_no_color() {
    let t = TestProject::new();
    t.json(&["start", "--client", "A", "--project", "ONE"]);
    let no = on_terminal(&t, "start --client B --project TWO", "n\n", false);
    assert!(no.stdout.contains("Active session found: SES"), "{no:?}");
    assert!(no.stdout.contains("Close it first? [y/n]"), "{no:?}");
    assert!(no.stdout.contains("start cancelled"), "{no:?}");
    assert_ne!(no.code, 0);
    assert_eq!(t.json(&["list"])["archived"], serde_json::json!([]));
    let yes = on_terminal(&t, "start --client B --project TWO", "y\n", false);
    assert_eq!(yes.code, 0, "{yes:?}");
    assert!(
        yes.stdout.contains("\x1b[1m"),
        "expected colour on a terminal: {yes:?}"
    );
    assert_eq!(t.json(&["list"])["archived"].as_array().unwrap().len(), 1);
    let plain = on_terminal(&t, "status", "", true);
    assert_eq!(plain.code, 0, "{plain:?}");
    assert!(
        !plain.stdout.contains('\x1b'),
        "NO_COLOR must disable colour: {plain:?}"
    );
}

fn finding_kinds(report: &Value) -> Vec<String> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn doctor_finds_and_repairs_interrupted_closes_and_stale_pointers() {
    let t = TestProject::new();
    let id = t.json(&["start", "--client", "HALF", "--project", "CLOSED"])["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    t.json(&["workflow", "invoke", "analyst", "--prompt", "look"]);
    // A close killed after marking the file closed and before the move.
    let file = format!(".logbook/sessions/{id}.yaml");
    let text = t.read(&file).replace("status: active", "status: closed");
    t.write(&file, &text);
    // A temp file a killed writer left an hour ago, and a fresh one that may
    // belong to a write under way.
    let old_tmp = t.write(".logbook/sessions/.x.yaml.1.abc.tmp", "half");
    std::fs::File::options()
        .write(true)
        .open(&old_tmp)
        .unwrap()
        .set_modified(std::time::SystemTime::now() - Duration::from_secs(3600))
        .unwrap();
    let young_tmp = t.write(".logbook/sessions/.y.yaml.2.abc.tmp", "half");
    // Workflow state of another session that no longer parses.
    t.write(
        ".logbook/sessions/SES202501-BROKEN-STATE.state.json",
        "{\"version\": ",
    );

    let report = t.doctor(&[]);
    let kinds = finding_kinds(&report);
    for kind in [
        "stale-active-pointer",
        "unarchived-session",
        "temp-file",
        "corrupt-workflow-state",
    ] {
        assert!(
            kinds.contains(&kind.to_string()),
            "{kind} missing: {report}"
        );
    }
    assert_eq!(
        kinds.iter().filter(|k| *k == "temp-file").count(),
        2,
        "{report}"
    );
    // Nothing is changed without --fix.
    assert!(t.path(&file).is_file());

    let fixed = t.doctor(&["--fix"]);
    assert!(
        fixed
            .to_string()
            .contains("moved it and its workflow state"),
        "{fixed}"
    );
    assert!(fixed.to_string().contains("left alone"), "{fixed}");
    assert!(
        t.path(&format!(".logbook/sessions/archive/{id}.yaml"))
            .is_file()
    );
    assert!(
        t.path(&format!(".logbook/sessions/archive/{id}.state.json"))
            .is_file()
    );
    assert!(!t.path(".logbook/sessions/active-session.yaml").exists());
    assert!(!old_tmp.exists());
    assert!(young_tmp.exists(), "a young temp file may be a live write");
    let again = finding_kinds(&t.doctor(&[]));
    for kind in ["stale-active-pointer", "unarchived-session"] {
        assert!(
            !again.contains(&kind.to_string()),
            "{kind} still there: {again:?}"
        );
    }
    // The repaired archive reads back, workflow history included.
    assert_eq!(t.json(&["status", &id])["status"], "closed");
    let state = t.json(&["workflow", "show", "--session", &id]);
    assert_eq!(
        state["orchestratorWorkflow"]["agentHistory"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn sessions_written_by_other_tools_are_found_as_active() {
    let t = TestProject::new();
    t.write(&format!(".logbook/sessions/{SEED_ID}.yaml"), &seed_yaml());
    // No pointer file: the one live session whose status is active.
    assert_eq!(t.json(&["status"])["session_id"], SEED_ID);
    t.run(&["note", "found without a pointer"]).ok();
    // A pointer holding the bare id, or another obvious key.
    for pointer in [
        format!("{SEED_ID}\n"),
        format!("active_session: {SEED_ID}\n"),
    ] {
        t.write(".logbook/sessions/active-session.yaml", &pointer);
        assert_eq!(t.json(&["status"])["session_id"], SEED_ID, "{pointer}");
    }
    // Two sessions that both claim to be active and no pointer: none is guessed.
    std::fs::remove_file(t.path(".logbook/sessions/active-session.yaml")).unwrap();
    t.write(
        ".logbook/sessions/SES202501-ACME-OTHER.yaml",
        "session_id: SES202501-ACME-OTHER\nstatus: active\n",
    );
    assert!(t.run(&["status"]).err().contains("no active work session"));
    assert_eq!(
        t.json(&["status", "SES202501-ACME-OTHER"])["tokens"]["max"],
        150000
    );
}
