//! The index's tables. [`SCHEMA_VERSION`] is stored in `PRAGMA
//! user_version`; an older index is brought to it in place (see `migrate`),
//! one of an unknown version is dropped and rebuilt, never misread.

/// Bumped whenever the tables change, with a step in `migrate::STEPS` that
/// brings the previous version's index to it in place.
// 13: `transcripts.models` and `transcripts.usage` (what a listing shows
// and filters on without reading the file), and per-message full text
// and error rows (`MESSAGES_SCHEMA`: find in a transcript, its errors).
// 14: `runs.archived` and its partial index `runs_archived` (the archive:
// archived runs stay rows, left out of `find` unless asked for).
// 14: `schema_history` (`HISTORY_SCHEMA`).
// 15: `runs.manifest` may be a manifest stub (`record::Reading::RowsOnly`).
// 16: `runs_fts` rowids are [`text_key`]s, in find's order.
pub const SCHEMA_VERSION: i64 = 16;

/// Bits of a run's row id in its [`text_key`]; the start second takes the
/// other 33 (up to the year 2242), so a key is never negative.
const TEXT_KEY_RID_BITS: u32 = 30;

/// The largest start second a [`text_key`] holds apart; later ones share it.
const TEXT_KEY_MAX_SECOND: i64 = (1 << (63 - TEXT_KEY_RID_BITS)) - 1;

/// A run's rowid in `runs_fts`: its start second (UTC, 0 for none or
/// before 1970) above its row id. FTS5 lists a word's matches by rowid,
/// so in this order a text query reads its matches newest first, as find
/// lists them, and a page of a word in every run stops after the page
/// instead of reading every match (see `text_page`). Within one second the
/// order is by row id, not by find's tie rule: a page reads its last
/// second whole and sorts it. `None` for a row id past 2^30 (a billion
/// runs written since the last rebuild, which renumbers them).
pub(super) fn text_key(rid: i64, started_ns: Option<i64>) -> Option<i64> {
    if !(0..1 << TEXT_KEY_RID_BITS).contains(&rid) {
        return None;
    }
    Some((text_second(started_ns) << TEXT_KEY_RID_BITS) | rid)
}

/// The start second a [`text_key`] is ordered by.
pub(super) fn text_second(started_ns: Option<i64>) -> i64 {
    started_ns
        .unwrap_or(0)
        .div_euclid(1_000_000_000)
        .clamp(0, TEXT_KEY_MAX_SECOND)
}

/// The start second of a [`text_key`].
pub(super) fn key_second(key: i64) -> i64 {
    key >> TEXT_KEY_RID_BITS
}

/// The run row id of a [`text_key`].
pub(super) fn key_rid(key: i64) -> i64 {
    key & ((1 << TEXT_KEY_RID_BITS) - 1)
}

/// [`text_key`] in SQL, of the `runs` row aliased `r`.
#[cfg(feature = "testing")]
pub(super) fn text_key_sql(r: &str) -> String {
    // SQLite's division truncates toward zero, `text_second` rounds down:
    // they differ only below 0, which both clamp to 0.
    format!(
        "((max(0, min(coalesce({r}.started_ns, 0) / 1000000000, {TEXT_KEY_MAX_SECOND})) \
         << {TEXT_KEY_RID_BITS}) | {r}.rid)"
    )
}

/// [`key_rid`] in SQL, of the key `key` (an SQL expression).
pub(super) fn key_rid_sql(key: &str) -> String {
    format!("({key} & {})", (1i64 << TEXT_KEY_RID_BITS) - 1)
}

/// The full-text tokenizer: words folded to their Porter stem ("Laptops"
/// and "laptop", "running" and "runs" are one word), case and diacritics
/// ignored ("Café" is "cafe"). Snippets highlight with the same one.
pub(super) const TOKENIZE: &str = "porter unicode61 remove_diacritics 2";

/// The tables. `files` holds the stamp sync compares per followed file;
/// for a run's manifest also `out_stamp`, the stamp of its registered
/// output files (see `outputs::outputs_stamp`), so text written into an
/// output after registration is noticed, and `outs`, those files' names
/// (see `outputs::encode_outs`). A run folder without a manifest is a
/// `runs` row with status `unknown` and no manifest text, and a `files`
/// row with `record::ABSENT_STAMP`. `live` marks the run manifests a
/// listing checks first (see `apply::Live`). `files` is clustered by path (WITHOUT
/// ROWID) and holds all a sync compares, so the scan of every run reads
/// one table in its own order: no lookup of another table per run (with
/// a rowid table and a join to `runs` and `outputs`, those lookups were
/// most of a sync that found nothing changed).
pub(super) fn schema() -> String {
    format!("{SCHEMA}{MESSAGES_SCHEMA}{HISTORY_SCHEMA}")
        .replace("{RUNS_REPO}", &repo_columns(RUNS_REPO))
        .replace("{WS_REPO}", &repo_columns(WS_REPO))
        .replace("{TR_REPO}", &repo_columns(TR_REPO))
        .replace("{RUNS_FTS}", RUNS_FTS)
        .replace("{TOKENIZE}", TOKENIZE)
}

/// Where a table's JSON column holds a record's repository identity: the
/// column (an SQL expression) and the JSON path in it (see
/// [`repo_column_defs`]).
pub(super) type RepoAt = (&'static str, &'static str);

/// A run's repository: in its manifest's metadata (none for a folder
/// without a manifest, whose manifest text is empty).
pub(super) const RUNS_REPO: RepoAt = (
    "CASE WHEN manifest <> '' THEN manifest END",
    "$.metadata.repository",
);

/// A work session's repository, in its record.
pub(super) const WS_REPO: RepoAt = ("record", "$.repository");

/// A transcript's repository: the `repository` column itself.
pub(super) const TR_REPO: RepoAt = ("repository", "$");

fn repo_columns(at: RepoAt) -> String {
    repo_column_defs(at).join(",\n  ")
}

/// The `repo_key` and `repo_root` columns of a table whose JSON column
/// `json` holds a record's repository identity at `at` (see
/// [`logbook_model::repo::Repository::key`]): computed by SQLite from the
/// stored record, so no writer can forget them, and `NULL` for a record
/// without an identity. A query matches on them with
/// [`logbook_model::repo::key_matches`]'s rule (see `filter::repo_term`).
/// Each one a column definition of its own, so a migration adds them one
/// `ALTER TABLE` at a time.
pub(super) fn repo_column_defs((json, at): RepoAt) -> [String; 2] {
    let get = |k: &str| {
        format!(
            "nullif(CASE WHEN json_valid({json}) THEN json_extract({json}, '{at}.{k}') END, '')"
        )
    };
    let root = format!("coalesce({}, {})", get("root_commit"), get("rootCommit"));
    [
        format!(
            "repo_key TEXT GENERATED ALWAYS AS (coalesce({origin}, 'root:' || {root}, 'dir:' || {folder})) VIRTUAL",
            origin = get("origin"),
            folder = get("folder"),
        ),
        format!("repo_root TEXT GENERATED ALWAYS AS ({root}) VIRTUAL"),
    ]
}

/// The runs' full-text table alone: a rebuild fills it in a file of its
/// own, on a thread of its own, and copies [`RUNS_FTS_TABLES`] over.
pub(super) fn runs_fts() -> String {
    RUNS_FTS.replace("{TOKENIZE}", TOKENIZE)
}

/// The plain tables in which FTS5 keeps `runs_fts`. Two `runs_fts` tables
/// made by the same statement keep the same rows in them, so copying
/// these rows copies the full-text index.
pub(super) const RUNS_FTS_TABLES: &[&str] = &[
    "runs_fts_data",
    "runs_fts_idx",
    "runs_fts_docsize",
    "runs_fts_config",
];

const RUNS_FTS: &str = "CREATE VIRTUAL TABLE runs_fts USING fts5(
  agent, workflow, body, content = '', contentless_delete = 1,
  tokenize = '{TOKENIZE}'
);";

const SCHEMA: &str = "
CREATE TABLE runs(
  rid INTEGER PRIMARY KEY,
  folder TEXT NOT NULL,
  id TEXT NOT NULL,
  agent TEXT NOT NULL,
  workflow TEXT NOT NULL,
  status TEXT NOT NULL,
  user TEXT,
  started_at TEXT NOT NULL,
  started_ns INTEGER,
  completed_at TEXT,
  title TEXT NOT NULL,
  manifest TEXT NOT NULL,
  {RUNS_REPO},
  -- schema 14, the archive: 1 when the folder is in `archive_folder`.
  archived INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE outputs(
  rid INTEGER NOT NULL,
  seq INTEGER NOT NULL,
  file TEXT NOT NULL,
  type TEXT NOT NULL,
  description TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY(rid, seq)
) WITHOUT ROWID;
CREATE TABLE edges(
  child TEXT NOT NULL,
  parent TEXT NOT NULL,
  rid INTEGER NOT NULL,
  PRIMARY KEY(rid, parent)
) WITHOUT ROWID;
CREATE TABLE tags(
  rid INTEGER NOT NULL,
  tag TEXT NOT NULL,
  PRIMARY KEY(rid, tag)
) WITHOUT ROWID;
-- Contentless: the index of the words only, not a second copy of every
-- manifest and output text (that copy was most of the database). Rows are
-- deleted by rowid (contentless_delete); snippets are made from the page's
-- manifests instead (see `snippet_of`).
{RUNS_FTS}
CREATE TABLE work_sessions(
  path TEXT PRIMARY KEY,
  id TEXT NOT NULL,
  status TEXT NOT NULL,
  archived INTEGER NOT NULL,
  last_updated TEXT NOT NULL,
  record TEXT NOT NULL,
  {WS_REPO}
);
CREATE TABLE transcripts(
  rid INTEGER PRIMARY KEY,
  path TEXT NOT NULL UNIQUE,
  id TEXT NOT NULL,
  kind TEXT NOT NULL,
  workdir TEXT NOT NULL,
  started_at TEXT NOT NULL,
  last_active_at TEXT NOT NULL,
  last_active_ms INTEGER,
  tokens INTEGER NOT NULL,
  parent TEXT,
  -- `metadata.repository` as JSON (see `model::repo`).
  repository TEXT,
  -- What a listing shows without reading the file: the title
  -- (`model::transcript::title`), the agent or `logbook`, and how many
  -- messages.
  title TEXT NOT NULL,
  source TEXT NOT NULL,
  messages INTEGER NOT NULL,
  -- i32-usage (schema 13): the models its measured usage names
  -- (tab-separated, sorted) and that usage's totals as JSON
  -- (`agent_log::Usage`; NULL when not measured), so that a listing
  -- shows and filters by model without reading the file.
  models TEXT NOT NULL DEFAULT '',
  usage TEXT,
  -- end i32-usage
  {TR_REPO}
);
-- What transcripts' messages say (capped per transcript, see
-- `SaidText`), contentless as `runs_fts`; rowid = transcripts.rid, which an
-- update in place keeps.
CREATE VIRTUAL TABLE transcripts_fts USING fts5(
  said, content = '', contentless_delete = 1, tokenize = '{TOKENIZE}'
);
CREATE TABLE workflow_states(
  path TEXT PRIMARY KEY,
  session_id TEXT NOT NULL,
  mode TEXT NOT NULL,
  phase TEXT,
  active_agent TEXT,
  version INTEGER NOT NULL,
  updated_at TEXT NOT NULL,
  invocations INTEGER NOT NULL,
  pending_handoffs INTEGER NOT NULL
);
CREATE TABLE files(
  path TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  size INTEGER NOT NULL,
  mtime_ns INTEGER NOT NULL,
  out_stamp INTEGER NOT NULL DEFAULT 0,
  outs BLOB,
  live INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
CREATE TABLE corrupt(
  path TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  reason TEXT NOT NULL
);
-- Without a rowid: a mark and its clearing touch one b-tree page each,
-- not a table page and its key's index page (every write does both).
CREATE TABLE pending(
  path TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  lock TEXT NOT NULL,
  since TEXT NOT NULL
) WITHOUT ROWID;
-- Records changed since the team catalog last took them (see `outbox`):
-- filled by triggers that exist only while a team catalog is configured.
CREATE TABLE team_outbox(
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  kind TEXT NOT NULL,
  id TEXT NOT NULL,
  UNIQUE(kind, id)
);
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
";

// Schema 13, find-in-transcript: what each message says and where the
// errors are. Kept in its own block so that it reads (and merges) apart
// from the other tables.

/// The bits of a message row's rowid that hold the message's index; the
/// bits above hold its transcript's `rid` (see [`message_rowid`]).
pub(super) const MESSAGE_BITS: u32 = 24;

/// The rowid of message `at` of transcript `rid` in
/// `transcript_messages_fts`: a transcript's messages are one rowid range,
/// which FTS5 reads alone when a query is limited to it.
pub(super) fn message_rowid(rid: i64, at: usize) -> i64 {
    (rid << MESSAGE_BITS) | at as i64
}

/// `transcript_messages_fts`: one contentless document per message that
/// says anything ([`logbook_model::transcript::find`], capped per message);
/// `transcript_errors`: the messages holding a failed tool result.
const MESSAGES_SCHEMA: &str = "
CREATE VIRTUAL TABLE transcript_messages_fts USING fts5(
  said, content = '', contentless_delete = 1, tokenize = '{TOKENIZE}'
);
CREATE TABLE transcript_errors(
  rid INTEGER NOT NULL,
  message INTEGER NOT NULL,
  PRIMARY KEY(rid, message)
) WITHOUT ROWID;
";

/// Schema 13's message tables alone, for the migration that adds them.
pub(super) fn messages_schema() -> String {
    MESSAGES_SCHEMA.replace("{TOKENIZE}", TOKENIZE)
}

/// Schema 14: every version the index went through, and how (`built` by a
/// rebuild, `found` for the version an upgrade started from, else the
/// name of a migration step; see `migrate`), with the Logbook that did it.
/// `IF NOT EXISTS`: the migration runner creates it before the first step
/// it records, whatever version it starts from.
pub(super) const HISTORY_SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS schema_history(
  version INTEGER NOT NULL,
  step TEXT NOT NULL,
  applied_at TEXT NOT NULL,
  logbook TEXT NOT NULL
);
";

/// The secondary indexes, kept apart from [`SCHEMA`] so a rebuild can drop
/// them, bulk-insert, and create them once over sorted data (faster than
/// maintaining them row by row).
///
/// The filter indexes list `started_ns DESC, id` right after their key so a
/// `find` walks them in exactly its output order and stops at the page's
/// end, and they carry the other filter columns so rows that do not match
/// are rejected from the index alone, without touching the table.
pub(super) const INDEXES: &[(&str, &str)] = &[
    (
        "runs_folder",
        "CREATE UNIQUE INDEX runs_folder ON runs(folder)",
    ),
    ("runs_id", "CREATE INDEX runs_id ON runs(id)"),
    (
        "runs_started",
        "CREATE INDEX runs_started ON runs(started_ns DESC, id, agent, workflow, status)",
    ),
    (
        "runs_agent",
        "CREATE INDEX runs_agent ON runs(agent, started_ns DESC, id, workflow, status)",
    ),
    (
        "runs_workflow",
        "CREATE INDEX runs_workflow ON runs(workflow, started_ns DESC, id, agent, status)",
    ),
    (
        "runs_status",
        "CREATE INDEX runs_status ON runs(status, started_ns DESC, id, agent, workflow)",
    ),
    // For counts only (`find`'s "N more match", MCP's `total`): an agent's
    // matches by status and workflow, from the key alone, where the
    // agent's index reads all of that agent's runs to count a few. Its key
    // is an expression that only a count's SQL is written with, so the
    // planner never takes it for a page, which it would then have to sort.
    (
        "runs_tally",
        "CREATE INDEX runs_tally ON runs((agent || ''), status, workflow)",
    ),
    (
        "outputs_type",
        "CREATE INDEX outputs_type ON outputs(type, rid)",
    ),
    ("edges_parent", "CREATE INDEX edges_parent ON edges(parent)"),
    ("edges_child", "CREATE INDEX edges_child ON edges(child)"),
    ("tags_tag", "CREATE INDEX tags_tag ON tags(tag)"),
    // The archived runs (schema 14): few beside the live set, read from
    // this partial index alone when `find` leaves them out or lists only
    // them (see `filter::archived_term`).
    ("runs_archived", crate::upkeep::archive::ARCHIVED_INDEX),
    // The run manifests checked before a listing (`apply::Live`): few,
    // read from this partial index alone, in one range.
    (
        "files_live",
        "CREATE INDEX files_live ON files(live, path, size, mtime_ns) WHERE live > 0",
    ),
];
