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
