//! Where a face's command finds its project before there is a [`Project`](crate::Project)
//! to open: the folder `init` writes to, the folder `hooks` edits, and the
//! path rules the faces share with the store.

use std::path::{Path, PathBuf};

use logbook_store::Config;

use crate::Result;

/// A path as the faces and the store agree to read it: `p` made absolute
/// against `base` and tidied, without touching the disk.
pub use logbook_store::absolute;

/// Writes `logbook.yaml` with the defaults into `root` (`logbook init`);
/// refuses to overwrite one. Returns the file written.
pub fn init(root: &Path) -> Result<PathBuf> {
    Config::init(root)
}

/// The project folder whose agent settings `hooks` edits: `root` resolved
/// against `cwd` when given, else the nearest Logbook project, the git
/// repository's top folder, or `cwd` itself.
pub fn hooks_root(cwd: &Path, root: Option<&Path>) -> PathBuf {
    match root {
        Some(root) => logbook_store::root_path(cwd, root),
        None => logbook_store::agent_settings::project_root(cwd),
    }
}

/// Whether `path` names a regular file now (following symlinks): what a
/// face checks of a path a person or a file watcher gave it.
pub fn is_file(path: &Path) -> bool {
    logbook_store::fs::is_file(path)
}
