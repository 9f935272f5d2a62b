//! `logbook serve`: the real binary binds, prints the URL to open, answers
//! the API, and refuses to listen beyond loopback without a token.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};

use crate::harness::TestProject;

/// Starts `logbook serve ARGS` and returns it with the URL it printed.
pub(crate) fn serve(t: &TestProject, args: &[&str], token: Option<&str>) -> (Child, String) {
    serve_with(t, args, token, &[])
}

/// [`serve`] with more environment variables (the hidden timeouts).
pub(crate) fn serve_with(
    t: &TestProject,
    args: &[&str],
    token: Option<&str>,
    env: &[(&str, &str)],
) -> (Child, String) {
    let mut all = vec!["serve"];
    all.extend_from_slice(args);
    let mut cmd = t.cmd(&all);
    cmd.env_remove("LOGBOOK_TOKEN").stdout(Stdio::piped());
    if let Some(token) = token {
        cmd.env("LOGBOOK_TOKEN", token);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while !line.contains("http://") {
        line.clear();
        assert!(
            out.read_line(&mut line).unwrap() > 0,
            "serve printed no URL"
        );
    }
    (child, line.trim().to_string())
}

pub(crate) fn get(url: &str, path: &str, header: &str) -> String {
    let addr = url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap()
        .to_string();
    let mut c = TcpStream::connect(&addr).unwrap();
    write!(
        c,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n{header}\r\n"
    )
    .unwrap();
    let mut s = String::new();
    c.read_to_string(&mut s).unwrap();
    s
}

#[test]
fn serve_prints_the_url_and_answers_the_api() {
    let t = TestProject::new();
    t.run(&["demo", "d"]).ok();
    let (mut child, url) = serve(&t, &["--root", "d", "--bind", "127.0.0.1:0"], None);
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with('/'),
        "{url}"
    );
    let runs = get(&url, "/api/runs", "");
    let _ = child.kill();
    let _ = child.wait();
    assert!(runs.starts_with("HTTP/1.1 200"), "{runs}");
    let body = runs.split("\r\n\r\n").nth(1).unwrap();
    let json: serde_json::Value = serde_json::from_str(body).unwrap();
    assert_eq!(json.as_array().unwrap().len(), 4);
}

#[test]
fn a_token_from_the_environment_guards_every_request() {
    let t = TestProject::new();
    t.run(&["demo", "d"]).ok();
    let (mut child, url) = serve(
        &t,
        &["--root", "d", "--bind", "127.0.0.1:0"],
        Some("tok3ntok3ntok3ntok3n"),
    );
    assert!(url.ends_with("/?token=tok3ntok3ntok3ntok3n"), "{url}");
    let without = get(&url, "/api/runs", "");
    let with = get(
        &url,
        "/api/runs",
        "Authorization: Bearer tok3ntok3ntok3ntok3n\r\n",
    );
    let _ = child.kill();
    let _ = child.wait();
    assert!(without.starts_with("HTTP/1.1 401"), "{without}");
    assert!(with.starts_with("HTTP/1.1 200"), "{with}");
}

#[test]
fn beyond_loopback_without_a_token_is_refused() {
    let t = TestProject::new();
    let mut cmd = t.cmd(&["serve", "--bind", "0.0.0.0:0"]);
    cmd.env_remove("LOGBOOK_TOKEN");
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--token") && err.contains("LOGBOOK_TOKEN"),
        "{err}"
    );
    assert!(
        t.run(&["serve", "--bind", "127.0.0.1:notaport"])
            .usage()
            .contains("--bind")
    );
}

#[test]
fn mcp_over_streamable_http_lists_the_tools_and_calls_one() {
    use crate::mcp_http::{MCP_HEADERS, http, initialize, initialize_message, post, served};
    let (_t, _serving, a) = served(&[]);
    let refused = http(
        &a,
        "POST",
        "/mcp",
        &MCP_HEADERS[1..],
        initialize_message().to_string().as_bytes(),
    );
    let session = initialize(&a);
    let call = |message: serde_json::Value| {
        let r = post(&a, Some(&session), &[], message.to_string().as_bytes());
        let mut messages = r.messages();
        assert_eq!(messages.len(), 1, "{}", r.text());
        messages.remove(0)
    };
    let tools = call(serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    let found = call(
        serde_json::json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "find_runs", "arguments": {"limit": 2}}}),
    );

    assert_eq!(refused.status, 401, "{}", refused.text());
    let names: Vec<&str> = tools["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{tools}"))
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    for name in [
        "session_start",
        "run_register_output",
        "find_runs",
        "workflow_decide",
    ] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    assert_eq!(found["result"]["isError"], false, "{found}");
    let runs = found["result"]["structuredContent"]["runs"]
        .as_array()
        .unwrap_or_else(|| panic!("{found}"));
    assert_eq!(runs.len(), 2, "{found}");
    assert_eq!(found["result"]["structuredContent"]["total"], 4, "{found}");
}

/// The resident memory of process `pid` in KiB (`VmRSS`), on Linux.
fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap()
}

/// Appends `turns` exchanges to a Claude Code log.
fn append_turns(log: &std::path::Path, session: &str, from: usize, turns: usize) {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .unwrap();
    for n in from..from + turns {
        for (ty, message) in [
            (
                "user",
                serde_json::json!({"role": "user", "content": format!("step {n}")}),
            ),
            (
                "assistant",
                serde_json::json!({"id": format!("msg_{n}"), "role": "assistant", "model": "claude-sonnet-4-5",
                    "content": [{"type": "text", "text": format!("done: step {n} {}", "x".repeat(2000))}],
                    "usage": {"input_tokens": 10, "output_tokens": 5}}),
            ),
        ] {
            let uuid = format!(
                "00000000-0000-4000-8000-{:012}",
                n * 2 + usize::from(ty == "assistant")
            );
            let line = serde_json::json!({"type": ty, "sessionId": session, "uuid": uuid,
                "timestamp": "2026-11-26T10:00:00.000Z", "cwd": "/w", "requestId": format!("req_{n}"),
                "message": message});
            writeln!(f, "{line}").unwrap();
        }
    }
}

/// Runs `logbook hook` with a Claude Code event of `session`.
fn claude_hook(t: &TestProject, event: &str, session: &str, log: &std::path::Path) {
    let payload = serde_json::json!({"session_id": session, "transcript_path": log,
        "cwd": t.root(), "hook_event_name": event, "source": "startup"});
    let mut child = t
        .cmd(&["hook"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.to_string().as_bytes())
        .unwrap();
    assert!(child.wait().unwrap().success());
    // A Stop only queues its import: its detached worker does it.
    let queue = t.path(".logbook/hooks/queue");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while std::fs::read_dir(&queue).is_ok_and(|mut d| d.next().is_some()) {
        assert!(
            std::time::Instant::now() < deadline,
            "the hook's worker did not finish"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// 100 pages follow one live session while it grows (each holds its
/// stream and, as the page's script does, fetches its last turn and those
/// after it on every change): the server's resident memory grows by less than 64 MiB, and
/// the streams all end when the session does.
#[test]
#[allow(clippy::print_stderr)] // the figures, for whoever reads the run
fn a_hundred_live_pages_stay_within_bounded_memory() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::{Duration, Instant};

    const PAGES: usize = 100;
    const ROUNDS: usize = 8;
    if !cfg!(target_os = "linux") {
        return; // VmRSS is read from /proc
    }
    let t = TestProject::new();
    t.run(&["init"]).ok();
    let session = "cccccccc-1111-4222-8333-444455556666";
    let log = t.path(&format!("home/.claude/projects/-w/{session}.jsonl"));
    std::fs::create_dir_all(log.parent().unwrap()).unwrap();
    append_turns(&log, session, 0, 50);
    claude_hook(&t, "SessionStart", session, &log);
    claude_hook(&t, "Stop", session, &log);
    let (child, url) = serve(&t, &["--bind", "127.0.0.1:0"], None);
    // Ended however the test ends: a server left behind would hold the
    // test's output open.
    struct Ending(std::process::Child);
    impl Drop for Ending {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let child = Ending(child);
    let server = child.0.id();
    let addr = url
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string();
    let page = format!("/transcripts/{session}");
    // Warm: the runtime's threads, the templates, one stream.
    for _ in 0..3 {
        assert!(get(&url, &page, "").starts_with("HTTP/1.1 200"));
    }
    let before = rss_kib(server);
    let events = Arc::new(AtomicUsize::new(0));
    let ended = Arc::new(AtomicUsize::new(0));
    let following = Arc::new(AtomicUsize::new(0));
    let readers: Vec<_> = (0..PAGES)
        .map(|_| {
            let (addr, url, page) = (addr.clone(), url.clone(), page.clone());
            let (events, ended) = (events.clone(), ended.clone());
            let following = following.clone();
            std::thread::spawn(move || {
                // As the page's script does: the whole page once, then its
                // last turn and those after it on each change.
                let turns = |r: &str| {
                    assert!(r.starts_with("HTTP/1.1 200"), "{r}");
                    r.matches("<div class=\"msg ").count()
                };
                let mut shown = turns(&get(&url, &page, ""));
                let mut c = TcpStream::connect(&addr).unwrap();
                c.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
                write!(
                    c,
                    "GET /api/live?view=transcript&id={} HTTP/1.1\r\nHost: {addr}\r\n\r\n",
                    page.trim_start_matches("/transcripts/")
                )
                .unwrap();
                let mut r = BufReader::new(c);
                let mut line = String::new();
                let mut seen = 0;
                while r.read_line(&mut line).is_ok_and(|n| n > 0) {
                    if let Some(data) = line.trim_end().strip_prefix("data: ") {
                        seen += 1;
                        if seen == 1 {
                            following.fetch_add(1, Ordering::SeqCst);
                        }
                        if data.ends_with(" ended") {
                            ended.fetch_add(1, Ordering::SeqCst);
                            break;
                        }
                        if seen > 1 {
                            events.fetch_add(1, Ordering::SeqCst);
                            let from = shown.saturating_sub(1);
                            let fresh = get(&url, &format!("{page}?turns_from={from}"), "");
                            shown = from + turns(&fresh);
                        }
                    }
                    line.clear();
                }
            })
        })
        .collect();
    // Every page holds its stream, and has its first stamp, before the
    // session grows: a growth it did not follow yet would not count.
    let deadline = Instant::now() + Duration::from_secs(60);
    while following.load(Ordering::SeqCst) < PAGES {
        assert!(Instant::now() < deadline, "the pages did not all follow");
        std::thread::sleep(Duration::from_millis(50));
    }
    let started = Instant::now();
    let mut peak = before;
    let mut samples = vec![];
    for round in 0..ROUNDS {
        let seen = events.load(Ordering::SeqCst);
        append_turns(&log, session, 50 + round * 5, 5);
        claude_hook(&t, "Stop", session, &log);
        // The round lasts until the pages have taken the growth in (each
        // fetched the page again), its memory sampled meanwhile.
        let deadline = Instant::now() + Duration::from_secs(60);
        while events.load(Ordering::SeqCst) < seen + PAGES {
            assert!(
                Instant::now() < deadline,
                "round {round}: the pages did not all see the session grow within 60 s"
            );
            peak = peak.max(rss_kib(server));
            std::thread::sleep(Duration::from_millis(50));
        }
        samples.push(rss_kib(server));
    }
    claude_hook(&t, "SessionEnd", session, &log);
    for r in readers {
        r.join().unwrap();
    }
    let held = started.elapsed();
    let after = rss_kib(server);
    drop(child);
    let grown = peak.max(after).saturating_sub(before);
    eprintln!(
        "{PAGES} live pages for {held:?}, {ROUNDS} growths: resident {before} KiB before, peak {peak} KiB (+{grown} KiB), by round {samples:?}, {after} KiB after they ended; {} changes seen",
        events.load(Ordering::SeqCst)
    );
    assert_eq!(
        ended.load(Ordering::SeqCst),
        PAGES,
        "every stream says it ended"
    );
    assert!(
        // Imports that queue behind each other under this load come as
        // one change; every page sees the session grow.
        events.load(Ordering::SeqCst) >= PAGES,
        "the pages saw the session grow"
    );
    assert!(
        grown < 64 * 1024,
        "100 live pages grew the server by {grown} KiB ({before} -> {peak})"
    );
}
