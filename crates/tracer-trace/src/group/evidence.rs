//! What grouping may know about one hop: ids, times, and the content evidence its bodies carry.

use serde_json::Value;

use crate::read::request_anatomy::{title_line, title_words};
use crate::read::side_calls::side_call_by_shape;
use tracer_wire::dialect::{self, Reading, ToolCall};
use tracer_wire::hop::{HopEnd, HopStart, HopState, Role, header_text};
use tracer_wire::redact::REDACTED;

/// A tool call reduced to what matching compares: its name and its arguments as JSON.
#[derive(Debug, Clone, PartialEq)]
pub struct CallKey {
    pub name: String,
    pub arguments: Value,
}

impl CallKey {
    pub(crate) fn new(name: impl Into<String>, arguments: Value) -> Self {
        Self {
            name: name.into(),
            arguments,
        }
    }

    fn from_call(call: &ToolCall) -> Self {
        Self::new(call.name.clone(), call.arguments.clone())
    }
}

/// The grouping view of one hop (a `TraceInput` is cheap to build and holds no bodies).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TraceInput {
    pub hop_id: String,
    pub role: Option<Role>,
    /// The client's address (HTTP) or the wrapped command (stdio).
    pub peer: String,
    pub started_ns: i64,
    /// None while the hop is in flight.
    pub ended_ns: Option<i64>,
    /// The W3C trace id from a `traceparent` header or MCP `params._meta.traceparent`.
    pub trace_id: Option<String>,
    /// On an agent hop: the user's message.
    pub user_text: Option<String>,
    /// On a model request: the latest user message, and every user message.
    pub latest_user_text: Option<String>,
    pub user_texts: Vec<String>,
    /// What would title a trace this hop opens: the user's words on one line (an agent's
    /// message; a model request's words without the host's context, none for a side call).
    pub title_text: Option<String>,
    /// On a model request: tool calls already in the history, and `tool` messages' contents.
    pub history_calls: Vec<CallKey>,
    pub tool_results: Vec<String>,
    /// On a model response: the tool calls the model asked for.
    pub asked_calls: Vec<CallKey>,
    /// On an MCP hop: the JSON-RPC method, the tool called, and the result text.
    pub mcp_method: Option<String>,
    pub mcp_call: Option<CallKey>,
    pub mcp_result: Option<String>,
    /// The route the hop came through (an MCP server is initialized once per route and process).
    pub route: String,
    /// The host's own id of its run (`x-claude-code-session-id`, Codex `session-id`, ...).
    pub host_session: Option<String>,
    /// The MCP session the request names (`Mcp-Session-Id`), when the record holds it in clear.
    pub mcp_session: Option<String>,
    /// An MCP `DELETE`: the host ends its MCP session (its process is going away).
    pub ends_mcp_session: bool,
    /// A `HEAD` preconnect (Claude Code's `HEAD /`): it opens no trace of its own.
    pub preconnect: bool,
    /// A host's standing stream for server messages (`GET /mcp`): it joins a trace but never
    /// holds it open, however long it stays open.
    pub standing_stream: bool,
    /// The host's own housekeeping (`side_calls::housekeeping_of`): sign-in, model lists,
    /// settings. It opens no request trace: it goes to the session's setup trace.
    pub housekeeping: bool,
    /// The `tracer run` that recorded the hop: a hop never joins a session of another run (or
    /// of no run).
    pub run: Option<String>,
    /// A call a caller made by itself (no agent, model or MCP role: a REST call to an OpenAPI
    /// tool server, a program's own request): what titles the trace it opens when no user
    /// request is open around it. None for every other hop.
    pub own_call_title: Option<String>,
}

/// Headers in which hosts name their own run, most specific first: Claude Code, Codex (whose
/// `thread-id` is the same id), opencode (`x-session-id`), then the other correlation names.
pub(crate) const HOST_SESSION_HEADERS: [&str; 5] = [
    "x-claude-code-session-id",
    "session-id",
    "x-session-id",
    "thread-id",
    "x-thread-id",
];

/// The first host session id among `HOST_SESSION_HEADERS` (a redacted value, as older records
/// hold them, names nothing).
fn host_session_of(headers: &[tracer_wire::hop::Header]) -> Option<String> {
    HOST_SESSION_HEADERS.iter().find_map(|name| {
        header_text(headers, name)
            .map(str::trim)
            .filter(|value| !value.is_empty() && !value.starts_with(REDACTED))
            .map(str::to_string)
    })
}

/// MCP methods that discover a server rather than act for a user request.
pub(crate) const DISCOVERY_METHODS: [&str; 6] = [
    "initialize",
    "notifications/initialized",
    "tools/list",
    "server/discover",
    "ping",
    "prompts/list",
];

impl TraceInput {
    /// Whether this hop is a discovery call (`initialize`, `tools/list`, `server/discover`, …).
    pub fn is_discovery(&self) -> bool {
        self.mcp_method
            .as_deref()
            .is_some_and(|m| DISCOVERY_METHODS.contains(&m) || m == "resources/list")
    }

    /// Whether this hop starts an MCP session (`initialize`): once per server and host process.
    pub(crate) fn is_initialize(&self) -> bool {
        self.mcp_method.as_deref() == Some("initialize")
    }

    /// Builds the grouping view of a recorded hop by reading its bodies.
    pub(crate) fn from_hop(start: &HopStart, end: Option<&HopEnd>) -> Self {
        let reading = dialect::read_hop(start, end);
        let mut input = TraceInput {
            hop_id: start.id.clone(),
            role: Some(start.role),
            peer: start.peer.clone(),
            started_ns: start.started_unix_ns,
            ended_ns: end.and_then(|e| match e.state {
                Some(HopState::InFlight) => None,
                _ => e
                    .response_ended_unix_ns
                    .or(e.response_head_unix_ns)
                    .or(e.request_ended_unix_ns)
                    .or(Some(start.started_unix_ns)),
            }),
            trace_id: header_text(&start.request_headers, "traceparent")
                .and_then(trace_id_of_traceparent),
            route: start.route.clone(),
            host_session: host_session_of(&start.request_headers),
            mcp_session: match start.role {
                Role::Mcp => header_text(&start.request_headers, "mcp-session-id")
                    .map(str::trim)
                    .filter(|value| !value.is_empty() && !value.starts_with(REDACTED))
                    .map(str::to_string),
                _ => None,
            },
            ends_mcp_session: start.role == Role::Mcp && start.method == "DELETE",
            preconnect: start.method == "HEAD",
            standing_stream: crate::read::transport_moves::is_standing_stream(start),
            housekeeping: crate::read::side_calls::housekeeping_of(start).is_some(),
            run: start.run_id.clone(),
            ..TraceInput::default()
        };
        match &reading.request.reading {
            Reading::AgentRequest(request) => {
                input.user_text = Some(request.message.clone());
                input.title_text = Some(title_line(&request.message)).filter(|t| !t.is_empty());
            }
            Reading::ModelRequest(request) => {
                input.latest_user_text = request.latest_user_text().map(str::to_string);
                if side_call_by_shape(start, &reading).is_none() {
                    input.title_text = title_words(request);
                }
                for message in &request.messages {
                    match message.role.as_str() {
                        "user" => input.user_texts.push(message.content.clone()),
                        "tool" => input.tool_results.push(message.content.clone()),
                        _ => {}
                    }
                    input
                        .history_calls
                        .extend(message.tool_calls.iter().map(CallKey::from_call));
                }
            }
            Reading::Mcp(mcp) => {
                if let Some(message) = mcp.request() {
                    input.mcp_method = message.method.clone();
                    if message.method.as_deref() == Some("tools/call") {
                        input.mcp_call = message.tool_name.as_ref().map(|name| {
                            CallKey::new(
                                name.clone(),
                                message
                                    .arguments
                                    .clone()
                                    .unwrap_or(Value::Object(serde_json::Map::new())),
                            )
                        });
                    }
                    if input.trace_id.is_none() {
                        input.trace_id = message
                            .traceparent
                            .as_deref()
                            .and_then(trace_id_of_traceparent);
                    }
                }
            }
            _ => {}
        }
        if start.role == Role::Other
            && !input.preconnect
            && !input.standing_stream
            && !input.housekeeping
        {
            input.own_call_title = Some(own_call_title(start, end));
        }
        if let Some(response) = &reading.response {
            match &response.reading {
                Reading::ModelResponse(reply) => {
                    input.asked_calls = reply
                        .message
                        .tool_calls
                        .iter()
                        .map(CallKey::from_call)
                        .collect();
                }
                Reading::Mcp(mcp) => {
                    input.mcp_result = mcp.reply().and_then(|m| m.result_text.clone());
                }
                _ => {}
            }
        }
        input
    }
}

/// How a call of its own is titled: a REST tool call by its tool and arguments
/// (`phonebook/get_phonenumber {"name":"Ashley Johnson"}`), any other by its method and where it
/// went (`GET 127.0.0.1:8000/`), the query left out.
fn own_call_title(start: &HopStart, end: Option<&HopEnd>) -> String {
    const ARGUMENTS: usize = 80;
    let body = end.map_or(&[][..], |e| e.request_body.bytes.as_slice());
    if start.method == "POST"
        && let Some(call) = tracer_wire::openapi_tools::read_call(&start.path, body)
    {
        let tool = match &call.server {
            Some(server) => format!("{server}/{}", call.tool),
            None => call.tool.clone(),
        };
        let arguments = call.arguments.to_string();
        return match arguments.as_str() {
            "{}" => tool,
            _ => format!("{tool} {}", crate::words::shorten(&arguments, ARGUMENTS)),
        };
    }
    let path = start.path.split('?').next().unwrap_or(&start.path);
    let (scheme, rest) = start.url.split_once("://").unwrap_or(("", ""));
    let host = rest.split('/').next().unwrap_or("");
    // The scheme's own port says nothing.
    let host = match (scheme, host.rsplit_once(':')) {
        ("https", Some((name, "443"))) | ("http", Some((name, "80"))) => name,
        _ => host,
    };
    tracer_wire::safe_text::one_line(&format!("{} {host}{path}", start.method)).into_owned()
}

/// The trace id of a W3C `traceparent` value, or None when the header must be ignored (E.1).
pub(crate) fn trace_id_of_traceparent(value: &str) -> Option<String> {
    tracer_wire::trace_context::TraceParent::parse(value)
        .ok()
        .map(|parent| parent.trace_id_hex())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traceparent_follows_w3c_rules() {
        let id = "0af7651916cd43dd8448eb211c80319c";
        assert_eq!(
            trace_id_of_traceparent(&format!("00-{id}-b7ad6b7169203331-01")),
            Some(id.to_string())
        );
        for bad in [
            "00-00000000000000000000000000000000-b7ad6b7169203331-01",
            "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
            "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-extra",
            "garbage",
        ] {
            assert_eq!(trace_id_of_traceparent(bad), None, "{bad}");
        }
    }
}
