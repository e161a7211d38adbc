//! MCP vocabulary shared by the server, the agent, the proxy and the viewer: protocol versions and
//! eras, method names, HTTP header names, `_meta` keys, MCP error codes, and (in submodules) the
//! JSON shapes of initialize, server/discover, tools/list and tools/call, and the server side of
//! the protocol for any tool set (`server`, `session`).

mod envelope;
pub(crate) mod header_value;
pub mod server;
pub mod session;
pub(crate) mod shapes;
pub(crate) mod tools;

pub use envelope::{mirrored_headers, with_meta};
pub use shapes::*;
pub use tools::*;

use std::borrow::Cow;

use crate::jsonrpc::ErrorObject;
use serde_json::{Map, Value, json};

/// Protocol version strings, oldest first.
pub mod version {
    /// First release; HTTP+SSE transport.
    pub(crate) const V2024_11_05: &str = "2024-11-05";
    /// Streamable HTTP, batching.
    pub const V2025_03_26: &str = "2025-03-26";
    /// Batching removed, `MCP-Protocol-Version` header required.
    pub(crate) const V2025_06_18: &str = "2025-06-18";
    /// The last version with `initialize` and sessions.
    pub(crate) const V2025_11_25: &str = "2025-11-25";
    /// Stateless MCP: no handshake, per-request `_meta`, `server/discover`.
    pub const V2026_07_28: &str = "2026-07-28";

    /// The newest version that uses `initialize` (what a legacy server offers by default).
    pub const LATEST_LEGACY: &str = V2025_11_25;
    /// Every known legacy (handshake-era) version, newest first.
    pub const LEGACY: &[&str] = &[V2025_11_25, V2025_06_18, V2025_03_26, V2024_11_05];
    /// Every known modern (stateless) version, newest first.
    pub(crate) const MODERN: &[&str] = &[V2026_07_28];
}

/// Which protocol generation a message or exchange belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Era {
    /// `2025-11-25` and earlier: `initialize`, sessions (`Mcp-Session-Id` on HTTP).
    Legacy,
    /// `2026-07-28` and later: stateless, every request self-contained.
    Modern,
}

impl Era {
    /// The era of a protocol version string. Versions are dates, so any version on or after
    /// `2026-07-28` is modern, including future ones.
    pub(crate) fn of_version(version: &str) -> Era {
        if version >= version::V2026_07_28 {
            Era::Modern
        } else {
            Era::Legacy
        }
    }
}

/// What is known about a request when deciding its era (all fields optional hints).
#[cfg(test)]
#[derive(Debug, Clone, Copy, Default)]
struct EraEvidence<'a> {
    /// The JSON-RPC method of the body.
    pub method: Option<&'a str>,
    /// The body's `params`.
    pub params: Option<&'a Value>,
    /// An `Mcp-Session-Id` header was present.
    pub has_session_id: bool,
    /// The `MCP-Protocol-Version` header value.
    pub protocol_version_header: Option<&'a str>,
    /// An `Mcp-Method` header was present.
    pub has_method_header: bool,
}

/// Decides the era of one request from what it carries, or `None` when nothing tells.
/// `initialize` means legacy; then a `_meta` protocol version means modern (a dual-era server
/// serves it statelessly even with a session id); then a session id means legacy; then an
/// `Mcp-Method` header means modern; last, the `MCP-Protocol-Version` header's own era.
#[cfg(test)]
fn detect_era(evidence: &EraEvidence<'_>) -> Option<Era> {
    if evidence.method == Some(method::INITIALIZE) {
        return Some(Era::Legacy);
    }
    if evidence.params.and_then(meta_protocol_version).is_some() {
        return Some(Era::Modern);
    }
    if evidence.has_session_id {
        return Some(Era::Legacy);
    }
    if evidence.has_method_header {
        return Some(Era::Modern);
    }
    evidence.protocol_version_header.map(Era::of_version)
}

/// JSON-RPC method names.
pub mod method {
    pub const INITIALIZE: &str = "initialize";
    pub const INITIALIZED: &str = "notifications/initialized";
    pub const PING: &str = "ping";
    pub const SERVER_DISCOVER: &str = "server/discover";
    pub const TOOLS_LIST: &str = "tools/list";
    pub const TOOLS_CALL: &str = "tools/call";
    pub(crate) const RESOURCES_READ: &str = "resources/read";
    pub(crate) const PROMPTS_GET: &str = "prompts/get";
}

/// HTTP header names, lower case (as `http::HeaderName::from_static` needs; matching is
/// case-insensitive on the wire).
pub mod header {
    pub const SESSION_ID: &str = "mcp-session-id";
    pub const PROTOCOL_VERSION: &str = "mcp-protocol-version";
    pub const METHOD: &str = "mcp-method";
    pub const NAME: &str = "mcp-name";
}

/// `_meta` keys.
pub mod meta {
    pub const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
    pub(crate) const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
    pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
    #[cfg(test)]
    pub(crate) const TRACEPARENT: &str = "traceparent";
}

/// MCP error codes beyond the JSON-RPC standard ones.
pub mod code {
    /// `2026-07-28`: a header does not match the body.
    pub(crate) const HEADER_MISMATCH: i64 = -32020;
    /// `2026-07-28`: the request lacks a client capability the server needs.
    pub(crate) const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
    /// `2026-07-28`: the requested protocol version is not supported.
    pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

    /// True for the codes a dual-era client takes as proof that a server is modern.
    pub fn is_modern_error(code: i64) -> bool {
        matches!(
            code,
            HEADER_MISMATCH | MISSING_REQUIRED_CLIENT_CAPABILITY | UNSUPPORTED_PROTOCOL_VERSION
        )
    }
}

/// -32022 with `data.supported` and `data.requested`, as the 2026-07-28 schema example shows.
pub(crate) fn unsupported_protocol_version(requested: &str, supported: &[&str]) -> ErrorObject {
    ErrorObject::new(
        code::UNSUPPORTED_PROTOCOL_VERSION,
        "Unsupported protocol version",
    )
    .with_data(json!({ "supported": supported, "requested": requested }))
}

/// -32020 naming the header and both values.
pub(crate) fn header_mismatch(
    header: &str,
    header_value: Option<&str>,
    body_value: &str,
) -> ErrorObject {
    let message = match header_value {
        Some(found) => format!(
            "Header mismatch: {header} header value '{found}' does not match body value '{body_value}'"
        ),
        None => format!("Header mismatch: {header} header is missing (body value '{body_value}')"),
    };
    ErrorObject::new(code::HEADER_MISMATCH, message)
}

/// -32602 for a required `_meta` key the request did not carry.
pub(crate) fn missing_meta(key: &str) -> ErrorObject {
    ErrorObject::invalid_params(format!("Missing required _meta field: {key}"))
}

/// -32602 `Unknown tool: X`.
pub fn unknown_tool(name: &str) -> ErrorObject {
    ErrorObject::invalid_params(format!("Unknown tool: {name}"))
}

/// The tool name of `tools/call` params, or the invalid-params error to answer.
pub fn call_tool_name(params: Option<&Value>) -> Result<&str, ErrorObject> {
    params
        .and_then(|p| p.get("name"))
        .and_then(Value::as_str)
        .ok_or_else(|| {
            ErrorObject::invalid_params(
                "Invalid params: tools/call needs params.name, the tool name as a string",
            )
        })
}

/// The arguments of `tools/call` params (none when missing or null), or the invalid-params
/// error to answer when they are not an object.
pub fn call_tool_arguments(
    params: Option<&Value>,
) -> Result<Cow<'_, Map<String, Value>>, ErrorObject> {
    match params.and_then(|p| p.get("arguments")) {
        None | Some(Value::Null) => Ok(Cow::Owned(Map::new())),
        Some(Value::Object(arguments)) => Ok(Cow::Borrowed(arguments)),
        Some(_) => Err(ErrorObject::invalid_params(
            "Invalid params: tools/call arguments must be a JSON object",
        )),
    }
}

/// `params._meta` of a request, when present and an object.
pub(crate) fn request_meta(params: &Value) -> Option<&Map<String, Value>> {
    params.get("_meta").and_then(Value::as_object)
}

/// `params._meta["io.modelcontextprotocol/protocolVersion"]`, when it is a string.
pub fn meta_protocol_version(params: &Value) -> Option<&str> {
    request_meta(params)?.get(meta::PROTOCOL_VERSION)?.as_str()
}

/// `params._meta.traceparent`, when it is a string.
#[cfg(test)]
fn meta_traceparent(params: &Value) -> Option<&str> {
    request_meta(params)?.get(meta::TRACEPARENT)?.as_str()
}

/// The value `Mcp-Name` mirrors for a method: `params.name` for tools/call and prompts/get,
/// `params.uri` for resources/read; `None` for methods that need no `Mcp-Name`.
pub(crate) fn mcp_name_source<'a>(
    method_name: &str,
    params: Option<&'a Value>,
) -> Option<Option<&'a str>> {
    let field = match method_name {
        method::TOOLS_CALL | method::PROMPTS_GET => "name",
        method::RESOURCES_READ => "uri",
        _ => return None,
    };
    Some(params.and_then(|p| p.get(field)).and_then(Value::as_str))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn eras_of_versions() {
        assert_eq!(Era::of_version(version::V2025_11_25), Era::Legacy);
        assert_eq!(Era::of_version(version::V2024_11_05), Era::Legacy);
        assert_eq!(Era::of_version(version::V2026_07_28), Era::Modern);
        assert_eq!(Era::of_version("2027-01-01"), Era::Modern);
        assert!(
            version::LEGACY
                .iter()
                .all(|v| Era::of_version(v) == Era::Legacy)
        );
    }

    #[test]
    fn era_detection_follows_the_evidence() {
        let modern_params = json!({"_meta": {meta::PROTOCOL_VERSION: "2026-07-28"}});
        let init = EraEvidence {
            method: Some("initialize"),
            ..Default::default()
        };
        assert_eq!(detect_era(&init), Some(Era::Legacy));
        let session = EraEvidence {
            has_session_id: true,
            ..Default::default()
        };
        assert_eq!(detect_era(&session), Some(Era::Legacy));
        let meta = EraEvidence {
            params: Some(&modern_params),
            ..Default::default()
        };
        assert_eq!(detect_era(&meta), Some(Era::Modern));
        let headers = EraEvidence {
            has_method_header: true,
            ..Default::default()
        };
        assert_eq!(detect_era(&headers), Some(Era::Modern));
        let legacy_header = EraEvidence {
            protocol_version_header: Some("2025-06-18"),
            ..Default::default()
        };
        assert_eq!(detect_era(&legacy_header), Some(Era::Legacy));
        assert_eq!(detect_era(&EraEvidence::default()), None);
    }

    #[test]
    fn error_shapes_match_the_spec_examples() {
        let error = unsupported_protocol_version("1900-01-01", &["2026-07-28", "2025-11-25"]);
        assert_eq!(
            serde_json::to_value(&error).unwrap(),
            json!({"code": -32022, "message": "Unsupported protocol version",
                   "data": {"supported": ["2026-07-28", "2025-11-25"], "requested": "1900-01-01"}})
        );
        assert_eq!(
            header_mismatch("Mcp-Name", Some("foo"), "bar").message,
            "Header mismatch: Mcp-Name header value 'foo' does not match body value 'bar'"
        );
        assert_eq!(unknown_tool("nope").message, "Unknown tool: nope");
        assert_eq!(missing_meta(meta::CLIENT_CAPABILITIES).code, -32602);
        assert!(code::is_modern_error(-32020) && !code::is_modern_error(-32600));
    }

    #[test]
    fn meta_helpers_read_params() {
        let params = json!({"name": "append", "_meta": {
            meta::PROTOCOL_VERSION: "2026-07-28",
            meta::TRACEPARENT: "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01"}});
        assert_eq!(meta_protocol_version(&params), Some("2026-07-28"));
        assert!(meta_traceparent(&params).unwrap().starts_with("00-0af7"));
        assert_eq!(
            mcp_name_source(method::TOOLS_CALL, Some(&params)),
            Some(Some("append"))
        );
        assert_eq!(mcp_name_source(method::TOOLS_LIST, Some(&params)), None);
        assert_eq!(
            mcp_name_source(method::RESOURCES_READ, Some(&params)),
            Some(None)
        );
    }
}
