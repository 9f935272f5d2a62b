//! The stdio transport: JSON-RPC messages, one per line, on stdin and
//! stdout. It stands in front of the SDK so that every line a client sends
//! gets the answer JSON-RPC promises, even when the SDK would drop it: a
//! line that is not JSON (garbage, invalid UTF-8, a lone surrogate, two
//! objects on one line, a line too long) gets -32700, and JSON that is no
//! request -32600, both with `"id": null`; a request whose parameters do not
//! fit gets -32602 with its id. A client waiting on an id never waits
//! forever, and the server goes on reading.
//!
//! Requests on one connection are answered in an order a client can build
//! on: a tool call that may write is a barrier ([`Barrier`]). The SDK runs
//! requests concurrently, so a `find_runs` sent right after a `run_start`,
//! before its answer, could otherwise run first and miss the new run. Until
//! the write's answer is written, later requests that read or write are
//! held back (in order) and handed on after it; reads with no write before
//! them still run at once, side by side, and so do pings and listings of
//! tools and prompts, which read nothing a write changes.

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, ClientRequest, ErrorCode, JsonRpcMessage, RequestId,
};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{Mutex, Notify};
use tokio::task::JoinHandle;

/// The longest message read, a line on stdio or a request body over HTTP:
/// longer ones are refused (-32700 and skipped on stdio, 413 over HTTP), so
/// a client cannot make the server hold an endless message.
pub(crate) const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// JSON-RPC lines over a reader and a writer (stdin and stdout for
/// `logbook mcp`), answering the lines the SDK cannot take itself.
pub(crate) struct LineTransport<R, W> {
    reader: BufReader<R>,
    writer: Arc<Mutex<W>>,
    /// The line read so far: kept here, not in the future, because the SDK
    /// drops a pending `receive` whenever it has something to send.
    line: Vec<u8>,
    /// Set while skipping the rest of a line longer than the limit.
    overlong: bool,
    /// Error answers being written; waited for at the end of input, so the
    /// answer to a last garbage line is not lost when the server exits.
    pending: Vec<JoinHandle<()>>,
    /// The write whose answer later requests wait for.
    barrier: Barrier,
    /// Requests read while a write was unanswered, in the order they came.
    held: VecDeque<ClientJsonRpcMessage>,
}

/// The tool calls that only read: every other tool call is a write, which
/// later requests on the connection wait for (see the module's overview).
pub(crate) type ReadOnlyTools = Arc<HashSet<String>>;

/// The unanswered write a connection's later requests wait for: set when
/// the write is handed to the SDK, cleared (and `done` notified) once its
/// answer is written to the client.
#[derive(Clone, Default)]
struct Barrier {
    write: Arc<std::sync::Mutex<Option<RequestId>>>,
    done: Arc<Notify>,
    read_only: ReadOnlyTools,
}

impl Barrier {
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<RequestId>> {
        // A poisoned lock only means a panic elsewhere; the id is still good.
        self.write.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn is_up(&self) -> bool {
        self.lock().is_some()
    }

    /// Lifts the barrier if `id` is the write it waits for.
    fn answered(&self, id: &RequestId) {
        let mut write = self.lock();
        if write.as_ref() == Some(id) {
            *write = None;
            self.done.notify_one();
        }
    }

    /// Whether `m` is a tool call that may write.
    fn is_write(&self, m: &ClientJsonRpcMessage) -> Option<RequestId> {
        match m {
            JsonRpcMessage::Request(r) => match &r.request {
                ClientRequest::CallToolRequest(call)
                    if !self.read_only.contains(call.params.name.as_ref()) =>
                {
                    Some(r.id.clone())
                }
                _ => None,
            },
            _ => None,
        }
    }
}

/// Whether `m` may pass requests held behind a write: it reads nothing a
/// write changes (a ping, the lists of tools and prompts, a notification
/// other than a cancellation).
fn passes_held(m: &ClientJsonRpcMessage) -> bool {
    match m {
        JsonRpcMessage::Request(r) => matches!(
            r.request,
            ClientRequest::PingRequest(_)
                | ClientRequest::ListToolsRequest(_)
                | ClientRequest::ListPromptsRequest(_)
                | ClientRequest::ListResourceTemplatesRequest(_)
        ),
        JsonRpcMessage::Notification(n) => {
            !matches!(n.notification, ClientNotification::CancelledNotification(_))
        }
        _ => true,
    }
}

impl<R, W> LineTransport<R, W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    /// A transport reading `reader` and writing `writer`; calls of the
    /// tools in `read_only` are reads, every other tool call a write.
    pub(crate) fn new(reader: R, writer: W, read_only: ReadOnlyTools) -> Self {
        LineTransport {
            reader: BufReader::new(reader),
            writer: Arc::new(Mutex::new(writer)),
            line: Vec::new(),
            overlong: false,
            pending: Vec::new(),
            barrier: Barrier {
                read_only,
                ..Barrier::default()
            },
            held: VecDeque::new(),
        }
    }

    /// Hands `m` to the SDK, raising the barrier if it is a write.
    fn pass(&mut self, m: ClientJsonRpcMessage) -> Option<RxJsonRpcMessage<RoleServer>> {
        if let Some(id) = self.barrier.is_write(&m) {
            *self.barrier.lock() = Some(id);
        }
        Some(m)
    }

    /// Writes one answer of ours without holding up `receive` (which the
    /// SDK may drop at any await).
    fn answer(&mut self, answer: Value) {
        self.pending.retain(|h| !h.is_finished());
        let writer = self.writer.clone();
        self.pending.push(tokio::spawn(async move {
            let mut line = answer.to_string().into_bytes();
            line.push(b'\n');
            let mut w = writer.lock().await;
            // A client that closed stdout gets nothing more; the end of its
            // input ends the server.
            let _ = w.write_all(&line).await;
            let _ = w.flush().await;
        }));
    }

    /// The next whole line (without its newline), or `None` at the end of
    /// input. Cancel-safe: progress lives in `self`.
    async fn next_line(&mut self) -> Option<Vec<u8>> {
        loop {
            let chunk = self.reader.fill_buf().await.ok()?;
            if chunk.is_empty() {
                if self.overlong {
                    self.overlong = false;
                    self.answer(error_answer(ErrorCode::PARSE_ERROR, too_long(), None));
                }
                if self.line.is_empty() {
                    return None;
                }
                return Some(std::mem::take(&mut self.line));
            }
            let (take, end) = match chunk.iter().position(|&b| b == b'\n') {
                Some(i) => (i + 1, true),
                None => (chunk.len(), false),
            };
            if !self.overlong {
                if self.line.len() + take > MAX_MESSAGE_BYTES + 1 {
                    self.overlong = true;
                    self.line = Vec::new();
                } else {
                    self.line.extend_from_slice(&chunk[..take]);
                }
            }
            self.reader.consume(take);
            if end {
                if std::mem::take(&mut self.overlong) {
                    self.answer(error_answer(ErrorCode::PARSE_ERROR, too_long(), None));
                    continue;
                }
                let mut line = std::mem::take(&mut self.line);
                line.pop();
                return Some(line);
            }
        }
    }
}

fn too_long() -> String {
    format!(
        "Parse error: the line is longer than {MAX_MESSAGE_BYTES} bytes; send one JSON-RPC message per line, within that size"
    )
}

/// A JSON-RPC error answer; `id` is `null` when the request's id cannot be
/// told, as JSON-RPC asks.
fn error_answer(code: ErrorCode, message: String, id: Option<Value>) -> Value {
    json!({
        "jsonrpc": "2.0",
        "id": id.unwrap_or(Value::Null),
        "error": {"code": code.0, "message": message},
    })
}

/// What to do with one line.
#[derive(Debug)]
pub(crate) enum Line {
    /// A message for the server.
    Message(Box<ClientJsonRpcMessage>),
    /// A line that gets this answer from the transport itself.
    Answer(Value),
    /// A line that gets no answer: blank, or a notification or response
    /// the server cannot use (JSON-RPC never answers those).
    Ignore,
}

/// Sorts one line (without its newline) into what the server reads and
/// what the transport answers itself.
pub(crate) fn classify(line: &[u8]) -> Line {
    if line.iter().all(u8::is_ascii_whitespace) {
        return Line::Ignore;
    }
    if let Ok(message) = serde_json::from_slice::<ClientJsonRpcMessage>(line) {
        return Line::Message(Box::new(message));
    }
    let value = match serde_json::from_slice::<Value>(line) {
        Ok(v) => v,
        Err(e) => {
            return Line::Answer(error_answer(
                ErrorCode::PARSE_ERROR,
                format!(
                    "Parse error: the line is not one JSON value ({e}); send one JSON-RPC message per line, as UTF-8 JSON"
                ),
                None,
            ));
        }
    };
    let object = value.as_object();
    let field = |k: &str| object.and_then(|o| o.get(k));
    let version_ok = field("jsonrpc").and_then(Value::as_str) == Some("2.0");
    // An id JSON-RPC (and the SDK) can carry back: a string or an integer.
    let id = field("id")
        .filter(|id| id.is_string() || id.is_i64())
        .cloned();
    let method = field("method").and_then(Value::as_str);
    match (version_ok, method, id) {
        (true, Some(method), Some(id)) => Line::Answer(error_answer(
            ErrorCode::INVALID_PARAMS,
            format!(
                "Invalid params for {method:?}: they do not fit the method's parameters (an object, as the MCP specification gives it)"
            ),
            Some(id),
        )),
        // A notification, or a response to a request of ours, that does
        // not fit: JSON-RPC answers neither.
        (true, Some(_), None) if field("id").is_none() => Line::Ignore,
        (true, None, Some(_)) if field("result").is_some() || field("error").is_some() => {
            Line::Ignore
        }
        _ => Line::Answer(invalid_request()),
    }
}

/// The answer to JSON that is no JSON-RPC request (-32600, `"id": null`).
pub(crate) fn invalid_request() -> Value {
    error_answer(
        ErrorCode::INVALID_REQUEST,
        "Invalid Request: expected a JSON-RPC 2.0 object with \"jsonrpc\": \"2.0\", a string \"method\" and, for a request, a string or integer \"id\"".into(),
        None,
    )
}

impl<R, W> Transport<RoleServer> for LineTransport<R, W>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let writer = self.writer.clone();
        let barrier = self.barrier.clone();
        async move {
            let answers = match &item {
                JsonRpcMessage::Response(r) => Some(r.id.clone()),
                JsonRpcMessage::Error(e) => e.id.clone(),
                _ => None,
            };
            let mut line = serde_json::to_vec(&item)?;
            line.push(b'\n');
            let written = {
                let mut w = writer.lock().await;
                match w.write_all(&line).await {
                    Ok(()) => w.flush().await,
                    Err(e) => Err(e),
                }
            };
            // Written (or never to be): what waited for it may go on.
            if let Some(id) = answers {
                barrier.answered(&id);
            }
            written
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            if !self.barrier.is_up()
                && let Some(m) = self.held.pop_front()
            {
                return self.pass(m);
            }
            let line = if self.barrier.is_up() {
                // Lines are still read meanwhile (a ping passes), and the
                // write's answer lifts the barrier. Both are cancel-safe.
                let done = self.barrier.done.clone();
                tokio::select! {
                    line = self.next_line() => line,
                    () = done.notified() => continue,
                }
            } else {
                self.next_line().await
            };
            let Some(line) = line else {
                // The requests held, then the answers already owed, go
                // out before the server ends.
                if !self.held.is_empty() {
                    let done = self.barrier.done.clone();
                    while self.barrier.is_up() {
                        done.notified().await;
                    }
                    continue;
                }
                while let Some(first) = self.pending.first_mut() {
                    let _ = first.await;
                    self.pending.remove(0);
                }
                return None;
            };
            match classify(&line) {
                Line::Message(m) => {
                    let waits = self.barrier.is_up() || !self.held.is_empty();
                    if waits && !passes_held(&m) {
                        self.held.push_back(*m);
                    } else {
                        return self.pass(*m);
                    }
                }
                Line::Answer(a) => self.answer(a),
                Line::Ignore => {}
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.writer.lock().await.flush().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(line: impl AsRef<[u8]>) -> Option<(i64, Value)> {
        match classify(line.as_ref()) {
            Line::Answer(a) => Some((a["error"]["code"].as_i64()?, a["id"].clone())),
            _ => None,
        }
    }

    #[test]
    fn lines_are_sorted_into_messages_answers_and_silence() {
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
            Line::Message(_)
        ));
        for garbage in ["not json {", r#""\ud800""#, r#"{"a":1}{"b":2}"#, "[1, 2"] {
            assert_eq!(code(garbage), Some((-32700, Value::Null)), "{garbage}");
        }
        assert_eq!(code(b"\xff\xfe{}"), Some((-32700, Value::Null)));
        for invalid in [
            r#"{"hello":"world"}"#,
            "[]",
            "5",
            r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":7}"#,
        ] {
            assert_eq!(code(invalid), Some((-32600, Value::Null)), "{invalid}");
        }
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":5}"#),
            Some((-32602, json!("a")))
        );
        assert!(matches!(classify(b"   "), Line::Ignore));
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","method":"notifications/x","params":5}"#),
            Line::Ignore
        ));
    }
}
