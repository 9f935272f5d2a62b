//! What each message of an imported log is charged with, so that a
//! transcript page's turns add up to what `transcript usage` counts: the
//! import stores each message's share, and [`charged`] reads it back.

use serde_json::{Map, Value};

use super::Usage;
#[cfg(doc)]
use super::usage_of;
use crate::transcript::Message;

/// The message metadata key of what a Claude Code message's lines added to
/// the session's count: each call counted once (the largest entry of a
/// streamed reply), so that the messages' values add up to the session's
/// usage. Written by the import, read by [`charged`].
pub const COUNTED_KEY: &str = "countedUsage";

/// The message metadata key of the usage a Codex log had counted before an
/// assistant item: the `token_count` events come after the items they
/// measure, so a turn's share is what the count grew by until the next
/// assistant item ([`charged`]).
pub const COUNTED_BEFORE_KEY: &str = "countedBefore";

/// A usage as a JSON object of its non-zero counts (`{}` for none), the
/// way messages' metadata stores it.
pub fn usage_value(u: &Usage) -> Value {
    match serde_json::to_value(u) {
        Ok(Value::Object(mut o)) => {
            o.retain(|_, v| v.as_u64() != Some(0));
            Value::Object(o)
        }
        _ => Value::Object(Map::new()),
    }
}

/// The tokens each of `messages` is charged with, by the counting rules
/// `transcript usage` applies, so that they add up to its own usage of the
/// transcript: a Claude Code message what its lines added
/// ([`COUNTED_KEY`]); a Codex assistant item what the count grew by from it
/// to the next assistant item, the first taking what came before it and
/// the last what came after, up to `end` (the transcript's counted total,
/// [`usage_of`]). `messages` starts the transcript. `None` for a message
/// charged with nothing, or one imported before these were stored.
pub fn charged(messages: &[Message], end: Option<Usage>) -> Vec<Option<Usage>> {
    charged_within(messages, true, end)
}

/// [`charged`] for a window of a transcript's messages (a page of a long
/// one): `first` says whether no assistant item comes before it (the
/// count before the first one is charged to it), and `end` is the
/// count the window's last Codex assistant item runs to, the
/// [`COUNTED_BEFORE_KEY`] of the next assistant item after the window, or
/// the transcript's total when there is none. Claude Code messages need
/// nothing beyond the window.
pub fn charged_within(messages: &[Message], first: bool, end: Option<Usage>) -> Vec<Option<Usage>> {
    let read = |m: &Message, key: &str| {
        let v = m.metadata.as_ref()?.get(key)?;
        serde_json::from_value::<Usage>(v.clone()).ok()
    };
    let mut out: Vec<Option<Usage>> = messages
        .iter()
        .map(|m| read(m, COUNTED_KEY).filter(|u| !u.is_zero()))
        .collect();
    let marks: Vec<(usize, Usage)> = messages
        .iter()
        .enumerate()
        .filter_map(|(i, m)| Some((i, read(m, COUNTED_BEFORE_KEY)?)))
        .collect();
    for (k, (at, before)) in marks.iter().enumerate() {
        let next = match marks.get(k + 1) {
            Some((_, u)) => *u,
            None => match end {
                Some(u) => u,
                None => continue,
            },
        };
        let from = if k == 0 && first {
            Usage::default()
        } else {
            *before
        };
        let grew = next.minus(&from);
        if let Some(slot) = out.get_mut(*at) {
            *slot = (!grew.is_zero()).then_some(grew);
        }
    }
    out
}
