//! The agent's own account in plain words: one sentence per telemetry event (a permission
//! decision, a tool the host ran itself, a hook, an API error and retry, the agent's cost), the
//! same in every face. Values are cut to one safe line.

use tracer_wire::agent_event::AgentEvent;

use super::agent_attrs::{Attrs, bytes_text};
use crate::words::shorten;

/// The event's name without the agent's prefix (`claude_code.`, `codex.`, `gemini_cli.`).
pub fn short_name(name: &str) -> &str {
    [
        "claude_code.",
        "codex.",
        "gemini_cli.",
        "qwen-code.",
        "qwen_code.",
    ]
    .iter()
    .find_map(|prefix| name.strip_prefix(prefix))
    .unwrap_or(name)
}

/// The agent that sent it, for people (`Claude Code`, `Codex`, `Gemini CLI`, or its service).
pub fn agent_name(event: &AgentEvent) -> String {
    let service = event.service.as_deref().unwrap_or("");
    let name = event.name.as_str();
    if service.contains("claude") || name.starts_with("claude_code.") {
        "Claude Code".into()
    } else if service.contains("codex") || name.starts_with("codex.") {
        "Codex".into()
    } else if service.contains("gemini") || name.starts_with("gemini_cli.") {
        "Gemini CLI".into()
    } else if service.is_empty() {
        "the agent".into()
    } else {
        shorten(service, 40)
    }
}

/// One sentence for the event, as a face shows it between the hops.
pub fn sentence(event: &AgentEvent) -> String {
    let a = Attrs(event.attributes());
    let agent = agent_name(event);
    let name = short_name(&event.name);
    match name {
        "user_prompt" => match a.text(&["prompt"]) {
            Some(prompt) => format!(
                "{agent} took the user's prompt: \"{}\"",
                shorten(&prompt, 80)
            ),
            None => match a.number(&["prompt_length"]) {
                Some(n) => format!(
                    "{agent} took the user's prompt ({n:.0} characters; its text is not logged)"
                ),
                None => format!("{agent} took the user's prompt"),
            },
        },
        "tool_decision" => decision(&agent, &a),
        "tool_result" | "tool_call" if a.text(&["decision"]).as_deref() == Some("reject") => {
            decision(&agent, &a)
        }
        "tool_result" | "tool_call" => ran(&agent, &a),
        "api_request" | "api_response" => api(&agent, &a),
        "api_error" => {
            let status = a.text(&["status_code", "http.response.status_code"]);
            let error = a.text(&["error", "error.message"]).map(|e| shorten(&e, 80));
            let attempt = a.number(&["attempt"]).filter(|n| *n > 1.0);
            let mut out = match status {
                Some(status) => format!("the API answered {status}"),
                None => "the API call failed".into(),
            };
            if let Some(error) = error {
                out.push_str(&format!(" ({error})"));
            }
            if let Some(attempt) = attempt {
                out.push_str(&format!("; {agent} is on attempt {attempt:.0}"));
            }
            out
        }
        "api_request_body" | "api_response_body" => {
            let which = if name.ends_with("request_body") {
                "request"
            } else {
                "response"
            };
            let size = a.text(&["body"]).map(|b| bytes_text(b.len() as f64));
            format!(
                "{agent} logged the raw API {which} body{}",
                size.map(|s| format!(" ({s})")).unwrap_or_default()
            )
        }
        "assistant_response" => format!("{agent} logged the model's reply"),
        "mcp_server_connection" => {
            let server = a
                .text(&["server_name", "mcp_server_name"])
                .unwrap_or_else(|| "an MCP server".into());
            let how: Vec<String> = [a.text(&["transport_type", "transport"]), a.duration()]
                .into_iter()
                .flatten()
                .map(|t| shorten(&t, 20))
                .collect();
            let how = match how.is_empty() {
                true => String::new(),
                false => format!(" ({})", how.join(", ")),
            };
            let server = shorten(&server, 40);
            match a.text(&["status", "connection_status"]).as_deref() {
                None | Some("connected") => {
                    format!("{agent} connected to MCP server {server}{how}")
                }
                Some(status) => {
                    format!(
                        "{agent}'s MCP server {server}: {}{how}",
                        shorten(status, 40)
                    )
                }
            }
        }
        "sse_event" => {
            let kind = a.text(&["event.kind"]).unwrap_or_else(|| "an event".into());
            format!("{agent} read the stream's {}", shorten(&kind, 60))
        }
        "turn_ttft" => match a.duration() {
            Some(d) => format!("{agent} saw its first token after {d}"),
            None => format!("{agent} timed its first token"),
        },
        hook if hook.starts_with("hook") => {
            let which = a
                .text(&["hook_event_name", "hook_event", "hook_name"])
                .unwrap_or_else(|| "a".into());
            let outcome = match a.yes(&["success"]) {
                Some(false) => " and failed",
                _ => "",
            };
            format!("{} hook ran{outcome}", shorten(&which, 40))
        }
        _ => {
            let mut keys: Vec<_> =
                a.0.keys()
                    .filter(|k| !is_common(k))
                    .take(4)
                    .cloned()
                    .collect();
            keys.sort();
            format!(
                "{agent} reported {}{}",
                shorten(&event.name, 60),
                if keys.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", keys.join(", "))
                }
            )
        }
    }
}

/// Attributes every event of an agent carries; not worth naming.
fn is_common(key: &str) -> bool {
    key.starts_with("session.")
        || key.starts_with("user.")
        || key.starts_with("organization.")
        || matches!(
            key,
            "event.name"
                | "event.timestamp"
                | "event.sequence"
                | "prompt.id"
                | "terminal.type"
                | "app.version"
                | "conversation.id"
        )
}

fn decision(agent: &str, a: &Attrs) -> String {
    let decision = a.text(&["decision"]).unwrap_or_else(|| "decided".into());
    let source = a.text(&["source", "decision_source"]).unwrap_or_default();
    let verb = match decision.as_str() {
        "accept" | "approved" | "approve" | "allow" | "auto_accept" => "accepted",
        "reject" | "denied" | "deny" | "abort" => "rejected",
        other => other,
    };
    let tool = a.tool();
    if source == "config" || source.starts_with("config") {
        return format!("{agent}'s configuration {verb} {tool} (no one was asked)");
    }
    let by = if source.is_empty() {
        String::new()
    } else {
        format!(" ({})", shorten(&source, 40))
    };
    format!("{agent} asked whether to run {tool}; {verb}{by}")
}

fn ran(agent: &str, a: &Attrs) -> String {
    let tool = a.tool();
    let mcp =
        a.param("mcp_server_name").is_some() || a.text(&["tool_type"]).as_deref() == Some("mcp");
    let mut out = if mcp {
        format!("{agent} called {tool} over MCP")
    } else {
        format!("{agent} ran {tool} itself")
    };
    let mut parts = Vec::new();
    match a.yes(&["success"]) {
        Some(true) => parts.push("success".to_string()),
        Some(false) => parts.push(match a.text(&["error"]) {
            Some(e) => format!("failed: {}", shorten(&e, 60)),
            None => "failed".into(),
        }),
        None => {}
    }
    if let Some(size) = a.number(&["tool_result_size_bytes", "output_size", "result_size"]) {
        parts.push(format!("{} of output", bytes_text(size)));
    }
    if let Some(d) = a.duration() {
        parts.push(d);
    }
    if !parts.is_empty() {
        out.push_str(&format!(": {}", parts.join(", ")));
    }
    out
}

fn api(agent: &str, a: &Attrs) -> String {
    let model = a.text(&["model"]).map(|m| shorten(&m, 40));
    let mut parts = Vec::new();
    if let (Some(i), Some(o)) = (
        a.number(&["input_tokens", "input_token_count"]),
        a.number(&["output_tokens", "output_token_count"]),
    ) {
        parts.push(format!("{i:.0} in / {o:.0} out"));
    }
    if let Some(cost) = a.number(&["cost_usd"]) {
        parts.push(format!("its cost ${cost:.6}"));
    }
    if let Some(d) = a.duration() {
        parts.push(d);
    }
    if let Some(source) = a.text(&["query_source"]) {
        parts.push(format!("for {}", shorten(&source, 40)));
    }
    let head = match model {
        Some(model) => format!("{agent}'s own account of this call to {model}"),
        None => format!("{agent}'s own account of this call"),
    };
    if parts.is_empty() {
        head
    } else {
        format!("{head}: {}", parts.join(", "))
    }
}

/// The number of the message an event placed after hop `after_hop` follows: that hop's last
/// message not later than the event (its answer, or its request while the answer still
/// streamed), else its first. `messages` are (number, hop id, time) of the shown messages.
pub fn message_after<'m>(
    messages: impl Iterator<Item = (usize, &'m str, i64)> + Clone,
    after_hop: Option<&str>,
    at_unix_ns: i64,
) -> Option<usize> {
    let hop = after_hop?;
    let of_hop = messages.filter(|(_, id, _)| *id == hop);
    (of_hop.clone())
        .filter(|(_, _, at)| *at <= at_unix_ns.max(0))
        .map(|(number, _, _)| number)
        .max()
        .or_else(|| of_hop.map(|(number, _, _)| number).min())
}

/// The agent's own cost of a call (`cost_usd`), if it gave one.
pub fn agent_cost(event: &AgentEvent) -> Option<f64> {
    Attrs(event.attributes()).number(&["cost_usd"])
}

/// The agent's cost beside tracer's estimate; a disagreement over 1% is named.
pub fn cost_check(agent_usd: f64, tracer_usd: Option<f64>) -> String {
    match tracer_usd {
        None => format!("the agent says ${agent_usd:.6}; tracer has no price for it"),
        Some(ours) => {
            let off = if ours.abs() < 1e-12 && agent_usd.abs() < 1e-12 {
                0.0
            } else {
                (agent_usd - ours).abs() / ours.abs().max(agent_usd.abs())
            };
            if off > 0.01 {
                format!(
                    "the agent says ${agent_usd:.6}, tracer estimates ${ours:.6}: they disagree by {:.1}%",
                    off * 100.0
                )
            } else {
                format!("the agent says ${agent_usd:.6}, tracer estimates ${ours:.6}: they agree")
            }
        }
    }
}

#[cfg(test)]
#[path = "agent_words_tests.rs"]
mod tests;
