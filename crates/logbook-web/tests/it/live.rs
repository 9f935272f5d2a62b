//! Live sessions: a transcript page open in a real browser follows its
//! session as it grows, keeps the reader's place, and stops when the
//! session ends; the list marks live sessions and filters to them; pages
//! of other sessions and other pages of the same one do not change.
//!
//! The browser is headless Chromium driven over the DevTools protocol (a
//! WebSocket on loopback, spoken here with the standard library only), so
//! the test can scroll, wait and read the DOM while the session grows.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use logbook::ops::transcript::{ImportFormat, live};
use serde_json::{Value, json};

use crate::browser::browser;
use crate::harness::{CLAUDE_ID, CODEX_ID, HOSTILE, Served};

/// Headless Chromium with a DevTools port, killed when dropped.
struct Chromium {
    child: Child,
    port: u16,
    _profile: tempfile::TempDir,
}

impl Chromium {
    fn launch(bin: &Path) -> Chromium {
        let profile = tempfile::tempdir().unwrap();
        let dir = profile.path();
        let child = Command::new(bin)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--hide-scrollbars",
                "--remote-debugging-port=0",
                "--window-size=1280,900",
            ])
            .arg(format!("--user-data-dir={}", dir.join("profile").display()))
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(dir.join("stdout.txt")).unwrap())
            .stderr(std::fs::File::create(dir.join("stderr.txt")).unwrap())
            .spawn()
            .unwrap();
        // Chromium writes the port it chose here once it listens.
        let active = dir.join("profile/DevToolsActivePort");
        let port = wait_for("the DevTools port", Duration::from_secs(30), || {
            std::fs::read_to_string(&active)
                .ok()
                .and_then(|t| t.lines().next()?.trim().parse::<u16>().ok())
        });
        Chromium {
            child,
            port,
            _profile: profile,
        }
    }

    /// A new tab showing `url`, loaded.
    fn open(&self, url: &str) -> Tab {
        let mut c = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        write!(
            c,
            "PUT /json/new?{url} HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\n\r\n",
            self.port
        )
        .unwrap();
        // Chromium keeps the connection open: read as far as its length.
        c.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let mut r = BufReader::new(c);
        let mut line = String::new();
        let mut len = 0;
        loop {
            line.clear();
            r.read_line(&mut line).unwrap();
            if line == "\r\n" || line.is_empty() {
                break;
            }
            if let Some((k, v)) = line.split_once(':')
                && k.eq_ignore_ascii_case("content-length")
            {
                len = v.trim().parse().unwrap();
            }
        }
        let mut body = vec![0u8; len];
        r.read_exact(&mut body).unwrap();
        let target: Value = serde_json::from_slice(&body).unwrap_or_else(|e| {
            panic!(
                "no target from /json/new ({e}): {}",
                String::from_utf8_lossy(&body)
            )
        });
        let ws = target["webSocketDebuggerUrl"].as_str().unwrap().to_string();
        let mut tab = Tab::connect(&ws);
        tab.until(
            "the page loads",
            "location.protocol === 'http:' && document.readyState === 'complete'",
        );
        tab
    }
}

impl Drop for Chromium {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One tab, over its DevTools WebSocket.
struct Tab {
    ws: TcpStream,
    next: u64,
}

impl Tab {
    fn connect(url: &str) -> Tab {
        let rest = url.strip_prefix("ws://").unwrap();
        let (host, path) = rest.split_at(rest.find('/').unwrap());
        let mut ws = TcpStream::connect(host).unwrap();
        ws.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        write!(
            ws,
            "GET {path} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        )
        .unwrap();
        let mut r = BufReader::new(ws.try_clone().unwrap());
        let mut line = String::new();
        r.read_line(&mut line).unwrap();
        assert!(line.contains(" 101 "), "no WebSocket: {line}");
        while line != "\r\n" {
            line.clear();
            r.read_line(&mut line).unwrap();
        }
        Tab { ws, next: 0 }
    }

    fn send(&mut self, text: &str) {
        let bytes = text.as_bytes();
        let mut frame = vec![0x81u8];
        match bytes.len() {
            n if n < 126 => frame.push(0x80 | n as u8),
            n if n <= 0xFFFF => {
                frame.push(0x80 | 126);
                frame.extend_from_slice(&(n as u16).to_be_bytes());
            }
            n => {
                frame.push(0x80 | 127);
                frame.extend_from_slice(&(n as u64).to_be_bytes());
            }
        }
        let mask = [0x5a, 0x17, 0xc3, 0x88];
        frame.extend_from_slice(&mask);
        frame.extend(bytes.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
        self.ws.write_all(&frame).unwrap();
    }

    /// The next whole text message.
    fn receive(&mut self) -> String {
        let mut message = vec![];
        loop {
            let mut head = [0u8; 2];
            self.ws.read_exact(&mut head).unwrap();
            let len = match head[1] & 0x7f {
                126 => {
                    let mut b = [0u8; 2];
                    self.ws.read_exact(&mut b).unwrap();
                    u64::from(u16::from_be_bytes(b))
                }
                127 => {
                    let mut b = [0u8; 8];
                    self.ws.read_exact(&mut b).unwrap();
                    u64::from_be_bytes(b)
                }
                n => u64::from(n),
            };
            let mut payload = vec![0u8; usize::try_from(len).unwrap()];
            self.ws.read_exact(&mut payload).unwrap();
            message.extend(payload);
            if head[0] & 0x80 != 0 {
                return String::from_utf8(message).unwrap();
            }
        }
    }

    /// The value of `expression` evaluated in the page.
    fn eval(&mut self, expression: &str) -> Value {
        self.next += 1;
        let id = self.next;
        let call = json!({"id": id, "method": "Runtime.evaluate",
            "params": {"expression": expression, "returnByValue": true}});
        self.send(&call.to_string());
        loop {
            let reply: Value = serde_json::from_str(&self.receive()).unwrap();
            if reply["id"] == id {
                if let Some(e) = reply["result"].get("exceptionDetails") {
                    panic!("{expression}: {e}");
                }
                return reply["result"]["result"]["value"].clone();
            }
        }
    }

    /// Waits (at most 20 s) until `expression` is true in the page.
    #[track_caller]
    fn until(&mut self, what: &str, expression: &str) {
        wait_for(what, Duration::from_secs(20), || {
            (self.eval(expression) == Value::Bool(true)).then_some(())
        });
    }
}

#[track_caller]
fn wait_for<T>(what: &str, limit: Duration, mut check: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = check() {
            return v;
        }
        assert!(start.elapsed() < limit, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The Claude Code log of [`Served::with_agent_logs`], to grow.
fn claude_log(s: &Served) -> PathBuf {
    s.root
        .join(format!("agent-logs/claude/-w-demo/{CLAUDE_ID}.jsonl"))
}

/// Appends `turns` prompt-and-answer pairs to the Claude Code log, the
/// answers saying `said` and their number, and imports them as `import
/// --watch` does (which also marks the session live).
fn grow(s: &Served, from: usize, turns: usize, said: &str) {
    let mut lines = String::new();
    for n in from..from + turns {
        for (ty, message) in [
            (
                "user",
                json!({"role": "user", "content": format!("question {n}")}),
            ),
            (
                "assistant",
                json!({"id": format!("grow{n}"), "type": "message", "role": "assistant",
                    "model": "claude-opus-4-5", "content": [{"type": "text", "text": format!("{said} {n}")}],
                    "usage": {"input_tokens": 1, "output_tokens": 1}}),
            ),
        ] {
            let line = json!({
                "parentUuid": null, "isSidechain": false, "cwd": "/w/demo",
                "sessionId": CLAUDE_ID, "type": ty, "message": message,
                "uuid": format!("00000000-0000-4000-a000-{:012}", n * 2 + usize::from(ty == "assistant")),
                "timestamp": "2026-01-18T10:30:00.000Z",
            });
            lines.push_str(&line.to_string());
            lines.push('\n');
        }
    }
    let log = claude_log(s);
    let mut f = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    f.write_all(lines.as_bytes()).unwrap();
    drop(f);
    live::import_watched(&s.project(), &log, ImportFormat::ClaudeCode).unwrap();
}

/// The JSON list's `live` of `id`.
fn listed_live(s: &Served, id: &str) -> bool {
    let list = s.get_json("/api/transcripts");
    let row = list
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id)
        .unwrap_or_else(|| panic!("{id} not listed"));
    row["live"].as_bool().unwrap()
}

const MAIN_TEXT: &str = "document.querySelector('main').textContent";

#[test]
fn a_growing_session_shows_its_new_messages_and_keeps_the_readers_place() {
    let Some(b) = browser() else { return };
    let s = Served::with_agent_logs();
    // A session long enough to scroll, then seen growing: live.
    grow(&s, 0, 20, "earlier answer");
    assert!(listed_live(&s, CLAUDE_ID));
    assert!(!listed_live(&s, CODEX_ID), "an imported rollout is over");
    let base = format!("http://{}", s.addr);
    let chromium = Chromium::launch(&b.bin);
    let mut page = chromium.open(&format!("{base}/transcripts/{CLAUDE_ID}"));
    let mut other = chromium.open(&format!("{base}/transcripts/{CODEX_ID}"));
    page.until(
        "the page listens",
        "document.getElementById('live').classList.contains('on')",
    );
    assert_eq!(
        other.eval("document.body.hasAttribute('data-live')"),
        json!(false),
        "a session that is over is not followed"
    );
    let codex_before = other.eval(MAIN_TEXT);

    // The reader scrolls up to an earlier message, then the session grows.
    page.eval("document.getElementById('m10').scrollIntoView(); window.scrollBy(0, -50); 0");
    let place = "[Math.round(window.scrollY), Math.round(document.getElementById('m10').getBoundingClientRect().top)]";
    let before = page.eval(place);
    assert!(before[0].as_i64().unwrap() > 0, "{before}");
    grow(&s, 20, 2, &format!("grown {HOSTILE}"));
    page.until(
        "the new messages appear",
        &format!("{MAIN_TEXT}.includes('question 21') && {MAIN_TEXT}.includes('grown')"),
    );
    assert_eq!(page.eval(place), before, "the reader's place moved");
    // The new text is text: nothing of it became an element.
    assert_eq!(
        page.eval("document.querySelectorAll('main script, main [onerror]').length"),
        json!(0)
    );
    // At the end, the page follows the end.
    page.eval("window.scrollTo(0, document.documentElement.scrollHeight); 0");
    grow(&s, 22, 3, "at the end");
    page.until(
        "the end appears",
        &format!("{MAIN_TEXT}.includes('at the end 24')"),
    );
    page.until(
        "the view follows the end",
        "window.scrollY + window.innerHeight >= document.documentElement.scrollHeight - 5",
    );

    // Another session's page did not change.
    assert_eq!(other.eval(MAIN_TEXT), codex_before);

    // The session ends: the list and the page say so, and the page stops
    // listening.
    live::ended(&s.project(), CLAUDE_ID, &logbook::clock::now_string()).unwrap();
    assert!(!listed_live(&s, CLAUDE_ID));
    page.until(
        "the page says the session ended",
        "document.getElementById('live').textContent === 'ended' && !document.querySelector('main .chip-live')",
    );
    let ended = page.eval(MAIN_TEXT);
    grow(&s, 25, 1, "after the end");
    // An absence has no moment to wait for: the page is watched, and must
    // stay as it was, for as long as a listening page takes to change (the
    // server looks once a second, a polling page every 3 s).
    let watched = Instant::now();
    while watched.elapsed() < Duration::from_secs(3) {
        assert_eq!(page.eval(MAIN_TEXT), ended, "an ended page still listens");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn the_list_marks_live_sessions_and_shows_only_them() {
    let Some(b) = browser() else { return };
    let s = Served::with_agent_logs();
    grow(&s, 0, 1, "answer");
    let base = format!("http://{}", s.addr);
    let chromium = Chromium::launch(&b.bin);
    let mut list = chromium.open(&format!("{base}/transcripts"));
    let chip = |id: &str| format!("!!document.querySelector('tr[data-id=\"{id}\"] .chip-live')");
    assert_eq!(list.eval(&chip(CLAUDE_ID)), json!(true));
    assert_eq!(list.eval(&chip(CODEX_ID)), json!(false));
    // The chip follows the session: its last message.
    let href = list.eval(&format!(
        "document.querySelector('tr[data-id=\"{CLAUDE_ID}\"] .chip-live').getAttribute('href')"
    ));
    assert!(
        href.as_str().unwrap().contains("?at=") && href.as_str().unwrap().contains("#m"),
        "{href}"
    );
    let mut only = chromium.open(&format!("{base}/transcripts?live=1"));
    let rows = "Array.from(document.querySelectorAll('tr[data-id]')).map(r => r.dataset.id)";
    // The session and its subagent (imported with it, so changed within
    // the last ten minutes); not the Codex rollout, which is over.
    let shown = only.eval(rows);
    assert!(
        shown.as_array().unwrap().contains(&json!(CLAUDE_ID)),
        "{shown}"
    );
    assert!(
        !shown.as_array().unwrap().contains(&json!(CODEX_ID)),
        "{shown}"
    );
    // It ends: both lists follow, without a reload.
    live::ended(&s.project(), CLAUDE_ID, &logbook::clock::now_string()).unwrap();
    list.until("the list drops the mark", &format!("!{}", chip(CLAUDE_ID)));
    only.until(
        "the live-only list empties",
        "document.querySelectorAll('tr[data-id]').length === 0",
    );
    // A bad value is refused with a sentence, as every filter.
    let bad = s.get("/transcripts?live=yes");
    assert_eq!(bad.status, 400);
    assert!(bad.text().contains("live is 1"), "{}", bad.text());
}

#[test]
fn the_last_page_grows_and_the_others_do_not_change() {
    let Some(b) = browser() else { return };
    let s = Served::with_agent_logs();
    // Past one page of 200 messages.
    grow(&s, 0, 110, "answer");
    let base = format!("http://{}", s.addr);
    let chromium = Chromium::launch(&b.bin);
    let mut first = chromium.open(&format!("{base}/transcripts/{CLAUDE_ID}?page=1"));
    let mut last = chromium.open(&format!("{base}/transcripts/{CLAUDE_ID}?page=2"));
    for tab in [&mut first, &mut last] {
        tab.until(
            "the page listens",
            "document.getElementById('live').classList.contains('on')",
        );
    }
    let turns = "document.getElementById('turns').innerHTML";
    let first_turns = first.eval(turns);
    grow(&s, 110, 2, "late answer");
    last.until(
        "the last page grows",
        &format!("{MAIN_TEXT}.includes('late answer 111')"),
    );
    // The first page's pager counts the new messages; its turns stay.
    first.until(
        "the first page's count moves",
        "document.querySelector('nav.transcript-pager').textContent.includes('of 2')",
    );
    assert_eq!(first.eval(turns), first_turns);
}

/// The server's side of a live page: one stamp a second shared by every
/// page of a view, and a stream that ends once its session is over.
#[test]
fn a_stream_says_when_its_session_ends_and_ends() {
    let s = Served::with_agent_logs();
    grow(&s, 0, 1, "answer");
    let mut c = TcpStream::connect(s.addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    write!(
        c,
        "GET /api/live?view=transcript&id={CLAUDE_ID} HTTP/1.1\r\nHost: {}\r\n\r\n",
        s.addr
    )
    .unwrap();
    let mut r = BufReader::new(c);
    let mut data = vec![];
    let mut line = String::new();
    let ended = |data: &[String]| data.iter().any(|d| d.ends_with(" ended"));
    let started = Instant::now();
    while !ended(&data) {
        line.clear();
        if r.read_line(&mut line).unwrap() == 0 {
            break;
        }
        if let Some(d) = line.trim_end().strip_prefix("data: ") {
            data.push(d.to_string());
            if data.len() == 1 {
                grow(&s, 1, 1, "more");
            } else if data.len() == 2 {
                live::ended(&s.project(), CLAUDE_ID, &logbook::clock::now_string()).unwrap();
            }
        }
        assert!(started.elapsed() < Duration::from_secs(20), "{data:?}");
    }
    assert_eq!(data.len(), 3, "first, grown, ended: {data:?}");
    // Then the server closes the stream: the chunked body's end.
    let mut rest = String::new();
    let _ = r.read_to_string(&mut rest);
    assert!(rest.contains("0\r\n\r\n") || rest.is_empty(), "{rest:?}");
    // A foreign page may not open one.
    let foreign = s.request(
        "GET",
        &format!("/api/live?view=transcript&id={CLAUDE_ID}&once=1"),
        &[("Origin", "http://evil.example")],
    );
    assert_eq!(foreign.status, 403);
}
