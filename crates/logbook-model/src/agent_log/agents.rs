//! Agents as plug-ins of one shape: each agent whose logs Logbook reads is
//! one module (`claude_code`, `codex`) with one [`LogAgent`], and
//! [`AGENTS`] lists them. An agent holds how its logs are recognized (by
//! path and first lines), its parser into the transcript model, how its
//! counters add up, where its logs live on Linux and macOS, who a log's
//! session is, and which hook adapter it has. Adding an agent is its
//! module, its fixtures, a [`Format`] and [`LogParser`] variant (the
//! parser's state is kept in checkpoints, so it is a closed set) and its
//! line in [`AGENTS`].

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::{Format, Identity, LogParser, LogSummary};
use crate::hook::settings::HookAgent;

/// What a log's line shows of who wrote it, read before its body: its
/// `type`, and whether it has a `payload` and a `sessionId` member.
#[derive(Debug, Clone, Copy)]
pub struct FirstLine<'a> {
    /// The line's `type`, empty when it has none.
    pub ty: &'a str,
    /// Whether it has a `payload` member.
    pub payload: bool,
    /// Whether it has a `sessionId` member.
    pub session: bool,
}

/// One agent whose logs Logbook reads.
pub trait LogAgent: Sync {
    /// Its format, as `--format` and the stored files name it.
    fn format(&self) -> Format;
    /// Whether a line of this shape is one this agent writes.
    fn wrote(&self, line: &FirstLine<'_>) -> bool;
    /// Whether `path` is laid out as this agent keeps its logs (a hint for
    /// a file whose first lines say nothing yet).
    fn owns_path(&self, path: &Path) -> bool;
    /// The folders it keeps its logs in, the same on Linux and macOS: under
    /// `home`, or where its own environment variable (read by `env`) says.
    fn log_roots(
        &self,
        home: Option<&Path>,
        env: &dyn Fn(&str) -> Option<OsString>,
    ) -> Vec<PathBuf>;
    /// A parser of its logs, at their start.
    fn parser(&self) -> LogParser {
        LogParser::new(self.format())
    }
    /// The transcript a log at `path` with `summary` is: its id, its
    /// parent (a subagent's), what it was forked from.
    fn identity(&self, path: &Path, summary: &LogSummary) -> Option<Identity>;
    /// How its counters add up, in a sentence (what `transcript usage`
    /// relies on).
    fn usage_rule(&self) -> &'static str;
    /// Its hook adapter (`logbook hooks install`), if it has hooks.
    fn hooks(&self) -> Option<HookAgent>;
}

/// Every agent, in the order a line is matched against them (Codex's
/// shape is the stricter).
pub static AGENTS: [&dyn LogAgent; 2] = [&super::codex::Codex, &super::claude_code::ClaudeCode];

/// The agent of `format`.
pub fn of(format: Format) -> &'static dyn LogAgent {
    AGENTS
        .iter()
        .copied()
        .find(|a| a.format() == format)
        .unwrap_or(AGENTS[0])
}

/// The agent a line of this shape names, the first of [`AGENTS`] to claim it.
pub fn wrote(line: &FirstLine<'_>) -> Option<Format> {
    AGENTS.iter().find(|a| a.wrote(line)).map(|a| a.format())
}

/// Each agent's log folders that `env` and `home` give, in [`AGENTS`]'s order.
pub fn log_roots(home: Option<&Path>, env: &dyn Fn(&str) -> Option<OsString>) -> Vec<PathBuf> {
    AGENTS.iter().flat_map(|a| a.log_roots(home, env)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_format_has_its_agent_and_roots_follow_the_environment() {
        for f in [Format::ClaudeCode, Format::Codex] {
            assert_eq!(of(f).format(), f);
        }
        let home = Path::new("/home/u");
        let none = |_: &str| None;
        assert_eq!(
            log_roots(Some(home), &none),
            [home.join(".codex/sessions"), home.join(".claude/projects")]
        );
        let set = |k: &str| (k == "CODEX_HOME").then(|| OsString::from("/c"));
        assert_eq!(log_roots(Some(home), &set)[0], Path::new("/c/sessions"));
        assert!(
            of(Format::Codex).owns_path(Path::new("/h/.codex/sessions/2026/01/01/rollout-x.jsonl"))
        );
        assert!(of(Format::ClaudeCode).owns_path(Path::new("/h/.claude/projects/-w/s.jsonl")));
    }
}
