//! `logbook mcp` (the MCP server on stdio, from the `logbook-mcp` crate)
//! and `logbook resume-context`, the text its `resume` prompt returns.

use std::path::PathBuf;

use anyhow::{Result, anyhow};
use clap::Args;
use logbook::ops::resume::{self, Detail};

use super::Context;
use crate::printer::Output;

#[derive(Debug, Args)]
pub(crate) struct ResumeContextArgs {
    /// Work session id (default: the active one).
    #[arg(long, value_name = "ID")]
    session: Option<String>,
    /// brief (the last few of each list) or full.
    #[arg(long, default_value = "brief")]
    detail: String,
}

pub(crate) fn resume_context(ctx: &Context, a: &ResumeContextArgs) -> Result<Output> {
    let detail: Detail = a.detail.parse()?;
    let summary = resume::summary(
        &ctx.project,
        a.session.as_deref(),
        detail,
        logbook::error::Face::Cli,
    )?;
    let human = summary.text.clone();
    Ok(Output::new(serde_json::to_value(&summary)?, human))
}

/// Serves until the client closes stdin; stdout is the protocol's, so the
/// command prints nothing itself.
pub(crate) fn serve(root: Option<PathBuf>) -> Result<Output> {
    logbook_mcp::run_stdio(root, super::context)
        .map_err(|e| anyhow!("the MCP server stopped: {e}"))?;
    Ok(Output::printed())
}
