//! The spans an export sends, in OpenTelemetry's terms but free of any wire
//! format: a receiver crate (`logbook-otlp`) turns them into OTLP.
//!
//! Ids derive from the record alone ([`TraceId::of`], [`SpanId::of`]): the
//! SHA-256 of a typed key (`run\0<id>`, `turn\0<transcript>\0<n>`…),
//! truncated. The same record is always the same span, so `--all` sends
//! the same ids again and a receiver that keys on them keeps one copy.

use sha2::{Digest, Sha256};

/// A trace id: 16 bytes, never all zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TraceId(pub [u8; 16]);

/// A span id: 8 bytes, never all zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SpanId(pub [u8; 8]);

fn digest(kind: &str, parts: &[&str]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(kind.as_bytes());
    for p in parts {
        // A separator no id holds, so ("a", "bc") and ("ab", "c") differ.
        h.update([0u8]);
        h.update(p.as_bytes());
    }
    let mut out = [0u8; 32];
    out.copy_from_slice(h.finalize().as_slice());
    out
}

impl TraceId {
    /// The trace id of the record of `kind` named by `parts`.
    pub fn of(kind: &str, parts: &[&str]) -> TraceId {
        let d = digest(kind, parts);
        let mut id = [0u8; 16];
        id.copy_from_slice(&d[..16]);
        if id == [0u8; 16] {
            // OTLP reads all-zero as "no id"; a digest that is one is
            // astronomically unlikely, but must still be a valid id.
            id[15] = 1;
        }
        TraceId(id)
    }

    /// Lowercase hex, as OTLP/JSON and receivers' APIs write it.
    pub fn to_hex(&self) -> String {
        hex(&self.0)
    }
}

impl SpanId {
    /// The span id of the record of `kind` named by `parts`.
    pub fn of(kind: &str, parts: &[&str]) -> SpanId {
        let d = digest(kind, parts);
        let mut id = [0u8; 8];
        id.copy_from_slice(&d[..8]);
        if id == [0u8; 8] {
            id[7] = 1;
        }
        SpanId(id)
    }

    /// Lowercase hex.
    pub fn to_hex(&self) -> String {
        hex(&self.0)
    }
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// An attribute value.
#[derive(Debug, Clone, PartialEq)]
pub enum AttrValue {
    /// Text.
    Str(String),
    /// A whole number (token counts, exit codes).
    Int(i64),
    /// A real number (a cost in US dollars).
    Double(f64),
    /// A flag.
    Bool(bool),
    /// A list of texts (tags).
    StrList(Vec<String>),
}

/// One attribute: a key from the GenAI conventions or `logbook.*`.
pub type Attribute = (&'static str, AttrValue);

/// What a span's status says.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum SpanStatus {
    /// Nothing said (a run still classed as neither).
    #[default]
    Unset,
    /// It succeeded.
    Ok,
    /// It failed, with what is known about why.
    Error(String),
}

/// What a span stands for, as OpenTelemetry's span kinds go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpanKind {
    /// Work inside the agent (a run, a session, a tool call).
    Internal,
    /// A call to a model provider (a `chat` turn).
    Client,
}

/// A timed event on a span (an output registered, a decision taken).
#[derive(Debug, Clone, PartialEq)]
pub struct SpanEvent {
    /// The event's name (`logbook.output`, `logbook.decision`…).
    pub name: String,
    /// When, in nanoseconds since the Unix epoch.
    pub time_ns: u64,
    /// What it carries.
    pub attributes: Vec<Attribute>,
}

/// A link to another span (a run's lineage).
#[derive(Debug, Clone, PartialEq)]
pub struct SpanLink {
    /// The other span's trace.
    pub trace_id: TraceId,
    /// The other span.
    pub span_id: SpanId,
    /// Why they are linked.
    pub attributes: Vec<Attribute>,
}

/// One span, ready for a receiver.
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    /// The trace it belongs to.
    pub trace_id: TraceId,
    /// Its own id.
    pub span_id: SpanId,
    /// The span it runs under, if any.
    pub parent: Option<SpanId>,
    /// `invoke_agent quinn`, `chat claude-sonnet-4-5`, `execute_tool Bash`…
    pub name: String,
    /// Internal or client.
    pub kind: SpanKind,
    /// Start, in nanoseconds since the Unix epoch.
    pub start_ns: u64,
    /// End, never before the start.
    pub end_ns: u64,
    /// Its attributes.
    pub attributes: Vec<Attribute>,
    /// Its events.
    pub events: Vec<SpanEvent>,
    /// Its links.
    pub links: Vec<SpanLink>,
    /// Its status.
    pub status: SpanStatus,
}

impl Span {
    /// The attribute `key`, if the span has it.
    pub fn attribute(&self, key: &str) -> Option<&AttrValue> {
        self.attributes
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v)
    }
}
