//! `logbook serve`'s `/mcp` and its HTTP server, attacked as the issue
//! reproduced it: foreign origins, malformed requests, a client that
//! initializes in a loop, half-sent headers, short tokens, and the ways a
//! user names the address to listen on.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::harness::TestProject;
use crate::serve::{get, serve, serve_with};

/// A token long enough for `serve`.
pub(crate) const TOKEN: &str = "test-token-0123456789";

/// One HTTP answer: its status, its head, its body.
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) head: String,
    pub(crate) body: Vec<u8>,
}

impl Reply {
    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The header `name`, case-insensitively.
    pub(crate) fn header(&self, name: &str) -> Option<String> {
        self.head.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case(name)
                .then(|| v.trim().to_string())
        })
    }

    /// Every JSON-RPC message in the body: plain JSON, or the `data:` lines
    /// of server-sent events.
    pub(crate) fn messages(&self) -> Vec<Value> {
        let text = self.text();
        if let Ok(v) = serde_json::from_str::<Value>(&text) {
            return vec![v];
        }
        text.lines()
            .filter_map(|l| l.strip_prefix("data:").map(str::trim))
            .filter(|d| d.starts_with('{'))
            .map(|d| serde_json::from_str(d).unwrap_or_else(|e| panic!("{e}: {d}")))
            .collect()
    }
}

/// The server's `host:port` in a URL it printed.
pub(crate) fn addr(url: &str) -> String {
    url.trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_string()
}

/// One request over a fresh connection, with `Host`, `Connection: close`
/// and `Content-Length` added, the rest exactly as given.
pub(crate) fn http(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Reply {
    let mut c = TcpStream::connect(addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    c.write_all(head.as_bytes()).unwrap();
    c.write_all(body).unwrap();
    let mut raw = vec![];
    c.read_to_end(&mut raw).unwrap();
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no head: {}", String::from_utf8_lossy(&raw)));
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status: {head}"));
    Reply {
        status,
        head,
        body: raw[split + 4..].to_vec(),
    }
}

/// The headers a well-behaved MCP client sends, with the token.
pub(crate) const MCP_HEADERS: [(&str, &str); 3] = [
    ("Authorization", "Bearer test-token-0123456789"),
    ("Content-Type", "application/json"),
    ("Accept", "application/json, text/event-stream"),
];

/// POSTs `body` to `/mcp` with the client headers, `session` and `extra`.
pub(crate) fn post(
    addr: &str,
    session: Option<&str>,
    extra: &[(&str, &str)],
    body: &[u8],
) -> Reply {
    let mut headers: Vec<(&str, &str)> = MCP_HEADERS.to_vec();
    if let Some(s) = session {
        headers.push(("Mcp-Session-Id", s));
    }
    headers.extend_from_slice(extra);
    http(addr, "POST", "/mcp", &headers, body)
}

pub(crate) fn initialize_message() -> Value {
    json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "test", "version": "1"}}
    })
}

/// Initializes a session; its id.
pub(crate) fn initialize(addr: &str) -> String {
    let r = post(addr, None, &[], initialize_message().to_string().as_bytes());
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(
        r.messages()[0]["result"]["serverInfo"]["name"],
        "logbook",
        "{}",
        r.text()
    );
    let id = r
        .header("mcp-session-id")
        .unwrap_or_else(|| panic!("no session id: {}", r.head));
    post(
        addr,
        Some(&id),
        &[],
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
            .to_string()
            .as_bytes(),
    );
    id
}

/// `ping` in `session`: the reply.
pub(crate) fn ping(addr: &str, session: &str) -> Reply {
    post(
        addr,
        Some(session),
        &[],
        json!({"jsonrpc": "2.0", "id": 99, "method": "ping"})
            .to_string()
            .as_bytes(),
    )
}

/// A running `logbook serve`, stopped when dropped (a failed assertion
/// included).
pub(crate) struct Serving(pub(crate) Child);

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A demo project served with the test token (and `env`).
pub(crate) fn served(env: &[(&str, &str)]) -> (TestProject, Serving, String) {
    let t = TestProject::new();
    t.run(&["demo", "d"]).ok();
    let (child, url) = serve_with(
        &t,
        &["--root", "d", "--bind", "127.0.0.1:0"],
        Some(TOKEN),
        env,
    );
    let a = addr(&url);
    (t, Serving(child), a)
}

/// Notes in the demo's active work session, as `status --json` shows them.
fn note_call(text: &str) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
           "params": {"name": "session_update", "arguments": {"note": text}}})
    .to_string()
    .into_bytes()
}

#[test]
fn a_foreign_origin_is_refused_and_the_servers_own_or_none_is_let_through() {
    let (t, child, a) = served(&[]);
    let session = initialize(&a);
    let port = a.rsplit(':').next().unwrap().to_string();
    let foreign = post(
        &a,
        Some(&session),
        &[("Origin", "http://evil.example")],
        &note_call("written by evil"),
    );
    let foreign_port = post(
        &a,
        Some(&session),
        &[("Origin", "http://127.0.0.1:1")],
        &note_call("written by another port"),
    );
    let foreign_init = post(
        &a,
        None,
        &[("Origin", "https://evil.example:443")],
        initialize_message().to_string().as_bytes(),
    );
    let mut own = vec![];
    for origin in [
        format!("http://127.0.0.1:{port}"),
        format!("http://localhost:{port}"),
        format!("http://[::1]:{port}"),
    ] {
        own.push((
            origin.clone(),
            post(
                &a,
                Some(&session),
                &[("Origin", &origin)],
                &note_call(&origin),
            ),
        ));
    }
    let without = post(&a, Some(&session), &[], &note_call("no origin"));
    drop(child);

    for r in [&foreign, &foreign_port, &foreign_init] {
        assert_eq!(r.status, 403, "{}", r.text());
    }
    for (origin, r) in &own {
        assert_eq!(r.status, 200, "{origin}: {}", r.text());
    }
    assert_eq!(without.status, 200, "{}", without.text());
    let notes = t.run(&["--root", "d", "--json", "status"]).ok().to_string();
    assert!(
        !notes.contains("evil") && !notes.contains("another port"),
        "{notes}"
    );
    assert!(notes.contains("no origin"), "{notes}");
}

#[test]
fn malformed_requests_get_their_own_status_not_404() {
    let (_t, child, a) = served(&[]);
    let session = initialize(&a);
    let ping_line = json!({"jsonrpc": "2.0", "id": 5, "method": "ping"}).to_string();
    let auth = MCP_HEADERS[0];
    let no_accept = http(
        &a,
        "POST",
        "/mcp",
        &[
            auth,
            ("Content-Type", "application/json"),
            ("Mcp-Session-Id", &session),
        ],
        ping_line.as_bytes(),
    );
    let only_json = http(
        &a,
        "POST",
        "/mcp",
        &[
            auth,
            ("Content-Type", "application/json"),
            ("Accept", "application/json"),
            ("Mcp-Session-Id", &session),
        ],
        ping_line.as_bytes(),
    );
    let wrong_type = http(
        &a,
        "POST",
        "/mcp",
        &[
            auth,
            ("Content-Type", "text/plain"),
            ("Accept", "application/json, text/event-stream"),
            ("Mcp-Session-Id", &session),
        ],
        ping_line.as_bytes(),
    );
    let garbage = post(&a, Some(&session), &[], b"{ not json");
    let no_request = post(&a, Some(&session), &[], br#"{"hello": "world"}"#);
    let no_session = post(&a, None, &[], ping_line.as_bytes());
    let unknown_session = post(&a, Some("no-such-session"), &[], ping_line.as_bytes());
    // A body over the limit, told by its length before it is sent.
    let mut c = TcpStream::connect(&a).unwrap();
    write!(
        c,
        "POST /mcp HTTP/1.1\r\nHost: {a}\r\nConnection: close\r\nAuthorization: Bearer {TOKEN}\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Mcp-Session-Id: {session}\r\nContent-Length: {}\r\n\r\n",
        17 * 1024 * 1024
    )
    .unwrap();
    let mut too_large = String::new();
    c.read_to_string(&mut too_large).unwrap();
    let still = ping(&a, &session);
    drop(child);

    assert_eq!(no_accept.status, 406, "{}", no_accept.text());
    assert_eq!(only_json.status, 406, "{}", only_json.text());
    assert_eq!(wrong_type.status, 415, "{}", wrong_type.text());
    assert_eq!(garbage.status, 400, "{}", garbage.text());
    let err = &garbage.messages()[0];
    assert_eq!(
        (err["error"]["code"].clone(), err["id"].clone()),
        (json!(-32700), Value::Null),
        "{err}"
    );
    assert_eq!(no_request.status, 400, "{}", no_request.text());
    assert_eq!(no_request.messages()[0]["error"]["code"], -32600);
    assert_eq!(no_session.status, 400, "{}", no_session.text());
    assert!(
        no_session.text().to_lowercase().contains("session"),
        "{}",
        no_session.text()
    );
    assert_eq!(unknown_session.status, 404, "{}", unknown_session.text());
    assert!(too_large.starts_with("HTTP/1.1 413"), "{too_large}");
    assert!(
        too_large.contains("16 MiB"),
        "the limit is named: {too_large}"
    );
    assert_eq!(still.status, 200);
}

/// A session used with `ping`, and the clock around its last use: the
/// server marked it used after `sent` and before `answered`.
struct Used {
    id: String,
    sent: Instant,
    answered: Instant,
}

impl Used {
    fn new(a: &str) -> Used {
        let sent = Instant::now();
        let id = initialize(a);
        Used {
            id,
            sent,
            answered: Instant::now(),
        }
    }

    /// Pings the session: its status, and whether the server's idle time
    /// for it was surely under `limit` (sent and answered within it of the
    /// use before), which makes a 404 an early expiry whatever the load.
    fn ping(&mut self, a: &str, limit: Duration) -> (u16, bool) {
        let sent = Instant::now();
        let status = ping(a, &self.id).status;
        let answered = Instant::now();
        let within = answered - self.sent < limit;
        (self.sent, self.answered) = (sent, answered);
        (status, within)
    }
}

#[test]
fn an_idle_session_expires_and_is_then_unknown() {
    let limit = Duration::from_millis(3000);
    let (_t, child, a) = served(&[("LOGBOOK_MCP_SESSION_IDLE_MS", "3000")]);
    let mut idle = Used::new(&a);
    let mut busy = Used::new(&a);
    // Polled with a short back-off: one session kept busy while the other
    // is used again a third of its limit after its last use (it must still
    // be there, its idle time starting again), then left past its limit.
    let mut early = None;
    let mut expired = false;
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(30) {
        match busy.ping(&a, limit) {
            (200, _) => {}
            (status, true) => panic!("a used session expired early: {status}"),
            // Too slow to tell (a loaded machine): a new one stands in.
            (_, false) => busy = Used::new(&a),
        }
        if early.is_none() && idle.answered.elapsed() >= limit / 3 {
            match idle.ping(&a, limit) {
                (status, true) => early = Some(status),
                (_, false) => idle = Used::new(&a),
            }
        } else if early == Some(200) && idle.answered.elapsed() > limit {
            let (status, _) = idle.ping(&a, limit);
            if status == 404 {
                expired = true;
                break;
            }
        } else if early.is_some_and(|s| s != 200) {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let fresh = initialize(&a);
    let fresh_ping = ping(&a, &fresh).status;
    drop(child);
    assert_eq!(
        early,
        Some(200),
        "the session expired before its idle limit"
    );
    assert!(expired, "the idle session never expired");
    assert_eq!(fresh_ping, 200, "a client initializes again after a 404");
}

#[test]
fn at_most_a_hundred_sessions_live_and_the_longest_idle_goes_first() {
    let (_t, child, a) = served(&[]);
    let sessions: Vec<String> = (0..101).map(|_| initialize(&a)).collect();
    let first = ping(&a, &sessions[0]).status;
    let second = ping(&a, &sessions[1]).status;
    let last = ping(&a, &sessions[100]).status;
    // The second was just used: the next new one closes the third.
    let _one_more = initialize(&a);
    let second_again = ping(&a, &sessions[1]).status;
    let third = ping(&a, &sessions[2]).status;
    drop(child);
    assert_eq!((first, second, last), (404, 200, 200));
    assert_eq!((second_again, third), (200, 404));
}

/// The server's resident memory in KiB, as `ps` gives it on Linux (the
/// figure of /proc's VmRSS) and on macOS alike.
fn rss_kib(pid: u32) -> u64 {
    let out = Command::new("ps")
        .args(["-o", "rss=", "-p", &pid.to_string()])
        .output()
        .expect("run ps (procps on Linux)");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "ps -p {pid}: {out:?}");
    text.trim()
        .parse()
        .unwrap_or_else(|e| panic!("ps -o rss= -p {pid} gave {text:?}: {e}"))
}

#[test]
fn two_thousand_initializes_leave_memory_flat() {
    let (_t, child, a) = served(&[]);
    let pid = child.0.id();
    // Warm up: the runtime's threads and the first session's allocations.
    for _ in 0..20 {
        initialize(&a);
    }
    let before = rss_kib(pid);
    for _ in 0..2000 {
        initialize(&a);
    }
    let after = rss_kib(pid);
    drop(child);
    let grown = after.saturating_sub(before);
    assert!(
        grown < 32 * 1024,
        "resident memory grew by {grown} KiB ({before} -> {after}) over 2,000 initializes"
    );
}

#[test]
fn headers_sent_too_slowly_end_the_connection() {
    let (_t, child, a) = served(&[("LOGBOOK_SERVE_HEADER_TIMEOUT_MS", "500")]);
    let mut c = TcpStream::connect(&a).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(c, "GET /api/runs HTTP/1.1\r\nHost: {a}\r\n").unwrap();
    let started = Instant::now();
    let mut rest = vec![];
    let outcome = c.read_to_end(&mut rest);
    let waited = started.elapsed();
    // A request sent whole is still answered.
    let whole = get(
        &format!("http://{a}/"),
        "/api/runs",
        &format!("Authorization: Bearer {TOKEN}\r\n"),
    );
    drop(child);
    assert!(
        outcome.is_ok(),
        "the server should close the connection: {outcome:?}"
    );
    assert!(
        waited < Duration::from_secs(10),
        "closed only after {waited:?}"
    );
    let text = String::from_utf8_lossy(&rest);
    assert!(!text.contains("200 OK"), "{text}");
    assert!(whole.starts_with("HTTP/1.1 200"), "{whole}");
}

#[test]
fn the_bearer_scheme_is_case_insensitive() {
    let (_t, child, a) = served(&[]);
    let url = format!("http://{a}/");
    let replies: Vec<String> = ["bearer", "BEARER", "Bearer"]
        .iter()
        .map(|scheme| {
            get(
                &url,
                "/api/runs",
                &format!("Authorization: {scheme} {TOKEN}\r\n"),
            )
        })
        .collect();
    let basic = get(
        &url,
        "/api/runs",
        &format!("Authorization: Basic {TOKEN}\r\n"),
    );
    drop(child);
    for r in replies {
        assert!(r.starts_with("HTTP/1.1 200"), "{r}");
    }
    assert!(basic.starts_with("HTTP/1.1 401"), "{basic}");
}

#[test]
fn a_token_shorter_than_sixteen_characters_is_refused() {
    let t = TestProject::new();
    for token in ["x", "fifteen-chars!!"] {
        let mut cmd = t.cmd(&["serve", "--bind", "0.0.0.0:0", "--token", token]);
        let child = cmd
            .env_remove("LOGBOOK_TOKEN")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut child = Serving(child);
        // Its stderr ends when it exits; a server that accepted the token
        // would serve (and keep it open) until stopped.
        let mut stderr = child.0.stderr.take().unwrap();
        let (sender, ended) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut err = String::new();
            let _ = stderr.read_to_string(&mut err);
            let _ = sender.send(err);
        });
        let err = ended
            .recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|_| panic!("{token:?} was accepted: serve is running"));
        let status = child.0.wait().unwrap();
        assert_eq!(status.code(), Some(1), "{err}");
        assert!(
            err.contains("--token") && err.contains("at least 16"),
            "{err}"
        );
    }
}

#[test]
fn port_alone_listens_on_loopback_and_bind_takes_host_names() {
    let t = TestProject::new();
    t.run(&["demo", "d"]).ok();
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = free.local_addr().unwrap().port().to_string();
    drop(free);
    let (child, url) = serve(&t, &["--root", "d", "--port", &port], None);
    let child = Serving(child);
    let answered = get(&url, "/api/runs", "");
    drop(child);
    assert_eq!(url, format!("http://127.0.0.1:{port}/"));
    assert!(answered.starts_with("HTTP/1.1 200"), "{answered}");

    let (child, url) = serve(&t, &["--root", "d", "--bind", "localhost:0"], None);
    let child = Serving(child);
    let answered = get(&url, "/api/runs", "");
    drop(child);
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    assert!(answered.starts_with("HTTP/1.1 200"), "{answered}");

    let twice = t.run(&["serve", "--bind", "localhost:8081", "--port", "8082"]);
    let err = twice.err().to_string();
    assert!(
        err.contains("--port") && err.contains("--bind") && err.contains("once"),
        "{err}"
    );
    let unknown = t.run(&["serve", "--bind", "no-such-host.invalid:8080"]);
    assert!(
        unknown.err().contains("--bind no-such-host.invalid"),
        "{}",
        unknown.err()
    );
}

#[test]
fn without_a_token_a_foreign_origin_is_refused_too() {
    let t = TestProject::new();
    t.run(&["demo", "d"]).ok();
    let (child, url) = serve(&t, &["--root", "d", "--bind", "127.0.0.1:0"], None);
    let _serving = Serving(child);
    let a = addr(&url);
    let port = a.rsplit(':').next().unwrap().to_string();
    let init = initialize_message().to_string();
    let foreign = post(
        &a,
        None,
        &[("Origin", "http://evil.example")],
        init.as_bytes(),
    );
    // A page served from another port of this machine is another origin.
    let other_port = post(
        &a,
        None,
        &[("Origin", "http://localhost:1")],
        init.as_bytes(),
    );
    let own = post(
        &a,
        None,
        &[("Origin", &format!("http://localhost:{port}"))],
        init.as_bytes(),
    );
    assert_eq!(foreign.status, 403, "{}", foreign.text());
    assert_eq!(other_port.status, 403, "{}", other_port.text());
    assert_eq!(own.status, 200, "{}", own.text());
}
