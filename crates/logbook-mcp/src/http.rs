//! MCP's streamable HTTP transport for `logbook serve`'s `/mcp`, bounded:
//! sessions expire when idle and only so many live at once (each holds a
//! server and its worker), request bodies have a size limit, and a body
//! that is no JSON-RPC message is a 400 with the JSON-RPC error, not a 415.
//! The viewer's guard stands in front (token, `Host`, `Origin`).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::Request;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::WorkerTransport;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError, LocalSessionWorker,
};
use rmcp::transport::streamable_http_server::session::{
    ServerSseMessage, SessionId, SessionManager,
};
use tokio_stream::Stream;

use crate::stdio::{Line, MAX_MESSAGE_BYTES, classify};

/// How `/mcp` bounds its sessions.
#[derive(Debug, Clone, Copy)]
pub struct SessionLimits {
    /// A session unused this long is closed (the client initializes again,
    /// told so by a 404).
    pub idle: Duration,
    /// Sessions alive at once; a new one closes the longest idle.
    pub max: usize,
}

impl SessionLimits {
    /// Ten minutes idle, a hundred at once: room for every agent a person
    /// runs, while a client that initializes in a loop cannot grow the
    /// server without bound.
    pub const DEFAULT: SessionLimits = SessionLimits {
        idle: Duration::from_secs(600),
        max: 100,
    };
}

impl Default for SessionLimits {
    fn default() -> SessionLimits {
        SessionLimits::DEFAULT
    }
}

/// The SDK's in-memory sessions, with an idle expiry and a cap on how many
/// live at once (the SDK sets no cap, and keeps each session's entry until
/// its client deletes it).
pub(crate) struct BoundedSessions {
    inner: LocalSessionManager,
    /// When each live session was last used.
    used: Mutex<HashMap<SessionId, Instant>>,
    limits: SessionLimits,
}

impl std::fmt::Debug for BoundedSessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BoundedSessions")
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl BoundedSessions {
    /// Sessions bounded by `limits`.
    pub(crate) fn new(limits: SessionLimits) -> BoundedSessions {
        let mut inner = LocalSessionManager::default();
        // The SDK's own idle timer ends the session's worker even when no
        // request comes to sweep it.
        inner.session_config.keep_alive = Some(limits.idle);
        BoundedSessions {
            inner,
            used: Mutex::new(HashMap::new()),
            limits,
        }
    }

    fn used(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, Instant>> {
        // A panic while holding this lock leaves a map that is still whole.
        self.used.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Marks `id` used now, if it is alive and not expired; an expired one
    /// is forgotten here (and closed by the next sweep).
    fn touch(&self, id: &SessionId) -> bool {
        let mut used = self.used();
        match used.get_mut(id) {
            Some(at) if at.elapsed() < self.limits.idle => {
                *at = Instant::now();
                true
            }
            _ => false,
        }
    }

    /// Closes expired sessions, and the longest idle ones while more than
    /// `keep` are alive.
    async fn sweep(&self, keep: usize) {
        let doomed: Vec<SessionId> = {
            let mut used = self.used();
            let mut doomed: Vec<SessionId> = used
                .iter()
                .filter(|(_, at)| at.elapsed() >= self.limits.idle)
                .map(|(id, _)| id.clone())
                .collect();
            for id in &doomed {
                used.remove(id);
            }
            if used.len() > keep {
                let mut by_age: Vec<(Instant, SessionId)> =
                    used.iter().map(|(id, at)| (*at, id.clone())).collect();
                by_age.sort();
                for (_, id) in by_age.into_iter().take(used.len() - keep) {
                    used.remove(&id);
                    doomed.push(id);
                }
            }
            doomed
        };
        for id in doomed {
            // A session whose worker already ended has nothing to close.
            let _ = self.inner.close_session(&id).await;
        }
    }

    fn gone(id: &SessionId) -> LocalSessionManagerError {
        LocalSessionManagerError::SessionNotFound(id.clone())
    }
}

impl SessionManager for BoundedSessions {
    type Error = LocalSessionManagerError;
    type Transport = WorkerTransport<LocalSessionWorker>;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        self.sweep(self.limits.max.saturating_sub(1)).await;
        let (id, transport) = self.inner.create_session().await?;
        self.used().insert(id.clone(), Instant::now());
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        if !self.touch(id) {
            return Err(Self::gone(id));
        }
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        if self.touch(id) {
            return self.inner.has_session(id).await;
        }
        // Expired (or never was): closed now, answered 404 by the SDK.
        self.sweep(self.limits.max).await;
        Ok(false)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.used().remove(id);
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        if !self.touch(id) {
            return Err(Self::gone(id));
        }
        self.inner.create_stream(id, message).await
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        if !self.touch(id) {
            return Err(Self::gone(id));
        }
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        if !self.touch(id) {
            return Err(Self::gone(id));
        }
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        if !self.touch(id) {
            return Err(Self::gone(id));
        }
        self.inner.resume(id, last_event_id).await
    }
}

/// A plain-text refusal with its status.
fn refuse(status: StatusCode, text: String) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        text,
    )
        .into_response()
}

/// What the SDK answers only after reading the body, worded for the
/// client: a body over the limit is 413 naming the limit (answered here
/// first), and one that is no JSON-RPC message is 400 with the JSON-RPC
/// error (-32700 or -32600, `"id": null`) instead of the SDK's 415.
/// Requests the SDK refuses before reading (Accept, Content-Type) go on to
/// it untouched.
pub(crate) async fn check_body(req: Request, next: Next) -> Response {
    let json_body = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .is_some_and(|e| e.trim().eq_ignore_ascii_case("application/json"))
        });
    let accepts = req
        .headers()
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect::<Vec<_>>()
        .join(",")
        .to_ascii_lowercase();
    if req.method() != Method::POST
        || !json_body
        || !accepts.contains("application/json")
        || !accepts.contains("text/event-stream")
    {
        return next.run(req).await;
    }
    let (parts, body) = req.into_parts();
    let too_large = || {
        refuse(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "Payload Too Large: an MCP request body may be at most {} MiB ({MAX_MESSAGE_BYTES} bytes); send one JSON-RPC message per request, within that size",
                MAX_MESSAGE_BYTES / (1024 * 1024)
            ),
        )
    };
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_MESSAGE_BYTES as u64) {
        return too_large();
    }
    let bytes: Bytes = match axum::body::to_bytes(body, MAX_MESSAGE_BYTES).await {
        Ok(b) => b,
        // The limit, or a connection that broke off: either way the body is
        // not all here.
        Err(_) => return too_large(),
    };
    // The SDK parses the body; only one it could not parse (its 415, the
    // one it gives a body past the headers checked above) is read again,
    // for the JSON-RPC error, so a message is parsed once.
    let answered = next
        .run(Request::from_parts(parts, Body::from(bytes.clone())))
        .await;
    if answered.status() != StatusCode::UNSUPPORTED_MEDIA_TYPE {
        return answered;
    }
    let answer = match classify(&bytes) {
        Line::Message(_) => return answered,
        Line::Answer(answer) => answer,
        Line::Ignore => crate::stdio::invalid_request(),
    };
    let mut r = (StatusCode::BAD_REQUEST, answer.to_string()).into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}
