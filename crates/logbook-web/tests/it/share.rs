//! The shared page (`logbook transcript export ID --html`, issue 50) in
//! headless Chromium: one self-contained file showing every page of a
//! session as the viewer does, nothing loaded or run, links and images
//! inert, hostile text still text, secrets redacted.

use logbook::model::secrets::Kind;
use logbook::model::secrets::samples::sample;
use logbook_web::share::{self, Format};
use serde_json::json;

use crate::browser::browser;
use crate::harness::{CLAUDE_ID, HOSTILE, Served};

const ID: &str = "5e0c7a1b-9d2f-4b6e-8a3c-1f2e3d4c5b6a";

/// A session of 450 messages (three pages) saying every kind of secret,
/// hostile HTML and Markdown with links and an image.
fn planted(p: &logbook::Logbook) {
    let mut messages = vec![];
    for i in 0..150 {
        let (_, text) = sample(Kind::ALL[i % Kind::ALL.len()], 50);
        messages.push(json!({"role": "user", "blocks": [{"type": "text",
            "content": format!("message {i}: {text} {HOSTILE}")}]}));
        messages.push(json!({"role": "assistant", "blocks": [
            {"type": "text", "text": format!("**answer {i}** [a link](https://evil.example/{i}) ![pixel](https://evil.example/{i}.png) <a href=\"javascript:alert(3)\">x</a>")},
            {"type": "tool_use", "id": format!("t{i}"), "name": "Bash", "input": {"command": format!("echo '{text}' {HOSTILE}")}}]}));
        messages.push(json!({"role": "user", "blocks": [{"type": "tool_result", "tool_use_id": format!("t{i}"),
            "content": format!("{text}\n</pre></code>{HOSTILE}")}]}));
    }
    let mut t: logbook::model::transcript::Transcript = serde_json::from_value(json!({
        "id": ID, "version": "1.0.0", "messages": messages,
        "metadata": {"workdir": "/tmp/app", "startedAt": "2026-01-18T10:30:00.000Z",
                     "lastActiveAt": "2026-01-18T10:42:07.512Z", "latestTotalTokens": 5}
    }))
    .unwrap();
    logbook::ops::transcript::save(p, &mut t, logbook::model::transcript::Kind::Main).unwrap();
}

fn export(p: &logbook::Logbook, id: &str, format: Format, redact: bool) -> String {
    let mut out = vec![];
    share::write(p, id, format, redact, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn the_shared_page_is_self_contained_inert_and_redacted() {
    let s = Served::with_agent_logs();
    let p = s.project();
    planted(&p);
    let html = export(&p, ID, Format::Html, true);
    // One file: the stylesheet inline, nothing to fetch, no script.
    assert!(html.contains("<style>"));
    for banned in [
        "<script", "<link", "<img", "src=\"", "href=\"", "<iframe", "<form",
    ] {
        assert!(!html.contains(banned), "{banned} in the page");
    }
    assert!(html.contains("Content-Security-Policy\" content=\"default-src 'none'"));
    // Every message of every page, in order.
    let first = html.find("message 0:").unwrap();
    let last = html.find("message 149:").unwrap();
    assert!(first < last);
    assert_eq!(html.matches("answer ").count(), 150);
    for k in Kind::ALL {
        let (secret, _) = sample(k, 50);
        assert!(!html.contains(&secret), "{k} left in the page");
        assert!(html.contains(&format!("[REDACTED:{k}]")), "{k}");
    }
    // Asked for, the secrets stay.
    let raw = export(&p, ID, Format::Html, false);
    assert!(raw.contains(&sample(Kind::AnthropicKey, 50).0));
    assert!(raw.contains("not redacted"));

    let Some(b) = browser() else { return };
    let dir = tempfile::tempdir().unwrap();
    for (name, id) in [("planted", ID), ("claude", CLAUDE_ID)] {
        let file = dir.path().join(format!("{name}.html"));
        std::fs::write(&file, export(&p, id, Format::Html, true)).unwrap();
        let dom = b.dom(&format!("file://{}", file.display()));
        // The hostile text is on the page as text, and no element of it
        // was made: no script, image or link at all.
        assert!(
            dom.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{name}: hostile text not shown"
        );
        for banned in ["<script", "<img", "<a ", "<iframe", "onerror=\""] {
            assert!(!dom.contains(banned), "{name}: {banned} in the DOM");
        }
        assert!(
            dom.contains("class=\"card tool-card\""),
            "{name}: no tool cards"
        );
    }
    let dom = b.dom(&format!(
        "file://{}",
        dir.path().join("planted.html").display()
    ));
    assert!(dom.contains("message 149:"));
    assert!(
        dom.contains("<strong>answer 7</strong>"),
        "Markdown is drawn"
    );
    assert!(dom.contains("a link"), "a link keeps its text");
}

#[test]
fn markdown_shows_every_message_inert_and_redacted() {
    let s = Served::with_agent_logs();
    let p = s.project();
    planted(&p);
    let md = export(&p, ID, Format::Markdown, true);
    assert!(md.contains("message 149"));
    for k in Kind::ALL {
        assert!(!md.contains(&sample(k, 50).0), "{k} left in the Markdown");
    }
    // No raw HTML, image or link survives outside a code block.
    let prose: String = md.split("```").step_by(2).collect::<Vec<_>>().join("");
    for banned in ["<script", "<img", "](http", "<a href"] {
        assert!(!prose.contains(banned), "{banned} in the Markdown");
    }
    let _ = export(&p, CLAUDE_ID, Format::Markdown, true);
}
