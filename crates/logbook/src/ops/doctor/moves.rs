//! What a move of a run between file systems (`archive`, `unarchive`
//! with the archive on another mount) leaves when it is killed, and how
//! `--fix` finishes or rolls it back (see `logbook_store::fs::move_durably_keyed`):
//!
//! - killed while copying, or with the copy whole but not yet renamed into
//!   place: a `.{uuid}.{pid}.tmp` copy beside the destination, the run
//!   whole where it was (`temp-copy`): the copy goes (rolled back);
//! - killed after the copy was renamed into place, while the source was
//!   being removed: the run whole at its destination, and at its source a
//!   remainder without a manifest (the source's manifest goes first), or
//!   the whole source if the kill came before that (`interrupted-archive`,
//!   `interrupted-unarchive`): the remainder goes (finished).
//!
//! Nothing is removed unless every file in it is shown to be in the run's
//! whole copy (byte for byte; a temp copy's last file may be cut short),
//! and only under the run's lock, which every move holds: a move still
//! under way is never touched.

use crate::Logbook;
use std::path::Path;

use super::{Finding, Options, Report};
use crate::error::{Next, Result, Step};
use crate::model::ids::RunId;
use logbook_store::archive::{InBoth, TempCopy, Within};

/// Reports (and with `--fix` repairs) every temp copy and every run whose
/// folder is both in the live set and in the archive. Runs before the
/// index check, so that what `--fix` removes leaves the index with it.
pub(super) fn check(p: &Logbook, opts: &Options, report: &mut Report) -> Result<()> {
    for copy in logbook_store::archive::temp_copies(p) {
        report.findings.push(temp_copy(p, opts, &copy));
    }
    for both in logbook_store::archive::in_both(p)? {
        report.findings.push(in_both(p, opts, &both));
    }
    Ok(())
}

/// Whether the run folder `folder` is the remainder of an interrupted
/// move (a live folder without a manifest whose run is in the archive):
/// the pass over run folders leaves it to [`check`] rather than calling it
/// an orphan.
pub(super) fn is_move_remainder(p: &Logbook, name: &str) -> bool {
    RunId::parse(name).is_ok() && logbook_store::fs::is_folder(&p.config.archive_folder.join(name))
}

/// The finding for a temp copy, and its removal with `--fix` once the run
/// is shown whole elsewhere with all that the copy holds.
fn temp_copy(p: &Logbook, opts: &Options, copy: &TempCopy) -> Finding {
    let id = &copy.id;
    let whole = [
        logbook_store::run::folder(p, id),
        logbook_store::archive::folder(p, id),
    ]
    .into_iter()
    .find(|f| logbook_store::runs::has_manifest(f));
    let (message, next) = match &whole {
        Some(whole) => (
            format!(
                "a copy of run {id} that a move between file systems left when it was killed before the copy was in place; the run is whole at {}",
                whole.display()
            ),
            super::fix_does(" removes the copy once every file in it is shown to be in the run"),
        ),
        None => (
            format!(
                "a copy of run {id} that a move between file systems left, and the run has no folder with a manifest in the live set or the archive; it may be the only copy: check it, then rename it to {} by hand",
                logbook_store::archive::folder(p, id).display()
            ),
            None,
        ),
    };
    let fixed = opts.fix.then(|| match &whole {
        Some(whole) => remove_if_within(p, id, &copy.path, whole, Within::PartialCopy)
            .unwrap_or_else(|e| format!("left alone: {e}")),
        None => "left alone: no other copy of the run to compare it with".to_string(),
    });
    Finding {
        kind: "temp-copy",
        path: copy.path.clone(),
        message,
        fixed,
        next,
    }
}

/// The finding for a run with a folder in both places, and with `--fix`
/// the removal of the one that is the leftover of the move.
fn in_both(p: &Logbook, opts: &Options, both: &InBoth) -> Finding {
    let InBoth { id, live, archived } = both;
    let (in_live, in_archive) = (
        logbook_store::runs::has_manifest(live),
        logbook_store::runs::has_manifest(archived),
    );
    // Which copy is whole, which the leftover: the one without a manifest
    // is a source being removed; of two whole copies, the archived one is
    // kept (the move from it, or to it, is then undone or done).
    let (kind, keep, leftover, message, next) = match (in_live, in_archive) {
        (false, true) => (
            "interrupted-archive",
            archived,
            live,
            format!(
                "run {id} is archived at {}, and this live folder without a manifest is what an archive killed while removing it left; listings show it as a run of status unknown and unarchiving it refuses until it goes",
                archived.display()
            ),
            super::fix_does(
                " removes it once every file in it is shown to be byte-identical to the archived copy",
            ),
        ),
        (true, false) => (
            "interrupted-unarchive",
            live,
            archived,
            format!(
                "run {id} is live at {}, and this archived folder without a manifest is what an unarchive killed while removing it left",
                live.display()
            ),
            super::fix_does(
                " removes it once every file in it is shown to be byte-identical to the live copy",
            ),
        ),
        (true, true) => (
            "interrupted-archive",
            archived,
            live,
            format!(
                "run {id} is whole both in the live set and in the archive at {} (a move between file systems was killed after its copy was in place)",
                archived.display()
            ),
            Some(
                Next::of(
                    Step::Doctor { fix: true },
                    " keeps the archived copy and removes this one if the two are byte-identical (",
                )
                .step(Step::Unarchive { id: id.to_string() })
                .text(" then brings it back)"),
            ),
        ),
        (false, false) => {
            return Finding {
                kind: "interrupted-move",
                path: live.clone(),
                message: format!(
                    "run {id} has a folder in the live set and one in the archive at {}, neither with a manifest; compare them by hand, keep the one with the run's files and restore its manifest.json",
                    archived.display()
                ),
                fixed: opts
                    .fix
                    .then(|| "left alone: neither copy is whole".to_string()),
                next: None,
            };
        }
    };
    let fixed = opts.fix.then(|| {
        remove_if_within(p, id, leftover, keep, Within::Duplicate)
            .unwrap_or_else(|e| format!("left alone: {e}"))
    });
    Finding {
        kind,
        path: leftover.clone(),
        message,
        fixed,
        next,
    }
}

/// Removes `leftover` under run `id`'s lock if everything in it is within
/// `whole` as `how` asks; what was done, worded for the finding.
fn remove_if_within(
    p: &Logbook,
    id: &RunId,
    leftover: &Path,
    whole: &Path,
    how: Within,
) -> Result<String> {
    let Some(_lock) = p.locks.try_exclusive(&id.lock_name())? else {
        return Ok(format!(
            "left alone: run {id}'s lock is held, so a move or a write may be under way; repair it again once that ends"
        ));
    };
    if !logbook_store::runs::has_manifest(whole) {
        return Ok(format!(
            "left alone: {} has no manifest any more",
            whole.display()
        ));
    }
    if let Some(why) = logbook_store::archive::not_within(leftover, whole, how)? {
        return Ok(format!(
            "left alone: {why}; compare it with {} by hand and remove what you do not need",
            whole.display()
        ));
    }
    logbook_store::archive::remove_leftover(leftover)?;
    Ok(format!(
        "removed: every file in it is in {}, where the run is whole",
        whole.display()
    ))
}
