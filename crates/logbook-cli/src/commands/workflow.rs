//! `logbook workflow …` and `logbook mode`: the orchestrator's workflow state
//! of a work session (seed 004).

use std::fmt::Write as _;

use anyhow::{Context as _, Result};
use clap::{Args, Subcommand};
use logbook::clock;
use logbook::model::terminal::cell;
use logbook::model::workflow::{
    AgentInvocation, AgentType, DecisionType, Focus, InvocationStatus, Mode, Phase, Protocol,
    SessionState, VerdictDecision, check_confidence, evidence_from,
};
use logbook::ops::workflow::{
    self as wf, Complete, Invoke, Loaded, NewDecision, NewHandoff, NewVerdict, Target,
};
use serde_json::{Map, Value};

use super::Context;
use crate::printer::{Output, Style};

/// Which state to change and the version the caller expects.
#[derive(Debug, Args)]
pub(crate) struct TargetArgs {
    /// Work session whose state to use (default: the active one).
    #[arg(long, value_name = "ID", global = true)]
    session: Option<String>,
    /// Fail unless the state is at version N (compare-and-swap).
    #[arg(long, value_name = "N", global = true)]
    expect_version: Option<u64>,
}

impl TargetArgs {
    fn target(&self) -> Target {
        Target {
            session: self.session.clone(),
            expect_version: self.expect_version,
        }
    }
}

#[derive(Debug, Args)]
pub(crate) struct WorkflowArgs {
    #[command(flatten)]
    target: TargetArgs,
    #[command(subcommand)]
    command: WorkflowCommand,
}

#[derive(Debug, Args)]
pub(crate) struct ModeArgs {
    /// analysis, planning, coding or disabled.
    mode: Mode,
    #[command(flatten)]
    target: TargetArgs,
}

#[derive(Debug, Subcommand)]
pub(crate) enum WorkflowCommand {
    /// Show the workflow state (with --full, every invocation ever recorded).
    Show {
        /// Add `fullHistory`: archived and current invocations, in the order they began.
        #[arg(long)]
        full: bool,
    },
    /// Record that an agent was invoked (it becomes the active agent).
    Invoke {
        /// One of the 17 agent types.
        agent: AgentType,
        /// The task given to the agent.
        #[arg(long)]
        prompt: String,
        /// Structured context as a JSON object, e.g. '{"run_id": "…"}'.
        #[arg(long, value_name = "JSON")]
        context: Option<String>,
        /// A file given to the agent (repeatable).
        #[arg(long = "artifact", value_name = "P")]
        artifacts: Vec<String>,
        /// The agent that handed the work over.
        #[arg(long, value_name = "AGENT")]
        from: Option<AgentType>,
    },
    /// Record that an agent finished its most recent invocation.
    Complete {
        /// The agent reporting back.
        agent: AgentType,
        /// What it did.
        #[arg(long)]
        summary: String,
        /// A file it produced (repeatable).
        #[arg(long = "artifact", value_name = "P")]
        artifacts: Vec<String>,
        /// A recommendation (repeatable).
        #[arg(long = "recommendation", value_name = "R")]
        recommendations: Vec<String>,
        /// A blocker (repeatable); any marks the invocation blocked.
        #[arg(long = "blocker", value_name = "B")]
        blockers: Vec<String>,
        /// The agent to hand over to (default: back to the orchestrator).
        #[arg(long, value_name = "AGENT")]
        handoff_to: Option<AgentType>,
        /// Why it hands over.
        #[arg(long, value_name = "TEXT", default_value = "")]
        reason: String,
        /// Mark the invocation failed.
        #[arg(long)]
        failed: bool,
    },
    /// Record a decision (prints its UUID).
    Decide {
        /// architectural, technical, process or scope.
        #[arg(long = "type", value_name = "T")]
        kind: DecisionType,
        /// What was decided.
        #[arg(long, value_name = "D")]
        description: String,
        /// Why.
        #[arg(long, value_name = "R")]
        rationale: String,
        /// The agent that decided.
        #[arg(long, value_name = "AGENT")]
        by: AgentType,
        /// An agent that agreed (repeatable).
        #[arg(long = "approved-by", value_name = "A")]
        approved_by: Vec<AgentType>,
        /// An agent that disagreed (repeatable).
        #[arg(long = "rejected-by", value_name = "A")]
        rejected_by: Vec<AgentType>,
    },
    /// Record a specialist's verdict.
    Verdict {
        /// The agent giving the verdict.
        agent: AgentType,
        /// approve, reject, conditional or needs_revision.
        #[arg(long, value_name = "D")]
        decision: VerdictDecision,
        /// From 0 to 1.
        #[arg(long, value_name = "X", allow_negative_numbers = true, value_parser = confidence)]
        confidence: f64,
        /// Why.
        #[arg(long, value_name = "R")]
        reasoning: String,
        /// A condition (repeatable).
        #[arg(long = "condition", value_name = "C")]
        conditions: Vec<String>,
        /// A blocker (repeatable).
        #[arg(long = "blocker", value_name = "B")]
        blockers: Vec<String>,
    },
    /// Record a pending handoff from one agent to another.
    Handoff {
        /// The agent handing over.
        from: AgentType,
        /// The agent taking over.
        to: AgentType,
        /// Why.
        #[arg(long, value_name = "R")]
        reason: String,
        /// What the next agent needs to know.
        #[arg(long, value_name = "TEXT", default_value = "")]
        context: String,
        /// A file passed along (repeatable).
        #[arg(long = "artifact", value_name = "P")]
        artifacts: Vec<String>,
        /// Structured context to preserve, as a JSON object.
        #[arg(long, value_name = "JSON")]
        preserved_context: Option<String>,
    },
    /// Move the workflow to a phase: planning, implementation, validation, complete.
    Phase {
        /// The phase.
        phase: Phase,
    },
    /// Record that the session's start or end protocol ran, with its evidence.
    Protocol {
        /// start or end.
        protocol: Protocol,
        /// Evidence (repeatable): KEY=VALUE, a JSON object, or a note.
        #[arg(long = "evidence", value_name = "TEXT")]
        evidence: Vec<String>,
        /// Mark the protocol not complete (its evidence replaced by what is given).
        #[arg(long)]
        undo: bool,
    },
    /// Set the feature being worked on (an empty NAME clears it).
    Feature {
        /// The feature's name; "" clears it.
        name: String,
    },
    /// Set the task being worked on (an empty NAME clears it).
    Task {
        /// The task's name; "" clears it.
        name: String,
    },
}

/// `--confidence`: a number from 0 to 1, checked by the library's rule.
fn confidence(s: &str) -> std::result::Result<f64, String> {
    let x: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number; give one from 0 to 1, e.g. 0.8"))?;
    check_confidence(x).map(|()| x)
}

fn object(option: &str, text: &str) -> Result<Map<String, Value>> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => anyhow::bail!("{option} must be a JSON object, e.g. '{{\"run_id\": \"…\"}}'"),
        Err(e) => Err(e).with_context(|| {
            format!("{option} is not valid JSON; give an object, e.g. '{{\"run_id\": \"…\"}}'")
        }),
    }
}

/// "Feature: NAME", or "Feature: none" once cleared.
fn focus_line(what: &str, name: Option<&str>) -> String {
    format!("{what}: {}", name.map(cell).unwrap_or("none".into()))
}

fn state_json(state: &SessionState) -> Result<Value> {
    Ok(wf::state_json(state)?)
}

fn changed(state: &SessionState, what: String) -> Result<Output> {
    Ok(Output::new(
        state_json(state)?,
        format!("{what} (state version {})", state.version),
    ))
}

pub(crate) fn mode(ctx: &Context, a: &ModeArgs) -> Result<Output> {
    let state = wf::set_mode(&ctx.project, &a.target.target(), a.mode.clone())?;
    changed(&state, format!("Mode: {}", a.mode))
}

pub(crate) fn run(ctx: &Context, a: &WorkflowArgs) -> Result<Output> {
    let p = &ctx.project;
    let target = a.target.target();
    match &a.command {
        WorkflowCommand::Show { full } => show(ctx, &a.target, *full),
        WorkflowCommand::Invoke {
            agent: name,
            prompt,
            context,
            artifacts,
            from,
        } => {
            let inv = Invoke {
                agent: name.clone(),
                prompt: prompt.clone(),
                context: context
                    .as_deref()
                    .map(|c| object("--context", c))
                    .transpose()?
                    .unwrap_or_default(),
                artifacts: artifacts.clone(),
                from: from.clone(),
            };
            let who = inv.agent.clone();
            let state = wf::invoke(p, &target, inv)?;
            changed(&state, format!("Invoked {who}"))
        }
        WorkflowCommand::Complete {
            agent: name,
            summary,
            artifacts,
            recommendations,
            blockers,
            handoff_to,
            reason,
            failed,
        } => {
            let c = Complete {
                agent: name.clone(),
                summary: summary.clone(),
                artifacts: artifacts.clone(),
                recommendations: recommendations.clone(),
                blockers: blockers.clone(),
                handoff_to: handoff_to.clone(),
                reason: reason.clone(),
                failed: *failed,
            };
            let (who, to) = (
                c.agent.clone(),
                c.handoff_to.clone().unwrap_or(AgentType::Orchestrator),
            );
            let state = wf::complete(p, &target, c)?;
            let status = state
                .orchestrator_workflow
                .as_ref()
                .and_then(|w| {
                    w.agent_history
                        .iter()
                        .rev()
                        .find(|i| i.agent == who && i.status != InvocationStatus::InProgress)
                })
                .map_or("completed", |i| i.status.as_str());
            changed(&state, format!("{who} {status}; active agent: {to}"))
        }
        WorkflowCommand::Decide {
            kind,
            description,
            rationale,
            by,
            approved_by,
            rejected_by,
        } => {
            let d = NewDecision {
                kind: kind.clone(),
                description: description.clone(),
                rationale: rationale.clone(),
                decided_by: by.clone(),
                approved_by: approved_by.clone(),
                rejected_by: rejected_by.clone(),
            };
            let (state, decision) = wf::decide(p, &target, d)?;
            // The bare id, as README promises, so `id=$(logbook workflow decide …)` works.
            Ok(Output::new(
                state_json(&state)?,
                format!("{}\n", decision.id),
            ))
        }
        WorkflowCommand::Verdict {
            agent: name,
            decision,
            confidence,
            reasoning,
            conditions,
            blockers,
        } => {
            let v = NewVerdict {
                agent: name.clone(),
                decision: decision.clone(),
                confidence: *confidence,
                reasoning: reasoning.clone(),
                conditions: conditions.clone(),
                blockers: blockers.clone(),
            };
            let what = format!("Verdict of {}: {}", v.agent, v.decision);
            let state = wf::verdict(p, &target, v)?;
            changed(&state, what)
        }
        WorkflowCommand::Handoff {
            from,
            to,
            reason,
            context,
            artifacts,
            preserved_context,
        } => {
            let h = NewHandoff {
                from: from.clone(),
                to: to.clone(),
                reason: reason.clone(),
                context: context.clone(),
                artifacts: artifacts.clone(),
                preserved_context: preserved_context
                    .as_deref()
                    .map(|c| object("--preserved-context", c))
                    .transpose()?,
            };
            let what = format!("Handoff {} → {} pending", h.from, h.to);
            let state = wf::handoff(p, &target, h)?;
            changed(&state, what)
        }
        WorkflowCommand::Phase { phase } => {
            let state = wf::set_phase(p, &target, phase.clone())?;
            changed(&state, format!("Phase: {phase}"))
        }
        WorkflowCommand::Protocol {
            protocol,
            evidence,
            undo,
        } => {
            let state = wf::set_protocol(
                p,
                &target,
                protocol.clone(),
                !*undo,
                evidence_from(evidence),
            )?;
            let done = if *undo { "not complete" } else { "complete" };
            changed(&state, format!("Protocol {protocol}: {done}"))
        }
        WorkflowCommand::Feature { name } => {
            let state = wf::set_focus(p, &target, Focus::Feature, name)?;
            changed(
                &state,
                focus_line("Feature", state.active_feature.as_deref()),
            )
        }
        WorkflowCommand::Task { name } => {
            let state = wf::set_focus(p, &target, Focus::Task, name)?;
            changed(&state, focus_line("Task", state.active_task.as_deref()))
        }
    }
}

fn show(ctx: &Context, t: &TargetArgs, full: bool) -> Result<Output> {
    let loaded = wf::load(&ctx.project, t.session.as_deref())?;
    let history = if full {
        let (history, problems) = wf::full_history_lenient(&loaded);
        // A missing archive must not hide the rest of the history; the
        // warning (stderr) keeps `--json` stdout one clean value.
        for p in &problems {
            ctx.printer.warn(p);
        }
        Some(history)
    } else {
        None
    };
    let json = wf::loaded_json(&loaded, history.as_deref())?;
    let human = if ctx.printer.json {
        String::new()
    } else {
        describe(ctx.style(), &loaded, history.as_deref())
    };
    Ok(Output::new(json, human))
}

fn status_mark(st: Style, s: &InvocationStatus) -> String {
    match s {
        InvocationStatus::InProgress => st.yellow("…"),
        InvocationStatus::Completed => st.green("✓"),
        InvocationStatus::Failed => st.red("✗"),
        InvocationStatus::Blocked => st.red("■"),
        InvocationStatus::Other(_) => st.dim("?"),
    }
}

fn describe(st: Style, loaded: &Loaded, full: Option<&[AgentInvocation]>) -> String {
    let s = &loaded.state;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} {}  (version {}{})",
        st.bold("Workflow state of"),
        loaded.session_id,
        s.version,
        if loaded.exists {
            ""
        } else {
            ", nothing recorded yet"
        }
    );
    match s.mode_history.last() {
        Some(m) => {
            let since = clock::display(&m.timestamp);
            let _ = writeln!(out, "Mode:      {} (since {since})", s.current_mode);
        }
        None => {
            let _ = writeln!(out, "Mode:      {}", s.current_mode);
        }
    }
    let Some(w) = &s.orchestrator_workflow else {
        let _ = writeln!(
            out,
            "No agent invoked yet (`logbook workflow invoke AGENT --prompt …`)."
        );
        return out;
    };
    let _ = writeln!(out, "Phase:     {}", w.workflow_phase);
    let _ = writeln!(
        out,
        "Active:    {}",
        w.active_agent
            .as_ref()
            .map_or("none".to_string(), ToString::to_string)
    );
    let compacted: u64 = w.compaction_history.iter().map(|c| c.count).sum();
    let _ = writeln!(
        out,
        "History:   {} invocations ({} current, {compacted} compacted in {} archives)",
        w.total_invocations(),
        w.agent_history.len(),
        w.compaction_history.len()
    );
    let shown = full.unwrap_or(&w.agent_history);
    for i in shown {
        let summary = i
            .output
            .as_ref()
            .map(|o| o.summary.as_str())
            .unwrap_or(&i.input.prompt);
        let line = logbook::model::naming::shorten(summary, 60);
        let _ = writeln!(
            out,
            "  {} {:<20} {:<11} {}  {line}",
            status_mark(st, &i.status),
            i.agent.as_str(),
            i.status.as_str(),
            st.dim(&clock::display(&i.started_at))
        );
    }
    if !w.decisions.is_empty() {
        let _ = writeln!(out, "Decisions:");
        for d in &w.decisions {
            let _ = writeln!(
                out,
                "  [{}] {} — {} {}",
                cell(&d.kind.to_string()),
                cell(&d.description),
                cell(&d.decided_by.to_string()),
                st.dim(&d.id)
            );
        }
    }
    if !w.verdicts.is_empty() {
        let _ = writeln!(out, "Verdicts:");
        for v in &w.verdicts {
            let _ = writeln!(
                out,
                "  {} {} ({:.2}): {}",
                cell(&v.agent.to_string()),
                cell(&v.decision.to_string()),
                v.confidence.fraction(),
                cell(&v.reasoning)
            );
            for (label, items) in v.terms() {
                let _ = writeln!(out, "      {label}: {}", cell(&items.join("; ")));
            }
        }
    }
    if !w.pending_handoffs.is_empty() {
        let _ = writeln!(out, "Pending handoffs:");
        for h in &w.pending_handoffs {
            let _ = writeln!(
                out,
                "  {} → {}: {}",
                cell(&h.from_agent.to_string()),
                cell(&h.to_agent.to_string()),
                cell(&h.reason)
            );
        }
    }
    out
}
