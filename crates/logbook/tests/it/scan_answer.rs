//! The first answer after an index loss: `find` by a scan of the manifests
//! on every core (`ops::query::scan`) answers what the index answers, on
//! trees another tool wrote (statuses it made up, folders without a
//! manifest, broken manifests, archived runs), and a run another writer
//! changes during the scan is answered as one of the states it was in.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use logbook::Logbook;
use logbook::model::query::{ArchiveScope, RunQuery};
use logbook::model::run::MANIFEST_FILE;
use logbook::ops::query::{Page, Scope, scan};
use proptest::prelude::*;
use serde_json::json;

use crate::index_common::{found, found_ids, project};

const AGENTS: [&str; 3] = ["alex", "casey", "sam"];
const WORKFLOWS: [&str; 3] = ["intake", "deep-dive-app", "deep-review"];
/// Another tool's own word among them: listed as written.
const STATUSES: [&str; 5] = ["running", "completed", "failed", "cancelled", "paused"];
const USERS: [Option<&str>; 3] = [Some("bryan"), Some("dana"), None];
const TAGS: [&str; 2] = ["alpha", "beta"];

/// One run folder as another tool left it.
#[derive(Debug, Clone)]
enum Left {
    /// A manifest: agent, workflow, status, user, tags (bits), started
    /// (minutes; few, so ties are common).
    Manifest(usize, usize, usize, usize, u8, u8),
    /// A folder without a manifest (status unknown).
    Absent,
    /// A manifest that is not JSON.
    Torn,
    /// JSON that is no valid manifest (no start time).
    Invalid,
}

fn left() -> impl Strategy<Value = Left> {
    prop_oneof![
        8 => (0..3usize, 0..3usize, 0..5usize, 0..3usize, 0..4u8, 0..6u8)
            .prop_map(|(a, w, s, u, t, m)| Left::Manifest(a, w, s, u, t, m)),
        1 => Just(Left::Absent),
        1 => Just(Left::Torn),
        1 => Just(Left::Invalid),
    ]
}

fn manifest_text(id: &str, left: &Left) -> Option<String> {
    let text = match *left {
        Left::Manifest(a, w, s, u, t, m) => {
            let tags: Vec<&str> = TAGS
                .iter()
                .enumerate()
                .filter(|(i, _)| t & (1 << i) != 0)
                .map(|(_, t)| *t)
                .collect();
            let mut execution = json!({
                "started_at": format!("2025-10-05T10:0{m}:00Z"),
                "status": STATUSES[s],
            });
            if let Some(user) = USERS[u] {
                execution["user"] = json!(user);
            }
            json!({
                "version": "1.0",
                "session_id": id,
                "agent": {"name": AGENTS[a], "title": "T"},
                "workflow": {"name": WORKFLOWS[w], "description": "D"},
                "execution": execution,
                "tags": tags,
            })
            .to_string()
        }
        Left::Absent => return None,
        Left::Torn => "{ torn".into(),
        Left::Invalid => json!({
            "session_id": id,
            "agent": {"name": "alex"},
            "workflow": {"name": "intake"},
            "execution": {"status": "completed"},
        })
        .to_string(),
    };
    Some(text)
}

/// Writes `left` as run `id`'s folder under `dir` (the manifest by a
/// rename, as a careful writer does).
fn write_run(dir: &Path, id: &str, left: &Left) -> PathBuf {
    let folder = dir.join(id);
    std::fs::create_dir_all(&folder).unwrap();
    match manifest_text(id, left) {
        Some(text) => {
            let tmp = folder.join(".manifest.json.tmp");
            std::fs::write(&tmp, text).unwrap();
            std::fs::rename(&tmp, folder.join(MANIFEST_FILE)).unwrap();
        }
        None => {
            let _ = std::fs::remove_file(folder.join(MANIFEST_FILE));
        }
    }
    folder
}

/// A query of `find`'s filters, as a face builds it.
#[derive(Debug, Clone)]
struct Asked {
    agent: Option<usize>,
    workflow: Option<usize>,
    status: Option<usize>,
    user: Option<usize>,
    tag: Option<usize>,
    since: Option<u8>,
    archive: usize,
    limit: Option<usize>,
    offset: usize,
}

fn asked() -> impl Strategy<Value = Asked> {
    (
        (
            proptest::option::of(0..3usize),
            proptest::option::of(0..4usize),
            proptest::option::of(0..6usize),
            proptest::option::of(0..2usize),
            proptest::option::of(0..2usize),
        ),
        (
            proptest::option::of(0..6u8),
            0..3usize,
            proptest::option::of(0..6usize),
            0..3usize,
        ),
    )
        .prop_map(
            |((agent, workflow, status, user, tag), (since, archive, limit, offset))| Asked {
                agent,
                workflow,
                status,
                user,
                tag,
                since,
                archive,
                limit,
                offset,
            },
        )
}

impl Asked {
    fn query(&self) -> RunQuery {
        RunQuery {
            agent: self.agent.map(|a| AGENTS[a].to_string()),
            // The fourth is a pattern, as the seed's `/^deep-/`.
            workflow: self
                .workflow
                .map(|w| WORKFLOWS.get(w).copied().unwrap_or("^deep-").to_string()),
            status: self
                .status
                .map(|s| STATUSES.get(s).copied().unwrap_or("unknown").to_string()),
            user: self.user.and_then(|u| USERS[u]).map(str::to_string),
            tag: self.tag.map(|t| TAGS[t].to_string()),
            since: self
                .since
                .map(|m| format!("2025-10-05T10:0{m}:00Z").parse().unwrap()),
            archive: [
                ArchiveScope::Live,
                ArchiveScope::Archived,
                ArchiveScope::All,
            ][self.archive],
            limit: self.limit,
            offset: self.offset,
            ..RunQuery::default()
        }
    }
}

/// A page as the scan answers it, on three threads.
fn scanned(p: &Logbook, query: &RunQuery) -> Page {
    let query = RunQuery {
        limit: Some(query.limit.unwrap_or(RunQuery::MAX_PAGING)),
        ..query.clone()
    };
    scan::find_by_scan(p, &query, 3, None, None).unwrap()
}

/// What a page says, for comparing two answers.
fn said(page: &Page) -> (Vec<String>, u64, bool, u64, u64) {
    (
        found_ids(page),
        page.total,
        page.exact,
        page.skipped,
        page.archived,
    )
}

fn tree(p: &Logbook, live: &[Left], archived: &[Left]) {
    for l in live {
        write_run(&p.config.agent_outputs_folder, &uuid(), l);
    }
    for l in archived {
        write_run(&p.config.archive_folder, &uuid(), l);
    }
}

fn uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// On a random tree, every query's scan answers the index's page: the
    /// same runs in the same order, the same total, skipped and archived
    /// counts; streamed to a sink too.
    #[test]
    fn the_scan_answers_what_the_index_answers(
        live in proptest::collection::vec(left(), 0..30),
        archived in proptest::collection::vec(left(), 0..6),
        queries in proptest::collection::vec(asked(), 1..8),
    ) {
        let (_dir, p) = project();
        tree(&p, &live, &archived);
        for asked in &queries {
            let q = asked.query();
            let index = found(&p, Scope::Local, &q);
            prop_assert_eq!(said(&scanned(&p, &q)), said(&index), "{:?}", q);
            // Streamed, and paged as a face pages (no limit: the default page).
            let mut streamed = vec![];
            let mut sink = |f: logbook::ops::query::FoundRun| {
                streamed.push(f.entry.manifest.session_id.clone());
                std::ops::ControlFlow::Continue(())
            };
            let page = scan::find_by_scan(&p, &q, 2, None, Some(&mut sink)).unwrap();
            let paged = logbook::ops::query::find(
                &p,
                &q,
                logbook::ops::query::FindOptions::new(Scope::Local),
            )
            .unwrap();
            prop_assert_eq!(&streamed, &found_ids(&paged));
            prop_assert_eq!(page.total, paged.total);
        }
    }
}

/// Runs another writer keeps changing between two states while the scan
/// runs.
const CHANGED: usize = 4;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(8))]

    /// While a writer rewrites some runs' manifests (by a rename, between
    /// two states that differ in agent, status and start), the scan's
    /// answer is exact for every other run, and each changed run is
    /// answered in one of its states: listed only in a state that matches,
    /// in the place that state's start gives it, and left out only when a
    /// state does not match.
    #[test]
    fn runs_changed_during_the_scan_are_answered_in_one_of_their_states(
        live in proptest::collection::vec(left(), 50..150),
        states in proptest::collection::vec((left(), left()), CHANGED),
        asked in asked(),
    ) {
        let (_dir, p) = project();
        tree(&p, &live, &[]);
        let dir = p.config.agent_outputs_folder.clone();
        let changed: Vec<(String, Left, Left)> = states
            .into_iter()
            .map(|(a, b)| {
                let id = uuid();
                write_run(&dir, &id, &a);
                (id, a, b)
            })
            .collect();
        // A page larger than the tree, so a changed run never pushes an
        // unchanged one out, and kept whole (see `scan::WHOLE_KEPT`: a
        // listing past it reads each run again as it prints it).
        // The live set, where the changed runs are.
        let q = RunQuery {
            limit: Some(1000),
            offset: 0,
            archive: ArchiveScope::Live,
            ..asked.query()
        };
        let done = AtomicBool::new(false);
        let answers: Vec<Page> = std::thread::scope(|s| {
            s.spawn(|| {
                let mut round = 0usize;
                while !done.load(Ordering::Relaxed) {
                    for (id, a, b) in &changed {
                        write_run(&dir, id, if round.is_multiple_of(2) { b } else { a });
                    }
                    round += 1;
                }
            });
            let answers = (0..4)
                .map(|_| scan::find_by_scan(&p, &q, 3, None, None).unwrap())
                .collect();
            done.store(true, Ordering::Relaxed);
            answers
        });
        // The others, as the index answers them with the writer stopped.
        let is_changed = |id: &str| changed.iter().any(|(c, _, _)| c == id);
        let index = found(&p, Scope::Local, &q);
        let others: Vec<String> = found_ids(&index).into_iter().filter(|id| !is_changed(id)).collect();
        let matcher = q.matcher().unwrap();
        for page in &answers {
            let listed = found_ids(page);
            let listed_others: Vec<String> = listed.iter().filter(|id| !is_changed(id)).cloned().collect();
            prop_assert_eq!(&listed_others, &others);
            // In `find`'s order by the states they were read in.
            let order: Vec<_> = page.hits.iter().map(|h| (std::cmp::Reverse(h.run.manifest.start_order()), h.run.id.clone())).collect();
            let mut sorted = order.clone();
            sorted.sort();
            prop_assert_eq!(order, sorted);
            for (id, a, b) in &changed {
                let matches = |l: &Left| state_matches(&p, id, l, &matcher);
                match page.hits.iter().find(|h| h.run.id.as_str() == id) {
                    Some(hit) => {
                        prop_assert!(matcher.matches(&hit.run.manifest));
                        let text = serde_json::to_value(&hit.run.manifest).unwrap();
                        let is = |l: &Left| manifest_text(id, l).is_some_and(|t| {
                            let v: serde_json::Value = serde_json::from_str(&t).unwrap_or_default();
                            v["execution"]["status"] == text["execution"]["status"]
                                && v["agent"]["name"] == text["agent"]["name"]
                                && v["execution"]["started_at"] == text["execution"]["started_at"]
                        }) || matches!(l, Left::Absent);
                        prop_assert!(is(a) || is(b), "{} read as no state it was in", id);
                    }
                    None => prop_assert!(!matches(a) || !matches(b), "{} left out", id),
                }
            }
            prop_assert!(page.total >= others.len() as u64);
        }
    }
}

/// Whether run `id` left as `l` matches: its manifest parsed as the store
/// parses it (a folder without one is a run of unknown status).
fn state_matches(
    p: &Logbook,
    id: &str,
    l: &Left,
    matcher: &logbook::model::query::RunMatcher,
) -> bool {
    let folder = p.config.agent_outputs_folder.join(id);
    match manifest_text(id, l) {
        None => logbook_store::run::without_manifest(&folder)
            .is_some_and(|run| matcher.matches(&run.manifest)),
        Some(text) => logbook::model::run::parse_manifest(&folder.join(MANIFEST_FILE), &text)
            .is_ok_and(|(m, _)| matcher.matches(&m)),
    }
}
