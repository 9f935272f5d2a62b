//! The context summary composed from a session and its workflow state,
//! and the workflow's blocked-or-failed rule behind the red indicator.

use super::record::WorkSession;
use crate::naming::thousands;
use crate::workflow::{AgentInvocation, InvocationStatus, OrchestratorWorkflow, SessionState};

/// The seed's context summary (key decisions, outcomes, next steps) from
/// what the session and its workflow state recorded, for `close` without
/// `--summary` and for `switch` restoring a session's context. Only facts
/// are listed, no times, so the same records always give the same text.
pub fn compose_summary(ws: &WorkSession, state: Option<&SessionState>) -> String {
    let wf = state.and_then(|s| s.orchestrator_workflow.as_ref());
    let mut out = format!(
        "Work session {} for {} / {}.\n",
        ws.session_id, ws.client, ws.project
    );
    let mut section = |title: &str, items: Vec<String>| {
        if !items.is_empty() {
            out.push_str(&format!("\n{title}:\n"));
            for item in items {
                out.push_str(&format!("- {item}\n"));
            }
        }
    };
    section("Outcomes", outcomes(ws, wf));
    if let Some(wf) = wf {
        section("Key decisions", decisions(wf));
        section("Verdicts", verdicts(wf));
    }
    section(
        "Notes and learnings",
        ws.notes.iter().map(|n| first_line(n).to_string()).collect(),
    );
    section("Next steps", next_steps(ws, wf));
    out
}

/// What the session produced: milestones done, artifacts, agents spawned,
/// and the workflow's completed invocations with a summary.
fn outcomes(ws: &WorkSession, wf: Option<&OrchestratorWorkflow>) -> Vec<String> {
    let mut outcomes = vec![];
    let done: Vec<_> = ws
        .milestones
        .iter()
        .filter(|m| m.completed.is_some())
        .map(|m| m.name.as_str())
        .collect();
    if !done.is_empty() {
        outcomes.push(format!("Milestones done: {}", done.join(", ")));
    }
    if !ws.artifacts.is_empty() {
        let paths: Vec<_> = ws
            .artifacts
            .iter()
            .map(|a| match &a.agent {
                Some(agent) => format!("{} ({agent})", a.path),
                None => a.path.clone(),
            })
            .collect();
        outcomes.push(format!("Artifacts: {}", paths.join(", ")));
    }
    if !ws.agents_spawned.is_empty() {
        outcomes.push(format!(
            "Agents spawned: {} ({} tokens kept out of the main context)",
            ws.agents_spawned.len(),
            thousands(ws.tokens.saved)
        ));
    }
    if let Some(wf) = wf {
        outcomes.push(format!(
            "Workflow: phase {}, {} agent invocations",
            wf.workflow_phase,
            wf.total_invocations()
        ));
        for inv in wf.agent_history.iter().filter(|i| {
            i.status == InvocationStatus::Completed
                && i.output
                    .as_ref()
                    .is_some_and(|o| !o.summary.trim().is_empty())
        }) {
            let summary = inv.output.as_ref().map_or("", |o| o.summary.as_str());
            outcomes.push(format!("{} completed: {}", inv.agent, first_line(summary)));
        }
    }
    outcomes
}

/// One line per decision: kind, description, who decided, approved and
/// rejected, and the rationale's first line.
fn decisions(wf: &OrchestratorWorkflow) -> Vec<String> {
    wf.decisions
        .iter()
        .map(|d| {
            let mut who = d.decided_by.to_string();
            if !d.approved_by.is_empty() {
                who.push_str(&format!("; approved by {}", joined(&d.approved_by)));
            }
            if !d.rejected_by.is_empty() {
                who.push_str(&format!("; rejected by {}", joined(&d.rejected_by)));
            }
            let mut line = format!("[{}] {} ({who})", d.kind, first_line(&d.description));
            if !d.rationale.trim().is_empty() {
                line.push_str(&format!(": {}", first_line(&d.rationale)));
            }
            line
        })
        .collect()
}

/// One line per verdict: agent, decision, confidence, reasoning and terms.
fn verdicts(wf: &OrchestratorWorkflow) -> Vec<String> {
    wf.verdicts
        .iter()
        .map(|v| {
            let mut line = format!(
                "{} {} ({:.2})",
                v.agent,
                v.decision,
                v.confidence.fraction()
            );
            if !v.reasoning.trim().is_empty() {
                line.push_str(&format!(": {}", first_line(&v.reasoning)));
            }
            for (label, items) in v.terms() {
                line.push_str(&format!("; {label}: {}", items.join(", ")));
            }
            line
        })
        .collect()
}

/// What is left to do: open milestones, pending handoffs, invocations in
/// progress or unresolved, and the latest recommendations.
fn next_steps(ws: &WorkSession, wf: Option<&OrchestratorWorkflow>) -> Vec<String> {
    let mut next = vec![];
    for m in ws.milestones.iter().filter(|m| m.completed.is_none()) {
        next.push(format!("Milestone open: {}", m.name));
    }
    let Some(wf) = wf else {
        return next;
    };
    for h in &wf.pending_handoffs {
        let mut line = format!("Handoff {} → {} pending", h.from_agent, h.to_agent);
        if !h.reason.trim().is_empty() {
            line.push_str(&format!(": {}", first_line(&h.reason)));
        }
        next.push(line);
    }
    for inv in &wf.agent_history {
        match inv.status {
            InvocationStatus::InProgress => next.push(format!(
                "{} in progress: {}",
                inv.agent,
                first_line(&inv.input.prompt)
            )),
            _ if unresolved(&wf.agent_history, inv) => {
                let blockers = inv
                    .output
                    .as_ref()
                    .filter(|o| !o.blockers.is_empty())
                    .map(|o| format!(": {}", o.blockers.join(", ")))
                    .unwrap_or_default();
                next.push(format!("{} {}{blockers}", inv.agent, inv.status));
            }
            _ => {}
        }
    }
    if let Some(last) = wf.agent_history.iter().rev().find(|i| {
        i.output
            .as_ref()
            .is_some_and(|o| !o.recommendations.is_empty())
    }) && let Some(out) = &last.output
    {
        for r in &out.recommendations {
            next.push(format!("Recommended by {}: {}", last.agent, first_line(r)));
        }
    }
    next
}

fn first_line(text: &str) -> &str {
    text.trim().lines().next().unwrap_or_default()
}

fn joined<T: std::fmt::Display>(items: &[T]) -> String {
    items
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether `inv` is blocked or failed and no later invocation of the same
/// agent took the work up again.
fn unresolved(history: &[AgentInvocation], inv: &AgentInvocation) -> bool {
    matches!(
        inv.status,
        InvocationStatus::Blocked | InvocationStatus::Failed
    ) && !history
        .iter()
        .skip_while(|i| !std::ptr::eq(*i, inv))
        .skip(1)
        .any(|later| later.agent == inv.agent)
}

/// Whether a workflow state holds a blocked or failed invocation that no
/// later invocation of the same agent took up again (the seed's red
/// "Blocked / Failed" indicator).
pub fn workflow_blocked(state: &SessionState) -> bool {
    state.orchestrator_workflow.as_ref().is_some_and(|wf| {
        wf.agent_history
            .iter()
            .any(|inv| unresolved(&wf.agent_history, inv))
    })
}
