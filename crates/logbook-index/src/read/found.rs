//! Find-in-transcript: which messages of one transcript say some words, and
//! which hold a failed tool result, from the per-message rows (schema's
//! `transcript_messages_fts` and `transcript_errors`).

use std::path::Path;

use rusqlite::{OptionalExtension, params};

use crate::fulltext::fts_query;
use crate::read::Reader;
use crate::schema::{MESSAGE_BITS, message_rowid};
use logbook_model::error::Result;

/// Message indexes of one transcript, ascending, and how many there are
/// in all (the page is cut at its limit).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MessageHits {
    /// The message indexes returned, ascending.
    pub messages: Vec<usize>,
    /// How many messages match after the starting point, the returned ones
    /// included.
    pub total: u64,
}

impl Reader<'_> {
    /// The transcript row of the file at `path`, if the index holds it.
    fn transcript_rid(&self, path: &Path) -> Result<Option<i64>> {
        self.index
            .conn
            .prepare_cached("SELECT rid FROM transcripts WHERE path = ?1")
            .map_err(self.index.err())?
            .query_row([crate::path_str(path)], |r| r.get(0))
            .optional()
            .map_err(self.index.err())
    }

    /// The messages of the transcript at `path` that say every one of
    /// `words` (stemmed and quoted as `transcript list --text`), after
    /// message `after` when given, at most `limit`; `None` when the index
    /// holds no transcript there. Only that transcript's rowid range is read.
    pub fn find_in_transcript(
        &self,
        path: &Path,
        words: &str,
        after: Option<usize>,
        limit: usize,
    ) -> Result<Option<MessageHits>> {
        let Some(rid) = self.transcript_rid(path)? else {
            return Ok(None);
        };
        let query = fts_query(words);
        if query.is_empty() {
            return Ok(Some(MessageHits::default()));
        }
        self.note_partial_text()?;
        let from = message_rowid(rid, after.map_or(0, |a| a + 1));
        let to = message_rowid(rid + 1, 0);
        let mask = (1i64 << MESSAGE_BITS) - 1;
        let total: i64 = self
            .index
            .conn
            .prepare_cached(
                "SELECT count(*) FROM transcript_messages_fts \
                 WHERE transcript_messages_fts MATCH ?1 AND rowid >= ?2 AND rowid < ?3",
            )
            .map_err(self.index.err())?
            .query_row(params![query, from, to], |r| r.get(0))
            .map_err(self.index.err())?;
        let mut stmt = self
            .index
            .conn
            .prepare_cached(
                "SELECT rowid FROM transcript_messages_fts \
                 WHERE transcript_messages_fts MATCH ?1 AND rowid >= ?2 AND rowid < ?3 \
                 ORDER BY rowid LIMIT ?4",
            )
            .map_err(self.index.err())?;
        let messages = stmt
            .query_map(
                params![query, from, to, i64::try_from(limit).unwrap_or(i64::MAX)],
                |r| r.get::<_, i64>(0),
            )
            .map_err(self.index.err())?
            .map(|r| r.map(|rowid| (rowid & mask) as usize))
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(self.index.err())?;
        Ok(Some(MessageHits {
            messages,
            total: total.max(0) as u64,
        }))
    }

    /// The messages of the transcript at `path` that hold a failed tool
    /// result, after message `after` when given, at most `limit`; `None`
    /// when the index holds no transcript there.
    pub fn transcript_errors(
        &self,
        path: &Path,
        after: Option<usize>,
        limit: usize,
    ) -> Result<Option<MessageHits>> {
        let Some(rid) = self.transcript_rid(path)? else {
            return Ok(None);
        };
        let from = after.map_or(0, |a| a as i64 + 1);
        let total: i64 = self
            .index
            .conn
            .prepare_cached(
                "SELECT count(*) FROM transcript_errors WHERE rid = ?1 AND message >= ?2",
            )
            .map_err(self.index.err())?
            .query_row(params![rid, from], |r| r.get(0))
            .map_err(self.index.err())?;
        let mut stmt = self
            .index
            .conn
            .prepare_cached(
                "SELECT message FROM transcript_errors WHERE rid = ?1 AND message >= ?2 \
                 ORDER BY message LIMIT ?3",
            )
            .map_err(self.index.err())?;
        let messages = stmt
            .query_map(
                params![rid, from, i64::try_from(limit).unwrap_or(i64::MAX)],
                |r| r.get::<_, i64>(0),
            )
            .map_err(self.index.err())?
            .map(|r| r.map(|m| m.max(0) as usize))
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(self.index.err())?;
        Ok(Some(MessageHits {
            messages,
            total: total.max(0) as u64,
        }))
    }
}
