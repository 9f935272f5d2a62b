//! What the team catalog cannot answer (a repository, the archive, message
//! words, a workdir of this machine, which sessions are live) is refused
//! by its backend as one typed error, worded by each face for its callers:
//! the CLI names its options, MCP its arguments, the viewer answers 400.
//! Never answered as if the filter were not there.

use serde_json::json;

use crate::pg::{Pg, machine};

#[test]
fn every_face_refuses_what_the_team_scope_cannot_filter_by() {
    let pg = Pg::start();
    let url = pg.database("team");
    let t = machine(&url, "here-box");
    t.run(&["team", "init"]).ok();
    t.start_run("casey", "study", &[]);
    t.run(&["team", "push"]).ok();

    for (args, filter) in [
        (
            &["find", "--team", "--repo", "https://example.com/org/shop"][..],
            "repo",
        ),
        (&["find", "--team", "--archived"], "archived"),
        (
            &["transcript", "list", "--team", "--text", "laptops"],
            "text",
        ),
        (&["transcript", "list", "--team", "--live"], "live"),
        (
            &["transcript", "list", "--team", "--workdir", "."],
            "workdir",
        ),
    ] {
        let r = t.run(args);
        let message = r.err();
        assert!(
            message.contains(&format!("the team scope cannot filter by {filter}"))
                && message.contains(&format!("leave out --{filter}")),
            "{args:?}: {message}"
        );
    }
    // The same question without the team answers from this machine.
    assert_eq!(
        t.json(&["find", "--repo", "https://example.com/org/shop"])
            .as_array()
            .unwrap()
            .len(),
        1
    );

    let mut m = crate::mcp::Mcp::start(&t);
    for (tool, args, filter) in [
        (
            "find_runs",
            json!({"scope": "team", "repo": "https://example.com/org/shop"}),
            "repo",
        ),
        (
            "find_runs",
            json!({"scope": "team", "archived": true}),
            "archived",
        ),
    ] {
        let message = m.err(tool, args.clone());
        assert!(
            message.contains(&format!("the team scope cannot filter by {filter}"))
                && message.contains(&format!("leave out {filter} "))
                && !message.contains("--"),
            "{tool} {args}: {message}"
        );
    }
    // What the catalog does keep is answered: a transcript's repository.
    let listed = m.ok(
        "transcript_list",
        json!({"scope": "team", "repo": "https://example.com/org/shop"}),
    );
    assert_eq!(listed["transcripts"], json!([]));
    drop(m);

    let (mut viewer, base) = crate::serve::serve(&t, &["--team", "--bind", "127.0.0.1:0"], None);
    for (path, filter) in [
        ("/api/transcripts?text=laptops", "text"),
        ("/api/transcripts?live=1", "live"),
        ("/api/runs?archived=1", "archived"),
    ] {
        let reply = crate::serve::get(&base, path, "");
        assert!(
            reply.lines().next().unwrap_or_default().contains("400")
                && reply.contains(&format!("the team scope cannot filter by {filter}")),
            "{path}: {reply}"
        );
    }
    let _ = viewer.kill();
    let _ = viewer.wait();
}

/// The MCP read tools of what the catalog does not keep (work sessions,
/// workflow state, agent sessions) take `scope` like the others and refuse
/// the team's, saying why, rather than answer with this machine's records.
#[test]
fn reads_of_what_only_this_machine_keeps_refuse_the_team_scope() {
    let t = crate::harness::TestProject::new();
    t.run(&["start", "--client", "ACME"]).ok();
    let mut m = crate::mcp::Mcp::start(&t);
    // Whether the tool answers here at all (no agent session to hand over
    // from is an error), and whether two answers are alike (a resume and
    // a workflow state not yet written say when they were made).
    for (tool, mut args, answers, alike) in [
        ("session_status", json!({}), true, true),
        ("session_list", json!({}), true, true),
        ("session_tokens", json!({}), true, true),
        ("workflow_state", json!({}), true, false),
        ("resume_context", json!({}), true, false),
        ("agent_resume", json!({}), true, true),
        ("agent_handoff", json!({"to": "codex"}), false, false),
    ] {
        if answers {
            let default = m.ok(tool, args.clone());
            args["scope"] = json!("local");
            let local = m.ok(tool, args.clone());
            assert!(!alike || local == default, "{tool}: local is the default");
        }
        args["scope"] = json!("team");
        let message = m.err(tool, args);
        assert!(
            message.contains("invalid scope")
                && message.contains(tool)
                && message.contains("does not keep"),
            "{tool}: {message}"
        );
    }
}

/// `serve --team` lists every machine's transcripts and draws every
/// machine's usage, as `transcript list --team` and `transcript usage
/// --team` do: another machine's transcript is named with its machine and
/// not linked (its messages are there), and the page's live stamp follows
/// the catalog.
#[test]
fn serve_team_lists_every_machines_transcripts_and_usage() {
    let pg = Pg::start();
    let url = pg.database("team");
    let here = machine(&url, "here-box");
    let far = machine(&url, "far-box");
    here.run(&["team", "init"]).ok();
    far.write(
        "history/s.jsonl",
        concat!(
            r#"{"type":"user","sessionId":"9d0c1d2e-3f40-4a5b-8c6d-7e8f90a1b2c3","cwd":"/work/far","timestamp":"2026-03-02T09:00:00.000Z","uuid":"u1","message":{"role":"user","content":"Count the boxes"}}"#,
            "\n",
            r#"{"type":"assistant","sessionId":"9d0c1d2e-3f40-4a5b-8c6d-7e8f90a1b2c3","cwd":"/work/far","timestamp":"2026-03-02T09:00:05.000Z","uuid":"u2","requestId":"req_1","message":{"id":"msg_1","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Counting."}],"usage":{"input_tokens":300,"output_tokens":7,"cache_read_input_tokens":1000}}}"#,
            "\n"
        ),
    );
    far.run(&[
        "transcript",
        "import",
        "history/s.jsonl",
        "--format",
        "claude-code",
    ])
    .ok();
    far.run(&["team", "push"]).ok();
    let team_list = here.json(&["transcript", "list", "--team"]);
    assert_eq!(team_list.as_array().unwrap().len(), 1, "{team_list}");

    let body = |base: &str, path: &str| {
        let reply = crate::serve::get(base, path, "");
        assert!(
            reply.lines().next().unwrap_or_default().contains("200"),
            "{path}: {reply}"
        );
        reply
            .split_once("\r\n\r\n")
            .map_or(String::new(), |(_, b)| b.to_string())
    };
    let (mut local, local_base) = crate::serve::serve(&here, &["--bind", "127.0.0.1:0"], None);
    assert_eq!(body(&local_base, "/api/transcripts"), "[]");
    let _ = local.kill();
    let _ = local.wait();

    let (mut viewer, base) = crate::serve::serve(&here, &["--team", "--bind", "127.0.0.1:0"], None);
    let listed: serde_json::Value = serde_json::from_str(&body(&base, "/api/transcripts")).unwrap();
    assert_eq!(listed, team_list, "the API lists what the CLI lists");
    assert_eq!(listed[0]["origin"], "far-box");
    let page = body(&base, "/transcripts");
    assert!(page.contains("@far-box"), "{page}");
    assert!(
        !page.contains("href=\"/transcripts/9d0c1d2e"),
        "another machine's transcript is not linked: {page}"
    );
    let usage: serde_json::Value = serde_json::from_str(&body(&base, "/api/usage")).unwrap();
    assert_eq!(usage["total"]["total_tokens"], 1307, "{usage}");
    assert!(body(&base, "/usage").contains("1,307"));
    let _ = viewer.kill();
    let _ = viewer.wait();
}
