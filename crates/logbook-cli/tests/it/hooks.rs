//! `logbook hook`, driven the way Claude Code and Codex drive it: one event
//! on stdin (the payloads in `tests/fixtures/hooks/`, written from the
//! agents' documentation and schemas), logs that grow between events, many
//! sessions at once, a rebuild holding the index, a full disk. Whatever
//! happens the hook exits 0 in time with nothing or one valid answer, and
//! nothing the agent wrote is lost.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::harness::TestProject;

const SESSION: &str = "aaaaaaaa-1111-4222-8333-444455556666";
const CODEX_SESSION: &str = "0199aaaa-bbbb-7ccc-8ddd-eeeeffff0042";

/// What the agents promise their users: a hook answers within 2 s.
const HOOK_DEADLINE: Duration = Duration::from_secs(2);

fn fixture(agent: &str, name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hooks")
        .join(agent)
        .join(format!("{name}.json"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn fixtures(agent: &str) -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hooks")
        .join(agent);
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter_map(|n| n.strip_suffix(".json").map(str::to_string))
        .collect();
    names.sort();
    names
}

/// An agent session: its log under a fake agent home beside the project.
struct Agent {
    agent: &'static str,
    session: String,
    log: PathBuf,
    cwd: PathBuf,
    lines: usize,
}

impl Agent {
    fn claude(t: &TestProject, session: &str) -> Agent {
        let log = t.path(&format!("home/.claude/projects/-proj/{session}.jsonl"));
        std::fs::create_dir_all(log.parent().unwrap()).unwrap();
        Agent {
            agent: "claude-code",
            session: session.into(),
            log,
            cwd: t.root().to_path_buf(),
            lines: 0,
        }
    }

    fn codex(t: &TestProject, session: &str) -> Agent {
        let log = t.path(&format!(
            "home/.codex/sessions/2026/11/26/rollout-2026-11-26T10-00-00-{session}.jsonl"
        ));
        std::fs::create_dir_all(log.parent().unwrap()).unwrap();
        let mut a = Agent {
            agent: "codex",
            session: session.into(),
            log,
            cwd: t.root().to_path_buf(),
            lines: 0,
        };
        let meta = serde_json::json!({"timestamp":"2026-11-26T10:00:00.000Z","type":"session_meta","payload":{"id":session,"timestamp":"2026-11-26T10:00:00.000Z","cwd":a.cwd,"originator":"codex_cli_rs","cli_version":"0.60.0"}});
        a.append(&[meta.to_string()]);
        a
    }

    fn append(&mut self, lines: &[String]) {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .unwrap();
        for l in lines {
            writeln!(f, "{l}").unwrap();
        }
        self.lines += lines.len();
    }

    /// One exchange: a user prompt and the answer, as the agent logs it.
    fn turn(&mut self, text: &str) {
        let n = self.lines;
        let ts = format!("2026-11-26T10:{:02}:{:02}.000Z", (n / 60) % 60, n % 60);
        let lines = if self.agent == "codex" {
            vec![
                serde_json::json!({"timestamp":ts,"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":text}]}}),
                serde_json::json!({"timestamp":ts,"type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":format!("done: {text}")}]}}),
            ]
        } else {
            let (u, a) = (
                format!("00000000-0000-4000-8000-{:012}", n),
                format!("00000000-0000-4000-8000-{:012}", n + 1),
            );
            vec![
                serde_json::json!({"type":"user","sessionId":self.session,"uuid":u,"timestamp":ts,"cwd":self.cwd,"message":{"role":"user","content":text}}),
                serde_json::json!({"type":"assistant","sessionId":self.session,"uuid":a,"parentUuid":u,"timestamp":ts,"cwd":self.cwd,"requestId":format!("req_{n}"),"message":{"id":format!("msg_{n}"),"role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":format!("done: {text}")}],"usage":{"input_tokens":10,"output_tokens":5}}}),
            ]
        };
        self.append(&lines.iter().map(Value::to_string).collect::<Vec<_>>());
    }

    /// The agent's payload for `event` (a fixture name), filled in.
    fn payload(&self, event: &str) -> String {
        let sub = self
            .log
            .with_extension("")
            .join("subagents/agent-a1b2c3d.jsonl");
        fixture(self.agent, event)
            .replace("$SESSION", &self.session)
            .replace("$TRANSCRIPT", &self.log.to_string_lossy())
            .replace("$AGENT_TRANSCRIPT", &sub.to_string_lossy())
            .replace("$CWD", &self.cwd.to_string_lossy())
    }
}

/// A finished hook: what the agent would read, and how long it took.
pub(crate) struct Hooked {
    code: i32,
    stdout: String,
    stderr: String,
    took: Duration,
}

impl Hooked {
    /// The answer, checked to be nothing or exactly one JSON object.
    #[track_caller]
    pub(crate) fn answer(&self) -> Option<Value> {
        assert_eq!(
            self.code, 0,
            "a hook always exits 0\nstderr: {}",
            self.stderr
        );
        assert!(
            self.took < HOOK_DEADLINE,
            "a hook answers within {HOOK_DEADLINE:?}; this one took {:?}",
            self.took
        );
        if self.stdout.trim().is_empty() {
            return None;
        }
        let v: Value = serde_json::from_str(self.stdout.trim())
            .unwrap_or_else(|e| panic!("not one JSON value ({e}): {}", self.stdout));
        assert!(v.is_object(), "{v}");
        Some(v)
    }
}

fn hook_with(t: &TestProject, cwd: &Path, payload: &str, envs: &[(&str, &str)]) -> Hooked {
    let mut c = t.cmd(&["hook"]);
    c.current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in envs {
        c.env(k, v);
    }
    let start = Instant::now();
    let mut child = c.spawn().expect("spawn logbook hook");
    // A hook stops reading past its limit: the rest meets a closed pipe.
    let _ = child.stdin.take().unwrap().write_all(payload.as_bytes());
    let out = child.wait_with_output().unwrap();
    Hooked {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        took: start.elapsed(),
    }
}

/// Runs `logbook hook` in the project with `payload` on stdin.
pub(crate) fn hook(t: &TestProject, payload: &str) -> Hooked {
    hook_with(t, t.root(), payload, &[])
}

fn started(t: &TestProject) {
    t.run(&["init"]).ok();
    t.run(&["start", "--client", "ACME", "--project", "HOOKS", "--yes"])
        .ok();
    t.run(&["milestone", "add", "ship the hooks"]).ok();
}

fn transcript(t: &TestProject, id: &str) -> Value {
    t.json(&["transcript", "show", id])
}

/// The session's stored messages equal those of one import of the whole
/// `log` into a fresh project.
fn assert_same_as_one_import(t: &TestProject, log: &Path) {
    let fresh = TestProject::new();
    fresh.run(&["init"]).ok();
    fresh
        .run(&["transcript", "import", &log.to_string_lossy()])
        .ok();
    assert_eq!(
        transcript(t, SESSION)["messages"],
        transcript(&fresh, SESSION)["messages"]
    );
}

fn messages(t: &TestProject, id: &str) -> usize {
    transcript(t, id)["messages"].as_array().unwrap().len()
}

/// The mode bits of the file or folder at `path`.
fn mode_of(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// Every file below `dir`, at any depth.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![];
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(files_under(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// Waits (bounded) for `check` to hold: what a detached worker does
/// happens after the hook returned.
#[track_caller]
fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let start = Instant::now();
    while !check() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{what}: not done within 60 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The jobs waiting in the hook queue under `root`'s state folder.
fn queued_jobs(root: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(root.join(".logbook/hooks/queue"))
        .map(|d| {
            d.map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|x| x == "json"))
                .collect()
        })
        .unwrap_or_default()
}

/// Waits until the detached worker a Stop started has done every queued
/// job of the project at `root`: a Stop only queues its import.
#[track_caller]
fn drained_at(root: &Path) {
    eventually("the worker drained the queue", || {
        queued_jobs(root).is_empty()
    });
}

#[track_caller]
fn drained(t: &TestProject) {
    drained_at(t.root());
}

fn codex_output_schema(event: &str) -> jsonschema::Validator {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/codex-hook-schemas")
        .join(format!("{event}.command.output.schema.json"));
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    jsonschema::validator_for(&schema).unwrap()
}

#[test]
fn every_event_of_both_agents_exits_0_with_nothing_or_the_agents_own_shape() {
    let t = TestProject::new();
    started(&t);
    let mut claude = Agent::claude(&t, SESSION);
    claude.turn("add the hook command");
    let mut codex = Agent::codex(&t, CODEX_SESSION);
    codex.turn("review the hook command");
    let session_start = codex_output_schema("session-start");
    // Codex's first event may come before its log exists: the agent is
    // known from the events that follow.
    hook(&t, &codex.payload("session-start-no-log")).answer();
    for (agent, a) in [("claude-code", &claude), ("codex", &codex)] {
        for event in fixtures(agent) {
            let answer = hook(&t, &a.payload(&event)).answer();
            let resuming = event.ends_with("resume") || event.ends_with("compact");
            if !(event.starts_with("session-start") && resuming) {
                assert_eq!(answer, None, "{agent} {event} answers nothing");
                continue;
            }
            let answer = answer.unwrap_or_else(|| panic!("{agent} {event}: no context"));
            let out = &answer["hookSpecificOutput"];
            assert_eq!(out["hookEventName"], "SessionStart", "{answer}");
            let context = out["additionalContext"].as_str().unwrap();
            assert!(context.contains("SES"), "{context}");
            assert!(context.contains("ship the hooks"), "{context}");
            if agent == "codex" {
                let errors: Vec<String> = session_start
                    .iter_errors(&answer)
                    .map(|e| e.to_string())
                    .collect();
                assert!(errors.is_empty(), "{agent} {event}: {errors:?}");
            }
        }
    }
    // Both sessions were imported and linked to the work session.
    assert!(messages(&t, SESSION) >= 2);
    assert!(messages(&t, CODEX_SESSION) >= 2);
    let status = t.json(&["status"]);
    let linked: Vec<&str> = status["agent_sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["session_id"].as_str().unwrap())
        .collect();
    assert_eq!(linked, [CODEX_SESSION, SESSION]);
    assert_eq!(status["agent_sessions"][0]["agent"], "codex");
    assert_eq!(status["agent_sessions"][1]["agent"], "claude-code");
    // Nothing left over.
    assert_eq!(t.doctor(&[])["findings"], serde_json::json!([]));
}

#[test]
fn codex_answers_validate_against_codex_output_schemas() {
    let t = TestProject::new();
    started(&t);
    let mut codex = Agent::codex(&t, CODEX_SESSION);
    codex.turn("one");
    for (fixture, schema) in [
        ("session-start-compact", "session-start"),
        ("pre-compact", "pre-compact"),
        ("post-compact", "post-compact"),
        ("stop", "stop"),
        ("subagent-stop", "subagent-stop"),
    ] {
        let validator = codex_output_schema(schema);
        let answer = hook(&t, &codex.payload(fixture)).answer();
        // No output is valid for every event; an answer must match.
        if let Some(answer) = answer {
            assert!(validator.is_valid(&answer), "{fixture}: {answer}");
        }
    }
}

#[test]
fn the_context_is_bounded_by_hook_context_bytes() {
    let t = TestProject::new();
    started(&t);
    std::fs::write(
        t.path("logbook.yaml"),
        std::fs::read_to_string(t.path("logbook.yaml"))
            .unwrap()
            .replace("hook_context_bytes: 8192", "hook_context_bytes: 2048"),
    )
    .unwrap();
    for i in 0..12 {
        t.run(&[
            "milestone",
            "add",
            &format!("milestone {i} {}", "x".repeat(900)),
        ])
        .ok();
    }
    let claude = Agent::claude(&t, SESSION);
    let answer = hook(&t, &claude.payload("session-start-compact"))
        .answer()
        .unwrap();
    let context = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(context.len() <= 2048, "{} bytes", context.len());
    assert!(context.contains("[cut:"), "says it was cut: {context}");
}

#[test]
fn each_stop_imports_what_the_log_gained_and_precompact_records_the_compaction() {
    let t = TestProject::new();
    started(&t);
    let mut claude = Agent::claude(&t, SESSION);
    hook(&t, &claude.payload("session-start-startup")).answer();
    for i in 1..=3 {
        claude.turn(&format!("step {i}"));
        hook(&t, &claude.payload("stop")).answer();
        drained(&t);
        assert_eq!(messages(&t, SESSION), 2 * i, "after stop {i}");
    }
    hook(&t, &claude.payload("pre-compact-auto")).answer();
    let ws = &t.json(&["status"])["agent_sessions"][0];
    assert_eq!(ws["compactions"].as_array().unwrap().len(), 1, "{ws}");
    assert_eq!(ws["compactions"][0]["trigger"], "auto");
    // A transcript holds whatever the agent read: its owner's only.
    let stored = files_under(&t.path(".logbook/transcripts"));
    assert!(!stored.is_empty());
    for f in stored {
        assert_eq!(mode_of(&f), 0o600, "{}", f.display());
        assert_eq!(mode_of(f.parent().unwrap()), 0o700, "{}", f.display());
    }
    // The stored copy equals an import of the same bytes made at once.
    assert_same_as_one_import(&t, &claude.log);
}

#[test]
fn a_subagent_is_imported_and_linked_to_its_parent() {
    let t = TestProject::new();
    started(&t);
    let mut claude = Agent::claude(&t, SESSION);
    claude.turn("spawn an explorer");
    let sub_log = claude
        .log
        .with_extension("")
        .join("subagents/agent-a1b2c3d.jsonl");
    std::fs::create_dir_all(sub_log.parent().unwrap()).unwrap();
    let line = serde_json::json!({"type":"user","sessionId":SESSION,"agentId":"a1b2c3d","isSidechain":true,"uuid":"10000000-0000-4000-8000-000000000001","timestamp":"2026-11-26T10:00:30.000Z","cwd":t.root(),"message":{"role":"user","content":"find the call sites"}});
    std::fs::write(&sub_log, format!("{line}\n")).unwrap();
    hook(&t, &claude.payload("subagent-stop")).answer();
    drained(&t);
    let subs = t.json(&["transcript", "list", "--subagents"]);
    let sub = subs
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["parentSessionId"] == SESSION)
        .unwrap_or_else(|| panic!("no subagent of {SESSION}: {subs}"));
    assert_eq!(sub["kind"], "subagent");
}

#[test]
fn outside_any_project_records_go_to_the_per_user_home() {
    let t = TestProject::new();
    let repo = t.path("elsewhere/repo");
    std::fs::create_dir_all(&repo).unwrap();
    let home = t.path("logbook-home");
    let mut claude = Agent::claude(&t, SESSION);
    claude.cwd = repo.clone();
    claude.turn("work outside a project");
    let env = [("LOGBOOK_HOME", home.to_str().unwrap())];
    hook_with(&t, &repo, &claude.payload("stop"), &env).answer();
    drained_at(&home);
    assert!(
        !repo.join(".logbook").exists() && !t.path(".logbook").exists(),
        "a folder that never asked for Logbook gets no files"
    );
    let list = t.json(&[
        "--root",
        home.to_str().unwrap(),
        "transcript",
        "list",
        "--all",
    ]);
    assert_eq!(list[0]["id"], SESSION, "{list}");
}

#[test]
fn bad_input_exits_0_silently_and_doctor_reports_it() {
    let t = TestProject::new();
    started(&t);
    for payload in [
        "",
        "not json",
        "[1,2]",
        r#"{"session_id":"x"}"#,
        r#"{"hook_event_name":"Stop","cwd":42}"#,
    ] {
        let out = hook(&t, payload);
        assert_eq!(out.answer(), None, "{payload:?}");
    }
    // A huge stdin is refused without being read whole.
    let big = format!(
        r#"{{"hook_event_name":"Stop","x":"{}"}}"#,
        "a".repeat(2 << 20)
    );
    assert_eq!(hook(&t, &big).answer(), None);
    let report = t.doctor(&[]);
    let finding = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "hook-failed")
        .unwrap_or_else(|| panic!("{report}"));
    assert!(
        finding["message"]
            .as_str()
            .unwrap()
            .contains("6 hook failure"),
        "{finding}"
    );
    t.run(&["doctor", "--fix"]).ok();
    assert_eq!(t.doctor(&[])["findings"], serde_json::json!([]));
}

#[test]
fn four_parallel_sessions_lose_nothing_and_duplicate_nothing() {
    let t = TestProject::new();
    started(&t);
    let sessions: Vec<String> = (0..4)
        .map(|i| format!("bbbbbbbb-0000-4000-8000-00000000000{i}"))
        .collect();
    std::thread::scope(|s| {
        for id in &sessions {
            let t = &t;
            s.spawn(move || {
                let mut a = Agent::claude(t, id);
                hook(t, &a.payload("session-start-startup")).answer();
                for i in 0..5 {
                    a.turn(&format!("{id} turn {i}"));
                    hook(t, &a.payload("stop")).answer();
                }
                hook(t, &a.payload("pre-compact-auto")).answer();
                hook(t, &a.payload("session-end")).answer();
            });
        }
    });
    drained(&t);
    for id in &sessions {
        assert_eq!(messages(&t, id), 10, "{id}");
    }
    let status = t.json(&["status"]);
    let mut linked: Vec<String> = status["agent_sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            assert_eq!(a["compactions"].as_array().unwrap().len(), 1, "{a}");
            a["session_id"].as_str().unwrap().to_string()
        })
        .collect();
    linked.sort();
    assert_eq!(linked, sessions);
    assert_eq!(t.json(&["transcript", "list"]).as_array().unwrap().len(), 4);
    assert_eq!(t.doctor(&[])["findings"], serde_json::json!([]));
}

/// Holds lock `name` of the project as another process would.
fn hold_lock(t: &TestProject, name: &str) -> std::fs::File {
    std::fs::create_dir_all(t.path(".logbook/locks")).unwrap();
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(t.path(&format!(".logbook/locks/{name}.lock")))
        .unwrap();
    f.lock().unwrap();
    f
}

#[test]
fn during_an_index_rebuild_a_hook_answers_in_time_and_a_worker_finishes_later() {
    let t = TestProject::new();
    started(&t);
    let mut claude = Agent::claude(&t, SESSION);
    claude.turn("during a rebuild");
    // What `index rebuild` holds while it builds the new index.
    let rebuild = hold_lock(&t, "index-rebuild");
    std::fs::remove_file(t.path(".logbook/index.db")).unwrap();
    let answer = hook(&t, &claude.payload("session-start-compact")).answer();
    assert!(answer.is_some(), "the context comes from the files");
    hook(&t, &claude.payload("stop")).answer();
    drop(rebuild);
    eventually("the queued import", || {
        t.run(&["transcript", "show", SESSION]).code == 0
    });
    assert_eq!(messages(&t, SESSION), 2);
    eventually("the queue drained", || {
        t.doctor(&[])["findings"] == serde_json::json!([])
    });
}

#[test]
fn a_first_import_too_large_for_the_hook_is_finished_by_a_detached_worker() {
    let t = TestProject::new();
    started(&t);
    let mut claude = Agent::claude(&t, SESSION);
    let big = "y".repeat(64 * 1024);
    for i in 0..200 {
        claude.turn(&format!("{i} {big}"));
    }
    assert!(std::fs::metadata(&claude.log).unwrap().len() > 20 << 20);
    hook(&t, &claude.payload("session-start-resume")).answer();
    eventually("the worker's import", || {
        t.run(&["transcript", "show", SESSION]).code == 0
    });
    assert_eq!(messages(&t, SESSION), 400);
    eventually("the queue drained", || {
        t.doctor(&[])["findings"] == serde_json::json!([])
    });
}

#[test]
fn work_a_dead_worker_left_is_reported_and_done_by_a_later_hook_or_doctor() {
    let t = TestProject::new();
    started(&t);
    let mut claude = Agent::claude(&t, SESSION);
    claude.turn("first");
    // The work session is locked for the hook's whole time: its job stays
    // queued, and the worker it starts waits on the lock until killed.
    let session_lock = std::fs::read_dir(t.path(".logbook/locks"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .find(|n| n.starts_with("session-SES"))
        .unwrap();
    let held = hold_lock(&t, session_lock.trim_end_matches(".lock"));
    hook_with(
        &t,
        t.root(),
        &claude.payload("pre-compact-manual"),
        &[("LOGBOOK_LOCK_TIMEOUT", "600")],
    )
    .answer();
    let root = t.root().to_string_lossy().into_owned();
    eventually("the worker started", || {
        Command::new("pgrep")
            .args(["-f", &format!("hook --drain --root {root}")])
            .status()
            .is_ok_and(|s| s.success())
    });
    Command::new("pkill")
        .args(["-9", "-f", &format!("hook --drain --root {root}")])
        .status()
        .unwrap();
    drop(held);
    let report = t.doctor(&[]);
    let job = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "hook-queued")
        .unwrap_or_else(|| panic!("{report}"));
    // Some time later, the next hook finds the job no one is doing.
    let path = PathBuf::from(job["path"].as_str().unwrap());
    // The queued event is the agent's: its owner's only.
    assert_eq!(mode_of(&path), 0o600);
    assert_eq!(mode_of(path.parent().unwrap()), 0o700);
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(logbook::clock::Clock::SYSTEM.system_time() - Duration::from_secs(60))
        .unwrap();
    hook(&t, &claude.payload("stop")).answer();
    eventually("the later hook's worker", || !path.exists());
    drained(&t);
    assert_eq!(t.doctor(&[])["findings"], serde_json::json!([]));
    let ws = &t.json(&["status"])["agent_sessions"][0];
    assert_eq!(ws["compactions"].as_array().unwrap().len(), 1, "{ws}");
    assert_eq!(ws["compactions"][0]["trigger"], "manual");
    assert_eq!(messages(&t, SESSION), 2);
}

/// Whether a worker of the project at `root` is running.
fn workers_of(root: &Path) -> bool {
    Command::new("pgrep")
        .args(["-f", &format!("hook --drain --root {}", root.display())])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn a_stop_only_queues_and_the_next_stop_finishes_what_a_killed_worker_left() {
    let t = TestProject::new();
    started(&t);
    let mut claude = Agent::claude(&t, SESSION);
    hook(&t, &claude.payload("session-start-startup")).answer();
    claude.turn("first");
    // The transcript's lock held: the Stop's worker waits on it until
    // killed, its job still queued.
    let held = hold_lock(&t, "transcript-55556666");
    hook_with(
        &t,
        t.root(),
        &claude.payload("stop"),
        &[("LOGBOOK_LOCK_TIMEOUT", "600")],
    )
    .answer();
    // The hook answered with its job queued and nothing imported.
    let job = queued_jobs(t.root());
    assert_eq!(job.len(), 1, "{job:?}");
    assert!(t.run(&["transcript", "show", SESSION]).code != 0);
    eventually("the worker started", || workers_of(t.root()));
    let root = t.root().to_string_lossy().into_owned();
    Command::new("pkill")
        .args(["-9", "-f", &format!("hook --drain --root {root}")])
        .status()
        .unwrap();
    eventually("the worker died", || !workers_of(t.root()));
    drop(held);
    assert_eq!(queued_jobs(t.root()), job, "the killed worker's job stays");
    // The next turn's Stop: its worker does the old job and its own.
    claude.turn("second");
    hook(&t, &claude.payload("stop")).answer();
    drained(&t);
    assert_eq!(messages(&t, SESSION), 4);
    // The same messages as one import of the whole log.
    assert_same_as_one_import(&t, &claude.log);
    assert_eq!(t.doctor(&[])["findings"], serde_json::json!([]));
}

/// A small filesystem that fills up, where the test may mount one; else
/// Logbook's own fault injection makes every write fail with ENOSPC.
fn full_disk(t: &TestProject) -> Option<PathBuf> {
    let mnt = t.path("small-disk");
    std::fs::create_dir_all(&mnt).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=8m", "tmpfs"])
        .arg(&mnt)
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    mounted.then_some(mnt)
}

#[test]
fn on_a_full_disk_a_hook_still_exits_0_in_time_and_the_next_one_catches_up() {
    let t = TestProject::new();
    started(&t);
    let mut claude = Agent::claude(&t, SESSION);
    claude.turn("before the disk filled");
    let mounted = full_disk(&t);
    let (project, envs): (TestProject, Vec<(&str, &str)>) = match &mounted {
        Some(mnt) => {
            // A project on the small disk, filled to the last byte.
            let p = TestProject {
                dir: tempfile::tempdir_in(mnt).unwrap(),
                now: None,
                envs: vec![],
            };
            started(&p);
            let mut filler = std::fs::File::create(mnt.join("filler")).unwrap();
            while filler.write_all(&[0; 4096]).is_ok() {}
            let _ = filler.sync_all();
            (p, vec![])
        }
        None => {
            let p = TestProject::new();
            started(&p);
            (p, vec![("LOGBOOK_FAIL_WRITES", "enospc")])
        }
    };
    claude.cwd = project.root().to_path_buf();
    for event in ["session-start-compact", "stop", "pre-compact-auto"] {
        let out = hook_with(&project, project.root(), &claude.payload(event), &envs);
        out.answer();
        if event == "stop" {
            // The failure is said where the agent does not read it: the
            // failure log, or stderr when even that cannot be written.
            let logged = std::fs::read_to_string(project.path(".logbook/hooks/failures.log"))
                .unwrap_or_default();
            assert!(
                out.stderr.contains("No space left") || logged.contains("No space left"),
                "stderr: {}\nlog: {logged}",
                out.stderr
            );
        }
    }
    // Space again: the next Stop imports everything the agent wrote.
    if let Some(mnt) = &mounted {
        std::fs::remove_file(mnt.join("filler")).unwrap();
    }
    claude.turn("after");
    hook(&project, &claude.payload("stop")).answer();
    eventually("the catch-up import", || {
        project.run(&["transcript", "show", SESSION]).code == 0
    });
    assert_eq!(messages(&project, SESSION), 4);
    drop(project);
    if let Some(mnt) = mounted {
        let _ = Command::new("umount").arg(&mnt).status();
    }
}

#[test]
fn in_the_per_user_home_an_agent_is_linked_only_to_its_own_repositorys_session() {
    use crate::repo_identity::{json_in, repo, run_in, sandbox};
    let mut t = sandbox();
    let home = t.path("logbook-home");
    t.envs
        .push(("LOGBOOK_HOME".into(), home.to_string_lossy().into_owned()));
    let (a, b) = (t.path("src/a"), t.path("src/b"));
    repo(&t, &a, "git@example.com:org/a.git", "a.txt");
    repo(&t, &b, "https://example.com/org/b", "b.txt");
    let root = home.to_string_lossy().into_owned();
    run_in(
        &t,
        &a,
        &[
            "--root",
            &root,
            "start",
            "--client",
            "ACME",
            "--project",
            "A",
            "--yes",
        ],
    )
    .ok();
    let linked = |t: &TestProject| -> Vec<String> {
        json_in(t, &a, &["--root", &root, "status"])["agent_sessions"]
            .as_array()
            .map(|l| {
                l.iter()
                    .map(|s| s["session_id"].as_str().unwrap().to_string())
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut in_b = Agent::claude(&t, SESSION);
    in_b.cwd = b.clone();
    in_b.turn("work in b");
    hook_with(&t, &b, &in_b.payload("session-start-startup"), &[]).answer();
    assert_eq!(linked(&t), Vec::<String>::new(), "b's agent is not a's");
    let mut in_a = Agent::claude(&t, "cccccccc-1111-4222-8333-444455556666");
    in_a.cwd = a.clone();
    in_a.turn("work in a");
    hook_with(&t, &a, &in_a.payload("session-start-startup"), &[]).answer();
    assert_eq!(linked(&t), ["cccccccc-1111-4222-8333-444455556666"]);
    // Both transcripts are in the home, each found from its own clone.
    let from_b = json_in(&t, &b, &["transcript", "list"]);
    assert_eq!(from_b.as_array().unwrap().len(), 1, "{from_b}");
    assert_eq!(from_b[0]["id"], SESSION);
}

#[test]
fn an_agent_that_never_closes_stdin_does_not_hold_the_hook() {
    let t = TestProject::new();
    started(&t);
    let start = Instant::now();
    let mut child = t
        .cmd(&["hook"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(br#"{"hook_event_name":"Stop""#).unwrap();
    // stdin stays open while the hook runs.
    let out = child.wait_with_output().unwrap();
    drop(stdin);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    assert!(start.elapsed() < HOOK_DEADLINE, "{:?}", start.elapsed());
}

#[test]
fn a_complete_event_on_an_open_stdin_is_answered_from_that_event() {
    let t = TestProject::new();
    started(&t);
    let claude = Agent::claude(&t, SESSION);
    let mut child = t
        .cmd(&["hook"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // A byte-order mark, the whole event, then more the agent never ends.
    stdin.write_all(b"\xef\xbb\xbf").unwrap();
    stdin
        .write_all(claude.payload("session-start-compact").as_bytes())
        .unwrap();
    stdin.write_all(b"\n{\"hook_event_name\":").unwrap();
    let out = child.wait_with_output().unwrap();
    drop(stdin);
    assert_eq!(out.status.code(), Some(0));
    let answer: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    let context = answer["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap_or_else(|| panic!("{answer}"));
    assert!(context.contains("ship the hooks"), "{context}");
}

#[test]
fn an_import_that_fails_reaches_the_failure_log_and_doctor_fix_does_it_again() {
    let t = TestProject::new();
    started(&t);
    let mut claude = Agent::claude(&t, SESSION);
    claude.turn("kept despite the failure");
    // A regular file where the transcripts folder goes: every write fails.
    let transcripts = t.path(".logbook/transcripts");
    let _ = std::fs::remove_dir_all(&transcripts);
    std::fs::write(&transcripts, "not a folder").unwrap();
    assert_eq!(hook(&t, &claude.payload("session-end")).answer(), None);
    let log = t.path(".logbook/hooks/failures.log");
    eventually("the failure logged", || {
        std::fs::read_to_string(&log).is_ok_and(|l| l.contains("Not a directory"))
    });
    // It names the agent's files: its owner's only.
    assert_eq!(mode_of(&log), 0o600);
    // Doctor names the file in the folder's place first, since every other
    // check would stop at it.
    let report = t.doctor(&[]);
    assert_eq!(report["findings"][0]["kind"], "not-a-folder", "{report}");
    assert_eq!(report["findings"][0]["path"], transcripts.to_str().unwrap());
    std::fs::rename(&transcripts, t.path("transcripts.aside")).unwrap();
    // The worker the hook started has given up by now, or does so soon.
    let root = t.root().to_string_lossy().into_owned();
    eventually("the worker ended", || {
        !Command::new("pgrep")
            .args(["-f", &format!("hook --drain --root {root}")])
            .status()
            .is_ok_and(|s| s.success())
    });
    let report = t.doctor(&[]);
    let kinds: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap())
        .collect();
    assert!(kinds.contains(&"hook-failed"), "{report}");
    t.run(&["doctor", "--fix"]).ok();
    assert_eq!(messages(&t, SESSION), 2);
    assert_eq!(t.doctor(&[])["findings"], serde_json::json!([]));
}

/// The hook-job lock files in the project's locks folder.
fn job_locks(t: &TestProject) -> Vec<String> {
    std::fs::read_dir(t.path(".logbook/locks"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("hook-job-"))
        .collect()
}

#[test]
fn finished_jobs_leave_no_lock_files_and_doctor_fix_clears_what_killed_ones_left() {
    let t = TestProject::new();
    started(&t);
    let mut claude = Agent::claude(&t, SESSION);
    for i in 0..20 {
        claude.turn(&format!("turn {i}"));
        hook(&t, &claude.payload("stop")).answer();
    }
    eventually("the queue drained", || {
        t.path(".logbook/hooks/queue")
            .read_dir()
            .unwrap()
            .next()
            .is_none()
    });
    // A worker removes its job, then its lock: the last one may still be
    // between the two.
    eventually("the last worker let its job's lock go", || {
        job_locks(&t).is_empty()
    });
    assert_eq!(job_locks(&t), Vec::<String>::new());
    assert_eq!(messages(&t, SESSION), 40);
    // What a hook killed while holding its job leaves: its lock file, and
    // the checkpoint of a log since deleted.
    let stale = t.path(".logbook/locks/hook-job-000001790000000000000000-4242-deadbeef.lock");
    std::fs::write(&stale, "4242      ").unwrap();
    let gone = t.path("home/gone.jsonl");
    std::fs::copy(&claude.log, &gone).unwrap();
    t.run(&["transcript", "import", gone.to_str().unwrap()])
        .ok();
    let checkpoints = t.path(".logbook/import-cursors");
    let before = checkpoints.read_dir().unwrap().count();
    for f in checkpoints.read_dir().unwrap() {
        assert_eq!(mode_of(&f.unwrap().path()), 0o600);
    }
    std::fs::remove_file(&gone).unwrap();
    let report = t.doctor(&[]);
    let kinds: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["stale-lock", "stale-import-checkpoint"], "{report}");
    t.run(&["doctor", "--fix"]).ok();
    assert!(!stale.exists());
    assert_eq!(checkpoints.read_dir().unwrap().count(), before - 1);
    assert_eq!(t.doctor(&[])["findings"], serde_json::json!([]));
    // The live log's checkpoint is still used: the next Stop reads only
    // what was appended.
    claude.turn("after the fix");
    hook(&t, &claude.payload("stop")).answer();
    eventually("the import", || messages(&t, SESSION) == 42);
}

/// Whether `transcript list --all --json` says session `id` is live, and
/// whether `--live` lists it, at the fixed "now" of `envs`.
fn listed_live(t: &TestProject, id: &str, envs: &[(&str, &str)]) -> (bool, bool) {
    let list = |extra: &[&str]| -> Value {
        let mut args = vec!["--json", "transcript", "list", "--all"];
        args.extend(extra);
        let mut c = t.cmd(&args);
        for (k, v) in envs {
            c.env(k, v);
        }
        let out = c.output().unwrap();
        assert!(out.status.success(), "{out:?}");
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let all = list(&[]);
    let row = all
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id)
        .unwrap_or_else(|| panic!("{id} not listed: {all}"));
    let live = row["live"].as_bool().expect("every row says live");
    let only = list(&["--live"]);
    let in_only = only.as_array().unwrap().iter().any(|r| r["id"] == id);
    (live, in_only)
}

#[test]
fn a_session_is_live_from_its_start_until_its_end_or_ten_idle_minutes() {
    let t = TestProject::new();
    started(&t);
    let mut claude = Agent::claude(&t, SESSION);
    hook(&t, &claude.payload("session-start-startup")).answer();
    claude.turn("step 1");
    hook(&t, &claude.payload("stop")).answer();
    drained(&t);
    assert_eq!(listed_live(&t, SESSION, &[]), (true, true));
    // Ten minutes without a change: over, though no SessionEnd came.
    let later = logbook::clock::Clock::SYSTEM.now() + jiff::SignedDuration::from_mins(11);
    let later = later.to_string();
    assert_eq!(
        listed_live(&t, SESSION, &[("LOGBOOK_NOW", &later)]),
        (false, false)
    );
    // SessionEnd: over at once.
    claude.turn("step 2");
    hook(&t, &claude.payload("session-end")).answer();
    assert_eq!(listed_live(&t, SESSION, &[]), (false, false));
    // A resume starts it again.
    hook(&t, &claude.payload("session-start-resume")).answer();
    assert_eq!(listed_live(&t, SESSION, &[]), (true, true));
    // A log imported by hand is a past session: never live.
    let mut old = Agent::claude(&t, "bbbbbbbb-1111-4222-8333-444455556666");
    old.turn("long ago");
    t.run(&["transcript", "import", &old.log.to_string_lossy()])
        .ok();
    assert_eq!(listed_live(&t, &old.session, &[]), (false, false));
}
