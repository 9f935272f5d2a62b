//! Finding runs: by the discovery filters or full text, paged, counted or
//! streamed. Only verify-on-read's stat of each returned run reads the files.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use rusqlite::{OptionalExtension, params};

use crate::fulltext::{fts_query, snippet_of};
use crate::read::Reader;
use crate::write::apply::{Live, Stamp, manifest_stamp};
use crate::{Hit, Kind, Pending, control, path_str};
use crate::{read::text_page, upkeep::migrate, write::run_rows};
use logbook_model::error::Result;
use logbook_model::ids::RunId;
use logbook_model::query::{RunMatcher, RunQuery};
use logbook_model::run::{MANIFEST_FILE, Manifest, Run};
use logbook_store::run_outputs::outputs_stamp;

/// What turning a matching row into a [`Hit`] needs.
struct HitContext {
    /// The whole query's rule (for queries without text).
    matcher: RunMatcher,
    /// The query's rule without its text and paging: what a re-read run
    /// must still match.
    filters: RunMatcher,
    /// The FTS5 query, for text queries.
    text: Option<String>,
    /// The user's words, for snippets.
    words: Option<String>,
}

/// How many times a query is re-run after re-reading runs it returned
/// whose files changed under it.
const VERIFY_ROUNDS: usize = 3;

impl Reader<'_> {
    /// Runs matching `query`, newest `started_at` first (ties by id), text
    /// queries too, paged by `limit`/`offset`. Never reads
    /// the run folders. The same filters as the scan (`ops::query::Scope::Files`), except that
    /// `text` is a full-text search (words, output file contents included)
    /// rather than a substring test.
    ///
    /// Every run returned is verified against its file first (see
    /// `Reader::verified`), so an edit made in place by another tool is
    /// never answered from the old record.
    pub fn find_runs(&self, query: &RunQuery) -> Result<Vec<Hit>> {
        // Outside the read transaction `verified` holds: it may write.
        self.refresh_running_for_page(query)?;
        let text = query.text.is_some();
        if text {
            self.note_partial_text()?;
        }
        self.verified(|| self.query_runs(query), |h| &h.run.folder, text)
    }

    /// Verify-on-read: runs `query`, stats the manifest of every run it
    /// returned and compares size and mtime (ns) with the stamp the index
    /// stored; any that differ (or are gone) are re-read into the index
    /// under the run's lock, exactly as a logbook write would, and the query
    /// runs again, at most [`VERIFY_ROUNDS`] times. The cost is one stat per
    /// returned run, O(page size), never O(runs).
    ///
    /// With `outputs` (text queries, whose answer depends on the output
    /// files' words), the stamp of each returned run's registered output
    /// files is compared too: one more `lstat` per output of the page.
    ///
    /// A run the query did *not* return may newly match after an in-place
    /// edit (no rename, so no directory mtime moves): runs indexed as
    /// running are checked before the filter decides
    /// (`Reader::refresh_running`), folders without a manifest and invalid
    /// manifests before every listing (`Reader::refresh_unsettled`). The gap
    /// that remains, by design: such an edit of a *finished* run is only
    /// seen at the next `index sync`. Closing it would mean a stat of every
    /// manifest on every query, the very cost the index exists to avoid.
    pub(crate) fn verified<T>(
        &self,
        query: impl Fn() -> Result<Vec<T>>,
        folder: impl Fn(&T) -> &Path,
        outputs: bool,
    ) -> Result<Vec<T>> {
        for _ in 0..VERIFY_ROUNDS {
            let (rows, stale) = self.in_one_read(|| {
                let rows = query()?;
                let mut stale = vec![];
                for row in &rows {
                    let folder = folder(row);
                    if self.is_stale(folder, outputs)? {
                        stale.push(folder.to_path_buf());
                    }
                }
                Ok((rows, stale))
            })?;
            if stale.is_empty() {
                return Ok(rows);
            }
            self.reindex_runs(&stale)?;
        }
        // A file rewritten on every round: answer from the latest re-read.
        query()
    }

    /// Runs `read` in one read transaction: each statement on its own took
    /// and released the file's shared lock and WAL read mark (two `fcntl`s
    /// and a look at the WAL index), a page's twenty stamp checks forty
    /// times. Inside a transaction already, `read` just runs.
    pub(crate) fn in_one_read<T>(&self, read: impl FnOnce() -> Result<T>) -> Result<T> {
        if !self.index.conn.is_autocommit() {
            return read();
        }
        control(&self.index.conn, "BEGIN").map_err(self.index.err())?;
        let out = read();
        // Ending a read-only transaction cannot lose anything; whichever
        // way it ends, the connection is left out of it.
        if control(&self.index.conn, "COMMIT").is_err() {
            let _ = control(&self.index.conn, "ROLLBACK");
        }
        out
    }

    /// Whether a run's manifest (and, with `outputs`, its registered output
    /// files) differs from the stamp the index stored.
    fn is_stale(&self, folder: &Path, outputs: bool) -> Result<bool> {
        let path = folder.join(MANIFEST_FILE);
        let stored: Option<(i64, i64, i64)> = self
            .index
            .conn
            .prepare_cached("SELECT size, mtime_ns, out_stamp FROM files WHERE path = ?1")
            .map_err(self.index.err())?
            .query_row([path_str(&path)], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .optional()
            .map_err(self.index.err())?;
        let Some((size, mtime, out_stamp)) = stored else {
            return Ok(true);
        };
        if manifest_stamp(&path) != Some((size, mtime)) {
            return Ok(true);
        }
        if !outputs {
            return Ok(false);
        }
        let files: Vec<String> = self
            .index
            .conn
            .prepare_cached(
                "SELECT o.file FROM outputs o JOIN runs r ON r.rid = o.rid \
                 WHERE r.folder = ?1 ORDER BY o.seq",
            )
            .map_err(self.index.err())?
            .query_map([path_str(folder)], |r| r.get(0))
            .map_err(self.index.err())?
            .collect::<rusqlite::Result<_>>()
            .map_err(self.index.err())?;
        Ok(outputs_stamp(folder, files.iter().map(String::as_str)) != out_stamp)
    }

    /// Brings up to date the rows another tool may write or repair at any
    /// time, while no folder's mtime moves: run folders indexed without a
    /// manifest, and manifests indexed as invalid (so the count of skipped
    /// manifests every listing reports is true). One `stat` each; only
    /// those whose stamp moved are re-read.
    pub(crate) fn refresh_unsettled(&self) -> Result<()> {
        self.refresh_live(Live::Unsettled).map(|_| ())
    }

    /// Before a status, time or text filter of `query` decides, brings up
    /// to date the runs indexed as running too: their engine finishes them
    /// by rewriting the manifest in place, which no folder's mtime shows. A
    /// re-read refreshes the row, never drops the run. Finished runs are
    /// left to verify-on-read and `index sync`: a `stat` of each is the
    /// cost the index exists to avoid. (A query for running runs needs no
    /// check: what it returns is verified, and a run that stopped running
    /// drops out then.)
    ///
    /// `from`: only the running runs that start at or after it (a page's
    /// oldest run). Returns whether any run was re-read.
    fn refresh_running(&self, query: &RunQuery, from: Option<jiff::Timestamp>) -> Result<bool> {
        if !running_decides(query) {
            return Ok(false);
        }
        let narrowed = query.agent.is_some()
            || query.workflow.is_some()
            || query.user.is_some()
            || query.tag.is_some();
        if !narrowed && from.is_none() {
            return self.refresh_live(Live::Running);
        }
        // Only the running runs the query's other filters select, from
        // `from` on: fewer rows, each found through `runs` (a lookup more
        // per run than the partial index of every live run needs).
        let candidates = RunQuery {
            status: Some("running".into()),
            since: from,
            text: None,
            limit: None,
            offset: 0,
            ..query.clone()
        };
        let Some(((page, args), _)) = self.page_sql(&candidates)? else {
            return Ok(false);
        };
        let sql = format!(
            "SELECT f.path, f.size, f.mtime_ns FROM runs r \
             JOIN files f ON f.path = r.folder || '/manifest.json' WHERE r.rid IN ({page})"
        );
        let args: Vec<&dyn rusqlite::ToSql> =
            args.iter().map(|a| a as &dyn rusqlite::ToSql).collect();
        let rows = self.stamped(&sql, &args)?;
        self.reread_moved(rows)
    }

    /// [`Reader::refresh_running`] for a page of `query`: only a running run
    /// that starts no earlier than the page's oldest run can enter it (or
    /// push a run off it), so those are the ones checked, and again from
    /// the new page's oldest if one changed. At a million runs with a
    /// tenth running, checking every one was most of a text query's time.
    /// A running run whose start is rewritten in place to a later one is
    /// seen by the page that holds its old start, or by `index sync`.
    fn refresh_running_for_page(&self, query: &RunQuery) -> Result<()> {
        let Some(limit) = query.limit.filter(|_| running_decides(query)) else {
            return self.refresh_running(query, None).map(|_| ());
        };
        for _ in 0..VERIFY_ROUNDS {
            let oldest = match self.matching_rids(query)? {
                Some((rids, _)) if rids.len() >= limit => rids.last().copied(),
                _ => None,
            };
            let from = match oldest {
                Some(rid) => self.start_of(rid)?,
                None => None,
            };
            let Some(from) = from else {
                break;
            };
            if !self.refresh_running(query, Some(from))? {
                return Ok(());
            }
        }
        self.refresh_running(query, None).map(|_| ())
    }

    /// The start of the run stored under `rid`, if it has one.
    fn start_of(&self, rid: i64) -> Result<Option<jiff::Timestamp>> {
        let ns = run_rows::stored_start(&self.index.conn, rid).map_err(self.index.err())?;
        Ok(ns
            .flatten()
            .and_then(|ns| jiff::Timestamp::from_nanosecond(ns.into()).ok()))
    }

    /// Re-reads the run manifests marked `from` or more live (see
    /// [`Live`]) whose stamp moved: one range of a small partial index,
    /// then one `stat` each.
    ///
    /// While an upgrade's marks are incomplete (`migrate::live_pending`),
    /// the same runs are found by their status through `runs_status`, and
    /// the manifests that did not parse through `corrupt`.
    fn refresh_live(&self, from: Live) -> Result<bool> {
        let pending = migrate::live_pending(&self.index.conn).map_err(self.index.err())?;
        let sql = match pending {
            false => "SELECT path, size, mtime_ns FROM files WHERE live > 0 AND live >= ?1",
            true => {
                "SELECT f.path, f.size, f.mtime_ns FROM runs r \
                 JOIN files f ON f.path = r.folder || '/manifest.json' \
                 WHERE r.status IN ('unknown', CASE WHEN ?1 <= 1 THEN 'running' END) \
                 UNION SELECT f.path, f.size, f.mtime_ns FROM corrupt c \
                 JOIN files f ON f.path = c.path WHERE c.kind = 'run'"
            }
        };
        let rows = self.stamped(sql, &[&(from as i64)])?;
        self.reread_moved(rows)
    }

    /// The manifest paths `sql` selects with the stamps the index stored
    /// (`None` when it stored none).
    fn stamped(
        &self,
        sql: &str,
        args: &[&dyn rusqlite::ToSql],
    ) -> Result<Vec<(String, Option<Stamp>)>> {
        let mut stmt = self
            .index
            .conn
            .prepare_cached(sql)
            .map_err(self.index.err())?;
        let rows = stmt
            .query_map(args, |r| {
                let stamp = match (r.get::<_, Option<i64>>(1)?, r.get::<_, Option<i64>>(2)?) {
                    (Some(size), Some(mtime)) => Some((size, mtime)),
                    _ => None,
                };
                Ok((r.get::<_, String>(0)?, stamp))
            })
            .map_err(self.index.err())?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(self.index.err())
    }

    /// Re-reads the runs whose manifest's stamp is no longer the one
    /// stored.
    fn reread_moved(&self, rows: Vec<(String, Option<Stamp>)>) -> Result<bool> {
        let moved_of = |rows: &[(String, Option<Stamp>)]| -> Vec<PathBuf> {
            rows.iter()
                .filter(|(path, stored)| manifest_stamp(Path::new(path)) != *stored)
                .filter_map(|(path, _)| Path::new(path).parent().map(Path::to_path_buf))
                .collect()
        };
        // The `stat`s on every core, when there are enough to share (asked
        // only then: the answer reads the cgroup's files each time).
        let workers = || {
            std::thread::available_parallelism()
                .map_or(2, |n| n.get())
                .clamp(1, 8)
        };
        let moved: Vec<PathBuf> = if let Some(stamps) = &self.index.project.stamps {
            // A long-lived server's watch: a `stat` only where a folder changed.
            let files: Vec<&Path> = rows.iter().map(|(path, _)| Path::new(path)).collect();
            let now = stamps.stamps(&files, &manifest_stamp);
            rows.iter()
                .zip(now)
                .filter(|((_, stored), now)| now != stored)
                .filter_map(|((path, _), _)| Path::new(path).parent().map(Path::to_path_buf))
                .collect()
        } else if rows.len() < 256 || workers() == 1 {
            moved_of(&rows)
        } else {
            std::thread::scope(|s| {
                let parts: Vec<_> = rows
                    .chunks(rows.len().div_ceil(workers()))
                    .map(|part| s.spawn(move || moved_of(part)))
                    .collect();
                parts
                    .into_iter()
                    .flat_map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                    .collect()
            })
        };
        if moved.is_empty() {
            return Ok(false);
        }
        self.reindex_runs(&moved).map(|()| true)
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
            // A folder that is not a run id cannot be locked by name; it is
            // recorded as corrupt, which needs no lock.
            let (lock, _guard) = match RunId::parse(&id) {
                Ok(id) => (
                    id.lock_name(),
                    Some(self.index.project.locks.exclusive(&id.lock_name())?),
                ),
                Err(_) => (String::new(), None),
            };
            self.index.reread(&[Pending {
                kind: Kind::Run,
                path: folder.join(MANIFEST_FILE),
                lock,
            }])?;
        }
        Ok(())
    }

    /// How many runs match `query`'s filters, paging aside (the SQL is
    /// exact for every filter, as in [`Reader::find_runs`]).
    pub fn count_runs(&self, query: &RunQuery) -> Result<u64> {
        self.count_runs_upto(query, None)
    }

    /// [`Reader::count_runs`], stopping at `cap` matches when given: a
    /// page a person waits on says "1,000+" rather than counting every run
    /// a common word is in.
    ///
    /// A count follows the listing of its page ([`Reader::find_runs`] or
    /// [`Reader::each_run`] with the same query), which already brought the
    /// running runs up to date: checking them again would `stat` each a
    /// second time per page.
    pub fn count_runs_upto(&self, query: &RunQuery, cap: Option<u64>) -> Result<u64> {
        query.matcher()?;
        let fts = query
            .text
            .as_deref()
            .map(fts_query)
            .filter(|q| !q.is_empty());
        if let (Some(cap), Some(fts)) = (cap, &fts) {
            return self.text_count_upto(query, fts, cap);
        }
        self.count_sql_upto(query, cap)
    }

    /// [`Reader::count_runs_upto`] by one SQL statement.
    pub(crate) fn count_sql_upto(&self, query: &RunQuery, cap: Option<u64>) -> Result<u64> {
        let Some((sql, args)) = self.count_sql(query, cap)? else {
            return Ok(0);
        };
        self.index
            .conn
            .prepare_cached(&sql)
            .map_err(self.index.err())?
            .query_row(rusqlite::params_from_iter(args.iter()), |r| {
                r.get::<_, i64>(0)
            })
            .map(|n| n.max(0) as u64)
            .map_err(self.index.err())
    }

    fn query_runs(&self, query: &RunQuery) -> Result<Vec<Hit>> {
        let Some((rids, ctx)) = self.matching_rids(query)? else {
            return Ok(vec![]);
        };
        let mut out = vec![];
        for rid in rids {
            if let Some(hit) = self.hit_of(rid, &ctx)? {
                out.push(hit);
            }
        }
        Ok(out)
    }

    /// Runs matching `query` in `find`'s order, handed to `each` one at a
    /// time as they are read, so memory does not grow with the number of
    /// results: only the matching row ids (8 bytes a run) are held, and the
    /// manifests are read a chunk at a time. Each run is verified against
    /// its file first, as [`Reader::find_runs`] does; a run re-read because
    /// it changed is handed over only if it still matches. `each` returns
    /// `Break` to stop early. Returns how many runs were handed over.
    pub fn each_run(
        &self,
        query: &RunQuery,
        each: &mut dyn FnMut(Hit) -> ControlFlow<()>,
    ) -> Result<usize> {
        /// Runs verified together: one round of re-reads per chunk.
        const CHUNK: usize = 256;
        self.refresh_running_for_page(query)?;
        if query.text.is_some() {
            self.note_partial_text()?;
        }
        let Some((rids, ctx)) = self.matching_rids(query)? else {
            return Ok(0);
        };
        let mut shown = 0;
        for chunk in rids.chunks(CHUNK) {
            let mut hits = Vec::with_capacity(chunk.len());
            for &rid in chunk {
                if let Some(hit) = self.hit_of(rid, &ctx)? {
                    hits.push(hit);
                }
            }
            let mut stale = vec![];
            for (i, hit) in hits.iter().enumerate() {
                if self.is_stale(&hit.run.folder, ctx.text.is_some())? {
                    stale.push(i);
                }
            }
            if !stale.is_empty() {
                let folders: Vec<PathBuf> =
                    stale.iter().map(|&i| hits[i].run.folder.clone()).collect();
                self.reindex_runs(&folders)?;
            }
            let mut stale = stale.into_iter().peekable();
            for (i, hit) in hits.into_iter().enumerate() {
                let hit = if stale.next_if_eq(&i).is_some() {
                    match self.reread_hit(&hit.run.folder, &ctx)? {
                        Some(h) => h,
                        None => continue,
                    }
                } else {
                    hit
                };
                shown += 1;
                if each(hit).is_break() {
                    return Ok(shown);
                }
            }
        }
        Ok(shown)
    }

    /// A run just re-read into the index, if it still matches the query.
    fn reread_hit(&self, folder: &Path, ctx: &HitContext) -> Result<Option<Hit>> {
        let rid: Option<i64> = self
            .index
            .conn
            .prepare_cached("SELECT rid FROM runs WHERE folder = ?1")
            .map_err(self.index.err())?
            .query_row([path_str(folder)], |r| r.get(0))
            .optional()
            .map_err(self.index.err())?;
        let Some(rid) = rid else { return Ok(None) };
        let Some(hit) = self.hit_of(rid, ctx)? else {
            return Ok(None);
        };
        if let Some(q) = &ctx.text {
            let key = run_rows::stored_text_key(&self.index.conn, rid).map_err(self.index.err())?;
            let still: bool = self
                .index
                .conn
                .prepare_cached(text_page::PROBE)
                .map_err(self.index.err())?
                .query_row(params![q, key], |r| r.get(0))
                .map_err(self.index.err())?;
            if !still || !ctx.filters.matches(&hit.run.manifest) {
                return Ok(None);
            }
        }
        Ok(Some(hit))
    }

    /// The row ids of the runs matching `query`, in its order and page, and
    /// what turning each into a [`Hit`] needs; `None` when none can match.
    fn matching_rids(&self, query: &RunQuery) -> Result<Option<(Vec<i64>, HitContext)>> {
        // Validates the pattern and the paging exactly as the scan does.
        let matcher = query.matcher()?;
        let filters = RunQuery {
            text: None,
            limit: None,
            offset: 0,
            ..query.clone()
        }
        .matcher()?;
        let fts = query
            .text
            .as_deref()
            .map(fts_query)
            .filter(|q| !q.is_empty());
        let Some(rids) = self.page_of(query, fts.as_deref())? else {
            return Ok(None);
        };
        Ok(Some((
            rids,
            HitContext {
                matcher,
                filters,
                text: fts,
                words: query.text.clone(),
            },
        )))
    }

    /// The row ids of `query`'s page (`fts`: its text as an FTS5 query). A
    /// short page is kept for the connection until the database changes:
    /// the check of the running runs before a page makes the page first
    /// (see [`Reader::refresh_running_for_page`]), and the page is asked
    /// again once they are found unchanged.
    fn page_of(&self, query: &RunQuery, fts: Option<&str>) -> Result<Option<Vec<i64>>> {
        /// The longest page kept: a page of `find --json` over every run
        /// is not held twice.
        const KEPT: usize = 4096;
        let version = self.version()?;
        if let Some((seen, asked, rids)) = &self.index.conn.memo.borrow().page
            && *seen == version
            && asked == query
        {
            return Ok(Some(rids.clone()));
        }
        let rids = match fts {
            Some(fts) => self.text_page(query, fts)?,
            None => self.page_rids(query)?,
        };
        if let Some(rids) = rids.as_ref().filter(|r| r.len() <= KEPT) {
            self.index.conn.memo.borrow_mut().page = Some((version, query.clone(), rids.clone()));
        }
        Ok(rids)
    }

    /// The row ids of `query`'s page, by its SQL alone.
    pub(crate) fn page_rids(&self, query: &RunQuery) -> Result<Option<Vec<i64>>> {
        let Some(((sql, args), _)) = self.page_sql(query)? else {
            return Ok(None);
        };
        let mut stmt = self
            .index
            .conn
            .prepare_cached(&sql)
            .map_err(self.index.err())?;
        let rids = stmt
            .query_map(rusqlite::params_from_iter(args.iter()), |r| r.get(0))
            .map_err(self.index.err())?
            .collect::<std::result::Result<_, _>>()
            .map_err(self.index.err())?;
        Ok(Some(rids))
    }

    /// The run stored under `rid` as a [`Hit`], if it is there, parses, and
    /// (for queries without text) matches.
    fn hit_of(&self, rid: i64, ctx: &HitContext) -> Result<Option<Hit>> {
        let mut row_stmt = self
            .index
            .conn
            .prepare_cached("SELECT id, folder, manifest, started_at FROM runs WHERE rid = ?1")
            .map_err(self.index.err())?;
        let Some((id, folder, manifest, started_at)) = row_stmt
            .query_row([rid], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                ))
            })
            .optional()
            .map_err(self.index.err())?
        else {
            return Ok(None);
        };
        let Ok(id) = RunId::parse(&id) else {
            return Ok(None);
        };
        let folder = PathBuf::from(folder);
        let manifest = if manifest.is_empty() {
            // A run folder without a manifest (`logbook_store::run::without_manifest`).
            Manifest::absent(&id, &started_at)
        } else {
            match crate::write::record::stored_manifest(&folder, &manifest) {
                Some(m) => m,
                None => return Ok(None),
            }
        };
        let snippet = match &ctx.words {
            Some(words) if ctx.text.is_some() => {
                snippet_of(&self.index.conn, &manifest, &folder, words).map_err(self.index.err())?
            }
            _ => None,
        };
        // The SQL is exact for every filter but text; this keeps the one
        // definition of "matches" authoritative.
        if ctx.text.is_none() && !ctx.matcher.matches(&manifest) {
            return Ok(None);
        }
        Ok(Some(Hit {
            run: Run {
                id,
                folder,
                manifest,
            },
            snippet,
        }))
    }
}

/// Whether a status, time or text filter of `query` decides which runs it
/// answers, so that the runs indexed as running must be up to date first
/// (see `Reader::refresh_running`).
fn running_decides(query: &RunQuery) -> bool {
    query.since.is_some()
        || query.text.is_some()
        || query.status.as_deref().is_some_and(|s| s != "running")
}
