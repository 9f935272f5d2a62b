//! One story told to both backends: a machine's own records, asked for
//! through the local index and through the team catalog, must give the same
//! answers, field for field, with `origin` added by the team's. The queries
//! are the ones people type, over runs another tool wrote with every field a
//! filter reads, plus output text, lineage and an imported transcript.

use serde_json::{Value, json};

use crate::team::{Pg, machine};

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

#[test]
fn a_machines_own_records_read_the_same_from_the_catalog_as_from_its_index() {
    let pg = Pg::start();
    let url = pg.database("team");
    let t = machine(&url, "solo");
    t.run(&["team", "init"]).ok();

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
    t.run(&["team", "push"]).ok();

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
    let mut answered = 0;
    for args in finds {
        let local = t.run(&[&["--json", "find"], *args].concat());
        let team = t.run(&[&["--json", "find", "--team"], *args].concat());
        let (mut l, mut r) = (local.json(), own_origin(team.json(), "solo"));
        if args.contains(&"--text") {
            // Local text matches are ranked (bm25); the catalog keeps each
            // run's words without the counts a rank needs, and lists
            // them newest first. Same runs, same snippets.
            assert!(newest_first(&r), "find --team {args:?}");
            by_id(&mut l);
            by_id(&mut r);
        }
        same(&r, &l, &format!("find {args:?}"));
        // "N more run(s) match" is counted by each backend on its own.
        assert_eq!(team.stderr, local.stderr, "find {args:?}");
        answered += l.as_array().unwrap().len();
    }
    // A workflow named like a pattern is matched by name; the catalog
    // counts that branch and the pattern's apart, and must not count a
    // run twice or miss one.
    t.start_run("casey", "^deep-dive-", &[]);
    t.run(&["team", "push"]).ok();
    for limit in ["1", "100"] {
        let args = [
            "--agent",
            "casey",
            "--workflow",
            "^deep-dive-",
            "--limit",
            limit,
        ];
        let local = t.run(&[&["--json", "find"][..], &args].concat());
        let team = t.run(&[&["--json", "find", "--team"][..], &args].concat());
        same(
            &own_origin(team.json(), "solo"),
            &local.json(),
            &format!("find {args:?}"),
        );
        assert_eq!(team.stderr, local.stderr, "find {args:?}");
    }
    let jars = t.json(&["find", "--team", "--text", "marmalade"]);
    assert_eq!(jars.as_array().unwrap().len(), 8);
    assert!(
        jars[0]["snippet"].as_str().unwrap().contains("[marmalade]"),
        "{jars}"
    );
    assert!(
        answered > 200,
        "the queries must find something: {answered}"
    );

    for args in [
        &["--agent", "casey"][..],
        &["--agent", "pixel", "--type", "report"],
        &["--agent", "quinn", "--workflow", "^deep-"],
        &["--agent", "casey", "--type", "data"],
    ] {
        let local = t.run(&[&["--json", "latest-output"], args].concat());
        let team = t.run(&[&["--json", "latest-output", "--team"], args].concat());
        assert_eq!(team.code, local.code, "latest-output {args:?}");
        if local.code == 0 {
            let mut team = own_origin(team.json(), "solo");
            // The team answer carries the file's stored text besides.
            let text = team.as_object_mut().unwrap().remove("text").unwrap();
            team.as_object_mut().unwrap().remove("truncated");
            let local = local.json();
            let path = local["path"].as_str().unwrap();
            assert_eq!(text, std::fs::read_to_string(path).unwrap());
            same(&team, &local, &format!("latest-output {args:?}"));
        }
    }

    for id in [&ids[0], &ids[6], &ids[21], &ids[39]] {
        let local = t.json(&["lineage", id, "--format", "json"]);
        let team = t.json(&["lineage", id, "--team", "--format", "json"]);
        for origin in team["origins"].as_object().unwrap().values() {
            assert_eq!(origin, "solo");
        }
        same(&without_origin(team), &local, &format!("lineage {id}"));
    }

    let local = t.json(&["transcript", "list", "--all"]);
    let team = own_origin(t.json(&["transcript", "list", "--team"]), "solo");
    assert_eq!(team, local);
    assert_eq!(local.as_array().unwrap().len(), 1);
    let local = t.json(&["transcript", "usage", "--all"]);
    let team = t.json(&["transcript", "usage", "--all", "--team"]);
    assert_eq!(team["total"], local["total"]);
    assert_eq!(local["total"]["total_tokens"], 4709);
}
