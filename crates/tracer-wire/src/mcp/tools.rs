//! The tool shapes: `Tool`, tools/list params and result, tools/call params and result, and
//! the content blocks a tool returns.

use super::shapes::{CacheScope, RequestMeta, ResultType};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// `ToolAnnotations`: hints about a tool's behaviour (untrusted).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

/// One tool as `tools/list` describes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub input_schema: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl Tool {
    /// A tool whose arguments are a closed object: `properties`, all of `required`, nothing else.
    pub fn closed_input(
        name: &str,
        title: &str,
        description: &str,
        properties: Value,
        required: &[&str],
        annotations: ToolAnnotations,
    ) -> Self {
        Tool {
            name: name.to_owned(),
            title: Some(title.to_owned()),
            description: Some(description.to_owned()),
            input_schema: serde_json::json!({
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": false,
            }),
            output_schema: None,
            annotations: Some(annotations),
            meta: None,
        }
    }
}

impl ToolAnnotations {
    /// The hints of a tool that touches only local state (`openWorldHint: false`).
    pub fn closed_world(read_only: bool, destructive: bool, idempotent: bool) -> Self {
        ToolAnnotations {
            title: None,
            read_only_hint: Some(read_only),
            destructive_hint: Some(destructive),
            idempotent_hint: Some(idempotent),
            open_world_hint: Some(false),
        }
    }
}

/// `tools/list` result; `resultType`, `ttlMs` and `cacheScope` are required from `2026-07-28`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListToolsResult {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    pub tools: Vec<Tool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

/// `tools/call` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallToolParams {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Map<String, Value>>,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

/// One block of tool output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum ContentBlock {
    Text {
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Value>,
        #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
        meta: Option<Map<String, Value>>,
    },
    Image {
        data: String,
        mime_type: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Value>,
    },
    Audio {
        data: String,
        mime_type: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Value>,
    },
    ResourceLink {
        uri: String,
        name: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
    },
    Resource {
        resource: Value,
    },
}

impl ContentBlock {
    pub(crate) fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text {
            text: text.into(),
            annotations: None,
            meta: None,
        }
    }
}

/// `tools/call` result. `isError: true` is a tool error (for the model), not a protocol error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    #[serde(default)]
    pub content: Vec<ContentBlock>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    #[serde(default)]
    pub is_error: bool,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl CallToolResult {
    /// A successful result with one text block.
    pub fn success(text: impl Into<String>) -> Self {
        CallToolResult {
            result_type: None,
            content: vec![ContentBlock::text(text)],
            structured_content: None,
            is_error: false,
            meta: None,
        }
    }

    /// A tool error with one text block the model can act on.
    pub fn tool_error(text: impl Into<String>) -> Self {
        CallToolResult {
            is_error: true,
            ..CallToolResult::success(text)
        }
    }

    /// All text blocks joined by newlines (what a host pastes back to the model).
    #[cfg(test)]
    pub(crate) fn text(&self) -> String {
        let texts: Vec<&str> = self
            .content
            .iter()
            .filter_map(|block| match block {
                ContentBlock::Text { text, .. } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        texts.join("\n")
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::mcp::DiscoverResult;
    use serde_json::json;

    #[test]
    fn call_tool_params_match_the_article() {
        let params = CallToolParams {
            name: "append".into(),
            arguments: Some(json!({"content": "buy milk"}).as_object().unwrap().clone()),
            meta: Some(RequestMeta {
                protocol_version: Some("2026-07-28".into()),
                client_capabilities: Some(json!({})),
                ..RequestMeta::default()
            }),
        };
        assert_eq!(
            serde_json::to_string(&params).unwrap(),
            r#"{"name":"append","arguments":{"content":"buy milk"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}"#
        );
    }

    #[test]
    fn call_tool_result_reads_and_writes_both_eras() {
        let modern: CallToolResult = serde_json::from_value(json!({
            "resultType": "complete", "content": [{"type": "text", "text": "Success"}],
            "isError": false, "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}
        }))
        .unwrap();
        assert_eq!(modern.result_type, Some(ResultType::Complete));
        assert_eq!(modern.text(), "Success");
        let legacy: CallToolResult =
            serde_json::from_value(json!({"content": [{"type": "text", "text": "x"}]})).unwrap();
        assert!(!legacy.is_error && legacy.result_type.is_none());
        let error = serde_json::to_value(CallToolResult::tool_error("Param (content) is required"))
            .unwrap();
        assert_eq!(
            error,
            json!({"content": [{"type": "text", "text": "Param (content) is required"}], "isError": true})
        );
        let pending: CallToolResult =
            serde_json::from_value(json!({"resultType": "input_required", "content": []})).unwrap();
        assert_eq!(pending.result_type, Some(ResultType::InputRequired));
    }

    #[test]
    fn content_blocks_use_type_tags_and_camel_case() {
        let image: ContentBlock = serde_json::from_value(
            json!({"type": "image", "data": "AAAA", "mimeType": "image/png"}),
        )
        .unwrap();
        assert!(
            matches!(image, ContentBlock::Image { ref mime_type, .. } if mime_type == "image/png")
        );
        let link = json!({"type": "resource_link", "uri": "file:///a", "name": "a"});
        let parsed: ContentBlock = serde_json::from_value(link.clone()).unwrap();
        assert_eq!(serde_json::to_value(parsed).unwrap(), link);
    }

    #[test]
    fn list_tools_and_discover_results_parse_spec_examples() {
        let list: ListToolsResult = serde_json::from_value(json!({
            "resultType": "complete",
            "tools": [{"name": "get_weather", "title": "Weather", "description": "d",
                       "inputSchema": {"type": "object", "properties": {}, "required": []},
                       "icons": [{"src": "https://example.com/i.png"}]}],
            "nextCursor": "next-page-cursor", "ttlMs": 3600000, "cacheScope": "public"
        }))
        .unwrap();
        assert_eq!(list.tools[0].name, "get_weather");
        assert_eq!(list.cache_scope, Some(CacheScope::Public));
        let discover: DiscoverResult = serde_json::from_value(json!({
            "resultType": "complete", "supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {}, "resources": {}},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "S", "version": "1.0.0"}},
            "ttlMs": 3600000, "cacheScope": "public"
        }))
        .unwrap();
        assert!(discover.capabilities.tools.is_some());
        assert!(discover.capabilities.other.contains_key("resources"));
    }
}
