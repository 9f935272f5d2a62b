//! The transcript tools: save a main-agent or subagent conversation, name,
//! load and list them.

use rmcp::handler::server::wrapper::Parameters;
use rmcp::{schemars, tool, tool_router};
use serde::Deserialize;
use serde_json::{Map, Value};

use logbook::ops::params::paging_count;
use logbook::ops::query::{self, Scope};
use logbook::ops::transcript;
use logbook::ops::transcript::listing::{Caller, ListRequest};

use super::{ToolResult, invalid};
use crate::{LogbookServer, schema};

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
    /// "local" (default): this project's transcripts; "team" is refused:
    /// the team catalog keeps no messages (transcript_list with scope
    /// "team" names each transcript's machine).
    scope: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TranscriptNameArgs {
    /// The transcript's UUID, its first 8 or more characters, or its last 8.
    id: String,
    /// The title to show for it; an empty text removes the title.
    name: String,
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
    /// Only this repository's transcripts (default: this project's
    /// repository): a remote URL in any spelling (git@host:org/x.git,
    /// https://host/org/x) or ".". Those recorded without a repository are
    /// listed when their workdir is in this project.
    repo: Option<String>,
    /// "local" (default): this project's transcripts; "team": every
    /// machine's in the team catalog, each with its `origin` (by kind and
    /// page only: the catalog keeps no workdirs, so `all` and `repo` do not
    /// narrow it).
    scope: Option<String>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TranscriptFindArgs {
    /// The transcript's UUID, its first 8 or more characters, or its last 8.
    id: String,
    /// Words every matching message says (word forms, case and accents
    /// aside); omit to ask for errors only.
    text: Option<String>,
    /// Also list the messages holding a failed tool result.
    #[serde(default)]
    errors: bool,
    /// Only messages after this index (0-based).
    after: Option<u64>,
    /// At most this many of each list (default 50, at most 500).
    limit: Option<u64>,
    /// "local" (default): this project's transcripts; "team" is refused:
    /// the team catalog keeps no messages (transcript_list with scope
    /// "team" names each transcript's machine).
    scope: Option<String>,
}

#[tool_router(router = transcript_tools, vis = "pub(super)")]
impl LogbookServer {
    #[tool(
        description = "Save a main-agent or subagent transcript (seed 003's JSON) so the conversation survives; saving the same id again replaces it.",
        output_schema = schema::transcript_saved(),
        annotations(read_only_hint = false, destructive_hint = true, idempotent_hint = true, open_world_hint = false)
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
        description = "Give a stored transcript a title that sticks (metadata.name): later saves and re-imports keep it, and listings show it. An empty name removes it.",
        output_schema = schema::transcript_saved(),
        annotations(read_only_hint = false, destructive_hint = false, idempotent_hint = true, open_world_hint = false)
    )]
    async fn transcript_name(&self, Parameters(a): Parameters<TranscriptNameArgs>) -> ToolResult {
        self.call(false, move |p| {
            let stored = transcript::name(p, &a.id, &a.name)?;
            Ok(transcript::imported_json(&stored))
        })
        .await
    }

    #[tool(
        description = "Find which messages of one stored transcript say some words (message indexes, 0-based, each with a snippet), and with errors=true which messages hold a failed tool result: jump straight to them in transcript_load's messages. Exactly `logbook transcript find ID TEXT --errors --json`.",
        output_schema = schema::transcript_found(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn transcript_find(&self, Parameters(a): Parameters<TranscriptFindArgs>) -> ToolResult {
        let scope = match Scope::parse(a.scope.as_deref()) {
            Ok(scope) => scope,
            Err(e) => return Self::refuse(e),
        };
        if let Err(e) = query::transcript_messages(scope, "transcript_find") {
            return Self::refuse(e);
        }
        self.query(move |p| {
            use transcript::find::{self, Page};
            if a.text.is_none() && !a.errors {
                return Err(invalid(
                    "text/errors",
                    "neither",
                    "give text to find, or errors: true, or both",
                ));
            }
            let page = Page {
                after: a.after.map(|n| paging_count("after", n)).transpose()?,
                limit: paging_count("limit", a.limit.unwrap_or(50))?.min(find::MAX_FOUND),
            };
            let matches = a
                .text
                .as_deref()
                .map(|text| find::find_in(p, &a.id, text, page, true))
                .transpose()?;
            let errors = a.errors.then(|| find::errors(p, &a.id, page)).transpose()?;
            let mut json = find::found_json(matches.as_ref(), errors.as_ref());
            if matches.is_some() {
                let progress = logbook::ops::index::text_progress(p)?;
                crate::tools::flag_partial(&mut json, progress);
            }
            Ok(json)
        })
        .await
    }

    #[tool(
        description = "Load a stored transcript by its UUID (or a unique part of it): id, messages, metadata.",
        output_schema = schema::transcript(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn transcript_load(&self, Parameters(a): Parameters<TranscriptLoadArgs>) -> ToolResult {
        let scope = match Scope::parse(a.scope.as_deref()) {
            Ok(scope) => scope,
            Err(e) => return Self::refuse(e),
        };
        if let Err(e) = query::transcript_messages(scope, "transcript_load") {
            return Self::refuse(e);
        }
        self.query(move |p| transcript::load(p, &a.id)?.transcript.into_value())
            .await
    }

    #[tool(
        description = "List transcripts of this project's repository (all: every workdir; repo: another repository), newest lastActiveAt first; `transcripts` is exactly `logbook transcript list --json`.",
        output_schema = schema::transcript_list(),
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn transcript_list(&self, Parameters(a): Parameters<TranscriptListArgs>) -> ToolResult {
        let scope = match Scope::parse(a.scope.as_deref()) {
            Ok(scope) => scope,
            Err(e) => return Self::refuse(e),
        };
        self.query(move |p| {
            let request = ListRequest {
                all: a.all,
                repo: a.repo,
                main: a.main,
                subagents: a.subagents,
                limit: a.limit,
                offset: a.offset,
                scope,
                ..ListRequest::default()
            };
            let listing = request.list(p, &Caller::Agent)?;
            Ok(serde_json::json!({ "transcripts": listing.json()? }))
        })
        .await
    }
}
