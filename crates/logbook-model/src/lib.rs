//! The model: the seeds' record types and the pure rules over them. Nothing
//! here reads a file, takes a lock or opens the index, so every rule can be
//! tested on values alone.
//!
//! - [`run`]: the manifest (seed 000), output paths; [`query`] the discovery
//!   filters; [`lineage`] the graph of related runs; [`naming`] the display
//!   names computed at read time.
//! - [`work_session`]: seed 002's work session, tokens and reports.
//! - [`transcript`]: seed 003's transcript and its file names.
//! - [`workflow`]: seed 004's workflow state, compaction and history merge.
//! - [`agent_log`]: Claude Code and Codex logs read line by line, with exact usage;
//!   [`agent_handoff`]: resuming an imported agent session, and a handover to the other agent.
//! - [`hook`]: the events the agents' hooks send and the answers they read
//!   ([`hook::event`]); Logbook's entries in their hook settings ([`hook::settings`]).
//! - [`ids`]: the validated ids that become parts of paths; [`limits`] the
//!   most free text one field takes.
//! - [`price`]: the models' prices (LiteLLM's table, shipped) and what a counted call cost.
//! - [`repo`]: which repository a record belongs to, and the rule that matches two.
//! - [`archive`]: ages, the retention policy, which runs an archive takes, tombstones.
//! - [`template`]: the one `{placeholder}` substitution (config and workflow files).
//! - [`url`]: URLs without their credentials, as Logbook may keep or show them.
//! - [`secrets`]: API keys, private keys, tokens and passwords in text, masked and redacted.
//! - [`terminal`]: text from outside made safe to show at a terminal, and commands safe to paste.
//! - [`error`]: the library's one error type and the next step it names;
//!   [`clock`]: the one timestamp format; [`notice`]: what a face tells the
//!   person about a call that succeeded anyway.

pub mod agent_handoff;
pub mod agent_log;
pub mod archive;
pub mod clock;
pub(crate) mod enums;
pub mod error;
pub mod hook;
pub mod ids;
pub mod limits;
pub mod lineage;
pub mod naming;
pub mod notice;
pub mod price;
pub mod query;
pub mod repo;
pub mod run;
pub mod secrets;
pub mod template;
pub mod terminal;
pub mod text;
pub mod transcript;
pub mod url;
pub mod work_session;
pub mod workflow;

pub use error::{Error, ErrorKind, Result};

use std::path::PathBuf;

use serde::Serialize;

/// A file a listing skipped because it could not be read or parsed; listings
/// go on without it and `logbook doctor` names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CorruptFile {
    /// The file.
    pub path: PathBuf,
    /// Why it was skipped.
    pub reason: String,
}

/// `value` as JSON for a face to print: every JSON builder goes through
/// this, so a value that cannot be serialized (a map keyed by something
/// other than text) is an error the face reports, never a silent `null`.
pub fn to_json<T: Serialize + ?Sized>(
    what: &'static str,
    value: &T,
) -> crate::Result<serde_json::Value> {
    serde_json::to_value(value).map_err(|e| crate::Error::invalid(what, "(JSON)", e.to_string()))
}
