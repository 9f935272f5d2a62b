//! Writing the index: what a writer in `ops` just wrote, stored under its
//! lock (never re-read from the file), and the row code every path that
//! lands a record shares (a sync, a rebuild, a repair, the text build).

pub(crate) mod apply;
pub(crate) mod record;
pub(crate) mod run_rows;

use std::path::PathBuf;

use rusqlite::{Connection, params};

use crate::{Index, Kind, Pending, Record, control, path_str};
use logbook_model::error::{Error, Result};

/// An open index seen as the write path of `ops`: mark the files a writer
/// is about to change, then store what it wrote, under the writer's lock.
/// Takes the index mutably because it reopens it when a rebuild replaced
/// the file meanwhile.
pub struct Writer<'a> {
    pub(crate) index: &'a mut Index,
}

impl Writer<'_> {
    /// Marks files a writer is about to change, before it changes them: if
    /// it dies before [`Writer::record_written`], the next opener re-reads
    /// them.
    pub fn mark_pending(&mut self, pending: &[Pending]) -> Result<()> {
        let now = self.index.project.clock.now_string();
        self.begin_on_live()?;
        self.index.finish_write(|conn| {
            for t in pending {
                conn.prepare_cached(
                    "INSERT INTO pending(path, kind, lock, since) VALUES (?1, ?2, ?3, ?4) \
                     ON CONFLICT(path) DO UPDATE SET kind = excluded.kind, lock = excluded.lock, \
                     since = excluded.since",
                )?
                .execute(params![
                    path_str(&t.path),
                    t.kind.as_str(),
                    t.lock,
                    now
                ])?;
            }
            Ok(())
        })
    }

    /// Stores what a writer just wrote (the record it holds, not a re-read
    /// of the file; `None` for a file it removed) and clears the pending
    /// marks, in one transaction. Reopens the index first if a rebuild
    /// replaced it since [`Writer::mark_pending`], so the record is never
    /// left in a file nobody reads.
    pub fn record_written(&mut self, written: Vec<(Pending, Option<Record>)>) -> Result<()> {
        let records = written
            .into_iter()
            .map(|(p, rec)| {
                let stamp = apply::stamp_now(&p.path);
                (p.kind, p.path, stamp, rec)
            })
            .collect();
        self.begin_on_live()?;
        self.index
            .finish_write(|conn| store_and_clear(conn, records))
    }

    /// [`Index::begin_write`] on the live index file, reopening it as often
    /// as a rebuild replaced it (at most a few times).
    fn begin_on_live(&mut self) -> Result<()> {
        for _ in 0..3 {
            if self.index.begin_write()? {
                return Ok(());
            }
            *self.index = Index::open_file(&self.index.project.clone(), &self.index.path.clone())?;
        }
        Err(Error::Index {
            path: self.index.path.clone(),
            message: "the index was replaced again each time it was reopened".into(),
            corrupt: false,
        })
    }
}

impl Index {
    /// Re-reads files into the index and clears their pending marks, in one
    /// transaction: repairs after a writer died, and verify-on-read. On a
    /// file a rebuild has replaced meanwhile this does nothing: the rebuild
    /// read the files itself.
    pub(crate) fn reread(&self, pending: &[Pending]) -> Result<()> {
        if !self.begin_write()? {
            return Ok(());
        }
        // Stamp before reading: a change after this moment shows as a new
        // stamp to the next sync.
        let records = pending
            .iter()
            .map(|t| {
                let (stamp, record) = record::read_record(&self.project, t.kind, &t.path);
                (t.kind, t.path.clone(), stamp, record)
            })
            .collect();
        self.finish_write(|conn| store_and_clear(conn, records))
    }

    /// Starts a write transaction (`BEGIN IMMEDIATE`) and says whether this
    /// connection's file is still the index: `false`, with nothing begun,
    /// once a rebuild has renamed a new file over it. The check comes after
    /// the write lock is held, which a rebuild holds until its rename is done.
    pub(crate) fn begin_write(&self) -> Result<bool> {
        control(&self.conn, "BEGIN IMMEDIATE").map_err(self.err())?;
        if self.file_id.is_none() || self.is_current() {
            return Ok(true);
        }
        control(&self.conn, "ROLLBACK").map_err(self.err())?;
        Ok(false)
    }

    /// Runs `f` inside the transaction [`Index::begin_write`] began, and
    /// commits it, or rolls it back if `f` failed.
    pub(crate) fn finish_write(
        &self,
        f: impl FnOnce(&Connection) -> rusqlite::Result<()>,
    ) -> Result<()> {
        let e = self.err();
        match f(&self.conn) {
            Ok(()) => control(&self.conn, "COMMIT").map_err(e),
            Err(err) => {
                let _ = control(&self.conn, "ROLLBACK");
                Err(e(err))
            }
        }
    }

    /// Re-reads every record a writer marked pending and did not confirm,
    /// unless that writer is still alive (holds its lock).
    pub(crate) fn repair_pending(&mut self) -> Result<()> {
        let pending: Vec<(String, String, String)> = {
            let mut stmt = self
                .conn
                .prepare_cached("SELECT path, kind, lock FROM pending")
                .map_err(self.err())?;
            stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                .map_err(self.err())?
                .collect::<std::result::Result<_, _>>()
                .map_err(self.err())?
        };
        for (path, kind, lock) in pending {
            let Some(kind) = Kind::parse(&kind) else {
                continue;
            };
            // A writer holding the lock is mid-write and will confirm itself.
            let Some(_guard) = self.project.locks.try_exclusive(&lock)? else {
                continue;
            };
            self.reread(&[Pending {
                kind,
                path: PathBuf::from(path),
                lock,
            }])?;
        }
        Ok(())
    }
}

/// Stores re-read or written records and clears their pending marks.
#[allow(clippy::type_complexity)]
fn store_and_clear(
    conn: &Connection,
    records: Vec<(Kind, PathBuf, Option<apply::Stamp>, Option<Record>)>,
) -> rusqlite::Result<()> {
    for (kind, path, stamp, record) in records {
        apply::apply(conn, kind, &path, record, stamp, None, run_rows::Fresh::No)?;
        conn.prepare_cached("DELETE FROM pending WHERE path = ?1")?
            .execute([path_str(&path)])?;
    }
    Ok(())
}
