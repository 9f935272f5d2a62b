//! Records: what one file contributes to the index, built either from the
//! value a writer just wrote ([`Record::run`], [`Record::work_session`],
//! [`Record::transcript`]) or by reading the file (sync, repair), and stored
//! or removed in the caller's transaction.

use std::fs;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension, params};

use super::fulltext::{encode_outs, manifest_text, output_text, outputs_stamp};
use super::{CorruptEntry, Kind, SyncReport, mtime_ns, path_str, stamp_of};
use crate::clock;
use crate::error::Error;
use crate::model::ids::RunId;
use crate::model::run::{MANIFEST_FILE, Manifest, Run, parse_manifest};
use crate::model::transcript::{Kind as TranscriptKind, Metadata, Summary, parse_file_name};
use crate::model::work_session::{SessionStatus, WorkSession};
use crate::model::workflow::SessionState;
use crate::store::{self, Project};

/// What one file contributes to the index, ready to store.
#[derive(Debug)]
pub struct Record(Inner);

#[derive(Debug)]
pub(super) enum Inner {
    Run(Box<RunRow>),
    WorkSession {
        path: PathBuf,
        id: String,
        status: String,
        archived: bool,
        last_updated: String,
        record: String,
    },
    Transcript(Box<Summary>, String),
    WorkflowState(Box<WorkflowRow>),
    Corrupt {
        reason: String,
    },
}

#[derive(Debug)]
pub(super) struct WorkflowRow {
    path: PathBuf,
    session_id: String,
    mode: String,
    phase: Option<String>,
    active_agent: Option<String>,
    version: u64,
    updated_at: String,
    invocations: u64,
    pending_handoffs: u64,
}

#[derive(Debug)]
pub(super) struct RunRow {
    folder: PathBuf,
    id: String,
    agent: String,
    workflow: String,
    status: String,
    user: Option<String>,
    started_at: String,
    started_ns: Option<i64>,
    completed_at: Option<String>,
    title: String,
    manifest: String,
    outputs: Vec<(String, String, String, String)>,
    parents: Vec<String>,
    tags: Vec<String>,
    fts_agent: String,
    fts_workflow: String,
    /// The manifest's own searchable text, the start of the FTS `body`.
    fts_manifest: String,
    /// The registered output files' text, the rest of the `body`; `None`
    /// until read. A writer's record leaves it unread: it is read when the
    /// row is stored, and only if the run's text may have changed.
    fts_outputs: Option<String>,
    /// The output files' stamp, taken before their text was read.
    out_stamp: i64,
}

impl RunRow {
    /// The FTS `body` column: the manifest's text, then the output files'.
    fn fts_body(&self) -> String {
        let mut body = self.fts_manifest.clone();
        match &self.fts_outputs {
            Some(text) => body.push_str(text),
            None => body.push_str(&outputs_text(&self.folder, &self.outputs)),
        }
        body
    }
}

/// The text of a run's registered output files, each followed by a newline.
fn outputs_text(folder: &Path, outputs: &[(String, String, String, String)]) -> String {
    let mut text = String::new();
    for (file, ..) in outputs {
        if let Some(t) = output_text(folder, file) {
            text.push_str(&t);
            text.push('\n');
        }
    }
    text
}

/// The FTS `agent` column of a manifest.
fn fts_agent(m: &Manifest) -> String {
    format!(
        "{}\n{}",
        m.agent.name,
        m.agent.title.as_deref().unwrap_or_default()
    )
}

impl Record {
    /// The record of a run as its writer holds it (the manifest is not
    /// parsed again; the registered output files are read for full text
    /// when it is stored, if the run's text may have changed).
    pub fn run(run: &Run) -> Record {
        Record(match run_row(run, false) {
            Ok(row) => Inner::Run(Box::new(row)),
            Err(reason) => Inner::Corrupt { reason },
        })
    }

    /// The record of a work session file at `path` as its writer holds it.
    pub fn work_session(p: &Project, path: &Path, ws: &WorkSession) -> Record {
        let archived = path.starts_with(&p.config.session_archive_dir)
            && p.config.session_archive_dir != p.config.sessions_dir
            || ws.status == SessionStatus::Closed;
        Record(match serde_json::to_string(ws) {
            Ok(record) => Inner::WorkSession {
                path: path.to_path_buf(),
                id: ws.session_id.clone(),
                status: ws.status.as_str().to_string(),
                archived,
                last_updated: ws.last_updated.clone(),
                record,
            },
            Err(e) => Inner::Corrupt {
                reason: e.to_string(),
            },
        })
    }

    /// The record of a transcript file at `path` as its writer holds it,
    /// with what its messages say (gathered by the writer with
    /// [`SaidText`](crate::model::transcript::SaidText), capped at
    /// [`MAX_SAID_BYTES`](super::MAX_SAID_BYTES)).
    pub fn transcript(
        path: &Path,
        kind: TranscriptKind,
        id: &str,
        metadata: &Metadata,
        said: String,
    ) -> Record {
        Record(Inner::Transcript(
            Box::new(Summary {
                id: id.to_string(),
                kind,
                file: path.to_path_buf(),
                workdir: metadata.workdir.clone(),
                started_at: metadata.started_at.clone(),
                last_active_at: metadata.last_active_at.clone(),
                latest_total_tokens: metadata.latest_total_tokens,
                parent_session_id: metadata.parent_session_id.clone(),
            }),
            said,
        ))
    }

    /// The record of a workflow state file at `path` as its writer holds it.
    pub fn workflow_state(path: &Path, session_id: &str, state: &SessionState) -> Record {
        let wf = state.orchestrator_workflow.as_ref();
        Record(Inner::WorkflowState(Box::new(WorkflowRow {
            path: path.to_path_buf(),
            session_id: session_id.to_string(),
            mode: state.current_mode.to_string(),
            phase: wf.map(|w| w.workflow_phase.to_string()),
            active_agent: wf.and_then(|w| w.active_agent.as_ref().map(|a| a.to_string())),
            version: state.version,
            updated_at: state.updated_at.clone(),
            invocations: wf.map_or(0, |w| w.total_invocations()),
            pending_handoffs: wf.map_or(0, |w| w.pending_handoffs.len() as u64),
        })))
    }

    fn corrupt(reason: impl ToString) -> Record {
        Record(Inner::Corrupt {
            reason: reason.to_string(),
        })
    }
}

/// Reads one file into a record; `None` when the file is gone.
pub(super) fn read_record(p: &Project, kind: Kind, path: &Path) -> Option<Record> {
    match kind {
        Kind::Run => read_run(path),
        Kind::WorkSession => match store::work_session::read_file(p, path) {
            Ok(ws) => Some(Record::work_session(p, path, &ws)),
            Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => Some(Record::corrupt(e)),
        },
        Kind::Transcript => read_transcript(path),
        Kind::WorkflowState => {
            let name = path.file_name()?.to_string_lossy().into_owned();
            let session_id = name.strip_suffix(".state.json")?.to_string();
            match store::workflow::read_state(path) {
                Ok(Some((state, _))) => Some(Record::workflow_state(path, &session_id, &state)),
                Ok(None) => None,
                Err(e) => Some(Record::corrupt(e)),
            }
        }
    }
}

/// Reads a transcript's id, metadata and what its messages say, up to the
/// cap (the messages are not kept).
fn read_transcript(path: &Path) -> Option<Record> {
    let name = path.file_name()?.to_string_lossy().into_owned();
    let (kind, _) = parse_file_name(&name)?;
    match store::transcript::read_said(path, super::MAX_SAID_BYTES) {
        Ok((head, said)) => Some(Record::transcript(
            path,
            kind,
            &head.id,
            &head.metadata,
            said,
        )),
        Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => Some(Record::corrupt(e)),
    }
}

/// Reads a manifest with the same rules as the scan: the folder is the id,
/// the manifest parses leniently into the run model.
fn read_run(manifest_path: &Path) -> Option<Record> {
    let folder = manifest_path.parent()?.to_path_buf();
    let name = folder.file_name()?.to_string_lossy().into_owned();
    let text = match fs::read_to_string(manifest_path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => return Some(Record::corrupt(e)),
    };
    let Ok(id) = RunId::parse(&name) else {
        return Some(Record::corrupt(format!(
            "folder name {name:?} is not a run id (a UUID)"
        )));
    };
    Some(match parse_manifest(manifest_path, &text) {
        // Read on the reader's thread (sync and rebuild parse on every core),
        // not later by the one writer.
        Ok((manifest, _)) => Record(
            match run_row(
                &Run {
                    id,
                    folder,
                    manifest,
                },
                true,
            ) {
                Ok(row) => Inner::Run(Box::new(row)),
                Err(reason) => Inner::Corrupt { reason },
            },
        ),
        Err(e) => Record::corrupt(e),
    })
}

/// The row of `run`; with `read_outputs`, its output files' text read now.
fn run_row(run: &Run, read_outputs: bool) -> Result<RunRow, String> {
    let m = &run.manifest;
    let manifest = serde_json::to_string(m).map_err(|e| e.to_string())?;
    let out_stamp = outputs_stamp(&run.folder, m.outputs.iter().map(|o| o.file.as_str()));
    let mut outputs = vec![];
    for o in &m.outputs {
        outputs.push((
            o.file.clone(),
            o.output_type.as_str().to_string(),
            o.description.clone(),
            o.created_at.clone(),
        ));
    }
    let mut tags = m.tags.clone();
    tags.sort();
    tags.dedup();
    let started_ns = clock::parse(&m.execution.started_at).map(|t| t.as_nanosecond() as i64);
    let fts_outputs = read_outputs.then(|| outputs_text(&run.folder, &outputs));
    Ok(RunRow {
        id: run.id.to_string(),
        agent: m.agent.name.clone(),
        workflow: m.workflow.name.clone(),
        status: m.execution.status.as_str().to_string(),
        user: m.execution.user.clone(),
        started_at: m.execution.started_at.clone(),
        started_ns,
        completed_at: m.execution.completed_at.clone(),
        title: m.agent.title.clone().unwrap_or_default(),
        manifest,
        outputs,
        parents: m.related().to_vec(),
        tags,
        fts_agent: fts_agent(m),
        fts_workflow: m.workflow.name.clone(),
        fts_manifest: manifest_text(m),
        fts_outputs,
        out_stamp,
        folder: run.folder.clone(),
    })
}

/// What the index may already hold of a record about to be stored.
pub(super) enum Fresh<'a> {
    /// Nothing (a rebuild's new index).
    Yes,
    /// Nothing, and the runs' full-text rows go to another thread, which
    /// writes them into another file (a rebuild's new index, see
    /// `rebuild::FullText`): they are handed over here instead.
    TextAside(&'a mut Vec<FtsDoc>),
    /// Anything.
    No,
    /// Anything, but a run's FTS row was already deleted by
    /// [`clear_stale_fts`] if its text changes; `same_text`: what that
    /// found (not worked out a second time).
    FtsCleared { same_text: bool },
}

/// A run's row of `runs_fts`, as [`Fresh::TextAside`] hands it over.
pub(super) struct FtsDoc {
    pub(super) rid: i64,
    pub(super) agent: String,
    pub(super) workflow: String,
    pub(super) body: String,
}

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
        Inner::Transcript(t, said) => {
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
            tx.prepare_cached(
                "INSERT INTO transcripts(rid, path, id, kind, workdir, started_at, last_active_at, \
                 last_active_ms, tokens, parent) VALUES (?10, ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) \
                 ON CONFLICT(path) DO UPDATE SET id = excluded.id, kind = excluded.kind, \
                 workdir = excluded.workdir, started_at = excluded.started_at, \
                 last_active_at = excluded.last_active_at, last_active_ms = excluded.last_active_ms, \
                 tokens = excluded.tokens, parent = excluded.parent",
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
                    rid
                ])?;
            let rid = match rid {
                Some(rid) => rid,
                None => tx.last_insert_rowid(),
            };
            tx.prepare_cached("INSERT INTO transcripts_fts(rowid, said) VALUES (?1, ?2)")?
                .execute(params![rid, said])?;
            Ok(())
        }
        Inner::WorkflowState(w) => {
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
        Inner::Corrupt { .. } => Ok(()),
    }
}

pub(super) fn store_run(tx: &Connection, row: &RunRow, fresh: Fresh) -> rusqlite::Result<()> {
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
    let mut ins = tx.prepare_cached(
        "INSERT INTO runs(folder, id, agent, workflow, status, user, started_at, started_ns, completed_at, title, manifest) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
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
        row.manifest
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
            rid,
            agent: row.fts_agent.clone(),
            workflow: row.fts_workflow.clone(),
            body: row.fts_body(),
        });
        return Ok(());
    }
    let mut fts = tx.prepare_cached(
        "INSERT INTO runs_fts(rowid, agent, workflow, body) VALUES (?1, ?2, ?3, ?4)",
    )?;
    fts.execute(params![
        rid,
        row.fts_agent,
        row.fts_workflow,
        row.fts_body()
    ])?;
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
    type Key = (i64, String, String, String, String, Option<i64>, String);
    let old: Option<Key> = tx
        .prepare_cached(
            "SELECT rid, id, agent, workflow, status, started_ns, manifest FROM runs WHERE folder = ?1",
        )?
        .query_row([folder], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                r.get(6)?,
            ))
        })
        .optional()?;
    let Some((rid, id, agent, workflow, status, started_ns, old_manifest)) = old else {
        return Ok(false);
    };
    if id != row.id {
        return Ok(false);
    }
    let same_text = match cleared {
        Some(same) => same,
        None => same_fts_text(tx, folder, &old_manifest, row)?,
    };
    // Every column, output, edge, tag and FTS row of a run is made from its
    // folder and manifest alone: the same manifest over the same output
    // files (an output registered again, a retried call) leaves all of them
    // as they are. Only the file's stamp, stored by the caller, moves.
    if same_text && old_manifest == row.manifest {
        return Ok(true);
    }
    // Only columns in an UPDATE's SET list cost index writes, so the
    // indexed ones are set only when one of them changed.
    if (
        agent.as_str(),
        workflow.as_str(),
        status.as_str(),
        started_ns,
    ) == (
        row.agent.as_str(),
        row.workflow.as_str(),
        row.status.as_str(),
        row.started_ns,
    ) {
        tx.prepare_cached(
            "UPDATE runs SET user = ?2, started_at = ?3, completed_at = ?4, title = ?5, \
             manifest = ?6 WHERE rid = ?1",
        )?
        .execute(params![
            rid,
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
            rid,
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

    let old_outputs: Vec<(String, String, String, String)> = tx
        .prepare_cached(
            "SELECT file, type, description, created_at FROM outputs WHERE rid = ?1 ORDER BY seq",
        )?
        .query_map([rid], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
        .collect::<rusqlite::Result<_>>()?;
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

    let old_parents: Vec<String> = tx
        .prepare_cached("SELECT parent FROM edges WHERE rid = ?1 ORDER BY parent")?
        .query_map([rid], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
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

    let old_tags: Vec<String> = tx
        .prepare_cached("SELECT tag FROM tags WHERE rid = ?1 ORDER BY tag")?
        .query_map([rid], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    if old_tags != row.tags {
        tx.prepare_cached("DELETE FROM tags WHERE rid = ?1")?
            .execute([rid])?;
        let mut tag = tx.prepare_cached("INSERT OR IGNORE INTO tags(rid, tag) VALUES (?1, ?2)")?;
        for t in &row.tags {
            tag.execute(params![rid, t])?;
        }
    }

    if !same_text {
        if cleared.is_none() {
            tx.prepare_cached("DELETE FROM runs_fts WHERE rowid = ?1")?
                .execute([rid])?;
        }
        tx.prepare_cached(
            "INSERT INTO runs_fts(rowid, agent, workflow, body) VALUES (?1, ?2, ?3, ?4)",
        )?
        .execute(params![
            rid,
            row.fts_agent,
            row.fts_workflow,
            row.fts_body()
        ])?;
    }
    Ok(true)
}

/// Whether `row` would give the run the FTS row it has. The contentless
/// table keeps no text, but its row was written in the same transaction as
/// the run's stored manifest and its output files' stamp: the same
/// manifest text and the same stamp (every output's name, size, times and
/// inode) make the same text.
fn same_fts_text(
    tx: &Connection,
    folder: &str,
    old_manifest: &str,
    row: &RunRow,
) -> rusqlite::Result<bool> {
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
/// happened once per run. Then [`apply`] with [`Fresh::FtsCleared`] and
/// what this returns: whether the run keeps its FTS row (its text is the
/// same; `false` too when there is no run left to update in place).
pub(super) fn clear_stale_fts(
    tx: &Connection,
    folder: &str,
    rec: Option<&Record>,
) -> rusqlite::Result<bool> {
    let Some(Record(Inner::Run(row))) = rec else {
        // Gone or corrupt: removed whole (`apply` then finds nothing).
        return remove_run(tx, folder).map(|()| false);
    };
    let old: Option<(i64, String, String)> = tx
        .prepare_cached("SELECT rid, id, manifest FROM runs WHERE folder = ?1")?
        .query_row([folder], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .optional()?;
    let Some((rid, id, old_manifest)) = old else {
        return Ok(false);
    };
    if id != row.id {
        return remove_run(tx, folder).map(|()| false);
    }
    let same = same_fts_text(tx, folder, &old_manifest, row)?;
    if !same {
        tx.prepare_cached("DELETE FROM runs_fts WHERE rowid = ?1")?
            .execute([rid])?;
    }
    Ok(same)
}

pub(super) fn remove_run(tx: &Connection, folder: &str) -> rusqlite::Result<()> {
    let rid: Option<i64> = tx
        .prepare_cached("SELECT rid FROM runs WHERE folder = ?1")?
        .query_row([folder], |r| r.get(0))
        .optional()?;
    if let Some(rid) = rid {
        for q in [
            "DELETE FROM outputs WHERE rid = ?1",
            "DELETE FROM edges WHERE rid = ?1",
            "DELETE FROM tags WHERE rid = ?1",
            "DELETE FROM runs_fts WHERE rowid = ?1",
            "DELETE FROM runs WHERE rid = ?1",
        ] {
            tx.prepare_cached(q)?.execute([rid])?;
        }
    }
    Ok(())
}

pub(super) fn remove_record(tx: &Connection, kind: Kind, path: &Path) -> rusqlite::Result<()> {
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
pub(super) fn apply(
    tx: &Connection,
    kind: Kind,
    path: &Path,
    rec: Option<Record>,
    stamp: Option<(i64, i64, i64)>,
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
    if let Some((size, mtime, dir_mtime)) = stamp {
        // An upsert keeps the row where it is; INSERT OR REPLACE would
        // delete it and insert it again under a new rowid (more pages).
        tx.prepare_cached(
            "INSERT INTO files(path, kind, size, mtime_ns, dir_mtime_ns, out_stamp, outs) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) \
             ON CONFLICT(path) DO UPDATE SET kind = excluded.kind, size = excluded.size, \
             mtime_ns = excluded.mtime_ns, dir_mtime_ns = excluded.dir_mtime_ns, \
             out_stamp = excluded.out_stamp, outs = excluded.outs",
        )?
        .execute(params![
            path_str(path),
            kind.as_str(),
            size,
            mtime,
            dir_mtime,
            out_stamp,
            outs
        ])?;
    }
    Ok(())
}

/// The stamp of a file as sync would take it, or `None` when it is gone.
pub(super) fn stamp_now(kind: Kind, path: &Path) -> Option<(i64, i64, i64)> {
    let m = fs::metadata(path).ok()?;
    let dir = match kind {
        Kind::Run => path.parent().map_or(0, mtime_ns),
        _ => 0,
    };
    Some((m.len() as i64, stamp_of(&m), dir))
}
