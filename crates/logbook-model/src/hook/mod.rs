//! Claude Code's and Codex's hooks, in two halves that change for different
//! reasons: [`event`] is what a hook sends Logbook and the answer it reads
//! back; [`settings`] is Logbook's entries in the agents' hook settings,
//! which make them call `logbook hook` at all.

pub mod event;
pub mod settings;
