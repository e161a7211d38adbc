//! OTLP protobuf encoding of the span model: the few messages of
//! `opentelemetry/proto/collector/trace/v1/trace_service.proto` (and the trace, common and
//! resource messages it uses) as prost structs, with the field numbers of the .proto files.

use prost::Message;

use super::model::{self, AttrValue, SCOPE_NAME, SCOPE_VERSION, hex_bytes};

#[derive(Clone, PartialEq, Message)]
pub(crate) struct ExportTraceServiceRequest {
    #[prost(message, repeated, tag = "1")]
    pub(crate) resource_spans: Vec<ResourceSpans>,
}

#[derive(Clone, PartialEq, Message)]
struct ExportTraceServiceResponse {
    #[prost(message, optional, tag = "1")]
    partial_success: Option<ExportTracePartialSuccess>,
}

#[derive(Clone, PartialEq, Message)]
struct ExportTracePartialSuccess {
    #[prost(int64, tag = "1")]
    rejected_spans: i64,
    #[prost(string, tag = "2")]
    pub(crate) error_message: String,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct ResourceSpans {
    #[prost(message, optional, tag = "1")]
    pub(crate) resource: Option<Resource>,
    #[prost(message, repeated, tag = "2")]
    pub(crate) scope_spans: Vec<ScopeSpans>,
    #[prost(string, tag = "3")]
    schema_url: String,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct Resource {
    #[prost(message, repeated, tag = "1")]
    pub(crate) attributes: Vec<KeyValue>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct ScopeSpans {
    #[prost(message, optional, tag = "1")]
    pub(crate) scope: Option<InstrumentationScope>,
    #[prost(message, repeated, tag = "2")]
    pub(crate) spans: Vec<Span>,
    #[prost(string, tag = "3")]
    schema_url: String,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct InstrumentationScope {
    #[prost(string, tag = "1")]
    pub(crate) name: String,
    #[prost(string, tag = "2")]
    pub(crate) version: String,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct Span {
    #[prost(bytes = "vec", tag = "1")]
    pub(crate) trace_id: Vec<u8>,
    #[prost(bytes = "vec", tag = "2")]
    pub(crate) span_id: Vec<u8>,
    #[prost(bytes = "vec", tag = "4")]
    pub(crate) parent_span_id: Vec<u8>,
    #[prost(string, tag = "5")]
    pub(crate) name: String,
    /// `Span.SpanKind`: 1 internal, 2 server, 3 client.
    #[prost(int32, tag = "6")]
    pub(crate) kind: i32,
    #[prost(fixed64, tag = "7")]
    start_time_unix_nano: u64,
    #[prost(fixed64, tag = "8")]
    end_time_unix_nano: u64,
    #[prost(message, repeated, tag = "9")]
    pub(crate) attributes: Vec<KeyValue>,
    #[prost(message, repeated, tag = "11")]
    pub events: Vec<Event>,
    #[prost(message, optional, tag = "15")]
    pub(crate) status: Option<Status>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct Event {
    #[prost(fixed64, tag = "1")]
    time_unix_nano: u64,
    #[prost(string, tag = "2")]
    pub(crate) name: String,
    #[prost(message, repeated, tag = "3")]
    pub(crate) attributes: Vec<KeyValue>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct Status {
    #[prost(string, tag = "2")]
    pub(crate) message: String,
    /// `Status.StatusCode`: 0 unset, 1 ok, 2 error.
    #[prost(int32, tag = "3")]
    pub(crate) code: i32,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct KeyValue {
    #[prost(string, tag = "1")]
    pub(crate) key: String,
    #[prost(message, optional, tag = "2")]
    pub(crate) value: Option<AnyValue>,
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct AnyValue {
    #[prost(oneof = "any_value::Value", tags = "1, 2, 3, 4, 5")]
    pub(crate) value: Option<any_value::Value>,
}

mod any_value {
    // The variants are named as OTLP's `AnyValue` oneof names them (common.proto).
    #[allow(clippy::enum_variant_names)]
    #[derive(Clone, PartialEq, prost::Oneof)]
    pub(crate) enum Value {
        #[prost(string, tag = "1")]
        StringValue(String),
        #[prost(bool, tag = "2")]
        BoolValue(bool),
        #[prost(int64, tag = "3")]
        IntValue(i64),
        #[prost(double, tag = "4")]
        DoubleValue(f64),
        #[prost(message, tag = "5")]
        ArrayValue(super::ArrayValue),
    }
}

#[derive(Clone, PartialEq, Message)]
pub(crate) struct ArrayValue {
    #[prost(message, repeated, tag = "1")]
    pub(crate) values: Vec<AnyValue>,
}

/// The protobuf body of a `POST /v1/traces` holding `spans` under one resource and one scope.
pub(crate) fn encode(resource: &model::Resource, spans: &[model::Span]) -> Vec<u8> {
    request(resource, spans).encode_to_vec()
}

/// The `ExportTraceServiceRequest` for `spans`.
pub(crate) fn request(
    resource: &model::Resource,
    spans: &[model::Span],
) -> ExportTraceServiceRequest {
    ExportTraceServiceRequest {
        resource_spans: vec![ResourceSpans {
            resource: Some(Resource {
                attributes: resource.attributes.iter().map(key_value).collect(),
            }),
            scope_spans: vec![ScopeSpans {
                scope: Some(InstrumentationScope {
                    name: SCOPE_NAME.to_string(),
                    version: SCOPE_VERSION.to_string(),
                }),
                spans: spans.iter().map(span).collect(),
                schema_url: String::new(),
            }],
            schema_url: String::new(),
        }],
    }
}

/// What a receiver's `ExportTraceServiceResponse` says it rejected: (spans, message), if any.
pub(crate) fn rejected(body: &[u8]) -> Option<(i64, String)> {
    let response = ExportTraceServiceResponse::decode(body).ok()?;
    let partial = response.partial_success?;
    (partial.rejected_spans > 0 || !partial.error_message.is_empty())
        .then_some((partial.rejected_spans, partial.error_message))
}

fn span(span: &model::Span) -> Span {
    Span {
        trace_id: hex_bytes(&span.trace_id),
        span_id: hex_bytes(&span.span_id),
        parent_span_id: span
            .parent_span_id
            .as_deref()
            .map(hex_bytes)
            .unwrap_or_default(),
        name: span.name.clone(),
        kind: span.kind as i32,
        start_time_unix_nano: u64::try_from(span.start_unix_ns).unwrap_or(0),
        end_time_unix_nano: u64::try_from(span.end_unix_ns).unwrap_or(0),
        attributes: span.attributes.iter().map(key_value).collect(),
        events: span
            .events
            .iter()
            .map(|e| Event {
                time_unix_nano: u64::try_from(e.at_unix_ns).unwrap_or(0),
                name: e.name.clone(),
                attributes: e.attributes.iter().map(key_value).collect(),
            })
            .collect(),
        status: Some(match &span.error {
            Some(message) => Status {
                message: message.clone(),
                code: 2,
            },
            None => Status::default(),
        }),
    }
}

fn key_value(attribute: &model::Attribute) -> KeyValue {
    KeyValue {
        key: attribute.key.clone(),
        value: Some(any(&attribute.value)),
    }
}

fn any(value: &AttrValue) -> AnyValue {
    use any_value::Value;
    let value = match value {
        AttrValue::Str(text) => Value::StringValue(text.clone()),
        AttrValue::Int(n) => Value::IntValue(*n),
        AttrValue::Double(x) => Value::DoubleValue(*x),
        AttrValue::Bool(b) => Value::BoolValue(*b),
        AttrValue::Strs(values) => Value::ArrayValue(ArrayValue {
            values: values
                .iter()
                .map(|v| AnyValue {
                    value: Some(Value::StringValue(v.clone())),
                })
                .collect(),
        }),
    };
    AnyValue { value: Some(value) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::otlp::model::{Attribute, SpanKind};

    #[test]
    fn a_request_round_trips_through_the_wire_format() {
        let span = model::Span {
            trace_id: "0af7651916cd43dd8448eb211c80319c".into(),
            span_id: "b7ad6b7169203331".into(),
            parent_span_id: None,
            name: "chat qwen2.5:7b".into(),
            kind: SpanKind::Client,
            start_unix_ns: 10,
            end_unix_ns: 20,
            attributes: vec![Attribute::int("gen_ai.usage.input_tokens", 402)],
            events: Vec::new(),
            error: Some("boom".into()),
            hop_id: None,
        };
        let bytes = encode(&model::Resource::default(), &[span]);
        let back = ExportTraceServiceRequest::decode(bytes.as_slice()).unwrap();
        let decoded = &back.resource_spans[0].scope_spans[0].spans[0];
        assert_eq!(decoded.trace_id.len(), 16);
        assert_eq!(
            decoded.span_id,
            vec![0xb7, 0xad, 0x6b, 0x71, 0x69, 0x20, 0x33, 0x31]
        );
        assert_eq!(decoded.kind, 3);
        assert_eq!(decoded.status.as_ref().unwrap().code, 2);
        assert_eq!(
            decoded.attributes[0].value,
            Some(AnyValue {
                value: Some(any_value::Value::IntValue(402))
            })
        );
    }

    #[test]
    fn partial_success_is_read_from_the_response() {
        let response = ExportTraceServiceResponse {
            partial_success: Some(ExportTracePartialSuccess {
                rejected_spans: 2,
                error_message: "too old".into(),
            }),
        };
        assert_eq!(
            rejected(&response.encode_to_vec()),
            Some((2, "too old".to_string()))
        );
        assert_eq!(rejected(&[]), None);
    }
}
