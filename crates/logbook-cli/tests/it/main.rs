//! Integration tests: the real `logbook` binary against real files in temp
//! folders. One test binary, one module per area, one shared harness.

// A failed unwrap is a failed test here, with the location in the message.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod agent_handoff;
mod agent_hints;
mod agent_import;
mod archive;
mod archive_interrupted;
mod budget_hooks;
mod codex_forks;
mod contract;
mod cost;
mod demo;
mod doctor;
mod environment;
mod export;
mod export_phoenix;
mod first_answer;
mod format_drift;
mod freshness;
mod harness;
mod hooks;
mod hooks_install;
mod incremental;
mod index;
mod mcp;
mod mcp_busy;
mod mcp_http;
mod mcp_props;
mod outputs;
mod parse_errors;
mod persisted_output;
mod pg;
// The benchmark's PostgreSQL finder, one file for both.
#[path = "../../../logbook-bench/src/pg_bin.rs"]
mod pg_bin;
mod prop_settled;
mod readme;
mod repo_identity;
mod runs;
mod runs_hardening;
mod scale;
mod secrets;
mod seed_fidelity;
mod seed_runs;
mod serve;
mod session;
mod settled;
mod snapshots;
mod stories;
mod team;
mod team_limits;
mod terminal_safety;
mod text_order;
mod transcript;
mod transcript_find;
mod transcript_text;
mod two_phase;
mod upgrade;
mod usage_view;
mod validation;
mod workflow;
