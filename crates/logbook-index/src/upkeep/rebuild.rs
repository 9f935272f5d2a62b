//! `index rebuild`: every file read again into a new index file beside the
//! live one, which then takes its place by a rename.
//!
//! Why a new file rather than one big transaction in the live index: the
//! live index is in WAL mode, so a transaction that rewrites all of it
//! writes every page twice (into the WAL, then into the database at the
//! checkpoint), and the WAL grows to the size of the whole index. A new file
//! is written once, with no journal at all: it is derived data that nobody
//! reads before it is complete, and a crash leaves only a stray file that
//! the next rebuild removes. Readers and writers keep using the old index
//! until the rename, so a rebuild never shows them an empty or half-built
//! index.
//!
//! The trap, and the swap that avoids it ([`swap_into_place`]): SQLite finds
//! a database's WAL and shared-memory files by name (`index.db-wal`,
//! `index.db-shm`). A new file renamed over a WAL database would be paired
//! with the old file's WAL, whose pages would be replayed onto the wrong
//! database. So the swap
//! 1. holds the old index's write lock, so nothing more commits there;
//! 2. catches the new file up with what changed on disk since it was walked
//!    (an incremental sync: each stamp was taken before its file was read),
//!    and copies the pending marks of writers still at work;
//! 3. holds the `index-swap` lock exclusively, which every new connection
//!    holds shared while it opens (`Index::connect_new`), so no connection
//!    can find the old WAL by name meanwhile; removes the old WAL and
//!    shared-memory files, renames the new file into place and syncs the
//!    folder.
//!
//! Connections opened before the swap go on reading the old, unlinked file,
//! which stays consistent. A writer holding one finds out at its next write
//! transaction (`Index::begin_write`) and reopens, so no record lands in a
//! file nobody reads.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use rusqlite::Connection;
use rusqlite::config::DbConfig;

use crate::schema::{self, INDEXES, SCHEMA_VERSION};
use crate::upkeep::folder_names::folders_in_path_order;
use crate::upkeep::sync::{RUNS_DIR_KEY, Seen, runs_dir_stamp, settled, walk};
use crate::write::apply::{self, Stamp};
use crate::write::record::{self, Record};
use crate::write::run_rows::{Fresh, FtsDoc};
use crate::{Index, Kind, SyncReport, pool, remove_db_files, sql};
use logbook_model::error::{Error, Result};
use logbook_model::run::MANIFEST_FILE;
use logbook_store::Project;

/// Held by the one process building a new index file for a project.
pub(crate) const REBUILD_LOCK: &str = "index-rebuild";

/// How long an opener waits for another process's build of the index: a
/// build reads every file, so the usual lock timeout is too short for it.
pub(crate) const REBUILD_WAIT: std::time::Duration = std::time::Duration::from_secs(3600);

/// Held shared while a connection opens the index file (and its WAL), and
/// exclusively while a rebuilt file replaces it.
pub(crate) const SWAP_LOCK: &str = "index-swap";

/// Page cache of the building connection. Pages that do not fit are written
/// straight to the new file (there is no journal), so this bounds memory,
/// not speed: most of a rebuild's pages are written once and not read again
/// until the secondary indexes are created at the end.
const BUILD_CACHE_KIB: i64 = 64 * 1024;

/// Page cache of the text thread's connection: FTS5 writes its segments
/// whole and seldom reads them back while building, so a small one does.
const TEXT_CACHE_KIB: i64 = 16 * 1024;

/// Text FTS5 collects in memory before it writes a segment: fewer, larger
/// segments to merge. Reset to the default before the file goes live.
/// Kept small: a larger buffer does not lower the text thread's CPU time
/// (it goes to hashing each token, not to merging), but it does raise the
/// peak memory.
const BUILD_FTS_HASH: i64 = 8 * 1024 * 1024;

/// A file as a parser thread hands it to the writer: kind, path, the stamp
/// taken before reading it, and what was read (`None`: the file is gone).
pub(crate) type Parsed = (Kind, PathBuf, Option<Stamp>, Option<Record>);

impl Index {
    /// Reads every file again into a new index and puts it in place of the
    /// old one (see the module documentation: readers and writers keep the
    /// old index until then). `progress` is called with (done, total) as
    /// files are parsed.
    pub fn rebuild(
        p: &Project,
        progress: Option<&(dyn Fn(u64, u64) + Sync)>,
    ) -> Result<SyncReport> {
        if !Project::exists(p) {
            // No project to keep an index in: a read builds one in memory.
            let index = Index::open(p)?;
            return index.upkeep().status().map(|s| SyncReport {
                scanned: s.runs + s.work_sessions + s.transcripts + s.workflow_states,
                indexed: s.runs + s.work_sessions + s.transcripts + s.workflow_states,
                ..SyncReport::default()
            });
        }
        let _one = p.locks.exclusive_within(REBUILD_LOCK, REBUILD_WAIT)?;
        build_and_swap(p, progress, FullText::OwnThread)
    }
}

/// Builds the new file and swaps it in; the caller holds [`REBUILD_LOCK`].
/// `text`: [`FullText::OwnThread`] (all of it before the swap) or
/// [`FullText::Later`] (the rows phase only: see `text_build`).
pub(crate) fn build_and_swap(
    p: &Project,
    progress: Option<&(dyn Fn(u64, u64) + Sync)>,
    text: FullText,
) -> Result<SyncReport> {
    let started = std::time::Instant::now();
    let live = p.index_path();
    logbook_store::index_file::create_folder(&live)?;
    let new = building_path(&live);
    // What a rebuild killed before its rename left behind.
    remove_db_files(&new)?;
    let result = (|| {
        let conn = open_building(&new, BUILD_CACHE_KIB)?;
        let mut report = fill(&conn, p, &new, progress, text)?;
        // FTS5 keeps state of its tables per connection; the one that
        // created `runs_fts` before its rows were copied in underneath it
        // is not trusted with it: the catch-up goes through a new one.
        drop(conn);
        #[cfg(feature = "testing")]
        if matches!(text, FullText::Later) {
            logbook_store::testing::fault("rows-built");
        }
        let conn = open_building(&new, BUILD_CACHE_KIB)?;
        // A rows-only index whose text is left to a builder goes live without its
        // catch-up sync (a `statx` of every manifest): the builder runs it
        // first (see `text_build`).
        let catch_up = match text {
            FullText::Later => {
                crate::upkeep::text_build::finish_small(&conn, p).map_err(sql(&new))?;
                !crate::upkeep::text_build::catches_up_later(&conn).map_err(sql(&new))?
            }
            FullText::SameThread | FullText::OwnThread => true,
        };
        let caught_up = swap_into_place(p, conn, &new, &live, catch_up)?;
        report.indexed += caught_up.indexed;
        report.removed += caught_up.removed;
        report.corrupt.extend(caught_up.corrupt);
        report.seconds = started.elapsed().as_secs_f64();
        Ok(report)
    })();
    if result.is_err() {
        let _ = remove_db_files(&new);
        let _ = remove_db_files(&text_path(&new));
    }
    result
}

/// Where the new file is built: beside the live one, so the rename stays
/// within one file system.
fn building_path(live: &Path) -> PathBuf {
    PathBuf::from(format!("{}.rebuild", live.display()))
}

/// Where the text thread of [`FullText::OwnThread`] builds `runs_fts`.
fn text_path(building: &Path) -> PathBuf {
    PathBuf::from(format!("{}-text", building.display()))
}

/// A connection to a new, empty file, set up for one bulk load by one
/// process: no journal, no fsync, the file locked for itself.
fn open_building(path: &Path, cache_kib: i64) -> Result<Connection> {
    let e = sql(path);
    let conn = Connection::open(path).map_err(&e)?;
    conn.execute_batch(&format!(
        "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; \
         PRAGMA locking_mode = EXCLUSIVE; PRAGMA cache_size = -{cache_kib};"
    ))
    .map_err(&e)?;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)
        .map_err(&e)?;
    Ok(conn)
}

/// Where [`fill`] builds the runs' full-text index.
#[derive(Clone, Copy)]
pub(crate) enum FullText {
    /// In `runs_fts` itself, on the writing thread (an index in memory).
    SameThread,
    /// In a file of its own beside the new index, on a thread of its own,
    /// copied into `runs_fts` at the end. Tokenizing and indexing the
    /// runs' text is a large share of what the one writing thread does, so
    /// this spreads a rebuild over a second core. The connection that
    /// filled must not touch `runs_fts` afterwards (see `build_and_swap`).
    OwnThread,
    /// Not at all: the rows alone (no output file is read, and each
    /// run's manifest is stored as a stub), with the text phase's starting
    /// point in `meta` (see `text_build`), so that commands answer from it
    /// seconds after an index was lost.
    Later,
}

/// Fills `conn`, a database with no tables, from every file the index
/// follows: the tables, then their secondary indexes over the loaded rows
/// (faster than maintaining them row by row), then the
/// planner's row counts.
pub(crate) fn fill(
    conn: &Connection,
    p: &Project,
    path: &Path,
    progress: Option<&(dyn Fn(u64, u64) + Sync)>,
    text: FullText,
) -> Result<SyncReport> {
    let dir_before = runs_dir_stamp(p);
    let build = Build {
        conn,
        p,
        path,
        progress,
        aside: match text {
            FullText::SameThread | FullText::Later => None,
            FullText::OwnThread => Some(text_path(path)),
        },
        later: matches!(text, FullText::Later),
    };
    if let Some(aside) = &build.aside {
        remove_db_files(aside)?;
    }
    build.begin()?;
    let (files, total) = build.files()?;
    let mut report = SyncReport::default();
    let (scanned, missing) = build.load(files, total, &mut report)?;
    report.scanned = scanned - missing;
    build.finish(&dir_before)?;
    // Outside that transaction: a database is attached only between them.
    // The file is not live yet, so nobody sees it without its text.
    if let Some(aside) = &build.aside {
        copy_text(conn, aside)?;
    }
    Ok(report)
}

/// One [`fill`] of a new file, in one transaction.
struct Build<'a> {
    conn: &'a Connection,
    p: &'a Project,
    /// The file being built, for errors.
    path: &'a Path,
    progress: Option<&'a (dyn Fn(u64, u64) + Sync)>,
    /// Where a thread of its own writes the full text meanwhile
    /// ([`FullText::OwnThread`]).
    aside: Option<PathBuf>,
    /// [`FullText::Later`]: the rows phase alone.
    later: bool,
}

impl Build<'_> {
    /// Whether the full text is written into this very file now.
    fn text_here(&self) -> bool {
        self.aside.is_none() && !self.later
    }

    /// Begins the build's transaction and makes the tables.
    fn begin(&self) -> Result<()> {
        let e = sql(self.path);
        let conn = self.conn;
        conn.execute_batch("BEGIN").map_err(&e)?;
        conn.execute_batch(&schema::schema()).map_err(&e)?;
        crate::upkeep::migrate::record(conn, SCHEMA_VERSION, "built").map_err(&e)?;
        if self.text_here() {
            set_fts_hash(conn, BUILD_FTS_HASH).map_err(&e)?;
        }
        Ok(())
    }

    /// Every file to read, and how many there are when progress is shown
    /// (0 otherwise: counting is a walk of its own).
    ///
    /// Run manifests are only named, never collected as paths (a million
    /// would be a quarter of a gigabyte): their folder names are sorted in
    /// 16 bytes each (see `scan::folders_in_path_order`), and the parser
    /// threads take each stamp just before reading the file, in parallel.
    /// Sessions, workflow states and transcripts are few, and stamped here.
    fn files(&self) -> Result<(impl Iterator<Item = Seen> + Send + use<>, u64)> {
        let p = self.p;
        let others = walk(
            p,
            &[Kind::WorkSession, Kind::WorkflowState, Kind::Transcript],
        )?;
        let runs_dir = &p.config.agent_outputs_folder;
        // Archived runs stay rows, marked archived (`record::read_record`).
        let archive_dir = &p.config.archive_folder;
        let total = match self.progress {
            Some(_) => {
                others.len() as u64
                    + run_folders(runs_dir)?.count() as u64
                    + run_folders(archive_dir)?.count() as u64
            }
            None => 0,
        };
        let files = folders_in_path_order(runs_dir)?
            .chain(folders_in_path_order(archive_dir)?)
            .map(|folder| Seen::unstamped(Kind::Run, folder.join(MANIFEST_FILE)))
            .chain(others);
        Ok((files, total))
    }

    /// Reads `files` on every core and stores each record, handing the
    /// runs' full text to its own thread when it is written aside. Returns
    /// what [`read_parallel`] does.
    fn load(
        &self,
        files: impl Iterator<Item = Seen> + Send,
        total: u64,
        report: &mut SyncReport,
    ) -> Result<(u64, u64)> {
        let (conn, path, later) = (self.conn, self.path, self.later);
        let e = sql(path);
        std::thread::scope(|scope| {
            let (to_text, docs_in) = std::sync::mpsc::sync_channel::<Vec<FtsDoc>>(16);
            let text_thread = self
                .aside
                .as_deref()
                .map(|aside| scope.spawn(move || fill_text(aside, docs_in)));
            let to_text = text_thread.is_some().then_some(to_text);
            let mut docs = Vec::new();
            let reading = match later {
                true => record::Reading::RowsOnly,
                false => record::Reading::Text,
            };
            let read = read_parallel(
                self.p,
                files,
                total,
                self.progress,
                reading,
                |(kind, file, stamp, rec)| {
                    let fresh = match to_text {
                        Some(_) => Fresh::TextAside(&mut docs),
                        None if later => Fresh::RowsOnly,
                        None => Fresh::Yes,
                    };
                    apply::apply(conn, kind, &file, rec, stamp, Some(&mut *report), fresh)
                        .map_err(&e)?;
                    report.indexed += 1;
                    if let Some(to_text) = &to_text
                        && docs.len() >= TEXT_CHUNK
                        && to_text.send(std::mem::take(&mut docs)).is_err()
                    {
                        return Err(text_stopped(path));
                    }
                    Ok(())
                },
            );
            if let Some(to_text) = to_text
                && !docs.is_empty()
            {
                // A failed send means the thread stopped: its join says why.
                let _ = to_text.send(docs);
            }
            let text = match text_thread.map(|t| t.join()) {
                None => Ok(()),
                Some(Ok(result)) => result,
                Some(Err(_)) => Err(text_stopped(path)),
            };
            // The text thread's own error explains a read that stopped
            // because it was gone.
            text.and(read)
        })
    }

    /// Makes the secondary indexes, notes what the build saw in `meta`,
    /// stamps the schema version and commits.
    fn finish(&self, dir_before: &str) -> Result<()> {
        let (conn, p) = (self.conn, self.p);
        let e = sql(self.path);
        // A rows-only index goes live with the indexes of its first answers
        // (see [`ROWS_ONLY_INDEXES`]); the text phase makes the others.
        let sql = if self.later {
            indexes_sql(|name| ROWS_ONLY_INDEXES.contains(&name))
        } else {
            indexes_sql(|_| true) + &stats_sql()
        };
        conn.execute_batch(&sql).map_err(&e)?;
        if self.text_here() {
            set_fts_hash(conn, DEFAULT_FTS_HASH).map_err(&e)?;
        }
        if self.later {
            crate::upkeep::text_build::plan(conn).map_err(&e)?;
        }
        conn.execute(
            "INSERT OR REPLACE INTO meta(key, value) VALUES ('last_sync', ?1)",
            [p.clock.now_string()],
        )
        .map_err(&e)?;
        conn.execute(
            "INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)",
            [crate::ROOT_KEY, &crate::root_stamp(p)],
        )
        .map_err(&e)?;
        // The runs folder's mtime counts as seen only if nothing moved
        // during the walk; otherwise the next listing compares names again.
        if dir_before == runs_dir_stamp(p) && settled(&p.config.agent_outputs_folder, p.clock) {
            conn.execute(
                "INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)",
                [RUNS_DIR_KEY, dir_before],
            )
            .map_err(&e)?;
        }
        conn.pragma_update(None, "user_version", SCHEMA_VERSION)
            .map_err(&e)?;
        conn.execute_batch("COMMIT").map_err(&e)
    }
}

/// The secondary indexes a rows-only index of [`FullText::Later`] goes live with:
/// `runs_started`, which covers every filter of `find` on `runs` (a scan
/// of it in start order, stopped by the limit); `files_live`, which every
/// listing reads first; and `runs_folder`, which keeps a folder to one row
/// (a writer looks its run up by folder). Each index more costs one sort
/// of its table before the first answer; its runs are narrow (see
/// `record::Reading::RowsOnly`), so that sort reads little. Until the
/// builder's first batches make the others, a run looked up by id is a
/// scan of those narrow rows.
pub(crate) const ROWS_ONLY_INDEXES: &[&str] = &["runs_folder", "files_live", "runs_started"];

/// The `CREATE INDEX IF NOT EXISTS` of the [`INDEXES`] `which` names.
pub(crate) fn indexes_sql(which: impl Fn(&str) -> bool) -> String {
    let mut sql = String::new();
    for (name, create) in INDEXES {
        if which(name) {
            sql.push_str(&create.replacen("INDEX ", "INDEX IF NOT EXISTS ", 1));
            sql.push(';');
        }
    }
    sql
}

/// Statistics for the tables the planner chooses indexes for, not for
/// FTS5's shadow tables (read by key with fixed plans; analysing them
/// reads the index of every word once more). Row counts only: with STAT4
/// samples SQLite expires every plan whose choice could depend on a bound
/// value and prepares it again at each new binding, and the counts alone
/// already pick the same indexes here.
pub(crate) fn stats_sql() -> String {
    let mut sql = String::new();
    for t in [
        "runs",
        "outputs",
        "edges",
        "tags",
        "work_sessions",
        "transcripts",
        "workflow_states",
        "files",
    ] {
        sql.push_str(&format!("ANALYZE {t};"));
    }
    sql.push_str("DELETE FROM sqlite_stat4 WHERE 1; ANALYZE sqlite_schema;");
    sql
}

/// Runs' full-text rows handed to the text thread at a time.
const TEXT_CHUNK: usize = 64;

/// FTS5's own segment size, which the file goes live with.
const DEFAULT_FTS_HASH: i64 = 1024 * 1024;

/// Sets how much text FTS5 collects in memory before it writes a segment
/// (kept in `runs_fts_config`, so it is copied with the text).
fn set_fts_hash(conn: &Connection, bytes: i64) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO runs_fts(runs_fts, rank) VALUES ('hashsize', ?1)",
        [bytes],
    )
    .map(|_| ())
}

fn text_stopped(building: &Path) -> Error {
    Error::Index {
        path: text_path(building),
        message: "the thread building the full-text index stopped".into(),
        corrupt: false,
    }
}

/// The text thread of [`FullText::OwnThread`]: `runs_fts` alone, in the
/// file `aside`, filled with the rows `docs` brings, in one transaction.
fn fill_text(aside: &Path, docs: std::sync::mpsc::Receiver<Vec<FtsDoc>>) -> Result<()> {
    let e = sql(aside);
    let conn = open_building(aside, TEXT_CACHE_KIB)?;
    conn.execute_batch("BEGIN").map_err(&e)?;
    conn.execute_batch(&schema::runs_fts()).map_err(&e)?;
    set_fts_hash(&conn, BUILD_FTS_HASH).map_err(&e)?;
    {
        let mut insert = conn
            .prepare("INSERT INTO runs_fts(rowid, agent, workflow, body) VALUES (?1, ?2, ?3, ?4)")
            .map_err(&e)?;
        for doc in docs.iter().flatten() {
            insert
                .execute(rusqlite::params![
                    doc.key,
                    doc.agent,
                    doc.workflow,
                    doc.body
                ])
                .map_err(&e)?;
        }
    }
    set_fts_hash(&conn, DEFAULT_FTS_HASH).map_err(&e)?;
    conn.execute_batch("COMMIT").map_err(&e)?;
    conn.close().map_err(|(_, err)| e(err))
}

/// Copies the text thread's `runs_fts` into the new index, row by row of
/// FTS5's own tables (see [`schema::RUNS_FTS_TABLES`]), and removes its
/// file.
fn copy_text(conn: &Connection, aside: &Path) -> Result<()> {
    let e = sql(aside);
    conn.execute("ATTACH DATABASE ?1 AS text", [crate::path_str(aside)])
        .map_err(&e)?;
    let mut copy = String::from("BEGIN;");
    for table in schema::RUNS_FTS_TABLES {
        copy.push_str(&format!(
            "DELETE FROM main.{table}; INSERT INTO main.{table} SELECT * FROM text.{table};"
        ));
    }
    copy.push_str("COMMIT;");
    let copied = conn.execute_batch(&copy).map_err(&e);
    if copied.is_err() {
        let _ = conn.execute_batch("ROLLBACK");
    }
    conn.execute_batch("DETACH DATABASE text").map_err(&e)?;
    copied?;
    remove_db_files(aside)
}

/// The run folders, by the store's one walk; entries that cannot be read
/// are passed over, and a missing runs folder has none.
fn run_folders(dir: &Path) -> Result<impl Iterator<Item = PathBuf> + Send + use<>> {
    Ok(logbook_store::runs::walk(dir)?.filter_map(|f| f.ok().map(|f| f.path)))
}

/// Reads `files` on every core and hands each record to `write`, on this
/// thread, in the order they are parsed; `files` is drawn from as the
/// parsers go, so it may be a walk still under way. `progress` gets (done,
/// `total`); `reading`: how much of each run is read (see
/// [`record::Reading`]). Returns how many files were drawn, and how many
/// of those were unstamped run folders that turned out to hold no
/// manifest (not handed to `write`); the only error is `write`'s.
pub(crate) fn read_parallel<S: std::borrow::Borrow<Seen> + Send, E: Send>(
    p: &Project,
    files: impl Iterator<Item = S> + Send,
    total: u64,
    progress: Option<&(dyn Fn(u64, u64) + Sync)>,
    reading: record::Reading,
    mut write: impl FnMut(Parsed) -> std::result::Result<(), E>,
) -> std::result::Result<(u64, u64), E> {
    let drawing = Drawing {
        p,
        files: Mutex::new(files),
        done: AtomicUsize::new(0),
        missing: AtomicUsize::new(0),
        total,
        progress,
        reading,
    };
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    // The rows phase's parsers do less than its one writer: one core is
    // left to the writer, which three threads on two cores would starve.
    let workers = match reading {
        record::Reading::RowsOnly => cores.saturating_sub(1),
        record::Reading::Text | record::Reading::Stamp => cores,
    }
    .clamp(1, 16);
    let (tx_rec, rx_rec) = std::sync::mpsc::sync_channel::<Vec<Parsed>>(64);
    let write_result: Mutex<std::result::Result<(), E>> = Mutex::new(Ok(()));
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let tx_rec = tx_rec.clone();
            let drawing = &drawing;
            scope.spawn(move || drawing.parse_until_done(tx_rec));
        }
        drop(tx_rec);
        let result = rx_rec.iter().flatten().try_for_each(&mut write);
        if let Ok(mut slot) = write_result.lock() {
            *slot = result;
        }
        // Unblock the parsers if the writer stopped early.
        drop(rx_rec);
    });
    write_result
        .into_inner()
        .unwrap_or_else(|poisoned| poisoned.into_inner())?;
    let done = drawing.done.into_inner() as u64;
    if let Some(cb) = progress {
        cb(done, done);
    }
    Ok((done, drawing.missing.into_inner() as u64))
}

/// Records travel from the parsers in chunks: one channel hand-off (and
/// futex wake) per record was a measurable cost to the writer thread, the
/// bottleneck.
const CHUNK: usize = 64;

/// What the parser threads of [`read_parallel`] share: the files still to
/// draw and the counts so far.
struct Drawing<'a, I> {
    p: &'a Project,
    files: Mutex<I>,
    done: AtomicUsize,
    missing: AtomicUsize,
    total: u64,
    progress: Option<&'a (dyn Fn(u64, u64) + Sync)>,
    reading: record::Reading,
}

impl<S: std::borrow::Borrow<Seen>, I: Iterator<Item = S>> Drawing<'_, I> {
    /// One parser thread: draws and parses files until none is left or
    /// the writer stopped, handing the records over in chunks.
    fn parse_until_done(&self, tx_rec: std::sync::mpsc::SyncSender<Vec<Parsed>>) {
        let mut chunk = Vec::with_capacity(CHUNK);
        loop {
            let next = self.files.lock().ok().and_then(|mut f| f.next());
            let Some(s) = next else {
                if !chunk.is_empty() {
                    let _ = tx_rec.send(chunk);
                }
                return;
            };
            if let Some(parsed) = self.parse(s.borrow()) {
                chunk.push(parsed);
            }
            if chunk.len() >= CHUNK
                && tx_rec
                    .send(std::mem::replace(&mut chunk, Vec::with_capacity(CHUNK)))
                    .is_err()
            {
                return;
            }
        }
    }

    /// Reads one file, counting it (and it as missing when an unstamped
    /// run folder held no manifest, which gives no record).
    fn parse(&self, s: &Seen) -> Option<Parsed> {
        let rec = match record::read_record_for(self.p, s.kind, &s.path, self.reading) {
            (None, None) => {
                self.missing.fetch_add(1, Ordering::Relaxed);
                None
            }
            (stamp, rec) => Some((stamp, rec)),
        };
        let n = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        if let Some(cb) = self.progress
            && n.is_multiple_of(256)
        {
            cb(n as u64, self.total.max(n as u64));
        }
        rec.map(|(stamp, rec)| (s.kind, s.path.clone(), stamp, rec))
    }
}

/// Catches the new file up (unless `catch_up` is false: a builder will)
/// and renames it over the live one (steps 1–3 of the module
/// documentation). Returns what the catch-up sync did.
fn swap_into_place(
    p: &Project,
    conn: Connection,
    new: &Path,
    live: &Path,
    catch_up: bool,
) -> Result<SyncReport> {
    let e = sql(live);
    // 1. Nothing commits to the old index from here on. (Without one, the
    // caller's rebuild lock keeps openers waiting for this build.)
    let old = match Connection::open_with_flags(
        live,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    ) {
        Ok(old) if logbook_store::index_file::is_present(live) => {
            old.busy_timeout(crate::BUSY_TIMEOUT).map_err(&e)?;
            match old.execute_batch("BEGIN IMMEDIATE") {
                Ok(()) => Some(old),
                // A damaged old index is simply replaced.
                Err(_) => None,
            }
        }
        _ => None,
    };
    // 2. What changed on disk since the walk, and the marks of writers that
    // are between their file write and their index update.
    let building = Index {
        conn: pool::Pooled::new(conn, new, None),
        path: new.to_path_buf(),
        project: p.clone(),
        file_id: None,
    };
    let caught_up = if catch_up {
        building.upkeep().sync()?
    } else {
        SyncReport::default()
    };
    if let Some(old) = &old {
        carry_over(old, &building.conn).map_err(&sql(new))?;
    }
    // The new file becomes a WAL database like every index, with a small
    // page cache again, and is closed (writing everything out) before the
    // rename.
    let conn = building.conn.into_inner();
    conn.execute_batch("PRAGMA locking_mode = NORMAL; PRAGMA journal_mode = WAL;")
        .map_err(&sql(new))?;
    conn.close().map_err(|(_, err)| sql(new)(err))?;
    logbook_store::index_file::sync(new)?;
    // 3. No connection opens the index meanwhile.
    let _swap = p.locks.exclusive(SWAP_LOCK)?;
    logbook_store::index_file::remove(live, &["-wal", "-shm"])?;
    logbook_store::index_file::replace(new, live)?;
    drop(old);
    Ok(caught_up)
}

/// Copies what the old index knows that the files do not say into the new
/// file: the pending marks of writers still at work (a writer that marked
/// its file before the swap and dies before its index update is then
/// repaired from the new index, as it would have been from the old), and
/// the team outbox's notes not yet pushed (a record deleted since the last
/// push is in no file any more, so only its note tells the catalog).
fn carry_over(old: &Connection, new: &Connection) -> rusqlite::Result<()> {
    // An index of an older schema may keep no marks, or keep them otherwise.
    if let Ok(mut read) = old.prepare("SELECT path, kind, lock, since FROM pending") {
        let rows = read.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
            ))
        })?;
        let mut write = new.prepare(
            "INSERT OR REPLACE INTO pending(path, kind, lock, since) VALUES (?1, ?2, ?3, ?4)",
        )?;
        for row in rows {
            let (path, kind, lock, since) = row?;
            write.execute([path, kind, lock, since])?;
        }
    }
    if let Ok(mut read) = old.prepare("SELECT kind, id FROM team_outbox ORDER BY seq") {
        let rows = read.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
        let mut write =
            new.prepare("INSERT OR IGNORE INTO team_outbox(kind, id) VALUES (?1, ?2)")?;
        for row in rows {
            let (kind, id) = row?;
            write.execute([kind, id])?;
        }
    }
    Ok(())
}
