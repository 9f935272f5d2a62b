//! Workflow state files on disk: `{sessions_dir}/{id}.state.json` and the
//! compaction archives in `{sessions_dir}/{id}.history/`. The archive is
//! written before the state, and only archives named in `compactionHistory`
//! are read back, so a crash between the two writes neither loses nor
//! duplicates an invocation. The caller holds the state's lock for writes.

use std::path::{Component, Path, PathBuf};

use serde_json::Value;

use logbook_model::error::{Error, Result};
use logbook_model::text;
use logbook_model::workflow::{AgentInvocation, CompactionArchive, SessionState, merge_history};

/// Whether a compaction archive is at `path` already (compaction picks
/// another name for a note then).
pub fn archive_exists(path: &Path) -> bool {
    path.exists()
}

/// Removes a compaction archive whose invocations the state holds all of
/// (`doctor --fix`).
pub fn remove_archive(path: &Path) -> std::io::Result<()> {
    std::fs::remove_file(path)
}

/// Reads a state file; `Ok(None)` when there is none.
pub fn read_state(path: &Path) -> Result<Option<(SessionState, Value)>> {
    let Some(text) = crate::read_optional(path, "workflow state")? else {
        return Ok(None);
    };
    text::parse_json_with_raw(path, "workflow state", &text).map(Some)
}

/// Writes the compaction archive (if any) and then the state, keeping the
/// state file's key order.
pub fn write_state(
    path: &Path,
    state: &SessionState,
    original: Option<&Value>,
    archive: Option<(&Path, &CompactionArchive)>,
) -> Result<()> {
    if let Some((archive_path, archive)) = archive {
        let text = text::to_json(archive_path, archive, None)?;
        crate::write_atomic(archive_path, text.as_bytes())?;
    }
    let text = text::to_json(path, state, original)?;
    crate::write_atomic(path, text.as_bytes())
}

/// The workflow state files in `dir` (not temp files).
pub fn state_files(dir: &Path) -> Result<Vec<PathBuf>> {
    Ok(crate::entries(dir, crate::EntryKind::File)?
        .into_iter()
        .filter(|(name, _)| name.ends_with(".state.json"))
        .map(|(_, path)| path)
        .collect())
}

/// Resolves a `notePath` against the folder of the state file, refusing
/// anything that would leave it.
pub fn archive_path(state_dir: &Path, note_path: &str) -> Result<PathBuf> {
    let rel = Path::new(note_path);
    if rel.components().all(|c| matches!(c, Component::Normal(_))) && !note_path.is_empty() {
        Ok(state_dir.join(rel))
    } else {
        Err(Error::invalid(
            "compactionHistory.notePath",
            note_path,
            "expected a path relative to the sessions folder, e.g. SES202601-ACME-STORE.history/2026-01-19T09-29-00-000Z.json",
        ))
    }
}

/// Every invocation of the workflow whose state file is `state_path`,
/// archived and current, in the order they began. An archive that is
/// missing or unreadable (say, a state file copied from another machine
/// without its `.history/` folder) is left out and described in the returned
/// problems, so the rest of the history still shows.
pub fn full_history(
    state_path: &Path,
    state: &SessionState,
) -> (Vec<AgentInvocation>, Vec<String>) {
    let Some(wf) = &state.orchestrator_workflow else {
        return (vec![], vec![]);
    };
    let state_dir = state_path.parent().unwrap_or(Path::new("."));
    let mut archives = Vec::with_capacity(wf.compaction_history.len());
    let mut problems = Vec::new();
    for (i, entry) in wf.compaction_history.iter().enumerate() {
        let read = archive_path(state_dir, &entry.note_path).and_then(|path| {
            match crate::read_optional(&path, "compaction archive")? {
                Some(text) => {
                    text::parse_json::<CompactionArchive>(&path, "compaction archive", &text)
                        .map(Some)
                }
                None => {
                    problems.push(format!(
                        "{}: compaction archive named in compactionHistory[{i}] is missing; its {} invocations are left out of fullHistory",
                        path.display(),
                        entry.count
                    ));
                    Ok(None)
                }
            }
        });
        match read {
            Ok(Some(archive)) => archives.push(archive),
            Ok(None) => {}
            Err(e) => problems.push(format!(
                "{e}; its {} invocations are left out of fullHistory",
                entry.count
            )),
        }
    }
    (merge_history(wf.agent_history.clone(), archives), problems)
}
