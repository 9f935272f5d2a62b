//! The tools: one per operation in INTERFACE.md's "MCP tools". Arguments
//! are the CLI's options in snake_case; each tool makes the one library
//! call the CLI command makes and answers with the JSON the CLI prints
//! with `--json` (built by the same library function).
//!
//! Enumerated values (agent types, statuses, …) are strings parsed by the
//! library, so a wrong one is a tool error naming the allowed values, as in
//! the CLI.

use std::path::PathBuf;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{ErrorData, schemars, tool, tool_router};
use serde::Deserialize;
use serde_json::{Map, Value};

use logbook::clock;
use logbook::model::query::{RunQuery, parse_since};
use logbook::model::run::{OutputType, RunStatus};
use logbook::model::transcript::Kind;
use logbook::model::work_session::{AgentOutcome, Usage};
use logbook::model::workflow::check_confidence;
use logbook::ops::{resume, run, transcript, work_session as ws, workflow as wf};

use crate::{LogbookServer, schema};

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

/// Paging counts as the library takes them (SQLite's integers are i64).
fn paging(n: u64) -> logbook::Result<usize> {
    if n > i64::MAX as u64 {
        return Err(invalid("limit/offset", n.to_string(), "is too large"));
    }
    Ok(usize::try_from(n).unwrap_or(usize::MAX))
}

// ---------------------------------------------------------------- arguments

/// A work session id, or the active one.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SessionIdArgs {
    /// Work session id, e.g. SES202501-ACME-AUDIT (default: the active one).
    id: Option<String>,
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

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RunStartArgs {
    /// Agent identifier, e.g. alex.
    agent: String,
    /// Workflow name, e.g. intake-app (taken from workflow_file when omitted).
    workflow: Option<String>,
    /// Agent title (default: the agent name).
    title: Option<String>,
    /// Bundle path, e.g. bmad/bmm.
    bundle: Option<String>,
    /// Workflow description.
    description: Option<String>,
    /// Workflow inputs as an object of strings, e.g. {"category": "Hardware"}.
    #[serde(default)]
    input: Map<String, Value>,
    /// Earlier runs this one builds on (UUIDs or unique prefixes).
    #[serde(default)]
    related: Vec<String>,
    /// Tags for find_runs.
    #[serde(default)]
    tag: Vec<String>,
    /// Who runs it (default: the bundle config's user_name, logbook.yaml's user, $USER).
    user: Option<String>,
    /// A workflow.yaml (relative to the project root): name, description, inputs, path variables.
    workflow_file: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RunOutputArgs {
    /// The run's UUID, or a unique prefix of it (8 or more characters).
    id: String,
    /// Path relative to the run folder; the file must exist there.
    file: String,
    /// What kind of file it is: document, data, report or artifact.
    #[serde(rename = "type")]
    output_type: String,
    /// What the file is for.
    description: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RunFinishArgs {
    /// The run's UUID, or a unique prefix of it (8 or more characters).
    id: String,
    /// How it ended: completed (default), failed or cancelled.
    status: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RunIdArgs {
    /// The run's UUID, or a unique prefix of it (8 or more characters).
    id: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RunLinkArgs {
    /// The later run (its manifest changes): UUID or unique prefix.
    id: String,
    /// The earlier run it builds on: UUID or unique prefix.
    related_id: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct FindArgs {
    /// Agent name, exactly.
    agent: Option<String>,
    /// Workflow name, exactly or as a regular expression (e.g. ^deep-dive-).
    workflow: Option<String>,
    /// running, completed, failed or cancelled.
    status: Option<String>,
    /// The user who started the run.
    user: Option<String>,
    /// A tag the run carries.
    tag: Option<String>,
    /// Started at or after: RFC 3339, a date, or an age such as 2h, 3d.
    since: Option<String>,
    /// Full-text search (all words) over manifests and small text outputs; ranked.
    text: Option<String>,
    /// At most N runs (default 50).
    limit: Option<u64>,
    /// Skip the first N runs.
    #[serde(default)]
    offset: u64,
    /// "local" (default): this project's runs; "team": every machine's
    /// runs in the team catalog (each with its `origin`).
    scope: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct LatestOutputArgs {
    /// Agent name, exactly.
    agent: String,
    /// Workflow name, exactly or as a regular expression.
    workflow: Option<String>,
    /// Output type: document, data, report or artifact.
    #[serde(rename = "type")]
    output_type: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WorkflowStateArgs {
    /// Work session whose state to read (default: the active one).
    session: Option<String>,
    /// Add fullHistory: every invocation, archived and current, in the order they began.
    #[serde(default)]
    full: bool,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct InvokeArgs {
    /// The agent invoked (it becomes the active agent): orchestrator, analyst, architect,
    /// planner, implementer, critic, qa, security, devops, retrospective, memory, skillbook,
    /// independent-thinker, high-level-advisor, explainer, task-generator or pr-comment-responder.
    agent: String,
    /// The task given to the agent.
    prompt: String,
    /// Structured context, e.g. {"run_id": "…"}.
    context: Option<Map<String, Value>>,
    /// Files given to the agent.
    #[serde(default)]
    artifact: Vec<String>,
    /// The agent that handed the work over.
    from: Option<String>,
    /// Work session (default: the active one).
    session: Option<String>,
    /// Fail unless the state is at this version (compare-and-swap).
    expect_version: Option<u64>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct CompleteArgs {
    /// The agent reporting back (its most recent invocation is completed).
    agent: String,
    /// What it did.
    summary: String,
    /// Files it produced.
    #[serde(default)]
    artifact: Vec<String>,
    /// Its recommendations.
    #[serde(default)]
    recommendation: Vec<String>,
    /// Blockers; any marks the invocation blocked.
    #[serde(default)]
    blocker: Vec<String>,
    /// The agent to hand over to (default: back to the orchestrator).
    handoff_to: Option<String>,
    /// Why it hands over.
    #[serde(default)]
    reason: String,
    /// Mark the invocation failed.
    #[serde(default)]
    failed: bool,
    /// Work session (default: the active one).
    session: Option<String>,
    /// Fail unless the state is at this version (compare-and-swap).
    expect_version: Option<u64>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DecideArgs {
    /// architectural, technical, process or scope.
    #[serde(rename = "type")]
    kind: String,
    /// What was decided.
    description: String,
    /// Why.
    rationale: String,
    /// The agent that decided.
    by: String,
    /// Agents that agreed.
    #[serde(default)]
    approved_by: Vec<String>,
    /// Agents that disagreed.
    #[serde(default)]
    rejected_by: Vec<String>,
    /// Work session (default: the active one).
    session: Option<String>,
    /// Fail unless the state is at this version (compare-and-swap).
    expect_version: Option<u64>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct VerdictArgs {
    /// The agent giving the verdict.
    agent: String,
    /// approve, reject, conditional or needs_revision.
    decision: String,
    /// From 0 to 1.
    confidence: f64,
    /// Why.
    reasoning: String,
    /// Conditions attached.
    #[serde(default)]
    condition: Vec<String>,
    /// Blockers.
    #[serde(default)]
    blocker: Vec<String>,
    /// Work session (default: the active one).
    session: Option<String>,
    /// Fail unless the state is at this version (compare-and-swap).
    expect_version: Option<u64>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct HandoffArgs {
    /// The agent handing over.
    from: String,
    /// The agent taking over.
    to: String,
    /// Why.
    reason: String,
    /// What the next agent needs to know.
    #[serde(default)]
    context: String,
    /// Files passed along.
    #[serde(default)]
    artifact: Vec<String>,
    /// Structured context to preserve.
    preserved_context: Option<Map<String, Value>>,
    /// Work session (default: the active one).
    session: Option<String>,
    /// Fail unless the state is at this version (compare-and-swap).
    expect_version: Option<u64>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PhaseArgs {
    /// planning, implementation, validation or complete.
    phase: String,
    /// Work session (default: the active one).
    session: Option<String>,
    /// Fail unless the state is at this version (compare-and-swap).
    expect_version: Option<u64>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ModeArgs {
    /// analysis, planning, coding or disabled.
    mode: String,
    /// Work session (default: the active one).
    session: Option<String>,
    /// Fail unless the state is at this version (compare-and-swap).
    expect_version: Option<u64>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TranscriptSaveArgs {
    /// The transcript in seed 003's format: {"id": UUID, "timestamp", "messages": […], "metadata": {…}}.
    transcript: Map<String, Value>,
    /// Store it as a subagent transcript (subagent_session_…).
    #[serde(default)]
    subagent: bool,
    /// The parent main session's UUID (implies subagent).
    parent: Option<String>,
    /// The run this conversation belongs to (UUID or unique prefix).
    run: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TranscriptLoadArgs {
    /// The transcript's UUID, its first 8 or more characters, or its last 8.
    id: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TranscriptListArgs {
    /// Every workdir, not only this project's.
    #[serde(default)]
    all: bool,
    /// Only main-agent transcripts.
    #[serde(default)]
    main: bool,
    /// Only subagent transcripts.
    #[serde(default)]
    subagents: bool,
    /// At most N transcripts.
    limit: Option<u64>,
    /// Skip the first N transcripts.
    #[serde(default)]
    offset: u64,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ResumeArgs {
    /// Work session id (default: the active one).
    session: Option<String>,
    /// brief (default: the last few of each list) or full.
    detail: Option<String>,
}

fn target(session: Option<String>, expect_version: Option<u64>) -> wf::Target {
    wf::Target {
        session,
        expect_version,
    }
}

// -------------------------------------------------------------------- tools

#[tool_router(router = tools, vis = "pub(crate)")]
impl LogbookServer {
    #[tool(
        description = "Start a new work session with a token budget and make it active. Use at the beginning of a piece of work. Fails while another session is active unless yes is true (which closes it first).",
        output_schema = schema::work_session(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
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
                    close_active: a.yes,
                },
            )?;
            Ok(s.to_json())
        })
        .await
    }

    #[tool(
        description = "Resume the active work session, or make a paused one active. Use after a restart to pick up where you were; the resume prompt gives the full picture.",
        output_schema = schema::work_session(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn session_resume(&self, Parameters(a): Parameters<SessionIdArgs>) -> ToolResult {
        self.call(
            false,
            move |p| Ok(ws::resume(p, a.id.as_deref())?.to_json()),
        )
        .await
    }

    #[tool(
        description = "A work session's status: tokens used of the budget (indicator active/warning/critical), milestones, artifacts, spawned agents.",
        output_schema = schema::work_session(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn session_status(&self, Parameters(a): Parameters<SessionIdArgs>) -> ToolResult {
        self.call(false, move |p| Ok(ws::get(p, a.id.as_deref())?.to_json()))
            .await
    }

    #[tool(
        description = "Close a work session (the active one by default) and move it to the archive, keeping a context summary. Use when the work is finished.",
        output_schema = schema::work_session(),
        annotations(read_only_hint = false, destructive_hint = true, idempotent_hint = false, open_world_hint = false)
    )]
    async fn session_close(&self, Parameters(a): Parameters<SessionCloseArgs>) -> ToolResult {
        self.call(false, move |p| {
            Ok(ws::close(p, a.id.as_deref(), a.summary)?.to_json())
        })
        .await
    }

    #[tool(
        description = "List work sessions: active and paused ones, and archived (closed) ones.",
        output_schema = schema::session_list(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn session_list(&self, Parameters(a): Parameters<SessionListArgs>) -> ToolResult {
        self.call(false, move |p| {
            if a.active && a.archived {
                return Err(invalid(
                    "active/archived",
                    "both",
                    "give at most one of active and archived",
                ));
            }
            let listing = ws::list(p)?;
            Ok(ws::listing_json(&listing, !a.archived, !a.active))
        })
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
            Ok(ws::switched_json(&s, &context))
        })
        .await
    }

    #[tool(
        description = "Pause a work session (the active one by default).",
        output_schema = schema::work_session(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn session_pause(&self, Parameters(a): Parameters<SessionIdArgs>) -> ToolResult {
        self.call(false, move |p| Ok(ws::pause(p, a.id.as_deref())?.to_json()))
            .await
    }

    #[tool(
        description = "Token usage report of a work session: main-session use, remaining budget, peak, and the tokens spawned agents used in isolation (saved).",
        output_schema = schema::token_report(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn session_tokens(&self, Parameters(a): Parameters<SessionIdArgs>) -> ToolResult {
        self.call(false, move |p| {
            let r = ws::get(p, a.id.as_deref())?.token_report();
            Ok(serde_json::to_value(&r).unwrap_or(Value::Null))
        })
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
            Ok(s.to_json())
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
            Ok(s.to_json())
        })
        .await
    }

    #[tool(
        description = "Start an agent run: a new output folder with a manifest (status running), linked to the active work session. Write the run's files into the returned folder, then register them with run_register_output.",
        output_schema = schema::run_started(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    async fn run_start(&self, Parameters(a): Parameters<RunStartArgs>) -> ToolResult {
        self.call(false, move |p| {
            let mut inputs = vec![];
            for (k, v) in a.input {
                let v = match v {
                    Value::String(s) => s,
                    other => other.to_string(),
                };
                inputs.push((k, v));
            }
            let workflow_file = a.workflow_file.map(|f| {
                let f = PathBuf::from(f);
                if f.is_relative() { p.root().join(f) } else { f }
            });
            let started = run::start(
                p,
                run::StartOptions {
                    agent: a.agent,
                    title: a.title,
                    bundle: a.bundle,
                    workflow: a.workflow,
                    description: a.description,
                    inputs,
                    related: a.related,
                    tags: a.tag,
                    user: a.user,
                    workflow_file,
                },
            )?;
            for w in &started.warnings {
                logbook::notice::push(w.clone());
            }
            Ok(run::started_json(&started))
        })
        .await
    }

    #[tool(
        description = "Register a file the run wrote inside its folder as an output (document, data, report or artifact). Registering the same file again updates its record.",
        output_schema = schema::output_registered(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn run_register_output(&self, Parameters(a): Parameters<RunOutputArgs>) -> ToolResult {
        self.call(false, move |p| {
            let t: OutputType = parse(&a.output_type)?;
            let (r, record) = run::register_output(p, &a.id, &a.file, t, &a.description)?;
            Ok(run::output_json(&r, &record))
        })
        .await
    }

    #[tool(
        description = "Finish a run: set completed_at and its final status (completed, failed or cancelled). No outputs can be registered afterwards.",
        output_schema = schema::run_entry(),
        annotations(read_only_hint = false, destructive_hint = true, idempotent_hint = false, open_world_hint = false)
    )]
    async fn run_finish(&self, Parameters(a): Parameters<RunFinishArgs>) -> ToolResult {
        self.call(false, move |p| {
            let status: RunStatus = parse(a.status.as_deref().unwrap_or("completed"))?;
            let r = run::finish(p, &a.id, status)?;
            Ok(run::entry_json(&r, clock::now()))
        })
        .await
    }

    #[tool(
        description = "Show a run: its manifest (agent, workflow, status, outputs) and display names.",
        output_schema = schema::run_entry(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn run_show(&self, Parameters(a): Parameters<RunIdArgs>) -> ToolResult {
        self.call(false, move |p| {
            Ok(run::entry_json(&run::show(p, &a.id)?, clock::now()))
        })
        .await
    }

    #[tool(
        description = "Record that a run builds on an earlier one (lineage). Linking twice changes nothing.",
        output_schema = schema::run_entry(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn run_link(&self, Parameters(a): Parameters<RunLinkArgs>) -> ToolResult {
        self.call(false, move |p| {
            let (r, _) = run::link(p, &a.id, &a.related_id)?;
            Ok(run::entry_json(&r, clock::now()))
        })
        .await
    }

    #[tool(
        description = "Find runs by agent, workflow (exact or regex), status, user, tag, start time or full text; newest first (ranked for text), paged. `runs` is exactly `logbook find --json`.",
        output_schema = schema::find(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn find_runs(&self, Parameters(a): Parameters<FindArgs>) -> ToolResult {
        self.call(false, move |p| {
            let now = clock::now();
            let status = a
                .status
                .as_deref()
                .map(parse::<RunStatus>)
                .transpose()?
                .map(|s| s.to_string());
            let query = RunQuery {
                agent: a.agent,
                workflow: a.workflow,
                status,
                user: a.user,
                tag: a.tag,
                since: a
                    .since
                    .as_deref()
                    .map(|s| parse_since(s, now))
                    .transpose()?,
                text: a.text,
                limit: a.limit.map(paging).transpose()?,
                offset: paging(a.offset)?,
            };
            match a.scope.as_deref() {
                None | Some("local") => {}
                Some("team") => {
                    let page = logbook::ops::team::find(p, &query)?;
                    let shown = query.offset as u64 + page.runs.len() as u64;
                    return Ok(serde_json::json!({
                        "runs": logbook::ops::team::page_json(&page, now),
                        "total": page.total,
                        "offset": query.offset,
                        "more": page.total.saturating_sub(shown),
                    }));
                }
                Some(other) => {
                    return Err(logbook::Error::invalid(
                        "scope",
                        other,
                        "\"local\" (this project) or \"team\" (the team catalog)",
                    ));
                }
            }
            let page = run::find_page(p, &query)?;
            Ok(serde_json::json!({
                "runs": run::page_json(&page, now),
                "total": page.total,
                "offset": query.offset,
                "more": page.more(query.offset),
            }))
        })
        .await
    }

    #[tool(
        description = "The latest output of an agent (optionally of a workflow and a type): its absolute path, run and record. Use to pick up what an earlier run produced.",
        output_schema = schema::latest_output(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn latest_output(&self, Parameters(a): Parameters<LatestOutputArgs>) -> ToolResult {
        self.call(false, move |p| {
            let t = a
                .output_type
                .as_deref()
                .map(parse::<OutputType>)
                .transpose()?;
            let found = run::latest_output(
                p,
                &a.agent,
                a.workflow.as_deref(),
                t.as_ref().map(OutputType::as_str),
            )?;
            Ok(run::latest_output_json(&found))
        })
        .await
    }

    #[tool(
        description = "The lineage around a run: the runs it builds on and the runs built on it, as nodes and edges.",
        output_schema = schema::lineage(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn run_lineage(&self, Parameters(a): Parameters<RunIdArgs>) -> ToolResult {
        self.call(false, move |p| {
            let graph = run::lineage(p, &a.id, &clock::local_zone())?;
            Ok(serde_json::to_value(&graph).unwrap_or(Value::Null))
        })
        .await
    }

    #[tool(
        description = "The orchestrator's workflow state of a work session (seed 004): mode, phase, active agent, agent history, decisions, verdicts, pending handoffs; with full, every invocation ever recorded.",
        output_schema = schema::workflow_state(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn workflow_state(&self, Parameters(a): Parameters<WorkflowStateArgs>) -> ToolResult {
        self.call(false, move |p| {
            let loaded = wf::load(p, a.session.as_deref())?;
            let history = if a.full {
                let (history, problems) = wf::full_history_lenient(&loaded);
                for problem in problems {
                    logbook::notice::push(problem);
                }
                Some(history)
            } else {
                None
            };
            Ok(wf::loaded_json(&loaded, history.as_deref()))
        })
        .await
    }

    #[tool(
        description = "Record that the orchestrator invoked an agent (it becomes the active agent, invocation in_progress).",
        output_schema = schema::workflow_state(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    async fn workflow_invoke(&self, Parameters(a): Parameters<InvokeArgs>) -> ToolResult {
        self.call(false, move |p| {
            let inv = wf::Invoke {
                agent: parse(&a.agent)?,
                prompt: a.prompt,
                context: a.context.unwrap_or_default(),
                artifacts: a.artifact,
                from: a.from.as_deref().map(parse).transpose()?,
            };
            let state = wf::invoke(p, &target(a.session, a.expect_version), inv)?;
            Ok(wf::state_json(&state))
        })
        .await
    }

    #[tool(
        description = "Record that an agent finished its most recent invocation (completed, or blocked when it reports blockers, or failed) and hand over (default: back to the orchestrator).",
        output_schema = schema::workflow_state(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    async fn workflow_complete(&self, Parameters(a): Parameters<CompleteArgs>) -> ToolResult {
        self.call(false, move |p| {
            let c = wf::Complete {
                agent: parse(&a.agent)?,
                summary: a.summary,
                artifacts: a.artifact,
                recommendations: a.recommendation,
                blockers: a.blocker,
                handoff_to: a.handoff_to.as_deref().map(parse).transpose()?,
                reason: a.reason,
                failed: a.failed,
            };
            let state = wf::complete(p, &target(a.session, a.expect_version), c)?;
            Ok(wf::state_json(&state))
        })
        .await
    }

    #[tool(
        description = "Record a decision (architectural, technical, process or scope) with its rationale and who decided, approved or rejected it. Decisions are never compacted.",
        output_schema = schema::workflow_state(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    async fn workflow_decide(&self, Parameters(a): Parameters<DecideArgs>) -> ToolResult {
        self.call(false, move |p| {
            let d = wf::NewDecision {
                kind: parse(&a.kind)?,
                description: a.description,
                rationale: a.rationale,
                decided_by: parse(&a.by)?,
                approved_by: parse_all(&a.approved_by)?,
                rejected_by: parse_all(&a.rejected_by)?,
            };
            let (state, _) = wf::decide(p, &target(a.session, a.expect_version), d)?;
            Ok(wf::state_json(&state))
        })
        .await
    }

    #[tool(
        description = "Record a specialist's verdict: approve, reject, conditional or needs_revision, with confidence 0-1, reasoning, conditions and blockers.",
        output_schema = schema::workflow_state(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    async fn workflow_verdict(&self, Parameters(a): Parameters<VerdictArgs>) -> ToolResult {
        self.call(false, move |p| {
            check_confidence(a.confidence)
                .map_err(|reason| invalid("confidence", a.confidence.to_string(), &reason))?;
            let v = wf::NewVerdict {
                agent: parse(&a.agent)?,
                decision: parse(&a.decision)?,
                confidence: a.confidence,
                reasoning: a.reasoning,
                conditions: a.condition,
                blockers: a.blocker,
            };
            let state = wf::verdict(p, &target(a.session, a.expect_version), v)?;
            Ok(wf::state_json(&state))
        })
        .await
    }

    #[tool(
        description = "Record a pending handoff from one agent to another, with the reason, context and files the next agent needs.",
        output_schema = schema::workflow_state(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = false, open_world_hint = false)
    )]
    async fn workflow_handoff(&self, Parameters(a): Parameters<HandoffArgs>) -> ToolResult {
        self.call(false, move |p| {
            let h = wf::NewHandoff {
                from: parse(&a.from)?,
                to: parse(&a.to)?,
                reason: a.reason,
                context: a.context,
                artifacts: a.artifact,
                preserved_context: a.preserved_context,
            };
            let state = wf::handoff(p, &target(a.session, a.expect_version), h)?;
            Ok(wf::state_json(&state))
        })
        .await
    }

    #[tool(
        description = "Move the workflow to a phase: planning, implementation, validation or complete.",
        output_schema = schema::workflow_state(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn workflow_phase(&self, Parameters(a): Parameters<PhaseArgs>) -> ToolResult {
        self.call(false, move |p| {
            let state = wf::set_phase(p, &target(a.session, a.expect_version), parse(&a.phase)?)?;
            Ok(wf::state_json(&state))
        })
        .await
    }

    #[tool(
        description = "Switch the work session's mode: analysis, planning, coding or disabled.",
        output_schema = schema::workflow_state(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn mode_set(&self, Parameters(a): Parameters<ModeArgs>) -> ToolResult {
        self.call(false, move |p| {
            let state = wf::set_mode(p, &target(a.session, a.expect_version), parse(&a.mode)?)?;
            Ok(wf::state_json(&state))
        })
        .await
    }

    #[tool(
        description = "Save a main-agent or subagent transcript (seed 003's JSON) so the conversation survives; saving the same id again replaces it.",
        output_schema = schema::transcript_saved(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn transcript_save(&self, Parameters(a): Parameters<TranscriptSaveArgs>) -> ToolResult {
        self.call(false, move |p| {
            let text = Value::Object(a.transcript).to_string();
            let stored = transcript::import_text(
                p,
                &text,
                a.subagent,
                a.parent.as_deref(),
                a.run.as_deref(),
            )?;
            Ok(transcript::imported_json(&stored))
        })
        .await
    }

    #[tool(
        description = "Load a stored transcript by its UUID (or a unique part of it): id, messages, metadata.",
        output_schema = schema::transcript(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn transcript_load(&self, Parameters(a): Parameters<TranscriptLoadArgs>) -> ToolResult {
        self.call(false, move |p| {
            Ok(transcript::load(p, &a.id)?.transcript.into_value())
        })
        .await
    }

    #[tool(
        description = "List transcripts of this project (all: every workdir), newest lastActiveAt first; `transcripts` is exactly `logbook transcript list --json`.",
        output_schema = schema::transcript_list(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn transcript_list(&self, Parameters(a): Parameters<TranscriptListArgs>) -> ToolResult {
        self.call(false, move |p| {
            if a.main && a.subagents {
                return Err(invalid(
                    "main/subagents",
                    "both",
                    "give at most one of main and subagents",
                ));
            }
            let opts = transcript::ListOptions {
                within: (!a.all).then(|| p.root().to_path_buf()),
                kind: if a.main {
                    Some(Kind::Main)
                } else if a.subagents {
                    Some(Kind::Subagent)
                } else {
                    None
                },
                limit: a.limit.map(paging).transpose()?,
                offset: paging(a.offset)?,
                filter: Default::default(),
            };
            let listing = transcript::list(p, &opts)?;
            Ok(serde_json::json!({ "transcripts": transcript::listing_json(&listing) }))
        })
        .await
    }

    #[tool(
        description = "Where the work stands, as text: the work session, tokens, milestones, recent artifacts and run outputs, the workflow's active agent, last invocations, pending handoffs, decisions and verdicts. Call first after a compaction or restart (same text as the resume prompt).",
        output_schema = schema::resume(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn resume_context(&self, Parameters(a): Parameters<ResumeArgs>) -> ToolResult {
        self.call(false, move |p| {
            let detail: resume::Detail = a.detail.as_deref().unwrap_or("").parse()?;
            let summary = resume::summary(p, a.session.as_deref(), detail)?;
            Ok(serde_json::to_value(&summary).unwrap_or(Value::Null))
        })
        .await
    }
}
