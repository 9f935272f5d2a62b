//! The budget check the agents' hooks make (issue 52): the active work
//! session's two limits, from what the import already counted (the linked
//! transcripts' stored counts, never the logs), answered in the agent's own
//! hook-output shape.
//!
//! - Warn (the default): at 🟡 and 🔴 on either limit, a turn's end (Stop:
//!   `systemMessage`) or a prompt (UserPromptSubmit, SessionStart:
//!   `additionalContext`) tells the agent how much is left and what the
//!   work session is for.
//! - Block (`budget_action: block`): a tool call (Claude Code's and Codex's
//!   `PreToolUse`, Gemini CLI's `BeforeTool`) is denied once the counted
//!   cost passed the dollar limit. Stopping an agent by mistake is worse
//!   than not stopping it: only a count Logbook is sure of blocks (every
//!   linked session imported, every model priced). A token budget never
//!   blocks. Each block is recorded in the work session (`status` shows it).

use serde_json::{Value, json};

use crate::Logbook;
use crate::error::Result;
use crate::model::work_session::cost::record_block;
use crate::model::work_session::{Indicator, SessionStatus, WorkSession};
use crate::ops::spend::{self, SessionCost};
use crate::ops::work_session;
use logbook_store::hook::Job;

/// What the hook answers about the budget for `job`, if anything.
pub fn hook_answer(p: &Logbook, job: &Job) -> Result<Option<Value>> {
    let name = job.event.hook_event_name.as_str();
    let tool_call = matches!(name, "PreToolUse" | "BeforeTool");
    let warns = matches!(name, "Stop" | "UserPromptSubmit" | "SessionStart");
    if !(tool_call || warns) || (tool_call && !p.config.budget_block) {
        return Ok(None);
    }
    if work_session::active(p)?.is_none() {
        return Ok(None);
    }
    let ws = work_session::get(p, None)?;
    if ws.status != SessionStatus::Active {
        return Ok(None);
    }
    let cost = spend::session_cost(p, &ws)?;
    if tool_call {
        return block(p, job, &ws, &cost);
    }
    if !matches!(
        spend::indicator(&ws, &cost),
        Indicator::Warning | Indicator::Critical
    ) {
        return Ok(None);
    }
    let text = warning(&ws, &cost);
    Ok(Some(match name {
        "Stop" => json!({ "systemMessage": text }),
        _ => json!({"hookSpecificOutput": {"hookEventName": name, "additionalContext": text}}),
    }))
}

/// The counted cost, when Logbook is sure of it: every linked agent session
/// imported and every model priced.
fn sure(cost: &SessionCost) -> Option<f64> {
    if cost.not_counted.is_empty() {
        cost.counted_usd
    } else {
        None
    }
}

/// Denies the tool call once the sure count passed the dollar limit, and
/// records the block.
fn block(p: &Logbook, job: &Job, ws: &WorkSession, cost: &SessionCost) -> Result<Option<Value>> {
    let (Some(counted), Some(max)) = (sure(cost), cost.max_usd) else {
        return Ok(None);
    };
    if counted <= max {
        return Ok(None);
    }
    let tool = job
        .event
        .extra
        .get("tool_name")
        .and_then(Value::as_str)
        .unwrap_or("a tool")
        .to_string();
    let agent_session = job.event.session_id.clone().unwrap_or_default();
    work_session::update(p, Some(&ws.session_id), |w| {
        record_block(w, &job.received_at, &tool, &agent_session, counted);
        Ok(())
    })?;
    let reason = format!(
        "Logbook: the dollar budget of work session {} (${max:.2}) is spent: ${counted:.2} counted. \
         Tool calls are denied (budget_action: block in logbook.yaml). To go on, a person raises \
         the limit with Logbook's budget command and its add-cost option (a person's step).",
        ws.session_id
    );
    Ok(Some(match job.event.hook_event_name.as_str() {
        "BeforeTool" => json!({"decision": "deny", "reason": reason}),
        _ => json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }}),
    }))
}

/// The warning: what the work session is for, and what is left of each limit.
fn warning(ws: &WorkSession, cost: &SessionCost) -> String {
    let what = [ws.client.as_str(), ws.project.as_str()]
        .into_iter()
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" · ");
    let mut out = format!(
        "Logbook: work session {} ({what}) is near its budget.",
        ws.session_id
    );
    if let (Some(max), Some(counted)) = (cost.max_usd, cost.counted_usd) {
        out.push_str(&format!(
            " Cost: ${counted:.2} of ${max:.2} ({:.0}%), ${:.2} left.",
            counted / max * 100.0,
            cost.left().unwrap_or(0.0)
        ));
    }
    let t = &ws.tokens;
    out.push_str(&format!(
        " Tokens: {} of {} ({:.0}%), {} left.",
        t.current,
        t.max,
        ws.percentage(),
        t.max.saturating_sub(t.current)
    ));
    out.push_str(" Finish the task at hand and keep the rest short.");
    out
}
