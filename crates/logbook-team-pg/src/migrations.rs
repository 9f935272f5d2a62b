//! The catalog's tables, as numbered migrations applied in order by
//! `logbook team init` and recorded in `logbook_schema`. A catalog's first
//! call checks the recorded version (a query sends the check with its own
//! statements): a server behind this program's [`LATEST`] gets a
//! message saying to run `logbook team init`, one ahead says to upgrade
//! Logbook on this machine.
//!
//! Every record table is keyed by (origin, id) and carries `version` (the
//! origin's outbox sequence: only a newer one may overwrite), `hash` (the
//! content hash: an identical record is not rewritten) and `deleted` (a
//! tombstone, so a late push of an older state cannot bring a deleted
//! record back). Filter indexes list the filter first, then the order the
//! queries read in (`started_ms DESC`), so a page stops early.

use logbook::error::{Next, Result, Step};
use tokio_postgres::SimpleQueryMessage;
use tokio_postgres::error::SqlState;

use crate::team_error;

/// The schema version this program reads and writes.
pub const LATEST: i64 = 3;

const MIGRATIONS: &[&str] = &[
    // 1: the first catalog.
    r#"
CREATE TABLE origins(
  origin text PRIMARY KEY,
  first_push timestamptz NOT NULL DEFAULT now(),
  last_push timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE runs(
  origin text NOT NULL,
  id text NOT NULL,
  version bigint NOT NULL,
  hash text NOT NULL,
  deleted boolean NOT NULL DEFAULT false,
  folder text NOT NULL DEFAULT '',
  agent text NOT NULL DEFAULT '',
  workflow text NOT NULL DEFAULT '',
  status text NOT NULL DEFAULT '',
  "user" text,
  started_at text NOT NULL DEFAULT '',
  started_ms bigint,
  completed_at text,
  title text NOT NULL DEFAULT '',
  manifest jsonb NOT NULL DEFAULT '{}',
  tags text[] NOT NULL DEFAULT '{}',
  search_text text NOT NULL DEFAULT '',
  search tsvector GENERATED ALWAYS AS (
    to_tsvector('english'::regconfig, agent || ' ' || workflow || ' ' || title || ' ' || search_text)
    || jsonb_to_tsvector('english'::regconfig, manifest, '["string"]')
  ) STORED,
  PRIMARY KEY(origin, id)
);
CREATE INDEX runs_started ON runs(started_ms DESC, id) WHERE NOT deleted;
CREATE INDEX runs_agent ON runs(agent, started_ms DESC, id) WHERE NOT deleted;
CREATE INDEX runs_status ON runs(status, started_ms DESC, id) WHERE NOT deleted;
CREATE INDEX runs_workflow ON runs(workflow, started_ms DESC, id) WHERE NOT deleted;
CREATE INDEX runs_user ON runs("user", started_ms DESC, id) WHERE NOT deleted;
CREATE INDEX runs_id ON runs(id);
CREATE INDEX runs_tags ON runs USING gin(tags);
CREATE INDEX runs_search ON runs USING gin(search);
CREATE TABLE outputs(
  origin text NOT NULL,
  run_id text NOT NULL,
  seq integer NOT NULL,
  file text NOT NULL,
  type text NOT NULL,
  description text NOT NULL,
  created_at text NOT NULL,
  text text,
  truncated boolean NOT NULL DEFAULT false,
  PRIMARY KEY(origin, run_id, seq)
);
CREATE INDEX outputs_run_file ON outputs(run_id, file);
CREATE TABLE edges(
  origin text NOT NULL,
  child text NOT NULL,
  parent text NOT NULL,
  PRIMARY KEY(origin, child, parent)
);
CREATE INDEX edges_parent ON edges(parent);
CREATE TABLE work_sessions(
  origin text NOT NULL,
  id text NOT NULL,
  version bigint NOT NULL,
  hash text NOT NULL,
  deleted boolean NOT NULL DEFAULT false,
  status text NOT NULL DEFAULT '',
  archived boolean NOT NULL DEFAULT false,
  last_updated text NOT NULL DEFAULT '',
  record jsonb NOT NULL DEFAULT '{}',
  PRIMARY KEY(origin, id)
);
CREATE TABLE transcripts(
  origin text NOT NULL,
  id text NOT NULL,
  version bigint NOT NULL,
  hash text NOT NULL,
  deleted boolean NOT NULL DEFAULT false,
  kind text NOT NULL DEFAULT 'main',
  file text NOT NULL DEFAULT '',
  workdir text NOT NULL DEFAULT '',
  started_at text NOT NULL DEFAULT '',
  last_active_at text NOT NULL DEFAULT '',
  latest_total_tokens bigint NOT NULL DEFAULT 0,
  parent text,
  metadata jsonb NOT NULL DEFAULT '{}',
  PRIMARY KEY(origin, id)
);
CREATE INDEX transcripts_active ON transcripts(last_active_at DESC) WHERE NOT deleted;
CREATE TABLE workflow_states(
  origin text NOT NULL,
  id text NOT NULL,
  version bigint NOT NULL,
  hash text NOT NULL,
  deleted boolean NOT NULL DEFAULT false,
  mode text NOT NULL DEFAULT '',
  phase text,
  active_agent text,
  state_version bigint NOT NULL DEFAULT 0,
  updated_at text NOT NULL DEFAULT '',
  invocations bigint NOT NULL DEFAULT 0,
  pending_handoffs bigint NOT NULL DEFAULT 0,
  state jsonb,
  PRIMARY KEY(origin, id)
);
"#,
    // 2: full text from words the pushing machine folds (its local index's
    // tokenizer) instead of a generated column PostgreSQL parsed and
    // stemmed on every insert, which was most of a push's server time; the
    // outputs' text is no longer kept twice (it is in `outputs`). Rows
    // pushed before keep an approximation made here from their old text
    // (English stems, not accent-folded) until they are pushed again.
    // Workflows compare byte-wise, so a pattern's literal prefix becomes an
    // index range; the order indexes sort as the queries do (NULLS LAST),
    // and the agent one carries the other filters, so a page is read in
    // order and stops early.
    r#"
ALTER TABLE runs RENAME COLUMN search TO search_old;
ALTER TABLE runs ADD COLUMN search tsvector NOT NULL DEFAULT ''::tsvector;
UPDATE runs SET search = strip(search_old) WHERE NOT deleted;
DROP INDEX runs_search;
ALTER TABLE runs DROP COLUMN search_old;
ALTER TABLE runs DROP COLUMN search_text;
CREATE INDEX runs_search ON runs USING gin(search);
DROP INDEX runs_started, runs_agent, runs_status, runs_workflow, runs_user;
ALTER TABLE runs ALTER COLUMN workflow TYPE text COLLATE "C";
CREATE INDEX runs_started ON runs(started_ms DESC NULLS LAST, id DESC) WHERE NOT deleted;
CREATE INDEX runs_agent ON runs(agent, started_ms DESC NULLS LAST, id DESC)
  INCLUDE (origin, status, workflow) WHERE NOT deleted;
CREATE INDEX runs_status ON runs(status, started_ms DESC NULLS LAST, id DESC) WHERE NOT deleted;
CREATE INDEX runs_workflow ON runs(workflow, started_ms DESC NULLS LAST, id DESC) WHERE NOT deleted;
CREATE INDEX runs_user ON runs("user", started_ms DESC NULLS LAST, id DESC) WHERE NOT deleted;
"#,
    // 3: a transcript's title and message count, as its machine's index
    // keeps them (the catalog has no messages to take them from).
    // Transcripts pushed before have none until they are pushed again.
    r#"
ALTER TABLE transcripts ADD COLUMN title text NOT NULL DEFAULT '';
ALTER TABLE transcripts ADD COLUMN messages bigint NOT NULL DEFAULT 0;
"#,
];

/// Storage settings and indexes that change no result, so they are not a
/// schema version (a machine with an older Logbook reads the catalog the
/// same): applied by every `team init`, and skipped where the server lacks
/// them.
/// - LZ4 compresses the manifests and texts TOAST stores much faster than
///   the default pglz, which was a noticeable share of a push's server time.
/// - `runs_tally` holds the columns a page's count filters on side by side,
///   as the local index's index of that name does: without it, counting one
///   agent's completed runs of a workflow pattern reads every entry of the
///   agent and its row's filter columns; with it, only the matches' entries.
const TUNING: &str = "CREATE INDEX IF NOT EXISTS runs_tally ON runs(agent, status, workflow) \
    WHERE NOT deleted; \
  DO $$ BEGIN \
    EXECUTE 'ALTER TABLE runs ALTER COLUMN manifest SET COMPRESSION lz4'; \
    EXECUTE 'ALTER TABLE outputs ALTER COLUMN text SET COMPRESSION lz4'; \
    EXECUTE 'ALTER TABLE workflow_states ALTER COLUMN state SET COMPRESSION lz4'; \
    EXECUTE 'ALTER TABLE work_sessions ALTER COLUMN record SET COMPRESSION lz4'; \
    EXECUTE 'ALTER TABLE transcripts ALTER COLUMN metadata SET COMPRESSION lz4'; \
  EXCEPTION WHEN OTHERS THEN NULL; \
  END $$";

/// The version recorded on the server; 0 when the catalog was never made.
pub(crate) async fn current(c: &deadpool_postgres::Object) -> Result<i64, String> {
    // One statement in one round trip: it runs with every command's first
    // call to the catalog. A catalog never created has no table to read.
    let messages = match c
        .simple_query("SELECT coalesce(max(version), 0) FROM logbook_schema")
        .await
    {
        Ok(m) => m,
        Err(e) if e.code() == Some(&SqlState::UNDEFINED_TABLE) => return Ok(0),
        Err(e) => return Err(crate::message_of(&e)),
    };
    messages
        .iter()
        .find_map(|m| match m {
            SimpleQueryMessage::Row(row) => row.get(0).and_then(|v| v.parse().ok()),
            _ => None,
        })
        .ok_or_else(|| "the team catalog's schema version could not be read".to_string())
}

/// Whether this program can work with a catalog at `version`.
pub(crate) fn check(server: &str, version: i64) -> Result<()> {
    let (message, hint) = match version {
        0 => (
            "the team catalog has not been created on this server".to_string(),
            Next::say("run ").step(Step::TeamInit),
        ),
        v if v < LATEST => (
            format!(
                "the team catalog is at schema version {v}, older than this logbook's {LATEST}"
            ),
            Next::say("run ")
                .step(Step::TeamInit)
                .text(" to migrate it"),
        ),
        v if v > LATEST => {
            return Err(team_error(
                server,
                format!(
                    "the team catalog is at schema version {v}, newer than this logbook's {LATEST}; upgrade logbook on this machine"
                ),
            ));
        }
        _ => return Ok(()),
    };
    Err(logbook::Error::Team {
        server: server.to_string(),
        message,
        hint,
    })
}

/// Applies the migrations the server lacks, each in its own transaction
/// under a lock, so two machines running `team init` at once do not race.
pub(crate) async fn apply(c: &mut deadpool_postgres::Object) -> Result<i64, String> {
    let err = |e: tokio_postgres::Error| crate::message_of(&e);
    let tx = c.transaction().await.map_err(err)?;
    tx.batch_execute(
        "SELECT pg_advisory_xact_lock(7413000); \
         CREATE TABLE IF NOT EXISTS logbook_schema(\
           version bigint PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
    )
    .await
    .map_err(err)?;
    let done: i64 = tx
        .query_one("SELECT coalesce(max(version), 0) FROM logbook_schema", &[])
        .await
        .map_err(err)?
        .get(0);
    if done > LATEST {
        return Err(format!(
            "the team catalog is at schema version {done}, newer than this logbook's {LATEST}; upgrade logbook on this machine"
        ));
    }
    for (i, sql) in MIGRATIONS.iter().enumerate() {
        let version = i as i64 + 1;
        if version <= done {
            continue;
        }
        tx.batch_execute(sql).await.map_err(err)?;
        tx.execute(
            "INSERT INTO logbook_schema(version) VALUES ($1)",
            &[&version],
        )
        .await
        .map_err(err)?;
    }
    tx.batch_execute(TUNING).await.map_err(err)?;
    tx.commit().await.map_err(err)?;
    Ok(LATEST)
}
