//! The MCP protocol core, shared by HTTP and stdio: legacy `initialize` negotiation and methods,
//! and modern (2026-07-28) stateless requests with their `_meta` and header checks. Each answer
//! carries the HTTP status the spec gives it; stdio ignores the status.

use super::NotesServer;
use super::tools::{call_tool, tool_list};
use crate::wire::jsonrpc::{ErrorObject, Request, Response};
use crate::wire::mcp::{
    self, CacheScope, DiscoverResult, Implementation, InitializeParams, InitializeResult,
    ListToolsResult, ResultType, ServerCapabilities, ToolsCapability, header_value, meta, method,
    version,
};
use http::StatusCode;
use serde::Serialize;
use serde_json::{Map, Value, json};

/// How long clients may cache the tool list (the tools never change while the server runs).
pub const TOOLS_TTL_MS: u64 = 3_600_000;

/// What the server tells a client about itself.
pub const INSTRUCTIONS: &str = "One plain-text notes file. To add a note use append; to see the \
    notes use read; to change text use update; write replaces the whole file; clear empties it.";

/// A JSON-RPC response and the HTTP status it goes out with.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub status: StatusCode,
    pub response: Response,
}

impl Answer {
    pub fn ok(response: Response) -> Self {
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

/// Every version this dual-era server speaks: modern ones statelessly, legacy ones via initialize.
pub fn supported_versions() -> Vec<&'static str> {
    version::MODERN
        .iter()
        .chain(version::LEGACY)
        .copied()
        .collect()
}

pub fn server_info() -> Implementation {
    Implementation {
        title: Some("Notes MCP server".to_owned()),
        ..Implementation::new("notes-server", env!("CARGO_PKG_VERSION"))
    }
}

fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        tools: Some(ToolsCapability {
            list_changed: Some(false),
        }),
        ..Default::default()
    }
}

fn server_info_meta() -> Map<String, Value> {
    let mut meta_map = Map::new();
    meta_map.insert(meta::SERVER_INFO.to_owned(), json!(server_info()));
    meta_map
}

fn to_value(result: &impl Serialize) -> Result<Value, ErrorObject> {
    serde_json::to_value(result).map_err(ErrorObject::internal_error)
}

impl NotesServer {
    /// Legacy `initialize`: negotiates the version (the client's if known, else the latest
    /// legacy one) and answers; bad params get an invalid-params error and no version.
    pub fn initialize(&self, request: &Request) -> Initialized {
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
            server_info: server_info(),
            instructions: Some(INSTRUCTIONS.to_owned()),
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
    pub async fn legacy_request(&self, request: &Request) -> Response {
        let result = match request.method.as_str() {
            method::PING => Ok(json!({})),
            method::TOOLS_LIST => to_value(&ListToolsResult {
                result_type: None,
                tools: tool_list(),
                next_cursor: None,
                ttl_ms: None,
                cache_scope: None,
                meta: None,
            }),
            method::TOOLS_CALL => match call_tool(&self.notes, request.params.as_ref()).await {
                Ok(result) => to_value(&result),
                Err(error) => Err(error),
            },
            other => Err(ErrorObject::method_not_found(other)),
        };
        respond(request, result)
    }

    /// A modern (2026-07-28) request: checks the `_meta` envelope and, on HTTP, the mirrored
    /// headers, then serves it statelessly.
    pub async fn modern_request(
        &self,
        request: &Request,
        headers: Option<&ModernHeaders>,
    ) -> Answer {
        if let Err((status, error)) = check_modern_envelope(request, headers) {
            return Answer::rejected(status, request, error);
        }
        let result = match request.method.as_str() {
            method::SERVER_DISCOVER => to_value(&DiscoverResult {
                result_type: Some(ResultType::Complete),
                supported_versions: version::MODERN.iter().map(|v| (*v).to_owned()).collect(),
                capabilities: capabilities(),
                meta: Some(server_info_meta()),
                instructions: Some(INSTRUCTIONS.to_owned()),
                ttl_ms: Some(TOOLS_TTL_MS),
                cache_scope: Some(CacheScope::Public),
            }),
            method::TOOLS_LIST => to_value(&ListToolsResult {
                result_type: Some(ResultType::Complete),
                tools: tool_list(),
                next_cursor: None,
                ttl_ms: Some(TOOLS_TTL_MS),
                cache_scope: Some(CacheScope::Public),
                meta: Some(server_info_meta()),
            }),
            method::TOOLS_CALL => match call_tool(&self.notes, request.params.as_ref()).await {
                Ok(mut result) => {
                    result.result_type = Some(ResultType::Complete);
                    result.meta = Some(server_info_meta());
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
    let body_version = params.and_then(mcp::meta_protocol_version);
    let header_version = headers.and_then(|h| h.protocol_version.as_deref());
    let requested = body_version.or(header_version);
    if let Some(requested) = requested
        && !version::MODERN.contains(&requested)
    {
        return Err(bad(mcp::unsupported_protocol_version(
            requested,
            &supported_versions(),
        )));
    }
    let Some(body_version) = body_version else {
        return Err(bad(mcp::missing_meta(meta::PROTOCOL_VERSION)));
    };
    let capabilities = params
        .and_then(mcp::request_meta)
        .and_then(|m| m.get(meta::CLIENT_CAPABILITIES));
    if !capabilities.is_some_and(Value::is_object) {
        return Err(bad(mcp::missing_meta(meta::CLIENT_CAPABILITIES)));
    }
    let Some(headers) = headers else {
        return Ok(());
    };
    if header_version != Some(body_version) {
        return Err(bad(mcp::header_mismatch(
            "MCP-Protocol-Version",
            header_version,
            body_version,
        )));
    }
    let method_header = headers.method.as_deref();
    if method_header != Some(request.method.as_str()) {
        return Err(bad(mcp::header_mismatch(
            "Mcp-Method",
            method_header,
            &request.method,
        )));
    }
    if let Some(Some(body_name)) = mcp::mcp_name_source(&request.method, params) {
        let decoded = headers.name.as_deref().map(header_value::decode);
        let matches = matches!(&decoded, Some(Some(name)) if name == body_name);
        if !matches {
            let shown = headers.name.as_deref();
            return Err(bad(mcp::header_mismatch("Mcp-Name", shown, body_name)));
        }
    }
    Ok(())
}
