//! Explains one JSON-RPC message of a trace by its kind: a request or notification by its method,
//! by who sent it and by what it withdraws or reports on; an answer by `answer_words`.

use serde_json::Value;

use super::content_words as content;
use super::fields::{QUOTE, field_text, mcp, param, param_text, status_message};
use super::lone_hop::request_words;
use super::pairing::{Asked, Pairing, Side, asked_values};
use crate::read::explain_context::ExplainContext;
use crate::{explain::Case, explain::Explained, explain::McpCase, words::shorten};
use tracer_wire::dialect::{JsonRpcKind, McpMessage, ToolCall, ToolCallForm};
use tracer_wire::hop::Transport;

/// Explains one JSON-RPC message of a trace, sent by `side`.
pub(crate) fn explain(
    message: &McpMessage,
    side: Side,
    pairing: &Pairing,
    context: &ExplainContext,
) -> Explained {
    let mut explained = match message.kind {
        JsonRpcKind::Request => request(message, side, pairing),
        JsonRpcKind::Notification => notification(message, pairing),
        JsonRpcKind::Result | JsonRpcKind::Error => {
            super::answer_words::answer(message, pairing, context)
        }
        JsonRpcKind::Invalid => Explained::new(
            Case::HttpRequest,
            &[("detail", "not a JSON-RPC 2.0 message".to_string())],
        ),
    };
    let one_way = matches!(
        message.kind,
        JsonRpcKind::Notification | JsonRpcKind::Result | JsonRpcKind::Error
    );
    if pairing.acknowledged && one_way {
        let status = pairing.status.map_or_else(|| "?".into(), |s| s.to_string());
        explained.note(Case::Mcp(McpCase::NoteAcknowledged), &[("status", status)]);
    } else if message.kind == JsonRpcKind::Notification && pairing.transport == Transport::Stdio {
        explained.note(Case::Mcp(McpCase::NoteStdioNotification), &[]);
    }
    explained
}

fn tool_call(message: &McpMessage) -> String {
    ToolCall {
        id: None,
        name: message.tool_name.clone().unwrap_or_default(),
        arguments: message
            .arguments
            .as_ref()
            .map(content::fold_base64)
            .unwrap_or_default(),
        arguments_invalid: false,
        form: ToolCallForm::Structured,
    }
    .display()
}

fn request(message: &McpMessage, side: Side, pairing: &Pairing) -> Explained {
    let method = message.method.clone().unwrap_or_default();
    let uri = || ("uri", param_text(message, "uri"));
    let task = || ("task", param_text(message, "taskId"));
    match method.as_str() {
        "ping" => mcp(McpCase::Ping, &[]),
        "tools/call" if param(message, "task").is_some() => {
            mcp(McpCase::TaskToolCall, &[("call", tool_call(message))])
        }
        "tools/call" if !pairing.model_in_trace => {
            mcp(McpCase::HostToolCall, &[("call", tool_call(message))])
        }
        "resources/list" => mcp(McpCase::ResourcesList, &[]),
        "resources/templates/list" => mcp(McpCase::TemplatesList, &[]),
        "resources/read" => mcp(McpCase::ResourceRead, &[uri()]),
        "resources/subscribe" => mcp(McpCase::Subscribe, &[uri()]),
        "resources/unsubscribe" => mcp(McpCase::Unsubscribe, &[uri()]),
        "prompts/list" => mcp(McpCase::PromptsList, &[]),
        "prompts/get" => {
            let arguments = match param(message, "arguments") {
                Some(Value::Object(map)) if !map.is_empty() => {
                    format!(" {}", Value::Object(map.clone()))
                }
                _ => String::new(),
            };
            mcp(
                McpCase::PromptGet,
                &[
                    ("name", param_text(message, "name")),
                    ("arguments", arguments),
                ],
            )
        }
        "completion/complete" => {
            let reference = param(message, "ref");
            let reference = reference
                .and_then(|r| r.get("name").or_else(|| r.get("uri")))
                .and_then(Value::as_str)
                .unwrap_or("?")
                .to_string();
            let argument = param(message, "argument");
            mcp(
                McpCase::Complete,
                &[
                    ("reference", reference),
                    ("argument", field_text(argument, "name")),
                    ("value", field_text(argument, "value")),
                ],
            )
        }
        "logging/setLevel" => mcp(
            McpCase::SetLevel,
            &[("level", param_text(message, "level"))],
        ),
        "tasks/get" => mcp(McpCase::TasksGet, &[task()]),
        "tasks/result" => mcp(McpCase::TasksResult, &[task()]),
        "tasks/list" => mcp(McpCase::TasksList, &[]),
        "sampling/createMessage" => {
            let text = param(message, "messages")
                .and_then(Value::as_array)
                .and_then(|m| m.last())
                .and_then(|m| m.get("content"))
                .and_then(|c| c.get("text"))
                .and_then(Value::as_str)
                .unwrap_or("");
            mcp(
                McpCase::Sampling,
                &[
                    ("text", shorten(text, QUOTE)),
                    ("max_tokens", param_text(message, "maxTokens")),
                ],
            )
        }
        "elicitation/create" if param(message, "mode").and_then(Value::as_str) == Some("url") => {
            mcp(
                McpCase::ElicitUrl,
                &[
                    ("url", param_text(message, "url")),
                    ("text", shorten(&param_text(message, "message"), QUOTE)),
                ],
            )
        }
        "elicitation/create" => {
            let fields: Vec<String> = param(message, "requestedSchema")
                .and_then(|s| s.get("properties"))
                .and_then(Value::as_object)
                .map(|p| p.keys().cloned().collect())
                .unwrap_or_default();
            mcp(
                McpCase::ElicitForm,
                &[
                    ("text", shorten(&param_text(message, "message"), QUOTE)),
                    ("fields", shorten(&fields.join(", "), QUOTE)),
                ],
            )
        }
        "roots/list" => mcp(McpCase::RootsList, &[]),
        _ if side == Side::Host => request_words(message),
        _ => Explained::new(Case::McpOtherRequest, &[("method", method)]),
    }
}

fn notification(message: &McpMessage, pairing: &Pairing) -> Explained {
    let method = message.method.clone().unwrap_or_default();
    let asked = |a: Option<&Asked>| asked_values(a);
    match method.as_str() {
        "notifications/initialized" => Explained::new(Case::McpInitialized, &[]),
        "notifications/progress" => {
            let total = param(message, "total").map_or_else(String::new, |t| format!("/{t}"));
            let text = param(message, "message")
                .and_then(Value::as_str)
                .map_or_else(String::new, |m| format!(" \"{}\"", shorten(m, 40)));
            let [number, method] = asked(pairing.progress_of);
            // Progress the server still sends on a call the host withdrew is named as such.
            let (case, cancel) = match pairing.progress_of.and_then(|a| a.withdrawn_in) {
                Some(cancel) => (McpCase::ProgressAfterWithdrawn, cancel.to_string()),
                None => (McpCase::Progress, String::new()),
            };
            mcp(
                case,
                &[
                    ("progress", param_text(message, "progress")),
                    ("total", total),
                    ("message", text),
                    number,
                    method,
                    ("cancel", cancel),
                ],
            )
        }
        "notifications/cancelled" => {
            let reason = param(message, "reason")
                .and_then(Value::as_str)
                .map_or_else(String::new, |r| format!(": {}", shorten(r, 40)));
            let [number, method] = asked(pairing.withdrawn);
            // A cancel sent after the answer came has nothing left to stop.
            match pairing.withdrawn.and_then(|a| a.answered_in) {
                Some(answer) => mcp(
                    McpCase::CancelledAfterAnswer,
                    &[
                        number,
                        method,
                        ("reason", reason),
                        ("answer", answer.to_string()),
                    ],
                ),
                None => mcp(McpCase::Cancelled, &[number, method, ("reason", reason)]),
            }
        }
        "notifications/message" => {
            let data = param(message, "data").map_or_else(String::new, |d| match d {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            });
            let logger = param(message, "logger")
                .and_then(Value::as_str)
                .map_or_else(String::new, |l| format!(" ({l})"));
            mcp(
                McpCase::LogMessage,
                &[
                    ("level", param_text(message, "level")),
                    ("logger", logger),
                    ("text", shorten(&data, QUOTE)),
                ],
            )
        }
        "notifications/resources/updated" => mcp(
            McpCase::ResourceUpdated,
            &[("uri", param_text(message, "uri"))],
        ),
        "notifications/roots/list_changed" => mcp(McpCase::RootsChanged, &[]),
        "notifications/tasks/status" => mcp(
            McpCase::TaskStatus,
            &[
                ("task", param_text(message, "taskId")),
                ("status", param_text(message, "status")),
                ("message", status_message(message.params.as_ref())),
            ],
        ),
        other if other.ends_with("/list_changed") => {
            let what = other
                .trim_start_matches("notifications/")
                .trim_end_matches("/list_changed");
            mcp(McpCase::ListChanged, &[("what", what.to_string())])
        }
        _ => Explained::new(Case::McpNotification, &[("method", method)]),
    }
}
