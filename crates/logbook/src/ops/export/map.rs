//! Records to spans, following the OpenTelemetry GenAI semantic conventions
//! [`SEMCONV_VERSION`](super::SEMCONV_VERSION): pure functions of one record
//! each (and, for a run's lineage, the traces of the runs it names), so the
//! same record always maps to the same spans with the same ids.
//!
//! | record | span |
//! |---|---|
//! | work session | root span `work_session <id>` of trace `work-session/<id>` |
//! | run | `invoke_agent <agent>` under its session (its own trace without one) |
//! | workflow invocation | `invoke_agent <agent>` under its session |
//! | decision, verdict, handoff | events on the session's span |
//! | imported transcript | `invoke_agent <source>` root of trace `transcript/<main id>` |
//! | model turn | `chat <model>` with its usage, charged as `transcript usage` counts |
//! | tool call | `execute_tool <name>`; a subagent's root runs under the call that started it |

use jiff::Timestamp;
use serde_json::Value;

use super::span::{
    AttrValue, Attribute, Span, SpanEvent, SpanId, SpanKind, SpanLink, SpanStatus, TraceId,
};
use crate::model::agent_log::{self, Usage};
use crate::model::price::{PriceTable, round_usd};
use crate::model::run::{Run, RunStatus};
use crate::model::transcript::{self, Kind, Message, Transcript, tools};
use crate::model::work_session::WorkSession;
use crate::model::workflow::{AgentInvocation, InvocationStatus, SessionState};

/// Nanoseconds since the epoch of an RFC 3339 time; `None` when it is not one.
pub fn ns(time: &str) -> Option<u64> {
    let t: Timestamp = time.trim().parse().ok()?;
    u64::try_from(t.as_nanosecond()).ok()
}

fn str_attr(key: &'static str, v: impl Into<String>) -> Attribute {
    (key, AttrValue::Str(v.into()))
}

fn int_attr(key: &'static str, v: u64) -> Attribute {
    (key, AttrValue::Int(i64::try_from(v).unwrap_or(i64::MAX)))
}

/// The trace of work session `id`.
pub fn session_trace(id: &str) -> TraceId {
    TraceId::of("work-session", &[id])
}

/// The root span of work session `id`.
pub fn session_span(id: &str) -> SpanId {
    SpanId::of("work-session", &[id])
}

/// The trace a run belongs to: its work session's, else its own.
pub fn run_trace(run_id: &str, work_session: Option<&str>) -> TraceId {
    match work_session {
        Some(ws) => session_trace(ws),
        None => TraceId::of("run", &[run_id]),
    }
}

/// The span of run `id`.
pub fn run_span(run_id: &str) -> SpanId {
    SpanId::of("run", &[run_id])
}

/// The span of a work session: its token budget and peak as attributes,
/// its decisions, verdicts and handoffs (from `state`, when it has one)
/// as events.
pub fn work_session(ws: &WorkSession, state: Option<&SessionState>) -> Span {
    let start = ns(&ws.created).unwrap_or(0);
    let end = ns(&ws.last_updated).unwrap_or(start).max(start);
    let mut attributes = vec![
        str_attr("gen_ai.conversation.id", ws.session_id.clone()),
        str_attr("logbook.work_session.id", ws.session_id.clone()),
        str_attr("logbook.work_session.status", ws.status.as_str()),
        int_attr("logbook.work_session.token_budget", ws.tokens.max),
        int_attr("logbook.work_session.peak_tokens", ws.tokens.peak),
        int_attr("logbook.work_session.current_tokens", ws.tokens.current),
    ];
    if !ws.client.is_empty() {
        attributes.push(str_attr("logbook.work_session.client", ws.client.clone()));
    }
    if !ws.project.is_empty() {
        attributes.push(str_attr("logbook.work_session.project", ws.project.clone()));
    }
    let mut events = vec![];
    for m in &ws.milestones {
        if let Some(t) = m.completed.as_deref().and_then(ns) {
            events.push(SpanEvent {
                name: "logbook.milestone".into(),
                time_ns: t,
                attributes: vec![str_attr("logbook.milestone.name", m.name.clone())],
            });
        }
    }
    if let Some(wf) = state.and_then(|s| s.orchestrator_workflow.as_ref()) {
        for d in &wf.decisions {
            events.push(SpanEvent {
                name: "logbook.decision".into(),
                time_ns: ns(&d.timestamp).unwrap_or(end),
                attributes: vec![
                    str_attr("logbook.decision.id", d.id.clone()),
                    str_attr("logbook.decision.type", d.kind.as_str()),
                    str_attr("logbook.decision.description", d.description.clone()),
                    str_attr("logbook.decision.decided_by", d.decided_by.as_str()),
                ],
            });
        }
        for v in &wf.verdicts {
            events.push(SpanEvent {
                name: "logbook.verdict".into(),
                time_ns: ns(&v.timestamp).unwrap_or(end),
                attributes: vec![
                    str_attr("gen_ai.agent.name", v.agent.as_str()),
                    str_attr("logbook.verdict.decision", v.decision.as_str()),
                    (
                        "logbook.verdict.confidence",
                        AttrValue::Str(v.confidence.fraction().to_string()),
                    ),
                ],
            });
        }
        for h in &wf.pending_handoffs {
            events.push(SpanEvent {
                name: "logbook.handoff".into(),
                time_ns: ns(&h.created_at).unwrap_or(end),
                attributes: vec![
                    str_attr("logbook.handoff.from", h.from_agent.as_str()),
                    str_attr("logbook.handoff.to", h.to_agent.as_str()),
                    str_attr("logbook.handoff.reason", h.reason.clone()),
                ],
            });
        }
    }
    Span {
        trace_id: session_trace(&ws.session_id),
        span_id: session_span(&ws.session_id),
        parent: None,
        name: format!("work_session {}", ws.session_id),
        kind: SpanKind::Internal,
        start_ns: start,
        end_ns: end,
        attributes,
        events,
        links: vec![],
        status: SpanStatus::Unset,
    }
}

/// The span of one finished workflow invocation of work session `session`
/// (`None` while it is in progress: only what finished is sent). A
/// handoff that ended it is an event on it.
pub fn invocation(session: &str, inv: &AgentInvocation) -> Option<Span> {
    if inv.status == InvocationStatus::InProgress {
        return None;
    }
    let start = ns(&inv.started_at)?;
    let end = inv
        .completed_at
        .as_deref()
        .and_then(ns)
        .unwrap_or(start)
        .max(start);
    let agent = inv.agent.as_str();
    let status = match inv.status {
        InvocationStatus::Failed => SpanStatus::Error("invocation failed".into()),
        _ => SpanStatus::Ok,
    };
    let mut attributes = vec![
        str_attr("gen_ai.operation.name", "invoke_agent"),
        str_attr("gen_ai.agent.name", agent),
        str_attr("gen_ai.conversation.id", session),
        str_attr("logbook.invocation.status", inv.status.as_str()),
    ];
    if let SpanStatus::Error(_) = status {
        attributes.push(str_attr("error.type", "invocation_failed"));
    }
    let mut events = vec![];
    if let Some(to) = &inv.handoff_to {
        events.push(SpanEvent {
            name: "logbook.handoff".into(),
            time_ns: end,
            attributes: vec![
                str_attr("logbook.handoff.from", agent),
                str_attr("logbook.handoff.to", to.as_str()),
                str_attr("logbook.handoff.reason", inv.handoff_reason.clone()),
            ],
        });
    }
    Some(Span {
        trace_id: session_trace(session),
        span_id: SpanId::of("invocation", &[session, &inv.started_at, agent]),
        parent: Some(session_span(session)),
        name: format!("invoke_agent {agent}"),
        kind: SpanKind::Internal,
        start_ns: start,
        end_ns: end,
        attributes,
        events,
        links: vec![],
        status,
    })
}

/// The `invoke_agent` span of a finished run (`None` while it runs):
/// outputs as events, lineage as links. `trace_of` gives the trace of a
/// related run (its work session's), when it can be read.
pub fn run(run: &Run, trace_of: &mut dyn FnMut(&str) -> Option<TraceId>) -> Option<Span> {
    let m = &run.manifest;
    let status = match &m.execution.status {
        RunStatus::Running => return None,
        RunStatus::Completed => SpanStatus::Ok,
        RunStatus::Failed => SpanStatus::Error("run failed".into()),
        RunStatus::Cancelled => SpanStatus::Error("run cancelled".into()),
        RunStatus::Other(s) => SpanStatus::Error(format!("run ended {s}")),
    };
    let id = run.id.as_str();
    let ws = run.manifest.work_session();
    let start = ns(&m.execution.started_at).unwrap_or(0);
    let end = m
        .execution
        .completed_at
        .as_deref()
        .and_then(ns)
        .unwrap_or(start)
        .max(start);
    let attributes = run_attributes(run, &status);
    let events = m
        .outputs
        .iter()
        .map(|o| SpanEvent {
            name: "logbook.output".into(),
            time_ns: ns(&o.created_at).unwrap_or(end),
            attributes: vec![
                str_attr("logbook.output.file", o.file.clone()),
                str_attr("logbook.output.type", o.output_type.as_str()),
                str_attr("logbook.output.description", o.description.clone()),
            ],
        })
        .collect();
    let links = m
        .related_sessions
        .iter()
        .flatten()
        .map(|rel| SpanLink {
            trace_id: trace_of(rel).unwrap_or_else(|| run_trace(rel, None)),
            span_id: run_span(rel),
            attributes: vec![str_attr("logbook.link", "builds_on")],
        })
        .collect();
    Some(Span {
        trace_id: run_trace(id, ws),
        span_id: run_span(id),
        parent: ws.map(session_span),
        name: format!("invoke_agent {}", m.agent.name),
        kind: SpanKind::Internal,
        start_ns: start,
        end_ns: end,
        attributes,
        events,
        links,
        status,
    })
}

/// The GenAI and Logbook attributes of a finished run's span.
fn run_attributes(run: &Run, status: &SpanStatus) -> Vec<Attribute> {
    let m = &run.manifest;
    let id = run.id.as_str();
    let mut attributes = vec![
        str_attr("gen_ai.operation.name", "invoke_agent"),
        str_attr("gen_ai.agent.name", m.agent.name.clone()),
        str_attr("gen_ai.agent.id", id),
        str_attr("logbook.run.id", id),
        str_attr("logbook.run.status", m.execution.status.as_str()),
        str_attr("logbook.workflow.name", m.workflow.name.clone()),
    ];
    if let Some(title) = &m.agent.title {
        attributes.push(str_attr("gen_ai.agent.description", title.clone()));
        attributes.push(str_attr("logbook.agent.title", title.clone()));
    }
    if let Some(ws) = m.work_session() {
        attributes.push(str_attr("gen_ai.conversation.id", ws));
    }
    if let Some(user) = &m.execution.user {
        attributes.push(str_attr("logbook.run.user", user.clone()));
    }
    if !m.tags.is_empty() {
        attributes.push(("logbook.run.tags", AttrValue::StrList(m.tags.clone())));
    }
    if matches!(status, SpanStatus::Error(_)) {
        attributes.push(str_attr(
            "error.type",
            format!("run_{}", m.execution.status.as_str()),
        ));
    }
    attributes
}

/// The trace of the main session `main` (a subagent's is its parent's).
pub fn transcript_trace(main: &str) -> TraceId {
    TraceId::of("transcript", &[main])
}

/// The root span of transcript `id`.
pub fn transcript_span(id: &str) -> SpanId {
    SpanId::of("transcript", &[id])
}

/// The span of the tool call that started subagent transcript `id`: a
/// subagent's root runs under it, and it is derived from the subagent's
/// id so that either side can name it alone.
pub fn subagent_call_span(id: &str) -> SpanId {
    SpanId::of("subagent-call", &[id])
}

fn message_time(m: &Message, key: &str) -> Option<u64> {
    m.metadata.as_ref()?.get(key)?.as_str().and_then(ns)
}

fn message_str<'a>(m: &'a Message, key: &str) -> Option<&'a str> {
    m.metadata.as_ref()?.get(key)?.as_str()
}

/// The GenAI usage attributes of `u`. The conventions count cache reads
/// and writes inside `gen_ai.usage.input_tokens`: Claude Code's
/// `input_tokens` leaves them out, so they are added back; Codex's already
/// holds its cached part. `logbook.usage.total_tokens` is the total
/// `transcript usage` reports.
pub fn usage_attributes(u: &Usage) -> Vec<Attribute> {
    let cache_read = u.cache_read_input_tokens + u.cached_input_tokens;
    let mut out = vec![
        int_attr("gen_ai.usage.input_tokens", u.prompt_tokens()),
        int_attr("gen_ai.usage.output_tokens", u.completion_tokens()),
        int_attr("logbook.usage.total_tokens", u.total_tokens),
    ];
    if cache_read > 0 {
        out.push(int_attr("gen_ai.usage.cache_read.input_tokens", cache_read));
    }
    if u.cache_creation_input_tokens > 0 {
        out.push(int_attr(
            "gen_ai.usage.cache_creation.input_tokens",
            u.cache_creation_input_tokens,
        ));
    }
    if u.reasoning_output_tokens > 0 {
        out.push(int_attr(
            "gen_ai.usage.reasoning.output_tokens",
            u.reasoning_output_tokens,
        ));
    }
    out
}

fn provider(source: &str) -> Option<&'static str> {
    match source {
        "claude-code" => Some("anthropic"),
        "codex" => Some("openai"),
        _ => None,
    }
}

/// The text blocks of a message, joined (for `--content` only).
fn text_of(m: &Message) -> String {
    m.text_blocks().collect::<Vec<_>>().join("\n")
}

/// The spans of one transcript: its root (`invoke_agent`), a `chat` span
/// per model turn charged with tokens (every assistant message, in a
/// transcript that measured none), an `execute_tool` span per tool call
/// that has its result. Calls still waiting are left for a later export.
/// Message text goes in only with `content`. `counted_elsewhere` says
/// whether a Claude Code call (`"{messageId}:{requestId}"`) is counted in a
/// session that began earlier (a resumed session copies calls into its own
/// file): its turn then carries no usage, as `transcript usage` counts it
/// once.
pub fn transcript(
    t: &Transcript,
    kind: Kind,
    content: bool,
    counted_elsewhere: &dyn Fn(&str) -> bool,
) -> Vec<Span> {
    transcript_priced(t, kind, content, counted_elsewhere, None)
}

/// [`transcript`] with each model turn's cost at `prices`
/// (`gen_ai.usage.cost`, US dollars, the attribute Langfuse reads; left
/// out for a model not priced) and the table it came from
/// (`logbook.cost.prices`).
pub fn transcript_priced(
    t: &Transcript,
    kind: Kind,
    content: bool,
    counted_elsewhere: &dyn Fn(&str) -> bool,
    prices: Option<&PriceTable>,
) -> Vec<Span> {
    let md = &t.metadata;
    let main = match (kind, &md.parent_session_id) {
        (Kind::Subagent, Some(parent)) => parent.as_str(),
        _ => t.id.as_str(),
    };
    let first = t.messages.iter().find_map(|m| message_time(m, "timestamp"));
    let start = ns(&md.started_at).or(first).unwrap_or(0);
    let cx = TranscriptTrace {
        t,
        kind,
        content,
        main,
        source: transcript::source_name(md).to_string(),
        trace_id: transcript_trace(main),
        root: transcript_span(&t.id),
        start,
        prices,
    };
    let total = agent_log::usage_of(md).map(|book| book.total());
    let mut spans = vec![cx.root_span(total)];
    spans.extend(cx.turn_spans(total, counted_elsewhere));
    spans.extend(cx.tool_spans());
    spans
}

/// What every span of one transcript shares.
struct TranscriptTrace<'a> {
    t: &'a Transcript,
    kind: Kind,
    /// Whether message text goes in.
    content: bool,
    /// The main session's id: the conversation and the trace.
    main: &'a str,
    source: String,
    trace_id: TraceId,
    root: SpanId,
    start: u64,
    prices: Option<&'a PriceTable>,
}

impl TranscriptTrace<'_> {
    /// The transcript's `invoke_agent` root, linked to its run.
    fn root_span(&self, total: Option<Usage>) -> Span {
        let (t, md, source) = (self.t, &self.t.metadata, self.source.as_str());
        let mut attrs = vec![
            str_attr("gen_ai.operation.name", "invoke_agent"),
            str_attr("gen_ai.agent.name", source),
            str_attr("gen_ai.conversation.id", self.main),
            str_attr("logbook.transcript.id", t.id.clone()),
            str_attr("logbook.transcript.kind", self.kind.as_str()),
            str_attr("logbook.transcript.workdir", md.workdir.clone()),
        ];
        if let Some(p) = provider(source) {
            attrs.push(str_attr("gen_ai.provider.name", p));
        }
        if let Some(u) = total {
            attrs.push(int_attr("logbook.transcript.total_tokens", u.total_tokens));
        }
        let title = transcript::title(md, t.first_prompt().as_deref());
        if self.content && !title.is_empty() {
            attrs.push(str_attr("logbook.transcript.title", title));
        }
        let mut links = vec![];
        if let Some(run) = t.run_id() {
            links.push(SpanLink {
                trace_id: run_trace(run, None),
                span_id: run_span(run),
                attributes: vec![str_attr("logbook.link", "run")],
            });
        }
        let subagent = self.kind == Kind::Subagent;
        Span {
            trace_id: self.trace_id,
            span_id: self.root,
            // A Claude Code subagent runs under the Task call that started it;
            // the compaction agent, which no call starts, and one saved in seed
            // 003's format (naming only its parent session) run under the
            // session's root: a parent that is never sent leaves an orphan.
            parent: match (&md.parent_session_id, source) {
                (Some(_), "claude-code")
                    if subagent
                        && agent_log::source_of(md)
                            .is_some_and(|s| agent_log::started_by_task(&s)) =>
                {
                    Some(subagent_call_span(&t.id))
                }
                (Some(parent), _) if subagent => Some(transcript_span(parent)),
                _ => None,
            },
            name: format!("invoke_agent {source}"),
            kind: SpanKind::Internal,
            start_ns: self.start,
            end_ns: ns(&md.last_active_at).unwrap_or(self.start).max(self.start),
            attributes: attrs,
            events: vec![],
            links,
            status: SpanStatus::Unset,
        }
    }

    /// A `chat` span per model turn charged with tokens (every assistant
    /// message, in a transcript that measured none), each from the end of
    /// the message before it.
    fn turn_spans(
        &self,
        total: Option<Usage>,
        counted_elsewhere: &dyn Fn(&str) -> bool,
    ) -> Vec<Span> {
        let charged = agent_log::charged(&self.t.messages, total);
        let mut spans = vec![];
        let mut prev_time = self.start;
        for (i, m) in self.t.messages.iter().enumerate() {
            let at = message_time(m, "timestamp").unwrap_or(prev_time);
            let end = message_time(m, "lastTimestamp").unwrap_or(at).max(at);
            if m.role == "assistant" {
                let key = message_str(m, "messageId")
                    .zip(message_str(m, "requestId"))
                    .map(|(a, b)| format!("{a}:{b}"));
                let elsewhere = key.as_deref().is_some_and(counted_elsewhere);
                let usage = charged.get(i).copied().flatten().filter(|_| !elsewhere);
                if usage.is_some() || elsewhere || total.is_none() {
                    let turn = Turn {
                        index: i,
                        message: m,
                        usage,
                        elsewhere,
                    };
                    spans.push(self.turn_span(&turn, prev_time.min(end), end));
                }
            }
            prev_time = end;
        }
        spans
    }

    /// One model turn's `chat` span, with its model, usage and (with
    /// `content`) its text.
    fn turn_span(&self, turn: &Turn, begin: u64, end: u64) -> Span {
        let m = turn.message;
        let model = message_str(m, "model");
        let mut attrs = vec![
            str_attr("gen_ai.operation.name", "chat"),
            str_attr("gen_ai.conversation.id", self.main),
        ];
        if let Some(p) = provider(&self.source) {
            attrs.push(str_attr("gen_ai.provider.name", p));
        }
        if let Some(model) = model {
            attrs.push(str_attr("gen_ai.request.model", model));
            attrs.push(str_attr("gen_ai.response.model", model));
        }
        if let Some(id) = message_str(m, "messageId") {
            attrs.push(str_attr("gen_ai.response.id", id));
        }
        if let Some(u) = &turn.usage {
            attrs.extend(usage_attributes(u));
            let cost = self
                .prices
                .zip(model)
                .and_then(|(t, m)| Some((t, t.cost_of_call(m, u)?)));
            if let Some((table, cost)) = cost {
                attrs.push(("gen_ai.usage.cost", AttrValue::Double(round_usd(cost.usd))));
                let from = format!("{} ({})", table.id.source, table.id.date);
                attrs.push(str_attr("logbook.cost.prices", from));
            }
        }
        if turn.elsewhere {
            attrs.push((
                "logbook.usage.counted_in_earlier_session",
                AttrValue::Bool(true),
            ));
        }
        if self.content {
            let text = text_of(m);
            if !text.is_empty() {
                attrs.push(str_attr("gen_ai.output.messages", output_messages(&text)));
            }
        }
        Span {
            trace_id: self.trace_id,
            span_id: SpanId::of("turn", &[&self.t.id, &turn.index.to_string()]),
            parent: Some(self.root),
            name: match model {
                Some(model) => format!("chat {model}"),
                None => "chat".into(),
            },
            kind: SpanKind::Client,
            start_ns: begin,
            end_ns: end,
            attributes: attrs,
            events: vec![],
            links: vec![],
            status: SpanStatus::Unset,
        }
    }

    /// An `execute_tool` span per tool call that has its result; calls
    /// still waiting are left for a later export.
    fn tool_spans(&self) -> Vec<Span> {
        let t = self.t;
        let session = agent_log::source_of(&t.metadata)
            .and_then(|s| s.session_id)
            .unwrap_or_else(|| t.id.clone());
        let mut started = std::collections::HashSet::new();
        let mut spans = vec![];
        for call in tools::pair(&t.messages).calls {
            let Some(result) = &call.result else { continue };
            // A subagent resumed by a later Task call keeps its agentId: only
            // the first call that ran it is the one its root runs under.
            let subagent = call
                .subagent_agent_id(&t.messages)
                .map(|agent| agent_log::subagent_id(&session, &agent))
                .filter(|sub| started.insert(sub.clone()));
            spans.push(self.tool_span(&call, result, subagent));
        }
        spans
    }

    /// One tool call's `execute_tool` span, from the call to its result;
    /// a call that started `subagent` has the span the subagent's root
    /// runs under.
    fn tool_span(
        &self,
        call: &tools::ToolCall,
        result: &tools::ToolResult,
        subagent: Option<String>,
    ) -> Span {
        let t = self.t;
        let begin = t
            .messages
            .get(call.message)
            .and_then(|m| message_time(m, "lastTimestamp").or_else(|| message_time(m, "timestamp")))
            .unwrap_or(self.start);
        let end = t
            .messages
            .get(result.message)
            .and_then(|m| message_time(m, "timestamp"))
            .unwrap_or(begin)
            .max(begin);
        let span_id = match &subagent {
            Some(sub) => subagent_call_span(sub),
            None => {
                let at = format!("{}.{}", call.message, call.block);
                SpanId::of("tool", &[&t.id, call.id.as_deref().unwrap_or(""), &at])
            }
        };
        let mut attrs = vec![
            str_attr("gen_ai.operation.name", "execute_tool"),
            str_attr("gen_ai.tool.name", call.name.clone()),
            str_attr("gen_ai.conversation.id", self.main),
        ];
        if let Some(id) = &call.id {
            attrs.push(str_attr("gen_ai.tool.call.id", id.clone()));
        }
        if let Some(code) = result.exit_code {
            attrs.push(("logbook.tool.exit_code", AttrValue::Int(code)));
        }
        if let Some(sub) = &subagent {
            attrs.push(str_attr("logbook.subagent.transcript_id", sub.clone()));
        }
        let status = if result.is_error {
            attrs.push(str_attr("error.type", "tool_error"));
            SpanStatus::Error(match result.exit_code {
                Some(code) => format!("exit code {code}"),
                None => "the tool reported an error".into(),
            })
        } else {
            SpanStatus::Unset
        };
        if self.content {
            attrs.push(str_attr(
                "gen_ai.tool.call.arguments",
                call.input.to_string(),
            ));
            attrs.push(str_attr("gen_ai.tool.call.result", result.text.clone()));
        }
        Span {
            trace_id: self.trace_id,
            span_id,
            parent: Some(self.root),
            name: format!("execute_tool {}", call.name),
            kind: SpanKind::Internal,
            start_ns: begin,
            end_ns: end,
            attributes: attrs,
            events: vec![],
            links: vec![],
            status,
        }
    }
}

/// One model turn to map: its message, its place, and its usage (`None`
/// when it is counted in an earlier session, `elsewhere`).
struct Turn<'a> {
    index: usize,
    message: &'a Message,
    usage: Option<Usage>,
    elsewhere: bool,
}

/// `gen_ai.output.messages` of one reply's text, in the conventions' JSON
/// shape (a list of messages, each a list of parts).
fn output_messages(text: &str) -> String {
    let v = serde_json::json!([{
        "role": "assistant",
        "parts": [{"type": "text", "content": text}],
    }]);
    Value::to_string(&v)
}
