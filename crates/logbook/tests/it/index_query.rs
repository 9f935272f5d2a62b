//! What the index answers: full text with snippets, counts, the latest
//! output, lineage, work sessions, workflow states and transcripts, each
//! kept up to date by the writes of the public operations.

use jiff::tz::TimeZone;
use logbook::Logbook;
use logbook::model::query::RunQuery;
use logbook::model::run::{OutputType, RunStatus};
use logbook::model::workflow::AgentType;
use logbook::ops::query::Scope;
use logbook::ops::run::{self};
use logbook::ops::{transcript, work_session, workflow};
use logbook_index::Index;

use crate::index_common::*;

#[test]
fn full_text_finds_words_of_output_files_with_a_snippet() {
    let (_dir, p) = project();
    let a = start(&p, "alex", "intake");
    output(
        &p,
        &a,
        "notes.md",
        "The procurement of ergonomic keyboards was approved.\n",
        OutputType::Document,
        "meeting notes",
    );
    let b = start(&p, "blake", "design");
    output(
        &p,
        &b,
        "other.md",
        "Nothing about peripherals here.\n",
        OutputType::Document,
        "unrelated",
    );
    let index = Index::open_synced(&p).unwrap();

    let hits = find(&index, by_text("ergonomic"));
    assert_eq!(ids(&hits), [a.as_str()]);
    assert_eq!(
        hits[0].snippet.as_deref(),
        Some("The procurement of [ergonomic] keyboards was approved.")
    );
    // Every word must match; case does not matter; each hit is marked.
    let hits = find(&index, by_text("KEYBOARDS ergonomic"));
    assert_eq!(ids(&hits), [a.as_str()]);
    assert_eq!(
        hits[0].snippet.as_deref(),
        Some("The procurement of [ergonomic] [keyboards] was approved.")
    );
    assert!(find(&index, by_text("ergonomic peripherals")).is_empty());
    assert_eq!(ids(&find(&index, by_text("peripherals"))), [b.as_str()]);
    assert!(find(&index, by_text("zebra")).is_empty());

    // Words of the manifest itself (an output's description) are found
    // too, the snippet cut from the manifest's text.
    let hits = find(&index, by_text("meeting"));
    assert_eq!(ids(&hits), [a.as_str()]);
    let snippet = hits[0].snippet.as_deref().unwrap();
    assert!(snippet.contains("[meeting] notes"), "{snippet}");

    // Text combines with the other filters.
    let q = RunQuery {
        agent: Some("blake".into()),
        ..by_text("ergonomic")
    };
    assert!(find(&index, q).is_empty());
    assert_eq!(
        found_ids(&found(&p, Scope::Local, &by_text("ergonomic"))),
        [a]
    );
}

#[test]
fn a_runs_full_text_follows_every_change_and_is_kept_when_nothing_changed() {
    let (_dir, p) = project();
    let a = start(&p, "alex", "intake");
    output(
        &p,
        &a,
        "a.md",
        "alpha words\n",
        OutputType::Document,
        "first notes",
    );
    let segments = |p: &Logbook| -> i64 {
        raw(p)
            .query_row("SELECT count(*) FROM runs_fts_data", [], |r| r.get(0))
            .unwrap()
    };
    let text = |words: &str| ids(&find(&Index::open_synced(&p).unwrap(), by_text(words)));
    assert_eq!(text("alpha"), [a.as_str()]);

    // The same output registered again: the same text, no new FTS segment.
    let before = segments(&p);
    run::register_output(&p, &a, "a.md", OutputType::Document, "first notes").unwrap();
    assert_eq!(segments(&p), before, "the unchanged text was indexed again");
    assert_eq!(text("alpha"), [a.as_str()]);

    // The file rewritten, then registered again: the new words replace
    // the old ones (the index is told through the write, not a re-read).
    std::fs::write(folder(&p, &a).join("a.md"), "bravo instead\n").unwrap();
    run::register_output(&p, &a, "a.md", OutputType::Document, "first notes").unwrap();
    assert_eq!(text("bravo"), [a.as_str()]);
    assert!(text("alpha").is_empty());
    // A new description, and a new output.
    run::register_output(&p, &a, "a.md", OutputType::Document, "charlie notes").unwrap();
    assert_eq!(text("charlie"), [a.as_str()]);
    assert!(text("first").is_empty());
    output(&p, &a, "b.md", "delta\n", OutputType::Data, "second");
    assert_eq!(text("delta bravo charlie second"), [a.as_str()]);
    // Finishing changes no searchable text, and loses none.
    run::finish(&p, &a, RunStatus::Completed).unwrap();
    assert_eq!(text("delta bravo charlie"), [a.as_str()]);
}

#[test]
fn a_text_count_stops_at_its_cap() {
    let (_dir, p) = project();
    let runs: Vec<String> = (0..5).map(|_| start(&p, "alex", "intake")).collect();
    for (i, id) in runs.iter().enumerate() {
        let words = if i % 2 == 0 { "common even" } else { "common" };
        output(&p, id, "n.md", words, OutputType::Document, "notes");
        set_started(&p, id, &format!("2025-01-0{}T00:00:00.000Z", i + 1));
    }
    let index = Index::open_synced(&p).unwrap();
    Index::open(&p).unwrap().upkeep().sync().unwrap();
    let common = by_text("common");
    assert_eq!(index.read().count_runs(&common).unwrap(), 5);
    assert_eq!(index.read().count_runs_upto(&common, Some(3)).unwrap(), 3);
    assert_eq!(index.read().count_runs_upto(&common, Some(9)).unwrap(), 5);
    let even = by_text("even");
    assert_eq!(index.read().count_runs_upto(&even, Some(2)).unwrap(), 2);
    assert_eq!(index.read().count_runs_upto(&even, None).unwrap(), 3);
}

#[test]
fn latest_output_is_the_newest_runs_last_output_of_the_type() {
    let (_dir, p) = project();
    let old = start(&p, "alex", "intake");
    output(&p, &old, "old.md", "old", OutputType::Report, "old report");
    let new = start(&p, "alex", "intake");
    output(&p, &new, "draft.md", "d", OutputType::Document, "draft");
    output(
        &p,
        &new,
        "final.md",
        "f",
        OutputType::Report,
        "final report",
    );
    output(&p, &new, "numbers.json", "{}", OutputType::Data, "numbers");
    // The newest run of all has no output yet: it is passed over.
    let empty = start(&p, "alex", "intake");
    let design = start(&p, "alex", "design");
    output(
        &p,
        &design,
        "design.md",
        "x",
        OutputType::Report,
        "design report",
    );
    let blake = start(&p, "blake", "intake");
    output(
        &p,
        &blake,
        "b.md",
        "b",
        OutputType::Report,
        "blake's report",
    );
    for (id, at) in [
        (&old, "2025-01-01T10:00:00Z"),
        (&new, "2025-01-02T10:00:00Z"),
        (&empty, "2025-01-03T10:00:00Z"),
        (&design, "2025-01-04T10:00:00Z"),
        (&blake, "2025-01-05T10:00:00Z"),
    ] {
        set_started(&p, id, at);
    }
    assert_eq!(Index::open(&p).unwrap().upkeep().sync().unwrap().indexed, 5);

    let latest = |workflow: Option<&str>, ty: Option<&str>| {
        // These runs are still running: asked for whatever their status.
        run::latest_output(
            &p,
            &run::LatestQuery {
                agent: "alex",
                workflow,
                output_type: ty,
                status: Some(run::ANY_STATUS),
            },
        )
        .map(|l| (l.run.id.to_string(), l.output.file, l.path))
    };
    let (id, file, path) = latest(Some("^intake$"), Some("report")).unwrap();
    assert_eq!((id.as_str(), file.as_str()), (new.as_str(), "final.md"));
    assert_eq!(path, folder(&p, &new).join("final.md"));
    let (id, file, _) = latest(Some("intake"), None).unwrap();
    assert_eq!((id.as_str(), file.as_str()), (new.as_str(), "numbers.json"));
    let (id, file, _) = latest(None, Some("report")).unwrap();
    assert_eq!((id.as_str(), file.as_str()), (design.as_str(), "design.md"));
    let (id, file, _) = latest(Some("intake"), Some("document")).unwrap();
    assert_eq!((id.as_str(), file.as_str()), (new.as_str(), "draft.md"));

    let err = latest(Some("intake"), Some("artifact")).unwrap_err();
    assert!(
        matches!(&err, logbook::Error::NotFound { id, .. } if id == "alex (workflow intake, type artifact, status any)"),
        "{err:?}"
    );
    // The index answers the same without the ops layer.
    let (run, out, _) = Index::open(&p)
        .unwrap()
        .read()
        .latest_output("blake", None, Some("report"), None)
        .unwrap()
        .unwrap();
    assert_eq!(
        (run.id.as_str(), out.file.as_str()),
        (blake.as_str(), "b.md")
    );
}

#[test]
fn children_follow_link() {
    let (_dir, p) = project();
    let a = start(&p, "alex", "intake");
    let b = start(&p, "blake", "design");
    let c = start(&p, "casey", "build");
    assert!(run::link(&p, &b, &a).unwrap().1);
    assert!(run::link(&p, &c, &a).unwrap().1);
    assert!(!run::link(&p, &c, &a).unwrap().1, "already linked");
    assert!(run::link(&p, &c, &b).unwrap().1);
    assert!(run::link(&p, &a, &a).is_err());

    let index = Index::open(&p).unwrap();
    assert_eq!(
        index.read().children(&a).unwrap(),
        sorted(vec![b.clone(), c.clone()])
    );
    assert_eq!(index.read().children(&b).unwrap(), [c.as_str()]);
    assert!(index.read().children(&c).unwrap().is_empty());
    assert_eq!(index.upkeep().status().unwrap().edges, 3);
    assert!(index.read().dangling_edges().unwrap().is_empty());

    let lineage = run::lineage(&p, &c, &TimeZone::UTC).unwrap();
    assert_eq!(
        sorted(lineage.ancestors.clone()),
        sorted(vec![a.clone(), b.clone()])
    );
    assert!(lineage.descendants.is_empty());
    assert_eq!(lineage.edges.len(), 3);
    let lineage = run::lineage(&p, &a, &TimeZone::UTC).unwrap();
    assert_eq!(sorted(lineage.descendants), sorted(vec![b, c]));
    assert!(lineage.cycles.is_empty() && lineage.dangling.is_empty());
}

#[test]
fn work_session_workflow_and_transcript_writes_are_counted() {
    let (_dir, p) = project();
    let index = Index::open(&p).unwrap();
    assert_eq!(counts(&index.upkeep().status().unwrap()), [0; 8]);

    let ws = work_session::start(
        &p,
        work_session::StartOptions {
            client: Some("ACME".into()),
            project: Some("AUDIT".into()),
            ..Default::default()
        },
    )
    .unwrap();
    let status = index.upkeep().status().unwrap();
    assert_eq!((status.work_sessions, status.workflow_states), (1, 0));
    let listing = index.read().work_sessions().unwrap();
    let live: Vec<&str> = listing
        .sessions
        .iter()
        .map(|w| w.session_id.as_str())
        .collect();
    assert_eq!(live, [ws.session_id.as_str()]);
    assert!(listing.archived.is_empty() && listing.corrupt.is_empty());

    let target = workflow::Target::default();
    let invoke = |agent: AgentType| {
        workflow::invoke(
            &p,
            &target,
            workflow::Invoke {
                agent,
                prompt: "Do the work".into(),
                ..Default::default()
            },
        )
        .unwrap()
    };
    assert_eq!(invoke(AgentType::Analyst).version, 2);
    assert_eq!(index.upkeep().status().unwrap().workflow_states, 1);
    assert_eq!(invoke(AgentType::Architect).version, 3);
    assert_eq!(
        index.upkeep().status().unwrap().workflow_states,
        1,
        "the same file"
    );

    // A run started under the session is linked to it, in both records.
    let r = start(&p, "alex", "intake");
    let hits = find(&index, RunQuery::default());
    assert_eq!(
        hits[0].run.manifest.work_session(),
        Some(ws.session_id.as_str())
    );
    let listing = index.read().work_sessions().unwrap();
    assert_eq!(listing.sessions[0].agents_spawned.len(), 1);
    assert_eq!(
        counts(&index.upkeep().status().unwrap()),
        [1, 0, 0, 1, 0, 1, 0, 0],
        "run {r}"
    );

    transcript::import(&p, &fixture("transcript-main.json"), false, None, None).unwrap();
    assert_eq!(index.upkeep().status().unwrap().transcripts, 1);
    let listed = index.read().transcripts(None, None, None, None).unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].id, "6f1c2b9e-3d4a-4c5b-9e8f-1a2b3c4d5e6f");
    assert_eq!(listed[0].latest_total_tokens, 2242);
    assert_eq!(listed[0].workdir, "/home/bryan/projects/acme");
    assert!(
        index
            .read()
            .transcripts(
                Some(logbook::model::transcript::Kind::Subagent),
                None,
                None,
                None
            )
            .unwrap()
            .is_empty()
    );
    // Everything above went through the index: nothing for a sync to do.
    assert_eq!(stale(&index), [0, 0, 0]);

    // Closing moves the session and its state to the archive.
    work_session::close(&p, None, Some("done".into())).unwrap();
    let listing = index.read().work_sessions().unwrap();
    assert!(listing.sessions.is_empty());
    let archived: Vec<&str> = listing
        .archived
        .iter()
        .map(|w| w.session_id.as_str())
        .collect();
    assert_eq!(archived, [ws.session_id.as_str()]);
    let status = index.upkeep().status().unwrap();
    assert_eq!((status.work_sessions, status.workflow_states), (1, 1));
}

#[test]
fn closing_a_session_moves_its_workflow_state_in_the_index_too() {
    let (_dir, p) = project();
    let ws = work_session::start(&p, work_session::StartOptions::default()).unwrap();
    workflow::invoke(
        &p,
        &workflow::Target::default(),
        workflow::Invoke::default(),
    )
    .unwrap();
    let index = Index::open(&p).unwrap();
    assert_eq!(stale(&index), [0, 0, 0]);

    work_session::close(&p, None, None).unwrap();
    let id = logbook::model::ids::WorkSessionId::parse(&ws.session_id).unwrap();
    let archived = id.state_file(&p.config.session_archive_dir);
    assert!(archived.is_file());
    let indexed: Vec<String> = raw(&p)
        .prepare("SELECT path FROM workflow_states")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<std::result::Result<_, _>>()
        .unwrap();
    assert_eq!(indexed, [archived.to_string_lossy()]);
    assert_eq!(stale(&index), [0, 0, 0]);
}
