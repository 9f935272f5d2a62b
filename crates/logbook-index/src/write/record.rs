//! Records: what one file contributes to the index, built either from the
//! value a writer just wrote ([`Record::run`], [`Record::work_session`],
//! [`Record::transcript`]) or by reading the file (sync, repair). Storing
//! or removing one, in the caller's transaction, is `apply`'s.

use std::path::{Path, PathBuf};

use crate::Kind;
use crate::fulltext::manifest_text;
use crate::write::apply::{Stamp, stamp_now};
use logbook_model::error::Error;
use logbook_model::ids::RunId;
use logbook_model::run::{Manifest, Run, RunStatus, parse_manifest};
use logbook_model::transcript::find::MessageText;
use logbook_model::transcript::{self, Kind as TranscriptKind, Metadata, Summary, parse_file_name};
use logbook_model::work_session::{SessionStatus, WorkSession};
use logbook_model::workflow::SessionState;
use logbook_store::Project;
use logbook_store::run_outputs::{outputs_stamp, outputs_stamp_and_text};

/// What one file contributes to the index, ready to store.
#[derive(Debug)]
pub struct Record(pub(crate) Inner);

#[derive(Debug)]
pub(crate) enum Inner {
    Run(Box<RunRow>),
    WorkSession {
        path: PathBuf,
        id: String,
        status: String,
        archived: bool,
        last_updated: String,
        record: String,
    },
    /// The row, what its messages say (capped), and what each message
    /// says with where the errors are.
    Transcript(Box<Summary>, String, Box<MessageText>),
    WorkflowState(Box<WorkflowRow>),
    Corrupt {
        reason: String,
    },
}

#[derive(Debug)]
pub(crate) struct WorkflowRow {
    pub(crate) path: PathBuf,
    pub(crate) session_id: String,
    pub(crate) mode: String,
    pub(crate) phase: Option<String>,
    pub(crate) active_agent: Option<String>,
    pub(crate) version: u64,
    pub(crate) updated_at: String,
    pub(crate) invocations: u64,
    pub(crate) pending_handoffs: u64,
}

#[derive(Debug)]
pub(crate) struct RunRow {
    pub(crate) folder: PathBuf,
    pub(crate) id: String,
    pub(crate) agent: String,
    pub(crate) workflow: String,
    pub(crate) status: String,
    pub(crate) user: Option<String>,
    pub(crate) started_at: String,
    pub(crate) started_ns: Option<i64>,
    pub(crate) completed_at: Option<String>,
    pub(crate) title: String,
    pub(crate) manifest: String,
    pub(crate) outputs: Vec<(String, String, String, String)>,
    pub(crate) parents: Vec<String>,
    pub(crate) tags: Vec<String>,
    pub(crate) fts_agent: String,
    pub(crate) fts_workflow: String,
    /// The manifest's own searchable text, the start of the FTS `body`.
    pub(crate) fts_manifest: String,
    /// The registered output files' text, the rest of the `body`; `None`
    /// until read. A writer's record leaves it unread: it is read when the
    /// row is stored, and only if the run's text may have changed.
    fts_outputs: Option<String>,
    /// The output files' stamp, taken before their text was read.
    pub(crate) out_stamp: i64,
    /// Whether the folder is in `archive_folder` (`runs.archived`).
    pub(crate) archived: bool,
    /// Whether seed 000's schema would reject the manifest's shape
    /// ([`logbook_model::run::Manifest::seed_schema_rejects_shape`]): such a
    /// run is never settled, so `doctor` reads it every time and names it.
    pub(crate) seed_invalid: bool,
}

/// How much of a run a record is made of besides its manifest.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reading {
    /// Its output files' text, their stamp taken first (sync, rebuild, the
    /// text phase).
    Text,
    /// Their stamp alone; the text is read when the row is stored, if at
    /// all (a writer's record).
    Stamp,
    /// No full text at all, the manifest kept as a stub (see
    /// [`stub_manifest`]), and the outputs stamped only for a running
    /// run: the rows phase of a two-phase rebuild, which makes nothing
    /// it does not store.
    RowsOnly,
}

/// The outputs stamp of a finished run in a rows-only index: none was
/// taken (a `statx` per output was a third of the rows phase's reading).
/// Never a real
/// stamp, so whatever checks a settled run's outputs before the text
/// phase stamps them (`sync --full`, a face showing the run) reads the
/// run again.
const UNSTAMPED_OUTPUTS: i64 = i64::MIN;

/// How a manifest stub starts: no manifest Logbook stores does (each
/// starts with `version`). The key still says "catalog", the rows phase's
/// old name: indexes built before the rename hold stubs spelled so.
const MANIFEST_STUB: &str = "{\"logbook:catalog\":true";

/// Whether `runs.manifest` holds a manifest stub: the run's manifest is in
/// its file, and in the index only once the text phase has been there.
pub(crate) fn is_manifest_stub(stored: &str) -> bool {
    stored.starts_with(MANIFEST_STUB)
}

/// The manifest of the run in `folder` whose `runs.manifest` is `stored`:
/// parsed from it, or read from the file when it is a manifest stub. `None`
/// when neither gives one (a folder without a manifest is `""`, which its
/// callers make a manifest of themselves).
pub(crate) fn stored_manifest(folder: &Path, stored: &str) -> Option<Manifest> {
    if !is_manifest_stub(stored) {
        return serde_json::from_str(stored).ok();
    }
    let path = folder.join(logbook_model::run::MANIFEST_FILE);
    let text = logbook_store::read_optional(&path, "manifest").ok()??;
    parse_manifest(&path, &text).ok().map(|(m, _)| m)
}

impl RunRow {
    /// The FTS `body` column: the manifest's text, then the output files'.
    pub(crate) fn fts_body(&self) -> String {
        let mut body = self.fts_manifest.clone();
        match &self.fts_outputs {
            Some(text) => body.push_str(text),
            None => {
                let files = self.outputs.iter().map(|o| o.0.as_str());
                body.push_str(&outputs_stamp_and_text(&self.folder, files).1);
            }
        }
        body
    }
}

/// The FTS `agent` column of a manifest.
pub(crate) fn fts_agent(m: &Manifest) -> String {
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
        Record(match run_row(run, Reading::Stamp) {
            Ok(row) => Inner::Run(Box::new(row)),
            Err(reason) => Inner::Corrupt { reason },
        })
    }

    /// [`Record::run`] of a run that may be archived: marked so when its
    /// folder is in `archive_folder` (`archive` and `unarchive` write it).
    pub fn run_in(p: &Project, run: &Run) -> Record {
        let mut rec = Record::run(run);
        rec.mark_archived(p, &run.folder);
        rec
    }

    /// Marks a run record archived when `folder` is in `archive_folder`.
    fn mark_archived(&mut self, p: &Project, folder: &Path) {
        if let Inner::Run(row) = &mut self.0 {
            row.archived = logbook_store::archive::is_archived(p, folder);
        }
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
    /// [`SaidText`](logbook_model::transcript::SaidText), capped at
    /// [`MAX_SAID_BYTES`](crate::MAX_SAID_BYTES)), its first prompt
    /// ([`Transcript::first_prompt`](logbook_model::transcript::Transcript::first_prompt))
    /// and how many messages it holds (an imported log's count is taken
    /// from its metadata instead). `found` is what each message from
    /// `found.from` on says ([`MessageText`]): the index keeps the rows of
    /// the messages before it, so an incremental import hands only the
    /// messages it appended.
    #[allow(clippy::too_many_arguments)]
    pub fn transcript(
        path: &Path,
        kind: TranscriptKind,
        id: &str,
        metadata: &Metadata,
        said: String,
        first_prompt: Option<&str>,
        messages: u64,
        found: MessageText,
    ) -> Record {
        let (models, usage) = transcript::measured(metadata);
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
                repository: logbook_model::repo::Repository::in_map(&metadata.extra),
                title: transcript::title(metadata, first_prompt),
                source: transcript::source_name(metadata).to_string(),
                messages: transcript::recorded_messages(metadata).unwrap_or(messages),
                models,
                usage,
            }),
            said,
            Box::new(found),
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

/// Reads one file into a record (`None`: the file is gone), with the stamp
/// sync compares (`None`: it could not be taken). The stamp is taken before
/// the file is read, so a change made after it shows as a new stamp at the
/// next sync.
pub(crate) fn read_record(p: &Project, kind: Kind, path: &Path) -> (Option<Stamp>, Option<Record>) {
    read_record_for(p, kind, path, Reading::Text)
}

/// [`read_record`], with as much of a run as `reading` says.
pub(crate) fn read_record_for(
    p: &Project,
    kind: Kind,
    path: &Path,
    reading: Reading,
) -> (Option<Stamp>, Option<Record>) {
    // A run's stamp comes from its open manifest; the few other files are
    // stamped by name first.
    let read: fn(&Project, &Path) -> Option<Record> = match kind {
        Kind::Run => {
            let (stamp, mut rec) = read_run(path, reading);
            if let (Some(rec), Some(folder)) = (&mut rec, path.parent()) {
                rec.mark_archived(p, folder);
            }
            return (stamp, rec);
        }
        Kind::WorkSession => read_work_session,
        Kind::Transcript => |_, path| read_transcript(path),
        Kind::WorkflowState => read_workflow_state,
    };
    (stamp_now(path), read(p, path))
}

fn read_work_session(p: &Project, path: &Path) -> Option<Record> {
    match logbook_store::work_session::read_file(p, path) {
        Ok(ws) => Some(Record::work_session(p, path, &ws)),
        Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => Some(Record::corrupt(e)),
    }
}

fn read_workflow_state(_: &Project, path: &Path) -> Option<Record> {
    let name = path.file_name()?.to_string_lossy().into_owned();
    let session_id = name.strip_suffix(".state.json")?.to_string();
    match logbook_store::workflow::read_state(path) {
        Ok(Some((state, _))) => Some(Record::workflow_state(path, &session_id, &state)),
        Ok(None) => None,
        Err(e) => Some(Record::corrupt(e)),
    }
}

/// Reads a transcript's id, metadata and what its messages say, up to the
/// cap (the messages are not kept).
fn read_transcript(path: &Path) -> Option<Record> {
    let name = path.file_name()?.to_string_lossy().into_owned();
    let (kind, _) = parse_file_name(&name)?;
    match logbook_store::transcript::read_for_index(path, crate::MAX_SAID_BYTES) {
        Ok(read) => Some(Record::transcript(
            path,
            kind,
            &read.head.id,
            &read.head.metadata,
            read.said,
            read.first_prompt.as_deref(),
            read.messages,
            read.found.unwrap_or_default(),
        )),
        Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => Some(Record::corrupt(e)),
    }
}

/// Reads a manifest with the same rules as the scan: the folder is the id,
/// the manifest parses leniently into the run model. Its stamp, and its
/// output files' ([`outputs_stamp_and_text`]), come from the open files:
/// no `stat` of either by name.
fn read_run(manifest_path: &Path, reading: Reading) -> (Option<Stamp>, Option<Record>) {
    match logbook_store::read_with_metadata(manifest_path, "manifest") {
        Ok(Some((m, text))) => (
            Some(logbook_store::stamp::of(&m)),
            Some(run_record(manifest_path, &text, reading)),
        ),
        Ok(None) => match manifest_path
            .parent()
            .and_then(logbook_store::run::without_manifest)
        {
            Some(run) => (
                Some(ABSENT_STAMP),
                Some(Record(match run_row(&run, Reading::Stamp) {
                    Ok(row) => Inner::Run(Box::new(row)),
                    Err(reason) => Inner::Corrupt { reason },
                })),
            ),
            None => (None, None),
        },
        Err(e) => (stamp_now(manifest_path), Some(Record::corrupt(e))),
    }
}

/// The stamp stored for a run folder without a manifest: no file has a
/// negative size, so the manifest appearing always reads as a change.
pub(crate) const ABSENT_STAMP: Stamp = (-1, 0);

/// The record of the manifest `text` read from `manifest_path`.
fn run_record(manifest_path: &Path, text: &str, reading: Reading) -> Record {
    let Some(folder) = manifest_path.parent() else {
        return Record::corrupt("a manifest path with no run folder");
    };
    let name = folder.file_name().unwrap_or_default().to_string_lossy();
    let Ok(id) = RunId::parse(&name) else {
        return Record::corrupt(format!("folder name {name:?} is not a run id (a UUID)"));
    };
    match parse_manifest(manifest_path, text) {
        // Read on the reader's thread (sync and rebuild parse on every core),
        // not later by the one writer.
        Ok((manifest, _)) => Record(
            match run_row(
                &Run {
                    id,
                    folder: folder.to_path_buf(),
                    manifest,
                },
                reading,
            ) {
                Ok(row) => Inner::Run(Box::new(row)),
                Err(reason) => Inner::Corrupt { reason },
            },
        ),
        Err(e) => Record::corrupt(e),
    }
}

/// The row of the run indexed for `folder` with the stored `manifest`
/// (`runs.manifest`: empty for a folder without one), its output files'
/// text read now: what the text phase of a two-phase rebuild indexes
/// (see `text_build`). `None` when the folder is not a run's any more.
pub(crate) fn stored_run_row(folder: &Path, manifest: &str) -> Option<RunRow> {
    let run = if manifest.is_empty() {
        logbook_store::run::without_manifest(folder)?
    } else {
        let name = folder.file_name()?.to_string_lossy();
        Run {
            id: RunId::parse(&name).ok()?,
            folder: folder.to_path_buf(),
            manifest: serde_json::from_str::<Manifest>(manifest).ok()?,
        }
    };
    run_row(&run, Reading::Text).ok()
}

/// What the rows phase of a two-phase rebuild stores as `runs.manifest`
/// for manifest `m`: a stub with only its repository (which the `repo_key`
/// and `repo_root` columns are computed from), so that `runs` stays narrow
/// while its secondary indexes are made and its first queries scan it. The
/// text phase stores the whole manifest (see `text_build`); until then
/// readers take it from the file ([`stored_manifest`]).
fn stub_manifest(m: &Manifest) -> String {
    match m.metadata.as_ref().and_then(|md| md.get("repository")) {
        Some(repo) => format!("{MANIFEST_STUB},\"metadata\":{{\"repository\":{repo}}}}}"),
        None => format!("{MANIFEST_STUB}}}"),
    }
}

/// The row of `run`, with as much of its files as `reading` says.
fn run_row(run: &Run, reading: Reading) -> Result<RunRow, String> {
    let m = &run.manifest;
    let rows_only = reading == Reading::RowsOnly;
    // An absent manifest is stored as no text: `hit_of` makes it again.
    let manifest = if m.is_absent() {
        String::new()
    } else if rows_only {
        stub_manifest(m)
    } else {
        serde_json::to_string(m).map_err(|e| e.to_string())?
    };
    let files = m.outputs.iter().map(|o| o.file.as_str());
    // A reader takes the stamp as it reads the text; a writer's record
    // takes it now, and its text is read later, if at all.
    let running = m.execution.status.as_str() == RunStatus::Running.as_str();
    let (out_stamp, fts_outputs) = match reading {
        Reading::Text => {
            let (stamp, text) = outputs_stamp_and_text(&run.folder, files);
            (stamp, Some(text))
        }
        // A finished run's outputs are settled: a normal sync does not
        // look at them, and the text phase stamps them as it reads them.
        Reading::RowsOnly if !running => (UNSTAMPED_OUTPUTS, None),
        Reading::Stamp | Reading::RowsOnly => (outputs_stamp(&run.folder, files), None),
    };
    // No full text is made in the rows phase, which stores none.
    let text = |make: &dyn Fn() -> String| if rows_only { String::new() } else { make() };
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
    let started_ns = m.start_order();
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
        fts_agent: text(&|| fts_agent(m)),
        fts_workflow: text(&|| m.workflow.name.clone()),
        fts_manifest: text(&|| manifest_text(m)),
        fts_outputs,
        out_stamp,
        folder: run.folder.clone(),
        archived: false,
        seed_invalid: m.seed_schema_rejects_shape(),
    })
}
