//! `logbook handoff --to AGENT`: a handover from the latest session of the
//! other coding agent, as text, JSON or a SessionStart hook's answer.

use anyhow::Result;
use clap::Args;
use logbook::model::agent_log::Format;
use logbook::ops::agent;

use super::Context;
use crate::printer::Output;

#[derive(Debug, Args)]
pub(crate) struct HandoffArgs {
    /// The agent that takes over; the handover is read from the latest
    /// session of the other one.
    #[arg(long, value_enum)]
    to: AgentArg,
    /// The most bytes of text the handover holds (default 8192).
    #[arg(long, value_name = "N")]
    max_bytes: Option<u64>,
    /// Print it as a SessionStart hook's answer:
    /// `{"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": …}}`.
    #[arg(long)]
    hook: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum AgentArg {
    ClaudeCode,
    Codex,
}

impl From<AgentArg> for Format {
    fn from(a: AgentArg) -> Self {
        match a {
            AgentArg::ClaudeCode => Format::ClaudeCode,
            AgentArg::Codex => Format::Codex,
        }
    }
}

pub(crate) fn handoff(ctx: &Context, a: &HandoffArgs) -> Result<Output> {
    let max = agent::max_bytes(a.max_bytes)?;
    let h = match agent::handoff(&ctx.project, &ctx.cwd, a.to.into()) {
        // A hook has nothing to add: it answers with nothing and succeeds,
        // as the agents expect of a hook.
        Err(logbook::Error::NoAgentSession { .. }) if a.hook => return Ok(Output::printed()),
        other => other?,
    };
    if a.hook {
        // The hook's shape is the output, with or without --json.
        let json = agent::handoff_hook_json(&h, max);
        let human = format!("{}\n", serde_json::to_string(&json)?);
        return Ok(Output::new(json, human));
    }
    let text = h.render(max);
    Ok(Output::new(agent::handoff_json(&h, max)?, text))
}
