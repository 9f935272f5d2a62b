//! Queries: runs by the discovery filters or full text, latest outputs,
//! lineage edges, work session and transcript listings, health. None of them
//! reads the files, except verify-on-read's stat of each returned run.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rusqlite::{OptionalExtension, params};

use super::fulltext::{fts_query, outputs_stamp, snippet_of, snippet_of_text};
use super::{
    CorruptEntry, Hit, Index, Kind, Pending, Status, TranscriptHit, control, path_str, pool,
    stamp_of,
};
use crate::error::Result;
use crate::model::CorruptFile;
use crate::model::ids::RunId;
use crate::model::query::{RunMatcher, RunQuery, workflow_regex};
use crate::model::run::{MANIFEST_FILE, OutputRecord, Run};
use crate::model::transcript::Summary;
use crate::model::work_session::{Listing, WorkSession};

/// A statement's SQL and its arguments.
pub(super) type Sql = (String, Vec<rusqlite::types::Value>);

/// What a run filter's SQL is for.
#[derive(Clone, Copy)]
enum Purpose {
    /// A page in start order; `ranked`: by text rank first; `recent_only`:
    /// from the recent text matches gathered before.
    Page { ranked: bool, recent_only: bool },
    /// How many runs match.
    Count,
}

/// The SQL of a run query's filters, shared by the page and its count.
struct RunFilter {
    from: String,
    where_: String,
    args: Vec<rusqlite::types::Value>,
    text: Option<String>,
}

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

/// A text query matching at least one run in this many lists its
/// [`RECENT_MATCHES`] most recent matches, newest first (see
/// `Index::narrow_to_recent`).
const COMMON_SHARE: i64 = 8;

/// How many of a common word's most recent matches are ranked (a few in
/// unit tests, so that small projects take this path too).
const RECENT_MATCHES: usize = if cfg!(test) { 3 } else { 2000 };

/// A listing row of the `transcripts` table (columns path, id, kind,
/// workdir, started_at, last_active_at, tokens, parent).
fn summary_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Summary> {
    Ok(Summary {
        file: PathBuf::from(r.get::<_, String>(0)?),
        id: r.get(1)?,
        kind: if r.get::<_, String>(2)? == "subagent" {
            crate::model::transcript::Kind::Subagent
        } else {
            crate::model::transcript::Kind::Main
        },
        workdir: r.get(3)?,
        started_at: r.get(4)?,
        last_active_at: r.get(5)?,
        latest_total_tokens: r.get::<_, i64>(6)?.max(0) as u64,
        parent_session_id: r.get(7)?,
    })
}

/// How many times a query is re-run after re-reading runs it returned
/// whose files changed under it.
const VERIFY_ROUNDS: usize = 3;

impl Index {
    /// Runs matching `query`, newest `started_at` first (ties by id), or by
    /// relevance for a text query, paged by `limit`/`offset`. Never reads
    /// the run folders. The same filters as the scan (`ops::run::find_scan`), except that
    /// `text` is a full-text search (words, output file contents included)
    /// rather than a substring test.
    ///
    /// Every run returned is verified against its file first (see
    /// `Index::verified`), so an edit made in place by another tool is
    /// never answered from the old record.
    pub fn find_runs(&self, query: &RunQuery) -> Result<Vec<Hit>> {
        let text = query.text.is_some();
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
    /// The gap that remains, by design: an in-place edit (no rename, so no
    /// directory mtime moves) that makes a run the query did *not* return
    /// newly match is only seen at the next `index sync`, or when that run's
    /// folder set changes. Closing it would mean a stat of every manifest
    /// on every query, the very cost the index exists to avoid.
    fn verified<T>(
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
    pub(super) fn in_one_read<T>(&self, read: impl FnOnce() -> Result<T>) -> Result<T> {
        if !self.conn.is_autocommit() {
            return read();
        }
        control(&self.conn, "BEGIN").map_err(self.err())?;
        let out = read();
        // Ending a read-only transaction cannot lose anything; whichever
        // way it ends, the connection is left out of it.
        if control(&self.conn, "COMMIT").is_err() {
            let _ = control(&self.conn, "ROLLBACK");
        }
        out
    }

    /// Whether a run's manifest (and, with `outputs`, its registered output
    /// files) differs from the stamp the index stored.
    fn is_stale(&self, folder: &Path, outputs: bool) -> Result<bool> {
        let path = folder.join(MANIFEST_FILE);
        let stored: Option<(i64, i64, i64)> = self
            .conn
            .prepare_cached("SELECT size, mtime_ns, out_stamp FROM files WHERE path = ?1")
            .map_err(self.err())?
            .query_row([path_str(&path)], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .optional()
            .map_err(self.err())?;
        let (m, (size, mtime, out_stamp)) = match (std::fs::metadata(&path), stored) {
            (Ok(m), Some(stored)) => (m, stored),
            _ => return Ok(true),
        };
        if m.len() as i64 != size || stamp_of(&m) != mtime {
            return Ok(true);
        }
        if !outputs {
            return Ok(false);
        }
        let files: Vec<String> = self
            .conn
            .prepare_cached(
                "SELECT o.file FROM outputs o JOIN runs r ON r.rid = o.rid \
                 WHERE r.folder = ?1 ORDER BY o.seq",
            )
            .map_err(self.err())?
            .query_map([path_str(folder)], |r| r.get(0))
            .map_err(self.err())?
            .collect::<rusqlite::Result<_>>()
            .map_err(self.err())?;
        Ok(outputs_stamp(folder, files.iter().map(String::as_str)) != out_stamp)
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
                    Some(self.project.locks.exclusive(&id.lock_name())?),
                ),
                Err(_) => (String::new(), None),
            };
            self.reread(&[Pending {
                kind: Kind::Run,
                path: folder.join(MANIFEST_FILE),
                lock,
            }])?;
        }
        Ok(())
    }

    /// The FROM clause, WHERE terms and arguments of `query`'s filters
    /// (paging aside); `None` when no run can match.
    fn run_filter(&self, query: &RunQuery, purpose: Purpose) -> Result<Option<RunFilter>> {
        let (ranked, recent_only) = match purpose {
            Purpose::Page {
                ranked,
                recent_only,
            } => (ranked, recent_only),
            Purpose::Count => (false, false),
        };
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
        let from = if text.is_some() && recent_only {
            // `temp.recent_matches` holds matches only, gathered from the
            // same MATCH just before: asking FTS5 again would open one
            // cursor per listed rowid (it answers a rowid list one rowid at
            // a time), most of a common word's page.
            "temp.recent_matches f JOIN runs r ON r.rid = f.rid".to_string()
        } else if let Some(q) = &text {
            let n = arg(q.clone().into(), &mut args);
            // The FTS table answers the MATCH and its bm25 rank alone; only
            // rowids and ranks flow into the join and the sort. A count asks
            // for no rank: bm25 would score every match only to be dropped.
            let rank = if ranked { ", rank AS frank" } else { "" };
            format!(
                "(SELECT rowid AS frid{rank} FROM runs_fts WHERE runs_fts MATCH {n}) f \
                 JOIN runs r ON r.rid = f.frid"
            )
        } else {
            "runs r".to_string()
        };
        if let Some(a) = &query.agent {
            let n = arg(a.clone().into(), &mut args);
            where_.push(match purpose {
                // Written as `runs_tally`'s key, which only a count can
                // use: an index SQLite may pick for a page would make it
                // sort every match instead of walking one in start order.
                Purpose::Count => format!("(r.agent || '') = {n}"),
                Purpose::Page { .. } => format!("r.agent = {n}"),
            });
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
            let re = workflow_regex(w).ok();
            let matching: Vec<String> = self
                .workflow_names()?
                .iter()
                .filter(|name| *name == w || re.as_ref().is_some_and(|re| re.is_match(name)))
                .cloned()
                .collect();
            if matching.is_empty() {
                return Ok(None);
            }
            let list: Vec<String> = matching
                .into_iter()
                .map(|w| arg(w.into(), &mut args))
                .collect();
            where_.push(format!("r.workflow IN ({})", list.join(",")));
        }
        Ok(Some(RunFilter {
            from,
            where_: where_.join(" AND "),
            args,
            text,
        }))
    }

    /// Every agent that has runs, with how many, by name: the viewer's
    /// agent filter (read from the `runs_agent` index alone).
    pub fn agents(&self) -> Result<Vec<(String, u64)>> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT agent, count(*) FROM runs GROUP BY agent ORDER BY agent")
            .map_err(self.err())?;
        stmt.query_map([], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?.max(0) as u64))
        })
        .map_err(self.err())?
        .collect::<std::result::Result<_, _>>()
        .map_err(self.err())
    }

    /// How many runs match `query`'s filters, paging aside (the SQL is
    /// exact for every filter, as in [`Index::find_runs`]).
    pub fn count_runs(&self, query: &RunQuery) -> Result<u64> {
        self.count_runs_upto(query, None)
    }

    /// [`Index::count_runs`], stopping at `cap` matches when given: a
    /// page a person waits on says "1,000+" rather than counting every run
    /// a common word is in.
    pub fn count_runs_upto(&self, query: &RunQuery, cap: Option<u64>) -> Result<u64> {
        query.matcher()?;
        let Some((sql, args)) = self.count_sql(query, cap)? else {
            return Ok(0);
        };
        self.conn
            .prepare_cached(&sql)
            .map_err(self.err())?
            .query_row(rusqlite::params_from_iter(args.iter()), |r| {
                r.get::<_, i64>(0)
            })
            .map(|n| n.max(0) as u64)
            .map_err(self.err())
    }

    /// The SQL and arguments of [`Index::count_runs_upto`]; `None` when no
    /// run can match.
    pub(super) fn count_sql(&self, query: &RunQuery, cap: Option<u64>) -> Result<Option<Sql>> {
        let Some(f) = self.run_filter(query, Purpose::Count)? else {
            return Ok(None);
        };
        let sql = match cap {
            Some(cap) => format!(
                "SELECT count(*) FROM (SELECT 1 FROM {} WHERE {} LIMIT {})",
                f.from,
                f.where_,
                i64::try_from(cap).unwrap_or(i64::MAX)
            ),
            None => format!("SELECT count(*) FROM {} WHERE {}", f.from, f.where_),
        };
        Ok(Some((sql, f.args)))
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
    /// its file first, as [`Index::find_runs`] does; a run re-read because
    /// it changed is handed over only if it still matches. `each` returns
    /// `Break` to stop early. Returns how many runs were handed over.
    pub fn each_run(
        &self,
        query: &RunQuery,
        each: &mut dyn FnMut(Hit) -> ControlFlow<()>,
    ) -> Result<usize> {
        /// Runs verified together: one round of re-reads per chunk.
        const CHUNK: usize = 256;
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
            .conn
            .prepare_cached("SELECT rid FROM runs WHERE folder = ?1")
            .map_err(self.err())?
            .query_row([path_str(folder)], |r| r.get(0))
            .optional()
            .map_err(self.err())?;
        let Some(rid) = rid else { return Ok(None) };
        let Some(hit) = self.hit_of(rid, ctx)? else {
            return Ok(None);
        };
        if let Some(q) = &ctx.text {
            let still: bool = self
                .conn
                .prepare_cached(
                    "SELECT EXISTS (SELECT 1 FROM runs_fts WHERE runs_fts MATCH ?1 AND rowid = ?2)",
                )
                .map_err(self.err())?
                .query_row(params![q, rid], |r| r.get(0))
                .map_err(self.err())?;
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
        // A word in a large share of the runs: its most recent matches,
        // newest first (see `narrow_to_recent`), unless that leaves the page
        // short, when every match is ranked after all.
        let page = query.limit.map(|l| l.saturating_add(query.offset));
        let fts = query
            .text
            .as_deref()
            .map(fts_query)
            .filter(|q| !q.is_empty());
        let narrowed = match (&fts, page) {
            (Some(q), Some(page)) if page <= RECENT_MATCHES => self.narrow_to_recent(q)?,
            _ => false,
        };
        let Some((mut rids, text)) = self.page_rids(query, narrowed)? else {
            return Ok(None);
        };
        if narrowed && rids.len() < query.limit.unwrap_or(0) {
            rids = self.page_rids(query, false)?.map_or(vec![], |(r, _)| r);
        }
        Ok(Some((
            rids,
            HitContext {
                matcher,
                filters,
                text,
                words: query.text.clone(),
            },
        )))
    }

    /// The row ids of `query`'s page, and its FTS5 query; with
    /// `recent_only`, text matches among `temp.recent_matches` only.
    fn page_rids(
        &self,
        query: &RunQuery,
        recent_only: bool,
    ) -> Result<Option<(Vec<i64>, Option<String>)>> {
        let Some(((sql, args), text)) = self.page_sql(query, recent_only)? else {
            return Ok(None);
        };
        let mut stmt = self.conn.prepare_cached(&sql).map_err(self.err())?;
        let rids = stmt
            .query_map(rusqlite::params_from_iter(args.iter()), |r| r.get(0))
            .map_err(self.err())?
            .collect::<std::result::Result<_, _>>()
            .map_err(self.err())?;
        Ok(Some((rids, text)))
    }

    /// The SQL and arguments of [`Index::page_rids`], and its FTS5 query.
    pub(super) fn page_sql(
        &self,
        query: &RunQuery,
        recent_only: bool,
    ) -> Result<Option<(Sql, Option<String>)>> {
        let Some(RunFilter {
            from,
            where_,
            mut args,
            text,
        }) = self.run_filter(
            query,
            Purpose::Page {
                ranked: !recent_only,
                recent_only,
            },
        )?
        else {
            return Ok(None);
        };
        let arg = |v: rusqlite::types::Value, args: &mut Vec<rusqlite::types::Value>| {
            args.push(v);
            format!("?{}", args.len())
        };
        // A common word's recent matches are listed newest first, unscored:
        // FTS5 answers a rowid list one rowid at a time, and bm25 would
        // count the word's whole doclist again for each (its IDF is per
        // cursor), so scoring them cost more than scoring every match.
        let order = if text.is_some() && !recent_only {
            "f.frank, r.started_ns DESC, r.id"
        } else {
            "r.started_ns DESC, r.id"
        };
        // `matcher()` refused values beyond i64 (SQLite's integers), so
        // these conversions never wrap.
        let l = arg(
            query
                .limit
                .map_or(-1, |l| i64::try_from(l).unwrap_or(i64::MAX))
                .into(),
            &mut args,
        );
        let o = arg(
            i64::try_from(query.offset).unwrap_or(i64::MAX).into(),
            &mut args,
        );
        // Two steps: the page's rowids first (from the indexes alone when
        // they cover the filters), then only those rows' manifests, so the
        // sort never carries manifests and memory is the page's, not the
        // number of runs'.
        let sql = format!(
            "SELECT r.rid FROM {from} WHERE {where_} ORDER BY {order} LIMIT {l} OFFSET {o}"
        );
        Ok(Some(((sql, args), text)))
    }

    /// For an FTS5 query matching a large share of the runs (at least one
    /// in [`COMMON_SHARE`]), fills `temp.recent_matches` with the row ids
    /// of its [`RECENT_MATCHES`] most recently started matches and returns
    /// true; otherwise false, and the query ranks every match.
    ///
    /// The matches' rowids are read once from the doclist into a sorted
    /// list, and the runs walked newest first (the `runs_started` index, in
    /// the page's own order) are looked up in it. SQLite's `IN` set over the
    /// doclist cost an in-memory B-tree insert per match, most of a common
    /// word's page; a probe of the FTS index per run instead opened a
    /// cursor per run, which cost more still.
    ///
    /// Why: bm25 must score every match before the best page is known, so
    /// a word in every run costs time in proportion to the runs; and for a
    /// word in so many runs bm25's weight (its IDF) is small anyway, so
    /// recency is the better order. With a share of at least 1 in
    /// [`COMMON_SHARE`], the walk newest first stops after about
    /// `COMMON_SHARE × RECENT_MATCHES` runs whatever their number (reading
    /// the matches' rowids is one pass over the word's doclist, with no
    /// bm25), and the same pass counts the matches, to tell whether the
    /// share is that large. The temporary table lives in memory, never in
    /// the index file.
    fn narrow_to_recent(&self, fts: &str) -> Result<bool> {
        let runs: i64 = self
            .conn
            .prepare_cached("SELECT coalesce(max(rid), 0) FROM runs")
            .and_then(|mut st| st.query_row([], |r| r.get(0)))
            .map_err(self.err())?;
        let enough = runs / COMMON_SHARE;
        if enough < 4 * RECENT_MATCHES as i64 {
            // Few runs: ranking every match is cheap.
            return Ok(false);
        }
        // One walk of the doclist, in rowid order (FTS5's own), both
        // counts the matches and keeps their rowids, already sorted.
        let mut matches: Vec<i64> = vec![];
        {
            let mut st = self
                .conn
                .prepare_cached("SELECT rowid FROM runs_fts WHERE runs_fts MATCH ?1")
                .map_err(self.err())?;
            let mut rows = st.query([fts]).map_err(self.err())?;
            while let Some(row) = rows.next().map_err(self.err())? {
                matches.push(row.get(0).map_err(self.err())?);
            }
        }
        if (matches.len() as i64) < enough {
            return Ok(false);
        }
        // FTS5 lists rowids ascending; sorting again costs nothing then and
        // keeps the binary search right whatever it did.
        matches.sort_unstable();
        // The runs newest first, in exactly the order the page lists them,
        // kept when they match: about COMMON_SHARE × RECENT_MATCHES steps.
        let mut recent: Vec<i64> = Vec::with_capacity(RECENT_MATCHES);
        {
            let mut st = self
                .conn
                .prepare_cached("SELECT rid FROM runs ORDER BY started_ns DESC, id")
                .map_err(self.err())?;
            let mut rows = st.query([]).map_err(self.err())?;
            while recent.len() < RECENT_MATCHES
                && let Some(row) = rows.next().map_err(self.err())?
            {
                let rid: i64 = row.get(0).map_err(self.err())?;
                if matches.binary_search(&rid).is_ok() {
                    recent.push(rid);
                }
            }
        }
        self.conn
            .execute_batch(
                "CREATE TEMP TABLE IF NOT EXISTS recent_matches(rid INTEGER PRIMARY KEY); \
                 DELETE FROM temp.recent_matches;",
            )
            .map_err(self.err())?;
        // One transaction of the temporary database (the index file is not
        // written): one commit rather than one per row.
        self.conn
            .execute_batch("SAVEPOINT recent")
            .map_err(self.err())?;
        let filled = (|| -> rusqlite::Result<()> {
            let mut ins = self
                .conn
                .prepare_cached("INSERT INTO temp.recent_matches(rid) VALUES (?1)")?;
            for rid in &recent {
                ins.execute([rid])?;
            }
            Ok(())
        })();
        let end = if filled.is_ok() {
            "RELEASE recent"
        } else {
            "ROLLBACK TO recent; RELEASE recent"
        };
        self.conn.execute_batch(end).map_err(self.err())?;
        filled.map_err(self.err())?;
        Ok(true)
    }

    /// The run stored under `rid` as a [`Hit`], if it is there, parses, and
    /// (for queries without text) matches.
    fn hit_of(&self, rid: i64, ctx: &HitContext) -> Result<Option<Hit>> {
        let mut row_stmt = self
            .conn
            .prepare_cached("SELECT id, folder, manifest FROM runs WHERE rid = ?1")
            .map_err(self.err())?;
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
            return Ok(None);
        };
        let Ok(manifest) = serde_json::from_str::<crate::model::run::Manifest>(&manifest) else {
            return Ok(None);
        };
        let folder = PathBuf::from(folder);
        let snippet = match &ctx.words {
            Some(words) if ctx.text.is_some() => {
                snippet_of(&self.conn, &manifest, &folder, words).map_err(self.err())?
            }
            _ => None,
        };
        // The SQL is exact for every filter but text; this keeps the one
        // definition of "matches" authoritative.
        if ctx.text.is_none() && !ctx.matcher.matches(&manifest) {
            return Ok(None);
        }
        let Ok(id) = RunId::parse(&id) else {
            return Ok(None);
        };
        Ok(Some(Hit {
            run: Run {
                id,
                folder,
                manifest,
            },
            snippet,
        }))
    }

    /// The distinct workflow names, by hopping through the workflow index
    /// (one seek per name) rather than reading every row.
    fn workflow_names(&self) -> Result<Arc<[String]>> {
        // Read once per version of the database: a page and its count both
        // ask, call after call, and there are a few hundred names to hop.
        let version = self.version()?;
        if let Some((seen, names)) = &self.conn.memo.borrow().workflow_names
            && *seen == version
        {
            return Ok(names.clone());
        }
        let names: Arc<[String]> = self.read_workflow_names()?.into();
        self.conn.memo.borrow_mut().workflow_names = Some((version, names.clone()));
        Ok(names)
    }

    /// The database's version as this connection sees it now (what a
    /// [`pool::Memo`] entry is kept with).
    fn version(&self) -> Result<pool::Version> {
        let data_version: i64 = self
            .conn
            .prepare_cached("PRAGMA data_version")
            .map_err(self.err())?
            .query_row([], |r| r.get(0))
            .map_err(self.err())?;
        Ok((data_version, self.conn.total_changes()))
    }

    fn read_workflow_names(&self) -> Result<Vec<String>> {
        // One statement (one read transaction) hopping from each name to
        // the next through the index, rather than a statement per name.
        let mut stmt = self
            .conn
            .prepare_cached(
                "WITH RECURSIVE w(name) AS ( \
                   SELECT min(workflow) FROM runs \
                   UNION ALL \
                   SELECT (SELECT min(workflow) FROM runs WHERE workflow > w.name) FROM w \
                   WHERE w.name IS NOT NULL) \
                 SELECT name FROM w WHERE name IS NOT NULL",
            )
            .map_err(self.err())?;
        stmt.query_map([], |r| r.get::<_, String>(0))
            .map_err(self.err())?
            .collect::<rusqlite::Result<Vec<String>>>()
            .map_err(self.err())
    }

    /// the scan's latest output from the index: the newest run of `agent`
    /// (workflow matching) having an output of `output_type`, and its last
    /// such output.
    pub fn latest_output(
        &self,
        agent: &str,
        workflow: Option<&str>,
        output_type: Option<&str>,
    ) -> Result<Option<(Run, OutputRecord, PathBuf)>> {
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
                false,
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
                id: RunId::parse(&id).ok()?,
                folder: PathBuf::from(folder),
                manifest: serde_json::from_str(&manifest).ok()?,
            })
        }))
    }

    /// The ids of the indexed runs whose id starts with `prefix` (lowercase),
    /// at most `limit` of them, sorted. Ids are stored lowercase and are
    /// made of hex digits and `-`, all below `~`, so the range
    /// `[prefix, prefix~)` is exactly the prefix and one seek in `runs_id`.
    pub fn run_ids_with_prefix(&self, prefix: &str, limit: usize) -> Result<Vec<String>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT DISTINCT id FROM runs WHERE id >= ?1 AND id < ?1 || '~' ORDER BY id LIMIT ?2",
            )
            .map_err(self.err())?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        stmt.query_map(params![prefix, limit], |r| r.get(0))
            .map_err(self.err())?
            .collect::<std::result::Result<_, _>>()
            .map_err(self.err())
    }

    /// The ids and files of the indexed transcripts whose id starts or ends
    /// with `part` (lowercase, compared without case), sorted by id.
    pub fn transcript_ids_matching(&self, part: &str) -> Result<Vec<(String, PathBuf)>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT id, path FROM transcripts \
                 WHERE lower(substr(id, 1, length(?1))) = ?1 OR lower(substr(id, -length(?1))) = ?1 \
                 ORDER BY id, path",
            )
            .map_err(self.err())?;
        stmt.query_map([part], |r| {
            Ok((
                r.get::<_, String>(0)?,
                PathBuf::from(r.get::<_, String>(1)?),
            ))
        })
        .map_err(self.err())?
        .collect::<std::result::Result<_, _>>()
        .map_err(self.err())
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
    pub fn work_sessions(&self) -> Result<Listing> {
        let mut listing = Listing::default();
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
            match serde_json::from_str::<WorkSession>(&record) {
                Ok(ws) if archived => listing.archived.push(ws),
                Ok(ws) => listing.sessions.push(ws),
                Err(err) => listing.corrupt.push(CorruptFile {
                    path: PathBuf::from(path),
                    reason: err.to_string(),
                }),
            }
        }
        for c in self.corrupt_files()? {
            if c.kind == Kind::WorkSession {
                listing.corrupt.push(CorruptFile {
                    path: c.path,
                    reason: c.reason,
                });
            }
        }
        Ok(listing)
    }

    /// Transcripts from the index, newest `lastActiveAt` first (unparseable
    /// times last), as the files' listing orders them, paged. With `said`,
    /// only those whose messages say every one of its words (full text,
    /// stemmed as `find --text`).
    pub fn transcripts(
        &self,
        kind: Option<crate::model::transcript::Kind>,
        said: Option<&str>,
        limit: Option<usize>,
        offset: Option<usize>,
    ) -> Result<Vec<Summary>> {
        let said = said.map(fts_query);
        if said.as_deref() == Some("") {
            return Ok(vec![]);
        }
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT path, id, kind, workdir, started_at, last_active_at, tokens, parent FROM transcripts \
                 WHERE (?1 IS NULL OR kind = ?1) \
                 AND (?4 IS NULL OR rid IN (SELECT rowid FROM transcripts_fts WHERE transcripts_fts MATCH ?4)) \
                 ORDER BY last_active_ms IS NULL, last_active_ms DESC, last_active_at DESC, path \
                 LIMIT ?2 OFFSET ?3",
            )
            .map_err(self.err())?;
        let rows = stmt
            .query_map(
                params![
                    kind.map(crate::model::transcript::Kind::as_str),
                    limit.map_or(-1, |l| l as i64),
                    offset.unwrap_or(0) as i64,
                    said
                ],
                summary_row,
            )
            .map_err(self.err())?;
        rows.collect::<std::result::Result<_, _>>()
            .map_err(self.err())
    }

    /// The transcripts whose messages say every one of `words`, best match
    /// first (bm25, then newest), active at or after `since`: at most
    /// `limit` of them, each with a snippet of its text, and how many match
    /// in all. A snippet reads the transcript's messages again (up to
    /// [`super::MAX_SAID_BYTES`] of text), only for the transcripts returned.
    pub fn find_transcripts(
        &self,
        words: &str,
        since: Option<jiff::Timestamp>,
        limit: usize,
    ) -> Result<(Vec<TranscriptHit>, u64)> {
        let query = fts_query(words);
        if query.is_empty() {
            return Ok((vec![], 0));
        }
        let since = since.map(|t| t.as_millisecond());
        let total: i64 = self
            .conn
            .prepare_cached(
                "SELECT count(*) FROM transcripts_fts f JOIN transcripts t ON t.rid = f.rowid \
                 WHERE transcripts_fts MATCH ?1 AND (?2 IS NULL OR t.last_active_ms >= ?2)",
            )
            .map_err(self.err())?
            .query_row(params![query, since], |r| r.get(0))
            .map_err(self.err())?;
        let rows: Vec<Summary> = {
            let mut stmt = self
                .conn
                .prepare_cached(
                    "SELECT t.path, t.id, t.kind, t.workdir, t.started_at, t.last_active_at, t.tokens, t.parent \
                     FROM transcripts_fts f JOIN transcripts t ON t.rid = f.rowid \
                     WHERE transcripts_fts MATCH ?1 AND (?2 IS NULL OR t.last_active_ms >= ?2) \
                     ORDER BY f.rank, t.last_active_ms DESC, t.path LIMIT ?3",
                )
                .map_err(self.err())?;
            stmt.query_map(
                params![query, since, i64::try_from(limit).unwrap_or(i64::MAX)],
                summary_row,
            )
            .map_err(self.err())?
            .collect::<std::result::Result<_, _>>()
            .map_err(self.err())?
        };
        let mut hits = vec![];
        for transcript in rows {
            let snippet = match crate::store::transcript::read_said(
                &transcript.file,
                super::MAX_SAID_BYTES,
            ) {
                Ok((_, text)) => snippet_of_text(&self.conn, &text, words).map_err(self.err())?,
                // Gone or unreadable since it was indexed: listed without one.
                Err(_) => None,
            };
            hits.push(TranscriptHit {
                transcript,
                snippet,
            });
        }
        Ok((hits, total.max(0) as u64))
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
        let size = |p: &Path| std::fs::metadata(p).map_or(0, |m| m.len());
        let wal = PathBuf::from(format!("{}-wal", self.path.display()));
        Ok(Status {
            path: self.path.clone(),
            size_bytes: size(&self.path) + size(&wal),
            schema_version: super::SCHEMA_VERSION,
            runs: count("runs")?,
            outputs: count("outputs")?,
            edges: count("edges")?,
            work_sessions: count("work_sessions")?,
            transcripts: count("transcripts")?,
            workflow_states: count("workflow_states")?,
            corrupt: count("corrupt")?,
            pending: count("pending")?,
            last_sync: self.meta("last_sync")?,
            stale: self.staleness()?,
        })
    }

    /// A canonical dump of everything the index holds about the files (not
    /// its bookkeeping), to compare two indexes built different ways.
    #[cfg(feature = "testing")]
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
            "SELECT 'trfts', t.path, '', '', '', '', '', '', '', '', '' FROM transcripts_fts f JOIN transcripts t ON t.rid = f.rowid",
            "SELECT 'wf', path, session_id, mode, coalesce(phase,''), coalesce(active_agent,''), version, updated_at, invocations, pending_handoffs, '' FROM workflow_states",
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
