//! # Logbook
//!
//! The session store for AI-agent work. Logbook keeps on disk, safely, what an
//! orchestrator and its agents must not lose, in the human-readable formats of
//! four source specifications, and links them. The library is four crates,
//! and every dependency points one way, which Cargo enforces:
//!
//! - `logbook-model` (re-exported as [`model`]): the seeds' records and the
//!   pure rules over them — the manifest of a run (seed 000), work sessions
//!   (002), transcripts (003), workflow state (004), discovery filters,
//!   lineage, display names, ids, and the one [`Error`] type.
//! - `logbook-store`: the only code that builds paths, takes locks and
//!   writes files: a cross-process lock, a temp file, fsync and an atomic
//!   rename, so concurrent agents never lose an update and a killed process
//!   never leaves a torn file.
//! - `logbook-index`: the SQLite index derived from the files (runs,
//!   outputs, lineage, sessions, transcripts, full text); it can always be
//!   rebuilt.
//! - this crate, [`ops`]: one function per user-facing operation (lock →
//!   store → index). The CLI, the MCP server and the web viewer call only
//!   these, and the few store and index types re-exported here.
//!
//! ```no_run
//! use logbook::{Logbook, ops::work_session::{self, StartOptions}};
//! let project = Logbook::discover(&std::env::current_dir()?, None)?;
//! let session = work_session::start(&project, StartOptions {
//!     client: Some("ACME".into()),
//!     project: Some("AUDIT".into()),
//!     ..Default::default()
//! })?;
//! println!("started {}", session.session_id);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod context;
pub mod ops;

pub use context::Logbook;
pub use logbook_model as model;
pub use logbook_model::{Error, ErrorKind, Result, clock, error, notice};
pub use logbook_store::discovery::{DiscoveryStamp, stamp as discovery_stamp};
pub use logbook_store::stamp_watch::StampWatch;
pub use logbook_store::{PathTrust, Project};

/// The team catalog's backend trait and the values it exchanges: what a
/// backend crate (logbook-team-pg) implements, and the one part of the
/// index a crate above `ops` names.
pub use logbook_index::catalog;

/// What the tests of the faces reach below `ops` for: fault injection, and
/// the store and index themselves to plant or inspect what a command left.
#[cfg(feature = "testing")]
pub mod testing {
    pub use logbook_index as index;
    pub use logbook_store as store;
    pub use logbook_store::testing::*;
}
