//! `transcript prune`: transcripts last active long ago move to
//! `{transcripts_dir}/archive/`; nothing is deleted.

use crate::Logbook;
use std::path::PathBuf;

use serde::Serialize;
use serde_json::Value;

use super::{ListOptions, list};
use crate::clock;
use crate::error::Result;
use crate::model::CorruptFile;
use crate::model::ids::TranscriptId;
use crate::model::transcript::{Kind, file_name};
use crate::ops::write_through;
use logbook_index::{Kind as IndexKind, Pending};

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
pub fn prune(p: &Logbook, days: u64, dry_run: bool) -> Result<PruneReport> {
    let now = p.clock.now();
    let secs = i64::try_from(days.saturating_mul(86_400)).unwrap_or(i64::MAX);
    let cutoff = now.as_second().saturating_sub(secs);
    let listing = list(p, &ListOptions::default())?;
    let mut report = PruneReport {
        corrupt: listing.corrupt,
        ..PruneReport::default()
    };
    let archive = logbook_store::transcript::archive_dir(p);
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
        match logbook_store::transcript::read_head(&s.file) {
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
        while logbook_store::transcript::name_taken(&to) {
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
                logbook_store::move_durably(&s.file, &to)?;
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

/// `transcript prune --json`.
pub fn pruned_json(report: &PruneReport, dry_run: bool) -> Value {
    serde_json::json!({
        "dryRun": dry_run,
        "moved": report.moved,
        "corrupt": report.corrupt,
    })
}
