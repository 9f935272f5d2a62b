//! The events Claude Code and Codex hand their hooks, and the answers they
//! read back: one JSON object on stdin, nothing or one JSON object on stdout.
//!
//! Both agents send `session_id`, `transcript_path`, `cwd` and
//! `hook_event_name`, and per event a few more (`source` of a SessionStart,
//! `trigger` of a PreCompact, `agent_id` and `agent_transcript_path` of a
//! SubagentStop, Codex's `turn_id` and `model`). Agents add fields between
//! versions, so every field but the event name is optional here and the
//! rest is kept as given; an event Logbook does not act on is answered with
//! nothing.
//!
//! Answers follow the agents' own output shapes. A SessionStart may add
//! context (`hookSpecificOutput.additionalContext`, both agents); Codex's
//! PostCompact output has no such field, so after a Codex compaction the
//! context waits for the SessionStart (`source: "compact"`) that follows.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::agent_log::Format;
use crate::error::{Error, Result};

/// The most of stdin a hook reads: the agents send a few KiB; anything
/// near this is not an event.
pub const MAX_EVENT_BYTES: usize = 1 << 20;

/// Reads one event from `r` (a hook's stdin): up to the end of its first
/// complete JSON value, so an agent that writes its event and leaves
/// stdin open is answered at once, and never more than
/// [`MAX_EVENT_BYTES`]. What follows the value is not read. Text that is
/// not JSON is returned as far as it was read, for [`HookEvent::parse`]
/// to say what is wrong with it.
pub fn read_event(r: impl std::io::Read) -> Result<String> {
    use std::io::Read as _;
    /// Keeps what the JSON parser read, which is the event's text.
    struct Tee<R> {
        inner: R,
        seen: Vec<u8>,
    }
    impl<R: std::io::Read> std::io::Read for Tee<R> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.inner.read(buf)?;
            self.seen.extend_from_slice(&buf[..n]);
            Ok(n)
        }
    }
    let unreadable =
        |e: std::io::Error| Error::invalid("hook event", "stdin", format!("unreadable: {e}"));
    let mut limited = r.take(MAX_EVENT_BYTES as u64 + 1);
    // A byte-order mark, which serde_json refuses, is dropped; the bytes
    // read to look for one are the event's first.
    let mut head = Vec::with_capacity(3);
    while head.len() < 3 {
        let mut byte = [0u8];
        match limited.read(&mut byte) {
            Ok(0) => break,
            Ok(_) => head.push(byte[0]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(unreadable(e)),
        }
    }
    if head == [0xef, 0xbb, 0xbf] {
        head.clear();
    }
    let mut tee = Tee {
        inner: std::io::Cursor::new(head).chain(limited),
        seen: vec![],
    };
    let parsed =
        serde::de::IgnoredAny::deserialize(&mut serde_json::Deserializer::from_reader(&mut tee));
    if let Err(e) = parsed
        && e.is_io()
    {
        return Err(unreadable(std::io::Error::other(e.to_string())));
    }
    if tee.seen.len() > MAX_EVENT_BYTES {
        return Err(Error::invalid(
            "hook event",
            "stdin",
            format!(
                "larger than {} KiB: not an agent's event",
                MAX_EVENT_BYTES / 1024
            ),
        ));
    }
    Ok(String::from_utf8_lossy(&tee.seen).into_owned())
}

/// What happened, as `hook_event_name` names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventName {
    /// A session began, resumed, was cleared or compacted (`source`).
    SessionStart,
    /// A compaction is about to summarize the context.
    PreCompact,
    /// A compaction finished (Codex).
    PostCompact,
    /// The agent finished a turn.
    Stop,
    /// A subagent finished.
    SubagentStop,
    /// The session ended (Claude Code).
    SessionEnd,
    /// Any other event: answered with nothing.
    Other(String),
}

impl EventName {
    fn parse(name: &str) -> EventName {
        match name {
            "SessionStart" => EventName::SessionStart,
            "PreCompact" => EventName::PreCompact,
            "PostCompact" => EventName::PostCompact,
            "Stop" => EventName::Stop,
            "SubagentStop" => EventName::SubagentStop,
            "SessionEnd" => EventName::SessionEnd,
            other => EventName::Other(other.to_string()),
        }
    }

    /// The name as the agents write it.
    pub fn as_str(&self) -> &str {
        match self {
            EventName::SessionStart => "SessionStart",
            EventName::PreCompact => "PreCompact",
            EventName::PostCompact => "PostCompact",
            EventName::Stop => "Stop",
            EventName::SubagentStop => "SubagentStop",
            EventName::SessionEnd => "SessionEnd",
            EventName::Other(s) => s,
        }
    }
}

/// One hook event, as an agent sent it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HookEvent {
    /// `hook_event_name`.
    pub hook_event_name: String,
    /// The agent's session id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The session's log (JSON Lines), absolute.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript_path: Option<String>,
    /// The folder the agent works in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// SessionStart: `startup`, `resume`, `clear` or `compact`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// PreCompact / PostCompact: `manual` or `auto`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger: Option<String>,
    /// SubagentStop: the subagent's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_id: Option<String>,
    /// SubagentStop: the subagent's own log.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_transcript_path: Option<String>,
    /// Fields Logbook does not read, kept as given (a queued event is
    /// stored whole).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl HookEvent {
    /// Parses the object an agent wrote on the hook's stdin. Wrong types in
    /// fields Logbook reads are errors that name the field; unknown fields
    /// are kept.
    pub fn parse(text: &str) -> Result<HookEvent> {
        let bad = |reason: String| Error::invalid("hook event", "stdin", &reason);
        let value: Value = serde_json::from_str(text.trim_start_matches('\u{feff}'))
            .map_err(|e| bad(format!("not JSON: {e}")))?;
        let Value::Object(mut o) = value else {
            return Err(bad("expected one JSON object".into()));
        };
        // A null is what Codex sends for an absent path: the same as none.
        o.retain(|_, v| !v.is_null());
        let event: HookEvent = serde_json::from_value(Value::Object(o)).map_err(|e| {
            bad(format!(
                "{e}; expected hook_event_name and the string fields the agents send"
            ))
        })?;
        Ok(event)
    }

    /// What happened.
    pub fn name(&self) -> EventName {
        EventName::parse(&self.hook_event_name)
    }

    /// The folder the event is about: its `cwd` when that is an absolute
    /// path, else `fallback` (the hook process's own).
    pub fn folder(&self, fallback: &Path) -> PathBuf {
        self.cwd
            .as_deref()
            .map(PathBuf::from)
            .filter(|c| c.is_absolute())
            .unwrap_or_else(|| fallback.to_path_buf())
    }

    /// Which agent sent the event when its fields say so: Codex names the
    /// turn (`turn_id`) in every event; a log under `.codex/` or named
    /// `rollout-…` is Codex's, one under `.claude/` Claude Code's. `None`
    /// leaves it to the log's own lines.
    pub fn agent_hint(&self) -> Option<Format> {
        if self.extra.contains_key("turn_id") {
            return Some(Format::Codex);
        }
        let path = Path::new(self.transcript_path.as_deref()?);
        let name = path.file_name()?.to_string_lossy();
        let under = |dir: &str| path.components().any(|c| c.as_os_str() == dir);
        if name.starts_with("rollout-") || under(".codex") {
            Some(Format::Codex)
        } else if under(".claude") {
            Some(Format::ClaudeCode)
        } else {
            None
        }
    }

    /// The logs this event asks to import: the session's own, and for a
    /// SubagentStop the subagent's.
    pub fn logs(&self) -> Vec<PathBuf> {
        let mut out: Vec<PathBuf> = vec![];
        let paths = [&self.transcript_path, &self.agent_transcript_path];
        for p in paths.into_iter().flatten() {
            let p = PathBuf::from(p);
            if p.is_absolute() && !out.contains(&p) {
                out.push(p);
            }
        }
        out
    }
}

/// The SessionStart answer both agents read: `additionalContext` is added to
/// the agent's context.
pub fn session_start_answer(context: &str) -> Value {
    serde_json::json!({
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": context,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_is_read_to_the_end_of_its_first_value_and_no_further() {
        let read = |bytes: &[u8]| read_event(bytes);
        let one = r#"{"hook_event_name":"Stop","x":"}"}"#;
        assert_eq!(read(format!("{one} {{\"more").as_bytes()).unwrap(), one);
        let bom = [b"\xef\xbb\xbf".as_slice(), one.as_bytes()].concat();
        assert_eq!(read(&bom).unwrap(), one);
        // Not JSON: what was read, for the parser to name.
        let bad = read(b"not json").unwrap();
        assert!(HookEvent::parse(&bad).is_err());
        assert_eq!(read(b"").unwrap(), "");
        let big = format!(r#"{{"x":"{}"}}"#, "a".repeat(MAX_EVENT_BYTES));
        let err = read(big.as_bytes()).unwrap_err().to_string();
        assert!(err.contains("larger than"), "{err}");
    }

    #[test]
    fn nulls_are_absent_and_unknown_fields_are_kept() {
        let e = HookEvent::parse(
            r#"{"hook_event_name":"PreCompact","session_id":"s","transcript_path":null,"cwd":"/w","trigger":"auto","turn_id":"t1","model":"gpt-5"}"#,
        )
        .unwrap();
        assert_eq!(e.name(), EventName::PreCompact);
        assert_eq!(e.transcript_path, None);
        assert_eq!(e.agent_hint(), Some(Format::Codex));
        assert_eq!(e.extra["model"], "gpt-5");
        let again: HookEvent = serde_json::from_value(serde_json::to_value(&e).unwrap()).unwrap();
        assert_eq!(again, e);
    }

    #[test]
    fn wrong_shapes_say_what_is_wrong() {
        for (text, says) in [
            ("", "not JSON"),
            ("[1]", "one JSON object"),
            (r#"{"session_id":"s"}"#, "hook_event_name"),
            (r#"{"hook_event_name":"Stop","cwd":7}"#, "invalid type"),
        ] {
            let e = HookEvent::parse(text).unwrap_err().to_string();
            assert!(e.contains(says), "{text}: {e}");
        }
    }

    #[test]
    fn the_agent_is_told_by_the_log_path() {
        let at = |p: &str| HookEvent {
            hook_event_name: "Stop".into(),
            session_id: None,
            transcript_path: Some(p.into()),
            cwd: None,
            source: None,
            trigger: None,
            agent_id: None,
            agent_transcript_path: None,
            extra: Map::new(),
        };
        assert_eq!(
            at("/h/.claude/projects/-w/abc.jsonl").agent_hint(),
            Some(Format::ClaudeCode)
        );
        assert_eq!(
            at("/h/.codex/sessions/2026/01/01/rollout-x.jsonl").agent_hint(),
            Some(Format::Codex)
        );
        assert_eq!(at("/tmp/log.jsonl").agent_hint(), None);
    }

    fn event_json() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let scalar = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            ".{0,12}".prop_map(Value::from),
        ];
        let key = prop_oneof![
            Just("hook_event_name".to_string()),
            Just("session_id".to_string()),
            Just("transcript_path".to_string()),
            Just("cwd".to_string()),
            Just("source".to_string()),
            Just("trigger".to_string()),
            Just("agent_transcript_path".to_string()),
            Just("turn_id".to_string()),
            "[a-z_]{1,10}",
        ];
        proptest::collection::vec((key, scalar), 0..8).prop_map(|kv| {
            let mut o: Map<String, Value> = kv.into_iter().collect();
            o.entry("hook_event_name").or_insert_with(|| "Stop".into());
            Value::Object(o).to_string()
        })
    }

    proptest::proptest! {
        /// Whatever an agent (or anything else) writes on stdin, parsing
        /// gives an event or an error, never a panic; an event survives the
        /// queue (written and read back) with every field it had.
        #[test]
        fn any_input_parses_or_is_refused_and_events_survive_the_queue(
            text in event_json(),
            cut in 0usize..64,
            junk in ".{0,8}",
        ) {
            if let Ok(e) = HookEvent::parse(&text) {
                let stored = serde_json::to_string(&e).unwrap();
                proptest::prop_assert_eq!(HookEvent::parse(&stored).unwrap(), e);
            }
            let mut mutated = text.clone();
            let at = (0..=cut.min(mutated.len())).rev().find(|i| mutated.is_char_boundary(*i)).unwrap_or(0);
            mutated.insert_str(at, &junk);
            let _ = HookEvent::parse(&mutated);
            let _ = HookEvent::parse(&text[..at]);
        }
    }
}
