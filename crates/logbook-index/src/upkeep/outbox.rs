//! The team outbox: which records changed since the team catalog last took
//! them, kept in the index itself so that the note of a change commits in
//! the same transaction as the change.
//!
//! The notes are written by SQLite triggers on the record tables, which
//! exist only while a team catalog is configured: every path that lands a
//! record (a write, a sync, a rebuild, a repair) is covered without knowing
//! about teams, and a project without one gets no outbox rows. A rebuild
//! drops the tables and their triggers with them; the next [`Upkeep::follow_team`]
//! sees the triggers gone and queues every record (the catalog skips the
//! unchanged ones by their content hash).
//!
//! A note holds only (kind, id) and a sequence number: the content pushed is
//! read from the index when the push happens, in the same read transaction
//! as the notes, so the sequence number is the version of exactly that
//! content. A note is removed after the push only if its sequence number is
//! unchanged; a record written again meanwhile keeps its (new) note.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use sha2::{Digest, Sha256};

use crate::Kind;
use crate::catalog::{
    Body, Change, LiveIds, MAX_OUTPUT_TEXT, MAX_SEARCH_TEXT, OutputBody, RunBody, TranscriptBody,
    WorkSessionBody, WorkflowStateBody, search_words_of,
};
use crate::fulltext::manifest_text;
use crate::upkeep::Upkeep;
use crate::write::run_rows;
use logbook_model::clock::Clock;
use logbook_model::error::Result;
use logbook_model::limits::cut_at;
use logbook_model::secrets;
use logbook_store::run_outputs::{Longer, output_text_upto};

/// The record tables, the kind each holds, and its id column.
const FOLLOWED: &[(&str, Kind, &str)] = &[
    ("runs", Kind::Run, "id"),
    ("work_sessions", Kind::WorkSession, "id"),
    ("transcripts", Kind::Transcript, "id"),
    ("workflow_states", Kind::WorkflowState, "session_id"),
];

const MARKER: &str = "team_runs_insert";

/// A pushed change to forget: its kind, id and the sequence number read.
pub type Pushed = (Kind, String, i64);

impl Upkeep<'_> {
    /// Makes the outbox follow the records for the catalog at `url` (the
    /// configured `team_url`), or with `None` stop and empty it. When it
    /// starts following (first time, or after a rebuild dropped the
    /// triggers), and when `url` names another server or database than the
    /// one it followed for, every record is queued once: a new catalog
    /// holds none of them.
    pub fn follow_team(&self, url: Option<&str>) -> Result<()> {
        let target = url.map(catalog_target);
        let on = target.is_some();
        let following = self.following()?;
        // Without a catalog, the common case, nothing is noted either.
        if !following && !on {
            return Ok(());
        }
        let raw = self.team_note(TARGET)?;
        // A target noted with its user name (before credentials were left
        // out) names the same catalog: noted again without it, not queued.
        let noted = raw.as_deref().map(catalog_target);
        // An index that followed before targets were noted followed this
        // same catalog, as far as anyone can tell: noted, not queued again.
        let moved = following && on && noted.is_some() && noted != target;
        if following == on && !moved && raw == target {
            return Ok(());
        }
        let e = self.index.err();
        let tx =
            rusqlite::Transaction::new_unchecked(&self.index.conn, TransactionBehavior::Immediate)
                .map_err(&e)?;
        match &target {
            Some(target) => {
                if !trigger_present(&tx).map_err(&e)? {
                    start_following(&tx).map_err(&e)?;
                } else if moved {
                    queue_every_record(&tx).map_err(&e)?;
                }
                note(&tx, TARGET, Some(target)).map_err(&e)?;
            }
            None => {
                for (table, _, _) in FOLLOWED {
                    for op in ["insert", "update", "delete"] {
                        tx.execute_batch(&format!("DROP TRIGGER IF EXISTS team_{table}_{op}"))
                            .map_err(&e)?;
                    }
                }
                tx.execute("DELETE FROM team_outbox", []).map_err(&e)?;
                note(&tx, TARGET, None).map_err(&e)?;
            }
        }
        tx.commit().map_err(&e)
    }

    fn following(&self) -> Result<bool> {
        trigger_present(&self.index.conn).map_err(self.index.err())
    }

    /// How many records wait to be pushed.
    pub fn outbox_len(&self) -> Result<u64> {
        self.index
            .conn
            .query_row("SELECT count(*) FROM team_outbox", [], |r| {
                r.get::<_, i64>(0)
            })
            .map(|n| n as u64)
            .map_err(self.index.err())
    }

    /// The oldest `limit` waiting changes with their current content, read
    /// in one transaction so each content matches its sequence number, and
    /// redacted ([`redact_body`]).
    pub fn outbox_batch(&self, limit: usize) -> Result<Vec<Change>> {
        self.outbox_batch_after(i64::MIN, limit, true)
            .map(|(changes, _)| changes)
    }

    /// [`Upkeep::outbox_batch`] of the changes noted after sequence number
    /// `after`, and the last sequence number read (`after` when none was):
    /// a push reads its next batch while the server takes the previous
    /// one, before that one's notes are forgotten. With `redact` every text
    /// that leaves has its secrets replaced ([`redact_body`]), the words a
    /// team search finds included.
    pub fn outbox_batch_after(
        &self,
        after: i64,
        limit: usize,
        redact: bool,
    ) -> Result<(Vec<Change>, i64)> {
        let e = self.index.err();
        let tx =
            rusqlite::Transaction::new_unchecked(&self.index.conn, TransactionBehavior::Deferred)
                .map_err(&e)?;
        let notes: Vec<(i64, String, String)> = tx
            .prepare_cached(
                "SELECT seq, kind, id FROM team_outbox WHERE seq > ?2 ORDER BY seq LIMIT ?1",
            )
            .and_then(|mut st| {
                st.query_map(params![limit as i64, after], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?))
                })?
                .collect()
            })
            .map_err(&e)?;
        let last = notes.last().map_or(after, |n| n.0);
        let mut changes = Vec::with_capacity(notes.len());
        // Each run's searchable text, folded into words for the whole batch at once.
        let mut texts: Vec<(usize, String)> = vec![];
        for (seq, kind, id) in notes {
            let Some(kind) = Kind::parse(&kind) else {
                continue;
            };
            let body = match kind {
                Kind::Run => run_body(&tx, &id).map_err(&e)?.map(|(body, text)| {
                    texts.push((changes.len(), text));
                    Body::Run(body)
                }),
                Kind::WorkSession => work_session_body(&tx, &id)
                    .map_err(&e)?
                    .map(Body::WorkSession),
                Kind::Transcript => transcript_body(&tx, &id).map_err(&e)?.map(Body::Transcript),
                Kind::WorkflowState => workflow_state_body(&tx, &id)
                    .map_err(&e)?
                    .map(Body::WorkflowState),
            };
            changes.push(Change {
                kind,
                hash: String::new(),
                id,
                version: seq,
                body,
            });
        }
        tx.commit().map_err(&e)?;
        if redact {
            for c in &mut changes {
                if let Some(body) = &mut c.body {
                    redact_body(body);
                }
            }
            for (_, text) in &mut texts {
                secrets::redact_string(text);
            }
        }
        let words = search_words_of(&texts.iter().map(|(_, t)| t.as_str()).collect::<Vec<_>>())?;
        for ((i, _), words) in texts.iter().zip(words) {
            if let Some(Change {
                body: Some(Body::Run(r)),
                ..
            }) = changes.get_mut(*i)
            {
                r.search_words = words;
            }
        }
        for c in &mut changes {
            c.hash = c.body.as_ref().map_or_else(String::new, hash_of);
        }
        Ok((changes, last))
    }

    /// Forgets pushed changes whose record was not written again since.
    pub fn outbox_done(&self, pushed: &[Pushed]) -> Result<()> {
        let e = self.index.err();
        let tx =
            rusqlite::Transaction::new_unchecked(&self.index.conn, TransactionBehavior::Immediate)
                .map_err(&e)?;
        for (kind, id, seq) in pushed {
            tx.prepare_cached("DELETE FROM team_outbox WHERE seq = ?1 AND kind = ?2 AND id = ?3")
                .and_then(|mut st| st.execute(params![seq, kind.as_str(), id]))
                .map_err(&e)?;
        }
        tx.commit().map_err(&e)
    }

    /// A value the team push keeps between processes (last error, last push).
    pub fn team_note(&self, key: &str) -> Result<Option<String>> {
        self.index.meta(&format!("team_{key}"))
    }

    /// Whether every record was queued since the catalog was last
    /// reconciled, and which queueing that was (for [`Upkeep::reconciled`]).
    pub fn reconcile_due(&self) -> Result<Option<String>> {
        self.team_note(RECONCILE)
    }

    /// Forgets the queueing `due` once the catalog was reconciled with it,
    /// unless every record was queued again meanwhile.
    pub fn reconciled(&self, due: &str) -> Result<()> {
        self.index
            .conn
            .execute(
                "DELETE FROM meta WHERE key = ?1 AND value = ?2",
                params![format!("team_{RECONCILE}"), due],
            )
            .map(|_| ())
            .map_err(self.index.err())
    }

    /// Every record's id, by kind: what the catalog should hold of this
    /// machine.
    pub fn live_ids(&self) -> Result<LiveIds> {
        FOLLOWED
            .iter()
            .map(|(table, kind, col)| {
                let ids = self
                    .index
                    .conn
                    .prepare(&format!("SELECT DISTINCT {col} FROM {table}"))
                    .and_then(|mut st| st.query_map([], |r| r.get(0))?.collect())
                    .map_err(self.index.err())?;
                Ok((*kind, ids))
            })
            .collect()
    }

    /// Sets (or with `None` clears) a [`Upkeep::team_note`].
    pub fn set_team_note(&self, key: &str, value: Option<&str>) -> Result<()> {
        note(&self.index.conn, key, value).map_err(self.index.err())
    }
}

/// The team note naming the catalog the outbox follows for.
const TARGET: &str = "target";

/// The team note set when every record was queued: which queueing the
/// next complete push must reconcile.
const RECONCILE: &str = "reconcile";

fn note(conn: &Connection, key: &str, value: Option<&str>) -> rusqlite::Result<()> {
    let key = format!("team_{key}");
    match value {
        Some(v) => conn.execute(
            "INSERT INTO meta(key, value) VALUES (?1, ?2) \
             ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            params![key, v],
        ),
        None => conn.execute("DELETE FROM meta WHERE key = ?1", [key]),
    }
    .map(|_| ())
}

/// The catalog a `team_url` names: its scheme, host, port and database,
/// without user info (the password is no business of the index) or the
/// connection options (`sslmode` changes how, not where; `password=` may
/// sit there too).
fn catalog_target(url: &str) -> String {
    logbook_model::url::public(url)
}

fn trigger_present(conn: &Connection) -> rusqlite::Result<bool> {
    conn.prepare_cached("SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name = ?1")?
        .query_row([MARKER], |r| r.get::<_, i64>(0))
        .map(|n| n > 0)
}

/// The system clock in microseconds, never a pinned one: this is a counter
/// that must keep growing across rebuilds, not a time anyone reads, and a
/// clock fixed by `LOGBOOK_NOW` would start every rebuild at one number.
fn wall_clock_us() -> i64 {
    Clock::SYSTEM.now().as_microsecond()
}

fn start_following(tx: &Connection) -> rusqlite::Result<()> {
    // Versions must keep growing across a rebuild, which drops the table
    // and its sequence: start from the wall clock in microseconds, which a
    // counter bumped once per write cannot have overtaken.
    let now_us = wall_clock_us();
    let updated = tx.execute(
        "UPDATE sqlite_sequence SET seq = max(seq, ?1) WHERE name = 'team_outbox'",
        [now_us],
    )?;
    if updated == 0 {
        tx.execute(
            "INSERT INTO sqlite_sequence(name, seq) VALUES ('team_outbox', ?1)",
            [now_us],
        )?;
    }
    for (table, kind, col) in FOLLOWED {
        let kind = kind.as_str();
        tx.execute_batch(&format!(
            "CREATE TRIGGER IF NOT EXISTS team_{table}_insert AFTER INSERT ON {table} BEGIN \
               INSERT OR REPLACE INTO team_outbox(kind, id) VALUES ('{kind}', NEW.{col}); END;
             CREATE TRIGGER IF NOT EXISTS team_{table}_update AFTER UPDATE ON {table} BEGIN \
               INSERT OR REPLACE INTO team_outbox(kind, id) VALUES ('{kind}', NEW.{col}); END;
             CREATE TRIGGER IF NOT EXISTS team_{table}_delete AFTER DELETE ON {table} BEGIN \
               INSERT OR REPLACE INTO team_outbox(kind, id) VALUES ('{kind}', OLD.{col}); END;"
        ))?;
    }
    queue_every_record(tx)
}

/// Notes every record as changed, for a catalog that has none of them or
/// may hold some this index never saw go (a rebuilt index): once they are
/// pushed, the push reconciles the catalog with the index
/// ([`Upkeep::reconcile_due`]).
fn queue_every_record(tx: &Connection) -> rusqlite::Result<()> {
    for (table, kind, col) in FOLLOWED {
        tx.execute(
            &format!(
                "INSERT OR REPLACE INTO team_outbox(kind, id) SELECT DISTINCT ?1, {col} FROM {table}"
            ),
            [kind.as_str()],
        )?;
    }
    note(tx, RECONCILE, Some(&wall_clock_us().to_string()))
}

/// Replaces the secrets in every text of `body` by `[REDACTED:kind]`
/// ([`logbook_model::secrets`]): what the catalog shows people on other
/// machines (titles, output text, whole records as JSON) must not carry a
/// key pasted into a prompt. The local files and index keep them.
fn redact_body(body: &mut Body) {
    use secrets::redact_string as text;
    let json = |s: &mut String| {
        if let std::borrow::Cow::Owned(r) = secrets::redact_json_text(s) {
            *s = r;
        }
    };
    match body {
        Body::Run(r) => {
            for s in [
                &mut r.folder,
                &mut r.agent,
                &mut r.workflow,
                &mut r.started_at,
                &mut r.title,
            ] {
                text(s);
            }
            if let Some(u) = &mut r.user {
                text(u);
            }
            json(&mut r.manifest);
            r.tags.iter_mut().for_each(|t| {
                text(t);
            });
            for o in &mut r.outputs {
                text(&mut o.file);
                text(&mut o.output_type);
                text(&mut o.description);
                if let Some(t) = &mut o.text {
                    if o.file.ends_with(".json") {
                        json(t);
                    } else {
                        text(t);
                    }
                }
            }
        }
        Body::WorkSession(w) => json(&mut w.record),
        Body::Transcript(t) => {
            for s in [&mut t.file, &mut t.workdir, &mut t.title] {
                text(s);
            }
            json(&mut t.metadata);
        }
        Body::WorkflowState(w) => {
            for s in [&mut w.phase, &mut w.active_agent].into_iter().flatten() {
                text(s);
            }
            if let Some(state) = &mut w.state {
                json(state);
            }
        }
    }
}

/// A hex SHA-256 of the record's content as it crosses the wire.
fn hash_of(body: &Body) -> String {
    let bytes = serde_json::to_vec(body).unwrap_or_default();
    Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A run's record and its searchable text (what the local index's FTS row
/// holds: agent, workflow, manifest text, outputs' text).
fn run_body(tx: &Connection, id: &str) -> rusqlite::Result<Option<(RunBody, String)>> {
    let Some((rid, mut body)) = shared_run_row(tx, id)? else {
        return Ok(None);
    };
    body.tags = run_rows::tags_of(tx, rid)?;
    body.parents = run_rows::parents_of(tx, rid)?;
    let mut search_text = format!("{}\n{}\n{}\n", body.agent, body.title, body.workflow);
    let folder = Path::new(&body.folder);
    if let Ok((m, _)) =
        logbook_model::run::parse_manifest(&folder.join("manifest.json"), &body.manifest)
    {
        search_text.push_str(&manifest_text(&m));
    }
    let outputs_from = search_text.len();
    let mut outputs = vec![];
    for (file, output_type, description, created_at) in run_rows::outputs_of(tx, rid)? {
        let (text, truncated) = match output_text_upto(folder, &file, MAX_OUTPUT_TEXT, Longer::Cut)
        {
            Some((t, cut)) => (Some(t), cut),
            None => (None, false),
        };
        let room = MAX_SEARCH_TEXT.saturating_sub(search_text.len() - outputs_from);
        if let Some(t) = &text
            && room > 0
        {
            search_text.push_str(cut_at(t, room));
            search_text.push('\n');
        }
        outputs.push(OutputBody {
            file,
            output_type,
            description,
            created_at,
            text,
            truncated,
        });
    }
    body.outputs = outputs;
    Ok(Some((body, search_text)))
}

/// The row of run `id` as the catalog gets it (its row id beside it), its
/// whole manifest even where the index keeps a stub; tags, parents and
/// outputs left for [`run_body`]. `None` for a run folder without a
/// manifest (stored as no text), which is not shared: the catalog holds
/// manifests.
fn shared_run_row(tx: &Connection, id: &str) -> rusqlite::Result<Option<(i64, RunBody)>> {
    let row = tx
        .prepare_cached(
            "SELECT rid, folder, agent, workflow, status, user, started_at, completed_at, title, \
             manifest FROM runs WHERE id = ?1 AND manifest <> '' ORDER BY folder LIMIT 1",
        )?
        .query_row([id], |r| {
            let started_at: String = r.get(6)?;
            Ok((
                r.get::<_, i64>(0)?,
                RunBody {
                    folder: r.get(1)?,
                    agent: r.get(2)?,
                    workflow: r.get(3)?,
                    status: r.get(4)?,
                    user: r.get(5)?,
                    started_ms: logbook_model::clock::parse(&started_at)
                        .map(|t| t.as_millisecond()),
                    started_at,
                    completed_at: r.get(7)?,
                    title: r.get(8)?,
                    manifest: r.get(9)?,
                    tags: vec![],
                    parents: vec![],
                    outputs: vec![],
                    search_words: vec![],
                },
            ))
        })
        .optional()?;
    let Some((rid, mut body)) = row else {
        return Ok(None);
    };
    // A manifest stub is not the manifest: the file is (a run it cannot be
    // read from any more is gone, as the next sync will find).
    if crate::write::record::is_manifest_stub(&body.manifest) {
        let whole = crate::write::record::stored_manifest(Path::new(&body.folder), &body.manifest)
            .and_then(|m| serde_json::to_string(&m).ok());
        match whole {
            Some(whole) => body.manifest = whole,
            None => return Ok(None),
        }
    }
    Ok(Some((rid, body)))
}

fn work_session_body(tx: &Connection, id: &str) -> rusqlite::Result<Option<WorkSessionBody>> {
    tx.prepare_cached(
        "SELECT status, archived, last_updated, record FROM work_sessions WHERE id = ?1 \
         ORDER BY archived, path LIMIT 1",
    )?
    .query_row([id], |r| {
        Ok(WorkSessionBody {
            status: r.get(0)?,
            archived: r.get(1)?,
            last_updated: r.get(2)?,
            record: r.get(3)?,
        })
    })
    .optional()
}

fn transcript_body(tx: &Connection, id: &str) -> rusqlite::Result<Option<TranscriptBody>> {
    let body = tx
        .prepare_cached(
            "SELECT path, kind, workdir, started_at, last_active_at, tokens, parent, title, messages \
             FROM transcripts WHERE id = ?1 ORDER BY path LIMIT 1",
        )?
        .query_row([id], |r| {
            Ok(TranscriptBody {
                file: r.get(0)?,
                kind: r.get(1)?,
                workdir: r.get(2)?,
                started_at: r.get(3)?,
                last_active_at: r.get(4)?,
                latest_total_tokens: r.get(5)?,
                parent_session_id: r.get(6)?,
                metadata: String::new(),
                title: r.get(7)?,
                messages: r.get(8)?,
            })
        })
        .optional()?;
    Ok(body.map(|mut b| {
        // The metadata (with the measured usage) is in the file, not the
        // index; the messages are skipped, never sent.
        b.metadata = logbook_store::transcript::read_head(Path::new(&b.file))
            .ok()
            .and_then(|h| serde_json::to_string(&h.metadata).ok())
            .unwrap_or_else(|| "{}".into());
        b
    }))
}

fn workflow_state_body(
    tx: &Connection,
    session_id: &str,
) -> rusqlite::Result<Option<WorkflowStateBody>> {
    let row = tx
        .prepare_cached(
            "SELECT path, mode, phase, active_agent, version, updated_at, invocations, \
             pending_handoffs FROM workflow_states WHERE session_id = ?1 ORDER BY path LIMIT 1",
        )?
        .query_row([session_id], |r| {
            Ok((
                r.get::<_, String>(0)?,
                WorkflowStateBody {
                    mode: r.get(1)?,
                    phase: r.get(2)?,
                    active_agent: r.get(3)?,
                    state_version: r.get(4)?,
                    updated_at: r.get(5)?,
                    invocations: r.get(6)?,
                    pending_handoffs: r.get(7)?,
                    state: None,
                },
            ))
        })
        .optional()?;
    Ok(row.map(|(path, mut body)| {
        body.state =
            logbook_store::read_regular(Path::new(&path), "workflow state", MAX_OUTPUT_TEXT as u64)
                .ok()
                .flatten()
                .filter(|t| serde_json::from_str::<serde_json::Value>(t).is_ok());
        body
    }))
}

#[cfg(test)]
mod tests {
    use super::catalog_target;

    #[test]
    fn a_catalog_is_named_without_its_password_or_options() {
        for (url, target) in [
            (
                "postgres://agent:s3cr@t@db.example:5433/team?sslmode=require",
                "postgres://db.example:5433/team",
            ),
            ("postgres://db/team", "postgres://db/team"),
            ("postgresql://u@h/t#x", "postgresql://h/t"),
            (
                "postgres://agent@db.example:5433/team",
                "postgres://db.example:5433/team",
            ),
        ] {
            assert_eq!(catalog_target(url), target, "{url}");
        }
        assert_ne!(
            catalog_target("postgres://u@h/team"),
            catalog_target("postgres://u@h/other")
        );
    }
}
