//! Transcripts (seed 003): save, import, load, list and prune the message
//! histories of main agents and subagents.
//!
//! The public API is what an MCP server needs: [`save`], [`load`], [`list`],
//! plus [`import`], [`import_path`] (agent logs: Claude Code, Codex),
//! [`usage`] (measured tokens) and [`prune`] for the CLI.
//!
//! ```no_run
//! use logbook::{Logbook, ops::transcript::{self, ListOptions}};
//! let project = Logbook::discover(&std::env::current_dir()?, None)?;
//! for t in transcript::list(&project, &ListOptions::default())?.transcripts {
//!     println!("{} {:?} {}", t.id, t.kind, t.last_active_at);
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod cost;
pub mod find;
mod import;
mod import_plan;
pub mod links;
pub mod listing;
pub mod live;
mod prune;
pub(crate) mod usage;

pub use import::{
    ImportFormat, ImportReport, ImportedSource, Progress, SkippedSource, detect_log, home_sources,
    import_named, import_path, import_path_in, import_seed, is_single_seed, pending_bytes,
};
pub use import_plan::{ImportPlan, ImportRequest};
pub use prune::{PruneReport, Pruned, prune, pruned_json};
pub use usage::{
    Measured, TranscriptUsage, UsageBy, UsageReport, UsageRow, UsageScope, measured, usage,
    usage_filtered, usage_grouped,
};

use crate::Logbook;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::{Error, Next, Result, Step};
use crate::model::CorruptFile;
use crate::model::ids::{IdArg, RunId, TranscriptId};
use crate::model::limits::bounded;
use crate::model::query::RunQuery;
use crate::model::repo::{Casing, REPOSITORY_KEY, Repository};
use crate::model::transcript::find::MessageText;
use crate::model::transcript::{
    FORMAT_VERSION, Filter, Kind, Metadata, RUN_ID_KEY, SaidText, Stored, Summary, Transcript,
    file_name, parse_file_name,
};
use crate::ops::{run, write_through};
use logbook_index::{Index, Kind as IndexKind, MAX_SAID_BYTES, Pending, Record, TranscriptHit};
pub use logbook_store::transcript::{RawLinesKept, Window, WindowStop};

/// Which transcripts [`list`] returns.
#[derive(Debug, Clone, Default)]
pub struct ListOptions {
    /// Only transcripts whose workdir is this folder or inside it; `None`
    /// lists every workdir (`--all`). With `repo`, this applies only to
    /// transcripts recorded without a repository.
    pub within: Option<PathBuf>,
    /// Only transcripts of this repository ([`Repository::matches`]), and
    /// those recorded without one that `within` takes in.
    pub repo: Option<Repository>,
    /// Only this kind; `None` lists both.
    pub kind: Option<Kind>,
    /// At most this many.
    pub limit: Option<usize>,
    /// After skipping this many.
    pub offset: usize,
    /// Workdir, source, model and time ([`Filter`]).
    pub filter: Filter,
    /// Only the live ones ([`live`]: an agent is writing them now).
    pub live: bool,
}

/// The result of [`list`]: readable transcripts newest first, and the files
/// that could not be read (reported, never fatal).
#[derive(Debug, Clone, Default)]
pub struct Listing {
    /// Newest `lastActiveAt` first.
    pub transcripts: Vec<Summary>,
    /// Files named like transcripts that could not be read.
    pub corrupt: Vec<CorruptFile>,
    /// How many transcripts of the asked kind were left out because their
    /// workdir is elsewhere (`--all` lists them).
    pub elsewhere: usize,
    /// The ids of the listed transcripts that are live ([`live`]).
    pub live: std::collections::BTreeSet<String>,
}

/// Saves a transcript: `timestamp` becomes now, missing metadata is filled
/// (workdir: the project root; times: now), and the file is written
/// atomically through the index. An id that already has a file keeps it; a
/// new id whose short name is taken by another id is stored under its full
/// id. Saving with the other kind renames the file. Returns where it was
/// written.
///
/// The id (and a parent's) is stored in lowercase, so two spellings of one
/// UUID are one transcript. A transcript whose `metadata.runId` names a run
/// (a UUID or a unique prefix, stored as the full id) fills that run's
/// `userSummary` and `messageCount` (seed 000 Story 6.3); a `runId` naming
/// no run is refused before anything is written.
pub fn save(p: &Logbook, transcript: &mut Transcript, kind: Kind) -> Result<PathBuf> {
    save_as(p, transcript, kind, None)
}

/// [`save`], or with `imported` (the raw JSON of a transcript file another
/// tool wrote) an import: the file's own `timestamp` is kept when it has
/// one, and every value the save does not fill in is written as it was.
fn save_as(
    p: &Logbook,
    transcript: &mut Transcript,
    kind: Kind,
    imported: Option<&Value>,
) -> Result<PathBuf> {
    let id = TranscriptId::parse(&transcript.id)?;
    transcript.id = id.to_string();
    normalize_parent(transcript)?;
    let run_id = linked_run(p, transcript)?;
    fill_defaults(p, transcript, imported.is_some());

    let dir = &p.config.transcripts_dir;
    let lock = p.locks.exclusive(&id.lock_name())?;
    let existing = logbook_store::transcript::find_live(dir, id.as_str());
    if let Some((_, path)) = &existing
        && let Ok(head) = logbook_store::transcript::read_head(path)
    {
        keep_name(&mut transcript.metadata, &head.metadata);
    }
    let target = stored_path(dir, existing.as_ref(), kind, &id);
    let previous = existing.map(|(_, old)| old).filter(|old| *old != target);
    write_locked(
        p,
        &id,
        kind,
        &target,
        previous.as_deref(),
        transcript,
        imported,
    )?;
    // The run is written after the transcript's lock is released: the two
    // locks are never held together.
    drop(lock);
    if let Some(run_id) = run_id {
        run::record_conversation(
            p,
            &run_id,
            id.as_str(),
            transcript.first_user_text(),
            transcript.messages.len() as u64,
        )?;
    }
    Ok(target)
}

/// Writes a subagent's parent session id as a normal UUID, refusing one
/// that is not a UUID.
fn normalize_parent(transcript: &mut Transcript) -> Result<()> {
    if let Some(parent) = &mut transcript.metadata.parent_session_id {
        let normal = TranscriptId::parse(parent).map_err(|_| {
            Error::invalid(
                "metadata.parentSessionId",
                parent.clone(),
                "expected the parent main session's UUID",
            )
        })?;
        *parent = normal.to_string();
    }
    Ok(())
}

/// The run the transcript's `metadata.runId` names, stored back as its
/// full id; a `runId` naming no run is refused.
fn linked_run(p: &Logbook, transcript: &mut Transcript) -> Result<Option<RunId>> {
    let Some(given) = transcript.run_id() else {
        return Ok(None);
    };
    let given = given.to_string();
    let id = run::resolve(p, &given)
        .and_then(|id| logbook_store::run::load(p, &id).map(|_| id))
        .map_err(|e| match e {
            Error::NotFound { .. } | Error::Invalid { .. } => {
                Error::invalid("metadata.runId", given.clone(), e.to_string()).with_next(
                    Next::say("name an existing run (")
                        .step(Step::find_runs())
                        .text(" lists them) or remove runId"),
                )
            }
            e => e,
        })?;
    transcript
        .metadata
        .extra
        .insert(RUN_ID_KEY.into(), serde_json::Value::String(id.to_string()));
    Ok(Some(id))
}

/// Fills in what a saved transcript must have and the caller left empty:
/// times (now; an import keeps its own `timestamp`), the format version,
/// the workdir (the project) and its repository, and the latest total of
/// tokens (its last message's).
fn fill_defaults(p: &Logbook, transcript: &mut Transcript, imported: bool) {
    let now = p.clock.now_string();
    if !imported || transcript.timestamp.trim().is_empty() {
        transcript.timestamp = now.clone();
    }
    if transcript.version.trim().is_empty() {
        transcript.version = FORMAT_VERSION.to_string();
    }
    let md = &mut transcript.metadata;
    if md.workdir.is_empty() {
        md.workdir = p.root().to_string_lossy().into_owned();
    }
    if Repository::in_map(&md.extra).is_none()
        && let Some(repo) = logbook_store::repo::identify_recorded(Path::new(&md.workdir))
    {
        repo.record_in(&mut md.extra, Casing::Camel);
    }
    if md.started_at.is_empty() {
        md.started_at = now.clone();
    }
    if md.last_active_at.is_empty() {
        md.last_active_at = now;
    }
    if md.latest_total_tokens == 0 {
        md.latest_total_tokens = transcript
            .messages
            .iter()
            .rev()
            .find_map(|m| m.usage.as_ref()?.get("total_tokens")?.as_u64())
            .unwrap_or(0);
    }
}

/// Where transcript `id` of `kind` is written: over the file it is in
/// (`existing`) when that is of its kind, else under its short name, or
/// its long one when the short name is taken (by another id, or by a file
/// that cannot be read): such a file is never overwritten.
fn stored_path(
    dir: &Path,
    existing: Option<&(Kind, PathBuf)>,
    kind: Kind,
    id: &TranscriptId,
) -> PathBuf {
    match existing {
        Some((k, path)) if *k == kind => path.clone(),
        _ => {
            let short = dir.join(file_name(kind, id.as_str(), false));
            if logbook_store::transcript::name_taken(&short) {
                dir.join(file_name(kind, id.as_str(), true))
            } else {
                short
            }
        }
    }
}

/// The transcript a command-line id names: a whole UUID in any case, or at
/// least 8 characters of it, matched as the start of an id or as its end
/// (the short id that names its file). The live transcripts are looked up
/// in the index (files are read when it cannot be opened), the archived
/// ones in the archive folder. Several matches are an
/// [`Error::AmbiguousId`] listing them, never a guess.
pub fn resolve(p: &Logbook, text: &str) -> Result<TranscriptId> {
    let part = match IdArg::parse(
        "transcript id",
        text,
        Next::of(Step::list_transcripts(true), " lists transcripts"),
    )? {
        IdArg::Full(id) => return TranscriptId::parse(&id),
        IdArg::Prefix(part) => part,
    };
    let matches = |id: &str| {
        let id = id.to_ascii_lowercase();
        (id.starts_with(&part) || id.ends_with(&part)).then_some(id)
    };
    let mut ids: Vec<String> = match Index::open_synced_kind(p, IndexKind::Transcript)
        .and_then(|index| index.read().transcript_ids_matching(&part))
    {
        Ok(rows) => rows
            .into_iter()
            .filter_map(|(id, _)| matches(&id))
            .collect(),
        Err(_) => ids_in(&p.config.transcripts_dir, &matches),
    };
    ids.extend(ids_in(&logbook_store::transcript::archive_dir(p), &matches));
    ids.sort();
    ids.dedup();
    if ids.is_empty() {
        // A file named by that short id that cannot be read: say why,
        // rather than "not found".
        for (_, path) in logbook_store::transcript::candidates(&p.config.transcripts_dir, &part) {
            logbook_store::transcript::read_head(&path)?;
        }
    }
    match ids.len() {
        1 => TranscriptId::parse(&ids[0]),
        0 => Err(Error::not_found(
            "transcript",
            text.trim(),
            Next::say("no transcript id starts or ends with that; ")
                .step(Step::list_transcripts(true))
                .text(" shows the transcripts there are"),
        )),
        _ => Err(Error::AmbiguousId {
            kind: "transcript",
            given: text.trim().to_string(),
            candidates: ids,
        }),
    }
}

/// The ids of the transcript files in `dir` that `matches` keeps. A file
/// named by a full id is judged by its name; one named by a short id is
/// read (its head only) for the id inside.
fn ids_in(dir: &Path, matches: &dyn Fn(&str) -> Option<String>) -> Vec<String> {
    let mut out = vec![];
    for (name, path) in
        logbook_store::entries(dir, logbook_store::EntryKind::File).unwrap_or_default()
    {
        let Some((_, name_id)) = parse_file_name(&name) else {
            continue;
        };
        let id = if TranscriptId::parse(name_id).is_ok() {
            Some(name_id.to_string())
        } else {
            logbook_store::transcript::read_head(&path)
                .ok()
                .map(|h| h.id)
        };
        out.extend(id.as_deref().and_then(matches));
    }
    out
}

/// Writes `transcript` to `target` through the index, its transcript lock
/// held by the caller; `previous` is the file it replaces under another
/// name (its index row goes), `imported` the raw value whose other keys are
/// kept.
fn write_locked(
    p: &Logbook,
    id: &TranscriptId,
    kind: Kind,
    target: &Path,
    previous: Option<&Path>,
    transcript: &Transcript,
    imported: Option<&Value>,
) -> Result<()> {
    let pending = |path: &Path| Pending {
        kind: IndexKind::Transcript,
        path: path.to_path_buf(),
        lock: id.lock_name(),
    };
    let mut touched = vec![pending(target)];
    touched.extend(previous.map(pending));
    write_through(p, touched, || {
        logbook_store::transcript::write(target, transcript, previous, imported)?;
        let said = SaidText::of(&transcript.messages, MAX_SAID_BYTES).into_string();
        let mut records = vec![Some(Record::transcript(
            target,
            kind,
            id.as_str(),
            &transcript.metadata,
            said,
            transcript.first_prompt().as_deref(),
            transcript.messages.len() as u64,
            MessageText::of(&transcript.messages),
        ))];
        if previous.is_some() {
            records.push(None);
        }
        Ok(((), records))
    })
}

pub use crate::model::transcript::NAME_KEY;

/// Carries the stored title over to a new version of the same transcript
/// that does not give one of its own: a re-import from the agent's log, or a
/// save from an agent that never saw the name. The repository first
/// recorded is kept too: a re-import after the checkout moved must not lose
/// or change it.
fn keep_name(new: &mut Metadata, stored: &Metadata) {
    if let Some(repo) = stored.extra.get(REPOSITORY_KEY)
        && Repository::from_value(repo).is_some()
    {
        new.extra.insert(REPOSITORY_KEY.into(), repo.clone());
    }
    if let Some(name) = stored.extra.get(NAME_KEY)
        && !new.extra.contains_key(NAME_KEY)
    {
        new.extra.insert(NAME_KEY.into(), name.clone());
    }
}

/// Gives live transcript `id` a title that sticks (`metadata.name`), or
/// removes it when `name` is blank. Only the name changes: every other value
/// of the file is written back as it was read.
pub fn name(p: &Logbook, id: &str, name: &str) -> Result<Stored> {
    bounded("name", name)?;
    let id = resolve(p, id)?;
    let dir = &p.config.transcripts_dir;
    let lock = p.locks.exclusive(&id.lock_name())?;
    let Some((kind, path)) = logbook_store::transcript::find_live(dir, id.as_str()) else {
        return Err(Error::not_found(
            "transcript",
            id.as_str(),
            Next::say("only live transcripts are named; ")
                .step(Step::list_transcripts(false))
                .text(" shows them"),
        ));
    };
    let (mut transcript, raw) = logbook_store::transcript::read_file_raw(&path)?;
    let extra = &mut transcript.metadata.extra;
    match name.trim() {
        "" => extra.remove(NAME_KEY),
        text => extra.insert(NAME_KEY.into(), Value::String(text.to_string())),
    };
    let mut raw = raw;
    // The name is the one value this write owns: drop the one read, so the
    // merge takes the new one (or its absence).
    if let Some(md) = raw.get_mut("metadata").and_then(Value::as_object_mut) {
        md.remove(NAME_KEY);
    }
    write_locked(p, &id, kind, &path, None, &transcript, Some(&raw))?;
    drop(lock);
    Ok(Stored {
        transcript,
        kind,
        path,
        archived: false,
    })
}

/// Loads a transcript by its UUID, or by a unique part of it (see
/// [`resolve`]), looking at both prefixes, live first, then the archive.
/// The id inside the file must match (case aside).
pub fn load(p: &Logbook, id: &str) -> Result<Stored> {
    let (transcript, kind, path, archived) =
        locate(p, id, logbook_store::transcript::read_file, |t| &t.id)?;
    Ok(Stored {
        transcript,
        kind,
        path,
        archived,
    })
}

/// Finds transcript `id` (resolved as [`resolve`] does) among the live
/// files, then the archived ones, reading each candidate file with `read`
/// until one holds that id (`id_of`); returns what was read, its kind, its
/// file and whether it is archived. A candidate that cannot be read is
/// reported when no other holds the id.
fn locate<T>(
    p: &Logbook,
    id: &str,
    read: impl Fn(&Path) -> Result<T>,
    id_of: impl Fn(&T) -> &str,
) -> Result<(T, Kind, PathBuf, bool)> {
    let id = resolve(p, id)?;
    let mut unreadable: Option<Error> = None;
    for (dir, archived) in [
        (p.config.transcripts_dir.clone(), false),
        (logbook_store::transcript::archive_dir(p), true),
    ] {
        for (kind, path) in logbook_store::transcript::candidates(&dir, id.as_str()) {
            match read(&path) {
                Ok(t) if id_of(&t).eq_ignore_ascii_case(id.as_str()) => {
                    return Ok((t, kind, path, archived));
                }
                Ok(_) => {}
                Err(e) => {
                    unreadable.get_or_insert(e);
                }
            }
        }
    }
    Err(unreadable.unwrap_or_else(|| {
        Error::not_found(
            "transcript",
            id.as_str(),
            Next::of(
                Step::list_transcripts(true),
                " shows the transcripts there are",
            ),
        )
    }))
}

/// A stretch of a stored transcript's messages with where it was found
/// ([`load_window`]).
#[derive(Debug, Clone)]
pub struct StoredWindow {
    /// The head, the window's messages, where they start and the total.
    pub window: Window,
    /// Main or subagent, from the file name.
    pub kind: Kind,
    /// The file it was read from.
    pub path: PathBuf,
    /// True when found in `{transcripts_dir}/archive/`.
    pub archived: bool,
}

/// Loads messages `[from, from + count)` of a transcript, found as [`load`]
/// finds it, and how many it holds, reading its file streaming: memory is
/// bounded by the window, so a page of a session of hundreds of MiB costs
/// what a small one does. With [`WindowStop::Early`] reading stops once the
/// head and the window are had and the total is known (see
/// [`logbook_store::transcript::read_window`]).
pub fn load_window(
    p: &Logbook,
    id: &str,
    from: usize,
    count: usize,
    stop: WindowStop,
) -> Result<StoredWindow> {
    let (window, kind, path, archived) = locate(
        p,
        id,
        |path| logbook_store::transcript::read_window(path, from, count, stop),
        |w| &w.transcript.id,
    )?;
    Ok(StoredWindow {
        window,
        kind,
        path,
        archived,
    })
}

/// Lists live transcripts of both prefixes from the index (synced first by a
/// stat of each transcript file), newest `lastActiveAt` first, filtered and
/// paged; files that cannot be read are returned in [`Listing::corrupt`].
pub fn list(p: &Logbook, opts: &ListOptions) -> Result<Listing> {
    let index = Index::open_synced_kind(p, IndexKind::Transcript)?;
    let corrupt = index
        .read()
        .corrupt_files()?
        .into_iter()
        .filter(|c| c.kind == IndexKind::Transcript)
        .map(|c| CorruptFile {
            path: c.path,
            reason: c.reason,
        })
        .collect();
    let said = (!opts.filter.text.is_empty()).then(|| opts.filter.text.join(" "));
    let (here, elsewhere): (Vec<_>, Vec<_>) = index
        .read()
        .transcripts(opts.kind, said.as_deref(), None, None)?
        .into_iter()
        .filter(|t| filtered(&opts.filter, t))
        .partition(|t| in_scope(t, opts.within.as_deref(), opts.repo.as_ref()));
    let liveness = live::Liveness::read(p);
    let transcripts: Vec<Summary> = here
        .into_iter()
        .filter(|t| !opts.live || liveness.of(&t.id, &t.file, t.parent_session_id.as_deref()))
        .skip(opts.offset)
        .take(opts.limit.unwrap_or(usize::MAX))
        .collect();
    Ok(Listing {
        live: liveness.of_rows(&transcripts),
        transcripts,
        corrupt,
        elsewhere: elsewhere.len(),
    })
}

/// The scope rule of a listing: a transcript recorded with a repository is
/// in when it is `repo`'s; one without (or with only a folder outside git,
/// or when no repository is asked) when its workdir is inside `within`.
fn in_scope(t: &Summary, within: Option<&Path>, repo: Option<&Repository>) -> bool {
    match (t.repository.as_ref().filter(|r| r.in_git()), repo) {
        (Some(have), Some(want)) if want.in_git() => have.matches(want),
        _ => within.is_none_or(|root| logbook_store::transcript::is_within(&t.workdir, root)),
    }
}

/// The default scope of a listing run in `cwd`: the cwd's repository, and
/// the transcripts without one whose workdir is inside the project, or,
/// in the per-user home, inside the cwd's checkout. Returns
/// [`ListOptions::within`] and [`ListOptions::repo`].
pub fn default_scope(p: &Logbook, cwd: &Path) -> (Option<PathBuf>, Option<Repository>) {
    let repo = logbook_store::repo::identify(cwd);
    let within = match &repo {
        Some(r) if p.is_user_home() && !r.folder.is_empty() => PathBuf::from(&r.folder),
        _ => p.root().to_path_buf(),
    };
    (Some(within), repo)
}

/// Whether a listing row passes `filter` (its words were answered by the
/// index's full text already): from the row alone, source and model
/// included (the index keeps them), so no transcript file is opened.
fn filtered(filter: &Filter, row: &Summary) -> bool {
    filter.matches_row(row, logbook_store::transcript::is_within)
}

/// How many transcripts `find --text` shows under its runs.
pub const FIND_SHOWN: usize = 5;

/// The transcripts that say a `find --text` query's words, as `find` shows
/// them after its runs: at most [`FIND_SHOWN`], best match first, each with
/// a snippet, and how many match in all.
#[derive(Debug, Clone, Default)]
pub struct Said {
    /// The transcripts shown.
    pub hits: Vec<TranscriptHit>,
    /// How many say the words, shown or not.
    pub total: u64,
    /// The words, as `transcript list --text` takes them.
    pub words: String,
}

impl Said {
    /// How many match beyond those shown.
    pub fn more(&self) -> u64 {
        self.total.saturating_sub(self.hits.len() as u64)
    }
}

/// The transcripts a `find` query also answers with, or `None` when it
/// asks nothing of them: only a text query on its first page whose other
/// filters a transcript has too (`--since`, its last activity). Filters
/// only runs have (agent, workflow, status, user, tag) keep transcripts
/// out. Every transcript stored in the project is searched, whatever its
/// workdir (as `transcript list --all`).
pub fn said_for_find(p: &Logbook, query: &RunQuery) -> Result<Option<Said>> {
    let Some(words) = query.text.as_deref().filter(|t| !t.trim().is_empty()) else {
        return Ok(None);
    };
    let runs_only = query.agent.is_some()
        || query.workflow.is_some()
        || query.status.is_some()
        || query.user.is_some()
        || query.tag.is_some();
    if runs_only || query.offset > 0 {
        return Ok(None);
    }
    let index = Index::open_synced_kind(p, IndexKind::Transcript)?;
    let (hits, total) = index
        .read()
        .find_transcripts(words, query.since, FIND_SHOWN)?;
    Ok(Some(Said {
        hits,
        total,
        words: words.split_whitespace().collect::<Vec<_>>().join(" "),
    }))
}

/// Reads a transcript given as a JSON file (seed 003's format; a regular
/// file of at most [`logbook_store::transcript::MAX_IMPORT_BYTES`]) and saves it.
/// It is a subagent transcript when `subagent` is set, a `parent` is given or
/// the file names one in `metadata.parentSessionId`. `run` links it to a run
/// (`metadata.runId`, see [`save`]).
pub fn import(
    p: &Logbook,
    file: &Path,
    subagent: bool,
    parent: Option<&str>,
    run: Option<&str>,
) -> Result<Stored> {
    if logbook_store::agent_log::log_len(file).is_ok_and(|n| n == 0) {
        return Err(Error::NotImported {
            path: file.to_path_buf(),
            reason: import::EMPTY.into(),
        });
    }
    let parsed = logbook_store::transcript::read_import(file)?;
    import_parsed(p, parsed, subagent, parent, run)
}

/// [`import`] of a transcript given as JSON text (seed 003's format) rather
/// than a file: what an agent hands the MCP server's `transcript_save`.
pub fn import_text(
    p: &Logbook,
    text: &str,
    subagent: bool,
    parent: Option<&str>,
    run: Option<&str>,
) -> Result<Stored> {
    let parsed = logbook_store::transcript::parse_text(Path::new("transcript argument"), text)?;
    import_parsed(p, parsed, subagent, parent, run)
}

fn import_parsed(
    p: &Logbook,
    (mut t, raw): (Transcript, Value),
    subagent: bool,
    parent: Option<&str>,
    run: Option<&str>,
) -> Result<Stored> {
    if let Some(parent) = parent {
        t.metadata.parent_session_id = Some(parent.to_string());
    }
    if let Some(run) = run {
        let id: RunId = run::resolve(p, run)?;
        logbook_store::run::load(p, &id)?;
        t.metadata
            .extra
            .insert(RUN_ID_KEY.into(), serde_json::Value::String(id.to_string()));
    }
    let kind = if subagent || t.metadata.parent_session_id.is_some() {
        Kind::Subagent
    } else {
        Kind::Main
    };
    let path = save_as(p, &mut t, kind, Some(&raw))?;
    Ok(Stored {
        transcript: t,
        kind,
        path,
        archived: false,
    })
}

// The JSON every face prints for these operations (`--json`, MCP structured
// content, the web API): built here once so the faces cannot drift apart.

/// `transcript import --json`: id, kind, file, message count and the run it
/// was linked to, if any.
pub fn imported_json(stored: &Stored) -> Value {
    let mut json = serde_json::json!({
        "id": stored.transcript.id,
        "kind": stored.kind,
        "file": stored.path,
        "messages": stored.transcript.messages.len(),
    });
    if let Value::Object(o) = &mut json {
        if let Some(run_id) = stored.transcript.run_id() {
            o.insert("run".into(), Value::String(run_id.to_string()));
        }
        if let Some(name) = stored.transcript.metadata.extra.get(NAME_KEY) {
            o.insert("name".into(), name.clone());
        }
    }
    json
}

/// `transcript import FILE --json` of one seed 003 file: the import report
/// every input kind prints (`{"imported", "updated", "unchanged",
/// "skipped"}`), plus, for scripts written before it, the transcript's
/// own answer ([`imported_json`]: `id`, `kind`, `file`, `messages`, `run`,
/// `name`) at the top.
pub fn seed_import_json(report: &ImportReport, stored: &Stored) -> Result<Value> {
    let mut json = crate::model::to_json("import report", report)?;
    if let (Value::Object(out), Value::Object(own)) = (&mut json, imported_json(stored)) {
        for (k, v) in own {
            out.entry(k).or_insert(v);
        }
    }
    Ok(json)
}

/// `transcript list --json`: the summaries, newest `lastActiveAt` first,
/// each with `live`.
pub fn listing_json(listing: &Listing) -> Result<Value> {
    let mut json = crate::model::to_json("transcripts", &listing.transcripts)?;
    if let Value::Array(rows) = &mut json {
        for row in rows {
            if let Value::Object(o) = row {
                let id = o.get("id").and_then(Value::as_str).unwrap_or_default();
                let live = listing.live.contains(id);
                o.insert("live".into(), Value::Bool(live));
            }
        }
    }
    Ok(json)
}
