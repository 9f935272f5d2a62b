//! Work sessions (seed 002) through the real binary.

use std::collections::BTreeSet;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::harness::{TestProject, on_terminal, shared_text};

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

/// Seed 002's reader of the pointer: the file is there, it loads, and its
/// `session_id` names no session ("clear active-session.yaml").
#[track_caller]
fn assert_pointer_cleared(t: &TestProject) {
    let pointer = yaml(&t.read(".logbook/sessions/active-session.yaml"));
    assert_eq!(pointer["session_id"], Value::Null, "{pointer}");
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
        .not_found()
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
    assert!(
        t.run(&["status"])
            .not_found()
            .contains("no active work session")
    );
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
    assert!(summary.contains("Milestones done: Design"), "{summary}");
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
    assert_pointer_cleared(&t);
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
        .set_modified(logbook::clock::Clock::SYSTEM.system_time() - Duration::from_secs(3600))
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
    assert_pointer_cleared(&t);
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
    assert!(
        t.run(&["status"])
            .not_found()
            .contains("no active work session")
    );
    assert_eq!(
        t.json(&["status", "SES202501-ACME-OTHER"])["tokens"]["max"],
        150000
    );
}

#[test]
fn a_failed_start_yes_leaves_the_active_session_active() {
    let t = TestProject::new();
    let old = t.json(&["start", "--client", "ACME", "--project", "B", "--yes"]);
    let old_id = old["session_id"].as_str().unwrap().to_string();
    // Too long for a file name: refused before anything is closed.
    let long = "A".repeat(250);
    let e = t.run(&["start", "--client", &long, "--project", "B", "--yes"]);
    let err = e.err();
    assert!(err.contains("at most 180"), "{err}");
    assert!(err.contains("--client or --project"), "{err}");
    assert!(!err.contains("os error"), "{err}");
    // One byte over the limit, with the `-N` suffix a taken id gets.
    let c168 = "C".repeat(168);
    t.json(&["start", "--client", &c168, "--project", "B", "--yes"]);
    let e = t.run(&["start", "--client", &c168, "--project", "B", "--yes"]);
    assert!(e.err().contains("at most 180"), "{e:?}");
    let list = t.json(&["list"]);
    assert_eq!(list["archived"].as_array().unwrap().len(), 1, "{list}");
    assert_eq!(list["archived"][0]["session_id"], old_id.as_str());
    // An id of exactly 180 bytes works everywhere its name is used.
    let active = list["active"].as_str().unwrap().to_string();
    assert_eq!(active.len(), 180);
    t.json(&["workflow", "invoke", "qa", "--prompt", "p"]);
    t.json(&["note", "n"]);
    t.json(&["close"]);
    assert!(
        t.path(&format!(".logbook/sessions/archive/{active}.state.json"))
            .is_file()
    );
}

#[test]
fn a_start_whose_close_fails_leaves_the_old_session_active() {
    let t = TestProject::new();
    let old = t.json(&["start", "--client", "ACME", "--project", "B"]);
    let old_id = old["session_id"].as_str().unwrap().to_string();
    // The archive folder cannot be created: closing the old session fails.
    t.write(".logbook/sessions/archive", "not a folder");
    let e = t.run(&["start", "--client", "ACME", "--project", "C", "--yes"]);
    e.err();
    let status = t.json(&["status"]);
    assert_eq!(status["session_id"], old_id.as_str());
    assert_eq!(status["status"], "active");
    let names: Vec<String> = std::fs::read_dir(t.path(".logbook/sessions"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".yaml"))
        .collect();
    assert_eq!(
        names.len(),
        2,
        "only the old session and the pointer: {names:?}"
    );
    std::fs::remove_file(t.path(".logbook/sessions/archive")).unwrap();
    let new = t.json(&["start", "--client", "ACME", "--project", "C", "--yes"]);
    assert_eq!(
        t.json(&["list"])["archived"][0]["session_id"],
        old_id.as_str()
    );
    assert_eq!(t.json(&["status"])["session_id"], new["session_id"]);
}

#[test]
fn milestone_typos_and_duplicates_are_refused_with_the_near_name() {
    let t = TestProject::new();
    t.json(&["start", "--client", "ACME", "--project", "B"]);
    t.json(&["milestone", "add", "Design"]);
    let e = t.run(&["milestone", "done", "Desing"]);
    let err = e.not_found();
    assert!(err.contains("no open milestone \"Desing\""), "{err}");
    assert!(err.contains("did you mean \"Design\"?"), "{err}");
    for dup in ["Design", " design "] {
        let e = t.run(&["milestone", "add", dup]);
        let err = e.err();
        assert!(err.contains("already has a milestone \"Design\""), "{err}");
        assert!(err.contains("milestone done \"Design\""), "{err}");
    }
    let e = t.run(&["milestone", "done", "Deploy"]);
    let err = e.not_found();
    assert!(!err.contains("did you mean"), "{err}");
    assert!(err.contains("logbook milestone add \"Deploy\""), "{err}");
    let s = t.json(&["status"]);
    assert_eq!(s["milestones"].as_array().unwrap().len(), 1, "{s}");
    assert!(s["milestones"][0]["completed"].is_null());
    t.json(&["milestone", "done", "Design"]);
    let e = t.run(&["milestone", "done", "Design"]);
    assert!(e.err().contains("it is already done"), "{e:?}");
    assert_eq!(
        t.json(&["status"])["milestones"].as_array().unwrap().len(),
        1
    );
}

#[test]
fn a_closed_sessions_duration_stops_at_its_close() {
    let mut t = TestProject::new();
    t.now = Some("2025-01-15T10:00:00Z".into());
    let s = t.json(&["start", "--client", "ACME", "--project", "B"]);
    let id = s["session_id"].as_str().unwrap().to_string();
    t.now = Some("2025-01-15T10:05:00Z".into());
    assert!(t.run(&["close"]).ok().contains("Duration: 5m"));
    t.now = Some("2025-01-17T10:00:00Z".into());
    let status = t.run(&["status", &id]);
    assert!(status.ok().contains("Duration: 5m\n"), "{status:?}");
}

#[test]
fn red_means_blocked_or_failed() {
    let t = TestProject::new();
    let s = t.json(&["start", "--client", "ACME", "--project", "B"]);
    let id = s["session_id"].as_str().unwrap().to_string();
    t.json(&["workflow", "invoke", "qa", "--prompt", "Test it"]);
    assert_eq!(t.json(&["status"])["indicator"], "active");
    t.json(&[
        "workflow",
        "complete",
        "qa",
        "--summary",
        "Stuck",
        "--blocker",
        "no fixtures",
    ]);
    assert_eq!(t.json(&["status"])["indicator"], "blocked");
    assert!(t.run(&["status"]).ok().contains("🔴"));
    let list = t.json(&["list"]);
    assert_eq!(list["sessions"][0]["indicator"], "blocked", "{list}");
    assert!(t.run(&["list"]).ok().contains(&format!("{id} 🔴")));
    // Taken up again: no longer blocked; failing again is red again.
    t.json(&["workflow", "invoke", "qa", "--prompt", "Again"]);
    assert_eq!(t.json(&["status"])["indicator"], "active");
    t.json(&[
        "workflow",
        "complete",
        "qa",
        "--summary",
        "Broke",
        "--failed",
    ]);
    assert_eq!(t.json(&["usage", "--add", "10"])["indicator"], "blocked");
    // A status another tool wrote.
    let file = format!(".logbook/sessions/{id}.yaml");
    t.write(
        &file,
        &t.read(&file).replace("status: active", "status: blocked"),
    );
    std::fs::remove_file(t.path(&format!(".logbook/sessions/{id}.state.json"))).unwrap();
    assert_eq!(t.json(&["status", &id])["indicator"], "blocked");
}

#[test]
fn close_summarises_decisions_outcomes_and_next_steps() {
    let t = TestProject::new();
    let s = t.json(&["start", "--client", "ACME", "--project", "STORE"]);
    let id = s["session_id"].as_str().unwrap().to_string();
    t.json(&["milestone", "add", "Design"]);
    t.json(&["milestone", "add", "Build"]);
    t.json(&["milestone", "done", "Design"]);
    t.json(&["artifact", "add", "docs/prd.md", "--agent", "pm"]);
    t.json(&["note", "Client prefers OAuth2 over JWT"]);
    t.json(&[
        "workflow",
        "invoke",
        "architect",
        "--prompt",
        "Design the store",
    ]);
    t.json(&[
        "workflow",
        "complete",
        "architect",
        "--summary",
        "Designed the store",
        "--recommendation",
        "Write the crash tests",
        "--handoff-to",
        "implementer",
        "--reason",
        "Ready to build",
    ]);
    t.json(&[
        "workflow",
        "decide",
        "--type",
        "architectural",
        "--description",
        "Files are the truth",
        "--rationale",
        "Rebuildable",
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
        "Sound",
        "--condition",
        "Add fsync",
    ]);
    t.json(&["workflow", "invoke", "qa", "--prompt", "Test it"]);
    let out = t.run(&["close"]);
    let human = out.ok();
    let stored = t.json(&["status", &id]);
    let summary = stored["context_summary"].as_str().unwrap();
    for line in [
        "Outcomes:",
        "- Milestones done: Design",
        "- Artifacts: docs/prd.md (pm)",
        "- architect completed: Designed the store",
        "Key decisions:",
        "- [architectural] Files are the truth (architect; approved by critic): Rebuildable",
        "Verdicts:",
        "- critic conditional (0.80): Sound; conditions: Add fsync",
        "Notes and learnings:",
        "- Client prefers OAuth2 over JWT",
        "Next steps:",
        "- Milestone open: Build",
        "- Handoff architect → implementer pending: Ready to build",
        "- qa in progress: Test it",
        "- Recommended by architect: Write the crash tests",
    ] {
        assert!(summary.contains(line), "{line:?} missing from:\n{summary}");
        assert!(human.contains(line), "{line:?} missing from:\n{human}");
    }
}

#[test]
fn switch_restores_the_context_of_the_session_switched_to() {
    let t = TestProject::new();
    let one = t.json(&["start", "--client", "ACME", "--project", "ONE"]);
    let one = one["session_id"].as_str().unwrap().to_string();
    t.json(&["milestone", "add", "Ship it"]);
    t.json(&["note", "Use the staging database"]);
    t.json(&[
        "workflow",
        "handoff",
        "analyst",
        "architect",
        "--reason",
        "Design next",
    ]);
    t.json(&["pause"]);
    t.json(&["start", "--client", "ACME", "--project", "TWO"]);
    let out = t.run(&["switch", &one]);
    let human = out.ok();
    for line in [
        "Switched to",
        "Context:",
        "- Use the staging database",
        "- Milestone open: Ship it",
        "- Handoff analyst → architect pending: Design next",
    ] {
        assert!(human.contains(line), "{line:?} missing from:\n{human}");
    }
    let json = t.json(&["switch", &one]);
    assert!(
        json["context"]
            .as_str()
            .unwrap()
            .contains("Use the staging database"),
        "{json}"
    );
}

#[test]
fn dates_and_the_id_month_are_local() {
    let mut t = TestProject::new();
    t.now = Some("2025-01-31T23:30:00Z".into());
    t.envs.push(("TZ".into(), "Asia/Tokyo".into()));
    let s = t.json(&["start", "--client", "ACME", "--project", "B"]);
    assert_eq!(s["session_id"], "SES202502-ACME-B");
    assert_eq!(s["created"], "2025-01-31T23:30:00.000Z", "files keep UTC");
    let resume = t.run(&["resume"]);
    assert!(
        resume.ok().contains("Started: 2025-02-01 08:30:00 JST"),
        "{resume:?}"
    );
    t.json(&["close"]);
    let list = t.run(&["list"]);
    assert!(list.ok().contains("(closed 2025-02-01)"), "{list:?}");
}

#[test]
fn hints_name_the_flags_and_yaml_errors_name_no_rust_types() {
    let t = TestProject::new();
    let e = t.run(&["note", "x"]);
    assert!(e.not_found().contains("`logbook resume ID`"), "{e:?}");
    t.json(&["start", "--client", "ACME", "--project", "B"]);
    let e = t.run(&["usage"]);
    let err = e.usage();
    assert!(err.contains("--current") && err.contains("--add"), "{err}");
    let e = t.run(&["usage", "--current", "1", "--add", "2"]);
    e.usage();
    t.write(
        ".logbook/sessions/SES202501-ACME-Y.yaml",
        "session_id: SES202501-ACME-Y\nmilestones:\n  - name: ~\n",
    );
    t.write(
        ".logbook/sessions/SES202501-ACME-Z.yaml",
        "session_id: SES202501-ACME-Z\nstatus: active\nstatus: paused\n",
    );
    for id in ["SES202501-ACME-Y", "SES202501-ACME-Z"] {
        let e = t.run(&["status", id]);
        let err = e.err();
        assert!(err.contains(&format!("{id}.yaml")), "{err}");
        assert!(err.contains("line "), "{err}");
        for rust in ["Option<", "String>", "Options", "struct ", "u64"] {
            assert!(!err.contains(rust), "{rust:?} in {err}");
        }
    }
}

/// Issue 45: `close` and `pause` clear `active-session.yaml` as seed 002
/// says, keeping the file with no session in it, and every reader of the
/// pointer takes that as "no active session".
#[test]
fn close_and_pause_clear_the_pointer_and_keep_the_file() {
    let t = TestProject::new();
    let a = t.json(&[
        "start",
        "--client",
        "NORTHWIND",
        "--project",
        "LEDGER",
        "--yes",
    ])["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    t.json(&["pause"]);
    assert_pointer_cleared(&t);
    let no_active = |args: &[&str]| {
        let r = t.run(args);
        r.not_found().contains("no active work session")
    };
    assert!(no_active(&["status"]));
    assert_eq!(t.json(&["list"])["active"], Value::Null);
    // A session-bound write finds no session, as without a pointer.
    assert!(no_active(&["note", "nowhere"]));
    // `doctor` has nothing to say of a cleared pointer.
    let kinds = t.doctor(&[]).to_string();
    assert!(!kinds.contains("stale-active-pointer"), "{kinds}");

    // Resumed, it is named again; closed, cleared again.
    t.json(&["resume", &a]);
    assert_eq!(t.json(&["status"])["session_id"], a.as_str());
    t.json(&["close", "--summary", "Ledger reconciled"]);
    assert_pointer_cleared(&t);
    assert!(no_active(&["status"]));
    // A new start names its session over the cleared pointer.
    let b = t.json(&[
        "start",
        "--client",
        "NORTHWIND",
        "--project",
        "PAYROLL",
        "--yes",
    ]);
    let pointer = yaml(&t.read(".logbook/sessions/active-session.yaml"));
    assert_eq!(pointer["session_id"], b["session_id"]);

    // A key another tool kept in the pointer survives the clear; one naming
    // the session is cleared with it.
    let id = b["session_id"].as_str().unwrap();
    t.write(
        ".logbook/sessions/active-session.yaml",
        &format!("active_session: {id}\nowner: ops-bot\n"),
    );
    assert_eq!(t.json(&["status"])["session_id"], id);
    t.json(&["pause"]);
    let pointer = yaml(&t.read(".logbook/sessions/active-session.yaml"));
    assert_eq!(pointer["owner"], "ops-bot", "{pointer}");
    assert_eq!(pointer["active_session"], Value::Null, "{pointer}");
    assert!(no_active(&["status"]));
}
