//! Property test of the sync that skips settled outputs: after random
//! edits behind Logbook's back (outputs rewritten in place, manifests of
//! finished and running runs edited, statuses changed, runs added and
//! deleted), a normal `sync` answers what a fresh rebuild answers, except
//! the words of a finished run's outputs edited while its manifest stayed
//! the same (settled: only `sync --full` reads them again), and after
//! `sync --full` it answers exactly what the rebuild does.

use std::collections::BTreeSet;
use std::io::Write as _;

use std::path::PathBuf;

use logbook::Logbook;
use logbook::model::run::{MANIFEST_FILE, OutputType, RunStatus};
use logbook::ops::run::{self, StartOptions};
use logbook::testing::index::Index;
use proptest::prelude::*;
use serde_json::{Value, json};
use tempfile::TempDir;

/// A temp folder that is a project already, so the index lives in a file.
fn project() -> (TempDir, Logbook) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".logbook")).unwrap();
    let p = Logbook::open(dir.path()).unwrap();
    (dir, p)
}

fn folder(p: &Logbook, id: &str) -> PathBuf {
    p.config.agent_outputs_folder.join(id)
}

/// Changes a manifest the way another tool would: in place, no lock, no
/// index.
fn edit_manifest(p: &Logbook, id: &str, change: impl FnOnce(&mut Value)) {
    let path = folder(p, id).join(MANIFEST_FILE);
    let mut m: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    change(&mut m);
    std::fs::write(&path, serde_json::to_string_pretty(&m).unwrap()).unwrap();
}

/// The words outputs say: invented, so no manifest says them too.
const WORDS: [&str; 5] = ["quokka", "narwhal", "pangolin", "wombat", "axolotl"];

/// One change another tool makes.
#[derive(Debug, Clone)]
enum Edit {
    /// Rewrites run `.0`'s output in place to say word `.1`.
    Output(usize, usize),
    /// Adds a tag to run `.0`'s manifest, in place.
    Tag(usize),
    /// Sets run `.0`'s status, in place (0 running, 1 completed, 2 failed).
    Status(usize, u8),
    /// Starts a new run whose output says word `.0`, finished if `.1`.
    New(usize, bool),
    /// Deletes run `.0`'s folder.
    Delete(usize),
}

fn arb_edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        3 => (0..8usize, 0..WORDS.len()).prop_map(|(r, w)| Edit::Output(r, w)),
        1 => (0..8usize).prop_map(Edit::Tag),
        2 => (0..8usize, 0..3u8).prop_map(|(r, s)| Edit::Status(r, s)),
        1 => (0..WORDS.len(), any::<bool>()).prop_map(|(w, f)| Edit::New(w, f)),
        1 => (0..8usize).prop_map(Edit::Delete),
    ]
}

/// A run with one output `out.md` saying `word` (written `n` times more,
/// so every rewrite has a size of its own and is seen whatever the clock's
/// granularity), finished unless not `finished`.
fn new_run(p: &Logbook, word: &str, finished: bool, n: usize) -> String {
    let id = run::start(
        p,
        StartOptions {
            agent: "casey".into(),
            workflow: Some("intake".into()),
            ..StartOptions::default()
        },
    )
    .unwrap()
    .session_id
    .to_string();
    std::fs::write(folder(p, &id).join("out.md"), text(word, n)).unwrap();
    run::register_output(p, &id, "out.md", OutputType::Document, "o").unwrap();
    if finished {
        run::finish(p, &id, RunStatus::Completed).unwrap();
    }
    id
}

fn text(word: &str, n: usize) -> String {
    format!("{word} {}\n", ".".repeat(n))
}

/// What the index answers: its records, and for each word the runs whose
/// text holds it, but only among `compared` runs (all when `None`).
fn answers(p: &Logbook, compared: Option<&BTreeSet<String>>) -> (Vec<String>, Vec<Vec<String>>) {
    let index = Index::open(p).unwrap();
    let words = WORDS
        .iter()
        .map(|w| {
            index
                .upkeep()
                .text_matches(w)
                .unwrap()
                .into_iter()
                .filter(|f| compared.is_none_or(|c| c.contains(f)))
                .collect()
        })
        .collect();
    (index.upkeep().fingerprint().unwrap(), words)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn sync_answers_what_a_rebuild_answers_and_sync_full_its_settled_outputs_too(
        start_runs in prop::collection::vec((0..WORDS.len(), any::<bool>()), 1..5),
        edits in prop::collection::vec(arb_edit(), 1..10),
    ) {
        let (_dir, p) = project();
        let mut n = 0;
        let mut runs: Vec<String> = vec![];
        for (w, finished) in start_runs {
            n += 1;
            runs.push(new_run(&p, WORDS[w], finished, n));
        }
        Index::open(&p).unwrap().upkeep().sync().unwrap();
        // The runs a normal sync must answer for exactly: those not
        // finished as indexed (by the sync above, or by the writer that
        // started a new one), and those whose manifest changed since.
        let mut indexed_running: BTreeSet<String> = runs
            .iter()
            .filter(|id| {
                run::show(&p, id).unwrap().manifest.execution.status == RunStatus::Running
            })
            .cloned()
            .collect();
        let mut manifest_changed: BTreeSet<String> = BTreeSet::new();
        for e in edits {
            n += 1;
            let live: Vec<String> = runs.iter().filter(|id| folder(&p, id).exists()).cloned().collect();
            let pick = |i: usize| live.get(i % live.len().max(1)).cloned();
            match e {
                Edit::Output(r, w) => {
                    let Some(id) = pick(r) else { continue };
                    let mut f = std::fs::OpenOptions::new()
                        .write(true)
                        .truncate(true)
                        .open(folder(&p, &id).join("out.md"))
                        .unwrap();
                    f.write_all(text(WORDS[w], n).as_bytes()).unwrap();
                }
                Edit::Tag(r) => {
                    let Some(id) = pick(r) else { continue };
                    edit_manifest(&p, &id, |m| {
                        m["tags"] = json!([format!("t{}", ".".repeat(n))]);
                    });
                    manifest_changed.insert(id);
                }
                Edit::Status(r, s) => {
                    let Some(id) = pick(r) else { continue };
                    let status = ["running", "completed", "failed"][s as usize];
                    edit_manifest(&p, &id, |m| {
                        m["execution"]["status"] = json!(status);
                        // A size of its own, whatever the status was.
                        m["metadata"] = json!({"edit": ".".repeat(n)});
                    });
                    manifest_changed.insert(id);
                }
                Edit::New(w, finished) => {
                    let id = new_run(&p, WORDS[w], finished, n);
                    runs.push(id.clone());
                    if !finished {
                        indexed_running.insert(id);
                    }
                }
                Edit::Delete(r) => {
                    let Some(id) = pick(r) else { continue };
                    std::fs::remove_dir_all(folder(&p, &id)).unwrap();
                }
            }
        }
        let exact: BTreeSet<String> = runs
            .iter()
            .filter(|id| {
                indexed_running.contains(*id) || manifest_changed.contains(*id)
            })
            .map(|id| folder(&p, id).to_string_lossy().into_owned())
            .collect();

        Index::open(&p).unwrap().upkeep().sync().unwrap();
        let synced = answers(&p, Some(&exact));
        let all_synced_records = answers(&p, None).0;
        Index::open(&p).unwrap().upkeep().sync_full().unwrap();
        let full = answers(&p, None);
        Index::rebuild(&p, None).unwrap();
        let rebuilt_exact = answers(&p, Some(&exact));
        let rebuilt = answers(&p, None);

        // Records (everything but the words) never wait for `--full`.
        prop_assert_eq!(&all_synced_records, &rebuilt.0);
        prop_assert_eq!(synced, rebuilt_exact);
        prop_assert_eq!(full, rebuilt);
    }
}
