//! Claude Code's and Codex's hooks: [`event`] handles what a hook sends
//! (`logbook hook`: received, queued, performed, drained by a worker);
//! [`settings`] installs, removes and reports Logbook's entries in the
//! agents' hook settings (`logbook hooks`).

pub mod event;
pub mod settings;
