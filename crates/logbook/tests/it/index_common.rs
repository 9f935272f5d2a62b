//! What the index's integration tests share: a project in a temp folder,
//! runs started and edited through the public operations or by hand as
//! another tool would, and the queries two indexes are compared on.

use std::path::{Path, PathBuf};

use logbook::Logbook;
use logbook::model::query::RunQuery;
use logbook::model::run::{MANIFEST_FILE, OutputType, Run, RunStatus};
use logbook::model::workflow::AgentType;
use logbook::ops::query::{self, FindOptions, Page, Scope};
use logbook::ops::run::{self, StartOptions};
use logbook::ops::{transcript, work_session, workflow};
use logbook_index::{Hit, Index, Status};
use serde_json::{Value, json};
use tempfile::TempDir;

/// A temp folder that is a project already (its `.logbook/` exists), so the
/// index lives in a file: where no project is, reads use a throwaway index.
pub(crate) fn project() -> (TempDir, Logbook) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".logbook")).unwrap();
    let p = Logbook::open(dir.path()).unwrap();
    (dir, p)
}

pub(crate) fn start_with(p: &Logbook, opts: StartOptions) -> String {
    run::start(p, opts).unwrap().session_id.to_string()
}

/// Starts a run of `agent` running `workflow`; returns its id.
pub(crate) fn start(p: &Logbook, agent: &str, workflow: &str) -> String {
    start_with(
        p,
        StartOptions {
            agent: agent.into(),
            workflow: Some(workflow.into()),
            ..StartOptions::default()
        },
    )
}

pub(crate) fn fixture(name: &str) -> PathBuf {
    Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/shared/fixtures"
    ))
    .join(name)
}

pub(crate) fn folder(p: &Logbook, id: &str) -> PathBuf {
    p.config.agent_outputs_folder.join(id)
}

pub(crate) fn manifest_path(p: &Logbook, id: &str) -> PathBuf {
    folder(p, id).join(MANIFEST_FILE)
}

/// Writes `file` into run `id`'s folder and registers it.
pub(crate) fn output(
    p: &Logbook,
    id: &str,
    file: &str,
    text: &str,
    ty: OutputType,
    description: &str,
) {
    std::fs::write(folder(p, id).join(file), text).unwrap();
    run::register_output(p, id, file, ty, description).unwrap();
}

/// Changes a manifest the way another tool would: in place, no lock, no
/// index.
pub(crate) fn edit_manifest(p: &Logbook, id: &str, change: impl FnOnce(&mut Value)) {
    let path = manifest_path(p, id);
    let mut m: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    change(&mut m);
    std::fs::write(&path, serde_json::to_string_pretty(&m).unwrap()).unwrap();
}

/// Pins `started_at` so the order of runs does not depend on the clock.
pub(crate) fn set_started(p: &Logbook, id: &str, at: &str) {
    edit_manifest(p, id, |m| m["execution"]["started_at"] = json!(at));
}

/// Every run `query` selects in `scope`, as every face finds them (no
/// page limit unless the query sets one).
pub(crate) fn found(p: &Logbook, scope: Scope, query: &RunQuery) -> Page {
    let query = RunQuery {
        limit: Some(query.limit.unwrap_or(RunQuery::MAX_PAGING)),
        ..query.clone()
    };
    query::find(p, &query, FindOptions::new(scope)).unwrap()
}

/// The ids of a page of [`found`], in its order.
pub(crate) fn found_ids(page: &Page) -> Vec<String> {
    page.hits.iter().map(|h| h.run.id.to_string()).collect()
}

pub(crate) fn ids(hits: &[Hit]) -> Vec<String> {
    hits.iter().map(|h| h.run.id.to_string()).collect()
}

pub(crate) fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

pub(crate) fn find(index: &Index, query: RunQuery) -> Vec<Hit> {
    index.read().find_runs(&query).unwrap()
}

pub(crate) fn by_agent(agent: &str) -> RunQuery {
    RunQuery {
        agent: Some(agent.into()),
        ..RunQuery::default()
    }
}

pub(crate) fn by_text(text: &str) -> RunQuery {
    RunQuery {
        text: Some(text.into()),
        ..RunQuery::default()
    }
}

pub(crate) fn by_tag(tag: &str) -> RunQuery {
    RunQuery {
        tag: Some(tag.into()),
        ..RunQuery::default()
    }
}

/// The counts of `index status`, in a comparable form:
/// runs, outputs, edges, work sessions, transcripts, workflow states,
/// corrupt, pending.
pub(crate) fn counts(s: &Status) -> [u64; 8] {
    [
        s.runs,
        s.outputs,
        s.edges,
        s.work_sessions,
        s.transcripts,
        s.workflow_states,
        s.corrupt,
        s.pending,
    ]
}

pub(crate) fn remove_index(p: &Logbook) {
    let db = p.index_path();
    assert!(db.is_file(), "{} should exist", db.display());
    for suffix in ["", "-wal", "-shm"] {
        let f = PathBuf::from(format!("{}{suffix}", db.display()));
        if f.exists() {
            std::fs::remove_file(f).unwrap();
        }
    }
}

pub(crate) fn stale(index: &Index) -> [u64; 3] {
    let s = index.upkeep().staleness().unwrap();
    [s.new, s.changed, s.deleted]
}

/// A project with a bit of everything: a work session with a workflow
/// state, four runs (outputs, lineage, tags, statuses) and a transcript.
/// Returns the run ids in start order.
pub(crate) fn populated() -> (TempDir, Logbook, Vec<String>) {
    let (dir, p) = project();
    work_session::start(
        &p,
        work_session::StartOptions {
            client: Some("ACME".into()),
            project: Some("AUDIT".into()),
            ..Default::default()
        },
    )
    .unwrap();
    workflow::invoke(
        &p,
        &workflow::Target::default(),
        workflow::Invoke {
            agent: AgentType::Analyst,
            prompt: "Gather the requirements".into(),
            ..Default::default()
        },
    )
    .unwrap();
    let a = start(&p, "alex", "intake");
    output(
        &p,
        &a,
        "notes.md",
        "The procurement of ergonomic keyboards was approved.\n",
        OutputType::Document,
        "meeting notes",
    );
    output(
        &p,
        &a,
        "data.json",
        "{\"count\": 10}\n",
        OutputType::Data,
        "raw numbers",
    );
    run::finish(&p, &a, RunStatus::Completed).unwrap();
    let b = start_with(
        &p,
        StartOptions {
            agent: "blake".into(),
            workflow: Some("design".into()),
            related: vec![a.clone()],
            tags: vec!["urgent".into()],
            ..StartOptions::default()
        },
    );
    output(
        &p,
        &b,
        "report.md",
        "Budget approved for the sales team.\n",
        OutputType::Report,
        "the design report",
    );
    let c = start(&p, "alex", "intake-v2");
    run::finish(&p, &c, RunStatus::Failed).unwrap();
    let d = start(&p, "casey", "build");
    run::link(&p, &d, &b).unwrap();
    transcript::import(&p, &fixture("transcript-main.json"), false, None, None).unwrap();
    (dir, p, vec![a, b, c, d])
}

/// The queries two indexes are compared on.
pub(crate) fn queries() -> Vec<RunQuery> {
    vec![
        RunQuery::default(),
        by_agent("alex"),
        RunQuery {
            workflow: Some("^intake".into()),
            ..RunQuery::default()
        },
        RunQuery {
            status: Some("completed".into()),
            ..RunQuery::default()
        },
        by_tag("urgent"),
        by_text("keyboards"),
        by_text("budget approved"),
        RunQuery {
            limit: Some(2),
            offset: 1,
            ..RunQuery::default()
        },
    ]
}

pub(crate) fn answers(index: &Index) -> Vec<Vec<(Run, Option<String>)>> {
    queries()
        .into_iter()
        .map(|q| {
            find(index, q)
                .into_iter()
                .map(|h| (h.run, h.snippet))
                .collect()
        })
        .collect()
}

/// A connection of its own to the index file: reads and checks what no
/// public call exposes, without the sync or repair an open does.
pub(crate) fn raw(p: &Logbook) -> rusqlite::Connection {
    rusqlite::Connection::open(p.index_path()).unwrap()
}
