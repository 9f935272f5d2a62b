//! The seed's "Security & Access Control": hostile paths and requests, each
//! refused without a byte from outside the outputs folder and without a
//! path in the answer.

use std::os::unix::fs::symlink;
use std::path::Path;

use crate::harness::{Reply, Served, raw};

const SECRET: &str = "TOPSECRET-OUTSIDE-7f3a";
const FAKE: &str = "TOPSECRET-LOOKALIKE-91c2";
/// A run folder that is a symlink to a folder outside `agent-outputs`.
const LINKED_RUN: &str = "0b7c1d2e-3f40-4a5b-8c6d-7e8f90a1b2c3";
/// A run that exists only in the lookalike sibling `agent-outputs-fake`.
const FAKE_RUN: &str = "9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a";

/// The demo project plus everything an attacker would aim at: a secret
/// beside the outputs, a lookalike sibling folder, symlinks inside a run
/// that point out, a run folder that is a symlink, and agent-written HTML
/// and SVG.
fn hostile() -> (Served, String) {
    let mut run = String::new();
    let s = Served::demo_with(None, |root| {
        let outputs = root.join("docs/agent-outputs");
        std::fs::write(root.join("secret.txt"), SECRET).unwrap();
        std::fs::write(root.join("docs/secret.txt"), SECRET).unwrap();
        let fake = root.join("docs/agent-outputs-fake").join(FAKE_RUN);
        std::fs::create_dir_all(&fake).unwrap();
        std::fs::write(fake.join("x.md"), FAKE).unwrap();
        std::fs::write(fake.join("manifest.json"), "{}").unwrap();
        let elsewhere = root.join("elsewhere");
        std::fs::create_dir_all(&elsewhere).unwrap();
        std::fs::write(elsewhere.join("secret.txt"), SECRET).unwrap();
        std::fs::copy(first_manifest(&outputs), elsewhere.join("manifest.json")).unwrap();
        symlink(&elsewhere, outputs.join(LINKED_RUN)).unwrap();
        let first = first_run(&outputs);
        let dir = outputs.join(&first);
        symlink(root.join("secret.txt"), dir.join("escape.txt")).unwrap();
        symlink("../../../secret.txt", dir.join("relative-escape.txt")).unwrap();
        symlink(root, dir.join("escape_dir")).unwrap();
        symlink(root.join("docs/agent-outputs-fake"), dir.join("sibling")).unwrap();
        symlink("/etc", dir.join("etc")).unwrap();
        symlink("/dev/zero", dir.join("zero")).unwrap();
        // A second name, inside the run, for a file outside it.
        std::fs::hard_link(root.join("secret.txt"), dir.join("hard.txt")).unwrap();
        let fifo = std::process::Command::new("mkfifo")
            .arg(dir.join("pipe"))
            .status()
            .unwrap();
        assert!(fifo.success());
        std::fs::write(
            dir.join("page.html"),
            "<html><script>alert(document.cookie)</script></html>",
        )
        .unwrap();
        std::fs::write(
            dir.join("pic.svg"),
            "<svg xmlns='http://www.w3.org/2000/svg'><script>alert(1)</script></svg>",
        )
        .unwrap();
        run = first;
    });
    (s, run)
}

fn first_run(outputs: &Path) -> String {
    let mut names: Vec<String> = std::fs::read_dir(outputs)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.len() == 36 && n != LINKED_RUN)
        .collect();
    names.sort();
    names.remove(0)
}

fn first_manifest(outputs: &Path) -> std::path::PathBuf {
    outputs.join(first_run(outputs)).join("manifest.json")
}

/// A refusal: a 4xx status, a short answer, no secret, no path.
fn assert_refused(s: &Served, what: &str, r: &Reply) {
    assert!(
        (400..500).contains(&r.status),
        "{what}: answered {} {:?}",
        r.status,
        r.text()
    );
    let text = r.text();
    for leak in [
        SECRET,
        FAKE,
        s.root.to_str().unwrap(),
        "/tmp",
        "/etc",
        "root:x:",
        "agent-outputs",
    ] {
        assert!(!text.contains(leak), "{what}: leaked {leak:?} in {text:?}");
    }
    for (k, v) in &r.headers {
        assert!(
            !v.contains(s.root.to_str().unwrap()),
            "{what}: leaked a path in header {k}"
        );
    }
    assert!(text.len() < 100, "{what}: a long error: {text:?}");
}

#[test]
fn hostile_paths_are_refused_without_leaking() {
    let (s, run) = hostile();
    let files = format!("/api/runs/{run}/files/");
    let page = format!("/runs/{run}/files/");
    let long_path = "a/".repeat(3000) + "x";
    let long_name = "x".repeat(300);
    let attacks: Vec<String> = vec![
        "../../../secret.txt".into(),
        "../../secret.txt".into(),
        "..%2f..%2f..%2fsecret.txt".into(),
        "..%2F..%2F..%2Fsecret.txt".into(),
        "%2e%2e/%2e%2e/%2e%2e/secret.txt".into(),
        "%2E%2E/%2E%2E/%2E%2E/secret.txt".into(),
        "%2e%2e%2f%2e%2e%2f%2e%2e%2fsecret.txt".into(),
        "%252e%252e/%252e%252e/%252e%252e/secret.txt".into(),
        "..%252f..%252f..%252fsecret.txt".into(),
        "%25252e%25252e/secret.txt".into(),
        "..%5c..%5c..%5csecret.txt".into(),
        "..\\..\\..\\secret.txt".into(),
        "x%00.md".into(),
        "%00".into(),
        "/etc/passwd".into(),
        "%2fetc%2fpasswd".into(),
        "escape.txt".into(),
        "relative-escape.txt".into(),
        "escape_dir/secret.txt".into(),
        "escape_dir/docs/secret.txt".into(),
        format!("sibling/{FAKE_RUN}/x.md"),
        "etc/passwd".into(),
        "zero".into(),
        "pipe".into(),
        "hard.txt".into(),
        "./escape.txt".into(),
        "stories/../../secret.txt".into(),
        "a/./b".into(),
        "a//b".into(),
        "%c0%ae%c0%ae/%c0%ae%c0%ae/secret.txt".into(),
        "%ff%fe".into(),
        "C:/Windows/win.ini".into(),
        "C:%5cWindows%5cwin.ini".into(),
        "file:///etc/passwd".into(),
        long_path,
        long_name,
        String::new(),
        "..".into(),
        ".".into(),
    ];
    let mut count = 0;
    for a in &attacks {
        for prefix in [&files, &page] {
            let target = format!("{prefix}{a}");
            let r = s.get(&target);
            assert_refused(&s, &target, &r);
            count += 1;
        }
    }
    let others: Vec<String> = vec![
        "/api/runs/..%2f..%2fsecret.txt/files/x".into(),
        "/api/runs/../../secret.txt".into(),
        "/api/runs/not-a-uuid".into(),
        "/api/runs/not-a-uuid/tree".into(),
        // Shorter than the shortest prefix any face accepts (an 8-character
        // prefix names the run, as in the CLI and MCP: see api.rs).
        format!("/api/runs/{}", &run[..7]),
        format!("/api/runs/{run}%00/tree"),
        format!("/api/runs/{run}%2f..%2f..%2fsecret.txt"),
        format!("/api/runs/{}/files/secret.txt", LINKED_RUN),
        format!("/api/runs/{}/tree", LINKED_RUN),
        format!("/runs/{}", LINKED_RUN),
        format!("/api/runs/{FAKE_RUN}/files/x.md"),
        format!("/api/runs/{FAKE_RUN}/tree"),
        format!("/api/runs/{FAKE_RUN}"),
        format!("/api/runs/{run}/files/"),
        "/api/sessions/..%2f..%2fsecret".into(),
        "/api/sessions/../../secret.txt".into(),
        "/api/sessions/SES202501-A-B%2f..%2f..%2fsecret/workflow".into(),
        "/sessions/..%2f..%2fsecret".into(),
        "/api/transcripts/..%2f..%2fsecret.txt".into(),
        "/api/transcripts/../../secret.txt".into(),
        "/transcripts/..%2fsecret".into(),
        "/assets/../secret.txt".into(),
        "/assets/..%2f..%2fsecret.txt".into(),
        "/../../secret.txt".into(),
        "/%2e%2e/%2e%2e/secret.txt".into(),
        "//etc/passwd".into(),
    ];
    for target in &others {
        let r = s.get(target);
        assert_refused(&s, target, &r);
        count += 1;
    }
    assert!(count >= 40, "only {count} attacks");
}

#[test]
fn the_manifest_and_files_not_the_runs_own_are_not_served() {
    let (s, run) = hostile();
    for target in [
        format!("/api/runs/{run}/files/manifest.json"),
        format!("/runs/{run}/files/manifest.json"),
    ] {
        let r = s.get(&target);
        assert_eq!(r.status, 404, "{target}: {}", r.text());
    }
    // The manifest is the run itself: shown there.
    let shown = s.get_json(&format!("/api/runs/{run}"));
    assert_eq!(shown["session_id"], run.as_str());
    // A hard link is left out of the tree as a symlink out of the run is.
    let tree = s.get_json(&format!("/api/runs/{run}/tree"));
    let paths: Vec<&str> = tree["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["path"].as_str())
        .collect();
    assert!(paths.contains(&"page.html"), "{paths:?}");
    for hidden in ["hard.txt", "escape.txt", "manifest.json"] {
        assert!(!paths.contains(&hidden), "{hidden} listed: {paths:?}");
    }
    assert_eq!(
        s.get(&format!("/api/runs/{run}/files/hard.txt")).status,
        403
    );
}

#[test]
fn a_run_folder_linked_from_elsewhere_is_refused_by_the_page_and_the_api_alike() {
    let (s, _) = hostile();
    for target in [
        format!("/runs/{LINKED_RUN}"),
        format!("/api/runs/{LINKED_RUN}"),
    ] {
        let r = s.get(&target);
        assert_eq!(r.status, 403, "{target}: {}", r.text());
        assert_refused(&s, &target, &r);
    }
}

#[test]
fn raw_request_lines_that_bend_http_are_refused() {
    let (s, run) = hostile();
    for line in [
        format!("GET http://127.0.0.1/api/runs/{run}/files/../../../secret.txt HTTP/1.1"),
        format!("GET /api/runs/{run}/files/..\\..\\secret.txt HTTP/1.1"),
        format!("GET /api/runs/{run}/files/%2e%2e/%2e%2e/secret.txt?x=/../.. HTTP/1.0"),
        "GET ../../secret.txt HTTP/1.1".to_string(),
        "GET * HTTP/1.1".to_string(),
    ] {
        let req = format!("{line}\r\nHost: {}\r\nConnection: close\r\n\r\n", s.addr);
        let r = raw(s.addr, req.as_bytes());
        let text = r.text();
        assert!(!(200..300).contains(&r.status), "{line}: {}", r.status);
        assert!(
            !text.contains(SECRET) && !text.contains(s.root.to_str().unwrap()),
            "{line}: {text}"
        );
    }
}

#[test]
fn only_get_and_head() {
    let (s, run) = hostile();
    for (method, target) in [
        ("POST", "/api/runs".to_string()),
        ("PUT", format!("/api/runs/{run}/files/notes.md")),
        ("DELETE", format!("/api/runs/{run}")),
        ("PATCH", "/".to_string()),
        ("OPTIONS", "/api/runs".to_string()),
        ("TRACE", "/".to_string()),
        ("POST", format!("/api/runs/{run}/files/../../../secret.txt")),
        ("PROPFIND", "/".to_string()),
    ] {
        let r = s.request(method, &target, &[]);
        assert_eq!(r.status, 405, "{method} {target}");
        assert_eq!(r.header("allow"), Some("GET, HEAD"));
        assert_refused(&s, &format!("{method} {target}"), &r);
    }
    assert_eq!(s.request("HEAD", "/api/runs", &[]).status, 200);
}

#[test]
fn a_foreign_host_is_refused_without_a_token() {
    let (s, _) = hostile();
    for host in ["evil.example", "evil.example:80", "127.0.0.1.evil.example"] {
        let r = s.request("GET", "/api/runs", &[("Host", host)]);
        assert_eq!(r.status, 403, "{host}");
        assert_refused(&s, host, &r);
    }
}

#[test]
fn wrong_tokens_are_refused() {
    let s = Served::demo_with(Some("right-token-of-length"), |_| {});
    for headers in [
        vec![],
        vec![("Authorization", "Bearer wrong-token")],
        vec![("Authorization", "Bearer right-toke")],
        vec![("Authorization", "Basic cmlnaHQtdG9rZW4=")],
        vec![("Cookie", "logbook_token=wrong")],
    ] {
        let r = s.request("GET", "/api/runs", &headers);
        assert_eq!(r.status, 401, "{headers:?}");
        assert_refused(&s, "token", &r);
    }
    let r = s.get("/api/runs?token=wrong");
    assert_eq!(r.status, 401);
}

#[test]
fn agent_written_html_and_svg_cannot_run_in_the_viewer() {
    let (s, run) = hostile();
    for file in ["page.html", "pic.svg"] {
        let r = s.get(&format!("/api/runs/{run}/files/{file}"));
        assert_eq!(r.status, 200, "{file}");
        let csp = r.header("content-security-policy").unwrap();
        assert!(csp.split(';').next().unwrap().trim() == "sandbox", "{csp}");
        assert_eq!(r.header("x-content-type-options"), Some("nosniff"));
        assert_ne!(r.header("content-type"), Some("text/html"));
    }
    let html = s.get(&format!("/api/runs/{run}/files/page.html"));
    assert!(
        html.header("content-type")
            .unwrap()
            .starts_with("text/plain")
    );
    // The viewer's own pages carry a strict policy: no inline script.
    let page = s.get("/");
    let csp = page.header("content-security-policy").unwrap();
    assert!(csp.contains("default-src 'none'") && csp.contains("script-src 'self'"));
    assert!(!csp.contains("unsafe-inline"));
    assert_eq!(page.header("x-frame-options"), Some("DENY"));
}

#[test]
fn hostile_text_in_tool_calls_results_paths_and_markdown_is_escaped() {
    use crate::harness::{CLAUDE_ID, CODEX_ID};
    let s = Served::with_agent_logs();
    let page = s.get(&format!("/transcripts/{CLAUDE_ID}"));
    assert_eq!(page.status, 200);
    let html = page.text();
    // Escaped where it is text: the command, the result, the path, the
    // diff, a Task's description and another's subagent type (their cards
    // and their arguments) and the compaction's summary.
    assert!(!html.contains("<script>alert"), "{html}");
    assert!(!html.contains("<img src=x") && !html.contains("onerror=alert(2)>"));
    assert!(!html.contains("javascript:"));
    // (Escaped as `&lt;` or `&#60;`, as the template engine chooses.)
    let html = html.replace("&#60;", "&lt;").replace("&#62;", "&gt;");
    assert_eq!(
        html.matches("&lt;script&gt;alert(1)&lt;/script&gt;")
            .count(),
        9,
        "{html}"
    );
    assert!(
        html.contains("<span class=\"chip\">docs &lt;script&gt;alert(1)"),
        "the Task's subagent type is not on its card: {html}"
    );
    assert!(
        html.contains("<span class=\"muted\">Survey the tests &lt;script&gt;alert(1)"),
        "the Task's description is not on its card: {html}"
    );
    assert!(html.contains("Summary: the build was fixed &lt;script&gt;alert(1)"));
    // The subagent's page: its hostile model name is text.
    let sub = logbook::model::agent_log::subagent_id(CLAUDE_ID, crate::harness::AGENT_ID);
    let sub = s.get(&format!("/transcripts/{sub}"));
    assert_eq!(sub.status, 200);
    let sub = sub.text().replace("&#60;", "&lt;").replace("&#62;", "&gt;");
    assert!(!sub.contains("<script>alert") && !sub.contains("<img src=x"));
    assert!(
        sub.contains("<span class=\"model\">haiku &lt;script&gt;alert(1)"),
        "{sub}"
    );
    // The page keeps its strict policy.
    let csp = page.header("content-security-policy").unwrap();
    assert!(csp.contains("script-src 'self'") && !csp.contains("unsafe-inline"));
    let codex = s.get(&format!("/transcripts/{CODEX_ID}"));
    assert_eq!(codex.status, 200);
    let codex = codex
        .text()
        .replace("&#60;", "&lt;")
        .replace("&#62;", "&gt;");
    assert!(!codex.contains("<script>alert") && !codex.contains("<img src=x"));
    // Its compaction's summary, escaped.
    assert!(
        codex.contains("Summary: main.rs prints new &lt;script&gt;"),
        "{codex}"
    );
}

#[test]
fn a_hostile_transcript_title_is_text_on_the_list_page() {
    let s = crate::harness::Served::demo();
    let id = s.demo.transcripts[0].clone();
    let hostile = "<script>alert('title')</script><img src=x onerror=alert(1)> plan";
    logbook::ops::transcript::name(&s.project(), &id, hostile).unwrap();
    let r = s.get("/transcripts");
    assert_eq!(r.status, 200, "{}", r.text());
    let html = r.text();
    assert!(
        !html.contains("<script>alert") && !html.contains("<img src=x"),
        "{html}"
    );
    assert!(html.contains("&#60;script&#62;alert("), "{html}");
    // The title links to the transcript; the agent column names the source.
    assert!(html.contains(&format!("href=\"/transcripts/{id}\"")));
    assert!(html.contains("<td class=\"agent\">seed 003</td>"), "{html}");
}

#[test]
fn hostile_paging_of_a_transcript_is_a_plain_text_400() {
    let s = Served::demo();
    let id = s.demo.transcripts[0].clone();
    for q in [
        "at=%3Cscript%3Ealert(1)%3C/script%3E",
        "page=%22%3E%3Cimg%20src=x%20onerror=alert(2)%3E",
        "at=1e9999",
        "at=+5",
        "at=%205",
        "at=5%20",
        "at=1&at=2",
        "page=1&page=2",
        "page=0",
    ] {
        let r = s.get(&format!("/transcripts/{id}?{q}"));
        assert_eq!(r.status, 400, "{q}");
        // Said as text, never as a page: the message may quote the value.
        assert!(r.header("content-type").unwrap().starts_with("text/plain"));
        assert_eq!(r.header("x-content-type-options"), Some("nosniff"));
    }
}

#[test]
fn the_transcript_list_refuses_page_zero_as_a_transcript_page_does() {
    let s = Served::demo();
    for q in ["page=0", "page=+1", "page=1&offset=0", "offset=1&offset=2"] {
        let r = s.get(&format!("/transcripts?{q}"));
        assert_eq!(r.status, 400, "{q}: {}", String::from_utf8_lossy(&r.body));
    }
    assert_eq!(s.get("/transcripts?page=1").status, 200);
}

#[test]
fn the_transcript_list_api_validates_and_honours_page_as_the_list_page_does() {
    let s = Served::demo();
    for q in [
        "page=0",
        "page=+1",
        "page=%201",
        "page=1&page=2",
        "page=1&offset=0",
        "offset=1&offset=2",
    ] {
        let r = s.get(&format!("/api/transcripts?{q}"));
        assert_eq!(r.status, 400, "{q}: {}", r.text());
    }
    let all = s.get_json("/api/transcripts");
    let all = all.as_array().unwrap();
    assert!(all.len() >= 2, "the demo has transcripts: {all:?}");
    let ids = |v: &serde_json::Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|t| t["id"].as_str().unwrap().to_string())
            .collect()
    };
    // Page 2 of pages of 1 is the second transcript, as offset=1 is.
    let second = s.get_json("/api/transcripts?limit=1&page=2");
    assert_eq!(
        ids(&second),
        ids(&serde_json::Value::Array(all[1..2].to_vec()))
    );
    assert_eq!(
        ids(&second),
        ids(&s.get_json("/api/transcripts?limit=1&offset=1"))
    );
    assert_eq!(
        ids(&s.get_json("/api/transcripts?page=1")),
        ids(&serde_json::Value::Array(all.clone()))
    );
    // Past the end: an empty page, not the first one.
    let past = s.get_json(&format!("/api/transcripts?limit=1&page={}", all.len() + 1));
    assert_eq!(past, serde_json::json!([]));
}

#[test]
fn hostile_find_words_and_snippets_are_escaped() {
    use crate::harness::{CLAUDE_ID, HOSTILE};
    let s = Served::with_agent_logs();
    // The words typed, echoed in the form, the count and every link.
    let words = "oops <script>alert(1)</script>\"><img src=x onerror=alert(2)>";
    let enc: String = words.bytes().map(|b| format!("%{b:02X}")).collect();
    let page = s.get(&format!("/transcripts/{CLAUDE_ID}?find={enc}&at=0"));
    assert_eq!(page.status, 200, "{}", page.text());
    let html = page.text();
    assert!(!html.contains("<script>alert"), "{html}");
    assert!(!html.contains("<img src=x") && !html.contains("onerror=alert(2)>"));
    // A word of the hostile result: its snippet, cut from that text, is
    // text on the page.
    let page = s.get(&format!("/transcripts/{CLAUDE_ID}?find=oops"));
    let html = page.text();
    assert!(html.contains("class=\"snippet\""), "{html}");
    let snippet = html
        .split("class=\"snippet\">")
        .nth(1)
        .and_then(|s| s.split("</span>").next())
        .unwrap();
    assert!(snippet.contains("[oops]"), "{snippet}");
    assert!(
        !snippet.contains('<') && !snippet.contains('>'),
        "{snippet}"
    );
    assert!(!html.contains("<script>alert"), "{html}");
    let escaped = |html: &str| {
        html.replace("&#60;", "&lt;")
            .replace("&#62;", "&gt;")
            .matches("&lt;script&gt;alert(1)&lt;/script&gt;")
            .count()
    };
    let plain = s.get(&format!("/transcripts/{CLAUDE_ID}")).text();
    assert_eq!(
        escaped(&html),
        escaped(&plain) + 1,
        "those of the page and the snippet's: {html}"
    );
    // The API gives the snippet as JSON text, hostile or not.
    let api = s.get_json(&format!("/api/transcripts/{CLAUDE_ID}/find?q=oops"));
    assert!(
        api["matches"][0]["snippet"]
            .as_str()
            .unwrap()
            .contains(HOSTILE)
    );
    let csp = page.header("content-security-policy").unwrap();
    assert!(csp.contains("script-src 'self'") && !csp.contains("unsafe-inline"));
}
