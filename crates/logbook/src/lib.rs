//! # Logbook
//!
//! The session store for AI-agent work. Logbook keeps on disk, safely, what an
//! orchestrator and its agents must not lose, in the human-readable formats of
//! four source specifications, and links them. The library is layered, and
//! every dependency points one way:
//!
//! - [`model`]: the seeds' records and the pure rules over them — the
//!   manifest of a run (seed 000), work sessions (002), transcripts (003),
//!   workflow state (004), discovery filters, lineage, display names, ids.
//! - [`store`]: the only code that builds paths, takes locks and writes
//!   files: a cross-process lock, a temp file, fsync and an atomic rename, so
//!   concurrent agents never lose an update and a killed process never
//!   leaves a torn file.
//! - [`index`]: the SQLite index derived from the files (runs, outputs,
//!   lineage, sessions, transcripts, full text); it can always be rebuilt.
//! - [`ops`]: one function per user-facing operation (lock → store →
//!   index). The CLI, the MCP server and the web viewer call only these.
//!
//! ```no_run
//! use logbook::{Project, ops::work_session::{self, StartOptions}};
//! let project = Project::discover(&std::env::current_dir()?, None)?;
//! let session = work_session::start(&project, StartOptions {
//!     client: Some("ACME".into()),
//!     project: Some("AUDIT".into()),
//!     ..Default::default()
//! })?;
//! println!("started {}", session.session_id);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod clock;
pub mod error;
pub mod index;
pub mod model;
pub mod notice;
pub mod ops;
pub mod store;
#[cfg(feature = "testing")]
pub mod testing;

pub use error::{Error, ErrorKind, Result};
pub use store::Project;
