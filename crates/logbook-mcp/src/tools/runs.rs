//! The run tools: start a run, register its outputs, finish, show and link
//! it, and find runs, latest outputs and lineage.

use std::path::PathBuf;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::{schemars, tool, tool_router};
use serde::Deserialize;
use serde_json::{Map, Value};

use logbook::clock;
use logbook::model::ids::RunRef;
use logbook::model::query::RunQuery;
use logbook::model::run::{OutputType, RunStatus};
use logbook::ops::params::{FindParams, RepoBase};
use logbook::ops::query::{self, FindOptions, Scope};
use logbook::ops::run;

use super::{ToolResult, parse};
use crate::{LogbookServer, schema};

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
    /// Custom workflow-specific metadata, the manifest's `metadata` (an object), e.g. {"ticket": "OPS-42"}.
    #[serde(default)]
    metadata: Map<String, Value>,
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
    /// "local" (default): this project's runs; "team": every machine's
    /// runs in the team catalog (the answer names each run's `origin`).
    scope: Option<String>,
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
    /// running, completed, failed or cancelled, or unknown: run folders
    /// without a manifest.
    status: Option<String>,
    /// The user who started the run.
    user: Option<String>,
    /// A tag the run carries.
    tag: Option<String>,
    /// Started at or after: RFC 3339, a date, or an age such as 2h, 3d.
    since: Option<String>,
    /// Full-text search (all words) over manifests and small text outputs.
    text: Option<String>,
    /// At most N runs (default 50).
    limit: Option<u64>,
    /// Skip the first N runs.
    #[serde(default)]
    offset: u64,
    /// "local" (default): this project's runs; "team": every machine's
    /// runs in the team catalog (each with its `origin`).
    scope: Option<String>,
    /// Only this repository's runs: a remote URL in any spelling
    /// (git@host:org/x.git, https://host/org/x), or "." for this project's.
    /// Runs recorded without a repository always match.
    repo: Option<String>,
    /// true: the archived runs only (`logbook archive` moved them out of
    /// the live set); by default they are left out and counted in
    /// `archivedMatches`.
    #[serde(default)]
    archived: bool,
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
    /// The run's status: completed when absent (never a failed run or a
    /// running one's half-written file); running, failed, cancelled, or
    /// "any" for the newest run whatever its status (the answer's status says which).
    status: Option<String>,
    /// "local" (default): this project's runs; "team": every machine's
    /// runs in the team catalog (the answer names the run's `origin`, and
    /// carries the output's text as the catalog keeps it).
    scope: Option<String>,
}

#[tool_router(router = run_tools, vis = "pub(super)")]
impl LogbookServer {
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
                    workflow_file: a.workflow_file.map(PathBuf::from),
                    path_trust: logbook::PathTrust::ProjectOnly,
                    metadata: a.metadata,
                },
            )?;
            for w in &started.warnings {
                p.notices.push(w.clone());
            }
            run::started_json(&started)
        })
        .await
    }

    #[tool(
        description = "Register a file the run wrote inside its folder as an output (document, data, report or artifact). Registering the same file again updates its record.",
        output_schema = schema::output_registered(),
        annotations(read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = false)
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
            let status = RunStatus::parse_final(a.status.as_deref().unwrap_or("completed"))?;
            let r = run::finish(p, &a.id, status)?;
            run::entry_json(&r, p.clock.now())
        })
        .await
    }

    #[tool(
        description = "Show a run: its manifest (agent, workflow, status, outputs) and display names.",
        output_schema = schema::run_entry(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn run_show(&self, Parameters(a): Parameters<RunIdArgs>) -> ToolResult {
        let scope = match Scope::parse(a.scope.as_deref()) {
            Ok(scope) => scope,
            Err(e) => return Self::refuse(e),
        };
        self.query(move |p| {
            let shown = query::backend(p, scope)?.show(&RunRef::parse(&a.id)?)?;
            shown.json(p.clock.now())
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
            run::entry_json(&r, p.clock.now())
        })
        .await
    }

    #[tool(
        description = "Find runs by agent, workflow (exact or regex), status, user, tag, start time or full text; newest first (text queries too), paged: when `more` is not 0, ask again with `offset` = `nextOffset`. `runs` is exactly `logbook find --json`.",
        output_schema = schema::find(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn find_runs(&self, Parameters(a): Parameters<FindArgs>) -> ToolResult {
        let scope = match Scope::parse(a.scope.as_deref()) {
            Ok(scope) => scope,
            Err(e) => return Self::refuse(e),
        };
        let op = move |p: &logbook::Logbook| {
            let (query, now) = find_query(a, p)?;
            let page = query::find(
                p,
                &query,
                FindOptions {
                    now: Some(now),
                    ..FindOptions::new(scope)
                },
            )?;
            let mut found = serde_json::json!({
                "runs": page.json(now)?,
                "total": page.total,
                "totalExact": page.exact,
                "offset": query.offset,
                "more": page.more(query.offset),
                "archivedMatches": page.archived,
            });
            if let Some(next) = page.next_offset(query.offset) {
                found["nextOffset"] = next.into();
            }
            crate::tools::flag_partial(&mut found, page.partial);
            Ok(found)
        };
        // A remote scope's answer comes over the network, from a client
        // that blocks on a runtime of its own: fine on a call thread, which
        // drives no runtime.
        self.query(op).await
    }

    #[tool(
        description = "The latest output of an agent (optionally of a workflow and a type) from its newest completed run, or of the status asked (\"any\": every status): its absolute path, run, status and record. Use to pick up what an earlier run produced.",
        output_schema = schema::latest_output(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn latest_output(&self, Parameters(a): Parameters<LatestOutputArgs>) -> ToolResult {
        let scope = match Scope::parse(a.scope.as_deref()) {
            Ok(scope) => scope,
            Err(e) => return Self::refuse(e),
        };
        self.query(move |p| {
            let t = a
                .output_type
                .as_deref()
                .map(parse::<OutputType>)
                .transpose()?;
            let found = query::backend(p, scope)?.latest_output(&run::LatestQuery {
                agent: &a.agent,
                workflow: a.workflow.as_deref(),
                output_type: t.as_ref().map(OutputType::as_str),
                status: a.status.as_deref(),
            })?;
            run::latest_output_json(&found)
        })
        .await
    }

    #[tool(
        description = "The lineage around a run: the runs it builds on and the runs built on it, as nodes and edges.",
        output_schema = schema::lineage(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn run_lineage(&self, Parameters(a): Parameters<RunIdArgs>) -> ToolResult {
        let scope = match Scope::parse(a.scope.as_deref()) {
            Ok(scope) => scope,
            Err(e) => return Self::refuse(e),
        };
        self.query(move |p| {
            query::backend(p, scope)?
                .lineage(&RunRef::parse(&a.id)?, &clock::local_zone())?
                .json()
        })
        .await
    }
}

/// The library's query for a `find_runs` call's arguments, and the time
/// its `since` was read at.
fn find_query(
    a: FindArgs,
    p: &logbook::Logbook,
) -> logbook::Result<(RunQuery, logbook::clock::Timestamp)> {
    let now = p.clock.now();
    let query = FindParams {
        agent: a.agent,
        workflow: a.workflow,
        status: a.status,
        user: a.user,
        tag: a.tag,
        since: a.since,
        text: a.text,
        limit: a.limit.map(|n| n.to_string()),
        offset: Some(a.offset.to_string()),
        repo: a.repo,
        repo_base: RepoBase::Here(p.root().to_path_buf()),
        archived: a.archived,
    }
    .query(now)?;
    Ok((query, now))
}
