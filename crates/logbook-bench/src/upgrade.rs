//! The upgrade rows: the first `find` after a Logbook upgrade, which
//! migrates the index in place, and the full text complete (schema 16 keys
//! the text anew, in the background), next to the full `index rebuild`
//! that an upgrade cost before, all of the same runs in the same run. The
//! first `find` is a process of this binary, registered as the text
//! builder as the CLI is (see `first_answer`).
//!
//! The old index is made from the one just built by undoing what the later
//! schemas added (the tables, columns and index they created, and
//! `user_version`), not by an old binary: the same rows an old Logbook
//! would have left, without building one. (The upgrade tests use indexes
//! the real old binaries made.) Schema 15's text rows were keyed by row id,
//! these by start: the same rows and bytes to drop, so the migration, which
//! drops them whatever their keys, costs the same.

use anyhow::{Result, bail};
use logbook::Logbook;
use logbook_index::{Index, SCHEMA_VERSION};

use crate::first_answer::{Phases, builder_peak, first_find_and_text};
use crate::measure::time;
use crate::report::RowSink;

/// What each older schema lacks of the next ones, newest first: undone in
/// this order, an index of schema 14 becomes one of schema 13, then 10.
const UNDO: &[(i64, &str)] = &[
    // The history an index built at 15 would hold.
    (
        15,
        "UPDATE schema_history SET version = 15 WHERE step = 'built';",
    ),
    (13, "DROP TABLE schema_history;"),
    (
        10,
        "DROP TABLE transcript_messages_fts;
         DROP TABLE transcript_errors;
         ALTER TABLE transcripts DROP COLUMN usage;
         ALTER TABLE transcripts DROP COLUMN models;
         ALTER TABLE transcripts DROP COLUMN messages;
         ALTER TABLE transcripts DROP COLUMN source;
         ALTER TABLE transcripts DROP COLUMN title;
         ALTER TABLE transcripts DROP COLUMN repo_root;
         ALTER TABLE transcripts DROP COLUMN repo_key;
         ALTER TABLE transcripts DROP COLUMN repository;
         ALTER TABLE work_sessions DROP COLUMN repo_root;
         ALTER TABLE work_sessions DROP COLUMN repo_key;
         ALTER TABLE runs DROP COLUMN repo_root;
         ALTER TABLE runs DROP COLUMN repo_key;
         DROP INDEX files_live;
         ALTER TABLE files DROP COLUMN live;
         DELETE FROM meta WHERE key = 'root';",
    ),
];

/// The first `find` after an upgrade from schema 15 (the last before the
/// text keys), 13 and 10, and the full text complete, against `index
/// rebuild` of the same `n` runs.
pub(crate) fn rows(project: &Logbook, n: usize, row: RowSink<'_>) -> Result<()> {
    eprintln!("upgrade: index rebuild (the baseline) …");
    let (rebuild, _) = time(|| Ok(Index::rebuild(project, None)?))?;
    let rebuild_s = rebuild.as_secs_f64();
    let path = project.index_path();
    for (version, _) in UNDO {
        {
            let conn = rusqlite::Connection::open(&path)?;
            for (v, undo) in UNDO.iter().filter(|(v, _)| v >= version) {
                eprintln!("upgrade: back to schema {v} …");
                conn.execute_batch(undo)?;
            }
            conn.pragma_update(None, "user_version", version)?;
        }
        eprintln!("upgrade: first find from schema {version} …");
        let Phases {
            first,
            first_mib,
            text_done,
            text_mib,
        } = first_find_and_text(project)?;
        let history = Index::open(project)?.upkeep().schema_history()?;
        // From `version` (found there, or built there by a Logbook that
        // kept a history), then steps, never a rebuild at this schema.
        let migrated = history.first().is_some_and(|h| h.version == *version)
            && history
                .iter()
                .any(|h| h.version == SCHEMA_VERSION && h.step != "built");
        if !migrated
            || history
                .iter()
                .any(|h| h.version == SCHEMA_VERSION && h.step == "built")
        {
            bail!("the schema-{version} index was not migrated in place: {history:?}");
        }
        let s = first.as_secs_f64();
        let per_run_us = s / n as f64 * 1e6;
        // µs per run = s per million runs; below 100,000 runs the fixed
        // cost of a process is most of it, and the extrapolation says
        // nothing.
        let at_million = per_run_us;
        let judged = n >= 100_000;
        row(
            &format!(
                "first `find` after an upgrade from schema {version} (migrates to {SCHEMA_VERSION})"
            ),
            format!("{s:.2} s ({per_run_us:.2} µs/run), peak {first_mib:.0} MiB"),
            format!("`index rebuild` {rebuild_s:.1} s"),
            format!("1/{:.0} of it", rebuild_s / s),
            "≤ 2 s at 1M runs, ≤ 128 MiB",
            judged.then_some(at_million <= 2.0 && first_mib <= 128.0),
        );
        let text_s = text_done.as_secs_f64();
        row(
            &format!("full text complete after an upgrade from schema {version}"),
            format!("{text_s:.1} s, {}", builder_peak(text_mib)),
            format!("`index rebuild` {rebuild_s:.1} s"),
            format!("{:.2}×", text_s / rebuild_s),
            "≤ 256 MiB",
            Some(text_mib.unwrap_or(0.0) <= 256.0),
        );
    }
    Ok(())
}
