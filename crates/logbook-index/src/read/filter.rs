//! The SQL of a run query: its filters, its page and its count.

use std::sync::Arc;

use crate::fulltext::fts_query;
use crate::pool;
use crate::read::Reader;
use crate::schema::key_rid_sql;
use logbook_model::error::Result;
use logbook_model::query::{ArchiveScope, RunQuery, workflow_regex};

/// A statement's SQL and its arguments.
pub(crate) type Sql = (String, Vec<rusqlite::types::Value>);

/// What a run filter's SQL is for.
#[derive(Clone, Copy)]
enum Purpose {
    /// A page in start order.
    Page,
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

/// The WHERE terms of a run filter and the arguments they number.
struct Terms {
    where_: Vec<String>,
    args: Vec<rusqlite::types::Value>,
}

impl Terms {
    /// Adds an argument and gives its placeholder.
    fn arg(&mut self, v: impl Into<rusqlite::types::Value>) -> String {
        self.args.push(v.into());
        format!("?{}", self.args.len())
    }

    /// The FROM clause of a query with the full-text `text`, or of one
    /// without.
    fn from(&mut self, text: Option<&str>) -> String {
        match text {
            Some(q) => {
                let n = self.arg(q.to_string());
                // The FTS table answers the MATCH alone; only rowids flow
                // into the join and the sort.
                format!(
                    "(SELECT rowid AS fkey FROM runs_fts WHERE runs_fts MATCH {n}) f \
                     JOIN runs r ON r.rid = {}",
                    key_rid_sql("f.fkey")
                )
            }
            None => "runs r".to_string(),
        }
    }

    /// The term of an agent filter.
    fn agent(&mut self, agent: &str, purpose: Purpose) {
        let n = self.arg(agent.to_string());
        self.where_.push(match purpose {
            // Written as `runs_tally`'s key, which only a count can use: an
            // index SQLite may pick for a page would make it sort every
            // match instead of walking one in start order.
            Purpose::Count => format!("(r.agent || '') = {n}"),
            Purpose::Page => format!("r.agent = {n}"),
        });
    }

    /// The terms of the query's other filters on the runs' own columns,
    /// tags, repository and start.
    fn fields(&mut self, query: &RunQuery) {
        if let Some(s) = &query.status {
            let n = self.arg(s.clone());
            self.where_.push(format!("r.status = {n}"));
        }
        if let Some(u) = &query.user {
            let n = self.arg(u.clone());
            self.where_.push(format!("r.user = {n}"));
        }
        if let Some(t) = &query.tag {
            let n = self.arg(t.clone());
            self.where_.push(format!(
                "EXISTS (SELECT 1 FROM tags t WHERE t.rid = r.rid AND t.tag = {n})"
            ));
        }
        if let Some(want) = &query.repo {
            let term = repo_term(want, &mut self.args);
            self.where_.push(term);
        }
        if let Some(since) = query.since {
            let n = self.arg(logbook_model::clock::order_ns(since));
            self.where_.push(format!("r.started_ns >= {n}"));
        }
    }
}

impl Reader<'_> {
    /// The FROM clause, WHERE terms and arguments of `query`'s filters
    /// (paging aside); `None` when no run can match.
    fn run_filter(&self, query: &RunQuery, purpose: Purpose) -> Result<Option<RunFilter>> {
        let mut terms = Terms {
            where_: vec!["1=1".to_string()],
            args: vec![],
        };
        let text = query
            .text
            .as_deref()
            .map(fts_query)
            .filter(|q| !q.is_empty());
        let from = terms.from(text.as_deref());
        if let Some(a) = &query.agent {
            terms.agent(a, purpose);
        }
        // No archived run (the usual case, and every index upgraded from
        // schema 13 until its first archive): no term, and no scan of the
        // runs for the archived ones.
        match (query.archive, self.has_archived()?) {
            (ArchiveScope::Archived, false) => return Ok(None),
            (_, false) => {}
            (scope, true) => terms
                .where_
                .extend(archived_term(scope).map(str::to_string)),
        }
        terms.fields(query);
        if let Some(w) = &query.workflow {
            let Some(term) = self.workflow_term(w, &mut terms)? else {
                return Ok(None);
            };
            terms.where_.push(term);
        }
        Ok(Some(RunFilter {
            from,
            where_: terms.where_.join(" AND "),
            args: terms.args,
            text,
        }))
    }

    /// The term of a workflow filter `w`, `None` when no indexed workflow
    /// matches it. Few distinct workflow names: each is tested once
    /// against the query's own rule (the exact name, or the pattern,
    /// already validated by `matcher()`), then SQLite uses its index.
    fn workflow_term(&self, w: &str, terms: &mut Terms) -> Result<Option<String>> {
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
        let list: Vec<String> = matching.into_iter().map(|w| terms.arg(w)).collect();
        Ok(Some(format!("r.workflow IN ({})", list.join(","))))
    }

    /// The SQL and arguments of [`Reader::count_runs_upto`]; `None` when no
    /// run can match.
    pub(crate) fn count_sql(&self, query: &RunQuery, cap: Option<u64>) -> Result<Option<Sql>> {
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

    /// The SQL and arguments of a page of `query` in find's one order,
    /// newest start first, ties by id (text queries too: see
    /// `Reader::text_page`), and its FTS5 query.
    pub(crate) fn page_sql(&self, query: &RunQuery) -> Result<Option<(Sql, Option<String>)>> {
        let Some(RunFilter {
            from,
            where_,
            mut args,
            text,
        }) = self.run_filter(query, Purpose::Page)?
        else {
            return Ok(None);
        };
        let arg = |v: rusqlite::types::Value, args: &mut Vec<rusqlite::types::Value>| {
            args.push(v);
            format!("?{}", args.len())
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
            "SELECT r.rid FROM {from} WHERE {where_} ORDER BY r.started_ns DESC, r.id LIMIT {l} OFFSET {o}"
        );
        Ok(Some(((sql, args), text)))
    }

    /// The SQL and arguments that keep, of the runs whose row ids are a JSON
    /// array bound as the last argument (a placeholder here), those the
    /// filters of `query` (no text) select, with their start and id: how a
    /// text page checks the matches it reads in the text index's order (see
    /// `Reader::text_page`); `None` when no run can match.
    pub(crate) fn among_sql(&self, query: &RunQuery) -> Result<Option<Sql>> {
        let Some(RunFilter {
            where_, mut args, ..
        }) = self.run_filter(query, Purpose::Page)?
        else {
            return Ok(None);
        };
        args.push(rusqlite::types::Value::Null);
        // CROSS JOIN: SQLite keeps this order, so each row is looked up
        // by its rowid and no filter's index is walked instead.
        let sql = format!(
            "SELECT r.rid, r.started_ns, r.id FROM json_each(?{}) j CROSS JOIN runs r \
             WHERE r.rid = j.value AND {where_}",
            args.len()
        );
        Ok(Some((sql, args)))
    }

    /// The distinct workflow names, by hopping through the workflow index
    /// (one seek per name) rather than reading every row.
    fn workflow_names(&self) -> Result<Arc<[String]>> {
        // Read once per version of the database: a page and its count both
        // ask, call after call, and there are a few hundred names to hop.
        let version = self.version()?;
        if let Some((seen, names)) = &self.index.conn.memo.borrow().workflow_names
            && *seen == version
        {
            return Ok(names.clone());
        }
        let names: Arc<[String]> = self.read_workflow_names()?.into();
        self.index.conn.memo.borrow_mut().workflow_names = Some((version, names.clone()));
        Ok(names)
    }

    /// The database's version as this connection sees it now (what a
    /// [`pool::Memo`] entry is kept with).
    pub(crate) fn version(&self) -> Result<pool::Version> {
        let data_version: i64 = self
            .index
            .conn
            .prepare_cached("PRAGMA data_version")
            .map_err(self.index.err())?
            .query_row([], |r| r.get(0))
            .map_err(self.index.err())?;
        Ok((data_version, self.index.conn.total_changes()))
    }

    fn read_workflow_names(&self) -> Result<Vec<String>> {
        let indexed: bool = self
            .index.conn
            .prepare_cached(
                "SELECT count(*) > 0 FROM sqlite_schema WHERE type = 'index' AND name = 'runs_workflow'",
            )
            .and_then(|mut s| s.query_row([], |r| r.get(0)))
            .map_err(self.index.err())?;
        // One statement (one read transaction) hopping from each name to
        // the next through the index, rather than a statement per name.
        // Without the index (a rows-only index, until the text phase makes it),
        // each hop would read every run: one pass over them instead.
        let sql = if indexed {
            "WITH RECURSIVE w(name) AS ( \
               SELECT min(workflow) FROM runs \
               UNION ALL \
               SELECT (SELECT min(workflow) FROM runs WHERE workflow > w.name) FROM w \
               WHERE w.name IS NOT NULL) \
             SELECT name FROM w WHERE name IS NOT NULL"
        } else {
            "SELECT DISTINCT workflow FROM runs ORDER BY workflow"
        };
        let mut stmt = self
            .index
            .conn
            .prepare_cached(sql)
            .map_err(self.index.err())?;
        stmt.query_map([], |r| r.get::<_, String>(0))
            .map_err(self.index.err())?
            .collect::<rusqlite::Result<Vec<String>>>()
            .map_err(self.index.err())
    }
}

/// The WHERE term of a `repo` filter over the generated `repo_key` and
/// `repo_root` columns: [`logbook_model::repo::key_matches`] in SQL, with
/// runs recorded without an identity always matching.
fn repo_term(
    want: &logbook_model::repo::Repository,
    args: &mut Vec<rusqlite::types::Value>,
) -> String {
    use logbook_model::repo::ROOT_KEY_PREFIX;
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
            // `same_origin` in SQL: ASCII folding on both sides, like
            // `to_ascii_lowercase` (SQLite's `lower` folds ASCII only).
            let key = if logbook_model::repo::case_insensitive_origin(origin) {
                format!("lower(r.repo_key) = {}", arg(origin.to_ascii_lowercase()))
            } else {
                format!("r.repo_key = {}", arg(origin.clone()))
            };
            format!("{key}{}", by_root(&mut arg, true).unwrap_or_default())
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
