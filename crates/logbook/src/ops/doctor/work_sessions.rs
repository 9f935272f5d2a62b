//! Work sessions and their workflow state: the active pointer, sessions
//! marked active besides the active one, closes a crash interrupted,
//! workflow state that does not parse, and temp files left by killed
//! writers.

use crate::Logbook;
use std::path::PathBuf;

use super::{Finding, Options, Report, fix_does, reason_without_path, temp_file_findings};
use crate::error::Result;
use crate::model::ids::WorkSessionId;
use crate::model::work_session::{SessionStatus, WorkSession};
use crate::ops::{work_session as ws, workflow};

/// Work sessions and their workflow state: a pointer to a session that is
/// gone or closed, a close a crash interrupted (closed but not archived),
/// workflow state that does not parse or whose compaction archives are
/// missing, and temp files left by killed writers.
pub fn check_work_sessions(p: &Logbook, opts: &Options, report: &mut Report) -> Result<()> {
    report.findings.extend(stale_pointer(p, opts));
    let live: Vec<(PathBuf, WorkSession)> =
        logbook_store::work_session::session_files(&p.config.sessions_dir)?
            .into_iter()
            .filter_map(|path| {
                let session = logbook_store::work_session::read_file(p, &path).ok()?;
                Some((path, session))
            })
            .collect();
    report.findings.extend(extra_active(p, opts, &live));
    report.findings.extend(unarchived(p, opts, live));
    workflow_states(p, report)?;
    for dir in [&p.config.sessions_dir, &p.config.transcripts_dir] {
        temp_file_findings(
            dir,
            |_| true,
            "a write was interrupted here; the file it was replacing is intact",
            opts,
            // Several locks guard this folder, so age stands in for them: no
            // write takes a minute between temp file and rename.
            |path| {
                let young = logbook_store::fs::age(path).is_none_or(|age| age.as_secs() < 60);
                if young {
                    return Ok(false);
                }
                logbook_store::fs::remove_temp_file(path)?;
                Ok(true)
            },
            report,
        );
    }
    Ok(())
}

/// The active pointer when it names a session that cannot be read or is
/// closed; `--fix` clears it.
fn stale_pointer(p: &Logbook, opts: &Options) -> Option<Finding> {
    let pointer = p
        .config
        .sessions_dir
        .join(logbook_store::work_session::POINTER_FILE);
    let reason = match ws::active(p) {
        Err(e) => Some(format!("{e}")),
        Ok(Some(id)) => match ws::get(p, Some(&id)) {
            Err(e) => Some(format!("it names {id}, which cannot be read: {e}")),
            Ok(s) if s.status == SessionStatus::Closed => {
                Some(format!("it names {id}, which is closed"))
            }
            Ok(_) => None,
        },
        Ok(None) => None,
    }?;
    let mut f = Finding {
        kind: "stale-active-pointer",
        path: pointer,
        message: reason,
        fixed: None,
        next: fix_does(" clears it"),
    };
    if opts.fix {
        f.fixed = Some(match ws::clear_stale_pointer(p) {
            Ok(_) => "cleared the pointer; no session is active".into(),
            Err(e) => format!("could not clear it: {e}"),
        });
    }
    Some(f)
}

/// One session is active at a time. A `start` killed after writing the
/// new session but before pausing or closing the old one leaves two
/// marked active; the pointer says which one is (without a pointer, the
/// one updated last), and `--fix` pauses the others.
fn extra_active(p: &Logbook, opts: &Options, live: &[(PathBuf, WorkSession)]) -> Vec<Finding> {
    let marked: Vec<&(PathBuf, WorkSession)> = live
        .iter()
        .filter(|(_, s)| s.status == SessionStatus::Active)
        .collect();
    if marked.len() <= 1 {
        return vec![];
    }
    let keep = ws::active(p)
        .ok()
        .flatten()
        .filter(|id| marked.iter().any(|(_, s)| &s.session_id == id))
        .or_else(|| {
            marked
                .iter()
                .max_by(|a, b| a.1.last_updated.cmp(&b.1.last_updated))
                .map(|(_, s)| s.session_id.clone())
        });
    let mut findings = vec![];
    for (path, session) in marked
        .iter()
        .filter(|(_, s)| Some(&s.session_id) != keep.as_ref())
    {
        let mut f = Finding {
            kind: "extra-active-session",
            path: path.clone(),
            message: format!(
                "work session {} is marked active, but {} is the active one (a start was interrupted)",
                session.session_id,
                keep.as_deref().unwrap_or("another")
            ),
            fixed: None,
            next: fix_does(" pauses it"),
        };
        if opts.fix {
            f.fixed = Some(match ws::pause(p, Some(&session.session_id)) {
                Ok(_) => "paused it".into(),
                Err(e) => format!("could not pause it: {e}"),
            });
        }
        findings.push(f);
    }
    findings
}

/// Closed sessions still among the live ones (an interrupted close);
/// `--fix` moves them and their workflow state to the archive.
fn unarchived(p: &Logbook, opts: &Options, live: Vec<(PathBuf, WorkSession)>) -> Vec<Finding> {
    let mut findings = vec![];
    for (path, session) in live {
        if session.status != SessionStatus::Closed {
            continue;
        }
        let mut f = Finding {
            kind: "unarchived-session",
            path,
            message: format!(
                "work session {} is closed but was not moved to the archive (interrupted close)",
                session.session_id
            ),
            fixed: None,
            next: fix_does(" moves it"),
        };
        if opts.fix {
            let archived = WorkSessionId::parse(&session.session_id)
                .and_then(|id| ws::finish_archiving(p, &id));
            f.fixed = Some(match archived {
                Ok(true) => "moved it and its workflow state to the archive".into(),
                Ok(false) => "nothing to move any more".into(),
                Err(e) => format!("could not move it: {e}"),
            });
        }
        findings.push(f);
    }
    findings
}

/// Every workflow state file, live or archived: one that does not load or
/// whose full history cannot be read, and the values it read leniently.
fn workflow_states(p: &Logbook, report: &mut Report) -> Result<()> {
    for dir in [&p.config.sessions_dir, &p.config.session_archive_dir] {
        for (name, path) in logbook_store::entries(dir, logbook_store::EntryKind::File)? {
            let Some(id) = name.strip_suffix(".state.json") else {
                continue;
            };
            // The load's notice of a value read leniently becomes a
            // finding here, not a warning besides it.
            let others = p.notices.take();
            let loaded = workflow::load(p, Some(id));
            p.notices.take();
            others.into_iter().for_each(|n| p.notices.push(n));
            let problem = loaded.and_then(|loaded| {
                // Values read leniently are named, never fatal (issue 45).
                for what in loaded.state.lenient_values() {
                    report.findings.push(Finding {
                        kind: "workflow-value-out-of-range",
                        message: format!(
                            "{what}; set it to a fraction from 0 to 1 (e.g. 0.85) in this file"
                        ),
                        path: path.clone(),
                        fixed: None,
                        next: None,
                    });
                }
                workflow::full_history(&loaded).map(|_| ())
            });
            if let Err(e) = problem {
                report.findings.push(Finding {
                    kind: "corrupt-workflow-state",
                    message: reason_without_path(&e.to_string(), &path).to_string(),
                    path,
                    fixed: None,
                    next: None,
                });
            }
        }
    }
    Ok(())
}
