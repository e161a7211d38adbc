//! A Claude Code session transcript (JSON lines): each API request (the assistant lines of one
//! `requestId`, one line per content block) becomes a call whose request is the conversation
//! up to it (the `parentUuid` chain) and whose answer is its blocks put back together; each
//! tool the host ran itself (a `toolUseResult` answering a tool that is not an MCP server's)
//! an agent event, as is the user's prompt.

use std::collections::HashMap;

use serde_json::{Value, json};
use tracer_wire::agent_event::{AgentEvent, JoinKeys};

use super::{SourceCall, source_event};

/// What a transcript cannot tell, said on every hop made from one.
pub const NOTE: &str = "read from a Claude Code transcript, not the wire: the request holds the \
conversation only (no system prompt, tools or parameters, no headers), and its times are when \
Claude Code wrote the lines, not when bytes crossed the wire";

/// The service name of the events read from a transcript.
const SERVICE: &str = "claude-code (transcript)";

/// What a transcript gives.
#[derive(Debug, Default)]
pub struct Read {
    pub calls: Vec<SourceCall>,
    pub events: Vec<AgentEvent>,
    /// Lines that were not JSON objects (counted, skipped).
    pub unreadable: usize,
}

/// Reads a transcript's text.
pub fn read(text: &str) -> Read {
    let mut out = Read::default();
    let mut lines: Vec<Value> = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        match serde_json::from_str::<Value>(line) {
            Ok(value) if value.is_object() => lines.push(value),
            _ => out.unreadable += 1,
        }
    }
    let by_uuid: HashMap<&str, &Value> = (lines.iter())
        .filter_map(|l| Some((l.get("uuid")?.as_str()?, l)))
        .collect();
    // The assistant lines of each request, in order.
    let mut requests: Vec<(String, Vec<&Value>)> = Vec::new();
    for line in lines.iter().filter(|l| kind(l) == "assistant") {
        let Some(id) = text_of(line, "requestId").or_else(|| text_at(line, "/message/id")) else {
            continue;
        };
        match requests.iter_mut().find(|(r, _)| *r == id) {
            Some((_, group)) => group.push(line),
            None => requests.push((id, vec![line])),
        }
    }
    for (request_id, group) in &requests {
        out.calls.push(call(request_id, group, &by_uuid));
    }
    out.events = events(&lines, &by_uuid);
    out
}

fn kind(line: &Value) -> &str {
    line.get("type").and_then(Value::as_str).unwrap_or("")
}

fn text_of(line: &Value, key: &str) -> Option<String> {
    line.get(key)?.as_str().map(str::to_string)
}

fn text_at(line: &Value, pointer: &str) -> Option<String> {
    line.pointer(pointer)?.as_str().map(str::to_string)
}

fn time_of(line: &Value) -> Option<i64> {
    line.get("timestamp")?
        .as_str()
        .and_then(tracer_wire::rfc3339::unix_ns)
}

/// One request: its conversation (the chain above its first line) and its answer.
fn call(request_id: &str, group: &[&Value], by_uuid: &HashMap<&str, &Value>) -> SourceCall {
    let first = group[0];
    let mut chain: Vec<&Value> = Vec::new();
    let mut at = first.get("parentUuid").and_then(Value::as_str);
    while let Some(uuid) = at {
        let Some(line) = by_uuid.get(uuid) else { break };
        if chain.len() > 100_000 {
            break;
        }
        chain.push(line);
        at = line.get("parentUuid").and_then(Value::as_str);
    }
    chain.reverse();
    let messages = conversation(&chain);
    let message = first.get("message").cloned().unwrap_or(Value::Null);
    let model = message.get("model").cloned().unwrap_or(Value::Null);
    let content: Vec<Value> = (group.iter())
        .filter_map(|l| l.pointer("/message/content")?.as_array().cloned())
        .flatten()
        .collect();
    let last = group[group.len() - 1];
    let mut response = json!({
        "id": message.get("id").cloned().unwrap_or(Value::Null),
        "type": "message", "role": "assistant", "model": model,
        "content": content,
        "stop_reason": last.pointer("/message/stop_reason").cloned().unwrap_or(Value::Null),
        "stop_sequence": Value::Null,
    });
    if let Some(usage) = last.pointer("/message/usage") {
        response["usage"] = usage.clone();
    }
    let sent = chain
        .last()
        .copied()
        .and_then(time_of)
        .or_else(|| time_of(first))
        .unwrap_or(0);
    SourceCall {
        request_id: Some(request_id.to_string()),
        session_id: text_of(first, "sessionId"),
        request: json!({"model": model, "messages": messages}),
        response,
        started_unix_ns: sent,
        ended_unix_ns: time_of(last).unwrap_or(sent),
        note: NOTE.to_string(),
    }
}

/// The API messages of a chain of lines: user and assistant lines (attachments and other
/// bookkeeping left out), consecutive lines of one role joined into one message as the API
/// takes them.
fn conversation(chain: &[&Value]) -> Vec<Value> {
    let mut messages: Vec<Value> = Vec::new();
    for line in chain
        .iter()
        .filter(|l| matches!(kind(l), "user" | "assistant"))
    {
        let Some(message) = line.get("message") else {
            continue;
        };
        let role = message
            .get("role")
            .and_then(Value::as_str)
            .unwrap_or(kind(line));
        let blocks = match message.get("content") {
            Some(Value::String(text)) => vec![json!({"type": "text", "text": text})],
            Some(Value::Array(blocks)) => blocks.clone(),
            _ => continue,
        };
        match messages.last_mut() {
            Some(last) if last["role"] == role => {
                if let Some(content) = last["content"].as_array_mut() {
                    content.extend(blocks);
                }
            }
            _ => messages.push(json!({"role": role, "content": blocks})),
        }
    }
    messages
}

/// The user's prompts and the tools the host ran itself.
fn events(lines: &[Value], by_uuid: &HashMap<&str, &Value>) -> Vec<AgentEvent> {
    let mut out = Vec::new();
    for line in lines.iter().filter(|l| kind(l) == "user") {
        let at = time_of(line).unwrap_or(0);
        let keys = JoinKeys {
            session: text_of(line, "sessionId"),
            prompt: text_of(line, "promptId"),
            ..Default::default()
        };
        if let Some(prompt) = text_at(line, "/message/content") {
            out.push(source_event(
                "user_prompt",
                SERVICE,
                at,
                keys.clone(),
                &[("prompt", json!(prompt))],
            ));
            continue;
        }
        let Some(result) = line.get("toolUseResult") else {
            continue;
        };
        let blocks = line.pointer("/message/content").and_then(Value::as_array);
        for block in blocks
            .into_iter()
            .flatten()
            .filter(|b| b["type"] == "tool_result")
        {
            let Some(id) = block.get("tool_use_id").and_then(Value::as_str) else {
                continue;
            };
            let asked = asked_by(line, id, by_uuid);
            let name = asked
                .and_then(|a| a.get("name")?.as_str())
                .unwrap_or("a tool");
            if name.starts_with("mcp__") {
                // An MCP server's tool: the wire (or its own recording) has it.
                continue;
            }
            let output = tool_output(result, block);
            let keys = JoinKeys {
                tool_call: Some(id.to_string()),
                ..keys.clone()
            };
            let input = asked
                .and_then(|a| a.get("input"))
                .cloned()
                .unwrap_or(Value::Null);
            let failed = block
                .get("is_error")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            out.push(source_event(
                "tool_result",
                SERVICE,
                at,
                keys,
                &[
                    ("tool_name", json!(name)),
                    ("tool_use_id", json!(id)),
                    ("tool_input", json!(input.to_string())),
                    ("success", json!(!failed)),
                    ("tool_result_size_bytes", json!(output.len())),
                    ("output", json!(output)),
                ],
            ));
        }
    }
    out
}

/// The `tool_use` block a result answers, in the assistant line the result names.
fn asked_by<'a>(line: &Value, id: &str, by_uuid: &HashMap<&str, &'a Value>) -> Option<&'a Value> {
    let source = line
        .get("sourceToolAssistantUUID")
        .or_else(|| line.get("parentUuid"))?
        .as_str()?;
    let assistant = by_uuid.get(source)?;
    (assistant.pointer("/message/content")?.as_array()?.iter()).find(|b| b["id"] == id)
}

/// What a tool wrote: its stdout and stderr when the host kept them apart, else the result's text.
fn tool_output(result: &Value, block: &Value) -> String {
    if let Some(stdout) = result.get("stdout").and_then(Value::as_str) {
        let stderr = result.get("stderr").and_then(Value::as_str).unwrap_or("");
        return format!("{stdout}{stderr}");
    }
    match block.get("content") {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text")?.as_str())
            .collect(),
        _ => String::new(),
    }
}
