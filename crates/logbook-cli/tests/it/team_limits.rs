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
