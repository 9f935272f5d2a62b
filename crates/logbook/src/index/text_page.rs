//! A text query's page in `find`'s one order: newest start first, ties by
//! id, exactly as without text.
//!
//! Why not by relevance: bm25 must score every match before the best page
//! is known, so a word in every run cost time in proportion to all runs
//! (0.9–1.0 s at a million), and for such a word its weight is near zero
//! anyway. Newest first is what a person looking through agent history
//! wants first, and it lets a page stop early.
//!
//! How, by how common the words are:
//! - a page of at most [`PROBED_PAGE`] runs walks the runs the other
//!   filters select, newest first (their covering index, in the page's own
//!   order), and asks FTS5 whether each matches, one rowid seek each; a
//!   word in at least one run of [`PROBES_PER_MATCH`] fills the page within
//!   its budget of seeks, whatever the number of runs;
//! - otherwise the matches' rowids are read once from the doclist: when
//!   they are a large share of the runs, the same ordered walk keeps the
//!   runs among them (a binary search each, 8 bytes a match held); when
//!   few, SQLite joins them to their runs and sorts those alone.

use super::Index;
use crate::error::Result;
use crate::model::query::RunQuery;

/// Whether run `?2` matches the FTS5 query `?1`: one seek in the words'
/// doclists.
pub(super) const PROBE: &str =
    "SELECT EXISTS (SELECT 1 FROM runs_fts WHERE runs_fts MATCH ?1 AND rowid = ?2)";

/// The largest page (offset included) found by probing the newest runs.
const PROBED_PAGE: usize = 1000;

/// Probes allowed per run the page needs: a text query matching at least
/// one of this many of the filtered runs fills its page by probing.
const PROBES_PER_MATCH: usize = 8;

/// Probes allowed however small the page (fewer in unit tests, so that
/// their small projects take every path).
const MIN_PROBES: usize = if cfg!(test) { 16 } else { 256 };

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
        let want = query.limit.map(|l| l.saturating_add(query.offset));
        if let Some(want) = want.filter(|&w| w <= PROBED_PAGE) {
            let budget = want.saturating_mul(PROBES_PER_MATCH).max(MIN_PROBES);
            let mut probe = self.conn.prepare_cached(PROBE).map_err(self.err())?;
            let mut seeks = 0;
            let probed = self.walk_newest(&walk, &args, query.offset, want, &mut |rid| {
                if seeks == budget {
                    return Ok(None);
                }
                seeks += 1;
                probe
                    .query_row(rusqlite::params![fts, rid], |r| r.get(0))
                    .map(Some)
            })?;
            if let Some(page) = probed {
                return Ok(Some(page));
            }
        }
        let matches = self.text_matches(fts)?;
        if matches.len().saturating_mul(COMMON_SHARE) < self.run_rows()? {
            return self.page_rids(query);
        }
        let want = want.unwrap_or(usize::MAX);
        let kept = self.walk_newest(&walk, &args, query.offset, want, &mut |rid| {
            Ok(Some(matches.binary_search(&rid).is_ok()))
        })?;
        Ok(kept)
    }

    /// Walks the rows of `walk` (run rowids, newest first) and keeps those
    /// `keep` says match, until `want` are kept; the first `offset` kept
    /// are dropped. `None` as soon as `keep` gives up.
    fn walk_newest(
        &self,
        walk: &str,
        args: &[rusqlite::types::Value],
        offset: usize,
        want: usize,
        keep: &mut dyn FnMut(i64) -> rusqlite::Result<Option<bool>>,
    ) -> Result<Option<Vec<i64>>> {
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
            match keep(rid).map_err(self.err())? {
                None => return Ok(None),
                Some(false) => {}
                Some(true) => {
                    matched += 1;
                    if matched > offset {
                        kept.push(rid);
                    }
                }
            }
        }
        Ok(Some(kept))
    }

    /// The rowids of the runs matching `fts`, sorted: one pass over the
    /// words' doclists, without bm25.
    fn text_matches(&self, fts: &str) -> Result<Vec<i64>> {
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
