//! The agents' hook settings files: where each lives, reading one without
//! ever overwriting what cannot be read, and replacing one with a backup of
//! what it held, kept where no commit can pick it up.
//!
//! Trap: these files belong to other tools and to people. A file that does
//! not parse is never rewritten (that would lose what its author meant); a
//! read-only file is not replaced behind its owner's back (an atomic rename
//! would succeed where an `open` for writing fails); a symbolic link (a
//! dotfiles checkout) is not replaced by a plain file, which would cut it
//! off from what it points to. Each is an error that says what to do.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::config::Config;
use crate::fs::{read_regular, write_atomic_private, write_atomic_with_permissions};
use logbook_model::error::{Error, Result};
use logbook_model::hook::settings::{HookAgent, HookScope, json_type};

/// The largest settings file Logbook reads: far above any real one, and a
/// bound on what a file in a cloned repository can make it hold in memory.
const MAX_SETTINGS_BYTES: u64 = 16 << 20;

/// The project folder whose agent settings `hooks` edits, from `cwd`: the
/// nearest Logbook project (`logbook.yaml` or `.logbook/`), else the git
/// repository's top folder (where the agents look for `.claude/` and
/// `.codex/`), else `cwd` itself.
pub fn project_root(cwd: &Path) -> PathBuf {
    if let Some(root) = Config::marked_root(cwd) {
        return root.to_path_buf();
    }
    cwd.ancestors()
        .find(|d| d.join(".git").exists())
        .unwrap_or(cwd)
        .to_path_buf()
}

/// An environment variable's value, when set and not empty.
fn env_path(key: &str) -> Option<PathBuf> {
    std::env::var_os(key)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// The settings file of `agent` at `scope` for the project at `root`.
/// The user's files honour `CLAUDE_CONFIG_DIR` and `CODEX_HOME` as the
/// agents themselves do.
pub fn settings_path(agent: HookAgent, scope: HookScope, root: &Path) -> Result<PathBuf> {
    let user_dir = |var: &str, dot: &str| {
        env_path(var)
            .or_else(|| env_path("HOME").map(|h| h.join(dot)))
            .ok_or_else(|| Error::AgentSettings {
                path: PathBuf::from(format!("~/{dot}")),
                reason: "HOME is not set, so the user's settings cannot be found".into(),
                hint: format!("set HOME, or {var} to the agent's configuration folder").into(),
            })
    };
    Ok(match (agent, scope) {
        (HookAgent::ClaudeCode, HookScope::Local) => root.join(".claude/settings.local.json"),
        (HookAgent::ClaudeCode, HookScope::Shared) => root.join(".claude/settings.json"),
        (HookAgent::ClaudeCode, HookScope::User) => {
            user_dir("CLAUDE_CONFIG_DIR", ".claude")?.join("settings.json")
        }
        (HookAgent::Codex, HookScope::Local | HookScope::Shared) => root.join(".codex/hooks.json"),
        (HookAgent::Codex, HookScope::User) => user_dir("CODEX_HOME", ".codex")?.join("hooks.json"),
    })
}

/// A settings file as read: its text (to diff and back up) and its top-level
/// object (to edit).
#[derive(Debug, Clone)]
pub struct SettingsFile {
    /// The text as it was on disk.
    pub text: String,
    /// Its top-level object, keys in file order.
    pub value: Map<String, Value>,
}

/// Reads the settings file at `path`; `Ok(None)` when there is none. An
/// empty file reads as `{}`. A file that is not a JSON object is an error
/// naming the line and column, never something to overwrite.
pub fn read(path: &Path, agent: HookAgent) -> Result<Option<SettingsFile>> {
    let Some(text) = read_regular(path, agent.settings_what(), MAX_SETTINGS_BYTES)? else {
        return Ok(None);
    };
    let value = parse(path, &text)?;
    Ok(Some(SettingsFile { text, value }))
}

/// The top-level object of a settings file's text (see [`read`]).
pub fn parse(path: &Path, text: &str) -> Result<Map<String, Value>> {
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(other) => Err(Error::AgentSettings {
            path: path.to_path_buf(),
            reason: format!("it holds a JSON {}, not an object", json_type(&other)),
            hint: "the agents read an object here ({\"hooks\": {…}}): fix the file or move it aside, then run the command again; Logbook left it as it was".into(),
        }),
        Err(e) => Err(Error::AgentSettings {
            path: path.to_path_buf(),
            reason: format!(
                "not valid JSON at line {} column {}: {e}",
                e.line(),
                e.column()
            ),
            hint: "fix the JSON there (or move the file aside) and run the command again; Logbook never overwrites a file it cannot read".into(),
        }),
    }
}

/// The error for a settings file whose `hooks` Logbook cannot edit.
pub fn shape_error(path: &Path, reason: String) -> Error {
    Error::AgentSettings {
        path: path.to_path_buf(),
        reason,
        hint: "the agents read {\"hooks\": {\"EventName\": [{\"hooks\": [{\"type\": \"command\", …}]}]}}: fix the file by hand, then run the command again; Logbook left it as it was".into(),
    }
}

/// Refuses to replace a settings file that is a symbolic link or read-only,
/// or that sits in a folder (`.claude/`, `.codex/`) that is a symbolic
/// link (see the module's trap); a missing file (and folder) is fine.
pub fn check_replaceable(path: &Path) -> Result<()> {
    if let Some(dir) = path.parent()
        && std::fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_symlink())
    {
        // A link committed to a repository could point anywhere (another
        // checkout, a shared folder): writing through it would change
        // files the project does not own.
        let target = std::fs::read_link(dir)
            .map(|t| t.display().to_string())
            .unwrap_or_else(|_| "another folder".into());
        return Err(Error::AgentSettings {
            path: path.to_path_buf(),
            reason: format!("its folder {} is a symbolic link to {target}", dir.display()),
            hint: format!(
                "Logbook does not write through a linked folder: add the hooks to the file in {target} by hand, or replace the link with a real folder and run the command again; nothing was changed"
            )
            .into(),
        });
    }
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io(path, e)),
    };
    if meta.file_type().is_symlink() {
        let target = std::fs::read_link(path)
            .map(|t| t.display().to_string())
            .unwrap_or_else(|_| "another file".into());
        return Err(Error::AgentSettings {
            path: path.to_path_buf(),
            reason: format!("it is a symbolic link to {target}"),
            hint: format!(
                "Logbook does not replace a link with a file: add the hooks to {target} by hand, or replace the link with a copy of it and run the command again"
            )
            .into(),
        });
    }
    if meta.permissions().readonly() || !crate::sys::can_write(path) {
        return Err(Error::AgentSettings {
            path: path.to_path_buf(),
            reason: "the file is read-only".into(),
            hint: format!(
                "make it writable (`chmod u+w {}`) and run the command again, or leave it as it is; nothing was changed",
                path.display()
            )
            .into(),
        });
    }
    Ok(())
}

/// `value` as the agents' files are written. Over a file that was there
/// (`previous`: its text and the object read from it), only what changed
/// is written anew and every other byte is kept (another tool's `1e3`, its
/// `\u00e9`, its layout; see [`logbook_model::text::json_over`]). Anew, or
/// when the change cannot be placed in the text: 2-space indentation, keys
/// in the order they were read, and a final newline unless the file had
/// text without one.
pub fn render(
    value: &Map<String, Value>,
    previous: Option<(&str, &Map<String, Value>)>,
) -> Result<String> {
    if let Some((text, old)) = previous
        && !text.trim().is_empty()
        && let Some(spliced) = logbook_model::text::json_over(
            text,
            &Value::Object(old.clone()),
            &Value::Object(value.clone()),
        )
    {
        return Ok(spliced);
    }
    let mut text = serde_json::to_string_pretty(value)
        .map_err(|e| Error::invalid("settings", "", e.to_string()))?;
    let bare = previous.is_some_and(|(p, _)| !p.trim().is_empty() && !p.ends_with('\n'));
    if !bare {
        text.push('\n');
    }
    Ok(text)
}

/// The folder under a project's (or the per-user home's) state folder
/// where copies of settings files are kept: never beside the file, where
/// a `.claude/` that is committed, or a `git add -A`, would carry the
/// secrets a personal settings file holds into the repository.
pub fn backup_dir(state_dir: &Path) -> PathBuf {
    state_dir.join("backups")
}

/// Where the next copy of the settings file at `path` goes in `dir`: named
/// for its folder and file (`claude-settings.local.json.1`), and numbered
/// past every copy already there, so no copy is ever overwritten and the
/// first one is the file as it was before Logbook first changed it.
pub(crate) fn backup_path(dir: &Path, path: &Path) -> PathBuf {
    let folder = path
        .parent()
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().trim_start_matches('.').to_string())
        .unwrap_or_default();
    let file = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = if folder.is_empty() {
        file
    } else {
        format!("{folder}-{file}")
    };
    (1u64..)
        .map(|n| dir.join(format!("{stem}.{n}")))
        // Anything at the name (even a dangling link) keeps it taken.
        .find(|p| std::fs::symlink_metadata(p).is_err())
        .unwrap_or_else(|| dir.join(stem))
}

/// Replaces the settings file at `path` with `text`, atomically, keeping
/// its permissions; what it held before (`previous`, when there was a
/// file) is first saved to a new [`backup_path`] in `backups` (see
/// [`backup_dir`]), of mode 0600 in a folder of 0700 whatever the file's
/// mode. The caller holds the settings lock and has called
/// [`check_replaceable`]. Returns the backup's path, if one was written.
pub fn replace(
    path: &Path,
    previous: Option<&str>,
    text: &str,
    backups: &Path,
) -> Result<Option<PathBuf>> {
    use std::os::unix::fs::PermissionsExt;
    let permissions = match std::fs::metadata(path) {
        Ok(m) => m.permissions(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::Permissions::from_mode(0o644)
        }
        Err(e) => return Err(Error::io(path, e)),
    };
    let backup = match previous {
        Some(previous) => {
            let backup = backup_path(backups, path);
            write_atomic_private(&backup, previous.as_bytes())?;
            Some(backup)
        }
        None => None,
    };
    write_atomic_with_permissions(path, permissions, text.as_bytes())?;
    Ok(backup)
}
