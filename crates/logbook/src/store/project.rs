//! A [`Project`] is the opened root: its resolved config and its locks. Every
//! operation in the library starts from one.

use std::path::{Path, PathBuf};

use crate::error::Result;
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
    /// Opens the project containing `cwd` (see [`Config::discover`]).
    pub fn discover(cwd: &Path, explicit_root: Option<&Path>) -> Result<Project> {
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

    /// `{root}/.logbook/index.db`.
    pub fn index_path(&self) -> PathBuf {
        self.config.state_dir().join("index.db")
    }
}
