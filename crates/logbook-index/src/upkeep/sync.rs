//! Keeping the index in step with the files other tools write: the walk of
//! the followed folders, the size/mtime comparison, and the one executor
//! behind `sync`, `rebuild` and the cheap name comparison every listing
//! runs. Run folders are compared by `scan` (streamed, bounded memory);
//! work session, workflow state and transcript files are few, and compared
//! here against the index rows of their own folders only.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, TransactionBehavior};

use crate::upkeep::Upkeep;
use crate::upkeep::folder_names::WalkedNames;
use crate::upkeep::rebuild::{Parsed, read_parallel};
use crate::upkeep::scan::{Outputs, RunChange};
use crate::write::apply::{self, Stamp};
use crate::write::run_rows::{self, Fresh};
use crate::{Kind, Staleness, SyncReport, path_str, sql, write::record};
use logbook_model::clock::Clock;
use logbook_model::error::Result;
use logbook_store::Project;

/// Records written per transaction during a sync, so memory stays bounded
/// and other writers get a turn.
const BATCH: usize = 20_000;

/// Records a sync parses ahead and writes together inside one batch, so
/// the FTS table's pending inserts are flushed once per group rather than
/// once per changed run (see `execute`). Small enough to keep memory flat.
const GROUP: usize = 1024;

/// Directory mtimes have coarse granularity (a kernel tick): an entry
/// created in the same tick as the one we saw leaves the mtime unchanged.
/// A stamp is only trusted as "seen" once the directory is older than
/// this, so such a late entry is never hidden behind an equal mtime.
const RACY_MTIME: Duration = Duration::from_millis(50);

/// The `meta` key holding the runs folder's mtime as of the last complete
/// comparison of its folder names with the index.
pub(crate) const RUNS_DIR_KEY: &str = "runs_dir_mtime";

/// The kinds of file other than runs: few, each `stat`ed at every sync.
const SMALL_KINDS: &[Kind] = &[Kind::WorkSession, Kind::Transcript, Kind::WorkflowState];

/// Whether `dir`'s mtime is old enough by `clock` to stand for its listing
/// (see [`RACY_MTIME`]). The clock is handed in so a test moves it past
/// the racy window instead of sleeping through it.
pub(crate) fn settled(dir: &Path, clock: Clock) -> bool {
    let Ok(now) = clock.system_time().duration_since(std::time::UNIX_EPOCH) else {
        return false;
    };
    let limit = i64::try_from(now.saturating_sub(RACY_MTIME).as_nanos()).unwrap_or(i64::MAX);
    logbook_store::stamp::mtime_ns(dir) < limit
}

/// The runs folder's mtime, as stored under [`RUNS_DIR_KEY`]: it moves
/// when a run folder is created, removed or renamed, and only then.
pub(crate) fn runs_dir_stamp(p: &Project) -> String {
    logbook_store::stamp::mtime_ns(&p.config.agent_outputs_folder).to_string()
}

/// A file found on disk, with the stamp sync compares. Whoever reads it
/// takes its stamp again as it reads it (see `record::read_record`).
#[derive(Debug)]
pub(crate) struct Seen {
    pub(crate) kind: Kind,
    pub(crate) path: PathBuf,
    /// `None` for a run manifest: the walk only names those.
    stamp: Option<Stamp>,
}

impl Seen {
    /// A file named by the walk but not stat'ed.
    pub(crate) fn unstamped(kind: Kind, path: PathBuf) -> Seen {
        Seen {
            kind,
            path,
            stamp: None,
        }
    }
}

/// What to read and what to forget among the small kinds.
#[derive(Debug, Default)]
struct Plan {
    read: Vec<Seen>,
    new: usize,
    deleted: Vec<String>,
    scanned: usize,
}

/// A file found with its stamp taken now; `None` when it is gone already.
fn seen(kind: Kind, path: PathBuf) -> Option<Seen> {
    let stamp = logbook_store::stamp::of_path(&path)?;
    Some(Seen {
        kind,
        path,
        stamp: Some(stamp),
    })
}

/// Every file the index follows, with its stamp: one `stat` per session
/// and transcript file. Run manifests are only named, unstamped (see
/// [`Seen::unstamped`]): whoever reads one takes its stamp first.
pub(crate) fn walk(p: &Project, scope: &[Kind]) -> Result<Vec<Seen>> {
    let mut out = vec![];
    if scope.contains(&Kind::Run) {
        for folder in logbook_store::runs::walk(&p.config.agent_outputs_folder)? {
            out.push(Seen::unstamped(Kind::Run, folder?.manifest()));
        }
    }
    for dir in [&p.config.sessions_dir, &p.config.session_archive_dir] {
        if !scope.contains(&Kind::WorkSession) {
            break;
        }
        for path in logbook_store::work_session::session_files(dir)? {
            out.extend(seen(Kind::WorkSession, path));
        }
    }
    for dir in [&p.config.sessions_dir, &p.config.session_archive_dir] {
        if !scope.contains(&Kind::WorkflowState) {
            break;
        }
        for path in logbook_store::workflow::state_files(dir)? {
            out.extend(seen(Kind::WorkflowState, path));
        }
    }
    if !scope.contains(&Kind::Transcript) {
        return Ok(out);
    }
    for (_, path) in logbook_store::transcript::transcript_files(&p.config.transcripts_dir)? {
        out.extend(seen(Kind::Transcript, path));
    }
    Ok(out)
}

/// The folders the files of `kind` live in.
fn folders_of(p: &Project, kind: Kind) -> Vec<&Path> {
    match kind {
        Kind::Run => vec![&p.config.agent_outputs_folder],
        Kind::WorkSession | Kind::WorkflowState => {
            vec![&p.config.sessions_dir, &p.config.session_archive_dir]
        }
        Kind::Transcript => vec![&p.config.transcripts_dir],
    }
}

impl Upkeep<'_> {
    /// Brings the index up to date with the folders, reading only new or
    /// changed files and dropping records whose file is gone. Noticing that
    /// nothing changed reads no file: one `stat` per followed file (see
    /// `scan` for the runs), and the runs folder is only listed when its
    /// mtime moved. A finished run is checked by its manifest's stamp
    /// alone ([`Outputs::Unsettled`]): an output of it edited in place is
    /// seen by [`Upkeep::sync_full`].
    pub fn sync(&mut self) -> Result<SyncReport> {
        self.sync_after(None, Outputs::Unsettled)
    }

    /// [`Upkeep::sync`] that also `lstat`s every registered output of every
    /// run, finished or not (`index sync --full`).
    pub fn sync_full(&mut self) -> Result<SyncReport> {
        self.sync_after(None, Outputs::All)
    }

    /// [`Upkeep::sync`] right after a pass over every run folder that kept
    /// the names it `walked`: the runs folder is not listed again while
    /// they are current. `outputs`: whose output files are checked.
    pub fn sync_after(
        &mut self,
        walked: Option<&WalkedNames>,
        outputs: Outputs,
    ) -> Result<SyncReport> {
        let started = std::time::Instant::now();
        let dir_before = runs_dir_stamp(&self.index.project);
        let names = self.index.meta(RUNS_DIR_KEY)?.as_deref() != Some(dir_before.as_str());
        let mut report = SyncReport::default();
        // Changes are gathered over the scan's batches and written GROUP at
        // a time: one transaction and one FTS flush per group, not one per
        // index batch that happens to hold a change (a few changes spread
        // over every batch would make that one per batch, each flush
        // merging FTS segments again).
        let mut todo: Vec<RunChange> = vec![];
        let summary = self.scan_runs(names, walked, outputs, &mut |changes| {
            todo.extend(changes);
            if todo.len() >= GROUP {
                let r = self.apply_run_changes(std::mem::take(&mut todo))?;
                merge(&mut report, r);
            }
            Ok(())
        })?;
        if !todo.is_empty() {
            let r = self.apply_run_changes(todo)?;
            merge(&mut report, r);
        }
        report.scanned += summary.scanned;
        let plan = self.plan(SMALL_KINDS)?;
        report.scanned += plan.scanned as u64;
        if !plan.read.is_empty() || !plan.deleted.is_empty() {
            let r = self.execute(&plan.read, &plan.deleted, started)?;
            merge(&mut report, r);
        }
        if names {
            self.note_runs_dir(&dir_before, summary.complete)?;
        }
        merge(&mut report, self.sync_archive()?);
        self.index
            .set_meta("last_sync", &self.index.project.clock.now_string())?;
        report.seconds = started.elapsed().as_secs_f64();
        Ok(report)
    }

    /// What a sync would do, without doing it (and without writing).
    pub fn staleness(&self) -> Result<Staleness> {
        self.staleness_after(None, Outputs::Unsettled)
    }

    /// [`Upkeep::staleness`] right after a pass that kept the run folder
    /// names it `walked` (see [`Upkeep::sync_after`]), `outputs` checked as
    /// that sync would.
    pub fn staleness_after(
        &self,
        walked: Option<&WalkedNames>,
        outputs: Outputs,
    ) -> Result<Staleness> {
        let mut stale = Staleness::default();
        let dir_now = runs_dir_stamp(&self.index.project);
        let names = self.index.meta(RUNS_DIR_KEY)?.as_deref() != Some(dir_now.as_str());
        self.scan_runs(names, walked, outputs, &mut |changes| {
            for c in changes {
                match c {
                    RunChange::Read { new: true, .. } => stale.new += 1,
                    RunChange::Read { new: false, .. } => stale.changed += 1,
                    RunChange::Gone(_) => stale.deleted += 1,
                }
            }
            Ok(())
        })?;
        let plan = self.plan(SMALL_KINDS)?;
        stale.new += plan.new as u64;
        stale.changed += (plan.read.len() - plan.new) as u64;
        stale.deleted += plan.deleted.len() as u64;
        Ok(stale)
    }

    /// What to read and what to forget among files of `scope` (never
    /// runs): the walk of their folders against the index rows of those
    /// folders only (a range of the `files` primary key, so the rows of a
    /// million runs are never read for them).
    fn plan(&self, scope: &[Kind]) -> Result<Plan> {
        let seen = walk(&self.index.project, scope)?;
        let mut known: HashMap<String, Stamp> = HashMap::new();
        let mut dirs: Vec<&Path> = scope
            .iter()
            .flat_map(|k| folders_of(&self.index.project, *k))
            .collect();
        dirs.sort();
        dirs.dedup();
        let mut stmt = self
            .index
            .conn
            .prepare_cached(
                "SELECT path, kind, size, mtime_ns FROM files \
                 WHERE path > ?1 AND path < ?2",
            )
            .map_err(self.index.err())?;
        for dir in dirs {
            let probe = path_str(&dir.join("x"));
            let prefix = &probe[..probe.len() - 1];
            let end = format!("{}0", &prefix[..prefix.len() - 1]);
            let rows = stmt
                .query_map(rusqlite::params![prefix, end], |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        (r.get(2)?, r.get(3)?),
                    ))
                })
                .map_err(self.index.err())?;
            for row in rows {
                let (path, kind, stamp) = row.map_err(self.index.err())?;
                if Kind::parse(&kind).is_some_and(|k| scope.contains(&k)) {
                    known.insert(path, stamp);
                }
            }
        }
        let mut plan = Plan {
            scanned: seen.len(),
            ..Plan::default()
        };
        for s in seen {
            match known.remove(path_str(&s.path).as_str()) {
                Some(stamp) if Some(stamp) == s.stamp => {}
                Some(_) => plan.read.push(s),
                None => {
                    plan.new += 1;
                    plan.read.push(s)
                }
            }
        }
        plan.deleted = known.into_keys().collect();
        Ok(plan)
    }

    /// Brings the records of one small kind (work sessions, transcripts,
    /// workflow states) up to date, never touching run rows; writes nothing
    /// when nothing changed.
    pub(crate) fn sync_kind(&mut self, kind: Kind) -> Result<SyncReport> {
        let started = std::time::Instant::now();
        let plan = self.plan(&[kind])?;
        if plan.read.is_empty() && plan.deleted.is_empty() {
            return Ok(SyncReport {
                scanned: plan.scanned as u64,
                ..SyncReport::default()
            });
        }
        self.execute(&plan.read, &plan.deleted, started)
    }

    /// The sync behind every listing of runs, run only when the runs
    /// folder's mtime moved (a run folder was created, removed or renamed):
    /// the folder *names* are compared with the index, and only new ones
    /// parsed. Why names and not stamps: the folder's mtime moves on every
    /// `run start`, including our own, and a `stat` of every manifest is the
    /// cost the index exists to avoid. Recording "our" mtime after our own
    /// `mkdir` would have to prove no other tool created a folder in the
    /// same coarse mtime tick, which it cannot. In-place edits inside run
    /// folders never moved this mtime: those are caught for the runs a query
    /// returns by verify-on-read ([`Reader::find_runs`]), for runs still
    /// running, folders without a manifest and invalid manifests before a
    /// query decides, and for all runs by `index sync`.
    pub(crate) fn sync_names(&mut self) -> Result<SyncReport> {
        let started = std::time::Instant::now();
        let dir_before = runs_dir_stamp(&self.index.project);
        let mut report = SyncReport::default();
        let summary = self.scan_names(&mut |changes| {
            let r = self.apply_run_changes(changes)?;
            merge(&mut report, r);
            Ok(())
        })?;
        report.scanned = summary.scanned;
        self.note_runs_dir(&dir_before, summary.complete)?;
        report.seconds = started.elapsed().as_secs_f64();
        Ok(report)
    }

    /// Stores the runs folder's mtime as seen, if the comparison that just
    /// ended was complete, nothing moved while it ran, the mtime is old
    /// enough to trust, and it is not stored already (a read that found
    /// nothing to change writes nothing).
    fn note_runs_dir(&self, before: &str, complete: bool) -> Result<()> {
        let dir = &self.index.project.config.agent_outputs_folder;
        if !complete
            || runs_dir_stamp(&self.index.project) != before
            || !settled(dir, self.index.project.clock)
        {
            return Ok(());
        }
        if self.index.meta(RUNS_DIR_KEY)?.as_deref() == Some(before) {
            return Ok(());
        }
        self.index.set_meta(RUNS_DIR_KEY, before)
    }

    /// Writes a batch of [`RunChange`]s: gone records removed, the others
    /// read on every core.
    pub(crate) fn apply_run_changes(&self, changes: Vec<RunChange>) -> Result<SyncReport> {
        let mut read = vec![];
        let mut gone = vec![];
        for c in changes {
            match c {
                RunChange::Read { path, .. } => read.push(Seen::unstamped(Kind::Run, path)),
                RunChange::Gone(path) => gone.push(path),
            }
        }
        self.execute(&read, &gone, std::time::Instant::now())
    }

    /// Applies a plan: deletions, then the new and changed files parsed on
    /// every core and written in batches.
    fn execute(
        &self,
        todo: &[Seen],
        deleted: &[String],
        started: std::time::Instant,
    ) -> Result<SyncReport> {
        let mut report = SyncReport {
            scanned: todo.len() as u64,
            ..SyncReport::default()
        };
        if !deleted.is_empty() {
            self.remove_deleted(deleted, &mut report)?;
        }
        if todo.is_empty() {
            report.seconds = started.elapsed().as_secs_f64();
            return Ok(report);
        }
        let e = sql(&self.index.path);
        let conn = &self.index.conn;
        conn.execute_batch("BEGIN IMMEDIATE").map_err(&e)?;
        match self.store_changed(todo, &mut report) {
            Ok(missing) => {
                conn.execute_batch("COMMIT").map_err(&e)?;
                // Unstamped run folders that turned out to hold no manifest
                // are not counted as scanned.
                report.scanned -= missing;
            }
            Err(err) => {
                let _ = conn.execute_batch("ROLLBACK");
                return Err(err);
            }
        }
        report.seconds = started.elapsed().as_secs_f64();
        Ok(report)
    }

    /// Forgets the records of `deleted` files, in one transaction.
    fn remove_deleted(&self, deleted: &[String], report: &mut SyncReport) -> Result<()> {
        let e = sql(&self.index.path);
        let tx =
            rusqlite::Transaction::new_unchecked(&self.index.conn, TransactionBehavior::Immediate)
                .map_err(&e)?;
        for path in deleted {
            let kind: Option<String> = tx
                .query_row("SELECT kind FROM files WHERE path = ?1", [path], |r| {
                    r.get(0)
                })
                .optional()
                .map_err(&e)?;
            if let Some(kind) = kind.as_deref().and_then(Kind::parse) {
                apply::remove_record(&tx, kind, Path::new(path)).map_err(&e)?;
            }
            report.removed += 1;
        }
        tx.commit().map_err(&e)
    }

    /// Reads the new and changed files `todo` on every core and stores
    /// them in groups, committing every [`BATCH`], inside the transaction
    /// the caller began. Returns how many unstamped run folders held no
    /// manifest.
    ///
    /// Written in groups: first every group member's old run rows are
    /// removed, then the new ones stored. Why: a delete from the
    /// contentless_delete FTS table makes FTS5 flush its pending inserts to
    /// a new on-disk segment first (tombstones only apply to segments), and
    /// each flush runs an incremental merge. Interleaving delete, insert,
    /// delete, insert… flushed and merged once per changed run; grouped,
    /// once per group. The group never spans a COMMIT, so what readers see
    /// between batches is unchanged.
    fn store_changed(&self, todo: &[Seen], report: &mut SyncReport) -> Result<u64> {
        let e = sql(&self.index.path);
        let conn = &self.index.conn;
        let mut group: Vec<Parsed> = Vec::new();
        let mut batch = 0usize;
        // `in_group`: the group's paths. A path twice in one group would
        // have its FTS row cleared once and written twice: a repeat closes
        // the group first.
        let mut in_group: HashSet<PathBuf> = HashSet::new();
        let mut flush = |group: &mut Vec<Parsed>, in_group: &mut HashSet<PathBuf>| {
            in_group.clear();
            store_group(conn, group, report).map_err(&e)
        };
        let (_, missing) = read_parallel(
            &self.index.project,
            todo.iter(),
            todo.len() as u64,
            None,
            record::Reading::Text,
            |item| {
                if in_group.contains(&item.1) {
                    flush(&mut group, &mut in_group)?;
                }
                in_group.insert(item.1.clone());
                group.push(item);
                batch += 1;
                if group.len() >= GROUP {
                    flush(&mut group, &mut in_group)?;
                }
                if batch >= BATCH {
                    flush(&mut group, &mut in_group)?;
                    batch = 0;
                    conn.execute_batch("COMMIT; BEGIN IMMEDIATE").map_err(&e)?;
                }
                Ok(())
            },
        )?;
        flush(&mut group, &mut in_group)?;
        Ok(missing)
    }
}

/// Stores one group of a sync's records, emptying it. The old rows are not
/// all removed first: a run whose FTS text is unchanged (most in-place
/// edits of a status or a date, and every rewrite that changes no word)
/// keeps its FTS row and is updated in place under its rowid, touching
/// only the columns that differ (see `run_rows::clear_stale_fts`).
fn store_group(
    conn: &Connection,
    group: &mut Vec<Parsed>,
    report: &mut SyncReport,
) -> rusqlite::Result<()> {
    let mut same_text = Vec::with_capacity(group.len());
    for (kind, path, _, rec) in group.iter() {
        same_text.push(match path.parent() {
            Some(folder) if *kind == Kind::Run => {
                run_rows::clear_stale_fts(conn, &path_str(folder), rec.as_ref())?
            }
            _ => false,
        });
    }
    for ((kind, path, stamp, rec), same_text) in group.drain(..).zip(same_text) {
        apply::apply(
            conn,
            kind,
            &path,
            rec,
            stamp,
            Some(&mut *report),
            Fresh::FtsCleared { same_text },
        )?;
        report.indexed += 1;
    }
    Ok(())
}

/// Adds what one batch of a sync did to the whole sync's report.
fn merge(into: &mut SyncReport, part: SyncReport) {
    into.indexed += part.indexed;
    into.removed += part.removed;
    into.corrupt.extend(part.corrupt);
}
