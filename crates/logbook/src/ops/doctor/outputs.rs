//! Outputs that are no longer the run's own: a registered file later
//! replaced by a symlink leading out of the run folder, or by a hard link.
//! The viewer and MCP refuse to serve them; doctor names them, so the
//! change is seen by someone (nothing is repaired: the file is user data).

use std::path::Path;

use super::Finding;
use crate::model::run::Manifest;
use logbook_store::run_files::{self, Unconfined};

/// One `unsafe-output` finding per registered output of the run in
/// `folder` that [`run_files::unconfined`] refuses.
pub(super) fn unconfined_outputs(
    folder: &Path,
    manifest: &Manifest,
    push: &mut dyn FnMut(Finding),
) {
    for o in &manifest.outputs {
        if let Some(u) = run_files::unconfined(folder, &o.file) {
            push(unconfined_finding(folder, &o.file, u));
        }
    }
}

/// The `unsafe-output` finding for output `file` of the run in `folder`.
pub(super) fn unconfined_finding(folder: &Path, file: &str, u: Unconfined) -> Finding {
    Finding {
        kind: "unsafe-output",
        path: file.split('/').fold(folder.to_path_buf(), |p, c| p.join(c)),
        message: format!(
            "output {:?} {}; the viewer and MCP do not serve it, and `latest-output` marks it \"unsafe\": {:?}",
            file,
            u.explain(),
            u.as_str()
        ),
        fixed: None,
        next: None,
    }
}
