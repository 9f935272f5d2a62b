//! The team queries, each one statement over the catalog's indexes.

use deadpool_postgres::Object;
use logbook::index::catalog::{
    OriginStatus, ServerStatus, TeamOutput, TeamRun, TeamTranscript, TranscriptBody,
};
use logbook::model::query::RunQuery;
use tokio_postgres::Row;
use tokio_postgres::types::ToSql;

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

pub(crate) async fn find_runs(c: &mut Object, q: &RunQuery) -> Res<(Vec<TeamRun>, u64)> {
    let mut filters = vec!["NOT r.deleted".to_string()];
    let mut params: Vec<Box<dyn ToSql + Sync + Send>> = vec![];
    let mut add = |filters: &mut Vec<String>, sql: &str, value: Box<dyn ToSql + Sync + Send>| {
        params.push(value);
        filters.push(sql.replace('?', &format!("${}", params.len())));
    };
    if let Some(a) = &q.agent {
        add(&mut filters, "r.agent = ?", Box::new(a.clone()));
    }
    if let Some(w) = &q.workflow {
        // Both `?` name the one parameter.
        add(
            &mut filters,
            "(r.workflow = ? OR r.workflow ~ ?)",
            Box::new(w.clone()),
        );
    }
    if let Some(s) = &q.status {
        add(&mut filters, "r.status = ?", Box::new(s.clone()));
    }
    if let Some(u) = &q.user {
        add(&mut filters, "r.\"user\" = ?", Box::new(u.clone()));
    }
    if let Some(t) = &q.tag {
        add(
            &mut filters,
            "r.tags @> ARRAY[?::text]",
            Box::new(t.clone()),
        );
    }
    if let Some(since) = q.since {
        add(
            &mut filters,
            "r.started_ms >= ?",
            Box::new(since.as_millisecond()),
        );
    }
    if let Some(text) = &q.text {
        add(
            &mut filters,
            "r.search @@ websearch_to_tsquery('english', ?)",
            Box::new(text.clone()),
        );
    }
    let limit = q.limit.unwrap_or(50).min(i64::MAX as usize) as i64;
    let offset = q.offset.min(i64::MAX as usize) as i64;
    let where_ = filters.join(" AND ");
    let refs: Vec<&(dyn ToSql + Sync)> = params
        .iter()
        .map(|p| p.as_ref() as &(dyn ToSql + Sync))
        .collect();
    let mut page_params = refs.clone();
    page_params.push(&limit);
    page_params.push(&offset);
    let n = refs.len();
    let rows = c
        .query(
            &format!(
                "SELECT {RUN_COLUMNS} FROM runs r WHERE {where_} \
                 ORDER BY r.started_ms DESC NULLS LAST, r.id DESC LIMIT ${} OFFSET ${}",
                n + 1,
                n + 2
            ),
            &page_params,
        )
        .await
        .map_err(err)?;
    let runs: Vec<TeamRun> = rows.iter().map(team_run).collect();
    let total = if (runs.len() as i64) < limit && (offset == 0 || !runs.is_empty()) {
        offset as u64 + runs.len() as u64
    } else {
        let row = c
            .query_one(
                &format!("SELECT count(*) FROM runs r WHERE {where_}"),
                &refs,
            )
            .await
            .map_err(err)?;
        row.get::<_, i64>(0) as u64
    };
    Ok((runs, total))
}

pub(crate) async fn latest_output(
    c: &mut Object,
    agent: &str,
    workflow: Option<&str>,
    output_type: Option<&str>,
) -> Res<Option<TeamOutput>> {
    let row = c
        .query_opt(
            &format!(
                "SELECT {RUN_COLUMNS}, o.seq, o.text, o.truncated FROM runs r \
                 JOIN outputs o ON o.origin = r.origin AND o.run_id = r.id \
                 WHERE NOT r.deleted AND r.agent = $1 \
                   AND ($2::text IS NULL OR r.workflow = $2 OR r.workflow ~ $2) \
                   AND ($3::text IS NULL OR o.type = $3) \
                 ORDER BY r.started_ms DESC NULLS LAST, r.id DESC, o.seq DESC LIMIT 1"
            ),
            &[&agent, &workflow, &output_type],
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

pub(crate) async fn runs(c: &mut Object, ids: &[String]) -> Res<Vec<TeamRun>> {
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

pub(crate) async fn children(c: &mut Object, ids: &[String]) -> Res<Vec<(String, String)>> {
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

pub(crate) async fn output(c: &mut Object, run_id: &str, file: &str) -> Res<Option<TeamOutput>> {
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

pub(crate) async fn transcripts(c: &mut Object) -> Res<Vec<TeamTranscript>> {
    let rows = c
        .query(
            "SELECT origin, id, kind, file, workdir, started_at, last_active_at, \
               latest_total_tokens, parent, metadata::text \
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
            },
        })
        .collect())
}

pub(crate) async fn status(c: &mut Object) -> Res<ServerStatus> {
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
