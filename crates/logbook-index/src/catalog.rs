//! The team catalog: the records of many machines in one shared database,
//! behind one trait so the library names no database driver. The
//! PostgreSQL implementation lives in the `logbook-team-pg` crate, which a
//! face installs with [`crate::ops::catalog::install`]; `ops` then decides for
//! each query whether it answers from the local index or the catalog.
//!
//! What crosses the wire is a [`Change`]: one record's current state as the
//! local index holds it (plus the text of a run's outputs), its content
//! hash, and a version that only grows on this machine, so an upsert keyed
//! by (origin, kind, id) never lets an older state overwrite a newer one,
//! and pushing the same change twice is harmless.

use std::time::Duration;

use serde::Serialize;

pub use crate::Kind;
use logbook_model::error::Result;
use logbook_model::query::RunQuery;

/// How many bytes of an output's text the catalog keeps, so people on
/// other machines can read it.
pub const MAX_OUTPUT_TEXT: usize = 1024 * 1024;

/// How many bytes of a run's output text its full-text entry covers.
pub const MAX_SEARCH_TEXT: usize = 256 * 1024;

/// The distinct words of `text` as the local full-text index folds them
/// (Porter stem, case and diacritics ignored), sorted: what a team search
/// looks for, and, for a run's text, what the catalog indexes.
pub fn search_words(text: &str) -> Result<Vec<String>> {
    search_words_of(&[text]).map(|mut w| w.pop().unwrap_or_default())
}

/// [`search_words`] of many texts at once (one scratch insert and one
/// scan instead of one per text).
pub(super) fn search_words_of(texts: &[&str]) -> Result<Vec<Vec<String>>> {
    super::fulltext::words_of(texts).map_err(super::fulltext::scratch_error)
}

/// How many connections a bulk push writes over at once, each with its own
/// share of the records: the server's work on one connection runs on one
/// core, and a bulk push is mostly the server's work.
pub const PUSH_LANES: usize = 2;

/// The share of the records ([`PUSH_LANES`]) record `id` belongs to. Two
/// pushes of one origin take turns per lane, so the two writes of one
/// record never overlap, while the lanes go side by side.
pub fn lane_of(id: &str) -> usize {
    // FNV-1a: stable across processes and versions, unlike std's hasher.
    let hash = id.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    (hash % PUSH_LANES as u64) as usize
}

/// One record's state to upsert (or, with no body, to mark deleted).
#[derive(Debug, Clone)]
pub struct Change {
    /// What it is.
    pub kind: Kind,
    /// Its id: a run's UUID, a work session id, a transcript id, or the
    /// work session id of a workflow state.
    pub id: String,
    /// Grows with every local change of any record (the outbox sequence),
    /// so the catalog keeps the newest state whatever order pushes land in.
    pub version: i64,
    /// A hash of `body`, so an unchanged record is not rewritten.
    pub hash: String,
    /// The record; `None` when it was deleted locally.
    pub body: Option<Body>,
}

/// A record's content, per kind.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Body {
    /// A run: manifest, outputs with their text, lineage edges, tags.
    Run(RunBody),
    /// A work session.
    WorkSession(WorkSessionBody),
    /// A transcript's metadata (with its measured usage), not its messages.
    Transcript(TranscriptBody),
    /// A work session's workflow state.
    WorkflowState(WorkflowStateBody),
}

/// A run as the catalog stores it.
#[derive(Debug, Clone, Serialize)]
pub struct RunBody {
    /// Its folder on the origin machine.
    pub folder: String,
    /// `agent.name`.
    pub agent: String,
    /// `workflow.name`.
    pub workflow: String,
    /// `execution.status`.
    pub status: String,
    /// `execution.user`.
    pub user: Option<String>,
    /// `execution.started_at` as written.
    pub started_at: String,
    /// The same in milliseconds since 1970, for ordering; `None` when it
    /// does not parse.
    pub started_ms: Option<i64>,
    /// `execution.completed_at`.
    pub completed_at: Option<String>,
    /// `agent.title`.
    pub title: String,
    /// The whole manifest, as JSON text.
    pub manifest: String,
    /// Its tags, sorted.
    pub tags: Vec<String>,
    /// The runs it builds on (`related_sessions`).
    pub parents: Vec<String>,
    /// Its registered outputs, in manifest order.
    pub outputs: Vec<OutputBody>,
    /// Its distinct words as the local full-text index folds them (see
    /// [`search_words`]): agent, workflow, manifest text and outputs' text
    /// (that cut at [`MAX_SEARCH_TEXT`]), sorted.
    pub search_words: Vec<String>,
}

/// One registered output, with its text when it is text.
#[derive(Debug, Clone, Serialize)]
pub struct OutputBody {
    /// Path inside the run folder.
    pub file: String,
    /// `type`.
    pub output_type: String,
    /// `description`.
    pub description: String,
    /// `created_at`.
    pub created_at: String,
    /// Its UTF-8 text, cut at [`MAX_OUTPUT_TEXT`]; `None` when the file is
    /// missing or not text.
    pub text: Option<String>,
    /// Whether `text` was cut.
    pub truncated: bool,
}

/// A work session as the catalog stores it.
#[derive(Debug, Clone, Serialize)]
pub struct WorkSessionBody {
    /// `status`.
    pub status: String,
    /// Whether it was closed (archived).
    pub archived: bool,
    /// `last_updated`.
    pub last_updated: String,
    /// The whole record, as JSON text.
    pub record: String,
}

/// A transcript as the catalog stores it.
#[derive(Debug, Clone, Serialize)]
pub struct TranscriptBody {
    /// `main` or `subagent`.
    pub kind: String,
    /// Its file on the origin machine.
    pub file: String,
    /// `metadata.workdir`.
    pub workdir: String,
    /// `metadata.startedAt`.
    pub started_at: String,
    /// `metadata.lastActiveAt`.
    pub last_active_at: String,
    /// `metadata.latestTotalTokens`.
    pub latest_total_tokens: i64,
    /// `metadata.parentSessionId`.
    pub parent_session_id: Option<String>,
    /// The whole `metadata` (measured usage included), as JSON text.
    pub metadata: String,
    /// The listing's title ([`logbook_model::transcript::title`]), made by
    /// the pushing machine, which has the messages.
    pub title: String,
    /// How many messages it holds.
    pub messages: i64,
}

/// A workflow state as the catalog stores it.
#[derive(Debug, Clone, Serialize)]
pub struct WorkflowStateBody {
    /// `currentMode`.
    pub mode: String,
    /// The workflow phase.
    pub phase: Option<String>,
    /// The agent at work.
    pub active_agent: Option<String>,
    /// `version`.
    pub state_version: i64,
    /// `updatedAt`.
    pub updated_at: String,
    /// Invocations recorded, compacted ones included.
    pub invocations: i64,
    /// Handoffs not yet taken up.
    pub pending_handoffs: i64,
    /// The whole state file, as JSON text, when it is at most 1 MiB.
    pub state: Option<String>,
}

/// What one push did on the server.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct PushStats {
    /// Records written (new or changed).
    pub written: u64,
    /// Records the server already held in this state (same hash or newer).
    pub unchanged: u64,
    /// Records marked deleted.
    pub deleted: u64,
}

impl std::ops::AddAssign for PushStats {
    fn add_assign(&mut self, other: PushStats) {
        self.written += other.written;
        self.unchanged += other.unchanged;
        self.deleted += other.deleted;
    }
}

/// A run found in the catalog.
#[derive(Debug, Clone)]
pub struct TeamRun {
    /// The machine that pushed it.
    pub origin: String,
    /// The run id.
    pub id: String,
    /// Its folder on that machine.
    pub folder: String,
    /// Its manifest, as JSON text.
    pub manifest: String,
}

/// An output found in the catalog.
#[derive(Debug, Clone)]
pub struct TeamOutput {
    /// The run that registered it.
    pub run: TeamRun,
    /// Its index in the manifest's outputs.
    pub seq: i64,
    /// Its text, when it is text.
    pub text: Option<String>,
    /// Whether `text` was cut at [`MAX_OUTPUT_TEXT`].
    pub truncated: bool,
}

/// A transcript found in the catalog.
#[derive(Debug, Clone)]
pub struct TeamTranscript {
    /// The machine that pushed it.
    pub origin: String,
    /// The transcript id.
    pub id: String,
    /// Its columns and metadata as pushed.
    pub body: TranscriptBody,
}

/// What the server holds, for `team status`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ServerStatus {
    /// The catalog's schema version.
    pub schema_version: i64,
    /// Origins known to the catalog, with their record counts.
    pub origins: Vec<OriginStatus>,
}

/// One machine in the catalog.
#[derive(Debug, Clone, Default, Serialize)]
pub struct OriginStatus {
    /// Its name.
    pub origin: String,
    /// Runs it pushed (not deleted).
    pub runs: i64,
    /// Work sessions it pushed.
    pub work_sessions: i64,
    /// Transcripts it pushed.
    pub transcripts: i64,
    /// Workflow states it pushed.
    pub workflow_states: i64,
    /// When it last pushed.
    pub last_push: Option<String>,
}

/// Every record of a machine, by kind (see [`Catalog::reconcile`]).
pub type LiveIds = Vec<(Kind, Vec<String>)>;

/// The catalog operations the faces need, answered by one shared database.
/// Every method is blocking (the library is synchronous); implementations
/// bound each call by the deadline they were opened with.
pub trait Catalog: Send + Sync {
    /// The server as people name it (host, port, database; never a password).
    fn server(&self) -> String;
    /// Upserts `changes` pushed by `origin` in one transaction. `bulk`: one
    /// batch of many, which [`Catalog::settle`] follows, so the server may
    /// defer index work to it.
    fn push(&self, origin: &str, changes: &[Change], bulk: bool) -> Result<PushStats>;
    /// Runs matching `query` across every origin, newest first, paged, with
    /// how many match in all.
    fn find_runs(&self, query: &RunQuery) -> Result<(Vec<TeamRun>, u64)>;
    /// The newest run of `agent` whose workflow matches and whose status
    /// is `status` (any when `None`), and in it the last output of
    /// `output_type`.
    fn latest_output(
        &self,
        agent: &str,
        workflow: Option<&str>,
        output_type: Option<&str>,
        status: Option<&str>,
    ) -> Result<Option<TeamOutput>>;
    /// The runs with these ids, from any origin.
    fn runs(&self, ids: &[String]) -> Result<Vec<TeamRun>>;
    /// The distinct ids of live runs, of any origin, that start with
    /// `prefix` (lowercase hex and hyphens), at most `limit`, sorted: how a
    /// team query resolves a run id prefix.
    fn run_ids_with_prefix(&self, prefix: &str, limit: usize) -> Result<Vec<String>>;
    /// The ids of the runs that name any of `ids` as a parent.
    fn children(&self, ids: &[String]) -> Result<Vec<(String, String)>>;
    /// One output of one run, with its stored text.
    fn output(&self, run_id: &str, file: &str) -> Result<Option<TeamOutput>>;
    /// The whole stored text of each output of these runs (origin, id),
    /// each run's in manifest order, as `(origin, id, text)`: what a team
    /// snippet is cut from when the words are not in the manifest.
    fn output_texts(&self, runs: &[(String, String)]) -> Result<Vec<(String, String, String)>>;
    /// Every transcript, newest `lastActiveAt` first.
    fn transcripts(&self) -> Result<Vec<TeamTranscript>>;
    /// What the server holds.
    fn status(&self) -> Result<ServerStatus>;
    /// Marks deleted every record `origin` has on the server that `live`
    /// does not list, and returns how many. `live` is called once the
    /// server holds the origin's push lock, so a record pushed by another
    /// process of the machine is either in the list or pushed after the
    /// marks. For an index that lost track of deletions (rebuilt while run
    /// folders went away): its push after queueing every record again.
    fn reconcile(&self, origin: &str, live: &dyn Fn() -> Result<LiveIds>) -> Result<u64>;
    /// Brings the server's planner statistics and visibility up to date
    /// after a bulk push, so the queries that follow it read the indexes
    /// alone instead of waiting for the server's own maintenance.
    fn settle(&self) -> Result<()>;
}

/// Opens a [`Catalog`] from a URL: what a face installs so `ops` can reach
/// the team database without the library depending on its driver.
pub trait Connector: Send + Sync {
    /// Connects to `url` within `deadline` and checks the catalog's schema
    /// (an error says to run `logbook team init` when it is missing or old).
    fn connect(&self, url: &str, deadline: Duration) -> Result<Box<dyn Catalog>>;
    /// Creates or migrates the catalog's tables; returns the schema version.
    fn init(&self, url: &str, deadline: Duration) -> Result<i64>;
}
