//! Claude Code's session logs: one JSON object per line, each with `type`,
//! `uuid`, `parentUuid`, `sessionId`, `isSidechain`, `cwd`, `gitBranch`,
//! `version` and `timestamp` (subagent files add `agentId`).
//!
//! `user` and `assistant` lines carry `message{role, content}`; assistant
//! lines add `requestId` and `message{id, model, usage}`. A streamed reply
//! is written as one line per content block, all with the same
//! `message.id`: consecutive ones become one message here, and only the
//! largest of their usages counts. `summary`, `system` (a
//! `compact_boundary` marks a compaction) become system messages (the
//! first summary is also the session's title, see `LogSummary::title`);
//! `progress`, `file-history-snapshot`, `queue-operation` and unknown types
//! are kept only as raw lines.

use std::collections::HashMap;
use std::collections::hash_map::Entry;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{Line, LogSummary, Usage, message, object, str_of, take_str, text_block};
use crate::transcript::{Message, PROMPT_BYTES};

/// The state of one Claude Code log being read.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Parser {
    pub(super) summary: LogSummary,
    /// The assistant message whose stream is still being read.
    pending: Option<Pending>,
    /// The largest usage seen per (`message.id`, `requestId`), or per
    /// (empty, `uuid`) for a line lacking either id.
    #[serde(with = "streams")]
    streams: HashMap<(String, String), Counted>,
    message_lines: u64,
    sidechain_lines: u64,
    /// Messages waiting for a tool's result (see [`super::pairing`]).
    #[serde(default)]
    pub(super) pairing: super::pairing::Pairing,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Pending {
    id: Option<String>,
    message: Message,
    usage: Option<Usage>,
    /// What this message's lines added to the count (see
    /// [`super::COUNTED_KEY`]); `None` when they added nothing.
    #[serde(default)]
    counted: Option<Usage>,
}

#[derive(Debug, Clone)]
struct Counted {
    usage: Usage,
    model: Option<String>,
    timestamp: Option<String>,
    inline_sidechain: bool,
}

/// The ids, model, time and usage of one `assistant` line.
struct AssistantLine {
    msg_id: Option<String>,
    request_id: Option<String>,
    model: Option<String>,
    ts: Option<String>,
    usage: Option<Usage>,
}

impl AssistantLine {
    fn read(o: &Map<String, Value>) -> Self {
        let inner = o.get("message").and_then(Value::as_object);
        AssistantLine {
            msg_id: inner.and_then(|m| str_of(m, "id")).map(str::to_string),
            request_id: str_of(o, "requestId").map(str::to_string),
            model: inner.and_then(|m| str_of(m, "model")).map(str::to_string),
            ts: str_of(o, "timestamp").map(str::to_string),
            usage: inner
                .and_then(|m| m.get("usage"))
                .and_then(Usage::from_claude),
        }
    }
}

impl Pending {
    /// A new assistant message, its ids and model in its metadata.
    fn start(
        a: AssistantLine,
        blocks: Vec<Value>,
        mut meta: Map<String, Value>,
        added: Option<Usage>,
    ) -> Self {
        if let Some(m) = &a.model {
            meta.insert("model".into(), m.clone().into());
        }
        if let Some(id) = &a.msg_id {
            meta.insert("messageId".into(), id.clone().into());
        }
        if let Some(r) = &a.request_id {
            meta.insert("requestId".into(), r.clone().into());
        }
        Pending {
            id: a.msg_id,
            message: message("assistant", blocks, meta),
            usage: a.usage,
            counted: added,
        }
    }

    /// The next line of the same stream: its blocks appended, its line and
    /// time as the message's last, its usage kept if it is the largest.
    fn continue_with(
        &mut self,
        no: u64,
        a: &AssistantLine,
        blocks: Vec<Value>,
        added: Option<Usage>,
    ) {
        self.message.blocks.extend(blocks);
        if let Some(Value::Object(m)) = &mut self.message.metadata {
            m.insert("lastLine".into(), no.into());
            if let Some(ts) = &a.ts {
                m.insert("lastTimestamp".into(), ts.clone().into());
            }
        }
        if let Some(u) = a.usage
            && self
                .usage
                .is_none_or(|old| u.total_tokens > old.total_tokens)
        {
            self.usage = Some(u);
        }
        if let Some(a) = added {
            *self.counted.get_or_insert_with(Usage::default) += a;
        }
    }
}

/// The metadata every message of a line carries: its line number, uuid,
/// timestamp, and whether it is a sidechain's.
fn line_meta(no: u64, o: &Map<String, Value>, sidechain: bool) -> Map<String, Value> {
    let mut meta = Map::new();
    meta.insert("line".into(), no.into());
    for key in ["uuid", "timestamp"] {
        if let Some(v) = o.get(key) {
            meta.insert(key.into(), v.clone());
        }
    }
    if sidechain {
        meta.insert("sidechain".into(), Value::Bool(true));
    }
    meta
}

/// A `system` line: a compaction's boundary, or its text with its subtype.
fn system(o: &Map<String, Value>, meta: Map<String, Value>) -> Message {
    let mut block = Map::new();
    if str_of(o, "subtype") == Some("compact_boundary") {
        block.insert("type".into(), "compress".into());
        let text = str_of(o, "content").unwrap_or("Conversation compacted");
        block.insert("content".into(), text.into());
        if let Some(m) = o.get("compactMetadata") {
            block.insert("compactMetadata".into(), m.clone());
        }
    } else {
        block.insert("type".into(), "text".into());
        block.insert(
            "content".into(),
            str_of(o, "content").unwrap_or_default().into(),
        );
        if let Some(sub) = o.get("subtype") {
            block.insert("subtype".into(), sub.clone());
        }
    }
    message("system", vec![Value::Object(block)], meta)
}

impl Parser {
    pub(super) fn line(&mut self, no: u64, line: Line<'_>) -> Vec<Message> {
        let mut o = match object(line) {
            Ok(Some(o)) => o,
            Ok(None) => return vec![],
            Err(reason) => {
                self.summary.bad(no, reason);
                return vec![];
            }
        };
        self.note_session(&o);
        let sidechain = o.get("isSidechain").and_then(Value::as_bool) == Some(true);
        let inline_sidechain = sidechain && !o.contains_key("agentId");
        let meta = line_meta(no, &o, sidechain);
        let ty = str_of(&o, "type").unwrap_or("").to_string();
        let new = match ty.as_str() {
            "assistant" => return self.assistant(no, &mut o, meta, inline_sidechain),
            "user" if o.get("isCompactSummary").and_then(Value::as_bool) == Some(true) => {
                Some(compact_summary(&mut o, meta))
            }
            "user" => Some(user(&mut o, meta)),
            "system" => Some(system(&o, meta)),
            "summary" => Some(self.summary_line(&o, meta)),
            "progress" | "file-history-snapshot" | "queue-operation" => None,
            other => {
                *self
                    .summary
                    .unknown_types
                    .entry(other.to_string())
                    .or_default() += 1;
                None
            }
        };
        let Some(new) = new else {
            return vec![];
        };
        self.message_lines += 1;
        self.sidechain_lines += u64::from(sidechain);
        let mut out: Vec<Message> = self.flush().into_iter().collect();
        out.push(new);
        out
    }

    /// Keeps what every line says about the session: its first session id,
    /// agent id and working directory, its latest branch and version.
    fn note_session(&mut self, o: &Map<String, Value>) {
        self.summary.saw_timestamp(str_of(o, "timestamp"));
        let s = &mut self.summary;
        for (key, slot) in [
            ("sessionId", &mut s.session_id),
            ("agentId", &mut s.agent_id),
            ("cwd", &mut s.cwd),
        ] {
            if slot.is_none()
                && let Some(v) = str_of(o, key).filter(|v| !v.is_empty())
            {
                *slot = Some(v.to_string());
            }
        }
        for (key, slot) in [
            ("gitBranch", &mut s.git_branch),
            ("version", &mut s.agent_version),
        ] {
            if let Some(v) = str_of(o, key).filter(|v| !v.is_empty()) {
                *slot = Some(v.to_string());
            }
        }
    }

    /// A `summary` line as a system message; the first non-blank one is
    /// also the session's title.
    fn summary_line(&mut self, o: &Map<String, Value>, meta: Map<String, Value>) -> Message {
        let text = str_of(o, "summary").unwrap_or_default();
        if self.summary.title.is_none() && !text.trim().is_empty() {
            let title = crate::limits::cut_at(text.trim(), PROMPT_BYTES);
            self.summary.title = Some(title.to_string());
        }
        message("system", vec![text_block("summary", text)], meta)
    }

    fn assistant(
        &mut self,
        no: u64,
        o: &mut Map<String, Value>,
        meta: Map<String, Value>,
        inline_sidechain: bool,
    ) -> Vec<Message> {
        self.message_lines += 1;
        self.sidechain_lines +=
            u64::from(o.get("isSidechain").and_then(Value::as_bool) == Some(true));
        let a = AssistantLine::read(o);
        let added = match a.usage {
            Some(u) => self.count_usage(&a, u, str_of(o, "uuid"), inline_sidechain),
            None => None,
        };
        let blocks = content(o);
        let same_stream =
            a.msg_id.is_some() && self.pending.as_ref().is_some_and(|p| p.id == a.msg_id);
        if same_stream && let Some(p) = &mut self.pending {
            p.continue_with(no, &a, blocks, added);
            return vec![];
        }
        let out = self.flush().into_iter().collect();
        self.pending = Some(Pending::start(a, blocks, meta, added));
        out
    }

    /// Counts one line's usage once per call, and returns what it adds to
    /// the count: all of it for a call not seen before, what it raises the
    /// call's largest entry by otherwise. Stored on the message, it lets a
    /// page show each turn's share.
    fn count_usage(
        &mut self,
        a: &AssistantLine,
        u: Usage,
        uuid: Option<&str>,
        inline_sidechain: bool,
    ) -> Option<Usage> {
        if !inline_sidechain {
            self.summary.latest_total_tokens = u.total_tokens;
            self.summary.peak_total_tokens = self.summary.peak_total_tokens.max(u.total_tokens);
        }
        let counted = Counted {
            usage: u,
            model: a.model.clone(),
            timestamp: a.ts.clone(),
            inline_sidechain,
        };
        // A line lacking either id counts alone; the same line written
        // twice (same `uuid`, as a resumed session copies it) is still
        // one line.
        let key = match (&a.msg_id, &a.request_id, uuid) {
            (Some(m), Some(r), _) => Some((m.clone(), r.clone())),
            (_, _, Some(uuid)) => Some((String::new(), uuid.to_string())),
            _ => None,
        };
        let Some(key) = key else {
            self.count(&counted);
            return Some(u);
        };
        match self.streams.entry(key) {
            Entry::Occupied(mut slot) => {
                if u.total_tokens > slot.get().usage.total_tokens {
                    let added = u.minus(&slot.get().usage);
                    slot.insert(counted);
                    Some(added)
                } else {
                    None
                }
            }
            Entry::Vacant(slot) => {
                slot.insert(counted);
                Some(u)
            }
        }
    }

    fn count(&mut self, c: &Counted) {
        let book = &mut self.summary.usage;
        book.add(c.model.as_deref(), c.timestamp.as_deref(), c.usage);
        if c.inline_sidechain {
            book.sidechain += c.usage;
        }
    }

    fn flush(&mut self) -> Option<Message> {
        let p = self.pending.take()?;
        let mut m = p.message;
        if let (Some(c), Some(Value::Object(meta))) = (p.counted, &mut m.metadata) {
            meta.insert(super::COUNTED_KEY.into(), super::usage_value(&c));
        }
        if let Some(u) = p.usage {
            // Claude's own counts, and seed 003's (`prompt_tokens`,
            // `completion_tokens`), by [`Usage::prompt_tokens`]'s rule.
            m.usage = Some(serde_json::json!({
                "input_tokens": u.input_tokens,
                "output_tokens": u.output_tokens,
                "cache_creation_input_tokens": u.cache_creation_input_tokens,
                "cache_read_input_tokens": u.cache_read_input_tokens,
                "total_tokens": u.total_tokens,
                "prompt_tokens": u.prompt_tokens(),
                "completion_tokens": u.completion_tokens(),
            }));
        }
        Some(m)
    }

    pub(super) fn finish(mut self) -> (Option<Message>, LogSummary) {
        let last = self.flush();
        let mut streams: Vec<((String, String), Counted)> =
            std::mem::take(&mut self.streams).into_iter().collect();
        // The books are ordered maps, so the order counted in does not
        // change the result; sorting keeps the calls list reproducible.
        streams.sort_by(|a, b| a.0.cmp(&b.0));
        for ((msg, req), c) in &streams {
            self.count(c);
            // Keyed by uuid (empty message id): a line, not a call.
            if !msg.is_empty() {
                let u = c.usage;
                self.summary.usage.calls.push(super::Call(
                    format!("{msg}:{req}"),
                    c.model
                        .clone()
                        .filter(|m| !m.is_empty())
                        .unwrap_or_else(|| "unknown".into()),
                    super::day_of(c.timestamp.as_deref()),
                    u.input_tokens,
                    u.output_tokens,
                    u.cache_creation_input_tokens,
                    u.cache_read_input_tokens,
                ));
            }
        }
        self.summary.all_sidechain =
            self.message_lines > 0 && self.sidechain_lines == self.message_lines;
        (last, self.summary)
    }
}

/// A user line: its content, with a Task call's result naming the
/// subagent it ran (`toolUseResult.agentId`), so that its card can link the
/// subagent's transcript.
fn user(o: &mut Map<String, Value>, meta: Map<String, Value>) -> Message {
    let agent = o
        .get("toolUseResult")
        .and_then(|r| r.get("agentId"))
        .and_then(Value::as_str)
        .filter(|a| !a.is_empty())
        .map(str::to_string);
    let mut blocks = content(o);
    if let Some(agent) = agent {
        for b in &mut blocks {
            if let Value::Object(b) = b
                && str_of(b, "type") == Some("tool_result")
            {
                b.insert(super::AGENT_ID_KEY.into(), agent.clone().into());
            }
        }
    }
    message("user", blocks, meta)
}

/// The summary Claude Code writes after a `compact_boundary` as a user
/// line (`isCompactSummary`): no one typed it, so it is kept as a system
/// message whose `compress` block holds the summary (marked
/// `compactSummary`), shown with the boundary, never as a prompt.
fn compact_summary(o: &mut Map<String, Value>, meta: Map<String, Value>) -> Message {
    let text = content(o)
        .iter()
        .filter_map(|b| b.get("content").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("\n");
    let mut block = Map::new();
    block.insert("type".into(), "compress".into());
    block.insert("content".into(), text.into());
    block.insert(super::SUMMARY_FLAG.into(), Value::Bool(true));
    message("system", vec![Value::Object(block)], meta)
}

/// Claude's `message.content` (a string, or an array of content blocks) as
/// seed 003 blocks: `text`, `thinking`, `tool` (with `parameters` as JSON
/// text, like the seed's example) and `tool_result`; other blocks as given.
/// The content is moved out of the line's object, not copied: one line
/// (a pasted file) may hold hundreds of MiB of it.
fn content(o: &mut Map<String, Value>) -> Vec<Value> {
    let content = o
        .get_mut("message")
        .and_then(|m| m.get_mut("content"))
        .map(Value::take);
    match content {
        Some(Value::String(s)) => vec![text_block("text", s)],
        Some(Value::Array(items)) => items.into_iter().map(block).collect(),
        Some(Value::Null) | None => vec![],
        Some(other) => vec![other],
    }
}

fn block(item: Value) -> Value {
    let Value::Object(mut o) = item else {
        return item;
    };
    let ty = str_of(&o, "type").map(str::to_string);
    match ty.as_deref() {
        Some("text") => text_block("text", take_str(&mut o, "text")),
        Some("thinking") => text_block("thinking", take_str(&mut o, "thinking")),
        Some("tool_use") => {
            let mut b = Map::new();
            b.insert("type".into(), "tool".into());
            if let Some(id) = o.get("id") {
                b.insert("id".into(), id.clone());
            }
            b.insert("name".into(), o.get("name").cloned().unwrap_or(Value::Null));
            let params = o.get("input").map(Value::to_string).unwrap_or_default();
            b.insert("parameters".into(), params.into());
            Value::Object(b)
        }
        Some("tool_result") => {
            let mut b = Map::new();
            b.insert("type".into(), "tool_result".into());
            if let Some(id) = o.get("tool_use_id") {
                b.insert("toolUseId".into(), id.clone());
            }
            b.insert(
                "result".into(),
                o.get("content").map(result_text).unwrap_or_default().into(),
            );
            if let Some(e) = o.get("is_error") {
                b.insert("isError".into(), e.clone());
            }
            Value::Object(b)
        }
        _ => Value::Object(o),
    }
}

/// A tool result's text: a string, or the `text` of its content items.
fn result_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .filter_map(|i| i.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// The streams map as a list of `[message id, request id, usage counts,
/// model, timestamp, inline sidechain]` (JSON keys are strings, not pairs;
/// the counts a bare array, as a long session has thousands of streams),
/// sorted so a checkpoint of the same state is the same bytes.
mod streams {
    use std::collections::HashMap;

    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::{Counted, Usage};

    type Entry = (
        String,
        String,
        [u64; 7],
        Option<String>,
        Option<String>,
        bool,
    );

    pub(super) fn serialize<S: Serializer>(
        map: &HashMap<(String, String), Counted>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        let mut list: Vec<(&String, &String, &Counted)> =
            map.iter().map(|((m, r), c)| (m, r, c)).collect();
        list.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
        let list: Vec<Entry> = list
            .into_iter()
            .map(|(m, r, c)| {
                (
                    m.clone(),
                    r.clone(),
                    c.usage.counts(),
                    c.model.clone(),
                    c.timestamp.clone(),
                    c.inline_sidechain,
                )
            })
            .collect();
        list.serialize(s)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<HashMap<(String, String), Counted>, D::Error> {
        let list = Vec::<Entry>::deserialize(d)?;
        Ok(list
            .into_iter()
            .map(|(m, r, n, model, timestamp, inline_sidechain)| {
                let usage = Usage::from_counts(n);
                let c = Counted {
                    usage,
                    model,
                    timestamp,
                    inline_sidechain,
                };
                ((m, r), c)
            })
            .collect())
    }
}

/// Claude Code as a [`super::agents::LogAgent`].
pub struct ClaudeCode;

/// The line types Claude Code writes.
const LINE_TYPES: [&str; 7] = [
    "user",
    "assistant",
    "summary",
    "system",
    "progress",
    "file-history-snapshot",
    "queue-operation",
];

impl super::agents::LogAgent for ClaudeCode {
    fn format(&self) -> super::Format {
        super::Format::ClaudeCode
    }

    fn wrote(&self, line: &super::agents::FirstLine<'_>) -> bool {
        line.session || LINE_TYPES.contains(&line.ty)
    }

    fn owns_path(&self, path: &std::path::Path) -> bool {
        let s = path.to_string_lossy();
        s.contains("/.claude/projects/") || s.contains("/subagents/agent-")
    }

    fn log_roots(
        &self,
        home: Option<&std::path::Path>,
        env: &dyn Fn(&str) -> Option<std::ffi::OsString>,
    ) -> Vec<std::path::PathBuf> {
        let mut dirs: Vec<std::path::PathBuf> = env("CLAUDE_CONFIG_DIR")
            .map(|v| std::env::split_paths(&v).collect())
            .unwrap_or_default();
        dirs.extend(home.map(|h| h.join(".claude")));
        dirs.into_iter().map(|d| d.join("projects")).collect()
    }

    fn identity(&self, path: &std::path::Path, summary: &LogSummary) -> Option<super::Identity> {
        identity(path, summary)
    }

    fn usage_rule(&self) -> &'static str {
        "each call counted once: per (message.id, requestId) the streamed entry with the largest input + output + cache-creation + cache-read total; assistant lines only"
    }

    fn hooks(&self) -> Option<crate::hook::settings::HookAgent> {
        Some(crate::hook::settings::HookAgent::ClaudeCode)
    }
}

/// The transcript of a Claude Code log: a main session's file is
/// `<session uuid>.jsonl`; a subagent (`agentId` on its lines, or a file
/// `subagents/agent-<id>.jsonl`) is [`super::subagent_id`] of the session
/// and agent ids, its parent the `sessionId` its lines carry.
fn identity(path: &std::path::Path, summary: &LogSummary) -> Option<super::Identity> {
    use super::{Identity, is_session_uuid as is_uuid, subagent_id};
    let stem = path.file_stem()?.to_string_lossy();
    let in_subagents = path
        .parent()
        .and_then(|d| d.file_name())
        .is_some_and(|n| n == "subagents");
    let agent = summary
        .agent_id
        .clone()
        .or_else(|| in_subagents.then(|| stem.trim_start_matches("agent-").to_string()));
    match agent {
        Some(agent) => {
            let session = summary.session_id.clone().or_else(|| {
                // `<session>/subagents/agent-<id>.jsonl`
                let dir = path.parent()?.parent()?.file_name()?;
                Some(dir.to_string_lossy().into_owned())
            })?;
            let parent = is_uuid(&session).then(|| session.to_ascii_lowercase());
            Some(Identity {
                id: subagent_id(&session, &agent),
                parent,
                fork_of: None,
            })
        }
        None => {
            let id = if is_uuid(&stem) {
                stem.to_string()
            } else {
                summary.session_id.clone().filter(|s| is_uuid(s))?
            };
            Some(Identity {
                id: id.to_ascii_lowercase(),
                parent: None,
                fork_of: None,
            })
        }
    }
}
