//! What a request carries, for matching: the conversation of a chat request (roles, contents,
//! tool calls and results), or the method, tool and arguments of an MCP request; and the
//! differences between two of them in words.

use serde_json::Value;

use tracer_trace::words::shorten;
use tracer_wire::dialect::{self, Reading};
use tracer_wire::hop::{BodyCapture, Header, Role};

/// One turn of a conversation, without ids or the system prompt.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    pub role: String,
    pub content: String,
    pub tool_calls: Vec<(String, Value)>,
}

/// What a request carries, as far as matching goes.
#[derive(Debug, Clone, PartialEq)]
pub enum RequestKey {
    /// A model chat request: its conversation without system messages, and whether it asks
    /// for a stream (a client waiting for NDJSON or SSE cannot read one JSON answer).
    Chat { turns: Vec<Turn>, stream: bool },
    /// An MCP JSON-RPC message: method, tool and arguments (not the id, not `_meta`).
    Mcp {
        method: Option<String>,
        tool: Option<String>,
        arguments: Option<Value>,
    },
    /// Anything else: the body as sent, whitespace at the ends ignored.
    Raw(Vec<u8>),
}

/// How much a difference matters: tool results may differ when the tool's world differs
/// (a notes file with other lines in it); anything else makes it another request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Weight {
    ToolResult,
    Other,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    pub weight: Weight,
    pub words: String,
}

impl Difference {
    fn other(words: String) -> Self {
        Self {
            weight: Weight::Other,
            words,
        }
    }
}

/// Reads the key of a request as the dialect of its path and body says.
pub fn request_key(
    role: Role,
    method: &str,
    path: &str,
    headers: &[Header],
    body: &[u8],
) -> RequestKey {
    let dialect = dialect::detect(role, method, path, headers, body);
    let reading = dialect::read_request(dialect, headers, &BodyCapture::whole(body.to_vec()));
    match reading.reading {
        Reading::ModelRequest(request) => RequestKey::Chat {
            stream: request.stream,
            turns: request
                .messages
                .into_iter()
                .filter(|m| m.role != "system" && m.role != "developer")
                .map(std::sync::Arc::unwrap_or_clone)
                .map(|m| Turn {
                    role: m.role,
                    content: m.content.trim().to_string(),
                    tool_calls: m
                        .tool_calls
                        .into_iter()
                        .map(|c| (c.name, c.arguments))
                        .collect(),
                })
                .collect(),
        },
        Reading::Mcp(mcp) => match mcp.request() {
            Some(message) => RequestKey::Mcp {
                method: message.method.clone(),
                tool: message.tool_name.clone(),
                arguments: message.arguments.clone(),
            },
            None => RequestKey::Raw(body.trim_ascii().to_vec()),
        },
        _ => RequestKey::Raw(body.trim_ascii().to_vec()),
    }
}

fn quoted(text: &str) -> String {
    format!("\"{}\"", shorten(text, 60))
}

fn calls_text(calls: &[(String, Value)]) -> String {
    if calls.is_empty() {
        return "none".to_string();
    }
    calls
        .iter()
        .map(|(name, args)| shorten(&format!("{name} {args}"), 60))
        .collect::<Vec<_>>()
        .join(", ")
}

/// How `got` differs from `recorded`, in words; empty when they match.
pub fn differences(recorded: &RequestKey, got: &RequestKey) -> Vec<Difference> {
    match (recorded, got) {
        (
            RequestKey::Chat {
                turns: recorded,
                stream: recorded_stream,
            },
            RequestKey::Chat {
                turns: got,
                stream: got_stream,
            },
        ) => {
            let mut out = chat_differences(recorded, got);
            if recorded_stream != got_stream {
                let how = |stream: bool| {
                    if stream {
                        "a stream"
                    } else {
                        "one JSON answer"
                    }
                };
                out.push(Difference::other(format!(
                    "stream: recorded {recorded_stream} ({}), got {got_stream} ({})",
                    how(*recorded_stream),
                    how(*got_stream)
                )));
            }
            out
        }
        (
            RequestKey::Mcp {
                method: m1,
                tool: t1,
                arguments: a1,
            },
            RequestKey::Mcp {
                method: m2,
                tool: t2,
                arguments: a2,
            },
        ) => {
            let mut out = Vec::new();
            let show = |v: &Option<String>| v.clone().unwrap_or_else(|| "(none)".into());
            if m1 != m2 {
                out.push(Difference::other(format!(
                    "method: recorded {}, got {}",
                    show(m1),
                    show(m2)
                )));
            }
            if t1 != t2 {
                out.push(Difference::other(format!(
                    "tool: recorded {}, got {}",
                    show(t1),
                    show(t2)
                )));
            }
            let empty = |a: &Option<Value>| match a {
                None | Some(Value::Null) => true,
                Some(Value::Object(map)) => map.is_empty(),
                _ => false,
            };
            if a1 != a2 && !(empty(a1) && empty(a2)) {
                let text = |a: &Option<Value>| {
                    a.as_ref()
                        .map_or("(none)".into(), |v| shorten(&v.to_string(), 60))
                };
                out.push(Difference::other(format!(
                    "arguments: recorded {}, got {}",
                    text(a1),
                    text(a2)
                )));
            }
            out
        }
        (RequestKey::Raw(recorded), RequestKey::Raw(got)) if recorded == got => Vec::new(),
        (RequestKey::Raw(recorded), RequestKey::Raw(got)) => vec![Difference::other(format!(
            "body: recorded {} bytes, got {} bytes that differ",
            recorded.len(),
            got.len()
        ))],
        _ => vec![Difference::other(
            "the body is another kind of request (chat, MCP or other)".to_string(),
        )],
    }
}

fn chat_differences(recorded: &[Turn], got: &[Turn]) -> Vec<Difference> {
    let mut out = Vec::new();
    for (index, (r, g)) in recorded.iter().zip(got).enumerate() {
        let n = index + 1;
        if r.role != g.role {
            out.push(Difference::other(format!(
                "message {n}: recorded role {}, got {}",
                r.role, g.role
            )));
            continue;
        }
        if r.content != g.content {
            let words = format!(
                "message {n} ({}): recorded content {}, got {}",
                r.role,
                quoted(&r.content),
                quoted(&g.content)
            );
            out.push(Difference {
                weight: if r.role == "tool" {
                    Weight::ToolResult
                } else {
                    Weight::Other
                },
                words,
            });
        }
        if r.tool_calls != g.tool_calls {
            out.push(Difference::other(format!(
                "message {n} ({}): recorded tool calls {}, got {}",
                r.role,
                calls_text(&r.tool_calls),
                calls_text(&g.tool_calls)
            )));
        }
    }
    if recorded.len() != got.len() {
        out.push(Difference::other(format!(
            "recorded {} messages (besides the system prompt), got {}",
            recorded.len(),
            got.len()
        )));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn chat(body: Value) -> RequestKey {
        let bytes = serde_json::to_vec(&body).unwrap();
        request_key(Role::Model, "POST", "/api/chat", &[], &bytes)
    }

    #[test]
    fn ids_options_and_system_prompt_do_not_matter() {
        let a = chat(
            json!({"model": "qwen2.5:7b", "stream": false, "options": {"seed": 1},
            "messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "Add buy milk"}]}),
        );
        let b = chat(
            json!({"model": "qwen2.5:7b", "keep_alive": "30m", "stream": false,
            "messages": [{"role": "system", "content": "be very brief"}, {"role": "user", "content": "Add buy milk "}]}),
        );
        assert!(differences(&a, &b).is_empty());
        let streaming = chat(json!({"model": "qwen2.5:7b",
            "messages": [{"role": "user", "content": "Add buy milk"}]}));
        let diffs = differences(&a, &streaming);
        assert_eq!(diffs.len(), 1, "{diffs:?}");
        assert!(
            diffs[0].words.starts_with("stream: recorded false"),
            "{diffs:?}"
        );
    }

    #[test]
    fn differences_are_named_and_weighed() {
        let a = chat(
            json!({"messages": [{"role": "user", "content": "Add buy milk"},
            {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "append", "arguments": {"content": "buy milk"}}}]},
            {"role": "tool", "content": "Appended (now 1 line)"}]}),
        );
        let b = chat(
            json!({"messages": [{"role": "user", "content": "Add buy milk"},
            {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "append", "arguments": {"content": "buy milk"}}}]},
            {"role": "tool", "content": "Appended (now 3 lines)"}]}),
        );
        let diffs = differences(&a, &b);
        assert_eq!(diffs.len(), 1);
        assert_eq!(diffs[0].weight, Weight::ToolResult);
        assert!(
            diffs[0].words.contains("message 3 (tool)"),
            "{}",
            diffs[0].words
        );
        let c = chat(json!({"messages": [{"role": "user", "content": "Add eggs"}]}));
        let diffs = differences(&a, &c);
        assert!(
            diffs.iter().any(|d| d.words.contains("\"Add eggs\"")),
            "{diffs:?}"
        );
        assert!(
            diffs
                .iter()
                .any(|d| d.words.contains("recorded 3 messages")),
            "{diffs:?}"
        );
    }
}
