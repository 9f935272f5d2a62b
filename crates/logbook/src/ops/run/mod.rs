//! Runs (seed 000): start one, register the files it writes, finish it,
//! link it to the runs it builds on; find runs, the latest output of an
//! agent, and the lineage around a run.
//!
//! Every change takes the run's lock, reads the manifest, changes it and
//! writes it through the index ([`write_through`](super::write_through)).
//! Lock order (DESIGN §8): pointer → work session → run, so the work session
//! link of a new run is made before its run lock is taken. Reads answer from
//! the index, which is synced cheaply first and verifies every run it
//! returns against its file.
//!
//! - `query`: the local index's answers to [`crate::ops::query`] ([`resolve`],
//!   [`latest_output`], [`lineage`], and the pages of its `find`).
//! - `write`: [`start`] and every change after it ([`finish`], [`link`], …).
//! - `outputs`: [`register_output`] and [`read_output`], under one set of
//!   path rules.
//! - `json`: what every face prints for these operations.

mod json;
mod outputs;
mod query;
mod write;

pub use crate::ops::query::{COUNTED_MATCHES, DEFAULT_PAGE, entry};
pub use json::{entry_json, latest_output_json, output_json, started_json};
pub use outputs::{OutputFile, READ_LIMIT, read_output, register_output};
pub use query::{
    ANY_STATUS, LATEST_STATUS, LatestOutput, LatestQuery, agents, latest_output, lineage, resolve,
    show, show_confined,
};
pub(crate) use query::{find_each, find_page, find_scan_page, lineage_ref, resolve_ref};
pub use write::{
    StartOptions, Started, conversations, finish, link, mark_abandoned, record_conversation, start,
    variables_of,
};
