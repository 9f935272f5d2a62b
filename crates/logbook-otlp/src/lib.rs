//! The OTLP/HTTP exporter behind `logbook export otlp`: the library's
//! [`logbook::ops::export::Receiver`] for any OpenTelemetry receiver
//! (Arize Phoenix, Langfuse, Jaeger, Grafana Tempo, an OpenTelemetry
//! Collector), as the PostgreSQL catalog sits in `logbook-team-pg`.
//!
//! - [`OtlpConfig`]: endpoint, protocol, headers and timeout, resolved
//!   from flags and the standard `OTEL_EXPORTER_OTLP_*` variables
//!   ([`OtlpConfig::resolve`]);
//! - [`OtlpReceiver`]: sends each batch over HTTP (ureq, rustls), retries
//!   429, 502, 503, 504 and broken connections with exponential backoff
//!   (honouring `Retry-After`), and reads OTLP's `partial_success`;
//! - [`wire`]: the spans as `opentelemetry-proto` messages, in
//!   `http/protobuf` or `http/json`.
//!
//! ```no_run
//! use logbook::ops::export::{self, ExportOptions};
//! use logbook_otlp::{OtlpConfig, OtlpReceiver, Flags};
//! let config = OtlpConfig::resolve(&Flags::default(), &|k| std::env::var(k).ok())?;
//! let mut receiver = OtlpReceiver::new(config);
//! let p = logbook::Logbook::open(std::path::Path::new("."))?;
//! let summary = export::export(&p, &ExportOptions::default(), &mut receiver, &mut |_| {})?;
//! println!("{} spans accepted", summary.accepted);
//! # Ok::<(), logbook::Error>(())
//! ```

pub mod wire;

use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use logbook::Error;
use logbook::error::{Next, Result};
use logbook::model::url::Parts;
use logbook::ops::export::span::Span;
use logbook::ops::export::{Receiver, Sent};

pub use wire::Protocol;

use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::{DefaultConnector, NextTimeout};

/// The path OTLP/HTTP receivers take traces on, appended to a base URL.
pub const TRACES_PATH: &str = "/v1/traces";

/// How long a request may take when no variable says: the OTLP default.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// How many times a batch is sent in all before the export gives up.
const ATTEMPTS: u32 = 5;

/// The longest wait between two attempts, whatever `Retry-After` asks: a
/// receiver asking for a day must not hold the export silently.
pub const MAX_WAIT: Duration = Duration::from_secs(60);

/// What the command line gave; every field falls back to the variables.
#[derive(Debug, Clone, Default)]
pub struct Flags {
    /// `--endpoint`: a base URL; [`TRACES_PATH`] is appended.
    pub endpoint: Option<String>,
    /// `--protocol`: `http/protobuf` or `http/json`.
    pub protocol: Option<String>,
    /// `--header K=V`, in order; a later one wins over the variables'.
    pub headers: Vec<String>,
    /// `--allow-link-local`: send to a link-local address (169.254.0.0/16,
    /// fe80::/10), where cloud metadata services answer.
    pub allow_link_local: bool,
}

/// Where and how batches go.
#[derive(Debug, Clone)]
pub struct OtlpConfig {
    /// The full URL requests are posted to, query and user info included:
    /// never stored or printed.
    pub url: String,
    /// [`OtlpConfig::url`] as it may be stored and shown:
    /// `scheme://host[:port]/path`, what the cursor is kept for.
    pub shown: String,
    /// The encoding.
    pub protocol: Protocol,
    /// Headers sent with each request (API keys: never printed).
    pub headers: Vec<(String, String)>,
    /// How long one request may take.
    pub timeout: Duration,
    /// The wait before the first retry; each further one doubles it.
    pub backoff: Duration,
    /// The longest wait between two attempts, whatever `Retry-After` asks.
    pub max_wait: Duration,
    /// The resource's attributes (`service.name` first).
    pub resource: Vec<(String, String)>,
    /// `--allow-link-local`: whether a host name may resolve to a
    /// link-local address (a literal one was checked by [`OtlpConfig::resolve`]).
    pub allow_link_local: bool,
}

fn config_error(field: &'static str, value: &str, reason: &str) -> Error {
    Error::invalid(field, value, reason)
}

/// `k=v,k2=v2` as the OTLP variables write headers and resource attributes
/// (values percent-encoded); pairs without `=` are refused.
fn pairs(field: &'static str, text: &str) -> Result<Vec<(String, String)>> {
    let mut out = vec![];
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let Some((k, v)) = part.split_once('=') else {
            return Err(config_error(
                field,
                &name_only(part),
                "expected key=value pairs separated by commas",
            ));
        };
        let v = percent_encoding::percent_decode_str(v.trim())
            .decode_utf8_lossy()
            .into_owned();
        out.push((k.trim().to_string(), v));
    }
    Ok(out)
}

/// The URL to post to and the one to show, from an endpoint as given:
/// `whole` (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is used as it is, a base
/// gets [`TRACES_PATH`] unless it already ends with it. The query is kept
/// for sending (some receivers take a key there) but never shown; a
/// fragment is refused, as it is never sent and an endpoint that seems to
/// hold one is mistyped; a link-local host is refused unless allowed.
fn endpoint(given: &str, whole: bool, allow_link_local: bool) -> Result<(String, String)> {
    let given = given.trim();
    let shown = logbook::model::url::public(given);
    let Some(parts) = Parts::parse(given).filter(|p| {
        p.scheme.eq_ignore_ascii_case("http") || p.scheme.eq_ignore_ascii_case("https")
    }) else {
        return Err(config_error(
            "endpoint",
            &shown,
            "expected an http:// or https:// URL such as http://localhost:4318",
        ));
    };
    if parts.host.is_empty() {
        return Err(config_error(
            "endpoint",
            &shown,
            "the URL names no host: expected one such as http://localhost:4318",
        ));
    }
    if parts.fragment.is_some() {
        return Err(config_error(
            "endpoint",
            &shown,
            "a URL fragment (#…) is never sent to a receiver: leave it out",
        ));
    }
    if !allow_link_local && is_link_local(parts.host) {
        return Err(config_error("endpoint", &shown, LINK_LOCAL).with_next(link_local_allowed()));
    }
    let path = if whole || parts.path.trim_end_matches('/').ends_with(TRACES_PATH) {
        parts.path.to_string()
    } else {
        format!("{}{TRACES_PATH}", parts.path.trim_end_matches('/'))
    };
    let with = Parts {
        path: &path,
        ..parts
    };
    let mut url = format!("{}://", with.scheme);
    if let Some(user) = with.user_info {
        url.push_str(user);
        url.push('@');
    }
    url.push_str(&with.public()[with.scheme.len() + 3..]);
    if let Some(q) = with.query {
        url.push('?');
        url.push_str(q);
    }
    Ok((url, with.public()))
}

/// What to do about a link-local endpoint when it is meant.
fn link_local_allowed() -> Next {
    Next::say("pass ")
        .option("allow_link_local")
        .text(" if the receiver really is there")
}

/// Why a link-local endpoint is refused, for a literal address and for a
/// name that resolves to one alike.
const LINK_LOCAL: &str = "this is a link-local address (169.254.0.0/16, fe80::/10), where cloud metadata services answer, and every header (an Authorization key too) would go there";

/// Whether `host` is a link-local IP address literal (`169.254.0.0/16`,
/// `fe80::/10`, or either mapped into IPv6). A name is checked when it is
/// resolved, by [`LinkLocalGuard`], on every connection.
fn is_link_local(host: &str) -> bool {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    // An IPv6 zone (`fe80::1%25eth0`) is no part of the address.
    let bare = bare.split('%').next().unwrap_or_default();
    bare.parse::<IpAddr>().is_ok_and(is_link_local_ip)
}

/// Whether `ip` is link-local (`169.254.0.0/16`, `fe80::/10`, or either
/// mapped into IPv6).
fn is_link_local_ip(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_link_local(),
        IpAddr::V6(v6) => {
            (v6.segments()[0] & 0xffc0) == 0xfe80
                || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_link_local())
        }
    }
}

/// The first link-local address among those a host name resolved to: if
/// there is one, none of them is used (a name that answers with a metadata
/// address among others is not trusted with the headers either).
fn first_link_local(addrs: &[SocketAddr]) -> Option<SocketAddr> {
    addrs.iter().copied().find(|a| is_link_local_ip(a.ip()))
}

/// The resolver every request goes through: the system's (or, in tests,
/// another), refusing a host whose addresses include a link-local one
/// unless `--allow-link-local` was given. The addresses it checks are the
/// ones ureq connects to, so a name that resolves differently on a second
/// lookup (DNS rebinding) or a redirect to such a host is caught too.
#[derive(Debug)]
struct LinkLocalGuard<R> {
    inner: R,
    allow: bool,
    /// The address refused last, for the error the attempt reports.
    refused: Arc<Mutex<Option<SocketAddr>>>,
}

impl<R: Resolver> Resolver for LinkLocalGuard<R> {
    fn resolve(
        &self,
        uri: &ureq::http::Uri,
        config: &ureq::config::Config,
        timeout: NextTimeout,
    ) -> std::result::Result<ResolvedSocketAddrs, ureq::Error> {
        let addrs = self.inner.resolve(uri, config, timeout)?;
        if !self.allow
            && let Some(bad) = first_link_local(&addrs)
        {
            if let Ok(mut slot) = self.refused.lock() {
                *slot = Some(bad);
            }
            return Err(ureq::Error::Io(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                format!(
                    "{} resolves to the link-local address {}",
                    uri.host().unwrap_or_default(),
                    bad.ip()
                ),
            )));
        }
        Ok(addrs)
    }
}

/// What an error may quote of a header written without `=`: its name,
/// up to the first `:` or space, as `Authorization: Bearer <key>` is
/// often written; never what follows, which may be the key.
fn name_only(header: &str) -> String {
    let name = header.split([':', ' ']).next().unwrap_or_default();
    if name.len() < header.len() {
        format!("{name}…")
    } else {
        name.to_string()
    }
}

/// Refuses a header HTTP cannot carry, naming it (never its value, which
/// may be a key): a name must be a token, a value one line.
fn check_header(name: &str, value: &str) -> Result<()> {
    let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    if name.is_empty() || !name.chars().all(token) {
        return Err(config_error(
            "header",
            name,
            "a header name is letters, digits and -, with no spaces or colons",
        )
        .with_next(Next::say("pass ").option("header").text(" 'Name=value'")));
    }
    if value.chars().any(|c| c.is_control() && c != '\t') {
        return Err(config_error(
            "header",
            &format!("{name}=…"),
            "the value holds a line break or another control character: pass it on one line (a key copied from a file often ends with a newline)",
        ));
    }
    Ok(())
}

impl OtlpConfig {
    /// Resolves the configuration from `flags`, then the variables `env`
    /// reads: `--endpoint` (a base), else `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`
    /// (used as given), else `OTEL_EXPORTER_OTLP_ENDPOINT` (a base);
    /// `--protocol`, else `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`, else
    /// `OTEL_EXPORTER_OTLP_PROTOCOL`, else `http/protobuf`;
    /// `OTEL_EXPORTER_OTLP_HEADERS`, `…_TRACES_HEADERS` then `--header`;
    /// `OTEL_EXPORTER_OTLP_TRACES_TIMEOUT` or `…_TIMEOUT` (milliseconds);
    /// `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES`.
    pub fn resolve(flags: &Flags, env: &dyn Fn(&str) -> Option<String>) -> Result<OtlpConfig> {
        let var = |k: &str| env(k).filter(|v| !v.trim().is_empty());
        let (given, whole) = endpoint_given(flags, &var)?;
        let (url, shown) = endpoint(&given, whole, flags.allow_link_local)?;
        Ok(OtlpConfig {
            url,
            shown,
            protocol: protocol_given(flags, &var)?,
            headers: headers_given(flags, &var)?,
            timeout: timeout_given(&var)?,
            backoff: Duration::from_millis(250),
            max_wait: MAX_WAIT,
            resource: resource_given(&var)?,
            allow_link_local: flags.allow_link_local,
        })
    }
}

/// A variable's value, `None` when unset or blank.
type Var<'a> = dyn Fn(&str) -> Option<String> + 'a;

/// The endpoint as given, and whether it is the whole URL (the traces
/// variable) rather than a base that `/v1/traces` is appended to.
fn endpoint_given(flags: &Flags, var: &Var) -> Result<(String, bool)> {
    match (&flags.endpoint, var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")) {
        (Some(e), _) => Ok((e.clone(), false)),
        (None, Some(e)) => Ok((e, true)),
        (None, None) => match var("OTEL_EXPORTER_OTLP_ENDPOINT") {
            Some(e) => Ok((e, false)),
            None => Err(config_error("endpoint", "", "no receiver named").with_next(
                Next::say("pass ")
                    .option("endpoint")
                    .text(" http://host:4318 (a base URL; /v1/traces is appended) or set OTEL_EXPORTER_OTLP_ENDPOINT"),
            )),
        },
    }
}

/// The encoding to send, `http/protobuf` unless one is named.
fn protocol_given(flags: &Flags, var: &Var) -> Result<Protocol> {
    let text = flags
        .protocol
        .clone()
        .or_else(|| var("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"))
        .or_else(|| var("OTEL_EXPORTER_OTLP_PROTOCOL"));
    let Some(p) = text else {
        return Ok(Protocol::HttpProtobuf);
    };
    Protocol::parse(&p).ok_or_else(|| {
        config_error(
            "protocol",
            &p,
            "expected http/protobuf or http/json (gRPC is not supported: receivers that take it also take http/protobuf, usually on port 4318)",
        )
    })
}

/// The headers of both variables then the flags, each checked; a later
/// header of the same name replaces an earlier one.
fn headers_given(flags: &Flags, var: &Var) -> Result<Vec<(String, String)>> {
    let mut headers = vec![];
    for k in [
        "OTEL_EXPORTER_OTLP_HEADERS",
        "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
    ] {
        if let Some(v) = var(k) {
            headers.extend(pairs("headers", &v)?);
        }
    }
    for h in &flags.headers {
        let Some((k, v)) = h.split_once('=') else {
            return Err(
                config_error("header", &name_only(h), "expected K=V").with_next(
                    Next::say("write it as ")
                        .option("header")
                        .text(" 'Authorization=Bearer <key>'"),
                ),
            );
        };
        headers.push((k.trim().to_string(), v.trim().to_string()));
    }
    for (k, v) in &headers {
        check_header(k, v)?;
    }
    let mut unique: Vec<(String, String)> = vec![];
    for (k, v) in headers {
        unique.retain(|(u, _)| !u.eq_ignore_ascii_case(&k));
        unique.push((k, v));
    }
    Ok(unique)
}

/// The time one request may take, from the variables in milliseconds.
fn timeout_given(var: &Var) -> Result<Duration> {
    match var("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT").or_else(|| var("OTEL_EXPORTER_OTLP_TIMEOUT")) {
        None => Ok(DEFAULT_TIMEOUT),
        Some(ms) => Ok(Duration::from_millis(ms.trim().parse::<u64>().map_err(
            |_| config_error("timeout", &ms, "expected milliseconds, such as 10000"),
        )?)),
    }
}

/// The resource's attributes: the service's name (`logbook` unless named)
/// and those of `OTEL_RESOURCE_ATTRIBUTES`.
fn resource_given(var: &Var) -> Result<Vec<(String, String)>> {
    let mut resource = vec![(
        "service.name".to_string(),
        var("OTEL_SERVICE_NAME").unwrap_or_else(|| "logbook".into()),
    )];
    if let Some(attrs) = var("OTEL_RESOURCE_ATTRIBUTES") {
        for (k, v) in pairs("resource attributes", &attrs)? {
            if k == "service.name" && var("OTEL_SERVICE_NAME").is_some() {
                continue;
            }
            resource.retain(|(r, _)| *r != k);
            resource.push((k, v));
        }
    }
    Ok(resource)
}

/// Sends batches to one OTLP/HTTP endpoint.
pub struct OtlpReceiver {
    config: OtlpConfig,
    agent: ureq::Agent,
    /// Set by [`LinkLocalGuard`] when it refuses a resolved address.
    refused: Arc<Mutex<Option<SocketAddr>>>,
    /// Told, in words, of each wait of a second or more a receiver asked for.
    on_wait: Box<dyn FnMut(&str)>,
}

/// One attempt's outcome.
enum Attempt {
    Done(Sent),
    /// Worth another try, after the wait the receiver asked for, if any.
    Retry(String, Option<Duration>),
}

impl OtlpReceiver {
    /// A receiver for `config`.
    pub fn new(config: OtlpConfig) -> OtlpReceiver {
        OtlpReceiver::with_resolver(config, DefaultResolver::default())
    }

    /// A receiver for `config` whose host names `resolver` resolves (the
    /// system's in [`OtlpReceiver::new`]); what it answers is checked for
    /// link-local addresses before any connection is made.
    fn with_resolver(config: OtlpConfig, resolver: impl Resolver) -> OtlpReceiver {
        let refused = Arc::new(Mutex::new(None));
        let guard = LinkLocalGuard {
            inner: resolver,
            allow: config.allow_link_local,
            refused: refused.clone(),
        };
        let agent_config = ureq::Agent::config_builder()
            .timeout_global(Some(config.timeout))
            .http_status_as_error(false)
            .user_agent(concat!("logbook/", env!("CARGO_PKG_VERSION")))
            .build();
        let agent = ureq::Agent::with_parts(agent_config, DefaultConnector::default(), guard);
        OtlpReceiver {
            config,
            agent,
            refused,
            on_wait: Box::new(|_| {}),
        }
    }

    /// Tells `f`, in words, of each wait of a second or more that the
    /// receiver asked for (`Retry-After`), so a person knows why the
    /// export pauses.
    pub fn on_wait(mut self, f: impl FnMut(&str) + 'static) -> OtlpReceiver {
        self.on_wait = Box::new(f);
        self
    }

    /// The configuration it sends with.
    pub fn config(&self) -> &OtlpConfig {
        &self.config
    }

    fn error(&self, message: impl Into<String>, hint: impl Into<Next>) -> Error {
        Error::Export {
            endpoint: self.config.shown.clone(),
            message: self.scrub(message.into()),
            hint: hint.into(),
        }
    }

    /// `text` (an HTTP client's message may quote the URL) without the
    /// URL as posted, which may hold a password or a key.
    fn scrub(&self, text: String) -> String {
        if self.config.url == self.config.shown {
            return text;
        }
        text.replace(&self.config.url, &self.config.shown)
    }

    fn attempt(&self, body: &[u8], spans: u64) -> Result<Attempt> {
        let mut req = self
            .agent
            .post(&self.config.url)
            .header("Content-Type", self.config.protocol.content_type());
        for (k, v) in &self.config.headers {
            req = req.header(k.as_str(), v.as_str());
        }
        let answer = match req.send(body) {
            Ok(mut resp) => Answer::read(&mut resp),
            Err(e) => return self.unsent(e),
        };
        match answer.status {
            200..=299 => self.accepted(&answer, spans).map(Attempt::Done),
            429 | 502 | 503 | 504 => Ok(Attempt::Retry(
                format!("answered {}", answer.status),
                answer.retry_after,
            )),
            _ => Err(self.refused(&answer, spans)),
        }
    }

    /// A request that got no answer: worth another try when the network
    /// failed on the way, an error naming what to fix otherwise.
    fn unsent(&self, e: ureq::Error) -> Result<Attempt> {
        let refused = self.refused.lock().ok().and_then(|mut r| r.take());
        if let Some(addr) = refused {
            return Err(self.error(
                format!("its host name resolves to {}: {LINK_LOCAL}", addr.ip()),
                link_local_allowed()
                    .text(", or point ")
                    .option("endpoint")
                    .text(" at another host"),
            ));
        }
        match e {
            ureq::Error::Io(_)
            | ureq::Error::ConnectionFailed
            | ureq::Error::Timeout(_)
            | ureq::Error::Protocol(_) => Ok(Attempt::Retry(e.to_string(), None)),
            ureq::Error::HostNotFound => Err(self.error(
                "its host name does not resolve",
                Next::say("check the host in ")
                    .option("endpoint")
                    .text(" or OTEL_EXPORTER_OTLP_ENDPOINT"),
            )),
            ureq::Error::Http(e) => Err(self.error(
                format!("the request could not be made: {e}"),
                Next::say("check the headers given with ")
                    .option("header")
                    .text(" and OTEL_EXPORTER_OTLP_HEADERS, and the URL"),
            )),
            ureq::Error::Tls(e) => Err(self.error(
                format!("the TLS handshake failed: {e}"),
                Next::say("does the receiver take https on that port? Local receivers usually take http://"),
            )),
            other => Err(self.error(
                other.to_string(),
                Next::say("check the URL given with ")
                    .option("endpoint")
                    .text(" or OTEL_EXPORTER_OTLP_ENDPOINT"),
            )),
        }
    }

    /// A success's body read as the OTLP response its Content-Type names
    /// (which may differ from the request's): how many spans the receiver
    /// rejected, and why.
    fn accepted(&self, a: &Answer, spans: u64) -> Result<Sent> {
        let answered = if a.content_type.contains("json") {
            Protocol::HttpJson
        } else if a.content_type.contains("protobuf") {
            Protocol::HttpProtobuf
        } else {
            self.config.protocol
        };
        let answer = wire::decode_response(&a.body, answered).map_err(|e| {
            let said: String = String::from_utf8_lossy(&a.body).chars().take(120).collect();
            self.error(
                format!(
                    "answered {} (Content-Type {}), but the body is not an OTLP {} response ({e}); it begins: {}",
                    a.status,
                    if a.content_type.is_empty() { "none" } else { &a.content_type },
                    answered.as_str(),
                    said.trim()
                ),
                "is this an OTLP/HTTP traces endpoint? It usually ends in /v1/traces on port 4318; a proxy or a web page answering instead says so in the body above",
            )
        })?;
        let (rejected, message) = match answer.partial_success {
            Some(p) => (
                u64::try_from(p.rejected_spans).unwrap_or(0),
                Some(p.error_message),
            ),
            None => (0, None),
        };
        Ok(Sent {
            accepted: spans.saturating_sub(rejected),
            rejected,
            message: message.filter(|m| !m.is_empty()),
            retries: 0,
        })
    }

    /// A refusal not worth another try, quoting what the receiver said.
    fn refused(&self, a: &Answer, spans: u64) -> Error {
        let said = String::from_utf8_lossy(&a.body);
        let said: String = said.chars().take(300).collect();
        self.error(
            format!("answered {}: {}", a.status, said.trim()),
            refusal_next(a.status, spans),
        )
    }
}

/// What to do about a receiver's refusal with `status` of a batch of
/// `spans` spans.
fn refusal_next(status: u16, spans: u64) -> Next {
    match status {
        401 => Next::say("the receiver wants credentials: pass them with ")
            .option("header")
            .text(" (Authorization=Bearer <key>) or OTEL_EXPORTER_OTLP_HEADERS"),
        403 => Next::say("the receiver, or a proxy on the way, refused the request: check the key given with ")
            .option("header")
            .text(" or OTEL_EXPORTER_OTLP_HEADERS, and whether HTTPS_PROXY or HTTP_PROXY sends it through a proxy that blocks this host"),
        407 => Next::say("a proxy (HTTPS_PROXY, HTTP_PROXY or ALL_PROXY) wants credentials: put them in the proxy's URL, or list this host in NO_PROXY"),
        413 => Next::say(format!("the batch of {spans} spans is larger than the receiver takes: pass "))
            .option("batch")
            .text(format!(" {} or less (or leave out ", (spans / 2).max(1)))
            .option("content")
            .text(")"),
        404 | 405 => Next::say("check the path: ")
            .option("endpoint")
            .text(" and OTEL_EXPORTER_OTLP_ENDPOINT take a base URL (/v1/traces is appended); OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is used as given"),
        415 => Next::say("the receiver does not take this encoding: try ")
            .option("protocol")
            .text(" http/protobuf"),
        _ => Next::say("the receiver refused the batch; what it said is above"),
    }
}

/// A receiver's answer, read whole.
struct Answer {
    status: u16,
    /// Lowercase; empty when not given.
    content_type: String,
    /// The wait the receiver asked for before another try.
    retry_after: Option<Duration>,
    body: Vec<u8>,
}

impl Answer {
    fn read(resp: &mut ureq::http::Response<ureq::Body>) -> Answer {
        let content_type = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_ascii_lowercase();
        let retry_after = resp
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        // A refusal's body says why; a success's is at most a small message.
        let body = resp
            .body_mut()
            .with_config()
            .limit(1 << 20)
            .read_to_vec()
            .unwrap_or_default();
        Answer {
            status: resp.status().as_u16(),
            content_type,
            retry_after,
            body,
        }
    }
}

impl Receiver for OtlpReceiver {
    fn endpoint(&self) -> &str {
        &self.config.shown
    }

    fn send(&mut self, spans: &[Span]) -> Result<Sent> {
        let req = wire::request(spans, &self.config.resource);
        let body = wire::encode(&req, self.config.protocol)
            .map_err(|e| self.error(format!("cannot encode a batch: {e}"), Next::none()))?;
        let mut wait = self.config.backoff;
        let mut last = String::new();
        let mut receiver_asked = false;
        for attempt in 0..ATTEMPTS {
            if attempt > 0 {
                let capped = wait.min(self.config.max_wait);
                // A wait the receiver asked for is said; the short backoff
                // after a refused connection ends in the error that follows.
                if receiver_asked && capped >= Duration::from_secs(1) {
                    let asked = if wait > capped {
                        format!(
                            " (it asked for {} s; {} s is the longest Logbook waits)",
                            wait.as_secs(),
                            capped.as_secs()
                        )
                    } else {
                        String::new()
                    };
                    (self.on_wait)(&format!(
                        "{} {last}: waiting {} s before attempt {} of {ATTEMPTS}{asked}",
                        self.config.shown,
                        capped.as_secs(),
                        attempt + 1
                    ));
                }
                std::thread::sleep(capped);
            }
            match self.attempt(&body, spans.len() as u64)? {
                Attempt::Done(mut sent) => {
                    sent.retries = u64::from(attempt);
                    return Ok(sent);
                }
                Attempt::Retry(why, asked) => {
                    last = why;
                    receiver_asked = asked.is_some();
                    wait = match asked {
                        Some(asked) => asked,
                        None if attempt == 0 => self.config.backoff,
                        None => wait.saturating_mul(2),
                    };
                }
            }
        }
        Err(self.error(
            format!("{last} (tried {ATTEMPTS} times)"),
            Next::say("is the receiver running and listening there? Start it, or point ")
                .option("endpoint")
                .text(" or OTEL_EXPORTER_OTLP_ENDPOINT at one; what was delivered is remembered, so the next export sends only the rest"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use logbook::error::{Face, message};
    use std::io::{BufRead, BufReader, Read, Write};
    use std::sync::{Arc, Mutex};

    fn resolve(endpoint: &str, allow_link_local: bool) -> Result<OtlpConfig> {
        let flags = Flags {
            endpoint: Some(endpoint.into()),
            allow_link_local,
            ..Flags::default()
        };
        OtlpConfig::resolve(&flags, &|_| None)
    }

    #[test]
    fn the_url_posted_to_and_the_url_shown() {
        for (given, url, shown) in [
            (
                "http://h:4318",
                "http://h:4318/v1/traces",
                "http://h:4318/v1/traces",
            ),
            (
                "http://h:4318/v1/traces",
                "http://h:4318/v1/traces",
                "http://h:4318/v1/traces",
            ),
            (
                "http://h:4318/v1/traces/",
                "http://h:4318/v1/traces/",
                "http://h:4318/v1/traces/",
            ),
            (
                "https://user:PASSWORD@h.example/api/otel/?key=K1",
                "https://user:PASSWORD@h.example/api/otel/v1/traces?key=K1",
                "https://h.example/api/otel/v1/traces",
            ),
        ] {
            let c = resolve(given, false).unwrap();
            assert_eq!((c.url.as_str(), c.shown.as_str()), (url, shown), "{given}");
        }
        // The traces variable is used as given, query and all.
        let c = OtlpConfig::resolve(&Flags::default(), &|k| {
            (k == "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").then(|| "http://h/t?k=SECRET".into())
        })
        .unwrap();
        assert_eq!(
            (c.url.as_str(), c.shown.as_str()),
            ("http://h/t?k=SECRET", "http://h/t")
        );
    }

    #[test]
    fn a_fragment_is_refused_without_quoting_credentials() {
        let e = resolve("http://u:PASSWORD@h:4318/?q=TOKEN#frag", false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("fragment"), "{e}");
        assert!(!e.contains("PASSWORD") && !e.contains("TOKEN"), "{e}");
    }

    #[test]
    fn link_local_addresses_need_consent() {
        for host in [
            "http://169.254.169.254",
            "http://169.254.1.2:4318",
            "http://[fe80::1]:4318",
            "http://[FEBF::1]",
            "http://[fe80::1%25eth0]:4318",
            "http://[::ffff:169.254.169.254]",
        ] {
            let e = message(&resolve(host, false).unwrap_err(), Face::Cli);
            assert!(e.contains("--allow-link-local"), "{host}: {e}");
            assert!(resolve(host, true).is_ok(), "{host}");
        }
        for host in [
            "http://169.255.0.1",
            "http://[fec0::1]",
            "http://localhost:4318",
            "http://10.0.0.1",
        ] {
            assert!(resolve(host, false).is_ok(), "{host}");
        }
    }

    /// A resolver answering every name with `addrs`: a name that resolves
    /// to a link-local address without editing /etc/hosts.
    #[derive(Debug)]
    struct Fixed(Vec<SocketAddr>);

    impl Resolver for Fixed {
        fn resolve(
            &self,
            _: &ureq::http::Uri,
            _: &ureq::config::Config,
            _: NextTimeout,
        ) -> std::result::Result<ResolvedSocketAddrs, ureq::Error> {
            let mut out = self.empty();
            for a in &self.0 {
                out.push(*a);
            }
            Ok(out)
        }
    }

    #[test]
    fn resolved_addresses_are_checked_for_link_local_ones() {
        let addr = |s: &str| s.parse::<SocketAddr>().unwrap();
        for bad in [
            vec![addr("169.254.169.254:80")],
            vec![addr("127.0.0.1:4318"), addr("169.254.1.2:4318")],
            vec![addr("[fe80::1]:4318")],
            vec![addr("[::ffff:169.254.169.254]:80")],
        ] {
            assert!(first_link_local(&bad).is_some(), "{bad:?}");
        }
        for good in [
            vec![addr("127.0.0.1:4318")],
            vec![addr("169.255.0.1:80"), addr("[fec0::1]:80")],
            vec![],
        ] {
            assert_eq!(first_link_local(&good), None, "{good:?}");
        }
    }

    #[test]
    fn a_name_that_resolves_to_a_link_local_address_is_refused_before_connecting() {
        // A receiver that would accept: nothing may reach it.
        let base = receiver(vec!["HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"]);
        let local: SocketAddr = base.trim_start_matches("http://").parse().unwrap();
        let port = local.port();
        let config = resolve(&format!("http://metadata.test:{port}"), false).unwrap();
        // One of its addresses is the receiver's: still refused.
        let metadata: SocketAddr = format!("169.254.169.254:{port}").parse().unwrap();
        let mut r = OtlpReceiver::with_resolver(config.clone(), Fixed(vec![local, metadata]));
        let start = std::time::Instant::now();
        let e = message(&r.send(&[span()]).unwrap_err(), Face::Cli);
        assert!(
            e.contains("169.254.169.254")
                && e.contains("link-local")
                && e.contains("--allow-link-local"),
            "{e}"
        );
        // Refused at once, not retried as a broken connection.
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "{:?}",
            start.elapsed()
        );
        // A name that resolves only to the receiver is sent to.
        let mut r = OtlpReceiver::with_resolver(config.clone(), Fixed(vec![local]));
        assert_eq!(r.send(&[span()]).unwrap().accepted, 1);
        // With --allow-link-local the check stands aside (the link-local
        // address is left out here, so the test connects only locally).
        let allowed = resolve(&format!("http://metadata.test:{port}"), true).unwrap();
        assert!(allowed.allow_link_local);
    }

    #[test]
    fn a_header_http_cannot_carry_is_named_not_quoted() {
        for (h, named) in [
            ("Authorization=Bearer SECRET\nX-Other: 1", "Authorization=…"),
            ("Bad Name=SECRET", "Bad Name"),
            ("x:y=SECRET", "x:y"),
            ("Authorization: Bearer SECRET", "Authorization…"),
        ] {
            let flags = Flags {
                endpoint: Some("http://h".into()),
                headers: vec![h.into()],
                ..Flags::default()
            };
            let e = OtlpConfig::resolve(&flags, &|_| None)
                .unwrap_err()
                .to_string();
            assert!(e.contains("header") && e.contains(named), "{h}: {e}");
            assert!(!e.contains("SECRET") && !e.contains("URL"), "{h}: {e}");
        }
    }

    /// A receiver answering each request with the next of `answers`.
    fn receiver(answers: Vec<&'static str>) -> String {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            let mut answers = answers.into_iter();
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let mut out = stream.try_clone().unwrap();
                let mut r = BufReader::new(stream);
                loop {
                    let mut len = 0;
                    loop {
                        let mut line = String::new();
                        if r.read_line(&mut line).unwrap_or(0) == 0 {
                            return;
                        }
                        let line = line.trim_end().to_ascii_lowercase();
                        if line.is_empty() {
                            break;
                        }
                        if let Some(v) = line.strip_prefix("content-length:") {
                            len = v.trim().parse().unwrap();
                        }
                    }
                    let mut body = vec![0; len];
                    r.read_exact(&mut body).unwrap();
                    let Some(a) = answers.next() else { return };
                    out.write_all(a.as_bytes()).unwrap();
                }
            }
        });
        format!("http://{addr}")
    }

    fn span() -> Span {
        Span {
            trace_id: logbook::ops::export::span::TraceId::of("t", &["1"]),
            span_id: logbook::ops::export::span::SpanId::of("s", &["1"]),
            parent: None,
            name: "x".into(),
            kind: logbook::ops::export::span::SpanKind::Internal,
            start_ns: 1,
            end_ns: 2,
            attributes: vec![],
            events: vec![],
            links: vec![],
            status: logbook::ops::export::span::SpanStatus::Unset,
        }
    }

    #[test]
    fn a_long_retry_after_is_capped_and_said() {
        let base = receiver(vec![
            "HTTP/1.1 503 Busy\r\nRetry-After: 100000\r\nContent-Length: 0\r\n\r\n",
            "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
        ]);
        let mut config = resolve(&base, false).unwrap();
        config.max_wait = Duration::from_secs(1);
        let said = Arc::new(Mutex::new(vec![]));
        let log = said.clone();
        let mut r =
            OtlpReceiver::new(config).on_wait(move |m| log.lock().unwrap().push(m.to_string()));
        let start = std::time::Instant::now();
        let sent = r.send(&[span()]).unwrap();
        assert_eq!(sent.retries, 1);
        assert!(start.elapsed() < Duration::from_secs(10));
        let said = said.lock().unwrap();
        assert_eq!(said.len(), 1, "{said:?}");
        assert!(
            said[0].contains("100000 s")
                && said[0].contains("waiting 1 s")
                && said[0].contains("attempt 2 of 5"),
            "{said:?}"
        );
    }

    #[test]
    fn each_refusal_says_what_to_do() {
        for (answer, want) in [
            (
                "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n",
                "proxy",
            ),
            (
                "HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n",
                "NO_PROXY",
            ),
            (
                "HTTP/1.1 413 Too Large\r\nContent-Length: 0\r\n\r\n",
                "--batch",
            ),
            (
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 9\r\n\r\n{garbage!",
                "not an OTLP http/json response",
            ),
        ] {
            let base = receiver(vec![answer]);
            let mut r = OtlpReceiver::new(resolve(&base, false).unwrap());
            let e = r.send(&[span()]).unwrap_err();
            let text = logbook::error::message(&e, logbook::error::Face::Cli);
            assert!(text.contains(want), "{answer}: {text}");
            if answer.contains(" 403 ") {
                assert!(!text.contains("wants credentials"), "{text}");
            }
        }
    }
}
