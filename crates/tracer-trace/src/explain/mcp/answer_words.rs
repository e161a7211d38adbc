//! Explains an MCP answer inside a trace by the request it answers: what each method gives back
//! (resources, prompts, completions, tasks, the host's answers to sampling, elicitation and roots),
//! rich tool results in words, and the errors that are not the request's fault (-32042).

use serde_json::Value;

use super::content_words as content;
use super::fields::{QUOTE, field_text, mcp, names, status_message};
use super::lone_hop::answer_words;
use super::pairing::{Pairing, asked_values};
use crate::explain::model_notes::handoff_note;
use crate::read::explain_context::ExplainContext;
use crate::{explain::Case, explain::Explained, explain::McpCase, words::plural, words::shorten};
use tracer_wire::dialect::{JsonRpcKind, McpMessage};
use tracer_wire::hop::Transport;

pub(super) fn answer(
    message: &McpMessage,
    pairing: &Pairing,
    context: &ExplainContext,
) -> Explained {
    let [number, method_value] = asked_values(pairing.answered);
    if message.kind == JsonRpcKind::Error {
        if pairing
            .answered
            .is_some_and(|a| a.method == "server/discover")
        {
            let values = [
                (
                    "code",
                    message
                        .error_code
                        .map(|c| c.to_string())
                        .unwrap_or_default(),
                ),
                (
                    "message",
                    shorten(message.error_message.as_deref().unwrap_or_default(), QUOTE),
                ),
            ];
            return mcp(McpCase::DiscoverUnsupported, &values);
        }
        if message.error_code == Some(-32042) {
            let url = message
                .error_data
                .as_ref()
                .and_then(|d| d.get("elicitations"))
                .and_then(Value::as_array)
                .and_then(|e| e.first())
                .map(|e| field_text(Some(e), "url"))
                .unwrap_or_else(|| "?".into());
            return mcp(McpCase::UrlElicitationRequired, &[("url", url)]);
        }
        let values = [
            (
                "code",
                message
                    .error_code
                    .map(|c| c.to_string())
                    .unwrap_or_default(),
            ),
            (
                "message",
                shorten(message.error_message.as_deref().unwrap_or_default(), QUOTE),
            ),
            number,
            method_value,
        ];
        // A protocol error, paired with the request it answers.
        let mut explained = Explained::new(Case::McpProtocolError, &values);
        if pairing.answered.is_some() {
            explained.note(Case::Mcp(McpCase::NoteAnswers), &values[2..]);
        }
        return explained;
    }
    let Some(asked) = pairing.answered else {
        return answer_words(message, context);
    };
    if let Some(cancel) = asked.withdrawn_in {
        let cancel = ("cancel", cancel.to_string());
        return mcp(McpCase::AnswerToWithdrawn, &[number, method_value, cancel]);
    }
    let result = message.result.clone().unwrap_or(Value::Null);
    let count_of = |key: &str, keys: &[&str], one: &str| names(result.get(key), keys, one);
    match asked.method.as_str() {
        "ping" => mcp(McpCase::Pong, &[number]),
        "initialize" if pairing.transport == Transport::Stdio => mcp(
            McpCase::InitializeResultStdio,
            &[(
                "version",
                message
                    .protocol_version
                    .clone()
                    .unwrap_or_else(|| "?".into()),
            )],
        ),
        "initialize" | "tools/list" | "server/discover" => answer_words(message, context),
        "tools/call" | "tasks/result" if result.get("task").is_some() => {
            let task = result.get("task");
            mcp(
                McpCase::TaskCreated,
                &[
                    ("task", field_text(task, "taskId")),
                    ("status", field_text(task, "status")),
                ],
            )
        }
        "tools/call" | "tasks/result" if !message.is_error && content::is_rich(&result) => {
            let mut explained = mcp(
                McpCase::ToolResultRich,
                &[
                    ("content", shorten(&content::result_text(&result), 120)),
                    ("detail", content::rich_detail(&result)),
                ],
            );
            if pairing.model_in_trace
                && let Some(note) = handoff_note(context.model_dialect, false)
            {
                explained.note(note, &[]);
            }
            explained
        }
        "tools/call" | "tasks/result" => tool_answer(message, pairing, context),
        "resources/list" => mcp(
            McpCase::ResourcesListResult,
            &count_of("resources", &["name", "uri"], "resource"),
        ),
        "resources/templates/list" => mcp(
            McpCase::TemplatesListResult,
            &count_of("resourceTemplates", &["uriTemplate", "name"], "template"),
        ),
        "resources/read" => {
            let contents = result
                .get("contents")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            let said: Vec<String> = contents.iter().map(content::resource_text).collect();
            mcp(
                McpCase::ResourceReadResult,
                &[("content", shorten(&said.join(", "), 120))],
            )
        }
        "prompts/list" => mcp(
            McpCase::PromptsListResult,
            &count_of("prompts", &["name"], "prompt"),
        ),
        "prompts/get" => {
            let messages = result
                .get("messages")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            mcp(
                McpCase::PromptGetResult,
                &[
                    ("count", plural(messages.len(), "message")),
                    (
                        "messages",
                        shorten(&content::prompt_messages_text(&messages), 120),
                    ),
                ],
            )
        }
        "completion/complete" => {
            let values: Vec<String> = result
                .get("completion")
                .and_then(|c| c.get("values"))
                .and_then(Value::as_array)
                .map(|v| {
                    v.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default();
            mcp(
                McpCase::CompleteResult,
                &[
                    ("count", plural(values.len(), "suggestion")),
                    ("values", shorten(&values.join(", "), QUOTE)),
                ],
            )
        }
        "tasks/get" | "tasks/cancel" => mcp(
            McpCase::TaskStatusResult,
            &[
                ("task", field_text(Some(&result), "taskId")),
                ("status", field_text(Some(&result), "status")),
                ("message", status_message(Some(&result))),
            ],
        ),
        "tasks/list" => {
            let tasks = result
                .get("tasks")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            let listed: Vec<String> = tasks
                .iter()
                .map(|t| {
                    format!(
                        "{} ({})",
                        field_text(Some(t), "taskId"),
                        field_text(Some(t), "status")
                    )
                })
                .collect();
            mcp(
                McpCase::TasksListResult,
                &[
                    ("count", plural(tasks.len(), "task")),
                    ("names", shorten(&listed.join(", "), QUOTE)),
                ],
            )
        }
        "sampling/createMessage" if pairing.model_call.is_some() => {
            let mut explained = sampling_answer(&result, number);
            if let Some((call, route)) = pairing.model_call {
                explained.note(
                    Case::Mcp(McpCase::NoteSamplingModelCall),
                    &[("call", call.to_string()), ("route", route.to_string())],
                );
            }
            explained
        }
        "sampling/createMessage" => sampling_answer(&result, number),
        "elicitation/create" => {
            let action = match result.get("action").and_then(Value::as_str) {
                Some("accept") => "accepted",
                Some("decline") => "declined",
                Some("cancel") => "cancelled",
                _ => "answered",
            };
            let given = result.get("content").map_or_else(String::new, |c| {
                format!(": {}", shorten(&c.to_string(), QUOTE))
            });
            mcp(
                McpCase::ElicitAnswer,
                &[("action", action.to_string()), ("content", given), number],
            )
        }
        "roots/list" => mcp(McpCase::RootsAnswer, &{
            let [count, names] = count_of("roots", &["uri", "name"], "root");
            [count, names, number]
        }),
        _ if result
            .as_object()
            .is_some_and(|o| o.keys().all(|k| k == "_meta")) =>
        {
            mcp(McpCase::EmptyResult, &[number, method_value])
        }
        _ => {
            let mut explained = answer_words(message, context);
            explained.note(Case::Mcp(McpCase::NoteAnswers), &[number, method_value]);
            explained
        }
    }
}

fn tool_answer(message: &McpMessage, pairing: &Pairing, context: &ExplainContext) -> Explained {
    let text = shorten(message.result_text.as_deref().unwrap_or_default(), QUOTE);
    let case = if message.is_error {
        Case::McpToolError
    } else {
        Case::McpToolResult
    };
    let mut explained = Explained::new(case, &[("text", text)]);
    if pairing.model_in_trace
        && let Some(note) = handoff_note(context.model_dialect, message.is_error)
    {
        explained.note(note, &[]);
    }
    explained
}

fn sampling_answer(result: &Value, number: (&'static str, String)) -> Explained {
    let text = result
        .get("content")
        .map(content::block_text)
        .unwrap_or_default();
    let text = text.trim_matches('"').to_string();
    mcp(
        McpCase::SamplingAnswer,
        &[
            ("text", shorten(&text, QUOTE)),
            ("model", field_text(Some(result), "model")),
            number,
        ],
    )
}
