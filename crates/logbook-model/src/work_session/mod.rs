//! Work sessions (seed 002): long-lived units of work with a token budget,
//! milestones, artifacts, notes and the agents spawned for them.
//!
//! One YAML file per session, `{sessions_dir}/{id}.yaml`, in the seed's key
//! order. Files written by hand or by another tool are read leniently (legacy
//! token keys, missing fields, unknown keys kept); Logbook writes only valid
//! records.
//!
//! - `record`: [`WorkSession`] and the parts of its file.
//! - `tokens`: the `tokens` block and the bounds on every count.
//! - `report`: the [`Indicator`], the JSON shape and the [`TokenReport`].
//! - `summary`: [`compose_summary`] and [`workflow_blocked`].
//! - `names`: id prefixes and parts, required values, milestone names.

pub mod cost;
mod names;
mod record;
mod report;
mod summary;
mod tokens;

pub use names::{KNOWN_PREFIXES, id_part, nearest, non_empty, same_milestone, validate_prefix};
pub use record::{
    AgentEvent, AgentOutcome, AgentSession, Artifact, Compaction, Listing, Milestone,
    SessionStatus, SpawnedAgent, Usage, WorkSession,
};
pub use report::{AgentTokens, Indicator, TokenReport};
pub use summary::{compose_summary, workflow_blocked};
pub use tokens::{
    MAX_TOKENS, MIGRATED_TOKEN_KEYS, Tokens, add_counts, check_count, check_token_counts,
    forget_migrated_keys,
};

#[cfg(test)]
mod tests;
