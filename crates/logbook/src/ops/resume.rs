//! What an agent needs after a compaction or a restart: one plain-text
//! summary of the active work session, its tokens, milestones, recent
//! artifacts and run outputs, and its workflow (mode, phase, active agent,
//! last invocations, pending handoffs, decisions, verdicts). The CLI prints
//! it (`logbook resume-context`), the MCP server returns it as the `resume`
//! prompt and a resource; it is built here so the two say the same.

use crate::Logbook;
use std::fmt::Write as _;

use crate::error::{Face, Next, Result, Step};
use crate::model::ids::RunId;
use crate::model::limits::cut_at;
use crate::model::naming::thousands;
use crate::model::terminal::cell;
use crate::model::work_session::WorkSession;
use crate::model::workflow::{OrchestratorWorkflow, SessionState};
use crate::ops::{work_session, workflow};

/// How much [`context`] includes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Detail {
    /// The last few of each list: what fits in a fresh context.
    #[default]
    Brief,
    /// Every milestone, artifact, run, invocation, decision and verdict.
    Full,
}

impl std::str::FromStr for Detail {
    type Err = crate::Error;

    fn from_str(s: &str) -> Result<Self> {
        match s.trim() {
            "" | "brief" => Ok(Detail::Brief),
            "full" => Ok(Detail::Full),
            other => Err(crate::Error::invalid(
                "detail",
                other,
                "expected brief or full",
            )),
        }
    }
}

impl Detail {
    fn take(self, brief: usize) -> usize {
        match self {
            Detail::Brief => brief,
            Detail::Full => usize::MAX,
        }
    }

    /// One item's text (a note, a milestone…): whole in the full context,
    /// its first [`BRIEF_ITEM`] bytes in the brief one, so one long item
    /// cannot crowd out the rest.
    fn item(self, text: &str) -> std::borrow::Cow<'_, str> {
        if self == Detail::Full || text.len() <= BRIEF_ITEM {
            return text.into();
        }
        format!("{}…", cut_at(text, BRIEF_ITEM)).into()
    }
}

/// The most a brief [`context`] holds, whatever the session stores: it is
/// read into an agent's fresh context after every compaction.
pub const BRIEF_MAX: usize = 16 * 1024;

/// The most of one item's text a brief [`context`] shows.
const BRIEF_ITEM: usize = 1024;

/// [`context`] with the id of the session it is about: what
/// `resume-context --json` prints and the MCP `resume_context` tool returns.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Summary {
    /// The work session described.
    pub session_id: String,
    /// The resume text.
    pub text: String,
}

/// [`context`] and the session it describes (the active one by default).
pub fn summary(p: &Logbook, session: Option<&str>, detail: Detail, face: Face) -> Result<Summary> {
    let id = work_session::resolve(p, session)?;
    Ok(Summary {
        text: context(p, Some(id.as_str()), detail, face)?,
        session_id: id.as_str().to_string(),
    })
}

/// The resume text of work session `session` (the active one by default),
/// read from the files as they are now; a note that it was cut names the
/// full detail as `face` reaches it.
pub fn context(p: &Logbook, session: Option<&str>, detail: Detail, face: Face) -> Result<String> {
    let ws = work_session::get(p, session)?;
    let mut out = String::new();
    session_part(&mut out, &ws, detail);
    runs_part(&mut out, p, &ws, detail);
    let loaded = workflow::load(p, Some(&ws.session_id))?;
    workflow_part(&mut out, &loaded.state, detail);
    if detail == Detail::Brief {
        cut_brief(&mut out, BRIEF_MAX, face);
    }
    Ok(out)
}

/// The brief context cut to at most `max` bytes (at least 1 KiB): what an
/// agent's hook adds to its context after a compaction, whose size the
/// project chooses (`hook_context_bytes`).
pub fn context_within(
    p: &Logbook,
    session: Option<&str>,
    max: usize,
    face: Face,
) -> Result<String> {
    let mut out = context(p, session, Detail::Brief, face)?;
    cut_brief(&mut out, max.max(1024), face);
    Ok(out)
}

/// Cuts a brief context longer than `max` at a line (or, for one very
/// long line, a character) and says so, and how to see everything.
fn cut_brief(out: &mut String, max: usize, face: Face) {
    if out.len() <= max {
        return;
    }
    let note = format!(
        "\n[cut: this resume shows at most {} KiB, and the whole is {} KiB; {}]\n",
        max / 1024,
        out.len().div_ceil(1024),
        Next::say("the full detail (")
            .step(Step::ResumeContext { full: true })
            .text(") shows everything")
            .word(face)
    );
    let budget = cut_at(out, max.saturating_sub(note.len())).len();
    let at = match out[..budget].rfind('\n') {
        Some(nl) if nl >= budget / 2 => nl + 1,
        _ => budget,
    };
    out.truncate(at);
    out.push_str(&note);
}

fn session_part(out: &mut String, ws: &WorkSession, detail: Detail) {
    let t = &ws.tokens;
    let _ = writeln!(
        out,
        "# Resume: work session {} ({})",
        ws.session_id,
        ws.status.as_str()
    );
    let _ = writeln!(out, "Client: {}  Project: {}", ws.client, ws.project);
    let _ = writeln!(
        out,
        "Tokens: {} of {} used ({:.0}%, {}), peak {}, {} saved by isolated agents",
        thousands(t.current),
        thousands(t.max),
        ws.percentage(),
        ws.indicator().as_str(),
        thousands(t.peak),
        thousands(t.saved)
    );
    if !ws.milestones.is_empty() {
        let _ = writeln!(out, "\n## Milestones");
        let skip = ws.milestones.len().saturating_sub(detail.take(10));
        for m in ws.milestones.iter().skip(skip) {
            let mark = if m.completed.is_some() { "x" } else { " " };
            let _ = writeln!(out, "- [{mark}] {}", detail.item(&cell(&m.name)));
        }
    }
    if !ws.artifacts.is_empty() {
        let _ = writeln!(out, "\n## Recent artifacts");
        let mut recent: Vec<_> = ws.artifacts.iter().collect();
        recent.sort_by(|a, b| {
            let when = |x: &&crate::model::work_session::Artifact| {
                x.modified.clone().or_else(|| x.created.clone())
            };
            when(b).cmp(&when(a))
        });
        for a in recent.into_iter().take(detail.take(5)) {
            let _ = writeln!(out, "- {}", detail.item(&cell(&a.path)));
        }
    }
    if !ws.notes.is_empty() {
        let _ = writeln!(out, "\n## Notes");
        let skip = ws.notes.len().saturating_sub(detail.take(5));
        for n in ws.notes.iter().skip(skip) {
            let _ = writeln!(out, "- {}", detail.item(n.trim()));
        }
    }
    if !ws.context_summary.trim().is_empty() {
        let _ = writeln!(
            out,
            "\n## Last context\n{}",
            detail.item(ws.context_summary.trim_end())
        );
    }
}

/// The runs the session spawned (newest last) and their registered outputs.
fn runs_part(out: &mut String, p: &Logbook, ws: &WorkSession, detail: Detail) {
    let runs: Vec<_> = ws
        .agents_spawned
        .iter()
        .filter_map(|a| RunId::parse(&a.id).ok())
        .collect();
    if runs.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n## Recent runs and outputs");
    let skip = runs.len().saturating_sub(detail.take(5));
    for id in runs.iter().skip(skip) {
        match logbook_store::run::load(p, id) {
            Ok(run) => {
                let m = &run.manifest;
                let _ = writeln!(
                    out,
                    "- run {id} {} / {} ({})",
                    m.agent.name, m.workflow.name, m.execution.status
                );
                for o in &m.outputs {
                    let _ = writeln!(
                        out,
                        "  - {} [{}] {}",
                        run.output_path(&o.file).display(),
                        o.output_type,
                        detail.item(&cell(&o.description))
                    );
                }
            }
            Err(e) => {
                let _ = writeln!(out, "- run {id}: unreadable ({e})");
            }
        }
    }
}

/// The workflow's mode, phase and active agent, then its parts.
fn workflow_part(out: &mut String, s: &SessionState, detail: Detail) {
    let _ = writeln!(out, "\n## Workflow (state version {})", s.version);
    let _ = writeln!(out, "Mode: {}", s.current_mode);
    let Some(w) = &s.orchestrator_workflow else {
        let _ = writeln!(out, "No agent invoked yet.");
        return;
    };
    let _ = writeln!(out, "Phase: {}", w.workflow_phase);
    let _ = writeln!(
        out,
        "Active agent: {}",
        w.active_agent
            .as_ref()
            .map_or("none".to_string(), ToString::to_string)
    );
    invocations_part(out, w, detail);
    handoffs_part(out, w);
    decisions_part(out, w, detail);
    verdicts_part(out, w, detail);
}

/// The last invocations, with their results and blockers.
fn invocations_part(out: &mut String, w: &OrchestratorWorkflow, detail: Detail) {
    if w.agent_history.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\n### Last invocations ({} in all)",
        w.total_invocations()
    );
    let skip = w.agent_history.len().saturating_sub(detail.take(3));
    for i in w.agent_history.iter().skip(skip) {
        let _ = writeln!(
            out,
            "- {} ({}, started {}): {}",
            i.agent,
            i.status.as_str(),
            i.started_at,
            one_line(&i.input.prompt)
        );
        if let Some(o) = &i.output {
            let _ = writeln!(out, "  result: {}", one_line(&o.summary));
            for b in &o.blockers {
                let _ = writeln!(out, "  blocker: {}", one_line(b));
            }
        }
    }
}

/// Every handoff still pending, with its context.
fn handoffs_part(out: &mut String, w: &OrchestratorWorkflow) {
    if w.pending_handoffs.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n### Pending handoffs");
    for h in &w.pending_handoffs {
        let _ = writeln!(
            out,
            "- {} -> {}: {}",
            h.from_agent,
            h.to_agent,
            one_line(&h.reason)
        );
        if !h.context.trim().is_empty() {
            let _ = writeln!(out, "  context: {}", one_line(&h.context));
        }
    }
}

/// The last decisions, with who decided and why.
fn decisions_part(out: &mut String, w: &OrchestratorWorkflow, detail: Detail) {
    if w.decisions.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n### Decisions");
    let skip = w.decisions.len().saturating_sub(detail.take(5));
    for d in w.decisions.iter().skip(skip) {
        let _ = writeln!(
            out,
            "- [{}] {} (by {}): {}",
            d.kind,
            one_line(&d.description),
            d.decided_by,
            one_line(&d.rationale)
        );
    }
}

/// The last verdicts, with their confidence, reasoning and terms.
fn verdicts_part(out: &mut String, w: &OrchestratorWorkflow, detail: Detail) {
    if w.verdicts.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n### Verdicts");
    let skip = w.verdicts.len().saturating_sub(detail.take(5));
    for v in w.verdicts.iter().skip(skip) {
        let _ = write!(
            out,
            "- {} {} ({:.2}): {}",
            v.agent,
            v.decision,
            v.confidence.fraction(),
            one_line(&v.reasoning)
        );
        for (label, items) in v.terms() {
            let items: Vec<String> = items.iter().map(|i| one_line(i)).collect();
            let _ = write!(out, "; {label}: {}", items.join(", "));
        }
        out.push('\n');
    }
}

/// The first line of `text`, at most 200 characters: the summary keeps one
/// line per item however long the agent's text was.
fn one_line(text: &str) -> String {
    let line = text.trim().lines().next().unwrap_or("");
    let mut s: String = line.chars().take(200).collect();
    if line.chars().count() > 200 || text.trim().lines().nth(1).is_some() {
        s.push('…');
    }
    s
}
