//! OTLP/JSON (`resourceSpans`): one span per hop under the recorded trace id, with the
//! OpenTelemetry GenAI attributes on model hops and the MCP ones on tool hops.

use serde_json::{Value, json};

use super::body_text::TraceToExport;
use crate::hop::{HopState, Role, Transport};
use crate::trace::{Direction, RecordedHop, explain_trace};
use crate::wire::dialect::{Dialect, JsonRpcKind, Reading};

/// OTLP span kinds (`opentelemetry.proto.trace.v1.Span.SpanKind`).
const SPAN_KIND_SERVER: u8 = 2;
const SPAN_KIND_CLIENT: u8 = 3;
/// OTLP status codes.
const STATUS_ERROR: u8 = 2;

/// An OTLP/JSON `ExportTraceServiceRequest` with every hop of the given traces as a span.
pub fn otlp_document(traces: &[TraceToExport<'_>]) -> Value {
    let spans: Vec<Value> = traces.iter().flat_map(|t| trace_spans(t)).collect();
    json!({
        "resourceSpans": [{
            "resource": { "attributes": [ attribute("service.name", json!({ "stringValue": "tracer" })) ] },
            "scopeSpans": [{
                "scope": { "name": "tracer", "version": env!("CARGO_PKG_VERSION") },
                "spans": spans,
            }],
        }]
    })
}

/// 32 lower-case hex digits: the id itself when it is one, else a stable hash of it.
pub fn otlp_trace_id(id: &str) -> String {
    if is_hex_id(id, 32) {
        id.to_string()
    } else {
        format!("{:016x}{:016x}", fnv1a(id, 0), fnv1a(id, 1))
    }
}

/// 16 lower-case hex digits for a hop id (its first half when it is a 32-digit hex id).
pub fn otlp_span_id(hop_id: &str) -> String {
    if is_hex_id(hop_id, 32) || is_hex_id(hop_id, 16) {
        let id = &hop_id[..16];
        if id.bytes().any(|b| b != b'0') {
            return id.to_string();
        }
    }
    format!("{:016x}", fnv1a(hop_id, 2).max(1))
}

fn is_hex_id(id: &str, len: usize) -> bool {
    id.len() == len
        && id
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        && id.bytes().any(|b| b != b'0')
}

fn fnv1a(text: &str, salt: u8) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in std::iter::once(salt).chain(text.bytes()) {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

fn attribute(key: &str, value: Value) -> Value {
    json!({ "key": key, "value": value })
}

fn text(key: &str, value: impl Into<String>) -> Value {
    attribute(key, json!({ "stringValue": value.into() }))
}

fn int(key: &str, value: i64) -> Value {
    attribute(key, json!({ "intValue": value.to_string() }))
}

fn boolean(key: &str, value: bool) -> Value {
    attribute(key, json!({ "boolValue": value }))
}

fn strings(key: &str, values: &[String]) -> Value {
    let values: Vec<Value> = values.iter().map(|v| json!({ "stringValue": v })).collect();
    attribute(key, json!({ "arrayValue": { "values": values } }))
}

fn provider(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::OpenAiChat | Dialect::OpenAiResponses => "openai",
        Dialect::AnthropicMessages => "anthropic",
        _ => "ollama",
    }
}

fn trace_spans(trace: &TraceToExport<'_>) -> Vec<Value> {
    let trace_id = otlp_trace_id(trace.id);
    let explained = explain_trace(trace.hops);
    let root = trace.hops.iter().find(|hop| hop.start.role == Role::Agent);
    let root_span = root.map(|hop| otlp_span_id(&hop.start.id));
    let mut ordered: Vec<(usize, &RecordedHop)> = trace.hops.iter().enumerate().collect();
    ordered.sort_by_key(|(_, hop)| hop.start.started_unix_ns);
    ordered
        .into_iter()
        .map(|(index, hop)| {
            let mut span = hop_span(hop, &trace_id);
            let span_id = otlp_span_id(&hop.start.id);
            if let Some(object) = span.as_object_mut() {
                if let Some(parent) = root_span.as_ref().filter(|p| **p != span_id) {
                    object.insert("parentSpanId".into(), json!(parent));
                }
                if let Some(Value::Array(attributes)) = object.get_mut("attributes") {
                    attributes.push(text("tracer.trace.id", trace.id));
                    for message in explained.iter().filter(|m| m.hop_index == index) {
                        let prefix = match message.direction {
                            Direction::Request => "tracer.request",
                            Direction::Response => "tracer.response",
                        };
                        attributes.push(int(&format!("{prefix}.number"), message.number as i64));
                        attributes
                            .push(text(&format!("{prefix}.summary"), message.summary.clone()));
                    }
                }
            }
            span
        })
        .collect()
}

/// The span of one hop: name, kind, times, attributes and status.
pub fn hop_span(hop: &RecordedHop, trace_id: &str) -> Value {
    let start = &hop.start;
    let end = hop.end.as_ref();
    let reading = hop.reading();
    let mut attributes = vec![
        text("tracer.hop.id", start.id.clone()),
        text("tracer.route", start.route.clone()),
        text("tracer.role", start.role.as_str()),
        text("tracer.dialect", reading.dialect.as_str()),
    ];
    let mut error: Option<(String, String)> = None;
    let mut name = format!("{} {}", start.method, start.path);
    let mut kind = SPAN_KIND_CLIENT;
    if start.transport == Transport::Http {
        attributes.push(text("http.request.method", start.method.clone()));
        attributes.push(text("url.full", start.url.clone()));
        attributes.push(text("network.transport", "tcp"));
        if let Some(status) = end.and_then(|e| e.status) {
            attributes.push(int("http.response.status_code", i64::from(status)));
            if status >= 400 {
                error = Some((status.to_string(), format!("HTTP {status}")));
            }
        }
    } else {
        attributes.push(text("network.transport", "pipe"));
    }
    match (
        &reading.request.reading,
        reading.response.as_ref().map(|r| &r.reading),
    ) {
        (Reading::ChatRequest(request), response) => {
            let model = request.model.clone().unwrap_or_default();
            name = format!("chat {model}").trim_end().to_string();
            attributes.push(text("gen_ai.operation.name", "chat"));
            attributes.push(text("gen_ai.provider.name", provider(reading.dialect)));
            if !model.is_empty() {
                attributes.push(text("gen_ai.request.model", model));
            }
            attributes.push(boolean("gen_ai.request.stream", request.stream));
            if let Some(Reading::ChatResponse(answer)) = response {
                if let Some(model) = &answer.model {
                    attributes.push(text("gen_ai.response.model", model.clone()));
                }
                if let Some(reason) = &answer.finish_reason {
                    attributes.push(strings(
                        "gen_ai.response.finish_reasons",
                        std::slice::from_ref(reason),
                    ));
                }
                if let Some(tokens) = answer.usage.input_tokens {
                    attributes.push(int("gen_ai.usage.input_tokens", tokens as i64));
                }
                if let Some(tokens) = answer.usage.output_tokens {
                    attributes.push(int("gen_ai.usage.output_tokens", tokens as i64));
                }
                let calls: Vec<String> = answer
                    .message
                    .tool_calls
                    .iter()
                    .map(|c| c.name.clone())
                    .collect();
                if !calls.is_empty() {
                    attributes.push(strings("tracer.tool_calls", &calls));
                }
                if let Some(message) = &answer.error {
                    error = Some(("model_error".into(), message.clone()));
                }
            }
            if request.stream
                && let Some(first) = end.and_then(|e| e.response_first_byte_unix_ns)
            {
                let seconds = (first - start.started_unix_ns).max(0) as f64 / 1e9;
                attributes.push(attribute(
                    "gen_ai.response.time_to_first_chunk",
                    json!({ "doubleValue": seconds }),
                ));
            }
        }
        (Reading::Mcp(mcp), response) => {
            if let Some(message) = mcp.request() {
                let method = message.method.clone().unwrap_or_default();
                attributes.push(text("mcp.method.name", method.clone()));
                if let Some(id) = message.id_text() {
                    attributes.push(text("jsonrpc.request.id", id));
                }
                if let Some(version) = &message.protocol_version {
                    attributes.push(text("mcp.protocol.version", version.clone()));
                }
                name = method.clone();
                if method == "tools/call"
                    && let Some(tool) = &message.tool_name
                {
                    name = format!("execute_tool {tool}");
                    attributes.push(text("gen_ai.operation.name", "execute_tool"));
                    attributes.push(text("gen_ai.tool.name", tool.clone()));
                    if let Some(arguments) = &message.arguments {
                        attributes.push(text("gen_ai.tool.call.arguments", arguments.to_string()));
                    }
                }
            }
            if let Some(session) = crate::hop::header_text(&start.request_headers, "mcp-session-id")
            {
                attributes.push(text("mcp.session.id", session));
            }
            if let Some(Reading::Mcp(reply)) = response
                && let Some(reply) = reply.reply()
            {
                if reply.kind == JsonRpcKind::Error {
                    let code = reply.error_code.unwrap_or(0);
                    attributes.push(int("rpc.response.status_code", code));
                    error = Some((
                        code.to_string(),
                        reply.error_message.clone().unwrap_or_default(),
                    ));
                } else if reply.is_error {
                    error = Some((
                        "tool_error".into(),
                        reply.result_text.clone().unwrap_or_default(),
                    ));
                }
                if let Some(result) = &reply.result_text {
                    attributes.push(text("gen_ai.tool.call.result", result.clone()));
                }
            }
        }
        (Reading::AgentRequest(request), _) => {
            name = "invoke_agent".to_string();
            kind = SPAN_KIND_SERVER;
            attributes.push(text("gen_ai.operation.name", "invoke_agent"));
            attributes.push(text("tracer.agent.message", request.message.clone()));
        }
        _ => {}
    }
    if let Some(state @ (HopState::Failed | HopState::Aborted)) = end.and_then(|e| e.state) {
        let message = end.and_then(|e| e.error.clone()).unwrap_or_default();
        error = Some((state.as_str().to_string(), message));
    }
    let mut status = json!({});
    if let Some((error_type, message)) = error {
        attributes.push(text("error.type", error_type));
        status = json!({ "code": STATUS_ERROR, "message": message });
    }
    let end_ns = end
        .and_then(|e| e.response_ended_unix_ns.or(e.response_head_unix_ns))
        .unwrap_or(start.started_unix_ns)
        .max(start.started_unix_ns);
    let events: Vec<Value> = end.map_or_else(Vec::new, |e| {
        e.response_first_byte_unix_ns
            .map(|at| json!({ "timeUnixNano": at.to_string(), "name": "first_byte", "attributes": [] }))
            .into_iter()
            .collect()
    });
    json!({
        "traceId": trace_id,
        "spanId": otlp_span_id(&start.id),
        "name": name,
        "kind": kind,
        "startTimeUnixNano": start.started_unix_ns.to_string(),
        "endTimeUnixNano": end_ns.to_string(),
        "attributes": attributes,
        "events": events,
        "status": status,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_kept_when_valid_and_hashed_otherwise() {
        let id = "0af7651916cd43dd8448eb211c80319c";
        assert_eq!(otlp_trace_id(id), id);
        assert_eq!(otlp_span_id(id), "0af7651916cd43dd");
        let hashed = otlp_trace_id("setup-1");
        assert_eq!(hashed.len(), 32);
        assert_eq!(hashed, otlp_trace_id("setup-1"));
        assert_ne!(otlp_span_id("a"), otlp_span_id("b"));
        assert_eq!(otlp_span_id("a").len(), 16);
    }
}
