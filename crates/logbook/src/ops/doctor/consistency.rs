//! Checks that every file is what its name says and that records agree with
//! each other: ids inside files against their names, spawned agents against
//! the runs they started, compaction archives against the history that names
//! them, and the index's own pages.

use crate::Logbook;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::{Finding, Options, Report};
use crate::error::{Next, Result, Step};
use crate::model::ids::WorkSessionId;
use crate::model::transcript::parse_file_name;
use crate::ops::{work_session as ws, workflow};
use logbook_index::Index;

/// A finding without a fix yet.
fn finding(kind: &'static str, path: PathBuf, message: String) -> Finding {
    Finding {
        kind,
        path,
        message,
        fixed: None,
        next: None,
    }
}

/// The index's own pages (`PRAGMA quick_check`). A damaged index is derived
/// data: `--fix` throws it away and rebuilds it from the files. Returns
/// whether the index can be used by the checks that follow. `damage`: what
/// [`Index::damage`] found already, if it was called.
pub(super) fn index_pages(
    p: &Logbook,
    opts: &Options,
    report: &mut Report,
    damage: Option<Option<String>>,
) -> Result<bool> {
    let damage = match damage {
        Some(d) => d,
        None => Index::damage(p)?,
    };
    let Some(problem) = damage else {
        return Ok(true);
    };
    let mut f = finding(
        "index-corrupt",
        p.index_path(),
        format!("the index is damaged ({problem}); queries may fail"),
    );
    f.next = Some(
        Next::of(Step::Doctor { fix: true }, " (or ")
            .step(Step::RebuildIndex)
            .text(") rebuilds it from the files"),
    );
    if opts.fix {
        f.fixed = Some(
            match Index::discard(p).and_then(|()| crate::ops::index::rebuild(p, None)) {
                Ok(r) => format!("rebuilt from {} file(s)", r.indexed),
                Err(e) => format!("could not rebuild it: {e}"),
            },
        );
    }
    let usable = f.fixed.as_deref().is_some_and(|s| s.starts_with("rebuilt"));
    report.findings.push(f);
    Ok(usable)
}

/// Files whose name disagrees with the id inside (run folders are checked
/// in the pass over them): a session file renamed by hand, a transcript saved under
/// another id's name. Listings would show one record twice, or a command
/// naming one id would change another.
pub(super) fn ids_match_names(p: &Logbook, report: &mut Report) -> Result<()> {
    for dir in [&p.config.sessions_dir, &p.config.session_archive_dir] {
        for path in logbook_store::work_session::session_files(dir)? {
            let Some(stem) = path.file_stem().map(|s| s.to_string_lossy().into_owned()) else {
                continue;
            };
            let Ok(session) = logbook_store::work_session::read_file(p, &path) else {
                continue; // named by the corrupt-work-session check
            };
            if session.session_id != stem {
                report.findings.push(finding(
                    "id-mismatch",
                    path,
                    format!(
                        "the file is named for work session {stem} but holds session_id {:?}; rename the file to {}.yaml or fix session_id",
                        session.session_id, session.session_id
                    ),
                ));
            }
        }
    }
    for (kind, path) in logbook_store::transcript::transcript_files(&p.config.transcripts_dir)? {
        let Some(name) = path.file_name().map(|n| n.to_string_lossy().into_owned()) else {
            continue;
        };
        let Some((_, part)) = parse_file_name(&name) else {
            continue;
        };
        let Ok(head) = logbook_store::transcript::read_head(&path) else {
            continue; // named by the corrupt-transcript check
        };
        let id = head.id.to_ascii_lowercase();
        let part = part.to_ascii_lowercase();
        if id != part && !id.ends_with(&part) {
            let mut f = finding(
                "id-mismatch",
                path,
                format!(
                    "the {} transcript file is named for …{part} but holds id {}",
                    kind.as_str(),
                    head.id
                ),
            );
            f.next = Some(
                Next::say("re-import it (")
                    .step(Step::ImportTranscripts)
                    .text(") so it is stored under its own name"),
            );
            report.findings.push(f);
        }
    }
    Ok(())
}

/// Agents a live session lists as spawned runs whose run folder has no
/// manifest: a `run start` killed after linking the session and before
/// writing the run. `--fix` marks them failed (never deletes the entry).
pub(super) fn agents_have_runs(p: &Logbook, opts: &Options, report: &mut Report) -> Result<()> {
    let outputs = &p.config.agent_outputs_folder;
    for path in logbook_store::work_session::session_files(&p.config.sessions_dir)? {
        let Ok(session) = logbook_store::work_session::read_file(p, &path) else {
            continue;
        };
        let Ok(id) = WorkSessionId::parse(&session.session_id) else {
            continue;
        };
        let missing: Vec<String> = session
            .agents_spawned
            .iter()
            .filter(|a| {
                a.status.is_none() && run_folder_without_manifest(outputs, a.output_file.as_deref())
            })
            .filter(|a| older_than_a_minute(a.started.as_deref(), p.clock.now()))
            .map(|a| a.id.clone())
            .collect();
        if missing.is_empty() {
            continue;
        }
        let mut f = finding(
            "agent-without-run",
            path.clone(),
            format!(
                "work session {id} lists {} spawned run(s) that have no manifest ({}): their run start was interrupted",
                missing.len(),
                missing.join(", ")
            ),
        );
        f.next = super::fix_does(" marks them failed");
        if opts.fix {
            let marked = ws::update(p, Some(id.as_str()), |s| {
                let mut n = 0;
                for a in s
                    .agents_spawned
                    .iter_mut()
                    .filter(|a| missing.contains(&a.id))
                {
                    a.status = Some("failed".into());
                    a.extra
                        .insert("run_missing".into(), serde_json::Value::Bool(true));
                    n += 1;
                }
                Ok(n)
            });
            f.fixed = Some(match marked {
                Ok((_, n)) => format!("marked {n} agent(s) failed with run_missing: true"),
                Err(e) => format!("could not mark them: {e}"),
            });
        }
        report.findings.push(f);
    }
    Ok(())
}

/// An agent's output is a run folder (under `agent_outputs_folder`) that
/// holds no manifest.
fn run_folder_without_manifest(outputs: &Path, output_file: Option<&str>) -> bool {
    output_file
        .map(Path::new)
        .is_some_and(|f| f.starts_with(outputs) && !logbook_store::runs::has_manifest(f))
}

/// A start still under way must not be called interrupted.
fn older_than_a_minute(started: Option<&str>, now: crate::clock::Timestamp) -> bool {
    started
        .and_then(crate::clock::parse)
        .is_none_or(|t| now.as_second() - t.as_second() > 60)
}

/// Compaction archives in `{id}.history/` that `compactionHistory` does not
/// name: left by a compaction killed between its archive write and its
/// state write, so every invocation in them is still in the state.
/// `--fix` removes such a file only when that is verifiably so.
pub(super) fn archives_are_named(p: &Logbook, opts: &Options, report: &mut Report) -> Result<()> {
    for dir in [&p.config.sessions_dir, &p.config.session_archive_dir] {
        for state_path in logbook_store::workflow::state_files(dir)? {
            let Some(id) = state_path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_suffix(".state.json"))
                .map(str::to_string)
            else {
                continue;
            };
            let history = dir.join(format!("{id}.history"));
            let Ok(Some((state, _))) = logbook_store::workflow::read_state(&state_path) else {
                continue; // named by the corrupt-workflow-state check
            };
            let named: HashSet<PathBuf> = state
                .orchestrator_workflow
                .iter()
                .flat_map(|w| &w.compaction_history)
                .filter_map(|c| logbook_store::workflow::archive_path(dir, &c.note_path).ok())
                .collect();
            for (_, path) in logbook_store::entries(&history, logbook_store::EntryKind::File)? {
                if named.contains(&path) {
                    continue;
                }
                let mut f = finding(
                    "orphan-archive",
                    path.clone(),
                    format!(
                        "a compaction archive of {id} that compactionHistory does not name (a compaction was interrupted); its invocations are not counted"
                    ),
                );
                if opts.fix {
                    f.fixed = Some(remove_if_duplicate(p, &id, &path));
                }
                report.findings.push(f);
            }
        }
    }
    Ok(())
}

fn remove_if_duplicate(p: &Logbook, id: &str, path: &Path) -> String {
    let duplicate = (|| -> Result<bool> {
        let text = logbook_store::read_optional(path, "compaction archive")?.unwrap_or_default();
        let archive: crate::model::workflow::CompactionArchive =
            crate::model::text::parse_json(path, "compaction archive", &text)?;
        let loaded = workflow::load(p, Some(id))?;
        let history = workflow::full_history(&loaded)?;
        Ok(archive.invocations.iter().all(|i| history.contains(i)))
    })();
    match duplicate {
        Ok(true) => match logbook_store::workflow::remove_archive(path) {
            Ok(()) => "removed: every invocation in it is still in the workflow state".into(),
            Err(e) => format!("could not remove it: {e}"),
        },
        Ok(false) => "left alone: it holds invocations the state does not; compare by hand".into(),
        Err(e) => format!("left alone: {e}"),
    }
}
