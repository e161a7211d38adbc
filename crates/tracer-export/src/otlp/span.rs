//! The one span builder: a trace's hops as spans, shared by the OTLP file export, `--push` and
//! the live exporter. Each hop is one span under tracer's trace id; the agent hop that opened the
//! trace, else a synthesized root, is the parent of the others. The root is there even for one
//! hop and its span id comes from the trace id, so a trace that grows after its first spans were
//! sent hangs its new spans under the root already sent: one root per trace, live or from a file.

use super::model::{
    Attribute, Span, SpanEvent, SpanKind, SpanOptions, otlp_span_id, otlp_trace_id, root_span_id,
};
use super::semconv::{self, Draft};
use crate::body_text::TraceToExport;
use tracer_trace::read::tool_links::ToolNames;
use tracer_trace::{Direction, RecordedHop, explain_trace};
use tracer_wire::dialect::{HopReading, Reading, ToolCall};
use tracer_wire::hop::{HopState, Role, Transport};

/// Every span of one trace: the synthesized root first (if any), then one per hop in start order.
pub(crate) fn trace_spans(trace: &TraceToExport<'_>, options: SpanOptions) -> Vec<Span> {
    let trace_id = otlp_trace_id(trace.id);
    let explained = explain_trace(trace.hops);
    let readings: Vec<HopReading> = trace.hops.iter().map(RecordedHop::reading).collect();
    // Each asked call under the name its tools/call runs it by (`append` for
    // `mcp__notes__append`), so the call id links the two whatever the host named the tool.
    let names = ToolNames::of_trace(trace.hops, &readings);
    let called: Vec<String> = readings
        .iter()
        .filter_map(|r| match &r.request.reading {
            Reading::Mcp(mcp) => mcp.request().and_then(|m| m.tool_name.clone()),
            _ => None,
        })
        .collect();
    let asked: Vec<ToolCall> = readings
        .iter()
        .filter_map(|r| match r.response.as_ref().map(|b| &b.reading) {
            Some(Reading::ModelResponse(answer)) => Some(answer.message.tool_calls.clone()),
            _ => None,
        })
        .flatten()
        .map(|call| on_server(call, &names, &called))
        .collect();
    // The agent hop is the root only when it opened the trace (started first): an agent hop that
    // joins later (by traceparent) may come after spans already sent under the synthesized root.
    let agent = trace
        .hops
        .iter()
        .min_by_key(|hop| hop.start.started_unix_ns)
        .filter(|hop| hop.start.role == Role::Agent);
    let mut spans = Vec::new();
    let parent = match agent {
        Some(hop) => Some(otlp_span_id(&hop.start.id)),
        None if trace.hops.is_empty() => None,
        None => {
            let root = root_span(trace, &trace_id, &readings, options);
            let id = root.span_id.clone();
            spans.push(root);
            Some(id)
        }
    };
    let mut order: Vec<usize> = (0..trace.hops.len()).collect();
    order.sort_by_key(|&i| trace.hops[i].start.started_unix_ns);
    for index in order {
        let hop = &trace.hops[index];
        let mut span = hop_span(hop, &readings[index], &trace_id, &asked, options);
        span.parent_span_id = parent.clone().filter(|p| *p != span.span_id);
        span.attributes
            .push(Attribute::text("tracer.trace.id", trace.id));
        span.attributes.extend(session_attributes(trace));
        for message in explained.iter().filter(|m| m.hop_index == index) {
            let prefix = match message.direction {
                Direction::Request => "tracer.request",
                Direction::Response => "tracer.response",
            };
            span.attributes.push(Attribute::int(
                &format!("{prefix}.number"),
                message.number as i64,
            ));
            if options.content {
                span.attributes.push(Attribute::text(
                    &format!("{prefix}.summary"),
                    message.summary.clone(),
                ));
            }
        }
        spans.push(span);
    }
    super::agent_events::add(&mut spans, trace.agent_events);
    spans
}

/// A model's call renamed to the `tools/call` name that runs it, if one of `called` does.
fn on_server(mut call: ToolCall, names: &ToolNames, called: &[String]) -> ToolCall {
    if let Some(name) = called.iter().find(|name| names.runs(&call.name, name)) {
        call.name = name.clone();
    }
    call
}

/// The root of a trace no agent hop opened: the agent's turn (when a model was asked), else
/// the discovery the hops did; it spans the first start to the last end of the hops given (the
/// live exporter sends it once, with the hops known then).
fn root_span(
    trace: &TraceToExport<'_>,
    trace_id: &str,
    readings: &[HopReading],
    options: SpanOptions,
) -> Span {
    let start = trace
        .hops
        .iter()
        .map(|h| h.start.started_unix_ns)
        .min()
        .unwrap_or(0);
    let end = trace.hops.iter().map(hop_end).max().unwrap_or(start);
    let asked_model = readings
        .iter()
        .any(|r| matches!(r.request.reading, Reading::ModelRequest(_)));
    let mut attributes = vec![Attribute::boolean("tracer.span.synthesized", true)];
    let name = if asked_model {
        attributes.push(Attribute::text("gen_ai.operation.name", "invoke_agent"));
        attributes.push(Attribute::text("openinference.span.kind", "AGENT"));
        if let (true, Some(title)) = (options.content, trace.title) {
            attributes.push(Attribute::text("input.value", title));
            attributes.push(Attribute::text("input.mime_type", "text/plain"));
        }
        "invoke_agent"
    } else {
        attributes.push(Attribute::text("openinference.span.kind", "CHAIN"));
        "discovery"
    };
    attributes.push(Attribute::text("tracer.trace.id", trace.id));
    attributes.extend(session_attributes(trace));
    Span {
        trace_id: trace_id.to_string(),
        span_id: root_span_id(trace_id),
        parent_span_id: None,
        name: name.to_string(),
        kind: SpanKind::Internal,
        start_unix_ns: start,
        end_unix_ns: end.max(start),
        attributes,
        events: Vec::new(),
        error: None,
        hop_id: None,
    }
}

/// OpenTelemetry's `session.id`: the host's own id of its run where it sent one (the id its own
/// telemetry carries), else tracer's; and tracer's own session id.
fn session_attributes(trace: &TraceToExport<'_>) -> Vec<Attribute> {
    let Some(session) = trace.session else {
        return Vec::new();
    };
    let shown = session.host_session_id.as_deref().unwrap_or(&session.id);
    vec![
        Attribute::text("session.id", shown),
        Attribute::text("tracer.session.id", &session.id),
    ]
}

/// When a hop ended (its start while it has not).
fn hop_end(hop: &RecordedHop) -> i64 {
    hop.end
        .as_ref()
        .and_then(|e| e.response_ended_unix_ns.or(e.response_head_unix_ns))
        .unwrap_or(hop.start.started_unix_ns)
        .max(hop.start.started_unix_ns)
}

/// The span of one hop: name, kind, times, attributes and status.
fn hop_span(
    hop: &RecordedHop,
    reading: &HopReading,
    trace_id: &str,
    asked: &[ToolCall],
    options: SpanOptions,
) -> Span {
    let start = &hop.start;
    let end = hop.end.as_ref();
    let mut draft = Draft {
        name: format!("{} {}", start.method, start.path),
        kind: SpanKind::Client,
        attributes: vec![
            Attribute::text("tracer.hop.id", start.id.clone()),
            Attribute::text("tracer.route", start.route.clone()),
            Attribute::text("tracer.role", start.role.as_str()),
            Attribute::text("tracer.dialect", reading.dialect.as_str()),
        ],
        error: None,
    };
    if start.transport == Transport::Http {
        semconv::http(&mut draft, start, end);
    } else {
        draft
            .attributes
            .push(Attribute::text("network.transport", "pipe"));
    }
    let response = reading.response.as_ref().map(|r| &r.reading);
    match &reading.request.reading {
        Reading::ModelRequest(request) => {
            semconv::model(&mut draft, hop, reading.dialect, request, response, options)
        }
        Reading::Mcp(mcp) => semconv::mcp(&mut draft, hop, mcp, response, asked, options),
        Reading::AgentRequest(request) => {
            semconv::agent(&mut draft, hop, request, response, options)
        }
        _ => draft
            .attributes
            .push(Attribute::text("openinference.span.kind", "CHAIN")),
    }
    if let Some(state @ (HopState::Failed | HopState::Aborted)) = end.and_then(|e| e.state) {
        let message = end.and_then(|e| e.error.clone()).unwrap_or_default();
        draft.error = Some((state.as_str().to_string(), message));
    }
    let mut error = None;
    if let Some((error_type, message)) = draft.error {
        draft
            .attributes
            .push(Attribute::text("error.type", error_type));
        error = Some(message);
    }
    let mut events: Vec<SpanEvent> = end
        .and_then(|e| e.response_first_byte_unix_ns)
        .map(|at| SpanEvent {
            at_unix_ns: at,
            name: "first_byte".to_string(),
            attributes: Vec::new(),
        })
        .into_iter()
        .collect();
    events.extend(super::ws_events::message_events(hop));
    Span {
        trace_id: trace_id.to_string(),
        span_id: otlp_span_id(&start.id),
        parent_span_id: None,
        name: draft.name,
        kind: draft.kind,
        start_unix_ns: start.started_unix_ns,
        end_unix_ns: hop_end(hop),
        attributes: draft.attributes,
        events,
        error,
        hop_id: Some(start.id.clone()),
    }
}
