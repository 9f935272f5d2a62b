//! Property tests of the Claude Code and Codex log parsers: they never
//! panic on generated or damaged lines, a line written twice is never
//! counted twice, and an imported transcript keeps every line, unknown
//! fields and all.

use std::path::Path;

use logbook::model::agent_log::{Format, LogParser, LogSummary};
use proptest::prelude::*;
use serde_json::Value;

use crate::agent_log::{MAIN_ID, fixtures};
use crate::arb;

const FILES: [(&str, Format); 7] = [
    (
        "claude/-work-demo/11111111-2222-4333-8444-555566667777.jsonl",
        Format::ClaudeCode,
    ),
    (
        "claude/-work-old/22222222-3333-4444-8555-666677778888.jsonl",
        Format::ClaudeCode,
    ),
    (
        "claude/-work-compact/33333333-4444-4555-8666-777788889999.jsonl",
        Format::ClaudeCode,
    ),
    (
        "codex/2026/01/18/rollout-2026-01-18T10-00-00-0199aaaa-bbbb-7ccc-8ddd-eeeeffff0001.jsonl",
        Format::Codex,
    ),
    // A spawned subagent (ordinals) and a fork (a rewritten-timestamp
    // copy), see codex_forks.rs; a Claude Code persisted output stub.
    (
        "../codex_forks/sessions/2026/01/20/rollout-2026-01-20T09-05-00-0199bbbb-0000-7000-8000-000000000002.jsonl",
        Format::Codex,
    ),
    (
        "../codex_forks/sessions/2026/01/20/rollout-2026-01-20T10-00-00-0199bbbb-0000-7000-8000-000000000003.jsonl",
        Format::Codex,
    ),
    (
        "../claude_persisted/-work-big/55555555-6666-4777-8888-999900001111.jsonl",
        Format::ClaudeCode,
    ),
];

fn lines(i: usize) -> Vec<String> {
    std::fs::read_to_string(fixtures().join(FILES[i].0))
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

fn run(format: Format, lines: &[String]) -> LogSummary {
    let mut p = LogParser::new(format);
    for (i, l) in lines.iter().enumerate() {
        p.line(i as u64 + 1, l);
    }
    p.finish().1
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn never_panics_on_bytes(
        raw in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..160), 0..8),
        codex in any::<bool>(),
    ) {
        let lines: Vec<String> = raw.iter().map(|b| String::from_utf8_lossy(b).into_owned()).collect();
        let format = if codex { Format::Codex } else { Format::ClaudeCode };
        let s = run(format, &lines);
        prop_assert!(s.bad_lines.len() <= lines.len());
    }

    #[test]
    fn never_panics_on_damaged_logs(m in arb::mutations(), file in 0..FILES.len(), other in any::<bool>()) {
        let text = arb::mutate(&lines(file).join("\n"), &m);
        let lines: Vec<String> = text.lines().map(str::to_string).collect();
        // Read as written, and as the other agent's format.
        let mut format = FILES[file].1;
        if other {
            format = if format == Format::Codex { Format::ClaudeCode } else { Format::Codex };
        }
        let _ = run(format, &lines);
    }

    #[test]
    fn never_panics_on_odd_values(
        file in 0..FILES.len(),
        at in any::<prop::sample::Index>(),
        pointer in prop::sample::select(vec![
            "/type", "/timestamp", "/message", "/message/id", "/message/model",
            "/message/content", "/message/usage", "/message/usage/output_tokens",
            "/requestId", "/isSidechain", "/agentId", "/sessionId", "/cwd",
            "/payload", "/payload/type", "/payload/info", "/payload/info/total_token_usage",
            "/payload/info/total_token_usage/total_tokens", "/payload/content",
            "/payload/model", "/payload/output", "/payload/summary", "/compactMetadata",
        ]),
        v in arb::value(),
    ) {
        let mut lines = lines(file);
        let i = at.index(lines.len());
        let mut doc: Value = serde_json::from_str(&lines[i]).unwrap_or(Value::Null);
        if let Some(slot) = doc.pointer_mut(pointer) {
            *slot = v;
        } else if let (Value::Object(m), Some(key)) = (&mut doc, pointer.strip_prefix('/'))
            && !key.contains('/')
        {
            m.insert(key.to_string(), v);
        }
        lines[i] = doc.to_string();
        let _ = run(FILES[file].1, &lines);
    }

    /// Exact counting: a line the agent wrote twice (Claude Code's streamed
    /// copies, Codex's repeated token_count) never changes the usage.
    #[test]
    fn a_repeated_line_is_never_counted_twice(file in 0..FILES.len(), at in any::<prop::sample::Index>()) {
        let lines = lines(file);
        let i = at.index(lines.len());
        let mut twice = lines.clone();
        twice.insert(i + 1, lines[i].clone());
        let format = FILES[file].1;
        prop_assert_eq!(run(format, &lines).usage.by_model, run(format, &twice).usage.by_model);
        // And what the messages are charged with adds up to the usage,
        // repeat or not: a page's turns sum to `transcript usage`.
        for lines in [&lines, &twice] {
            let mut p = LogParser::new(format);
            let mut messages = vec![];
            for (i, l) in lines.iter().enumerate() {
                messages.extend(p.line(i as u64 + 1, l));
            }
            let (last, summary) = p.finish();
            messages.extend(last);
            let total = summary.usage.total();
            let mut sum = logbook::model::agent_log::Usage::default();
            for u in logbook::model::agent_log::charged(&messages, Some(total)).into_iter().flatten() {
                sum += u;
            }
            prop_assert_eq!(sum, total);
        }
    }

    /// What the parser does not know survives the import: every line is
    /// stored as it was (`rawLines`), and a content block of an unknown type
    /// keeps its fields in the message.
    #[test]
    fn unknown_fields_survive_an_import(
        top in arb::unknowns(),
        inner in arb::unknowns(),
        at in any::<prop::sample::Index>(),
    ) {
        let mut lines = lines(0);
        let i = at.index(lines.len());
        let mut doc: Value = serde_json::from_str(&lines[i]).unwrap();
        arb::add_unknowns(&mut doc, "", &top);
        arb::add_unknowns(&mut doc, "/message", &inner);
        lines[i] = doc.to_string();
        let block = serde_json::json!({"type": "x-future-block", "fields": Value::Object(inner.clone())});
        let mut extra: Value = serde_json::from_str(&lines[6]).unwrap();
        extra["message"]["content"] = Value::Array(vec![block.clone()]);
        lines[6] = extra.to_string();

        let dir = tempfile::tempdir().unwrap();
        let source = dir.path().join(format!("{MAIN_ID}.jsonl"));
        std::fs::write(&source, lines.join("\n") + "\n").unwrap();
        let len = std::fs::metadata(&source).unwrap().len();
        let (summary, fp) = logbook_store::agent_log::scan(&source, len, Format::ClaudeCode, &|_| {}).unwrap();
        prop_assert!(summary.bad_lines.is_empty());
        let metadata = logbook::model::transcript::Metadata::default();
        let target = dir.path().join("session_66667777.json");
        let head = logbook_store::agent_log::Head { id: MAIN_ID, timestamp: "t", metadata: &metadata };
        let mut said = logbook::model::transcript::SaidText::new(logbook_index::MAX_SAID_BYTES);
        let mut found = logbook::model::transcript::find::MessageText::new(0);
        logbook_store::agent_log::write_transcript_from(
            &target, &source, len, Format::ClaudeCode, &head, &fp.as_string(), None, &mut said, &mut found, None, &|_| {},
        ).unwrap();
        // What the writer gathered for the index is what a re-read (sync,
        // rebuild) of the stored file gathers.
        let (_, reread) = logbook_store::transcript::read_said(&target, logbook_index::MAX_SAID_BYTES).unwrap();
        prop_assert_eq!(said.into_string(), reread);
        let indexed = logbook_store::transcript::read_for_index(&target, logbook_index::MAX_SAID_BYTES).unwrap();
        prop_assert_eq!(Some(found), indexed.found);
        let stored: Value = serde_json::from_str(&std::fs::read_to_string(&target).unwrap()).unwrap();
        let raw: Vec<&str> = stored["rawLines"].as_array().unwrap().iter().map(|l| l.as_str().unwrap()).collect();
        prop_assert_eq!(raw, lines.iter().map(String::as_str).collect::<Vec<_>>());
        let kept = stored["messages"].as_array().unwrap().iter()
            .flat_map(|m| m["blocks"].as_array().unwrap().iter())
            .any(|b| arb::same(b, &block));
        prop_assert!(kept, "the unknown block is not in the messages");
        prop_assert!(Path::new(&target).exists());
    }

    /// A bad line is stored once, at its place in `rawLines`: whole when
    /// its JSON is at most 4 KiB, else cut to that with its length; the
    /// stored file is bounded by the log's valid lines and 4 KiB and a
    /// little per bad line, however long the bad lines are.
    #[test]
    fn bad_lines_are_stored_once_and_bounded(
        picks in proptest::collection::vec((0usize..100, 0usize..4, 0usize..40_000), 1..12),
    ) {
        let good = lines(0);
        let mut log: Vec<Vec<u8>> = vec![];
        for (at, kind, n) in picks {
            log.push(match kind {
                0 => good[at % good.len()].clone().into_bytes(),
                1 => vec![0u8; n],
                2 => vec![0xffu8; n / 3],
                _ => format!("{{oops \"{}", "é".repeat(n / 4)).into_bytes(),
            });
        }
        let dir = tempfile::tempdir().unwrap();
        let source = dir.path().join(format!("{MAIN_ID}.jsonl"));
        std::fs::write(&source, log.join(&b"\n"[..])).unwrap();
        let len = std::fs::metadata(&source).unwrap().len();
        let (summary, fp) = logbook_store::agent_log::scan(&source, len, Format::ClaudeCode, &|_| {}).unwrap();
        let metadata = logbook::model::transcript::Metadata::default();
        let target = dir.path().join("session_66667777.json");
        let head = logbook_store::agent_log::Head { id: MAIN_ID, timestamp: "t", metadata: &metadata };
        let mut said = logbook::model::transcript::SaidText::new(logbook_index::MAX_SAID_BYTES);
        let mut found = logbook::model::transcript::find::MessageText::new(0);
        logbook_store::agent_log::write_transcript_from(
            &target, &source, len, Format::ClaudeCode, &head, &fp.as_string(), None, &mut said, &mut found, None, &|_| {},
        ).unwrap();
        let text = std::fs::read_to_string(&target).unwrap();
        let stored: Value = serde_json::from_str(&text).unwrap();
        let raw = stored["rawLines"].as_array().unwrap();
        prop_assert_eq!(raw.len(), log.len());
        let bad: Vec<u64> = summary.bad_lines.iter().map(|b| b.line).collect();
        let kept = logbook::model::agent_log::BAD_LINE_KEPT;
        let mut bound = 8 << 10;
        for (i, (line, item)) in log.iter().zip(raw).enumerate() {
            let no = i as u64 + 1;
            let lossy = String::from_utf8_lossy(line);
            let is_bad = bad.contains(&no) && !line.is_empty();
            if is_bad {
                bound += kept + 128;
            } else {
                // Its raw line (at most twice itself in JSON) and its message.
                bound += 8 * line.len() + 1024;
            }
            match item {
                Value::String(s) => {
                    prop_assert_eq!(s.as_str(), &*lossy);
                    if is_bad {
                        prop_assert!(serde_json::to_string(s).unwrap().len() <= kept + 2);
                    }
                }
                Value::Object(o) => {
                    prop_assert!(is_bad, "line {} is cut but parsed", no);
                    prop_assert_eq!(&o["line"], &Value::from(no));
                    prop_assert_eq!(&o["bytes"], &Value::from(line.len()));
                    prop_assert_eq!(&o["truncated"], &Value::Bool(true));
                    let start = o["text"].as_str().unwrap();
                    prop_assert!(lossy.starts_with(start) && start.len() < lossy.len());
                    prop_assert!(serde_json::to_string(start).unwrap().len() <= kept + 2);
                    prop_assert!(serde_json::to_string(item).unwrap().len() <= kept + 128);
                }
                other => prop_assert!(false, "rawLines holds {}", other),
            }
        }
        // Stored once: no bad line's start is anywhere else in the file.
        prop_assert!(text.len() <= bound, "{} bytes stored, bound {}", text.len(), bound);
        prop_assert!(!text.contains(&"\\u0000".repeat(kept / 6 + 1)));
    }

    /// The start of a line never names the wrong agent: cut anywhere, it
    /// names none or the one the whole line names, and whole it names what
    /// the whole line names.
    #[test]
    fn the_start_of_a_line_never_names_the_wrong_agent(
        file in 0..FILES.len(),
        at in any::<prop::sample::Index>(),
        cut in any::<prop::sample::Index>(),
    ) {
        let lines = lines(file);
        let line = &lines[at.index(lines.len())];
        let whole = Format::detect(line);
        prop_assert_eq!(Format::detect_start(line), whole);
        let mut k = cut.index(line.len() + 1);
        while !line.is_char_boundary(k) {
            k -= 1;
        }
        let start = Format::detect_start(&line[..k]);
        prop_assert!(start.is_none() || start == whole, "{:?} at {k} of {line}", start);
    }

    #[test]
    fn the_start_of_any_bytes_never_panics(
        raw in proptest::collection::vec(any::<u8>(), 0..400),
        m in arb::mutations(),
        file in 0..FILES.len(),
    ) {
        let _ = Format::detect_start(&String::from_utf8_lossy(&raw));
        let damaged = arb::mutate(&lines(file).join("\n"), &m);
        for line in damaged.lines() {
            let _ = Format::detect_start(line);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    /// A line too long to hold as text (over 1 MiB, parsed straight from the
    /// file) is read exactly as a short one: the summary of a log with such
    /// lines, whole or damaged, is the one its lines give fed as text.
    #[test]
    fn a_long_line_is_read_as_a_short_one(
        file in 0..FILES.len(),
        at in any::<prop::sample::Index>(),
        damage in any::<bool>(),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut lines = lines(file);
        let i = at.index(lines.len());
        let mut doc: Value = serde_json::from_str(&lines[i]).unwrap_or(Value::Null);
        if let Value::Object(o) = &mut doc {
            o.insert("x-pasted".into(), Value::String("line\n\"text\" ".repeat(200_000)));
        }
        lines[i] = doc.to_string();
        if damage {
            let k = cut.index(lines[i].len());
            let k = (0..=k).rev().find(|&k| lines[i].is_char_boundary(k)).unwrap_or(0);
            lines[i].truncate(k);
        }
        let dir = tempfile::tempdir().unwrap();
        let source = dir.path().join("log.jsonl");
        std::fs::write(&source, lines.join("\n") + "\n").unwrap();
        let len = std::fs::metadata(&source).unwrap().len();
        let format = FILES[file].1;
        let (summary, _) = logbook_store::agent_log::scan(&source, len, format, &|_| {}).unwrap();
        prop_assert_eq!(summary, run(format, &lines));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// A damaged compressed rollout (bytes changed, cut, or none of it
    /// zstd) never panics the unpacking or the detection: it is refused or
    /// read as what it unpacks to.
    #[test]
    fn a_damaged_compressed_rollout_never_panics(
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..8),
        cut in any::<prop::sample::Index>(),
        garbage in any::<bool>(),
    ) {
        let name = "rollout-2026-01-19T08-00-00-0199cccc-0000-7000-8000-00000000000a.jsonl.zst";
        let mut bytes = std::fs::read(fixtures().join("../codex_zst/sessions/2026/01/19").join(name)).unwrap();
        if garbage {
            bytes = flips.iter().map(|(_, b)| *b).collect();
        } else {
            for (at, b) in &flips {
                let i = at.index(bytes.len());
                bytes[i] = *b;
            }
            bytes.truncate(cut.index(bytes.len() + 1));
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, &bytes).unwrap();
        let _ = logbook_store::agent_log::detect(&path);
        if let Ok(unpacked) = logbook_store::agent_log::unpack(dir.path(), &path) {
            let text = std::fs::read(unpacked.path()).unwrap();
            prop_assert!(text.len() as u64 <= logbook_store::agent_log::UNPACKED_AT_MOST);
        }
        // The unpacked copy is gone once dropped.
        let left = std::fs::read_dir(dir.path().join("unpacked")).map_or(0, |d| d.count());
        prop_assert_eq!(left, 0);
    }
}
