//! Keeping the index in step with the files other tools write: the walk of
//! the followed folders, the size/mtime plan, and the one executor behind
//! `sync`, `rebuild` and the cheap name comparison every listing runs.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, UNIX_EPOCH};

use rusqlite::{OptionalExtension, TransactionBehavior};

use super::fulltext::outputs_stamp;
use super::record::{self, Fresh, Record};
use super::schema::INDEXES;
use super::{ALL, Index, Kind, Staleness, SyncReport, mtime_ns, path_str, sql, stamp_of};
use crate::clock;
use crate::error::{Error, Result};
use crate::model::run::MANIFEST_FILE;
use crate::store::{self, Project};

/// Records written per transaction during a sync, so memory stays bounded
/// and other writers get a turn.
const BATCH: usize = 20_000;

/// Records a sync parses ahead and writes together inside one batch, so
/// the FTS table's pending inserts are flushed once per group rather than
/// once per changed run (see `execute`). Small enough to keep memory flat.
const GROUP: usize = 1024;

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

pub(super) fn self_dirs_stamp(p: &Project) -> String {
    format!(
        "{}:{}:{}:{}",
        mtime_ns(&p.config.agent_outputs_folder),
        mtime_ns(&p.config.sessions_dir),
        mtime_ns(&p.config.session_archive_dir),
        mtime_ns(&p.config.transcripts_dir)
    )
}

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

impl Seen {
    /// A file named by the walk but not yet stat'ed: whoever reads it takes
    /// its stamp first (before reading, so a change after it shows as a new
    /// stamp at the next sync).
    fn unstamped(kind: Kind, path: PathBuf) -> Seen {
        Seen {
            kind,
            key: path_str(&path),
            path,
            size: -1,
            mtime_ns: 0,
            dir_mtime_ns: 0,
        }
    }

    fn is_stamped(&self) -> bool {
        self.size >= 0
    }
}

/// A file as a parser thread hands it to the writer: kind, path, the stamp
/// taken before reading it, and what was read (`None`: the file is gone).
type Parsed = (Kind, PathBuf, Option<(i64, i64, i64)>, Option<Record>);

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
///
/// Without `stat_runs` the run manifests are only named, unstamped (see
/// [`Seen::unstamped`]): a full rebuild reads every one anyway, and its
/// parser threads take the stamps in parallel instead of this one thread
/// doing two `stat`s per run before any parsing starts.
fn walk(p: &Project, scope: &[Kind], stat_runs: bool) -> Result<Vec<Seen>> {
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
                let manifest = folder.join(MANIFEST_FILE);
                if !stat_runs {
                    out.push(Seen::unstamped(Kind::Run, manifest));
                    continue;
                }
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
        for path in store::work_session::session_files(dir)? {
            if let Ok(m) = fs::metadata(&path) {
                out.push(seen(Kind::WorkSession, path, &m, 0));
            }
        }
    }
    for dir in [&p.config.sessions_dir, &p.config.session_archive_dir] {
        if !scope.contains(&Kind::WorkflowState) {
            break;
        }
        for path in store::workflow::state_files(dir)? {
            if let Ok(m) = fs::metadata(&path) {
                out.push(seen(Kind::WorkflowState, path, &m, 0));
            }
        }
    }
    if !scope.contains(&Kind::Transcript) {
        return Ok(out);
    }
    for (_, path) in store::transcript::transcript_files(&p.config.transcripts_dir)? {
        if let Ok(m) = fs::metadata(&path) {
            out.push(seen(Kind::Transcript, path, &m, 0));
        }
    }
    Ok(out)
}

/// Whether the registered output files of the run whose manifest is at
/// `manifest` differ from the stamp `stored` with it (the file names come
/// from the index: the manifest is unchanged, so they are the manifest's).
///
/// The cost, and why it is paid: `index sync` (and `index status`, `doctor`)
/// `lstat` every registered output file of every run on top of the two
/// `stat`s per run they already made; a file edited in place changes its
/// own mtime only, so short of a file watcher nothing cheaper can see it.
/// Listings do not pay it: `find` compares folder names only, and
/// verify-on-read checks the outputs of the runs a text query returns
/// (O(page)), so a `find` with nothing changed costs what it did.
fn outputs_changed(manifest: &Path, outputs: &HashMap<String, Vec<String>>, stored: i64) -> bool {
    let Some(folder) = manifest.parent() else {
        return false;
    };
    let files = outputs
        .get(path_str(folder).as_str())
        .map_or(&[][..], Vec::as_slice);
    outputs_stamp(folder, files.iter().map(String::as_str)) != stored
}

impl Index {
    /// The registered output files of every indexed run, by run folder, in
    /// registration order (the order the record's stamp was taken in).
    fn registered_outputs(&self) -> Result<HashMap<String, Vec<String>>> {
        let mut out: HashMap<String, Vec<String>> = HashMap::new();
        let mut stmt = self
            .conn
            .prepare(
                "SELECT r.folder, o.file FROM outputs o JOIN runs r ON r.rid = o.rid \
                 ORDER BY o.rid, o.seq",
            )
            .map_err(self.err())?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
            .map_err(self.err())?;
        for row in rows {
            let (folder, file) = row.map_err(self.err())?;
            out.entry(folder).or_default().push(file);
        }
        Ok(out)
    }

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
        let (_, plan) = self.plan(ALL, false)?;
        Ok(Staleness {
            new: plan.new as u64,
            changed: (plan.read.len() - plan.new) as u64,
            deleted: plan.deleted.len() as u64,
        })
    }

    /// What to read and what to forget; with `full`, everything is read and
    /// nothing compared, so the stored stamps are not even loaded.
    fn plan(&self, scope: &[Kind], full: bool) -> Result<(Vec<Seen>, Plan)> {
        let seen = walk(&self.project, scope, !full)?;
        if full {
            let plan = Plan {
                read: (0..seen.len()).collect(),
                ..Plan::default()
            };
            return Ok((seen, plan));
        }
        type Stored = ((i64, i64, i64), i64);
        let mut known: HashMap<String, Stored> = HashMap::new();
        {
            // Only the scope's rows leave SQLite: a listing of work
            // sessions must not carry every run's row into a map.
            let kinds: Vec<String> = scope.iter().map(|k| format!("'{}'", k.as_str())).collect();
            let mut stmt = self
                .conn
                .prepare(&format!(
                    "SELECT path, kind, size, mtime_ns, dir_mtime_ns, out_stamp FROM files \
                     WHERE kind IN ({})",
                    kinds.join(",")
                ))
                .map_err(self.err())?;
            let rows = stmt
                .query_map([], |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        ((r.get(2)?, r.get(3)?, r.get(4)?), r.get(5)?),
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
        let outputs = if scope.contains(&Kind::Run) {
            self.registered_outputs()?
        } else {
            HashMap::new()
        };
        let mut plan = Plan::default();
        for (i, s) in seen.iter().enumerate() {
            match known.remove(&s.key) {
                // The manifest is unchanged: its output files may not be.
                // One `lstat` per registered output of every run: an edit
                // in place moves no directory mtime, so nothing cheaper
                // sees it (see `outputs_changed`).
                Some((stamp, out)) if stamp == (s.size, s.mtime_ns, s.dir_mtime_ns) => {
                    if s.kind == Kind::Run && outputs_changed(&s.path, &outputs, out) {
                        plan.read.push(i);
                    }
                }
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
    pub(super) fn sync_all(
        &mut self,
        full: bool,
        progress: Option<&(dyn Fn(u64, u64) + Sync)>,
    ) -> Result<SyncReport> {
        self.sync_scoped(ALL, full, progress)
    }

    pub(super) fn sync_scoped(
        &mut self,
        scope: &[Kind],
        full: bool,
        progress: Option<&(dyn Fn(u64, u64) + Sync)>,
    ) -> Result<SyncReport> {
        let started = std::time::Instant::now();
        let dirs_before = self.dirs_stamp();
        let (seen, plan) = self.plan(scope, full)?;
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
    pub(super) fn sync_names(&mut self) -> Result<SyncReport> {
        let started = std::time::Instant::now();
        let dirs_before = self.dirs_stamp();
        // Work sessions, their states and transcripts are few: a stat of each.
        let (mut seen, mut plan) = self.plan(
            &[Kind::WorkSession, Kind::Transcript, Kind::WorkflowState],
            false,
        )?;
        let runs_dir = self.project.config.agent_outputs_folder.clone();
        let on_disk: std::collections::HashSet<String> = folder_names(&runs_dir)?
            .into_iter()
            .map(|name| path_str(&runs_dir.join(name).join(MANIFEST_FILE)))
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
                    record::remove_record(&tx, kind, Path::new(path)).map_err(&e)?;
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
        // Unstamped run folders that turned out to hold no manifest: the
        // walk that stamps skips those, so they are not counted as scanned.
        let missing = AtomicUsize::new(0);
        let workers = std::thread::available_parallelism()
            .map_or(2, |n| n.get())
            .clamp(1, 16);
        // Records travel in chunks: one channel hand-off (and futex wake)
        // per record cost the writer thread, the bottleneck, several % of a
        // rebuild.
        const CHUNK: usize = 64;
        let (tx_rec, rx_rec) = std::sync::mpsc::sync_channel::<Vec<Parsed>>(64);
        let write_result: Mutex<Result<()>> = Mutex::new(Ok(()));
        std::thread::scope(|scope| {
            for _ in 0..workers {
                let tx_rec = tx_rec.clone();
                let todo = &todo;
                let next = &next;
                let done = &done;
                let missing = &missing;
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
                        let stamp = if s.is_stamped() {
                            Some((s.size, s.mtime_ns, s.dir_mtime_ns))
                        } else {
                            record::stamp_now(s.kind, &s.path)
                        };
                        let rec = if s.is_stamped() || stamp.is_some() {
                            Some(record::read_record(project, s.kind, &s.path))
                        } else {
                            missing.fetch_add(1, Ordering::Relaxed);
                            None
                        };
                        let n = done.fetch_add(1, Ordering::Relaxed) + 1;
                        if let Some(cb) = progress
                            && (n.is_multiple_of(256) || n as u64 == total)
                        {
                            cb(n as u64, total);
                        }
                        if let Some(rec) = rec {
                            chunk.push((s.kind, s.path.clone(), stamp, rec));
                        }
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
            let conn = &self.conn;
            let mut result = (|| -> Result<()> {
                let mut batch = 0usize;
                if full {
                    // The index is derived and this transaction replaces all
                    // of it: no fsync is needed to keep it consistent (a crash
                    // leaves the old index, or a torn one that `open` throws
                    // away and rebuilds), and a big page cache keeps the bulk
                    // insert off the disk until commit. Big enough for most of
                    // a large index: pages that do not fit are spilled to the
                    // WAL mid-transaction and read back from there, page by
                    // page, by the FTS merges and by every `CREATE INDEX` at
                    // the end (each scans the whole `runs` table, manifests
                    // included). The memory is only taken as pages are
                    // written, so a small project does not pay for it.
                    conn.execute_batch("PRAGMA synchronous = OFF; PRAGMA cache_size = -524288")
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
                             INSERT INTO runs_fts(runs_fts) VALUES ('delete-all'); DELETE FROM work_sessions; DELETE FROM transcripts; DELETE FROM workflow_states;
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
                    let mut group: Vec<Parsed> = Vec::new();
                    let flush_group = |group: &mut Vec<Parsed>,
                                       report: &mut SyncReport|
                     -> Result<()> {
                        if ctx == Fresh::No {
                            for (kind, path, _, _) in group.iter() {
                                if *kind == Kind::Run
                                    && let Some(folder) = path.parent()
                                {
                                    // `apply` below removes the run again;
                                    // that second removal finds no row and
                                    // so touches no FTS segment.
                                    record::remove_run(conn, &path_str(folder)).map_err(&e)?;
                                }
                            }
                        }
                        for (kind, path, stamp, rec) in group.drain(..) {
                            record::apply(conn, kind, &path, rec, stamp, Some(&mut *report), ctx)
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
                        // Statistics for the tables the planner chooses indexes
                        // for; not for FTS5's shadow tables, which FTS5 reads
                        // by key with fixed plans, and whose size (the index of
                        // every word) made a plain `ANALYZE` read most of the
                        // database once more.
                        let tables: Vec<String> = conn
                            .prepare(
                                "SELECT name FROM sqlite_master WHERE type = 'table' \
                                 AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'runs_fts%'",
                            )
                            .and_then(|mut st| {
                                st.query_map([], |r| r.get(0))?
                                    .collect::<rusqlite::Result<_>>()
                            })
                            .map_err(&e)?;
                        let mut sql = String::from(
                            "INSERT INTO runs_fts(runs_fts, rank) VALUES ('hashsize', 1048576);",
                        );
                        for t in tables {
                            sql.push_str(&format!("ANALYZE \"{}\";", t.replace('"', "\"\"")));
                        }
                        // Row counts only (`sqlite_stat1`): with STAT4 samples
                        // SQLite expires every plan whose choice could depend
                        // on a bound value and re-prepares it at each new
                        // binding, ~20 % of a long-lived server's `find`; the
                        // counts alone already pick the same indexes here.
                        sql.push_str("DELETE FROM sqlite_stat4 WHERE 1; ANALYZE sqlite_schema;");
                        conn.execute_batch(&sql).map_err(&e)?;
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
            .unwrap_or_else(|poisoned| poisoned.into_inner())?;
        report.scanned -= missing.into_inner() as u64;
        report.seconds = started.elapsed().as_secs_f64();
        Ok(report)
    }

    pub(super) fn dirs_stamp(&self) -> String {
        self_dirs_stamp(&self.project)
    }
}
