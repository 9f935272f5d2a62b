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
//! let project = logbook::Logbook::open(std::path::Path::new("."))?;
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
pub mod share;
mod view;

use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use logbook::Logbook;
use logbook::error::{Face, Next, Step};

/// The port `logbook serve` listens on when neither `--bind` nor `--port`
/// names one.
pub const DEFAULT_PORT: u16 = 7777;

/// An address to listen on as a user writes it: a host (an IP address or a
/// name to look up) and perhaps a port, e.g. `localhost:8080`,
/// `[::1]:8080`, `0.0.0.0` or `127.0.0.1:0`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BindAddr {
    /// The host as written (without brackets).
    pub host: String,
    /// The port, when written.
    pub port: Option<u16>,
}

impl std::str::FromStr for BindAddr {
    type Err = ServeError;

    fn from_str(s: &str) -> Result<BindAddr, ServeError> {
        let bad = |why: &str| ServeError::BadAddr {
            why: why.to_string(),
        };
        let port = |p: &str| {
            p.parse::<u16>()
                .map_err(|_| bad(&format!("{p:?} is not a port (0 to 65535)")))
        };
        let (host, port) = if let Ok(ip) = s.parse::<std::net::IpAddr>() {
            (ip.to_string(), None)
        } else if let Some(inner) = s.strip_prefix('[') {
            let (host, rest) = inner
                .split_once(']')
                .ok_or_else(|| bad("an IPv6 address opened with [ is not closed"))?;
            let port = match rest {
                "" => None,
                r => Some(port(
                    r.strip_prefix(':')
                        .ok_or_else(|| bad("expected :PORT after ]"))?,
                )?),
            };
            (host.to_string(), port)
        } else if let Some((host, p)) = s.rsplit_once(':') {
            (host.to_string(), Some(port(p)?))
        } else {
            (s.to_string(), None)
        };
        let name_ok = !host.is_empty()
            && host.len() <= 253
            && host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '_'));
        if !name_ok {
            return Err(bad(&format!(
                "{host:?} is not a host name or an IP address"
            )));
        }
        Ok(BindAddr { host, port })
    }
}

/// The socket address to listen on, from `--bind` and `--port`: `--port N`
/// alone is 127.0.0.1:N, a host name is looked up (an IPv4 address
/// preferred, as browsers try it first for `localhost`), and a port named
/// twice must be the same.
pub fn resolve_bind(bind: Option<&BindAddr>, port: Option<u16>) -> Result<SocketAddr, ServeError> {
    let host = bind.map_or("127.0.0.1", |b| b.host.as_str());
    let port = match (bind.and_then(|b| b.port), port) {
        (Some(a), Some(b)) if a != b => {
            return Err(ServeError::PortTwice { bind: a, port: b });
        }
        (Some(p), _) | (None, Some(p)) => p,
        (None, None) => DEFAULT_PORT,
    };
    if let Ok(ip) = host.parse::<std::net::IpAddr>() {
        return Ok(SocketAddr::new(ip, port));
    }
    let lookup = |source: Option<std::io::Error>| ServeError::Lookup {
        host: host.to_string(),
        source: source.unwrap_or_else(|| std::io::Error::other("no address found")),
    };
    let found: Vec<SocketAddr> = std::net::ToSocketAddrs::to_socket_addrs(&(host, port))
        .map_err(|e| lookup(Some(e)))?
        .collect();
    found
        .iter()
        .find(|a| a.is_ipv4())
        .or_else(|| found.first())
        .copied()
        .ok_or_else(|| lookup(None))
}

/// The fewest characters an access token may have: a short one is guessed
/// by trying, on a viewer whose `/mcp` writes.
pub const MIN_TOKEN_CHARS: usize = 16;

/// How long a client may take to send a request's headers: a connection
/// that trickles them would otherwise hold a task and a socket for ever.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// How long to wait after the listener fails to accept a connection.
const ACCEPT_PAUSE: Duration = Duration::from_millis(100);

/// How to serve.
#[derive(Debug, Clone)]
pub struct Options {
    /// The address to listen on; anything but loopback needs a token.
    pub bind: SocketAddr,
    /// The access token every request must carry (bearer header, or the
    /// cookie a `?token=` link sets); `None` only on loopback.
    pub token: Option<String>,
    /// How long a request's headers may take to arrive ([`HEADER_TIMEOUT`]).
    pub header_timeout: Duration,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            bind: SocketAddr::from(([127, 0, 0, 1], DEFAULT_PORT)),
            token: None,
            header_timeout: HEADER_TIMEOUT,
        }
    }
}

/// Why the server could not start. What went wrong and what to do about it
/// are data ([`ServeError::what`], [`ServeError::next`]): the options they
/// name and the command they suggest are spelled by the face that words
/// them ([`ServeError::word`]), not written here.
#[derive(Debug)]
pub enum ServeError {
    /// Listening beyond loopback without a token would show every run to
    /// the network.
    TokenRequired {
        /// The address asked for.
        bind: SocketAddr,
    },
    /// A short token is found by guessing.
    ShortToken {
        /// How many characters it has.
        chars: usize,
        /// The fewest allowed ([`MIN_TOKEN_CHARS`]).
        min: usize,
    },
    /// The address and the port option name different ports.
    PortTwice {
        /// The port in the address.
        bind: u16,
        /// The port of the port option.
        port: u16,
    },
    /// The host name of the address is not known.
    Lookup {
        /// The host as given.
        host: String,
        /// What the resolver said.
        source: std::io::Error,
    },
    /// The address is taken or not ours.
    Bind {
        /// The address asked for.
        bind: SocketAddr,
        /// What the OS said.
        source: std::io::Error,
    },
    /// An address to listen on, as written, is not one ([`BindAddr`]).
    BadAddr {
        /// What is wrong with it.
        why: String,
    },
    /// The async runtime or the listener failed while serving.
    Io(std::io::Error),
}

impl ServeError {
    /// What went wrong, the options it names kept as data.
    pub fn what(&self) -> Next {
        match self {
            ServeError::TokenRequired { bind } => Next::say(format!(
                "{bind} is not a loopback address, so the viewer needs an access token"
            )),
            ServeError::ShortToken { chars, .. } => {
                Next::say(format!("the access token has {chars} characters"))
            }
            ServeError::PortTwice { bind, port } => Next::none()
                .option("bind")
                .text(format!(" names port {bind} and "))
                .option("port")
                .text(format!(" names port {port}")),
            ServeError::Lookup { host, source } => Next::say("cannot listen on ")
                .option("bind")
                .text(format!(" {host}: looking the name up failed ({source})")),
            ServeError::Bind { bind, source } => {
                Next::say(format!("cannot listen on {bind}: {source}"))
            }
            ServeError::BadAddr { why } => Next::say(why.clone()),
            ServeError::Io(e) => Next::say(format!("the web server stopped: {e}")),
        }
    }

    /// What to do about it; empty when there is nothing to say.
    pub fn next(&self) -> Next {
        match self {
            ServeError::TokenRequired { .. } => Next::say("give ")
                .option("token")
                .text(" T (or set LOGBOOK_TOKEN), or bind to 127.0.0.1"),
            ServeError::ShortToken { min, .. } => Next::none().option("token").text(format!(
                " (or LOGBOOK_TOKEN) needs at least {min}: use a random one, e.g. `openssl rand -hex 16`"
            )),
            ServeError::PortTwice { .. } => Next::say("give the port once (")
                .option("bind")
                .text(" HOST:PORT, or ")
                .option("bind")
                .text(" HOST ")
                .option("port")
                .text(" PORT)"),
            ServeError::Lookup { .. } => Next::say(
                "give an IP address (127.0.0.1, 0.0.0.0) or a name this machine resolves (localhost)",
            ),
            ServeError::Bind { .. } => Next::say("is another ")
                .step(Step::Serve)
                .text(" running? Choose another port with ")
                .option("port")
                .text(" PORT (or ")
                .option("bind")
                .text(" HOST:PORT)"),
            ServeError::BadAddr { .. } => Next::say(
                "write HOST:PORT (e.g. 127.0.0.1:7777, localhost:8080 or [::1]:8080), or HOST with ",
            )
            .option("port")
            .text(" PORT"),
            ServeError::Io(_) => Next::none(),
        }
    }

    /// The whole line for `face`: what went wrong, then what to do.
    pub fn word(&self, face: Face) -> String {
        let mut line = self.what().word(face);
        let next = self.next();
        if !next.is_empty() {
            line.push_str("; ");
            line.push_str(&next.word(face));
        }
        line
    }
}

/// What went wrong, without what to do: a face words the whole line with
/// [`ServeError::word`]. The options are spelled as on the command line,
/// the face that starts a server.
impl std::fmt::Display for ServeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.what().word(Face::Cli))
    }
}

impl std::error::Error for ServeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ServeError::Lookup { source, .. } | ServeError::Bind { source, .. } => Some(source),
            ServeError::Io(e) => Some(e),
            ServeError::TokenRequired { .. }
            | ServeError::ShortToken { .. }
            | ServeError::PortTwice { .. }
            | ServeError::BadAddr { .. } => None,
        }
    }
}

impl From<std::io::Error> for ServeError {
    fn from(e: std::io::Error) -> ServeError {
        ServeError::Io(e)
    }
}

/// What every handler shares.
#[derive(Debug)]
pub(crate) struct AppState {
    pub(crate) project: Logbook,
    pub(crate) token: Option<String>,
    /// The address listened on (the port the OS chose for port 0): the
    /// origin a browser page of the viewer itself sends.
    pub(crate) bound: SocketAddr,
    /// The run list's agent counts, a few seconds old at most: counting
    /// them reads the whole agent index, too much for every page view.
    pub(crate) agents: std::sync::Mutex<Option<AgentCounts>>,
    /// `serve --team`: runs answer from the team catalog, and runs of
    /// other machines show their outputs from the catalog's stored text.
    pub(crate) scope: logbook::ops::query::Scope,
    /// The live-update streams: the stamps they share and how many are
    /// open.
    pub(crate) stamps: live::Stamps,
    /// How many requests read and render at once ([`RENDERS`]).
    pub(crate) renders: tokio::sync::Semaphore,
}

/// How many requests read the project and render at once; the others wait
/// their turn (a page is a few milliseconds).
const RENDERS: usize = 8;

/// Every agent with its run count, and when they were counted.
pub(crate) type AgentCounts = (std::time::Instant, Vec<(String, u64)>);

/// A bound server, not yet serving.
pub struct Server {
    listener: TcpListener,
    state: Arc<AppState>,
    mcp: Option<Router>,
    header_timeout: Duration,
}

impl Server {
    /// Checks the options (a token beyond loopback) and binds the address.
    pub fn bind(project: Logbook, opts: Options) -> Result<Server, ServeError> {
        let token = opts.token;
        if let Some(t) = &token
            && t.chars().count() < MIN_TOKEN_CHARS
        {
            return Err(ServeError::ShortToken {
                chars: t.chars().count(),
                min: MIN_TOKEN_CHARS,
            });
        }
        if token.is_none() && !opts.bind.ip().is_loopback() {
            return Err(ServeError::TokenRequired { bind: opts.bind });
        }
        let listener = TcpListener::bind(opts.bind).map_err(|source| ServeError::Bind {
            bind: opts.bind,
            source,
        })?;
        listener.set_nonblocking(true)?;
        let bound = listener.local_addr()?;
        Ok(Server {
            listener,
            state: Arc::new(AppState {
                project,
                token,
                bound,
                agents: std::sync::Mutex::new(None),
                scope: logbook::ops::query::Scope::default(),
                stamps: live::Stamps::default(),
                renders: tokio::sync::Semaphore::new(RENDERS),
            }),
            mcp: None,
            header_timeout: opts.header_timeout,
        })
    }

    /// Answers the run list and run pages from the team catalog (`serve
    /// --team`) instead of this project alone.
    pub fn with_team(mut self, team: bool) -> Server {
        if let Some(state) = Arc::get_mut(&mut self.state) {
            state.scope = logbook::ops::query::Scope::of_flag(team);
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

    /// Serves until the process is stopped (Ctrl-C ends it). Connections
    /// are served by hyper directly rather than by `axum::serve`, which
    /// sets no timer and so no limit on how long headers may take.
    pub fn run(self) -> Result<(), ServeError> {
        use hyper_util::rt::{TokioIo, TokioTimer};
        use hyper_util::service::TowerToHyperService;

        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?;
        let header_timeout = self.header_timeout;
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(self.listener)?;
            let app = router(self.state, self.mcp);
            let mut stop = std::pin::pin!(tokio::signal::ctrl_c());
            loop {
                let (stream, _) = tokio::select! {
                    accepted = listener.accept() => match accepted {
                        Ok(c) => c,
                        // Out of descriptors, or a connection reset before
                        // it was taken: the listener itself is fine, and a
                        // pause lets connections close rather than spin.
                        Err(_) => {
                            tokio::time::sleep(ACCEPT_PAUSE).await;
                            continue;
                        }
                    },
                    _ = &mut stop => return Ok::<(), std::io::Error>(()),
                };
                let service = TowerToHyperService::new(app.clone());
                tokio::spawn(async move {
                    let mut http = hyper::server::conn::http1::Builder::new();
                    http.timer(TokioTimer::new())
                        .header_read_timeout(header_timeout);
                    // A client that goes away mid-request ends only its
                    // own connection.
                    let _ = http.serve_connection(TokioIo::new(stream), service).await;
                });
            }
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
