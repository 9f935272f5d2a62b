//! Work sessions against their token budgets, with what their agent
//! sessions measured: the usage page's per-session chart. Its own module,
//! as it reads both work sessions and transcripts' usage (neither of which
//! imports the other for it).

use crate::Logbook;
use crate::error::Result;
use crate::ops::transcript::UsageReport;
use crate::ops::work_session;

/// One work session's tokens against its budget: a bar of the usage page,
/// with the numbers `list --json` gives for it.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Budget {
    /// The work session id.
    pub id: String,
    /// Who the work is for and what it is (`client · project`).
    pub name: String,
    /// active, paused or closed.
    pub status: String,
    /// Its token budget (`tokens.max`).
    pub max: u64,
    /// Its usage now (`tokens.current`).
    pub current: u64,
    /// The highest usage seen (`tokens.peak`).
    pub peak: u64,
    /// What the agent sessions that worked in it measured (their
    /// transcripts in `report`, subagents rolled up); `None` when none of
    /// them was imported.
    pub measured: Option<u64>,
}

/// Every work session (live, then archived) against its budget, with what
/// its agent sessions measured in `report` (a [`crate::ops::transcript::usage`]
/// report): the usage page's per-session chart.
pub fn budgets(p: &Logbook, report: &UsageReport) -> Result<Vec<Budget>> {
    let listing = work_session::list(p)?;
    let measured: std::collections::HashMap<String, u64> = report
        .transcripts
        .iter()
        .map(|t| (t.id.to_ascii_lowercase(), t.with_subagents.total_tokens))
        .collect();
    Ok(listing
        .sessions
        .iter()
        .chain(&listing.archived)
        .map(|ws| {
            let linked: Vec<u64> = ws
                .agent_sessions
                .iter()
                .filter_map(|a| measured.get(&a.session_id.to_ascii_lowercase()).copied())
                .collect();
            let name = [ws.client.as_str(), ws.project.as_str()]
                .into_iter()
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
                .join(" · ");
            Budget {
                id: ws.session_id.clone(),
                name,
                status: ws.status.as_str().to_string(),
                max: ws.tokens.max,
                current: ws.tokens.current,
                peak: ws.tokens.peak.max(ws.tokens.current),
                measured: (!linked.is_empty()).then(|| linked.iter().sum()),
            }
        })
        .collect())
}
