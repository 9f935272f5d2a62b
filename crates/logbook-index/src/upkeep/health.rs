//! The index's health: files it could not parse, counts and staleness for
//! `index status`, and a fingerprint to compare two builds.

use std::path::PathBuf;

use crate::SECRETS_COUNTS_KEY;
use crate::Status;
#[cfg(feature = "testing")]
use crate::schema::{key_rid_sql, text_key_sql};
use crate::upkeep::Upkeep;
use logbook_model::error::Result;

impl Upkeep<'_> {
    /// What `doctor` last counted of secrets, file by file (JSON; see
    /// `ops::secrets`): derived from the files like everything here, so
    /// a rebuild that loses it costs one scan, never a wrong count.
    pub fn secrets_counts(&self) -> Result<Option<String>> {
        self.index.meta(SECRETS_COUNTS_KEY)
    }

    /// Keeps what [`Upkeep::secrets_counts`] gives back.
    pub fn set_secrets_counts(&self, json: &str) -> Result<()> {
        self.index.set_meta(SECRETS_COUNTS_KEY, json)
    }

    /// Counts, size and staleness, for `index status`.
    pub fn status(&self) -> Result<Status> {
        let count = |table: &str| -> Result<u64> {
            self.index
                .conn
                .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| {
                    r.get::<_, i64>(0)
                })
                .map(|n| n.max(0) as u64)
                .map_err(self.index.err())
        };
        let size = logbook_store::index_file::size;
        let wal = PathBuf::from(format!("{}-wal", self.index.path.display()));
        Ok(Status {
            path: self.index.path.clone(),
            size_bytes: size(&self.index.path) + size(&wal),
            schema_version: crate::SCHEMA_VERSION,
            runs: count("runs")?,
            outputs: count("outputs")?,
            edges: count("edges")?,
            work_sessions: count("work_sessions")?,
            transcripts: count("transcripts")?,
            workflow_states: count("workflow_states")?,
            corrupt: count("corrupt")?,
            pending: count("pending")?,
            last_sync: self.index.meta("last_sync")?,
            stale: self.staleness()?,
            text: crate::TextStatus::of(self.index.read().text_progress()?),
            schema_history: self.schema_history()?,
        })
    }

    /// The rows of `schema_history`, oldest first.
    pub fn schema_history(&self) -> Result<Vec<crate::SchemaStep>> {
        let mut stmt = self
            .index
            .conn
            .prepare("SELECT version, step, applied_at, logbook FROM schema_history ORDER BY rowid")
            .map_err(self.index.err())?;
        let rows = stmt
            .query_map([], |r| {
                Ok(crate::SchemaStep {
                    version: r.get(0)?,
                    step: r.get(1)?,
                    applied_at: r.get(2)?,
                    logbook: r.get(3)?,
                })
            })
            .map_err(self.index.err())?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(self.index.err())
    }

    /// A canonical dump of everything the index holds about the files (not
    /// its bookkeeping), to compare two indexes built different ways.
    #[cfg(feature = "testing")]
    pub fn fingerprint(&self) -> Result<Vec<String>> {
        let runs_fts = format!(
            "SELECT 'fts', r.folder, '', '', '', '', '', '', '', '', '' FROM runs_fts f \
             JOIN runs r ON r.rid = {} AND f.rowid = {}",
            key_rid_sql("f.rowid"),
            text_key_sql("r")
        );
        let queries: [&str; 12] = [
            "SELECT 'run', folder, id, agent, workflow, status, user, started_at, coalesce(completed_at,''), title, manifest FROM runs",
            "SELECT 'out', r.folder, o.seq, o.file, o.type, o.description, o.created_at, '', '', '', '' FROM outputs o JOIN runs r ON r.rid = o.rid",
            "SELECT 'edge', child, parent, '', '', '', '', '', '', '', '' FROM edges",
            "SELECT 'tag', r.folder, t.tag, '', '', '', '', '', '', '', '' FROM tags t JOIN runs r ON r.rid = t.rid",
            // Contentless: the words cannot be read back, only that the run
            // has its row, under its whole key (a stale start shows).
            &runs_fts,
            "SELECT 'ws', path, id, status, archived, last_updated, record, '', '', '', '' FROM work_sessions",
            "SELECT 'tr', path, id, kind, workdir, started_at, last_active_at, tokens, coalesce(parent,''), coalesce(repository,''), title || char(31) || source || char(31) || messages || char(31) || models || char(31) || coalesce(usage,'') FROM transcripts",
            "SELECT 'trfts', t.path, '', '', '', '', '', '', '', '', '' FROM transcripts_fts f JOIN transcripts t ON t.rid = f.rowid",
            // Message rows by their transcript's file and index; a row
            // whose transcript is gone shows as `orphan`.
            "SELECT 'trmsg', coalesce(t.path, 'orphan'), f.rowid & 16777215, '', '', '', '', '', '', '', '' FROM transcript_messages_fts f LEFT JOIN transcripts t ON t.rid = (f.rowid >> 24)",
            "SELECT 'trerr', coalesce(t.path, 'orphan'), e.message, '', '', '', '', '', '', '', '' FROM transcript_errors e LEFT JOIN transcripts t ON t.rid = e.rid",
            "SELECT 'wf', path, session_id, mode, coalesce(phase,''), coalesce(active_agent,''), version, updated_at, invocations, pending_handoffs, '' FROM workflow_states",
            "SELECT 'bad', path, kind, '', '', '', '', '', '', '', '' FROM corrupt",
        ];
        let mut out = vec![];
        for q in queries {
            let mut stmt = self.index.conn.prepare(q).map_err(self.index.err())?;
            let rows = stmt
                .query_map([], |r| {
                    let mut parts = vec![];
                    for i in 0..11 {
                        let v: rusqlite::types::Value = r.get(i)?;
                        parts.push(match v {
                            rusqlite::types::Value::Null => String::new(),
                            rusqlite::types::Value::Integer(n) => n.to_string(),
                            rusqlite::types::Value::Real(f) => f.to_string(),
                            rusqlite::types::Value::Text(s) => s,
                            rusqlite::types::Value::Blob(b) => format!("{b:?}"),
                        });
                    }
                    Ok(parts.join("\u{1f}"))
                })
                .map_err(self.index.err())?;
            for row in rows {
                out.push(row.map_err(self.index.err())?);
            }
        }
        out.sort();
        Ok(out)
    }

    /// The run folders whose full-text row holds `word`, sorted, as the
    /// index answers without verifying anything against the files: what a
    /// test compares of two indexes' words (the table is contentless, so
    /// [`Upkeep::fingerprint`] cannot show them).
    #[cfg(feature = "testing")]
    pub fn text_matches(&self, word: &str) -> Result<Vec<String>> {
        let mut stmt = self
            .index
            .conn
            .prepare(&format!(
                "SELECT r.folder FROM runs_fts f JOIN runs r ON r.rid = {} \
                     WHERE runs_fts MATCH ?1 ORDER BY r.folder",
                key_rid_sql("f.rowid")
            ))
            .map_err(self.index.err())?;
        let rows = stmt
            .query_map([format!("\"{word}\"")], |r| r.get(0))
            .map_err(self.index.err())?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(self.index.err())
    }
}
