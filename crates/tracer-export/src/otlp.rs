//! OpenTelemetry out: one span builder (`span`) over the span model (`model`), encoded as
//! OTLP/JSON (`json`, the file export and the `http/json` protocol) or protobuf (`proto`,
//! `--protobuf` and the live exporter). One span per hop under the recorded trace id.

mod agent_events;
mod content;
pub(crate) mod json;
pub mod model;
pub(crate) mod proto;
mod semconv;
pub(crate) mod span;
#[cfg(test)]
mod span_tests;
mod token_attrs;
mod ws_events;

use serde_json::Value;

use super::body_text::TraceToExport;
pub use model::SpanOptions;
pub(crate) use model::{Resource, Span};
pub(crate) use span::trace_spans;

/// Every span of the given traces.
pub fn spans_of(traces: &[TraceToExport<'_>], options: SpanOptions) -> Vec<Span> {
    traces
        .iter()
        .flat_map(|t| trace_spans(t, options))
        .collect()
}

/// An OTLP/JSON `ExportTraceServiceRequest` with every hop of the given traces as a span.
pub fn otlp_document(traces: &[TraceToExport<'_>], options: SpanOptions) -> Value {
    json::document(&Resource::default(), &spans_of(traces, options))
}

/// The same request as protobuf bytes (`application/x-protobuf`).
pub fn otlp_protobuf(traces: &[TraceToExport<'_>], options: SpanOptions) -> Vec<u8> {
    proto::encode(&Resource::default(), &spans_of(traces, options))
}

/// How an export request body is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// `application/x-protobuf` (OTLP's default `http/protobuf`).
    Protobuf,
    /// `application/json` (`http/json`).
    Json,
}

impl Encoding {
    pub(crate) fn content_type(self) -> &'static str {
        match self {
            Encoding::Protobuf => "application/x-protobuf",
            Encoding::Json => "application/json",
        }
    }

    /// The body of one export request holding `spans`.
    pub(crate) fn body(self, resource: &Resource, spans: &[Span]) -> Vec<u8> {
        match self {
            Encoding::Protobuf => proto::encode(resource, spans),
            Encoding::Json => json::document(resource, spans).to_string().into_bytes(),
        }
    }
}
