//! The JSON shapes of MCP params and results (both eras), readable and writable by clients and
//! servers alike: initialize, server/discover, tools/list, tools/call, content blocks, `_meta`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// `Implementation`: who a client or server is (`clientInfo`, `serverInfo`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Implementation {
    pub name: String,
    pub version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub website_url: Option<String>,
}

impl Implementation {
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Implementation {
            name: name.into(),
            version: version.into(),
            title: None,
            description: None,
            website_url: None,
        }
    }
}

/// A request's `_meta`: the modern per-request envelope plus trace context; other keys are kept.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RequestMeta {
    #[serde(
        rename = "io.modelcontextprotocol/protocolVersion",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub protocol_version: Option<String>,
    #[serde(
        rename = "io.modelcontextprotocol/clientInfo",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub client_info: Option<Implementation>,
    #[serde(
        rename = "io.modelcontextprotocol/clientCapabilities",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub client_capabilities: Option<Value>,
    #[serde(
        rename = "progressToken",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub progress_token: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traceparent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tracestate: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baggage: Option<String>,
    /// Any other keys, in their original order.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

impl RequestMeta {
    /// The required modern envelope: protocol version `2026-07-28`, empty client capabilities and
    /// the given client info.
    pub fn modern(client_info: Implementation) -> Self {
        RequestMeta {
            protocol_version: Some(super::version::V2026_07_28.to_owned()),
            client_info: Some(client_info),
            client_capabilities: Some(json!({})),
            ..RequestMeta::default()
        }
    }

    /// Adds a W3C `traceparent`.
    pub fn with_traceparent(mut self, traceparent: impl Into<String>) -> Self {
        self.traceparent = Some(traceparent.into());
        self
    }
}

/// `resultType` of a `2026-07-28` result (absent from older servers means `complete`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResultType {
    Complete,
    InputRequired,
    #[serde(other)]
    Unknown,
}

/// `cacheScope` of a `2026-07-28` list result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheScope {
    Public,
    Private,
}

/// `capabilities.tools` of a server.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolsCapability {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
}

/// `ServerCapabilities`: `tools` typed, every other capability kept as JSON.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ServerCapabilities {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ToolsCapability>,
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// `initialize` params (legacy).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    pub protocol_version: String,
    #[serde(default)]
    pub capabilities: Value,
    pub client_info: Implementation,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

/// `initialize` result (legacy).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    pub protocol_version: String,
    pub capabilities: ServerCapabilities,
    pub server_info: Implementation,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// `server/discover` result (`2026-07-28`); serverInfo lives in `_meta`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoverResult {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    pub supported_versions: Vec<String>,
    pub capabilities: ServerCapabilities,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn request_meta_keeps_unknown_keys_and_trace_context() {
        let meta: RequestMeta = serde_json::from_value(json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "traceparent": "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01",
            "vendor/x": 1
        }))
        .unwrap();
        assert_eq!(meta.protocol_version.as_deref(), Some("2026-07-28"));
        assert!(meta.traceparent.is_some());
        assert_eq!(meta.other["vendor/x"], 1);
        let modern = RequestMeta::modern(Implementation::new("a", "1")).with_traceparent("t");
        let value = serde_json::to_value(&modern).unwrap();
        assert_eq!(
            value["io.modelcontextprotocol/clientCapabilities"],
            json!({})
        );
        assert_eq!(value["traceparent"], "t");
    }

    #[test]
    fn initialize_shapes_round_trip() {
        let params: InitializeParams = serde_json::from_value(json!({
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "mcp", "version": "0.1.0"}
        }))
        .unwrap();
        assert_eq!(params.client_info.name, "mcp");
        let result = InitializeResult {
            protocol_version: "2025-11-25".into(),
            capabilities: ServerCapabilities {
                tools: Some(ToolsCapability::default()),
                ..Default::default()
            },
            server_info: Implementation::new("notes-server", "0.1.0"),
            instructions: None,
            meta: None,
        };
        assert_eq!(
            serde_json::to_value(&result).unwrap(),
            json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                   "serverInfo": {"name": "notes-server", "version": "0.1.0"}})
        );
    }
}
