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
//! let p = logbook::Project::open(std::path::Path::new("."))?;
//! let summary = export::export(&p, &ExportOptions::default(), &mut receiver, &mut |_| {})?;
//! println!("{} spans accepted", summary.accepted);
//! # Ok::<(), logbook::Error>(())
//! ```

pub mod wire;

use std::time::Duration;

use logbook::Error;
use logbook::error::{Next, Result};
use logbook::ops::export::span::Span;
use logbook::ops::export::{Receiver, Sent};

pub use wire::Protocol;

/// The path OTLP/HTTP receivers take traces on, appended to a base URL.
pub const TRACES_PATH: &str = "/v1/traces";

/// How long a request may take when no variable says: the OTLP default.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// How many times a batch is sent in all before the export gives up.
const ATTEMPTS: u32 = 5;

/// The longest wait between two attempts, whatever `Retry-After` asks.
const MAX_WAIT: Duration = Duration::from_secs(30);

/// What the command line gave; every field falls back to the variables.
#[derive(Debug, Clone, Default)]
pub struct Flags {
    /// `--endpoint`: a base URL; [`TRACES_PATH`] is appended.
    pub endpoint: Option<String>,
    /// `--protocol`: `http/protobuf` or `http/json`.
    pub protocol: Option<String>,
    /// `--header K=V`, in order; a later one wins over the variables'.
    pub headers: Vec<String>,
}

/// Where and how batches go.
#[derive(Debug, Clone)]
pub struct OtlpConfig {
    /// The full URL requests are posted to.
    pub url: String,
    /// The encoding.
    pub protocol: Protocol,
    /// Headers sent with each request (API keys: never printed).
    pub headers: Vec<(String, String)>,
    /// How long one request may take.
    pub timeout: Duration,
    /// The wait before the first retry; each further one doubles it.
    pub backoff: Duration,
    /// The resource's attributes (`service.name` first).
    pub resource: Vec<(String, String)>,
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
                part,
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
        let base = |b: &str| format!("{}{TRACES_PATH}", b.trim().trim_end_matches('/'));
        let url = match (&flags.endpoint, var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")) {
            (Some(e), _) => base(e),
            (None, Some(e)) => e.trim().to_string(),
            (None, None) => match var("OTEL_EXPORTER_OTLP_ENDPOINT") {
                Some(e) => base(&e),
                None => {
                    return Err(config_error(
                        "endpoint",
                        "",
                        "no receiver named: pass --endpoint http://host:4318 (a base URL; /v1/traces is appended) or set OTEL_EXPORTER_OTLP_ENDPOINT",
                    ));
                }
            },
        };
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(config_error(
                "endpoint",
                &url,
                "expected an http:// or https:// URL such as http://localhost:4318",
            ));
        }
        let protocol_text = flags
            .protocol
            .clone()
            .or_else(|| var("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"))
            .or_else(|| var("OTEL_EXPORTER_OTLP_PROTOCOL"));
        let protocol = match protocol_text {
            None => Protocol::HttpProtobuf,
            Some(p) => Protocol::parse(&p).ok_or_else(|| {
                config_error(
                    "protocol",
                    &p,
                    "expected http/protobuf or http/json (gRPC is not supported: receivers that take it also take http/protobuf, usually on port 4318)",
                )
            })?,
        };
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
                return Err(config_error(
                    "header",
                    h,
                    "expected K=V, such as --header 'Authorization=Bearer <key>'",
                ));
            };
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
        // A later header of the same name replaces an earlier one.
        let mut unique: Vec<(String, String)> = vec![];
        for (k, v) in headers {
            unique.retain(|(u, _)| !u.eq_ignore_ascii_case(&k));
            unique.push((k, v));
        }
        let timeout = match var("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT")
            .or_else(|| var("OTEL_EXPORTER_OTLP_TIMEOUT"))
        {
            None => DEFAULT_TIMEOUT,
            Some(ms) => Duration::from_millis(ms.trim().parse::<u64>().map_err(|_| {
                config_error("timeout", &ms, "expected milliseconds, such as 10000")
            })?),
        };
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
        Ok(OtlpConfig {
            url,
            protocol,
            headers: unique,
            timeout,
            backoff: Duration::from_millis(250),
            resource,
        })
    }
}

/// Sends batches to one OTLP/HTTP endpoint.
pub struct OtlpReceiver {
    config: OtlpConfig,
    agent: ureq::Agent,
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
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(config.timeout))
            .http_status_as_error(false)
            .user_agent(concat!("logbook/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        OtlpReceiver { config, agent }
    }

    /// The configuration it sends with.
    pub fn config(&self) -> &OtlpConfig {
        &self.config
    }

    fn error(&self, message: impl Into<String>, hint: impl Into<Next>) -> Error {
        Error::Export {
            endpoint: self.config.url.clone(),
            message: message.into(),
            hint: hint.into(),
        }
    }

    fn attempt(&self, body: &[u8], spans: u64) -> Result<Attempt> {
        let mut req = self
            .agent
            .post(&self.config.url)
            .header("Content-Type", self.config.protocol.content_type());
        for (k, v) in &self.config.headers {
            req = req.header(k.as_str(), v.as_str());
        }
        let mut resp = match req.send(body) {
            Ok(r) => r,
            Err(e) => {
                return match e {
                    ureq::Error::Io(_)
                    | ureq::Error::ConnectionFailed
                    | ureq::Error::Timeout(_)
                    | ureq::Error::Protocol(_) => Ok(Attempt::Retry(e.to_string(), None)),
                    other => Err(self.error(
                        other.to_string(),
                        Next::say("check the URL given with ")
                            .option("endpoint")
                            .text(" or OTEL_EXPORTER_OTLP_ENDPOINT"),
                    )),
                };
            }
        };
        let status = resp.status().as_u16();
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
        match status {
            200..=299 => {
                let answer = wire::decode_response(&body, self.config.protocol).map_err(|e| {
                    self.error(
                        format!("answered {status} with a body that is not an OTLP response: {e}"),
                        "is this an OTLP/HTTP traces endpoint? It usually ends in /v1/traces on port 4318",
                    )
                })?;
                let (rejected, message) = match answer.partial_success {
                    Some(p) => (
                        u64::try_from(p.rejected_spans).unwrap_or(0),
                        Some(p.error_message),
                    ),
                    None => (0, None),
                };
                Ok(Attempt::Done(Sent {
                    accepted: spans.saturating_sub(rejected),
                    rejected,
                    message: message.filter(|m| !m.is_empty()),
                    retries: 0,
                }))
            }
            429 | 502 | 503 | 504 => Ok(Attempt::Retry(format!("answered {status}"), retry_after)),
            _ => {
                let said = String::from_utf8_lossy(&body);
                let said: String = said.chars().take(300).collect();
                let hint = match status {
                    401 | 403 => Next::say("the receiver wants credentials: pass them with ")
                        .option("header")
                        .text(" (Authorization=Bearer <key>) or OTEL_EXPORTER_OTLP_HEADERS"),
                    404 | 405 => Next::say("check the path: ")
                        .option("endpoint")
                        .text(" and OTEL_EXPORTER_OTLP_ENDPOINT take a base URL (/v1/traces is appended); OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is used as given"),
                    415 => Next::say("the receiver does not take this encoding: try ")
                        .option("protocol")
                        .text(" http/protobuf"),
                    _ => Next::say("the receiver refused the batch; what it said is above"),
                };
                Err(self.error(format!("answered {status}: {}", said.trim()), hint))
            }
        }
    }
}

impl Receiver for OtlpReceiver {
    fn endpoint(&self) -> &str {
        &self.config.url
    }

    fn send(&mut self, spans: &[Span]) -> Result<Sent> {
        let req = wire::request(spans, &self.config.resource);
        let body = wire::encode(&req, self.config.protocol)
            .map_err(|e| self.error(format!("cannot encode a batch: {e}"), Next::none()))?;
        let mut wait = self.config.backoff;
        let mut last = String::new();
        for attempt in 0..ATTEMPTS {
            if attempt > 0 {
                std::thread::sleep(wait.min(MAX_WAIT));
            }
            match self.attempt(&body, spans.len() as u64)? {
                Attempt::Done(mut sent) => {
                    sent.retries = u64::from(attempt);
                    return Ok(sent);
                }
                Attempt::Retry(why, asked) => {
                    last = why;
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
