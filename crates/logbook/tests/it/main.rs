//! Integration tests of the library crate: one test binary, one module per
//! area.

// A failed unwrap is a failed test here, with the location in the message.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod agent_log;
mod arb;
mod codex_forks;
mod fidelity;
mod index_common;
mod index_outbox;
mod index_query;
mod index_rebuild;
mod index_sync;
mod layers;
mod prop_agent_log;
mod prop_agent_settings;
mod prop_archive;
mod prop_export;
mod prop_incremental;
mod prop_manifest;
mod prop_session;
mod prop_transcript;
mod prop_workflow_state;
mod prop_workflow_yaml;
mod scan_answer;
mod sizes;
