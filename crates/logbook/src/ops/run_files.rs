//! The files inside a run, for a viewer: its tree and one file opened for
//! reading, every requested path checked by [`crate::store::run_files`]
//! (no `..`, no symlink out of the run, whole-component comparison).

use crate::error::Result;
use crate::model::ids::RunId;
use crate::model::run::Run;
use crate::store::{self, Project};

pub use crate::store::run_files::{RunFile, Tree, TreeEntry, Unconfined};

/// The file tree of run `id`, `manifest.json` hidden.
pub fn tree(p: &Project, id: &RunId) -> Result<Tree> {
    store::run_files::tree(p, id)
}

/// Opens file `path` (relative to the run folder) of run `id` for reading;
/// anything that is not a plain path inside the run is refused.
pub fn open(p: &Project, id: &RunId, path: &str) -> Result<RunFile> {
    store::run_files::open(p, id, path)
}

/// Why output `file` of `run` is not the run's own (a symlink leading out
/// of its folder, a hard link), if it is not: such outputs are neither
/// listed nor served by the faces.
pub fn unconfined(run: &Run, file: &str) -> Option<Unconfined> {
    store::run_files::unconfined(&run.folder, file)
}

/// Checks that `path` is a plain relative path a run file can have (no
/// `..`, `.`, empty part, backslash, NUL, control character, drive letter,
/// not absolute, not overlong), without touching the disk.
pub fn check_path(path: &str) -> Result<()> {
    store::run_files::parts(path).map(|_| ())
}
