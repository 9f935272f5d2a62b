//! The resume tool: where the work stands, the same text as the `resume`
//! prompt, for an agent picking up after a compaction or a restart.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::{schemars, tool, tool_router};
use serde::Deserialize;

use logbook::ops::resume;

use super::ToolResult;
use crate::{LogbookServer, schema};

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ResumeArgs {
    /// Work session id (default: the active one).
    session: Option<String>,
    /// brief (default: the last few of each list) or full.
    detail: Option<String>,
    /// "local" (default); "team" is refused: the team catalog keeps no work sessions or workflow state.
    scope: Option<String>,
}

#[tool_router(router = resume_tools, vis = "pub(super)")]
impl LogbookServer {
    #[tool(
        description = "Where the work stands, as text: the work session, tokens, milestones, recent artifacts and run outputs, the workflow's active agent, last invocations, pending handoffs, decisions and verdicts. Call first after a compaction or restart (same text as the resume prompt).",
        output_schema = schema::resume(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn resume_context(&self, Parameters(a): Parameters<ResumeArgs>) -> ToolResult {
        let scope = a.scope.clone();
        let reads = "the work session and its workflow state";
        self.query_here(scope.as_deref(), "resume_context", reads, move |p| {
            let detail: resume::Detail = a.detail.as_deref().unwrap_or("").parse()?;
            let summary =
                resume::summary(p, a.session.as_deref(), detail, logbook::error::Face::Mcp)?;
            logbook::model::to_json("resume summary", &summary)
        })
        .await
    }
}
