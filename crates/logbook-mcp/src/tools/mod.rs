//! The tools: one per operation in docs/interface.md's "MCP tools". Arguments
//! are the CLI's options in snake_case; each tool makes the one library
//! call the CLI command makes and answers with the JSON the CLI prints
//! with `--json` (built by the same library function).
//!
//! Enumerated values (agent types, statuses, …) are strings parsed by the
//! library, so a wrong one is a tool error naming the allowed values, as in
//! the CLI.
//!
//! Each domain's tools, with their argument structs, sit in a submodule
//! with a router of its own; [`LogbookServer::tools`] joins them (the SDK
//! lists tools by name, so the split does not show to a client).

pub(crate) mod agent;
mod resume;
mod runs;
mod sessions;
mod transcripts;
mod workflow;

use rmcp::ErrorData;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::CallToolResult;

use crate::LogbookServer;
use logbook::error::Face;

type ToolResult = Result<CallToolResult, ErrorData>;

fn parse<T: std::str::FromStr<Err = logbook::Error>>(s: &str) -> logbook::Result<T> {
    s.parse()
}

fn parse_all<T: std::str::FromStr<Err = logbook::Error>>(v: &[String]) -> logbook::Result<Vec<T>> {
    v.iter().map(|s| s.parse()).collect()
}

fn invalid(field: &'static str, value: impl Into<String>, reason: &str) -> logbook::Error {
    logbook::Error::invalid(field, value.into(), reason.to_string())
}

/// Adds `"partial": true` and the notice to a text answer given while the
/// full-text index is still being built (`progress`), so an agent never
/// takes a short answer for a whole one.
fn flag_partial(json: &mut serde_json::Value, progress: Option<logbook::ops::index::TextProgress>) {
    if let (Some(progress), serde_json::Value::Object(m)) = (progress, json) {
        m.insert("partial".into(), true.into());
        m.insert("notice".into(), progress.notice().word(Face::Mcp).into());
    }
}

impl LogbookServer {
    /// Every tool of the server: the routers of all the domains in one.
    pub(crate) fn tools() -> ToolRouter<Self> {
        Self::session_tools()
            + Self::run_tools()
            + Self::workflow_tools()
            + Self::transcript_tools()
            + Self::resume_tools()
            + Self::agent_tools()
    }
}
