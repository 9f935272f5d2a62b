//! Tool calls paired with their results, across messages: what a handoff
//! reads (files changed, commands that failed) and what a viewer renders.
//!
//! Imported agent logs store a call as a block `{"type": "tool", "id",
//! "name", "parameters"}` (the parameters as JSON text) and its result,
//! usually in a later message, as `{"type": "tool_result", "toolUseId",
//! "result", "isError"}`. Codex gives no error flag: a shell command's
//! output carries its exit code, either as JSON (`{"output", "metadata":
//! {"exit_code"}}`) or as text beginning `Exit code: N`. A seed 003 tool
//! block may also hold its `result` inline.
//!
//! Nothing is dropped: a call whose result never came is pending, and a
//! result whose call is not in the transcript (cut by a compaction, or a
//! log imported from its middle) is kept as an orphan.
//!
//! ```
//! use logbook_model::transcript::{Message, tools};
//! let m = |v: serde_json::Value| -> Message { serde_json::from_value(v).unwrap() };
//! let messages = vec![
//!     m(serde_json::json!({"role": "assistant", "blocks": [
//!         {"type": "tool", "id": "t1", "name": "Bash", "parameters": "{\"command\":\"make\"}"}]})),
//!     m(serde_json::json!({"role": "user", "blocks": [
//!         {"type": "tool_result", "toolUseId": "t1", "result": "error", "isError": true}]})),
//! ];
//! let pairs = tools::pair(&messages);
//! assert_eq!(pairs.calls[0].input["command"], "make");
//! assert!(pairs.calls[0].failed());
//! ```

use std::collections::HashMap;

use serde::Serialize;
use serde_json::{Map, Value};

use super::Message;

/// One tool call and, once it came, its result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolCall {
    /// The id the agent gave the call (`tool_use` id, Codex `call_id`), if any.
    pub id: Option<String>,
    /// The tool's name (`Bash`, `Edit`, `shell`, `apply_patch`…).
    pub name: String,
    /// The parameters, parsed; text that is not JSON (Codex's freeform
    /// `apply_patch` input) is kept as a string.
    pub input: Value,
    /// The index of the message holding the call.
    pub message: usize,
    /// The index of the call's block within that message.
    pub block: usize,
    /// The result, or `None` while the call is pending.
    pub result: Option<ToolResult>,
}

/// What a tool answered.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolResult {
    /// The id of the call it answers, as the result names it.
    pub tool_use_id: Option<String>,
    /// The output text (for Codex's JSON-wrapped output, its `output`).
    pub text: String,
    /// Whether the tool failed: the agent's error flag, or a non-zero exit code.
    pub is_error: bool,
    /// A command's exit code, when the output says it.
    pub exit_code: Option<i64>,
    /// The index of the message holding the result.
    pub message: usize,
    /// The index of the result's block within that message.
    pub block: usize,
}

/// Every call of a transcript in order, and the results no call claims.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Pairing {
    /// The calls, in the order they were made, each with its result if any.
    pub calls: Vec<ToolCall>,
    /// Results whose call is not in the transcript, in order.
    pub orphans: Vec<ToolResult>,
}

impl ToolCall {
    /// Whether the call has no result yet (the agent stopped, or is still
    /// waiting on it).
    pub fn is_pending(&self) -> bool {
        self.result.is_none()
    }

    /// Whether the call's result says it failed.
    pub fn failed(&self) -> bool {
        self.result.as_ref().is_some_and(|r| r.is_error)
    }

    /// Whether the call ran a Claude Code subagent (the `Task` tool, named
    /// `Agent` by newer versions): its card links the subagent.
    pub fn is_subagent(&self) -> bool {
        matches!(self.name.as_str(), "Task" | "Agent")
    }

    /// The `agentId` of the subagent a Task call ran, read from its result
    /// in `messages` (the transcript the call was paired in): the id the
    /// import stored from the line's `toolUseResult`, else the `agentId: …`
    /// line Claude Code ends the result's text with. The subagent's
    /// transcript id follows from it
    /// ([`subagent_id`](crate::agent_log::subagent_id)).
    pub fn subagent_agent_id(&self, messages: &[Message]) -> Option<String> {
        if !self.is_subagent() {
            return None;
        }
        let r = self.result.as_ref()?;
        let stored = messages
            .get(r.message)
            .and_then(|m| m.blocks.get(r.block))
            .and_then(|b| b.get(crate::agent_log::AGENT_ID_KEY))
            .and_then(Value::as_str)
            .map(str::to_string);
        let said = || {
            let (_, after) = r.text.rsplit_once("agentId: ")?;
            let id: String = after
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
                .collect();
            Some(id)
        };
        stored
            .or_else(said)
            .filter(|id| !id.is_empty() && id.len() <= 128)
    }

    /// A string parameter of the call (`file_path`, `command`…).
    pub fn param(&self, key: &str) -> Option<&str> {
        self.input.get(key).and_then(Value::as_str)
    }

    /// Whether the tool runs shell commands (Claude Code's `Bash`, Codex's
    /// `shell`, `exec_command`…).
    pub fn is_shell(&self) -> bool {
        SHELL_TOOLS.contains(&self.name.as_str())
    }

    /// The patch of a Codex `apply_patch` call: its freeform input, its
    /// `input` parameter, or the second word of a shell `["apply_patch", …]`.
    pub fn patch(&self) -> Option<&str> {
        if self.name == "apply_patch" {
            return match &self.input {
                Value::String(s) => Some(s),
                v => v
                    .get("input")
                    .or_else(|| v.get("patch"))
                    .and_then(Value::as_str),
            };
        }
        let argv = self.input.get("command")?.as_array()?;
        (argv.first()?.as_str()? == "apply_patch")
            .then(|| argv.get(1)?.as_str())
            .flatten()
    }

    /// The command line of a shell call, from its `command` or `cmd`
    /// parameter: a string, or an argv (`["bash", "-lc", "make"]` is
    /// `make`, as that is what was typed).
    pub fn command(&self) -> Option<String> {
        let v = self
            .input
            .get("command")
            .or_else(|| self.input.get("cmd"))?;
        match v {
            Value::String(s) => Some(s.clone()),
            Value::Array(argv) => {
                let words: Vec<&str> = argv.iter().filter_map(Value::as_str).collect();
                match words.as_slice() {
                    [sh, flag, script]
                        if matches!(*sh, "bash" | "sh" | "zsh" | "/bin/bash" | "/bin/sh")
                            && flag.starts_with('-')
                            && flag.ends_with('c') =>
                    {
                        Some((*script).to_string())
                    }
                    _ => Some(words.join(" ")),
                }
            }
            _ => None,
        }
    }
}

/// The tools that run shell commands, Claude Code's and Codex's.
pub const SHELL_TOOLS: &[&str] = &[
    "Bash",
    "shell",
    "shell_command",
    "exec_command",
    "local_shell",
    "container.exec",
];

impl Pairing {
    /// The calls still waiting on their result.
    pub fn pending(&self) -> impl Iterator<Item = &ToolCall> {
        self.calls.iter().filter(|c| c.is_pending())
    }
}

/// Pairs the tool calls of `messages` with their results. A result goes to
/// the latest earlier call of its id that has none yet (an id reused after
/// its call was answered starts a new pair); a result without an id, or
/// with an id no call has, is an orphan.
pub fn pair(messages: &[Message]) -> Pairing {
    let mut out = Pairing::default();
    // id -> indexes of its calls still waiting, oldest first
    let mut waiting: HashMap<String, Vec<usize>> = HashMap::new();
    for (at, m) in messages.iter().enumerate() {
        for (bi, b) in m.blocks.iter().enumerate() {
            let Value::Object(o) = b else { continue };
            match o.get("type").and_then(Value::as_str) {
                Some("tool") => {
                    let call = call_of(o, at, bi);
                    if call.result.is_none()
                        && let Some(id) = &call.id
                    {
                        waiting.entry(id.clone()).or_default().push(out.calls.len());
                    }
                    out.calls.push(call);
                }
                Some("tool_result") => {
                    let result = result_of(o, at, bi);
                    let slot = result
                        .tool_use_id
                        .as_ref()
                        .and_then(|id| waiting.get_mut(id))
                        .and_then(|calls| (!calls.is_empty()).then(|| calls.remove(0)));
                    match slot.and_then(|i| out.calls.get_mut(i)) {
                        Some(call) => call.result = Some(result),
                        None => out.orphans.push(result),
                    }
                }
                _ => {}
            }
        }
    }
    out
}

/// Whether `m` holds a failed tool result: a `tool_result` block, or a
/// `tool` block with its result inline, whose [`ToolResult::is_error`] is
/// set. The rule needs no pairing (a result's failure is its own), so an
/// index can keep it message by message; the viewer's error chip is the
/// same `is_error`.
pub fn holds_failure(m: &Message) -> bool {
    m.blocks.iter().enumerate().any(|(bi, b)| {
        let Value::Object(o) = b else { return false };
        match o.get("type").and_then(Value::as_str) {
            Some("tool_result") => result_of(o, 0, bi).is_error,
            Some("tool") => call_of(o, 0, bi).failed(),
            _ => false,
        }
    })
}

fn text_of(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn call_of(o: &Map<String, Value>, at: usize, block: usize) -> ToolCall {
    let input = match o.get("parameters").or_else(|| o.get("input")) {
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(v) => v,
            Err(_) => Value::String(s.clone()),
        },
        Some(v) => v.clone(),
        None => Value::Null,
    };
    // A result copied from its `tool_result` block (for seed 003's
    // readers) is read from that block, as before.
    let copied = o
        .get(crate::agent_log::RESULT_COPIED_KEY)
        .and_then(Value::as_bool)
        == Some(true);
    let result = o
        .get("result")
        .filter(|r| !r.is_null() && !copied)
        .map(|r| ToolResult {
            tool_use_id: text_of(o.get("id")),
            text: match r {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            },
            is_error: o.get("isError").and_then(Value::as_bool) == Some(true),
            exit_code: None,
            message: at,
            block,
        });
    ToolCall {
        id: text_of(o.get("id")),
        name: text_of(o.get("name")).unwrap_or_default(),
        input,
        message: at,
        block,
        result,
    }
}

fn result_of(o: &Map<String, Value>, at: usize, block: usize) -> ToolResult {
    let raw = match o.get("result").or_else(|| o.get("content")) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    };
    let (text, exit_code) = output_of(raw);
    let flagged = o.get("isError").and_then(Value::as_bool) == Some(true);
    ToolResult {
        tool_use_id: text_of(o.get("toolUseId")),
        text,
        is_error: flagged || exit_code.is_some_and(|c| c != 0),
        exit_code,
        message: at,
        block,
    }
}

/// A command's output and exit code from what Codex writes: the JSON
/// `{"output": …, "metadata": {"exit_code": N}}`, or text whose first line
/// is `Exit code: N` (or `Process exited with code N`); other text as it is.
fn output_of(raw: String) -> (String, Option<i64>) {
    if raw.trim_start().starts_with('{')
        && let Ok(Value::Object(o)) = serde_json::from_str::<Value>(&raw)
        && let Some(output) = o.get("output").and_then(Value::as_str)
    {
        let code = o
            .get("metadata")
            .and_then(|m| m.get("exit_code"))
            .and_then(Value::as_i64);
        return (output.to_string(), code);
    }
    let first = raw.lines().next().unwrap_or("").trim();
    let code = first
        .strip_prefix("Exit code:")
        .or_else(|| first.strip_prefix("Process exited with code"))
        .and_then(|n| n.trim().parse::<i64>().ok());
    (raw, code)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn msg(role: &str, blocks: Value) -> Message {
        serde_json::from_value(json!({"role": role, "blocks": blocks})).unwrap()
    }

    #[test]
    fn claude_calls_pair_with_results_across_messages() {
        let messages = vec![
            msg(
                "assistant",
                json!([
                    {"type": "text", "content": "Let me look"},
                    {"type": "tool", "id": "a", "name": "Read", "parameters": "{\"file_path\":\"/w/x.rs\"}"},
                    {"type": "tool", "id": "b", "name": "Bash", "parameters": "{\"command\":\"cargo test\"}"}
                ]),
            ),
            msg(
                "user",
                json!([
                    {"type": "tool_result", "toolUseId": "b", "result": "1 failed", "isError": true},
                    {"type": "tool_result", "toolUseId": "a", "result": "fn main() {}"}
                ]),
            ),
            msg(
                "assistant",
                json!([{"type": "tool", "id": "c", "name": "Edit", "parameters": "{\"file_path\":\"/w/x.rs\"}"}]),
            ),
            msg(
                "user",
                json!([{"type": "tool_result", "toolUseId": "zz", "result": "stray"}]),
            ),
        ];
        let p = pair(&messages);
        assert_eq!(p.calls.len(), 3);
        let (a, b, c) = (&p.calls[0], &p.calls[1], &p.calls[2]);
        assert_eq!(a.param("file_path"), Some("/w/x.rs"));
        assert_eq!(a.result.as_ref().unwrap().text, "fn main() {}");
        assert!(!a.failed());
        assert!(b.failed() && b.result.as_ref().unwrap().message == 1);
        assert!(c.is_pending() && c.message == 2);
        assert_eq!(p.pending().count(), 1);
        assert_eq!(p.orphans.len(), 1);
        assert_eq!(p.orphans[0].tool_use_id.as_deref(), Some("zz"));
    }

    #[test]
    fn codex_exit_codes_decide_failure() {
        let messages = vec![
            msg(
                "assistant",
                json!([{"type": "tool", "id": "c1", "name": "shell", "parameters": "{\"command\":[\"bash\",\"-lc\",\"false\"]}"}]),
            ),
            msg(
                "tool",
                json!([{"type": "tool_result", "toolUseId": "c1", "result": "{\"output\":\"boom\\n\",\"metadata\":{\"exit_code\":1,\"duration_seconds\":0.1}}"}]),
            ),
            msg(
                "assistant",
                json!([{"type": "tool", "id": "c2", "name": "exec_command", "parameters": "{\"cmd\":\"ls\"}"}]),
            ),
            msg(
                "tool",
                json!([{"type": "tool_result", "toolUseId": "c2", "result": "Exit code: 0\nWall time: 0.1 seconds\nOutput:\na\n"}]),
            ),
            msg(
                "assistant",
                json!([{"type": "tool", "id": "c3", "name": "apply_patch", "parameters": "*** Begin Patch\n*** End Patch"}]),
            ),
        ];
        let p = pair(&messages);
        let r1 = p.calls[0].result.as_ref().unwrap();
        assert_eq!(
            (r1.text.as_str(), r1.exit_code, r1.is_error),
            ("boom\n", Some(1), true)
        );
        let r2 = p.calls[1].result.as_ref().unwrap();
        assert_eq!((r2.exit_code, r2.is_error), (Some(0), false));
        assert_eq!(
            p.calls[2].input,
            Value::String("*** Begin Patch\n*** End Patch".into())
        );
        assert!(p.calls[2].is_pending());
    }

    #[test]
    fn a_reused_id_pairs_in_turn_and_inline_results_count() {
        let call = json!({"type": "tool", "id": "x", "name": "t", "parameters": "{}"});
        let res = |t: &str| json!({"type": "tool_result", "toolUseId": "x", "result": t});
        let messages = vec![
            msg("assistant", json!([call.clone(), call])),
            msg("user", json!([res("one"), res("two"), res("three")])),
            msg(
                "assistant",
                json!([{"type": "tool", "name": "w", "parameters": "{}", "result": "ok"}]),
            ),
        ];
        let p = pair(&messages);
        assert_eq!(p.calls[0].result.as_ref().unwrap().text, "one");
        assert_eq!(p.calls[1].result.as_ref().unwrap().text, "two");
        assert_eq!(p.orphans[0].text, "three");
        assert_eq!(p.calls[2].result.as_ref().unwrap().text, "ok");
    }

    fn block() -> impl Strategy<Value = Value> {
        let id = prop_oneof![
            Just(Value::Null),
            "[abc]".prop_map(Value::from),
            any::<i64>().prop_map(Value::from)
        ];
        let text = prop_oneof![
            Just(Value::Null),
            ".{0,12}".prop_map(Value::from),
            Just(Value::from(
                "{\"output\":\"o\",\"metadata\":{\"exit_code\":-3}}"
            )),
            Just(Value::from("Exit code: 99999999999999999999")),
            Just(json!({"nested": [1, 2]})),
        ];
        prop_oneof![
            (id.clone(), text.clone(), text.clone()).prop_map(|(id, name, params)| {
                json!({"type": "tool", "id": id, "name": name, "parameters": params})
            }),
            (id, text.clone(), any::<Option<bool>>()).prop_map(|(id, result, err)| {
                json!({"type": "tool_result", "toolUseId": id, "result": result, "isError": err})
            }),
            text.clone()
                .prop_map(|t| json!({"type": "tool", "result": t})),
            text,
            Just(json!({"type": 7})),
        ]
    }

    proptest! {
        /// Whatever the blocks, pairing never panics, and every call and
        /// every result is accounted for exactly once.
        #[test]
        fn arbitrary_messages_never_panic_and_lose_nothing(
            messages in prop::collection::vec(prop::collection::vec(block(), 0..6), 0..8)
        ) {
            let messages: Vec<Message> = messages
                .into_iter()
                .map(|b| msg("assistant", Value::Array(b)))
                .collect();
            let p = pair(&messages);
            let count = |ty: &str| messages
                .iter()
                .flat_map(|m| &m.blocks)
                .filter(|b| b.get("type").and_then(Value::as_str) == Some(ty))
                .count();
            prop_assert_eq!(p.calls.len(), count("tool"));
            let inline: Vec<bool> = messages
                .iter()
                .flat_map(|m| &m.blocks)
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool"))
                .map(|b| b.get("result").is_some_and(|r| !r.is_null()))
                .collect();
            let mut answered = 0;
            for (c, inline) in p.calls.iter().zip(inline) {
                if let (Some(r), false) = (&c.result, inline) {
                    answered += 1;
                    prop_assert!(r.message >= c.message);
                    prop_assert!(c.id.is_some() && c.id == r.tool_use_id);
                }
            }
            prop_assert_eq!(answered + p.orphans.len(), count("tool_result"));
            // The messages an index marks as holding an error are those of
            // the results the pairing says failed.
            let mut failed: Vec<usize> = p.calls.iter()
                .filter_map(|c| c.result.as_ref())
                .chain(&p.orphans)
                .filter(|r| r.is_error)
                .map(|r| r.message)
                .collect();
            failed.sort_unstable();
            failed.dedup();
            let marked: Vec<usize> = (0..messages.len())
                .filter(|i| holds_failure(&messages[*i]))
                .collect();
            prop_assert_eq!(marked, failed);
        }
    }
}
