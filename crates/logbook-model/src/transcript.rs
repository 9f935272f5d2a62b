//! Transcripts (seed 003): the message history of a main agent or a
//! subagent, one 2-space JSON file per transcript in `{transcripts_dir}`.
//!
//! The file name carries the kind, the id does not (the seed's decision 4):
//! `session_{short}.json` for a main agent, `subagent_session_{short}.json`
//! for a subagent, where `short` is the last 8 characters of the UUID. When
//! two ids share a short id, the second is stored under its full id
//! (`session_{uuid}.json`) instead of overwriting the first, and loading by
//! id still finds it because the id inside every file is checked.
//!
//! Messages are kept exactly as given: blocks are arbitrary JSON and unknown
//! keys anywhere are written back.

pub mod card;
pub mod find;
pub mod tools;

use std::path::PathBuf;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

use crate::clock;
use crate::ids::short_id;
use crate::text;

/// The `version` every transcript Logbook writes carries (the seed's format).
pub const FORMAT_VERSION: &str = "1.0.0";
/// Folder inside `transcripts_dir` that `prune` moves old transcripts to.
pub const ARCHIVE_DIR: &str = "archive";

/// Whose transcript it is; decides the file name prefix only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// The main agent's conversation (`session_…`).
    Main,
    /// A subagent's conversation (`subagent_session_…`).
    Subagent,
}

impl Kind {
    /// The kind a listing keeps, from its `main` and `subagents` switches
    /// (CLI flags, MCP arguments): both off lists every kind.
    pub fn only(main: bool, subagents: bool) -> Option<Kind> {
        if main {
            Some(Kind::Main)
        } else if subagents {
            Some(Kind::Subagent)
        } else {
            None
        }
    }

    /// The file name prefix of this kind, as seed 003 names it.
    pub fn prefix(self) -> &'static str {
        match self {
            Kind::Main => "session",
            Kind::Subagent => "subagent_session",
        }
    }

    /// `main` or `subagent`, as listings print it.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Main => "main",
            Kind::Subagent => "subagent",
        }
    }
}

/// One stored transcript, exactly seed 003's fields plus whatever else the
/// file carried.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Transcript {
    /// The session's UUID (never prefixed).
    pub id: String,
    /// When the transcript was last saved.
    #[serde(default, deserialize_with = "text::lenient")]
    pub timestamp: String,
    /// Format version, `1.0.0`.
    #[serde(default = "format_version")]
    pub version: String,
    /// The conversation, oldest first, as the agent gave it.
    #[serde(default)]
    pub messages: Vec<Message>,
    /// Where and when the conversation ran.
    #[serde(default, deserialize_with = "text::lenient")]
    pub metadata: Metadata,
    /// Keys Logbook does not know, kept on rewrite.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

fn format_version() -> String {
    FORMAT_VERSION.to_string()
}

/// One message: a role and its blocks, kept as given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// `user`, `assistant`, `system`, `tool`… (not restricted).
    pub role: String,
    /// Text, tool, subagent, compress… blocks: arbitrary JSON.
    #[serde(default)]
    pub blocks: Vec<Value>,
    /// Token usage reported with the message, if any.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub usage: Option<Value>,
    /// Per-message metadata, if any.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    pub metadata: Option<Value>,
    /// Keys Logbook does not know, kept on rewrite.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// Keeps an explicit `null` as `Some(Null)` so it is written back as given.
fn present<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Option<Value>, D::Error> {
    Value::deserialize(d).map(Some)
}

/// Where and when a conversation ran.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Metadata {
    /// The agent's working directory; listings filter on it.
    #[serde(default, deserialize_with = "text::lenient")]
    pub workdir: String,
    /// When the conversation began.
    #[serde(default, deserialize_with = "text::lenient")]
    pub started_at: String,
    /// When it last had a message; listings sort on it.
    #[serde(default, deserialize_with = "text::lenient")]
    pub last_active_at: String,
    /// The context size at the last message.
    #[serde(default, deserialize_with = "text::lenient")]
    pub latest_total_tokens: u64,
    /// The main session a subagent was spawned from.
    #[serde(
        default,
        deserialize_with = "text::lenient",
        skip_serializing_if = "Option::is_none"
    )]
    pub parent_session_id: Option<String>,
    /// Keys Logbook does not know, kept on rewrite.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A transcript without its messages, borrowed: what a rewrite merges with
/// the file as it was read ([`Transcript::head`]).
#[derive(Debug, Serialize)]
pub struct HeadRef<'a> {
    /// The session's UUID.
    pub id: &'a str,
    /// When the transcript was last saved.
    pub timestamp: &'a str,
    /// Format version.
    pub version: &'a str,
    /// Where and when the conversation ran.
    pub metadata: &'a Metadata,
    /// Keys Logbook does not know.
    #[serde(flatten)]
    pub extra: &'a Map<String, Value>,
}

impl Transcript {
    /// Everything but the messages, borrowed.
    pub fn head(&self) -> HeadRef<'_> {
        HeadRef {
            id: &self.id,
            timestamp: &self.timestamp,
            version: &self.version,
            metadata: &self.metadata,
            extra: &self.extra,
        }
    }

    /// A new, empty transcript for `id` in `workdir`, started now.
    pub fn new(id: impl Into<String>, workdir: impl Into<String>) -> Transcript {
        let now = clock::now_string();
        Transcript {
            id: id.into(),
            timestamp: now.clone(),
            version: FORMAT_VERSION.to_string(),
            messages: vec![],
            metadata: Metadata {
                workdir: workdir.into(),
                started_at: now.clone(),
                last_active_at: now,
                ..Metadata::default()
            },
            extra: Map::new(),
        }
    }

    /// Turns the transcript into JSON by moving, not copying, its messages,
    /// so printing a large transcript does not hold it twice.
    pub fn into_value(self) -> crate::Result<Value> {
        let mut m = Map::new();
        m.insert("id".into(), Value::String(self.id));
        m.insert("timestamp".into(), Value::String(self.timestamp));
        m.insert("version".into(), Value::String(self.version));
        m.insert(
            "messages".into(),
            Value::Array(self.messages.into_iter().map(Message::into_value).collect()),
        );
        m.insert(
            "metadata".into(),
            crate::to_json("transcript metadata", &self.metadata)?,
        );
        m.extend(self.extra);
        Ok(Value::Object(m))
    }
}

/// The metadata key naming the run a conversation belongs to (seed 000
/// Story 6.3: the run's `userSummary` and `messageCount` come from it).
pub const RUN_ID_KEY: &str = "runId";

impl Transcript {
    /// The run this conversation belongs to, as `metadata.runId` names it.
    pub fn run_id(&self) -> Option<&str> {
        self.metadata
            .extra
            .get(RUN_ID_KEY)
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
    }

    /// The first prompt a person typed ([`Message::prompt_text`]) among
    /// the first [`PROMPT_WITHIN`] messages: what a title falls back to.
    pub fn first_prompt(&self) -> Option<String> {
        self.messages
            .iter()
            .take(PROMPT_WITHIN)
            .find_map(Message::prompt_text)
    }

    /// The text of the first `user` message that has any, whitespace
    /// collapsed: Story 6.3's `userSummary` before truncation.
    pub fn first_user_text(&self) -> Option<String> {
        self.messages
            .iter()
            .filter(|m| m.role == "user")
            .map(Message::text)
            .find(|t| !t.is_empty())
    }
}

/// The words of a transcript that full-text search finds, gathered message
/// by message up to a cap, so that indexing a huge imported log costs
/// bounded work (its first `cap` bytes of text are searchable, not more).
///
/// What counts as said: text blocks (and bare strings), thinking, compact
/// summaries, and the start of each tool result ([`TOOL_RESULT_BYTES`]): a
/// tool result is often a whole file dumped into the conversation, which
/// would crowd the words people and agents wrote out of the cap.
#[derive(Debug, Clone, Default)]
pub struct SaidText {
    text: String,
    cap: usize,
}

/// How much of one tool result counts as said (see [`SaidText`]).
pub const TOOL_RESULT_BYTES: usize = 2048;

impl SaidText {
    /// An empty collection holding at most `cap` bytes of text.
    pub fn new(cap: usize) -> SaidText {
        SaidText {
            text: String::new(),
            cap,
        }
    }

    /// What `messages` say, up to `cap` bytes.
    pub fn of(messages: &[Message], cap: usize) -> SaidText {
        let mut said = SaidText::new(cap);
        for m in messages {
            if said.is_full() {
                break;
            }
            said.push(m);
        }
        said
    }

    /// Whether the cap is reached: later messages add nothing.
    pub fn is_full(&self) -> bool {
        self.text.len() >= self.cap
    }

    /// Adds what `m` says, cut (at a character boundary) where the cap is.
    pub fn push(&mut self, m: &Message) {
        for b in &m.blocks {
            let (text, limit) = match b {
                Value::String(s) => (s.as_str(), usize::MAX),
                Value::Object(o) => match o.get("type").and_then(Value::as_str) {
                    Some("text" | "thinking" | "compress") => (
                        o.get("content")
                            .or_else(|| o.get("text"))
                            .or_else(|| o.get("thinking"))
                            .and_then(Value::as_str)
                            .unwrap_or_default(),
                        usize::MAX,
                    ),
                    // A `tool` block's copy of its `tool_result` block's
                    // result is said once, by that block.
                    Some("tool")
                        if o.get(crate::agent_log::RESULT_COPIED_KEY)
                            .and_then(Value::as_bool)
                            == Some(true) =>
                    {
                        continue;
                    }
                    Some("tool_result" | "tool") => (
                        o.get("result").and_then(Value::as_str).unwrap_or_default(),
                        TOOL_RESULT_BYTES,
                    ),
                    _ => continue,
                },
                _ => continue,
            };
            self.add(text, limit);
        }
    }

    fn add(&mut self, text: &str, limit: usize) {
        if text.trim().is_empty() || self.is_full() {
            return;
        }
        let room = (self.cap - self.text.len()).min(limit);
        self.text.push_str(crate::limits::cut_at(text, room));
        self.text.push('\n');
    }

    /// A collection that goes on from `text`, gathered before (an
    /// incremental import resumes it from its checkpoint).
    pub fn resume(text: String, cap: usize) -> SaidText {
        SaidText { text, cap }
    }

    /// The text gathered so far.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The text gathered.
    pub fn into_string(self) -> String {
        self.text
    }
}

impl Message {
    /// The text of each text block as written: seed 003's `{"type":
    /// "text", "content"}`, `text` as other tools write it, or a bare
    /// string; tool, subagent and other blocks are not text.
    pub fn text_blocks(&self) -> impl Iterator<Item = &str> {
        self.blocks.iter().filter_map(|b| match b {
            Value::String(s) => Some(s.as_str()),
            Value::Object(o) if o.get("type").and_then(Value::as_str) == Some("text") => o
                .get("content")
                .or_else(|| o.get("text"))
                .and_then(Value::as_str),
            _ => None,
        })
    }

    /// The message's text blocks (seed 003's `{"type": "text", "content"}`,
    /// or `text` as other tools write it, or bare strings) joined, with
    /// whitespace collapsed; tool, subagent and other blocks are not text.
    pub fn text(&self) -> String {
        let mut words: Vec<&str> = vec![];
        for text in self.text_blocks() {
            words.extend(text.split_whitespace());
        }
        words.join(" ")
    }

    /// The message's text when it is a prompt a person typed: a `user`
    /// message with text, other than what the agents write in the user's
    /// name (Claude Code's `<command-name>…` and local-command caveat,
    /// Codex's `<environment_context>` and `<user_instructions>`: text
    /// that opens with a tag), which would make every title the same.
    pub fn prompt_text(&self) -> Option<String> {
        if self.role != "user" {
            return None;
        }
        // Words up to a bound, not the whole text: a first prompt can be a
        // pasted file of hundreds of MiB, and a title keeps 80 characters.
        let mut text = String::new();
        'blocks: for block in self.text_blocks() {
            for word in block.split_whitespace() {
                if text.len() >= PROMPT_BYTES {
                    break 'blocks;
                }
                if !text.is_empty() {
                    text.push(' ');
                }
                let room = PROMPT_BYTES.saturating_sub(text.len());
                text.push_str(crate::limits::cut_at(word, room));
            }
        }
        let generated = text.is_empty()
            || text.starts_with('<')
            || text.starts_with("Caveat: The messages below were generated by the user");
        (!generated).then_some(text)
    }

    /// Turns the message into JSON by moving its blocks.
    pub fn into_value(self) -> Value {
        let mut m = Map::new();
        m.insert("role".into(), Value::String(self.role));
        m.insert("blocks".into(), Value::Array(self.blocks));
        if let Some(u) = self.usage {
            m.insert("usage".into(), u);
        }
        if let Some(md) = self.metadata {
            m.insert("metadata".into(), md);
        }
        m.extend(self.extra);
        Value::Object(m)
    }
}

/// A transcript read from disk, with where it was found.
#[derive(Debug, Clone)]
pub struct Stored {
    /// The transcript.
    pub transcript: Transcript,
    /// Main or subagent, from the file name.
    pub kind: Kind,
    /// The file it was read from (or written to).
    pub path: PathBuf,
    /// True when found in `{transcripts_dir}/archive/`.
    pub archived: bool,
}

/// What a listing shows of one transcript (read without its messages).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// The session UUID.
    pub id: String,
    /// Main or subagent.
    pub kind: Kind,
    /// The file, absolute.
    pub file: PathBuf,
    /// The agent's working directory.
    pub workdir: String,
    /// When the conversation began.
    pub started_at: String,
    /// When it last had a message.
    pub last_active_at: String,
    /// The context size at the last message.
    pub latest_total_tokens: u64,
    /// The parent main session of a subagent.
    pub parent_session_id: Option<String>,
    /// The repository it was recorded in (`metadata.repository`), if any:
    /// what `transcript list` scopes on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repository: Option<crate::repo::Repository>,
    /// What a person recognises the session by ([`title`]).
    pub title: String,
    /// `claude-code`, `codex` or `logbook` ([`source_name`]).
    pub source: String,
    /// How many messages it holds.
    pub messages: u64,
    // --- i32-usage: what a listing shows of the measured usage (index
    // schema 13, `models` and `usage` columns) ---
    /// The models its measured usage names ([`measured`]), sorted: what
    /// `--model` matches and the list shows, without reading the file.
    pub models: Vec<String>,
    /// Every token its calls were billed for, as measured from the agent's
    /// log (input, output and cache, not the last context size); `None`
    /// when it was not imported from a log.
    pub usage: Option<crate::agent_log::Usage>,
}

impl Summary {
    /// The repository a person knows it by: its origin's path (`org/x`),
    /// else its checkout's folder, else the agent's workdir. What the
    /// list's column and `transcript usage --by repo` show.
    pub fn repo_label(&self) -> String {
        if let Some(r) = &self.repository {
            if let Some(origin) = &r.origin {
                let path = origin
                    .split_once("://")
                    .map_or(origin.as_str(), |(_, rest)| rest);
                let path = path.split_once('/').map_or(path, |(_, p)| p);
                if !path.is_empty() {
                    return path.trim_end_matches('/').to_string();
                }
            }
            if !r.folder.is_empty() {
                return r.folder.clone();
            }
        }
        self.workdir.clone()
    }

    /// How long the session ran (`2h 15m`, `40s`), from its first to its last
    /// message; `None` when either time does not parse.
    pub fn duration(&self) -> Option<String> {
        let from = clock::parse(&self.started_at)?;
        let to = clock::parse(&self.last_active_at)?;
        // Agent sessions are often shorter than a minute: `0m` says nothing.
        let secs = to.as_second().saturating_sub(from.as_second());
        Some(if (0..60).contains(&secs) {
            format!("{secs}s")
        } else {
            clock::duration(from, to)
        })
    }
}

/// The metadata key of a transcript's title that sticks (`transcript
/// name`): every later save and import of the same id keeps it.
pub const NAME_KEY: &str = "name";

/// How many messages are looked through for a first prompt: a session
/// without one (all tool results, say) is not read to its end for it.
pub const PROMPT_WITHIN: usize = 1000;

/// How much of a first prompt is kept ([`Message::prompt_text`]): more
/// than a title shows, so that the cut still falls between words.
pub const PROMPT_BYTES: usize = 1024;

/// The most characters of a first prompt that a title keeps.
pub const TITLE_CHARS: usize = 80;

/// A transcript's title, in this order: the name given with `transcript
/// name` (`metadata.name`); else the agent's own title for the session,
/// where its log has one (`metadata.source.title`: Claude Code's `summary`
/// lines); else `first_prompt` ([`Transcript::first_prompt`]) cut between
/// words at [`TITLE_CHARS`]. Empty when there is none of them.
pub fn title(md: &Metadata, first_prompt: Option<&str>) -> String {
    fn given(v: Option<&Value>) -> Option<&str> {
        v.and_then(Value::as_str)
            .map(str::trim)
            .filter(|s| !s.is_empty())
    }
    let named = given(md.extra.get(NAME_KEY))
        .or_else(|| given(md.extra.get("source").and_then(|s| s.get("title"))));
    match named {
        Some(name) => name.to_string(),
        None => first_prompt
            .map(|p| crate::naming::shorten(p, TITLE_CHARS))
            .unwrap_or_default(),
    }
}

/// The agent whose log a transcript was imported from (`claude-code`,
/// `codex`), or `logbook` for one saved or imported in seed 003's format.
pub fn source_name(md: &Metadata) -> &str {
    md.extra
        .get("source")
        .and_then(|s| s.get("format"))
        .and_then(Value::as_str)
        .unwrap_or("logbook")
}

/// The models a transcript's measured usage names, sorted, and its
/// measured total (every call of the log, counted once): what the index
/// keeps so that a listing shows and filters them without the file.
pub fn measured(md: &Metadata) -> (Vec<String>, Option<crate::agent_log::Usage>) {
    // The book's type only (a pure leaf): the agent-log parser, which
    // imports this module, is not called from here.
    let book = md
        .extra
        .get("usage")
        .and_then(|u| crate::agent_log::UsageBook::deserialize(u).ok());
    match book {
        Some(book) => (book.by_model.keys().cloned().collect(), Some(book.total())),
        None => (vec![], None),
    }
}

/// How many messages an imported log became, as its `metadata.source`
/// records it: the index takes it from there rather than counting a large
/// log's messages again. `None` for a transcript not imported from a log.
pub fn recorded_messages(md: &Metadata) -> Option<u64> {
    md.extra
        .get("source")
        .and_then(|s| s.get("messages"))
        .and_then(Value::as_u64)
}

/// What `transcript list` narrows a listing to, besides kind and project:
/// where the agent ran, which agent log it came from, which model it used
/// and when it was active. Pure, so the rule is the same whatever reads it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filter {
    /// Only transcripts whose workdir is this folder or inside it.
    pub workdir: Option<PathBuf>,
    /// Only those imported from this agent's logs (`claude-code`, `codex`),
    /// or `logbook` for those saved or imported in seed 003's format.
    pub source: Option<String>,
    /// Only those whose measured usage names a model containing this text
    /// (case aside).
    pub model: Option<String>,
    /// Only those active at or after this time (`lastActiveAt`).
    pub since: Option<jiff::Timestamp>,
    /// Only those that began at or before this time (`startedAt`).
    pub until: Option<jiff::Timestamp>,
    /// Only those whose messages say every one of these words (lowercase;
    /// see [`Filter::words`]).
    pub text: Vec<String>,
}

impl Filter {
    /// The words of a `--text` query, lowercase, as [`Filter::text`] holds them.
    pub fn words(query: &str) -> Vec<String> {
        query.split_whitespace().map(str::to_lowercase).collect()
    }

    /// Whether a listing row passes: workdir, time, source and model, all
    /// from the row (the index keeps the source and the models), so no
    /// file is read. `within` is the workdir test (the store's, which
    /// resolves symlinks).
    pub fn matches_row(
        &self,
        row: &Summary,
        within: impl Fn(&str, &std::path::Path) -> bool,
    ) -> bool {
        let workdir = self
            .workdir
            .as_ref()
            .is_none_or(|w| within(&row.workdir, w));
        let since = self
            .since
            .is_none_or(|since| clock::parse(&row.last_active_at).is_some_and(|t| t >= since));
        let until = self
            .until
            .is_none_or(|until| clock::parse(&row.started_at).is_some_and(|t| t <= until));
        workdir && since && until && self.matches_source_and_model(&row.source, &row.models)
    }

    /// The part a transcript's metadata answers: source and model (the team
    /// catalog's rows, which carry the metadata).
    pub fn matches_metadata(&self, md: &Metadata) -> bool {
        self.matches_source_and_model(source_name(md), &measured(md).0)
    }

    fn matches_source_and_model(&self, source: &str, models: &[String]) -> bool {
        let source_ok = self
            .source
            .as_deref()
            .is_none_or(|want| want.eq_ignore_ascii_case(source));
        let model_ok = self.model.as_deref().is_none_or(|want| {
            let want = want.to_lowercase();
            models.iter().any(|m| m.to_lowercase().contains(&want))
        });
        source_ok && model_ok
    }
}

/// The sources a transcript can come from ([`source_name`]): what
/// `--source` takes.
pub const SOURCES: &[&str] = &["claude-code", "codex", "logbook"];

/// A `--source` value as typed, checked: one of [`SOURCES`] (case aside).
pub fn parse_source(given: &str) -> crate::error::Result<String> {
    let want = given.trim().to_ascii_lowercase();
    if SOURCES.contains(&want.as_str()) {
        Ok(want)
    } else {
        Err(crate::error::Error::invalid(
            "source",
            given.trim(),
            "expected claude-code, codex or logbook",
        ))
    }
}

/// `{prefix}_{short}.json`, or `{prefix}_{id}.json` when `full`.
pub fn file_name(kind: Kind, id: &str, full: bool) -> String {
    let part = if full { id } else { short_id(id) };
    format!("{}_{part}.json", kind.prefix())
}

/// The kind and name part of a transcript file name, or `None` when the
/// file is not a transcript.
pub fn parse_file_name(name: &str) -> Option<(Kind, &str)> {
    let stem = name.strip_suffix(".json")?;
    // `subagent_session_` first: it does not start with `session_`, but be
    // explicit rather than rely on that.
    if let Some(rest) = stem.strip_prefix("subagent_session_") {
        return (!rest.is_empty()).then_some((Kind::Subagent, rest));
    }
    let rest = stem.strip_prefix("session_")?;
    (!rest.is_empty()).then_some((Kind::Main, rest))
}

#[cfg(test)]
mod tests {
    #[test]
    fn said_text_keeps_what_is_said_up_to_its_cap() {
        let m: Message = serde_json::from_value(serde_json::json!({
            "role": "assistant",
            "blocks": [
                "bare words",
                {"type": "text", "content": "seed text"},
                {"type": "text", "text": "other text"},
                {"type": "thinking", "content": "deep thought"},
                {"type": "compress", "content": "summary words"},
                {"type": "tool", "name": "w", "parameters": "{\"path\":\"hidden.md\"}", "result": "ok done"},
                {"type": "tool_result", "result": "é".repeat(TOOL_RESULT_BYTES)},
                {"type": "subagent", "subagentName": "analyst"}
            ]
        }))
        .unwrap();
        let said = SaidText::of(std::slice::from_ref(&m), usize::MAX).into_string();
        for w in [
            "bare words",
            "seed text",
            "other text",
            "deep thought",
            "summary words",
            "ok done",
        ] {
            assert!(said.contains(w), "{w} missing from {said:?}");
        }
        assert!(
            !said.contains("hidden") && !said.contains("analyst"),
            "{said:?}"
        );
        // A tool result counts for its first TOOL_RESULT_BYTES, cut between characters.
        let last = said.lines().last().unwrap();
        assert_eq!(last.len(), TOOL_RESULT_BYTES);
        // The cap bounds the text, whatever the number of messages.
        let many = vec![m; 1000];
        let capped = SaidText::of(&many, 4096);
        assert!(capped.is_full());
        let text = capped.into_string();
        assert!(text.len() <= 4096 + 1, "{}", text.len());
        assert!(text.starts_with("bare words\nseed text"));
    }

    use super::*;
    use serde_json::json;

    const MAIN: &str = include_str!("../../../testdata/shared/fixtures/transcript-main.json");
    const SUB: &str = include_str!("../../../testdata/shared/fixtures/transcript-subagent.json");

    #[test]
    fn fixtures_round_trip_exactly() {
        for text in [MAIN, SUB] {
            let t: Transcript = serde_json::from_str(text).unwrap();
            let back = serde_json::to_value(&t).unwrap();
            let orig: Value = serde_json::from_str(text).unwrap();
            assert_eq!(back, orig);
            assert_eq!(t.clone().into_value().unwrap(), orig);
        }
    }

    #[test]
    fn unknown_keys_and_nulls_are_kept() {
        let text = r#"{"id":"6f1c2b9e-3d4a-4c5b-9e8f-1a2b3c4d5e6f","timestamp":"t","version":"1.0.0","x-tool":{"a":1},
            "messages":[{"role":"user","blocks":[{"type":"weird","deep":[1,{"z":null}]}],"usage":null,"extra":true}],
            "metadata":{"workdir":"/w","startedAt":"s","lastActiveAt":"l","latestTotalTokens":3,"host":"h"}}"#;
        let t: Transcript = serde_json::from_str(text).unwrap();
        let orig: Value = serde_json::from_str(text).unwrap();
        assert_eq!(serde_json::to_value(&t).unwrap(), orig);
    }

    #[test]
    fn first_user_text_is_the_first_user_message_with_text() {
        let t: Transcript = serde_json::from_str(MAIN).unwrap();
        assert_eq!(
            t.first_user_text().as_deref(),
            Some("I need to purchase 10 laptops for the sales team")
        );
        let t: Transcript = serde_json::from_str(
            r#"{"id":"6f1c2b9e-3d4a-4c5b-9e8f-1a2b3c4d5e6f","messages":[
                {"role":"assistant","blocks":[{"type":"text","content":"Hello"}]},
                {"role":"user","blocks":[{"type":"tool","name":"x"}]},
                {"role":"user","blocks":["Plan  the", {"type":"text","text":"offsite\nin May"}]}]}"#,
        )
        .unwrap();
        assert_eq!(
            t.first_user_text().as_deref(),
            Some("Plan the offsite in May")
        );
        assert_eq!(Transcript::new("x", "/w").first_user_text(), None);
    }

    #[test]
    fn filters_by_source_model_and_time() {
        let md: Metadata = serde_json::from_value(serde_json::json!({
            "workdir": "/w", "startedAt": "2026-01-18T10:00:00.000Z",
            "lastActiveAt": "2026-01-18T11:00:00.000Z",
            "source": {"format": "codex"},
            "usage": {"byModel": {"gpt-5-codex": {}}}
        }))
        .unwrap();
        let f = |source: Option<&str>, model: Option<&str>| Filter {
            source: source.map(str::to_string),
            model: model.map(str::to_string),
            ..Filter::default()
        };
        assert!(f(Some("codex"), Some("GPT-5")).matches_metadata(&md));
        assert!(!f(Some("claude-code"), None).matches_metadata(&md));
        assert!(!f(None, Some("opus")).matches_metadata(&md));
        assert!(f(Some("logbook"), None).matches_metadata(&Metadata::default()));
        let row = Summary {
            id: "x".into(),
            kind: Kind::Main,
            file: PathBuf::new(),
            workdir: md.workdir.clone(),
            started_at: md.started_at.clone(),
            last_active_at: md.last_active_at.clone(),
            latest_total_tokens: 0,
            parent_session_id: None,
            repository: None,
            title: String::new(),
            source: "codex".into(),
            messages: 0,
            models: vec!["gpt-5-codex".into()],
            usage: None,
        };
        assert!(f(Some("codex"), Some("GPT-5")).matches_row(&row, |_, _| true));
        assert!(!f(Some("claude-code"), None).matches_row(&row, |_, _| true));
        assert!(!f(None, Some("opus")).matches_row(&row, |_, _| true));
        let at = |s: &str| clock::parse(s);
        let within = |w: &str, root: &std::path::Path| std::path::Path::new(w).starts_with(root);
        let window = |since: Option<&str>, until: Option<&str>| Filter {
            since: since.and_then(at),
            until: until.and_then(at),
            ..Filter::default()
        };
        assert!(window(Some("2026-01-18T10:30:00Z"), None).matches_row(&row, within));
        assert!(!window(Some("2026-01-18T11:30:00Z"), None).matches_row(&row, within));
        assert!(window(None, Some("2026-01-18T10:00:00Z")).matches_row(&row, within));
        assert!(!window(None, Some("2026-01-18T09:00:00Z")).matches_row(&row, within));
    }

    #[test]
    fn a_title_is_the_name_else_the_agents_own_else_the_first_prompt_cut_at_a_word() {
        let md = |extra: Value| Metadata {
            extra: extra.as_object().cloned().unwrap_or_default(),
            ..Metadata::default()
        };
        let long =
            "Make the transcript list show a title for each session so that people can find theirs";
        let cases = [
            (
                json!({"name": " Q1 ", "source": {"title": "Release"}}),
                Some("p"),
                "Q1",
            ),
            (
                json!({"name": "  ", "source": {"title": "Release"}}),
                Some("p"),
                "Release",
            ),
            (
                json!({"source": {"format": "codex"}}),
                Some("Fix it"),
                "Fix it",
            ),
            (
                json!({}),
                Some(long),
                "Make the transcript list show a title for each session so that people can find…",
            ),
            (json!({}), None, ""),
        ];
        for (extra, prompt, want) in cases {
            assert_eq!(
                title(&md(extra.clone()), prompt),
                want,
                "{extra} {prompt:?}"
            );
        }
        assert_eq!(
            source_name(&md(json!({"source": {"format": "codex"}}))),
            "codex"
        );
        assert_eq!(source_name(&Metadata::default()), "logbook");
        let user = |text: &str| Message {
            role: "user".into(),
            blocks: vec![json!({"type": "text", "content": text})],
            usage: None,
            metadata: None,
            extra: Map::new(),
        };
        let t = Transcript {
            messages: vec![
                user("<command-name>/clear</command-name>"),
                user(
                    "Caveat: The messages below were generated by the user while running local commands.",
                ),
                user("  the   real\nprompt "),
            ],
            ..Transcript::new("x", "/w")
        };
        assert_eq!(t.first_prompt().as_deref(), Some("the real prompt"));
        // A pasted file as the first prompt: only its start is kept.
        let huge = user(&"word ".repeat(1 << 20));
        assert!(huge.prompt_text().unwrap().len() <= PROMPT_BYTES);
    }

    #[test]
    fn short_ids_and_names() {
        let id = "6f1c2b9e-3d4a-4c5b-9e8f-1a2b3c4d5e6f";
        assert_eq!(short_id(id), "3c4d5e6f");
        assert_eq!(
            file_name(Kind::Subagent, id, false),
            "subagent_session_3c4d5e6f.json"
        );
        assert_eq!(
            parse_file_name("subagent_session_3c4d5e6f.json"),
            Some((Kind::Subagent, "3c4d5e6f"))
        );
        assert_eq!(
            parse_file_name("session_3c4d5e6f.json"),
            Some((Kind::Main, "3c4d5e6f"))
        );
        assert_eq!(parse_file_name("sessions.json"), None);
    }

    #[test]
    fn a_session_shorter_than_a_minute_says_its_seconds() {
        let row = |from: &str, to: &str| Summary {
            id: "x".into(),
            kind: Kind::Main,
            file: PathBuf::new(),
            workdir: String::new(),
            started_at: from.into(),
            last_active_at: to.into(),
            latest_total_tokens: 0,
            parent_session_id: None,
            repository: None,
            title: String::new(),
            source: "codex".into(),
            messages: 0,
            models: vec![],
            usage: None,
        };
        let at = |s: &str| format!("2026-11-25T14:{s}Z");
        assert_eq!(
            row(&at("02:11"), &at("02:34")).duration().as_deref(),
            Some("23s")
        );
        assert_eq!(
            row(&at("02:11"), &at("04:12")).duration().as_deref(),
            Some("2m")
        );
        assert_eq!(row(&at("02:11"), "not a time").duration(), None);
    }

    #[test]
    fn repo_label_is_the_origins_path_else_the_folder_else_the_workdir() {
        let row = |repository: Option<crate::repo::Repository>| Summary {
            id: "x".into(),
            kind: Kind::Main,
            file: PathBuf::new(),
            workdir: "/w/here".into(),
            started_at: String::new(),
            last_active_at: String::new(),
            latest_total_tokens: 0,
            parent_session_id: None,
            repository,
            title: String::new(),
            source: "codex".into(),
            messages: 0,
            models: vec![],
            usage: None,
        };
        let repo = |origin: Option<&str>, folder: &str| {
            Some(crate::repo::Repository {
                root_commit: Some("abc".into()),
                origin: origin.map(str::to_string),
                folder: folder.into(),
            })
        };
        assert_eq!(
            row(repo(Some("https://github.com/org/x"), "/src/x")).repo_label(),
            "org/x"
        );
        assert_eq!(row(repo(None, "/src/x")).repo_label(), "/src/x");
        assert_eq!(row(repo(None, "")).repo_label(), "/w/here");
        assert_eq!(row(None).repo_label(), "/w/here");
    }

    #[test]
    fn measured_names_the_models_and_sums_every_call() {
        let md: Metadata = serde_json::from_value(json!({
            "usage": {"byModel": {
                "b-model": {"input_tokens": 1, "output_tokens": 2, "total_tokens": 3},
                "a-model": {"cache_read_input_tokens": 10, "total_tokens": 10}
            }}
        }))
        .unwrap();
        let (models, usage) = measured(&md);
        assert_eq!(models, ["a-model", "b-model"]);
        let usage = usage.unwrap();
        assert_eq!(
            (usage.total_tokens, usage.cache_read_input_tokens),
            (13, 10)
        );
        assert_eq!(measured(&Metadata::default()), (vec![], None));
        assert!(parse_source("Codex").is_ok_and(|s| s == "codex"));
        assert!(parse_source("gpt").is_err());
    }
}
