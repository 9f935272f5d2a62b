//! The second phase of a two-phase rebuild: the full text.
//!
//! An index that is missing or damaged is rebuilt in two phases when a
//! face has registered the program to build the text with
//! ([`register_text_builder`]). Phase 1 ([`FullText::Later`]) builds the
//! rows-only index (every row but the full-text ones, no output file read, each
//! run's manifest stored as a stub, for which readers read its file)
//! and swaps it into place: commands answer from then on. It leaves a plan in
//! `meta` ([`TEXT_BUILD_KEY`]): the runs and transcripts whose text is still
//! to write, by row id, up to the last row the rows phase wrote.
//!
//! Phase 2 is a detached `logbook index build-text`, started by the command
//! that opened the index (see [`Upkeep::resume_text`]). It holds
//! [`TEXT_LOCK`] and writes the text in batches, each batch in one
//! transaction with the plan's progress, so a builder killed at any point
//! leaves a plan with no builder holding the lock, and the next command
//! that opens the index starts one that resumes there.
//!
//! Writes meanwhile (a run registered, a sync) store their text as always.
//! Rows past the plan's end are new, written with their text. A row the
//! builder has not reached yet may get a text row from a writer first: the
//! builder deletes each row before it inserts it (contentless FTS5 tables
//! would otherwise keep both), and reads the run's manifest and output
//! files inside its write transaction, so what it writes is never older
//! than what a writer wrote before it.
//!
//! Until the plan is gone, every text query is flagged partial
//! ([`Reader::text_progress`], and a notice for the face).

use std::path::Path;

use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};

use crate::read::Reader;
use crate::schema::INDEXES;
use crate::upkeep::Upkeep;
use crate::upkeep::rebuild::{self, FullText, REBUILD_WAIT};
use crate::upkeep::sync::Seen;
use crate::{Index, Kind, upkeep::migrate, write::apply, write::record, write::run_rows};
use logbook_model::error::{Next, Result, Step};
use logbook_model::notice::Notice;
use logbook_model::run::MANIFEST_FILE;
use logbook_store::Project;

/// Held exclusively by the one process writing the text of a plan.
pub(crate) const TEXT_LOCK: &str = "index-text";

/// The `meta` key of the text phase's plan (a JSON [`Plan`]); absent once
/// the full text is complete.
pub const TEXT_BUILD_KEY: &str = "text_build";

/// Runs whose text one batch writes: large enough that FTS5 writes few
/// segments, small enough that a writer waits little for the lock.
const RUN_BATCH: i64 = 2000;

/// [`RUN_BATCH`], or in tests a few runs, so that a test can stop the
/// builder between two batches of a small project.
fn run_batch() -> i64 {
    #[cfg(feature = "testing")]
    if let Some(n) = logbook_store::testing::text_batch() {
        return n;
    }
    RUN_BATCH
}

/// Transcripts one batch reads and writes (each may be large).
const TRANSCRIPT_BATCH: i64 = 8;

/// What is left of the text phase, and how far it is.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Plan {
    /// Runs up to this rowid have their text.
    runs_after: i64,
    /// The last run row of the rows phase; later ones were written with text.
    runs_end: i64,
    /// Transcripts up to this rowid have their text.
    transcripts_after: i64,
    /// The last transcript row of the rows phase.
    transcripts_end: i64,
    /// Rows written so far, of `total`.
    done: u64,
    /// Rows the plan covers.
    total: u64,
    /// Whether secondary indexes or the planner's statistics are still to
    /// make (a rows-only index goes live with only those its first answers need,
    /// see `rebuild::ROWS_ONLY_INDEXES`).
    #[serde(default)]
    indexes: bool,
    /// Whether the catch-up sync of the swap is still to run: a rows-only index
    /// went live without it (see `rebuild::build_and_swap`), and the
    /// builder runs it after the indexes, before any text.
    #[serde(default)]
    catch_up: bool,
}

/// How far the full-text index is while it is being built: faces say so
/// next to every text answer, which may be short until it is complete.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TextProgress {
    /// Runs and transcripts whose text is indexed.
    pub done: u64,
    /// Runs and transcripts the build covers.
    pub total: u64,
}

impl TextProgress {
    /// Percent done, 0–99 (100 only once complete, when there is no
    /// progress to show).
    pub fn percent(&self) -> u64 {
        (self.done.saturating_mul(100))
            .checked_div(self.total)
            .unwrap_or(0)
            .min(99)
    }

    /// What a face tells the person next to a text answer.
    pub fn notice(&self) -> Notice {
        Notice::new(format!(
            "the full-text index is still being built ({}%, {} of {} runs and transcripts): text matches may be missing",
            self.percent(),
            self.done,
            self.total
        ))
        .next(Next::of(Step::IndexStatus, " shows how far it is"))
    }
}

impl std::fmt::Display for TextProgress {
    /// `text 41%`: the value of the web API's `X-Logbook-Partial` header.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "text {}%", self.percent())
    }
}

/// How a lost index is rebuilt here: in two phases where the project names
/// a builder program ([`Project::text_builder`]), else in one.
pub(crate) fn first_build(p: &Project) -> FullText {
    match &p.text_builder {
        Some(_) => FullText::Later,
        None => FullText::OwnThread,
    }
}

/// Plans of fewer runs and transcripts than this are written before the
/// swap, by the process that ran the rows phase: their text takes well
/// under a second, less than starting a builder process would.
const DETACH_FROM: u64 = 2_000;

fn detach_from() -> u64 {
    #[cfg(feature = "testing")]
    if let Some(n) = logbook_store::testing::two_phase_from() {
        return n;
    }
    DETACH_FROM
}

/// Whether the rows-only index `conn` is building leaves its catch-up sync to the
/// text builder (its plan is not written before the swap).
pub(crate) fn catches_up_later(conn: &Connection) -> rusqlite::Result<bool> {
    Ok(read_plan(conn)?.is_some_and(|plan| plan.catch_up))
}

/// Writes the text of a small plan (see [`DETACH_FROM`]) into the rows-only index
/// `conn` is building, before it is swapped into place.
pub(crate) fn finish_small(conn: &Connection, p: &Project) -> rusqlite::Result<()> {
    match read_plan(conn)? {
        Some(plan) if plan.total < detach_from() => {
            conn.execute_batch("BEGIN IMMEDIATE")?;
            let written = (|| {
                while text_batch(conn, p)? {}
                Ok(())
            })();
            match written {
                Ok(()) => conn.execute_batch("COMMIT"),
                Err(e) => {
                    let _ = conn.execute_batch("ROLLBACK");
                    Err(e)
                }
            }
        }
        _ => Ok(()),
    }
}

/// [`finish_small`] for the live index `conn` a migration just gave a plan
/// (see [`plan_runs_again`]), so a small project answers whole at once. A
/// plan still to catch up (a rows-only index's, migrated before its builder ended)
/// is left to the builder, which syncs before it writes text.
pub(crate) fn finish_small_migrated(conn: &Connection, p: &Project) -> rusqlite::Result<()> {
    match read_plan(conn)? {
        Some(plan) if !plan.catch_up => finish_small(conn, p),
        _ => Ok(()),
    }
}

/// Plans the text of every run again, in a migration that made the runs'
/// text table anew (empty): from the first run, whatever a plan already
/// there had done, and keeping what else it had left (indexes, catch-up,
/// transcripts).
pub(crate) fn plan_runs_again(conn: &Connection) -> rusqlite::Result<()> {
    let (runs_end, runs) = rows_of(conn, "runs")?;
    let plan = match read_plan(conn)? {
        Some(left) => {
            let transcripts: i64 = conn.query_row(
                "SELECT count(*) FROM transcripts WHERE rid > ?1 AND rid <= ?2",
                params![left.transcripts_after, left.transcripts_end],
                |r| r.get(0),
            )?;
            Plan {
                runs_after: 0,
                runs_end,
                done: 0,
                total: runs + transcripts.max(0) as u64,
                ..left
            }
        }
        None => {
            let (transcripts_end, _) = rows_of(conn, "transcripts")?;
            Plan {
                runs_after: 0,
                runs_end,
                transcripts_after: transcripts_end,
                transcripts_end,
                done: 0,
                total: runs,
                indexes: false,
                catch_up: false,
            }
        }
    };
    write_plan(conn, &plan)
}

/// Writes the plan of the text phase into a rows-only index just filled (phase 1,
/// inside its transaction).
pub(crate) fn plan(conn: &Connection) -> rusqlite::Result<()> {
    write_plan(conn, &fresh_plan(conn)?)
}

fn fresh_plan(conn: &Connection) -> rusqlite::Result<Plan> {
    let (runs_end, runs) = rows_of(conn, "runs")?;
    let (transcripts_end, transcripts) = rows_of(conn, "transcripts")?;
    Ok(Plan {
        runs_after: 0,
        runs_end,
        transcripts_after: 0,
        transcripts_end,
        done: 0,
        total: runs + transcripts,
        indexes: true,
        catch_up: true,
    })
}

/// The last row id of `table` (a table of ours) and how many rows it has.
fn rows_of(conn: &Connection, table: &str) -> rusqlite::Result<(i64, u64)> {
    conn.query_row(
        &format!("SELECT coalesce(max(rid), 0), count(*) FROM {table}"),
        [],
        |r| Ok((r.get(0)?, r.get::<_, i64>(1)?.max(0) as u64)),
    )
}

fn write_plan(conn: &Connection, plan: &Plan) -> rusqlite::Result<()> {
    let value = serde_json::to_string(plan)
        .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
    conn.prepare_cached("INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)")?
        .execute(params![TEXT_BUILD_KEY, value])
        .map(|_| ())
}

/// The plan in `meta`, if the text is not complete. A value that does not
/// parse (another version's) starts the text over: rows are deleted
/// before they are written, so writing one twice is harmless.
fn read_plan(conn: &Connection) -> rusqlite::Result<Option<Plan>> {
    let value: Option<String> = conn
        .prepare_cached("SELECT value FROM meta WHERE key = ?1")?
        .query_row([TEXT_BUILD_KEY], |r| r.get(0))
        .optional()?;
    match value {
        None => Ok(None),
        Some(v) => match serde_json::from_str(&v) {
            Ok(plan) => Ok(Some(plan)),
            Err(_) => fresh_plan(conn).map(Some),
        },
    }
}

impl Reader<'_> {
    /// How far the full-text index is, or `None` when it is complete: a
    /// text query answered meanwhile may miss matches (see `text_build`).
    pub fn text_progress(&self) -> Result<Option<TextProgress>> {
        let plan = read_plan(&self.index.conn).map_err(self.index.err())?;
        Ok(plan.map(|p| TextProgress {
            done: p.done.min(p.total),
            total: p.total,
        }))
    }

    /// [`Reader::text_progress`] for a text query about to be answered, with
    /// a notice for the face when its answer may be short.
    pub(crate) fn note_partial_text(&self) -> Result<Option<TextProgress>> {
        let progress = self.text_progress()?;
        if let Some(progress) = &progress {
            self.index.project.notices.push(progress.notice());
        }
        Ok(progress)
    }
}

impl Upkeep<'_> {
    /// Where the text is unfinished and no builder holds [`TEXT_LOCK`]
    /// (none was started, or it died): starts the registered builder
    /// program, detached, or without one builds the text here and now.
    pub(crate) fn resume_text(&mut self) -> Result<()> {
        if self.index.meta(TEXT_BUILD_KEY)?.is_none() {
            return Ok(());
        }
        #[cfg(feature = "testing")]
        if logbook_store::testing::text_builder_off() {
            return Ok(());
        }
        let Some(_free) = self.index.project.locks.try_exclusive(TEXT_LOCK)? else {
            return Ok(());
        };
        match &self.index.project.text_builder {
            // The builder waits for this lock, released on return.
            Some(program) => spawn_builder(program, &self.index.project),
            None => self.write_text(),
        }
    }

    /// Runs the catch-up sync a rows-only index went live without, if it is still
    /// due: what changed on disk while the rows phase walked the files (each stamp
    /// was taken before its file was read, so a change shows). Until then
    /// such a change is as stale as an edit since the last sync, which
    /// verify-on-read covers for what is shown.
    fn catch_up(&mut self) -> Result<()> {
        let due = read_plan(&self.index.conn)
            .map_err(self.index.err())?
            .is_some_and(|plan| plan.catch_up);
        if !due {
            return Ok(());
        }
        self.sync()?;
        if !self.index.begin_write()? {
            return Ok(());
        }
        self.index.finish_write(|conn| {
            if let Some(plan) = read_plan(conn)? {
                write_plan(
                    conn,
                    &Plan {
                        catch_up: false,
                        ..plan
                    },
                )?;
            }
            Ok(())
        })
    }

    /// Writes the plan's text batch by batch; the caller holds
    /// [`TEXT_LOCK`]. Stops when the plan is done, or when this file is no
    /// longer the index (a rebuild replaced it, with its own plan).
    fn write_text(&mut self) -> Result<()> {
        // What an upgrade from schema 9 left: the folders without a manifest.
        self.names_if_due()?;
        let mut caught_up = false;
        loop {
            // The catch-up sync after the indexes, which its lookups use.
            if !caught_up
                && read_plan(&self.index.conn)
                    .map_err(self.index.err())?
                    .is_none_or(|plan| !plan.indexes)
            {
                self.catch_up()?;
                caught_up = true;
            }
            // Tests count the batches that write text, not the indexes'.
            #[cfg(feature = "testing")]
            if read_plan(&self.index.conn)
                .map_err(self.index.err())?
                .is_some_and(|plan| !plan.indexes)
            {
                logbook_store::testing::fault("text-batch");
            }
            if !self.index.begin_write()? {
                return Ok(());
            }
            let mut more = false;
            self.index.finish_write(|conn| {
                more = text_batch(conn, &self.index.project)?;
                Ok(())
            })?;
            if !more {
                return Ok(());
            }
        }
    }
}

impl Index {
    /// Phase 2 in this process (`logbook index build-text`): waits for a
    /// builder at work, then writes whatever text is left.
    pub fn build_text(p: &Project) -> Result<()> {
        let _one = p.locks.exclusive_within(TEXT_LOCK, REBUILD_WAIT)?;
        let index = Index::open(p)?;
        index.upkeep().write_text()
    }

    /// Starts the registered builder program, detached, to build a lost
    /// index in its two phases (`index build-text` builds the rows first),
    /// unless a build of either phase is under way or no builder is
    /// registered: what `find` does after it answered from a scan of the
    /// manifests, so the index is built behind its answer. Whether one
    /// was started.
    pub fn build_behind(p: &Project) -> Result<bool> {
        let Some(program) = &p.text_builder else {
            return Ok(false);
        };
        #[cfg(feature = "testing")]
        if logbook_store::testing::text_builder_off() {
            return Ok(false);
        }
        let Some(_rows) = p.locks.try_exclusive(rebuild::REBUILD_LOCK)? else {
            return Ok(false);
        };
        let Some(_text) = p.locks.try_exclusive(TEXT_LOCK)? else {
            return Ok(false);
        };
        // The builder waits for these locks, released on return.
        spawn_builder(program, p)?;
        Ok(true)
    }
}

/// Writes one batch of the plan's text and its progress, in the caller's
/// transaction; whether any is left.
fn text_batch(conn: &Connection, p: &Project) -> rusqlite::Result<bool> {
    let Some(mut plan) = read_plan(conn)? else {
        return Ok(false);
    };
    // First, as listings find the running runs the slower way until then.
    if migrate::fill_live_batch(conn)? {
        return Ok(true);
    }
    // Before the text, so the new text reuses the pages it frees.
    if migrate::retire_text_batch(conn)? {
        return Ok(true);
    }
    if plan.indexes {
        // First, so that every query has its index again while the text is
        // written; one a batch, so that a writer waits for one sort of one
        // table at most, then the planner's statistics.
        match missing_index(conn)? {
            Some(name) => conn.execute_batch(&rebuild::indexes_sql(|n| n == name))?,
            None => {
                conn.execute_batch(&rebuild::stats_sql())?;
                plan.indexes = false;
            }
        }
    } else if plan.runs_after < plan.runs_end {
        let rows: Vec<(i64, String, String)> = conn
            .prepare_cached(
                "SELECT rid, folder, manifest FROM runs WHERE rid > ?1 AND rid <= ?2 \
                 ORDER BY rid LIMIT ?3",
            )?
            .query_map(params![plan.runs_after, plan.runs_end, run_batch()], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })?
            .collect::<rusqlite::Result<_>>()?;
        plan.runs_after = rows.last().map_or(plan.runs_end, |r| r.0);
        plan.done += rows.len() as u64;
        let (stubs, stored): (Vec<_>, Vec<_>) = rows
            .into_iter()
            .partition(|(_, _, manifest)| record::is_manifest_stub(manifest));
        // A run whose folder is gone keeps no text: the next sync removes it.
        let texts: Vec<(i64, record::RunRow)> = stored
            .iter()
            .filter_map(|(rid, folder, manifest)| {
                record::stored_run_row(Path::new(folder), manifest).map(|r| (*rid, r))
            })
            .collect();
        run_rows::replace_fts(conn, &texts)?;
        complete_stubs(conn, p, &stubs)?;
    } else if plan.transcripts_after < plan.transcripts_end {
        transcript_text_batch(conn, p, &mut plan)?;
    }
    if !plan.indexes
        && plan.runs_after >= plan.runs_end
        && plan.transcripts_after >= plan.transcripts_end
    {
        conn.prepare_cached("DELETE FROM meta WHERE key = ?1")?
            .execute([TEXT_BUILD_KEY])?;
        return Ok(false);
    }
    write_plan(conn, &plan)?;
    Ok(true)
}

/// One batch of the transcripts' text, from where `plan` left off.
fn transcript_text_batch(conn: &Connection, p: &Project, plan: &mut Plan) -> rusqlite::Result<()> {
    let rows: Vec<(i64, String)> = conn
        .prepare_cached(
            "SELECT rid, path FROM transcripts WHERE rid > ?1 AND rid <= ?2 \
             ORDER BY rid LIMIT ?3",
        )?
        .query_map(
            params![
                plan.transcripts_after,
                plan.transcripts_end,
                TRANSCRIPT_BATCH
            ],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?
        .collect::<rusqlite::Result<_>>()?;
    plan.transcripts_after = rows.last().map_or(plan.transcripts_end, |r| r.0);
    plan.done += rows.len() as u64;
    for (rid, path) in &rows {
        // A file gone or unreadable now is the next sync's to settle.
        if let (_, Some(rec)) = record::read_record(p, Kind::Transcript, path.as_ref()) {
            apply::replace_transcript_text(conn, *rid, &rec)?;
        }
    }
    Ok(())
}

/// The first of the secondary indexes the index does not have yet.
fn missing_index(conn: &Connection) -> rusqlite::Result<Option<&'static str>> {
    let mut has = conn
        .prepare_cached("SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name = ?1")?;
    for (name, _) in INDEXES {
        if has.query_row([name], |r| r.get::<_, i64>(0))? == 0 {
            return Ok(Some(name));
        }
    }
    Ok(None)
}

/// Stores whole the runs the rows phase stored as stubs (see
/// `record::Reading::RowsOnly`): each read again from its manifest and
/// output files, with the stamp taken before, and stored as a sync stores
/// a changed run. A writer that stored one meanwhile replaced its stub, so
/// only rows no writer has touched come here. Their text rows are deleted
/// first, all of them before any insert (see `run_rows::clear_stale_fts`).
///
/// Read on every core while this thread writes, as a sync reads
/// (`rebuild::read_parallel`): one thread reading and writing in turn
/// left a core idle for the whole of phase 2. A run whose folder is gone
/// is not read, and keeps its stub until the next sync removes it.
fn complete_stubs(
    conn: &Connection,
    p: &Project,
    rows: &[(i64, String, String)],
) -> rusqlite::Result<()> {
    for (rid, _, _) in rows {
        run_rows::delete_fts(conn, *rid)?;
    }
    let stubs = rows
        .iter()
        .map(|(_, folder, _)| Seen::unstamped(Kind::Run, Path::new(folder).join(MANIFEST_FILE)));
    rebuild::read_parallel(p, stubs, 0, None, record::Reading::Text, |read| {
        let (kind, path, stamp, rec) = read;
        let fresh = run_rows::Fresh::FtsCleared { same_text: false };
        apply::apply(conn, kind, &path, rec, stamp, None, fresh)
    })
    .map(|_| ())
}

/// Starts `program --root ROOT index build-text`, detached: in a process
/// group of its own (a Ctrl-C of the command that started it does not stop
/// it), with no standard streams, outliving its parent.
fn spawn_builder(program: &std::path::Path, p: &Project) -> Result<()> {
    use std::os::unix::process::CommandExt as _;
    use std::process::{Command, Stdio};
    let started = Command::new(program)
        .arg("--root")
        .arg(p.root())
        .args(["index", "build-text"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn();
    match started {
        // Reaped by a thread of its own, so a long-lived face (the MCP and
        // web servers) keeps no zombie; a short one exits first.
        Ok(mut child) => {
            std::thread::spawn(move || child.wait());
            Ok(())
        }
        Err(e) => {
            p.notices.push(format!(
                "could not start {} to build the full-text index ({e}); the next command tries again",
                program.display()
            ));
            Ok(())
        }
    }
}
