//! A work session's workflow page: the orchestrator's agent timeline,
//! decisions, verdicts, handoffs and compactions.

use std::sync::Arc;

use askama::Template;
use axum::extract::{Path, State};
use axum::response::Response;
use logbook::model::workflow::{AgentInvocation, CompactionEntry, Decision, Handoff, Verdict};
use logbook::ops::workflow;
use serde_json::Value;

use super::{Layout, render};
use crate::AppState;
use crate::api::{blocking, run_id, session_id};
use crate::guard::Refusal;
use crate::view::{self, enc, when};

struct TimelineRow {
    agent: String,
    status: String,
    status_class: &'static str,
    compacted: bool,
    started: String,
    completed: String,
    handoff: String,
    prompt: String,
    summary: String,
    run_href: String,
}

struct DecisionRow {
    kind: String,
    description: String,
    rationale: String,
    by: String,
    when: String,
    approved: String,
}

struct VerdictRow {
    agent: String,
    decision: String,
    class: &'static str,
    confidence: String,
    reasoning: String,
    extra: String,
}

#[derive(Template)]
#[template(path = "workflow.html")]
struct WorkflowPage {
    layout: Layout,
    id: String,
    mode: String,
    phase: String,
    active: String,
    version: u64,
    updated: String,
    problems: Vec<String>,
    timeline: Vec<TimelineRow>,
    decisions: Vec<DecisionRow>,
    verdicts: Vec<VerdictRow>,
    handoffs: Vec<(String, String)>,
    compactions: Vec<String>,
}

fn invocation_class(status: &str) -> &'static str {
    match status {
        "in_progress" => "s-running",
        "completed" => "s-completed",
        "blocked" | "failed" => "s-failed",
        _ => "s-other",
    }
}

/// `GET /sessions/{id}/workflow`: the agent timeline (compacted entries
/// included), decisions, verdicts, handoffs and compactions.
pub(super) async fn workflow_page(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Response, Refusal> {
    let id = session_id(&id)?;
    let workflow = read_workflow(&state, id).await?;
    render(&page(&state, workflow))
}

/// A session's workflow state with its whole agent history (the compacted
/// part read back from its notes) and what could not be read of it.
struct Workflow {
    loaded: workflow::Loaded,
    history: Vec<AgentInvocation>,
    problems: Vec<String>,
}

async fn read_workflow(state: &Arc<AppState>, id: String) -> Result<Workflow, Refusal> {
    blocking(state, move |p| {
        let loaded = workflow::load(p, Some(&id))?;
        let (history, problems) = workflow::full_history_lenient(&loaded);
        Ok(Workflow {
            loaded,
            history,
            problems,
        })
    })
    .await
}

fn page(state: &AppState, workflow: Workflow) -> WorkflowPage {
    let Workflow {
        loaded,
        history,
        problems,
    } = workflow;
    let st = &loaded.state;
    let wf = st.orchestrator_workflow.as_ref();
    // The invocations before the live history's are the compacted ones.
    let current = wf.map_or(0, |w| w.agent_history.len());
    let archived = history.len().saturating_sub(current);
    let timeline = history
        .iter()
        .enumerate()
        .map(|(i, inv)| timeline_row(inv, i < archived))
        .collect();
    let mut layout = Layout::new(
        state,
        format!("Workflow of {}", loaded.session_id),
        "sessions",
    );
    layout.live = format!(
        "/api/live?view=workflow&id={}",
        enc(loaded.session_id.as_str())
    );
    WorkflowPage {
        layout,
        id: loaded.session_id.to_string(),
        mode: st.current_mode.to_string(),
        phase: wf.map_or_else(|| "—".into(), |w| w.workflow_phase.to_string()),
        active: wf
            .and_then(|w| w.active_agent.as_ref())
            .map_or_else(|| "none".into(), |a| a.to_string()),
        version: st.version,
        updated: when(&st.updated_at),
        problems,
        timeline,
        decisions: wf
            .map(|w| w.decisions.iter().map(decision_row).collect())
            .unwrap_or_default(),
        verdicts: wf
            .map(|w| w.verdicts.iter().map(verdict_row).collect())
            .unwrap_or_default(),
        handoffs: wf
            .map(|w| w.pending_handoffs.iter().map(handoff_pair).collect())
            .unwrap_or_default(),
        compactions: wf
            .map(|w| w.compaction_history.iter().map(compaction_line).collect())
            .unwrap_or_default(),
    }
}

fn timeline_row(inv: &AgentInvocation, compacted: bool) -> TimelineRow {
    let status = inv.status.to_string();
    TimelineRow {
        agent: inv.agent.to_string(),
        status_class: invocation_class(&status),
        status,
        compacted,
        started: when(&inv.started_at),
        completed: inv.completed_at.as_deref().map(when).unwrap_or_default(),
        handoff: match (&inv.handoff_from, &inv.handoff_to) {
            (Some(f), _) => format!("from {f}"),
            (None, Some(t)) => format!("hands off to {t}"),
            _ => String::new(),
        },
        prompt: view::clip(&inv.input.prompt, 300),
        summary: inv
            .output
            .as_ref()
            .map(|o| view::clip(&o.summary, 300))
            .unwrap_or_default(),
        run_href: inv
            .input
            .context
            .get("run_id")
            .and_then(Value::as_str)
            .and_then(|r| run_id(r).ok())
            .map(|r| format!("/runs/{r}"))
            .unwrap_or_default(),
    }
}

fn decision_row(d: &Decision) -> DecisionRow {
    DecisionRow {
        kind: d.kind.to_string(),
        description: d.description.clone(),
        rationale: d.rationale.clone(),
        by: d.decided_by.to_string(),
        when: when(&d.timestamp),
        approved: d
            .approved_by
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", "),
    }
}

fn verdict_row(v: &Verdict) -> VerdictRow {
    let decision = v.decision.to_string();
    let mut extra = vec![];
    if let Some(c) = v.conditions.as_ref().filter(|c| !c.is_empty()) {
        extra.push(format!("conditions: {}", c.join("; ")));
    }
    if let Some(b) = v.blockers.as_ref().filter(|b| !b.is_empty()) {
        extra.push(format!("blockers: {}", b.join("; ")));
    }
    VerdictRow {
        agent: v.agent.to_string(),
        class: verdict_class(&decision),
        decision,
        confidence: format!("{:.0} %", v.confidence.fraction() * 100.0),
        reasoning: v.reasoning.clone(),
        extra: extra.join(" · "),
    }
}

/// A verdict's colour: an approval without conditions is good news, a
/// rejection or a block bad, the rest in between.
fn verdict_class(decision: &str) -> &'static str {
    if decision.contains("approve") && !decision.contains("conditions") {
        "s-completed"
    } else if decision.contains("reject") || decision.contains("block") {
        "s-failed"
    } else {
        "s-running"
    }
}

fn handoff_pair(h: &Handoff) -> (String, String) {
    (
        format!("{} → {}", h.from_agent, h.to_agent),
        format!("{} · {}", h.reason, when(&h.created_at)),
    )
}

fn compaction_line(c: &CompactionEntry) -> String {
    format!(
        "{} · {} invocation(s) archived to {}",
        when(&c.compacted_at),
        c.count,
        c.note_path.rsplit('/').next().unwrap_or_default()
    )
}
