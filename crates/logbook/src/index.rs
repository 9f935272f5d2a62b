//! The SQLite index at `{project-root}/.logbook/index.db`: derived from the
//! files, never the truth, so it can be deleted at any time and is rebuilt.
//!
//! - [`Index::open`] creates it on first use, rebuilds it when its schema
//!   version (`PRAGMA user_version`) is not [`SCHEMA_VERSION`], and repairs
//!   records a writer left pending when it died between its file write and
//!   its index update.
//! - [`write_through`] is the one hook writers call around a file change:
//!   the record is marked pending in the index, the file is written, then the
//!   record is re-read from the file into the index and the mark cleared.
//! - [`Index::sync`] picks up changes other tools made: a directory walk and
//!   a size/mtime comparison, so only new, changed or deleted files are read.
//!   [`Index::rebuild`] reads everything, parsing on all cores.
//! - Queries ([`Index::find_runs`], [`Index::latest_output`], lineage edges,
//!   work session and transcript listings) never read the files.
//!
//! ```no_run
//! use logbook::{Project, index::Index, run::RunQuery};
//! let project = Project::discover(&std::env::current_dir()?, None)?;
//! let index = Index::open_synced(&project)?;
//! let query = RunQuery { agent: Some("casey".into()), limit: Some(20), ..Default::default() };
//! for hit in index.find_runs(&query)? { println!("{} {}", hit.run.id, hit.run.folder.display()); }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, UNIX_EPOCH};

use regex::Regex;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use serde::Serialize;
use serde_json::Value;

use crate::clock;
use crate::error::{Error, Result};
use crate::project::Project;
use crate::run::{self, Run, RunQuery};
use crate::transcript;
use crate::work_session;

/// Bumped whenever the tables change; an index of another version is
/// rebuilt rather than misread.
pub const SCHEMA_VERSION: i64 = 2;

/// Test hook: when set to `1`, a write through logbook exits the process
/// right after the file write and before the index update, to prove the
/// next open repairs the index.
pub const FAIL_AFTER_FILE_WRITE_ENV: &str = "LOGBOOK_FAIL_AFTER_FILE_WRITE";

/// Output files larger than this are not put in the full-text index.
pub const MAX_TEXT_BYTES: u64 = 1024 * 1024;

const MANIFEST: &str = "manifest.json";
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);
/// How many times a query is re-run after re-reading runs it returned
/// whose files changed under it.
const VERIFY_ROUNDS: usize = 3;
/// Records written per transaction during a sync, so memory stays bounded
/// and other writers get a turn.
const BATCH: usize = 20_000;
/// Records a sync parses ahead and writes together inside one batch, so
/// the FTS table's pending inserts are flushed once per group rather than
/// once per changed run (see `execute`). Small enough to keep memory flat.
const GROUP: usize = 1024;

const ALL: &[Kind] = &[Kind::Run, Kind::WorkSession, Kind::Transcript];

const SCHEMA: &str = "
CREATE TABLE runs(
  rid INTEGER PRIMARY KEY,
  folder TEXT NOT NULL,
  id TEXT NOT NULL,
  agent TEXT NOT NULL,
  workflow TEXT NOT NULL,
  status TEXT NOT NULL,
  user TEXT,
  started_at TEXT NOT NULL,
  started_ns INTEGER,
  completed_at TEXT,
  title TEXT NOT NULL,
  manifest TEXT NOT NULL
);
CREATE TABLE outputs(
  rid INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  file TEXT NOT NULL,
  type TEXT NOT NULL,
  description TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY(rid, seq)
) WITHOUT ROWID;
CREATE TABLE edges(
  child TEXT NOT NULL,
  parent TEXT NOT NULL,
  rid INTEGER NOT NULL,
  PRIMARY KEY(rid, parent)
) WITHOUT ROWID;
CREATE TABLE tags(
  rid INTEGER NOT NULL,
  tag TEXT NOT NULL,
  PRIMARY KEY(rid, tag)
) WITHOUT ROWID;
-- Contentless: the index of the words only, not a second copy of every
-- manifest and output text (that copy was most of the database). Rows are
-- deleted by rowid (contentless_delete); snippets are made from the page's
-- manifests instead (see `snippet_of`).
CREATE VIRTUAL TABLE runs_fts USING fts5(
  agent, workflow, body, content = '', contentless_delete = 1,
  tokenize = 'unicode61'
);
CREATE TABLE work_sessions(
  path TEXT PRIMARY KEY,
  id TEXT NOT NULL,
  status TEXT NOT NULL,
  archived INTEGER NOT NULL,
  last_updated TEXT NOT NULL,
  record TEXT NOT NULL
);
CREATE TABLE transcripts(
  path TEXT PRIMARY KEY,
  id TEXT NOT NULL,
  kind TEXT NOT NULL,
  workdir TEXT NOT NULL,
  started_at TEXT NOT NULL,
  last_active_at TEXT NOT NULL,
  last_active_ms INTEGER,
  tokens INTEGER NOT NULL,
  parent TEXT
);
CREATE TABLE files(
  path TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  size INTEGER NOT NULL,
  mtime_ns INTEGER NOT NULL,
  dir_mtime_ns INTEGER NOT NULL
);
CREATE TABLE corrupt(
  path TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  reason TEXT NOT NULL
);
CREATE TABLE pending(
  path TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  lock TEXT NOT NULL,
  since TEXT NOT NULL
);
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
";

/// The secondary indexes, kept apart from [`SCHEMA`] so a rebuild can drop
/// them, bulk-insert, and create them once over sorted data (several times
/// faster than maintaining them row by row).
///
/// The filter indexes list `started_ns DESC, id` right after their key so a
/// `find` walks them in exactly its output order and stops at the page's
/// end, and they carry the other filter columns so rows that do not match
/// are rejected from the index alone, without touching the table.
const INDEXES: &[(&str, &str)] = &[
    (
        "runs_folder",
        "CREATE UNIQUE INDEX runs_folder ON runs(folder)",
    ),
    ("runs_id", "CREATE INDEX runs_id ON runs(id)"),
    (
        "runs_started",
        "CREATE INDEX runs_started ON runs(started_ns DESC, id, agent, workflow, status)",
    ),
    (
        "runs_agent",
        "CREATE INDEX runs_agent ON runs(agent, started_ns DESC, id, workflow, status)",
    ),
    (
        "runs_workflow",
        "CREATE INDEX runs_workflow ON runs(workflow, started_ns DESC, id, agent, status)",
    ),
    (
        "runs_status",
        "CREATE INDEX runs_status ON runs(status, started_ns DESC, id, agent, workflow)",
    ),
    (
        "outputs_type",
        "CREATE INDEX outputs_type ON outputs(type, rid)",
    ),
    ("edges_parent", "CREATE INDEX edges_parent ON edges(parent)"),
    ("edges_child", "CREATE INDEX edges_child ON edges(child)"),
    ("tags_tag", "CREATE INDEX tags_tag ON tags(tag)"),
];

/// The kinds of file the index follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A run's `manifest.json`.
    Run,
    /// A work session's YAML file (live or archived).
    WorkSession,
    /// A transcript JSON file.
    Transcript,
}

impl Kind {
    /// The word stored in the index.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Run => "run",
            Kind::WorkSession => "work_session",
            Kind::Transcript => "transcript",
        }
    }

    fn parse(s: &str) -> Option<Kind> {
        match s {
            "run" => Some(Kind::Run),
            "work_session" => Some(Kind::WorkSession),
            "transcript" => Some(Kind::Transcript),
            _ => None,
        }
    }
}

/// A file a write is about to change, and the lock its writer holds (so a
/// repairing opener can tell a live writer from a dead one).
#[derive(Debug, Clone)]
pub struct Touched {
    /// What the file is.
    pub kind: Kind,
    /// The file (for a run: its `manifest.json`).
    pub path: PathBuf,
    /// The name of the lock the writer holds while writing it.
    pub lock: String,
}

/// Marks `touched` pending in the index, runs `write` (the file change, under
/// the caller's lock), then re-reads the touched files into the index and
/// clears the marks. If the index cannot record the mark, nothing is
/// written; if the update after the write fails, the marks stay and the next
/// [`Index::open`] repairs them.
pub fn write_through<T>(
    p: &Project,
    touched: &[Touched],
    write: impl FnOnce() -> Result<T>,
) -> Result<T> {
    // A process that writes many times (the MCP server, the web server, a
    // benchmark) keeps one connection per thread instead of reopening.
    let cached = WRITER
        .with(|c| c.borrow_mut().take())
        .filter(|i| i.path == p.index_path());
    let mut index = match cached {
        Some(i) => i,
        None => Index::open(p)?,
    };
    index.mark_pending(touched)?;
    let out = write()?;
    if std::env::var(FAIL_AFTER_FILE_WRITE_ENV).is_ok_and(|v| v == "1") {
        // Simulates a crash between the two writes; only tests set it.
        std::process::exit(86);
    }
    // Failure here leaves the pending marks for the next open to repair.
    if index.apply_touched(touched).is_ok() {
        WRITER.with(|c| *c.borrow_mut() = Some(index));
    }
    Ok(out)
}

thread_local! {
    static WRITER: std::cell::RefCell<Option<Index>> = const { std::cell::RefCell::new(None) };
}

/// An open index.
pub struct Index {
    conn: Connection,
    path: PathBuf,
    project: Project,
}

/// One run found through the index.
#[derive(Debug, Clone)]
pub struct Hit {
    /// The run, its manifest as last read from the file.
    pub run: Run,
    /// For text queries: a fragment of the matching text, hits in `[…]`.
    pub snippet: Option<String>,
}

/// Counts and health of the index, for `index status`.
#[derive(Debug, Clone, Serialize)]
pub struct Status {
    /// The database file.
    pub path: PathBuf,
    /// Its size in bytes (with the WAL).
    pub size_bytes: u64,
    /// The schema version.
    pub schema_version: i64,
    /// Runs indexed.
    pub runs: u64,
    /// Outputs indexed.
    pub outputs: u64,
    /// Lineage edges.
    pub edges: u64,
    /// Work sessions indexed.
    pub work_sessions: u64,
    /// Transcripts indexed.
    pub transcripts: u64,
    /// Files that could not be parsed.
    pub corrupt: u64,
    /// Writes not yet confirmed in the index.
    pub pending: u64,
    /// When the index was last synced with the folders.
    pub last_sync: Option<String>,
    /// Files new, changed or deleted since (from a directory walk).
    pub stale: Staleness,
}

/// What a sync would do.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Staleness {
    /// Files not in the index.
    pub new: u64,
    /// Files whose size or mtime changed.
    pub changed: u64,
    /// Indexed files that are gone.
    pub deleted: u64,
}

/// What a sync or rebuild did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SyncReport {
    /// Files looked at.
    pub scanned: u64,
    /// Files read and (re)indexed.
    pub indexed: u64,
    /// Records removed because their file is gone.
    pub removed: u64,
    /// Files that could not be parsed: path and reason.
    pub corrupt: Vec<CorruptEntry>,
    /// Wall time in seconds.
    pub seconds: f64,
}

/// A file the index could not parse.
#[derive(Debug, Clone, Serialize)]
pub struct CorruptEntry {
    /// The file.
    pub path: PathBuf,
    /// What it should have been.
    pub kind: Kind,
    /// The parser's message.
    pub reason: String,
}

/// `find` through the index: synced cheaply first (see [`Index::open_synced`]).
pub fn find(p: &Project, query: &RunQuery) -> Result<Vec<Hit>> {
    Index::open_synced(p)?.find_runs(query)
}

/// [`find`], and how many run manifests listings skip because they could
/// not be parsed (the index records them; `doctor` names them).
pub fn find_counting_skipped(p: &Project, query: &RunQuery) -> Result<(Vec<Hit>, u64)> {
    let index = Index::open_synced(p)?;
    let hits = index.find_runs(query)?;
    Ok((hits, index.corrupt_count(Kind::Run)?))
}

/// `latest-output` through the index; the same answer and error as
/// [`run::latest_output`].
pub fn latest_output(
    p: &Project,
    agent: &str,
    workflow: Option<&str>,
    output_type: Option<&str>,
) -> Result<(Run, run::OutputRecord, PathBuf)> {
    if let Some(found) = Index::open_synced(p)?.latest_output(agent, workflow, output_type)? {
        return Ok(found);
    }
    // Not in the index: let the run module phrase the not-found error.
    run::latest_output(p, agent, workflow, output_type)
}

/// `lineage` through the index: only the runs on the root's ancestor and
/// descendant chains are loaded, never every manifest.
pub fn lineage(p: &Project, id: &str, tz: &jiff::tz::TimeZone) -> Result<run::Lineage> {
    run::load(p, id)?;
    let index = Index::open_synced(p)?;
    let mut runs: HashMap<String, Run> = HashMap::new();
    for (start, up) in [(id, true), (id, false)] {
        let mut stack = vec![start.to_string()];
        let mut seen = std::collections::HashSet::new();
        while let Some(n) = stack.pop() {
            if !seen.insert(n.clone()) {
                continue;
            }
            let next = if up {
                match index.run(&n)? {
                    Some(r) => {
                        let parents = r.manifest.related().to_vec();
                        runs.insert(n.clone(), r);
                        parents
                    }
                    None => vec![],
                }
            } else {
                if !runs.contains_key(&n)
                    && let Some(r) = index.run(&n)?
                {
                    runs.insert(n.clone(), r);
                }
                index.children(&n)?
            };
            stack.extend(next);
        }
    }
    Ok(run::lineage_of(id, runs, tz))
}

// ---------------------------------------------------------------------------
// Opening

fn sql(path: &Path) -> impl Fn(rusqlite::Error) -> Error + use<> {
    let path = path.to_path_buf();
    move |source| Error::Index {
        path: path.clone(),
        source,
    }
}

impl Index {
    /// Opens (creating, upgrading and repairing as needed) the index. Does
    /// not look at the folders beyond repairing pending records.
    pub fn open(p: &Project) -> Result<Index> {
        Index::open_with(p, true)
    }

    /// Opens the index for [`Index::rebuild`]: like [`Index::open`], but a
    /// missing or outdated index is not filled first, since the rebuild
    /// that follows reads every file anyway (filling it would read them all
    /// twice: `index rebuild` on a new project used to cost two builds).
    pub fn open_for_rebuild(p: &Project) -> Result<Index> {
        Index::open_with(p, false)
    }

    fn open_with(p: &Project, fill_fresh: bool) -> Result<Index> {
        let path = p.index_path();
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        }
        let (mut index, fresh) = match Index::connect(p, &path) {
            Ok(x) => x,
            Err(Error::Index { source, .. }) if is_corruption(&source) => {
                // Derived data: a damaged database is thrown away and rebuilt.
                remove_db_files(&path)?;
                Index::connect(p, &path)?
            }
            Err(e) => return Err(e),
        };
        if fresh && fill_fresh {
            index.sync_all(true, None)?;
        }
        index.repair_pending()?;
        Ok(index)
    }

    /// Opens the index and first picks up runs another tool added or removed
    /// (a cheap check of the followed directories' mtimes, then, only if one
    /// moved, a comparison of the run folder *names* with the index). Used
    /// by every listing.
    pub fn open_synced(p: &Project) -> Result<Index> {
        let mut index = Index::open(p)?;
        if index.meta("dirs_mtime")?.as_deref() != Some(self_dirs_stamp(p).as_str()) {
            index.sync_names()?;
        }
        Ok(index)
    }

    /// Opens the index after an incremental sync of one kind of file other
    /// than runs: work session and transcript folders hold few files, so a
    /// `stat` of each is cheap and sees edits made in place.
    pub fn open_synced_kind(p: &Project, kind: Kind) -> Result<Index> {
        let mut index = Index::open_synced(p)?;
        if kind != Kind::Run {
            index.sync_scoped(&[kind], false, None)?;
        }
        Ok(index)
    }

    fn connect(p: &Project, path: &Path) -> Result<(Index, bool)> {
        let e = sql(path);
        let conn = Connection::open(path).map_err(&e)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(&e)?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(&e)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(&e)?;
        conn.pragma_update(None, "temp_store", "MEMORY")
            .map_err(&e)?;
        let mut index = Index {
            conn,
            path: path.to_path_buf(),
            project: p.clone(),
        };
        let version: i64 = index
            .conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(&e)?;
        if version == SCHEMA_VERSION {
            return Ok((index, false));
        }
        // Create or replace the schema under a write lock, checking again:
        // another process may have just done it.
        let tx = index
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(&e)?;
        let version: i64 = tx
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(&e)?;
        if version == SCHEMA_VERSION {
            tx.commit().map_err(&e)?;
            return Ok((index, false));
        }
        let objects: Vec<(String, String)> = {
            let mut stmt = tx
                .prepare(
                    "SELECT type, name FROM sqlite_master WHERE type IN ('table','view') \
                     AND name NOT LIKE 'sqlite_%' AND sql NOT LIKE 'CREATE TABLE ''%'",
                )
                .map_err(&e)?;
            stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
                .map_err(&e)?
                .collect::<std::result::Result<_, _>>()
                .map_err(&e)?
        };
        // Virtual tables first: dropping one drops its shadow tables.
        let mut objects = objects;
        objects.sort_by_key(|(_, name)| !name.ends_with("_fts"));
        for (kind, name) in objects {
            let exists: bool = tx
                .query_row(
                    "SELECT count(*) FROM sqlite_master WHERE name = ?1",
                    [&name],
                    |r| r.get::<_, i64>(0),
                )
                .map_err(&e)?
                > 0;
            if exists {
                let what = if kind == "view" { "VIEW" } else { "TABLE" };
                tx.execute_batch(&format!(
                    "DROP {what} IF EXISTS \"{}\"",
                    name.replace('"', "\"\"")
                ))
                .map_err(&e)?;
            }
        }
        tx.execute_batch(SCHEMA).map_err(&e)?;
        for (_, create) in INDEXES {
            tx.execute_batch(create).map_err(&e)?;
        }
        tx.pragma_update(None, "user_version", SCHEMA_VERSION)
            .map_err(&e)?;
        tx.commit().map_err(&e)?;
        Ok((index, true))
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn err(&self) -> impl Fn(rusqlite::Error) -> Error + use<> {
        sql(&self.path)
    }

    fn meta(&self, key: &str) -> Result<Option<String>> {
        self.conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()
            .map_err(self.err())
    }

    // -----------------------------------------------------------------------
    // The write path

    fn mark_pending(&mut self, touched: &[Touched]) -> Result<()> {
        let now = clock::now_string();
        let e = sql(&self.path);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(&e)?;
        for t in touched {
            tx.execute(
                "INSERT OR REPLACE INTO pending(path, kind, lock, since) VALUES (?1, ?2, ?3, ?4)",
                params![path_str(&t.path), t.kind.as_str(), t.lock, now],
            )
            .map_err(&e)?;
        }
        tx.commit().map_err(&e)
    }

    /// Re-reads the touched files into the index and clears their pending
    /// marks, in one transaction.
    fn apply_touched(&self, touched: &[Touched]) -> Result<()> {
        // Stamp before reading: a change after this moment shows as a new
        // stamp to the next sync.
        let records: Vec<_> = touched
            .iter()
            .map(|t| {
                let stamp = stamp_now(t.kind, &t.path);
                (
                    t.kind,
                    t.path.clone(),
                    stamp,
                    read_record(&self.project, t.kind, &t.path),
                )
            })
            .collect();
        let e = sql(&self.path);
        // `&self`: readers re-index through here too (verify-on-read).
        let tx = rusqlite::Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)
            .map_err(&e)?;
        for (kind, path, stamp, record) in records {
            apply(&tx, kind, &path, record, stamp, None, Fresh::No).map_err(&e)?;
            tx.execute("DELETE FROM pending WHERE path = ?1", [path_str(&path)])
                .map_err(&e)?;
        }
        tx.commit().map_err(&e)
    }

    /// Re-reads every record a writer marked pending and did not confirm,
    /// unless that writer is still alive (holds its lock).
    fn repair_pending(&mut self) -> Result<()> {
        let pending: Vec<(String, String, String)> = {
            let mut stmt = self
                .conn
                .prepare_cached("SELECT path, kind, lock FROM pending")
                .map_err(self.err())?;
            stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                .map_err(self.err())?
                .collect::<std::result::Result<_, _>>()
                .map_err(self.err())?
        };
        for (path, kind, lock) in pending {
            let Some(kind) = Kind::parse(&kind) else {
                continue;
            };
            // A writer holding the lock is mid-write and will confirm itself.
            let Some(_guard) = self.project.locks.try_exclusive(&lock)? else {
                continue;
            };
            self.apply_touched(&[Touched {
                kind,
                path: PathBuf::from(path),
                lock,
            }])?;
        }
        Ok(())
    }

    // -----------------------------------------------------------------------
    // Sync and rebuild

    /// Brings the index up to date with the folders, reading only new or
    /// changed files and dropping records whose file is gone.
    pub fn sync(&mut self) -> Result<SyncReport> {
        self.sync_all(false, None)
    }

    /// Forgets everything and re-reads every file, parsing in parallel.
    /// `progress` is called with (done, total) as files are parsed.
    pub fn rebuild(&mut self, progress: Option<&(dyn Fn(u64, u64) + Sync)>) -> Result<SyncReport> {
        self.sync_all(true, progress)
    }

    /// What a sync would do, without doing it.
    pub fn staleness(&self) -> Result<Staleness> {
        let (_, plan) = self.plan(ALL)?;
        Ok(Staleness {
            new: plan.new as u64,
            changed: (plan.read.len() - plan.new) as u64,
            deleted: plan.deleted.len() as u64,
        })
    }

    fn plan(&self, scope: &[Kind]) -> Result<(Vec<Seen>, Plan)> {
        let seen = walk(&self.project, scope)?;
        let mut known: HashMap<String, (i64, i64, i64)> = HashMap::new();
        {
            let mut stmt = self
                .conn
                .prepare("SELECT path, kind, size, mtime_ns, dir_mtime_ns FROM files")
                .map_err(self.err())?;
            let rows = stmt
                .query_map([], |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        (r.get(2)?, r.get(3)?, r.get(4)?),
                    ))
                })
                .map_err(self.err())?;
            for row in rows {
                let (path, kind, stamp) = row.map_err(self.err())?;
                if Kind::parse(&kind).is_some_and(|k| scope.contains(&k)) {
                    known.insert(path, stamp);
                }
            }
        }
        let mut plan = Plan::default();
        for (i, s) in seen.iter().enumerate() {
            match known.remove(&s.key) {
                Some(stamp) if stamp == (s.size, s.mtime_ns, s.dir_mtime_ns) => {}
                Some(_) => plan.read.push(i),
                None => {
                    plan.new += 1;
                    plan.read.push(i)
                }
            }
        }
        plan.deleted = known.into_keys().collect();
        Ok((seen, plan))
    }

    /// The one sync: `full` re-reads every file and replaces the whole
    /// index in one transaction (readers see the old index until it
    /// commits); otherwise only new, changed and deleted files are handled,
    /// committed in batches.
    fn sync_all(
        &mut self,
        full: bool,
        progress: Option<&(dyn Fn(u64, u64) + Sync)>,
    ) -> Result<SyncReport> {
        self.sync_scoped(ALL, full, progress)
    }

    fn sync_scoped(
        &mut self,
        scope: &[Kind],
        full: bool,
        progress: Option<&(dyn Fn(u64, u64) + Sync)>,
    ) -> Result<SyncReport> {
        let started = std::time::Instant::now();
        let dirs_before = self.dirs_stamp();
        let (seen, mut plan) = self.plan(scope)?;
        if full {
            plan.read = (0..seen.len()).collect();
            plan.deleted.clear();
        }
        let record = (scope == ALL).then_some(dirs_before);
        self.execute(&seen, plan, full, progress, record, started)
    }

    /// The sync behind every listing, run only when a followed directory's
    /// mtime moved (a run folder was created or removed, a session or
    /// transcript file written). Why names and not stamps: the parent's
    /// mtime moves on *every* `run start`, including our own, and a stat of
    /// every manifest costs ~0.7 s at 100,000 runs. Comparing the set of
    /// folder names with the index costs one `readdir` (no per-entry stat)
    /// and one index read, and only new names are parsed, so our own writes
    /// stay cheap for the next listing without trusting ourselves about
    /// what else appeared meanwhile (recording "our" mtime after our own
    /// `mkdir` would have to prove no other tool created a folder in the
    /// same coarse mtime tick, which it cannot). The parent's mtime never
    /// showed in-place edits inside run folders anyway: those are caught
    /// for the runs a query returns by the verify-on-read check in
    /// [`Index::find_runs`], and for all runs by `index sync`.
    fn sync_names(&mut self) -> Result<SyncReport> {
        let started = std::time::Instant::now();
        let dirs_before = self.dirs_stamp();
        // Work sessions and transcripts are few: a stat of each.
        let (mut seen, mut plan) = self.plan(&[Kind::WorkSession, Kind::Transcript])?;
        let runs_dir = self.project.config.agent_outputs_folder.clone();
        let on_disk: std::collections::HashSet<String> = folder_names(&runs_dir)?
            .into_iter()
            .map(|name| path_str(&runs_dir.join(name).join(MANIFEST)))
            .collect();
        let known: std::collections::HashSet<String> = {
            let mut stmt = self
                .conn
                .prepare("SELECT path FROM files WHERE kind = 'run'")
                .map_err(self.err())?;
            stmt.query_map([], |r| r.get::<_, String>(0))
                .map_err(self.err())?
                .collect::<std::result::Result<_, _>>()
                .map_err(self.err())?
        };
        plan.deleted
            .extend(known.iter().filter(|k| !on_disk.contains(*k)).cloned());
        // A folder without a manifest yet (another tool mid-start) leaves
        // the directories unrecorded, so the next listing looks again.
        let mut complete = true;
        for key in on_disk.iter().filter(|k| !known.contains(*k)) {
            let manifest = PathBuf::from(key);
            match fs::metadata(&manifest) {
                Ok(m) => {
                    let dir_mtime = manifest.parent().map_or(0, mtime_ns);
                    plan.read.push(seen.len());
                    plan.new += 1;
                    seen.push(self::seen(Kind::Run, manifest, &m, dir_mtime));
                }
                Err(_) => complete = false,
            }
        }
        self.execute(
            &seen,
            plan,
            false,
            None,
            complete.then_some(dirs_before),
            started,
        )
    }

    /// Applies a plan: deletions, then the new and changed files parsed on
    /// every core and written in batches (one transaction when `full`).
    /// `record_dirs` is the directory stamp taken before the walk, stored as
    /// "seen" only if nothing moved meanwhile.
    fn execute(
        &mut self,
        seen: &[Seen],
        plan: Plan,
        full: bool,
        progress: Option<&(dyn Fn(u64, u64) + Sync)>,
        record_dirs: Option<String>,
        started: std::time::Instant,
    ) -> Result<SyncReport> {
        let mut report = SyncReport {
            scanned: seen.len() as u64,
            ..SyncReport::default()
        };
        let e = sql(&self.path);
        // Deleted files first.
        if !plan.deleted.is_empty() {
            let tx = self
                .conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(&e)?;
            for path in &plan.deleted {
                let kind: Option<String> = tx
                    .query_row("SELECT kind FROM files WHERE path = ?1", [path], |r| {
                        r.get(0)
                    })
                    .optional()
                    .map_err(&e)?;
                if let Some(kind) = kind.as_deref().and_then(Kind::parse) {
                    remove_record(&tx, kind, Path::new(path)).map_err(&e)?;
                }
                report.removed += 1;
            }
            tx.commit().map_err(&e)?;
        }
        // Changed and new files: parsed on every core, written here in
        // batches as they arrive.
        let todo: Vec<&Seen> = plan.read.iter().map(|&i| &seen[i]).collect();
        let total = todo.len() as u64;
        let project = self.project.clone();
        let next = AtomicUsize::new(0);
        let done = AtomicUsize::new(0);
        let workers = std::thread::available_parallelism()
            .map_or(2, |n| n.get())
            .clamp(1, 16);
        // Records travel in chunks: one channel hand-off (and futex wake)
        // per record cost the writer thread, the bottleneck, several % of a
        // rebuild.
        const CHUNK: usize = 64;
        let (tx_rec, rx_rec) =
            std::sync::mpsc::sync_channel::<Vec<(Kind, PathBuf, Option<Record>)>>(64);
        let write_result: Mutex<Result<()>> = Mutex::new(Ok(()));
        std::thread::scope(|scope| {
            for _ in 0..workers {
                let tx_rec = tx_rec.clone();
                let todo = &todo;
                let next = &next;
                let done = &done;
                let project = &project;
                scope.spawn(move || {
                    let mut chunk = Vec::with_capacity(CHUNK);
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(s) = todo.get(i) else {
                            if !chunk.is_empty() {
                                let _ = tx_rec.send(chunk);
                            }
                            break;
                        };
                        let rec = read_record(project, s.kind, &s.path);
                        let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                        if let Some(cb) = progress
                            && (n.is_multiple_of(256) || n as u64 == total)
                        {
                            cb(n as u64, total);
                        }
                        chunk.push((s.kind, s.path.clone(), rec));
                        if chunk.len() >= CHUNK
                            && tx_rec
                                .send(std::mem::replace(&mut chunk, Vec::with_capacity(CHUNK)))
                                .is_err()
                        {
                            break;
                        }
                    }
                });
            }
            drop(tx_rec);
            let stamps: HashMap<&Path, &Seen> =
                todo.iter().map(|s| (s.path.as_path(), *s)).collect();
            let conn = &self.conn;
            let mut result = (|| -> Result<()> {
                let mut batch = 0usize;
                if full {
                    // The index is derived and this transaction replaces all
                    // of it: no fsync is needed to keep it consistent (a crash
                    // leaves the old index, or a torn one that `open` throws
                    // away and rebuilds), and a big page cache keeps the bulk
                    // insert off the disk until commit.
                    conn.execute_batch("PRAGMA synchronous = OFF; PRAGMA cache_size = -131072")
                        .map_err(&e)?;
                }
                conn.execute_batch("BEGIN IMMEDIATE").map_err(&e)?;
                let body = (|| -> Result<()> {
                    if full {
                        // Everything goes, the secondary indexes too: they are
                        // created once at the end over the loaded rows. The FTS
                        // table is emptied with 'delete-all' (drops its segments
                        // at once): a DELETE on a contentless_delete table
                        // removes row by row and leaves tombstones that later
                        // merges wade through (~0.3 s of a 20,000-run rebuild).
                        let mut sql = String::from(
                            "DELETE FROM runs; DELETE FROM outputs; DELETE FROM edges; DELETE FROM tags;
                             INSERT INTO runs_fts(runs_fts) VALUES ('delete-all'); DELETE FROM work_sessions; DELETE FROM transcripts;
                             DELETE FROM files; DELETE FROM corrupt;",
                        );
                        for (name, _) in INDEXES {
                            sql.push_str(&format!("DROP INDEX IF EXISTS {name};"));
                        }
                        // FTS keeps this much pending text in memory before it
                        // writes a segment: fewer, larger segments to merge.
                        sql.push_str(
                            "INSERT INTO runs_fts(runs_fts, rank) VALUES ('hashsize', 67108864);",
                        );
                        conn.execute_batch(&sql).map_err(&e)?;
                    }
                    let ctx = if full { Fresh::Yes } else { Fresh::No };
                    // An incremental sync writes in groups: first every
                    // group member's old run rows are removed, then the new
                    // ones stored. Why: a delete from the contentless_delete
                    // FTS table makes FTS5 flush its pending inserts to a new
                    // on-disk segment first (tombstones only apply to
                    // segments), and each flush runs an incremental merge.
                    // Interleaving delete, insert, delete, insert… flushed
                    // and merged once per changed run (~2.5 ms each, most of
                    // a 1 %-changed sync); grouped, once per group. The
                    // group never spans a COMMIT, so what readers see
                    // between batches is unchanged.
                    let mut group: Vec<(Kind, PathBuf, Option<Record>)> = Vec::new();
                    let flush_group = |group: &mut Vec<(Kind, PathBuf, Option<Record>)>,
                                       report: &mut SyncReport|
                     -> Result<()> {
                        if ctx == Fresh::No {
                            for (kind, path, _) in group.iter() {
                                if *kind == Kind::Run
                                    && let Some(folder) = path.parent()
                                {
                                    // `apply` below removes the run again;
                                    // that second removal finds no row and
                                    // so touches no FTS segment.
                                    remove_run(conn, &path_str(folder)).map_err(&e)?;
                                }
                            }
                        }
                        for (kind, path, rec) in group.drain(..) {
                            let stamp = stamps
                                .get(path.as_path())
                                .map(|s| (s.size, s.mtime_ns, s.dir_mtime_ns));
                            apply(conn, kind, &path, rec, stamp, Some(&mut *report), ctx)
                                .map_err(&e)?;
                            report.indexed += 1;
                        }
                        Ok(())
                    };
                    for item in rx_rec.iter().flatten() {
                        group.push(item);
                        batch += 1;
                        if group.len() >= GROUP {
                            flush_group(&mut group, &mut report)?;
                        }
                        if batch >= BATCH && !full {
                            flush_group(&mut group, &mut report)?;
                            batch = 0;
                            conn.execute_batch("COMMIT; BEGIN IMMEDIATE").map_err(&e)?;
                        }
                    }
                    flush_group(&mut group, &mut report)?;
                    if full {
                        for (_, create) in INDEXES {
                            conn.execute_batch(create).map_err(&e)?;
                        }
                        conn.execute_batch(
                            "INSERT INTO runs_fts(runs_fts, rank) VALUES ('hashsize', 1048576);
                             ANALYZE;",
                        )
                        .map_err(&e)?;
                    }
                    conn.execute(
                        "INSERT OR REPLACE INTO meta(key, value) VALUES ('last_sync', ?1)",
                        [clock::now_string()],
                    )
                    .map_err(&e)?;
                    // Only record the folders' mtimes as seen if nothing moved
                    // while we walked; otherwise the next listing syncs again.
                    if let Some(before) = &record_dirs
                        && *before == self_dirs_stamp(&project)
                        && dirs_settled(&project)
                    {
                        conn.execute(
                            "INSERT OR REPLACE INTO meta(key, value) VALUES ('dirs_mtime', ?1)",
                            [before],
                        )
                        .map_err(&e)?;
                    }
                    Ok(())
                })();
                match body {
                    Ok(()) => conn.execute_batch("COMMIT").map_err(&e),
                    Err(err) => {
                        let _ = conn.execute_batch("ROLLBACK");
                        Err(err)
                    }
                }
            })();
            if full {
                // Back to the normal write discipline, and the WAL (which
                // now holds the whole new index) copied home and truncated
                // so it does not stay on disk at the size of the index.
                let restore = conn
                    .execute_batch(
                        "PRAGMA synchronous = NORMAL; PRAGMA cache_size = -2000;
                         PRAGMA wal_checkpoint(TRUNCATE);",
                    )
                    .map_err(&e);
                if result.is_ok()
                    && let Err(err) = restore
                {
                    result = Err(err);
                }
            }
            if let Ok(mut slot) = write_result.lock() {
                *slot = result;
            }
            // Unblock workers if the writer stopped early.
            drop(rx_rec);
        });
        write_result
            .into_inner()
            .map_err(|_| Error::State("index writer panicked".into()))??;
        report.seconds = started.elapsed().as_secs_f64();
        Ok(report)
    }

    fn dirs_stamp(&self) -> String {
        self_dirs_stamp(&self.project)
    }

    // -----------------------------------------------------------------------
    // Queries

    /// Runs matching `query`, newest `started_at` first (ties by id), or by
    /// relevance for a text query, paged by `limit`/`offset`. Never reads
    /// the run folders. The same filters as [`run::find_scan`], except that
    /// `text` is a full-text search (words, output file contents included)
    /// rather than a substring test.
    ///
    /// Every run returned is verified against its file first (see
    /// `Index::verified`), so an edit made in place by another tool is
    /// never answered from the old record.
    pub fn find_runs(&self, query: &RunQuery) -> Result<Vec<Hit>> {
        self.verified(|| self.query_runs(query), |h| &h.run.folder)
    }

    /// Verify-on-read: runs `query`, stats the manifest of every run it
    /// returned and compares size and mtime (ns) with the stamp the index
    /// stored; any that differ (or are gone) are re-read into the index
    /// under the run's lock, exactly as a logbook write would, and the query
    /// runs again, at most [`VERIFY_ROUNDS`] times. The cost is one stat per
    /// returned run, O(page size), never O(runs).
    ///
    /// The gap that remains, by design: an in-place edit (no rename, so no
    /// directory mtime moves) that makes a run the query did *not* return
    /// newly match is only seen at the next `index sync`, or when that run's
    /// folder set changes. Closing it would mean a stat of every manifest
    /// on every query, the very cost the index exists to avoid.
    fn verified<T>(
        &self,
        query: impl Fn() -> Result<Vec<T>>,
        folder: impl Fn(&T) -> &Path,
    ) -> Result<Vec<T>> {
        for _ in 0..VERIFY_ROUNDS {
            let rows = query()?;
            let mut stale = vec![];
            for row in &rows {
                let folder = folder(row);
                if self.is_stale(folder)? {
                    stale.push(folder.to_path_buf());
                }
            }
            if stale.is_empty() {
                return Ok(rows);
            }
            self.reindex_runs(&stale)?;
        }
        // A file rewritten on every round: answer from the latest re-read.
        query()
    }

    /// Whether a run's manifest differs from the stamp the index stored.
    fn is_stale(&self, folder: &Path) -> Result<bool> {
        let path = folder.join(MANIFEST);
        let stored: Option<(i64, i64)> = self
            .conn
            .prepare_cached("SELECT size, mtime_ns FROM files WHERE path = ?1")
            .map_err(self.err())?
            .query_row([path_str(&path)], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()
            .map_err(self.err())?;
        Ok(match (fs::metadata(&path), stored) {
            (Ok(m), Some((size, mtime))) => m.len() as i64 != size || stamp_of(&m) != mtime,
            _ => true,
        })
    }

    /// Re-reads run manifests into the index under each run's lock (the
    /// normal write discipline: run lock, then the index transaction), so a
    /// re-read never races a logbook writer of the same run.
    fn reindex_runs(&self, folders: &[PathBuf]) -> Result<()> {
        for folder in folders {
            let id = folder
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let lock = format!("run-{id}");
            // A folder that is not a run id cannot be locked by name; it is
            // recorded as corrupt, which needs no lock.
            let _guard = match run::validate_id(&id) {
                Ok(()) => Some(self.project.locks.exclusive(&lock)?),
                Err(_) => None,
            };
            self.apply_touched(&[Touched {
                kind: Kind::Run,
                path: folder.join(MANIFEST),
                lock,
            }])?;
        }
        Ok(())
    }

    fn query_runs(&self, query: &RunQuery) -> Result<Vec<Hit>> {
        // Validates the pattern exactly as the scan does.
        let matcher = query.matcher()?;
        let mut where_ = vec!["1=1".to_string()];
        let mut args: Vec<rusqlite::types::Value> = vec![];
        let arg = |v: rusqlite::types::Value, args: &mut Vec<rusqlite::types::Value>| {
            args.push(v);
            format!("?{}", args.len())
        };
        let text = query
            .text
            .as_deref()
            .map(fts_query)
            .filter(|q| !q.is_empty());
        let from = if let Some(q) = &text {
            let n = arg(q.clone().into(), &mut args);
            // The FTS table answers the MATCH and its bm25 rank alone; only
            // rowids and ranks flow into the join and the sort.
            format!(
                "(SELECT rowid AS frid, rank AS frank FROM runs_fts WHERE runs_fts MATCH {n}) f \
                 JOIN runs r ON r.rid = f.frid"
            )
        } else {
            "runs r".to_string()
        };
        if let Some(a) = &query.agent {
            let n = arg(a.clone().into(), &mut args);
            where_.push(format!("r.agent = {n}"));
        }
        if let Some(s) = &query.status {
            let n = arg(s.clone().into(), &mut args);
            where_.push(format!("r.status = {n}"));
        }
        if let Some(u) = &query.user {
            let n = arg(u.clone().into(), &mut args);
            where_.push(format!("r.user = {n}"));
        }
        if let Some(t) = &query.tag {
            let n = arg(t.clone().into(), &mut args);
            where_.push(format!(
                "EXISTS (SELECT 1 FROM tags t WHERE t.rid = r.rid AND t.tag = {n})"
            ));
        }
        if let Some(since) = query.since {
            let n = arg((since.as_nanosecond() as i64).into(), &mut args);
            where_.push(format!("r.started_ns >= {n}"));
        }
        if let Some(w) = &query.workflow {
            // Few distinct workflow names: test each once against the
            // query's own rule, then let SQLite use its index.
            // Same rule as the matcher: the exact name, or the pattern
            // (already validated by `matcher()` above).
            let re = Regex::new(w).ok();
            let matching: Vec<String> = self
                .workflow_names()?
                .into_iter()
                .filter(|name| name == w || re.as_ref().is_some_and(|re| re.is_match(name)))
                .collect();
            if matching.is_empty() {
                return Ok(vec![]);
            }
            let list: Vec<String> = matching
                .into_iter()
                .map(|w| arg(w.into(), &mut args))
                .collect();
            where_.push(format!("r.workflow IN ({})", list.join(",")));
        }
        let order = if text.is_some() {
            "f.frank, r.started_ns DESC, r.id"
        } else {
            "r.started_ns DESC, r.id"
        };
        let l = arg(query.limit.map_or(-1, |l| l as i64).into(), &mut args);
        let o = arg((query.offset as i64).into(), &mut args);
        // Two steps: the page's rowids first (from the indexes alone when
        // they cover the filters), then only those rows' manifests, so the
        // sort never carries manifests and memory is the page's, not the
        // number of runs'.
        let sql_text = format!(
            "SELECT r.rid FROM {from} WHERE {} ORDER BY {order} LIMIT {l} OFFSET {o}",
            where_.join(" AND ")
        );
        let rids: Vec<i64> = {
            let mut stmt = self.conn.prepare_cached(&sql_text).map_err(self.err())?;
            stmt.query_map(rusqlite::params_from_iter(args.iter()), |r| r.get(0))
                .map_err(self.err())?
                .collect::<std::result::Result<_, _>>()
                .map_err(self.err())?
        };
        let mut row_stmt = self
            .conn
            .prepare_cached("SELECT id, folder, manifest FROM runs WHERE rid = ?1")
            .map_err(self.err())?;
        let mut out = vec![];
        for rid in rids {
            let Some((id, folder, manifest)) = row_stmt
                .query_row([rid], |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                    ))
                })
                .optional()
                .map_err(self.err())?
            else {
                continue;
            };
            let Ok(manifest) = serde_json::from_str::<run::Manifest>(&manifest) else {
                continue;
            };
            let folder = PathBuf::from(folder);
            let snippet = match &query.text {
                Some(words) if text.is_some() => snippet_of(&manifest, &folder, words),
                _ => None,
            };
            // The SQL is exact for every filter but text; this keeps the one
            // definition of "matches" authoritative.
            if text.is_none() && !matcher.matches(&manifest) {
                continue;
            }
            out.push(Hit {
                run: Run {
                    id,
                    folder,
                    manifest,
                },
                snippet,
            });
        }
        Ok(out)
    }

    /// The distinct workflow names, by hopping through the workflow index
    /// (one seek per name) rather than reading every row.
    fn workflow_names(&self) -> Result<Vec<String>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT workflow FROM runs WHERE workflow > ?1 ORDER BY workflow LIMIT 1",
            )
            .map_err(self.err())?;
        let mut names: Vec<String> = vec![];
        let mut after = String::new();
        let first_empty: bool = self
            .conn
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM runs WHERE workflow = '')",
                [],
                |r| r.get(0),
            )
            .map_err(self.err())?;
        if first_empty {
            names.push(String::new());
        }
        while let Some(next) = stmt
            .query_row([&after], |r| r.get::<_, String>(0))
            .optional()
            .map_err(self.err())?
        {
            names.push(next.clone());
            after = next;
        }
        Ok(names)
    }

    /// [`run::latest_output`] from the index: the newest run of `agent`
    /// (workflow matching) having an output of `output_type`, and its last
    /// such output.
    pub fn latest_output(
        &self,
        agent: &str,
        workflow: Option<&str>,
        output_type: Option<&str>,
    ) -> Result<Option<(Run, run::OutputRecord, PathBuf)>> {
        let query = RunQuery {
            agent: Some(agent.to_string()),
            workflow: workflow.map(str::to_string),
            ..RunQuery::default()
        };
        // Usually the newest run has the output: start with a small page.
        let (mut offset, mut size) = (0, 16);
        loop {
            let page = self.find_runs(&RunQuery {
                offset,
                limit: Some(size),
                ..query.clone()
            })?;
            if page.is_empty() {
                return Ok(None);
            }
            offset += page.len();
            size = (size * 4).min(4096);
            for hit in page {
                if let Some(out) = hit
                    .run
                    .manifest
                    .outputs
                    .iter()
                    .rev()
                    .find(|o| output_type.is_none_or(|t| o.output_type.as_str() == t))
                {
                    let path = hit.run.output_path(&out.file);
                    let out = out.clone();
                    return Ok(Some((hit.run, out, path)));
                }
            }
        }
    }

    /// One run by id, from the index, verified against its file (see
    /// `Index::verified`).
    pub fn run(&self, id: &str) -> Result<Option<Run>> {
        Ok(self
            .verified(
                || Ok(self.run_row(id)?.into_iter().collect()),
                |r| &r.folder,
            )?
            .pop())
    }

    fn run_row(&self, id: &str) -> Result<Option<Run>> {
        let row: Option<(String, String, String)> = self
            .conn
            .query_row(
                "SELECT id, folder, manifest FROM runs WHERE id = ?1 ORDER BY folder LIMIT 1",
                [id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()
            .map_err(self.err())?;
        Ok(row.and_then(|(id, folder, manifest)| {
            Some(Run {
                id,
                folder: PathBuf::from(folder),
                manifest: serde_json::from_str(&manifest).ok()?,
            })
        }))
    }

    /// Ids of the runs `id` names in `related_sessions` (its parents).
    pub fn parents(&self, id: &str) -> Result<Vec<String>> {
        self.ids(
            "SELECT DISTINCT parent FROM edges WHERE child = ?1 ORDER BY parent",
            id,
        )
    }

    /// Ids of the runs naming `id` in their `related_sessions` (its children).
    pub fn children(&self, id: &str) -> Result<Vec<String>> {
        self.ids(
            "SELECT DISTINCT child FROM edges WHERE parent = ?1 ORDER BY child",
            id,
        )
    }

    fn ids(&self, query: &str, id: &str) -> Result<Vec<String>> {
        let mut stmt = self.conn.prepare_cached(query).map_err(self.err())?;
        stmt.query_map([id], |r| r.get(0))
            .map_err(self.err())?
            .collect::<std::result::Result<_, _>>()
            .map_err(self.err())
    }

    /// Every lineage edge `(child, parent)` whose parent is not indexed as
    /// a run, for `doctor`.
    pub fn dangling_edges(&self) -> Result<Vec<(String, String)>> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT child, parent FROM edges WHERE parent NOT IN (SELECT id FROM runs) ORDER BY child, parent",
            )
            .map_err(self.err())?;
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(self.err())?
            .collect::<std::result::Result<_, _>>()
            .map_err(self.err())
    }

    /// Work sessions from the index, as `work_session::list` would read
    /// them from the files.
    pub fn work_sessions(&self) -> Result<work_session::Listing> {
        let mut listing = work_session::Listing {
            active: work_session::active_id(&self.project).unwrap_or(None),
            ..Default::default()
        };
        let mut stmt = self
            .conn
            .prepare(
                "SELECT path, archived, record FROM work_sessions ORDER BY last_updated DESC, path",
            )
            .map_err(self.err())?;
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, bool>(1)?,
                    r.get::<_, String>(2)?,
                ))
            })
            .map_err(self.err())?;
        for row in rows {
            let (path, archived, record) = row.map_err(self.err())?;
            match serde_json::from_str::<work_session::WorkSession>(&record) {
                Ok(ws) if archived => listing.archived.push(ws),
                Ok(ws) => listing.sessions.push(ws),
                Err(err) => listing.corrupt.push(work_session::CorruptFile {
                    path: PathBuf::from(path),
                    reason: err.to_string(),
                }),
            }
        }
        for c in self.corrupt_files()? {
            if c.kind == Kind::WorkSession {
                listing.corrupt.push(work_session::CorruptFile {
                    path: c.path,
                    reason: c.reason,
                });
            }
        }
        Ok(listing)
    }

    /// Transcripts from the index, newest `lastActiveAt` first (unparseable
    /// times last), as `transcript::list` orders them, paged.
    pub fn transcripts(
        &self,
        kind: Option<transcript::Kind>,
        limit: Option<usize>,
        offset: Option<usize>,
    ) -> Result<Vec<transcript::Summary>> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT path, id, kind, workdir, started_at, last_active_at, tokens, parent FROM transcripts \
                 WHERE ?1 IS NULL OR kind = ?1 \
                 ORDER BY last_active_ms IS NULL, last_active_ms DESC, last_active_at DESC, path \
                 LIMIT ?2 OFFSET ?3",
            )
            .map_err(self.err())?;
        let rows = stmt
            .query_map(
                params![
                    kind.map(transcript::Kind::as_str),
                    limit.map_or(-1, |l| l as i64),
                    offset.unwrap_or(0) as i64
                ],
                |r| {
                    Ok(transcript::Summary {
                        file: PathBuf::from(r.get::<_, String>(0)?),
                        id: r.get(1)?,
                        kind: if r.get::<_, String>(2)? == "subagent" {
                            transcript::Kind::Subagent
                        } else {
                            transcript::Kind::Main
                        },
                        workdir: r.get(3)?,
                        started_at: r.get(4)?,
                        last_active_at: r.get(5)?,
                        latest_total_tokens: r.get::<_, i64>(6)?.max(0) as u64,
                        parent_session_id: r.get(7)?,
                    })
                },
            )
            .map_err(self.err())?;
        rows.collect::<std::result::Result<_, _>>()
            .map_err(self.err())
    }

    /// How many files of `kind` the index holds as unparseable.
    pub fn corrupt_count(&self, kind: Kind) -> Result<u64> {
        self.conn
            .prepare_cached("SELECT count(*) FROM corrupt WHERE kind = ?1")
            .map_err(self.err())?
            .query_row([kind.as_str()], |r| r.get::<_, i64>(0))
            .map(|n| n.max(0) as u64)
            .map_err(self.err())
    }

    /// Files the last sync could not parse.
    pub fn corrupt_files(&self) -> Result<Vec<CorruptEntry>> {
        let mut stmt = self
            .conn
            .prepare("SELECT path, kind, reason FROM corrupt ORDER BY path")
            .map_err(self.err())?;
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                ))
            })
            .map_err(self.err())?;
        let mut out = vec![];
        for row in rows {
            let (path, kind, reason) = row.map_err(self.err())?;
            if let Some(kind) = Kind::parse(&kind) {
                out.push(CorruptEntry {
                    path: PathBuf::from(path),
                    kind,
                    reason,
                });
            }
        }
        Ok(out)
    }

    /// Counts, size and staleness, for `index status`.
    pub fn status(&self) -> Result<Status> {
        let count = |table: &str| -> Result<u64> {
            self.conn
                .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| {
                    r.get::<_, i64>(0)
                })
                .map(|n| n.max(0) as u64)
                .map_err(self.err())
        };
        let size = |p: &Path| fs::metadata(p).map_or(0, |m| m.len());
        let wal = PathBuf::from(format!("{}-wal", self.path.display()));
        Ok(Status {
            path: self.path.clone(),
            size_bytes: size(&self.path) + size(&wal),
            schema_version: SCHEMA_VERSION,
            runs: count("runs")?,
            outputs: count("outputs")?,
            edges: count("edges")?,
            work_sessions: count("work_sessions")?,
            transcripts: count("transcripts")?,
            corrupt: count("corrupt")?,
            pending: count("pending")?,
            last_sync: self.meta("last_sync")?,
            stale: self.staleness()?,
        })
    }

    /// A canonical dump of everything the index holds about the files (not
    /// its bookkeeping), to compare two indexes built different ways.
    pub fn fingerprint(&self) -> Result<Vec<String>> {
        let queries = [
            "SELECT 'run', folder, id, agent, workflow, status, user, started_at, coalesce(completed_at,''), title, manifest FROM runs",
            "SELECT 'out', r.folder, o.seq, o.file, o.type, o.description, o.created_at, '', '', '', '' FROM outputs o JOIN runs r ON r.rid = o.rid",
            "SELECT 'edge', child, parent, '', '', '', '', '', '', '', '' FROM edges",
            "SELECT 'tag', r.folder, t.tag, '', '', '', '', '', '', '', '' FROM tags t JOIN runs r ON r.rid = t.rid",
            // Contentless: the words cannot be read back, only that the run
            // has its row.
            "SELECT 'fts', r.folder, '', '', '', '', '', '', '', '', '' FROM runs_fts f JOIN runs r ON r.rid = f.rowid",
            "SELECT 'ws', path, id, status, archived, last_updated, record, '', '', '', '' FROM work_sessions",
            "SELECT 'tr', path, id, kind, workdir, started_at, last_active_at, tokens, coalesce(parent,''), '', '' FROM transcripts",
            "SELECT 'bad', path, kind, '', '', '', '', '', '', '', '' FROM corrupt",
        ];
        let mut out = vec![];
        for q in queries {
            let mut stmt = self.conn.prepare(q).map_err(self.err())?;
            let rows = stmt
                .query_map([], |r| {
                    let mut parts = vec![];
                    for i in 0..11 {
                        let v: rusqlite::types::Value = r.get(i)?;
                        parts.push(match v {
                            rusqlite::types::Value::Null => String::new(),
                            rusqlite::types::Value::Integer(n) => n.to_string(),
                            rusqlite::types::Value::Real(f) => f.to_string(),
                            rusqlite::types::Value::Text(s) => s,
                            rusqlite::types::Value::Blob(b) => format!("{b:?}"),
                        });
                    }
                    Ok(parts.join("\u{1f}"))
                })
                .map_err(self.err())?;
            for row in rows {
                out.push(row.map_err(self.err())?);
            }
        }
        out.sort();
        Ok(out)
    }
}

fn is_corruption(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::NotADatabase | rusqlite::ErrorCode::DatabaseCorrupt)
    )
}

fn remove_db_files(path: &Path) -> Result<()> {
    for suffix in ["", "-wal", "-shm"] {
        let p = PathBuf::from(format!("{}{suffix}", path.display()));
        match fs::remove_file(&p) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(&p, e)),
        }
    }
    Ok(())
}

/// Directory mtimes have coarse granularity (a kernel tick): an entry
/// created in the same tick as the one we saw leaves the mtime unchanged.
/// A stamp is only trusted as "seen" once every followed directory is older
/// than this, so such a late entry is never hidden behind an equal mtime.
const RACY_MTIME: Duration = Duration::from_millis(50);

fn dirs_settled(p: &Project) -> bool {
    let Ok(now) = std::time::SystemTime::now().duration_since(UNIX_EPOCH) else {
        return false;
    };
    let limit = now.saturating_sub(RACY_MTIME).as_nanos() as i64;
    [
        &p.config.agent_outputs_folder,
        &p.config.sessions_dir,
        &p.config.session_archive_dir,
        &p.config.transcripts_dir,
    ]
    .iter()
    .all(|d| mtime_ns(d) < limit)
}

/// The names of the subfolders of `dir` (file types come from `readdir`
/// itself on the usual file systems: no per-entry stat).
fn folder_names(dir: &Path) -> Result<Vec<std::ffi::OsString>> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(vec![]),
        Err(e) => return Err(Error::io(dir, e)),
    };
    let mut out = vec![];
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(dir, e))?;
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            out.push(entry.file_name());
        }
    }
    Ok(out)
}

fn self_dirs_stamp(p: &Project) -> String {
    format!(
        "{}:{}:{}:{}",
        mtime_ns(&p.config.agent_outputs_folder),
        mtime_ns(&p.config.sessions_dir),
        mtime_ns(&p.config.session_archive_dir),
        mtime_ns(&p.config.transcripts_dir)
    )
}

/// Turns free text into an FTS5 query of quoted terms (all must match), so
/// punctuation in a user's words is never read as query syntax.
fn fts_query(text: &str) -> String {
    text.split_whitespace()
        .map(|w| format!("\"{}\"", w.replace('"', "\"\"")))
        .collect::<Vec<_>>()
        .join(" ")
}

fn path_str(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

fn mtime_ns(p: &Path) -> i64 {
    fs::metadata(p).map_or(0, |m| stamp_of(&m))
}

fn stamp_of(m: &fs::Metadata) -> i64 {
    m.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as i64)
}

// ---------------------------------------------------------------------------
// The directory walk

/// A file found on disk, with the stamp sync compares.
#[derive(Debug)]
struct Seen {
    kind: Kind,
    path: PathBuf,
    key: String,
    size: i64,
    mtime_ns: i64,
    dir_mtime_ns: i64,
}

#[derive(Debug, Default)]
struct Plan {
    read: Vec<usize>,
    new: usize,
    deleted: Vec<String>,
}

fn seen(kind: Kind, path: PathBuf, m: &fs::Metadata, dir_mtime_ns: i64) -> Seen {
    Seen {
        kind,
        key: path_str(&path),
        path,
        size: m.len() as i64,
        mtime_ns: stamp_of(m),
        dir_mtime_ns,
    }
}

/// Every file the index follows, with its stamp: one `stat` per run
/// manifest and per run folder (a folder's mtime moves when an output file
/// is added or replaced), one per session and transcript file.
fn walk(p: &Project, scope: &[Kind]) -> Result<Vec<Seen>> {
    let mut out = vec![];
    let runs_dir = &p.config.agent_outputs_folder;
    match fs::read_dir(runs_dir) {
        _ if !scope.contains(&Kind::Run) => {}
        Ok(entries) => {
            for entry in entries {
                let entry = entry.map_err(|e| Error::io(runs_dir, e))?;
                if !entry.file_type().is_ok_and(|t| t.is_dir()) {
                    continue;
                }
                let folder = entry.path();
                let manifest = folder.join(MANIFEST);
                let Ok(m) = fs::metadata(&manifest) else {
                    continue;
                };
                let dir_mtime = mtime_ns(&folder);
                out.push(seen(Kind::Run, manifest, &m, dir_mtime));
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::io(runs_dir, e)),
    }
    for dir in [&p.config.sessions_dir, &p.config.session_archive_dir] {
        if !scope.contains(&Kind::WorkSession) {
            break;
        }
        for path in work_session::session_files(dir)? {
            if let Ok(m) = fs::metadata(&path) {
                out.push(seen(Kind::WorkSession, path, &m, 0));
            }
        }
    }
    if !scope.contains(&Kind::Transcript) {
        return Ok(out);
    }
    for (_, path) in transcript::transcript_files(&p.config.transcripts_dir)? {
        if let Ok(m) = fs::metadata(&path) {
            out.push(seen(Kind::Transcript, path, &m, 0));
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------------------
// Reading files into records

/// A parsed file, ready to store.
#[derive(Debug)]
enum Record {
    Run(Box<RunRow>),
    WorkSession {
        path: PathBuf,
        id: String,
        status: String,
        archived: bool,
        last_updated: String,
        record: String,
    },
    Transcript(Box<transcript::Summary>),
    Corrupt {
        reason: String,
    },
}

#[derive(Debug)]
struct RunRow {
    folder: PathBuf,
    id: String,
    agent: String,
    workflow: String,
    status: String,
    user: Option<String>,
    started_at: String,
    started_ns: Option<i64>,
    completed_at: Option<String>,
    title: String,
    manifest: String,
    outputs: Vec<(String, String, String, String)>,
    parents: Vec<String>,
    tags: Vec<String>,
    fts_agent: String,
    fts_workflow: String,
    fts_body: String,
}

/// Reads one file into a record; `None` when the file is gone.
fn read_record(p: &Project, kind: Kind, path: &Path) -> Option<Record> {
    match kind {
        Kind::Run => read_run(path),
        Kind::WorkSession => {
            if !path.is_file() {
                return None;
            }
            Some(match work_session::read_file(p, path) {
                Ok(ws) => {
                    let archived = path.starts_with(&p.config.session_archive_dir)
                        && p.config.session_archive_dir != p.config.sessions_dir
                        || ws.status == work_session::SessionStatus::Closed;
                    match serde_json::to_string(&ws) {
                        Ok(record) => Record::WorkSession {
                            path: path.to_path_buf(),
                            id: ws.session_id.clone(),
                            status: ws.status.as_str().to_string(),
                            archived,
                            last_updated: ws.last_updated.clone(),
                            record,
                        },
                        Err(e) => Record::Corrupt {
                            reason: e.to_string(),
                        },
                    }
                }
                Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                    return None;
                }
                Err(e) => Record::Corrupt {
                    reason: e.to_string(),
                },
            })
        }
        Kind::Transcript => read_transcript(path),
    }
}

#[derive(serde::Deserialize)]
struct TranscriptHead {
    id: String,
    #[serde(default)]
    metadata: transcript::Metadata,
}

/// Reads a transcript's id and metadata; its messages are skipped, not kept.
fn read_transcript(path: &Path) -> Option<Record> {
    let name = path.file_name()?.to_string_lossy().into_owned();
    let (kind, _) = transcript::parse_file_name(&name)?;
    let file = match fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => {
            return Some(Record::Corrupt {
                reason: e.to_string(),
            });
        }
    };
    let head: TranscriptHead =
        match serde_json::from_reader(std::io::BufReader::with_capacity(1 << 16, file)) {
            Ok(h) => h,
            Err(e) => {
                return Some(Record::Corrupt {
                    reason: e.to_string(),
                });
            }
        };
    Some(Record::Transcript(Box::new(transcript::Summary {
        id: head.id,
        kind,
        file: path.to_path_buf(),
        workdir: head.metadata.workdir,
        started_at: head.metadata.started_at,
        last_active_at: head.metadata.last_active_at,
        latest_total_tokens: head.metadata.latest_total_tokens,
        parent_session_id: head.metadata.parent_session_id,
    })))
}

fn read_run(manifest_path: &Path) -> Option<Record> {
    let folder = manifest_path.parent()?.to_path_buf();
    let id = folder.file_name()?.to_string_lossy().into_owned();
    let text = match fs::read_to_string(manifest_path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => {
            return Some(Record::Corrupt {
                reason: e.to_string(),
            });
        }
    };
    // The same rules as the scan: the folder is the id, the manifest parses
    // leniently into the run model.
    if run::validate_id(&id).is_err() {
        return Some(Record::Corrupt {
            reason: format!("folder name {id:?} is not a run id (a UUID)"),
        });
    }
    let m = match run::parse_manifest(manifest_path, &text) {
        Ok((m, _)) => m,
        Err(e) => {
            return Some(Record::Corrupt {
                reason: e.to_string(),
            });
        }
    };
    let manifest = match serde_json::to_string(&m) {
        Ok(s) => s,
        Err(e) => {
            return Some(Record::Corrupt {
                reason: e.to_string(),
            });
        }
    };
    let mut outputs = vec![];
    let mut body = manifest_text(&m);
    for o in &m.outputs {
        if let Some(t) = output_text(&folder, &o.file) {
            body.push_str(&t);
            body.push('\n');
        }
        outputs.push((
            o.file.clone(),
            o.output_type.as_str().to_string(),
            o.description.clone(),
            o.created_at.clone(),
        ));
    }
    let mut tags = m.tags.clone();
    tags.sort();
    tags.dedup();
    let started_ns = clock::parse(&m.execution.started_at).map(|t| t.as_nanosecond() as i64);
    let row = RunRow {
        id,
        agent: m.agent.name.clone(),
        workflow: m.workflow.name.clone(),
        status: m.execution.status.as_str().to_string(),
        user: m.execution.user.clone(),
        started_at: m.execution.started_at.clone(),
        started_ns,
        completed_at: m.execution.completed_at.clone(),
        title: m.agent.title.clone().unwrap_or_default(),
        manifest,
        outputs,
        parents: m.related().to_vec(),
        tags,
        fts_agent: format!(
            "{}\n{}",
            m.agent.name,
            m.agent.title.as_deref().unwrap_or_default()
        ),
        fts_workflow: m.workflow.name.clone(),
        fts_body: body,
        folder,
    };
    Some(Record::Run(Box::new(row)))
}

/// The searchable text of a manifest itself (not of its output files):
/// what the FTS `body` column indexes before the outputs' text, and what
/// snippets are cut from.
fn manifest_text(m: &run::Manifest) -> String {
    let mut body = String::new();
    for part in [
        m.agent.title.as_deref().unwrap_or_default(),
        m.workflow.description.as_deref().unwrap_or_default(),
        m.user_summary.as_deref().unwrap_or_default(),
        m.display_name.as_deref().unwrap_or_default(),
        m.execution.user.as_deref().unwrap_or_default(),
    ] {
        if !part.is_empty() {
            body.push_str(part);
            body.push('\n');
        }
    }
    for x in [&m.inputs, &m.metadata].into_iter().flatten() {
        flatten_text(&Value::Object(x.clone()), &mut body);
    }
    let mut tags = m.tags.clone();
    tags.sort();
    tags.dedup();
    for t in &tags {
        body.push_str(t);
        body.push('\n');
    }
    for o in &m.outputs {
        body.push_str(&o.description);
        body.push('\n');
        body.push_str(&o.file);
        body.push('\n');
    }
    body
}

/// A fragment around the first of the query's words found, hits in `[…]`.
/// The FTS table is contentless (it keeps no text), so the fragment is cut
/// from the run's manifest text and, only when the words matched nothing
/// there, from its registered output files: at most a page of runs, each
/// file under [`MAX_TEXT_BYTES`], and never for listings without `--text`.
fn snippet_of(m: &run::Manifest, folder: &Path, words: &str) -> Option<String> {
    let terms: Vec<&str> = words
        .split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .collect();
    if terms.is_empty() {
        return None;
    }
    let head = format!(
        "{}\n{}\n{}",
        m.agent.name,
        m.workflow.name,
        manifest_text(m)
    );
    if let Some(s) = cut_snippet(&head, &terms) {
        return Some(s);
    }
    m.outputs
        .iter()
        .filter_map(|o| output_text(folder, &o.file))
        .find_map(|t| cut_snippet(&t, &terms))
}

/// Byte range of the first whole-word, case-insensitive occurrence of any
/// of `terms` in `text` at or after `from`.
fn find_word(text: &str, terms: &[&str], from: usize) -> Option<(usize, usize)> {
    let mut prev_alnum = text[..from]
        .chars()
        .next_back()
        .is_some_and(char::is_alphanumeric);
    for (i, c) in text[from..].char_indices() {
        let at = from + i;
        if !prev_alnum && c.is_alphanumeric() {
            for t in terms {
                let mut end = at;
                let mut rest = text[at..].chars();
                let matched = t.chars().all(|tc| {
                    rest.next().is_some_and(|hc| {
                        end += hc.len_utf8();
                        hc.to_lowercase().eq(tc.to_lowercase())
                    })
                });
                if matched
                    && !text[end..]
                        .chars()
                        .next()
                        .is_some_and(char::is_alphanumeric)
                {
                    return Some((at, end));
                }
            }
        }
        prev_alnum = c.is_alphanumeric();
    }
    None
}

fn cut_snippet(text: &str, terms: &[&str]) -> Option<String> {
    const AROUND: usize = 48;
    let (start, _) = find_word(text, terms, 0)?;
    let floor = |mut i: usize| {
        while !text.is_char_boundary(i) {
            i -= 1;
        }
        i
    };
    let lo = floor(start.saturating_sub(AROUND));
    let hi = floor((start + 2 * AROUND).min(text.len()));
    let mut out = String::new();
    if lo > 0 {
        out.push('…');
    }
    let mut at = lo;
    while let Some((s, e)) = find_word(text, terms, at).filter(|(_, e)| *e <= hi) {
        out.push_str(&text[at..s]);
        out.push('[');
        out.push_str(&text[s..e]);
        out.push(']');
        at = e;
    }
    out.push_str(&text[at..hi]);
    if hi < text.len() {
        out.push('…');
    }
    Some(out.split_whitespace().collect::<Vec<_>>().join(" "))
}

fn flatten_text(v: &Value, out: &mut String) {
    match v {
        Value::String(s) => {
            out.push_str(s);
            out.push('\n');
        }
        Value::Number(n) => {
            out.push_str(&n.to_string());
            out.push('\n');
        }
        Value::Bool(b) => {
            out.push_str(if *b { "true\n" } else { "false\n" });
        }
        Value::Array(a) => a.iter().for_each(|x| flatten_text(x, out)),
        Value::Object(m) => {
            for (k, x) in m {
                out.push_str(k);
                out.push_str(": ");
                flatten_text(x, out);
            }
        }
        Value::Null => {}
    }
}

/// The text of a registered output file, if it is a small UTF-8 file inside
/// its run folder.
fn output_text(folder: &Path, file: &str) -> Option<String> {
    let rel = Path::new(file);
    if file.is_empty()
        || file.contains('\0')
        || rel.is_absolute()
        || rel.components().any(|c| {
            !matches!(
                c,
                std::path::Component::Normal(_) | std::path::Component::CurDir
            )
        })
    {
        return None;
    }
    let path = folder.join(rel);
    let m = fs::symlink_metadata(&path).ok()?;
    if !m.is_file() || m.len() > MAX_TEXT_BYTES {
        return None;
    }
    let bytes = fs::read(&path).ok()?;
    if bytes.contains(&0) {
        return None;
    }
    String::from_utf8(bytes).ok()
}

// ---------------------------------------------------------------------------
// Writing records

/// Whether the tables are known to hold nothing about the record (a
/// rebuild after its bulk delete): then nothing old needs deleting first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fresh {
    Yes,
    No,
}

fn store_record(tx: &Connection, r: &Record, fresh: Fresh) -> rusqlite::Result<()> {
    match r {
        Record::Run(row) => store_run(tx, row, fresh),
        Record::WorkSession {
            path,
            id,
            status,
            archived,
            last_updated,
            record,
        } => {
            tx.execute("DELETE FROM corrupt WHERE path = ?1", [path_str(path)])?;
            tx.execute(
                "INSERT OR REPLACE INTO work_sessions(path, id, status, archived, last_updated, record) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![path_str(path), id, status, archived, last_updated, record],
            )?;
            Ok(())
        }
        Record::Transcript(t) => {
            tx.execute("DELETE FROM corrupt WHERE path = ?1", [path_str(&t.file)])?;
            tx.execute(
                "INSERT OR REPLACE INTO transcripts(path, id, kind, workdir, started_at, last_active_at, \
                 last_active_ms, tokens, parent) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                params![
                    path_str(&t.file),
                    t.id,
                    t.kind.as_str(),
                    t.workdir,
                    t.started_at,
                    t.last_active_at,
                    clock::parse(&t.last_active_at).map(|ts| ts.as_millisecond()),
                    t.latest_total_tokens as i64,
                    t.parent_session_id
                ],
            )?;
            Ok(())
        }
        Record::Corrupt { .. } => Ok(()),
    }
}

fn store_run(tx: &Connection, row: &RunRow, fresh: Fresh) -> rusqlite::Result<()> {
    let folder = path_str(&row.folder);
    if fresh == Fresh::No {
        remove_run(tx, &folder)?;
        tx.prepare_cached("DELETE FROM corrupt WHERE path = ?1")?
            .execute([path_str(&row.folder.join(MANIFEST))])?;
    }
    let mut ins = tx.prepare_cached(
        "INSERT INTO runs(folder, id, agent, workflow, status, user, started_at, started_ns, completed_at, title, manifest) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
    )?;
    ins.execute(params![
        folder,
        row.id,
        row.agent,
        row.workflow,
        row.status,
        row.user,
        row.started_at,
        row.started_ns,
        row.completed_at,
        row.title,
        row.manifest
    ])?;
    let rid = tx.last_insert_rowid();
    let mut out = tx.prepare_cached(
        "INSERT OR REPLACE INTO outputs(rid, seq, file, type, description, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    for (seq, (file, ty, desc, created)) in row.outputs.iter().enumerate() {
        out.execute(params![rid, seq as i64, file, ty, desc, created])?;
    }
    let mut edge =
        tx.prepare_cached("INSERT OR IGNORE INTO edges(child, parent, rid) VALUES (?1, ?2, ?3)")?;
    for parent in &row.parents {
        edge.execute(params![row.id, parent, rid])?;
    }
    let mut tag = tx.prepare_cached("INSERT OR IGNORE INTO tags(rid, tag) VALUES (?1, ?2)")?;
    for t in &row.tags {
        tag.execute(params![rid, t])?;
    }
    let mut fts = tx.prepare_cached(
        "INSERT INTO runs_fts(rowid, agent, workflow, body) VALUES (?1, ?2, ?3, ?4)",
    )?;
    fts.execute(params![rid, row.fts_agent, row.fts_workflow, row.fts_body])?;
    Ok(())
}

fn remove_run(tx: &Connection, folder: &str) -> rusqlite::Result<()> {
    let rid: Option<i64> = tx
        .prepare_cached("SELECT rid FROM runs WHERE folder = ?1")?
        .query_row([folder], |r| r.get(0))
        .optional()?;
    if let Some(rid) = rid {
        for q in [
            "DELETE FROM outputs WHERE rid = ?1",
            "DELETE FROM edges WHERE rid = ?1",
            "DELETE FROM tags WHERE rid = ?1",
            "DELETE FROM runs_fts WHERE rowid = ?1",
            "DELETE FROM runs WHERE rid = ?1",
        ] {
            tx.prepare_cached(q)?.execute([rid])?;
        }
    }
    Ok(())
}

fn remove_record(tx: &Connection, kind: Kind, path: &Path) -> rusqlite::Result<()> {
    let p = path_str(path);
    match kind {
        Kind::Run => {
            if let Some(folder) = path.parent() {
                remove_run(tx, &path_str(folder))?;
            }
        }
        Kind::WorkSession => {
            tx.execute("DELETE FROM work_sessions WHERE path = ?1", [&p])?;
        }
        Kind::Transcript => {
            tx.execute("DELETE FROM transcripts WHERE path = ?1", [&p])?;
        }
    }
    tx.execute("DELETE FROM corrupt WHERE path = ?1", [&p])?;
    tx.execute("DELETE FROM files WHERE path = ?1", [&p])?;
    Ok(())
}

/// Stores what was read from `path` (or forgets it when the file is gone),
/// with the stamp sync compares next time.
fn apply(
    tx: &Connection,
    kind: Kind,
    path: &Path,
    rec: Option<Record>,
    stamp: Option<(i64, i64, i64)>,
    report: Option<&mut SyncReport>,
    fresh: Fresh,
) -> rusqlite::Result<()> {
    match rec {
        None => return remove_record(tx, kind, path),
        Some(Record::Corrupt { reason }) => {
            if fresh == Fresh::No {
                remove_record(tx, kind, path)?;
            }
            tx.execute(
                "INSERT OR REPLACE INTO corrupt(path, kind, reason) VALUES (?1, ?2, ?3)",
                params![path_str(path), kind.as_str(), reason],
            )?;
            if let Some(report) = report {
                report.corrupt.push(CorruptEntry {
                    path: path.to_path_buf(),
                    kind,
                    reason,
                });
            }
        }
        Some(r) => store_record(tx, &r, fresh)?,
    }
    if let Some((size, mtime, dir_mtime)) = stamp {
        tx.prepare_cached(
            "INSERT OR REPLACE INTO files(path, kind, size, mtime_ns, dir_mtime_ns) VALUES (?1, ?2, ?3, ?4, ?5)",
        )?
        .execute(params![path_str(path), kind.as_str(), size, mtime, dir_mtime])?;
    }
    Ok(())
}

/// The stamp of a file as sync would take it, or `None` when it is gone.
fn stamp_now(kind: Kind, path: &Path) -> Option<(i64, i64, i64)> {
    let m = fs::metadata(path).ok()?;
    let dir = match kind {
        Kind::Run => path.parent().map_or(0, mtime_ns),
        _ => 0,
    };
    Some((m.len() as i64, stamp_of(&m), dir))
}
