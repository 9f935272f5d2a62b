//! `logbook export otlp` against loopback receivers written here: what goes
//! on the wire, decoded with the official OTLP definitions
//! (`opentelemetry-proto`), retries, partial successes and an endpoint
//! that is not there.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTracePartialSuccess, ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::any_value;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message as _;
use serde_json::Value;

use crate::harness::TestProject;

/// One request a [`Collector`] received.
#[derive(Debug, Clone)]
pub(crate) struct Received {
    pub(crate) path: String,
    pub(crate) headers: BTreeMap<String, String>,
    pub(crate) body: Vec<u8>,
}

/// One scripted answer.
pub(crate) struct Reply {
    status: u16,
    headers: Vec<(&'static str, String)>,
    body: Vec<u8>,
    /// How long the receiver takes before it answers.
    delay: std::time::Duration,
}

impl Reply {
    fn ok() -> Reply {
        Reply {
            status: 200,
            headers: vec![],
            body: vec![],
            delay: std::time::Duration::ZERO,
        }
    }

    /// A success that takes `delay` to come.
    fn slow(delay: std::time::Duration) -> Reply {
        Reply {
            delay,
            ..Reply::ok()
        }
    }

    fn unavailable() -> Reply {
        Reply {
            status: 503,
            // Asked to come back at once, so the test waits on no backoff.
            headers: vec![("Retry-After", "0".into())],
            body: b"busy".to_vec(),
            delay: std::time::Duration::ZERO,
        }
    }

    fn partial(rejected: i64, message: &str) -> Reply {
        let body = ExportTraceServiceResponse {
            partial_success: Some(ExportTracePartialSuccess {
                rejected_spans: rejected,
                error_message: message.into(),
            }),
        }
        .encode_to_vec();
        Reply {
            status: 200,
            headers: vec![("Content-Type", "application/x-protobuf".into())],
            body,
            delay: std::time::Duration::ZERO,
        }
    }
}

/// A loopback OTLP/HTTP receiver: records every request and answers from
/// its script, then 200 with an empty body.
pub(crate) struct Collector {
    pub(crate) addr: SocketAddr,
    received: Arc<Mutex<Vec<Received>>>,
}

impl Collector {
    pub(crate) fn start(script: Vec<Reply>) -> Collector {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let received = Arc::new(Mutex::new(vec![]));
        let script = Arc::new(Mutex::new(VecDeque::from(script)));
        let log = received.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let (log, script) = (log.clone(), script.clone());
                std::thread::spawn(move || serve(stream, &log, &script));
            }
        });
        Collector { addr, received }
    }

    pub(crate) fn base(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub(crate) fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }
}

/// Answers the requests of one (kept-alive) connection until it closes.
fn serve(stream: TcpStream, log: &Mutex<Vec<Received>>, script: &Mutex<VecDeque<Reply>>) {
    let mut out = stream.try_clone().unwrap();
    let mut r = BufReader::new(stream);
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
        let mut headers = BTreeMap::new();
        loop {
            let mut h = String::new();
            if r.read_line(&mut h).unwrap_or(0) == 0 {
                return;
            }
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
            }
        }
        let len: usize = headers
            .get("content-length")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let mut body = vec![0; len];
        if r.read_exact(&mut body).is_err() {
            return;
        }
        log.lock().unwrap().push(Received {
            path,
            headers,
            body,
        });
        let reply = script.lock().unwrap().pop_front().unwrap_or_else(Reply::ok);
        std::thread::sleep(reply.delay);
        let mut head = format!(
            "HTTP/1.1 {} X\r\nContent-Length: {}\r\n",
            reply.status,
            reply.body.len()
        );
        for (k, v) in &reply.headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str("\r\n");
        if out.write_all(head.as_bytes()).is_err() || out.write_all(&reply.body).is_err() {
            return;
        }
    }
}

/// The example history: `logbook demo` plus the Claude Code session (with
/// its subagent) and the Codex rollout of docs/examples.
pub(crate) fn history() -> (TestProject, PathBuf) {
    let t = TestProject::new();
    t.json(&["demo", "example"]);
    let root = t.path("example");
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/examples");
    let r = root.to_str().unwrap();
    t.json(&[
        "--root",
        r,
        "transcript",
        "import",
        examples.to_str().unwrap(),
    ]);
    (t, root)
}

/// An OTLP/JSON request decoded, each `doubleValue` read as its text:
/// `logbook-model` builds serde_json with `arbitrary_precision`, under which
/// opentelemetry-proto's flattened `AnyValue` cannot take a JSON double
/// ("invalid type: map, expected f64"); the double must still be a number.
fn json_request(body: &[u8]) -> ExportTraceServiceRequest {
    fn doubles_as_text(v: &mut Value) {
        match v {
            Value::Object(m) => {
                if let Some(Value::Number(n)) = m.get("doubleValue") {
                    let text = n.to_string();
                    assert!(text.parse::<f64>().is_ok_and(f64::is_finite), "{text}");
                    m.clear();
                    m.insert("stringValue".into(), Value::String(text));
                    return;
                }
                m.values_mut().for_each(doubles_as_text);
            }
            Value::Array(a) => a.iter_mut().for_each(doubles_as_text),
            _ => {}
        }
    }
    let mut v: Value = serde_json::from_slice(body).unwrap();
    doubles_as_text(&mut v);
    serde_json::from_value(v).unwrap()
}

/// Every span of the requests, decoded as `json` or protobuf.
pub(crate) fn spans_of(received: &[Received], json: bool) -> Vec<Span> {
    let mut out = vec![];
    for r in received {
        let req: ExportTraceServiceRequest = if json {
            json_request(&r.body)
        } else {
            ExportTraceServiceRequest::decode(r.body.as_slice()).unwrap()
        };
        for rs in req.resource_spans {
            assert_eq!(rs.schema_url, "https://opentelemetry.io/schemas/1.40.0");
            for ss in rs.scope_spans {
                out.extend(ss.spans);
            }
        }
    }
    out
}

pub(crate) fn attr<'a>(s: &'a Span, key: &str) -> Option<&'a any_value::Value> {
    s.attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref())
        .and_then(|v| v.value.as_ref())
}

fn int(s: &Span, key: &str) -> i64 {
    match attr(s, key) {
        Some(any_value::Value::IntValue(i)) => *i,
        _ => 0,
    }
}

fn text<'a>(s: &'a Span, key: &str) -> Option<&'a str> {
    match attr(s, key) {
        Some(any_value::Value::StringValue(v)) => Some(v),
        _ => None,
    }
}

/// Each imported transcript's own usage as `transcript usage` reports it:
/// id -> (total, output).
pub(crate) fn usage_of(t: &TestProject, root: &Path) -> BTreeMap<String, (i64, i64)> {
    let r = root.to_str().unwrap();
    let usage = t.json(&["--root", r, "transcript", "usage", "--all"]);
    usage["transcripts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| {
            (
                u["id"].as_str().unwrap().to_string(),
                (
                    u["usage"]["total_tokens"].as_i64().unwrap(),
                    u["usage"]["output_tokens"].as_i64().unwrap(),
                ),
            )
        })
        .collect()
}

/// The same per-transcript totals, summed from the `chat` spans under each
/// transcript's root span.
pub(crate) fn chat_usage(spans: &[Span]) -> BTreeMap<String, (i64, i64)> {
    let roots: BTreeMap<&[u8], &Span> = spans.iter().map(|s| (s.span_id.as_slice(), s)).collect();
    let mut out: BTreeMap<String, (i64, i64)> = BTreeMap::new();
    for s in spans {
        if text(s, "gen_ai.operation.name") != Some("chat") {
            continue;
        }
        let parent = roots[s.parent_span_id.as_slice()];
        let Some(id) = text(parent, "logbook.transcript.id") else {
            continue;
        };
        if attr(s, "logbook.usage.total_tokens").is_none() {
            continue;
        }
        let e = out.entry(id.to_string()).or_default();
        e.0 += int(s, "logbook.usage.total_tokens");
        e.1 += int(s, "gen_ai.usage.output_tokens");
    }
    out
}

fn export(t: &TestProject, root: &Path, extra: &[&str]) -> Value {
    let mut args = vec!["--root", root.to_str().unwrap(), "export", "otlp"];
    args.extend_from_slice(extra);
    t.json(&args)
}

#[test]
fn http_json_decodes_with_the_official_definitions_and_matches_usage() {
    let (mut t, root) = history();
    let c = Collector::start(vec![]);
    t.envs.push((
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT".into(),
        format!("{}/custom/traces", c.base()),
    ));
    t.envs.push((
        "OTEL_EXPORTER_OTLP_HEADERS".into(),
        "x-team=blue%20team".into(),
    ));
    let summary = export(
        &t,
        &root,
        &["--protocol", "http/json", "--header", "x-api-key=secret"],
    );
    let got = c.received();
    assert!(!got.is_empty());
    for r in &got {
        assert_eq!(
            r.path, "/custom/traces",
            "the traces endpoint is used as given"
        );
        assert_eq!(r.headers["content-type"], "application/json");
        assert_eq!(r.headers["x-api-key"], "secret");
        assert_eq!(r.headers["x-team"], "blue team");
    }
    let spans = spans_of(&got, true);
    assert_eq!(spans.len() as u64, summary["spans"].as_u64().unwrap());
    assert_eq!(summary["accepted"], summary["spans"]);
    assert_eq!(summary["semconv"], "1.40.0");

    // Ids are unique, every parent was sent, and each trace has one root.
    let ids: BTreeSet<&[u8]> = spans.iter().map(|s| s.span_id.as_slice()).collect();
    assert_eq!(ids.len(), spans.len());
    for s in &spans {
        assert!(
            s.parent_span_id.is_empty() || ids.contains(s.parent_span_id.as_slice()),
            "{} has a parent that was not sent",
            s.name
        );
        assert!(s.end_time_unix_nano >= s.start_time_unix_nano, "{}", s.name);
    }
    let traces: BTreeSet<&[u8]> = spans.iter().map(|s| s.trace_id.as_slice()).collect();
    // The work session's, the Claude Code session's (with its subagent),
    // the Codex rollout's and the demo's saved conversation.
    assert_eq!(
        traces.len(),
        4,
        "{:?}",
        spans.iter().map(|s| &s.name).collect::<Vec<_>>()
    );

    // The subagent runs under the Task call that started it.
    let sub = spans
        .iter()
        .find(|s| {
            text(s, "logbook.transcript.kind") == Some("subagent")
                && text(s, "gen_ai.agent.name") == Some("claude-code")
        })
        .expect("the Claude Code subagent's root span");
    let call = spans
        .iter()
        .find(|s| s.span_id == sub.parent_span_id)
        .unwrap();
    assert_eq!(text(call, "gen_ai.operation.name"), Some("execute_tool"));
    assert!(matches!(
        text(call, "gen_ai.tool.name"),
        Some("Task" | "Agent")
    ));
    assert_eq!(call.trace_id, sub.trace_id);

    // Each session's tokens are what `transcript usage` counts.
    let usage = usage_of(&t, &root);
    assert_eq!(usage.len(), 3);
    assert_eq!(chat_usage(&spans), usage);

    // A failed tool call is an error span; no message text by default.
    assert!(
        spans
            .iter()
            .any(|s| text(s, "gen_ai.operation.name") == Some("execute_tool")
                && s.status.as_ref().is_some_and(|st| st.code == 2))
    );
    assert!(
        spans
            .iter()
            .all(|s| attr(s, "gen_ai.tool.call.arguments").is_none()
                && attr(s, "gen_ai.output.messages").is_none())
    );

    // A second export sends nothing; `--all` sends the same ids again.
    let again = export(&t, &root, &["--protocol", "http/json"]);
    assert_eq!(again["spans"], 0);
    assert_eq!(c.received().len(), got.len(), "nothing new, no request");
    let all = export(
        &t,
        &root,
        &["--protocol", "http/json", "--all", "--content"],
    );
    assert_eq!(all["spans"], summary["spans"]);
    let resent = spans_of(&c.received()[got.len()..], true);
    let resent_ids: BTreeSet<&[u8]> = resent.iter().map(|s| s.span_id.as_slice()).collect();
    assert_eq!(resent_ids, ids);
    assert!(
        resent
            .iter()
            .any(|s| attr(s, "gen_ai.tool.call.arguments").is_some())
    );
}

#[test]
fn retries_a_busy_receiver_and_reports_a_partial_success() {
    let (t, root) = history();
    let c = Collector::start(vec![
        Reply::unavailable(),
        Reply::unavailable(),
        Reply::ok(),
        Reply::partial(2, "2 spans are older than the retention window"),
    ]);
    let base = c.base();
    let summary = export(&t, &root, &["--endpoint", &base, "--batch", "10"]);
    let got = c.received();
    assert!(got.iter().all(|r| r.path == "/v1/traces"));
    assert!(
        got.iter()
            .all(|r| r.headers["content-type"] == "application/x-protobuf")
    );
    let spans = summary["spans"].as_u64().unwrap();
    assert!(spans > 20, "several batches: {summary}");
    assert_eq!(summary["retries"], 2);
    assert_eq!(summary["batches"].as_u64().unwrap() + 2, got.len() as u64);
    assert_eq!(summary["rejected"], 2);
    assert_eq!(summary["accepted"].as_u64().unwrap(), spans - 2);
    assert_eq!(
        summary["partial"],
        serde_json::json!(["2 spans are older than the retention window"])
    );
    // The first batch, sent three times, is the same bytes each time.
    assert_eq!(got[0].body, got[2].body);

    // Without --json the partial success is said in words.
    let again = t.run(&[
        "--root",
        root.to_str().unwrap(),
        "export",
        "otlp",
        "--endpoint",
        &base,
        "--all",
    ]);
    assert!(again.ok().contains("accepted"), "{}", again.ok());
}

#[test]
fn an_unreachable_endpoint_is_a_clear_error_and_nothing_is_remembered() {
    let (t, root) = history();
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let url = format!("http://127.0.0.1:{port}");
    let r = t.run(&[
        "--root",
        root.to_str().unwrap(),
        "export",
        "otlp",
        "--endpoint",
        &url,
    ]);
    let err = r.err();
    assert!(err.contains(&format!("{url}/v1/traces")), "{err}");
    assert!(err.contains("is the receiver running"), "{err}");

    // What failed is sent by the next export, once a receiver answers.
    let c = Collector::start(vec![]);
    let summary = export(&t, &root, &["--endpoint", &c.base()]);
    assert!(summary["spans"].as_u64().unwrap() > 0);
    assert_eq!(summary["unchanged"], 0);
}

#[test]
fn no_endpoint_is_an_error_naming_the_flag_and_the_variable() {
    let (t, root) = history();
    let r = t.run(&["--root", root.to_str().unwrap(), "export", "otlp"]);
    let err = r.err();
    assert!(
        err.contains("--endpoint") && err.contains("OTEL_EXPORTER_OTLP_ENDPOINT"),
        "{err}"
    );
}

#[test]
fn watch_sends_what_finishes_and_stops_on_sigterm() {
    use std::sync::mpsc;
    use std::time::Duration;

    let (t, root) = history();
    let c = Collector::start(vec![]);
    let r = root.to_str().unwrap();
    let mut child = t
        .cmd(&[
            "--json",
            "--root",
            r,
            "export",
            "otlp",
            "--endpoint",
            &c.base(),
            "--watch",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let _ = tx.send(line);
        }
    });
    let next = || -> Value {
        let line = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("a round's JSON line");
        serde_json::from_str(&line).unwrap()
    };
    // The first round sends the history; its line says the watch is on.
    let first = next();
    assert!(first["spans"].as_u64().unwrap() > 0);
    assert_eq!(first["running"], 1, "the demo's running run waits");

    // A run that finishes goes in a later round, alone.
    let run = t.json(&[
        "--root",
        r,
        "run",
        "start",
        "--agent",
        "late",
        "--workflow",
        "w",
    ]);
    let id = run["session_id"].as_str().unwrap();
    t.json(&["--root", r, "run", "finish", id]);
    // A round may fall between the start and the finish: it sends the
    // work session the start changed, and not the run, still running.
    let round = loop {
        let round = next();
        if round["runs"] == 1 {
            break round;
        }
        assert_eq!(round["runs"], 0, "{round}");
    };
    assert_eq!(round["transcripts"], 0);
    let spans = spans_of(&c.received(), false);
    assert!(spans.iter().any(|s| text(s, "logbook.run.id") == Some(id)));

    let pid = child.id().to_string();
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = child.wait().unwrap();
    assert!(
        status.success(),
        "a watch stopped by SIGTERM exits 0: {status}"
    );
}

#[test]
fn a_call_copied_into_a_resumed_session_counts_once_as_usage_counts_it() {
    let (t, root) = history();
    // Claude Code copies a resumed session's earlier calls into the new
    // session's file: the same message and request ids, another session.
    let original = "7c0e5a52-3f1b-4d8e-9a61-2b94c1d0e7a3";
    let copy = "ffffffff-3f1b-4d8e-9a61-2b94c1d0e7a3";
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/examples");
    let text = std::fs::read_to_string(
        examples.join(format!("claude/projects/-home-dev-shop/{original}.jsonl")),
    )
    .unwrap();
    let dir = t.path("resumed/-home-dev-shop");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(format!("{copy}.jsonl"));
    std::fs::write(&file, text.replace(original, copy)).unwrap();
    let r = root.to_str().unwrap();
    t.json(&["--root", r, "transcript", "import", file.to_str().unwrap()]);

    let usage = usage_of(&t, &root);
    assert_eq!(
        usage[copy],
        (0, 0),
        "every call of the copy was counted before"
    );
    let c = Collector::start(vec![]);
    export(&t, &root, &["--endpoint", &c.base()]);
    let spans = spans_of(&c.received(), false);
    let counted: BTreeMap<String, (i64, i64)> =
        usage.into_iter().filter(|(_, u)| *u != (0, 0)).collect();
    assert_eq!(chat_usage(&spans), counted);
    // The copy's turns are still there, marked.
    assert!(spans.iter().any(|s| matches!(
        attr(s, "logbook.usage.counted_in_earlier_session"),
        Some(any_value::Value::BoolValue(true))
    )));
}

/// The export cursors' folder of the project at `root`, wherever its
/// state folder is.
fn cursor_dir(root: &Path) -> Option<PathBuf> {
    let mut todo = vec![root.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                if p.file_name().is_some_and(|n| n == "export-cursors") {
                    return Some(p);
                }
                todo.push(p);
            }
        }
    }
    None
}

/// The cursor files at `root`.
fn cursors(root: &Path) -> Vec<PathBuf> {
    cursor_dir(root)
        .map(|d| {
            std::fs::read_dir(d)
                .unwrap()
                .flatten()
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default()
}

/// Asserts the command failed and returns what it said.
#[track_caller]
fn failed(r: &crate::harness::Run) -> &str {
    assert_ne!(r.code, 0, "expected a failure: {}", r.stdout);
    &r.stderr
}

#[test]
fn an_endpoints_password_and_query_are_sent_but_never_stored_or_printed() {
    use std::os::unix::fs::PermissionsExt as _;
    let (t, root) = history();
    let r = root.to_str().unwrap();

    // A failed export says nothing secret and leaves no cursor.
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let down = format!("http://ops:PW-5150@127.0.0.1:{port}/?key=KEY-8812");
    let err = t.run(&["--root", r, "export", "otlp", "--endpoint", &down]);
    let err = failed(&err);
    assert!(
        err.contains(&format!("http://127.0.0.1:{port}/v1/traces")),
        "{err}"
    );
    assert!(
        !err.contains("PW-5150") && !err.contains("KEY-8812"),
        "{err}"
    );
    assert!(cursors(&root).is_empty(), "{:?}", cursors(&root));

    let c = Collector::start(vec![]);
    let up = format!("http://ops:PW-5150@{}/?key=KEY-8812", c.addr);
    let summary = export(&t, &root, &["--endpoint", &up]);
    let shown = format!("http://{}/v1/traces", c.addr);
    assert_eq!(summary["endpoint"], shown.as_str());
    let got = c.received();
    assert!(!got.is_empty());
    // The query goes to the receiver, where it belongs.
    assert!(
        got.iter().all(|r| r.path == "/v1/traces?key=KEY-8812"),
        "{:?}",
        got[0].path
    );
    let human = t.run(&["--root", r, "export", "otlp", "--endpoint", &up, "--all"]);
    let human = human.ok();
    assert!(human.contains(&shown), "{human}");
    for text in [summary.to_string(), human.to_string()] {
        assert!(
            !text.contains("PW-5150") && !text.contains("KEY-8812"),
            "{text}"
        );
    }
    let files = cursors(&root);
    assert_eq!(files.len(), 1, "{files:?}");
    let cursor = std::fs::read_to_string(&files[0]).unwrap();
    assert!(cursor.contains(&shown), "{cursor}");
    assert!(!cursor.contains("PW-5150") && !cursor.contains("KEY-8812") && !cursor.contains("ops"));
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&files[0]), 0o600);
    assert_eq!(mode(&cursor_dir(&root).unwrap()), 0o700);

    // Another password or key for the same receiver is the same cursor.
    let again = export(
        &t,
        &root,
        &[
            "--endpoint",
            &format!("http://other:PW-2@{}/?key=K2", c.addr),
        ],
    );
    assert_eq!(again["spans"], 0, "{again}");
}

#[test]
fn a_traces_url_is_used_as_it_is_and_a_fragment_or_link_local_address_is_refused() {
    let (t, root) = history();
    let r = root.to_str().unwrap();
    let c = Collector::start(vec![]);
    let summary = export(
        &t,
        &root,
        &["--endpoint", &format!("{}/v1/traces", c.base())],
    );
    assert!(summary["spans"].as_u64().unwrap() > 0);
    assert!(c.received().iter().all(|r| r.path == "/v1/traces"));

    let frag = format!("{}/?q=SECRET-Q#frag", c.base());
    let refused = t.run(&["--root", r, "export", "otlp", "--endpoint", &frag]);
    let refused = failed(&refused);
    assert!(
        refused.contains("fragment") && !refused.contains("SECRET-Q"),
        "{refused}"
    );

    for meta in ["http://169.254.169.254", "http://[fe80::1]:4318"] {
        let refused = t.run(&["--root", r, "export", "otlp", "--endpoint", meta]);
        let refused = failed(&refused);
        assert!(
            refused.contains("link-local") && refused.contains("--allow-link-local"),
            "{refused}"
        );
    }
    let sent = c.received().len();
    assert_eq!(
        sent,
        c.received().len(),
        "nothing sent for a refused endpoint"
    );
}

#[test]
fn two_exports_to_one_receiver_at_once_send_everything_once() {
    let (t, root) = history();
    let r = root.to_str().unwrap();
    // The receiver is slow, so the first export is still at work when the
    // second starts.
    let c = Collector::start(vec![Reply::slow(std::time::Duration::from_millis(1500))]);
    let base = c.base();
    let args = ["--json", "--root", r, "export", "otlp", "--endpoint", &base];
    let first = t
        .cmd(&args)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The first export is at work once the receiver holds its first batch
    // (and sits on the slow answer to it): waited for, not guessed.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while c.received().is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the first export sent nothing within 30 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let second = t
        .cmd(&args)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let outs: Vec<Value> = [first, second]
        .into_iter()
        .map(|child| {
            let out = child.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            serde_json::from_slice(&out.stdout).unwrap()
        })
        .collect();
    let sent: u64 = outs.iter().map(|o| o["spans"].as_u64().unwrap()).sum();
    let spans = spans_of(&c.received(), false);
    assert_eq!(sent, spans.len() as u64);
    let ids: BTreeSet<&[u8]> = spans.iter().map(|s| s.span_id.as_slice()).collect();
    assert_eq!(ids.len(), spans.len(), "a span was sent twice: {outs:?}");
}

#[test]
fn a_compaction_agent_runs_under_its_session_root() {
    let t = TestProject::new();
    t.json(&["demo", "example"]);
    let root = t.path("example");
    let r = root.to_str().unwrap();
    let session = "7c0e5a52-3f1b-4d8e-9a61-2b94c1d0e7a3";
    let logs = t.path("claude/projects/-home-dev-shop");
    let from = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs/examples/claude/projects/-home-dev-shop");
    std::fs::create_dir_all(logs.join(session).join("subagents")).unwrap();
    std::fs::copy(
        from.join(format!("{session}.jsonl")),
        logs.join(format!("{session}.jsonl")),
    )
    .unwrap();
    let line = |kind: &str, n: u32, message: &str| {
        format!(
            r#"{{"parentUuid":null,"isSidechain":true,"cwd":"/home/dev/shop","sessionId":"{session}","agentId":"acompact-3c9e11","type":"{kind}","message":{message},"uuid":"9d0c0000-0000-4000-8000-00000000000{n}","timestamp":"2026-11-24T16:5{n}:00.000Z","requestId":"req_c{n}"}}"#
        )
    };
    let compaction = [
        line("user", 1, r#"{"role":"user","content":"Summarize the conversation so far."}"#),
        line(
            "assistant",
            2,
            r#"{"id":"msg_c2","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Summary."}],"usage":{"input_tokens":40,"output_tokens":8}}"#,
        ),
    ]
    .join("\n");
    std::fs::write(
        logs.join(session)
            .join("subagents/agent-acompact-3c9e11.jsonl"),
        compaction + "\n",
    )
    .unwrap();
    t.json(&[
        "--root",
        r,
        "transcript",
        "import",
        t.path("claude").to_str().unwrap(),
    ]);

    let c = Collector::start(vec![]);
    export(
        &t,
        &root,
        &["--endpoint", &c.base(), "--protocol", "http/json"],
    );
    let spans = spans_of(&c.received(), true);
    let ids: BTreeSet<&[u8]> = spans.iter().map(|s| s.span_id.as_slice()).collect();
    for s in &spans {
        assert!(
            s.parent_span_id.is_empty() || ids.contains(s.parent_span_id.as_slice()),
            "{} has a parent that was not sent",
            s.name
        );
    }
    let compactor = spans
        .iter()
        .find(|s| {
            text(s, "logbook.transcript.kind") == Some("subagent")
                && text(s, "gen_ai.agent.name") == Some("claude-code")
        })
        .expect("the compaction agent's root span");
    let parent = spans
        .iter()
        .find(|p| p.span_id == compactor.parent_span_id)
        .unwrap();
    assert_eq!(text(parent, "logbook.transcript.kind"), Some("main"));
    assert_eq!(parent.trace_id, compactor.trace_id);
}

/// The run fingerprint an earlier version's cursor kept, from `find --json`.
fn legacy_fingerprint(run: &Value) -> String {
    let m = &run["manifest"];
    format!(
        "{}|{}|{}|{}",
        m["execution"]["status"].as_str().unwrap(),
        m["execution"]["completed_at"].as_str().unwrap_or(""),
        m["outputs"].as_array().map_or(0, Vec::len),
        m["related_sessions"].as_array().map_or(0, Vec::len),
    )
}

#[test]
fn the_mark_is_small_survives_an_index_rebuild_and_takes_over_an_earlier_cursor() {
    let (t, root) = history();
    let r = root.to_str().unwrap();
    let c = Collector::start(vec![]);
    let base = c.base();
    let first = export(&t, &root, &["--endpoint", &base]);
    let records = ["workSessions", "runs", "transcripts"]
        .iter()
        .map(|k| first[k].as_u64().unwrap())
        .sum::<u64>();
    assert!(first["runs"].as_u64().unwrap() > 0, "{first}");

    // A rebuilt index reads the same records from the same files: the
    // mark, kept by their files' change times, still has them all.
    t.json(&["--root", r, "index", "rebuild"]);
    let again = export(&t, &root, &["--endpoint", &base]);
    assert_eq!(again["spans"], 0, "{again}");
    assert_eq!(again["unchanged"].as_u64().unwrap(), records, "{again}");

    // One small file per endpoint, beside where the earlier cursor was.
    let files = cursors(&root);
    assert_eq!(files.len(), 1, "{files:?}");
    let mark = files[0].clone();
    let name = mark.file_name().unwrap().to_str().unwrap().to_string();
    assert!(name.ends_with(".mark.json"), "{name}");
    assert!(std::fs::metadata(&mark).unwrap().len() < 4096);

    // An earlier version's cursor (a map of every record it sent) is
    // taken over: the runs it names go unsent, the rest goes, and it is
    // removed once the mark is saved.
    let runs = t.json(&["--root", r, "find", "--json"]);
    let sent: serde_json::Map<String, Value> = runs
        .as_array()
        .unwrap()
        .iter()
        .filter(|run| run["manifest"]["execution"]["status"] != "running")
        .map(|run| {
            let id = run["session_id"].as_str().unwrap();
            (format!("run:{id}"), Value::from(legacy_fingerprint(run)))
        })
        .collect();
    let legacy = mark.with_file_name(name.replace(".mark.json", ".json"));
    let shown = first["endpoint"].as_str().unwrap();
    std::fs::remove_file(&mark).unwrap();
    std::fs::write(
        &legacy,
        serde_json::json!({"version": 1, "endpoint": shown, "sent": sent}).to_string(),
    )
    .unwrap();
    let migrated = export(&t, &root, &["--endpoint", &base]);
    assert_eq!(migrated["runs"], 0, "{migrated}");
    assert_eq!(migrated["unchanged"].as_u64().unwrap(), sent.len() as u64);
    assert_eq!(migrated["transcripts"], first["transcripts"], "{migrated}");
    assert!(!legacy.exists());
    assert_eq!(cursors(&root), vec![mark]);
    assert_eq!(export(&t, &root, &["--endpoint", &base])["spans"], 0);
}
