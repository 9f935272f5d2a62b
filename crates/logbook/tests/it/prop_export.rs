//! Property tests of the export's mapping (`ops::export::map`): it never
//! panics on damaged agent logs, odd transcripts or odd manifests, and what
//! it makes is always sendable: ends never before starts, one span per id,
//! every parent one of the same transcript's spans or the span that started
//! it, and the same record always the same spans.

use std::collections::BTreeSet;

use logbook::model::agent_log::{Format, LogParser, Source};
use logbook::model::ids::RunId;
use logbook::model::run::{Manifest, Run};
use logbook::model::transcript::{Kind, Message, Metadata, Transcript};
use logbook::ops::export::map;
use logbook::ops::export::span::{Span, SpanId};
use proptest::prelude::*;
use serde_json::{Value, json};

use crate::agent_log::fixtures;
use crate::arb;

const FILES: [(&str, Format); 3] = [
    (
        "claude/-work-demo/11111111-2222-4333-8444-555566667777.jsonl",
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
];

/// A transcript as an import would store it, from the (damaged) log text.
fn imported(text: &str, format: Format, subagent: bool) -> (Transcript, Kind) {
    let mut p = LogParser::new(format);
    let mut messages = vec![];
    for (i, l) in text.lines().enumerate() {
        messages.extend(p.line(i as u64 + 1, l));
    }
    let (last, summary) = p.finish();
    messages.extend(last);
    let source: Source = serde_json::from_value(json!({
        "format": format.as_str(),
        "path": "/logs/x.jsonl",
        "bytes": text.len(),
        "lines": summary.lines,
        "fingerprint": "",
        "parser": 3,
        "sessionId": summary.session_id,
    }))
    .unwrap();
    let mut t = Transcript::new("11111111-2222-4333-8444-555566667777", "/work");
    t.messages = messages;
    t.metadata = Metadata {
        started_at: summary.first_timestamp.clone().unwrap_or_default(),
        last_active_at: summary.last_timestamp.clone().unwrap_or_default(),
        parent_session_id: subagent.then(|| "99999999-2222-4333-8444-555566667777".into()),
        ..Metadata::default()
    };
    t.metadata
        .extra
        .insert("source".into(), serde_json::to_value(&source).unwrap());
    t.metadata.extra.insert(
        "usage".into(),
        serde_json::to_value(&summary.usage).unwrap(),
    );
    let kind = if subagent { Kind::Subagent } else { Kind::Main };
    (t, kind)
}

/// The invariants every mapped transcript keeps.
fn check(t: &Transcript, kind: Kind, spans: &[Span]) -> Result<(), TestCaseError> {
    prop_assert!(!spans.is_empty(), "a transcript always has its root span");
    let ids: BTreeSet<SpanId> = spans.iter().map(|s| s.span_id).collect();
    prop_assert_eq!(ids.len(), spans.len(), "one span per id");
    let trace = spans[0].trace_id;
    let outside: BTreeSet<SpanId> = [
        map::subagent_call_span(&t.id),
        map::transcript_span(t.metadata.parent_session_id.as_deref().unwrap_or("")),
    ]
    .into();
    for s in spans {
        prop_assert!(s.end_ns >= s.start_ns, "{} ends before it starts", s.name);
        prop_assert_eq!(s.trace_id, trace);
        if let Some(p) = s.parent {
            prop_assert!(
                ids.contains(&p) || (kind == Kind::Subagent && outside.contains(&p)),
                "{} has a parent nowhere",
                s.name
            );
        }
    }
    Ok(())
}

fn message(role: String, blocks: Vec<Value>, metadata: Option<Value>) -> Message {
    serde_json::from_value(json!({"role": role, "blocks": blocks, "metadata": metadata}))
        .unwrap_or_else(|_| serde_json::from_value(json!({"role": "user"})).unwrap())
}

fn block() -> impl Strategy<Value = Value> {
    prop_oneof![
        arb::value(),
        (arb::text(), arb::text()).prop_map(
            |(id, name)| json!({"type": "tool", "id": id, "name": name, "parameters": {}})
        ),
        (arb::text(), any::<bool>()).prop_map(
            |(id, e)| json!({"type": "tool_result", "toolUseId": id, "result": "r", "isError": e})
        ),
        arb::text().prop_map(|t| json!({"type": "text", "content": t})),
    ]
}

fn metadata() -> impl Strategy<Value = Option<Value>> {
    proptest::option::of(prop_oneof![
        arb::value(),
        (arb::text(), arb::number()).prop_map(|(ts, n)| json!({
            "timestamp": ts, "model": "m", "countedUsage": {"input_tokens": n, "total_tokens": n},
        })),
        Just(json!({"timestamp": "2026-01-18T10:00:00Z", "lastTimestamp": "2026-01-18T09:00:00Z"})),
        Just(json!({"timestamp": "9999-12-31T23:59:59Z", "countedBefore": {"input_tokens": 5}})),
    ])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn damaged_logs_map_to_sendable_spans(
        m in arb::mutations(),
        file in 0..FILES.len(),
        subagent in any::<bool>(),
        content in any::<bool>(),
    ) {
        let raw = std::fs::read_to_string(fixtures().join(FILES[file].0)).unwrap();
        let (t, kind) = imported(&arb::mutate(&raw, &m), FILES[file].1, subagent);
        let spans = map::transcript(&t, kind, content, &|_| false);
        check(&t, kind, &spans)?;
        prop_assert_eq!(spans, map::transcript(&t, kind, content, &|_| false), "the same record, the same spans");
    }

    #[test]
    fn odd_transcripts_map_to_sendable_spans(
        messages in proptest::collection::vec(
            (prop::sample::select(vec!["user", "assistant", "tool", "system", ""]), proptest::collection::vec(block(), 0..4), metadata()),
            0..12,
        ),
        started in prop_oneof![arb::text(), Just("2026-01-18T10:00:00Z".to_string())],
        ended in prop_oneof![arb::text(), Just("1970-01-01T00:00:00Z".to_string())],
        usage in proptest::option::of(arb::value()),
        subagent in any::<bool>(),
    ) {
        let mut t = Transcript::new("t", "/w");
        t.messages = messages.into_iter().map(|(r, b, m)| message(r.to_string(), b, m)).collect();
        t.metadata.started_at = started;
        t.metadata.last_active_at = ended;
        t.metadata.parent_session_id = subagent.then(|| "p".to_string());
        if let Some(u) = usage {
            t.metadata.extra.insert("usage".into(), u);
        }
        let kind = if subagent { Kind::Subagent } else { Kind::Main };
        let spans = map::transcript(&t, kind, true, &|k| k.len() % 2 == 0);
        check(&t, kind, &spans)?;
    }

    #[test]
    fn odd_manifests_map_to_a_sendable_run_span(
        at in prop::sample::select(vec![
            "/execution/started_at", "/execution/completed_at", "/execution/status",
            "/outputs", "/outputs/0/created_at", "/related_sessions", "/metadata",
            "/metadata/work_session", "/agent/title", "/tags",
        ]),
        value in arb::value(),
    ) {
        let mut doc = json!({
            "version": "1.0.0",
            "session_id": "3f2c9d14-4b5e-4789-81ab-cdef12345678",
            "agent": {"name": "quinn", "title": "Quinn"},
            "workflow": {"name": "review"},
            "execution": {"started_at": "2026-01-18T10:00:00Z", "completed_at": "2026-01-18T10:05:00Z", "status": "completed"},
            "outputs": [{"file": "a.md", "type": "document", "description": "d", "created_at": "2026-01-18T10:01:00Z"}],
            "related_sessions": ["3f2c9d14-4b5e-4789-81ab-cdef12345679"],
            "metadata": {"work_session": "SES1"},
        });
        if let Some(slot) = doc.pointer_mut(at) {
            *slot = value;
        }
        let Ok(manifest) = serde_json::from_value::<Manifest>(doc) else {
            return Ok(());
        };
        let run = Run {
            id: RunId::parse("3f2c9d14-4b5e-4789-81ab-cdef12345678").unwrap(),
            folder: "/runs/x".into(),
            manifest,
        };
        if let Some(s) = map::run(&run, &mut |_| None) {
            prop_assert!(s.end_ns >= s.start_ns);
            prop_assert_eq!(s.span_id, map::run_span(run.id.as_str()));
            prop_assert_eq!(s.links.len(), run.manifest.related_sessions.as_ref().map_or(0, Vec::len));
        }
    }
}
