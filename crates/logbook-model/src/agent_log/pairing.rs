//! Seed 003 puts a tool's result in its `tool` block (`result`), where the
//! agents' logs write it later, in a message of its own (Claude Code's
//! `tool_result` block, Codex's `function_call_output`). [`Pairing`] holds
//! the messages from a `tool` block without its result until that result
//! comes, copies it into the block (the `tool_result` block stays where it
//! was, so nothing read today is lost), and lets them go in their order.
//!
//! At most [`HOLD_AT_MOST`] messages are held: a result that never comes
//! (a killed session) holds back nothing for long, and memory stays bounded.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::transcript::Message;

/// Set (true) on a `tool` block whose `result` is a copy of its
/// `tool_result` block's, for seed 003's readers: Logbook's own readers
/// read the `tool_result` block, as before, and skip the copy, so nothing
/// is counted or found twice.
pub const RESULT_COPIED_KEY: &str = "resultCopied";

/// How many messages wait for a tool result at most; past it, the oldest
/// go out without theirs.
pub(super) const HOLD_AT_MOST: usize = 32;

/// The messages waiting for a tool result, and which blocks wait.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(super) struct Pairing {
    /// Held messages, oldest first; the first has a `tool` block waiting.
    held: VecDeque<Message>,
    /// The `tool` blocks waiting: (tool id, message index in `held`,
    /// block index).
    open: Vec<(String, usize, usize)>,
}

impl Pairing {
    /// Takes the messages a line completed; returns those that may go out.
    pub(super) fn pass(&mut self, new: Vec<Message>) -> Vec<Message> {
        if self.held.is_empty() && new.iter().all(|m| open_tools(m).next().is_none()) {
            return new;
        }
        for m in new {
            for (id, result) in results(&m) {
                let Some(at) = self.open.iter().position(|(open, ..)| *open == id) else {
                    continue;
                };
                let (_, mi, bi) = self.open.remove(at);
                if let Some(Value::Object(b)) =
                    self.held.get_mut(mi).and_then(|h| h.blocks.get_mut(bi))
                {
                    b.insert("result".into(), result);
                    b.insert(RESULT_COPIED_KEY.into(), Value::Bool(true));
                }
            }
            let at = self.held.len();
            let opened: Vec<(String, usize, usize)> =
                open_tools(&m).map(|(id, bi)| (id, at, bi)).collect();
            self.open.extend(opened);
            self.held.push_back(m);
        }
        // What comes before the first message still waiting may go; so
        // may the oldest past the bound, without their results.
        let first_open = self.open.iter().map(|(_, mi, _)| *mi).min();
        let mut go = first_open.unwrap_or(self.held.len());
        go = go.max(self.held.len().saturating_sub(HOLD_AT_MOST));
        self.open.retain(|(_, mi, _)| *mi >= go);
        for (_, mi, _) in &mut self.open {
            *mi -= go;
        }
        self.held.drain(..go).collect()
    }

    /// Everything still held, at the end of the log (or of what was read).
    pub(super) fn finish(self) -> Vec<Message> {
        self.held.into()
    }
}

/// The `tool` blocks of `m` that have an id and no result yet, with their
/// index.
fn open_tools(m: &Message) -> impl Iterator<Item = (String, usize)> + '_ {
    m.blocks.iter().enumerate().filter_map(|(i, b)| {
        let b = b.as_object()?;
        (b.get("type")?.as_str()? == "tool" && !b.contains_key("result"))
            .then(|| b.get("id")?.as_str().map(|id| (id.to_string(), i)))?
    })
}

/// The results `m` carries: each `tool_result` block's tool id and result.
fn results(m: &Message) -> Vec<(String, Value)> {
    m.blocks
        .iter()
        .filter_map(|b| {
            let b = b.as_object()?;
            if b.get("type")?.as_str()? != "tool_result" {
                return None;
            }
            let id = b.get("toolUseId")?.as_str()?.to_string();
            Some((id, b.get("result").cloned().unwrap_or_default()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn msg(role: &str, blocks: Vec<Value>) -> Message {
        Message {
            role: role.into(),
            blocks,
            usage: None,
            metadata: None,
            extra: serde_json::Map::new(),
        }
    }

    fn tool(id: &str) -> Value {
        json!({"type": "tool", "id": id, "name": "Read", "parameters": "{}"})
    }

    fn result(id: &str, text: &str) -> Value {
        json!({"type": "tool_result", "toolUseId": id, "result": text})
    }

    #[test]
    fn results_land_in_their_tool_blocks_and_order_is_kept() {
        let mut p = Pairing::default();
        assert!(
            p.pass(vec![msg("assistant", vec![tool("a"), tool("b")])])
                .is_empty()
        );
        let text = msg(
            "user",
            vec![json!({"type": "text", "content": "meanwhile"})],
        );
        assert!(
            p.pass(vec![msg("user", vec![result("a", "A")]), text])
                .is_empty()
        );
        let out = p.pass(vec![msg("user", vec![result("b", "B")])]);
        assert_eq!(out.len(), 4);
        assert_eq!(out[0].blocks[0]["result"], "A");
        assert_eq!(out[0].blocks[1]["result"], "B");
        // The tool_result blocks stay.
        assert_eq!(out[1].blocks[0]["type"], "tool_result");
        assert_eq!(out[2].blocks[0]["content"], "meanwhile");
        assert!(p.finish().is_empty());
    }

    #[test]
    fn a_result_that_never_comes_holds_back_a_bounded_number() {
        let mut p = Pairing::default();
        let mut out = p.pass(vec![msg("assistant", vec![tool("lost")])]);
        for i in 0..HOLD_AT_MOST + 5 {
            let m = msg(
                "user",
                vec![json!({"type": "text", "content": i.to_string()})],
            );
            out.extend(p.pass(vec![m]));
        }
        assert!(out[0].blocks[0].get("result").is_none());
        out.extend(p.finish());
        assert_eq!(out.len(), HOLD_AT_MOST + 6);
        // A result for a tool already gone changes nothing.
        let mut p = Pairing::default();
        let m = msg("user", vec![result("gone", "x")]);
        assert_eq!(p.pass(vec![m]).len(), 1);
    }
}
