//! The coding-agent tools: which agent session to resume and with what
//! command, and a handover from the latest session of the other agent.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::{schemars, tool, tool_router};
use serde::Deserialize;
use serde_json::json;

use logbook::ops::agent;

use super::{ToolResult, parse};
use crate::{LogbookServer, schema};

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AgentResumeArgs {
    /// A transcript imported from an agent log (UUID or a unique part);
    /// default: the latest Claude Code or Codex session of this project.
    transcript_id: Option<String>,
    /// "local" (default); "team" is refused: the team catalog keeps no agent sessions.
    scope: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AgentHandoffArgs {
    /// The agent taking over: claude-code or codex. The handover is read
    /// from the latest session of the other one.
    to: String,
    /// The most bytes of text the handover holds (default 8192, at least 512).
    max_bytes: Option<u64>,
    /// "local" (default); "team" is refused: the team catalog keeps no agent sessions.
    scope: Option<String>,
}

#[tool_router(router = agent_tools, vis = "pub(super)")]
impl LogbookServer {
    #[tool(
        description = "How to resume a Claude Code or Codex session in the agent that wrote it: {\"agent_resume\": {agent, session_id, command (claude --resume ID / codex resume ID), cwd}} for the latest one of this project (null when none was recorded), or for transcript_id.",
        output_schema = schema::agent_resume(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn agent_resume(&self, Parameters(a): Parameters<AgentResumeArgs>) -> ToolResult {
        let scope = a.scope.clone();
        let reads = "the agent sessions imported here";
        self.query_here(scope.as_deref(), "agent_resume", reads, move |p| {
            let r = match a.transcript_id.as_deref().map(str::trim) {
                Some(id) if !id.is_empty() => Some(agent::transcript_resume(p, id)?),
                _ => agent::agent_resume(p, p.root())?,
            };
            Ok(json!({"agent_resume": agent::resume_json(r.as_ref())?}))
        })
        .await
    }

    #[tool(
        description = "A handover to start from, composed from the latest session of the other coding agent (to: claude-code reads Codex's, to: codex reads Claude Code's): the goal, files changed, commands run and failed, open milestones, pending handoffs, the last assistant message, and `text`, all of it within max_bytes.",
        output_schema = schema::agent_handoff(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn agent_handoff(&self, Parameters(a): Parameters<AgentHandoffArgs>) -> ToolResult {
        let scope = a.scope.clone();
        let reads = "the agent sessions imported here";
        self.query_here(scope.as_deref(), "agent_handoff", reads, move |p| {
            let max = agent::max_bytes(a.max_bytes)?;
            let h = agent::handoff(p, p.root(), parse(&a.to)?)?;
            agent::handoff_json(&h, max)
        })
        .await
    }
}

/// The agent-resume line the `resume` prompt ends with.
pub(crate) fn resume_line(p: &logbook::Logbook) -> String {
    match agent::agent_resume(p, p.root()) {
        Ok(r) => agent::resume_line(r.as_ref()),
        Err(e) => format!(
            "The agent session to resume could not be looked up: {}",
            logbook::error::message(&e, logbook::error::Face::Mcp)
        ),
    }
}
