//! OpenAI Codex CLI's rollout logs: one `{timestamp, type, payload}` object
//! per line, `type` one of `session_meta` (id, cwd, cli_version, git),
//! `turn_context` (the `model` of the turns that follow), `response_item`
//! (messages, function calls and their output, reasoning), `compacted`
//! and `event_msg`.
//!
//! Usage comes only from `event_msg` lines with `payload.type =
//! token_count`, whose `info` (possibly null) holds the cumulative
//! `total_token_usage`. Codex repeats an event unchanged, so an event counts
//! only for what it adds to the previous total: the session's usage is its
//! last cumulative total, attributed to the model in effect when it grew.
//! `input_tokens` already includes `cached_input_tokens`.
//!
//! A fork (`codex fork`, `InitialHistory::Forked`) and a subagent spawned
//! with its parent's history begin with a copy of the parent's items (its
//! `session_meta`, messages, final answers and `token_count` events), and
//! the child's counter goes on from the parent's last total. The first
//! `session_meta` is the file's own; the copy is recognized from the log
//! ([`Copy`]): by `ordinal` below the child's
//! `subagent_history_start_ordinal` where Codex writes them, else from the
//! copied `session_meta` of another thread (the replay marker, naming the
//! parent) through the lines written in the same burst or dated before the
//! child began. Copied lines stay raw lines only: no messages, and their
//! `token_count` totals are the baseline the child's own calls grow from.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{Line, LogSummary, Usage, message, object, str_of, take_str, text_block};
use crate::transcript::Message;

/// The state of one Codex log being read.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub struct Parser {
    pub(super) summary: LogSummary,
    model: Option<String>,
    total: Usage,
    /// Messages waiting for a tool's result (see [`super::pairing`]).
    #[serde(default)]
    pub(super) pairing: super::pairing::Pairing,
    /// Where the copied prefix of a fork or spawned subagent is.
    #[serde(default)]
    copy: Copy,
}

/// What tells a child's copied prefix from its own lines.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
struct Copy {
    /// Whether the file's own `session_meta` was read.
    owned: bool,
    /// Its thread id: a header repeating it is not a copy.
    #[serde(default)]
    own_id: Option<String>,
    /// Its timestamp: a copied line that kept its date is older.
    born: Option<String>,
    /// `subagent_history_start_ordinal`: lines with a lower `ordinal` are
    /// copied.
    start_ordinal: Option<u64>,
    /// A page of a paginated thread (`history_base` in its header): its
    /// first count goes on from the base's total, which this file may not
    /// hold, so that count is taken as its own call's.
    #[serde(default)]
    continues: bool,
    /// Whether a `token_count` was read (copied or not).
    #[serde(default)]
    counted: bool,
    /// In a replay that began with another thread's `session_meta`: the
    /// timestamp of the last copied line (empty when it had none).
    replaying: Option<String>,
}

/// Codex writes a copied history in one batch: lines of a replay further
/// apart than this are the child's own.
const REPLAY_BURST_MS: i64 = 1_000;

impl Copy {
    /// Whether the line `o` (of type `ty`) is part of a copied prefix.
    fn copied(&mut self, o: &Map<String, Value>, ty: &str) -> bool {
        if !self.owned {
            return false;
        }
        let ordinal = o.get("ordinal").and_then(Value::as_u64);
        if let (Some(start), Some(n)) = (self.start_ordinal, ordinal) {
            return n < start;
        }
        let ts = str_of(o, "timestamp").unwrap_or("");
        if ty == "session_meta" {
            let id = o
                .get("payload")
                .and_then(|p| p.get("id"))
                .and_then(Value::as_str);
            if id.is_some() && id == self.own_id.as_deref() {
                return false;
            }
            // Another thread's header: the parent's, copied.
            self.replaying = Some(ts.to_string());
            return true;
        }
        let Some(last) = &self.replaying else {
            return false;
        };
        let older = self
            .born
            .as_deref()
            .is_some_and(|b| !ts.is_empty() && earlier(ts, b));
        let burst = ts.is_empty() || last.is_empty() || within_burst(last, ts);
        if older || burst {
            self.replaying = Some(ts.to_string());
            true
        } else {
            self.replaying = None;
            false
        }
    }
}

/// Whether timestamp `a` is before `b` (both RFC 3339).
fn earlier(a: &str, b: &str) -> bool {
    match (crate::clock::parse(a), crate::clock::parse(b)) {
        (Some(a), Some(b)) => a < b,
        _ => false,
    }
}

/// Whether `next` comes at most [`REPLAY_BURST_MS`] after `last`.
fn within_burst(last: &str, next: &str) -> bool {
    match (crate::clock::parse(last), crate::clock::parse(next)) {
        (Some(a), Some(b)) => b.as_millisecond() - a.as_millisecond() <= REPLAY_BURST_MS,
        _ => true,
    }
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
        let ts = str_of(&o, "timestamp");
        let empty = Map::new();
        let payload = o
            .get("payload")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let ty = str_of(&o, "type").unwrap_or("");
        if self.copy.copied(&o, ty) {
            self.copied_line(ty, payload);
            return vec![];
        }
        self.summary.saw_timestamp(ts);
        let mut meta = Map::new();
        meta.insert("line".into(), no.into());
        if let Some(ts) = ts {
            meta.insert("timestamp".into(), ts.into());
        }
        let s = &mut self.summary;
        match ty {
            "session_meta" => {
                self.session_meta(payload, ts);
                vec![]
            }
            "turn_context" => {
                if let Some(m) = str_of(payload, "model").filter(|m| !m.is_empty()) {
                    self.model = Some(m.to_string());
                }
                if s.cwd.is_none() {
                    s.cwd = str_of(payload, "cwd").map(str::to_string);
                }
                vec![]
            }
            "response_item" => {
                // Moved out, not copied: one item may be a line's worth.
                let payload = match o.remove("payload") {
                    Some(Value::Object(p)) => p,
                    _ => Map::new(),
                };
                self.response_item(payload, meta).into_iter().collect()
            }
            "compacted" => {
                let text = str_of(payload, "message").unwrap_or_default();
                vec![message("system", vec![text_block("compress", text)], meta)]
            }
            "event_msg" => {
                if str_of(payload, "type") == Some("token_count") {
                    self.token_count(payload, ts);
                }
                vec![]
            }
            other => {
                *s.unknown_types.entry(other.to_string()).or_default() += 1;
                vec![]
            }
        }
    }

    /// The file's own header: who the session is, and whose copy it
    /// begins with (a fork's `forked_from_id`, a spawned subagent's
    /// parent thread).
    fn session_meta(&mut self, payload: &Map<String, Value>, ts: Option<&str>) {
        let s = &mut self.summary;
        let set = |slot: &mut Option<String>, v: Option<&str>| {
            if let Some(v) = v.filter(|v| !v.is_empty()) {
                *slot = Some(v.to_string());
            }
        };
        if s.session_id.is_none() {
            set(&mut s.session_id, str_of(payload, "id"));
        }
        if s.cwd.is_none() {
            set(&mut s.cwd, str_of(payload, "cwd"));
        }
        set(&mut s.agent_version, str_of(payload, "cli_version"));
        let branch = payload
            .get("git")
            .and_then(|g| g.get("branch"))
            .and_then(Value::as_str);
        set(&mut s.git_branch, branch);
        if self.copy.owned {
            return;
        }
        self.copy.owned = true;
        self.copy.own_id = str_of(payload, "id").map(str::to_string);
        self.copy.born = str_of(payload, "timestamp").or(ts).map(str::to_string);
        let base = payload.get("history_base").filter(|b| b.is_object());
        self.copy.continues = base.is_some();
        // Lines below the spawn's start, or the base's end, are copied.
        self.copy.start_ordinal = payload
            .get("subagent_history_start_ordinal")
            .and_then(Value::as_u64)
            .or_else(|| base?.get("end_ordinal_exclusive")?.as_u64());
        let base_thread = base
            .and_then(|b| b.get("thread_id"))
            .and_then(Value::as_str);
        set(&mut s.continues, base_thread);
        let spawned = payload
            .get("source")
            .and_then(|v| v.get("subagent"))
            .and_then(|v| v.get("thread_spawn"))
            .and_then(|v| v.get("parent_thread_id"))
            .and_then(Value::as_str)
            .or_else(|| str_of(payload, "parent_thread_id"));
        set(&mut s.parent_id, spawned);
        if s.parent_id.is_none() {
            set(&mut s.fork_of, str_of(payload, "forked_from_id"));
        }
    }

    /// A line of a copied prefix: nothing of it is the child's but the
    /// model in effect and the count its own calls go on from.
    fn copied_line(&mut self, ty: &str, payload: &Map<String, Value>) {
        self.summary.copied_lines += 1;
        match ty {
            "turn_context" => {
                if let Some(m) = str_of(payload, "model").filter(|m| !m.is_empty()) {
                    self.model = Some(m.to_string());
                }
            }
            "event_msg" if str_of(payload, "type") == Some("token_count") => {
                let total = payload
                    .get("info")
                    .and_then(|i| i.get("total_token_usage"))
                    .and_then(Usage::from_codex);
                if let Some(total) = total {
                    self.total = total;
                    self.copy.counted = true;
                }
            }
            "session_meta" => {
                // The replay marker names the thread copied from.
                let s = &mut self.summary;
                if s.parent_id.is_none() && s.fork_of.is_none() {
                    s.fork_of = str_of(payload, "id").map(str::to_string);
                }
            }
            _ => {}
        }
    }

    fn token_count(&mut self, payload: &Map<String, Value>, ts: Option<&str>) {
        let Some(info) = payload.get("info").and_then(Value::as_object) else {
            return; // `info: null`: nothing measured yet
        };
        let Some(total) = info.get("total_token_usage").and_then(Usage::from_codex) else {
            return;
        };
        let last = info.get("last_token_usage").and_then(Usage::from_codex);
        if self.copy.continues && !self.copy.counted {
            // A page's first count: the base's total is in it.
            self.total = total.minus(&last.unwrap_or(total));
        }
        self.copy.counted = true;
        if let Some(grew) = total.growth_over(&self.total) {
            self.summary.usage.add(self.model.as_deref(), ts, grew);
            self.total = total;
            // The context of this call: `last_token_usage`, or what the
            // total grew by when an older Codex did not write it.
            let last = last.unwrap_or(grew);
            self.summary.latest_total_tokens = last.total_tokens;
            self.summary.peak_total_tokens = self.summary.peak_total_tokens.max(last.total_tokens);
        }
    }

    fn response_item(
        &mut self,
        mut p: Map<String, Value>,
        mut meta: Map<String, Value>,
    ) -> Option<Message> {
        let ty = str_of(&p, "type").unwrap_or("").to_string();
        // What was counted before this item: a turn's tokens are what the
        // count grew by until the next assistant item (the `token_count`
        // events that follow it), see [`super::charged`].
        let before = super::usage_value(&self.summary.usage.total());
        let assistant = |mut meta: Map<String, Value>, model: &Option<String>, blocks| {
            if let Some(m) = model {
                meta.insert("model".into(), m.clone().into());
            }
            meta.insert(super::COUNTED_BEFORE_KEY.into(), before.clone());
            message("assistant", blocks, meta)
        };
        match ty.as_str() {
            "message" => {
                let role = str_of(&p, "role").unwrap_or("assistant").to_string();
                let blocks = message_blocks(&mut p);
                if role == "assistant" {
                    Some(assistant(meta, &self.model, blocks))
                } else {
                    Some(message(&role, blocks, meta))
                }
            }
            "function_call" | "custom_tool_call" => {
                let block = tool_call_block(&mut p);
                Some(assistant(meta, &self.model, vec![block]))
            }
            "local_shell_call" | "web_search_call" => {
                let block = action_call_block(&ty, &mut p);
                Some(assistant(meta, &self.model, vec![block]))
            }
            "function_call_output" | "custom_tool_call_output" => {
                Some(message("tool", vec![tool_result_block(&mut p)], meta))
            }
            "reasoning" => {
                let texts = reasoning_blocks(&p);
                (!texts.is_empty()).then(|| assistant(meta, &self.model, texts))
            }
            "" => None,
            other => {
                // Kept whole as a block, and counted: the format moved.
                let key = format!("response_item/{other}");
                *self.summary.unknown_types.entry(key).or_default() += 1;
                meta.insert("itemType".into(), other.into());
                Some(assistant(meta, &self.model, vec![Value::Object(p)]))
            }
        }
    }

    pub(super) fn finish(self) -> (Option<Message>, LogSummary) {
        (None, self.summary)
    }
}

/// A `message` item's content as seed 003 blocks.
fn message_blocks(p: &mut Map<String, Value>) -> Vec<Value> {
    match p.remove("content") {
        Some(Value::Array(items)) => items.into_iter().map(content_block).collect(),
        Some(Value::String(s)) => vec![text_block("text", s)],
        _ => vec![],
    }
}

/// A function or custom tool call as a seed 003 `tool` block, its
/// arguments (or input) as text.
fn tool_call_block(p: &mut Map<String, Value>) -> Value {
    let mut b = Map::new();
    b.insert("type".into(), "tool".into());
    if let Some(id) = p.get("call_id") {
        b.insert("id".into(), id.clone());
    }
    b.insert("name".into(), p.get("name").cloned().unwrap_or(Value::Null));
    let given = match p.remove("arguments") {
        Some(v) => Some(v),
        None => p.remove("input"),
    };
    let params = match given {
        Some(Value::String(s)) => s,
        Some(v) => v.to_string(),
        None => String::new(),
    };
    b.insert("parameters".into(), params.into());
    Value::Object(b)
}

/// A `local_shell_call` or `web_search_call` as a seed 003 `tool` block:
/// its `action` (the command, the query) as the parameters. A shell call's
/// output comes later as a `function_call_output` with its `call_id`, so
/// the block waits for it; a web search has no output item, so its block
/// is not left waiting (its item id is kept apart, not as the tool id).
fn action_call_block(ty: &str, p: &mut Map<String, Value>) -> Value {
    let mut b = Map::new();
    b.insert("type".into(), "tool".into());
    let shell = ty == "local_shell_call";
    match (shell, p.get("call_id"), p.get("id")) {
        (true, Some(id), _) | (true, None, Some(id)) => {
            b.insert("id".into(), id.clone());
        }
        (false, _, Some(id)) => {
            b.insert("itemId".into(), id.clone());
        }
        _ => {}
    }
    let name = if shell { "local_shell" } else { "web_search" };
    b.insert("name".into(), name.into());
    let params = match p.remove("action") {
        Some(Value::String(s)) => s,
        Some(v) => v.to_string(),
        None => String::new(),
    };
    b.insert("parameters".into(), params.into());
    if let Some(status) = p.get("status").filter(|_| !shell) {
        b.insert("status".into(), status.clone());
    }
    Value::Object(b)
}

/// A tool call's output as a seed 003 `tool_result` block, its output as
/// text (an object's `content` when it has one).
fn tool_result_block(p: &mut Map<String, Value>) -> Value {
    let mut b = Map::new();
    b.insert("type".into(), "tool_result".into());
    if let Some(id) = p.get("call_id") {
        b.insert("toolUseId".into(), id.clone());
    }
    let result = match p.remove("output") {
        Some(Value::String(s)) => s,
        Some(Value::Object(mut o)) => match o.get("content") {
            Some(Value::String(_)) => take_str(&mut o, "content"),
            _ => Value::Object(o).to_string(),
        },
        Some(v) => v.to_string(),
        None => String::new(),
    };
    b.insert("result".into(), result.into());
    Value::Object(b)
}

/// A `reasoning` item's summary texts as `thinking` blocks.
fn reasoning_blocks(p: &Map<String, Value>) -> Vec<Value> {
    p.get("summary")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|s| s.get("text").and_then(Value::as_str))
        .map(|t| text_block("thinking", t))
        .collect()
}

/// `input_text` / `output_text` / `text` items as seed 003 text blocks,
/// other items as given.
fn content_block(item: Value) -> Value {
    match item {
        Value::Object(mut o)
            if matches!(
                str_of(&o, "type"),
                Some("input_text" | "output_text" | "text")
            ) =>
        {
            text_block("text", take_str(&mut o, "text"))
        }
        other => other,
    }
}

/// Codex as a [`super::agents::LogAgent`].
pub struct Codex;

impl super::agents::LogAgent for Codex {
    fn format(&self) -> super::Format {
        super::Format::Codex
    }

    fn wrote(&self, line: &super::agents::FirstLine<'_>) -> bool {
        line.payload
            && matches!(
                line.ty,
                "session_meta" | "turn_context" | "response_item" | "compacted" | "event_msg"
            )
    }

    fn owns_path(&self, path: &std::path::Path) -> bool {
        let s = path.to_string_lossy();
        s.contains("/.codex/sessions/")
            || path
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("rollout-"))
    }

    fn log_roots(
        &self,
        home: Option<&std::path::Path>,
        env: &dyn Fn(&str) -> Option<std::ffi::OsString>,
    ) -> Vec<std::path::PathBuf> {
        env("CODEX_HOME")
            .map(std::path::PathBuf::from)
            .or_else(|| home.map(|h| h.join(".codex")))
            .map(|d| d.join("sessions"))
            .into_iter()
            .collect()
    }

    fn identity(&self, path: &std::path::Path, summary: &LogSummary) -> Option<super::Identity> {
        identity(path, summary)
    }

    fn usage_rule(&self) -> &'static str {
        "cumulative total_token_usage: an event counts what it adds to the previous total; a fork's or spawned subagent's copied counts are its starting point, not its calls"
    }

    fn hooks(&self) -> Option<crate::hook::settings::HookAgent> {
        Some(crate::hook::settings::HookAgent::Codex)
    }
}

/// The transcript of a Codex log: `session_meta`'s id, else the UUID that
/// ends the file name; a continuation page its own id; the parent of a
/// spawned subagent and what a fork was forked from.
fn identity(path: &std::path::Path, summary: &LogSummary) -> Option<super::Identity> {
    use super::{Identity, is_session_uuid as is_uuid, name_uuid};
    let stem = path.file_stem()?.to_string_lossy();
    let from_name = stem
        .len()
        .checked_sub(36)
        .and_then(|at| stem.get(at..))
        .filter(|s| is_uuid(s));
    let id = summary
        .session_id
        .as_deref()
        .filter(|s| is_uuid(s))
        .or(from_name)?;
    // A continuation page shares its thread's id: it is a
    // transcript of its own, named by its thread and file.
    let revision = stem.rsplit_once('_').is_some_and(|(head, rev)| {
        !rev.is_empty()
            && rev.bytes().all(|b| b.is_ascii_digit())
            && head
                .get(head.len().saturating_sub(36)..)
                .is_some_and(is_uuid)
    });
    let page = summary.continues.is_some() || revision;
    let id = if page {
        name_uuid(&format!("codex:{}:{stem}", id.to_ascii_lowercase()))
    } else {
        id.to_string()
    };
    let lower = |s: &Option<String>| {
        s.as_deref()
            .filter(|s| is_uuid(s))
            .map(str::to_ascii_lowercase)
    };
    Some(Identity {
        id: id.to_ascii_lowercase(),
        parent: lower(&summary.parent_id),
        fork_of: lower(&summary.fork_of),
    })
}
