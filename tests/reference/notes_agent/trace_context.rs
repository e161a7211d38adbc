//! W3C trace context: the inbound `traceparent` (or a new trace) goes out on every HTTP call, to
//! the model and to MCP, and in MCP `params._meta.traceparent`.

use std::collections::HashSet;

use serde_json::json;
use tracer_reference::agent::{McpServerSpec, ModelApi};
use tracer_wire::trace_context::TraceParent;

use super::harness::{NotesServerHandle, ask_with, config, start_agent};
use super::mcp_proxy::McpProxy;
use super::scripted_model::{Dialect, Reply, ScriptedModel};

const INBOUND: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

/// Runs buy milk once with the given inbound headers; returns every outbound traceparent
/// (model calls, MCP headers, MCP `_meta`), in order.
async fn outbound_traceparents(headers: &[(&str, &str)]) -> Vec<String> {
    let notes = NotesServerHandle::start().await;
    let proxy = McpProxy::start(&notes.url, false).await;
    let model = ScriptedModel::start(
        Dialect::Ollama,
        vec![
            Reply::call("append", json!({"content": "buy milk"})),
            Reply::text("Added."),
        ],
    )
    .await;
    let spec = McpServerSpec::Http {
        url: proxy.url.clone(),
    };
    let agent = start_agent(config(ModelApi::Ollama, &model.base_url, vec![spec])).await;
    assert_eq!(ask_with(&agent, "Add buy milk", headers).await.status, 200);

    let mut all = Vec::new();
    for request in model.received() {
        let header = request
            .headers
            .get("traceparent")
            .expect("a model call without traceparent");
        all.push(header.to_str().unwrap().to_string());
        assert_eq!(
            request
                .headers
                .get("tracestate")
                .map(|v| v.to_str().unwrap()),
            headers.iter().find(|h| h.0 == "tracestate").map(|h| h.1)
        );
    }
    for request in proxy.seen() {
        let header = request
            .header("traceparent")
            .expect("an MCP call without traceparent")
            .to_string();
        let in_meta = request.body["params"]["_meta"]["traceparent"]
            .as_str()
            .expect("no _meta.traceparent")
            .to_string();
        assert_eq!(header, in_meta, "the header and _meta carry the same span");
        all.push(header);
    }
    assert_eq!(all.len(), 4, "two model calls and two MCP calls");
    all
}

#[tokio::test]
async fn the_inbound_trace_goes_out_on_every_call() {
    let all = outbound_traceparents(&[
        ("traceparent", INBOUND),
        ("tracestate", "congo=t61rcWkgMzE"),
    ])
    .await;
    let inbound = TraceParent::parse(INBOUND).unwrap();
    let mut spans = HashSet::new();
    for text in &all {
        let parent = TraceParent::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(parent.trace_id, inbound.trace_id, "{text}");
        assert_ne!(
            parent.parent_id, inbound.parent_id,
            "each call is its own span: {text}"
        );
        assert_eq!(parent.flags, inbound.flags);
        spans.insert(parent.parent_id);
    }
    assert_eq!(spans.len(), all.len(), "every call gets a new span id");
}

#[tokio::test]
async fn without_an_inbound_trace_one_new_trace_covers_the_request() {
    for headers in [
        &[][..],
        &[(
            "traceparent",
            "00-00000000000000000000000000000000-b7ad6b7169203331-01",
        )][..],
    ] {
        let all = outbound_traceparents(headers).await;
        let trace_ids: HashSet<String> = all
            .iter()
            .map(|t| TraceParent::parse(t).unwrap().trace_id_hex())
            .collect();
        assert_eq!(trace_ids.len(), 1, "{all:?}");
        assert!(!trace_ids.contains("0af7651916cd43dd8448eb211c80319c"));
        assert!(!trace_ids.contains("00000000000000000000000000000000"));
    }
}
