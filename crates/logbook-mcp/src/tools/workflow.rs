//! The orchestrator's workflow tools: read the state, and record
//! invocations, completions, decisions, verdicts, handoffs, the phase, the
//! mode, the protocols and the feature and task in hand, each optionally
//! against an expected state version.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::{schemars, tool, tool_router};
use serde::Deserialize;
use serde_json::{Map, Value};

use logbook::model::workflow::{Focus, check_confidence, evidence_from};
use logbook::ops::workflow as wf;

use super::{ToolResult, invalid, parse, parse_all};
use crate::{LogbookServer, schema};

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WorkflowStateArgs {
    /// Work session whose state to read (default: the active one).
    session: Option<String>,
    /// Add fullHistory: every invocation, archived and current, in the order they began.
    #[serde(default)]
    full: bool,
    /// "local" (default); "team" is refused: the team catalog keeps no workflow state.
    scope: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct InvokeArgs {
    /// The agent invoked (it becomes the active agent): orchestrator, analyst, architect,
    /// planner, implementer, critic, qa, security, devops, retrospective, memory, skillbook,
    /// independent-thinker, high-level-advisor, explainer, task-generator or pr-comment-responder.
    agent: String,
    /// The task given to the agent.
    prompt: String,
    /// Structured context, e.g. {"run_id": "…"}.
    context: Option<Map<String, Value>>,
    /// Files given to the agent.
    #[serde(default)]
    artifact: Vec<String>,
    /// The agent that handed the work over.
    from: Option<String>,
    /// Work session (default: the active one).
    session: Option<String>,
    /// Fail unless the state is at this version (compare-and-swap).
    expect_version: Option<u64>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CompleteArgs {
    /// The agent reporting back (its most recent invocation is completed).
    agent: String,
    /// What it did.
    summary: String,
    /// Files it produced.
    #[serde(default)]
    artifact: Vec<String>,
    /// Its recommendations.
    #[serde(default)]
    recommendation: Vec<String>,
    /// Blockers; any marks the invocation blocked.
    #[serde(default)]
    blocker: Vec<String>,
    /// The agent to hand over to (default: back to the orchestrator).
    handoff_to: Option<String>,
    /// Why it hands over.
    #[serde(default)]
    reason: String,
    /// Mark the invocation failed.
    #[serde(default)]
    failed: bool,
    /// Work session (default: the active one).
    session: Option<String>,
    /// Fail unless the state is at this version (compare-and-swap).
    expect_version: Option<u64>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DecideArgs {
    /// architectural, technical, process or scope.
    #[serde(rename = "type")]
    kind: String,
    /// What was decided.
    description: String,
    /// Why.
    rationale: String,
    /// The agent that decided.
    by: String,
    /// Agents that agreed.
    #[serde(default)]
    approved_by: Vec<String>,
    /// Agents that disagreed.
    #[serde(default)]
    rejected_by: Vec<String>,
    /// Work session (default: the active one).
    session: Option<String>,
    /// Fail unless the state is at this version (compare-and-swap).
    expect_version: Option<u64>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct VerdictArgs {
    /// The agent giving the verdict.
    agent: String,
    /// approve, reject, conditional or needs_revision.
    decision: String,
    /// From 0 to 1.
    confidence: f64,
    /// Why.
    reasoning: String,
    /// Conditions attached.
    #[serde(default)]
    condition: Vec<String>,
    /// Blockers.
    #[serde(default)]
    blocker: Vec<String>,
    /// Work session (default: the active one).
    session: Option<String>,
    /// Fail unless the state is at this version (compare-and-swap).
    expect_version: Option<u64>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct HandoffArgs {
    /// The agent handing over.
    from: String,
    /// The agent taking over.
    to: String,
    /// Why.
    reason: String,
    /// What the next agent needs to know.
    #[serde(default)]
    context: String,
    /// Files passed along.
    #[serde(default)]
    artifact: Vec<String>,
    /// Structured context to preserve.
    preserved_context: Option<Map<String, Value>>,
    /// Work session (default: the active one).
    session: Option<String>,
    /// Fail unless the state is at this version (compare-and-swap).
    expect_version: Option<u64>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PhaseArgs {
    /// planning, implementation, validation or complete.
    phase: String,
    /// Work session (default: the active one).
    session: Option<String>,
    /// Fail unless the state is at this version (compare-and-swap).
    expect_version: Option<u64>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ModeArgs {
    /// analysis, planning, coding or disabled.
    mode: String,
    /// Work session (default: the active one).
    session: Option<String>,
    /// Fail unless the state is at this version (compare-and-swap).
    expect_version: Option<u64>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ProtocolArgs {
    /// start or end: seed 004's protocolStartComplete / protocolEndComplete.
    protocol: String,
    /// Evidence: each a KEY=VALUE, a JSON object's text, or a note.
    #[serde(default)]
    evidence: Vec<String>,
    /// Evidence as an object, added after the texts.
    evidence_object: Option<Map<String, Value>>,
    /// Mark the protocol not complete (its evidence replaced by what is given).
    #[serde(default)]
    undo: bool,
    /// Work session (default: the active one).
    session: Option<String>,
    /// Fail unless the state is at this version (compare-and-swap).
    expect_version: Option<u64>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct FocusArgs {
    /// The name; an empty one clears it.
    name: String,
    /// Work session (default: the active one).
    session: Option<String>,
    /// Fail unless the state is at this version (compare-and-swap).
    expect_version: Option<u64>,
}

fn target(session: Option<String>, expect_version: Option<u64>) -> wf::Target {
    wf::Target {
        session,
        expect_version,
    }
}

#[tool_router(router = workflow_tools, vis = "pub(super)")]
impl LogbookServer {
    #[tool(
        description = "The orchestrator's workflow state of a work session (seed 004): mode, phase, active agent, agent history, decisions, verdicts, pending handoffs; with full, every invocation ever recorded.",
        output_schema = schema::workflow_state(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn workflow_state(&self, Parameters(a): Parameters<WorkflowStateArgs>) -> ToolResult {
        let scope = a.scope.clone();
        self.query_here(
            scope.as_deref(),
            "workflow_state",
            "workflow state",
            move |p| {
                let loaded = wf::load(p, a.session.as_deref())?;
                let history = if a.full {
                    let (history, problems) = wf::full_history_lenient(&loaded);
                    for problem in problems {
                        p.notices.push(problem);
                    }
                    Some(history)
                } else {
                    None
                };
                wf::loaded_json(&loaded, history.as_deref())
            },
        )
        .await
    }

    #[tool(
        description = "Record that the orchestrator invoked an agent (it becomes the active agent, invocation in_progress).",
        output_schema = schema::workflow_state(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    async fn workflow_invoke(&self, Parameters(a): Parameters<InvokeArgs>) -> ToolResult {
        self.call(false, move |p| {
            let inv = wf::Invoke {
                agent: parse(&a.agent)?,
                prompt: a.prompt,
                context: a.context.unwrap_or_default(),
                artifacts: a.artifact,
                from: a.from.as_deref().map(parse).transpose()?,
            };
            let state = wf::invoke(p, &target(a.session, a.expect_version), inv)?;
            wf::state_json(&state)
        })
        .await
    }

    #[tool(
        description = "Record that an agent finished its most recent invocation (completed, or blocked when it reports blockers, or failed) and hand over (default: back to the orchestrator).",
        output_schema = schema::workflow_state(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    async fn workflow_complete(&self, Parameters(a): Parameters<CompleteArgs>) -> ToolResult {
        self.call(false, move |p| {
            let c = wf::Complete {
                agent: parse(&a.agent)?,
                summary: a.summary,
                artifacts: a.artifact,
                recommendations: a.recommendation,
                blockers: a.blocker,
                handoff_to: a.handoff_to.as_deref().map(parse).transpose()?,
                reason: a.reason,
                failed: a.failed,
            };
            let state = wf::complete(p, &target(a.session, a.expect_version), c)?;
            wf::state_json(&state)
        })
        .await
    }

    #[tool(
        description = "Record a decision (architectural, technical, process or scope) with its rationale and who decided, approved or rejected it. Decisions are never compacted.",
        output_schema = schema::workflow_state(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    async fn workflow_decide(&self, Parameters(a): Parameters<DecideArgs>) -> ToolResult {
        self.call(false, move |p| {
            let d = wf::NewDecision {
                kind: parse(&a.kind)?,
                description: a.description,
                rationale: a.rationale,
                decided_by: parse(&a.by)?,
                approved_by: parse_all(&a.approved_by)?,
                rejected_by: parse_all(&a.rejected_by)?,
            };
            let (state, _) = wf::decide(p, &target(a.session, a.expect_version), d)?;
            wf::state_json(&state)
        })
        .await
    }

    #[tool(
        description = "Record a specialist's verdict: approve, reject, conditional or needs_revision, with confidence 0-1, reasoning, conditions and blockers.",
        output_schema = schema::workflow_state(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    async fn workflow_verdict(&self, Parameters(a): Parameters<VerdictArgs>) -> ToolResult {
        self.call(false, move |p| {
            check_confidence(a.confidence)
                .map_err(|reason| invalid("confidence", a.confidence.to_string(), &reason))?;
            let v = wf::NewVerdict {
                agent: parse(&a.agent)?,
                decision: parse(&a.decision)?,
                confidence: a.confidence,
                reasoning: a.reasoning,
                conditions: a.condition,
                blockers: a.blocker,
            };
            let state = wf::verdict(p, &target(a.session, a.expect_version), v)?;
            wf::state_json(&state)
        })
        .await
    }

    #[tool(
        description = "Record a pending handoff from one agent to another, with the reason, context and files the next agent needs.",
        output_schema = schema::workflow_state(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    async fn workflow_handoff(&self, Parameters(a): Parameters<HandoffArgs>) -> ToolResult {
        self.call(false, move |p| {
            let h = wf::NewHandoff {
                from: parse(&a.from)?,
                to: parse(&a.to)?,
                reason: a.reason,
                context: a.context,
                artifacts: a.artifact,
                preserved_context: a.preserved_context,
            };
            let state = wf::handoff(p, &target(a.session, a.expect_version), h)?;
            wf::state_json(&state)
        })
        .await
    }

    #[tool(
        description = "Move the workflow to a phase: planning, implementation, validation or complete.",
        output_schema = schema::workflow_state(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn workflow_phase(&self, Parameters(a): Parameters<PhaseArgs>) -> ToolResult {
        self.call(false, move |p| {
            let state = wf::set_phase(p, &target(a.session, a.expect_version), parse(&a.phase)?)?;
            wf::state_json(&state)
        })
        .await
    }

    #[tool(
        description = "Record that the session's start or end protocol ran (protocolStartComplete / protocolEndComplete) and its evidence (protocolStartEvidence / protocolEndEvidence); undo marks it not complete.",
        output_schema = schema::workflow_state(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn workflow_protocol(&self, Parameters(a): Parameters<ProtocolArgs>) -> ToolResult {
        self.call(false, move |p| {
            let mut evidence = evidence_from(&a.evidence);
            evidence.extend(a.evidence_object.unwrap_or_default());
            let state = wf::set_protocol(
                p,
                &target(a.session, a.expect_version),
                parse(&a.protocol)?,
                !a.undo,
                evidence,
            )?;
            wf::state_json(&state)
        })
        .await
    }

    #[tool(
        description = "Set the feature being worked on (activeFeature); an empty name clears it.",
        output_schema = schema::workflow_state(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn workflow_feature(&self, Parameters(a): Parameters<FocusArgs>) -> ToolResult {
        self.call(false, move |p| {
            let t = target(a.session, a.expect_version);
            wf::state_json(&wf::set_focus(p, &t, Focus::Feature, &a.name)?)
        })
        .await
    }

    #[tool(
        description = "Set the task being worked on (activeTask); an empty name clears it.",
        output_schema = schema::workflow_state(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn workflow_task(&self, Parameters(a): Parameters<FocusArgs>) -> ToolResult {
        self.call(false, move |p| {
            let t = target(a.session, a.expect_version);
            wf::state_json(&wf::set_focus(p, &t, Focus::Task, &a.name)?)
        })
        .await
    }

    #[tool(
        description = "Switch the work session's mode: analysis, planning, coding or disabled.",
        output_schema = schema::workflow_state(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn mode_set(&self, Parameters(a): Parameters<ModeArgs>) -> ToolResult {
        self.call(false, move |p| {
            let state = wf::set_mode(p, &target(a.session, a.expect_version), parse(&a.mode)?)?;
            wf::state_json(&state)
        })
        .await
    }
}
