//! A text query's page in `find`'s one order: newest start first, ties by
//! id, exactly as without text.
//!
//! Why not by relevance: bm25 must score every match before the best page
//! is known, so a word in every run cost time in proportion to all runs
//! (0.9–1.0 s at a million), and for such a word its weight is near zero
//! anyway. Newest first is what a person looking through agent history
//! wants first, and it lets a page stop early.
//!
//! How: a run's text row is keyed by its start second above its row id
//! (`schema::text_key`), so FTS5, asked for the matches by rowid
//! descending, lists them newest first and reads only as far as asked.
//! A page reads the matches that way in growing chunks, keeps those the
//! other filters select (one statement a chunk, by row id), and stops once
//! it holds its runs and has read their last second whole; that second's
//! runs are then sorted by the exact order. A word in every run costs its
//! page, not its doclist (0.1 ms against 17 ms for the whole doclist at
//! 200,000 runs, measured). When the filters keep too few of the matches
//! for that to end soon, or the page is a long one, the matches' row ids
//! are read once instead (8 bytes a match, no bm25): when they are a large
//! share of the runs, the runs the other filters select are walked newest
//! first (their covering index) and kept when among them (one bit of a
//! set each); when few, SQLite joins them to their runs and sorts those
//! alone.
//!
//! Asking FTS5 about each run instead (`MATCH … AND rowid = ?`) costs a
//! cursor over every segment of the index per run: about a millisecond
//! each at 200,000 runs, measured.

use std::collections::HashMap;
use std::sync::Arc;

use crate::read::Reader;
use crate::schema::{key_rid, key_second};
use logbook_model::error::Result;
use logbook_model::query::RunQuery;

/// `query` without its text and paging: the filters a text query's
/// matches are checked against.
fn without_text(query: &RunQuery) -> RunQuery {
    RunQuery {
        text: None,
        limit: None,
        offset: 0,
        ..query.clone()
    }
}

/// Whether run `?2` matches the FTS5 query `?1`, `?2` its text key (for
/// one run re-read; see the module's documentation for why not for many).
pub(crate) const PROBE: &str =
    "SELECT EXISTS (SELECT 1 FROM runs_fts WHERE runs_fts MATCH ?1 AND rowid = ?2)";

/// Matches of at least one in this many runs are kept by walking the runs
/// in order; rarer ones are joined and sorted.
const COMMON_SHARE: usize = 8;

/// Matches a page or a count reads in the text index's order before it
/// turns to the whole set of matches: each costs a lookup of its run, so
/// filters that keep few of a common word's matches are answered faster
/// from the set (8 bytes a match) and the filters' own index.
const IN_ORDER_BUDGET: usize = 4096;

/// [`IN_ORDER_BUDGET`], or in tests what they set.
fn in_order_budget() -> usize {
    #[cfg(feature = "testing")]
    if let Some(n) = logbook_store::testing::in_order_budget() {
        return n;
    }
    IN_ORDER_BUDGET
}

/// The first chunk of matches read in order, and the largest.
const FIRST_CHUNK: usize = 64;
const LARGEST_CHUNK: usize = 1024;

/// A run kept by a read in order: its start second (its key's), start and
/// id (find's order), and row id.
type Kept = (i64, Option<i64>, String, i64);

impl Reader<'_> {
    /// The row ids of the page of `query`, whose text is the FTS5 query
    /// `fts`, newest first; `None` when no run can match.
    pub(crate) fn text_page(&self, query: &RunQuery, fts: &str) -> Result<Option<Vec<i64>>> {
        let others = without_text(query);
        if let Some(limit) = query.limit {
            let want = limit.saturating_add(query.offset);
            let Some(among) = self.among_sql(&others)? else {
                return Ok(None);
            };
            if want == 0 {
                return Ok(Some(vec![]));
            }
            // Done once the page's runs are held and the last one's
            // second was read whole: every run not read yet is older.
            let whole =
                |kept: &[Kept], last_read: i64| kept.get(want - 1).is_some_and(|k| last_read < k.0);
            if want <= in_order_budget() / 4
                && let Some(mut kept) =
                    self.read_in_order(among, fts, want * 2, in_order_budget(), &whole)?
            {
                // Find's order: start descending (none last), then id.
                kept.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.2.cmp(&b.2)));
                return Ok(Some(
                    kept.into_iter()
                        .skip(query.offset)
                        .take(limit)
                        .map(|k| k.3)
                        .collect(),
                ));
            }
        }
        let Some(((walk, args), _)) = self.page_sql(&others)? else {
            return Ok(None);
        };
        let matches = self.matches_of(fts)?;
        if self.is_rare(&matches)? {
            return self.page_rids(query);
        }
        let want = query
            .limit
            .map_or(usize::MAX, |l| l.saturating_add(query.offset));
        self.walk_newest(&walk, &args, query.offset, want, &mut |rid| {
            matches.holds(rid)
        })
        .map(Some)
    }

    /// How many runs match `query`, whose text is the FTS5 query `fts`,
    /// counted up to `cap`: in the text index's order as far as twice
    /// `cap` matches, or else from the set of matches (see
    /// [`Reader::text_page`]), so a common word's count reads neither every
    /// match nor every run.
    pub(crate) fn text_count_upto(&self, query: &RunQuery, fts: &str, cap: u64) -> Result<u64> {
        let others = without_text(query);
        let Some(among) = self.among_sql(&others)? else {
            return Ok(0);
        };
        let want = usize::try_from(cap).unwrap_or(usize::MAX);
        // Read in order only while the filters keep at least half the
        // matches: else the set is cheaper than the lookups.
        if want <= in_order_budget() / 2
            && let Some(kept) = self.read_in_order(
                among,
                fts,
                want,
                want.saturating_mul(2),
                &|kept: &[Kept], _| kept.len() >= want,
            )?
        {
            return Ok(kept.len().min(want) as u64);
        }
        let Some(((walk, args), _)) = self.page_sql(&others)? else {
            return Ok(0);
        };
        let matches = self.matches_of(fts)?;
        if self.is_rare(&matches)? {
            return self.count_sql_upto(query, Some(cap));
        }
        let kept = self.walk_newest(&walk, &args, 0, want, &mut |rid| matches.holds(rid))?;
        Ok(kept.len() as u64)
    }

    /// The runs matching `fts` that `among` (see `Reader::among_sql`) keeps,
    /// read from the text index in its order (newest first) a chunk at a
    /// time, the first `first_chunk` long, until `done` says so (given
    /// what is kept, in that order, and the start second of the last match
    /// read) or the matches end; `None` when `budget` matches were read
    /// first.
    fn read_in_order(
        &self,
        (among, mut args): crate::read::filter::Sql,
        fts: &str,
        first_chunk: usize,
        budget: usize,
        done: &dyn Fn(&[Kept], i64) -> bool,
    ) -> Result<Option<Vec<Kept>>> {
        let mut keys_stmt = self
            .index
            .conn
            .prepare_cached(
                "SELECT rowid FROM runs_fts WHERE runs_fts MATCH ?1 ORDER BY rowid DESC",
            )
            .map_err(self.index.err())?;
        let mut keys = keys_stmt.query([fts]).map_err(self.index.err())?;
        let mut check = self
            .index
            .conn
            .prepare_cached(&among)
            .map_err(self.index.err())?;
        let mut kept: Vec<Kept> = vec![];
        let mut read = 0;
        let mut chunk_len = first_chunk.clamp(FIRST_CHUNK, LARGEST_CHUNK);
        loop {
            let mut chunk: Vec<i64> = Vec::with_capacity(chunk_len);
            while chunk.len() < chunk_len
                && let Some(row) = keys.next().map_err(self.index.err())?
            {
                chunk.push(row.get(0).map_err(self.index.err())?);
            }
            read += chunk.len();
            // Looked up in row-id order, which is the table's.
            let mut rids: Vec<i64> = chunk.iter().map(|k| key_rid(*k)).collect();
            rids.sort_unstable();
            if let Some(last) = args.last_mut() {
                *last = serde_json::to_string(&rids).unwrap_or_default().into();
            }
            let mut selected: HashMap<i64, (Option<i64>, String)> = check
                .query_map(rusqlite::params_from_iter(args.iter()), |r| {
                    Ok((r.get(0)?, (r.get(1)?, r.get(2)?)))
                })
                .map_err(self.index.err())?
                .collect::<rusqlite::Result<_>>()
                .map_err(self.index.err())?;
            for key in &chunk {
                if let Some((started, id)) = selected.remove(&key_rid(*key)) {
                    kept.push((key_second(*key), started, id, key_rid(*key)));
                }
            }
            match chunk.last() {
                Some(last) if chunk.len() == chunk_len => {
                    if done(&kept, key_second(*last)) {
                        return Ok(Some(kept));
                    }
                }
                _ => return Ok(Some(kept)),
            }
            if read >= budget {
                return Ok(None);
            }
            chunk_len = (chunk_len * 2).min(LARGEST_CHUNK);
        }
    }

    /// Whether `matches` are few enough among the runs that SQLite joins
    /// them to their runs and sorts or counts those alone.
    fn is_rare(&self, matches: &Matches) -> Result<bool> {
        Ok(matches.count.saturating_mul(COMMON_SHARE) < self.run_rows()?)
    }

    /// Walks the rows of `walk` (run rowids, newest first) and keeps those
    /// `keep` says match, until `want` are kept; the first `offset` kept
    /// are dropped.
    fn walk_newest(
        &self,
        walk: &str,
        args: &[rusqlite::types::Value],
        offset: usize,
        want: usize,
        keep: &mut dyn FnMut(i64) -> bool,
    ) -> Result<Vec<i64>> {
        let mut stmt = self
            .index
            .conn
            .prepare_cached(walk)
            .map_err(self.index.err())?;
        let mut rows = stmt
            .query(rusqlite::params_from_iter(args.iter()))
            .map_err(self.index.err())?;
        let mut kept = vec![];
        let mut matched = 0;
        while matched < want
            && let Some(row) = rows.next().map_err(self.index.err())?
        {
            let rid: i64 = row.get(0).map_err(self.index.err())?;
            if keep(rid) {
                matched += 1;
                if matched > offset {
                    kept.push(rid);
                }
            }
        }
        Ok(kept)
    }

    /// The runs matching `fts`: one pass over the words' doclists, without
    /// bm25, kept for the connection until the database changes (a page
    /// and its count both ask).
    fn matches_of(&self, fts: &str) -> Result<Arc<Matches>> {
        let version = self.version()?;
        if let Some((seen, query, matches)) = &self.index.conn.memo.borrow().text_matches
            && *seen == version
            && query == fts
        {
            return Ok(matches.clone());
        }
        let mut st = self
            .index
            .conn
            .prepare_cached("SELECT rowid FROM runs_fts WHERE runs_fts MATCH ?1")
            .map_err(self.index.err())?;
        let mut rows = st.query([fts]).map_err(self.index.err())?;
        let mut matches = Matches::default();
        while let Some(row) = rows.next().map_err(self.index.err())? {
            matches.add(key_rid(row.get(0).map_err(self.index.err())?));
        }
        let matches = Arc::new(matches);
        self.index.conn.memo.borrow_mut().text_matches =
            Some((version, fts.to_string(), matches.clone()));
        Ok(matches)
    }

    /// About how many runs the index holds (their largest rowid: no count
    /// of a million rows).
    fn run_rows(&self) -> Result<usize> {
        let max: i64 = self
            .index
            .conn
            .prepare_cached("SELECT coalesce(max(rid), 0) FROM runs")
            .and_then(|mut st| st.query_row([], |r| r.get(0)))
            .map_err(self.index.err())?;
        Ok(usize::try_from(max).unwrap_or(0))
    }
}

/// The runs an FTS5 query matches, by row id: one bit a run up to the
/// largest (125 KB at a million), so a test is one load, and no sort of
/// the matches is needed (the text index lists them by start).
#[derive(Default)]
pub(crate) struct Matches {
    bits: Vec<u64>,
    /// How many runs match.
    count: usize,
}

impl Matches {
    fn add(&mut self, rid: i64) {
        let Ok(rid) = usize::try_from(rid) else {
            return;
        };
        let (word, bit) = (rid / 64, rid % 64);
        if word >= self.bits.len() {
            self.bits.resize(word + 1, 0);
        }
        if self.bits[word] & (1 << bit) == 0 {
            self.bits[word] |= 1 << bit;
            self.count += 1;
        }
    }

    /// Whether run `rid` matches.
    fn holds(&self, rid: i64) -> bool {
        usize::try_from(rid).is_ok_and(|rid| {
            self.bits
                .get(rid / 64)
                .is_some_and(|w| w & (1 << (rid % 64)) != 0)
        })
    }
}
