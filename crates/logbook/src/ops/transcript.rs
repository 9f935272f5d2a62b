//! Transcripts (seed 003): save, import, load, list and prune the message
//! histories of main agents and subagents.
//!
//! The public API is what an MCP server needs: [`save`], [`load`], [`list`],
//! plus [`import`] and [`prune`] for the CLI.
//!
//! ```no_run
//! use logbook::{Project, ops::transcript::{self, ListOptions}};
//! let project = Project::discover(&std::env::current_dir()?, None)?;
//! for t in transcript::list(&project, &ListOptions::default())?.transcripts {
//!     println!("{} {:?} {}", t.id, t.kind, t.last_active_at);
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::clock;
use crate::error::{Error, Result};
use crate::index::{Index, Kind as IndexKind, Pending, Record};
use crate::model::CorruptFile;
use crate::model::ids::TranscriptId;
use crate::model::transcript::{FORMAT_VERSION, Kind, Stored, Summary, Transcript, file_name};
use crate::ops::write_through;
use crate::store::{self, Project};

/// Which transcripts [`list`] returns.
#[derive(Debug, Clone, Default)]
pub struct ListOptions {
    /// Only transcripts whose workdir is this folder or inside it; `None`
    /// lists every workdir (`--all`).
    pub within: Option<PathBuf>,
    /// Only this kind; `None` lists both.
    pub kind: Option<Kind>,
    /// At most this many.
    pub limit: Option<usize>,
    /// After skipping this many.
    pub offset: usize,
}

/// The result of [`list`]: readable transcripts newest first, and the files
/// that could not be read (reported, never fatal).
#[derive(Debug, Clone, Default)]
pub struct Listing {
    /// Newest `lastActiveAt` first.
    pub transcripts: Vec<Summary>,
    /// Files named like transcripts that could not be read.
    pub corrupt: Vec<CorruptFile>,
}

/// Saves a transcript: `timestamp` becomes now, missing metadata is filled
/// (workdir: the project root; times: now), and the file is written
/// atomically through the index. An id that already has a file keeps it; a
/// new id whose short name is taken by another id is stored under its full
/// id. Saving with the other kind renames the file. Returns where it was
/// written.
pub fn save(p: &Project, transcript: &mut Transcript, kind: Kind) -> Result<PathBuf> {
    save_as(p, transcript, kind, None)
}

/// [`save`], or with `imported` (the raw JSON of a transcript file another
/// tool wrote) an import: the file's own `timestamp` is kept when it has
/// one, and every value the save does not fill in is written as it was.
fn save_as(
    p: &Project,
    transcript: &mut Transcript,
    kind: Kind,
    imported: Option<&Value>,
) -> Result<PathBuf> {
    let id = TranscriptId::parse(&transcript.id)?;
    if let Some(parent) = &transcript.metadata.parent_session_id {
        TranscriptId::parse(parent).map_err(|_| {
            Error::invalid(
                "metadata.parentSessionId",
                parent.clone(),
                "expected the parent main session's UUID",
            )
        })?;
    }
    let now = clock::now_string();
    if imported.is_none() || transcript.timestamp.trim().is_empty() {
        transcript.timestamp = now.clone();
    }
    if transcript.version.trim().is_empty() {
        transcript.version = FORMAT_VERSION.to_string();
    }
    let md = &mut transcript.metadata;
    if md.workdir.is_empty() {
        md.workdir = p.root().to_string_lossy().into_owned();
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

    let dir = &p.config.transcripts_dir;
    let _lock = p.locks.exclusive(&id.lock_name())?;
    let existing = store::transcript::find_live(dir, id.as_str());
    let target = match &existing {
        Some((k, path)) if *k == kind => path.clone(),
        _ => {
            let short = dir.join(file_name(kind, id.as_str(), false));
            // A short name that is taken (by another id, or by a file we
            // cannot read) is never overwritten.
            if short.exists() {
                dir.join(file_name(kind, id.as_str(), true))
            } else {
                short
            }
        }
    };
    let previous = existing.map(|(_, old)| old).filter(|old| *old != target);
    let pending = |path: &Path| Pending {
        kind: IndexKind::Transcript,
        path: path.to_path_buf(),
        lock: id.lock_name(),
    };
    let mut touched = vec![pending(&target)];
    touched.extend(previous.as_deref().map(pending));
    write_through(p, touched, || {
        store::transcript::write(&target, transcript, previous.as_deref(), imported)?;
        let mut records = vec![Some(Record::transcript(
            &target,
            kind,
            id.as_str(),
            &transcript.metadata,
        ))];
        if previous.is_some() {
            records.push(None);
        }
        Ok(((), records))
    })?;
    Ok(target)
}

/// Loads a transcript by its UUID (or by the 8-character short id of its
/// file), looking at both prefixes, live first, then the archive. The id
/// inside the file must match.
pub fn load(p: &Project, id: &str) -> Result<Stored> {
    let id = id.trim();
    let is_short = id.len() == 8 && id.chars().all(|c| c.is_ascii_hexdigit());
    if !is_short {
        TranscriptId::parse(id)?;
    }
    let mut unreadable: Option<Error> = None;
    let mut found: Vec<Stored> = vec![];
    for (dir, archived) in [
        (p.config.transcripts_dir.clone(), false),
        (store::transcript::archive_dir(p), true),
    ] {
        let cands = if is_short {
            [Kind::Main, Kind::Subagent]
                .into_iter()
                .map(|k| (k, dir.join(format!("{}_{id}.json", k.prefix()))))
                .filter(|(_, path)| path.is_file())
                .collect()
        } else {
            store::transcript::candidates(&dir, id)
        };
        for (kind, path) in cands {
            match store::transcript::read_file(&path) {
                Ok(t) if is_short || t.id == id => found.push(Stored {
                    transcript: t,
                    kind,
                    path,
                    archived,
                }),
                Ok(_) => {}
                Err(e) => {
                    unreadable.get_or_insert(e);
                }
            }
            if !is_short && !found.is_empty() {
                break;
            }
        }
        if !found.is_empty() {
            break;
        }
    }
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err(unreadable.unwrap_or_else(|| {
            Error::not_found(
                "transcript",
                id,
                "`logbook transcript list --all` shows the transcripts there are",
            )
        })),
        _ => Err(Error::invalid(
            "transcript id",
            id,
            format!(
                "short id is ambiguous ({}); give the full UUID",
                found
                    .iter()
                    .map(|s| s.transcript.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
    }
}

/// Lists live transcripts of both prefixes from the index (synced first by a
/// stat of each transcript file), newest `lastActiveAt` first, filtered and
/// paged; files that cannot be read are returned in [`Listing::corrupt`].
pub fn list(p: &Project, opts: &ListOptions) -> Result<Listing> {
    let index = Index::open_synced_kind(p, IndexKind::Transcript)?;
    let corrupt = index
        .corrupt_files()?
        .into_iter()
        .filter(|c| c.kind == IndexKind::Transcript)
        .map(|c| CorruptFile {
            path: c.path,
            reason: c.reason,
        })
        .collect();
    let transcripts = index
        .transcripts(opts.kind, None, None)?
        .into_iter()
        .filter(|t| {
            opts.within
                .as_ref()
                .is_none_or(|root| store::transcript::is_within(&t.workdir, root))
        })
        .skip(opts.offset)
        .take(opts.limit.unwrap_or(usize::MAX))
        .collect();
    Ok(Listing {
        transcripts,
        corrupt,
    })
}

/// Reads a transcript given as a JSON file (seed 003's format) and saves it.
/// It is a subagent transcript when `subagent` is set, a `parent` is given or
/// the file names one in `metadata.parentSessionId`.
pub fn import(p: &Project, file: &Path, subagent: bool, parent: Option<&str>) -> Result<Stored> {
    let (mut t, raw) = store::transcript::read_file_raw(file)?;
    if let Some(parent) = parent {
        t.metadata.parent_session_id = Some(parent.to_string());
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

/// One transcript `prune` moved (or would move).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Pruned {
    /// The session UUID.
    pub id: String,
    /// Main or subagent.
    pub kind: Kind,
    /// When it was last active.
    pub last_active_at: String,
    /// Where it was.
    pub from: PathBuf,
    /// Where it went (or would go).
    pub to: PathBuf,
}

/// What [`prune`] did.
#[derive(Debug, Clone, Default)]
pub struct PruneReport {
    /// Transcripts moved to the archive (or that would be, on a dry run).
    pub moved: Vec<Pruned>,
    /// Files that could not be read, left where they are.
    pub corrupt: Vec<CorruptFile>,
}

/// Moves transcripts last active more than `days` days ago to
/// `{transcripts_dir}/archive/` (nothing is deleted). With `dry_run`, only
/// reports what would move. Transcripts without a readable `lastActiveAt`
/// stay.
pub fn prune(p: &Project, days: u64, dry_run: bool) -> Result<PruneReport> {
    let now = clock::now();
    let secs = i64::try_from(days.saturating_mul(86_400)).unwrap_or(i64::MAX);
    let cutoff = now.as_second().saturating_sub(secs);
    let listing = list(p, &ListOptions::default())?;
    let mut report = PruneReport {
        corrupt: listing.corrupt,
        ..PruneReport::default()
    };
    let archive = store::transcript::archive_dir(p);
    for s in listing.transcripts {
        let Some(ts) = clock::parse(&s.last_active_at) else {
            continue;
        };
        if ts.as_second() >= cutoff {
            continue;
        }
        let Ok(id) = TranscriptId::parse(&s.id) else {
            continue;
        };
        let _lock = p.locks.exclusive(&id.lock_name())?;
        // Re-check under the lock: a save may have touched it since listing.
        match store::transcript::read_head(&s.file) {
            Ok(h) if h.id == s.id && h.metadata.last_active_at == s.last_active_at => {}
            _ => continue,
        }
        let name = s
            .file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut to = archive.join(&name);
        let mut n = 1;
        while to.exists() {
            n += 1;
            to = if n == 2 {
                archive.join(file_name(s.kind, &s.id, true))
            } else {
                archive.join(format!("{}_{}.{n}.json", s.kind.prefix(), s.id))
            };
        }
        if !dry_run {
            let gone = Pending {
                kind: IndexKind::Transcript,
                path: s.file.clone(),
                lock: id.lock_name(),
            };
            write_through(p, vec![gone], || {
                store::move_durably(&s.file, &to)?;
                Ok(((), vec![None]))
            })?;
        }
        report.moved.push(Pruned {
            id: s.id,
            kind: s.kind,
            last_active_at: s.last_active_at,
            from: s.file,
            to,
        });
    }
    Ok(report)
}
