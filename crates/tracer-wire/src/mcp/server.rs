//! The server side of MCP for any tool set, shared by every MCP server in this crate (notes-server,
//! `tracer mcp`): legacy `initialize` negotiation and methods, and modern (2026-07-28) stateless
//! requests with their `_meta` and header checks. Each answer carries the HTTP status the spec
//! gives it; stdio ignores the status. A server says who it is and what its tools do by
//! implementing [`ToolServer`]; the transports call the provided methods.

use super::session::SessionTable;
use super::{
    CacheScope, CallToolResult, DiscoverResult, Implementation, InitializeParams, InitializeResult,
    ListToolsResult, ResultType, ServerCapabilities, Tool, ToolsCapability, header_value, meta,
    method, version,
};
use crate::jsonrpc::{ErrorObject, Request, Response};
use http::StatusCode;
use serde::Serialize;
use serde_json::{Map, Value, json};
use std::future::Future;

/// How long clients may cache a tool list that never changes while the server runs.
const TOOLS_TTL_MS: u64 = 3_600_000;
/// The default cap on one request body (HTTP) or line (stdio): 1 MiB.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// One MCP server's tools and identity; the protocol (both eras) comes with it.
pub trait ToolServer: Send + Sync {
    /// `serverInfo`.
    fn server_info(&self) -> Implementation;
    /// What the server tells a client (and its model) about itself.
    fn instructions(&self) -> String;
    /// The tools, in the order `tools/list` returns them.
    fn tool_list(&self) -> Vec<Tool>;
    /// Runs `tools/call` with the request's params. `Err` is a protocol error (unknown tool, bad
    /// call shape); what the model can fix is `Ok` with `isError: true`.
    fn call_tool(
        &self,
        params: Option<&Value>,
    ) -> impl Future<Output = Result<CallToolResult, ErrorObject>> + Send;
    /// The legacy HTTP sessions (`Mcp-Session-Id`).
    fn sessions(&self) -> &SessionTable;
    /// Requests (and stdio lines) larger than this are refused.
    fn max_body_bytes(&self) -> usize {
        MAX_BODY_BYTES
    }
    /// Answer HTTP requests as `text/event-stream` when the client accepts it.
    fn sse(&self) -> bool {
        false
    }

    /// Legacy `initialize`: negotiates the version (the client's if known, else the latest
    /// legacy one) and answers; bad params get an invalid-params error and no version.
    fn initialize(&self, request: &Request) -> Initialized {
        let refuse = |error| Initialized {
            version: None,
            response: Response::error(Some(request.id.clone()), error),
        };
        let params = request.params.clone().unwrap_or(Value::Null);
        let params: InitializeParams = match serde_json::from_value(params) {
            Ok(params) => params,
            Err(error) => {
                return refuse(ErrorObject::invalid_params(format!(
                    "Invalid params: initialize needs protocolVersion, capabilities and \
                     clientInfo ({error})"
                )));
            }
        };
        let negotiated = if version::LEGACY.contains(&params.protocol_version.as_str()) {
            params.protocol_version
        } else {
            version::LATEST_LEGACY.to_owned()
        };
        let result = InitializeResult {
            protocol_version: negotiated.clone(),
            capabilities: capabilities(),
            server_info: self.server_info(),
            instructions: Some(self.instructions()),
            meta: None,
        };
        match to_value(&result) {
            Ok(value) => Initialized {
                version: Some(negotiated),
                response: Response::result(request.id.clone(), value),
            },
            Err(error) => refuse(error),
        }
    }

    /// A legacy request after `initialize` (ping, tools/list, tools/call).
    fn legacy_request(&self, request: &Request) -> impl Future<Output = Response> + Send {
        async move {
            let result = match request.method.as_str() {
                method::PING => Ok(json!({})),
                method::TOOLS_LIST => to_value(&ListToolsResult {
                    result_type: None,
                    tools: self.tool_list(),
                    next_cursor: None,
                    ttl_ms: None,
                    cache_scope: None,
                    meta: None,
                }),
                method::TOOLS_CALL => match self.call_tool(request.params.as_ref()).await {
                    Ok(result) => to_value(&result),
                    Err(error) => Err(error),
                },
                other => Err(ErrorObject::method_not_found(other)),
            };
            respond(request, result)
        }
    }

    /// A modern (2026-07-28) request: checks the `_meta` envelope and, on HTTP, the mirrored
    /// headers, then serves it statelessly.
    fn modern_request(
        &self,
        request: &Request,
        headers: Option<&ModernHeaders>,
    ) -> impl Future<Output = Answer> + Send {
        async move {
            if let Err((status, error)) = check_modern_envelope(request, headers) {
                return Answer::rejected(status, request, error);
            }
            let info_meta = server_info_meta(self.server_info());
            let result = match request.method.as_str() {
                method::SERVER_DISCOVER => to_value(&DiscoverResult {
                    result_type: Some(ResultType::Complete),
                    supported_versions: version::MODERN.iter().map(|v| (*v).to_owned()).collect(),
                    capabilities: capabilities(),
                    meta: Some(info_meta),
                    instructions: Some(self.instructions()),
                    ttl_ms: Some(TOOLS_TTL_MS),
                    cache_scope: Some(CacheScope::Public),
                }),
                method::TOOLS_LIST => to_value(&ListToolsResult {
                    result_type: Some(ResultType::Complete),
                    tools: self.tool_list(),
                    next_cursor: None,
                    ttl_ms: Some(TOOLS_TTL_MS),
                    cache_scope: Some(CacheScope::Public),
                    meta: Some(info_meta),
                }),
                method::TOOLS_CALL => match self.call_tool(request.params.as_ref()).await {
                    Ok(mut result) => {
                        result.result_type = Some(ResultType::Complete);
                        result.meta = Some(info_meta);
                        to_value(&result)
                    }
                    Err(error) => Err(error),
                },
                other => {
                    let error = ErrorObject::method_not_found(other);
                    return Answer::rejected(StatusCode::NOT_FOUND, request, error);
                }
            };
            Answer::ok(respond(request, result))
        }
    }
}

/// A shared server serves as the server itself (callers hold an `Arc`).
impl<T: ToolServer> ToolServer for std::sync::Arc<T> {
    fn server_info(&self) -> Implementation {
        self.as_ref().server_info()
    }
    fn instructions(&self) -> String {
        self.as_ref().instructions()
    }
    fn tool_list(&self) -> Vec<Tool> {
        self.as_ref().tool_list()
    }
    fn call_tool(
        &self,
        params: Option<&Value>,
    ) -> impl Future<Output = Result<CallToolResult, ErrorObject>> + Send {
        self.as_ref().call_tool(params)
    }
    fn sessions(&self) -> &SessionTable {
        self.as_ref().sessions()
    }
    fn max_body_bytes(&self) -> usize {
        self.as_ref().max_body_bytes()
    }
    fn sse(&self) -> bool {
        self.as_ref().sse()
    }
}

/// A JSON-RPC response and the HTTP status it goes out with.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub status: StatusCode,
    pub response: Response,
}

impl Answer {
    pub(crate) fn ok(response: Response) -> Self {
        Answer {
            status: StatusCode::OK,
            response,
        }
    }

    fn rejected(status: StatusCode, request: &Request, error: ErrorObject) -> Self {
        Answer {
            status,
            response: Response::error(Some(request.id.clone()), error),
        }
    }
}

/// The outcome of `initialize`: the answer, and the negotiated version when it succeeded.
#[derive(Debug, Clone, PartialEq)]
pub struct Initialized {
    pub version: Option<String>,
    pub response: Response,
}

/// The SEP-2243 headers of a modern HTTP request, as received (`None` = absent).
#[derive(Debug, Clone, Default)]
pub struct ModernHeaders {
    pub protocol_version: Option<String>,
    pub method: Option<String>,
    pub name: Option<String>,
}

/// Every version a dual-era server speaks: modern ones statelessly, legacy ones via initialize.
pub(crate) fn supported_versions() -> Vec<&'static str> {
    version::MODERN
        .iter()
        .chain(version::LEGACY)
        .copied()
        .collect()
}

fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        tools: Some(ToolsCapability {
            list_changed: Some(false),
        }),
        ..Default::default()
    }
}

fn server_info_meta(info: Implementation) -> Map<String, Value> {
    let mut meta_map = Map::new();
    meta_map.insert(meta::SERVER_INFO.to_owned(), json!(info));
    meta_map
}

fn to_value(result: &impl Serialize) -> Result<Value, ErrorObject> {
    serde_json::to_value(result).map_err(ErrorObject::internal_error)
}

fn respond(request: &Request, result: Result<Value, ErrorObject>) -> Response {
    match result {
        Ok(value) => Response::result(request.id.clone(), value),
        Err(error) => Response::error(Some(request.id.clone()), error),
    }
}

/// The 2026-07-28 envelope rules, in order: a supported version (-32022), the required `_meta`
/// keys (-32602), then the mirrored headers when on HTTP (-32020). All are HTTP 400.
fn check_modern_envelope(
    request: &Request,
    headers: Option<&ModernHeaders>,
) -> Result<(), (StatusCode, ErrorObject)> {
    let bad = |error| (StatusCode::BAD_REQUEST, error);
    let params = request.params.as_ref();
    let body_version = params.and_then(super::meta_protocol_version);
    let header_version = headers.and_then(|h| h.protocol_version.as_deref());
    let requested = body_version.or(header_version);
    if let Some(requested) = requested
        && !version::MODERN.contains(&requested)
    {
        return Err(bad(super::unsupported_protocol_version(
            requested,
            &supported_versions(),
        )));
    }
    let Some(body_version) = body_version else {
        return Err(bad(super::missing_meta(meta::PROTOCOL_VERSION)));
    };
    let capabilities = params
        .and_then(super::request_meta)
        .and_then(|m| m.get(meta::CLIENT_CAPABILITIES));
    if !capabilities.is_some_and(Value::is_object) {
        return Err(bad(super::missing_meta(meta::CLIENT_CAPABILITIES)));
    }
    let Some(headers) = headers else {
        return Ok(());
    };
    if header_version != Some(body_version) {
        return Err(bad(super::header_mismatch(
            "MCP-Protocol-Version",
            header_version,
            body_version,
        )));
    }
    let method_header = headers.method.as_deref();
    if method_header != Some(request.method.as_str()) {
        return Err(bad(super::header_mismatch(
            "Mcp-Method",
            method_header,
            &request.method,
        )));
    }
    if let Some(Some(body_name)) = super::mcp_name_source(&request.method, params) {
        let decoded = headers.name.as_deref().map(header_value::decode);
        let matches = matches!(&decoded, Some(Some(name)) if name == body_name);
        if !matches {
            let shown = headers.name.as_deref();
            return Err(bad(super::header_mismatch("Mcp-Name", shown, body_name)));
        }
    }
    Ok(())
}
