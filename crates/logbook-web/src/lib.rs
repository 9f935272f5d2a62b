//! The read-only web viewer and HTTP API behind `logbook serve`: people see
//! what their agents did (runs and their files, lineage, work sessions with
//! their token budgets, the orchestrator's workflow history, transcripts).
//!
//! Every handler calls [`logbook::ops`], exactly as the CLI does, and the
//! JSON API gives the same shapes as the CLI's `--json`. Pages are rendered
//! on the server from askama templates; the stylesheet and the one small
//! script are compiled into the binary, and every page reads without
//! JavaScript.
//!
//! Principal types:
//! - [`Options`]: where to listen and the access token;
//! - [`Server`]: a bound listener; [`Server::url`] is what to open,
//!   [`Server::run`] serves until the process ends;
//! - [`router`]: the axum [`Router`], with a place ([`Server::with_mcp`])
//!   for the MCP endpoint at `/mcp`.
//!
//! Security (seed 000, "Security & Access Control"), in [`guard`] and
//! `files`: only GET and HEAD (405 otherwise, `/mcp` aside); a token on
//! every request when listening beyond loopback; run files only from
//! inside `agent_outputs_folder` after resolving symlinks; errors that say
//! "not found" or "access denied" and nothing more; agent-written files
//! served sandboxed; a strict Content-Security-Policy on the viewer's pages.
//!
//! ```no_run
//! let project = logbook::Project::open(std::path::Path::new("."))?;
//! let server = logbook_web::Server::bind(project, logbook_web::Options::default())?;
//! eprintln!("open {}", server.url());
//! server.run()?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod api;
mod files;
pub mod guard;
mod live;
mod pages;
mod view;

use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;

use axum::Router;
use logbook::Project;

/// Where `logbook serve` listens when `--bind` is not given.
pub const DEFAULT_BIND: &str = "127.0.0.1:7777";

/// How to serve.
#[derive(Debug, Clone)]
pub struct Options {
    /// The address to listen on; anything but loopback needs a token.
    pub bind: SocketAddr,
    /// The access token every request must carry (bearer header, or the
    /// cookie a `?token=` link sets); `None` only on loopback.
    pub token: Option<String>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            bind: SocketAddr::from(([127, 0, 0, 1], 7777)),
            token: None,
        }
    }
}

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// Listening beyond loopback without a token would show every run to
    /// the network.
    #[error(
        "{bind} is not a loopback address, so the viewer needs an access token; give --token T (or set LOGBOOK_TOKEN), or bind to 127.0.0.1"
    )]
    TokenRequired {
        /// The address asked for.
        bind: SocketAddr,
    },
    /// An empty token would let every request in.
    #[error("the access token is empty; give a non-empty --token (or LOGBOOK_TOKEN)")]
    EmptyToken,
    /// The address is taken or not ours.
    #[error(
        "cannot listen on {bind}: {source}; is another `logbook serve` running? Choose another port with --bind 127.0.0.1:PORT"
    )]
    Bind {
        /// The address asked for.
        bind: SocketAddr,
        /// What the OS said.
        source: std::io::Error,
    },
    /// The async runtime or the listener failed while serving.
    #[error("the web server stopped: {0}")]
    Io(#[from] std::io::Error),
}

/// What every handler shares.
#[derive(Debug)]
pub(crate) struct AppState {
    pub(crate) project: Project,
    pub(crate) token: Option<String>,
    /// The run list's agent counts, a few seconds old at most: counting
    /// them reads the whole agent index, too much for every page view.
    pub(crate) agents: std::sync::Mutex<Option<AgentCounts>>,
    /// `serve --team`: runs answer from the team catalog, and runs of
    /// other machines show their outputs from the catalog's stored text.
    pub(crate) team: bool,
}

/// Every agent with its run count, and when they were counted.
pub(crate) type AgentCounts = (std::time::Instant, Vec<(String, u64)>);

/// A bound server, not yet serving.
pub struct Server {
    listener: TcpListener,
    state: Arc<AppState>,
    mcp: Option<Router>,
}

impl Server {
    /// Checks the options (a token beyond loopback) and binds the address.
    pub fn bind(project: Project, opts: Options) -> Result<Server, ServeError> {
        let token = opts.token;
        if token.as_deref().is_some_and(str::is_empty) {
            return Err(ServeError::EmptyToken);
        }
        if token.is_none() && !opts.bind.ip().is_loopback() {
            return Err(ServeError::TokenRequired { bind: opts.bind });
        }
        let listener = TcpListener::bind(opts.bind).map_err(|source| ServeError::Bind {
            bind: opts.bind,
            source,
        })?;
        listener.set_nonblocking(true)?;
        Ok(Server {
            listener,
            state: Arc::new(AppState {
                project,
                token,
                agents: std::sync::Mutex::new(None),
                team: false,
            }),
            mcp: None,
        })
    }

    /// Answers the run list and run pages from the team catalog (`serve
    /// --team`) instead of this project alone.
    pub fn with_team(mut self, team: bool) -> Server {
        if let Some(state) = Arc::get_mut(&mut self.state) {
            state.team = team;
        }
        self
    }

    /// Mounts the MCP server's streamable-HTTP router at `/mcp`, under the
    /// same token rule (it alone may take POST).
    pub fn with_mcp(mut self, mcp: Router) -> Server {
        self.mcp = Some(mcp);
        self
    }

    /// The address actually bound (the port the OS chose for port 0).
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// The URL to open, with `?token=` when a token is set (opening it sets
    /// a cookie, so later links need no token).
    pub fn url(&self) -> String {
        let addr = self
            .local_addr()
            .map_or_else(|_| "127.0.0.1:7777".to_string(), |a| a.to_string());
        match &self.state.token {
            Some(t) => format!(
                "http://{addr}/?token={}",
                percent_encoding::utf8_percent_encode(t, percent_encoding::NON_ALPHANUMERIC)
            ),
            None => format!("http://{addr}/"),
        }
    }

    /// Serves until the process is stopped (Ctrl-C ends it cleanly).
    pub fn run(self) -> Result<(), ServeError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?;
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(self.listener)?;
            let app = router(self.state, self.mcp);
            axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = tokio::signal::ctrl_c().await;
                })
                .await
        })?;
        Ok(())
    }
}

/// The whole application: the API, the pages, the assets and (when given)
/// the MCP endpoint, behind the guard.
pub(crate) fn router(state: Arc<AppState>, mcp: Option<Router>) -> Router {
    let mut app = Router::new()
        .merge(api::routes())
        .merge(pages::routes())
        .merge(live::routes());
    // `/mcp` is the one route that takes POST (streamable HTTP); the lead
    // mounts `logbook-mcp`'s router here.
    if let Some(mcp) = mcp {
        app = app.nest_service("/mcp", mcp);
    }
    app.fallback(guard::not_found)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            guard::check,
        ))
        .with_state(state)
}
