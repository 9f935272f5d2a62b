//! Upgrading an index of an older schema in place, so a new Logbook answers
//! in seconds where a rebuild reads every file again (minutes at a million
//! runs).
//!
//! [`STEPS`] lists the steps, each bringing the index to version `to` from
//! `to - 1` (several named steps may share one version). [`migrate`] applies
//! every version's steps in one transaction of the live index, with
//! `user_version` set in that same transaction: a process killed mid-way
//! leaves the last version it committed, and the next open goes on from
//! there. The caller holds `rebuild::REBUILD_LOCK`, so one process migrates
//! and the others wait and use what it made.
//!
//! A step is quick DDL (`ALTER TABLE … ADD COLUMN`, `CREATE TABLE`,
//! `CREATE INDEX`) and backfills in SQL from what the index already holds.
//! What only the files can say is not read here: the step marks those
//! files' stamps stale ([`mark_stale`]) and the syncs every reader already
//! runs re-read exactly them, so the first answer does not wait for them.
//!
//! An index older than [`OLDEST`] or newer than this binary (a downgrade)
//! cannot be migrated and is rebuilt (see `Index::open_file`).

use rusqlite::{Connection, OptionalExtension};

use crate::index_error;
use crate::schema::{self, SCHEMA_VERSION};
use crate::upkeep::Upkeep;
use crate::write::apply::Live;
use crate::{ROOT_KEY, path_str, root_stamp, unwritable, upkeep::text_build};
use logbook_model::clock;
use logbook_model::error::Result;

/// The oldest schema migrated in place: its steps were written from the
/// real history of the schema. An older index is rebuilt.
pub(crate) const OLDEST: i64 = 9;

/// One step of a migration: what it does to an index of version `to - 1`.
pub(crate) struct Step {
    /// The version this step is part of.
    pub(crate) to: i64,
    /// Its name in `schema_history`.
    pub(crate) name: &'static str,
    /// The step itself, inside the version's transaction.
    pub(crate) run: fn(&Connection) -> rusqlite::Result<()>,
}

/// Every step, in the order applied. A new schema version adds its steps
/// at the end (and its fixture, see tests/fixtures/upgrade/make.sh).
pub(crate) const STEPS: &[Step] = &[
    Step {
        to: 10,
        name: "run-folders-without-manifest",
        run: to10_run_folders_without_manifest,
    },
    Step {
        to: 11,
        name: "repository-columns",
        run: to11_repository_columns,
    },
    Step {
        to: 11,
        name: "live-runs",
        run: to11_live_runs,
    },
    Step {
        to: 12,
        name: "transcript-titles",
        run: to12_transcript_titles,
    },
    Step {
        to: 13,
        name: "transcript-messages",
        run: to13_transcript_messages,
    },
    Step {
        to: 13,
        name: "transcript-usage",
        run: to13_transcript_usage,
    },
    Step {
        to: 14,
        name: "schema-history",
        run: to14_schema_history,
    },
    Step {
        to: 14,
        name: "transcript-usage-of-early-13",
        run: to14_usage_of_early_13,
    },
    Step {
        to: 14,
        name: "archived-runs",
        run: crate::upkeep::archive::migrate_13_to_14_archive,
    },
    Step {
        to: 15,
        // The rows phase's old name, kept: it is recorded in indexes'
        // `schema_history`.
        name: "catalog-stubs",
        run: to15_manifest_stubs,
    },
    Step {
        to: 16,
        name: "text-keys",
        run: to16_text_keys,
    },
    // A later version's steps go here, one `Step { to, .. }` each, in the
    // order they must run; each version's are applied in one transaction.
];

/// The size a stale stamp has (see [`mark_stale`]): never a file's, and
/// not `record::ABSENT_STAMP`'s either, so every comparison sees a change.
const STALE_SIZE: i64 = -2;

impl Upkeep<'_> {
    /// Brings an index of an older schema up to [`SCHEMA_VERSION`] in place
    /// (see [`migrate`]) and says whether it did; `false` when it must be
    /// rebuilt instead, with a notice saying why where the person would
    /// wonder (a downgrade, an upgrade that failed). The caller holds the
    /// rebuild lock.
    pub(crate) fn upgraded_in_place(&self) -> Result<bool> {
        let Ok(version) = self.index.schema_version() else {
            return Ok(false);
        };
        let path = self.index.path.display();
        if version > SCHEMA_VERSION {
            self.index.project.notices.push(format!(
                "the index {path} is of schema {version}, written by a newer Logbook than this one (schema {SCHEMA_VERSION}): rebuilding it from the files"
            ));
            return Ok(false);
        }
        if !can_migrate(version) {
            // Older than the steps go back: rebuilt as every upgrade was
            // before them, silently (see CHANGELOG.md).
            return Ok(false);
        }
        let here = root_stamp(&self.index.project);
        let for_here = match self.index.meta(ROOT_KEY) {
            Ok(Some(root)) => root == here,
            Ok(None) => self.rows_lie_here().unwrap_or(false),
            Err(_) => false,
        };
        if !for_here {
            // A project moved elsewhere: see `built_for_here`.
            return Ok(false);
        }
        match migrate(&self.index.conn, version, &here) {
            Ok(()) => {
                text_build::finish_small_migrated(&self.index.conn, &self.index.project)
                    .map_err(self.index.err())?;
                // A small project (its text written now) is whole at once.
                if self.index.meta(text_build::TEXT_BUILD_KEY)?.is_none() {
                    self.names_if_due()?;
                }
                Ok(true)
            }
            Err(e) if unwritable(&index_error(&self.index.path, &e)) => {
                Err(index_error(&self.index.path, &e))
            }
            Err(e) => {
                self.index.project.notices.push(format!(
                    "the index {path} could not be upgraded from schema {version} in place ({e}): rebuilding it from the files"
                ));
                Ok(false)
            }
        }
    }

    /// Whether the paths this index holds lie in this project's folders,
    /// for an index older than the project root stamp (schema 12): the
    /// first and the last path in order, as a project moved elsewhere moved
    /// all of them. An index holding no file is anyone's.
    fn rows_lie_here(&self) -> Result<bool> {
        let ends: (Option<String>, Option<String>) = self
            .index
            .conn
            .query_row("SELECT min(path), max(path) FROM files", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .map_err(self.index.err())?;
        let c = &self.index.project.config;
        let folders: Vec<String> = [
            &c.agent_outputs_folder,
            &c.sessions_dir,
            &c.session_archive_dir,
            &c.transcripts_dir,
        ]
        .iter()
        .map(|f| path_str(&f.join("")))
        .collect();
        let here = |p: &str| folders.iter().any(|f| p.starts_with(f.as_str()));
        Ok([ends.0, ends.1].iter().flatten().all(|p| here(p)))
    }
}

/// Whether an index of schema `version` is brought up to date in place.
pub(crate) fn can_migrate(version: i64) -> bool {
    (OLDEST..SCHEMA_VERSION).contains(&version)
}

/// Applies the steps from `from` to [`SCHEMA_VERSION`], one transaction
/// per version (see the module documentation). The caller holds the
/// rebuild lock, has checked [`can_migrate`], and that the index's rows are
/// of the project whose root stamp is `root` (stored with the last version:
/// indexes before 12 kept none).
pub(crate) fn migrate(conn: &Connection, from: i64, root: &str) -> rusqlite::Result<()> {
    for version in from + 1..=SCHEMA_VERSION {
        conn.execute_batch("BEGIN IMMEDIATE")?;
        let applied = (|| {
            conn.execute_batch(schema::HISTORY_SCHEMA)?;
            let empty: bool = conn.query_row(
                "SELECT NOT EXISTS (SELECT 1 FROM schema_history)",
                [],
                |r| r.get(0),
            )?;
            if empty {
                record(conn, version - 1, "found")?;
            }
            for step in STEPS.iter().filter(|s| s.to == version) {
                #[cfg(feature = "testing")]
                logbook_store::testing::fault("migrate-step");
                (step.run)(conn)?;
                record(conn, version, step.name)?;
            }
            if version == SCHEMA_VERSION {
                // A file an older parser could not read may read now: each
                // is re-read by the next sync (they are few).
                mark_stale(conn, "SELECT path FROM corrupt")?;
                conn.execute(
                    "INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)",
                    [ROOT_KEY, root],
                )?;
            }
            conn.pragma_update(None, "user_version", version)
        })();
        match applied {
            Ok(()) => conn.execute_batch("COMMIT")?,
            Err(e) => {
                let _ = conn.execute_batch("ROLLBACK");
                return Err(e);
            }
        }
    }
    Ok(())
}

/// Adds a row to `schema_history`.
pub(crate) fn record(conn: &Connection, version: i64, step: &str) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT INTO schema_history(version, step, applied_at, logbook) VALUES (?1, ?2, ?3, ?4)",
        rusqlite::params![
            version,
            step,
            clock::now_string(),
            env!("CARGO_PKG_VERSION")
        ],
    )
    .map(|_| ())
}

/// Gives the files whose paths `paths` (an SQL query) selects a stamp no
/// file has, so the next sync re-reads exactly them: for the small kinds
/// every listing's own sync (`Index::open_synced_kind`), for run manifests
/// marked live the check before every run listing (`refresh_unsettled`),
/// and for all of them `index sync`.
fn mark_stale(conn: &Connection, paths: &str) -> rusqlite::Result<()> {
    conn.execute(
        &format!("UPDATE files SET size = {STALE_SIZE}, mtime_ns = 0 WHERE path IN ({paths})"),
        [],
    )
    .map(|_| ())
}

/// The paths of the transcript files the index follows: those it holds
/// and those it could not read. (Not `files` by kind, which has no index:
/// at a million runs that was a scan of every run's row.)
const TRANSCRIPT_FILES: &str =
    "SELECT path FROM transcripts UNION ALL SELECT path FROM corrupt WHERE kind = 'transcript'";

/// Whether `table` has a column named `column`.
fn has_column(conn: &Connection, table: &str, column: &str) -> rusqlite::Result<bool> {
    conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM pragma_table_xinfo(?1) WHERE name = ?2)",
        [table, column],
        |r| r.get(0),
    )
}

/// 10: a run folder named by a run id but without a manifest is a run of
/// status `unknown`. Such folders are in no row of a schema-9 index: a
/// comparison of the folder names with the rows finds them, which at a
/// million runs takes seconds. It is left to the text builder
/// ([`NAMES_DUE_KEY`], `text_build`), or done before the first answer of a
/// small project ([`Upkeep::upgraded_in_place`]); until then such folders
/// are left out, as the schema-9 binary left them out.
fn to10_run_folders_without_manifest(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT OR REPLACE INTO meta(key, value) VALUES (?1, '1')",
        [NAMES_DUE_KEY],
    )
    .map(|_| ())
}

/// The `meta` key present while the upgrade from schema 9 has not yet
/// compared the run folder names with the rows (see
/// [`to10_run_folders_without_manifest`]).
pub(crate) const NAMES_DUE_KEY: &str = "names_due";

impl Upkeep<'_> {
    /// Compares the run folder names with the rows if an upgrade from
    /// schema 9 left that to do, and forgets that it is due.
    pub(crate) fn names_if_due(&self) -> Result<()> {
        if self.index.meta(NAMES_DUE_KEY)?.is_none() {
            return Ok(());
        }
        self.index.upkeep().sync_names()?;
        self.index
            .conn
            .execute("DELETE FROM meta WHERE key = ?1", [NAMES_DUE_KEY])
            .map_err(self.index.err())?;
        Ok(())
    }
}

/// 11: the repository identity of runs, work sessions and transcripts.
/// Computed columns of runs and work sessions (from the stored manifest
/// and record), so nothing to fill; a transcript's comes from its file,
/// which is re-read.
fn to11_repository_columns(conn: &Connection) -> rusqlite::Result<()> {
    for (table, at) in [
        ("runs", schema::RUNS_REPO),
        ("work_sessions", schema::WS_REPO),
    ] {
        for column in schema::repo_column_defs(at) {
            conn.execute_batch(&format!("ALTER TABLE {table} ADD COLUMN {column}"))?;
        }
    }
    conn.execute_batch("ALTER TABLE transcripts ADD COLUMN repository TEXT")?;
    for column in schema::repo_column_defs(schema::TR_REPO) {
        conn.execute_batch(&format!("ALTER TABLE transcripts ADD COLUMN {column}"))?;
    }
    mark_stale(conn, TRANSCRIPT_FILES)
}

/// 11: `files.live`, the run manifests a listing checks first (running, a
/// folder without a manifest, a manifest that did not parse: `apply::Live`).
/// The column is added here, and the manifests that did not parse marked
/// (`corrupt` holds few). Marking the running runs and making `files_live`
/// touch a page of `files` per running run and read every row of it
/// (seconds at a million runs with a tenth running): that is left to the
/// text builder, a batch at a time ([`fill_live_batch`]), while
/// [`LIVE_FILL_KEY`] says the marks are not complete, and readers find
/// the live runs through `runs_status` meanwhile (`Reader::refresh_live`).
fn to11_live_runs(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(
        "ALTER TABLE files ADD COLUMN live INTEGER NOT NULL DEFAULT 0;
         UPDATE files SET live = 2 WHERE path IN
           (SELECT path FROM corrupt WHERE kind = 'run');",
    )?;
    conn.execute(
        "INSERT OR REPLACE INTO meta(key, value) VALUES (?1, '0')",
        [LIVE_FILL_KEY],
    )
    .map(|_| ())
}

/// The `meta` key present while an upgrade's marks of the live runs are
/// not complete (see [`to11_live_runs`]): the row id of the last run
/// marked, or `done` once every run is and only `files_live` is left.
pub(crate) const LIVE_FILL_KEY: &str = "live_fill";

/// Running runs [`fill_live_batch`] marks per batch: a page of `files`
/// each at most, so a writer waits for a few milliseconds.
const LIVE_BATCH: i64 = 5_000;

/// [`LIVE_BATCH`], or in tests the text builder's batch, so that a test
/// can stop the builder between two batches of a small project.
fn live_batch() -> i64 {
    #[cfg(feature = "testing")]
    if let Some(n) = logbook_store::testing::text_batch() {
        return n;
    }
    LIVE_BATCH
}

/// Whether the marks of the live runs are still to complete (see
/// [`to11_live_runs`]).
pub(crate) fn live_pending(conn: &Connection) -> rusqlite::Result<bool> {
    conn.prepare_cached("SELECT EXISTS (SELECT 1 FROM meta WHERE key = ?1)")?
        .query_row([LIVE_FILL_KEY], |r| r.get(0))
}

/// Marks one batch of the running runs and folders without a manifest
/// live, in row id order, or makes `files_live` once all are and ends
/// the fill; whether there was any to do. In the caller's transaction,
/// the text builder's (`text_build::text_batch`).
pub(crate) fn fill_live_batch(conn: &Connection) -> rusqlite::Result<bool> {
    let cursor: Option<String> = conn
        .prepare_cached("SELECT value FROM meta WHERE key = ?1")?
        .query_row([LIVE_FILL_KEY], |r| r.get(0))
        .optional()?;
    let Some(cursor) = cursor else {
        return Ok(false);
    };
    let Ok(after) = cursor.parse::<i64>() else {
        // Every run marked: the index over the marks, then the fill ends.
        if let Some((_, create)) = schema::INDEXES.iter().find(|(n, _)| *n == "files_live") {
            conn.execute_batch(&create.replacen("INDEX ", "INDEX IF NOT EXISTS ", 1))?;
        }
        conn.prepare_cached("DELETE FROM meta WHERE key = ?1")?
            .execute([LIVE_FILL_KEY])?;
        return Ok(true);
    };
    // `+rid`: found through `runs_status`, not by a walk of every row.
    let rows: Vec<(i64, String, String)> = conn
        .prepare_cached(
            "SELECT rid, folder, status FROM runs WHERE status IN ('running', 'unknown') \
             AND +rid > ?1 ORDER BY rid LIMIT ?2",
        )?
        .query_map(rusqlite::params![after, live_batch()], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })?
        .collect::<rusqlite::Result<_>>()?;
    let mut mark = conn.prepare_cached(
        "UPDATE files SET live = max(live, ?1) WHERE path = ?2 || '/manifest.json'",
    )?;
    for (_, folder, status) in &rows {
        let live = match status.as_str() {
            "running" => Live::Running,
            _ => Live::Unsettled,
        };
        mark.execute(rusqlite::params![live as i64, folder])?;
    }
    let next = match rows.last() {
        Some((rid, _, _)) if rows.len() as i64 == live_batch() => rid.to_string(),
        _ => "done".to_string(),
    };
    conn.prepare_cached("INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)")?
        .execute([LIVE_FILL_KEY, next.as_str()])?;
    Ok(true)
}

/// 12: what a transcript listing shows without reading the file (title,
/// source, messages), from the file: re-read. (12 also stamped the
/// project root, `ROOT_KEY`: [`migrate`] stores it with the last version.)
fn to12_transcript_titles(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(
        "ALTER TABLE transcripts ADD COLUMN title TEXT NOT NULL DEFAULT '';
         ALTER TABLE transcripts ADD COLUMN source TEXT NOT NULL DEFAULT '';
         ALTER TABLE transcripts ADD COLUMN messages INTEGER NOT NULL DEFAULT 0;",
    )?;
    mark_stale(conn, TRANSCRIPT_FILES)
}

/// 13: per-message full text and error rows of transcripts, from the
/// files: re-read.
fn to13_transcript_messages(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(&schema::messages_schema())?;
    mark_stale(conn, TRANSCRIPT_FILES)
}

/// 13: a transcript's models and measured usage, from the file: re-read.
fn to13_transcript_usage(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(
        "ALTER TABLE transcripts ADD COLUMN models TEXT NOT NULL DEFAULT '';
         ALTER TABLE transcripts ADD COLUMN usage TEXT;",
    )?;
    mark_stale(conn, TRANSCRIPT_FILES)
}

/// 14: `schema_history` (created by [`migrate`] before any step records
/// itself; this step names it in the history).
fn to14_schema_history(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(schema::HISTORY_SCHEMA)
}

/// 15: `runs.manifest` may hold a manifest stub while the text phase of a
/// two-phase rebuild runs (see `record::Reading::RowsOnly`), which a binary
/// of schema 14 would take for a manifest that does not parse and leave
/// out of its answers; the bump makes such a binary rebuild instead. An
/// index of 14 holds no stub, so nothing changes in it.
fn to15_manifest_stubs(_: &Connection) -> rusqlite::Result<()> {
    Ok(())
}

/// 16: each run's text row is keyed in find's order (`schema::text_key`),
/// which FTS5 cannot change in place: the table is made anew, empty, and
/// the text builder writes every run's text again while commands answer,
/// their text answers flagged partial (see `text_build`), as after the
/// rows phase of a lost index. A small index gets its text before the first
/// answer (see [`Upkeep::upgraded_in_place`]). The old table is renamed
/// aside, not dropped: a drop visits every page of it (0.5 s at 200,000
/// runs, measured), which the builder does instead a batch at a time
/// ([`retire_text_batch`]).
fn to16_text_keys(conn: &Connection) -> rusqlite::Result<()> {
    conn.execute_batch(&format!(
        "ALTER TABLE runs_fts RENAME TO {RETIRED_TEXT}; {}",
        schema::runs_fts()
    ))?;
    text_build::plan_runs_again(conn)
}

/// Where [`to16_text_keys`] put the runs' old text table until the text
/// builder has freed its pages.
const RETIRED_TEXT: &str = "runs_fts_retired";

/// FTS5 records of the retired table freed per batch: about a page each.
const RETIRE_BATCH: i64 = 20_000;

/// Frees one batch of the pages of the runs' retired text table (see
/// [`to16_text_keys`]), or drops the table once only FTS5's own records
/// (the averages, 1, and the structure, 10) are left, which its drop
/// reads; whether there was such a table. Its segments are never read
/// again, so deleting them under FTS5 is safe.
pub(crate) fn retire_text_batch(conn: &Connection) -> rusqlite::Result<bool> {
    let retired: bool = conn
        .prepare_cached(
            "SELECT count(*) > 0 FROM sqlite_schema WHERE type = 'table' AND name = ?1",
        )?
        .query_row([RETIRED_TEXT], |r| r.get(0))?;
    if !retired {
        return Ok(false);
    }
    let freed = conn.execute(
        &format!(
            "DELETE FROM {RETIRED_TEXT}_data WHERE id IN \
             (SELECT id FROM {RETIRED_TEXT}_data WHERE id > 10 LIMIT ?1)"
        ),
        [RETIRE_BATCH],
    )?;
    if freed == 0 {
        conn.execute_batch(&format!("DROP TABLE {RETIRED_TEXT}"))?;
    }
    Ok(true)
}

/// 14: schema 13 first shipped without `transcripts.models` and `usage`
/// (commit 582586b); an index of that build gets them now.
fn to14_usage_of_early_13(conn: &Connection) -> rusqlite::Result<()> {
    if has_column(conn, "transcripts", "models")? {
        return Ok(());
    }
    to13_transcript_usage(conn)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_version_after_the_oldest_has_a_step_and_steps_are_in_order() {
        for v in OLDEST + 1..=SCHEMA_VERSION {
            assert!(STEPS.iter().any(|s| s.to == v), "no step to {v}");
        }
        assert!(STEPS.windows(2).all(|w| w[0].to <= w[1].to));
        assert!(STEPS.iter().all(|s| s.to <= SCHEMA_VERSION));
    }
}
