//! A run's rows (`runs`, `outputs`, `edges`, `tags`, `runs_fts`): stored
//! new, rewritten in place touching only what differs, or removed.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension, params};

use crate::fulltext::manifest_text;
use crate::path_str;
use crate::schema::{text_key, text_second};
use crate::write::record::{Inner, Record, RunRow, fts_agent, is_manifest_stub};
use logbook_model::run::{MANIFEST_FILE, Manifest};

/// What the index may already hold of a record about to be stored.
pub(crate) enum Fresh<'a> {
    /// Nothing (a rebuild's new index).
    Yes,
    /// Nothing, and the runs' full-text rows go to another thread, which
    /// writes them into another file (a rebuild's new index, see
    /// `rebuild::FullText`): they are handed over here instead.
    TextAside(&'a mut Vec<FtsDoc>),
    /// Nothing, and no full-text rows at all: the rows phase of a
    /// two-phase rebuild, whose text phase writes them (see `text_build`),
    /// storing records read with `record::Reading::RowsOnly`.
    RowsOnly,
    /// Anything.
    No,
    /// Anything, but a run's FTS row was already deleted by
    /// [`clear_stale_fts`] if its text changes; `same_text`: what that
    /// found (not worked out a second time).
    FtsCleared { same_text: bool },
}

/// A run's row of `runs_fts`, as [`Fresh::TextAside`] hands it over.
pub(crate) struct FtsDoc {
    /// Its rowid, the run's [`text_key`].
    pub(crate) key: i64,
    pub(crate) agent: String,
    pub(crate) workflow: String,
    pub(crate) body: String,
}

pub(crate) fn store_run(tx: &Connection, row: &RunRow, fresh: Fresh) -> rusqlite::Result<()> {
    let folder = path_str(&row.folder);
    if matches!(fresh, Fresh::No | Fresh::FtsCleared { .. }) {
        tx.prepare_cached("DELETE FROM corrupt WHERE path = ?1")?
            .execute([path_str(&row.folder.join(MANIFEST_FILE))])?;
        let cleared = match fresh {
            Fresh::FtsCleared { same_text } => Some(same_text),
            _ => None,
        };
        if update_run(tx, &folder, row, cleared)? {
            return Ok(());
        }
        remove_run(tx, &folder)?;
    }
    if row.archived {
        crate::upkeep::archive::ensure_archived_index(tx)?;
    }
    let mut ins = tx.prepare_cached(
        "INSERT INTO runs(folder, id, agent, workflow, status, user, started_at, started_ns, completed_at, title, manifest, archived) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
    )?;
    ins.execute(params![
        folder,
        row.id,
        row.agent,
        row.workflow,
        row.status,
        row.user,
        row.started_at,
        row.started_ns,
        row.completed_at,
        row.title,
        row.manifest,
        row.archived
    ])?;
    let rid = tx.last_insert_rowid();
    let mut out = tx.prepare_cached(
        "INSERT OR REPLACE INTO outputs(rid, seq, file, type, description, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    for (seq, (file, ty, desc, created)) in row.outputs.iter().enumerate() {
        out.execute(params![rid, seq as i64, file, ty, desc, created])?;
    }
    let mut edge =
        tx.prepare_cached("INSERT OR IGNORE INTO edges(child, parent, rid) VALUES (?1, ?2, ?3)")?;
    for parent in &row.parents {
        edge.execute(params![row.id, parent, rid])?;
    }
    let mut tag = tx.prepare_cached("INSERT OR IGNORE INTO tags(rid, tag) VALUES (?1, ?2)")?;
    for t in &row.tags {
        tag.execute(params![rid, t])?;
    }
    if let Fresh::TextAside(docs) = fresh {
        docs.push(FtsDoc {
            key: key_of(rid, row.started_ns)?,
            agent: row.fts_agent.clone(),
            workflow: row.fts_workflow.clone(),
            body: row.fts_body(),
        });
        return Ok(());
    }
    if matches!(fresh, Fresh::RowsOnly) {
        return Ok(());
    }
    insert_fts(tx, rid, row)
}

/// [`text_key`], or an error saying what to do when there is none.
fn key_of(rid: i64, started_ns: Option<i64>) -> rusqlite::Result<i64> {
    text_key(rid, started_ns).ok_or_else(|| {
        rusqlite::Error::ToSqlConversionFailure(
            format!(
                "run row id {rid} is past the full-text index's 2^30: rebuilding the index numbers the runs afresh"
            )
            .into(),
        )
    })
}

/// The stored `started_ns` of the run under `rid` (`None` when there is no
/// such run).
pub(crate) fn stored_start(tx: &Connection, rid: i64) -> rusqlite::Result<Option<Option<i64>>> {
    tx.prepare_cached("SELECT started_ns FROM runs WHERE rid = ?1")?
        .query_row([rid], |r| r.get(0))
        .optional()
}

/// The `runs_fts` rowid of the run stored under `rid`, from its row as it
/// is now (`None` when there is no such run).
pub(crate) fn stored_text_key(tx: &Connection, rid: i64) -> rusqlite::Result<Option<i64>> {
    stored_start(tx, rid)?.map(|s| key_of(rid, s)).transpose()
}

/// Deletes the `runs_fts` row of the run stored under `rid`, keyed by its
/// row as it is now: before the row's start changes or the row goes.
pub(crate) fn delete_fts(tx: &Connection, rid: i64) -> rusqlite::Result<()> {
    if let Some(key) = stored_text_key(tx, rid)? {
        tx.prepare_cached("DELETE FROM runs_fts WHERE rowid = ?1")?
            .execute([key])?;
    }
    Ok(())
}

/// The one insert of a run's `runs_fts` row (its rowid free).
fn insert_fts(tx: &Connection, rid: i64, row: &RunRow) -> rusqlite::Result<()> {
    tx.prepare_cached("INSERT INTO runs_fts(rowid, agent, workflow, body) VALUES (?1, ?2, ?3, ?4)")?
        .execute(params![
            key_of(rid, row.started_ns)?,
            row.fts_agent,
            row.fts_workflow,
            row.fts_body()
        ])
        .map(|_| ())
}

/// Writes the `runs_fts` rows of runs already in `runs` (the text phase of
/// a two-phase rebuild): each row deleted first, since a writer may have
/// written it meanwhile (a contentless table would otherwise keep both),
/// and all the deletes before all the inserts (see [`clear_stale_fts`]).
pub(crate) fn replace_fts(tx: &Connection, rows: &[(i64, RunRow)]) -> rusqlite::Result<()> {
    for (rid, _) in rows {
        delete_fts(tx, *rid)?;
    }
    for (rid, row) in rows {
        insert_fts(tx, *rid, row)?;
    }
    Ok(())
}

/// Rewrites an indexed run in place under its rowid, touching only what
/// differs: a write changes a few fields of one run (an output registered,
/// a status set), and every page SQLite dirties is written to the WAL at
/// commit, so removing and re-inserting the run (a new rowid: every
/// secondary index entry, every output and edge row moved) made most of
/// the commit. The FTS row is replaced only when the run's text may have
/// changed: tokenizing a run's text and writing its FTS segment cost more
/// than the rest of the update, and re-registering an output or finishing
/// a run changes none of it. `cleared`: [`clear_stale_fts`] already
/// deleted a changed FTS row, and says whether the text stays. Returns
/// `false` when the run is not indexed.
fn update_run(
    tx: &Connection,
    folder: &str,
    row: &RunRow,
    cleared: Option<bool>,
) -> rusqlite::Result<bool> {
    let Some(old) = indexed_run(tx, folder)? else {
        return Ok(false);
    };
    if old.id != row.id {
        return Ok(false);
    }
    let same_text = match cleared {
        Some(same) => same,
        None => same_fts_row(tx, folder, (&old.manifest, old.started_ns), row)?,
    };
    if !same_text && cleared.is_none() {
        // Keyed by the start the row still has.
        delete_fts(tx, old.rid)?;
    }
    // Every column, output, edge, tag and FTS row of a run is made from its
    // folder and manifest alone: the same manifest over the same output
    // files (an output registered again, a retried call) leaves all of them
    // as they are. Only the file's stamp, stored by the caller, moves.
    if same_text && old.manifest == row.manifest {
        return Ok(true);
    }
    update_run_columns(tx, &old, row)?;
    update_outputs(tx, old.rid, row)?;
    update_edges(tx, old.rid, row)?;
    update_tags(tx, old.rid, row)?;
    if !same_text {
        insert_fts(tx, old.rid, row)?;
    }
    Ok(true)
}

/// What [`update_run`] compares a new row with: the indexed columns and
/// the stored manifest of the run in a folder.
struct IndexedRun {
    rid: i64,
    id: String,
    agent: String,
    workflow: String,
    status: String,
    started_ns: Option<i64>,
    manifest: String,
}

/// The run indexed for `folder`, if any.
fn indexed_run(tx: &Connection, folder: &str) -> rusqlite::Result<Option<IndexedRun>> {
    tx.prepare_cached(
        "SELECT rid, id, agent, workflow, status, started_ns, manifest FROM runs WHERE folder = ?1",
    )?
    .query_row([folder], |r| {
        Ok(IndexedRun {
            rid: r.get(0)?,
            id: r.get(1)?,
            agent: r.get(2)?,
            workflow: r.get(3)?,
            status: r.get(4)?,
            started_ns: r.get(5)?,
            manifest: r.get(6)?,
        })
    })
    .optional()
}

/// Rewrites the run's own columns. Only columns in an UPDATE's SET list
/// cost index writes, so the indexed ones are set only when one of them
/// changed.
fn update_run_columns(tx: &Connection, old: &IndexedRun, row: &RunRow) -> rusqlite::Result<()> {
    let indexed_same = (
        old.agent.as_str(),
        old.workflow.as_str(),
        old.status.as_str(),
        old.started_ns,
    ) == (
        row.agent.as_str(),
        row.workflow.as_str(),
        row.status.as_str(),
        row.started_ns,
    );
    if indexed_same {
        tx.prepare_cached(
            "UPDATE runs SET user = ?2, started_at = ?3, completed_at = ?4, title = ?5, \
             manifest = ?6 WHERE rid = ?1",
        )?
        .execute(params![
            old.rid,
            row.user,
            row.started_at,
            row.completed_at,
            row.title,
            row.manifest
        ])?;
    } else {
        tx.prepare_cached(
            "UPDATE runs SET agent = ?2, workflow = ?3, status = ?4, user = ?5, \
             started_at = ?6, started_ns = ?7, completed_at = ?8, title = ?9, manifest = ?10 \
             WHERE rid = ?1",
        )?
        .execute(params![
            old.rid,
            row.agent,
            row.workflow,
            row.status,
            row.user,
            row.started_at,
            row.started_ns,
            row.completed_at,
            row.title,
            row.manifest
        ])?;
    }
    Ok(())
}

/// Rewrites the outputs of run `rid` that differ from `row`'s, seat by seat.
fn update_outputs(tx: &Connection, rid: i64, row: &RunRow) -> rusqlite::Result<()> {
    let old_outputs = outputs_of(tx, rid)?;
    let mut put = tx.prepare_cached(
        "INSERT OR REPLACE INTO outputs(rid, seq, file, type, description, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    for (seq, o) in row.outputs.iter().enumerate() {
        if old_outputs.get(seq) != Some(o) {
            put.execute(params![rid, seq as i64, o.0, o.1, o.2, o.3])?;
        }
    }
    if old_outputs.len() > row.outputs.len() {
        tx.prepare_cached("DELETE FROM outputs WHERE rid = ?1 AND seq >= ?2")?
            .execute(params![rid, row.outputs.len() as i64])?;
    }
    Ok(())
}

/// Rewrites the lineage edges of run `rid` when its parents changed.
fn update_edges(tx: &Connection, rid: i64, row: &RunRow) -> rusqlite::Result<()> {
    let old_parents = parents_of(tx, rid)?;
    let mut parents = row.parents.clone();
    parents.sort();
    parents.dedup();
    if old_parents != parents {
        tx.prepare_cached("DELETE FROM edges WHERE rid = ?1")?
            .execute([rid])?;
        let mut edge = tx.prepare_cached(
            "INSERT OR IGNORE INTO edges(child, parent, rid) VALUES (?1, ?2, ?3)",
        )?;
        for parent in &parents {
            edge.execute(params![row.id, parent, rid])?;
        }
    }
    Ok(())
}

/// Rewrites the tags of run `rid` when they changed.
fn update_tags(tx: &Connection, rid: i64, row: &RunRow) -> rusqlite::Result<()> {
    let old_tags = tags_of(tx, rid)?;
    if old_tags != row.tags {
        tx.prepare_cached("DELETE FROM tags WHERE rid = ?1")?
            .execute([rid])?;
        let mut tag = tx.prepare_cached("INSERT OR IGNORE INTO tags(rid, tag) VALUES (?1, ?2)")?;
        for t in &row.tags {
            tag.execute(params![rid, t])?;
        }
    }
    Ok(())
}

/// A run's output as its row holds it: file, type, description,
/// creation time.
pub(crate) type OutputRow = (String, String, String, String);

/// The outputs of run `rid`, in manifest order: what an update compares
/// and what a push sends.
pub(crate) fn outputs_of(tx: &Connection, rid: i64) -> rusqlite::Result<Vec<OutputRow>> {
    tx.prepare_cached(
        "SELECT file, type, description, created_at FROM outputs WHERE rid = ?1 ORDER BY seq",
    )?
    .query_map([rid], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
    .collect()
}

/// The runs run `rid` builds on, sorted.
pub(crate) fn parents_of(tx: &Connection, rid: i64) -> rusqlite::Result<Vec<String>> {
    tx.prepare_cached("SELECT parent FROM edges WHERE rid = ?1 ORDER BY parent")?
        .query_map([rid], |r| r.get(0))?
        .collect()
}

/// The tags of run `rid`, sorted.
pub(crate) fn tags_of(tx: &Connection, rid: i64) -> rusqlite::Result<Vec<String>> {
    tx.prepare_cached("SELECT tag FROM tags WHERE rid = ?1 ORDER BY tag")?
        .query_map([rid], |r| r.get(0))?
        .collect()
}

/// Whether `row` would give the run the FTS row it has: the same text
/// under the same key (the same start second, see [`text_key`]). The
/// contentless table keeps no text, but its row was written in the same
/// transaction as the run's stored manifest and its output files' stamp:
/// the same manifest text and the same stamp (every output's name, size,
/// times and inode) make the same text. `old`: the run's stored manifest
/// and start.
fn same_fts_row(
    tx: &Connection,
    folder: &str,
    (old_manifest, old_started): (&str, Option<i64>),
    row: &RunRow,
) -> rusqlite::Result<bool> {
    if text_second(old_started) != text_second(row.started_ns) {
        return Ok(false);
    }
    let manifest_path = path_str(&Path::new(folder).join(MANIFEST_FILE));
    let old_stamp: Option<i64> = tx
        .prepare_cached("SELECT out_stamp FROM files WHERE path = ?1")?
        .query_row([manifest_path], |r| r.get(0))
        .optional()?;
    if old_stamp != Some(row.out_stamp) {
        return Ok(false);
    }
    if old_manifest == row.manifest {
        return Ok(true);
    }
    if is_manifest_stub(old_manifest) {
        // The rows phase wrote no text row for it.
        return Ok(false);
    }
    let Ok(old) = serde_json::from_str::<Manifest>(old_manifest) else {
        return Ok(false);
    };
    Ok(old.workflow.name == row.fts_workflow
        && fts_agent(&old) == row.fts_agent
        && manifest_text(&old) == row.fts_manifest)
}

/// The first half of storing `rec` over the run indexed for `folder`, done
/// for a whole group of runs before any is stored: deletes the run's FTS
/// row if its text will change (or the whole run, if it will not be
/// updated in place), so that the group's FTS deletes all come before its
/// inserts. Why: a delete from the contentless_delete FTS table flushes
/// the pending inserts to a new segment and merges; interleaved, that
/// happened once per run. Then [`apply`](crate::write::apply::apply) with
/// [`Fresh::FtsCleared`] and what this returns: whether the run keeps its
/// FTS row (its text is the same; `false` too when there is no run left to
/// update in place).
pub(crate) fn clear_stale_fts(
    tx: &Connection,
    folder: &str,
    rec: Option<&Record>,
) -> rusqlite::Result<bool> {
    let Some(Record(Inner::Run(row))) = rec else {
        // Gone or corrupt: removed whole (`apply` then finds nothing).
        return remove_run(tx, folder).map(|()| false);
    };
    let old: Option<(i64, String, String, Option<i64>)> = tx
        .prepare_cached("SELECT rid, id, manifest, started_ns FROM runs WHERE folder = ?1")?
        .query_row([folder], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })
        .optional()?;
    let Some((rid, id, old_manifest, old_started)) = old else {
        return Ok(false);
    };
    if id != row.id {
        return remove_run(tx, folder).map(|()| false);
    }
    let same = same_fts_row(tx, folder, (&old_manifest, old_started), row)?;
    if !same {
        delete_fts(tx, rid)?;
    }
    Ok(same)
}

pub(crate) fn remove_run(tx: &Connection, folder: &str) -> rusqlite::Result<()> {
    let rid: Option<i64> = tx
        .prepare_cached("SELECT rid FROM runs WHERE folder = ?1")?
        .query_row([folder], |r| r.get(0))
        .optional()?;
    if let Some(rid) = rid {
        delete_fts(tx, rid)?;
        for q in [
            "DELETE FROM outputs WHERE rid = ?1",
            "DELETE FROM edges WHERE rid = ?1",
            "DELETE FROM tags WHERE rid = ?1",
            "DELETE FROM runs WHERE rid = ?1",
        ] {
            tx.prepare_cached(q)?.execute([rid])?;
        }
    }
    Ok(())
}
