//! A lone MCP hop explained outside a trace (`explain_request`, `explain_response`): its first
//! request or notification, and its reply read by its fields.

use crate::explain::model_notes::handoff_note;
use crate::read::explain_context::ExplainContext;
use crate::{explain::Case, explain::Explained, words::shorten};
use tracer_wire::dialect::{JsonRpcKind, McpMessage, McpReading, ToolCall, ToolCallForm};

use super::fields::QUOTE;

/// A lone hop's MCP request (outside a trace): its first request or notification.
pub(crate) fn mcp_request(mcp: &McpReading) -> Explained {
    match mcp.request() {
        Some(message) => request_words(message),
        None => Explained::new(Case::HttpRequest, &[("detail", "JSON-RPC".to_string())]),
    }
}

/// A request or notification told by its method alone, as for a lone hop (also inside a trace,
/// for a host's request the trace's words do not know).
pub(crate) fn request_words(message: &McpMessage) -> Explained {
    let method = message.method.clone().unwrap_or_default();
    match method.as_str() {
        "server/discover" => Explained::new(Case::McpDiscover, &[]),
        "initialize" => Explained::new(
            Case::McpInitialize,
            &[(
                "version",
                message
                    .protocol_version
                    .clone()
                    .unwrap_or_else(|| "?".into()),
            )],
        ),
        "notifications/initialized" => Explained::new(Case::McpInitialized, &[]),
        "tools/list" => Explained::new(Case::McpToolsList, &[]),
        "tools/call" => {
            let call = ToolCall {
                id: None,
                name: message.tool_name.clone().unwrap_or_default(),
                arguments: message.arguments.clone().unwrap_or_default(),
                arguments_invalid: false,
                form: ToolCallForm::Structured,
            };
            Explained::new(Case::McpToolCall, &[("call", call.display())])
        }
        _ if message.kind == JsonRpcKind::Notification => {
            Explained::new(Case::McpNotification, &[("method", method)])
        }
        _ => Explained::new(Case::McpOtherRequest, &[("method", method)]),
    }
}

/// A lone hop's MCP answer (outside a trace): its reply, read by its fields.
pub(crate) fn mcp_response(mcp: &McpReading, context: &ExplainContext) -> Explained {
    match mcp.reply() {
        Some(reply) => answer_words(reply, context),
        None => Explained::new(Case::McpOtherResult, &[]),
    }
}

/// A result or error told by its fields alone, as for a lone hop (also inside a trace, for an
/// answer whose request is not in it, or that the trace's words leave to its fields).
pub(crate) fn answer_words(reply: &McpMessage, context: &ExplainContext) -> Explained {
    if reply.kind == JsonRpcKind::Error {
        return Explained::new(
            Case::McpProtocolError,
            &[
                (
                    "code",
                    reply.error_code.map(|c| c.to_string()).unwrap_or_default(),
                ),
                ("message", reply.error_message.clone().unwrap_or_default()),
            ],
        );
    }
    if reply.result_type.as_deref() == Some("input_required") {
        return Explained::new(Case::McpInputRequired, &[]);
    }
    let text = shorten(reply.result_text.as_deref().unwrap_or_default(), QUOTE);
    if reply.is_error {
        let mut explained = Explained::new(Case::McpToolError, &[("text", text)]);
        if let Some(note) = handoff_note(context.model_dialect, true) {
            explained.note(note, &[]);
        }
        return explained;
    }
    if !reply.tools.is_empty() {
        return Explained::new(
            Case::McpToolsListResult,
            &[
                ("count", reply.tools.len().to_string()),
                ("names", reply.tools.join(", ")),
            ],
        );
    }
    if reply.result_text.is_some() {
        let mut explained = Explained::new(Case::McpToolResult, &[("text", text)]);
        if let Some(note) = handoff_note(context.model_dialect, false) {
            explained.note(note, &[]);
        }
        return explained;
    }
    if !reply.supported_versions.is_empty() {
        return Explained::new(
            Case::McpDiscoverResult,
            &[("versions", reply.supported_versions.join(", "))],
        );
    }
    match &reply.protocol_version {
        Some(version) => Explained::new(Case::McpInitializeResult, &[("version", version.clone())]),
        None => Explained::new(Case::McpOtherResult, &[]),
    }
}
