//! The team queries, each one statement over the catalog's indexes.

use deadpool_postgres::Object;
use logbook::catalog::{
    OriginStatus, ServerStatus, TeamOutput, TeamRun, TeamTranscript, TranscriptBody,
};
use logbook::model::query::RunQuery;
use tokio_postgres::Row;
use tokio_postgres::types::{ToSql, Type};

use crate::message_of;

type Res<T> = std::result::Result<T, String>;

fn err(e: tokio_postgres::Error) -> String {
    message_of(&e)
}

fn team_run(r: &Row) -> TeamRun {
    TeamRun {
        origin: r.get(0),
        id: r.get(1),
        folder: r.get(2),
        manifest: r.get(3),
    }
}

const RUN_COLUMNS: &str = "r.origin, r.id, r.folder, r.manifest::text";

/// A parameter of a statement, typed, so each statement goes in one round
/// trip (parse, bind and execute together) instead of two: a team server
/// is often across a network, where round trips are the cost.
type Param = (Box<dyn ToSql + Sync + Send>, Type);

/// A run query as SQL: its filters (joined by AND) and their parameters.
struct RunFilter {
    filters: Vec<String>,
    params: Vec<Param>,
    /// A workflow pattern's two branches (the name equal to the pattern,
    /// and the names in its prefix range that match it), for the count:
    /// the filter they replace, and each branch.
    workflow_split: Option<(usize, String, String)>,
}

impl RunFilter {
    /// `sql` with its `?` naming `value`'s parameter.
    fn add(&mut self, sql: &str, value: Box<dyn ToSql + Sync + Send>, ty: Type) {
        self.params.push((value, ty));
        self.filters
            .push(sql.replace('?', &format!("${}", self.params.len())));
    }

    /// Every filter of `q` but the paging.
    fn of(q: &RunQuery) -> Res<RunFilter> {
        let mut f = RunFilter {
            filters: vec!["NOT r.deleted".to_string()],
            params: vec![],
            workflow_split: None,
        };
        if let Some(a) = &q.agent {
            f.add("r.agent = ?", Box::new(a.clone()), Type::TEXT);
        }
        if let Some(w) = &q.workflow {
            f.workflow(w);
        }
        if let Some(s) = &q.status {
            f.add("r.status = ?", Box::new(s.clone()), Type::TEXT);
        }
        if let Some(u) = &q.user {
            f.add("r.\"user\" = ?", Box::new(u.clone()), Type::TEXT);
        }
        if let Some(t) = &q.tag {
            f.add("r.tags @> ARRAY[?::text]", Box::new(t.clone()), Type::TEXT);
        }
        if let Some(since) = q.since {
            f.add(
                "r.started_ms >= ?",
                Box::new(since.as_millisecond()),
                Type::INT8,
            );
        }
        if let Some(text) = &q.text {
            let words = logbook::catalog::search_words(text).map_err(|e| e.to_string())?;
            if words.is_empty() {
                // Punctuation only: a local search matches nothing either.
                f.filters.push("false".into());
            } else {
                f.add(
                    "r.search @@ ?::text::tsquery",
                    Box::new(tsquery_of(&words)),
                    Type::TEXT,
                );
            }
        }
        Ok(f)
    }

    /// The workflow name equal to `w`, or matching it as a pattern.
    fn workflow(&mut self, w: &str) {
        let Some((lo, hi)) = prefix_range(w) else {
            // Both `?` name the one parameter.
            self.add(
                "(r.workflow = ? OR r.workflow ~ ?)",
                Box::new(w.to_string()),
                Type::TEXT,
            );
            return;
        };
        // The range holds every match of the pattern, so an index reads
        // only it; a name equal to the pattern itself (which starts with
        // `^`) is outside it, hence the other branch.
        self.params.push((Box::new(w.to_string()), Type::TEXT));
        let p = self.params.len();
        self.params.push((Box::new(lo), Type::TEXT));
        let mut range = format!("r.workflow >= ${}", self.params.len());
        if let Some(hi) = hi {
            self.params.push((Box::new(hi), Type::TEXT));
            range.push_str(&format!(" AND r.workflow < ${}", self.params.len()));
        }
        let range = format!("{range} AND r.workflow ~ ${p}");
        self.workflow_split = Some((
            self.filters.len(),
            format!("r.workflow = ${p} AND NOT ({range})"),
            range.clone(),
        ));
        self.filters
            .push(format!("(r.workflow = ${p} OR ({range}))"));
    }

    /// The page of runs, its limit and offset the two parameters after
    /// the filter's. The page's keys first, from the indexes alone where
    /// they can, then the manifests of only those runs (reading every
    /// candidate's manifest to sort it was most of the time).
    fn page_sql(&self) -> String {
        let n = self.params.len();
        format!(
            "SELECT {RUN_COLUMNS} FROM (SELECT r.origin, r.id, r.started_ms FROM runs r \
               WHERE {} \
               ORDER BY r.started_ms DESC NULLS LAST, r.id DESC LIMIT ${} OFFSET ${}) p \
             JOIN runs r ON r.origin = p.origin AND r.id = p.id \
             ORDER BY p.started_ms DESC NULLS LAST, p.id DESC",
            self.filters.join(" AND "),
            n + 1,
            n + 2
        )
    }

    /// How many runs match. The branches of a workflow pattern are counted
    /// apart and added (the name equal to the pattern only where the other
    /// branch does not count it), so each is a range of `runs_tally`, not a
    /// filter on every entry of the agent's.
    fn count_sql(&self) -> String {
        let Some((at, equal, range)) = &self.workflow_split else {
            return format!(
                "SELECT count(*) FROM runs r WHERE {}",
                self.filters.join(" AND ")
            );
        };
        let with = |branch: &str| {
            let mut f = self.filters.clone();
            f[*at] = branch.to_string();
            f.join(" AND ")
        };
        format!(
            "SELECT (SELECT count(*) FROM runs r WHERE {}) \
                  + (SELECT count(*) FROM runs r WHERE {})",
            with(equal),
            with(range)
        )
    }
}

pub(crate) async fn find_runs(c: &Object, q: &RunQuery) -> Res<(Vec<TeamRun>, u64)> {
    let filter = RunFilter::of(q)?;
    let limit = q.limit.unwrap_or(50).min(i64::MAX as usize) as i64;
    let offset = q.offset.min(i64::MAX as usize) as i64;
    let refs: Vec<(&(dyn ToSql + Sync), Type)> = filter
        .params
        .iter()
        .map(|(p, t)| (p.as_ref() as &(dyn ToSql + Sync), t.clone()))
        .collect();
    let mut page_params = refs.clone();
    page_params.push((&limit, Type::INT8));
    page_params.push((&offset, Type::INT8));
    // The page and its count go out together (tokio-postgres pipelines
    // the statements of one connection): one wait for the server, not two.
    // A short page makes the count needless, and then it read few rows.
    let (page_sql, count_sql) = (filter.page_sql(), filter.count_sql());
    let (rows, count) = tokio::try_join!(
        c.query_typed(&page_sql, &page_params),
        c.query_typed_one(&count_sql, &refs),
    )
    .map_err(err)?;
    let runs: Vec<TeamRun> = rows.iter().map(team_run).collect();
    let total = if (runs.len() as i64) < limit && (offset == 0 || !runs.is_empty()) {
        offset as u64 + runs.len() as u64
    } else {
        count.get::<_, i64>(0) as u64
    };
    Ok((runs, total))
}

pub(crate) async fn latest_output(
    c: &Object,
    agent: &str,
    workflow: Option<&str>,
    output_type: Option<&str>,
    status: Option<&str>,
) -> Res<Option<TeamOutput>> {
    let row = c
        .query_opt(
            &format!(
                "SELECT {RUN_COLUMNS}, o.seq, o.text, o.truncated FROM runs r \
                 JOIN outputs o ON o.origin = r.origin AND o.run_id = r.id \
                 WHERE NOT r.deleted AND r.agent = $1 \
                   AND ($2::text IS NULL OR r.workflow = $2 OR r.workflow ~ $2) \
                   AND ($3::text IS NULL OR o.type = $3) \
                   AND ($4::text IS NULL OR r.status = $4) \
                 ORDER BY r.started_ms DESC NULLS LAST, r.id DESC, o.seq DESC LIMIT 1"
            ),
            &[&agent, &workflow, &output_type, &status],
        )
        .await
        .map_err(err)?;
    Ok(row.map(|r| TeamOutput {
        run: team_run(&r),
        seq: i64::from(r.get::<_, i32>(4)),
        text: r.get(5),
        truncated: r.get(6),
    }))
}

pub(crate) async fn runs(c: &Object, ids: &[String]) -> Res<Vec<TeamRun>> {
    if ids.is_empty() {
        return Ok(vec![]);
    }
    let rows = c
        .query(
            &format!(
                "SELECT {RUN_COLUMNS} FROM runs r WHERE NOT r.deleted AND r.id = ANY($1) \
                 ORDER BY r.origin"
            ),
            &[&ids],
        )
        .await
        .map_err(err)?;
    Ok(rows.iter().map(team_run).collect())
}

pub(crate) async fn run_ids_with_prefix(
    c: &Object,
    prefix: &str,
    limit: usize,
) -> Res<Vec<String>> {
    // Only hex digits and hyphens reach here (`RunRef`), so the prefix
    // holds none of LIKE's wildcards.
    let pattern = format!("{prefix}%");
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let rows = c
        .query(
            "SELECT DISTINCT id FROM runs WHERE NOT deleted AND id LIKE $1 ORDER BY id LIMIT $2",
            &[&pattern, &limit],
        )
        .await
        .map_err(err)?;
    Ok(rows.iter().map(|r| r.get(0)).collect())
}

pub(crate) async fn children(c: &Object, ids: &[String]) -> Res<Vec<(String, String)>> {
    if ids.is_empty() {
        return Ok(vec![]);
    }
    let rows = c
        .query(
            "SELECT DISTINCT e.parent, e.child FROM edges e \
             JOIN runs r ON r.origin = e.origin AND r.id = e.child AND NOT r.deleted \
             WHERE e.parent = ANY($1)",
            &[&ids],
        )
        .await
        .map_err(err)?;
    Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
}

pub(crate) async fn output(c: &Object, run_id: &str, file: &str) -> Res<Option<TeamOutput>> {
    let row = c
        .query_opt(
            &format!(
                "SELECT {RUN_COLUMNS}, o.seq, o.text, o.truncated FROM runs r \
                 JOIN outputs o ON o.origin = r.origin AND o.run_id = r.id \
                 WHERE NOT r.deleted AND r.id = $1 AND o.file = $2 LIMIT 1"
            ),
            &[&run_id, &file],
        )
        .await
        .map_err(err)?;
    Ok(row.map(|r| TeamOutput {
        run: team_run(&r),
        seq: i64::from(r.get::<_, i32>(4)),
        text: r.get(5),
        truncated: r.get(6),
    }))
}

/// [`Catalog::output_texts`](logbook::catalog::Catalog::output_texts).
/// A cut text is left out: the local index skips files over the limit too.
pub(crate) async fn output_texts(
    c: &Object,
    runs: &[(String, String)],
) -> Res<Vec<(String, String, String)>> {
    let (origins, ids): (Vec<&str>, Vec<&str>) =
        runs.iter().map(|(o, i)| (o.as_str(), i.as_str())).unzip();
    let rows = c
        .query(
            "SELECT o.origin, o.run_id, o.text FROM outputs o \
             JOIN unnest($1::text[], $2::text[]) AS u(origin, id) \
               ON o.origin = u.origin AND o.run_id = u.id \
             WHERE o.text IS NOT NULL AND NOT o.truncated \
             ORDER BY o.origin, o.run_id, o.seq",
            &[&origins, &ids],
        )
        .await
        .map_err(err)?;
    Ok(rows
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect())
}

pub(crate) async fn transcripts(c: &Object) -> Res<Vec<TeamTranscript>> {
    let rows = c
        .query(
            "SELECT origin, id, kind, file, workdir, started_at, last_active_at, \
               latest_total_tokens, parent, metadata::text, title, messages \
             FROM transcripts WHERE NOT deleted ORDER BY last_active_at DESC, id",
            &[],
        )
        .await
        .map_err(err)?;
    Ok(rows
        .iter()
        .map(|r| TeamTranscript {
            origin: r.get(0),
            id: r.get(1),
            body: TranscriptBody {
                kind: r.get(2),
                file: r.get(3),
                workdir: r.get(4),
                started_at: r.get(5),
                last_active_at: r.get(6),
                latest_total_tokens: r.get(7),
                parent_session_id: r.get(8),
                metadata: r.get(9),
                title: r.get(10),
                messages: r.get(11),
            },
        })
        .collect())
}

pub(crate) async fn status(c: &Object) -> Res<ServerStatus> {
    let version = crate::migrations::current(c).await?;
    let rows = c
        .query(
            "SELECT o.origin, \
               (SELECT count(*) FROM runs t WHERE t.origin = o.origin AND NOT t.deleted), \
               (SELECT count(*) FROM work_sessions t WHERE t.origin = o.origin AND NOT t.deleted), \
               (SELECT count(*) FROM transcripts t WHERE t.origin = o.origin AND NOT t.deleted), \
               (SELECT count(*) FROM workflow_states t WHERE t.origin = o.origin AND NOT t.deleted), \
               to_char(o.last_push AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"') \
             FROM origins o ORDER BY o.origin",
            &[],
        )
        .await
        .map_err(err)?;
    Ok(ServerStatus {
        schema_version: version,
        origins: rows
            .iter()
            .map(|r| OriginStatus {
                origin: r.get(0),
                runs: r.get(1),
                work_sessions: r.get(2),
                transcripts: r.get(3),
                workflow_states: r.get(4),
                last_push: r.get(5),
            })
            .collect(),
    })
}

/// `words` as a query matching runs that hold all of them; each is quoted
/// (a word is letters and digits, but a quote must never end the literal).
fn tsquery_of(words: &[String]) -> String {
    words
        .iter()
        .map(|w| format!("'{}'", w.replace('\\', "\\\\").replace('\'', "''")))
        .collect::<Vec<_>>()
        .join(" & ")
}

/// For a pattern anchored on a literal (`^deep-`), the byte range every
/// match lies in: `[lo, hi)`, `hi` absent when the last character cannot
/// be bumped. `None` when the pattern starts with anything else, or has an
/// alternative (`^a|b`) the range would wrongly exclude.
fn prefix_range(pattern: &str) -> Option<(String, Option<String>)> {
    let rest = pattern.strip_prefix('^')?;
    if rest.contains('|') {
        return None;
    }
    let mut prefix: Vec<char> = vec![];
    let mut chars = rest.chars().peekable();
    while let Some(c) = chars.next() {
        let literal = match c {
            '\\' => match chars.next() {
                Some(e) if e.is_ascii_punctuation() => e,
                _ => break,
            },
            '.' | '[' | ']' | '(' | ')' | '$' | '^' | '+' | '*' | '?' | '{' | '}' => break,
            c => c,
        };
        // A quantifier makes the character before it optional or repeated.
        if matches!(chars.peek(), Some('*' | '?' | '{')) {
            break;
        }
        prefix.push(literal);
        if matches!(chars.peek(), Some('+')) {
            break;
        }
    }
    let last = *prefix.last()?;
    let lo: String = prefix.iter().collect();
    let hi = char::from_u32(last as u32 + 1).map(|next| {
        let mut hi: String = prefix[..prefix.len() - 1].iter().collect();
        hi.push(next);
        hi
    });
    Some((lo, hi))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_literal_prefix_bounds_the_pattern() {
        let range = |p: &str| prefix_range(p);
        assert_eq!(
            range("^deep-"),
            Some(("deep-".into(), Some("deep.".into())))
        );
        assert_eq!(range("^a\\.b"), Some(("a.b".into(), Some("a.c".into()))));
        assert_eq!(range("^ab*c"), Some(("a".into(), Some("b".into()))));
        assert_eq!(range("^ab+c"), Some(("ab".into(), Some("ac".into()))));
        assert_eq!(range("^ab{2}"), Some(("a".into(), Some("b".into()))));
        assert_eq!(range("^(?i)deep"), None);
        assert_eq!(range("^a|b"), None);
        assert_eq!(range("deep"), None);
        assert_eq!(range("^\\d"), None);
        assert_eq!(range("^.x"), None);
    }

    #[test]
    fn words_are_quoted_in_a_query() {
        assert_eq!(
            tsquery_of(&["it's".into(), "a\\b".into()]),
            "'it''s' & 'a\\\\b'"
        );
    }
}
