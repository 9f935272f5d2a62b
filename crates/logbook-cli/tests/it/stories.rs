//! The story suite: one set of stories told to both backends, as atuin
//! runs one `db_story` suite against each database. A machine's records
//! (runs another tool wrote with every field a filter reads, statuses,
//! lineage links, outputs with text, an imported transcript) are asked for
//! through the local index (SQLite) and, after `logbook team push`,
//! through the team catalog (PostgreSQL); each story is written once as a
//! function of the [`Scope`] and must give the same answers, field for
//! field, with `origin` added by the team's. Each story also checks its
//! local answer against what the setup wrote, so two backends that agree
//! on a wrong answer still fail.
//!
//! Driven through the real binary, and through MCP and HTTP where a story
//! has a face there.

use serde_json::{Value, json};

use crate::harness::TestProject;
use crate::pg::{Pg, machine};

/// Drops what only a team answer carries, so the rest can be compared.
fn without_origin(mut v: Value) -> Value {
    match &mut v {
        Value::Array(items) => {
            for item in items.iter_mut() {
                *item = without_origin(item.take());
            }
        }
        Value::Object(map) => {
            map.remove("origin");
            map.remove("origins");
        }
        _ => {}
    }
    v
}

/// Asserts every team answer carries this machine's name, then removes it.
fn own_origin(v: Value, origin: &str) -> Value {
    match &v {
        Value::Array(items) => {
            for item in items {
                assert_eq!(item["origin"], origin, "{item}");
            }
        }
        Value::Object(map) => {
            assert_eq!(map.get("origin").map(|o| o == origin), Some(true), "{v}")
        }
        _ => {}
    }
    without_origin(v)
}

/// Sorts a `find --json` array by run id.
fn by_id(v: &mut Value) {
    if let Value::Array(a) = v {
        a.sort_by(|x, y| x["session_id"].as_str().cmp(&y["session_id"].as_str()));
    }
}

/// Whether a `find --json` array lists its runs newest first.
fn newest_first(v: &Value) -> bool {
    let started: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["manifest"]["execution"]["started_at"].as_str().unwrap())
        .collect();
    started.windows(2).all(|w| w[0] >= w[1])
}

/// Asserts `team == local`, showing the run ids of both and the first
/// differing element instead of two whole listings.
#[track_caller]
fn same(team: &Value, local: &Value, what: &str) {
    if team == local {
        return;
    }
    let ids = |v: &Value| -> Vec<String> {
        v.as_array().map_or_else(Vec::new, |a| {
            a.iter()
                .map(|r| r["session_id"].as_str().unwrap_or("?")[..8].to_string())
                .collect()
        })
    };
    let first = match (team.as_array(), local.as_array()) {
        (Some(t), Some(l)) => t
            .iter()
            .zip(l)
            .find(|(a, b)| a != b)
            .map(|(a, b)| (a.clone(), b.clone())),
        _ => Some((team.clone(), local.clone())),
    };
    panic!(
        "{what}: the catalog answers differently\nteam  {:?}\nlocal {:?}\nfirst difference:\nteam  {}\nlocal {}",
        ids(team),
        ids(local),
        first.as_ref().map_or(String::new(), |f| f.0.to_string()),
        first.as_ref().map_or(String::new(), |f| f.1.to_string()),
    );
}

/// Which backend a story asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// The local index (SQLite).
    Local,
    /// The team catalog (PostgreSQL), after `logbook team push`.
    Team,
}

/// `args` with the flag that asks the team, in the team scope; `--json`
/// first, so each answer is one JSON value.
fn ask<'a>(scope: Scope, args: &[&'a str]) -> Vec<&'a str> {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    if scope == Scope::Team {
        all.push("--team");
    }
    all
}

/// An answer of a story: the JSON it printed (team extras and this
/// machine's `origin` removed) and what it said on stderr.
fn answer(scope: Scope, run: &crate::harness::Run) -> (Value, String) {
    let json = match (scope, run.code) {
        (_, c) if c != 0 => Value::Null,
        (Scope::Local, _) => run.json(),
        (Scope::Team, _) => own_origin(run.json(), ORIGIN),
    };
    (json, run.stderr.clone())
}

/// This machine's name in the team.
const ORIGIN: &str = "solo";

/// Forty runs as another tool writes them, plus one imported transcript;
/// the run ids, oldest first.
fn write_history(t: &TestProject) -> Vec<String> {
    // Forty runs as another tool writes them: agents, workflows, statuses,
    // users, tags and start times spread so that every filter splits them,
    // unknown fields kept, and words (some accented) in titles and outputs.
    let agents = ["casey", "pixel", "quinn"];
    let workflows = ["deep-dive-app", "deep-dive-web", "build-stories", "review"];
    let statuses = ["running", "completed", "failed", "cancelled"];
    let words = [
        "budget laptop",
        "Café crème",
        "tablet battery",
        "laptop stand",
    ];
    let dir = t.path("docs/agent-outputs");
    let mut ids = vec![];
    for i in 0..40usize {
        let id = uuid::Uuid::new_v4().to_string();
        let folder = dir.join(&id);
        std::fs::create_dir_all(&folder).unwrap();
        let text = words[i % 4];
        // Some words are only in an output file: their snippet is cut
        // from its text, which the catalog stores.
        let only_here = if i % 5 == 0 { "marmalade jars" } else { "" };
        std::fs::write(
            folder.join("notes.md"),
            format!("# Notes {i}\n{text}\n{only_here}\n"),
        )
        .unwrap();
        let related: Vec<&String> = ids.iter().rev().take(usize::from(i % 5 == 1)).collect();
        let manifest = json!({
            "version": "1.0.0",
            "session_id": id,
            "agent": {"name": agents[i % 3], "title": format!("Agent {} of {text}", i % 3)},
            "workflow": {"name": workflows[i % 4], "description": format!("{text} study")},
            "execution": {
                "started_at": format!("2026-03-{:02}T09:{:02}:00.000Z", 1 + i / 4, i % 60),
                "status": statuses[(i / 3) % 4],
                "user": if i % 2 == 0 { "ann" } else { "bob" },
            },
            "tags": if i % 3 == 0 { json!(["weekly", "laptops"]) } else { json!(["adhoc"]) },
            "related_sessions": related,
            "outputs": [{
                "file": "notes.md",
                "type": if i % 2 == 0 { "document" } else { "report" },
                "description": format!("Notes on {text}"),
                "created_at": format!("2026-03-{:02}T10:00:00.000Z", 1 + i / 4),
            }],
            "x_vendor": {"kept": i},
        });
        std::fs::write(
            folder.join("manifest.json"),
            serde_json::to_string_pretty(&manifest).unwrap(),
        )
        .unwrap();
        ids.push(id);
    }
    t.write(
        "history/s.jsonl",
        concat!(
            r#"{"type":"user","sessionId":"7c0c1d2e-3f40-4a5b-8c6d-7e8f90a1b2c3","cwd":"/work/shop","timestamp":"2026-03-02T09:00:00.000Z","uuid":"u1","message":{"role":"user","content":"Compare the laptops"}}"#,
            "\n",
            r#"{"type":"assistant","sessionId":"7c0c1d2e-3f40-4a5b-8c6d-7e8f90a1b2c3","cwd":"/work/shop","timestamp":"2026-03-02T09:00:05.000Z","uuid":"u2","requestId":"req_1","message":{"id":"msg_1","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Comparing."}],"usage":{"input_tokens":700,"output_tokens":9,"cache_read_input_tokens":4000}}}"#,
            "\n"
        ),
    );
    t.run(&["index", "sync"]).ok();
    t.run(&[
        "transcript",
        "import",
        "history/s.jsonl",
        "--format",
        "claude-code",
    ])
    .ok();

    ids
}

/// Story: find by agent, workflow, status, user, tag, time and text, with
/// limit and offset; the runs and the "N more" note.
fn find_story(t: &TestProject, scope: Scope) -> Vec<(Value, String)> {
    let finds: &[&[&str]] = &[
        &[],
        &["--limit", "100"],
        &["--agent", "pixel"],
        &["--agent", "nobody"],
        &["--workflow", "^deep-dive-"],
        &["--workflow", "review"],
        &["--workflow", "stories$"],
        &["--status", "failed"],
        &["--status", "running", "--agent", "casey"],
        &["--user", "bob"],
        &["--tag", "laptops"],
        &["--tag", "weekly", "--user", "ann"],
        &["--since", "2026-03-06"],
        &["--since", "2026-03-06T09:25:00Z", "--agent", "quinn"],
        &["--text", "laptop"],
        &["--text", "LAPTOPS budget"],
        &["--text", "cafe"],
        &["--text", "crème study"],
        &["--text", "batteries", "--status", "completed"],
        &["--text", "nothing-like-this"],
        &["--text", "marmalade"],
        &["--text", "jar laptop"],
        &["--limit", "7"],
        &["--limit", "7", "--offset", "7"],
        &["--limit", "5", "--offset", "38"],
        &[
            "--agent",
            "casey",
            "--workflow",
            "^deep",
            "--status",
            "completed",
            "--limit",
            "3",
        ],
    ];
    finds
        .iter()
        .map(|args| {
            let (mut json, stderr) =
                answer(scope, &t.run(&ask(scope, &[&["find"], *args].concat())));
            if args.contains(&"--text") {
                // Both list text matches newest first, as every find. Ties
                // in start time are broken by id ascending here and
                // descending in the catalog (its indexes' order), so the
                // runs are compared as a set: same runs, same snippets.
                assert!(newest_first(&json), "find {scope:?} {args:?}");
                by_id(&mut json);
            }
            (json, stderr)
        })
        .collect()
}

/// Story: the same finds through MCP `find_runs`, with the total and the
/// paging it reports.
fn mcp_find_story(t: &TestProject, scope: Scope) -> Vec<Value> {
    let mut m = crate::mcp::Mcp::start(t);
    [
        json!({"agent": "pixel", "limit": 5}),
        json!({"status": "failed", "offset": 2}),
        json!({"workflow": "^deep-dive-", "user": "ann"}),
        json!({"tag": "laptops", "limit": 3, "offset": 3}),
    ]
    .into_iter()
    .map(|mut args| {
        args["scope"] = json!(scope_arg(scope));
        let mut r = m.ok("find_runs", args);
        let runs = r["runs"].take();
        r["runs"] = match scope {
            Scope::Local => runs,
            Scope::Team => own_origin(runs, ORIGIN),
        };
        r
    })
    .collect()
}

/// Story: the latest output of an agent, by workflow and type; the
/// catalog answers with the file's stored text besides, which must be
/// the file's.
fn latest_output_story(t: &TestProject, scope: Scope) -> Vec<(i32, Value)> {
    [
        &["--agent", "casey"][..],
        &["--agent", "pixel", "--type", "report"],
        &["--agent", "quinn", "--workflow", "^deep-"],
        &["--agent", "casey", "--type", "data"],
        // Completed runs answer unless a status is asked (issue 45).
        &["--agent", "casey", "--status", "any"],
        &["--agent", "casey", "--status", "failed"],
        &["--agent", "casey", "--status", "running"],
    ]
    .iter()
    .map(|args| {
        let run = t.run(&ask(scope, &[&["latest-output"], *args].concat()));
        let (mut json, _) = answer(scope, &run);
        if let (Scope::Team, Some(m)) = (scope, json.as_object_mut()) {
            let text = m.remove("text").unwrap();
            m.remove("truncated");
            let path = m["path"].as_str().unwrap().to_string();
            assert_eq!(text, std::fs::read_to_string(path).unwrap());
        }
        (run.code, json)
    })
    .collect()
}

/// Story: the lineage around runs, named by a unique prefix as people
/// type them, and the error for a prefix no run has.
fn lineage_story(t: &TestProject, scope: Scope, ids: &[String]) -> Vec<(i32, Value)> {
    let mut answers: Vec<(i32, Value)> = [&ids[0], &ids[6], &ids[21], &ids[39]]
        .iter()
        .map(|id| {
            let run = t.run(&ask(scope, &["lineage", &id[..8], "--format", "json"]));
            // Each node's machine is under "origins", checked below.
            let mut json = if run.code == 0 {
                run.json()
            } else {
                Value::Null
            };
            if let Some(origins) = json.get("origins") {
                for origin in origins.as_object().unwrap().values() {
                    assert_eq!(origin, ORIGIN);
                }
            }
            json = without_origin(json);
            (run.code, json)
        })
        .collect();
    let missing = t.run(&ask(scope, &["lineage", "00000000", "--format", "json"]));
    answers.push((missing.code, Value::Null));
    answers
}

/// Story: one run shown over HTTP by a unique prefix (`/api/runs/{id}`),
/// by the viewer of this project or of the team.
fn show_story(t: &TestProject, scope: Scope, ids: &[String]) -> Vec<Value> {
    let mut args = vec!["--bind", "127.0.0.1:0"];
    if scope == Scope::Team {
        args.push("--team");
    }
    let (mut viewer, url) = crate::serve::serve(t, &args, None);
    let shown = [&ids[3], &ids[17]]
        .iter()
        .map(|id| {
            let reply = crate::serve::get(&url, &format!("/api/runs/{}", &id[..10]), "");
            let body = reply.split("\r\n\r\n").nth(1).unwrap_or_default();
            let json: Value = serde_json::from_str(body).unwrap_or(Value::Null);
            match scope {
                Scope::Local => json,
                Scope::Team => own_origin(json, ORIGIN),
            }
        })
        .collect();
    let _ = viewer.kill();
    let _ = viewer.wait();
    shown
}

/// Story: the transcripts and their measured usage.
fn transcript_story(t: &TestProject, scope: Scope) -> (Vec<Value>, Vec<Value>) {
    let lists = [
        &[][..],
        &["--source", "claude-code"],
        &["--source", "codex"],
        &["--main"],
        &["--subagents"],
        &["--model", "sonnet"],
        &["--since", "2026-03-01T00:00:00Z"],
        &["--until", "2026-01-01T00:00:00Z"],
    ]
    .iter()
    .map(|filter| {
        let args = [&["transcript", "list", "--all"][..], filter].concat();
        answer(scope, &t.run(&ask(scope, &args))).0
    })
    .collect();
    let usage = ["claude-code", "codex", "logbook"]
        .iter()
        .map(|source| {
            let args = ["transcript", "usage", "--all", "--source", source];
            t.run(&ask(scope, &args)).json()["total"].clone()
        })
        .collect();
    (lists, usage)
}

/// The MCP `scope` argument of a story's scope.
fn scope_arg(scope: Scope) -> &'static str {
    match scope {
        Scope::Local => "local",
        Scope::Team => "team",
    }
}

/// Story: the MCP read tools that take `scope` (run_show, latest_output,
/// run_lineage, transcript_list), asked in one scope; team answers with
/// their `origin` checked and removed, latest_output's stored text checked
/// against the file.
fn mcp_read_story(t: &TestProject, scope: Scope, ids: &[String]) -> Vec<Value> {
    let mut m = crate::mcp::Mcp::start(t);
    let s = scope_arg(scope);
    let mut answers = vec![];
    for id in [&ids[3], &ids[17]] {
        let shown = m.ok("run_show", json!({"id": &id[..10], "scope": s}));
        answers.push(match scope {
            Scope::Local => shown,
            Scope::Team => own_origin(shown, ORIGIN),
        });
    }
    for args in [
        json!({"agent": "casey"}),
        json!({"agent": "casey", "status": "any"}),
        json!({"agent": "casey", "status": "failed"}),
    ] {
        let mut args = args;
        args["scope"] = json!(s);
        let mut found = m.ok("latest_output", args);
        if let (Scope::Team, Some(o)) = (scope, found.as_object_mut()) {
            let text = o.remove("text").unwrap_or_default();
            o.remove("truncated");
            let path = o["path"].as_str().unwrap_or_default().to_string();
            assert_eq!(text, std::fs::read_to_string(path).unwrap());
            found = own_origin(found, ORIGIN);
        }
        answers.push(found);
    }
    for id in [&ids[6], &ids[21]] {
        let graph = m.ok("run_lineage", json!({"id": &id[..8], "scope": s}));
        if let Some(origins) = graph.get("origins") {
            assert!(
                origins.as_object().unwrap().values().all(|o| o == ORIGIN),
                "{graph}"
            );
        }
        answers.push(without_origin(graph));
    }
    let mut listed = m.ok("transcript_list", json!({"all": true, "scope": s}));
    let rows = listed["transcripts"].take();
    listed["transcripts"] = match scope {
        Scope::Local => rows,
        Scope::Team => own_origin(rows, ORIGIN),
    };
    answers.push(listed);
    answers
}

/// Story: the MCP tools that read a transcript's messages answer in the
/// local scope, and refuse the team's (the catalog keeps no messages)
/// rather than answering from this machine.
fn mcp_transcript_messages_story(t: &TestProject, id: &str) {
    let mut m = crate::mcp::Mcp::start(t);
    let loaded = m.ok("transcript_load", json!({"id": id, "scope": "local"}));
    assert_eq!(loaded["id"], id);
    assert_eq!(loaded["messages"].as_array().map(Vec::len), Some(2));
    let found = m.ok(
        "transcript_find",
        json!({"id": id, "text": "laptops", "scope": "local"}),
    );
    // The full text is built in the background: a partial answer may
    // miss the match, and says so.
    assert!(
        found["matchCount"] == 1 || found["partial"] == true,
        "{found}"
    );
    for (tool, args) in [
        ("transcript_load", json!({"id": id, "scope": "team"})),
        (
            "transcript_find",
            json!({"id": id, "text": "laptops", "scope": "team"}),
        ),
    ] {
        let message = m.err(tool, args);
        assert!(
            message.contains("invalid scope") && message.contains("does not keep"),
            "{tool}: {message}"
        );
    }
}

#[test]
fn every_story_reads_the_same_from_sqlite_and_from_postgresql() {
    let pg = Pg::start();
    let url = pg.database("team");
    let t = machine(&url, ORIGIN);
    t.run(&["team", "init"]).ok();
    let ids = write_history(&t);
    t.run(&["team", "push"]).ok();

    let local = find_story(&t, Scope::Local);
    let team = find_story(&t, Scope::Team);
    let mut answered = 0;
    for (i, ((l, l_err), (r, r_err))) in local.iter().zip(&team).enumerate() {
        same(r, l, &format!("find story {i}"));
        // "N more run(s) match" is counted by each backend on its own.
        assert_eq!(r_err, l_err, "find story {i}");
        answered += l.as_array().map_or(0, Vec::len);
    }
    assert!(
        answered > 200,
        "the queries must find something: {answered}"
    );
    // Known answers, so two backends that agree on a wrong one still fail.
    assert_eq!(local[2].0.as_array().unwrap().len(), 13, "--agent pixel");
    assert_eq!(
        local[23].0.as_array().unwrap().len(),
        7,
        "--limit 7 --offset 7"
    );
    assert!(local[23].1.contains("26 more"), "{}", local[23].1);
    let jars = &team[20].0;
    assert_eq!(jars.as_array().unwrap().len(), 8, "--text marmalade");
    assert!(
        jars[0]["snippet"].as_str().unwrap().contains("[marmalade]"),
        "{jars}"
    );

    let local = mcp_find_story(&t, Scope::Local);
    assert_eq!(mcp_find_story(&t, Scope::Team), local);
    assert_eq!(local[0]["total"], 13);
    assert_eq!(local[0]["more"], 8);

    let local = mcp_read_story(&t, Scope::Local, &ids);
    let team = mcp_read_story(&t, Scope::Team, &ids);
    for (i, (r, l)) in team.iter().zip(&local).enumerate() {
        same(r, l, &format!("MCP read story {i}"));
    }
    assert_eq!(team.len(), local.len());
    assert_eq!(local[0]["session_id"], ids[3].as_str(), "run_show");
    assert_eq!(local[2]["status"], "completed", "latest_output");
    assert!(local[2]["path"].as_str().unwrap().ends_with("notes.md"));
    assert_eq!(local[4]["status"], "failed", "latest_output status failed");
    assert!(local[5].to_string().contains(&ids[5]), "run_lineage");
    assert_eq!(local[7]["transcripts"].as_array().unwrap().len(), 1);
    let transcript = local[7]["transcripts"][0]["id"].as_str().unwrap();
    mcp_transcript_messages_story(&t, transcript);

    let local = latest_output_story(&t, Scope::Local);
    assert_eq!(latest_output_story(&t, Scope::Team), local);
    assert_eq!(local[3].0, 4, "no data output: not found");
    assert!(local[0].1["path"].as_str().unwrap().ends_with("notes.md"));
    assert_eq!(local[0].1["status"], "completed", "completed by default");
    for (i, status) in [(4, None), (5, Some("failed")), (6, Some("running"))] {
        let (code, json) = &local[i];
        assert_eq!(*code, 0, "latest-output story {i}: {json}");
        if let Some(status) = status {
            assert_eq!(json["status"], status, "latest-output story {i}");
        }
    }

    let local = lineage_story(&t, Scope::Local, &ids);
    assert_eq!(lineage_story(&t, Scope::Team, &ids), local);
    assert!(local[..4].iter().all(|(code, _)| *code == 0));
    assert_eq!(local[4].0, 4, "a prefix no run has is not found");
    // ids[6] was linked to ids[5] (every fifth run names the one before).
    let graph = local[1].1.to_string();
    assert!(graph.contains(&ids[5]), "{graph}");

    let local = show_story(&t, Scope::Local, &ids);
    assert_eq!(show_story(&t, Scope::Team, &ids), local);
    assert_eq!(local[0]["session_id"], ids[3].as_str());
    assert_eq!(local[1]["manifest"]["x_vendor"]["kept"], 17);

    let (list, usage) = transcript_story(&t, Scope::Local);
    assert_eq!(
        transcript_story(&t, Scope::Team),
        (list.clone(), usage.clone())
    );
    let counts: Vec<usize> = list.iter().map(|l| l.as_array().unwrap().len()).collect();
    assert_eq!(counts, [1, 1, 0, 1, 0, 1, 1, 0], "transcript list filters");
    assert_eq!(usage[0]["total_tokens"], 4709);
    assert_eq!(usage[1]["total_tokens"], 0);

    // A workflow named like a pattern is matched by name; the catalog
    // counts that branch and the pattern's apart, and must not count a
    // run twice or miss one.
    t.start_run("casey", "^deep-dive-", &[]);
    t.run(&["team", "push"]).ok();
    for limit in ["1", "100"] {
        let args = [
            "find",
            "--agent",
            "casey",
            "--workflow",
            "^deep-dive-",
            "--limit",
            limit,
        ];
        let (l, l_err) = answer(Scope::Local, &t.run(&ask(Scope::Local, &args)));
        let (r, r_err) = answer(Scope::Team, &t.run(&ask(Scope::Team, &args)));
        same(&r, &l, &format!("find {args:?}"));
        assert_eq!(r_err, l_err, "find {args:?}");
    }
}

/// Two runs whose ids share their first eight characters: a prefix that
/// names both is ambiguous in either scope, and a longer one is not.
#[test]
fn an_ambiguous_prefix_is_refused_by_both_backends_alike() {
    let pg = Pg::start();
    let url = pg.database("team");
    let t = machine(&url, ORIGIN);
    t.run(&["team", "init"]).ok();
    let twins = [
        "abcdef01-1111-4111-8111-111111111111",
        "abcdef01-2222-4222-8222-222222222222",
    ];
    for id in twins {
        let folder = t.path("docs/agent-outputs").join(id);
        std::fs::create_dir_all(&folder).unwrap();
        let manifest = json!({
            "version": "1.0.0",
            "session_id": id,
            "agent": {"name": "casey"},
            "workflow": {"name": "twins"},
            "execution": {"started_at": "2026-03-01T09:00:00.000Z", "status": "completed"},
            "outputs": [],
        });
        std::fs::write(folder.join("manifest.json"), manifest.to_string()).unwrap();
    }
    t.run(&["index", "sync"]).ok();
    t.run(&["team", "push"]).ok();
    for scope in [Scope::Local, Scope::Team] {
        let both = t.run(&ask(scope, &["lineage", "abcdef01"]));
        let message = both.err();
        assert!(
            twins.iter().all(|id| message.contains(id)),
            "{scope:?}: {message}"
        );
        let one = t.run(&ask(scope, &["lineage", "abcdef01-2", "--format", "json"]));
        assert_eq!(one.json()["root"], twins[1], "{scope:?}");
        assert_eq!(both.code, 1, "{scope:?}: an ambiguous id is bad input");
    }
}

/// The status line and body of a raw HTTP answer.
fn status_and_body(reply: &str) -> (&str, &str) {
    let status = reply.lines().next().unwrap_or_default();
    let body = reply.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    (status, body)
}

/// `serve --team` serves a run's tree, files and live updates from the
/// backend its pages read: this machine's run alike in both scopes,
/// another machine's from the catalog (its registered outputs as its tree,
/// an output's stored text), a file the catalog holds no text of refused
/// with where it is, and live updates that follow the catalog.
#[test]
fn serve_team_reads_tree_files_and_live_updates_from_the_catalog() {
    let pg = Pg::start();
    let url = pg.database("team");
    let here = machine(&url, ORIGIN);
    let far = machine(&url, "far-box");
    here.run(&["team", "init"]).ok();
    let ids = write_history(&here);
    here.run(&["team", "push"]).ok();

    let run = far.start_run("casey", "far-study", &[]);
    let far_id = run["session_id"].as_str().unwrap().to_string();
    let folder = std::path::PathBuf::from(run["folder"].as_str().unwrap());
    std::fs::write(folder.join("report.md"), "# Far report\nOnly on far-box.\n").unwrap();
    std::fs::write(folder.join("scratch.txt"), "never registered\n").unwrap();
    far.run(&[
        "run",
        "output",
        &far_id,
        "report.md",
        "--type",
        "report",
        "--description",
        "The far report",
    ])
    .ok();
    far.run(&["team", "push"]).ok();

    let tree = |url: &str, id: &str| {
        let reply = crate::serve::get(url, &format!("/api/runs/{id}/tree"), "");
        let (status, body) = status_and_body(&reply);
        assert!(status.contains("200"), "tree of {id}: {reply}");
        serde_json::from_str::<Value>(body).unwrap()
    };
    let file = |url: &str, id: &str, path: &str| {
        crate::serve::get(url, &format!("/api/runs/{id}/files/{path}"), "")
    };
    let own = &ids[3];

    let (mut local_viewer, local_url) =
        crate::serve::serve(&here, &["--bind", "127.0.0.1:0"], None);
    let local_tree = tree(&local_url, own);
    let local_file = file(&local_url, own, "notes.md");
    // Another machine's run is not this project's.
    let missing = file(&local_url, &far_id, "report.md");
    assert!(status_and_body(&missing).0.contains("404"), "{missing}");
    let _ = local_viewer.kill();
    let _ = local_viewer.wait();

    let (mut viewer, url) = crate::serve::serve(&here, &["--team", "--bind", "127.0.0.1:0"], None);
    // This machine's run: the same tree and file in both scopes.
    assert_eq!(tree(&url, own), local_tree);
    assert_eq!(
        status_and_body(&file(&url, own, "notes.md")).1,
        status_and_body(&local_file).1
    );
    assert!(status_and_body(&local_file).1.starts_with("# Notes 3"));

    // Another machine's run: its registered outputs stand for its folder.
    let far_tree = tree(&url, &far_id);
    let paths: Vec<&str> = far_tree["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["report.md"], "{far_tree}");
    let report = file(&url, &far_id, "report.md");
    let (status, body) = status_and_body(&report);
    assert!(status.contains("200"), "{report}");
    assert_eq!(body, "# Far report\nOnly on far-box.\n");
    // A file the catalog holds no text of: refused, saying where it is.
    let scratch = file(&url, &far_id, "scratch.txt");
    let (status, body) = status_and_body(&scratch);
    assert!(status.contains("404"), "{scratch}");
    assert!(
        body.contains("\"far-box\"") && body.contains("scratch.txt") && body.contains(&far_id),
        "{scratch}"
    );

    // Live updates watch the catalog: far's run finishing moves its stamp.
    let stamp = || {
        let reply = crate::serve::get(&url, &format!("/api/live?view=run&id={far_id}&once=1"), "");
        let (status, body) = status_and_body(&reply);
        assert!(status.contains("200"), "{reply}");
        body.trim().to_string()
    };
    let before = stamp();
    far.run(&["run", "finish", &far_id]).ok();
    far.run(&["team", "push"]).ok();
    // Stamps are shared for a second between the pages watching a view.
    std::thread::sleep(std::time::Duration::from_millis(1100));
    assert_ne!(
        stamp(),
        before,
        "the run page's stamp must follow the catalog"
    );
    let _ = viewer.kill();
    let _ = viewer.wait();
}

/// Every MCP read tool that takes `scope` refuses a value it does not
/// know, naming the two it takes, before it reads anything.
#[test]
fn every_mcp_read_tool_refuses_an_unknown_scope() {
    let t = TestProject::new();
    let mut m = crate::mcp::Mcp::start(&t);
    let id = "3f2c9d14-4b5e-4789-81ab-cdef12345678";
    for (tool, mut args) in [
        ("find_runs", json!({})),
        ("run_show", json!({"id": id})),
        ("latest_output", json!({"agent": "casey"})),
        ("run_lineage", json!({"id": id})),
        ("transcript_list", json!({})),
        ("transcript_load", json!({"id": id})),
        ("transcript_find", json!({"id": id, "text": "laptops"})),
        ("session_status", json!({})),
        ("session_list", json!({})),
        ("session_tokens", json!({})),
        ("workflow_state", json!({})),
        ("resume_context", json!({})),
        ("agent_resume", json!({})),
        ("agent_handoff", json!({"to": "codex"})),
    ] {
        args["scope"] = json!("everyone");
        let message = m.err(tool, args);
        assert!(
            message.contains("invalid scope")
                && message.contains("everyone")
                && message.contains("\"local\"")
                && message.contains("\"team\""),
            "{tool}: {message}"
        );
    }
}
