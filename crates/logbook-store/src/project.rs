//! A [`Project`] is the opened root: its resolved config, its locks, the
//! clock its records are stamped from and the notices its calls leave for
//! the face. Every operation in the library starts from one, so the store
//! and the index, which hold a clone, read the same "now" and record into
//! the same notices as the call that gave it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::config::Config;
use crate::lock::Locks;
use crate::stamp_watch::StampWatch;
use logbook_model::clock::Clock;
use logbook_model::error::{Error, Result};
use logbook_model::notice::Notices;

/// An opened Logbook project.
#[derive(Debug, Clone)]
pub struct Project {
    /// The resolved configuration (paths, user, budget).
    pub config: Config,
    /// The project's cross-process locks.
    pub locks: Locks,
    /// Where "now" comes from ([`Clock::from_env`] unless a test fixes it).
    pub clock: Clock,
    /// What the calls given this project leave for the face to show.
    pub notices: Notices,
    /// The program the index runs as `PROGRAM --root ROOT index build-text`
    /// to build its full text in a process of its own (the CLI names
    /// itself): the library cannot know the binary. Without one, an index
    /// is rebuilt in one phase, and a plan another process left is
    /// finished inline.
    pub text_builder: Option<PathBuf>,
    /// The stamps a long-lived server keeps fresh by watching folders (the
    /// MCP server's), so a query checks a running run's manifest without a
    /// `stat` while nothing in its folder changed; `None` in a one-shot
    /// command, which asks the file system each time.
    pub stamps: Option<Arc<StampWatch>>,
}

impl Project {
    /// Opens the project containing `cwd` (see [`Config::discover`]). A
    /// root named explicitly (`--root`, `LOGBOOK_ROOT`) must exist: a typo
    /// there must not quietly start a second project.
    pub fn discover(cwd: &Path, explicit_root: Option<&Path>) -> Result<Project> {
        if let Some(root) = explicit_root {
            let root = crate::root_path(cwd, root);
            if !root.is_dir() {
                return Err(Error::RootMissing { path: root });
            }
        }
        Project::discover_or_new(cwd, explicit_root)
    }

    /// [`Project::discover`] for the commands that create a project (`init`,
    /// `start`): an explicit root that does not exist yet is created by
    /// their first write.
    pub fn discover_or_new(cwd: &Path, explicit_root: Option<&Path>) -> Result<Project> {
        Ok(Project::from_config(Config::discover(cwd, explicit_root)?))
    }

    /// The project an agent's hook or a per-user command writes to from
    /// `cwd`: the nearest one marked above it (`logbook.yaml` or
    /// `.logbook/`), else the per-user home ([`Project::user_home`]). A
    /// repository that never asked for Logbook gets no files of ours.
    pub fn for_agent(cwd: &Path) -> Result<Project> {
        // The physical path, as a root found from the working directory or
        // named by `--root` is: two spellings of one folder (a symlink, or
        // another case on a case-insensitive file system) are one project.
        let cwd = cwd.canonicalize().unwrap_or_else(|_| cwd.to_path_buf());
        match Config::marked_root(&cwd) {
            Some(root) => Project::open(root),
            None => Project::user_home(),
        }
    }

    /// The per-user Logbook home: `LOGBOOK_HOME`, else the platform's data
    /// folder (`$XDG_DATA_HOME/logbook`, `~/.local/share/logbook`; on macOS
    /// `~/Library/Application Support/logbook`). Records of user-level
    /// hooks outside any project go here.
    pub fn user_home() -> Result<Project> {
        Project::open(&user_home_dir()?)
    }

    /// Opens the project rooted exactly at `root`.
    pub fn open(root: &Path) -> Result<Project> {
        Ok(Project::from_config(Config::load(root)?))
    }

    /// Wraps an already resolved config.
    pub fn from_config(config: Config) -> Project {
        let locks = Locks::in_state_dir(config.state_dir());
        Project {
            config,
            locks,
            clock: Clock::from_env(),
            notices: Notices::default(),
            text_builder: None,
            stamps: None,
        }
    }

    /// The project root.
    pub fn root(&self) -> &Path {
        &self.config.root
    }

    /// Whether a project is here yet: its `.logbook/` folder, its
    /// `logbook.yaml`, or records in Logbook's formats (run folders another
    /// tool wrote) that an index is worth keeping for. An empty folder is
    /// not one: a read there creates nothing.
    pub fn exists(&self) -> bool {
        let c = &self.config;
        c.state_dir().is_dir()
            || c.source.is_some()
            || [&c.agent_outputs_folder, &c.sessions_dir, &c.transcripts_dir]
                .iter()
                .any(|d| d.is_dir())
    }

    /// Whether this is the per-user home rather than a project folder.
    pub fn is_user_home(&self) -> bool {
        user_home_dir().is_ok_and(|h| h == self.config.root)
    }

    /// `{root}/.logbook/index.db`.
    pub fn index_path(&self) -> PathBuf {
        self.config.state_dir().join("index.db")
    }
}

/// Where [`Project::user_home`] lives (see there).
pub(crate) fn user_home_dir() -> Result<PathBuf> {
    let set = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(home) = set("LOGBOOK_HOME") {
        // A relative home would be a different folder from each cwd (and a
        // read would make one there); a file there holds no records, and
        // "no transcripts" would hide the mistake.
        let reason = if !home.is_absolute() {
            Some("it must be an absolute path, not one relative to wherever Logbook runs")
        } else if home.exists() && !home.is_dir() {
            Some("it is not a folder")
        } else {
            None
        };
        return match reason {
            Some(reason) => Err(
                Error::invalid("LOGBOOK_HOME", home.to_string_lossy(), reason).with_next(
                    logbook_model::error::Next::say(
                        "set LOGBOOK_HOME to an absolute folder, or unset it to use the platform's data folder",
                    ),
                ),
            ),
            None => Ok(home),
        };
    }
    let data = if cfg!(target_os = "macos") {
        set("HOME").map(|h| h.join("Library/Application Support"))
    } else {
        set("XDG_DATA_HOME")
            .filter(|d| d.is_absolute())
            .or_else(|| set("HOME").map(|h| h.join(".local/share")))
    };
    data.map(|d| d.join("logbook")).ok_or(Error::NoUserHome)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An agent's hook sends the `cwd` it was started in, spelled as the
    /// agent saw it: through a symlink here, or in another case on macOS.
    /// Both spellings are one project, with one index and one set of locks.
    #[test]
    fn an_agents_cwd_spelled_two_ways_is_one_project() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("proj");
        std::fs::create_dir_all(root.join(".logbook")).unwrap();
        std::fs::create_dir_all(root.join("src/deep")).unwrap();
        let alias = dir.path().join("PROJ");
        std::os::unix::fs::symlink(&root, &alias).unwrap();
        let physical = Project::for_agent(&root.join("src/deep")).unwrap();
        let spelled = Project::for_agent(&alias.join("src/deep")).unwrap();
        assert_eq!(physical.root(), root.canonicalize().unwrap());
        assert_eq!(spelled.root(), physical.root());
        assert_eq!(spelled.index_path(), physical.index_path());
    }
}
