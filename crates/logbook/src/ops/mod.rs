//! Operations: one function per thing a user or an agent does, the only API
//! the faces (CLI, MCP server, web viewer) call. Each takes its locks in the
//! order DESIGN §8 fixes, changes the files through [`logbook_store`] and
//! keeps [`logbook_index`] in step through [`write_through`]; each read
//! decides here, once, whether it answers from the index or the files and
//! how it pages.
//!
//! - [`work_session`]: start, switch, close, tokens, milestones… (seed 002)
//! - [`run`]: start, outputs, finish, link, find, latest output, lineage (seed 000);
//!   [`run_files`]: the paths inside a run folder, its tree and files (the
//!   store's one module for them, re-exported for the faces)
//! - [`transcript`]: save, import (seed 003 files, Claude Code and Codex
//!   logs), load, list, usage, prune (seed 003)
//! - [`workflow`]: invoke, complete, decide, verdict, handoff, phase, mode (seed 004)
//! - [`resume`]: the text an agent needs after a compaction; [`agent`]: the
//!   command that resumes a coding agent's session, and a handoff to the other
//!   agent; [`hook`]: what Claude Code's and Codex's hooks call, queued so an
//!   agent never waits ([`hook::event`]), and Logbook's entries in their
//!   settings: install, uninstall, status ([`hook::settings`])
//! - [`archive`]: archive, unarchive, the retention policy, and delete
//!   (the only way a run is deleted, leaving a tombstone)
//! - [`price`]: the price table costs are computed with (`logbook prices`)
//! - [`statusline`]: what an agent's status line shows
//! - [`budget_check`]: the hooks' check of the active work session's budget (warn, or block)
//! - [`spend`]: what a work session spent against its dollar budget
//! - [`params`]: `find`'s filters, paging and query text as a face received
//!   them, checked once for every face
//! - [`index`]: status, sync, rebuild; [`doctor`]: checks and repairs;
//!   [`demo`]: an example project.
//! - [`query`]: the reads that answer from either backend (the local index
//!   or the team catalog) by [`query::Scope`]: find, show, latest output,
//!   lineage, transcripts, usage
//! - [`catalog`]: the shared PostgreSQL catalog's lifecycle: driver, init,
//!   push, status
//! - [`export`]: history as OpenTelemetry GenAI traces, through a
//!   [`export::Receiver`] (OTLP in the `logbook-otlp` crate)
//! - [`secrets`]: the secrets in stored files (`logbook secrets scan`);
//!   [`share`]: a transcript read page by page, redacted, for a shared page

pub mod agent;
pub mod archive;
pub mod budget;
pub mod budget_check;
pub mod catalog;
pub mod demo;
pub mod doctor;
pub mod export;
pub mod hook;
pub mod index;
pub mod params;
pub mod price;
pub mod project;
pub mod query;
pub mod resume;
pub mod run;
pub mod secrets;
pub mod share;
pub mod spend;
pub mod statusline;
pub use logbook_store::run_files;
pub(crate) mod team;
pub mod transcript;
pub mod work_session;
pub mod workflow;

use crate::Logbook;
use crate::error::{Next, Result, Step};
use crate::notice::Notice;
use logbook_index::{Index, Pending, Record};

/// The one write protocol (DESIGN §2): the files a write will touch are
/// marked pending in the index, `write` changes them (under the caller's
/// lock) and returns the records it wrote, then the index stores those
/// records and clears the marks in one transaction. Files are the truth: if
/// the index cannot be opened or marked, the write still happens and a
/// notice says the index is behind; if the index update after the write
/// fails, the marks stay and the next [`Index::open`] repairs them. Only a
/// failure of the file write itself fails the operation.
pub(crate) fn write_through<T>(
    p: &Logbook,
    pending: Vec<Pending>,
    write: impl FnOnce() -> Result<(T, Vec<Option<Record>>)>,
) -> Result<T> {
    // A cached connection to an index a rebuild has since replaced is
    // reopened by the write itself, which checks under the write lock.
    let cached = p.writer().take().filter(|i| i.path() == p.index_path());
    let index = match cached {
        Some(i) => Ok(i),
        None => Index::open(p),
    }
    .and_then(|mut index| index.write().mark_pending(&pending).map(|()| index));
    let index = match index {
        Ok(index) => Some(index),
        Err(e) => {
            index_behind(p, &e);
            None
        }
    };
    let (out, records) = write()?;
    #[cfg(feature = "testing")]
    logbook_store::testing::crash_point();
    if let Some(mut index) = index {
        let written = pending.into_iter().zip(records).collect();
        match index.write().record_written(written) {
            Ok(()) => {
                *p.writer() = Some(index);
                catalog::after_write(p);
            }
            // The pending marks stay for the next open to repair.
            Err(e) => index_behind(p, &e),
        }
    }
    Ok(out)
}

fn index_behind(p: &Logbook, e: &crate::Error) {
    p.notices.push(
        Notice::new(format!(
            "the files were written, but the index {} was not updated ({e})",
            p.index_path().display()
        ))
        .next(Next::of(Step::SyncIndex, " brings it up to date")),
    );
}
