//! The BMAD bundle's settings (issue 45): when `logbook.yaml` and the
//! bundle config keep runs in different folders, and when runs are left in
//! the folder Logbook used before it followed the bundle's. Both are named
//! with the move that makes them agree; nothing is moved for the user.

use crate::Logbook;
use std::path::Path;

use super::{Finding, Report};
use crate::error::{Next, Result, Step};
use crate::model::ids::RunId;
use logbook_store::config::FolderSource;

/// Adds a finding when the bundle config and `logbook.yaml` disagree on
/// `agent_outputs_folder`, and one when runs are still in Logbook's old
/// default folder after the bundle's folder became the default.
pub(super) fn check(p: &Logbook, report: &mut Report) -> Result<()> {
    let ours = &p.config.agent_outputs_folder;
    if let Some((config, theirs)) = p.config.bundle_disagreement() {
        let here = run_folders(ours)?;
        report.findings.push(Finding {
            kind: "bundle-folder-disagrees",
            path: config.to_path_buf(),
            message: format!(
                "bundle config {} keeps runs in {}, but agent_outputs_folder in logbook.yaml puts them in {} ({here} run folder(s)); the bundle's own tools do not see Logbook's runs",
                config.display(),
                theirs.display(),
                ours.display(),
            ),
            fixed: None,
            next: Some(
                Next::say("remove agent_outputs_folder from logbook.yaml to follow the bundle and move the runs (")
                    .then(move_command(ours, theirs))
                    .text("), or set the same folder in both"),
            ),
        });
    }
    if let FolderSource::Bundle(config) = &p.config.agent_outputs_source {
        let old = p.config.default_agent_outputs_folder();
        let left = if old == *ours { 0 } else { run_folders(&old)? };
        if left > 0 {
            report.findings.push(Finding {
                kind: "runs-in-old-folder",
                path: old.clone(),
                message: format!(
                    "{left} run folder(s) in {}, where Logbook kept runs before it followed bundle config {} (agent_outputs_folder {}); listings read only the bundle's folder now",
                    old.display(),
                    config.display(),
                    ours.display(),
                ),
                fixed: None,
                next: Some(Next::say("move them: ").then(move_command(&old, ours))),
            });
        }
    }
    Ok(())
}

/// How many folders named by a run id `dir` holds.
fn run_folders(dir: &Path) -> Result<usize> {
    let mut n = 0;
    for folder in logbook_store::runs::walk(dir)? {
        let Ok(folder) = folder else { continue };
        if folder
            .name
            .to_str()
            .is_some_and(|s| RunId::parse(s).is_ok())
        {
            n += 1;
        }
    }
    Ok(n)
}

/// The shell commands that move every run from `from` into `to`, then
/// bring the index to the new place.
fn move_command(from: &Path, to: &Path) -> Next {
    Next::say(format!(
        "`mkdir -p '{to}' && mv '{from}'/*-*-*-*-* '{to}'/` then ",
        from = from.display(),
        to = to.display()
    ))
    .step(Step::RebuildIndex)
}
