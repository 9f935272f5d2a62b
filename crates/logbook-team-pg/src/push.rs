//! One batch of changes from one origin, in one transaction.
//!
//! The transaction first takes advisory locks: the origin's, shared, and
//! the origin's lane of each record ([`lane_of`]), exclusive. Two pushes
//! of one record take turns, so each sees the other's rows when it
//! compares versions (an upsert guard alone could not keep a run's outputs
//! and edges consistent with its row), while a bulk push writes its lanes
//! side by side. Reconciling takes the origin's lock exclusive, so it
//! waits for every push of the origin and they for it. Machines do not
//! wait on each other.

use std::collections::HashMap;

use deadpool_postgres::Object;
use logbook::catalog::Kind;
use logbook::catalog::{Body, Change, LiveIds, PushStats, lane_of};
use tokio_postgres::Transaction;
use tokio_postgres::types::ToSql;

use crate::message_of;

type Res<T> = std::result::Result<T, String>;

fn err(e: tokio_postgres::Error) -> String {
    message_of(&e)
}

/// PostgreSQL text cannot hold NUL; JSON text cannot hold an escaped one.
fn clean(s: &str) -> String {
    if s.contains('\0') {
        s.replace('\0', "\u{fffd}")
    } else {
        s.to_string()
    }
}

fn clean_json(s: &str) -> String {
    if s.contains("\\u0000") {
        s.replace("\\u0000", "\\ufffd")
    } else {
        s.to_string()
    }
}

fn opt(s: &Option<String>) -> Option<String> {
    s.as_deref().map(clean)
}

fn table_of(kind: Kind) -> &'static str {
    match kind {
        Kind::Run => "runs",
        Kind::WorkSession => "work_sessions",
        Kind::Transcript => "transcripts",
        Kind::WorkflowState => "workflow_states",
    }
}

/// The origin's lock, and the first of its lanes' (see the module's note).
/// Logbook before lanes took the origin's lock exclusive for a push, so
/// it still excludes every push of this one.
const ORIGIN_LOCK: i32 = 7413001;
const LANE_LOCKS: i32 = 7413100;

/// A transaction holding `origin`'s lock for reconciling: exclusive, so no
/// push of the origin runs meanwhile (see the module's note).
async fn locked<'c>(c: &'c mut Object, origin: &str) -> Res<deadpool_postgres::Transaction<'c>> {
    let tx = c.transaction().await.map_err(err)?;
    tx.execute(
        "SELECT pg_advisory_xact_lock($2, hashtext($1))",
        &[&origin, &ORIGIN_LOCK],
    )
    .await
    .map_err(err)?;
    Ok(tx)
}

/// A transaction holding the locks a push of `changes` needs: the origin's
/// shared, then each lane the changes are in, in order, exclusive.
async fn push_locked<'c>(
    c: &'c mut Object,
    origin: &str,
    changes: &[Change],
) -> Res<deadpool_postgres::Transaction<'c>> {
    let mut lanes: Vec<i32> = changes
        .iter()
        .map(|c| LANE_LOCKS + lane_of(&c.id) as i32)
        .collect();
    lanes.sort_unstable();
    lanes.dedup();
    let tx = c.transaction().await.map_err(err)?;
    tx.execute(
        "SELECT pg_advisory_xact_lock_shared($2, hashtext($1))",
        &[&origin, &ORIGIN_LOCK],
    )
    .await
    .map_err(err)?;
    tx.execute(
        // `unnest` yields the sorted array in order: every push takes its
        // lanes in one order, so two never wait on each other in a cycle.
        "SELECT pg_advisory_xact_lock(l, hashtext($1)) FROM unnest($2::int4[]) AS l",
        &[&origin, &lanes],
    )
    .await
    .map_err(err)?;
    Ok(tx)
}

pub(crate) async fn push(
    c: &mut Object,
    origin: &str,
    changes: &[Change],
    bulk: bool,
) -> Res<PushStats> {
    let tx = push_locked(c, origin, changes).await?;
    if bulk {
        // The words' GIN index takes new rows into its pending list and
        // merges the list into the tree when it outgrows its limit, with at
        // most `work_mem` of it sorted at a time. Merging larger lists less
        // often does the same work in fewer, longer runs of each word's
        // posting tree; the settle after a bulk push (a VACUUM) merges what
        // is left, so searches never scan a large list for long.
        tx.batch_execute("SET LOCAL work_mem = '64MB'; SET LOCAL gin_pending_list_limit = '64MB'")
            .await
            .map_err(err)?;
    }
    // Not `DO UPDATE`: that locks the row until commit, and the lanes of a
    // push would wait on each other for it. The time is set after commit.
    tx.execute(
        "INSERT INTO origins(origin) VALUES ($1) ON CONFLICT (origin) DO NOTHING",
        &[&origin],
    )
    .await
    .map_err(err)?;
    let mut stats = PushStats::default();
    for kind in [
        Kind::Run,
        Kind::WorkSession,
        Kind::Transcript,
        Kind::WorkflowState,
    ] {
        let of_kind: Vec<&Change> = changes.iter().filter(|c| c.kind == kind).collect();
        if of_kind.is_empty() {
            continue;
        }
        push_kind(&tx, origin, kind, &of_kind, &mut stats).await?;
    }
    tx.commit().await.map_err(err)?;
    c.execute(
        "UPDATE origins SET last_push = now() WHERE origin = $1",
        &[&origin],
    )
    .await
    .map_err(err)?;
    Ok(stats)
}

/// What the server holds of each id of a batch: its version, its hash and
/// whether it is a tombstone.
type Stored = HashMap<String, (i64, String, bool)>;

/// The changes of one kind: read what the server holds of them, decide
/// what each needs, and write that.
async fn push_kind(
    tx: &Transaction<'_>,
    origin: &str,
    kind: Kind,
    changes: &[&Change],
    stats: &mut PushStats,
) -> Res<()> {
    let table = table_of(kind);
    let stored = stored_versions(tx, origin, table, changes).await?;
    let plan = Plan::of(changes, &stored, stats);
    if !plan.touch.0.is_empty() {
        touch_versions(tx, origin, table, &plan.touch).await?;
    }
    if !plan.gone.0.is_empty() {
        write_tombstones(tx, origin, table, &plan.gone).await?;
        if kind == Kind::Run {
            clear_run_rows(tx, origin, &plan.gone.0).await?;
        }
    }
    if plan.write.is_empty() {
        return Ok(());
    }
    let write = plan.write;
    match kind {
        Kind::Run => {
            // Only a run the server held live can have output and edge
            // rows to replace (a tombstone's were cleared with it): a first
            // push deletes nothing.
            let held: Vec<String> = write
                .iter()
                .filter(|c| stored.get(&c.id).is_some_and(|(_, _, deleted)| !deleted))
                .map(|c| c.id.clone())
                .collect();
            write_runs(tx, origin, &write, &held).await
        }
        Kind::WorkSession => write_work_sessions(tx, origin, &write).await,
        Kind::Transcript => write_transcripts(tx, origin, &write).await,
        Kind::WorkflowState => write_workflow_states(tx, origin, &write).await,
    }
}

/// What the server holds of the batch's ids in `table`.
async fn stored_versions(
    tx: &Transaction<'_>,
    origin: &str,
    table: &str,
    changes: &[&Change],
) -> Res<Stored> {
    let ids: Vec<String> = changes.iter().map(|c| c.id.clone()).collect();
    let rows = tx
        .query(
            // One primary-key probe per id. As `origin = $1 AND id = ANY($2)`
            // (or as a join) a catalog without statistics, as in a first
            // push, was read by the origin alone, every row of it compared
            // with the list: a cost per batch that grows with the table.
            // `OFFSET 0` keeps the planner from flattening the probe
            // back into such a join.
            &format!(
                "SELECT r.id, r.version, r.hash, r.deleted FROM unnest($2::text[]) AS u(id) \
                 CROSS JOIN LATERAL (SELECT id, version, hash, deleted FROM {table} \
                   WHERE origin = $1 AND id = u.id OFFSET 0) r"
            ),
            &[&origin, &ids],
        )
        .await
        .map_err(err)?;
    Ok(rows
        .into_iter()
        .map(|r| (r.get(0), (r.get(1), r.get(2), r.get(3))))
        .collect())
}

/// Ids with their versions, as two columns for `unnest`.
type Versions = (Vec<String>, Vec<i64>);

/// What a batch needs, change by change, against what the server holds.
struct Plan<'a> {
    /// Records to write whole.
    write: Vec<&'a Change>,
    /// Records the server holds unchanged at an older version: only their
    /// version moves.
    touch: Versions,
    /// Records deleted here: written as tombstones.
    gone: Versions,
}

impl<'a> Plan<'a> {
    /// Sorts `changes` by what each needs, counting them in `stats`.
    fn of(changes: &[&'a Change], stored: &Stored, stats: &mut PushStats) -> Plan<'a> {
        let mut plan = Plan {
            write: vec![],
            touch: (vec![], vec![]),
            gone: (vec![], vec![]),
        };
        for &c in changes {
            match stored.get(&c.id) {
                Some((v, _, _)) if *v >= c.version => stats.unchanged += 1,
                Some((_, hash, deleted)) if c.body.is_some() && *hash == c.hash && !deleted => {
                    plan.touch.0.push(c.id.clone());
                    plan.touch.1.push(c.version);
                    stats.unchanged += 1;
                }
                _ => match &c.body {
                    Some(_) => {
                        plan.write.push(c);
                        stats.written += 1;
                    }
                    None => {
                        plan.gone.0.push(c.id.clone());
                        plan.gone.1.push(c.version);
                        stats.deleted += 1;
                    }
                },
            }
        }
        plan
    }
}

/// Moves the version of records the server holds unchanged.
async fn touch_versions(
    tx: &Transaction<'_>,
    origin: &str,
    table: &str,
    touch: &Versions,
) -> Res<()> {
    tx.execute(
        &format!(
            // `t.id = ANY($2)` lets the primary key find the rows: on
            // the join alone, the planner read all of the origin's
            // rows for each batch, a cost that grows with the table.
            "UPDATE {table} t SET version = u.version \
             FROM unnest($2::text[], $3::int8[]) AS u(id, version) \
             WHERE t.origin = $1 AND t.id = ANY($2) AND t.id = u.id \
               AND t.version < u.version"
        ),
        &[&origin, &touch.0, &touch.1],
    )
    .await
    .map_err(err)?;
    Ok(())
}

/// Marks deleted records as tombstones, over an older version only.
async fn write_tombstones(
    tx: &Transaction<'_>,
    origin: &str,
    table: &str,
    gone: &Versions,
) -> Res<()> {
    tx.execute(
        &format!(
            "INSERT INTO {table}(origin, id, version, hash, deleted) \
             SELECT $1, u.id, u.version, '', true \
             FROM unnest($2::text[], $3::int8[]) AS u(id, version) \
             ON CONFLICT (origin, id) DO UPDATE SET version = excluded.version, \
             hash = '', deleted = true WHERE {table}.version < excluded.version"
        ),
        &[&origin, &gone.0, &gone.1],
    )
    .await
    .map_err(err)?;
    Ok(())
}

/// [`Catalog::reconcile`](logbook::catalog::Catalog::reconcile):
/// under the origin's push lock, marks deleted what `live` does not list.
pub(crate) async fn reconcile(
    c: &mut Object,
    origin: &str,
    live: &dyn Fn() -> logbook::Result<LiveIds>,
) -> Res<u64> {
    let tx = locked(c, origin).await?;
    let mut marked = 0;
    for (kind, ids) in live().map_err(|e| e.to_string())? {
        let table = table_of(kind);
        let gone: Vec<String> = tx
            .query(
                &format!(
                    "UPDATE {table} SET deleted = true, hash = '' \
                     WHERE origin = $1 AND NOT deleted AND NOT (id = ANY($2)) RETURNING id"
                ),
                &[&origin, &ids],
            )
            .await
            .map_err(err)?
            .iter()
            .map(|r| r.get(0))
            .collect();
        if kind == Kind::Run && !gone.is_empty() {
            clear_run_rows(&tx, origin, &gone).await?;
        }
        marked += gone.len() as u64;
    }
    tx.commit().await.map_err(err)?;
    Ok(marked)
}

async fn clear_run_rows(tx: &Transaction<'_>, origin: &str, ids: &[String]) -> Res<()> {
    for table in ["outputs", "edges"] {
        let col = if table == "outputs" {
            "run_id"
        } else {
            "child"
        };
        tx.execute(
            &format!("DELETE FROM {table} WHERE origin = $1 AND {col} = ANY($2)"),
            &[&origin, &ids],
        )
        .await
        .map_err(err)?;
    }
    Ok(())
}

async fn exec(tx: &Transaction<'_>, sql: &str, params: &[&(dyn ToSql + Sync)]) -> Res<()> {
    tx.execute(sql, params).await.map(|_| ()).map_err(err)
}

/// Runs written whole, with their outputs and edges in place of those the
/// server held (`held`).
async fn write_runs(
    tx: &Transaction<'_>,
    origin: &str,
    changes: &[&Change],
    held: &[String],
) -> Res<()> {
    let mut batch = RunBatch::default();
    for c in changes {
        if let Some(Body::Run(r)) = &c.body {
            batch.push(c, r);
        }
    }
    insert_runs(tx, origin, &batch.runs).await?;
    if !held.is_empty() {
        clear_run_rows(tx, origin, held).await?;
    }
    if !batch.outputs.run.is_empty() {
        insert_outputs(tx, origin, &batch.outputs).await?;
    }
    if !batch.edges.0.is_empty() {
        exec(
            tx,
            "INSERT INTO edges(origin, child, parent) \
             SELECT $1, u.* FROM unnest($2::text[], $3::text[]) AS u ON CONFLICT DO NOTHING",
            &[&origin, &batch.edges.0, &batch.edges.1],
        )
        .await?;
    }
    Ok(())
}

/// A batch of runs as columns for `unnest`: one statement per table.
#[derive(Default)]
struct RunBatch {
    runs: RunColumns,
    outputs: OutputColumns,
    /// Lineage edges: children and their parents.
    edges: (Vec<String>, Vec<String>),
}

/// The `runs` table's columns, one value per run.
#[derive(Default)]
struct RunColumns {
    ids: Vec<String>,
    versions: Vec<i64>,
    hashes: Vec<String>,
    folders: Vec<String>,
    agents: Vec<String>,
    workflows: Vec<String>,
    statuses: Vec<String>,
    users: Vec<Option<String>>,
    started_at: Vec<String>,
    started_ms: Vec<Option<i64>>,
    completed_at: Vec<Option<String>>,
    titles: Vec<String>,
    manifests: Vec<String>,
    tags: Vec<String>,
    search: Vec<String>,
}

/// The `outputs` table's columns, one value per output of every run.
#[derive(Default)]
struct OutputColumns {
    run: Vec<String>,
    seq: Vec<i32>,
    file: Vec<String>,
    output_type: Vec<String>,
    description: Vec<String>,
    created: Vec<String>,
    text: Vec<Option<String>>,
    truncated: Vec<bool>,
}

impl RunBatch {
    /// Adds run `r` of change `c`, its outputs and its edges.
    fn push(&mut self, c: &Change, r: &logbook::catalog::RunBody) {
        let runs = &mut self.runs;
        runs.ids.push(c.id.clone());
        runs.versions.push(c.version);
        runs.hashes.push(c.hash.clone());
        runs.folders.push(clean(&r.folder));
        runs.agents.push(clean(&r.agent));
        runs.workflows.push(clean(&r.workflow));
        runs.statuses.push(clean(&r.status));
        runs.users.push(opt(&r.user));
        runs.started_at.push(clean(&r.started_at));
        runs.started_ms.push(r.started_ms);
        runs.completed_at.push(opt(&r.completed_at));
        runs.titles.push(clean(&r.title));
        runs.manifests.push(clean_json(&r.manifest));
        runs.tags
            .push(serde_json::to_string(&r.tags).unwrap_or_else(|_| "[]".into()));
        // Words never hold a space (the tokenizer splits on them).
        runs.search.push(clean(&r.search_words.join(" ")));
        let outputs = &mut self.outputs;
        for (seq, o) in r.outputs.iter().enumerate() {
            outputs.run.push(c.id.clone());
            outputs.seq.push(seq as i32);
            outputs.file.push(clean(&o.file));
            outputs.output_type.push(clean(&o.output_type));
            outputs.description.push(clean(&o.description));
            outputs.created.push(clean(&o.created_at));
            outputs.text.push(opt(&o.text));
            outputs.truncated.push(o.truncated);
        }
        let mut parents = r.parents.clone();
        parents.sort();
        parents.dedup();
        for p in parents {
            self.edges.0.push(c.id.clone());
            self.edges.1.push(clean(&p));
        }
    }
}

/// Upserts the runs' rows, over an older version only.
async fn insert_runs(tx: &Transaction<'_>, origin: &str, r: &RunColumns) -> Res<()> {
    exec(
        tx,
        r#"INSERT INTO runs(origin, id, version, hash, deleted, folder, agent, workflow, status,
             "user", started_at, started_ms, completed_at, title, manifest, tags, search)
           SELECT $1, u.id, u.version, u.hash, false, u.folder, u.agent, u.workflow, u.status,
             u.usr, u.started_at, u.started_ms, u.completed_at, u.title, u.manifest::jsonb,
             ARRAY(SELECT jsonb_array_elements_text(u.tags::jsonb)),
             array_to_tsvector(string_to_array(u.words, ' '))
           FROM unnest($2::text[], $3::int8[], $4::text[], $5::text[], $6::text[], $7::text[],
             $8::text[], $9::text[], $10::text[], $11::int8[], $12::text[], $13::text[],
             $14::text[], $15::text[], $16::text[])
             AS u(id, version, hash, folder, agent, workflow, status, usr, started_at,
                  started_ms, completed_at, title, manifest, tags, words)
           ON CONFLICT (origin, id) DO UPDATE SET version = excluded.version,
             hash = excluded.hash, deleted = false, folder = excluded.folder,
             agent = excluded.agent, workflow = excluded.workflow, status = excluded.status,
             "user" = excluded."user", started_at = excluded.started_at,
             started_ms = excluded.started_ms, completed_at = excluded.completed_at,
             title = excluded.title, manifest = excluded.manifest, tags = excluded.tags,
             search = excluded.search
           WHERE runs.version < excluded.version"#,
        &[
            &origin,
            &r.ids,
            &r.versions,
            &r.hashes,
            &r.folders,
            &r.agents,
            &r.workflows,
            &r.statuses,
            &r.users,
            &r.started_at,
            &r.started_ms,
            &r.completed_at,
            &r.titles,
            &r.manifests,
            &r.tags,
            &r.search,
        ],
    )
    .await
}

/// Inserts the runs' outputs (their old rows are cleared first).
async fn insert_outputs(tx: &Transaction<'_>, origin: &str, o: &OutputColumns) -> Res<()> {
    exec(
        tx,
        "INSERT INTO outputs(origin, run_id, seq, file, type, description, created_at, text, truncated) \
         SELECT $1, u.* FROM unnest($2::text[], $3::int4[], $4::text[], $5::text[], $6::text[], \
           $7::text[], $8::text[], $9::bool[]) AS u",
        &[
            &origin,
            &o.run,
            &o.seq,
            &o.file,
            &o.output_type,
            &o.description,
            &o.created,
            &o.text,
            &o.truncated,
        ],
    )
    .await
}

async fn write_work_sessions(tx: &Transaction<'_>, origin: &str, changes: &[&Change]) -> Res<()> {
    let (mut ids, mut versions, mut hashes) = (vec![], vec![], vec![]);
    let (mut status, mut archived, mut updated, mut record) = (vec![], vec![], vec![], vec![]);
    for c in changes {
        let Some(Body::WorkSession(w)) = &c.body else {
            continue;
        };
        ids.push(c.id.clone());
        versions.push(c.version);
        hashes.push(c.hash.clone());
        status.push(clean(&w.status));
        archived.push(w.archived);
        updated.push(clean(&w.last_updated));
        record.push(clean_json(&w.record));
    }
    exec(
        tx,
        "INSERT INTO work_sessions(origin, id, version, hash, deleted, status, archived, last_updated, record) \
         SELECT $1, u.id, u.version, u.hash, false, u.status, u.archived, u.updated, u.record::jsonb \
         FROM unnest($2::text[], $3::int8[], $4::text[], $5::text[], $6::bool[], $7::text[], $8::text[]) \
           AS u(id, version, hash, status, archived, updated, record) \
         ON CONFLICT (origin, id) DO UPDATE SET version = excluded.version, hash = excluded.hash, \
           deleted = false, status = excluded.status, archived = excluded.archived, \
           last_updated = excluded.last_updated, record = excluded.record \
         WHERE work_sessions.version < excluded.version",
        &[
            &origin, &ids, &versions, &hashes, &status, &archived, &updated, &record,
        ],
    )
    .await
}

async fn write_transcripts(tx: &Transaction<'_>, origin: &str, changes: &[&Change]) -> Res<()> {
    let (mut ids, mut versions, mut hashes) = (vec![], vec![], vec![]);
    let (mut kind, mut file, mut workdir, mut started, mut active) =
        (vec![], vec![], vec![], vec![], vec![]);
    let (mut tokens, mut parent, mut metadata): (Vec<i64>, Vec<Option<String>>, Vec<String>) =
        (vec![], vec![], vec![]);
    let (mut title, mut messages): (Vec<String>, Vec<i64>) = (vec![], vec![]);
    for c in changes {
        let Some(Body::Transcript(t)) = &c.body else {
            continue;
        };
        ids.push(c.id.clone());
        versions.push(c.version);
        hashes.push(c.hash.clone());
        kind.push(clean(&t.kind));
        file.push(clean(&t.file));
        workdir.push(clean(&t.workdir));
        started.push(clean(&t.started_at));
        active.push(clean(&t.last_active_at));
        tokens.push(t.latest_total_tokens);
        parent.push(opt(&t.parent_session_id));
        metadata.push(clean_json(&t.metadata));
        title.push(clean(&t.title));
        messages.push(t.messages);
    }
    exec(
        tx,
        "INSERT INTO transcripts(origin, id, version, hash, deleted, kind, file, workdir, started_at, \
           last_active_at, latest_total_tokens, parent, metadata, title, messages) \
         SELECT $1, u.id, u.version, u.hash, false, u.kind, u.file, u.workdir, u.started, u.active, \
           u.tokens, u.parent, u.metadata::jsonb, u.title, u.messages \
         FROM unnest($2::text[], $3::int8[], $4::text[], $5::text[], $6::text[], $7::text[], \
           $8::text[], $9::text[], $10::int8[], $11::text[], $12::text[], $13::text[], $14::int8[]) \
           AS u(id, version, hash, kind, file, workdir, started, active, tokens, parent, metadata, \
             title, messages) \
         ON CONFLICT (origin, id) DO UPDATE SET version = excluded.version, hash = excluded.hash, \
           deleted = false, kind = excluded.kind, file = excluded.file, workdir = excluded.workdir, \
           started_at = excluded.started_at, last_active_at = excluded.last_active_at, \
           latest_total_tokens = excluded.latest_total_tokens, parent = excluded.parent, \
           metadata = excluded.metadata, title = excluded.title, messages = excluded.messages \
         WHERE transcripts.version < excluded.version",
        &[
            &origin, &ids, &versions, &hashes, &kind, &file, &workdir, &started, &active,
            &tokens, &parent, &metadata, &title, &messages,
        ],
    )
    .await
}

async fn write_workflow_states(tx: &Transaction<'_>, origin: &str, changes: &[&Change]) -> Res<()> {
    let (mut ids, mut versions, mut hashes) = (vec![], vec![], vec![]);
    let (mut mode, mut phase, mut agent): (Vec<String>, Vec<Option<String>>, Vec<Option<String>>) =
        (vec![], vec![], vec![]);
    let (mut sv, mut updated, mut inv, mut handoffs) = (vec![], vec![], vec![], vec![]);
    let mut state: Vec<Option<String>> = vec![];
    for c in changes {
        let Some(Body::WorkflowState(w)) = &c.body else {
            continue;
        };
        ids.push(c.id.clone());
        versions.push(c.version);
        hashes.push(c.hash.clone());
        mode.push(clean(&w.mode));
        phase.push(opt(&w.phase));
        agent.push(opt(&w.active_agent));
        sv.push(w.state_version);
        updated.push(clean(&w.updated_at));
        inv.push(w.invocations);
        handoffs.push(w.pending_handoffs);
        state.push(w.state.as_deref().map(clean_json));
    }
    exec(
        tx,
        "INSERT INTO workflow_states(origin, id, version, hash, deleted, mode, phase, active_agent, \
           state_version, updated_at, invocations, pending_handoffs, state) \
         SELECT $1, u.id, u.version, u.hash, false, u.mode, u.phase, u.agent, u.sv, u.updated, \
           u.inv, u.handoffs, u.state::jsonb \
         FROM unnest($2::text[], $3::int8[], $4::text[], $5::text[], $6::text[], $7::text[], \
           $8::int8[], $9::text[], $10::int8[], $11::int8[], $12::text[]) \
           AS u(id, version, hash, mode, phase, agent, sv, updated, inv, handoffs, state) \
         ON CONFLICT (origin, id) DO UPDATE SET version = excluded.version, hash = excluded.hash, \
           deleted = false, mode = excluded.mode, phase = excluded.phase, \
           active_agent = excluded.active_agent, state_version = excluded.state_version, \
           updated_at = excluded.updated_at, invocations = excluded.invocations, \
           pending_handoffs = excluded.pending_handoffs, state = excluded.state \
         WHERE workflow_states.version < excluded.version",
        &[
            &origin, &ids, &versions, &hashes, &mode, &phase, &agent, &sv, &updated, &inv,
            &handoffs, &state,
        ],
    )
    .await
}
