//! Applying a record: what was read from a file, or a writer's record, is
//! stored (or the file forgotten when it is gone) with the stamp sync
//! compares next time, all in the caller's transaction.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension, params};

use crate::schema::message_rowid;
use crate::write::record::{ABSENT_STAMP, Inner, Record, WorkflowRow};
use crate::write::run_rows::{Fresh, remove_run, store_run};
use crate::{CorruptEntry, Kind, SyncReport, path_str};
use logbook_model::clock;
use logbook_model::run::{RunStatus, UNKNOWN_STATUS};
use logbook_model::transcript::Summary;
use logbook_model::transcript::find::{MAX_FOUND_MESSAGES, MessageText, said_by};
use logbook_store::run_outputs::encode_outs;

/// Stores one record read or written, by kind, in the caller's transaction.
fn store_record(tx: &Connection, r: &Inner, fresh: Fresh) -> rusqlite::Result<()> {
    match r {
        Inner::Run(row) => store_run(tx, row, fresh),
        Inner::WorkSession {
            path,
            id,
            status,
            archived,
            last_updated,
            record,
        } => {
            tx.execute("DELETE FROM corrupt WHERE path = ?1", [path_str(path)])?;
            tx.execute(
                "INSERT OR REPLACE INTO work_sessions(path, id, status, archived, last_updated, record) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![path_str(path), id, status, archived, last_updated, record],
            )?;
            Ok(())
        }
        Inner::Transcript(t, said, found) => {
            store_transcript(tx, t, said, found, matches!(fresh, Fresh::RowsOnly))
        }
        Inner::WorkflowState(w) => store_workflow_state(tx, w),
        Inner::Corrupt { .. } => Ok(()),
    }
}

/// Stores a transcript's row, its full-text row and its message rows
/// (`rows_only`: its row and errors alone, the text phase writes the rest).
fn store_transcript(
    tx: &Connection,
    t: &Summary,
    said: &str,
    found: &MessageText,
    rows_only: bool,
) -> rusqlite::Result<()> {
    tx.execute("DELETE FROM corrupt WHERE path = ?1", [path_str(&t.file)])?;
    // Updated in place: the rowid is the FTS row's, so a rewrite
    // replaces that row rather than leaving the old words behind.
    let rid: Option<i64> = tx
        .prepare_cached("SELECT rid FROM transcripts WHERE path = ?1")?
        .query_row([path_str(&t.file)], |r| r.get(0))
        .optional()?;
    if let Some(rid) = rid {
        tx.prepare_cached("DELETE FROM transcripts_fts WHERE rowid = ?1")?
            .execute([rid])?;
    }
    upsert_transcript_row(tx, t, rid)?;
    let had_row = rid.is_some();
    let rid = match rid {
        Some(rid) => rid,
        None => tx.last_insert_rowid(),
    };
    if rows_only {
        // The text phase writes the text rows; the errors are the
        // rows phase's (`transcript errors`).
        return store_errors(tx, rid, found);
    }
    tx.prepare_cached("INSERT INTO transcripts_fts(rowid, said) VALUES (?1, ?2)")?
        .execute(params![rid, said])?;
    if found.from > 0 && !had_row {
        // Rows for the messages before `from` were never stored
        // (the index was lost since the import's checkpoint):
        // every message is read again from the file just written.
        let all = logbook_store::transcript::read_for_index(&t.file, 0)
            .ok()
            .and_then(|r| r.found)
            .unwrap_or_default();
        return store_messages(tx, rid, &all, &t.file);
    }
    store_messages(tx, rid, found, &t.file)
}

/// Inserts or rewrites the `transcripts` row of `t` (under `rid` when it
/// has one already).
fn upsert_transcript_row(tx: &Connection, t: &Summary, rid: Option<i64>) -> rusqlite::Result<()> {
    tx.prepare_cached(
        "INSERT INTO transcripts(rid, path, id, kind, workdir, started_at, last_active_at, \
         last_active_ms, tokens, parent, repository, title, source, messages, models, usage) \
         VALUES (?10, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?11, ?12, ?13, ?14, ?15, ?16) \
         ON CONFLICT(path) DO UPDATE SET id = excluded.id, kind = excluded.kind, \
         workdir = excluded.workdir, started_at = excluded.started_at, \
         last_active_at = excluded.last_active_at, last_active_ms = excluded.last_active_ms, \
         tokens = excluded.tokens, parent = excluded.parent, repository = excluded.repository, \
         title = excluded.title, source = excluded.source, messages = excluded.messages, \
         models = excluded.models, usage = excluded.usage",
    )?
    .execute(params![
        path_str(&t.file),
        t.id,
        t.kind.as_str(),
        t.workdir,
        t.started_at,
        t.last_active_at,
        clock::parse(&t.last_active_at).map(|ts| ts.as_millisecond()),
        t.latest_total_tokens as i64,
        t.parent_session_id,
        rid,
        t.repository
            .as_ref()
            .map(|r| r.to_value(logbook_model::repo::Casing::Camel).to_string()),
        t.title,
        t.source,
        t.messages as i64,
        t.models.join("\t"),
        t.usage.as_ref().and_then(|u| serde_json::to_string(u).ok())
    ])?;
    Ok(())
}

/// Stores a work session's workflow state row.
fn store_workflow_state(tx: &Connection, w: &WorkflowRow) -> rusqlite::Result<()> {
    tx.execute("DELETE FROM corrupt WHERE path = ?1", [path_str(&w.path)])?;
    tx.execute(
        "INSERT OR REPLACE INTO workflow_states(path, session_id, mode, phase, active_agent, \
         version, updated_at, invocations, pending_handoffs) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
        params![
            path_str(&w.path),
            w.session_id,
            w.mode,
            w.phase,
            w.active_agent,
            w.version as i64,
            w.updated_at,
            w.invocations as i64,
            w.pending_handoffs as i64
        ],
    )?;
    Ok(())
}

/// Replaces the message rows of transcript `rid` from message
/// `found.from` on with `found`'s; the rows before it stay. The text of the
/// messages past `found.cut` is read from `file`, one message at a time.
fn store_messages(
    tx: &Connection,
    rid: i64,
    found: &MessageText,
    file: &Path,
) -> rusqlite::Result<()> {
    forget_messages(tx, rid, found.from)?;
    let mut insert =
        tx.prepare_cached("INSERT INTO transcript_messages_fts(rowid, said) VALUES (?1, ?2)")?;
    for (i, said) in found.said.iter().enumerate() {
        if !said.trim().is_empty() {
            insert.execute(params![message_rowid(rid, found.from + i), said])?;
        }
    }
    if let Some(cut) = found.cut {
        let mut failed = None;
        // A file gone or changed since is read again by the next sync (its
        // stamp moved); what was inserted until then stays.
        let _ = logbook_store::transcript::each_message_from(file, cut, &mut |at, m| {
            let said = said_by(m);
            if at >= MAX_FOUND_MESSAGES || said.trim().is_empty() {
                return Ok(());
            }
            match insert.execute(params![message_rowid(rid, at), said]) {
                Ok(_) => Ok(()),
                Err(e) => {
                    let stop = crate::index_error(file, &e);
                    failed = Some(e);
                    Err(stop)
                }
            }
        });
        if let Some(e) = failed {
            return Err(e);
        }
    }
    store_errors(tx, rid, found)
}

/// The rows of `transcript_errors` for `found`'s failed tool results.
fn store_errors(tx: &Connection, rid: i64, found: &MessageText) -> rusqlite::Result<()> {
    let mut insert =
        tx.prepare_cached("INSERT OR IGNORE INTO transcript_errors(rid, message) VALUES (?1, ?2)")?;
    for at in &found.errors {
        insert.execute(params![rid, *at as i64])?;
    }
    Ok(())
}

/// Writes the text rows of transcript `rid` from what a whole read of its
/// file says (the text phase of a two-phase rebuild, see `text_build`):
/// its `transcripts_fts` row and every message's row, each deleted first,
/// since a writer may have written some of them meanwhile.
pub(crate) fn replace_transcript_text(
    tx: &Connection,
    rid: i64,
    rec: &Record,
) -> rusqlite::Result<()> {
    let Record(Inner::Transcript(t, said, found)) = rec else {
        return Ok(());
    };
    tx.prepare_cached("DELETE FROM transcripts_fts WHERE rowid = ?1")?
        .execute([rid])?;
    tx.prepare_cached("INSERT INTO transcripts_fts(rowid, said) VALUES (?1, ?2)")?
        .execute(params![rid, said])?;
    store_messages(tx, rid, found, &t.file)
}

/// Removes the message rows of transcript `rid` from message `from` on.
fn forget_messages(tx: &Connection, rid: i64, from: usize) -> rusqlite::Result<()> {
    tx.prepare_cached("DELETE FROM transcript_messages_fts WHERE rowid >= ?1 AND rowid < ?2")?
        .execute(params![message_rowid(rid, from), message_rowid(rid + 1, 0)])?;
    tx.prepare_cached("DELETE FROM transcript_errors WHERE rid = ?1 AND message >= ?2")?
        .execute(params![rid, from as i64])?;
    Ok(())
}

pub(crate) fn remove_record(tx: &Connection, kind: Kind, path: &Path) -> rusqlite::Result<()> {
    let p = path_str(path);
    match kind {
        Kind::Run => {
            if let Some(folder) = path.parent() {
                remove_run(tx, &path_str(folder))?;
            }
        }
        Kind::WorkSession => {
            tx.execute("DELETE FROM work_sessions WHERE path = ?1", [&p])?;
        }
        Kind::Transcript => {
            tx.execute(
                "DELETE FROM transcripts_fts WHERE rowid IN (SELECT rid FROM transcripts WHERE path = ?1)",
                [&p],
            )?;
            let rid: Option<i64> = tx
                .prepare_cached("SELECT rid FROM transcripts WHERE path = ?1")?
                .query_row([&p], |r| r.get(0))
                .optional()?;
            if let Some(rid) = rid {
                forget_messages(tx, rid, 0)?;
            }
            tx.execute("DELETE FROM transcripts WHERE path = ?1", [&p])?;
        }
        Kind::WorkflowState => {
            tx.execute("DELETE FROM workflow_states WHERE path = ?1", [&p])?;
        }
    }
    tx.execute("DELETE FROM corrupt WHERE path = ?1", [&p])?;
    tx.execute("DELETE FROM files WHERE path = ?1", [&p])?;
    Ok(())
}

/// Stores what was read from `path` (or forgets it when the file is gone),
/// with the stamp sync compares next time.
pub(crate) fn apply(
    tx: &Connection,
    kind: Kind,
    path: &Path,
    rec: Option<Record>,
    stamp: Option<Stamp>,
    report: Option<&mut SyncReport>,
    fresh: Fresh,
) -> rusqlite::Result<()> {
    let (out_stamp, outs) = match &rec {
        Some(Record(Inner::Run(row))) => (
            row.out_stamp,
            Some(encode_outs(row.outputs.iter().map(|o| o.0.as_str()))),
        ),
        _ => (0, None),
    };
    let live = match &rec {
        Some(Record(Inner::Run(row))) if row.status == RunStatus::Running.as_str() => Live::Running,
        Some(Record(Inner::Run(row))) if row.status == UNKNOWN_STATUS => Live::Unsettled,
        Some(Record(Inner::Run(row))) if row.seed_invalid => Live::Unsettled,
        Some(Record(Inner::Corrupt { .. })) if kind == Kind::Run => Live::Unsettled,
        _ => Live::Settled,
    };
    match rec {
        None => return remove_record(tx, kind, path),
        Some(Record(Inner::Corrupt { reason })) => {
            if matches!(fresh, Fresh::No | Fresh::FtsCleared { .. }) {
                remove_record(tx, kind, path)?;
            }
            tx.execute(
                "INSERT OR REPLACE INTO corrupt(path, kind, reason) VALUES (?1, ?2, ?3)",
                params![path_str(path), kind.as_str(), reason],
            )?;
            if let Some(report) = report {
                report.corrupt.push(CorruptEntry {
                    path: path.to_path_buf(),
                    kind,
                    reason,
                });
            }
        }
        Some(Record(r)) => store_record(tx, &r, fresh)?,
    }
    if let Some((size, mtime)) = stamp {
        // An upsert keeps the row where it is; INSERT OR REPLACE would
        // delete it and insert it again under a new rowid (more pages).
        tx.prepare_cached(
            "INSERT INTO files(path, kind, size, mtime_ns, out_stamp, outs, live) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) \
             ON CONFLICT(path) DO UPDATE SET kind = excluded.kind, size = excluded.size, \
             mtime_ns = excluded.mtime_ns, out_stamp = excluded.out_stamp, outs = excluded.outs, \
             live = excluded.live",
        )?
        .execute(params![
            path_str(path),
            kind.as_str(),
            size,
            mtime,
            out_stamp,
            outs,
            live as i64
        ])?;
    }
    Ok(())
}

/// How likely a run's manifest is to change under a listing while no
/// folder's mtime moves (`files.live`, see `Reader::refresh_live`).
#[derive(Clone, Copy)]
pub(crate) enum Live {
    /// Finished: left to verify-on-read and sync.
    Settled = 0,
    /// Running: its engine finishes it by rewriting the manifest in place.
    Running = 1,
    /// A folder without a manifest, or a manifest that did not parse:
    /// either may be written or repaired at any time.
    Unsettled = 2,
}

/// What sync compares of a followed file: its size and mtime (ns).
pub(crate) use logbook_store::stamp::Stamp;

/// The stamp of a file as sync would take it, or `None` when it is gone.
pub(crate) fn stamp_now(path: &Path) -> Option<Stamp> {
    logbook_store::stamp::of_path(path)
}

/// The stamp a re-read of a run's manifest would store now: the file's,
/// [`ABSENT_STAMP`] when its folder is there without one, `None` when the
/// folder is gone.
pub(crate) fn manifest_stamp(path: &Path) -> Option<Stamp> {
    match logbook_store::stamp::probe(path) {
        Ok(Some(stamp)) => Some(stamp),
        Ok(None) if path.parent().is_some_and(logbook_store::fs::is_folder) => Some(ABSENT_STAMP),
        _ => None,
    }
}
