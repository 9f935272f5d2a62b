//! Work session files on disk: `{sessions_dir}/{id}.yaml`, the active-session
//! pointer `{sessions_dir}/active-session.yaml`, and the move of a closed
//! session (with its workflow state) to `{session_archive_dir}/`.
//!
//! Locks are taken by the caller in the order DESIGN §8 fixes: the
//! active-session pointer ([`POINTER_LOCK`]), then one work session.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::Project;
use logbook_model::error::{Error, Next, Result, Step};
use logbook_model::ids::WorkSessionId;
use logbook_model::text;
use logbook_model::work_session::{
    SessionStatus, WorkSession, check_token_counts, forget_migrated_keys,
};

/// File naming the active session inside `sessions_dir`.
pub const POINTER_FILE: &str = "active-session.yaml";
/// Lock guarding the active-session pointer; taken shared by writers of a
/// session's companions (workflow state) so `close` cannot move them midway.
pub const POINTER_LOCK: &str = "active-session";

/// Where a live session's file is.
pub fn live_path(p: &Project, id: &WorkSessionId) -> PathBuf {
    id.session_file(&p.config.sessions_dir)
}

/// Where a closed session's file is.
pub fn archived_path(p: &Project, id: &WorkSessionId) -> PathBuf {
    id.session_file(&p.config.session_archive_dir)
}

/// Whether session `id` has a file in the live folder.
pub fn is_live(p: &Project, id: &WorkSessionId) -> bool {
    live_path(p, id).is_file()
}

/// Whether session `id` has a file (or anything) in the archive.
pub fn is_archived(p: &Project, id: &WorkSessionId) -> bool {
    archived_path(p, id).exists()
}

/// Whether id `id` is taken by a session, live or archived (a new session
/// gets another).
pub fn is_taken(p: &Project, id: &WorkSessionId) -> bool {
    live_path(p, id).exists() || is_archived(p, id)
}

/// Reads one session file, filling the configured budget where none is set.
pub fn read_file(p: &Project, path: &Path) -> Result<WorkSession> {
    let mut ws = read_raw(path)?.0;
    if ws.tokens.max == 0 {
        ws.tokens.max = p.config.token_budget;
    }
    Ok(ws)
}

/// Reads one session file as it is (no configured defaults), with the raw
/// value a rewrite keeps what it does not change of.
pub fn read_raw(path: &Path) -> Result<(WorkSession, Value)> {
    let text = std::io::read_to_string(crate::open_record_file(path, "work session")?)
        .map_err(|e| Error::io(path, e))?;
    let raw = text::parse_yaml_raw(path, "work session", &text)?;
    // Before the record: a count too large is its own error, naming the field.
    check_token_counts(path, &raw)?;
    let ws = text::yaml_record::<WorkSession>(path, "work session", &text, &raw)?;
    Ok((ws, raw))
}

/// Writes a session file (the caller holds the session's lock). The file
/// it replaces is read again first: under the lock it is the one the
/// caller read, and every value the change did not touch is written back
/// as it was (big integers, `null`s, unknown keys of any YAML type).
pub fn write_file(path: &Path, ws: &WorkSession) -> Result<()> {
    let original = match crate::read_optional(path, "work session")? {
        Some(text) => text::parse_yaml_raw(path, "work session", &text)
            .ok()
            .map(|mut raw| {
                forget_migrated_keys(&mut raw);
                raw
            }),
        None => None,
    };
    crate::write_atomic(path, text::to_yaml(path, ws, original.as_ref())?.as_bytes())
}

/// Removes a session file that was written but must not stay (the caller
/// holds the session's lock).
pub fn remove_file(p: &Project, path: &Path) -> Result<()> {
    std::fs::remove_file(path).map_err(|e| Error::io(path, e))?;
    crate::sync_dir(&p.config.sessions_dir)
}

/// Finds a session by id, live or archived: its record and file.
pub fn load(p: &Project, id: &WorkSessionId) -> Result<(WorkSession, PathBuf)> {
    for path in [live_path(p, id), archived_path(p, id)] {
        if path.is_file() {
            let ws = read_file(p, &path)?;
            // A file renamed by hand must not let a command naming one
            // session change another.
            if ws.session_id != id.as_str() {
                return Err(Error::IdMismatch {
                    path,
                    expected: id.to_string(),
                    found: ws.session_id,
                });
            }
            return Ok((ws, path));
        }
    }
    Err(Error::not_found(
        "work session",
        id.as_str(),
        Next::of(Step::ListSessions, " shows the sessions there are"),
    ))
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Pointer {
    #[serde(default)]
    session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    activated: Option<String>,
    #[serde(flatten)]
    extra: Map<String, Value>,
}

fn pointer_path(p: &Project) -> PathBuf {
    p.config.sessions_dir.join(POINTER_FILE)
}

/// The active session's id (no lock: a reader). It is the one
/// `active-session.yaml` names; without that file, or with a cleared one
/// (`session_id: null`, as `close` and `pause` leave it), the one live
/// session whose own status is `active`, so a session file written by hand
/// or by a start killed before it wrote the pointer is still found.
pub fn active_id(p: &Project) -> Result<Option<String>> {
    let path = pointer_path(p);
    match crate::read_optional(&path, "active-session pointer")? {
        Some(text) if !text.trim().is_empty() => match pointer_id(&path, &text)? {
            Some(id) => Ok(Some(id)),
            None => sole_active_session(p),
        },
        _ => sole_active_session(p),
    }
}

/// The keys a pointer may name its session by, Logbook's first.
const POINTER_KEYS: [&str; 4] = ["session_id", "active_session", "active_session_id", "id"];

/// Reads the pointer leniently: Logbook writes `session_id: ID`; other tools
/// may write the bare id or another obvious key.
fn pointer_id(path: &Path, text: &str) -> Result<Option<String>> {
    let value: Value = text::parse_yaml(path, "active-session pointer", text)?;
    let id = match &value {
        Value::String(s) => Some(s.clone()),
        Value::Object(m) => POINTER_KEYS
            .iter()
            .find_map(|k| m.get(*k))
            .and_then(|v| v.as_str().map(str::to_string)),
        _ => None,
    };
    Ok(id.map(|s| s.trim().to_string()).filter(|s| !s.is_empty()))
}

fn sole_active_session(p: &Project) -> Result<Option<String>> {
    let mut active = session_files(&p.config.sessions_dir)?
        .into_iter()
        .filter_map(|path| read_file(p, &path).ok())
        .filter(|ws| ws.status == SessionStatus::Active)
        .filter(|ws| WorkSessionId::parse(&ws.session_id).is_ok());
    match (active.next(), active.next()) {
        (Some(ws), None) => Ok(Some(ws.session_id)),
        _ => Ok(None),
    }
}

/// Names `id` as the active session, or clears the pointer (the caller
/// holds [`POINTER_LOCK`] exclusively). Clearing keeps the file with
/// `session_id: null`, as seed 002's "clear active-session.yaml" reads: a
/// seed reader that loads it finds no active session, where a deleted file
/// would be an error to it. Keys another tool wrote are kept, those naming a
/// session set to null too.
pub fn set_pointer(p: &Project, id: Option<&WorkSessionId>) -> Result<()> {
    let path = pointer_path(p);
    let ptr = match id {
        Some(id) => Pointer {
            session_id: Some(id.as_str().to_string()),
            activated: Some(p.clock.now_string()),
            extra: Map::new(),
        },
        None => {
            // What another tool kept beside the id survives; an unreadable
            // pointer (the reason it is being cleared, maybe) does not.
            let old = crate::read_optional(&path, "active-session pointer")
                .ok()
                .flatten()
                .and_then(|t| text::parse_yaml::<Value>(&path, "active-session pointer", &t).ok());
            let mut extra = match old {
                Some(Value::Object(m)) => m,
                _ => Map::new(),
            };
            extra.remove("session_id");
            extra.remove("activated");
            for key in &POINTER_KEYS[1..] {
                if let Some(v) = extra.get_mut(*key) {
                    *v = Value::Null;
                }
            }
            Pointer {
                session_id: None,
                activated: None,
                extra,
            }
        }
    };
    crate::write_atomic(&path, text::to_yaml(&path, &ptr, None)?.as_bytes())
}

/// Moves a session's file, workflow state and history to the archive (the
/// caller holds the pointer and session locks).
pub fn move_to_archive(p: &Project, id: &WorkSessionId) -> Result<()> {
    for name in id.companions() {
        let from = p.config.sessions_dir.join(&name);
        if from.exists() {
            crate::move_durably(&from, &p.config.session_archive_dir.join(&name))?;
        }
    }
    Ok(())
}

/// The session YAML files in `dir` (not the pointer, not temp files).
pub fn session_files(dir: &Path) -> Result<Vec<PathBuf>> {
    Ok(crate::entries(dir, crate::EntryKind::File)?
        .into_iter()
        .filter(|(name, _)| {
            (name.ends_with(".yaml") || name.ends_with(".yml")) && name != POINTER_FILE
        })
        .map(|(_, path)| path)
        .collect())
}
