//! A [`Project`] is the opened root: its resolved config and its locks. Every
//! operation in the library starts from one.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::store::config::Config;
use crate::store::lock::Locks;

/// An opened Logbook project.
#[derive(Debug, Clone)]
pub struct Project {
    /// The resolved configuration (paths, user, budget).
    pub config: Config,
    /// The project's cross-process locks.
    pub locks: Locks,
}

impl Project {
    /// Opens the project containing `cwd` (see [`Config::discover`]). A
    /// root named explicitly (`--root`, `LOGBOOK_ROOT`) must exist: a typo
    /// there must not quietly start a second project.
    pub fn discover(cwd: &Path, explicit_root: Option<&Path>) -> Result<Project> {
        if let Some(root) = explicit_root {
            let root = crate::store::root_path(cwd, root);
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

    /// Opens the project rooted exactly at `root`.
    pub fn open(root: &Path) -> Result<Project> {
        Ok(Project::from_config(Config::load(root)?))
    }

    /// Wraps an already resolved config.
    pub fn from_config(config: Config) -> Project {
        let locks = Locks::new(config.state_dir().join("locks"));
        Project { config, locks }
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

    /// `{root}/.logbook/index.db`.
    pub fn index_path(&self) -> PathBuf {
        self.config.state_dir().join("index.db")
    }
}
