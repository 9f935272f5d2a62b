//! The store: the only code that builds paths, takes locks and writes files.
//!
//! - [`Project`]: the opened root, its [`Config`] and its [`Locks`].
//! - [`fs`]: [`write_atomic`] (temp file, fsync, rename, fsync of the
//!   folder), folder listings that skip temp files, durable moves.
//! - [`lock`]: cross-process locks on separate lock files.
//! - [`runs`]: the one walk of the runs folder, which every pass over all
//!   runs (index rebuild, sync and scan, `doctor`) shares.
//! - [`stamp`]: a followed file's size and mtime, which tell the index it
//!   changed; [`index_file`]: the index's SQLite file (its folder, size,
//!   identity, removal and replacement by a rebuild).
//! - [`repo`]: which repository a folder belongs to, read from its git files.
//! - [`discovery`]: what finding a project reads, so a long-lived server
//!   finds it again only when that changed.
//! - [`sys`]: what differs between Unix systems (a file's metadata through
//!   an open folder, a folder's listing, the host name), Linux's fast path
//!   and the portable one every other Unix takes; nothing else in Logbook
//!   names a call or flag some Unix lacks.
//! - One module per record kind reads and writes its files: [`run`],
//!   [`work_session`], [`transcript`], [`workflow`], and [`variables`] for
//!   the workflow.yaml files runs are started from; [`run_files`] checks every
//!   path inside a run folder and opens its files, refusing any path that
//!   leaves it; [`run_outputs`] reads a run's registered outputs for the
//!   index (their text and the stamp that says they changed);
//!   [`agent_log`] reads Claude Code and Codex logs and streams them into
//!   transcripts; [`agent_settings`] reads and safely rewrites the agents'
//!   hook settings files (Claude Code's, Codex's) that `hooks install` edits;
//!   [`export_cursor`] keeps what `logbook export` sent to each receiver;
//!   [`state_ignore`] writes the `.gitignore` that keeps `.logbook/`'s
//!   machine-local files out of commits;
//!   [`archive`] moves run folders to and from `archive_folder` and keeps
//!   the tombstones of deleted runs; [`scan_files`] reads files for a
//!   secrets scan, whole or in chunks.
//!
//! Nothing here knows about the index or decides what a user operation does;
//! that is the `logbook` crate's `ops`.

pub mod agent_log;
pub mod agent_settings;
pub mod archive;
pub mod config;
pub mod discovery;
pub mod export_cursor;
pub mod fs;
pub mod hook;
pub mod import_cursor;
pub mod index_file;
pub mod lock;
pub mod prices;
pub mod project;
pub mod repo;
pub mod run;
pub mod run_files;
pub mod run_outputs;
pub mod runs;
pub mod scan_files;
pub mod stamp;
pub mod stamp_watch;
pub mod state_ignore;
pub mod sys;
#[cfg(feature = "testing")]
pub mod testing;
pub mod transcript;
pub mod variables;
pub mod work_session;
pub mod workflow;

pub use config::Config;
pub use fs::{
    EntryKind, PathTrust, absolute, entries, move_durably, read_optional, read_regular,
    read_with_metadata, root_path, sync_dir, write_atomic, write_atomic_file,
};
pub(crate) use fs::{
    is_temp_file, open_record_file, open_regular, resolve_named, write_atomic_file_private,
    write_atomic_private,
};
pub use lock::{LOCK_TIMEOUT_ENV, LockGuard, Locks};
pub use project::Project;
