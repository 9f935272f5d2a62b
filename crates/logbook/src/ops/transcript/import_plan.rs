//! What `transcript import` was asked, decided once for every face: one
//! seed 003 transcript file (with the options only such a file takes), or
//! agent logs: a file, a folder, or this user's agent history.

use std::path::PathBuf;

use crate::error::{Error, Next, Result};

use super::{ImportFormat, home_sources, is_single_seed};

/// An import as a face received it.
#[derive(Debug, Clone, Default)]
pub struct ImportRequest {
    /// A log, a folder of logs or a seed 003 file; `None` imports this
    /// user's agent history ([`home_sources`]).
    pub file: Option<PathBuf>,
    /// Which agent wrote it; `Auto` decides per file.
    pub format: ImportFormat,
    /// Keep importing what the agents append.
    pub watch: bool,
    /// Seed 003 file: store it as a subagent transcript.
    pub subagent: bool,
    /// Seed 003 file: the parent main session.
    pub parent: Option<String>,
    /// Seed 003 file: the run the conversation belongs to.
    pub run: Option<String>,
}

/// What an [`ImportRequest`] imports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImportPlan {
    /// One seed 003 transcript.
    Seed {
        /// The file.
        file: PathBuf,
        /// Store it as a subagent transcript.
        subagent: bool,
        /// The parent main session.
        parent: Option<String>,
        /// The run it belongs to.
        run: Option<String>,
    },
    /// The agent logs under these files and folders.
    Logs(Vec<PathBuf>),
}

impl ImportRequest {
    /// Decides what is imported ([`is_single_seed`]); the seed options
    /// with agent logs, or no agent history to import, are refused.
    pub fn plan(&self) -> Result<ImportPlan> {
        let seed_options = self.subagent || self.parent.is_some() || self.run.is_some();
        if let Some(file) = &self.file
            && is_single_seed(file, self.format, self.watch, seed_options)
        {
            return Ok(ImportPlan::Seed {
                file: file.clone(),
                subagent: self.subagent,
                parent: self.parent.clone(),
                run: self.run.clone(),
            });
        }
        if seed_options {
            return Err(Error::invalid(
                "seed options",
                "subagent/parent/run",
                "they apply to one seed 003 transcript file; agent logs carry their own parent",
            ));
        }
        match &self.file {
            Some(file) => Ok(ImportPlan::Logs(vec![file.clone()])),
            None => {
                let found = home_sources();
                if found.is_empty() {
                    return Err(Error::not_found(
                        "agent history",
                        "in ~/.claude/projects, ~/.codex/sessions, $CLAUDE_CONFIG_DIR/projects or $CODEX_HOME/sessions",
                        Next::say("give the log or the folder of logs to import"),
                    ));
                }
                Ok(ImportPlan::Logs(found))
            }
        }
    }
}
