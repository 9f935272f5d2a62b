//! Codex forks and spawned subagents billed once: a child's log begins with
//! a copy of its parent's items (`InitialHistory::Forked` in Codex's
//! `core/src/session`, `agent/control/spawn.rs`), which is neither the
//! child's messages nor its usage. Fixtures under
//! `tests/fixtures/codex_forks/sessions/` (the layout of `~/.codex/sessions`),
//! built from Codex's rollout shapes with made-up content.
//!
//! Hand-worked usage (Codex counters are cumulative; a call is what the
//! total grew by):
//! - parent `…0001`: totals 1100 then 2800 → 2800 (input 2500, cached
//!   1400, output 300, reasoning 20), gpt-5.
//! - subagent `…0002` (spawned with history, `ordinal`s, start ordinal 9):
//!   lines 2-9 are the copy, ending on the parent's total 2800; its own
//!   calls reach 3650 then 4590 (the last repeated) → 4590 − 2800 = 1790
//!   (input 4200 − 2500 = 1700, cached 2100 − 1400 = 700, output 390 −
//!   300 = 90, reasoning 30 − 20 = 10), gpt-5-mini.
//! - fork `…0003` (`codex fork`, no ordinals, the copy's timestamps
//!   rewritten to the fork's instant): lines 2-14 are the copy; its own
//!   call reaches 5950 → 5950 − 2800 = 3150 (input 3000, cached 2500,
//!   output 150, reasoning 0), gpt-5.
//! - all three: 2800 + 1790 + 3150 = 7740, each call once.
//! - the parent's second page `…0001_2` (`history_base`, paginated): its
//!   one count reaches 4400 with a last call of 1600; the page does not
//!   hold the base's counts, so it is charged 1600 (input 1500, cached
//!   600, output 100, reasoning 0). With it: 9340.

use std::path::{Path, PathBuf};

use logbook::model::agent_log::{self, Format, LogParser, LogSummary, Usage};
use logbook::model::transcript::Message;

pub(crate) const PARENT: &str = "0199bbbb-0000-7000-8000-000000000001";
pub(crate) const SUBAGENT: &str = "0199bbbb-0000-7000-8000-000000000002";
pub(crate) const FORK: &str = "0199bbbb-0000-7000-8000-000000000003";

/// The fixture sessions folder, laid out as `~/.codex/sessions`.
pub(crate) fn sessions() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/codex_forks/sessions")
}

fn file(id: &str) -> PathBuf {
    let dir = sessions().join("2026/01/20");
    std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(&format!("{id}.jsonl")))
        .unwrap()
}

fn parse(id: &str) -> (Vec<Message>, LogSummary) {
    let text = std::fs::read_to_string(file(id)).unwrap();
    let mut p = LogParser::new(Format::Codex);
    let mut out = vec![];
    for (i, line) in text.lines().enumerate() {
        out.extend(p.line(i as u64 + 1, line));
    }
    let (last, s) = p.finish();
    out.extend(last);
    (out, s)
}

fn codex(input: u64, cached: u64, output: u64, reasoning: u64) -> Usage {
    Usage {
        input_tokens: input,
        cached_input_tokens: cached,
        output_tokens: output,
        reasoning_output_tokens: reasoning,
        total_tokens: input + output,
        ..Usage::default()
    }
}

fn texts(messages: &[Message]) -> Vec<String> {
    messages
        .iter()
        .map(Message::text)
        .filter(|t| !t.is_empty())
        .collect()
}

#[test]
fn the_parent_counts_its_own_calls_and_its_title_is_the_persons() {
    let (messages, s) = parse(PARENT);
    assert_eq!(s.usage.total(), codex(2500, 1400, 300, 20));
    assert_eq!(s.copied_lines, 0);
    assert_eq!((s.parent_id.as_deref(), s.fork_of.as_deref()), (None, None));
    // The AGENTS.md and environment messages are Codex's, not a title.
    assert_eq!(s.first_prompt.as_deref(), Some("Plan the release"));
    assert!(texts(&messages).iter().any(|t| t.contains("AGENTS.md")));
}

#[test]
fn a_spawned_subagent_counts_only_its_own_calls_and_names_its_parent() {
    let (messages, s) = parse(SUBAGENT);
    assert_eq!(s.usage.total(), codex(1700, 700, 90, 10));
    assert_eq!(s.usage.total().total_tokens, 1790);
    assert_eq!(s.usage.by_model.keys().collect::<Vec<_>>(), ["gpt-5-mini"]);
    assert_eq!(s.copied_lines, 8);
    assert_eq!(s.parent_id.as_deref(), Some(PARENT));
    assert_eq!(s.session_id.as_deref(), Some(SUBAGENT));
    // The copied prompt and answer are not the child's messages.
    let t = texts(&messages);
    assert!(!t.iter().any(|t| t.contains("Plan the release")), "{t:?}");
    assert!(!t.iter().any(|t| t.contains("Release plan")), "{t:?}");
    assert_eq!(t[0], "Check the changelog for breaking changes");
    assert_eq!(
        s.first_prompt.as_deref(),
        Some("Check the changelog for breaking changes")
    );
    // It began when the child did, not when the parent's copy says.
    assert_eq!(
        s.first_timestamp.as_deref(),
        Some("2026-01-20T09:05:00.000Z")
    );
    let who = agent_log::identity(Format::Codex, &file(SUBAGENT), &s).unwrap();
    assert_eq!(who.id, SUBAGENT);
    assert_eq!(who.parent.as_deref(), Some(PARENT));
    assert_eq!(who.fork_of, None);
    // Its assistant items are charged with its own calls only.
    let charged: u64 = agent_log::charged(&messages, Some(s.usage.total()))
        .into_iter()
        .flatten()
        .map(|u| u.total_tokens)
        .sum();
    assert_eq!(charged, 1790);
}

#[test]
fn a_fork_counts_only_its_own_calls_and_names_what_it_was_forked_from() {
    let (messages, s) = parse(FORK);
    assert_eq!(s.usage.total(), codex(3000, 2500, 150, 0));
    assert_eq!(s.copied_lines, 13);
    assert_eq!(s.fork_of.as_deref(), Some(PARENT));
    assert_eq!(s.parent_id, None);
    let t = texts(&messages);
    assert_eq!(
        t,
        [
            "Now write the release notes",
            "Release notes: export added."
        ]
    );
    let who = agent_log::identity(Format::Codex, &file(FORK), &s).unwrap();
    assert_eq!((who.id.as_str(), who.parent.as_deref()), (FORK, None));
    assert_eq!(who.fork_of.as_deref(), Some(PARENT));
}

#[test]
fn parent_and_children_together_count_each_call_once() {
    let total: u64 = [PARENT, SUBAGENT, FORK]
        .iter()
        .map(|id| parse(id).1.usage.total().total_tokens)
        .sum();
    assert_eq!(total, 7740);
}

#[test]
fn local_shell_and_web_search_calls_are_tool_calls_paired_with_their_output() {
    let (messages, _) = parse(PARENT);
    let tools: Vec<&serde_json::Value> = messages
        .iter()
        .flat_map(|m| &m.blocks)
        .filter(|b| b["type"] == "tool")
        .collect();
    assert_eq!(tools.len(), 2, "{tools:?}");
    assert_eq!(tools[0]["name"], "local_shell");
    assert_eq!(tools[0]["id"], "call_sh1");
    assert!(tools[0]["parameters"].as_str().unwrap().contains("git"));
    assert_eq!(tools[0]["result"], "v1.0.0\nv1.0.1");
    assert_eq!(tools[1]["name"], "web_search");
    assert!(
        tools[1]["parameters"]
            .as_str()
            .unwrap()
            .contains("semver release checklist")
    );
    assert!(tools[1].get("id").is_none());
    // No raw block is left of either.
    assert!(!messages.iter().any(|m| {
        m.metadata
            .as_ref()
            .is_some_and(|md| md.get("itemType").is_some())
    }),);
}

#[test]
fn an_older_fork_whose_copy_kept_its_dates_is_recognized_by_them() {
    // The copy's lines keep the parent's (earlier) timestamps, seconds
    // apart: they are before the child began, so they are the copy.
    let text = std::fs::read_to_string(file(FORK)).unwrap();
    let mut p = LogParser::new(Format::Codex);
    for (i, line) in text.lines().enumerate() {
        let line = if (2..=14).contains(&(i + 1)) {
            line.replace(
                "2026-01-20T10:00:00.0",
                &format!("2026-01-20T09:00:{:02}.0", i),
            )
        } else {
            line.to_string()
        };
        p.line(i as u64 + 1, &line);
    }
    let (_, s) = p.finish();
    assert_eq!(s.copied_lines, 13);
    assert_eq!(s.usage.total().total_tokens, 3150);
}

/// A child log made of a copy of a parent's counts and its own calls:
/// with ordinals (a spawned subagent) or without (an older fork, the copy
/// dated at the fork's instant).
fn child_log(parent: &[u64], own: &[u64], ordinals: bool) -> Vec<String> {
    let tc = |total: u64, last: u64| {
        serde_json::json!({"type": "token_count", "info": {
            "total_token_usage": {"input_tokens": total, "output_tokens": 0, "total_tokens": total},
            "last_token_usage": {"input_tokens": last, "output_tokens": 0, "total_tokens": last}}})
    };
    let mut out = vec![];
    let mut push = |ts: String, ordinal: usize, ty: &str, payload: serde_json::Value| {
        let mut line = serde_json::json!({"timestamp": ts, "type": ty, "payload": payload});
        if ordinals {
            line["ordinal"] = ordinal.into();
        }
        out.push(line.to_string());
    };
    let start = parent.len() + 2;
    let mut meta = serde_json::json!({"id": SUBAGENT, "timestamp": "2026-01-20T09:05:00.000Z",
        "forked_from_id": PARENT});
    if ordinals {
        meta["subagent_history_start_ordinal"] = start.into();
    }
    push("2026-01-20T09:05:00.000Z".into(), 0, "session_meta", meta);
    push(
        "2026-01-20T09:05:00.001Z".into(),
        1,
        "session_meta",
        serde_json::json!({"id": PARENT}),
    );
    let mut total = 0;
    for (i, n) in parent.iter().enumerate() {
        total += n;
        push(
            format!("2026-01-20T09:05:00.{:03}Z", i + 2),
            i + 2,
            "event_msg",
            tc(total, *n),
        );
    }
    for (i, n) in own.iter().enumerate() {
        total += n;
        push(
            format!("2026-01-20T09:06:{:02}.000Z", i % 60),
            start + i,
            "event_msg",
            tc(total, *n),
        );
    }
    out
}

proptest::proptest! {
    /// Whatever the parent's copy holds, the child is charged with its own
    /// calls only: the copy's counts are where its counter starts.
    #[test]
    fn a_child_is_charged_with_its_own_calls_only(
        parent in proptest::collection::vec(1u64..1_000_000, 0..20),
        own in proptest::collection::vec(1u64..1_000_000, 0..20),
        ordinals in proptest::arbitrary::any::<bool>(),
    ) {
        let mut p = LogParser::new(Format::Codex);
        for (i, line) in child_log(&parent, &own, ordinals).iter().enumerate() {
            p.line(i as u64 + 1, line);
        }
        let (_, s) = p.finish();
        proptest::prop_assert_eq!(s.usage.total().total_tokens, own.iter().sum::<u64>());
        proptest::prop_assert_eq!(s.copied_lines, parent.len() as u64 + 1);
        proptest::prop_assert_eq!(s.fork_of.as_deref(), Some(PARENT));
    }
}

#[test]
fn a_continuation_page_is_its_own_transcript_charged_with_its_own_calls() {
    let path = sessions().join(format!(
        "2026/01/20/rollout-2026-01-20T09-00-00-{PARENT}_2.jsonl"
    ));
    let text = std::fs::read_to_string(&path).unwrap();
    let mut p = LogParser::new(Format::Codex);
    let mut messages = vec![];
    for (i, line) in text.lines().enumerate() {
        messages.extend(p.line(i as u64 + 1, line));
    }
    let (last, s) = p.finish();
    messages.extend(last);
    assert_eq!(s.usage.total(), codex(1500, 600, 100, 0));
    assert_eq!(s.continues.as_deref(), Some(PARENT));
    assert_eq!(texts(&messages), ["Tag the release now", "Tagged v1.1.0."]);
    let who = agent_log::identity(Format::Codex, &path, &s).unwrap();
    assert_ne!(who.id, PARENT);
    assert_eq!(who, agent_log::identity(Format::Codex, &path, &s).unwrap());
}

#[test]
fn an_item_of_an_unknown_type_is_kept_as_a_block_and_counted() {
    let text = std::fs::read_to_string(file(PARENT)).unwrap();
    let mut p = LogParser::new(Format::Codex);
    let mut messages = vec![];
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines.push(r#"{"timestamp":"2026-01-20T09:00:20.000Z","type":"response_item","payload":{"type":"image_generation_call","id":"ig_1","status":"completed","result":"iVBOR"}}"#.into());
    lines.push(r#"{"timestamp":"2026-01-20T09:00:21.000Z","type":"world_state","payload":{"agents_md":"x"}}"#.into());
    for (i, line) in lines.iter().enumerate() {
        messages.extend(p.line(i as u64 + 1, line));
    }
    let (last, s) = p.finish();
    messages.extend(last);
    assert_eq!(s.unknown_types["response_item/image_generation_call"], 1);
    assert_eq!(s.unknown_types["world_state"], 1);
    let kept = messages
        .iter()
        .flat_map(|m| &m.blocks)
        .any(|b| b["type"] == "image_generation_call" && b["result"] == "iVBOR");
    assert!(kept);
    // Counted, not billed.
    assert_eq!(s.usage.total().total_tokens, 2800);
}
