//! Archived runs in the index (schema 14): rows like any run's, marked
//! `runs.archived`, found by their folder in `archive_folder`. `archive`,
//! `unarchive` and `delete` update them as they write
//! (`ops::write_through`); what another tool moved in or out of the archive
//! is caught by [`Upkeep::sync_archive`] (a name comparison, only when the
//! archive folder's mtime moved) and by a rebuild, which walks the archive
//! too. The live scan never takes the archive's rows for run folders of
//! the runs folder ([`archive_rel`]).

use std::collections::BTreeSet;

use rusqlite::Connection;

use crate::read::Reader;
use crate::upkeep::Upkeep;
use crate::upkeep::scan::RunChange;
use crate::{SyncReport, path_str};
use logbook_model::error::Result;
use logbook_model::run::MANIFEST_FILE;
use logbook_store::Project;

/// The `meta` key holding the archive folder's mtime as of the last
/// comparison of its folder names with the index.
const ARCHIVE_DIR_KEY: &str = "archive_dir_mtime";

/// The archive folder's path relative to the runs folder, with a trailing
/// `/`, when it lies inside it (the default `.archive/`): the index rows
/// under it are archived runs, not run folders of the runs folder.
pub(crate) fn archive_rel(p: &Project) -> Option<Vec<u8>> {
    let rel = p
        .config
        .archive_folder
        .strip_prefix(&p.config.agent_outputs_folder)
        .ok()?;
    let mut rel = path_str(rel).into_bytes();
    rel.push(b'/');
    Some(rel)
}

/// The partial index of the archived runs. It exists whenever any run row
/// is archived: the first archived row's insert makes it
/// ([`ensure_archived_index`]), so that an upgrade to schema 14 adds the
/// column alone, without a scan of every run (the runs table holds the
/// manifests: gigabytes at a million runs), and a project that never
/// archived pays nothing for the archive.
pub(crate) const ARCHIVED_INDEX: &str =
    "CREATE INDEX runs_archived ON runs(archived) WHERE archived = 1";

/// Makes [`ARCHIVED_INDEX`], if it is not there, before an archived run row
/// is written.
pub(crate) fn ensure_archived_index(tx: &Connection) -> rusqlite::Result<()> {
    tx.execute_batch(&crate::upkeep::rebuild::indexes_sql(|name| {
        name == "runs_archived"
    }))
}

impl Reader<'_> {
    /// Whether any run is archived: a look at the schema (no archived row
    /// without its index, see [`ARCHIVED_INDEX`]), then at that partial
    /// index, so a listing of the live set filters and counts what it left
    /// out only when there is something to leave out.
    pub fn has_archived(&self) -> Result<bool> {
        let ask = |sql: &str| -> Result<bool> {
            self.index
                .conn
                .prepare_cached(sql)
                .and_then(|mut st| st.query_row([], |r| r.get(0)))
                .map_err(self.index.err())
        };
        // Two statements: the second names an index the first checks for.
        Ok(ask(
            "SELECT EXISTS(SELECT 1 FROM sqlite_schema WHERE type = 'index' AND name = 'runs_archived')",
        )? && ask(
            "SELECT EXISTS(SELECT 1 FROM runs INDEXED BY runs_archived WHERE archived = 1)",
        )?)
    }
}

impl Upkeep<'_> {
    /// Brings the archived rows in step with the archive folder after the
    /// folder itself moved (an older archive taken out of the runs
    /// folder): a listing's quick check looks at the runs folder only.
    pub fn sync_archived(&mut self) -> Result<SyncReport> {
        self.sync_archive()
    }

    /// Brings the archived rows in step with the archive folder's run
    /// folders, when its mtime moved since the last comparison: folders new
    /// to the index are read (and marked archived), rows whose folder left
    /// are removed. Archived runs are never written by Logbook, so their
    /// manifests are not stamped here (a rebuild reads them again).
    pub(crate) fn sync_archive(&mut self) -> Result<SyncReport> {
        let dir = self.index.project.config.archive_folder.clone();
        // The folder's path is part of the stamp: an archive moved whole
        // (out of the runs folder, or back by hand) keeps its mtime.
        let stamp_of = |dir: &std::path::Path| {
            format!("{} {}", logbook_store::stamp::mtime_ns(dir), path_str(dir))
        };
        let stamp = stamp_of(&dir);
        if self.index.meta(ARCHIVE_DIR_KEY)?.as_deref() == Some(stamp.as_str()) {
            return Ok(SyncReport::default());
        }
        let mut on_disk = BTreeSet::new();
        for folder in logbook_store::runs::walk(&dir)? {
            on_disk.insert(path_str(&folder?.path));
        }
        let indexed: BTreeSet<String> = if !self.index.read().has_archived()? {
            BTreeSet::new()
        } else {
            let mut st = self
                .index
                .conn
                .prepare_cached("SELECT folder FROM runs WHERE archived = 1")
                .map_err(self.index.err())?;
            st.query_map([], |r| r.get(0))
                .map_err(self.index.err())?
                .collect::<rusqlite::Result<_>>()
                .map_err(self.index.err())?
        };
        let mut changes = vec![];
        for new in on_disk.difference(&indexed) {
            changes.push(RunChange::Read {
                path: std::path::Path::new(new).join(MANIFEST_FILE),
                new: true,
            });
        }
        for gone in indexed.difference(&on_disk) {
            changes.push(RunChange::Gone(path_str(
                &std::path::Path::new(gone).join(MANIFEST_FILE),
            )));
        }
        let report = if changes.is_empty() {
            SyncReport::default()
        } else {
            self.apply_run_changes(changes)?
        };
        // Seen only if nothing moved meanwhile and the mtime is old enough
        // to trust (see `sync::settled`).
        if stamp_of(&dir) == stamp && crate::upkeep::sync::settled(&dir, self.index.project.clock) {
            self.index.set_meta(ARCHIVE_DIR_KEY, &stamp)?;
        }
        Ok(report)
    }
}

/// Brings a schema-13 index to schema 14's archive in place: the
/// `runs.archived` column (0: no run was archived before schema 14, whose
/// walk never entered the archive); its partial index comes with the first
/// archived run (see [`ARCHIVED_INDEX`]).
pub(crate) fn migrate_13_to_14_archive(conn: &Connection) -> rusqlite::Result<()> {
    let has_column: bool = conn.query_row(
        "SELECT EXISTS(SELECT 1 FROM pragma_table_info('runs') WHERE name = 'archived')",
        [],
        |r| r.get(0),
    )?;
    if !has_column {
        conn.execute_batch("ALTER TABLE runs ADD COLUMN archived INTEGER NOT NULL DEFAULT 0")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_schema_13_runs_table_gains_the_archived_column_and_its_index_waits_for_an_archived_run() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE TABLE runs(rid INTEGER PRIMARY KEY, folder TEXT NOT NULL, id TEXT NOT NULL);
             INSERT INTO runs(folder, id) VALUES ('/r/a', 'a');",
        )
        .unwrap();
        migrate_13_to_14_archive(&conn).unwrap();
        // Twice is harmless (a migration interrupted and run again).
        migrate_13_to_14_archive(&conn).unwrap();
        let archived: i64 = conn
            .query_row("SELECT archived FROM runs WHERE id = 'a'", [], |r| r.get(0))
            .unwrap();
        assert_eq!(archived, 0);
        let indexed = |conn: &Connection| -> bool {
            conn.query_row(
                "SELECT EXISTS(SELECT 1 FROM sqlite_schema WHERE name = 'runs_archived')",
                [],
                |r| r.get(0),
            )
            .unwrap()
        };
        // No scan of every run for an index nothing is in yet.
        assert!(!indexed(&conn));
        ensure_archived_index(&conn).unwrap();
        ensure_archived_index(&conn).unwrap();
        assert!(indexed(&conn));
    }
}
