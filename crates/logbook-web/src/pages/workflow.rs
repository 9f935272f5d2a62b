//! A work session's workflow page: the orchestrator's agent timeline,
//! decisions, verdicts, handoffs and compactions.

use std::sync::Arc;

use askama::Template;
use axum::extract::{Path, State};
use axum::response::Response;
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
    let (loaded, history, problems) = blocking(&state, move |p| {
        let loaded = workflow::load(p, Some(&id))?;
        let (history, problems) = workflow::full_history_lenient(&loaded);
        Ok((loaded, history, problems))
    })
    .await?;
    let st = &loaded.state;
    let wf = st.orchestrator_workflow.as_ref();
    let current = wf.map_or(0, |w| w.agent_history.len());
    let archived = history.len().saturating_sub(current);
    let label = |v: &dyn std::fmt::Display| v.to_string();
    let timeline = history
        .iter()
        .enumerate()
        .map(|(i, inv)| {
            let status = label(&inv.status);
            TimelineRow {
                agent: label(&inv.agent),
                status_class: invocation_class(&status),
                status,
                compacted: i < archived,
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
        })
        .collect();
    let join = |v: &[logbook::model::workflow::AgentType]| {
        v.iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut layout = Layout::new(
        &state,
        format!("Workflow of {}", loaded.session_id),
        "sessions",
    );
    layout.live = format!(
        "/api/live?view=workflow&id={}",
        enc(loaded.session_id.as_str())
    );
    render(&WorkflowPage {
        layout,
        id: loaded.session_id.to_string(),
        mode: label(&st.current_mode),
        phase: wf.map_or_else(|| "—".into(), |w| label(&w.workflow_phase)),
        active: wf
            .and_then(|w| w.active_agent.as_ref())
            .map_or_else(|| "none".into(), |a| a.to_string()),
        version: st.version,
        updated: when(&st.updated_at),
        problems,
        timeline,
        decisions: wf
            .map(|w| {
                w.decisions
                    .iter()
                    .map(|d| DecisionRow {
                        kind: label(&d.kind),
                        description: d.description.clone(),
                        rationale: d.rationale.clone(),
                        by: label(&d.decided_by),
                        when: when(&d.timestamp),
                        approved: join(&d.approved_by),
                    })
                    .collect()
            })
            .unwrap_or_default(),
        verdicts: wf
            .map(|w| {
                w.verdicts
                    .iter()
                    .map(|v| {
                        let decision = label(&v.decision);
                        let mut extra = vec![];
                        if let Some(c) = v.conditions.as_ref().filter(|c| !c.is_empty()) {
                            extra.push(format!("conditions: {}", c.join("; ")));
                        }
                        if let Some(b) = v.blockers.as_ref().filter(|b| !b.is_empty()) {
                            extra.push(format!("blockers: {}", b.join("; ")));
                        }
                        VerdictRow {
                            agent: label(&v.agent),
                            class: if decision.contains("approve")
                                && !decision.contains("conditions")
                            {
                                "s-completed"
                            } else if decision.contains("reject") || decision.contains("block") {
                                "s-failed"
                            } else {
                                "s-running"
                            },
                            decision,
                            confidence: format!("{:.0} %", v.confidence.fraction() * 100.0),
                            reasoning: v.reasoning.clone(),
                            extra: extra.join(" · "),
                        }
                    })
                    .collect()
            })
            .unwrap_or_default(),
        handoffs: wf
            .map(|w| {
                w.pending_handoffs
                    .iter()
                    .map(|h| {
                        (
                            format!("{} → {}", h.from_agent, h.to_agent),
                            format!("{} · {}", h.reason, when(&h.created_at)),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default(),
        compactions: wf
            .map(|w| {
                w.compaction_history
                    .iter()
                    .map(|c| {
                        format!(
                            "{} · {} invocation(s) archived to {}",
                            when(&c.compacted_at),
                            c.count,
                            c.note_path.rsplit('/').next().unwrap_or_default()
                        )
                    })
                    .collect()
            })
            .unwrap_or_default(),
    })
}
