//! The SQL of a run query: its filters, its page and its count, and the
//! recent matches a common word's page is narrowed to.

use std::sync::Arc;

use super::fulltext::fts_query;
use super::{Index, pool};
use crate::error::Result;
use crate::model::query::{ArchiveScope, RunQuery, workflow_regex};

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

/// A text query matching at least one run in this many lists its
/// [`RECENT_MATCHES`] most recent matches, newest first (see
/// `Index::narrow_to_recent`).
const COMMON_SHARE: i64 = 8;

/// How many of a common word's most recent matches are ranked (a few in
/// unit tests, so that small projects take this path too).
pub(super) const RECENT_MATCHES: usize = if cfg!(test) { 3 } else { 2000 };

impl Index {
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
        if let Some(term) = archived_term(query.archive) {
            where_.push(term.into());
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
        if let Some(want) = &query.repo {
            where_.push(repo_term(want, &mut args));
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
    pub(super) fn narrow_to_recent(&self, fts: &str) -> Result<bool> {
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
}

/// The WHERE term of a `repo` filter over the generated `repo_key` and
/// `repo_root` columns: [`crate::model::repo::key_matches`] in SQL, with
/// runs recorded without an identity always matching.
fn repo_term(
    want: &crate::model::repo::Repository,
    args: &mut Vec<rusqlite::types::Value>,
) -> String {
    use crate::model::repo::ROOT_KEY_PREFIX;
    let mut arg = |v: String| {
        args.push(v.into());
        format!("?{}", args.len())
    };
    let by_root = |arg: &mut dyn FnMut(String) -> String, only_without_origin: bool| {
        want.root_commit.clone().map(|root| {
            let n = arg(root);
            if only_without_origin {
                // A run with another origin but this first commit is a fork's.
                format!(" OR (r.repo_root = {n} AND r.repo_key LIKE '{ROOT_KEY_PREFIX}%')")
            } else {
                format!(" OR r.repo_root = {n}")
            }
        })
    };
    let term = match &want.origin {
        Some(origin) => {
            let n = arg(origin.clone());
            format!(
                "r.repo_key = {n}{}",
                by_root(&mut arg, true).unwrap_or_default()
            )
        }
        None => match by_root(&mut arg, false) {
            Some(root) => format!("0{root}"),
            None => format!("r.repo_key = {}", arg(want.key())),
        },
    };
    format!("(r.repo_key IS NULL OR {term})")
}

/// The WHERE term of an archive scope. Written over rowids: the archived
/// ones are read once from the partial index `runs_archived`, and each
/// candidate row of a filter index is tested by its rowid, which every
/// index holds, so the filter indexes still answer without the table.
fn archived_term(scope: ArchiveScope) -> Option<&'static str> {
    match scope {
        ArchiveScope::Live => Some("r.rid NOT IN (SELECT rid FROM runs WHERE archived = 1)"),
        ArchiveScope::Archived => Some("r.rid IN (SELECT rid FROM runs WHERE archived = 1)"),
        ArchiveScope::All => None,
    }
}
