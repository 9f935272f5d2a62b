//! Claude Code and Codex logs read line by line: the messages they become
//! and the exact usage, on fixtures built by hand from the formats (under
//! `tests/fixtures/agent_log/`). Each test states its expected totals and
//! how they were worked out.

use logbook::Logbook;
use std::path::{Path, PathBuf};

use logbook::model::agent_log::{Format, LogParser, LogSummary, Usage};
use logbook::model::transcript::Message;
use serde_json::Value;

pub(crate) const MAIN_ID: &str = "11111111-2222-4333-8444-555566667777";

pub(crate) fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/agent_log")
}

/// Every line of `rel` through a parser of `format`.
fn parse(rel: &str, format: Format) -> (Vec<Message>, LogSummary) {
    let text = std::fs::read_to_string(fixtures().join(rel)).unwrap();
    let mut p = LogParser::new(format);
    let mut messages = vec![];
    for (i, line) in text.split('\n').enumerate() {
        if i + 1 == text.split('\n').count() && line.is_empty() {
            break; // the newline that ends the last line
        }
        messages.extend(p.line(i as u64 + 1, line));
    }
    let (last, summary) = p.finish();
    messages.extend(last);
    (messages, summary)
}

fn claude(i: u64, o: u64, cc: u64, cr: u64) -> Usage {
    Usage {
        input_tokens: i,
        output_tokens: o,
        cache_creation_input_tokens: cc,
        cache_read_input_tokens: cr,
        total_tokens: i + o + cc + cr,
        ..Usage::default()
    }
}

#[test]
fn streamed_message_counts_its_completed_stream_once() {
    // Lines 3-5 are one streamed reply (msg_A, req_A), output 2 → 40 → 180:
    // only the largest entry counts: in 10, out 180, cache write 100, read
    // 1000 = 1290. msg_B (line 7): 5 + 20 + 0 + 1300 = 1325. Opus: in 15,
    // out 200, cc 100, cr 2300, total 2615.
    // Line 8 (msg_C, no requestId) counts alone: haiku 1 + 1 = 2.
    // Line 9 is a progress line embedding a subagent's reply with 999/999:
    // not counted (the subagent file holds it). Total 2617.
    let rel = format!("claude/-work-demo/{MAIN_ID}.jsonl");
    let (messages, s) = parse(&rel, Format::ClaudeCode);
    assert_eq!(
        s.usage.by_model["claude-opus-4-5"],
        claude(15, 200, 100, 2300)
    );
    assert_eq!(s.usage.by_model["claude-haiku-4-5"], claude(1, 1, 0, 0));
    assert_eq!(s.usage.by_model.len(), 2);
    assert_eq!(s.usage.total().total_tokens, 2617);
    assert_eq!(s.usage.total().output_tokens, 201);
    assert!(s.usage.sidechain.is_zero());
    assert_eq!(s.usage.by_day.len(), 1);
    assert_eq!(
        s.usage.by_day["2026-01-18"]["claude-opus-4-5"].total_tokens,
        2615
    );

    // user, assistant (3 streamed lines as one message), tool result,
    // assistant, assistant.
    let roles: Vec<&str> = messages.iter().map(|m| m.role.as_str()).collect();
    assert_eq!(
        roles,
        ["user", "assistant", "user", "assistant", "assistant"]
    );
    let streamed = &messages[1];
    let types: Vec<&str> = streamed
        .blocks
        .iter()
        .map(|b| b["type"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["thinking", "text", "tool"]);
    assert_eq!(streamed.usage.as_ref().unwrap()["output_tokens"], 180);
    assert_eq!(streamed.usage.as_ref().unwrap()["total_tokens"], 1290);
    let md = streamed.metadata.as_ref().unwrap();
    assert_eq!(md["line"], 3);
    assert_eq!(md["lastLine"], 5);
    assert_eq!(md["model"], "claude-opus-4-5");
    assert_eq!(
        serde_json::from_str::<Value>(streamed.blocks[2]["parameters"].as_str().unwrap()).unwrap()
            ["file_path"],
        "/work/demo/README.md"
    );
    assert_eq!(messages[2].blocks[0]["type"], "tool_result");
    assert_eq!(messages[2].blocks[0]["result"], "File created");
    assert_eq!(messages[0].text(), "Add a README");

    assert_eq!(s.session_id.as_deref(), Some(MAIN_ID));
    assert_eq!(s.cwd.as_deref(), Some("/work/demo"));
    assert_eq!(s.git_branch.as_deref(), Some("main"));
    assert_eq!(
        s.first_timestamp.as_deref(),
        Some("2026-01-18T10:00:01.000Z")
    );
    assert_eq!(
        s.last_timestamp.as_deref(),
        Some("2026-01-18T10:00:09.000Z")
    );
    assert_eq!(s.lines, 10);
    assert!(s.bad_lines.is_empty());
    // Line 10 is of a type this parser does not know: kept, never fatal.
    assert_eq!(s.unknown_types["telemetry-ping"], 1);
    assert_eq!(s.messages, 5);
    assert!(!s.all_sidechain);
}

#[test]
fn subagent_file_counts_on_its_own() {
    // msg_S streamed over lines 2-3 (output 10 → 30): in 50, out 30 = 80.
    // msg_T (line 5): in 70, out 15, cache read 20 = 105. Haiku total 185.
    let rel = format!("claude/-work-demo/{MAIN_ID}/subagents/agent-a1b2c3d.jsonl");
    let (messages, s) = parse(&rel, Format::ClaudeCode);
    assert_eq!(s.usage.by_model["claude-haiku-4-5"], claude(120, 45, 0, 20));
    assert_eq!(s.usage.total().total_tokens, 185);
    assert_eq!(s.agent_id.as_deref(), Some("a1b2c3d"));
    assert_eq!(s.session_id.as_deref(), Some(MAIN_ID));
    assert!(s.all_sidechain);
    // Its lines name an agent, so they are not inline sidechain lines.
    assert!(s.usage.sidechain.is_zero());
    assert_eq!(messages.len(), 4);
    assert_eq!(messages[2].blocks[0]["result"], "Cargo.toml");
}

#[test]
fn inline_sidechain_lines_count_in_the_main_session_and_apart() {
    // Old versions wrote the subagent inline (isSidechain, no agentId).
    // Main: msg_M1 100 + 20 = 120, msg_M2 200 + 50 = 250. Sidechain: msg_X
    // 30 + 5 + cache read 10 = 45. Session total 415, of which sidechain 45.
    let (messages, s) = parse(
        "claude/-work-old/22222222-3333-4444-8555-666677778888.jsonl",
        Format::ClaudeCode,
    );
    assert_eq!(s.usage.total(), claude(330, 75, 0, 10));
    assert_eq!(s.usage.total().total_tokens, 415);
    assert_eq!(s.usage.sidechain, claude(30, 5, 0, 10));
    // The session ran over midnight (UTC): 120 on the 17th, 295 on the 18th.
    assert_eq!(
        s.usage.by_day["2026-01-17"]["claude-sonnet-4-5"].total_tokens,
        120
    );
    assert_eq!(
        s.usage.by_day["2026-01-18"]["claude-sonnet-4-5"].total_tokens,
        295
    );
    // summary, user, assistant, sidechain user, sidechain assistant, assistant.
    assert_eq!(messages.len(), 6);
    assert_eq!(messages[0].blocks[0]["type"], "summary");
    assert_eq!(messages[0].blocks[0]["content"], "Release planning");
    assert_eq!(messages[3].metadata.as_ref().unwrap()["sidechain"], true);
    assert!(!s.all_sidechain);
    // The summary line has no timestamp: the first is the user's.
    assert_eq!(
        s.first_timestamp.as_deref(),
        Some("2026-01-17T23:59:00.000Z")
    );
}

#[test]
fn compact_boundary_is_a_compress_block_and_usage_spans_it() {
    // Before the compaction: 300 + 30 = 330; after: 50 + 10 + cache read 100
    // = 160. Total 490; the context at the last call is 160.
    let (messages, s) = parse(
        "claude/-work-compact/33333333-4444-4555-8666-777788889999.jsonl",
        Format::ClaudeCode,
    );
    assert_eq!(s.usage.total(), claude(350, 40, 0, 100));
    assert_eq!(s.usage.total().total_tokens, 490);
    assert_eq!(s.latest_total_tokens, 160);
    let compress = &messages[2];
    assert_eq!(compress.role, "system");
    assert_eq!(compress.blocks[0]["type"], "compress");
    assert_eq!(compress.blocks[0]["compactMetadata"]["preTokens"], 155000);
    assert_eq!(messages.len(), 5);
}

#[test]
fn bad_and_truncated_lines_are_reported_by_number_and_the_rest_read() {
    // Line 2 is not JSON, line 4 (the last) is cut off mid-write. Lines 1
    // and 3 are read: msg_D1 10 + 5 = 15; msg_D2's 99 is never counted.
    let (messages, s) = parse(
        "claude/-work-cut/44444444-5555-4666-8777-888899990000.jsonl",
        Format::ClaudeCode,
    );
    assert_eq!(s.usage.total().total_tokens, 15);
    assert_eq!(messages.len(), 2);
    let lines: Vec<u64> = s.bad_lines.iter().map(|b| b.line).collect();
    assert_eq!(lines, [2, 4]);
    assert!(
        s.bad_lines[1].reason.contains("truncated"),
        "{:?}",
        s.bad_lines
    );
    assert_eq!(s.lines, 4);
}

#[test]
fn codex_counts_each_cumulative_total_once() {
    // token_count events: line 4 has info null (nothing); lines 8-9 are the
    // same total twice (in 1000, cached 600, out 200, reasoning 50, total
    // 1200) under gpt-5-codex; lines 12-13 the same total twice (in 2500,
    // cached 1800, out 260, reasoning 50, total 2760) after the model became
    // gpt-5. Counted: 1200 for gpt-5-codex, 2760 - 1200 = 1560 for gpt-5
    // (in 1500, cached 1200, out 60, reasoning 0); the session's usage is
    // the last total, 2760 (counting every event would give 7920).
    let (messages, s) = parse(
        "codex/2026/01/18/rollout-2026-01-18T10-00-00-0199aaaa-bbbb-7ccc-8ddd-eeeeffff0001.jsonl",
        Format::Codex,
    );
    let codex = |i, c, o, r, t| Usage {
        input_tokens: i,
        cached_input_tokens: c,
        output_tokens: o,
        reasoning_output_tokens: r,
        total_tokens: t,
        ..Usage::default()
    };
    assert_eq!(
        s.usage.by_model["gpt-5-codex"],
        codex(1000, 600, 200, 50, 1200)
    );
    assert_eq!(s.usage.by_model["gpt-5"], codex(1500, 1200, 60, 0, 1560));
    assert_eq!(s.usage.total(), codex(2500, 1800, 260, 50, 2760));
    assert_eq!(s.latest_total_tokens, 1560);
    assert_eq!(
        s.session_id.as_deref(),
        Some("0199aaaa-bbbb-7ccc-8ddd-eeeeffff0001")
    );
    assert_eq!(s.cwd.as_deref(), Some("/work/codex-demo"));
    assert_eq!(s.agent_version.as_deref(), Some("0.50.0"));
    // user, reasoning, function call, its output, reply, compaction.
    let roles: Vec<&str> = messages.iter().map(|m| m.role.as_str()).collect();
    assert_eq!(
        roles,
        [
            "user",
            "assistant",
            "assistant",
            "tool",
            "assistant",
            "system"
        ]
    );
    assert_eq!(messages[1].blocks[0]["type"], "thinking");
    assert_eq!(messages[2].blocks[0]["name"], "shell");
    assert_eq!(messages[4].metadata.as_ref().unwrap()["model"], "gpt-5");
    assert_eq!(messages[5].blocks[0]["type"], "compress");
    assert!(s.bad_lines.is_empty());
    assert_eq!(s.lines, 15);
}

/// The sum of what each message is charged with.
fn charged_sum(messages: &[Message], s: &LogSummary) -> Usage {
    let mut sum = Usage::default();
    for u in logbook::model::agent_log::charged(messages, Some(s.usage.total()))
        .into_iter()
        .flatten()
    {
        sum += u;
    }
    sum
}

#[test]
fn each_message_is_charged_what_it_adds_and_the_charges_add_up() {
    use logbook::model::agent_log::charged;
    // Claude Code: the streamed reply once (1290, not 2 + 40 + 180…),
    // msg_B 1325, msg_C 2; the user messages nothing.
    let rel = format!("claude/-work-demo/{MAIN_ID}.jsonl");
    let (messages, s) = parse(&rel, Format::ClaudeCode);
    let c = charged(&messages, Some(s.usage.total()));
    let totals: Vec<Option<u64>> = c.iter().map(|u| u.map(|u| u.total_tokens)).collect();
    assert_eq!(totals, [None, Some(1290), None, Some(1325), Some(2)]);
    assert_eq!(c[1], Some(claude(10, 180, 100, 1000)));
    assert_eq!(charged_sum(&messages, &s), s.usage.total());
    // Across a compaction.
    let (messages, s) = parse(
        "claude/-work-compact/33333333-4444-4555-8666-777788889999.jsonl",
        Format::ClaudeCode,
    );
    assert_eq!(charged_sum(&messages, &s), s.usage.total());
    // Codex: each count goes to the assistant item it follows; a repeated
    // event adds nothing, and the items add up to the last total.
    let (messages, s) = parse(
        "codex/2026/01/18/rollout-2026-01-18T10-00-00-0199aaaa-bbbb-7ccc-8ddd-eeeeffff0001.jsonl",
        Format::Codex,
    );
    let c = charged(&messages, Some(s.usage.total()));
    assert_eq!(charged_sum(&messages, &s), s.usage.total());
    assert_eq!(s.usage.total().total_tokens, 2760);
    // Only assistant items are charged.
    for (m, u) in messages.iter().zip(&c) {
        assert!(u.is_none() || m.role == "assistant", "{m:?}");
    }
    // A page of the messages at a time adds up the same, wherever the
    // pages split.
    let before = |m: &Message| {
        serde_json::from_value::<Usage>(m.metadata.as_ref()?.get("countedBefore")?.clone()).ok()
    };
    for split in 0..=messages.len() {
        let (a, b) = messages.split_at(split);
        let end_a = b.iter().find_map(before).unwrap_or(s.usage.total());
        let first_b = !a.iter().any(|m| before(m).is_some());
        let mut sum = Usage::default();
        for u in logbook::model::agent_log::charged_within(a, true, Some(end_a))
            .into_iter()
            .chain(logbook::model::agent_log::charged_within(
                b,
                first_b,
                Some(s.usage.total()),
            ))
            .flatten()
        {
            sum += u;
        }
        assert_eq!(sum, s.usage.total(), "split at {split}");
    }
    // Without the total, the last assistant item is not charged: nothing
    // is made up.
    let c = charged(&messages, None);
    let last = messages
        .iter()
        .rposition(|m| m.role == "assistant")
        .unwrap();
    assert_eq!(c[last], None);
}

#[test]
fn a_compaction_summary_is_a_marked_compress_block_never_a_prompt() {
    let (messages, _) = parse(
        "claude/-work-compact/33333333-4444-4555-8666-777788889999.jsonl",
        Format::ClaudeCode,
    );
    let summary = &messages[3];
    assert_eq!(summary.role, "system");
    assert_eq!(summary.blocks[0]["type"], "compress");
    assert_eq!(summary.blocks[0]["compactSummary"], true);
    assert!(
        summary.blocks[0]["content"]
            .as_str()
            .unwrap()
            .contains("Summary: the parser is half refactored."),
        "{summary:?}"
    );
    assert_eq!(summary.prompt_text(), None);
    assert!(messages[2].blocks[0].get("compactSummary").is_none());
}

#[test]
fn a_task_result_keeps_the_subagent_it_ran() {
    use logbook::model::transcript::tools;
    let lines = [
        r#"{"type":"assistant","sessionId":"s","uuid":"u1","requestId":"r1","message":{"id":"m1","model":"x","content":[{"type":"tool_use","id":"t1","name":"Task","input":{"description":"d","prompt":"p","subagent_type":"Explore"}},{"type":"tool_use","id":"t2","name":"Task","input":{}}],"usage":{"input_tokens":1,"output_tokens":2}}}"#,
        r#"{"type":"user","sessionId":"s","uuid":"u2","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"done"}]},"toolUseResult":{"status":"completed","agentId":"abc123"}}"#,
        r#"{"type":"user","sessionId":"s","uuid":"u3","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":[{"type":"text","text":"ok\nagentId: def456 (for resuming)"}]}]}}"#,
    ];
    let mut p = LogParser::new(Format::ClaudeCode);
    let mut messages = vec![];
    for (i, l) in lines.iter().enumerate() {
        messages.extend(p.line(i as u64 + 1, l));
    }
    messages.extend(p.finish().0);
    assert_eq!(messages[1].blocks[0]["agentId"], "abc123");
    let calls = tools::pair(&messages).calls;
    let agents: Vec<Option<String>> = calls
        .iter()
        .map(|c| c.subagent_agent_id(&messages))
        .collect();
    assert_eq!(
        agents,
        [Some("abc123".to_string()), Some("def456".to_string())]
    );
    assert_eq!(
        logbook::model::agent_log::subagent_id("s", "abc123"),
        logbook::model::agent_log::name_uuid("claude-code:s:abc123")
    );
}

#[test]
fn a_sparse_log_of_nul_bytes_is_stored_cut_not_six_times_its_size() {
    use std::io::Write as _;
    // Two valid lines, then a hole of NUL bytes up to 10 MB: one bad line
    // of about 10 MB that JSON would write as 60 MB.
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join(format!("{MAIN_ID}.jsonl"));
    let good: Vec<String> = std::fs::read_to_string(
        fixtures().join("claude/-work-demo/11111111-2222-4333-8444-555566667777.jsonl"),
    )
    .unwrap()
    .lines()
    .take(2)
    .map(str::to_string)
    .collect();
    let mut f = std::fs::File::create(&log).unwrap();
    writeln!(f, "{}\n{}", good[0], good[1]).unwrap();
    let head = f.metadata().unwrap().len();
    let size: u64 = 10_000_000;
    f.set_len(size).unwrap();
    drop(f);
    let project = tempfile::tempdir().unwrap();
    let p = Logbook::open(project.path()).unwrap();
    let r = logbook::ops::transcript::import_path(
        &p,
        &log,
        logbook::ops::transcript::ImportFormat::ClaudeCode,
        None,
    )
    .unwrap();
    let stored = &r.imported[0];
    assert_eq!(stored.bad_lines.len(), 1, "{:?}", stored.bad_lines);
    assert_eq!(stored.bad_lines[0].line, 3);
    let text = std::fs::read_to_string(&stored.file).unwrap();
    // The bound: the two valid lines (their messages and raw lines, a few
    // times their size), the head (metadata, usage), and the bad line's 4
    // KiB of JSON with its number and length.
    let kept = logbook::model::agent_log::BAD_LINE_KEPT as u64;
    let bound = 8 * head + 16 * 1024 + kept + 128;
    assert!(
        (text.len() as u64) < bound,
        "{} bytes stored from a log of {size}, bound {bound}",
        text.len()
    );
    let v: Value = serde_json::from_str(&text).unwrap();
    let raw = v["rawLines"].as_array().unwrap();
    assert_eq!(raw.len(), 3);
    assert_eq!(raw[0], good[0].as_str());
    let cut = &raw[2];
    assert_eq!(cut["line"], 3);
    assert_eq!(cut["bytes"], size - head);
    assert_eq!(cut["truncated"], true);
    let start = cut["text"].as_str().unwrap();
    assert_eq!(start.len() as u64, kept / 6);
    assert!(start.bytes().all(|b| b == 0));
    // Stored once: the bad line is named in the source's bad lines with
    // its reason, never its text.
    let bad = &v["metadata"]["source"]["badLines"];
    assert_eq!(bad[0]["line"], 3, "{bad}");
    assert!(!bad.to_string().contains("\\u0000"), "{bad}");
    // Imported again (the log grew by one valid line), the cut line is
    // stored once more at its place, not twice.
    let mut f = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    writeln!(f, "\n{}", good[1]).unwrap();
    drop(f);
    let again = logbook::ops::transcript::import_path(
        &p,
        &log,
        logbook::ops::transcript::ImportFormat::ClaudeCode,
        None,
    )
    .unwrap();
    assert_eq!(again.updated.len(), 1, "{again:?}");
    let text = std::fs::read_to_string(&again.updated[0].file).unwrap();
    assert!((text.len() as u64) < bound + 8 * head, "{}", text.len());
    let v: Value = serde_json::from_str(&text).unwrap();
    let raw = v["rawLines"].as_array().unwrap();
    assert_eq!(raw.len(), 4);
    assert_eq!(raw[2]["bytes"], size - head);
    assert_eq!(text.matches("\"truncated\": true").count(), 1);
    eprintln!(
        "a {size}-byte sparse log stored as {} bytes (bound {bound})",
        text.len()
    );
}
