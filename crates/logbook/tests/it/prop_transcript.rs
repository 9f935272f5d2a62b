//! Property tests of transcript JSON (seed 003): parsing never panics, and
//! an import or save keeps every value it does not fill in.

use std::path::Path;

use logbook::model::text;
use logbook::model::transcript::{Message, Transcript};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

use crate::arb;
use logbook_store::transcript::{self as store, WindowStop};

const PATH: &str = "session_3c4d5e6f.json";

fn fixture() -> String {
    arb::shared("fixtures/transcript-main.json")
}

fn parse(text: &str) -> logbook::Result<(Transcript, Value)> {
    text::parse_json_with_raw(Path::new(PATH), "transcript", text)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn never_panics_on_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        let text = String::from_utf8_lossy(&bytes);
        let _ = parse(&text);
        let _ = serde_json::from_str::<Transcript>(&text);
    }

    #[test]
    fn never_panics_on_mutated_fixtures(m in arb::mutations(), sub in any::<bool>()) {
        let original = if sub { arb::shared("fixtures/transcript-subagent.json") } else { fixture() };
        let text = arb::mutate(&original, &m);
        let _ = parse(&text);
        let _ = serde_json::from_str::<Transcript>(&text);
    }

    #[test]
    fn never_panics_on_values(v in arb::value(), key in prop::sample::select(vec![
        "id", "timestamp", "version", "messages", "metadata",
    ]), meta_key in prop::sample::select(vec![
        "workdir", "startedAt", "lastActiveAt", "latestTotalTokens", "parentSessionId",
    ]), v2 in arb::value()) {
        let mut doc: Value = serde_json::from_str(&fixture()).unwrap();
        doc[key] = v;
        if let Some(Value::Object(m)) = doc.get_mut("metadata") {
            m.insert(meta_key.to_string(), v2);
        }
        if let Ok((t, raw)) = parse(&doc.to_string()) {
            let out = text::to_json(Path::new(PATH), &t, Some(&raw)).unwrap();
            prop_assert!(parse(&out).is_ok());
        }
    }

    #[test]
    fn rewrite_keeps_what_it_does_not_own(
        top in arb::unknowns(),
        meta in arb::unknowns(),
        msg in arb::unknowns(),
        block in arb::unknowns(),
        parent_null in any::<bool>(),
    ) {
        let mut doc: Value = serde_json::from_str(&fixture()).unwrap();
        arb::add_unknowns(&mut doc, "", &top);
        arb::add_unknowns(&mut doc, "/metadata", &meta);
        arb::add_unknowns(&mut doc, "/messages/0", &msg);
        arb::add_unknowns(&mut doc, "/messages/0/blocks/0", &block);
        if parent_null {
            doc["metadata"]["parentSessionId"] = Value::Null;
        }
        let (mut t, raw) = parse(&serde_json::to_string_pretty(&doc).unwrap()).unwrap();
        prop_assert_eq!(&raw, &doc);
        // What a save changes: a message appended, the last activity.
        t.messages.push(Message {
            role: "assistant".into(),
            blocks: vec![json!({"type": "text", "text": "more"})],
            usage: None,
            metadata: None,
            extra: Map::new(),
        });
        t.metadata.last_active_at = "2030-01-01T00:00:00.000Z".into();
        let out = text::to_json(Path::new(PATH), &t, Some(&raw)).unwrap();
        let (_, back) = parse(&out).unwrap();
        let mut expected = doc.clone();
        expected["metadata"]["lastActiveAt"] = json!("2030-01-01T00:00:00.000Z");
        expected["messages"].as_array_mut().unwrap().push(json!({"role": "assistant", "blocks": [{"type": "text", "text": "more"}]}));
        prop_assert_eq!(&back, &expected);
    }
}

/// A message as agents write them, or of an odd shape the format still
/// takes: unknown keys, an explicit null usage, blocks of any JSON.
fn message() -> impl Strategy<Value = Value> {
    (
        prop::sample::select(vec!["user", "assistant", "tool", "system"]),
        proptest::collection::vec(arb::value(), 0..3),
        arb::unknowns(),
        any::<bool>(),
    )
        .prop_map(|(role, blocks, extra, null_usage)| {
            let mut m = json!({"role": role, "blocks": blocks});
            arb::add_unknowns(&mut m, "", &extra);
            if null_usage {
                m["usage"] = Value::Null;
            }
            m
        })
}

/// A transcript's text with its keys in the order given by `order` (a
/// permutation seed), unknown keys among them, and, with `recorded`, the
/// count in its metadata as an imported log's has it.
fn transcript_text(
    messages: &[Value],
    unknowns: &Map<String, Value>,
    order: &[usize],
    recorded: bool,
) -> String {
    let mut metadata = json!({"workdir": "/w", "startedAt": "2026-01-01T00:00:00.000Z"});
    if recorded {
        metadata["source"] = json!({"messages": messages.len()});
    }
    let mut keys: Vec<(String, Value)> = vec![
        ("id".into(), json!("6f1c2b9e-3d4a-4c5b-9e8f-1a2b3c4d5e6f")),
        ("timestamp".into(), json!("2026-01-02T00:00:00.000Z")),
        ("messages".into(), Value::Array(messages.to_vec())),
        ("metadata".into(), metadata),
    ];
    keys.extend(unknowns.iter().map(|(k, v)| (k.clone(), v.clone())));
    // Each key goes to the place its seed says, so every order is reached.
    let mut placed: Vec<(usize, (String, Value))> = keys
        .into_iter()
        .enumerate()
        .map(|(i, kv)| (order.get(i).copied().unwrap_or(i), kv))
        .collect();
    placed.sort_by_key(|(o, _)| *o);
    let body: Vec<String> = placed
        .iter()
        .map(|(_, (k, v))| format!("{}: {}", json!(k), serde_json::to_string_pretty(v).unwrap()))
        .collect();
    format!("{{{}}}", body.join(",\n"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    /// A window is the slice of the whole parse, the total its length, in
    /// any key order, stopping early or not.
    #[test]
    fn a_window_is_the_slice_of_the_whole(
        messages in proptest::collection::vec(message(), 0..40),
        unknowns in arb::unknowns(),
        order in proptest::collection::vec(0usize..16, 9),
        recorded in any::<bool>(),
        from in 0usize..50,
        count in 0usize..50,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(PATH);
        std::fs::write(&path, transcript_text(&messages, &unknowns, &order, recorded)).unwrap();
        let whole = store::read_file(&path).unwrap();
        let len = whole.messages.len();
        let slice = &whole.messages[from.min(len)..from.saturating_add(count).min(len)];
        for stop in [WindowStop::AtEnd, WindowStop::Early, WindowStop::WindowLines] {
            let w = store::read_window(&path, from, count, stop).unwrap();
            prop_assert_eq!(&w.transcript.messages[..], slice);
            prop_assert_eq!(w.total, len);
            prop_assert_eq!(w.from, from.min(len));
            prop_assert_eq!(&w.transcript.id, &whole.id);
            prop_assert_eq!(&w.transcript.metadata, &whole.metadata);
            if stop == WindowStop::AtEnd {
                prop_assert!(w.whole);
                prop_assert_eq!(&w.transcript.extra, &whole.extra);
                prop_assert_eq!(&w.transcript.timestamp, &whole.timestamp);
            }
        }
    }

    /// Mutated files never panic the windowed reader, and a file the whole
    /// parse reads gives the same window read to its end.
    #[test]
    fn a_window_of_a_mutated_file_never_panics(
        messages in proptest::collection::vec(message(), 0..8),
        m in arb::mutations(),
        recorded in any::<bool>(),
        from in 0usize..10,
        count in 0usize..10,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(PATH);
        let text = arb::mutate(&transcript_text(&messages, &Map::new(), &[], recorded), &m);
        std::fs::write(&path, &text).unwrap();
        let early = store::read_window(&path, from, count, WindowStop::Early);
        let at_end = store::read_window(&path, from, count, WindowStop::AtEnd);
        if let Ok(whole) = store::read_file(&path) {
            let w = at_end.unwrap();
            let len = whole.messages.len();
            prop_assert_eq!(&w.transcript.messages[..], &whole.messages[from.min(len)..(from + count).min(len)]);
            prop_assert_eq!(w.total, len);
        }
        let _ = early;
    }
}
