//! Logbook's spans as OTLP messages (`opentelemetry-proto`'s prost types),
//! and the bodies of both OTLP/HTTP encodings.

use logbook::ops::export::span::{AttrValue, Attribute, Span, SpanKind, SpanStatus};
use logbook::ops::export::{SCHEMA_URL, SEMCONV_VERSION};
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::{
    AnyValue, ArrayValue, InstrumentationScope, KeyValue, any_value,
};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1 as proto;
use prost::Message as _;

/// How a batch is encoded on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// `http/protobuf`: binary protobuf, what every receiver takes.
    HttpProtobuf,
    /// `http/json`: OTLP's JSON mapping of the same messages.
    HttpJson,
}

impl Protocol {
    /// The protocol a flag or `OTEL_EXPORTER_OTLP_PROTOCOL` names.
    pub fn parse(given: &str) -> Option<Protocol> {
        match given.trim() {
            "http/protobuf" => Some(Protocol::HttpProtobuf),
            "http/json" => Some(Protocol::HttpJson),
            _ => None,
        }
    }

    /// Its name, as the variables spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::HttpProtobuf => "http/protobuf",
            Protocol::HttpJson => "http/json",
        }
    }

    /// The request's `Content-Type`.
    pub fn content_type(self) -> &'static str {
        match self {
            Protocol::HttpProtobuf => "application/x-protobuf",
            Protocol::HttpJson => "application/json",
        }
    }
}

fn any(v: &AttrValue) -> AnyValue {
    let value = match v {
        AttrValue::Str(s) => any_value::Value::StringValue(s.clone()),
        AttrValue::Int(i) => any_value::Value::IntValue(*i),
        AttrValue::Double(d) => any_value::Value::DoubleValue(*d),
        AttrValue::Bool(b) => any_value::Value::BoolValue(*b),
        AttrValue::StrList(l) => any_value::Value::ArrayValue(ArrayValue {
            values: l
                .iter()
                .map(|s| AnyValue {
                    value: Some(any_value::Value::StringValue(s.clone())),
                })
                .collect(),
        }),
    };
    AnyValue { value: Some(value) }
}

fn key_values(attrs: &[Attribute]) -> Vec<KeyValue> {
    attrs
        .iter()
        .map(|(k, v)| KeyValue {
            key: (*k).to_string(),
            value: Some(any(v)),
            ..Default::default()
        })
        .collect()
}

fn span(s: &Span) -> proto::Span {
    let status = match &s.status {
        SpanStatus::Unset => None,
        SpanStatus::Ok => Some(proto::Status {
            code: proto::status::StatusCode::Ok as i32,
            message: String::new(),
        }),
        SpanStatus::Error(m) => Some(proto::Status {
            code: proto::status::StatusCode::Error as i32,
            message: m.clone(),
        }),
    };
    proto::Span {
        trace_id: s.trace_id.0.to_vec(),
        span_id: s.span_id.0.to_vec(),
        parent_span_id: s.parent.map(|p| p.0.to_vec()).unwrap_or_default(),
        name: s.name.clone(),
        kind: match s.kind {
            SpanKind::Internal => proto::span::SpanKind::Internal as i32,
            SpanKind::Client => proto::span::SpanKind::Client as i32,
        },
        start_time_unix_nano: s.start_ns,
        end_time_unix_nano: s.end_ns,
        attributes: key_values(&s.attributes),
        events: s
            .events
            .iter()
            .map(|e| proto::span::Event {
                time_unix_nano: e.time_ns,
                name: e.name.clone(),
                attributes: key_values(&e.attributes),
                ..Default::default()
            })
            .collect(),
        links: s
            .links
            .iter()
            .map(|l| proto::span::Link {
                trace_id: l.trace_id.0.to_vec(),
                span_id: l.span_id.0.to_vec(),
                attributes: key_values(&l.attributes),
                ..Default::default()
            })
            .collect(),
        status,
        ..Default::default()
    }
}

/// The request carrying `spans`: one resource (`resource` attributes, from
/// `OTEL_SERVICE_NAME`/`OTEL_RESOURCE_ATTRIBUTES` and Logbook's defaults),
/// one scope (`logbook`, with the conventions' schema URL).
pub fn request(spans: &[Span], resource: &[(String, String)]) -> ExportTraceServiceRequest {
    let resource = Resource {
        attributes: resource
            .iter()
            .map(|(k, v)| KeyValue {
                key: k.clone(),
                value: Some(AnyValue {
                    value: Some(any_value::Value::StringValue(v.clone())),
                }),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    };
    ExportTraceServiceRequest {
        resource_spans: vec![proto::ResourceSpans {
            resource: Some(resource),
            scope_spans: vec![proto::ScopeSpans {
                scope: Some(InstrumentationScope {
                    name: "logbook".into(),
                    version: env!("CARGO_PKG_VERSION").into(),
                    attributes: vec![KeyValue {
                        key: "logbook.semconv.version".into(),
                        value: Some(AnyValue {
                            value: Some(any_value::Value::StringValue(SEMCONV_VERSION.into())),
                        }),
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
                spans: spans.iter().map(span).collect(),
                schema_url: SCHEMA_URL.into(),
            }],
            schema_url: SCHEMA_URL.into(),
        }],
    }
}

/// The request's body in `protocol`.
pub fn encode(req: &ExportTraceServiceRequest, protocol: Protocol) -> Result<Vec<u8>, String> {
    match protocol {
        Protocol::HttpProtobuf => Ok(req.encode_to_vec()),
        Protocol::HttpJson => serde_json::to_vec(req).map_err(|e| e.to_string()),
    }
}

/// A receiver's answer, decoded as `protocol`; an empty body is a full
/// success (receivers may send none).
pub fn decode_response(
    body: &[u8],
    protocol: Protocol,
) -> Result<ExportTraceServiceResponse, String> {
    if body.is_empty() {
        return Ok(ExportTraceServiceResponse::default());
    }
    match protocol {
        Protocol::HttpProtobuf => {
            ExportTraceServiceResponse::decode(body).map_err(|e| e.to_string())
        }
        Protocol::HttpJson => serde_json::from_slice(body).map_err(|e| e.to_string()),
    }
}
