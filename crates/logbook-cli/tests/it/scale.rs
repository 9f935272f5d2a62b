//! Scale, at small N: `find` streams one valid JSON array even when its
//! reader goes away; an incremental sync after edits in place, folders
//! added and removed answers exactly what a rebuild answers; and a
//! read-only command with nothing changed leaves the index's files as they
//! were, bytes and mtime.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use logbook::Logbook;
use logbook::model::query::RunQuery;
use logbook::ops::query::Scope;
use logbook::testing::index::Index;
use serde_json::{Value, json};

use crate::harness::TestProject;

/// xorshift64*: deterministic, no crate needed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn uuid(&mut self) -> String {
        let v = uuid::Uuid::from_u64_pair(self.next(), self.next());
        uuid::Builder::from_random_bytes(*v.as_bytes())
            .into_uuid()
            .to_string()
    }
}

/// Writes a run as another tool would: a pretty-printed manifest and 0–3
/// output files with some text.
fn write_run(dir: &Path, name: &str, rng: &mut Rng, minute: usize) {
    let folder = dir.join(name);
    std::fs::create_dir_all(&folder).unwrap();
    let words = ["laptop", "budget", "vendor", "quokka", "harbor", "ember"];
    let mut outputs = vec![];
    for o in 0..rng.below(4) {
        let file = format!("out-{o}.md");
        let text = format!("# {}\n{}\n", words[rng.below(6)], words[rng.below(6)]);
        std::fs::write(folder.join(&file), text).unwrap();
        outputs.push(
            json!({"file": file, "type": "document", "description": (words[rng.below(6)]),
            "created_at": "2025-10-05T10:00:00.000Z"}),
        );
    }
    let m = json!({
        "version": "1.0.0",
        "session_id": name,
        "agent": {"name": (["alex", "casey"][rng.below(2)]), "title": "Some Agent"},
        "workflow": {"name": (["deep-dive", "review"][rng.below(2)]), "description": (words[rng.below(6)])},
        "execution": {"started_at": format!("2025-10-05T{:02}:{:02}:00.000Z", minute / 60 % 24, minute % 60),
            "status": (["completed", "running", "failed"][rng.below(3)])},
        "outputs": outputs,
    });
    std::fs::write(
        folder.join("manifest.json"),
        serde_json::to_string_pretty(&m).unwrap(),
    )
    .unwrap();
}

fn all_runs(p: &Logbook) -> Vec<(String, Value)> {
    let q = RunQuery {
        limit: Some(1_000_000),
        ..RunQuery::default()
    };
    crate::harness::found(p, &q, Scope::Local)
        .into_iter()
        .map(|(id, manifest)| (id.to_string(), serde_json::to_value(&manifest).unwrap()))
        .collect()
}

#[test]
fn sync_after_edits_adds_and_removes_answers_what_a_rebuild_answers() {
    for seed in 1..=6u64 {
        let t = TestProject::new();
        let p = Logbook::open(t.root()).unwrap();
        let dir = p.config.agent_outputs_folder.clone();
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let mut names: Vec<String> = (0..30).map(|_| rng.uuid()).collect();
        // Names that sort unlike their manifest paths ("a" before "a-b",
        // but "a-b/manifest.json" before "a/manifest.json") and an upper
        // case id: listed as corrupt or as runs, as a rebuild lists them.
        names.extend(["a".into(), "a-b".into(), rng.uuid().to_uppercase()]);
        for (i, n) in names.iter().enumerate() {
            write_run(&dir, n, &mut rng, i);
        }
        Index::rebuild(&p, None).unwrap();
        for round in 0..4 {
            let what = (seed as usize + round) % 3; // 0 edits, 1 folders, 2 both
            let mut changed = what != 0;
            if what != 1 {
                for _ in 0..(1 + rng.below(5)) {
                    let n = names[rng.below(names.len())].clone();
                    let folder = dir.join(&n);
                    if folder.join("out-0.md").exists() && rng.below(2) == 0 {
                        // An output edited in place: only its own stat moves.
                        std::fs::write(folder.join("out-0.md"), "# zephyr\nrewritten\n").unwrap();
                    } else {
                        write_run(&dir, &n, &mut rng, 700 + round);
                    }
                    changed = true;
                }
            }
            if what != 0 {
                for _ in 0..(1 + rng.below(3)) {
                    let n = rng.uuid();
                    write_run(&dir, &n, &mut rng, 800 + round);
                    names.push(n);
                }
                for _ in 0..rng.below(3) {
                    let n = names.swap_remove(rng.below(names.len()));
                    std::fs::remove_dir_all(dir.join(&n)).unwrap();
                }
                // A folder another tool has created but not filled yet.
                std::fs::create_dir_all(dir.join(rng.uuid())).unwrap();
            }
            let ctx = format!("seed {seed} round {round}");
            if what == 1 {
                // Folders only: the name comparison before every listing
                // sees them, without an explicit sync.
                let listed = all_runs(&p);
                let synced = Index::open(&p).unwrap().upkeep().fingerprint().unwrap();
                Index::rebuild(&p, None).unwrap();
                assert_eq!(all_runs(&p), listed, "{ctx}: listing");
                assert_eq!(
                    Index::open(&p).unwrap().upkeep().fingerprint().unwrap(),
                    synced,
                    "{ctx}"
                );
                continue;
            }
            // `--full`: an output of a finished run edited in place is only
            // read by the sync that checks settled outputs too.
            let report = Index::open(&p).unwrap().upkeep().sync_full().unwrap();
            assert_eq!(
                report.indexed > 0 || report.removed > 0,
                changed,
                "{ctx}: {report:?}"
            );
            let stale = Index::open(&p).unwrap().upkeep().staleness().unwrap();
            assert_eq!(
                (stale.new, stale.changed, stale.deleted),
                (0, 0, 0),
                "{ctx}"
            );
            let synced = Index::open(&p).unwrap().upkeep().fingerprint().unwrap();
            let listed = all_runs(&p);
            Index::rebuild(&p, None).unwrap();
            assert_eq!(
                Index::open(&p).unwrap().upkeep().fingerprint().unwrap(),
                synced,
                "{ctx}"
            );
            assert_eq!(all_runs(&p), listed, "{ctx}: listing");
            assert_eq!(
                Index::open(&p).unwrap().upkeep().sync().unwrap().indexed,
                0,
                "{ctx}: a second sync reads nothing"
            );
        }
    }
}

fn many_runs(t: &TestProject, n: usize) -> PathBuf {
    let dir = t.path("docs/agent-outputs");
    let mut rng = Rng(7);
    for i in 0..n {
        write_run(&dir, &rng.uuid(), &mut rng, i);
    }
    dir
}

#[test]
fn find_json_streams_one_array_even_when_its_reader_goes_away() {
    let t = TestProject::new();
    many_runs(&t, 300);
    let whole = t.run(&["--json", "find", "--limit", "100000"]);
    let runs = whole.json();
    let runs = runs.as_array().unwrap();
    assert_eq!(runs.len(), 300);
    // The same array, formatted the same, as the page the library builds.
    let p = Logbook::open(t.root()).unwrap();
    let scanned: Vec<String> = crate::harness::found(&p, &RunQuery::default(), Scope::Files)
        .into_iter()
        .map(|(id, _)| id.to_string())
        .collect();
    let streamed: Vec<&str> = runs
        .iter()
        .map(|r| r["session_id"].as_str().unwrap())
        .collect();
    assert_eq!(streamed, scanned);
    assert!(whole.stdout.starts_with("[\n  {\n    \"session_id\""));
    assert!(whole.stdout.ends_with("\n]\n"));
    assert_eq!(
        serde_json::to_string_pretty(&Value::Array(runs.clone())).unwrap() + "\n",
        whole.stdout
    );
    // An empty listing is still one array.
    assert_eq!(t.run(&["--json", "find", "--agent", "nobody"]).ok(), "[]\n");

    // The reader takes 100 bytes and closes the pipe (`| head -c 100`): a
    // success, nothing on stderr, and what it got is the array's start.
    for args in [
        &["--json", "find", "--limit", "100000"][..],
        &["find", "--limit", "100000"][..],
    ] {
        let mut child = t
            .cmd(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut head = [0u8; 100];
        child.stdout.take().unwrap().read_exact(&mut head).unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), "", "{args:?}");
        if args[0] == "--json" {
            assert!(whole.stdout.as_bytes().starts_with(&head));
        }
    }
}

/// Each file of the index with its bytes and mtime.
fn index_files(root: &Path) -> Vec<(String, Vec<u8>, std::time::SystemTime)> {
    ["index.db", "index.db-wal"]
        .iter()
        .filter_map(|name| {
            let path = root.join(".logbook").join(name);
            let bytes = std::fs::read(&path).ok()?;
            let mtime = std::fs::metadata(&path).ok()?.modified().ok()?;
            Some((name.to_string(), bytes, mtime))
        })
        .collect()
}

/// Sets the mtime of every folder and file under `root` (the index's own
/// files aside) back by `by`, as if written that long ago.
fn age(root: &std::path::Path, by: std::time::Duration) {
    let when = logbook::clock::Clock::SYSTEM.system_time() - by;
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.file_name().is_some_and(|n| n == ".logbook") {
                continue;
            }
            if path.is_dir() {
                dirs.push(path.clone());
            }
            std::fs::File::open(&path)
                .unwrap()
                .set_modified(when)
                .unwrap();
        }
        std::fs::File::open(&dir)
            .unwrap()
            .set_modified(when)
            .unwrap();
    }
}

#[test]
fn read_only_commands_leave_the_index_untouched_when_nothing_changed() {
    let t = TestProject::new();
    many_runs(&t, 20);
    t.run(&["start", "--client", "ACME", "--project", "AUDIT"])
        .ok();
    let started = t.start_run("casey", "deep-dive", &[]);
    let id = started["session_id"].as_str().unwrap().to_string();
    t.run(&["index", "sync"]).ok();
    // Folder mtimes must be older than the racy window before a listing
    // may record them as seen: set back a second rather than waited for.
    // The first listings after that record them.
    age(t.root(), std::time::Duration::from_secs(1));
    let reads: Vec<Vec<&str>> = vec![
        vec!["find"],
        vec!["find", "--text", "laptop"],
        vec!["--json", "find", "--limit", "1000"],
        vec!["list"],
        vec!["status"],
        vec!["tokens"],
        vec!["index", "status"],
        vec!["doctor"],
        vec!["run", "show", &id],
        vec!["lineage", &id],
        vec!["latest-output", "--agent", "alex"],
        vec!["transcript", "list"],
        vec!["workflow", "show"],
    ];
    for args in &reads {
        t.run(args);
    }
    let before = index_files(t.root());
    assert!(!before.is_empty());
    for args in &reads {
        t.run(args);
        let now = index_files(t.root());
        assert!(
            now == before,
            "`logbook {}` changed the index files",
            args.join(" ")
        );
    }
}

#[test]
fn a_text_search_matching_more_runs_than_are_counted_says_at_least_and_where_to_go_on() {
    let t = TestProject::new();
    // "agent" is in every manifest: more matches than a text query counts.
    many_runs(&t, 1200);
    let p = Logbook::open(t.root()).unwrap();
    let newest: Vec<String> = crate::harness::found(
        &p,
        &RunQuery {
            limit: Some(1200),
            ..RunQuery::default()
        },
        Scope::Files,
    )
    .into_iter()
    .map(|(id, _)| id.to_string())
    .collect();
    let ids = |run: &crate::harness::Run| -> Vec<String> {
        run.json()
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["session_id"].as_str().unwrap().to_string())
            .collect()
    };
    // The first page: the newest matches, as without text, and a count
    // that stopped, said as such, with the next page's offset.
    let first = t.run(&["--json", "find", "--text", "agent"]);
    assert_eq!(ids(&first), newest[..50]);
    assert!(
        first
            .stderr
            .contains("at least 951 more run(s) match; show them with --offset 50"),
        "{}",
        first.stderr
    );
    // A page in the middle, by the same order.
    let middle = t.run(&["--json", "find", "--text", "agent", "--offset", "600"]);
    assert_eq!(ids(&middle), newest[600..650]);
    // The last page: counted to the end, so exact, and nothing more said.
    let last = t.run(&["--json", "find", "--text", "agent", "--offset", "1150"]);
    assert_eq!(ids(&last), newest[1150..]);
    assert!(!last.stderr.contains("more run(s)"), "{}", last.stderr);
    // Deep pages count one past their end at least.
    let deep = t.run(&[
        "find", "--text", "agent", "--offset", "1100", "--limit", "20",
    ]);
    assert!(
        deep.stderr
            .contains("at least 1 more run(s) match; show them with --offset 1120"),
        "{}",
        deep.stderr
    );
    // A word in fewer runs than the bound is counted exactly.
    let few = t.run(&["find", "--text", "quokka", "--limit", "20"]);
    assert!(
        few.stderr
            .contains("more run(s) match; show them with --offset 20")
            && !few.stderr.contains("at least"),
        "{}",
        few.stderr
    );
}
