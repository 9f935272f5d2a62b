//! Connections kept open between `Index::open`s in one process. Opening
//! SQLite costs more than a whole indexed query: the schema is parsed again
//! (FTS5 tables included), `sqlite_stat1` loaded, every statement prepared
//! anew, and the first connection of a process re-reads the WAL. A
//! long-lived face (the MCP server, the web viewer) opens the index once per
//! call, so it reuses the connection its last call closed, with its
//! statement cache.
//!
//! Each call still starts its own read transaction and sees what other
//! processes committed; the little a connection remembers above SQLite
//! ([`Memo`]) is kept with the database version it was read at and read
//! again when that moved. A connection is reused only for the very file it
//! was opened on ([`FileId`]: device,
//! inode and birth time, since a deleted `index.db` recreated at once can
//! get the same inode number back), and never mid-transaction.

use std::cell::RefCell;
use std::ops::{Deref, DerefMut};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::Mutex;

use rusqlite::Connection;

/// Idle connections kept per process: one per index a process works on,
/// with room for a few threads of a server.
const IDLE_MAX: usize = 4;

/// SQLite's name for a database held in memory: never pooled.
pub(super) const IN_MEMORY: &str = ":memory:";

/// Process-wide on purpose, unlike the rest of the state a context
/// carries: a connection is a resource of the process (its file handles,
/// its page cache), and a context opened per request (a server's) would
/// otherwise open the database and read its schema on every call.
static IDLE: Mutex<Idle> = Mutex::new(Vec::new());

/// What makes a database file the same file: device, inode and birth time
/// (nanoseconds; 0 where the file system does not keep it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct FileId(u64, u64, u128);

/// The identity of the file at `path`, or `None` when it is gone.
pub(super) fn file_id(path: &Path) -> Option<FileId> {
    let (dev, ino, born) = logbook_store::index_file::identity(path)?;
    Some(FileId(dev, ino, born))
}

/// What a connection remembers between calls, each entry with the
/// [`Version`] of the database it was read at.
#[derive(Default)]
pub(super) struct Memo {
    /// Every distinct workflow name (see `Reader::workflow_names`).
    pub(super) workflow_names: Option<(Version, Arc<[String]>)>,
    /// The runs an FTS5 query matches (see `Reader::matches_of`): a
    /// page and its count both ask.
    pub(super) text_matches: Option<(Version, String, Arc<crate::read::text_page::Matches>)>,
    /// The row ids of the last short page asked for (see `Reader::page_of`).
    pub(super) page: Option<(Version, logbook_model::query::RunQuery, Vec<i64>)>,
}

/// A database's version as one connection sees it: SQLite's `data_version`
/// (moved by other connections' commits) and the connection's own count of
/// changed rows.
pub(super) type Version = (i64, u64);

/// A connection that goes back to the idle list when its `Index` is done.
pub(super) struct Pooled {
    conn: Option<Connection>,
    /// What this connection remembers; goes back to the idle list with it.
    pub(super) memo: RefCell<Memo>,
    /// Where it goes back to; `None`: never pooled (in memory, or a file
    /// that was gone when opened).
    home: Option<(PathBuf, FileId)>,
}

impl Pooled {
    /// A connection opened just now on `path` (whose identity is `id`).
    pub(super) fn new(conn: Connection, path: &Path, id: Option<FileId>) -> Pooled {
        Pooled {
            conn: Some(conn),
            memo: RefCell::default(),
            home: id
                .filter(|_| path != Path::new(IN_MEMORY))
                .map(|id| (path.to_path_buf(), id)),
        }
    }

    /// An idle connection to the file now at `path`, if this process has one.
    /// Connections to a file that was replaced since are closed.
    pub(super) fn take(path: &Path) -> Option<Pooled> {
        if path == Path::new(IN_MEMORY) {
            return None;
        }
        let now = file_id(path)?;
        take_from(&mut *IDLE.lock().ok()?, path, now)
    }
}

impl Pooled {
    /// The connection itself, never to be pooled (to close it).
    pub(super) fn into_inner(mut self) -> Connection {
        self.home = None;
        // Only this and `drop` take the connection out.
        self.conn.take().unwrap_or_else(|| unreachable!())
    }
}

type Idle = Vec<(PathBuf, FileId, Connection, Memo)>;

fn take_from(idle: &mut Idle, path: &Path, now: FileId) -> Option<Pooled> {
    idle.retain(|(p, id, _, _)| p != path || *id == now);
    let at = idle.iter().position(|(p, _, _, _)| p == path)?;
    let (path, id, conn, memo) = idle.swap_remove(at);
    Some(Pooled {
        conn: Some(conn),
        memo: RefCell::new(memo),
        home: Some((path, id)),
    })
}

/// Keeps `pooled`'s connection in `idle` if it can be reused.
fn put_into(idle: &mut Idle, pooled: &mut Pooled) {
    let (Some(conn), Some((path, id))) = (pooled.conn.take(), pooled.home.take()) else {
        return;
    };
    // A connection left inside a transaction (an error path) is closed,
    // which rolls it back.
    if !conn.is_autocommit() {
        return;
    }
    if idle.len() >= IDLE_MAX {
        idle.remove(0);
    }
    idle.push((path, id, conn, pooled.memo.take()));
}

impl Deref for Pooled {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        // Only `drop` takes the connection out.
        self.conn.as_ref().unwrap_or_else(|| unreachable!())
    }
}

impl DerefMut for Pooled {
    fn deref_mut(&mut self) -> &mut Connection {
        self.conn.as_mut().unwrap_or_else(|| unreachable!())
    }
}

impl Drop for Pooled {
    fn drop(&mut self) {
        if let Ok(mut idle) = IDLE.lock() {
            put_into(&mut idle, self);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open(path: &Path) -> Pooled {
        let conn = Connection::open(path).unwrap();
        conn.execute_batch("CREATE TABLE IF NOT EXISTS t(x)")
            .unwrap();
        Pooled::new(conn, path, file_id(path))
    }

    fn count(conn: &Connection) -> i64 {
        conn.query_row("SELECT count(*) FROM t", [], |r| r.get(0))
            .unwrap()
    }

    /// Takes from a list of this test's own, so that other tests' indexes
    /// in the process-wide list cannot crowd it.
    fn take(idle: &mut Idle, path: &Path) -> Option<Pooled> {
        take_from(idle, path, file_id(path)?)
    }

    #[test]
    fn a_connection_is_reused_only_for_the_file_it_was_opened_on() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.db");
        let mut idle = Idle::new();
        let mut first = open(&path);
        first.execute("INSERT INTO t VALUES (1)", []).unwrap();
        put_into(&mut idle, &mut first);
        let mut again = take(&mut idle, &path).expect("the idle connection is reused");
        assert_eq!(count(&again), 1);
        put_into(&mut idle, &mut again);

        // The file replaced under the idle connection (even if the new file
        // gets the same inode number back): never handed out again.
        std::fs::remove_file(&path).unwrap();
        let mut replaced = open(&path);
        put_into(&mut idle, &mut replaced);
        let fresh = take(&mut idle, &path).expect("the new file's own connection");
        assert_eq!(count(&fresh), 0);
        assert!(take(&mut idle, &path).is_none(), "the stale one was closed");
    }

    #[test]
    fn a_connection_inside_a_transaction_is_not_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.db");
        let mut idle = Idle::new();
        let mut conn = open(&path);
        conn.execute_batch("BEGIN; INSERT INTO t VALUES (1)")
            .unwrap();
        put_into(&mut idle, &mut conn);
        drop(conn);
        assert!(take(&mut idle, &path).is_none());
        assert_eq!(
            count(&open(&path)),
            0,
            "the open transaction was rolled back"
        );
    }
}
