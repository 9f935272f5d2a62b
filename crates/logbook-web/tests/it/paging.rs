//! A long transcript's page: 200 messages at a time, `?at=N#mN` lands on
//! message N, calls and results paired across the pages' edges, bad paging
//! refused, and the API paging the same messages.

use logbook::Logbook;
use logbook::model::transcript::{Kind, Message, Transcript};
use serde_json::{Value, json};

use crate::harness::{HOSTILE, Served};

/// The transcript's id.
pub(crate) const ID: &str = "9a9e0000-0000-4000-8000-0000000a9e00";
/// Its message count: five pages and a bit.
const TOTAL: usize = 1050;

fn message(v: Value) -> Message {
    serde_json::from_value(v).unwrap()
}

/// A session of [`TOTAL`] messages, saved through the library: text
/// mostly, and three calls whose results fall across page edges (a call
/// at 199 answered at 200; a hostile command at 399 answered at 400) and a
/// call at 600 answered at 601, within one page.
pub(crate) fn served() -> Served {
    Served::demo_with(None, |root| {
        let p = Logbook::open(root).unwrap();
        let mut t = Transcript::new(ID, root.to_string_lossy());
        for i in 0..TOTAL {
            let call = |id: &str, cmd: &str| {
                json!({"role": "assistant", "blocks": [{"type": "tool", "id": id, "name": "Bash",
                    "parameters": json!({"command": cmd}).to_string()}]})
            };
            let result = |id: &str, out: &str| json!({"role": "user", "blocks": [{"type": "tool_result", "toolUseId": id, "result": out}]});
            t.messages.push(message(match i {
                199 => call("edge", "make across-the-edge"),
                200 => result("edge", "built-on-the-next-page"),
                399 => call("hostile", HOSTILE),
                400 => result("hostile", "hostile-result"),
                600 => call("inside", "make inside"),
                601 => result("inside", "built-inside"),
                _ => json!({"role": if i % 2 == 0 { "user" } else { "assistant" },
                    "blocks": [{"type": "text", "content": format!("said-{i}-here")}]}),
            }));
        }
        logbook::ops::transcript::save(&p, &mut t, Kind::Main).unwrap();
    })
}

fn page(s: &Served, target: &str) -> String {
    let r = s.get(target);
    assert_eq!(r.status, 200, "{target}: {}", r.text());
    r.text()
}

fn anchor(n: usize) -> String {
    format!("id=\"m{n}\"")
}

#[test]
fn a_long_transcript_is_shown_a_page_at_a_time() {
    let s = served();
    let first = page(&s, &format!("/transcripts/{ID}"));
    assert!(first.contains("messages 1–200 of 1,050"), "{first}");
    assert!(first.contains(&anchor(0)) && first.contains(&anchor(199)));
    assert!(!first.contains(&anchor(200)) && !first.contains("said-200-here"));
    assert!(first.contains("said-198-here") && !first.contains("said-202-here"));
    assert!(first.contains(&format!("href=\"/transcripts/{ID}?page=2\" rel=\"next\"")));
    assert!(first.contains(&format!("href=\"/transcripts/{ID}?page=6\" rel=\"last\"")));
    assert!(!first.contains("rel=\"prev\"") && !first.contains("rel=\"first\""));

    // `?at=N` is the page holding N, whose anchor is there.
    let at = page(&s, &format!("/transcripts/{ID}?at=737"));
    assert!(at.contains("messages 601–800 of 1,050"), "{at}");
    assert!(at.contains(&anchor(737)) && at.contains("said-737-here"));
    assert!(at.contains(&anchor(600)) && at.contains(&anchor(799)));
    assert!(!at.contains(&anchor(599)) && !at.contains(&anchor(800)));
    assert!(at.contains(&format!("href=\"/transcripts/{ID}?page=3\" rel=\"prev\"")));
    assert!(at.contains(&format!("href=\"/transcripts/{ID}?page=5\" rel=\"next\"")));
    // A message of results only has its anchor on its result, under the
    // call's card.
    let inside = at.find("make inside").unwrap();
    let result = at.find(&anchor(601)).unwrap();
    assert!(inside < result && at[result..].starts_with(&anchor(601)));
    assert!(
        at[..result].ends_with("<details class=\"result\" "),
        "{}",
        &at[result - 40..result]
    );
    assert!(at.contains("built-inside"));

    // Following the links, as a reader does: next from the first page.
    let next = page(&s, &format!("/transcripts/{ID}?page=2"));
    assert!(next.contains("messages 201–400 of 1,050") && next.contains(&anchor(200)));
    let last = page(&s, &format!("/transcripts/{ID}?page=6"));
    assert!(last.contains("messages 1,001–1,050 of 1,050") && last.contains(&anchor(1049)));
    assert!(!last.contains("rel=\"next\"") && last.contains("rel=\"first\""));
}

#[test]
fn calls_and_results_are_paired_across_page_edges() {
    let s = served();
    // The call ends page 1: its result, on page 2, is shown under it.
    let first = page(&s, &format!("/transcripts/{ID}"));
    let call = first.find("make across-the-edge").unwrap();
    assert!(first[call..].contains("built-on-the-next-page"));
    // Page 2 opens on the result: shown with its call's command, the
    // anchor of message 200 there.
    let second = page(&s, &format!("/transcripts/{ID}?at=200"));
    let a = second.find(&anchor(200)).unwrap();
    let cmd = second.find("make across-the-edge").unwrap();
    let out = second.find("built-on-the-next-page").unwrap();
    assert!(a < cmd && cmd < out, "{second}");
    assert!(!second.contains("result of a call not in this transcript"));
    // A hostile command read across an edge is text, on both pages.
    for target in ["?page=2", "?at=400"] {
        let html = page(&s, &format!("/transcripts/{ID}{target}"));
        assert!(html.contains("hostile-result"), "{target}");
        assert!(!html.contains("<script>alert(1)") && !html.contains("<img src=x"));
        // (Escaped as `&lt;` or `&#60;`, as the template engine chooses.)
        let html = html.replace("&#60;", "&lt;").replace("&#62;", "&gt;");
        assert!(
            html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{target}"
        );
    }
}

#[test]
fn bad_paging_is_refused_and_past_the_end_is_the_last_page() {
    let s = served();
    for q in [
        "at=abc",
        "at=-1",
        "at=1.5",
        "page=0",
        "page=x",
        "at=1&page=2",
    ] {
        let r = s.get(&format!("/transcripts/{ID}?{q}"));
        assert_eq!(r.status, 400, "{q}: {}", r.text());
        assert!(r.text().starts_with("bad request: "), "{q}");
    }
    for q in ["at=1050", "at=99999999", "page=7", "page=99999999999"] {
        let html = page(&s, &format!("/transcripts/{ID}?{q}"));
        assert!(html.contains("messages 1,001–1,050 of 1,050"), "{q}");
        assert!(html.contains(&anchor(1049)), "{q}");
    }
    // A session without messages: any page is its one (empty) page.
    let p = s.project();
    let empty = "e0e0e0e0-0000-4000-8000-0000000e0e0e";
    let mut t = Transcript::new(empty, s.root.to_string_lossy());
    logbook::ops::transcript::save(&p, &mut t, Kind::Main).unwrap();
    for q in ["at=5", "page=99999999999", "at=0"] {
        let html = page(&s, &format!("/transcripts/{empty}?{q}"));
        assert!(
            html.contains("No messages.") && !html.contains("rel=\"next\""),
            "{q}"
        );
    }
}

#[test]
fn the_api_gives_the_whole_transcript_or_a_window_of_it() {
    let s = served();
    let whole = s.get_json(&format!("/api/transcripts/{ID}"));
    let all = whole["messages"].as_array().unwrap();
    assert_eq!(all.len(), TOTAL);
    assert!(whole.get("window").is_none());
    let w = s.get_json(&format!("/api/transcripts/{ID}?offset=199&limit=3"));
    assert_eq!(w["messages"].as_array().unwrap()[..], all[199..202]);
    assert_eq!(
        w["window"],
        json!({"offset": 199, "count": 3, "total": TOTAL})
    );
    assert_eq!(
        (&w["id"], &w["metadata"]),
        (&whole["id"], &whole["metadata"])
    );
    let tail = s.get_json(&format!("/api/transcripts/{ID}?offset=1040"));
    assert_eq!(tail["messages"].as_array().unwrap().len(), 10);
    let past = s.get_json(&format!("/api/transcripts/{ID}?offset=5000&limit=10"));
    assert_eq!(
        past["window"],
        json!({"offset": TOTAL, "count": 0, "total": TOTAL})
    );
    assert_eq!(s.get(&format!("/api/transcripts/{ID}?limit=x")).status, 400);
}

/// A Claude Code session of `n` prompts of `pad` bytes each, imported.
fn served_big_log(n: usize, pad: usize) -> (Served, String) {
    let id = "b1a90000-0000-4000-8000-00000000b1a9".to_string();
    let log_id = id.clone();
    let s = Served::demo_with(None, move |root| {
        use std::io::Write as _;
        let dir = root.join("agent-logs");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{log_id}.jsonl"));
        let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        let text = "x".repeat(pad);
        for i in 0..n {
            let line = json!({
                "type": "user", "sessionId": log_id, "cwd": "/w/big",
                "uuid": format!("00000000-0000-4000-8000-{i:012}"),
                "timestamp": "2026-01-18T10:00:00.000Z",
                "message": {"role": "user", "content": format!("prompt-{i} {text}")},
            });
            writeln!(f, "{line}").unwrap();
        }
        f.flush().unwrap();
        drop(f);
        let p = Logbook::open(root).unwrap();
        let r = logbook::ops::transcript::import_path(
            &p,
            &path,
            logbook::ops::transcript::ImportFormat::Auto,
            None,
        )
        .unwrap();
        assert_eq!(r.imported.len(), 1, "{r:?}");
    });
    (s, id)
}

#[test]
fn a_window_of_the_api_carries_only_its_own_raw_lines() {
    let (n, pad) = (4000, 1000);
    let (s, id) = served_big_log(n, pad);
    let whole = s.get(&format!("/api/transcripts/{id}"));
    assert_eq!(whole.status, 200);
    // The whole answer holds every message and every line: two copies of
    // the log, at least.
    assert!(whole.body.len() > 2 * n * pad, "{}", whole.body.len());
    let r = s.get(&format!("/api/transcripts/{id}?offset=1990&limit=5"));
    assert_eq!(r.status, 200, "{}", r.text());
    // Five messages and their five lines, plus the head: a few KiB, not MiB.
    assert!(r.body.len() < 40 * pad, "{} bytes", r.body.len());
    let w: Value = serde_json::from_slice(&r.body).unwrap();
    let messages = w["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 5);
    let raw = w["rawLines"].as_array().unwrap();
    assert_eq!(raw.len(), 5, "{:?}", w["window"]);
    assert_eq!(
        w["window"]["rawLines"],
        json!({"first": 1991, "count": 5, "total": n})
    );
    for (m, line) in messages.iter().zip(raw) {
        let no = m["metadata"]["line"].as_u64().unwrap();
        assert!(
            line.as_str()
                .unwrap()
                .contains(&format!("\"prompt-{} ", no - 1)),
            "message of line {no}"
        );
    }
    // The first window has the lines before its first message too; a
    // window past the end has none.
    let first = s.get_json(&format!("/api/transcripts/{id}?limit=2"));
    assert_eq!(first["rawLines"].as_array().unwrap().len(), 2);
    let past = s.get_json(&format!("/api/transcripts/{id}?offset={}", n + 5));
    assert_eq!(past["rawLines"], json!([]));
    assert_eq!(past["window"]["rawLines"]["total"], n);
}
