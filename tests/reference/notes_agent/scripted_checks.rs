//! What the scripted model checks in every request it receives: the tools are function tools,
//! and a request that continues a conversation resends the whole previous history, then the
//! model's own turn as it was sent, then one tool message per call in the API's shape.

use serde_json::Value;

use super::scripted_model::{Dialect, Reply};

pub fn check_request(
    dialect: Dialect,
    last: Option<&(Value, Reply)>,
    body: &Value,
) -> Result<(), String> {
    let messages = body["messages"]
        .as_array()
        .ok_or("the request has no `messages` array")?;
    if let Some(tools) = body.get("tools") {
        for tool in tools.as_array().ok_or("`tools` is not an array")? {
            if tool["type"] != "function"
                || !tool["function"]["name"].is_string()
                || !tool["function"]["parameters"].is_object()
            {
                return Err(format!(
                    "a tool is not a function tool with parameters: {tool}"
                ));
            }
        }
    }
    let last_role = messages
        .last()
        .and_then(|m| m["role"].as_str())
        .unwrap_or("");
    if last_role == "user" {
        return Ok(()); // a new conversation
    }
    let Some((previous, reply)) = last else {
        return Err(format!(
            "the first request ends with a {last_role:?} message, not the user's"
        ));
    };
    if reply.calls.is_empty() {
        return Err("a request continued a conversation whose last reply had no tool calls".into());
    }
    let before = previous["messages"]
        .as_array()
        .ok_or("the previous request had no messages")?;
    if messages.len() < before.len() || messages[..before.len()] != before[..] {
        return Err(
            "the history was not resent whole: the previous request's messages are not a prefix"
                .into(),
        );
    }
    let rest = &messages[before.len()..];
    let Some((assistant, tools)) = rest.split_first() else {
        return Err("the model's own turn is missing".into());
    };
    check_assistant(dialect, assistant, reply)?;
    if tools.len() != reply.calls.len() {
        return Err(format!(
            "{} tool calls were answered by {} tool messages",
            reply.calls.len(),
            tools.len()
        ));
    }
    for (message, call) in tools.iter().zip(&reply.calls) {
        if message["role"] != "tool" || !message["content"].is_string() {
            return Err(format!("not a tool message with text content: {message}"));
        }
        match dialect {
            Dialect::Ollama => {
                if message["tool_name"] != call.name.as_str() {
                    return Err(format!(
                        "the Ollama tool message lacks tool_name {:?}: {message}",
                        call.name
                    ));
                }
                // The id is echoed when the model gave one; without one (the article's
                // Ollama) the message is just role, content and tool_name.
                let id = message.get("tool_call_id");
                let answers = if call.id.is_empty() {
                    id.is_none()
                } else {
                    id == Some(&Value::from(call.id.as_str()))
                };
                if !answers {
                    return Err(format!(
                        "the Ollama tool message's tool_call_id should answer {:?}: {message}",
                        call.id
                    ));
                }
            }
            Dialect::OpenAi => {
                if message["tool_call_id"] != call.id.as_str() {
                    return Err(format!(
                        "the OpenAI tool message lacks tool_call_id {:?}: {message}",
                        call.id
                    ));
                }
                if message.get("tool_name").is_some() {
                    return Err(format!(
                        "the OpenAI tool message carries Ollama's tool_name: {message}"
                    ));
                }
            }
        }
    }
    Ok(())
}

fn check_assistant(dialect: Dialect, assistant: &Value, reply: &Reply) -> Result<(), String> {
    if assistant["role"] != "assistant" {
        return Err(format!("expected the model's own turn, got {assistant}"));
    }
    let calls = assistant["tool_calls"]
        .as_array()
        .ok_or_else(|| format!("the model's turn lost its tool calls: {assistant}"))?;
    if calls.len() != reply.calls.len() {
        return Err(format!(
            "the model's turn has {} tool calls, it sent {}",
            calls.len(),
            reply.calls.len()
        ));
    }
    for (sent, call) in calls.iter().zip(&reply.calls) {
        let id_kept = if call.id.is_empty() {
            sent.get("id").is_none()
        } else {
            sent["id"] == call.id.as_str()
        };
        if sent["function"]["name"] != call.name.as_str() || !id_kept {
            return Err(format!(
                "a replayed tool call differs from what the model sent: {sent}"
            ));
        }
        let arguments = &sent["function"]["arguments"];
        match dialect {
            Dialect::Ollama if *arguments != call.arguments => {
                return Err(format!(
                    "Ollama arguments must be replayed as the object sent: {arguments}"
                ));
            }
            Dialect::OpenAi => {
                let expected = call
                    .raw_arguments
                    .clone()
                    .unwrap_or_else(|| call.arguments.to_string());
                if arguments.as_str() != Some(expected.as_str()) || sent["type"] != "function" {
                    return Err(format!(
                        "OpenAI arguments must be replayed as the string sent: {sent}"
                    ));
                }
            }
            Dialect::Ollama => {}
        }
    }
    Ok(())
}
