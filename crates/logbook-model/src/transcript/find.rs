//! What find-in-transcript searches, message by message, and which
//! messages hold a failed tool result: gathered as messages are written or
//! read, so the index can say WHICH message matches, not only that the
//! transcript does.
//!
//! A message says its text blocks (and bare strings), its thinking and
//! compaction summaries, each tool call's name and the text of its input
//! (a Bash command, a path, a pattern, an edit's strings), and the start of
//! each tool result. Each tool input and result counts up to
//! [`super::TOOL_RESULT_BYTES`], and the whole message up to
//! [`MESSAGE_SAID_BYTES`]: a file dumped into the conversation is found by
//! its first lines, not indexed whole.
//!
//! ```
//! use logbook_model::transcript::{Message, find::MessageText};
//! let m = |v: serde_json::Value| -> Message { serde_json::from_value(v).unwrap() };
//! let mut found = MessageText::new(0);
//! found.push(&m(serde_json::json!({"role": "assistant", "blocks": [
//!     {"type": "tool", "id": "t1", "name": "Bash", "parameters": "{\"command\":\"make lint\"}"}]})));
//! found.push(&m(serde_json::json!({"role": "user", "blocks": [
//!     {"type": "tool_result", "toolUseId": "t1", "result": "boom", "isError": true}]})));
//! assert!(found.said[0].contains("make lint"));
//! assert_eq!(found.errors, vec![1]);
//! ```

use serde_json::Value;

use super::tools::{self, holds_failure};
use super::{Message, TOOL_RESULT_BYTES};
use crate::limits::cut_at;

/// The most text of one message whose words find-in-transcript indexes.
pub const MESSAGE_SAID_BYTES: usize = 4096;

/// Messages past this index are not searchable by message: the index keys
/// a message's row by its transcript's row and its index in 24 bits.
pub const MAX_FOUND_MESSAGES: usize = 1 << 24;

/// The most text a [`MessageText`] holds in memory: past it, the messages'
/// text is left for the index to read from the stored file, one message
/// at a time, so that gathering a huge session's text stays bounded.
pub const MESSAGE_TEXT_BUDGET: usize = 16 << 20;

/// What each message of a run of messages says, and which of them hold a
/// failed tool result, starting at message [`MessageText::from`] (an
/// incremental import gathers only the messages it appends).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MessageText {
    /// The index of the first message gathered.
    pub from: usize,
    /// What each message says, in order, the first being message `from`,
    /// up to [`MessageText::cut`].
    pub said: Vec<String>,
    /// The indexes of the messages holding a failed tool result, ascending
    /// (all of them, past the cut too).
    pub errors: Vec<usize>,
    /// The first message whose text was not kept, the budget being spent:
    /// its text and the later ones' are to be read from the file.
    pub cut: Option<usize>,
    count: usize,
    bytes: usize,
}

impl MessageText {
    /// An empty gathering that starts at message `from`.
    pub fn new(from: usize) -> MessageText {
        MessageText {
            from,
            ..MessageText::default()
        }
    }

    /// What every message of `messages` says, from the first.
    pub fn of(messages: &[Message]) -> MessageText {
        let mut out = MessageText::new(0);
        for m in messages {
            out.push(m);
        }
        out
    }

    /// Adds a message that says nothing (one that did not parse): the
    /// messages after it keep their indexes.
    pub fn skip(&mut self) {
        if self.from + self.count < MAX_FOUND_MESSAGES {
            self.count += 1;
            if self.cut.is_none() {
                self.said.push(String::new());
            }
        }
    }

    /// Adds the next message.
    pub fn push(&mut self, m: &Message) {
        let at = self.from + self.count;
        if at >= MAX_FOUND_MESSAGES {
            return;
        }
        self.count += 1;
        if self.cut.is_none() {
            let said = said_by(m);
            self.bytes += said.len();
            if self.bytes > MESSAGE_TEXT_BUDGET {
                self.cut = Some(at);
            } else {
                self.said.push(said);
            }
        }
        if holds_failure(m) {
            self.errors.push(at);
        }
    }
}

/// What one message says for find-in-transcript (see the module's doc).
pub fn said_by(m: &Message) -> String {
    let mut out = String::new();
    // A tool output Claude Code persisted apart was read back whole (up to
    // a bound) so that it is found past its preview: it says more.
    let cap = if m.blocks.iter().any(super::persisted) {
        super::PERSISTED_SAID_BYTES
    } else {
        MESSAGE_SAID_BYTES
    };
    let mut add = |text: &str, limit: usize| {
        if text.trim().is_empty() || out.len() >= cap {
            return;
        }
        let room = (cap - out.len()).min(limit);
        out.push_str(cut_at(text, room));
        out.push('\n');
    };
    let pairing = tools::pair(std::slice::from_ref(m));
    let mut calls = pairing.calls.iter();
    for b in &m.blocks {
        match b {
            Value::String(s) => add(s, usize::MAX),
            Value::Object(o) => match o.get("type").and_then(Value::as_str) {
                Some("text" | "thinking" | "compress") => add(
                    o.get("content")
                        .or_else(|| o.get("text"))
                        .or_else(|| o.get("thinking"))
                        .and_then(Value::as_str)
                        .unwrap_or_default(),
                    usize::MAX,
                ),
                Some("tool") => {
                    let Some(call) = calls.next() else { continue };
                    let mut input = call.name.clone();
                    input.push('\n');
                    strings_of(&call.input, &mut input);
                    add(&input, TOOL_RESULT_BYTES);
                    if let Some(r) = &call.result {
                        add(&r.text, TOOL_RESULT_BYTES);
                    }
                }
                Some("tool_result") => add(
                    &tool_result_text(o.get("result").or_else(|| o.get("content"))),
                    super::result_bytes(b),
                ),
                _ => {}
            },
            _ => {}
        }
    }
    out
}

/// A tool result's text as the viewer shows it (Codex's JSON-wrapped output
/// is its `output`).
fn tool_result_text(v: Option<&Value>) -> String {
    let raw = match v {
        Some(Value::String(s)) => s.as_str(),
        Some(Value::Null) | None => return String::new(),
        Some(other) => return other.to_string(),
    };
    if raw.trim_start().starts_with('{')
        && let Ok(Value::Object(o)) = serde_json::from_str::<Value>(raw)
        && let Some(output) = o.get("output").and_then(Value::as_str)
    {
        return output.to_string();
    }
    raw.to_string()
}

/// The string values in a tool's input, one a line, stopping once there is
/// more than a tool input counts.
fn strings_of(v: &Value, out: &mut String) {
    if out.len() > TOOL_RESULT_BYTES {
        return;
    }
    match v {
        Value::String(s) => {
            out.push_str(cut_at(s, TOOL_RESULT_BYTES));
            out.push('\n');
        }
        Value::Array(items) => items.iter().for_each(|i| strings_of(i, out)),
        Value::Object(o) => o.values().for_each(|i| strings_of(i, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn msg(role: &str, blocks: Value) -> Message {
        serde_json::from_value(json!({"role": role, "blocks": blocks})).unwrap()
    }

    #[test]
    fn a_message_says_its_text_tool_inputs_and_results_capped() {
        let big = "x".repeat(10_000);
        let m = msg(
            "assistant",
            json!([
                {"type": "text", "content": "Looking"},
                {"type": "tool", "id": "a", "name": "Grep", "parameters": "{\"pattern\":\"fn zebra\"}"},
                {"type": "tool", "name": "w", "parameters": "{}", "result": "inline words"},
                {"type": "tool_result", "toolUseId": "q", "result": "{\"output\":\"codex out\",\"metadata\":{\"exit_code\":0}}"},
                {"type": "tool_result", "toolUseId": "r", "result": big},
                {"type": "text", "content": big}
            ]),
        );
        let said = said_by(&m);
        for w in ["Looking", "Grep", "fn zebra", "inline words", "codex out"] {
            assert!(said.contains(w), "{w} missing from {said:?}");
        }
        assert!(!said.contains("metadata"));
        assert!(said.len() <= MESSAGE_SAID_BYTES + 16);
        // A long result counts only its start, so the text after it still fits.
        assert!(said.matches('x').count() < MESSAGE_SAID_BYTES);
        assert!(said.matches('x').count() > TOOL_RESULT_BYTES);
    }

    #[test]
    fn gathering_goes_on_from_an_index_and_marks_failures() {
        let mut t = MessageText::new(7);
        t.push(&msg("user", json!(["hi"])));
        t.push(&msg(
            "user",
            json!([{"type": "tool_result", "toolUseId": "a", "result": "Exit code: 2\nno"}]),
        ));
        assert_eq!(t.said.len(), 2);
        assert_eq!(t.errors, vec![8]);
    }

    #[test]
    fn past_the_budget_text_is_left_to_the_file_and_errors_are_kept() {
        let big = "y".repeat(MESSAGE_SAID_BYTES);
        let mut t = MessageText::new(0);
        let per = said_by(&msg("user", json!([big.clone()]))).len();
        let fits = MESSAGE_TEXT_BUDGET / per;
        for _ in 0..fits + 3 {
            t.push(&msg("user", json!([big.clone()])));
        }
        t.push(&msg(
            "user",
            json!([{"type": "tool_result", "result": "x", "isError": true}]),
        ));
        assert_eq!(t.cut, Some(fits));
        assert_eq!(t.said.len(), fits);
        assert_eq!(t.errors, vec![fits + 3]);
    }
}
