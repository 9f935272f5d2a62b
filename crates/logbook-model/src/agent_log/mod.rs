//! Agent logs: the JSON Lines files coding agents write as they work, read
//! one line at a time into seed 003 messages and an exact token count.
//!
//! - [`claude_code`] reads `~/.claude/projects/<cwd>/<session>.jsonl` and its
//!   `<session>/subagents/agent-<id>.jsonl` files;
//! - [`codex`] reads `~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl`.
//!
//! A [`LogParser`] is fed one line at a time ([`LogParser::line`]) and never
//! holds more than one message and one usage entry per streamed message, so
//! a log of any size is read in bounded memory. It returns the messages a
//! line completes, and at the end ([`LogParser::finish`]) a [`LogSummary`]:
//! the session's id, workdir, first and last timestamps, lines that did not
//! parse (by number, never fatal) and its [`UsageBook`].
//!
//! Counting rules (where other tools go wrong):
//! - Claude Code writes one line per streamed content block; the lines share
//!   `message.id` and `requestId`, and `output_tokens` grows across them. Per
//!   (`message.id`, `requestId`) only the entry with the largest
//!   input + output + cache-creation + cache-read total counts; a line
//!   lacking either id counts alone (once, if the same `uuid` is written
//!   twice). Only `assistant` lines count, so the
//!   copies of a subagent's messages that `progress` lines embed do not.
//! - Codex repeats `token_count` events unchanged. Usage is the cumulative
//!   `total_token_usage`; an event counts only for what it adds to the
//!   previous total, so a repeat adds nothing.
//!
//! ```
//! use logbook_model::agent_log::{Format, LogParser};
//! let mut p = LogParser::new(Format::Codex);
//! let line = r#"{"timestamp":"2026-01-18T10:00:00.000Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":10,"cached_input_tokens":0,"output_tokens":5,"reasoning_output_tokens":0,"total_tokens":15}}}}"#;
//! p.line(1, line);
//! p.line(2, line); // a repeat: counted once
//! let (_, summary) = p.finish();
//! assert_eq!(summary.usage.total().total_tokens, 15);
//! ```

pub mod agents;
pub mod claude_code;
pub mod codex;
mod pairing;
mod persisted;
pub use persisted::{PERSISTED_AT_MOST, PERSISTED_CUT_KEY, PERSISTED_FROM_KEY, persisted_name};
mod usage;

mod bad_line;
mod members;
use members::Members;
mod charge;
pub use bad_line::{BAD_LINE_KEPT, BadLine, CutLine, json_prefix};
pub use charge::{COUNTED_BEFORE_KEY, COUNTED_KEY, charged, charged_within, usage_value};
pub use pairing::RESULT_COPIED_KEY;
pub use usage::{Call, Usage, UsageBook, day_of};

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::transcript::{Message, Metadata, PROMPT_WITHIN};

/// Bumped when the parsers derive something different from the same lines,
/// so that a re-import rewrites transcripts made by an older version (and
/// ignores their import checkpoints). 4: a bad line longer than 4 KiB of
/// JSON is stored cut, with its length ([`CutLine`]). 5: seed 003's shape
/// as well: a tool's result also in its `tool` block (`pairing`), and
/// per-message usage with `prompt_tokens`, `completion_tokens`. 6: a
/// Codex fork's or spawned subagent's copied prefix is neither its
/// messages nor its usage; `local_shell_call` and `web_search_call` are
/// tool calls; Codex's injected instructions are not a title; Claude
/// Code's persisted tool outputs are read back.
pub const PARSER_VERSION: u64 = 6;

/// The agent that wrote a log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// Anthropic's Claude Code.
    ClaudeCode,
    /// OpenAI's Codex CLI.
    Codex,
}

impl Format {
    /// `claude-code` or `codex`, as `--format` and the stored files name it.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::ClaudeCode => "claude-code",
            Format::Codex => "codex",
        }
    }

    /// Which agent wrote `line`, when it parses and says so: Codex lines are
    /// `{timestamp, type, payload}`, Claude Code lines carry `sessionId` or
    /// one of its line types.
    pub fn detect(line: &str) -> Option<Format> {
        let Ok(Value::Object(o)) = serde_json::from_str::<Value>(line) else {
            return None;
        };
        let ty = o.get("type").and_then(Value::as_str).unwrap_or("");
        Format::decide(ty, o.contains_key("payload"), o.contains_key("sessionId"))
    }

    /// Which agent wrote the line that `start` begins, when the line is too
    /// long to read whole (a pasted file or image can make one line hundreds
    /// of MiB): its top-level members are read up to where `start` ends,
    /// nested values skipped without being parsed, and the same rule as
    /// [`Format::detect`] applied to the `type`, `payload` and `sessionId`
    /// seen by then. Agents write those before the large `message` or
    /// `payload` body.
    pub fn detect_start(start: &str) -> Option<Format> {
        let mut ty = None;
        let (mut payload, mut session) = (false, false);
        let mut members = Members::new(start)?;
        while let Some((key, value)) = members.next_member() {
            match key.as_str() {
                "type" => ty = value,
                "payload" => payload = true,
                "sessionId" => session = true,
                _ => {}
            }
        }
        Format::decide(ty.as_deref().unwrap_or(""), payload, session)
    }

    fn decide(ty: &str, payload: bool, session: bool) -> Option<Format> {
        agents::wrote(&agents::FirstLine {
            ty,
            payload,
            session,
        })
    }
}

/// What a whole log says about its session, besides the messages.
/// Serializable so that an import checkpoint can resume where it stopped.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct LogSummary {
    /// The session id the lines carry (`sessionId`, Codex `session_meta.id`).
    pub session_id: Option<String>,
    /// Claude Code subagent files: the subagent's `agentId`.
    pub agent_id: Option<String>,
    /// The agent's working directory (`cwd`).
    pub cwd: Option<String>,
    /// Claude Code `gitBranch` / Codex `git.branch`, as last seen.
    pub git_branch: Option<String>,
    /// The agent's version (`version` / Codex `cli_version`).
    pub agent_version: Option<String>,
    /// The first and last timestamps of the log.
    pub first_timestamp: Option<String>,
    /// See `first_timestamp`.
    pub last_timestamp: Option<String>,
    /// How many lines were read (blank ones included).
    pub lines: u64,
    /// Lines that did not parse.
    pub bad_lines: Vec<BadLine>,
    /// Lines of a type this parser does not know, by type (kept, not used).
    pub unknown_types: BTreeMap<String, u64>,
    /// The measured usage.
    pub usage: UsageBook,
    /// The context size at the last call of the session's own agent
    /// (inline sidechain calls aside).
    pub latest_total_tokens: u64,
    /// The largest context size of any such call: a work session's `peak`.
    pub peak_total_tokens: u64,
    /// Whether every message line was a sidechain line (a subagent log).
    pub all_sidechain: bool,
    /// How many messages the log became.
    pub messages: u64,
    /// The agent's own title for the session, the first it wrote (Claude
    /// Code's `summary` lines; Codex logs have none).
    #[serde(default)]
    pub title: Option<String>,
    /// The first prompt a person typed
    /// ([`Message::prompt_text`](crate::transcript::Message::prompt_text)).
    #[serde(default)]
    pub first_prompt: Option<String>,
    /// A subagent the agent spawned itself: the thread that spawned it
    /// (Codex `source.subagent.thread_spawn.parent_thread_id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
    /// A fork: the session it was forked from (Codex `forked_from_id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fork_of: Option<String>,
    /// Lines of a copied prefix (a fork's or spawned subagent's copy of
    /// its parent's items): kept as raw lines, neither messages nor usage.
    #[serde(default)]
    pub copied_lines: u64,
    /// A page of a paginated Codex thread (a continuation file): the
    /// rollout its `history_base` goes on from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continues: Option<String>,
}

impl LogSummary {
    /// Takes the first prompt from `new`, the messages that follow the
    /// `messages` counted so far, by the rule
    /// [`Transcript::first_prompt`](crate::transcript::Transcript::first_prompt)
    /// applies to the stored transcript.
    fn see_prompts(&mut self, new: &[Message]) {
        if self.first_prompt.is_some() {
            return;
        }
        let room =
            PROMPT_WITHIN.saturating_sub(usize::try_from(self.messages).unwrap_or(usize::MAX));
        self.first_prompt = new.iter().take(room).find_map(Message::prompt_text);
    }

    fn saw_timestamp(&mut self, ts: Option<&str>) {
        if let Some(ts) = ts.filter(|t| !t.is_empty()) {
            if self.first_timestamp.is_none() {
                self.first_timestamp = Some(ts.to_string());
            }
            self.last_timestamp = Some(ts.to_string());
        }
    }

    fn bad(&mut self, line: u64, reason: impl Into<String>) {
        self.bad_lines.push(BadLine {
            line,
            reason: reason.into(),
        });
    }
}

/// Where an imported transcript came from, stored in its
/// `metadata.source`: enough for a re-import to tell an unchanged source
/// (same path, size and fingerprint: nothing is written) from one that grew.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Source {
    /// The agent that wrote it.
    pub format: Format,
    /// The log file, absolute.
    pub path: String,
    /// How many of its bytes were imported (a live log may be longer now).
    pub bytes: u64,
    /// How many lines those bytes hold.
    pub lines: u64,
    /// How many messages they became.
    #[serde(default)]
    pub messages: u64,
    /// [`Fingerprint`] of those bytes.
    pub fingerprint: String,
    /// [`PARSER_VERSION`] that derived the transcript.
    pub parser: u64,
    /// The session id the lines carry (a subagent's is its parent's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Claude Code subagents: the `agentId`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// The git branch the agent was on, as last seen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_branch: Option<String>,
    /// The agent's own version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_version: Option<String>,
    /// The agent's own title for the session, if its log has one: a
    /// listing's title when no name is given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Lines that did not parse.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bad_lines: Vec<BadLine>,
    /// Line types the parser does not know (kept in `rawLines`), by count.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub unknown_types: BTreeMap<String, u64>,
    /// A fork: the session it was forked from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fork_of: Option<String>,
    /// Lines of the parent's copied at the start (a fork's or spawned
    /// subagent's), kept as raw lines only.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub copied_lines: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Source {
    /// True when `self` and `other` were derived from the same bytes of the
    /// same file by the same parser: a re-import has nothing to do.
    pub fn same_as(&self, other: &Source) -> bool {
        self.format == other.format
            && self.path == other.path
            && self.bytes == other.bytes
            && self.fingerprint == other.fingerprint
            && self.parser == other.parser
    }
}

/// Who a log's session is in Logbook: its transcript id and, for a
/// subagent, the main session's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The transcript id (a UUID).
    pub id: String,
    /// The main session a subagent belongs to.
    pub parent: Option<String>,
    /// The session a fork was forked from (a main session of its own).
    pub fork_of: Option<String>,
}

/// The transcript id of a log at `path` with `summary`, or `None` when
/// neither the file name nor the lines name a session.
///
/// - Claude Code main session: the file is `<session uuid>.jsonl`.
/// - Claude Code subagent (`agentId` on its lines, or a file
///   `subagents/agent-<id>.jsonl`): its `agentId` is not a UUID, so the id
///   is [`name_uuid`] of the session and agent ids, the same on every
///   import; the parent is the `sessionId` its lines carry.
/// - Codex: `session_meta`'s id, else the UUID that ends the file name.
pub fn identity(format: Format, path: &std::path::Path, summary: &LogSummary) -> Option<Identity> {
    agents::of(format).identity(path, summary)
}

/// Whether `s` is a session UUID a transcript can be named by.
pub(super) fn is_session_uuid(s: &str) -> bool {
    crate::ids::TranscriptId::parse(s).is_ok() && !crate::ids::is_legacy_transcript_id(s)
}

/// The transcript id of the Claude Code subagent `agent_id` (its
/// `agentId`) of session `session` (the `sessionId` its lines carry): what
/// an import names its transcript, and what a Task call's card links to.
pub fn subagent_id(session: &str, agent_id: &str) -> String {
    name_uuid(&format!("claude-code:{session}:{agent_id}"))
}

/// How Claude Code's `agentId` begins for the subagent that compacts a
/// session's context (`subagents/agent-acompact-*.jsonl`).
pub const COMPACTION_AGENT_PREFIX: &str = "acompact";

/// Whether a Claude Code subagent was started by a Task call of its
/// session, whose span it then runs under: all but the compaction agent,
/// which Claude Code starts itself, with no call naming it.
pub fn started_by_task(source: &Source) -> bool {
    let from_name = std::path::Path::new(&source.path)
        .file_stem()
        .map(|s| s.to_string_lossy().trim_start_matches("agent-").to_string());
    let agent = source.agent_id.clone().or(from_name).unwrap_or_default();
    !agent.starts_with(COMPACTION_AGENT_PREFIX)
}

/// The key a Claude Code Task call's `tool_result` block holds the
/// subagent's `agentId` under (from the line's `toolUseResult`).
pub const AGENT_ID_KEY: &str = "agentId";

/// The flag a `compress` block carries when it holds the summary that
/// follows a compaction (Claude Code's `isCompactSummary` line), not the
/// boundary itself.
pub const SUMMARY_FLAG: &str = "compactSummary";

/// The seed 003 metadata of an imported log: `workdir` from `cwd`,
/// `startedAt` and `lastActiveAt` from the first and last timestamps, the
/// context size at the last call, the parent, and under `source` and
/// `usage` where it came from and what it measured.
pub fn metadata(summary: &LogSummary, who: &Identity, source: &Source) -> Metadata {
    let mut extra = Map::new();
    extra.insert(
        "source".into(),
        serde_json::to_value(source).unwrap_or(Value::Null),
    );
    extra.insert(
        PEAK_KEY.into(),
        Value::from(summary.peak_total_tokens.max(summary.latest_total_tokens)),
    );
    extra.insert(
        "usage".into(),
        serde_json::to_value(&summary.usage).unwrap_or(Value::Null),
    );
    if let Some(parent) = &who.fork_of {
        extra.insert(FORK_OF_KEY.into(), Value::String(parent.clone()));
    }
    Metadata {
        workdir: summary.cwd.clone().unwrap_or_default(),
        started_at: summary.first_timestamp.clone().unwrap_or_default(),
        last_active_at: summary.last_timestamp.clone().unwrap_or_default(),
        latest_total_tokens: summary.latest_total_tokens,
        parent_session_id: who.parent.clone(),
        extra,
    }
}

/// The metadata key of the session a fork was forked from: a main
/// session of its own, listed with `"forkOf"`.
pub const FORK_OF_KEY: &str = "forkOf";

/// The session a transcript was forked from, if it is a fork.
pub fn fork_of(metadata: &Metadata) -> Option<&str> {
    metadata.extra.get(FORK_OF_KEY)?.as_str()
}

/// The metadata key of the largest context size an imported session
/// reached (next to seed 003's `latestTotalTokens`).
pub const PEAK_KEY: &str = "peakTotalTokens";

/// The [`Source`] an imported transcript's metadata names, if it has one.
pub fn source_of(metadata: &Metadata) -> Option<Source> {
    serde_json::from_value(metadata.extra.get("source")?.clone()).ok()
}

/// The measured usage an imported transcript's metadata holds, if any.
pub fn usage_of(metadata: &Metadata) -> Option<UsageBook> {
    serde_json::from_value(metadata.extra.get("usage")?.clone()).ok()
}

/// Reads one agent log, line by line. Its state serializes, so that an
/// incremental import resumes it from a checkpoint instead of reading the
/// log again from its start.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LogParser {
    /// Claude Code.
    ClaudeCode(Box<claude_code::Parser>),
    /// Codex.
    Codex(Box<codex::Parser>),
}

impl LogParser {
    /// A parser for a log in `format`.
    pub fn new(format: Format) -> LogParser {
        match format {
            Format::ClaudeCode => LogParser::ClaudeCode(Box::default()),
            Format::Codex => LogParser::Codex(Box::default()),
        }
    }

    /// Reads line `no` (1-based, without its newline) and returns the
    /// messages it completes. A line that does not parse is recorded in
    /// the summary, never an error.
    pub fn line(&mut self, no: u64, raw: &str) -> Vec<Message> {
        self.read(no, Line::Text(raw))
    }

    /// [`LogParser::line`] for a line given as text or already parsed.
    pub fn read(&mut self, no: u64, line: Line<'_>) -> Vec<Message> {
        let (made, pairing) = match self {
            LogParser::ClaudeCode(p) => (p.line(no, line), &mut p.pairing),
            LogParser::Codex(p) => (p.line(no, line), &mut p.pairing),
        };
        let out = pairing.pass(made);
        let summary = self.summary_mut();
        summary.lines = summary.lines.max(no);
        summary.see_prompts(&out);
        summary.messages += out.len() as u64;
        out
    }

    /// The format this parser reads.
    pub fn format(&self) -> Format {
        match self {
            LogParser::ClaudeCode(_) => Format::ClaudeCode,
            LogParser::Codex(_) => Format::Codex,
        }
    }

    /// Ends the log: the messages still being assembled or waiting for a
    /// tool's result, and the summary with the usage counted.
    pub fn finish(self) -> (Vec<Message>, LogSummary) {
        let (last, pairing, mut summary) = match self {
            LogParser::ClaudeCode(mut p) => {
                let pairing = std::mem::take(&mut p.pairing);
                let (last, summary) = (*p).finish();
                (last, pairing, summary)
            }
            LogParser::Codex(mut p) => {
                let pairing = std::mem::take(&mut p.pairing);
                let (last, summary) = (*p).finish();
                (last, pairing, summary)
            }
        };
        let mut pairing = pairing;
        let mut out = pairing.pass(last.into_iter().collect());
        out.extend(pairing.finish());
        summary.see_prompts(&out);
        summary.messages += out.len() as u64;
        (out, summary)
    }

    fn summary_mut(&mut self) -> &mut LogSummary {
        match self {
            LogParser::ClaudeCode(p) => &mut p.summary,
            LogParser::Codex(p) => &mut p.summary,
        }
    }
}

/// One line of a log as a parser takes it.
#[derive(Debug)]
pub enum Line<'a> {
    /// Its text, without its newline.
    Text(&'a str),
    /// Its JSON, parsed straight from the file: a line too long to hold as
    /// text and as values at once (a pasted file can make one hundreds of
    /// MiB) is never held as text.
    Parsed(serde_json::Result<Value>),
}

/// Parses a line as a JSON object (`None` for a blank line), or says why it
/// is not one.
fn object(line: Line<'_>) -> Result<Option<Map<String, Value>>, String> {
    let parsed = match line {
        Line::Text(raw) if raw.trim().is_empty() => return Ok(None),
        Line::Text(raw) => serde_json::from_str::<Value>(raw),
        Line::Parsed(parsed) => parsed,
    };
    match parsed {
        Ok(Value::Object(o)) => Ok(Some(o)),
        Ok(_) => Err("not a JSON object".to_string()),
        Err(e) if e.is_eof() => Err(format!("truncated line ({})", json_error(&e))),
        Err(e) => Err(format!("not JSON ({})", json_error(&e))),
    }
}

/// serde_json's message without its "at line 1 column N" (the line is
/// given apart, as file:line), with the column kept.
fn json_error(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let msg = text
        .rsplit_once(" at line ")
        .map_or(text.as_str(), |(m, _)| m);
    format!("{msg} at column {}", e.column())
}

fn str_of<'a>(o: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    o.get(key).and_then(Value::as_str)
}

/// A block of seed 003's shape: `{"type": "text", "content": …}`; an
/// owned `content` is moved in, not copied (it may be a line's worth).
fn text_block(kind: &str, content: impl Into<String>) -> Value {
    let mut m = Map::new();
    m.insert("type".into(), Value::String(kind.to_string()));
    m.insert("content".into(), Value::String(content.into()));
    Value::Object(m)
}

/// The string `key` of `o`, moved out (an empty string if it is not one).
fn take_str(o: &mut Map<String, Value>, key: &str) -> String {
    match o.get_mut(key).map(Value::take) {
        Some(Value::String(s)) => s,
        _ => String::new(),
    }
}

/// A message with the per-message metadata that ties it to its source.
fn message(role: &str, blocks: Vec<Value>, metadata: Map<String, Value>) -> Message {
    Message {
        role: role.to_string(),
        blocks,
        usage: None,
        metadata: Some(Value::Object(metadata)),
        extra: Map::new(),
    }
}

/// A deterministic UUID (version 8, RFC 9562) for a name: the id of a
/// Claude Code subagent transcript, whose own `agentId` is not a UUID, so
/// importing the same subagent twice lands on the same transcript.
pub fn name_uuid(name: &str) -> String {
    let a = fnv1a64(name.as_bytes(), FNV_OFFSET);
    let b = fnv1a64(name.as_bytes(), a ^ 0x9e37_79b9_7f4a_7c15);
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&a.to_be_bytes());
    bytes[8..].copy_from_slice(&b.to_be_bytes());
    bytes[6] = (bytes[6] & 0x0f) | 0x80;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    uuid::Uuid::from_bytes(bytes).hyphenated().to_string()
}

/// FNV-1a's offset basis: the seed of [`Fingerprint`].
pub const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a over `bytes`, continuing from `h`.
pub fn fnv1a64(bytes: &[u8], mut h: u64) -> u64 {
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// A running fingerprint of a source file's bytes: tells an unchanged
/// source from one that changed or grew (not a security hash). Its running
/// state serializes, so an incremental import goes on from a checkpoint and
/// ends on the value a whole read gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fingerprint {
    hash: u64,
    /// Bytes seen so far.
    pub bytes: u64,
}

impl Default for Fingerprint {
    fn default() -> Self {
        Fingerprint {
            hash: FNV_OFFSET,
            bytes: 0,
        }
    }
}

impl Fingerprint {
    /// Adds `bytes`.
    pub fn update(&mut self, bytes: &[u8]) {
        self.hash = fnv1a64(bytes, self.hash);
        self.bytes += bytes.len() as u64;
    }

    /// `fnv1a64:<hex>`, as stored in `metadata.source.fingerprint`.
    pub fn as_string(&self) -> String {
        format!("fnv1a64:{:016x}", self.hash)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detect_formats() {
        assert_eq!(
            Format::detect(r#"{"timestamp":"t","type":"session_meta","payload":{}}"#),
            Some(Format::Codex)
        );
        assert_eq!(
            Format::detect(r#"{"type":"summary","summary":"x","leafUuid":"u"}"#),
            Some(Format::ClaudeCode)
        );
        assert_eq!(Format::detect(r#"{"a":1}"#), None);
        assert_eq!(Format::detect("{"), None);
    }

    #[test]
    fn detect_the_start_of_a_line_too_long_to_read() {
        for (start, want) in [
            (
                r#"{"parentUuid":null,"sessionId":"s","type":"user","message":{"content":"very lo"#,
                Some(Format::ClaudeCode),
            ),
            (
                r#" { "type" : "assistant", "mess"#,
                Some(Format::ClaudeCode),
            ),
            (
                r#"{"timestamp":"t","type":"response_item","payload":{"type":"message","content":[{"te"#,
                Some(Format::Codex),
            ),
            (r#"{"meta":{"type":"user"},"ty"#, None),
            (r#"{"a":"say "type":"user"","#, None),
            (r#"{"timestamp":"t","type":"response_item","pay"#, None),
            ("<html>", None),
            ("", None),
        ] {
            assert_eq!(Format::detect_start(start), want, "{start}");
        }
    }

    #[test]
    fn growth_counts_only_what_moved() {
        let a = Usage {
            input_tokens: 10,
            output_tokens: 5,
            total_tokens: 15,
            ..Usage::default()
        };
        assert_eq!(a.growth_over(&a), None);
        let b = Usage {
            input_tokens: 30,
            output_tokens: 7,
            total_tokens: 37,
            ..Usage::default()
        };
        assert_eq!(b.growth_over(&a).map(|u| u.total_tokens), Some(22));
        assert_eq!(a.growth_over(&b), Some(a));
    }

    #[test]
    fn name_uuids_are_stable_uuids() {
        let a = name_uuid("claude-code:x:agent-1");
        assert_eq!(a, name_uuid("claude-code:x:agent-1"));
        assert_ne!(a, name_uuid("claude-code:x:agent-2"));
        assert!(crate::ids::TranscriptId::parse(&a).is_ok(), "{a}");
    }

    #[test]
    fn calls_round_trip_as_one_string() {
        let c = Call(
            "msg_1:req_1".into(),
            "m".into(),
            "2026-01-18".into(),
            1,
            2,
            3,
            4,
        );
        let v = serde_json::to_value(&c).unwrap();
        assert_eq!(v, "msg_1:req_1\tm\t2026-01-18\t1\t2\t3\t4");
        assert_eq!(serde_json::from_value::<Call>(v).unwrap(), c);
        assert!(serde_json::from_value::<Call>("a\tb".into()).is_err());
        assert_eq!(c.usage().total_tokens, 10);
    }

    #[test]
    fn days_are_utc() {
        assert_eq!(day_of(Some("2026-01-18T23:30:00.000-02:00")), "2026-01-19");
        assert_eq!(day_of(None), "unknown");
    }
}
