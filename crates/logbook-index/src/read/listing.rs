//! Listings beside the runs: the agents that have runs, work sessions, and
//! transcripts (paged, or found by what their messages say).

use std::path::PathBuf;

use rusqlite::params;

use crate::fulltext::{fts_query, snippet_of_text};
use crate::read::Reader;
use crate::{CorruptEntry, Kind, TranscriptHit};
use logbook_model::CorruptFile;
use logbook_model::error::Result;
use logbook_model::transcript::Summary;
use logbook_model::work_session::{Listing, WorkSession};

/// A listing row of the `transcripts` table (columns path, id, kind,
/// workdir, started_at, last_active_at, tokens, parent, repository, title,
/// source, messages, models, usage).
fn summary_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Summary> {
    Ok(Summary {
        file: PathBuf::from(r.get::<_, String>(0)?),
        id: r.get(1)?,
        kind: if r.get::<_, String>(2)? == "subagent" {
            logbook_model::transcript::Kind::Subagent
        } else {
            logbook_model::transcript::Kind::Main
        },
        workdir: r.get(3)?,
        started_at: r.get(4)?,
        last_active_at: r.get(5)?,
        latest_total_tokens: r.get::<_, i64>(6)?.max(0) as u64,
        parent_session_id: r.get(7)?,
        repository: r
            .get::<_, Option<String>>(8)?
            .and_then(|j| serde_json::from_str(&j).ok())
            .as_ref()
            .and_then(logbook_model::repo::Repository::from_value),
        title: r.get(9)?,
        source: r.get(10)?,
        messages: r.get::<_, i64>(11)?.max(0) as u64,
        models: r
            .get::<_, String>(12)?
            .split('\t')
            .filter(|m| !m.is_empty())
            .map(str::to_string)
            .collect(),
        usage: r
            .get::<_, Option<String>>(13)?
            .and_then(|j| serde_json::from_str(&j).ok()),
    })
}

impl Reader<'_> {
    /// How many files of `kind` the index holds as unparseable.
    pub fn corrupt_count(&self, kind: Kind) -> Result<u64> {
        self.index
            .conn
            .prepare_cached("SELECT count(*) FROM corrupt WHERE kind = ?1")
            .map_err(self.index.err())?
            .query_row([kind.as_str()], |r| r.get::<_, i64>(0))
            .map(|n| n.max(0) as u64)
            .map_err(self.index.err())
    }

    /// Files the last sync could not parse.
    pub fn corrupt_files(&self) -> Result<Vec<CorruptEntry>> {
        let mut stmt = self
            .index
            .conn
            .prepare("SELECT path, kind, reason FROM corrupt ORDER BY path")
            .map_err(self.index.err())?;
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                ))
            })
            .map_err(self.index.err())?;
        let mut out = vec![];
        for row in rows {
            let (path, kind, reason) = row.map_err(self.index.err())?;
            if let Some(kind) = Kind::parse(&kind) {
                out.push(CorruptEntry {
                    path: PathBuf::from(path),
                    kind,
                    reason,
                });
            }
        }
        Ok(out)
    }

    /// Every agent that has runs, with how many, by name: the viewer's
    /// agent filter (read from the `runs_agent` index alone). Run folders
    /// without a manifest have no agent.
    pub fn agents(&self) -> Result<Vec<(String, u64)>> {
        let mut stmt = self
            .index
            .conn
            .prepare_cached(
                "SELECT agent, count(*) FROM runs WHERE agent <> '' GROUP BY agent ORDER BY agent",
            )
            .map_err(self.index.err())?;
        stmt.query_map([], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?.max(0) as u64))
        })
        .map_err(self.index.err())?
        .collect::<std::result::Result<_, _>>()
        .map_err(self.index.err())
    }

    /// Work sessions from the index, as `work_session::list` would read
    /// them from the files.
    pub fn work_sessions(&self) -> Result<Listing> {
        let mut listing = Listing::default();
        let mut stmt = self
            .index
            .conn
            .prepare(
                "SELECT path, archived, record FROM work_sessions ORDER BY last_updated DESC, path",
            )
            .map_err(self.index.err())?;
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, bool>(1)?,
                    r.get::<_, String>(2)?,
                ))
            })
            .map_err(self.index.err())?;
        for row in rows {
            let (path, archived, record) = row.map_err(self.index.err())?;
            match serde_json::from_str::<WorkSession>(&record) {
                Ok(ws) if archived => listing.archived.push(ws),
                Ok(ws) => listing.sessions.push(ws),
                Err(err) => listing.corrupt.push(CorruptFile {
                    path: PathBuf::from(path),
                    reason: err.to_string(),
                }),
            }
        }
        for c in self.corrupt_files()? {
            if c.kind == Kind::WorkSession {
                listing.corrupt.push(CorruptFile {
                    path: c.path,
                    reason: c.reason,
                });
            }
        }
        Ok(listing)
    }

    /// Transcripts from the index, newest `lastActiveAt` first (unparseable
    /// times last), as the files' listing orders them, paged. With `said`,
    /// only those whose messages say every one of its words (full text,
    /// stemmed as `find --text`).
    pub fn transcripts(
        &self,
        kind: Option<logbook_model::transcript::Kind>,
        said: Option<&str>,
        limit: Option<usize>,
        offset: Option<usize>,
    ) -> Result<Vec<Summary>> {
        let said = said.map(fts_query);
        if said.as_deref() == Some("") {
            return Ok(vec![]);
        }
        if said.is_some() {
            self.note_partial_text()?;
        }
        let mut stmt = self
            .index.conn
            .prepare_cached(
                "SELECT path, id, kind, workdir, started_at, last_active_at, tokens, parent, repository, \
                 title, source, messages, models, usage FROM transcripts \
                 WHERE (?1 IS NULL OR kind = ?1) \
                 AND (?4 IS NULL OR rid IN (SELECT rowid FROM transcripts_fts WHERE transcripts_fts MATCH ?4)) \
                 ORDER BY last_active_ms IS NULL, last_active_ms DESC, last_active_at DESC, path \
                 LIMIT ?2 OFFSET ?3",
            )
            .map_err(self.index.err())?;
        let rows = stmt
            .query_map(
                params![
                    kind.map(logbook_model::transcript::Kind::as_str),
                    limit.map_or(-1, |l| l as i64),
                    offset.unwrap_or(0) as i64,
                    said
                ],
                summary_row,
            )
            .map_err(self.index.err())?;
        rows.collect::<std::result::Result<_, _>>()
            .map_err(self.index.err())
    }

    /// The transcripts whose messages say every one of `words`, best match
    /// first (bm25, then newest), active at or after `since`: at most
    /// `limit` of them, each with a snippet of its text, and how many match
    /// in all. A snippet reads the transcript's messages again (up to
    /// [`crate::MAX_SAID_BYTES`] of text), only for the transcripts returned.
    pub fn find_transcripts(
        &self,
        words: &str,
        since: Option<jiff::Timestamp>,
        limit: usize,
    ) -> Result<(Vec<TranscriptHit>, u64)> {
        let query = fts_query(words);
        if query.is_empty() {
            return Ok((vec![], 0));
        }
        let since = since.map(|t| t.as_millisecond());
        let total: i64 = self
            .index
            .conn
            .prepare_cached(
                "SELECT count(*) FROM transcripts_fts f JOIN transcripts t ON t.rid = f.rowid \
                 WHERE transcripts_fts MATCH ?1 AND (?2 IS NULL OR t.last_active_ms >= ?2)",
            )
            .map_err(self.index.err())?
            .query_row(params![query, since], |r| r.get(0))
            .map_err(self.index.err())?;
        let rows: Vec<Summary> = {
            let mut stmt = self
                .index.conn
                .prepare_cached(
                    "SELECT t.path, t.id, t.kind, t.workdir, t.started_at, t.last_active_at, t.tokens, t.parent, t.repository, \
                     t.title, t.source, t.messages, t.models, t.usage \
                     FROM transcripts_fts f JOIN transcripts t ON t.rid = f.rowid \
                     WHERE transcripts_fts MATCH ?1 AND (?2 IS NULL OR t.last_active_ms >= ?2) \
                     ORDER BY f.rank, t.last_active_ms DESC, t.path LIMIT ?3",
                )
                .map_err(self.index.err())?;
            stmt.query_map(
                params![query, since, i64::try_from(limit).unwrap_or(i64::MAX)],
                summary_row,
            )
            .map_err(self.index.err())?
            .collect::<std::result::Result<_, _>>()
            .map_err(self.index.err())?
        };
        let mut hits = vec![];
        for transcript in rows {
            let snippet =
                match logbook_store::transcript::read_said(&transcript.file, crate::MAX_SAID_BYTES)
                {
                    Ok((_, text)) => {
                        snippet_of_text(&self.index.conn, &text, words).map_err(self.index.err())?
                    }
                    // Gone or unreadable since it was indexed: listed without one.
                    Err(_) => None,
                };
            hits.push(TranscriptHit {
                transcript,
                snippet,
            });
        }
        Ok((hits, total.max(0) as u64))
    }
}
