//! The JSON API answers with the shapes of the CLI's `--json` (the same
//! library calls), pages, and sees files other processes write.

use logbook::clock;
use logbook::model::query::RunQuery;
use logbook::ops::params::FindParams;
use logbook::ops::query::{self, FindOptions, Scope};
use logbook::ops::{run, transcript, work_session, workflow};
use serde_json::Value;

use crate::harness::Served;

fn ids(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|r| r["session_id"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn runs_are_the_find_json_array_newest_first_and_paged() {
    let s = Served::demo();
    let all = s.get_json("/api/runs");
    let p = s.project();
    let page = query::find(&p, &RunQuery::default(), FindOptions::new(Scope::Local)).unwrap();
    let expected = page.json(clock::now()).unwrap();
    assert_eq!(ids(&all), ids(&expected));
    assert_eq!(all.as_array().unwrap().len(), s.demo.runs.len());
    // Same keys and values as `find --json`, display names aside (they
    // follow the clock).
    for (a, b) in all
        .as_array()
        .unwrap()
        .iter()
        .zip(expected.as_array().unwrap())
    {
        assert_eq!(a["manifest"], b["manifest"]);
        assert_eq!(a["label"], b["label"]);
        assert_eq!(a["folder"], b["folder"]);
        let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
        assert_eq!(keys(a), keys(b));
    }
    // Newest first: the demo's runs were made oldest first.
    let mut newest_first = s.demo.runs.clone();
    newest_first.reverse();
    assert_eq!(ids(&all), newest_first);

    let r = s.get("/api/runs?limit=2&offset=1");
    assert_eq!(r.status, 200);
    assert_eq!(r.header("x-total-count"), Some("4"));
    let page: Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(ids(&page), newest_first[1..3].to_vec());
}

#[test]
fn runs_filter_by_agent_status_workflow_and_text_with_snippets() {
    let s = Served::demo();
    let all = s.get_json("/api/runs");
    let first = &all[0]["manifest"];
    let agent = first["agent"]["name"].as_str().unwrap();
    let by_agent = s.get_json(&format!("/api/runs?agent={agent}"));
    assert!(!by_agent.as_array().unwrap().is_empty());
    assert!(
        by_agent
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["manifest"]["agent"]["name"] == agent)
    );
    let none = s.get_json("/api/runs?status=cancelled");
    assert_eq!(none.as_array().unwrap().len(), 0);
    let deep = s.get_json("/api/runs?workflow=%5Edeep-dive");
    assert!(deep.as_array().unwrap().iter().all(|r| {
        r["manifest"]["workflow"]["name"]
            .as_str()
            .unwrap()
            .starts_with("deep-dive")
    }));
    let hits = s.get_json("/api/runs?q=laptops");
    let hits = hits.as_array().unwrap();
    assert!(!hits.is_empty(), "the demo is about laptops");
    assert!(
        hits[0]["snippet"]
            .as_str()
            .unwrap()
            .to_lowercase()
            .contains("[laptop"),
        "{}",
        hits[0]
    );
    let bad = s.get("/api/runs?workflow=%5B");
    assert_eq!(bad.status, 400, "{}", bad.text());
    assert!(!bad.text().contains(s.root.to_str().unwrap()));
    assert_eq!(s.get("/api/runs?limit=many").status, 400);
}

#[test]
fn bad_query_values_are_400_with_the_message_every_face_prints() {
    let s = Served::demo();
    let too_large = "9223372036854775808";
    for (target, params) in [
        (
            "/api/runs?status=bogus".to_string(),
            FindParams {
                status: Some("bogus".into()),
                ..FindParams::default()
            },
        ),
        (
            format!("/api/runs?limit={too_large}"),
            FindParams {
                limit: Some(too_large.into()),
                ..FindParams::default()
            },
        ),
        (
            format!("/api/runs?offset={too_large}"),
            FindParams {
                offset: Some(too_large.into()),
                ..FindParams::default()
            },
        ),
        (
            // A page names a remote URL only, never a folder to probe.
            "/api/runs?repo=%2Fetc".to_string(),
            FindParams {
                repo: Some("/etc".into()),
                ..FindParams::default()
            },
        ),
        (
            "/api/runs?q=laptop%00budget".to_string(),
            FindParams {
                text: Some("laptop\0budget".into()),
                ..FindParams::default()
            },
        ),
    ] {
        let r = s.get(&target);
        assert_eq!(r.status, 400, "{target}: {}", r.text());
        // The library's sentence, which the CLI prints after `error: ` and
        // MCP in its tool error.
        let expected = params.query(clock::now()).unwrap_err().to_string();
        assert_eq!(r.text(), format!("bad request: {expected}"), "{target}");
        assert!(!r.text().contains("rebuild"), "{target}");
    }
    // Operators are searched for as typed, not an error.
    for q in ["NEAR(laptops", "%22", "laptops*", "-laptops", "a:b"] {
        let r = s.get(&format!("/api/runs?q={q}"));
        assert_eq!(r.status, 200, "{q}: {}", r.text());
    }
    // The largest count SQLite takes is still a count (a page is capped).
    let r = s.get("/api/runs?limit=9223372036854775807");
    assert_eq!(r.status, 200, "{}", r.text());
}

#[test]
fn a_run_its_tree_files_and_lineage() {
    let s = Served::demo();
    let id = s.demo.runs[1].clone();
    let shown = s.get_json(&format!("/api/runs/{id}"));
    let p = s.project();
    let expected =
        serde_json::to_value(run::entry(&run::show(&p, &id).unwrap(), clock::now())).unwrap();
    assert_eq!(shown["manifest"], expected["manifest"]);
    assert_eq!(shown["label"], expected["label"]);

    let tree = s.get_json(&format!("/api/runs/{id}/tree"));
    let entries = tree["entries"].as_array().unwrap();
    assert!(!entries.is_empty());
    assert!(
        entries.iter().all(|e| e["path"] != "manifest.json"),
        "manifest hidden: {tree}"
    );
    let file = entries.iter().find(|e| e["kind"] == "file").unwrap()["path"]
        .as_str()
        .unwrap()
        .to_string();
    let r = s.get(&format!("/api/runs/{id}/files/{file}"));
    assert_eq!(r.status, 200);
    assert_eq!(
        r.body,
        std::fs::read(s.outputs().join(&id).join(&file)).unwrap()
    );
    assert_eq!(r.header("x-content-type-options"), Some("nosniff"));
    assert!(
        r.header("content-security-policy")
            .unwrap()
            .starts_with("sandbox")
    );
    let head = s.request("HEAD", &format!("/api/runs/{id}/files/{file}"), &[]);
    assert_eq!(head.status, 200);
    assert!(head.body.is_empty());

    let lineage = s.get_json(&format!("/api/runs/{id}/lineage"));
    let expected =
        serde_json::to_value(run::lineage(&p, &id, &clock::local_zone()).unwrap()).unwrap();
    assert_eq!(lineage, expected);
    assert!(!lineage["edges"].as_array().unwrap().is_empty());
}

#[test]
fn sessions_workflow_and_transcripts_as_the_cli_prints_them() {
    let s = Served::demo();
    let p = s.project();
    let list = s.get_json("/api/sessions");
    let expected =
        work_session::listing_json(&work_session::list(&p).unwrap(), true, true).unwrap();
    assert_eq!(list, expected);
    let id = &s.demo.work_session;
    let one = s.get_json(&format!("/api/sessions/{id}"));
    assert_eq!(
        one,
        work_session::get(&p, Some(id)).unwrap().to_json().unwrap()
    );
    assert!(one["indicator"].is_string() && one["percentage"].is_number());

    let state = s.get_json(&format!("/api/sessions/{id}/workflow"));
    let loaded = workflow::load(&p, Some(id)).unwrap();
    assert_eq!(state, workflow::loaded_json(&loaded, None).unwrap());
    assert!(state.get("fullHistory").is_none());
    let full = s.get_json(&format!("/api/sessions/{id}/workflow?full=1"));
    let history = full["fullHistory"].as_array().unwrap();
    assert_eq!(history.len() as u64, s.demo.invocations);

    let ts = s.get_json("/api/transcripts");
    // The page asks as a browser does: every workdir, 50 at most.
    let expected = transcript::listing::ListRequest {
        all: true,
        limit: Some(50),
        ..Default::default()
    }
    .list(&p, &transcript::listing::Caller::Browser)
    .unwrap();
    assert_eq!(ts, expected.json().unwrap());
    assert_eq!(ts.as_array().unwrap().len(), s.demo.transcripts.len());
    let tid = ts[0]["id"].as_str().unwrap();
    let t = s.get_json(&format!("/api/transcripts/{tid}"));
    assert_eq!(t["id"], tid);
    assert!(!t["messages"].as_array().unwrap().is_empty());
    let subs = s.get_json("/api/transcripts?kind=subagent");
    assert!(
        subs.as_array()
            .unwrap()
            .iter()
            .all(|t| t["kind"] == "subagent")
    );
}

#[test]
fn a_run_another_process_starts_appears_without_a_restart() {
    let s = Served::demo();
    assert_eq!(s.get_json("/api/runs").as_array().unwrap().len(), 4);
    let started = run::start(
        &s.project(),
        run::StartOptions {
            agent: "zoe".into(),
            workflow: Some("late-arrival".into()),
            ..Default::default()
        },
    )
    .unwrap();
    let runs = s.get_json("/api/runs");
    assert_eq!(runs.as_array().unwrap().len(), 5);
    assert_eq!(runs[0]["session_id"], started.session_id.as_str());
    assert_eq!(runs[0]["manifest"]["execution"]["status"], "running");
    run::finish(
        &s.project(),
        started.session_id.as_str(),
        logbook::model::run::RunStatus::Completed,
    )
    .unwrap();
    let shown = s.get_json(&format!("/api/runs/{}", started.session_id));
    assert_eq!(shown["manifest"]["execution"]["status"], "completed");
}

/// A run id in a URL follows the CLI's and MCP's rule (`RunRef`): a
/// unique prefix of at least eight characters names the run on every run
/// route, the page included; a shorter one, or one no run has, is not found.
#[test]
fn a_unique_prefix_names_the_run_on_every_route() {
    let s = Served::demo();
    let id = s.demo.runs[1].clone();
    let prefix = &id[..8];
    for (whole, short) in [
        (format!("/api/runs/{id}"), format!("/api/runs/{prefix}")),
        (
            format!("/api/runs/{id}/tree"),
            format!("/api/runs/{prefix}/tree"),
        ),
        (
            format!("/api/runs/{id}/lineage"),
            format!("/api/runs/{}/lineage", &id[..12]),
        ),
    ] {
        let (a, b) = (s.get_json(&whole), s.get_json(&short));
        assert_eq!(a["session_id"], b["session_id"], "{short}");
        assert_eq!(a.get("manifest"), b.get("manifest"), "{short}");
        assert_eq!(a.get("entries"), b.get("entries"), "{short}");
        assert_eq!(a.get("edges"), b.get("edges"), "{short}");
    }
    let tree = s.get_json(&format!("/api/runs/{id}/tree"));
    let file = tree["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "file")
        .unwrap()["path"]
        .as_str()
        .unwrap()
        .to_string();
    let raw = s.get(&format!("/api/runs/{prefix}/files/{file}"));
    assert_eq!(raw.status, 200, "{}", raw.text());
    assert_eq!(
        raw.body,
        std::fs::read(s.outputs().join(&id).join(&file)).unwrap()
    );
    let page = s.get(&format!("/runs/{prefix}"));
    assert_eq!(page.status, 200);
    assert!(page.text().contains(&id), "the page names the whole id");
    for target in [
        format!("/api/runs/{}", &id[..7]),
        "/api/runs/00000000".to_string(),
    ] {
        let r = s.get(&target);
        assert_eq!(r.status, 404, "{target}: {}", r.text());
    }
}

#[test]
fn unknown_ids_are_not_found() {
    let s = Served::demo();
    for target in [
        "/api/runs/3f2c9d14-4b5e-4789-81ab-cdef12345678",
        "/api/runs/3f2c9d14-4b5e-4789-81ab-cdef12345678/tree",
        "/api/sessions/SES202501-NOPE-NOPE",
        "/api/sessions/SES202501-NOPE-NOPE/workflow",
        "/api/transcripts/3f2c9d14-4b5e-4789-81ab-cdef12345678",
        "/api/nothing",
    ] {
        let r = s.get(target);
        assert_eq!(r.status, 404, "{target}: {}", r.text());
        assert_eq!(r.text(), "not found");
    }
}

#[test]
fn a_token_is_needed_on_every_request_and_a_link_sets_a_cookie() {
    let s = Served::demo_with(Some("s3cret-s3cret-s3cret"), |_| {});
    assert_eq!(s.get("/api/runs").status, 401);
    assert_eq!(s.get("/").status, 401);
    let ok = s.request(
        "GET",
        "/api/runs",
        &[("Authorization", "Bearer s3cret-s3cret-s3cret")],
    );
    assert_eq!(ok.status, 200);
    let link = s.get("/?token=s3cret-s3cret-s3cret&agent=casey");
    assert_eq!(link.status, 303);
    assert_eq!(link.header("location"), Some("/?agent=casey"));
    let cookie = link.header("set-cookie").unwrap();
    assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"));
    let pair = cookie.split(';').next().unwrap();
    let with_cookie = s.request("GET", "/api/runs", &[("Cookie", pair)]);
    assert_eq!(with_cookie.status, 200);
    // With a token the Host header may be anything (the token is the check).
    let remote = s.request(
        "GET",
        "/api/runs",
        &[
            ("Authorization", "Bearer s3cret-s3cret-s3cret"),
            ("Host", "logbook.example:7777"),
        ],
    );
    assert_eq!(remote.status, 200);
}

#[test]
fn beyond_loopback_a_token_is_required() {
    let project = logbook::Logbook::open(tempfile::tempdir().unwrap().path()).unwrap();
    let err = logbook_web::Server::bind(
        project.clone(),
        logbook_web::Options {
            bind: "0.0.0.0:0".parse().unwrap(),
            token: None,
            ..Default::default()
        },
    )
    .err()
    .unwrap();
    // The options are data the face words: the CLI's flags here.
    let line = err.word(logbook::error::Face::Cli);
    assert!(line.contains("--token"), "{line}");
    // A token must be long enough not to be guessed, on loopback too.
    for short in ["", "x", "fifteen-chars!!"] {
        let err = logbook_web::Server::bind(
            project.clone(),
            logbook_web::Options {
                bind: "0.0.0.0:0".parse().unwrap(),
                token: Some(short.into()),
                ..Default::default()
            },
        )
        .err()
        .unwrap_or_else(|| panic!("{short:?} was accepted"));
        let line = err.word(logbook::error::Face::Cli);
        assert!(
            line.contains("--token") && line.contains("at least 16"),
            "{line}"
        );
    }
    assert!(
        logbook_web::Server::bind(
            project,
            logbook_web::Options {
                bind: "127.0.0.1:0".parse().unwrap(),
                token: Some("sixteen-chars!!!".into()),
                ..Default::default()
            },
        )
        .is_ok()
    );
}
