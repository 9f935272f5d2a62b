//! `logbook export otlp` to a real receiver: Arize Phoenix, installed with
//! pip into a venv cached under `target/` (`.ci/run` installs python3-venv),
//! started on free loopback ports with a temporary working folder, and
//! queried through its REST API for the spans it stored.

use std::collections::{BTreeMap, BTreeSet};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::export::{history, usage_of};

/// The venv Phoenix is installed into once and reused by later runs.
fn venv() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    target.join("otlp-phoenix-venv")
}

fn install(venv: &Path) -> PathBuf {
    let phoenix = venv.join("bin/phoenix");
    if phoenix.exists() {
        return phoenix;
    }
    if !venv.join("bin/pip").exists() {
        let ok = Command::new("python3")
            .args(["-m", "venv"])
            .arg(venv)
            .status()
            .expect("python3 (with venv: apt-get install python3-venv)");
        assert!(ok.success(), "python3 -m venv {} failed", venv.display());
    }
    let ok = Command::new(venv.join("bin/pip"))
        .args(["install", "-q", "arize-phoenix"])
        .status()
        .expect("pip");
    assert!(ok.success(), "pip install arize-phoenix failed");
    phoenix
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A Phoenix server of the test's own, stopped when dropped.
struct Phoenix {
    child: Child,
    base: String,
    _dir: tempfile::TempDir,
    log: PathBuf,
}

impl Drop for Phoenix {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Phoenix {
    fn start() -> Phoenix {
        let phoenix = install(&venv());
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let log = dir.path().join("phoenix.log");
        let child = Command::new(phoenix)
            .arg("serve")
            .env("PHOENIX_WORKING_DIR", dir.path())
            .env("PHOENIX_PORT", port.to_string())
            .env("PHOENIX_GRPC_PORT", free_port().to_string())
            .env("PHOENIX_HOST", "127.0.0.1")
            .env("PHOENIX_TELEMETRY_ENABLED", "false")
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&log).unwrap())
            .stderr(std::fs::File::create(dir.path().join("phoenix.err")).unwrap())
            .spawn()
            .expect("phoenix serve");
        let mut p = Phoenix {
            child,
            base: format!("http://127.0.0.1:{port}"),
            _dir: dir,
            log,
        };
        p.wait_ready();
        p
    }

    /// Polls `/healthz` until it answers 200, the server exits, or the
    /// deadline passes (a cold start imports a great deal of Python).
    fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(300);
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!("phoenix exited ({status}): {}", self.logs());
            }
            if let Ok(r) = ureq::get(&format!("{}/healthz", self.base)).call()
                && r.status() == 200
            {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "phoenix never became ready: {}",
                self.logs()
            );
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    fn logs(&self) -> String {
        let err = self.log.with_file_name("phoenix.err");
        format!(
            "{}\n{}",
            std::fs::read_to_string(&self.log).unwrap_or_default(),
            std::fs::read_to_string(err).unwrap_or_default()
        )
    }

    /// Every span of the default project, through the REST API's pages.
    fn spans(&self) -> Vec<Value> {
        let mut out = vec![];
        let mut cursor: Option<String> = None;
        loop {
            let mut url = format!("{}/v1/projects/default/spans?limit=500", self.base);
            if let Some(c) = &cursor {
                url.push_str(&format!("&cursor={c}"));
            }
            let Ok(mut r) = ureq::get(&url).call() else {
                return out;
            };
            let v: Value = serde_json::from_slice(&r.body_mut().read_to_vec().unwrap()).unwrap();
            out.extend(v["data"].as_array().cloned().unwrap_or_default());
            match v["next_cursor"].as_str() {
                Some(c) => cursor = Some(c.to_string()),
                None => return out,
            }
        }
    }

    /// The spans once `done` holds of them: Phoenix stores what it
    /// received in the background, so the test polls its API with a deadline.
    fn spans_when(&self, what: &str, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let spans = self.spans();
            if done(&spans) {
                return spans;
            }
            assert!(
                Instant::now() < deadline,
                "phoenix never held {what}: it has {} spans\n{}",
                spans.len(),
                self.logs()
            );
            std::thread::sleep(Duration::from_millis(250));
        }
    }
}

fn span_id(s: &Value) -> String {
    s["context"]["span_id"].as_str().unwrap().to_string()
}

#[test]
fn phoenix_stores_what_export_sends() {
    let (t, root) = history();
    let phoenix = Phoenix::start();
    let r = root.to_str().unwrap();
    let export = |extra: &[&str]| {
        let mut args = vec!["--root", r, "export", "otlp", "--endpoint", &phoenix.base];
        args.extend_from_slice(extra);
        t.json(&args)
    };
    let first = export(&[]);
    let sent = first["spans"].as_u64().unwrap() as usize;
    assert_eq!(first["accepted"].as_u64().unwrap() as usize, sent);
    let spans = phoenix.spans_when("every span sent", |s| s.len() >= sent);
    assert_eq!(spans.len(), sent);

    // Traces: the work session's, the Claude Code session's, the Codex
    // rollout's, the demo's saved conversation.
    let traces: BTreeSet<&str> = spans
        .iter()
        .map(|s| s["context"]["trace_id"].as_str().unwrap())
        .collect();
    assert_eq!(traces.len(), 4);

    // Parent links: each parent is stored, in the same trace.
    let by_id: BTreeMap<String, &Value> = spans.iter().map(|s| (span_id(s), s)).collect();
    for s in &spans {
        if let Some(parent) = s["parent_id"].as_str() {
            let p = by_id
                .get(parent)
                .unwrap_or_else(|| panic!("{} lost its parent", s["name"]));
            assert_eq!(p["context"]["trace_id"], s["context"]["trace_id"]);
        }
    }
    let sub = spans
        .iter()
        .find(|s| {
            s["attributes"]["logbook.transcript.kind"] == "subagent"
                && s["attributes"]["gen_ai.agent.name"] == "claude-code"
        })
        .expect("the subagent's span");
    let call = by_id[sub["parent_id"].as_str().unwrap()];
    assert_eq!(call["attributes"]["gen_ai.operation.name"], "execute_tool");

    // Each session's tokens, as Phoenix stored them, are `transcript usage`'s.
    let mut tokens: BTreeMap<String, (i64, i64)> = BTreeMap::new();
    for s in &spans {
        let a = &s["attributes"];
        if a["gen_ai.operation.name"] != "chat" || a["logbook.usage.total_tokens"].is_null() {
            continue;
        }
        let root = by_id[s["parent_id"].as_str().unwrap()];
        let id = root["attributes"]["logbook.transcript.id"]
            .as_str()
            .unwrap();
        let e = tokens.entry(id.to_string()).or_default();
        e.0 += a["logbook.usage.total_tokens"].as_i64().unwrap();
        e.1 += a["gen_ai.usage.output_tokens"].as_i64().unwrap();
    }
    assert_eq!(tokens, usage_of(&t, &root));

    // A second export sends nothing; `--all` sends the same ids, and
    // Phoenix still holds one span per id. A run finished afterwards is a
    // marker: once it is stored, so is everything sent before it.
    assert_eq!(export(&[])["spans"], 0);
    assert_eq!(export(&["--all"])["spans"].as_u64().unwrap() as usize, sent);
    let run = t.json(&[
        "--root",
        r,
        "run",
        "start",
        "--agent",
        "marker",
        "--workflow",
        "w",
    ]);
    let id = run["session_id"].as_str().unwrap();
    t.json(&["--root", r, "run", "finish", id]);
    let marker = export(&[]);
    assert_eq!(marker["runs"], 1);
    let after = phoenix.spans_when("the marker run", |s| {
        s.iter().any(|s| s["attributes"]["logbook.run.id"] == id)
    });
    let ids: BTreeSet<String> = spans.iter().map(span_id).collect();
    let mut after_ids: BTreeSet<String> = after.iter().map(span_id).collect();
    assert_eq!(after.len(), after_ids.len(), "one stored span per id");
    after_ids.retain(|s| ids.contains(s));
    assert_eq!(after_ids, ids);
    // The marker's export also sent its work session again (it changed),
    // under the same ids: only the run's span is new.
    assert_eq!(after.len(), sent + 1);
}
