//! The Logbook MCP server: every Logbook operation an agent needs as an MCP
//! tool, each run's output files as resources, and a `resume` prompt, so an
//! agent can record its own state and recover it after a compaction or a
//! restart.
//!
//! - [`LogbookServer`]: the `ServerHandler` (tools, resources, prompts). Each
//!   tool is one call into [`logbook::ops`], the same call the CLI makes, and
//!   its structured content is the CLI's `--json` output for that operation
//!   (built by the same library function). A failure is a tool result with
//!   `isError: true` and the CLI's message.
//! - [`serve_stdio`]: what `logbook mcp` runs; stdout belongs to the
//!   protocol, logs go to stderr. `stdio::LineTransport` answers every
//!   line the SDK cannot take (-32700, -32600, -32602).
//! - [`http_router`]: `/mcp` for `logbook serve`, its sessions bounded by
//!   `http::BoundedSessions`.
//!
//! No answer is cached between calls: every call opens the project and
//! reads the files (and the index, synced) as they are now (an index
//! connection keeps only what it checks against the database's version
//! first), and every write takes
//! the store's locks, so many servers, the CLI and other tools can share one
//! project. Every library call runs on the server's own few call threads
//! (`pool::Pool`), never on the async runtime's: a call that waits for a
//! lock or a long query holds up neither `ping` nor the other calls.
//!
//! ```no_run
//! # async fn f() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
//! // What `logbook mcp --root /my/project` does (the CLI's own context
//! // adds the team catalog's driver; `identity` adds nothing):
//! logbook_mcp::serve_stdio(Some("/my/project".into()), std::convert::identity).await?;
//! # Ok(()) }
//! ```

mod http;
mod pool;
mod resources;
mod schema;
mod stdio;
mod tools;

pub use http::SessionLimits;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorCode,
    GetPromptRequestParams, GetPromptResponse, GetPromptResult, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, PaginatedRequestParams, Prompt,
    PromptArgument, PromptMessage, ReadResourceRequestParams, ReadResourceResponse, Role,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;

use logbook::Logbook;
use logbook::error::{Face, message};
use logbook::ops::query;

/// Completes the context a call opens: the face that starts the server
/// passes what the library cannot know (the team catalog's driver, the
/// program that builds the full-text index); `std::convert::identity` adds
/// nothing.
pub type Open = fn(Logbook) -> Logbook;

/// What the server tells an agent at `initialize` about when to use it.
const INSTRUCTIONS: &str = "Logbook keeps the state of your work on disk so nothing is lost when your context is compacted or you restart. \
Start or resume a work session (session_start / session_resume) at the beginning, record token usage, milestones, artifacts and notes (session_update). \
Give each agent run its own output folder (run_start), register the files it writes (run_register_output) and finish it (run_finish); find earlier work with find_runs and latest_output. \
As an orchestrator, record invocations, completions, decisions, verdicts and handoffs (workflow_*). \
After a compaction or a restart, get the `resume` prompt (or the resume_context tool) first: it says where you were.";

/// The Logbook MCP server for one project root (`None`: discovered from the
/// current directory on every call, as the CLI does). Cheap to clone; every
/// clone reads the files afresh, so a web server can mount it per session.
#[derive(Debug, Clone)]
pub struct LogbookServer {
    root: Option<PathBuf>,
    /// Completes the context of every call's project (the CLI adds the team
    /// catalog's driver and itself as the full-text builder).
    open: Open,
    tool_router: ToolRouter<Self>,
    /// The threads every library call of this server runs on: shared by
    /// its clones, one pool per MCP session over HTTP.
    calls: Arc<pool::Pool>,
    /// The manifests' stamps kept fresh for every call (one watch shared
    /// by the clones): `find_runs` then checks a running run without a
    /// `stat` while nothing in its folder changed, and still sees a run
    /// another program finished by the very next call.
    stamps: Option<Arc<logbook::StampWatch>>,
    /// The project the last calls found, shared by the clones: found again
    /// only when what discovery reads changed ([`Found`]).
    found: Arc<Found>,
}

/// The projects this server found last (one for the calls that may create
/// it, one for those that may not), each with the stamp of what finding it
/// read: a call whose stamp is the same takes the kept project (its parsed
/// config, its index writer) instead of reading and parsing
/// `logbook.yaml` again; a config written, edited or removed, or a nearer
/// project made, since the last call is found afresh.
#[derive(Debug, Default)]
struct Found {
    kept: std::sync::Mutex<[Option<(logbook::DiscoveryStamp, Logbook)>; 2]>,
}

impl Found {
    /// The project a call made from `cwd` works on, as
    /// [`LogbookServer::project`] would find it now.
    fn project(
        &self,
        cwd: &Path,
        root: Option<&Path>,
        create: bool,
        open: Open,
    ) -> logbook::Result<Logbook> {
        let stamp = logbook::discovery_stamp(cwd, root);
        let slot = usize::from(create);
        {
            let kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((was, p)) = &kept[slot]
                && *was == stamp
            {
                return Ok(p.for_call());
            }
        }
        let p = LogbookServer::project(cwd, root, create, open)?;
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        kept[slot] = Some((stamp, p.clone()));
        Ok(p.for_call())
    }
}

impl LogbookServer {
    /// A server for the project at `root` (or the one the current directory
    /// is in), for stdio here and for the web crate's streamable HTTP `/mcp`.
    pub fn new(root: Option<PathBuf>, open: Open) -> Self {
        LogbookServer {
            root,
            open,
            tool_router: Self::tools(),
            calls: Arc::new(pool::Pool::new()),
            stamps: logbook::StampWatch::new().map(Arc::new),
            found: Arc::default(),
        }
    }

    /// The tools whose annotations say they only read: the stdio transport
    /// lets later requests wait for every other tool call's answer.
    fn read_only_tools(&self) -> stdio::ReadOnlyTools {
        Arc::new(
            self.tool_router
                .list_all()
                .into_iter()
                .filter(|t| t.annotations.as_ref().and_then(|a| a.read_only_hint) == Some(true))
                .map(|t| t.name.to_string())
                .collect(),
        )
    }

    /// What finds the project a call works on, on the thread that runs it
    /// (`create`: one that may create it), through the kept [`Found`].
    fn finder(&self, create: bool) -> impl FnOnce() -> logbook::Result<Logbook> + Send + 'static {
        let (root, open, found) = (self.root.clone(), self.open, Arc::clone(&self.found));
        move || {
            let cwd = std::env::current_dir().map_err(|e| logbook::Error::io(Path::new("."), e))?;
            found.project(&cwd, root.as_deref(), create, open)
        }
    }

    /// The project as it is now, discovered from `cwd`; [`Found`] keeps it
    /// for the calls that follow while what discovery reads is unchanged,
    /// so a `logbook.yaml` written after the server started counts.
    fn project(
        cwd: &Path,
        root: Option<&Path>,
        create: bool,
        open: Open,
    ) -> logbook::Result<Logbook> {
        if create {
            Logbook::discover_or_new(cwd, root).map(open)
        } else {
            Logbook::discover(cwd, root).map(open)
        }
    }

    /// Runs one library call on the server's call threads (it may wait for
    /// the store's locks or the index, which must not hold up the server's
    /// other requests), and answers with [`Self::answer`].
    async fn call<F>(&self, create: bool, op: F) -> Result<CallToolResult, ErrorData>
    where
        F: FnOnce(&Logbook) -> logbook::Result<Value> + Send + 'static,
    {
        let (find, stamps) = (self.finder(create), self.stamps.clone());
        let answer = self.calls.run(move || Self::run(find(), stamps, op)).await;
        Ok(Self::answer(answer))
    }

    /// A library call that only reads: run as [`Self::call`] is (a read may
    /// wait for the index too); the name tells the reader of a tool that it
    /// changes nothing.
    async fn query<F>(&self, op: F) -> Result<CallToolResult, ErrorData>
    where
        F: FnOnce(&Logbook) -> logbook::Result<Value> + Send + 'static,
    {
        self.call(false, op).await
    }

    /// A read of what only this machine keeps (work sessions, workflow
    /// state, agent logs): its `scope` parsed and the team scope refused
    /// before any call ([`query::this_machine_only`]), then read as
    /// [`Self::query`] reads.
    async fn query_here<F>(
        &self,
        scope: Option<&str>,
        tool: &str,
        reads: &str,
        op: F,
    ) -> Result<CallToolResult, ErrorData>
    where
        F: FnOnce(&Logbook) -> logbook::Result<Value> + Send + 'static,
    {
        let here = query::Scope::parse(scope).and_then(|scope| {
            query::this_machine_only(scope, tool, reads, "the machine that holds them")
        });
        match here {
            Ok(()) => self.query(op).await,
            Err(e) => Self::refuse(e),
        }
    }

    /// A tool's answer to arguments found wrong before any library call:
    /// given at once, queued behind no call.
    fn refuse(e: logbook::Error) -> Result<CallToolResult, ErrorData> {
        Ok(Self::answer(Ok((Err(e), Vec::new()))))
    }

    /// One library call on the project as it is now, with the notices it
    /// gave: drained on the thread that ran it, since notices are kept per
    /// thread (the thread may have run another call before: nothing of that
    /// one's is kept).
    fn run<F>(
        project: logbook::Result<Logbook>,
        stamps: Option<Arc<logbook::StampWatch>>,
        op: F,
    ) -> (logbook::Result<Value>, Vec<String>)
    where
        F: FnOnce(&Logbook) -> logbook::Result<Value>,
    {
        match project.map(|p| match stamps {
            Some(stamps) => p.with_stamp_watch(stamps),
            None => p,
        }) {
            Ok(p) => {
                let result = op(&p);
                let notices = p.notices.take().iter().map(|n| n.word(Face::Mcp)).collect();
                (result, notices)
            }
            Err(e) => (Err(e), Vec::new()),
        }
    }

    /// A call's answer as a tool result: the JSON as structured content,
    /// or the error as `isError` text. A panic in the call is a failed tool
    /// call too, never a dead server.
    fn answer(answer: Result<(logbook::Result<Value>, Vec<String>), String>) -> CallToolResult {
        match answer {
            Ok((Ok(json), notices)) => {
                let mut result = CallToolResult::structured(json);
                for n in notices {
                    log(&format!("warning: {n}"));
                    result
                        .content
                        .push(ContentBlock::text(format!("warning: {n}")));
                }
                result
            }
            Ok((Err(e), _)) => CallToolResult::error(vec![ContentBlock::text(format!(
                "error: {}",
                message(&e, Face::Mcp)
            ))]),
            Err(e) => CallToolResult::error(vec![ContentBlock::text(format!(
                "error: internal failure in this call ({e}); the server keeps running, please report it"
            ))]),
        }
    }
}

/// Logs go to stderr: stdout belongs to the protocol.
#[allow(clippy::print_stderr)]
fn log(line: &str) {
    eprintln!("logbook mcp: {line}");
}

impl ServerHandler for LogbookServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_resources()
                .enable_prompts()
                .build(),
        )
        .with_server_info(
            Implementation::new("logbook", env!("CARGO_PKG_VERSION"))
                .with_title("Logbook")
                .with_description(
                    "Work sessions, agent runs, transcripts and workflow history, kept on disk",
                ),
        )
        .with_instructions(INSTRUCTIONS)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        // A tool that does not exist is a wrong parameter of `tools/call`
        // (the MCP specification's -32602), not a failed call of a tool.
        if !self.tool_router.has_route(&name) {
            return Err(ErrorData::invalid_params(
                format!("unknown tool {name:?}; tools/list names this server's tools"),
                None,
            ));
        }
        let tcc = ToolCallContext::new(self, request, context);
        match self.tool_router.call(tcc).await {
            // Arguments that do not fit the schema are the agent's mistake
            // to fix, so it gets to read why, like any other failed call.
            Err(e) if e.code == ErrorCode::INVALID_PARAMS => {
                Ok(CallToolResult::error(vec![ContentBlock::text(format!(
                    "error: invalid arguments for {name}: {}; the tool's inputSchema lists its arguments",
                    e.message
                ))])
                .into())
            }
            // The SDK reports arguments it could not deserialize as a failed
            // call of its own wording; say which tool, as every failure here
            // starts, so an agent reads one format.
            Ok(CallToolResponse::Complete(mut result)) if result.is_error == Some(true) => {
                for block in &mut result.content {
                    if let Some(text) = block.as_text()
                        && !text.text.starts_with("error: ")
                    {
                        *block = ContentBlock::text(format!(
                            "error: invalid arguments for {name}: {}; the tool's inputSchema lists its arguments",
                            text.text
                        ));
                    }
                }
                Ok(result.into())
            }
            other => other,
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListToolsResult, ErrorData> {
        Ok(rmcp::model::ListToolsResult::with_all_items(
            self.tool_router.list_all(),
        ))
    }

    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        self.tool_router.get(name).cloned()
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let cursor = request.and_then(|r| r.cursor);
        let find = self.finder(false);
        self.blocking(move || {
            let p = find().map_err(tool_error)?;
            resources::list(&p, cursor.as_deref())
        })
        .await
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(
            resources::templates(),
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let find = self.finder(false);
        self.blocking(move || {
            let p = find().map_err(tool_error)?;
            resources::read(&p, &request.uri).map(Into::into)
        })
        .await
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(vec![resume_prompt()]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        if request.name != "resume" {
            return Err(ErrorData::invalid_params(
                format!(
                    "no prompt named {:?}; this server has one prompt, `resume`",
                    request.name
                ),
                None,
            ));
        }
        let args = request.arguments.unwrap_or_default();
        let arg = |k: &str| -> Result<Option<String>, ErrorData> {
            match args.get(k) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(other) => Err(ErrorData::invalid_params(
                    format!("prompt argument {k} must be a string, not {other}"),
                    None,
                )),
            }
        };
        let session = arg("session")?;
        let detail = arg("detail")?;
        let find = self.finder(false);
        self.blocking(move || {
            let p = find().map_err(tool_error)?;
            let detail = detail
                .as_deref()
                .unwrap_or("")
                .parse()
                .map_err(tool_error)?;
            // No session to resume is an answer the agent should read (and
            // act on), not a protocol error its client may hide.
            let text = match logbook::ops::resume::context(&p, session.as_deref(), detail, Face::Mcp) {
                Ok(text) => format!(
                    "Here is where this work stands, from Logbook. Continue from here.\n\n{text}\n{}\n",
                    tools::agent::resume_line(&p)
                ),
                Err(e) => format!(
                    "Logbook has nothing to resume: {}. Start a work session with the session_start tool.",
                    message(&e, Face::Mcp)
                ),
            };
            Ok(GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
            .with_description(
                "Where the work session stands: read it after a compaction or restart",
            )
            .into())
        })
        .await
    }
}

fn resume_prompt() -> Prompt {
    Prompt::new(
        "resume",
        Some(
            "What an agent needs after a compaction or a restart: the active work session, its tokens, milestones, recent artifacts and run outputs, the workflow's active agent, last invocations, pending handoffs, decisions and verdicts.",
        ),
        Some(vec![
            PromptArgument::new("session")
                .with_description("Work session id (default: the active one)")
                .with_required(false),
            PromptArgument::new("detail")
                .with_description("brief (default: the last few of each list) or full (everything)")
                .with_required(false),
        ]),
    )
}

/// A library error where the protocol wants a protocol error (resources,
/// prompts): the CLI's message, with the code its kind calls for.
fn tool_error(e: logbook::Error) -> ErrorData {
    let text = message(&e, Face::Mcp);
    match e.kind() {
        logbook::ErrorKind::NotFound => ErrorData::resource_not_found(text, None),
        logbook::ErrorKind::Invalid => ErrorData::invalid_params(text, None),
        _ => ErrorData::internal_error(text, None),
    }
}

impl LogbookServer {
    /// Runs `f` (a resource or prompt read) on the server's call threads,
    /// as a tool call is; a panic is an internal error answer.
    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> Result<T, ErrorData> + Send + 'static,
    ) -> Result<T, ErrorData> {
        self.calls.run(f).await.unwrap_or_else(|e| {
            Err(ErrorData::internal_error(
                format!("internal failure: {e}"),
                None,
            ))
        })
    }
}

/// Serves [`LogbookServer`] on stdin/stdout until the client closes it:
/// what `logbook mcp` runs.
pub async fn serve_stdio(
    root: Option<PathBuf>,
    open: Open,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    // Pipes (as clients start a server) are read and written on the
    // runtime's reactor, not handed to the blocking pool message by message.
    let (stdin, stdout) = rmcp::transport::stdio_pipes();
    let server = LogbookServer::new(root, open);
    let read_only = server.read_only_tools();
    let service = server
        .serve(stdio::LineTransport::new(stdin, stdout, read_only))
        .await?;
    service.waiting().await?;
    Ok(())
}

/// The same server over MCP's streamable HTTP transport, as an axum router
/// for `logbook serve` to mount at `/mcp`, for agents that cannot spawn a
/// local process. The viewer's own guard stands in front of it (loopback
/// `Host` without a token, the token otherwise, and `Origin`), so the SDK's
/// loopback-only host check is left to that guard: with a token, the
/// viewer may be reached under any host name. Sessions are bounded by
/// `limits`, bodies by `stdio::MAX_MESSAGE_BYTES`.
pub fn http_router(root: Option<PathBuf>, limits: SessionLimits, open: Open) -> axum::Router {
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };
    // One tool router for every session, built once: each session clones
    // it, with call threads of its own (started only as its calls need
    // them), so one session's slow calls never wait on another's.
    let proto = LogbookServer::new(root, open);
    let service = StreamableHttpService::new(
        move || {
            Ok(LogbookServer {
                calls: Arc::new(pool::Pool::new()),
                ..proto.clone()
            })
        },
        Arc::new(http::BoundedSessions::new(limits)),
        StreamableHttpServerConfig::default()
            .disable_allowed_hosts()
            .with_max_request_body_bytes(stdio::MAX_MESSAGE_BYTES),
    );
    axum::Router::new()
        .fallback_service(service)
        .layer(axum::middleware::from_fn(http::check_body))
}

/// [`serve_stdio`] on a runtime of its own, for callers that have none
/// (the CLI's `main`).
pub fn run_stdio(
    root: Option<PathBuf>,
    open: Open,
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?
        .block_on(serve_stdio(root, open))
}
