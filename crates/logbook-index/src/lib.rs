//! The SQLite index at `{project-root}/.logbook/index.db`: derived from the
//! files, never the truth, so it can be deleted at any time and is rebuilt.
//!
//! [`Index`] is the file and its connection: [`Index::open`] creates it on
//! first use, upgrades it in place when its schema version (`PRAGMA
//! user_version`) is an older one (see `upkeep::migrate`), rebuilds it when
//! that cannot be done (too old, or newer), and repairs records a writer
//! left pending when it died between its file write and its index update.
//! What is done with an open index comes in three roles:
//!
//! - [`Index::read`] ([`Reader`]): queries ([`Reader::find_runs`],
//!   [`Reader::latest_output`], lineage edges, work session and transcript
//!   listings), which never read the files beyond verify-on-read.
//! - [`Index::write`] ([`Writer`]): the write path of `ops`, under the
//!   writer's lock: [`Writer::mark_pending`], then [`Writer::record_written`]
//!   with the record the writer just wrote, never re-read.
//! - [`Index::upkeep`] ([`Upkeep`]): what keeps it current and says how it
//!   is. [`Upkeep::sync`] picks up changes other tools made: a directory
//!   walk and a size/mtime comparison, so only new, changed or deleted
//!   files are read. [`Index::rebuild`] reads everything, parsing on all
//!   cores. Also the archive's rows, the full-text build, `index status`
//!   and the team outbox.
//!
//! ```no_run
//! use logbook_index::Index;
//! use logbook_model::query::RunQuery;
//! use logbook_store::Project;
//! let project = Project::discover(&std::env::current_dir()?, None)?;
//! let index = Index::open_synced(&project)?;
//! let query = RunQuery { agent: Some("casey".into()), limit: Some(20), ..Default::default() };
//! for hit in index.read().find_runs(&query)? { println!("{} {}", hit.run.id, hit.run.folder.display()); }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod catalog;
mod fulltext;
mod pool;
mod read;
mod schema;
mod upkeep;
mod write;

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::config::DbConfig;
use rusqlite::{Connection, OptionalExtension};
use serde::Serialize;

use logbook_model::error::{Error, Result};
use logbook_model::run::Run;
use logbook_store::Project;

pub use fulltext::{MAX_SAID_BYTES, MAX_TEXT_BYTES, Snippets};
pub use read::Reader;
pub use read::found::MessageHits;
pub use schema::SCHEMA_VERSION;
pub use upkeep::Upkeep;
pub use upkeep::folder_names::{FolderStamps, WalkedNames};
pub use upkeep::outbox::Pushed;
pub use upkeep::scan::Outputs;
pub use write::Writer;
pub use write::record::Record;

pub use read::settled::SettledRun;
pub use upkeep::text_build::{TEXT_BUILD_KEY, TextProgress};
use upkeep::{rebuild, sync, text_build};

const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// WAL pages written before a commit checkpoints them into the database.
const WAL_PAGES: i64 = 256;

/// Prepared statements a connection keeps for reuse.
const STATEMENTS: usize = 64;

/// Page cache of a connection to the index, at most (KiB).
const CACHE_KIB: i64 = 32 * 1024;

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
    /// A work session's workflow state (`{id}.state.json`, live or archived).
    WorkflowState,
}

impl Kind {
    /// The word stored in the index.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Run => "run",
            Kind::WorkSession => "work_session",
            Kind::Transcript => "transcript",
            Kind::WorkflowState => "workflow_state",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Kind> {
        match s {
            "run" => Some(Kind::Run),
            "work_session" => Some(Kind::WorkSession),
            "transcript" => Some(Kind::Transcript),
            "workflow_state" => Some(Kind::WorkflowState),
            _ => None,
        }
    }
}

/// A file a write is about to change, and the lock its writer holds (so a
/// repairing opener can tell a live writer from a dead one).
#[derive(Debug, Clone)]
pub struct Pending {
    /// What the file is.
    pub kind: Kind,
    /// The file (for a run: its `manifest.json`).
    pub path: PathBuf,
    /// The name of the lock the writer holds while writing it.
    pub lock: String,
}

/// The `meta` key of [`Upkeep::secrets_counts`].
pub(crate) const SECRETS_COUNTS_KEY: &str = "secrets_counts";

/// An open index.
pub struct Index {
    conn: pool::Pooled,
    path: PathBuf,
    project: Project,
    /// The database file's identity when opened, so a long-lived holder can
    /// tell that the file was deleted (and maybe rebuilt) under it.
    file_id: Option<pool::FileId>,
}

/// One run found through the index.
#[derive(Debug, Clone)]
pub struct Hit {
    /// The run, its manifest as last read from the file.
    pub run: Run,
    /// For text queries: a fragment of the matching text, hits in `[…]`.
    pub snippet: Option<String>,
}

/// One transcript whose messages say a full-text query's words.
#[derive(Debug, Clone)]
pub struct TranscriptHit {
    /// The transcript, as the index lists it.
    pub transcript: logbook_model::transcript::Summary,
    /// A fragment of its messages' text, hits in `[…]`.
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
    /// Workflow states indexed.
    pub workflow_states: u64,
    /// Files that could not be parsed.
    pub corrupt: u64,
    /// Writes not yet confirmed in the index.
    pub pending: u64,
    /// When the index was last synced with the folders.
    pub last_sync: Option<String>,
    /// Files new, changed or deleted since (from a directory walk).
    pub stale: Staleness,
    /// Whether the full text is complete or still being built, and how far.
    pub text: TextStatus,
    /// Every schema version the index went through, oldest first: how an
    /// upgrade was done (in place, step by step, or by a rebuild).
    pub schema_history: Vec<SchemaStep>,
}

/// One row of the index's `schema_history`.
#[derive(Debug, Clone, Serialize)]
pub struct SchemaStep {
    /// The schema version the step is part of.
    pub version: i64,
    /// `built` (a rebuild), `found` (the version an upgrade started from)
    /// or the name of a migration step.
    pub step: String,
    /// When (RFC 3339).
    pub applied_at: String,
    /// The Logbook version that did it.
    pub logbook: String,
}

/// The full-text index's phase, for `index status`.
#[derive(Debug, Clone, Serialize)]
pub struct TextStatus {
    /// `complete`, or `building` (text queries may miss matches).
    pub phase: &'static str,
    /// Runs and transcripts whose text is indexed (while building).
    pub done: u64,
    /// Runs and transcripts the build covers (while building).
    pub total: u64,
    /// Percent done (100 once complete).
    pub percent: u64,
}

impl TextStatus {
    /// The status of `progress` (`None`: complete).
    pub fn of(progress: Option<TextProgress>) -> TextStatus {
        match progress {
            None => TextStatus {
                phase: "complete",
                done: 0,
                total: 0,
                percent: 100,
            },
            Some(p) => TextStatus {
                phase: "building",
                done: p.done,
                total: p.total,
                percent: p.percent(),
            },
        }
    }
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

pub(crate) fn sql(path: &Path) -> impl Fn(rusqlite::Error) -> Error + use<> {
    let path = path.to_path_buf();
    move |e| index_error(&path, &e)
}

impl Index {
    /// Opens (creating, upgrading and repairing as needed) the index. Does
    /// not look at the folders beyond repairing pending records.
    pub fn open(p: &Project) -> Result<Index> {
        if !Project::exists(p) {
            // A read where no project is: answer from the files without
            // creating one (only a write creates a project).
            return Index::in_memory(p);
        }
        let path = p.index_path();
        match Index::open_file(p, &path) {
            Ok(index) => Ok(index),
            Err(e) if unwritable(&e) => {
                p.notices.push(format!(
                    "the index {} cannot be opened for writing ({e}); answering from the files (a read-only or full disk?)",
                    path.display()
                ));
                Index::in_memory(p)
            }
            Err(e) => Err(e),
        }
    }

    /// The index file, upgraded in place first when it is of an older
    /// schema, built when it is missing, damaged or cannot be upgraded (by
    /// [`rebuild::build_and_swap`]); one process at a time, the others wait
    /// for it and use what it made.
    fn open_file(p: &Project, path: &Path) -> Result<Index> {
        for _ in 0..3 {
            match Index::connect(p, path) {
                Ok(mut index) if index.built_for_here()? => {
                    index.repair_pending()?;
                    index.upkeep().follow_team(p.config.team_url.as_deref())?;
                    index.upkeep().resume_text()?;
                    return Ok(index);
                }
                Ok(_) => {}
                Err(Error::Index { corrupt: true, .. }) => {}
                Err(_) if !logbook_store::index_file::exists(path) => {}
                Err(e) => return Err(e),
            }
            let _one = p
                .locks
                .exclusive_within(rebuild::REBUILD_LOCK, rebuild::REBUILD_WAIT)?;
            let index = Index::connect(p, path);
            if let Ok(index) = &index
                && index.built_for_here().unwrap_or(false)
            {
                continue;
            }
            if let Ok(index) = index
                && index.upkeep().upgraded_in_place()?
            {
                continue;
            }
            rebuild::build_and_swap(p, None, text_build::first_build(p))?;
        }
        Err(Error::Index {
            path: path.to_path_buf(),
            message: "the index was replaced or removed again each time it was built".into(),
            corrupt: false,
        })
    }

    /// Whether this index can be used as it is: of this schema, and built
    /// for the project where it now lies. A project folder moved elsewhere
    /// takes its index along, whose rows name the old paths: those would
    /// never be dropped by a sync (which compares the current folders), so
    /// the index is rebuilt.
    fn built_for_here(&self) -> Result<bool> {
        Ok(self.schema_version()? == SCHEMA_VERSION
            && self.meta(ROOT_KEY)?.as_deref() == Some(root_stamp(&self.project).as_str()))
    }

    pub(crate) fn schema_version(&self) -> Result<i64> {
        self.conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(self.err())
    }

    /// An index held in memory and filled from the files: the answer when
    /// there is no project to keep one in, or its file cannot be written.
    fn in_memory(p: &Project) -> Result<Index> {
        let path = Path::new(pool::IN_MEMORY);
        let conn = Connection::open_in_memory().map_err(sql(path))?;
        rebuild::fill(&conn, p, path, None, rebuild::FullText::SameThread)?;
        Ok(Index {
            conn: pool::Pooled::new(conn, path, None),
            path: path.to_path_buf(),
            project: p.clone(),
            file_id: None,
        })
    }

    /// Opens the index and first picks up runs another tool added or removed
    /// (a cheap check of the runs folder's mtime, then, only if it moved, a
    /// comparison of the run folder *names* with the index), then what
    /// another tool may have written in place into run folders without a
    /// manifest and invalid manifests (see `Reader::refresh_unsettled`; runs
    /// still running are checked by the queries whose filters they could
    /// newly match). Used by every listing of runs. Writes nothing when
    /// nothing changed.
    pub fn open_synced(p: &Project) -> Result<Index> {
        let index = Index::open(p)?;
        if index.meta(sync::RUNS_DIR_KEY)?.as_deref() != Some(sync::runs_dir_stamp(p).as_str()) {
            index.upkeep().sync_names()?;
        }
        index.read().refresh_unsettled()?;
        Ok(index)
    }

    /// Opens the index after an incremental sync of one kind of file:
    /// work session and transcript folders hold few files, so a `stat` of
    /// each is cheap and sees edits made in place. Never touches run rows
    /// for another kind, and writes nothing when nothing changed.
    pub fn open_synced_kind(p: &Project, kind: Kind) -> Result<Index> {
        if kind == Kind::Run {
            return Index::open_synced(p);
        }
        let index = Index::open(p)?;
        index.upkeep().sync_kind(kind)?;
        Ok(index)
    }

    /// A connection to the index file at `path`, reused from this
    /// process's idle ones when it has one to that very file. Never creates
    /// the file: only a build does (see [`rebuild`]).
    fn connect(p: &Project, path: &Path) -> Result<Index> {
        match pool::Pooled::take(path) {
            Some(conn) => Ok(Index {
                conn,
                path: path.to_path_buf(),
                project: p.clone(),
                file_id: pool::file_id(path),
            }),
            None => Index::connect_new(p, path),
        }
    }

    /// A new connection to `path`, set up for Logbook's write discipline.
    fn connect_new(p: &Project, path: &Path) -> Result<Index> {
        let e = sql(path);
        // While a rebuilt index replaces this one, no connection may open
        // the old file's WAL by name (see `rebuild`). Where no lock can be
        // taken (a read-only project), nothing can be rebuilt either.
        let _swap = match p.locks.shared(rebuild::SWAP_LOCK) {
            Ok(guard) => Some(guard),
            Err(err) if unwritable(&err) => None,
            Err(err) => return Err(err),
        };
        let conn = Connection::open_with_flags(
            path,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE
                | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX
                | rusqlite::OpenFlags::SQLITE_OPEN_URI,
        )
        .map_err(&e)?;
        // A writer holding the index past this is reported as busy (a
        // conflict, as a lock timeout is), after the wait the person set.
        let busy = logbook_store::lock::timeout_from_env().unwrap_or(BUSY_TIMEOUT);
        conn.busy_timeout(busy).map_err(&e)?;
        // Closing the last connection would otherwise checkpoint the WAL and
        // delete it (two fsyncs), and the next write would create it again
        // (a header fsync and a directory fsync): three quarters of a
        // registration's time went there, every process and every `ops` call
        // paying it. The WAL stays instead, checkpointed by whichever writer
        // fills it past `wal_autocheckpoint` pages; kept small, because the
        // first connection of each process re-reads it to rebuild the shared
        // index.
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)
            .map_err(&e)?;
        // The plans here are chosen by the SQL, never by a bound value, but
        // SQLite otherwise marks some statements to be prepared again at
        // each new binding of a value its planner looked at: a run's
        // outputs, read by row id, were parsed and planned again on every
        // registration.
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)
            .map_err(&e)?;
        conn.pragma_update(None, "wal_autocheckpoint", WAL_PAGES)
            .map_err(&e)?;
        conn.pragma_update(None, "journal_size_limit", WAL_PAGES * 4096)
            .map_err(&e)?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(&e)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(&e)?;
        conn.pragma_update(None, "temp_store", "MEMORY")
            .map_err(&e)?;
        // A long-lived face reuses this connection (see `pool`), and its
        // cache survives between reads while nobody writes: SQLite's 2 MiB
        // default held less than one common word's doclist, so each text
        // search read it again from the file. Pages are cached only as they
        // are read, so a short query's memory is unchanged.
        conn.pragma_update(None, "cache_size", -CACHE_KIB)
            .map_err(&e)?;
        // A `find` alone prepares more distinct statements than rusqlite's
        // default of 16 (page, count, stamps, manifests, names, …): past
        // that, a long-lived face parsed and planned them again each call.
        conn.set_prepared_statement_cache_capacity(STATEMENTS);
        let file_id = pool::file_id(path);
        Ok(Index {
            conn: pool::Pooled::new(conn, path, file_id),
            path: path.to_path_buf(),
            project: p.clone(),
            file_id,
        })
    }

    /// What is wrong with the index file's pages (`PRAGMA quick_check`), or
    /// `None` when it is sound or absent. Opens the file read-only and apart
    /// from [`Index::open`], which a damaged page can make fail.
    ///
    /// Checked table by table, the real tables only (FTS5's shadow tables
    /// included, so every page of the inverted index is still checked as a
    /// b-tree): a whole-file `quick_check` also runs FTS5's own check of
    /// its inverted index against itself, which reads and decodes every
    /// word's every position list (it ignores "quick") and was most of the
    /// check's time, growing with all the text ever indexed.
    pub fn damage(p: &Project) -> Result<Option<String>> {
        let path = p.index_path();
        if !logbook_store::index_file::is_present(&path) {
            return Ok(None);
        }
        let checked =
            Connection::open_with_flags(&path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
                .and_then(|conn| {
                    unparsed_repo_columns(&conn)?;
                    let tables: Vec<String> = conn
                        .prepare(
                            "SELECT name FROM sqlite_schema WHERE type = 'table' \
                             AND sql NOT LIKE 'CREATE VIRTUAL TABLE%' ORDER BY name",
                        )?
                        .query_map([], |r| r.get(0))?
                        .collect::<rusqlite::Result<_>>()?;
                    let mut problems = vec![];
                    for t in tables {
                        let sql = format!("PRAGMA quick_check('{}')", t.replace('\'', "''"));
                        let mut stmt = conn.prepare(&sql)?;
                        let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
                        for row in rows {
                            let row = row?;
                            if row != "ok" && problems.len() < 5 {
                                problems.push(row);
                            }
                        }
                    }
                    Ok(problems)
                });
        Ok(match checked {
            Ok(rows) if rows.is_empty() => None,
            Ok(rows) => Some(rows.join("; ")),
            Err(e) => Some(e.to_string()),
        })
    }

    /// Deletes the index files, so the next open rebuilds them from the
    /// files (the index is derived data).
    pub fn discard(p: &Project) -> Result<()> {
        remove_db_files(&p.index_path())
    }

    /// The index as the answers it gives: queries, lookups, listings.
    pub fn read(&self) -> Reader<'_> {
        Reader { index: self }
    }

    /// The index as the write path of `ops`: what a writer just wrote.
    pub fn write(&mut self) -> Writer<'_> {
        Writer { index: self }
    }

    /// The index as what keeps it current, and its health.
    pub fn upkeep(&self) -> Upkeep<'_> {
        Upkeep { index: self }
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether this connection still reads and writes the file at
    /// [`Index::path`]: false once that file was deleted or replaced (the
    /// index may be deleted at any time), when the holder must reopen.
    pub fn is_current(&self) -> bool {
        self.file_id.is_some() && pool::file_id(&self.path) == self.file_id
    }

    pub(crate) fn err(&self) -> impl Fn(rusqlite::Error) -> Error + use<> {
        sql(&self.path)
    }

    /// Keeps `value` under `key` in `meta`, the index's notes to itself.
    pub(crate) fn set_meta(&self, key: &str, value: &str) -> Result<()> {
        self.conn
            .prepare_cached("INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)")
            .and_then(|mut st| st.execute([key, value]))
            .map(|_| ())
            .map_err(self.err())
    }

    pub(crate) fn meta(&self, key: &str) -> Result<Option<String>> {
        self.conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()
            .map_err(self.err())
    }
}

/// Runs a transaction's `BEGIN`, `COMMIT` or `ROLLBACK` from the statement
/// cache: `execute_batch` parsed it again each time, twice per write and
/// per page read.
pub(crate) fn control(conn: &Connection, sql: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(sql)?.execute([]).map(|_| ())
}

fn remove_db_files(path: &Path) -> Result<()> {
    logbook_store::index_file::remove(path, &["", "-wal", "-shm"])
}

/// Whether opening the index failed because its folder or file cannot be
/// written (read-only mount, permissions, full disk), as opposed to a bug.
fn unwritable(e: &Error) -> bool {
    match e {
        Error::Io { source, .. } => matches!(
            source.kind(),
            std::io::ErrorKind::PermissionDenied
                | std::io::ErrorKind::ReadOnlyFilesystem
                | std::io::ErrorKind::StorageFull
        ),
        Error::Index { message, .. } => {
            let m = message.to_ascii_lowercase();
            [
                "readonly",
                "read-only",
                "unable to open",
                "disk i/o",
                "database or disk is full",
                "permission",
            ]
            .iter()
            .any(|w| m.contains(w))
        }
        _ => false,
    }
}

pub(crate) fn path_str(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests;

/// The `meta` key holding the project root an index was built for.
pub(crate) const ROOT_KEY: &str = "root";

/// The project root as [`ROOT_KEY`] records it: canonical, so one project
/// reached through a symlink is not rebuilt back and forth.
pub(crate) fn root_stamp(p: &Project) -> String {
    let root = logbook_store::index_file::canonical(p.root());
    path_str(&root)
}

/// Makes the generated `repo_key` and `repo_root` columns NULL on `conn`,
/// the page check's own: `quick_check` computes every generated column of
/// every row, and those parse each stored manifest's JSON (half of the
/// check's time), though no page holds them. A connection's own
/// `json_valid` stands in for SQLite's.
fn unparsed_repo_columns(conn: &Connection) -> rusqlite::Result<()> {
    use rusqlite::functions::FunctionFlags;
    conn.create_scalar_function(
        "json_valid",
        1,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |_| Ok(false),
    )
}

/// Turns SQLite's error into the library's without exposing `rusqlite` types.
pub(crate) fn index_error(path: &std::path::Path, e: &rusqlite::Error) -> Error {
    let corrupt = matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase)
    );
    let busy = matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    );
    if busy {
        return Error::IndexBusy {
            path: path.to_path_buf(),
            message: e.to_string(),
        };
    }
    Error::Index {
        path: path.to_path_buf(),
        message: e.to_string(),
        corrupt,
    }
}
