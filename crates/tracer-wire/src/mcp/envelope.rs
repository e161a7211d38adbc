//! Building and reading the 2026-07-28 request envelope: adding `_meta` to params, and the
//! SEP-2243 headers a request must carry (what a client sends and a proxy or server checks).

use super::{header, header_value, mcp_name_source, meta_protocol_version, shapes::RequestMeta};
use crate::jsonrpc::Request;
use serde_json::{Map, Value};

/// Returns `params` (an object, or `None` for none) with `meta` merged into its `_meta`; keys the
/// caller already put in `_meta` win.
pub fn with_meta(params: Option<Value>, meta: &RequestMeta) -> Value {
    let mut object = match params {
        Some(Value::Object(object)) => object,
        _ => Map::new(),
    };
    let mut merged = match serde_json::to_value(meta) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    };
    if let Some(Value::Object(existing)) = object.remove("_meta") {
        merged.extend(existing);
    }
    object.insert("_meta".to_owned(), Value::Object(merged));
    Value::Object(object)
}

/// The headers a modern HTTP request must carry, mirrored from its body, as (lower-case name,
/// value): `mcp-protocol-version` (from `_meta`), `mcp-method`, and `mcp-name` for the methods
/// that need it (base64-wrapped when the value is not plain ASCII).
pub fn mirrored_headers(request: &Request) -> Vec<(&'static str, String)> {
    let params = request.params.as_ref();
    let mut headers = Vec::with_capacity(3);
    if let Some(version) = params.and_then(meta_protocol_version) {
        headers.push((header::PROTOCOL_VERSION, version.to_owned()));
    }
    headers.push((header::METHOD, request.method.clone()));
    if let Some(Some(name)) = mcp_name_source(&request.method, params) {
        headers.push((header::NAME, header_value::encode(name)));
    }
    headers
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::mcp::Implementation;
    use serde_json::json;

    #[test]
    fn meta_is_added_without_losing_existing_keys() {
        let meta = RequestMeta::modern(Implementation::new("agent", "1"));
        let params = with_meta(
            Some(json!({"name": "append", "_meta": {"traceparent": "00-a-b-01"}})),
            &meta,
        );
        assert_eq!(params["name"], "append");
        assert_eq!(
            params["_meta"]["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
        assert_eq!(params["_meta"]["traceparent"], "00-a-b-01");
        assert_eq!(
            with_meta(None, &meta)["_meta"]["io.modelcontextprotocol/clientCapabilities"],
            json!({})
        );
    }

    #[test]
    fn headers_mirror_the_article_request() {
        let meta = RequestMeta::modern(Implementation::new("agent", "1"));
        let params = with_meta(
            Some(json!({"name": "append", "arguments": {"content": "buy milk"}})),
            &meta,
        );
        let request = Request::new(2, "tools/call", Some(params));
        assert_eq!(
            mirrored_headers(&request),
            vec![
                ("mcp-protocol-version", "2026-07-28".to_owned()),
                ("mcp-method", "tools/call".to_owned()),
                ("mcp-name", "append".to_owned()),
            ]
        );
        let list = Request::new(3, "tools/list", Some(with_meta(None, &meta)));
        assert_eq!(mirrored_headers(&list).len(), 2);
        let odd = Request::new(4, "tools/call", Some(json!({"name": "café"})));
        assert_eq!(mirrored_headers(&odd)[1].1, "=?base64?Y2Fmw6k=?=");
    }
}
