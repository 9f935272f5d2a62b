//! `logbook workflow …` and `logbook mode`: the orchestrator's workflow state
//! of a work session (seed 004).

use std::fmt::Write as _;

use anyhow::{Context as _, Result};
use clap::{Args, Subcommand};
use logbook::Logbook;
use logbook::clock;
use logbook::error::{Next, Step};
use logbook::model::terminal::cell;
use logbook::model::workflow::{
    AgentInvocation, AgentType, DecisionType, Focus, InvocationStatus, Mode, OrchestratorWorkflow,
    Phase, Protocol, SessionState, VerdictDecision, check_confidence, evidence_from,
};
use logbook::ops::workflow::{
    self as wf, Complete, Invoke, Loaded, NewDecision, NewHandoff, NewVerdict, Target,
};
use serde_json::{Map, Value};

use super::{Context, worded};
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
    Invoke(InvokeArgs),
    /// Record that an agent finished its most recent invocation.
    Complete(CompleteArgs),
    /// Record a decision (prints its UUID).
    Decide(DecideArgs),
    /// Record a specialist's verdict.
    Verdict(VerdictArgs),
    /// Record a pending handoff from one agent to another.
    Handoff(HandoffArgs),
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

/// `workflow invoke`: an agent's invocation as given.
#[derive(Debug, Args)]
pub(crate) struct InvokeArgs {
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
}

/// `workflow complete`: what an agent reports back.
#[derive(Debug, Args)]
pub(crate) struct CompleteArgs {
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
}

/// `workflow decide`: a decision and who took part in it.
#[derive(Debug, Args)]
pub(crate) struct DecideArgs {
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
}

/// `workflow verdict`: a specialist's verdict.
#[derive(Debug, Args)]
pub(crate) struct VerdictArgs {
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
}

/// `workflow handoff`: a handoff from one agent to another.
#[derive(Debug, Args)]
pub(crate) struct HandoffArgs {
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
}

/// `--confidence`: a number from 0 to 1, checked by the library's rule.
fn confidence(s: &str) -> std::result::Result<f64, String> {
    let x: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number; give one from 0 to 1, e.g. 0.8"))?;
    check_confidence(x).map(|()| x)
}

/// The JSON object given with `option` (snake_case, worded as the CLI
/// spells it).
fn object(option: &'static str, text: &str) -> Result<Map<String, Value>> {
    let given = || worded(Next::none().option(option));
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => anyhow::bail!(
            "{} must be a JSON object, e.g. '{{\"run_id\": \"…\"}}'",
            given()
        ),
        Err(e) => Err(e).with_context(|| {
            format!(
                "{} is not valid JSON; give an object, e.g. '{{\"run_id\": \"…\"}}'",
                given()
            )
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
        WorkflowCommand::Invoke(i) => {
            let state = wf::invoke(p, &target, i.request()?)?;
            changed(&state, format!("Invoked {}", i.agent))
        }
        WorkflowCommand::Complete(c) => complete(p, &target, c),
        WorkflowCommand::Decide(d) => {
            let (state, decision) = wf::decide(p, &target, d.request())?;
            // The bare id, as README promises, so `id=$(logbook workflow decide …)` works.
            Ok(Output::new(
                state_json(&state)?,
                format!("{}\n", decision.id),
            ))
        }
        WorkflowCommand::Verdict(v) => {
            let what = format!("Verdict of {}: {}", v.agent, v.decision);
            let state = wf::verdict(p, &target, v.request())?;
            changed(&state, what)
        }
        WorkflowCommand::Handoff(h) => {
            let what = format!("Handoff {} → {} pending", h.from, h.to);
            let state = wf::handoff(p, &target, h.request()?)?;
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
            let evidence = evidence_from(evidence);
            let state = wf::set_protocol(p, &target, protocol.clone(), !*undo, evidence)?;
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

/// `workflow complete`, saying how the invocation ended and who is active
/// now.
fn complete(p: &Logbook, target: &Target, c: &CompleteArgs) -> Result<Output> {
    let request = c.request();
    let to = request
        .handoff_to
        .clone()
        .unwrap_or(AgentType::Orchestrator);
    let state = wf::complete(p, target, request)?;
    let who = &c.agent;
    let status = state
        .orchestrator_workflow
        .as_ref()
        .and_then(|w| {
            w.agent_history
                .iter()
                .rev()
                .find(|i| i.agent == *who && i.status != InvocationStatus::InProgress)
        })
        .map_or("completed", |i| i.status.as_str());
    changed(&state, format!("{who} {status}; active agent: {to}"))
}

impl InvokeArgs {
    /// The invocation to record, its context parsed.
    fn request(&self) -> Result<Invoke> {
        Ok(Invoke {
            agent: self.agent.clone(),
            prompt: self.prompt.clone(),
            context: self
                .context
                .as_deref()
                .map(|c| object("context", c))
                .transpose()?
                .unwrap_or_default(),
            artifacts: self.artifacts.clone(),
            from: self.from.clone(),
        })
    }
}

impl CompleteArgs {
    /// The report to record.
    fn request(&self) -> Complete {
        Complete {
            agent: self.agent.clone(),
            summary: self.summary.clone(),
            artifacts: self.artifacts.clone(),
            recommendations: self.recommendations.clone(),
            blockers: self.blockers.clone(),
            handoff_to: self.handoff_to.clone(),
            reason: self.reason.clone(),
            failed: self.failed,
        }
    }
}

impl DecideArgs {
    /// The decision to record.
    fn request(&self) -> NewDecision {
        NewDecision {
            kind: self.kind.clone(),
            description: self.description.clone(),
            rationale: self.rationale.clone(),
            decided_by: self.by.clone(),
            approved_by: self.approved_by.clone(),
            rejected_by: self.rejected_by.clone(),
        }
    }
}

impl VerdictArgs {
    /// The verdict to record.
    fn request(&self) -> NewVerdict {
        NewVerdict {
            agent: self.agent.clone(),
            decision: self.decision.clone(),
            confidence: self.confidence,
            reasoning: self.reasoning.clone(),
            conditions: self.conditions.clone(),
            blockers: self.blockers.clone(),
        }
    }
}

impl HandoffArgs {
    /// The handoff to record, its preserved context parsed.
    fn request(&self) -> Result<NewHandoff> {
        Ok(NewHandoff {
            from: self.from.clone(),
            to: self.to.clone(),
            reason: self.reason.clone(),
            context: self.context.clone(),
            artifacts: self.artifacts.clone(),
            preserved_context: self
                .preserved_context
                .as_deref()
                .map(|c| object("preserved_context", c))
                .transpose()?,
        })
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
        let invoke = Step::InvokeAgent {
            agent: "AGENT".into(),
        };
        let _ = writeln!(out, "No agent invoked yet ({}).", worded(invoke));
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
    describe_invocations(&mut out, st, w, full);
    describe_records(&mut out, st, w);
    out
}

/// The invocations (the current ones, or `full`'s every one) after a line
/// counting them.
fn describe_invocations(
    out: &mut String,
    st: Style,
    w: &OrchestratorWorkflow,
    full: Option<&[AgentInvocation]>,
) {
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
}

/// The decisions, verdicts and pending handoffs, each list under its
/// heading when there is any.
fn describe_records(out: &mut String, st: Style, w: &OrchestratorWorkflow) {
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
}
