//! `hooks install | uninstall | status`: Logbook's entries in the hook
//! settings of Claude Code and Codex, so that both agents call
//! `logbook hook` without anyone remembering to.
//!
//! The rules of the entries are [`crate::model::hook::settings`]; the files
//! are read and replaced only through [`logbook_store::agent_settings`]. A
//! change takes the `agent-settings` lock of the project the file sits in
//! (else of the per-user home), so two installs at once cannot lose each
//! other's edit. Nothing here touches the index: these files are not
//! Logbook's records.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::Result;
use crate::model::hook::settings::{self as entries, HookAgent, HookScope, SHARED_COMMAND};
use logbook_store::Project;
use logbook_store::agent_settings::{self, SettingsFile};

/// What an install or uninstall did (or, with `dry_run`, would do).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HookAction {
    /// Logbook's entries were added.
    Installed,
    /// Logbook's entries were there and were brought up to date (another
    /// `logbook` path, another timeout, an event missing).
    Updated,
    /// The file already held exactly Logbook's entries; nothing was written.
    AlreadyInstalled,
    /// Logbook's entries were removed.
    Removed,
    /// There were no Logbook entries to remove; nothing was written.
    NotInstalled,
}

/// The report of one `hooks install` or `hooks uninstall`.
#[derive(Debug, Clone, Serialize)]
pub struct HookChange {
    /// `claude-code` or `codex`.
    pub agent: &'static str,
    /// `local`, `shared`, `user` (Claude Code); `project`, `user` (Codex).
    pub scope: &'static str,
    /// The settings file.
    pub file: PathBuf,
    /// What happened.
    pub action: HookAction,
    /// Whether the file was (or, with `dry_run`, would be) written.
    pub changed: bool,
    /// Whether this was only a preview.
    pub dry_run: bool,
    /// The events Logbook's hook is (or was) installed for.
    pub events: Vec<String>,
    /// The command installed, on install.
    pub command: Option<String>,
    /// Where the file as it was before is saved, when it was written.
    pub backup: Option<PathBuf>,
    /// On a dry run, the file's text before and after the change, which
    /// the faces show as they like (the CLI as a unified diff); not in the
    /// serialised report, whose `diff` the face that renders it adds.
    #[serde(skip)]
    pub preview: Option<Preview>,
    /// On install: the agent's other settings files that hold Logbook's
    /// hook too. The agent runs the hooks of every file it reads, so each
    /// event would be recorded by two commands.
    pub also_in: Vec<PathBuf>,
}

/// A settings file's text before and after a change that a dry run did
/// not write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preview {
    /// The file as it is (empty when there is none).
    pub before: String,
    /// The file as the change would write it (equal to `before` when the
    /// change would write nothing).
    pub after: String,
}

/// What `hooks status` reports for one settings file.
#[derive(Debug, Clone, Serialize)]
pub struct HookStatus {
    /// `claude-code` or `codex`.
    pub agent: &'static str,
    /// `local`, `shared`, `user` (Claude Code); `project`, `user` (Codex).
    pub scope: &'static str,
    /// The settings file (absent when its folder cannot be told, see `error`).
    pub file: Option<PathBuf>,
    /// Whether the file exists.
    pub exists: bool,
    /// Whether Logbook's hook is there for every event it is installed for.
    pub installed: bool,
    /// The events that have Logbook's entry, in file order.
    pub events: Vec<String>,
    /// The events Logbook installs for that lack its entry, or have it only
    /// in a group whose `matcher` leaves out some of the event's sources
    /// (empty when nothing is installed in this file).
    pub missing_events: Vec<String>,
    /// The command of Logbook's entry (the first, if they differ).
    pub command: Option<String>,
    /// The `logbook` that command runs: an absolute path, or `logbook`
    /// looked up on `PATH` for a shared entry.
    pub program: Option<String>,
    /// Whether that program is there now (on `PATH`, for `logbook`).
    pub program_exists: Option<bool>,
    /// Why the file could not be read, if it could not.
    pub error: Option<String>,
}

/// How a scope is named in reports: Codex has one project file.
fn scope_label(agent: HookAgent, scope: HookScope) -> &'static str {
    match (agent, scope) {
        (HookAgent::Codex, HookScope::Local | HookScope::Shared) => "project",
        _ => scope.name(),
    }
}

/// Adds (or brings up to date) Logbook's hook for `agent` in its settings
/// file at `scope`, for the project at `root`. The command runs `exe`, the
/// absolute path of the running `logbook` as invoked (see
/// [`invoked_program`]), except at
/// [`HookScope::Shared`], whose [`SHARED_COMMAND`] finds `logbook` on
/// `PATH` and is silent without it.
pub fn install(
    root: &Path,
    agent: HookAgent,
    scope: HookScope,
    exe: &Path,
    dry_run: bool,
) -> Result<HookChange> {
    let command = match scope {
        HookScope::Shared => SHARED_COMMAND.to_string(),
        _ => entries::hook_command(exe),
    };
    let path = agent_settings::settings_path(agent, scope, root)?;
    let (change, _lock) = edit(&path, agent, dry_run, |value| {
        let had = entries::find(value).is_ok_and(|f| !f.is_empty());
        let changed = entries::install(value, agent, &command)
            .map_err(|e| agent_settings::shape_error(&path, e.0))?;
        Ok(match (changed, had) {
            (false, _) => HookAction::AlreadyInstalled,
            (true, false) => HookAction::Installed,
            (true, true) => HookAction::Updated,
        })
    })?;
    let also_in = status(root, Some(agent))
        .into_iter()
        .filter_map(|s| s.file.filter(|f| *f != path && !s.events.is_empty()))
        .collect();
    Ok(HookChange {
        agent: agent.name(),
        scope: scope_label(agent, scope),
        events: agent.events().iter().map(|e| e.to_string()).collect(),
        command: Some(command),
        also_in,
        ..change
    })
}

/// What [`install`] adds beside the agent's usual events: the `PreToolUse`
/// hook when the project's `budget_action` is `block` (Claude Code, Codex),
/// and Claude Code's `statusLine` when `statusline` is asked and none is
/// set. Returns what it added (or would add, with `dry_run`).
pub fn install_extras(
    root: &Path,
    agent: HookAgent,
    scope: HookScope,
    exe: &Path,
    dry_run: bool,
    statusline: bool,
) -> Result<Vec<String>> {
    let block = logbook_store::config::Config::load(root).is_ok_and(|c| c.budget_block);
    let claude = agent == HookAgent::ClaudeCode;
    if !(block || statusline && claude) {
        return Ok(vec![]);
    }
    let (hook, line) = match scope {
        HookScope::Shared => (SHARED_COMMAND.to_string(), "logbook statusline".to_string()),
        _ => (entries::hook_command(exe), entries::statusline_command(exe)),
    };
    let path = agent_settings::settings_path(agent, scope, root)?;
    let mut added = vec![];
    edit(&path, agent, dry_run, |value| {
        if block
            && entries::install_event(value, "PreToolUse", &hook)
                .map_err(|e| agent_settings::shape_error(&path, e.0))?
        {
            added.push("PreToolUse".to_string());
        }
        if statusline && claude && entries::set_status_line(value, &line) {
            added.push("statusLine".to_string());
        }
        Ok(if added.is_empty() {
            HookAction::AlreadyInstalled
        } else {
            HookAction::Updated
        })
    })?;
    Ok(added)
}

/// Removes every Logbook entry from `agent`'s settings file at `scope`,
/// and the containers that removal left empty; nothing else in the file
/// changes.
pub fn uninstall(
    root: &Path,
    agent: HookAgent,
    scope: HookScope,
    dry_run: bool,
) -> Result<HookChange> {
    let path = agent_settings::settings_path(agent, scope, root)?;
    let mut events = vec![];
    let (change, _lock) = edit(&path, agent, dry_run, |value| {
        let found = entries::find(value).map_err(|e| agent_settings::shape_error(&path, e.0))?;
        events = found.into_iter().map(|f| f.event).collect();
        events.dedup();
        let changed =
            entries::uninstall(value).map_err(|e| agent_settings::shape_error(&path, e.0))?;
        Ok(if changed {
            HookAction::Removed
        } else {
            HookAction::NotInstalled
        })
    })?;
    Ok(HookChange {
        agent: agent.name(),
        scope: scope_label(agent, scope),
        events,
        command: None,
        ..change
    })
}

/// Reads the file at `path`, lets `change` edit its object, and writes it
/// back (with a backup) if that changed it; on a dry run, writes nothing
/// and returns the text before and after. The lock is held until the caller drops it.
fn edit(
    path: &Path,
    agent: HookAgent,
    dry_run: bool,
    change: impl FnOnce(&mut serde_json::Map<String, serde_json::Value>) -> Result<HookAction>,
) -> Result<(HookChange, Option<logbook_store::LockGuard>)> {
    // The project whose lock serialises the edit also keeps the backup.
    let project = if dry_run {
        None
    } else {
        Some(Project::for_agent(path.parent().unwrap_or(path))?)
    };
    let lock = match &project {
        Some(p) => Some(p.locks.exclusive("agent-settings")?),
        None => None,
    };
    let (previous, mut value) = match agent_settings::read(path, agent)? {
        Some(SettingsFile { text, value }) => (Some(text), value),
        None => (None, serde_json::Map::new()),
    };
    let previous = previous.as_deref();
    let original = previous.map(|_| value.clone());
    let action = change(&mut value)?;
    let changed = !matches!(
        action,
        HookAction::AlreadyInstalled | HookAction::NotInstalled
    );
    let text = if changed {
        agent_settings::render(&value, previous.zip(original.as_ref()))?
    } else {
        previous.unwrap_or_default().to_string()
    };
    if changed {
        // Checked on a dry run too: the preview should not promise a
        // change the real run would refuse.
        agent_settings::check_replaceable(path)?;
    }
    let mut backup = None;
    let preview = if dry_run {
        Some(Preview {
            before: previous.unwrap_or_default().to_string(),
            after: text,
        })
    } else {
        if changed {
            let backups = project
                .as_ref()
                .map(|p| agent_settings::backup_dir(&p.config.state_dir()))
                .unwrap_or_default();
            backup = agent_settings::replace(path, previous, &text, &backups)?;
        }
        None
    };
    let report = HookChange {
        agent: agent.name(),
        scope: "",
        file: path.to_path_buf(),
        action,
        changed,
        dry_run,
        events: vec![],
        command: None,
        backup,
        preview,
        also_in: vec![],
    };
    Ok((report, lock))
}

/// What is installed where: every settings file of `agent` (of both
/// agents when `None`) for the project at `root` and for the user. A file
/// that cannot be read is reported with its error, not skipped.
pub fn status(root: &Path, agent: Option<HookAgent>) -> Vec<HookStatus> {
    let agents: Vec<HookAgent> = match agent {
        Some(a) => vec![a],
        None => HookAgent::ALL.to_vec(),
    };
    let mut out = vec![];
    for agent in agents {
        let scopes: &[HookScope] = match agent {
            HookAgent::ClaudeCode => &[HookScope::Local, HookScope::Shared, HookScope::User],
            HookAgent::Codex => &[HookScope::Local, HookScope::User],
        };
        for &scope in scopes {
            out.push(status_of(root, agent, scope));
        }
    }
    out
}

fn status_of(root: &Path, agent: HookAgent, scope: HookScope) -> HookStatus {
    let mut s = HookStatus {
        agent: agent.name(),
        scope: scope_label(agent, scope),
        file: None,
        exists: false,
        installed: false,
        events: vec![],
        missing_events: vec![],
        command: None,
        program: None,
        program_exists: None,
        error: None,
    };
    let path = match agent_settings::settings_path(agent, scope, root) {
        Ok(p) => p,
        Err(e) => {
            s.error = Some(e.to_string());
            return s;
        }
    };
    s.file = Some(path.clone());
    let found = agent_settings::read(&path, agent).and_then(|f| {
        s.exists = f.is_some();
        f.map_or(Ok(vec![]), |f| {
            entries::find(&f.value).map_err(|e| agent_settings::shape_error(&path, e.0))
        })
    });
    let found = match found {
        Ok(found) => found,
        Err(e) => {
            s.error = Some(e.to_string());
            return s;
        }
    };
    if found.is_empty() {
        return s;
    }
    for f in &found {
        if !s.events.contains(&f.event) {
            s.events.push(f.event.clone());
        }
    }
    // An entry behind a matcher (`"compact"`) does not fire for every
    // source, so its event still counts as missing.
    s.missing_events = agent
        .events()
        .iter()
        .filter(|e| !found.iter().any(|f| f.every_source && f.event == **e))
        .map(|e| e.to_string())
        .collect();
    s.installed = s.missing_events.is_empty();
    s.command = found.first().map(|f| f.command.clone());
    s.program = s.command.as_deref().and_then(entries::logbook_program);
    s.program_exists = s.program.as_deref().map(program_exists);
    s
}

/// The path of the running `logbook` as it was invoked (`argv0`, the first
/// word of its command line, in `cwd`): the path itself when it names a
/// folder, else the first runnable file of that name on `PATH`. It is not
/// resolved through symbolic links: a package manager's link
/// (`/opt/homebrew/bin/logbook` → `../Cellar/logbook/1.2/bin/logbook`)
/// stays valid across upgrades, the version folder it points to does not.
/// `None` when it cannot be told (the caller falls back to the running
/// executable's own path).
pub fn invoked_program(argv0: &std::ffi::OsStr, cwd: &Path) -> Option<PathBuf> {
    let runnable = logbook_store::hook::is_runnable;
    let named = Path::new(argv0);
    if named.as_os_str().is_empty() {
        return None;
    }
    if named.components().count() > 1 {
        let path = logbook_store::absolute(cwd, named);
        return runnable(&path).then_some(path);
    }
    let paths = std::env::var_os("PATH")?;
    std::env::split_paths(&paths)
        .filter(|d| d.is_absolute())
        .map(|d| d.join(named))
        .find(|p| runnable(p))
}

/// Whether the `logbook` a hook runs is there: the file at an absolute
/// path, or an executable `logbook` in one of `PATH`'s folders.
fn program_exists(program: &str) -> bool {
    let runnable = logbook_store::hook::is_runnable;
    if program.contains('/') {
        return runnable(Path::new(program));
    }
    std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).any(|d| runnable(&d.join(program))))
        .unwrap_or(false)
}
