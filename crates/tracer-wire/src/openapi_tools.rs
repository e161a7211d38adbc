//! OpenAPI tool servers in front of MCP (mcpo): the `openapi.json` tool list they serve, a tool
//! call in REST form (`POST /<server>/<tool>` with the arguments as the JSON body), and the
//! server's own errors (FastAPI's 422 `{"detail":[...]}`, `{"detail": "..."}` for MCP errors).

use serde_json::Value;

use crate::content_encoding::readable;
use crate::hop::{HopEnd, HopStart, HopState, Role};

/// One tool endpoint of an OpenAPI tool server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestTool {
    /// The tool's name: the endpoint's last path segment (`get_phonenumber`).
    pub name: String,
    /// The path a client posts to, with the document's server prefix (`/phonebook/get_phonenumber`).
    pub path: String,
    /// The operation's id (`tool_get_phonenumber_post`): the name a host may give the model.
    pub operation_id: Option<String>,
}

/// An `openapi.json` whose every path is one POST: the tools of an OpenAPI tool server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolServerDocument {
    pub title: Option<String>,
    pub tools: Vec<RestTool>,
}

/// Whether a path names an OpenAPI document (`…/openapi.json`).
pub fn is_document_path(path: &str) -> bool {
    let path = path.split('?').next().unwrap_or(path);
    path.ends_with("/openapi.json")
}

/// Reads an OpenAPI document as a tool server's tool list; None unless it is an OpenAPI
/// document with at least one path and every path offers POST alone.
pub fn read_document(request_path: &str, body: &[u8]) -> Option<ToolServerDocument> {
    let value: Value = serde_json::from_slice(body.trim_ascii()).ok()?;
    value.get("openapi").and_then(Value::as_str)?;
    let paths = value.get("paths")?.as_object()?;
    if paths.is_empty() {
        return None;
    }
    // Paths are relative to the first server's URL, else to where the document was served.
    let prefix = value
        .pointer("/servers/0/url")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| {
            let path = request_path.split('?').next().unwrap_or(request_path);
            path.trim_end_matches("/openapi.json").to_string()
        });
    let prefix = prefix.trim_end_matches('/');
    let mut tools = Vec::new();
    for (path, item) in paths {
        let operations = item.as_object()?;
        let methods: Vec<&String> = operations
            .keys()
            .filter(|k| !matches!(k.as_str(), "parameters" | "summary" | "description"))
            .collect();
        if methods.len() != 1 || !methods[0].eq_ignore_ascii_case("post") {
            return None;
        }
        let name = path.trim_end_matches('/').rsplit('/').next()?.to_string();
        if name.is_empty() {
            return None;
        }
        tools.push(RestTool {
            name,
            path: format!("{prefix}{path}"),
            operation_id: operations
                .get(methods[0].as_str())
                .and_then(|op| op.get("operationId"))
                .and_then(Value::as_str)
                .map(str::to_string),
        });
    }
    Some(ToolServerDocument {
        title: value
            .pointer("/info/title")
            .and_then(Value::as_str)
            .map(str::to_string),
        tools,
    })
}

/// A tool call in REST form: the tool (the path's last segment) and its arguments (the body).
#[derive(Debug, Clone, PartialEq)]
pub struct RestToolCall {
    /// The path segment before the tool (mcpo's server name), when there is one.
    pub server: Option<String>,
    pub tool: String,
    pub arguments: Value,
}

/// Reads `POST /<server>/<tool>` with a JSON object body (or none) as a tool call; None for
/// a JSON-RPC body or a path with no segment.
pub fn read_call(path: &str, body: &[u8]) -> Option<RestToolCall> {
    let path = path.split('?').next().unwrap_or(path).trim_end_matches('/');
    let mut segments = path.rsplit('/').filter(|s| !s.is_empty());
    let tool = segments.next()?.to_string();
    let server = segments.next().map(str::to_string);
    let arguments = if body.trim_ascii().is_empty() {
        Value::Object(Default::default())
    } else {
        serde_json::from_slice::<Value>(body.trim_ascii()).ok()?
    };
    if !arguments.is_object() || arguments.get("jsonrpc").is_some() {
        return None;
    }
    Some(RestToolCall {
        server,
        tool,
        arguments,
    })
}

/// What a tool server answered to a REST tool call.
#[derive(Debug, Clone, PartialEq)]
pub enum RestAnswer {
    /// 2xx: the tool's result as JSON.
    Result(Value),
    /// FastAPI's 422: the arguments failed the endpoint's schema; nothing reached the tool.
    /// One `field: message` line per problem.
    Refused(Vec<String>),
    /// Any other 4xx/5xx: the error the server reports (`detail`), or the body.
    Error { status: u16, detail: String },
}

/// Reads a tool server's answer by its status and body.
pub fn read_answer(status: u16, body: &[u8]) -> RestAnswer {
    let value = serde_json::from_slice::<Value>(body.trim_ascii()).ok();
    if status < 400 {
        let text = String::from_utf8_lossy(body).into_owned();
        return RestAnswer::Result(value.unwrap_or(Value::String(text)));
    }
    let detail = value.as_ref().and_then(|v| v.get("detail"));
    if status == 422
        && let Some(Value::Array(problems)) = detail
    {
        return RestAnswer::Refused(problems.iter().map(problem_line).collect());
    }
    let detail = match detail {
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
        None => String::from_utf8_lossy(body).trim().to_string(),
    };
    RestAnswer::Error { status, detail }
}

/// Whether a hop, by itself, is one of an OpenAPI tool server's: its `openapi.json` of POST-only
/// tool endpoints, or a REST tool call (on a route of role `other`) answered by an error whose
/// JSON body has FastAPI's `detail`. A successful call is known only by its trace (the document,
/// or the `tools/call` it caused: tracer-trace's `read::openapi_calls`).
pub(crate) fn is_hop_of_tool_server(start: &HopStart, end: Option<&HopEnd>) -> bool {
    let Some(end) = end.filter(|e| e.state != Some(HopState::InFlight)) else {
        return false;
    };
    let response = readable(&end.response_headers, &end.response_body);
    if start.method.eq_ignore_ascii_case("GET") && is_document_path(&start.path) {
        return read_document(&start.path, response.bytes()).is_some();
    }
    let request = readable(&start.request_headers, &end.request_body);
    let status = end.status.unwrap_or(0);
    start.role == Role::Other
        && start.method.eq_ignore_ascii_case("POST")
        && status >= 400
        && read_call(&start.path, request.bytes()).is_some()
        && serde_json::from_slice::<Value>(response.bytes().trim_ascii())
            .is_ok_and(|v| v.as_object().is_some_and(|o| o.contains_key("detail")))
}

/// `name: Field required` from one of FastAPI's `{"loc": [...], "msg": ...}`.
fn problem_line(problem: &Value) -> String {
    let field = problem
        .get("loc")
        .and_then(Value::as_array)
        .map(|loc| {
            loc.iter()
                .filter(|part| part.as_str() != Some("body"))
                .map(|part| match part {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect::<Vec<_>>()
                .join(".")
        })
        .unwrap_or_default();
    let message = problem
        .get("msg")
        .and_then(Value::as_str)
        .unwrap_or("invalid");
    if field.is_empty() {
        message.to_string()
    } else {
        format!("{field}: {message}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = r##"{"openapi":"3.1.0","info":{"title":"phonebook"},"servers":[{"url":"/phonebook"}],
        "paths":{"/get_phonenumber":{"post":{"operationId":"tool_get_phonenumber_post"}}}}"##;

    #[test]
    fn reads_a_post_only_document_as_tools() {
        let doc = read_document("/phonebook/openapi.json", DOC.as_bytes()).unwrap();
        assert_eq!(doc.title.as_deref(), Some("phonebook"));
        assert_eq!(
            doc.tools,
            vec![RestTool {
                name: "get_phonenumber".into(),
                path: "/phonebook/get_phonenumber".into(),
                operation_id: Some("tool_get_phonenumber_post".into()),
            }]
        );
        let rest_api = r#"{"openapi":"3.0.0","paths":{"/pets":{"get":{},"post":{}}}}"#;
        assert_eq!(read_document("/openapi.json", rest_api.as_bytes()), None);
        assert_eq!(read_document("/openapi.json", b"{\"paths\":{}}"), None);
    }

    #[test]
    fn reads_calls_and_answers() {
        let call = read_call("/phonebook/get_phonenumber", br#"{"name":"Ann"}"#).unwrap();
        assert_eq!(call.server.as_deref(), Some("phonebook"));
        assert_eq!(call.tool, "get_phonenumber");
        assert_eq!(read_call("/mcp", br#"{"jsonrpc":"2.0"}"#), None);
        assert_eq!(
            read_answer(200, br#""555-1""#),
            RestAnswer::Result(Value::String("555-1".into()))
        );
        let refused =
            br#"{"detail":[{"type":"missing","loc":["body","name"],"msg":"Field required"}]}"#;
        assert_eq!(
            read_answer(422, refused),
            RestAnswer::Refused(vec!["name: Field required".into()])
        );
        assert_eq!(
            read_answer(500, br#"{"detail":"Unknown tool"}"#),
            RestAnswer::Error {
                status: 500,
                detail: "Unknown tool".into()
            }
        );
    }
}
