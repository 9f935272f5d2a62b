//! The work-session tools: start, resume, pause, switch and close a work
//! session, and record its tokens, milestones, artifacts, notes and the
//! agents it spawns.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::{schemars, tool, tool_router};
use serde::Deserialize;

use logbook::model::work_session::{AgentOutcome, Usage};
use logbook::ops::work_session as ws;

use super::{ToolResult, invalid, parse};
use crate::{LogbookServer, schema};

/// A work session id, or the active one.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SessionIdArgs {
    /// Work session id, e.g. SES202501-ACME-AUDIT (default: the active one).
    id: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SessionReadArgs {
    /// Work session id, e.g. SES202501-ACME-AUDIT (default: the active one).
    id: Option<String>,
    /// "local" (default); "team" is refused: the team catalog keeps no work sessions.
    scope: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SessionStartArgs {
    /// Id prefix: SES, ENG, ANA, DES, TST or any 2-5 capital letters (default SES).
    prefix: Option<String>,
    /// Client name, letters and digits (default INTERNAL).
    client: Option<String>,
    /// Project name, letters and digits (default: the project folder's name).
    project: Option<String>,
    /// Token budget of the main session (default: logbook.yaml's token_budget, 150000).
    max_tokens: Option<u64>,
    /// Dollar budget (USD): the hooks warn near it, and deny tool calls past it when logbook.yaml says budget_action: block.
    max_cost: Option<f64>,
    /// Close the active work session first. Without it, starting while one is active fails.
    #[serde(default)]
    yes: bool,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SessionCloseArgs {
    /// Work session id (default: the active one).
    id: Option<String>,
    /// Context summary to keep (default: composed from milestones, artifacts and notes).
    summary: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SessionListArgs {
    /// Only active and paused sessions.
    #[serde(default)]
    active: bool,
    /// Only closed (archived) sessions.
    #[serde(default)]
    archived: bool,
    /// "local" (default); "team" is refused: the team catalog keeps no work sessions.
    scope: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SessionSwitchArgs {
    /// The work session to make active (the active one is paused).
    id: String,
}

/// One change per call: give exactly one of current, add, milestone_add,
/// milestone_done, artifact, note.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SessionUpdateArgs {
    /// Work session to change (default: the active one).
    session: Option<String>,
    /// Token usage: the main session now uses N tokens (peak follows).
    current: Option<u64>,
    /// Token usage: the main session used N more tokens.
    add: Option<u64>,
    /// Add a milestone, not done yet.
    milestone_add: Option<String>,
    /// Mark an open milestone done (its name exactly as added).
    milestone_done: Option<String>,
    /// Record a file produced during the session (its path).
    artifact: Option<String>,
    /// With artifact: the agent that produced it.
    agent: Option<String>,
    /// Add a note.
    note: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AgentSpawnArgs {
    /// Agent type (analyst, architect, …).
    agent_type: String,
    /// Agent id (default: agent-xxxxxxxx); a run UUID links the run.
    id: Option<String>,
    /// Where the agent will write its output.
    output: Option<String>,
    /// Work session (default: the active one).
    session: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AgentDoneArgs {
    /// The id agent_spawn returned.
    id: String,
    /// Tokens the agent used in its own context (kept out of the main session).
    tokens: u64,
    /// Its output file.
    output: Option<String>,
    /// How it ended: completed (default) or failed.
    status: Option<String>,
    /// Work session (default: the active one).
    session: Option<String>,
}

#[tool_router(router = session_tools, vis = "pub(super)")]
impl LogbookServer {
    #[tool(
        description = "Start a new work session with a token budget and make it active. Use at the beginning of a piece of work. Fails while another session is active unless yes is true (which closes it first).",
        output_schema = schema::work_session(),
        annotations(read_only_hint = false, destructive_hint = true, idempotent_hint = false, open_world_hint = false)
    )]
    async fn session_start(&self, Parameters(a): Parameters<SessionStartArgs>) -> ToolResult {
        self.call(true, move |p| {
            let s = ws::start(
                p,
                ws::StartOptions {
                    prefix: a.prefix,
                    client: a.client,
                    project: a.project,
                    max_tokens: a.max_tokens,
                    max_cost: a.max_cost,
                    close_active: a.yes,
                    repository: None,
                },
            )?;
            s.to_json()
        })
        .await
    }

    #[tool(
        description = "Resume the active work session, or make a paused one active. Use after a restart to pick up where you were; the resume prompt gives the full picture.",
        output_schema = schema::work_session(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn session_resume(&self, Parameters(a): Parameters<SessionIdArgs>) -> ToolResult {
        self.call(false, move |p| {
            let mut json = ws::resume(p, a.id.as_deref())?.to_json()?;
            // As `resume --json`: the work session is resumed even when
            // the agent session cannot be looked up.
            let agent = logbook::ops::agent::agent_resume(p, p.root())
                .ok()
                .flatten();
            if let serde_json::Value::Object(o) = &mut json {
                o.insert(
                    "agent_resume".into(),
                    logbook::ops::agent::resume_json(agent.as_ref())?,
                );
            }
            Ok(json)
        })
        .await
    }

    #[tool(
        description = "A work session's status: tokens used of the budget (indicator active/warning/critical), milestones, artifacts, spawned agents.",
        output_schema = schema::work_session(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn session_status(&self, Parameters(a): Parameters<SessionReadArgs>) -> ToolResult {
        self.query_here(
            a.scope.as_deref(),
            "session_status",
            "work sessions",
            move |p| logbook::ops::spend::session_json(p, &ws::get(p, a.id.as_deref())?),
        )
        .await
    }

    #[tool(
        description = "Close a work session (the active one by default) and move it to the archive, keeping a context summary. Use when the work is finished.",
        output_schema = schema::work_session(),
        annotations(read_only_hint = false, destructive_hint = true, idempotent_hint = false, open_world_hint = false)
    )]
    async fn session_close(&self, Parameters(a): Parameters<SessionCloseArgs>) -> ToolResult {
        self.call(false, move |p| {
            let s = ws::close(p, a.id.as_deref(), a.summary)?;
            logbook::ops::spend::session_json(p, &s)
        })
        .await
    }

    #[tool(
        description = "List work sessions: active and paused ones, and archived (closed) ones.",
        output_schema = schema::session_list(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn session_list(&self, Parameters(a): Parameters<SessionListArgs>) -> ToolResult {
        let scope = a.scope.clone();
        self.query_here(
            scope.as_deref(),
            "session_list",
            "work sessions",
            move |p| {
                if a.active && a.archived {
                    return Err(invalid(
                        "active/archived",
                        "both",
                        "give at most one of active and archived",
                    ));
                }
                let listing = ws::list(p)?;
                ws::listing_json(&listing, !a.archived, !a.active)
            },
        )
        .await
    }

    #[tool(
        description = "Pause the active work session and make another one active; returns it with its restored context (decisions, outcomes, next steps).",
        output_schema = schema::work_session(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn session_switch(&self, Parameters(a): Parameters<SessionSwitchArgs>) -> ToolResult {
        self.call(false, move |p| {
            let s = ws::switch(p, &a.id)?;
            let context = ws::context(p, &s)?;
            ws::switched_json(&s, &context)
        })
        .await
    }

    #[tool(
        description = "Pause a work session (the active one by default).",
        output_schema = schema::work_session(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn session_pause(&self, Parameters(a): Parameters<SessionIdArgs>) -> ToolResult {
        self.call(false, move |p| ws::pause(p, a.id.as_deref())?.to_json())
            .await
    }

    #[tool(
        description = "Token usage report of a work session: main-session use, remaining budget, peak, and the tokens spawned agents used in isolation (saved).",
        output_schema = schema::token_report(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn session_tokens(&self, Parameters(a): Parameters<SessionReadArgs>) -> ToolResult {
        let scope = a.scope.clone();
        self.query_here(
            scope.as_deref(),
            "session_tokens",
            "work sessions",
            move |p| logbook::ops::spend::token_report_json(p, &ws::get(p, a.id.as_deref())?),
        )
        .await
    }

    #[tool(
        description = "Record one change to a work session: token usage (current or add), a milestone (milestone_add, milestone_done), an artifact (with agent), or a note. Give exactly one per call.",
        output_schema = schema::work_session(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    async fn session_update(&self, Parameters(a): Parameters<SessionUpdateArgs>) -> ToolResult {
        self.call(false, move |p| {
            let id = a.session.as_deref();
            let given = [
                a.current.is_some(),
                a.add.is_some(),
                a.milestone_add.is_some(),
                a.milestone_done.is_some(),
                a.artifact.is_some(),
                a.note.is_some(),
            ]
            .iter()
            .filter(|g| **g)
            .count();
            if given != 1 {
                return Err(invalid(
                    "session_update",
                    format!("{given} changes"),
                    "give exactly one of current, add, milestone_add, milestone_done, artifact, note",
                ));
            }
            if a.agent.is_some() && a.artifact.is_none() {
                return Err(invalid("agent", "given", "agent goes with artifact"));
            }
            let s = if let Some(n) = a.current {
                ws::record_usage(p, id, Usage::Current(n))?
            } else if let Some(n) = a.add {
                ws::record_usage(p, id, Usage::Add(n))?
            } else if let Some(name) = &a.milestone_add {
                ws::add_milestone(p, id, name)?
            } else if let Some(name) = &a.milestone_done {
                ws::complete_milestone(p, id, name)?
            } else if let Some(path) = &a.artifact {
                ws::add_artifact(p, id, path, a.agent.as_deref())?
            } else {
                ws::add_note(p, id, a.note.as_deref().unwrap_or_default())?
            };
            s.to_json()
        })
        .await
    }

    #[tool(
        description = "Record a spawned agent in the work session; returns its id for agent_done.",
        output_schema = schema::spawned(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    async fn agent_spawn(&self, Parameters(a): Parameters<AgentSpawnArgs>) -> ToolResult {
        self.call(false, move |p| {
            let (_, agent_id) = ws::spawn_agent(
                p,
                a.session.as_deref(),
                &a.agent_type,
                a.id.as_deref(),
                a.output.as_deref(),
            )?;
            Ok(ws::spawned_json(&agent_id))
        })
        .await
    }

    #[tool(
        description = "Record that a spawned agent finished and the tokens it used in its own context (counted as saved by isolation).",
        output_schema = schema::work_session(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    async fn agent_done(&self, Parameters(a): Parameters<AgentDoneArgs>) -> ToolResult {
        self.call(false, move |p| {
            let status: AgentOutcome = parse(a.status.as_deref().unwrap_or("completed"))?;
            let s = ws::finish_agent(
                p,
                a.session.as_deref(),
                &a.id,
                a.tokens,
                a.output.as_deref(),
                status,
            )?;
            s.to_json()
        })
        .await
    }
}
