//! Picks the explanation case of a hop's request and response from its reading, and the values
//! the case's templates name. The words themselves live in `explain::CASES`.

use super::dialect_words;
use super::model_notes::{reply_notes, request_notes, said_before_call, tool_call_words};
use crate::RecordedHop;
use crate::read::explain_context::ExplainContext;
use crate::read::request_anatomy::RequestAnatomy;
use crate::read::side_calls::SideCall;
use crate::{
    explain::Case, explain::Explained, words::human_duration, words::plural, words::shorten,
};
use tracer_wire::dialect::{
    BodyReading, Dialect, HopReading, Integrity, ModelRequest, ModelResponse, Reading, ToolCall,
    ToolCallForm,
};
use tracer_wire::hop::HopState;

/// How long a quoted text may be in a summary line.
const QUOTE: usize = 72;

fn calls_text(calls: &[ToolCall]) -> String {
    calls
        .iter()
        .map(ToolCall::display)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Explains a hop's request; `previous` is the previous model request of the same conversation.
pub fn explain_request(
    hop: &RecordedHop,
    reading: &HopReading,
    previous: Option<&ModelRequest>,
) -> Explained {
    explain_request_in(hop, reading, previous, &ExplainContext::default())
}

/// Explains a hop's request with what its trace tells (`explain_trace` gives it).
pub(crate) fn explain_request_in(
    hop: &RecordedHop,
    reading: &HopReading,
    previous: Option<&ModelRequest>,
    context: &ExplainContext,
) -> Explained {
    if hop.start.method == "CONNECT" {
        // An interception that never got past the handshake names an https:// URL; a tunnel
        // names only the host and port it joined.
        let case = if hop.start.url.starts_with("https://") {
            Case::InterceptHandshake
        } else {
            Case::Tunnel
        };
        return Explained::new(case, &[("target", hop.start.path.clone())]);
    }
    if let Some(step) = crate::read::transport_moves::TransportMove::of(&hop.start) {
        return Explained::new(
            super::describe_streams::request_case(step),
            &[("path", hop.start.path.clone())],
        );
    }
    if let Some(upgrade) = super::ws_words::request(hop) {
        return upgrade;
    }
    let mut explained = match &reading.request.reading {
        other if reading.dialect == Dialect::GeminiCountTokens => {
            dialect_words::count_tokens_request(other, &hop.start.path)
        }
        Reading::AgentRequest(request) => Explained::new(
            Case::AgentRequest,
            &[("text", shorten(&request.message, QUOTE))],
        ),
        Reading::ModelRequest(request) if super::describe_hosts::to_the_host(hop) => {
            super::describe_hosts::host_request(hop, request)
        }
        Reading::ModelRequest(request) => {
            let side = context.side_call_of(&hop.start.id);
            let mut explained = model_request(request, previous, context, reading.dialect, side);
            super::describe_hosts::host_notes(&mut explained, request, context);
            explained
        }
        Reading::Mcp(mcp) => super::mcp::lone_hop::mcp_request(mcp),
        other => dialect_words::code_assist_call(&hop.start.path)
            .or_else(|| dialect_words::agent_endpoint_call(&hop.start))
            .unwrap_or_else(|| match other {
                // A bodiless request's head names it already: its words say what came back.
                Reading::Empty => Explained::new(
                    Case::HttpPlainRequest,
                    &[("detail", super::describe_plain::answer_words(hop))],
                ),
                other => Explained::new(Case::HttpRequest, &[("detail", other_detail(other))]),
            }),
    };
    add_integrity_note(&mut explained, &reading.request);
    super::ws_words::turn_notes(hop, &mut explained);
    super::describe_hosts::housekeeping_note(hop, &mut explained);
    explained
}

fn model_request(
    request: &ModelRequest,
    previous: Option<&ModelRequest>,
    context: &ExplainContext,
    dialect: Dialect,
    side: Option<SideCall>,
) -> Explained {
    let count = request.messages.len();
    let side = side.or_else(|| request.is_side_request().then_some(SideCall::Routing));
    let previous = previous.filter(|_| side.is_none());
    let mut values = vec![
        (
            "model",
            request.model.clone().unwrap_or_else(|| "(no model)".into()),
        ),
        ("messages", plural(count, "message")),
        ("tools", plural(request.tools.len(), "tool")),
        ("count", count.to_string()),
    ];
    let mut explained = match previous {
        _ if count == 0 => Explained::new(Case::ModelLoad, &values),
        _ if side.is_some() => Explained::new(Case::ModelRequest, &values),
        Some(previous) => {
            let added = count.saturating_sub(previous.messages.len());
            values.push(("added", added.to_string()));
            Explained::new(Case::ModelRequestAgain, &values)
        }
        None => Explained::new(Case::ModelRequest, &values),
    };
    if let Some(format) = request
        .answer_format
        .clone()
        .filter(|_| request.is_side_request())
    {
        explained.note(Case::NoteSideRequest, &[("format", format)]);
    } else if let Some(side) = side {
        explained.note(Case::NoteSideCall, &[("what", side.as_str().to_string())]);
    }
    if request.stream {
        explained.note(Case::NoteStreamRequested, &[]);
    }
    if count > 0 {
        let anatomy = RequestAnatomy::of(request, previous, &context.origins);
        request_notes(&mut explained, request, &anatomy, dialect);
    }
    explained
}

/// Explains a hop's response (or its absence: in flight, failed, aborted).
pub fn explain_response(hop: &RecordedHop, reading: &HopReading) -> Explained {
    explain_response_in(hop, reading, &ExplainContext::default())
}

/// Explains a hop's response with what its trace tells (`explain_trace` gives it).
pub(crate) fn explain_response_in(
    hop: &RecordedHop,
    reading: &HopReading,
    context: &ExplainContext,
) -> Explained {
    if let Some(closed) = super::ws_words::response(hop) {
        return closed;
    }
    let end = hop.end.as_ref();
    let error = end.and_then(|e| e.error.clone()).unwrap_or_default();
    if let Some(standing) = super::describe_streams::standing_stream_end(hop) {
        return standing;
    }
    match end.and_then(|e| e.state) {
        Some(HopState::InFlight) => return Explained::new(Case::InFlight, &[]),
        None if end.is_none() => return Explained::new(Case::InFlight, &[]),
        // An interception whose TLS handshake the client refused: nothing reached the upstream.
        Some(HopState::Failed)
            if hop.start.method == "CONNECT" && hop.start.url.starts_with("https://") =>
        {
            return Explained::new(Case::InterceptRefused, &[("error", error)]);
        }
        Some(HopState::Failed) => {
            let status = end.and_then(|e| e.status).unwrap_or(0).to_string();
            let case = if crate::read::failed_hop::answered_by_tracer(hop) {
                Case::Failed
            } else {
                Case::CutOff
            };
            return Explained::new(case, &[("error", error), ("status", status)]);
        }
        Some(HopState::Aborted)
            if crate::read::transport_moves::left_after_ending_session(
                &hop.start,
                Some(HopState::Aborted),
                end.and_then(|e| e.status),
            ) =>
        {
            return Explained::new(Case::McpSessionLeft, &[]);
        }
        Some(HopState::Aborted) => return Explained::new(Case::Aborted, &[("error", error)]),
        _ => {}
    }
    let Some(response) = &reading.response else {
        return Explained::new(Case::InFlight, &[]);
    };
    if let Some(end) = end.filter(|_| hop.start.method == "CONNECT") {
        return Explained::new(
            Case::TunnelClosed,
            &[
                ("up", end.request_body.total_len.to_string()),
                ("down", end.response_body.total_len.to_string()),
            ],
        );
    }
    let status = end.and_then(|e| e.status).unwrap_or(0);
    if let Some(case) = crate::read::transport_moves::TransportMove::of(&hop.start)
        .and_then(|step| super::describe_streams::ordinary_answer_case(step, status))
    {
        return Explained::new(case, &[("status", status.to_string())]);
    }
    let mut explained = match &response.reading {
        Reading::ModelResponse(reply) if super::describe_hosts::to_the_host(hop) => {
            super::describe_hosts::host_reply(reply)
        }
        Reading::ModelResponse(reply) => {
            let side = context.side_call_of(&hop.start.id);
            model_response(reply, hop, reading, side.is_some())
        }
        other if reading.dialect == Dialect::GeminiCountTokens && status < 400 => {
            dialect_words::token_count(other).unwrap_or_else(|| {
                Explained::new(Case::HttpResponse, &[("detail", other_detail(other))])
            })
        }
        Reading::Mcp(mcp) => super::mcp::lone_hop::mcp_response(mcp, context),
        Reading::AgentReply(reply) if reply.error.is_some() && reply.reply.is_empty() => {
            Explained::new(
                Case::AgentError,
                &[("error", reply.error.clone().unwrap_or_default())],
            )
        }
        Reading::AgentReply(reply) => {
            let calls = if reply.tool_calls.is_empty() {
                String::new()
            } else {
                format!(" (tools: {})", calls_text(&reply.tool_calls))
            };
            Explained::new(
                Case::AgentReply,
                &[
                    ("text", shorten(&reply.reply, QUOTE)),
                    ("calls", calls),
                    ("tool_calls", plural(reply.tool_calls.len(), "tool call")),
                ],
            )
        }
        Reading::Empty if reading.dialect == Dialect::Mcp => {
            Explained::new(Case::McpAccepted, &[("status", status.to_string())])
        }
        other => Explained::new(Case::HttpResponse, &[("detail", other_detail(other))]),
    };
    add_integrity_note(&mut explained, response);
    if let Some(note) = end.and_then(|e| e.note.clone()) {
        explained.note(Case::NoteStoppedReading, &[("note", note)]);
    }
    explained
}

fn model_response(
    reply: &ModelResponse,
    hop: &RecordedHop,
    reading: &HopReading,
    side_call: bool,
) -> Explained {
    let calls = &reply.message.tool_calls;
    let side_request = side_call
        || matches!(&reading.request.reading,
        Reading::ModelRequest(request) if request.is_side_request());
    let mut explained = if let Some(error) = &reply.error {
        Explained::new(Case::ModelError, &[("error", shorten(error, QUOTE))])
    } else if calls.iter().any(|c| c.form != ToolCallForm::Structured) {
        let form = match calls.iter().find(|c| c.form != ToolCallForm::Structured) {
            Some(call) if call.form == ToolCallForm::TextTag => "<tool_call> tags",
            _ => "JSON in the text",
        };
        Explained::new(
            Case::ModelTextToolCall,
            &[("calls", calls_text(calls)), ("form", form.to_string())],
        )
    } else if !calls.is_empty() {
        let values = [
            ("calls", calls_text(calls)),
            ("said", said_before_call(&reply.message)),
            (
                "call_form",
                dialect_words::call_form(reading.dialect).into(),
            ),
        ];
        let explained = Explained::new(Case::ModelToolCall, &values);
        match tool_call_words(reading.dialect) {
            Some(words) => explained.in_words_of(words, &values),
            None => explained,
        }
    } else if side_request && !reply.message.content.trim().is_empty() {
        Explained::new(
            Case::ModelSideAnswer,
            &[("text", shorten(&reply.message.content, QUOTE))],
        )
    } else if !reply.message.content.trim().is_empty() {
        Explained::new(
            Case::ModelAnswer,
            &[("text", shorten(&reply.message.content, QUOTE))],
        )
    } else {
        Explained::new(
            Case::ModelEmpty,
            &[(
                "finish",
                reply.finish_reason.clone().unwrap_or_else(|| "none".into()),
            )],
        )
    };
    dialect_words::reply_notes(reading.dialect, reply, &mut explained);
    if reply.error.is_none() {
        reply_notes(&mut explained, &reply.message, reading.dialect);
    }
    if reply.streamed {
        explained.note(
            Case::NoteStreamReassembled,
            &[("records", reply.records.to_string())],
        );
    }
    if let Some(timings) = reply.timings {
        let opt_duration = |ns: Option<u64>| {
            ns.map(|ns| human_duration(i64::try_from(ns).unwrap_or(i64::MAX)))
                .unwrap_or_else(|| "?".into())
        };
        let opt_count = |n: Option<u64>| n.map(|n| n.to_string()).unwrap_or_else(|| "?".into());
        let start = hop.start.started_unix_ns;
        let seen = |at: Option<i64>| {
            at.map(|at| human_duration(at - start))
                .unwrap_or_else(|| "?".into())
        };
        let end = hop.end.as_ref();
        explained.note(
            Case::NoteOllamaTimings,
            &[
                ("load", opt_duration(timings.load_ns)),
                ("prompt_tokens", opt_count(timings.prompt_eval_count)),
                ("prompt_time", opt_duration(timings.prompt_eval_ns)),
                ("output_tokens", opt_count(timings.eval_count)),
                ("output_time", opt_duration(timings.eval_ns)),
                (
                    "rate",
                    timings
                        .tokens_per_second()
                        .map(|r| format!("{r:.1}"))
                        .unwrap_or_else(|| "?".into()),
                ),
                (
                    "first_byte",
                    seen(end.and_then(|e| e.response_first_byte_unix_ns)),
                ),
                ("duration", seen(end.and_then(|e| e.response_ended_unix_ns))),
            ],
        );
    }
    explained
}

fn other_detail(reading: &Reading) -> String {
    match reading {
        Reading::Empty => "no body".into(),
        Reading::Json(value) => shorten(&value.to_string(), QUOTE),
        Reading::Text(text) => shorten(text, QUOTE),
        _ => String::new(),
    }
}

fn add_integrity_note(explained: &mut Explained, body: &BodyReading) {
    match &body.integrity {
        Integrity::Whole => {}
        Integrity::Truncated { kept, total } => explained.note(
            Case::NoteTruncated,
            &[("kept", kept.to_string()), ("total", total.to_string())],
        ),
        Integrity::CutOff => explained.note(Case::NoteCutOff, &[]),
        Integrity::Malformed(detail) => {
            explained.note(Case::NoteMalformed, &[("detail", detail.clone())])
        }
        Integrity::PartlyDecoded(detail) => {
            explained.note(Case::NotePartlyDecoded, &[("detail", detail.clone())])
        }
    }
}
