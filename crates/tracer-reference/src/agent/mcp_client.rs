//! The MCP side of the loop: one client per configured server, over Streamable HTTP (dual-era:
//! stateless `2026-07-28` first, `initialize` and a kept session as the fallback) or stdio (a
//! process spawned once and kept). Both carry the trace context in `params._meta`.
//!
//! This module owns what is common: the `_meta` the agent sends, tools/list paging, tools/call,
//! and turning a tool result into the text the model is given.

mod http_transport;
mod stdio_transport;

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use serde_json::{Map, Value};

use super::config::{ConfigError, McpServerSpec};
use super::outbound::{self, HttpClient};
use super::upstream_error::{FailureKind, UpstreamError};
use tracer_wire::agent_api::Upstream;
use tracer_wire::jsonrpc::{ErrorObject, Request, RequestId, Response};
use tracer_wire::mcp::{
    self, CallToolParams, CallToolResult, ContentBlock, Implementation, InitializeParams,
    InitializeResult, ListToolsResult, RequestMeta, ResultType, Tool, version,
};
use tracer_wire::trace_context::TraceContext;

/// At most this many tools/list pages are followed.
const MAX_LIST_PAGES: usize = 50;

/// Who the agent says it is (`clientInfo`).
fn client_info() -> Implementation {
    Implementation::new("notes-agent", env!("CARGO_PKG_VERSION"))
}

/// The `_meta` of a modern request: the required envelope plus the trace context.
fn modern_meta(trace: &TraceContext) -> RequestMeta {
    let mut meta = RequestMeta::modern(client_info()).with_traceparent(trace.parent.to_string());
    meta.tracestate = trace.state.clone();
    meta
}

/// The `_meta` of a legacy request: only the trace context.
fn legacy_meta(trace: &TraceContext) -> RequestMeta {
    RequestMeta {
        traceparent: Some(trace.parent.to_string()),
        tracestate: trace.state.clone(),
        ..RequestMeta::default()
    }
}

/// `params` with `_meta` added (the shared envelope helper).
fn with_meta(params: &Map<String, Value>, meta: RequestMeta) -> Value {
    mcp::with_meta(Some(Value::Object(params.clone())), &meta)
}

/// What both transports make requests and errors with: the next request id, and the server.
struct Peer {
    upstream: Upstream,
    next_id: AtomicI64,
}

impl Peer {
    fn new(upstream: Upstream) -> Self {
        Self {
            upstream,
            next_id: AtomicI64::new(1),
        }
    }

    fn id(&self) -> RequestId {
        RequestId::from(self.next_id.fetch_add(1, Ordering::Relaxed))
    }

    fn failed(&self, detail: String) -> UpstreamError {
        self.error(FailureKind::Failed, detail)
    }

    fn error(&self, kind: FailureKind, detail: String) -> UpstreamError {
        UpstreamError::new(kind, &self.upstream, detail)
    }
}

/// The legacy handshake's `initialize` request: the latest legacy version, who the agent is,
/// and the trace context in `_meta`.
fn initialize_request(id: RequestId, trace: &TraceContext) -> Request {
    let params = InitializeParams {
        protocol_version: version::LATEST_LEGACY.to_string(),
        capabilities: Value::Object(Map::new()),
        client_info: client_info(),
        meta: Some(legacy_meta(trace)),
    };
    Request::new(
        id,
        mcp::method::INITIALIZE,
        serde_json::to_value(params).ok(),
    )
}

/// The server's answer to `initialize`, or why it is not one (`failed` makes the error).
fn initialize_result(
    response: Response,
    failed: impl Fn(String) -> UpstreamError,
) -> Result<InitializeResult, UpstreamError> {
    let result = response.into_result().map_err(|error| {
        failed(format!(
            "initialize answered JSON-RPC error {}: {}",
            error.code, error.message
        ))
    })?;
    serde_json::from_value(result).map_err(|e| {
        failed(format!(
            "initialize answered something that is not an InitializeResult: {e}"
        ))
    })
}

/// The name a server gave itself, from a result's `_meta` (modern servers put it there).
fn server_info_name(meta: Option<&Map<String, Value>>) -> Option<String> {
    meta?
        .get(mcp::meta::SERVER_INFO)?
        .get("name")?
        .as_str()
        .map(str::to_string)
}

enum Transport {
    Http(Box<http_transport::HttpTransport>),
    Stdio(stdio_transport::StdioTransport),
}

/// One MCP server.
pub struct McpServer {
    transport: Transport,
    label: String,
}

/// What tools/list returned.
#[derive(Debug, Clone)]
pub struct ToolListing {
    pub tools: Vec<Tool>,
}

impl McpServer {
    pub fn new(
        spec: &McpServerSpec,
        http: HttpClient,
        timeout: Duration,
    ) -> Result<Self, ConfigError> {
        let address = spec.address();
        let (label, transport) = match spec {
            McpServerSpec::Http { url } => {
                let uri = outbound::parse_http_url("--mcp", url)?;
                let label = uri
                    .authority()
                    .map(|a| a.as_str().to_string())
                    .unwrap_or_else(|| url.clone());
                let upstream = upstream(&label, &address);
                (
                    label,
                    Transport::Http(Box::new(http_transport::HttpTransport::new(
                        uri, http, timeout, upstream,
                    ))),
                )
            }
            McpServerSpec::Stdio { program, args } => {
                let label = std::path::Path::new(program)
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| program.clone());
                let upstream = upstream(&label, &address);
                let transport = stdio_transport::StdioTransport::new(
                    program.clone(),
                    args.clone(),
                    timeout,
                    upstream,
                );
                (label, Transport::Stdio(transport))
            }
        };
        Ok(Self { transport, label })
    }

    /// The server's own name once it has told us, else a name from its address.
    pub(crate) async fn name(&self) -> String {
        let reported = match &self.transport {
            Transport::Http(http) => http.server_name().await,
            Transport::Stdio(stdio) => stdio.server_name().await,
        };
        reported.unwrap_or_else(|| self.label.clone())
    }

    fn upstream(&self) -> &Upstream {
        match &self.transport {
            Transport::Http(http) => http.upstream(),
            Transport::Stdio(stdio) => stdio.upstream(),
        }
    }

    /// One request; the transport gives every message it sends its own child span of `trace`.
    async fn request(
        &self,
        method: &str,
        params: Map<String, Value>,
        trace: &TraceContext,
    ) -> Result<Response, UpstreamError> {
        match &self.transport {
            Transport::Http(http) => http.request(method, params, trace).await,
            Transport::Stdio(stdio) => stdio.request(method, params, trace).await,
        }
    }

    /// Lets a stdio server exit on its own (stdin closed) within `grace`, then kills it.
    pub(crate) async fn shutdown(&self, grace: Duration) {
        if let Transport::Stdio(stdio) = &self.transport {
            stdio.shutdown(grace).await;
        }
    }

    /// `tools/list`, following `nextCursor`. A JSON-RPC error here fails the request.
    pub async fn list_tools(&self, trace: &TraceContext) -> Result<ToolListing, UpstreamError> {
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_LIST_PAGES {
            let mut params = Map::new();
            if let Some(cursor) = cursor.take() {
                params.insert("cursor".to_string(), Value::String(cursor));
            }
            let response = self.request(mcp::method::TOOLS_LIST, params, trace).await?;
            let result = response.into_result().map_err(|error| {
                self.failed(format!(
                    "tools/list answered JSON-RPC error {}: {}",
                    error.code, error.message
                ))
            })?;
            let page: ListToolsResult = serde_json::from_value(result).map_err(|e| {
                self.failed(format!(
                    "tools/list answered something that is not a tool list: {e}"
                ))
            })?;
            tools.extend(page.tools);
            match page.next_cursor {
                Some(next) if !next.is_empty() => cursor = Some(next),
                _ => return Ok(ToolListing { tools }),
            }
        }
        Err(self.failed(format!(
            "tools/list kept paging past {MAX_LIST_PAGES} pages"
        )))
    }

    /// `tools/call`. A JSON-RPC error is returned as `Ok(Err(..))`: it goes back to the model.
    pub(crate) async fn call_tool(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        trace: &TraceContext,
    ) -> Result<Result<CallToolResult, ErrorObject>, UpstreamError> {
        let params = CallToolParams {
            name: name.to_string(),
            arguments: Some(arguments),
            meta: None,
        };
        let params = match serde_json::to_value(params) {
            Ok(Value::Object(map)) => map,
            _ => Map::new(),
        };
        let response = self.request(mcp::method::TOOLS_CALL, params, trace).await?;
        match response.into_result() {
            Err(error) => Ok(Err(error)),
            Ok(result) => serde_json::from_value(result).map(Ok).map_err(|e| {
                self.failed(format!(
                    "tools/call answered something that is not a tool result: {e}"
                ))
            }),
        }
    }

    fn failed(&self, detail: String) -> UpstreamError {
        UpstreamError::new(FailureKind::Failed, self.upstream(), detail)
    }
}

fn upstream(name: &str, address: &str) -> Upstream {
    Upstream {
        role: "mcp".to_string(),
        name: name.to_string(),
        address: address.to_string(),
    }
}

/// The text a tool result becomes for the model: its text blocks, with other blocks described.
pub(crate) fn result_text(result: &CallToolResult) -> String {
    if result.result_type == Some(ResultType::InputRequired) {
        return "The tool needs more input from the user, which this agent cannot ask for.".into();
    }
    let mut parts: Vec<String> = result
        .content
        .iter()
        .map(|block| match block {
            ContentBlock::Text { text, .. } => text.clone(),
            ContentBlock::Image {
                data, mime_type, ..
            } => {
                format!("[image {mime_type}, {} bytes of base64]", data.len())
            }
            ContentBlock::Audio {
                data, mime_type, ..
            } => {
                format!("[audio {mime_type}, {} bytes of base64]", data.len())
            }
            ContentBlock::ResourceLink { uri, name, .. } => {
                format!("[resource link {name}: {uri}]")
            }
            ContentBlock::Resource { resource } => {
                match resource.get("text").and_then(Value::as_str) {
                    Some(text) => text.to_string(),
                    None => format!(
                        "[resource {}]",
                        resource.get("uri").and_then(Value::as_str).unwrap_or("?")
                    ),
                }
            }
        })
        .collect();
    if parts.is_empty()
        && let Some(structured) = &result.structured_content
    {
        parts.push(structured.to_string());
    }
    parts.join("\n")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn results_become_text_for_the_model() {
        let result: CallToolResult = serde_json::from_value(json!({"content": [
            {"type": "text", "text": "line one"},
            {"type": "image", "data": "AAAA", "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "file:///n", "text": "notes"}}]}))
        .unwrap();
        assert_eq!(
            result_text(&result),
            "line one\n[image image/png, 4 bytes of base64]\nnotes"
        );
        let structured: CallToolResult =
            serde_json::from_value(json!({"content": [], "structuredContent": {"a": 1}})).unwrap();
        assert_eq!(result_text(&structured), "{\"a\":1}");
    }

    #[test]
    fn meta_carries_the_trace_in_both_eras() {
        let trace = TraceContext::continue_or_start(
            Some("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),
            None,
        );
        let modern = with_meta(&Map::new(), modern_meta(&trace));
        assert_eq!(modern["_meta"][mcp::meta::PROTOCOL_VERSION], "2026-07-28");
        assert_eq!(modern["_meta"]["traceparent"], trace.parent.to_string());
        let legacy = with_meta(&Map::new(), legacy_meta(&trace));
        assert_eq!(
            legacy["_meta"],
            json!({"traceparent": trace.parent.to_string()})
        );
    }
}
