//! A finding of doctor: what is wrong, as prose the same for every face,
//! and what to do, as a [`Next`] each face words its own way (a command at
//! the CLI, a tool call or a person's step over MCP).

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Face, Next, Step};

/// One problem found.
#[derive(Debug, Clone)]
pub struct Finding {
    /// A stable machine-readable kind (`corrupt-manifest`, `abandoned-run`, `temp-file`, …).
    pub kind: &'static str,
    /// The file or folder concerned.
    pub path: PathBuf,
    /// What is wrong, and what to do where that names no step; it names no
    /// command.
    pub message: String,
    /// What to do about it, as steps each face words its own way.
    pub next: Option<Next>,
    /// What `--fix` did about it; `None` when nothing was done.
    pub fixed: Option<String>,
}

impl Finding {
    /// The finding as `face` shows it: the message, then the next step in
    /// the face's words.
    pub fn worded(&self, face: Face) -> Worded<'_> {
        let message = match &self.next {
            Some(next) => format!("{}; {}", self.message, next.word(face)),
            None => self.message.clone(),
        };
        Worded {
            kind: self.kind,
            path: &self.path,
            message,
            fixed: self.fixed.as_deref(),
        }
    }
}

/// A [`Finding`] worded for one face: the shape `doctor --json` prints.
#[derive(Debug, Clone, Serialize)]
pub struct Worded<'a> {
    /// The finding's kind.
    pub kind: &'static str,
    /// The file or folder concerned.
    pub path: &'a Path,
    /// What is wrong and what to do, in the face's words.
    pub message: String,
    /// What `--fix` did about it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fixed: Option<&'a str>,
}

/// The next step of a finding `--fix` repairs: `doctor --fix`, then what
/// it does.
pub(super) fn fix_does(then: &'static str) -> Option<Next> {
    Some(Next::of(Step::Doctor { fix: true }, then))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_finding_names_the_command_at_the_cli_and_no_command_over_mcp() {
        let f = Finding {
            kind: "stale-lock",
            path: PathBuf::from("/p/.logbook/locks"),
            message: "2 lock file(s) of hook jobs that are done".into(),
            next: fix_does(" removes them"),
            fixed: None,
        };
        assert_eq!(
            f.worded(Face::Cli).message,
            "2 lock file(s) of hook jobs that are done; `logbook doctor --fix` removes them"
        );
        let mcp = f.worded(Face::Mcp).message;
        assert!(!mcp.contains("logbook ") && !mcp.contains("--"), "{mcp}");
    }
}
