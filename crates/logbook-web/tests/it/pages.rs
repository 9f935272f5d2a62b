//! The HTML pages show what the JSON says, read without JavaScript, and
//! follow changes live.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use logbook::ops::run;

use crate::harness::Served;

fn page(s: &Served, target: &str) -> String {
    let r = s.get(target);
    assert_eq!(r.status, 200, "{target}: {}", r.text());
    assert!(r.header("content-type").unwrap().starts_with("text/html"));
    r.text()
}

#[test]
fn the_run_list_groups_by_agent_filters_searches_and_pages() {
    let s = Served::demo();
    let html = page(&s, "/");
    for title in [
        "Alex the Facilitator",
        "Casey",
        "Pixel",
        "Quinn the Auditor",
    ] {
        assert!(html.contains(title), "{title} missing");
    }
    assert!(html.contains("4 runs match"));
    assert!(html.contains("badge s-running") && html.contains("badge s-completed"));
    let found = page(&s, "/?q=laptops");
    assert!(found.contains("<mark>"), "no highlighted snippet");
    let pixel = page(&s, "/?agent=pixel");
    assert!(pixel.contains("1 run matches") && !pixel.contains("Quinn the Auditor - "));
    let paged = page(&s, "/?limit=2");
    assert!(paged.contains("1–2 of 4") && paged.contains("offset=2"));
    let second = page(&s, "/?limit=2&offset=2");
    assert!(second.contains("3–4 of 4") && second.contains("Newer"));
    let bad = page(&s, "/?workflow=%5B");
    assert!(bad.contains("not a regular expression"), "{bad}");
}

#[test]
fn run_file_lineage_session_workflow_and_transcript_pages() {
    let s = Served::demo_with(None, |root| {
        let outputs = root.join("docs/agent-outputs");
        let first = std::fs::read_dir(&outputs)
            .unwrap()
            .map(|e| e.unwrap().path())
            .min()
            .unwrap();
        std::fs::write(first.join("big.txt"), "x".repeat(1024 * 1024 + 10)).unwrap();
        std::fs::write(first.join("blob.bin"), [0u8, 1, 2, 3, 0, 255]).unwrap();
        std::fs::write(first.join("pic.png"), [0x89, b'P', b'N', b'G']).unwrap();
        std::fs::write(
            first.join("evil.md"),
            "# Hi\n<script>alert(1)</script><img src=x onerror=alert(1)>",
        )
        .unwrap();
    });
    let mut runs: Vec<String> = s.demo.runs.clone();
    runs.sort();
    let first = &runs[0];
    let id = &s.demo.runs[1];
    let html = page(&s, &format!("/runs/{id}"));
    assert!(html.contains("<svg") && html.contains("Lineage graph"));
    assert!(
        !html.contains(">manifest.json</a>"),
        "manifest hidden from the tree"
    );
    assert!(html.contains("Outputs") || html.contains("OUTPUTS"));
    let r = run::show(&s.project(), id).unwrap();
    let md = &r.manifest.outputs[0].file;
    let doc = page(&s, &format!("/runs/{id}/files/{md}"));
    assert!(
        doc.contains("<article class=\"doc\"><h1>"),
        "Markdown rendered"
    );

    let evil = page(&s, &format!("/runs/{first}/files/evil.md"));
    assert!(
        !evil.contains("<script>alert") && !evil.contains("onerror"),
        "{evil}"
    );
    let big = page(&s, &format!("/runs/{first}/files/big.txt"));
    assert!(big.contains("only the first 1 MiB is shown"));
    assert!(big.len() < 1024 * 1024 + 20_000);
    let blob = page(&s, &format!("/runs/{first}/files/blob.bin"));
    assert!(blob.contains("A binary file") && blob.contains("download=1"));
    let pic = page(&s, &format!("/runs/{first}/files/pic.png"));
    assert!(pic.contains(&format!("<img src=\"/api/runs/{first}/files/pic.png\"")));

    let lineage = page(&s, &format!("/runs/{id}/lineage"));
    assert!(lineage.contains("Builds on") && lineage.contains("<svg"));
    let ws = &s.demo.work_session;
    let session = page(&s, &format!("/sessions/{ws}"));
    assert!(
        session.contains("thresholds: 80 % warning")
            && session.contains("tokens saved by isolation")
    );
    assert!(session.contains("Requirements gathered"));
    let wf = page(&s, &format!("/sessions/{ws}/workflow"));
    assert!(wf.contains("compacted") && wf.contains("Decisions") && wf.contains("Verdicts"));
    let sessions = page(&s, "/sessions");
    assert!(sessions.contains(ws.as_str()));
    let ts = page(&s, "/transcripts");
    assert!(ts.contains("subagent") && ts.contains("main"));
    let tid = s.demo.transcripts[0].clone();
    let t = page(&s, &format!("/transcripts/{tid}"));
    assert!(t.contains("class=\"msg"));
    // Assets are served from the binary.
    let css = s.get("/assets/style.css");
    assert_eq!(css.status, 200);
    assert!(css.text().contains("prefers-color-scheme: dark"));
    assert_eq!(s.get("/assets/app.js").status, 200);
}

/// Reads server-sent `data:` lines until `n` have arrived or time is up.
fn events(reader: &mut impl BufRead, n: usize, within: Duration) -> Vec<String> {
    let start = Instant::now();
    let mut out = vec![];
    let mut line = String::new();
    while out.len() < n && start.elapsed() < within {
        line.clear();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            break;
        }
        if let Some(d) = line.trim().strip_prefix("data:") {
            out.push(d.trim().to_string());
        }
    }
    out
}

#[test]
fn the_list_and_a_running_run_update_live() {
    let s = Served::demo();
    let running = s.get_json("/api/runs?status=running")[0]["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    let open = |target: &str| {
        let mut c = TcpStream::connect(s.addr).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
        write!(c, "GET {target} HTTP/1.1\r\nHost: {}\r\n\r\n", s.addr).unwrap();
        BufReader::new(c)
    };
    let mut list = open("/api/live?view=list");
    let mut one = open(&format!("/api/live?view=run&id={running}"));
    assert_eq!(events(&mut list, 1, Duration::from_secs(10)).len(), 1);
    assert_eq!(events(&mut one, 1, Duration::from_secs(10)).len(), 1);
    // Another process writes: a new run, and a file in the running run.
    run::start(
        &s.project(),
        run::StartOptions {
            agent: "zoe".into(),
            workflow: Some("late".into()),
            ..Default::default()
        },
    )
    .unwrap();
    std::fs::write(s.outputs().join(&running).join("new.md"), "# new").unwrap();
    assert_eq!(
        events(&mut list, 1, Duration::from_secs(10)).len(),
        1,
        "list did not update"
    );
    assert_eq!(
        events(&mut one, 1, Duration::from_secs(10)).len(),
        1,
        "run did not update"
    );
    let stamp = s.get("/api/live?view=list&once=1");
    assert_eq!(stamp.status, 200);
    assert_eq!(stamp.text().len(), 16);
    // A page about a running run reloads itself without JavaScript too.
    assert!(page(&s, &format!("/runs/{running}")).contains("http-equiv=\"refresh\""));
    assert!(page(&s, &format!("/runs/{running}")).contains("data-live=\"/api/live?view=run"));
}

#[test]
fn a_search_matching_more_runs_than_are_counted_says_so_and_pages_on() {
    let many = run::COUNTED_MATCHES as usize + 1;
    let s = Served::demo_with(None, |root| {
        let outputs = root.join("docs/agent-outputs");
        for i in 0..many {
            let id = format!("{i:08x}-0000-4000-8000-{i:012x}");
            let folder = outputs.join(&id);
            std::fs::create_dir_all(&folder).unwrap();
            // Minute `i` of a day: the last one written is the newest.
            let at = format!("2025-03-01T{:02}:{:02}:00.000Z", i / 60 % 24, i % 60);
            let words = if i < 3 {
                "zebrafish everywhere"
            } else {
                "everywhere"
            };
            let m = serde_json::json!({
                "session_id": id,
                "agent": {"name": "bulk", "title": "Bulk"},
                "workflow": {"name": "bulk-load", "description": words},
                "execution": {"started_at": at, "status": "completed"},
                "outputs": [],
            });
            std::fs::write(folder.join("manifest.json"), m.to_string()).unwrap();
        }
    });
    let html = page(&s, "/?q=everywhere");
    assert!(html.contains("1,000+ runs match"), "{html}");
    assert!(html.contains("offset=50"), "a next page");
    assert_eq!(html.matches("href=\"/runs/").count(), 50, "a full page");
    // Few matches: counted exactly.
    let few = page(&s, "/?q=zebrafish");
    assert!(
        few.contains("3 runs match") && !few.contains("+ runs"),
        "{few}"
    );
    // The JSON API counts as far, says the count is a lower bound and
    // where the next page begins, and lists newest first as without text.
    let api = s.get("/api/runs?q=everywhere&limit=5");
    assert_eq!(api.header("x-total-count").unwrap(), many.to_string());
    assert_eq!(api.header("x-logbook-total-exact").unwrap(), "false");
    assert_eq!(api.header("x-logbook-next-offset").unwrap(), "5");
    let runs: serde_json::Value = serde_json::from_slice(&api.body).unwrap();
    let newest = many - 1;
    assert_eq!(
        runs[0]["session_id"],
        format!("{newest:08x}-0000-4000-8000-{newest:012x}")
    );
    let few = s.get("/api/runs?q=zebrafish");
    assert_eq!(few.header("x-total-count").unwrap(), "3");
    assert_eq!(few.header("x-logbook-total-exact").unwrap(), "true");
    assert_eq!(few.header("x-logbook-next-offset"), None);
}

#[test]
fn a_run_and_the_transcripts_that_name_it_link_both_ways() {
    use logbook::model::transcript::{Kind, Transcript};
    let s = Served::demo();
    let p = s.project();
    let (run, other) = (s.demo.runs[0].clone(), s.demo.runs[1].clone());
    let save = |id: &str, run: &str| {
        let mut t = Transcript::new(id, p.root().display().to_string());
        t.messages = serde_json::from_value(serde_json::json!([
            {"role": "user", "blocks": [{"type": "text", "content": "Plan the release"}]}
        ]))
        .unwrap();
        t.metadata.extra.insert("runId".into(), run.into());
        logbook::ops::transcript::save(&p, &mut t, Kind::Main).unwrap();
    };
    let a = "7a000000-0000-4000-8000-0000000000a1";
    let b = "7b000000-0000-4000-8000-0000000000b2";
    let moved = "7c000000-0000-4000-8000-0000000000c3";
    save(a, &run);
    save(b, &run);
    // Named the run, then another: only the other links it now.
    save(moved, &run);
    save(moved, &other);
    let html = page(&s, &format!("/runs/{run}"));
    for t in [a, b] {
        assert!(
            html.contains(&format!("<a href=\"/transcripts/{t}\">{t}</a>")),
            "run page lacks {t}: {html}"
        );
    }
    // (The manifest, shown as JSON, still names it: a link does not.)
    assert!(
        !html.contains(&format!("href=\"/transcripts/{moved}\"")),
        "{html}"
    );
    let html = page(&s, &format!("/runs/{other}"));
    assert!(html.contains(&format!("href=\"/transcripts/{moved}\"")));
    // And back: each transcript page links its run.
    for (t, r) in [(a, &run), (moved, &other)] {
        let html = page(&s, &format!("/transcripts/{t}"));
        assert!(
            html.contains(&format!("<a href=\"/runs/{r}\">its run</a>")),
            "{html}"
        );
    }
}
