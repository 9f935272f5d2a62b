//! A text query's page in `find`'s one order: newest start first, ties by
//! id, exactly as without text.
//!
//! Why not by relevance: bm25 must score every match before the best page
//! is known, so a word in every run cost time in proportion to all runs
//! (0.9–1.0 s at a million), and for such a word its weight is near zero
//! anyway. Newest first is what a person looking through agent history
//! wants first, and it lets a page stop early.
//!
//! How: the matches' rowids are read once from the words' doclists (8
//! bytes a match, no bm25). When they are a large share of the runs, the
//! runs the other filters select are walked newest first (their covering
//! index, in the page's own order) and kept when among them (a binary
//! search each), so a word in every run stops after its page; when few,
//! SQLite joins them to their runs and sorts those alone.
//!
//! Asking FTS5 about each run instead (`MATCH … AND rowid = ?`) costs a
//! cursor over every segment of the index per run: about a millisecond
//! each at 200,000 runs, measured, where reading a common word's whole
//! doclist costs tens of milliseconds.

use super::Index;
use crate::error::Result;
use crate::model::query::RunQuery;

/// Whether run `?2` matches the FTS5 query `?1` (for one run re-read; see
/// the module's documentation for why not for many).
pub(super) const PROBE: &str =
    "SELECT EXISTS (SELECT 1 FROM runs_fts WHERE runs_fts MATCH ?1 AND rowid = ?2)";

/// Matches of at least one in this many runs are kept by walking the runs
/// in order; rarer ones are joined and sorted.
const COMMON_SHARE: usize = 8;

impl Index {
    /// The row ids of the page of `query`, whose text is the FTS5 query
    /// `fts`, newest first; `None` when no run can match.
    pub(super) fn text_page(&self, query: &RunQuery, fts: &str) -> Result<Option<Vec<i64>>> {
        let others = RunQuery {
            text: None,
            limit: None,
            offset: 0,
            ..query.clone()
        };
        let Some(((walk, args), _)) = self.page_sql(&others)? else {
            return Ok(None);
        };
        let matches = self.text_rowids(fts)?;
        if matches.len().saturating_mul(COMMON_SHARE) < self.run_rows()? {
            return self.page_rids(query);
        }
        let want = query
            .limit
            .map_or(usize::MAX, |l| l.saturating_add(query.offset));
        self.walk_newest(&walk, &args, query.offset, want, &mut |rid| {
            matches.binary_search(&rid).is_ok()
        })
        .map(Some)
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
        let mut stmt = self.conn.prepare_cached(walk).map_err(self.err())?;
        let mut rows = stmt
            .query(rusqlite::params_from_iter(args.iter()))
            .map_err(self.err())?;
        let mut kept = vec![];
        let mut matched = 0;
        while matched < want
            && let Some(row) = rows.next().map_err(self.err())?
        {
            let rid: i64 = row.get(0).map_err(self.err())?;
            if keep(rid) {
                matched += 1;
                if matched > offset {
                    kept.push(rid);
                }
            }
        }
        Ok(kept)
    }

    /// The rowids of the runs matching `fts`, sorted: one pass over the
    /// words' doclists, without bm25.
    fn text_rowids(&self, fts: &str) -> Result<Vec<i64>> {
        let mut st = self
            .conn
            .prepare_cached("SELECT rowid FROM runs_fts WHERE runs_fts MATCH ?1")
            .map_err(self.err())?;
        let mut matches: Vec<i64> = st
            .query_map([fts], |r| r.get(0))
            .map_err(self.err())?
            .collect::<rusqlite::Result<_>>()
            .map_err(self.err())?;
        // FTS5 lists rowids ascending; sorting again costs nothing then and
        // keeps the binary search right whatever it did.
        matches.sort_unstable();
        Ok(matches)
    }

    /// About how many runs the index holds (their largest rowid: no count
    /// of a million rows).
    fn run_rows(&self) -> Result<usize> {
        let max: i64 = self
            .conn
            .prepare_cached("SELECT coalesce(max(rid), 0) FROM runs")
            .and_then(|mut st| st.query_row([], |r| r.get(0)))
            .map_err(self.err())?;
        Ok(usize::try_from(max).unwrap_or(0))
    }
}
