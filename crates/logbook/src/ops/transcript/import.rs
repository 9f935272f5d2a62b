//! `transcript import PATH`: agent logs (Claude Code, Codex) and seed 003
//! files, one file or a folder searched recursively, into transcripts.
//!
//! Each log becomes one transcript, written only when its source changed:
//! the same bytes of the same file give the same transcript, byte for byte,
//! so a second import reports it `unchanged` and writes nothing, and a log
//! that grew (a live session) is rewritten in place under the id's lock,
//! reading only what was appended since the last import when its checkpoint
//! still holds ([`pending_bytes`] says how much that is).

use crate::Logbook;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::model::agent_log::{self, BadLine, Format, PARSER_VERSION, Source};
use crate::model::ids::TranscriptId;
use crate::model::repo::{Casing, Repository};
use crate::model::transcript::find::MessageText;
use crate::model::transcript::{Kind, Metadata, SaidText};
use crate::ops::write_through;
use logbook_index::{Kind as IndexKind, MAX_SAID_BYTES, Pending, Record};

/// What `--format` names: which reader an import uses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ImportFormat {
    /// Decided per file: `*.json` seed 003, `*.jsonl` by its first lines.
    #[default]
    Auto,
    /// Claude Code session logs.
    ClaudeCode,
    /// Codex rollout logs.
    Codex,
    /// Seed 003 transcripts, as `transcript import FILE` always read.
    Logbook,
}

/// How [`import_path`] reports its progress: work done, of all, in bytes
/// (a log is read three times: to count, for its messages, for its lines).
pub type Progress<'a> = &'a dyn Fn(u64, u64);

/// One source an import read, and the transcript it is.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ImportedSource {
    /// The source file, absolute.
    pub source: PathBuf,
    /// `claude-code`, `codex` or `logbook`.
    pub format: &'static str,
    /// The transcript id.
    pub id: String,
    /// Main or subagent.
    pub kind: Kind,
    /// The transcript file.
    pub file: PathBuf,
    /// How many messages it holds.
    pub messages: u64,
    /// The main session of a subagent.
    pub parent_session_id: Option<String>,
    /// The measured total tokens (logs only).
    pub total_tokens: u64,
    /// Lines that did not parse (the rest was imported).
    pub bad_lines: Vec<BadLine>,
    /// Records of a type the parser does not know, by type: kept as raw
    /// lines, and said by the import so that a format's drift is seen.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub unknown_types: std::collections::BTreeMap<String, u64>,
    /// How many bytes of the source this import read, each counted once
    /// (a log is passed over up to three times). A log imported before
    /// reads only what was appended since (see [`pending_bytes`]), plus a
    /// few KiB that show it is the same log.
    pub bytes_read: u64,
}

/// A file an import did not turn into a transcript, and why.
#[derive(Debug, Clone, Serialize)]
pub struct SkippedSource {
    /// The file.
    pub source: PathBuf,
    /// Why it was skipped.
    pub reason: String,
    /// Whether it was skipped because something failed (the file could not
    /// be read, the transcript not written), not because it holds nothing
    /// to import: what a hook must report, since no one sees its output.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub failed: bool,
}

/// What [`import_path`] did, file by file.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ImportReport {
    /// New transcripts.
    pub imported: Vec<ImportedSource>,
    /// Transcripts rewritten because their source changed or grew.
    pub updated: Vec<ImportedSource>,
    /// Transcripts whose source had not changed: nothing written.
    pub unchanged: Vec<ImportedSource>,
    /// Files not imported, each with its reason.
    pub skipped: Vec<SkippedSource>,
}

/// Why an empty file is skipped.
pub(super) const EMPTY: &str = "empty file (0 bytes)";

enum Outcome {
    Imported(ImportedSource),
    Updated(ImportedSource),
    Unchanged(ImportedSource),
    Skipped(String),
}

/// Imports `path` (a file, or a folder searched recursively for `*.jsonl`
/// logs and seed 003 transcript files) in `format`. A file that cannot be
/// imported is skipped with its reason; only a `path` that cannot be read
/// at all is an error.
pub fn import_path(
    p: &Logbook,
    path: &Path,
    format: ImportFormat,
    progress: Option<Progress<'_>>,
) -> Result<ImportReport> {
    import_path_in(p, path, format, progress, None)
}

/// [`import_path`] for logs of a session an agent ran in repository
/// `ran_in` (a hook's `cwd`): a log whose own `cwd` names no repository
/// (a folder since removed, one outside git) is recorded as `ran_in`'s,
/// so the project's listings and `resume` find it.
pub fn import_path_in(
    p: &Logbook,
    path: &Path,
    format: ImportFormat,
    progress: Option<Progress<'_>>,
    ran_in: Option<&Repository>,
) -> Result<ImportReport> {
    let found = logbook_store::agent_log::find_logs(path)?;
    let files = found.files;
    let sizes: Vec<u64> = files.iter().map(|f| logbook_store::fs::size(f)).collect();
    let total: u64 = sizes.iter().sum::<u64>() * 3;
    let own = logbook_store::fs::resolved(&p.config.transcripts_dir).ok();
    let mut report = ImportReport::default();
    let skipped = found.skipped.into_iter().map(|s| (s, false));
    let unlisted = found.unlisted.into_iter().map(|s| (s, true));
    report
        .skipped
        .extend(
            skipped
                .chain(unlisted)
                .map(|((source, reason), failed)| SkippedSource {
                    source,
                    reason,
                    failed,
                }),
        );
    let mut done = 0;
    for (file, size) in files.iter().zip(sizes) {
        if let Some(progress) = progress {
            progress(done, total);
        }
        let outcome = if own
            .as_ref()
            .is_some_and(|own| logbook_store::fs::resolved(file).is_ok_and(|f| f.starts_with(own)))
        {
            Ok(Outcome::Skipped(
                "it is in this project's transcripts folder already".into(),
            ))
        } else {
            let within = |b: u64| {
                if let Some(progress) = progress {
                    progress(done + b.min(size * 3), total);
                }
            };
            import_file(p, file, format, &within, ran_in)
        };
        match outcome {
            Ok(Outcome::Imported(i)) => report.imported.push(i),
            Ok(Outcome::Updated(i)) => report.updated.push(i),
            Ok(Outcome::Unchanged(i)) => report.unchanged.push(i),
            Ok(Outcome::Skipped(reason)) => report.skipped.push(SkippedSource {
                source: file.clone(),
                reason,
                failed: false,
            }),
            Err(e) => report.skipped.push(SkippedSource {
                source: file.clone(),
                reason: e.to_string(),
                failed: true,
            }),
        }
        done += size * 3;
    }
    if let Some(progress) = progress {
        progress(total, total);
    }
    Ok(report)
}

/// [`import_path`] for a path a user named: a file named on its own that
/// imports nothing (empty, not a format Logbook reads, no messages) is an
/// error that says why, not a quiet "1 skipped". A folder answers as
/// [`import_path`] does, each file it skipped named with its reason.
pub fn import_named(
    p: &Logbook,
    path: &Path,
    format: ImportFormat,
    progress: Option<Progress<'_>>,
) -> Result<ImportReport> {
    let report = import_path(p, path, format, progress)?;
    let nothing =
        report.imported.is_empty() && report.updated.is_empty() && report.unchanged.is_empty();
    if nothing
        && !logbook_store::fs::is_folder(path)
        && let Some(s) = report.skipped.first()
    {
        return Err(Error::NotImported {
            path: path.to_path_buf(),
            reason: s.reason.clone(),
        });
    }
    Ok(report)
}

fn import_file(
    p: &Logbook,
    file: &Path,
    format: ImportFormat,
    on_bytes: &dyn Fn(u64),
    ran_in: Option<&Repository>,
) -> Result<Outcome> {
    if logbook_store::agent_log::log_len(file)? == 0 {
        return Ok(Outcome::Skipped(EMPTY.into()));
    }
    let log_format = match format {
        ImportFormat::ClaudeCode => Some(Format::ClaudeCode),
        ImportFormat::Codex => Some(Format::Codex),
        ImportFormat::Logbook => None,
        ImportFormat::Auto => {
            let json = file.extension().is_some_and(|e| e == "json");
            match logbook_store::agent_log::detect(file)? {
                Some(f) => Some(f),
                None if json => None,
                None => {
                    return Ok(Outcome::Skipped(
                        "not a recognised transcript format: not a Claude Code or Codex log (none of its first lines says which agent wrote it; use --format) nor a seed 003 transcript (`*.json`)".into(),
                    ));
                }
            }
        }
    };
    match log_format {
        Some(f) => import_log(p, file, f, on_bytes, ran_in),
        None => import_seed_file(p, file),
    }
}

/// A seed 003 file, as `transcript import FILE` always read it; `unchanged`
/// when the stored file is the same bytes afterwards.
fn import_seed_file(p: &Logbook, file: &Path) -> Result<Outcome> {
    Ok(seed_outcome(p, file, false, None, None)?.0)
}

/// `transcript import FILE` of one seed 003 file, with its flags (see
/// [`super::import`]): the import report every input kind answers with
/// (one entry, in `imported`, `updated` or `unchanged`), and the stored
/// transcript.
pub fn import_seed(
    p: &Logbook,
    file: &Path,
    subagent: bool,
    parent: Option<&str>,
    run: Option<&str>,
) -> Result<(ImportReport, super::Stored)> {
    if logbook_store::agent_log::log_len(file).is_ok_and(|n| n == 0) {
        return Err(Error::NotImported {
            path: file.to_path_buf(),
            reason: EMPTY.into(),
        });
    }
    let (outcome, stored) = seed_outcome(p, file, subagent, parent, run)?;
    let mut report = ImportReport::default();
    match outcome {
        Outcome::Imported(i) => report.imported.push(i),
        Outcome::Updated(i) => report.updated.push(i),
        Outcome::Unchanged(i) => report.unchanged.push(i),
        Outcome::Skipped(reason) => report.skipped.push(SkippedSource {
            source: file.to_path_buf(),
            reason,
            failed: false,
        }),
    }
    Ok((report, stored))
}

fn seed_outcome(
    p: &Logbook,
    file: &Path,
    subagent: bool,
    parent: Option<&str>,
    run: Option<&str>,
) -> Result<(Outcome, super::Stored)> {
    let (_, raw) = logbook_store::transcript::read_import(file)?;
    let before = raw
        .get("id")
        .and_then(|v| v.as_str())
        .and_then(|id| TranscriptId::parse(id).ok())
        .and_then(|id| logbook_store::transcript::find_live(&p.config.transcripts_dir, id.as_str()))
        .and_then(|(_, path)| logbook_store::transcript::read_bytes(&path).map(|b| (path, b)));
    let stored = super::import(p, file, subagent, parent, run)?;
    let item = ImportedSource {
        source: logbook_store::fs::resolved(file).unwrap_or_else(|_| file.to_path_buf()),
        format: "logbook",
        id: stored.transcript.id.clone(),
        kind: stored.kind,
        file: stored.path.clone(),
        messages: stored.transcript.messages.len() as u64,
        parent_session_id: stored.transcript.metadata.parent_session_id.clone(),
        total_tokens: stored.transcript.metadata.latest_total_tokens,
        bad_lines: vec![],
        unknown_types: Default::default(),
        bytes_read: logbook_store::agent_log::log_len(file).unwrap_or(0),
    };
    let outcome = match before {
        None => Outcome::Imported(item),
        Some((path, bytes)) => {
            if path == stored.path
                && logbook_store::transcript::read_bytes(&stored.path)
                    .is_some_and(|now| now == bytes)
            {
                Outcome::Unchanged(item)
            } else {
                Outcome::Updated(item)
            }
        }
    };
    Ok((outcome, stored))
}

fn import_log(
    p: &Logbook,
    file: &Path,
    format: Format,
    on_bytes: &dyn Fn(u64),
    ran_in: Option<&Repository>,
) -> Result<Outcome> {
    let original = logbook_store::fs::resolved(file).map_err(|e| Error::io(file, e))?;
    // A compressed log (Codex's old rollouts) is read unpacked; it is
    // named by its own path and never grows, so it keeps no checkpoint.
    let unpacked = if logbook_store::agent_log::is_compressed(&original) {
        Some(logbook_store::agent_log::unpack(
            &p.config.state_dir(),
            &original,
        )?)
    } else {
        None
    };
    let source = unpacked
        .as_ref()
        .map_or(original.clone(), |u| u.path().to_path_buf());
    let len = logbook_store::agent_log::log_len(&source)?;
    let cursors = logbook_store::import_cursor::dir(&p.config.state_dir());
    // Where the last import stopped, when the log is still the one it read:
    // only the bytes after it are read (appended since, or a last line that
    // had no newline yet).
    let cursor = logbook_store::import_cursor::load(&cursors, &source, len, format)
        .filter(|_| unpacked.is_none());
    let from = cursor.as_ref().map(|(c, _)| c);
    let bytes_read = match &cursor {
        Some((c, checked)) => checked + (len - c.at.offset()),
        None => len,
    };
    let same = match unpacked {
        None => unchanged_by_name(p, &source, len, format, from)?,
        Some(_) => None,
    };
    if let Some(mut same) = same {
        same.bytes_read = bytes_read;
        return Ok(Outcome::Unchanged(same));
    }
    let (summary, fp) = logbook_store::agent_log::scan_from(&source, len, format, from, on_bytes)?;
    if let Some(reason) = nothing_to_import(&summary) {
        return Ok(Outcome::Skipped(reason));
    }
    let named = match &unpacked {
        Some(_) => original.with_extension(""),
        None => source.clone(),
    };
    let Some(who) = agent_log::identity(format, &named, &summary) else {
        return Ok(Outcome::Skipped(
            "no session id: neither the file name nor its lines name one".into(),
        ));
    };
    let id = TranscriptId::parse(&who.id)?;
    let kind = if who.parent.is_some() || summary.agent_id.is_some() {
        Kind::Subagent
    } else {
        Kind::Main
    };
    let src = log_source(format, &original, len, &summary, fp.as_string());
    let metadata = log_metadata(&summary, &who, &src, ran_in);
    let log = ScannedLog {
        source,
        compressed: unpacked.is_some(),
        len,
        format,
        from,
        bytes_read,
        parent: who.parent,
        id,
        kind,
        src,
        metadata,
        summary,
    };
    store_log(p, log, &cursors, on_bytes)
}

/// A log read and decided on, ready to be stored as a transcript.
struct ScannedLog<'a> {
    /// The log, absolute (a compressed log's unpacked copy).
    source: PathBuf,
    /// Whether `source` is a compressed log's unpacked copy: it keeps no
    /// checkpoint.
    compressed: bool,
    len: u64,
    format: Format,
    /// Where the last import stopped, when it still holds.
    from: Option<&'a logbook_store::import_cursor::Cursor>,
    /// What the import read of the log when it goes on from `from`.
    bytes_read: u64,
    parent: Option<String>,
    id: TranscriptId,
    kind: Kind,
    src: Source,
    metadata: Metadata,
    summary: agent_log::LogSummary,
}

/// Why a log with no messages and no usage is not imported, with its
/// unreadable lines; `None` when it has something to import.
fn nothing_to_import(summary: &agent_log::LogSummary) -> Option<String> {
    if summary.messages > 0 || !summary.usage.by_model.is_empty() {
        return None;
    }
    let unreadable = match summary.bad_lines.first() {
        Some(b) => format!(
            " ({} unreadable, the first at line {}: {})",
            summary.bad_lines.len(),
            b.line,
            b.reason
        ),
        None => String::new(),
    };
    Some(format!(
        "no messages in its {} line(s){unreadable}",
        summary.lines
    ))
}

/// Where a transcript came from, as its metadata records it, so the next
/// import can tell the same log from a changed one.
fn log_source(
    format: Format,
    source: &Path,
    len: u64,
    summary: &agent_log::LogSummary,
    fingerprint: String,
) -> Source {
    Source {
        format,
        path: source.to_string_lossy().into_owned(),
        bytes: len,
        lines: summary.lines,
        messages: summary.messages,
        fingerprint,
        parser: PARSER_VERSION,
        session_id: summary.session_id.clone(),
        agent_id: summary.agent_id.clone(),
        git_branch: summary.git_branch.clone(),
        agent_version: summary.agent_version.clone(),
        title: summary.title.clone(),
        bad_lines: summary.bad_lines.clone(),
        unknown_types: summary.unknown_types.clone(),
        fork_of: summary.fork_of.clone(),
        copied_lines: summary.copied_lines,
    }
}

/// The transcript's metadata, with the repository its working directory
/// is in (else the one the import ran in, when that is a git checkout).
fn log_metadata(
    summary: &agent_log::LogSummary,
    who: &agent_log::Identity,
    src: &Source,
    ran_in: Option<&Repository>,
) -> Metadata {
    let mut metadata = agent_log::metadata(summary, who, src);
    if let Some(repo) = logbook_store::repo::identify_recorded(Path::new(&metadata.workdir))
        .or_else(|| ran_in.filter(|r| r.in_git()).cloned())
    {
        repo.record_in(&mut metadata.extra, Casing::Camel);
    }
    metadata
}

/// Stores a scanned log under its id's lock: unchanged or skipped when the
/// transcript already there says so, else written (from the checkpoint
/// when it still fits) and its checkpoint saved.
fn store_log(
    p: &Logbook,
    mut log: ScannedLog,
    cursors: &Path,
    on_bytes: &dyn Fn(u64),
) -> Result<Outcome> {
    let dir = &p.config.transcripts_dir;
    let _lock = p.locks.exclusive(&log.id.lock_name())?;
    let existing = logbook_store::transcript::find_live(dir, log.id.as_str());
    let mut item = ImportedSource {
        source: PathBuf::from(&log.src.path),
        format: log.format.as_str(),
        id: log.id.to_string(),
        kind: log.kind,
        file: PathBuf::new(),
        messages: log.summary.messages,
        parent_session_id: log.parent.clone(),
        total_tokens: log.summary.usage.total().total_tokens,
        bad_lines: log.summary.bad_lines.clone(),
        unknown_types: log.summary.unknown_types.clone(),
        bytes_read: log.bytes_read,
    };
    if let Some((old_kind, path)) = &existing {
        let head = logbook_store::transcript::read_head(path)?;
        super::keep_name(&mut log.metadata, &head.metadata);
        let old = agent_log::source_of(&head.metadata);
        if let Some(settled) = settled_by_existing(old, *old_kind, path, &log, &item) {
            return Ok(settled);
        }
    }
    let target = super::stored_path(dir, existing.as_ref(), log.kind, &log.id);
    let previous = existing
        .as_ref()
        .map(|(_, old)| old.clone())
        .filter(|old| *old != target);
    // The stored file goes on from the checkpoint only when it is still the
    // file the checkpoint describes (`transcript name`, an editor or an
    // import from another copy of the log rewrite it); else it is written
    // whole, which reads the whole log.
    let resume = log.from.filter(|c| {
        previous.is_none()
            && existing.as_ref().is_some_and(|(_, path)| *path == target)
            && c.fits_stored(&target)
    });
    item.bytes_read = if resume.is_none() {
        log.len
    } else {
        log.bytes_read
    };
    let written = write_log(p, &log, &target, previous.as_deref(), resume, on_bytes)?;
    // A cache: when it cannot be written, the next import reads the whole
    // log (the old checkpoint no longer matches the stored file).
    if !log.compressed {
        let _ =
            logbook_store::import_cursor::save(cursors, &log.source, log.format, &target, written);
    }
    item.file = target;
    Ok(if existing.is_some() {
        Outcome::Updated(item)
    } else {
        Outcome::Imported(item)
    })
}

/// What the transcript already stored under the log's id decides: the
/// same source (unchanged), a longer copy from another file or a
/// transcript not imported from a log (skipped); `None` lets the import
/// write.
fn settled_by_existing(
    old: Option<Source>,
    old_kind: Kind,
    path: &Path,
    log: &ScannedLog,
    item: &ImportedSource,
) -> Option<Outcome> {
    let id = &log.id;
    match old {
        Some(old) if old.same_as(&log.src) && old_kind == log.kind => {
            let mut item = item.clone();
            item.file = path.to_path_buf();
            Some(Outcome::Unchanged(item))
        }
        Some(old) if old.path != log.src.path && old.bytes > log.src.bytes => {
            Some(Outcome::Skipped(format!(
                "transcript {id} holds a longer copy of this session, imported from {}",
                old.path
            )))
        }
        Some(_) => None,
        None => Some(Outcome::Skipped(format!(
            "transcript {id} ({}) exists and was not imported from a log; it is left as it is",
            path.display()
        ))),
    }
}

/// Writes the log's transcript to `target` (replacing `previous`, a file
/// of another name) and hands the index its record, in one write-through.
fn write_log(
    p: &Logbook,
    log: &ScannedLog,
    target: &Path,
    previous: Option<&Path>,
    resume: Option<&logbook_store::import_cursor::Cursor>,
    on_bytes: &dyn Fn(u64),
) -> Result<logbook_store::agent_log::Written> {
    let pending = |path: &Path| Pending {
        kind: IndexKind::Transcript,
        path: path.to_path_buf(),
        lock: log.id.lock_name(),
    };
    let mut touched = vec![pending(target)];
    touched.extend(previous.map(pending));
    let timestamp = log.summary.last_timestamp.clone().unwrap_or_default();
    let head = logbook_store::agent_log::Head {
        id: log.id.as_str(),
        timestamp: &timestamp,
        metadata: &log.metadata,
    };
    let len = log.len;
    write_through(p, touched, || {
        // Gathered while the messages stream to the file: the log is never
        // held in memory, and its first text is what the index keeps.
        let mut said = match resume {
            Some(c) => SaidText::resume(c.said.clone(), MAX_SAID_BYTES),
            None => SaidText::new(MAX_SAID_BYTES),
        };
        // The rows of the messages before the checkpoint are in the index
        // already: only the ones appended are handed to it.
        let mut found = MessageText::new(resume.map_or(0, |c| c.messages as usize));
        let written = logbook_store::agent_log::write_transcript_from(
            target,
            &log.source,
            len,
            log.format,
            &head,
            &log.src.fingerprint,
            previous,
            &mut said,
            &mut found,
            resume,
            &|b| on_bytes(len + b),
        )?;
        let mut records = vec![Some(Record::transcript(
            target,
            log.kind,
            log.id.as_str(),
            &log.metadata,
            said.into_string(),
            log.summary.first_prompt.as_deref(),
            log.summary.messages,
            found,
        ))];
        if previous.is_some() {
            records.push(None);
        }
        Ok((written, records))
    })
}

/// The quick answer for a log imported before and not changed since: the
/// transcript its file name points to was made from this path, this size
/// and these bytes (hashed, not parsed), by this parser. `None` sends the
/// log through the whole import, which decides again from its lines.
fn unchanged_by_name(
    p: &Logbook,
    source: &Path,
    len: u64,
    format: Format,
    from: Option<&logbook_store::import_cursor::Cursor>,
) -> Result<Option<ImportedSource>> {
    let Some(who) = agent_log::identity(format, source, &agent_log::LogSummary::default()) else {
        return Ok(None);
    };
    let Ok(id) = TranscriptId::parse(&who.id) else {
        return Ok(None);
    };
    let Some((kind, path)) =
        logbook_store::transcript::find_live(&p.config.transcripts_dir, id.as_str())
    else {
        return Ok(None);
    };
    let Ok(head) = logbook_store::transcript::read_head(&path) else {
        return Ok(None);
    };
    let Some(old) = agent_log::source_of(&head.metadata) else {
        return Ok(None);
    };
    let same_file = old.format == format
        && old.path == source.to_string_lossy()
        && old.bytes == len
        && old.parser == PARSER_VERSION;
    let mark = from.map(|c| c.at).unwrap_or_default();
    if !same_file
        || logbook_store::agent_log::fingerprint_from(source, mark, len)?.as_string()
            != old.fingerprint
    {
        return Ok(None);
    }
    Ok(Some(ImportedSource {
        source: source.to_path_buf(),
        format: format.as_str(),
        id: id.to_string(),
        kind,
        file: path,
        messages: old.messages,
        parent_session_id: head.metadata.parent_session_id.clone(),
        total_tokens: agent_log::usage_of(&head.metadata)
            .map(|b| b.total().total_tokens)
            .unwrap_or(0),
        bad_lines: old.bad_lines,
        unknown_types: old.unknown_types,
        bytes_read: len - mark.offset(),
    }))
}

/// Whether an import of `file` reads it as one seed 003 transcript (with
/// the answer and the options a single file always had) rather than as
/// agent logs: a regular file, not watched, and either named as Logbook's
/// format, or in the automatic format given seed options (`subagent`,
/// `parent`, `run`) or neither a `.jsonl` nor a log an agent's first lines
/// name. Every face decides by this one rule.
pub fn is_single_seed(file: &Path, format: ImportFormat, watch: bool, seed_options: bool) -> bool {
    if watch || !logbook_store::fs::is_file(file) {
        return false;
    }
    match format {
        ImportFormat::Logbook => true,
        ImportFormat::Auto => {
            seed_options
                || file.extension().is_none_or(|e| e != "jsonl")
                    && detect_log(file).ok().flatten().is_none()
        }
        ImportFormat::ClaudeCode | ImportFormat::Codex => false,
    }
}

/// Which agent wrote the log at `file`, from its first lines; `None` when
/// none of them says (a seed 003 transcript, or text no agent wrote).
pub fn detect_log(file: &Path) -> Result<Option<Format>> {
    logbook_store::agent_log::detect(file)
}

/// How many bytes of the log at `file` an import in `format` would read
/// now: what was appended since the last import when its checkpoint still
/// holds, else the whole log. A hook decides from it whether the import
/// fits its time budget or goes to a background worker.
pub fn pending_bytes(p: &Logbook, file: &Path, format: Format) -> Result<u64> {
    let source = logbook_store::fs::resolved(file).map_err(|e| Error::io(file, e))?;
    let len = logbook_store::agent_log::log_len(&source)?;
    let cursors = logbook_store::import_cursor::dir(&p.config.state_dir());
    Ok(
        match logbook_store::import_cursor::load(&cursors, &source, len, format) {
            Some((c, _)) if c.fits_stored(&c.stored.path) => len - c.at.offset(),
            _ => len,
        },
    )
}

/// The folders `--from-home` imports: `~/.claude/projects` (or
/// `$CLAUDE_CONFIG_DIR/projects`) and `~/.codex/sessions` (or
/// `$CODEX_HOME/sessions`), those that exist.
pub fn home_sources() -> Vec<PathBuf> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    // Each agent says where it keeps its logs (`agent_log::agents`).
    let mut out = agent_log::agents::log_roots(home.as_deref(), &|k| std::env::var_os(k));
    let mut seen = vec![];
    out.retain(|d| {
        let keep = logbook_store::fs::is_folder(d) && !seen.contains(d);
        seen.push(d.clone());
        keep
    });
    out
}
