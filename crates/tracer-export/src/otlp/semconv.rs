//! Span names and attributes by what a hop is: HTTP, a model call (GenAI `chat`), an MCP request
//! (MCP conventions; `tools/call` as GenAI `execute_tool`) or the agent's turn (`invoke_agent`),
//! with the OpenInference keys Phoenix renders natively. Contents only with `SpanOptions.content`.

use super::content;
use super::model::{Attribute, SpanKind, SpanOptions};
use super::token_attrs::{cost_attributes, token_attributes};
use tracer_trace::RecordedHop;
use tracer_wire::dialect::{
    AgentRequest, Dialect, JsonRpcKind, McpReading, ModelRequest, Reading, ToolCall,
};
use tracer_wire::hop::{HopEnd, HopStart, header_text};
use tracer_wire::redact::REDACTED;

/// A span being built: what the hop-independent part of the builder fills in.
#[derive(Debug)]
pub(crate) struct Draft {
    pub(crate) name: String,
    pub(crate) kind: SpanKind,
    pub(crate) attributes: Vec<Attribute>,
    /// `error.type` and the status message, when the span is an error.
    pub(crate) error: Option<(String, String)>,
}

impl Draft {
    fn text(&mut self, key: &str, value: impl Into<String>) {
        self.attributes.push(Attribute::text(key, value));
    }

    fn int(&mut self, key: &str, value: i64) {
        self.attributes.push(Attribute::int(key, value));
    }
}

/// `gen_ai.provider.name` (and OpenInference `llm.provider`) by the dialect a model spoke.
pub(crate) fn provider(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::OpenAiChat | Dialect::OpenAiResponses => "openai",
        Dialect::AnthropicMessages => "anthropic",
        Dialect::Gemini | Dialect::GeminiCountTokens => "gcp.gemini",
        _ => "ollama",
    }
}

/// `url.full` as the HTTP conventions want it: credentials in the URL become
/// `REDACTED:REDACTED@`, whatever the record kept (`--no-redact`).
fn url_full(url: &str) -> String {
    match tracer_wire::redact::split_userinfo(url) {
        (rest, Some(_)) => rest.replacen("://", "://REDACTED:REDACTED@", 1),
        (rest, None) => rest,
    }
}

/// HTTP attributes: method, URL, server address and port, status; 4xx/5xx make an error.
pub(crate) fn http(draft: &mut Draft, start: &HopStart, end: Option<&HopEnd>) {
    draft.text("http.request.method", start.method.clone());
    draft.text("url.full", url_full(&start.url));
    draft.text("network.protocol.name", "http");
    draft.text("network.transport", "tcp");
    if let Ok(uri) = start.url.parse::<http::Uri>()
        && let Some(host) = uri.host()
    {
        draft.text("server.address", host.trim_matches(['[', ']']));
        let default_port = if uri.scheme_str() == Some("https") {
            443
        } else {
            80
        };
        draft.int(
            "server.port",
            i64::from(uri.port_u16().unwrap_or(default_port)),
        );
    }
    if let Some(status) = end.and_then(|e| e.status) {
        draft.int("http.response.status_code", i64::from(status));
        if status >= 400 {
            draft.error = Some((status.to_string(), format!("HTTP {status}")));
        }
    }
}

/// A model hop: `chat {model}` with the GenAI inference attributes and OpenInference's LLM keys.
pub(crate) fn model(
    draft: &mut Draft,
    hop: &RecordedHop,
    dialect: Dialect,
    request: &ModelRequest,
    response: Option<&Reading>,
    options: SpanOptions,
) {
    let model = request.model.clone().unwrap_or_default();
    let provider = provider(dialect);
    draft.name = format!("chat {model}").trim_end().to_string();
    draft.text("gen_ai.operation.name", "chat");
    draft.text("gen_ai.provider.name", provider);
    draft.text("openinference.span.kind", "LLM");
    draft.text("llm.provider", provider);
    if matches!(provider, "openai" | "anthropic") {
        draft.text("llm.system", provider);
    }
    if !model.is_empty() {
        draft.text("gen_ai.request.model", model.clone());
    }
    if !request.tools.is_empty() {
        draft
            .attributes
            .push(Attribute::strings("tracer.tools", request.tools.clone()));
    }
    if options.content {
        draft.text("gen_ai.input.messages", content::input_messages(request));
        if let Some(system) = content::system_instructions(request) {
            draft.text("gen_ai.system_instructions", system);
        }
    }
    let answer = match response {
        Some(Reading::ModelResponse(answer)) => Some(answer),
        _ => None,
    };
    let streamed = request.stream || answer.is_some_and(|a| a.streamed);
    draft
        .attributes
        .push(Attribute::boolean("gen_ai.request.stream", streamed));
    let model_name = answer.and_then(|a| a.model.clone()).unwrap_or(model);
    if !model_name.is_empty() {
        draft.text("llm.model_name", model_name);
    }
    if streamed && let Some(first) = hop.end.as_ref().and_then(|e| e.response_first_byte_unix_ns) {
        let seconds = (first - hop.start.started_unix_ns).max(0) as f64 / 1e9;
        draft.attributes.push(Attribute::double(
            "gen_ai.response.time_to_first_chunk",
            seconds,
        ));
    }
    let Some(answer) = answer else {
        return;
    };
    if let Some(model) = &answer.model {
        draft.text("gen_ai.response.model", model.clone());
    }
    if let Some(reason) = &answer.finish_reason {
        draft.attributes.push(Attribute::strings(
            "gen_ai.response.finish_reasons",
            vec![reason.clone()],
        ));
    }
    draft.attributes.extend(token_attributes(&answer.usage));
    let cost = tracer_trace::account::cost::price_call(
        tracer_trace::account::prices::active(),
        &[request.model.as_deref(), answer.model.as_deref()],
        Some(&answer.usage),
    );
    draft.attributes.extend(cost_attributes(&cost));
    let calls: Vec<String> = answer
        .message
        .tool_calls
        .iter()
        .map(|c| c.name.clone())
        .collect();
    if !calls.is_empty() {
        draft
            .attributes
            .push(Attribute::strings("tracer.tool_calls", calls));
    }
    if options.content {
        draft.text("gen_ai.output.messages", content::output_messages(answer));
    }
    if let Some(message) = &answer.error {
        draft.error = Some(("model_error".into(), message.clone()));
    }
}

/// An MCP hop: `{mcp.method.name} {target}` with the MCP attributes; `tools/call` is the GenAI
/// `execute_tool {tool}` span (the MCP attributes go on it rather than on a nested span).
pub(crate) fn mcp(
    draft: &mut Draft,
    hop: &RecordedHop,
    mcp: &McpReading,
    response: Option<&Reading>,
    asked: &[ToolCall],
    options: SpanOptions,
) {
    let Some(message) = mcp.request() else {
        draft.text("openinference.span.kind", "CHAIN");
        return;
    };
    let method = message.method.clone().unwrap_or_default();
    draft.name = method.clone();
    draft.text("mcp.method.name", method.clone());
    if let Some(id) = message.id_text() {
        draft.text("jsonrpc.request.id", id);
    }
    let headers = &hop.start.request_headers;
    let version = header_text(headers, "mcp-protocol-version")
        .map(str::to_string)
        .or_else(|| message.protocol_version.clone());
    if let Some(version) = version {
        draft.text("mcp.protocol.version", version);
    }
    let session = header_text(headers, "mcp-session-id").or_else(|| {
        hop.end
            .as_ref()
            .and_then(|e| header_text(&e.response_headers, "mcp-session-id"))
    });
    if let Some(session) = session.filter(|s| *s != REDACTED) {
        draft.text("mcp.session.id", session);
    }
    match (&message.tool_name, method.as_str()) {
        (Some(tool), "tools/call") => {
            draft.name = format!("execute_tool {tool}");
            draft.text("gen_ai.operation.name", "execute_tool");
            draft.text("gen_ai.tool.name", tool.clone());
            draft.text("openinference.span.kind", "TOOL");
            draft.text("tool.name", tool.clone());
            let asked_for = asked
                .iter()
                .find(|c| c.name == *tool && Some(&c.arguments) == message.arguments.as_ref())
                .or_else(|| asked.iter().find(|c| c.name == *tool));
            if let Some(id) = asked_for.and_then(|c| c.id.clone()) {
                draft.text("gen_ai.tool.call.id", id);
            }
            if let (true, Some(arguments)) = (options.content, &message.arguments) {
                draft.text("gen_ai.tool.call.arguments", arguments.to_string());
                draft.text("input.value", arguments.to_string());
                draft.text("input.mime_type", "application/json");
            }
        }
        (Some(prompt), "prompts/get") => {
            draft.name = format!("prompts/get {prompt}");
            draft.text("gen_ai.prompt.name", prompt.clone());
            draft.text("openinference.span.kind", "CHAIN");
        }
        (Some(uri), "resources/read" | "resources/subscribe" | "resources/unsubscribe") => {
            draft.text("mcp.resource.uri", uri.clone());
            draft.text("openinference.span.kind", "CHAIN");
        }
        _ => draft.text("openinference.span.kind", "CHAIN"),
    }
    let Some(Reading::Mcp(reply)) = response else {
        return;
    };
    let Some(reply) = reply.reply() else {
        return;
    };
    if !reply.tools.is_empty() {
        draft
            .attributes
            .push(Attribute::strings("tracer.mcp.tools", reply.tools.clone()));
    }
    if reply.kind == JsonRpcKind::Error {
        let code = reply.error_code.unwrap_or(0);
        draft.int("rpc.response.status_code", code);
        let message = reply.error_message.clone().unwrap_or_default();
        draft.error = Some((code.to_string(), message));
    } else if reply.is_error {
        let message = match (&reply.result_text, options.content) {
            (Some(text), true) => text.clone(),
            _ => "the tool reported an error (isError)".to_string(),
        };
        draft.error = Some(("tool_error".into(), message));
    }
    if let (true, Some(result)) = (options.content, &reply.result_text) {
        draft.text("gen_ai.tool.call.result", result.clone());
        draft.text("output.value", result.clone());
        draft.text("output.mime_type", "text/plain");
    }
}

/// The agent hop: the user's turn, `invoke_agent` (a client span: the agent runs elsewhere).
pub(crate) fn agent(
    draft: &mut Draft,
    hop: &RecordedHop,
    request: &AgentRequest,
    response: Option<&Reading>,
    options: SpanOptions,
) {
    draft.name = "invoke_agent".to_string();
    draft.kind = SpanKind::Client;
    draft.text("gen_ai.operation.name", "invoke_agent");
    draft.text("gen_ai.agent.name", hop.start.route.clone());
    draft.text("openinference.span.kind", "AGENT");
    let reply = match response {
        Some(Reading::AgentReply(reply)) => Some(reply),
        _ => None,
    };
    if options.content {
        draft.text(
            "gen_ai.input.messages",
            content::text_message("user", &request.message, None),
        );
        draft.text("input.value", request.message.clone());
        draft.text("input.mime_type", "text/plain");
        if let Some(reply) = reply.filter(|r| r.error.is_none()) {
            draft.text(
                "gen_ai.output.messages",
                content::text_message("assistant", &reply.reply, Some("stop")),
            );
            draft.text("output.value", reply.reply.clone());
            draft.text("output.mime_type", "text/plain");
        }
    }
    if let Some(error) = reply.and_then(|r| r.error.clone()) {
        draft.error = Some(("agent_error".into(), error));
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn url_full_never_carries_credentials() {
        assert_eq!(
            super::url_full("https://ann:pw@api.example/v1?x=1"),
            "https://REDACTED:REDACTED@api.example/v1?x=1"
        );
        assert_eq!(
            super::url_full("https://[redacted]@api.example/v1"),
            "https://REDACTED:REDACTED@api.example/v1"
        );
        assert_eq!(super::url_full("http://h:1/p"), "http://h:1/p");
    }
}
