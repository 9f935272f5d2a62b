//! # Logbook
//!
//! The session store for AI-agent work. Logbook keeps on disk, safely, what an
//! orchestrator and its agents must not lose, in the human-readable formats of
//! four source specifications, and links them:
//!
//! - [`work_session`]: long-lived work sessions with token budgets,
//!   milestones, artifacts and spawned agents (`{sessions_dir}/{id}.yaml`).
//! - [`run`]: one output folder and `manifest.json` per agent run, with
//!   discovery, lineage and [`naming`] (display names).
//! - [`transcript`]: main-agent and subagent message histories.
//! - [`workflow`]: the orchestrator's invocations, decisions, verdicts and
//!   handoffs, compacted into archives but never lost.
//!
//! Files are the truth; the SQLite [`index`] is derived from them (runs,
//! outputs, lineage, sessions, transcripts, full text) and can be rebuilt;
//! [`doctor`] checks every file and repairs what is safe to repair. Every
//! write goes through [`store`]: a cross-process lock, a temp file, fsync and
//! an atomic rename, so concurrent agents never lose an update and a killed
//! process never leaves a torn file.
//!
//! ```no_run
//! use logbook::{Project, work_session::{self, StartOptions}};
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
pub mod config;
pub mod demo;
pub mod doctor;
pub mod error;
pub mod index;
pub mod naming;
pub mod project;
pub mod run;
pub mod store;
pub mod transcript;
pub mod work_session;
pub mod workflow;

pub use error::{Error, Result};
pub use project::Project;
