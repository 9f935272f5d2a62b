//! What every request passes before a handler sees it, and the headers
//! every response leaves with.
//!
//! - Methods: GET and HEAD only; anything else is 405 (`/mcp` aside, whose
//!   transport needs POST).
//! - Token: when one is set, each request carries it as
//!   `Authorization: Bearer T` or in the `logbook_token` cookie; a
//!   `?token=T` link sets the cookie and redirects to the same page without
//!   it, so the token does not linger in the address bar or history.
//! - Host: without a token (loopback only), the `Host` header must name a
//!   loopback host, so a web page that rebinds its DNS name to 127.0.0.1
//!   cannot read the viewer.
//! - Errors: a short word ("not found", "access denied"), never a path.
//! - Headers: `nosniff`, no referrer, no framing, and a strict
//!   Content-Security-Policy on the viewer's own pages (run files carry
//!   their own sandboxing policy, set in `files`).

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::AppState;

/// The cookie a `?token=` link sets.
pub const TOKEN_COOKIE: &str = "logbook_token";

/// The policy of the viewer's own pages: only its own stylesheet, script
/// and images; no inline script, no framing, no form posts elsewhere.
pub const PAGE_CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// The policy of every agent-written file: a sandbox (no script, an opaque
/// origin), so an HTML or SVG output cannot act in the viewer's origin.
pub const FILE_CSP: &str = "sandbox; default-src 'none'; img-src data:; style-src 'unsafe-inline'";

const REFUSAL_MARK: &str = "x-logbook-refusal";

/// A refusal, as the client sees it: a status and a word, nothing more.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// 404: no such run, file, session or page (or a path that cannot be one).
    NotFound,
    /// 403 (401 without a token): the request reaches outside what is
    /// served, or lacks the token.
    Denied,
    /// 400, with a message about the user's own query (no paths).
    BadRequest(String),
    /// 405.
    Method,
    /// 500: something failed on the server; details are not sent.
    Internal,
    /// 503: too many live-update streams are open; the browser retries.
    Busy,
    /// 404 with why: under `serve --team`, a file of another machine's
    /// run that the team catalog holds no text of.
    Elsewhere {
        /// The run's id.
        run: String,
        /// The file's path inside the run, as asked.
        path: String,
        /// The machine the run came from.
        origin: String,
    },
}

impl Refusal {
    /// Maps a library error to what the client may see: the status its
    /// kind calls for ([`logbook::ErrorKind::http_status`]), never its
    /// message (which may name files).
    pub fn from_error(e: &logbook::Error) -> Refusal {
        // What a backend cannot answer is about the request, and its
        // message names a filter, never a file.
        if let logbook::Error::Unsupported { .. } = e {
            return Refusal::BadRequest(logbook::error::message(e, logbook::error::Face::Web));
        }
        match e.kind().http_status() {
            404 => Refusal::NotFound,
            403 => Refusal::Denied,
            _ => Refusal::Internal,
        }
    }

    /// [`Refusal::from_error`] for an error about the request's own query
    /// values (a filter, a paging count): 400 with the library's message,
    /// the line the CLI and MCP print for the same values, its next step
    /// worded for the viewer.
    pub fn from_query_error(e: &logbook::Error) -> Refusal {
        match e {
            logbook::Error::Invalid { .. } | logbook::Error::TextTooLong { .. } => {
                Refusal::BadRequest(logbook::error::message(e, logbook::error::Face::Web))
            }
            _ => Refusal::from_error(e),
        }
    }
}

impl From<logbook::Error> for Refusal {
    fn from(e: logbook::Error) -> Refusal {
        Refusal::from_error(&e)
    }
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        let (status, text) = match self {
            Refusal::NotFound => (StatusCode::NOT_FOUND, "not found".to_string()),
            Refusal::Denied => (StatusCode::FORBIDDEN, "access denied".to_string()),
            Refusal::BadRequest(m) => (StatusCode::BAD_REQUEST, format!("bad request: {m}")),
            Refusal::Method => (
                StatusCode::METHOD_NOT_ALLOWED,
                "method not allowed".to_string(),
            ),
            Refusal::Internal => (
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal error".to_string(),
            ),
            Refusal::Busy => (
                StatusCode::SERVICE_UNAVAILABLE,
                "too many live pages open; try again later".to_string(),
            ),
            Refusal::Elsewhere { run, path, origin } => (
                StatusCode::NOT_FOUND,
                format!(
                    "not here: {path} of run {run} is on machine {origin:?}, and the team \
                     catalog keeps only the text of a run's registered text outputs; \
                     see it in the viewer on {origin:?} (its run page /runs/{run}), \
                     or open the run folder there"
                ),
            ),
        };
        let mut r = (
            status,
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            text,
        )
            .into_response();
        // Marks a refusal as ours, so `check` can tell it from an extractor's
        // rejection (whose text may echo the request).
        r.headers_mut()
            .insert(REFUSAL_MARK, HeaderValue::from_static("1"));
        if status == StatusCode::METHOD_NOT_ALLOWED {
            r.headers_mut()
                .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
        }
        r
    }
}

/// The fallback route: any unknown path.
pub(crate) async fn not_found() -> Refusal {
    Refusal::NotFound
}

fn same(a: &str, b: &str) -> bool {
    // Compares every byte whatever the first difference, so the time taken
    // does not tell how much of a guess was right.
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}

fn presented_token(headers: &HeaderMap) -> Option<String> {
    if let Some(v) = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        && let Some((scheme, t)) = v.trim_start().split_once(' ')
        // RFC 9110: the scheme is case-insensitive.
        && scheme.eq_ignore_ascii_case("bearer")
    {
        return Some(t.trim().to_string());
    }
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|c| {
            c.trim()
                .strip_prefix(TOKEN_COOKIE)
                .and_then(|r| r.strip_prefix('='))
                .map(|t| {
                    percent_encoding::percent_decode_str(t)
                        .decode_utf8_lossy()
                        .into_owned()
                })
        })
}

/// The `token` query parameter, and the query without it.
fn token_in_query(query: &str) -> Option<(String, String)> {
    let mut token = None;
    let mut rest = vec![];
    for pair in query.split('&') {
        match pair.strip_prefix("token=") {
            Some(t) if token.is_none() => {
                token = Some(
                    percent_encoding::percent_decode_str(t)
                        .decode_utf8_lossy()
                        .into_owned(),
                );
            }
            _ => rest.push(pair),
        }
    }
    token.map(|t| (t, rest.join("&")))
}

/// The host and port of an `Origin` (`scheme://host[:port]`), the host
/// lower-cased and without brackets; `None` when it is no such origin
/// (`null`, another scheme, a path).
fn origin_authority(origin: &str) -> Option<(String, u16)> {
    let (scheme, rest) = origin.split_once("://")?;
    let default_port = match scheme.to_ascii_lowercase().as_str() {
        "http" => 80,
        "https" => 443,
        _ => return None,
    };
    authority(rest, default_port)
}

/// The host and port of `host[:port]` (an `Origin`'s or a `Host`'s), the
/// port `default_port` when none is written; `None` when it is no bare
/// authority (empty, with a path or user, a bad port).
fn authority(text: &str, default_port: u16) -> Option<(String, u16)> {
    if text.is_empty() || text.contains(['/', '?', '#', '@']) {
        return None;
    }
    let (host, port) = split_authority(text)?;
    let port = match port {
        Some(p) => p.parse().ok()?,
        None => default_port,
    };
    Some((host, port))
}

/// Splits `host[:port]` into the host, lower-cased and without the
/// brackets of an IPv6 address, and the port as written: the one place
/// `Origin` and `Host` are taken apart, so the checks agree on a name.
/// `None` when a bracket is left open.
fn split_authority(text: &str) -> Option<(String, Option<&str>)> {
    let (host, port) = if let Some(inner) = text.strip_prefix('[') {
        let (host, after) = inner.split_once(']')?;
        (host, after.strip_prefix(':'))
    } else {
        match text.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (text, None),
        }
    };
    Some((host.to_ascii_lowercase(), port))
}

/// Whether a browser page at `origin` is the viewer itself: the address
/// listened on, or a loopback spelling of it (`localhost`, `127.0.0.1`,
/// `[::1]`) with its port; with a token, also the `Host` the request names
/// (the viewer reached by a name of its own, the token still required).
fn own_origin(origin: &str, bound: std::net::SocketAddr, host: Option<&str>) -> bool {
    let Some((name, port)) = origin_authority(origin) else {
        return false;
    };
    if let Some(host) = host
        && authority(host, 80) == Some((name.clone(), port))
    {
        return true;
    }
    if port != bound.port() {
        return false;
    }
    let ip = name.parse::<std::net::IpAddr>().ok();
    ip == Some(bound.ip()) || ip.is_some_and(|ip| ip.is_loopback()) || name == "localhost"
}

fn loopback_host(headers: &HeaderMap) -> bool {
    let Some(host) = headers.get(header::HOST).and_then(|v| v.to_str().ok()) else {
        // HTTP/1.0 without Host: only a local client sends that.
        return true;
    };
    // A bracket left open names no host: not a loopback one.
    let Some((name, _)) = split_authority(host) else {
        return false;
    };
    name == "localhost"
        || name.ends_with(".localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// The middleware: method, token and host checks, then the headers.
pub(crate) async fn check(
    State(state): State<Arc<AppState>>,
    req: Request,
    next: Next,
) -> Response {
    let path = req.uri().path();
    let mcp = path == "/mcp" || path.starts_with("/mcp/");
    if let Some(refused) = refusal(&state, &req, mcp) {
        return finish(refused);
    }
    let r = next.run(req).await;
    // An extractor's rejection (a path segment that is not UTF-8, a bad
    // query string) is answered with our own word instead of its text.
    // `/mcp` answers with the statuses MCP gives them (400, 404 for an
    // unknown session, 406, 413, 415), in words that echo nothing.
    if !mcp && r.status().is_client_error() && !r.headers().contains_key(REFUSAL_MARK) {
        return finish(Refusal::NotFound.into_response());
    }
    finish(r)
}

/// The answer to a request no handler may see (a method, an origin, a
/// token or a host refused, or a `?token=` link to redirect), or `None`
/// to let it through.
fn refusal(state: &AppState, req: &Request, mcp: bool) -> Option<Response> {
    if !mcp && req.method() != Method::GET && req.method() != Method::HEAD {
        return Some(Refusal::Method.into_response());
    }
    if foreign_origin(state, req, mcp) {
        return Some(Refusal::Denied.into_response());
    }
    match &state.token {
        Some(token) => {
            let presented = presented_token(req.headers());
            if presented.as_deref().is_some_and(|p| same(p, token)) {
                return None;
            }
            Some(token_link(req, token).unwrap_or_else(unauthorized))
        }
        None => (!loopback_host(req.headers())).then(|| Refusal::Denied.into_response()),
    }
}

/// Whether a browser page of another origin asks for what it may not
/// drive: `/mcp`, which writes (the MCP specification asks servers to
/// check), or the viewer's live streams (`/api/live`), which it could hold
/// open; the viewer's own pages ask for them same-origin, without
/// `Origin`. A client without `Origin` is not a browser, and is let
/// through.
fn foreign_origin(state: &AppState, req: &Request, mcp: bool) -> bool {
    let streams = req.uri().path() == "/api/live";
    if !(mcp || streams) {
        return false;
    }
    let Some(origin) = req.headers().get(header::ORIGIN) else {
        return false;
    };
    // With a token, the Host the client named is checked by the token;
    // without one, only loopback names reach here.
    let host = state
        .token
        .is_some()
        .then(|| req.headers().get(header::HOST))
        .flatten()
        .and_then(|h| h.to_str().ok());
    !origin
        .to_str()
        .is_ok_and(|o| own_origin(o, state.bound, host))
}

/// A `?token=` link with the right token: a redirect to the same page
/// without it, setting the cookie; `None` for any other request.
fn token_link(req: &Request, token: &str) -> Option<Response> {
    let (t, rest) = req.uri().query().and_then(token_in_query)?;
    if !same(&t, token) {
        return None;
    }
    let path = req.uri().path();
    let target = if rest.is_empty() {
        path.to_string()
    } else {
        format!("{path}?{rest}")
    };
    let cookie = format!(
        "{TOKEN_COOKIE}={}; Path=/; HttpOnly; SameSite=Strict",
        percent_encoding::utf8_percent_encode(token, percent_encoding::NON_ALPHANUMERIC)
    );
    let mut r = (StatusCode::SEE_OTHER, "").into_response();
    if let (Ok(loc), Ok(c)) = (
        HeaderValue::from_str(&target),
        HeaderValue::from_str(&cookie),
    ) {
        r.headers_mut().insert(header::LOCATION, loc);
        r.headers_mut().insert(header::SET_COOKIE, c);
    }
    Some(r)
}

/// 401 for a request without the token, naming the scheme to send it in.
fn unauthorized() -> Response {
    let mut r = Refusal::Denied.into_response();
    *r.status_mut() = StatusCode::UNAUTHORIZED;
    r.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static("Bearer realm=\"logbook\""),
    );
    r
}

fn finish(mut r: Response) -> Response {
    let h = r.headers_mut();
    h.remove(REFUSAL_MARK);
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    if !h.contains_key(header::CONTENT_SECURITY_POLICY) {
        h.insert(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(PAGE_CSP),
        );
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_query_is_taken_out_of_the_link() {
        assert_eq!(
            token_in_query("a=1&token=s%20t&b=2"),
            Some(("s t".into(), "a=1&b=2".into()))
        );
        assert_eq!(token_in_query("a=1"), None);
    }

    #[test]
    fn the_viewers_own_origins_are_told_from_foreign_ones() {
        let bound: std::net::SocketAddr = "127.0.0.1:7777".parse().unwrap();
        for (origin, host, ok) in [
            ("http://127.0.0.1:7777", None, true),
            ("http://localhost:7777", None, true),
            ("http://LOCALHOST:7777", None, true),
            ("http://[::1]:7777", None, true),
            ("http://127.0.0.1:7778", None, false),
            ("http://evil.example", None, false),
            ("http://evil.example:7777", None, false),
            ("http://localhost.evil.example:7777", None, false),
            ("null", None, false),
            ("file://", None, false),
            ("http://logbook.lan:7777", Some("logbook.lan:7777"), true),
            ("http://evil.example:7777", Some("logbook.lan:7777"), false),
            ("http://logbook.lan", Some("LOGBOOK.lan"), true),
            ("http://logbook.lan:7777", Some("logbook.lan"), false),
            ("http://[fe80::1]:7777", Some("[FE80::1]:7777"), true),
        ] {
            assert_eq!(own_origin(origin, bound, host), ok, "{origin} {host:?}");
        }
    }

    #[test]
    fn the_bearer_scheme_is_read_in_any_case() {
        for v in ["Bearer t0k", "bearer t0k", "BEARER t0k"] {
            let mut h = HeaderMap::new();
            h.insert(header::AUTHORIZATION, HeaderValue::from_static(v));
            assert_eq!(presented_token(&h).as_deref(), Some("t0k"), "{v}");
        }
        let mut h = HeaderMap::new();
        h.insert(header::AUTHORIZATION, HeaderValue::from_static("Basic t0k"));
        assert_eq!(presented_token(&h), None);
    }

    #[test]
    fn only_loopback_hosts_pass_without_a_token() {
        for (host, ok) in [
            ("127.0.0.1:7777", true),
            ("localhost:7777", true),
            ("[::1]:7777", true),
            ("evil.example:7777", false),
            ("127.0.0.1.evil.example", false),
            ("LOCALHOST", true),
            ("[::1", false),
        ] {
            let mut h = HeaderMap::new();
            h.insert(header::HOST, HeaderValue::from_str(host).unwrap());
            assert_eq!(loopback_host(&h), ok, "{host}");
        }
    }
}
