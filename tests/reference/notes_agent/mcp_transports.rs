//! MCP transports: modern stateless HTTP, the fallback to `initialize` with a kept session for a
//! legacy server (HTTP and stdio), SSE answers, protocol errors sent back to the model, a stdio
//! server spawned and kept, and name prefixing when two servers clash.

use serde_json::json;
use tracer_reference::agent::{McpServerSpec, ModelApi};

use std::time::Duration;

use super::harness::{
    NotesServerHandle, StdioNotesServer, ask, ask_with, config, start_agent, start_agent_handle,
};
use super::mcp_proxy::{Behaviour, McpProxy};
use super::scripted_model::{Dialect, Reply, ScriptedModel};

fn buy_milk_script() -> Vec<Reply> {
    vec![
        Reply::call("append", json!({"content": "buy milk"})),
        Reply::text("Added."),
    ]
}

#[tokio::test]
async fn a_modern_server_gets_self_contained_requests() {
    let notes = NotesServerHandle::start().await;
    let proxy = McpProxy::start(&notes.url, false).await;
    let model = ScriptedModel::start(Dialect::Ollama, buy_milk_script()).await;
    let spec = McpServerSpec::Http {
        url: proxy.url.clone(),
    };
    let agent = start_agent(config(ModelApi::Ollama, &model.base_url, vec![spec])).await;

    assert_eq!(ask(&agent, "Add buy milk").await.status, 200);
    let seen = proxy.seen();
    let methods: Vec<&str> = seen.iter().map(|s| s.method()).collect();
    assert_eq!(
        methods,
        ["tools/list", "tools/call"],
        "as in the article: no handshake"
    );
    for request in &seen {
        assert_eq!(request.status, 200);
        assert_eq!(request.header("mcp-protocol-version"), Some("2026-07-28"));
        assert_eq!(request.header("mcp-method"), Some(request.method()));
        assert_eq!(request.header("mcp-session-id"), None);
        assert_eq!(
            request.header("accept"),
            Some("application/json, text/event-stream")
        );
        let meta = &request.body["params"]["_meta"];
        assert_eq!(
            meta["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
        assert_eq!(
            meta["io.modelcontextprotocol/clientCapabilities"],
            json!({})
        );
        assert_eq!(
            meta["io.modelcontextprotocol/clientInfo"]["name"],
            "notes-agent"
        );
    }
    assert_eq!(seen[1].header("mcp-name"), Some("append"));
    assert_eq!(
        seen[1].body["params"]["arguments"],
        json!({"content": "buy milk"})
    );
}

#[tokio::test]
async fn a_legacy_server_gets_initialize_and_the_session_is_kept() {
    let notes = NotesServerHandle::start().await;
    let proxy = McpProxy::start(&notes.url, true).await;
    let mut script = buy_milk_script();
    script.push(Reply::text("Nothing to do."));
    let model = ScriptedModel::start(Dialect::Ollama, script).await;
    let spec = McpServerSpec::Http {
        url: proxy.url.clone(),
    };
    let agent = start_agent(config(ModelApi::Ollama, &model.base_url, vec![spec])).await;

    let first = ask(&agent, "Add buy milk").await;
    assert_eq!(first.status, 200, "{}", first.text);
    assert_eq!(first.json()["tool_calls"][0]["server"], "notes-server");
    assert!(notes.notes().contains("buy milk"));
    assert_eq!(ask(&agent, "Nothing").await.status, 200);

    let seen = proxy.seen();
    let steps: Vec<(&str, u16)> = seen.iter().map(|s| (s.method(), s.status)).collect();
    assert_eq!(
        steps,
        [
            ("tools/list", 400),
            ("initialize", 200),
            ("notifications/initialized", 202),
            ("tools/list", 200),
            ("tools/call", 200),
            ("tools/list", 200),
        ],
        "one probe, one handshake, then the session is reused"
    );
    let session = seen[3]
        .header("mcp-session-id")
        .expect("the session id is sent");
    assert!(
        seen[3..]
            .iter()
            .all(|s| s.header("mcp-session-id") == Some(session))
    );
    assert_eq!(seen[3].header("mcp-protocol-version"), Some("2025-11-25"));
    assert_eq!(seen[1].body["params"]["protocolVersion"], "2025-11-25");
    assert!(
        seen[4].body["params"]["_meta"]
            .get("io.modelcontextprotocol/protocolVersion")
            .is_none()
    );
}

#[tokio::test]
async fn a_stdio_server_is_spawned_and_kept() {
    let stdio = StdioNotesServer::new();
    let mut script = buy_milk_script();
    script.extend(vec![
        Reply::call("append", json!({"content": "buy eggs"})),
        Reply::text("Added."),
    ]);
    let model = ScriptedModel::start(Dialect::Ollama, script).await;
    let config = config(ModelApi::Ollama, &model.base_url, vec![stdio.spec()]);
    let (agent, handle) = start_agent_handle(config).await;

    let first = ask(&agent, "Add buy milk").await;
    assert_eq!(first.status, 200, "{}", first.text);
    assert_eq!(first.json()["tool_calls"][0]["server"], "notes-server");
    let second = ask(&agent, "Add buy eggs").await;
    assert_eq!(second.status, 200, "{}", second.text);
    assert_eq!(stdio.notes(), "buy milk\nbuy eggs\n");
    assert_eq!(model.replies_left(), 0);
    // Closing its stdin is enough for the server to exit: no waiting out the 30 s grace.
    let polite = handle.shutdown(Duration::from_secs(30));
    tokio::time::timeout(Duration::from_secs(10), polite)
        .await
        .expect("the server was not asked politely");
}

#[tokio::test]
async fn clashing_tool_names_are_prefixed_with_the_server_name() {
    let notes = NotesServerHandle::start().await;
    let stdio = StdioNotesServer::new();
    let model = ScriptedModel::start(
        Dialect::Ollama,
        vec![
            Reply::call("notes-server-2_append", json!({"content": "buy milk"})),
            Reply::text("Added."),
        ],
    )
    .await;
    let agent = start_agent(config(
        ModelApi::Ollama,
        &model.base_url,
        vec![notes.spec(), stdio.spec()],
    ))
    .await;

    let reply = ask(&agent, "Add buy milk to the second notes").await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    let call = &reply.json()["tool_calls"][0];
    assert_eq!(call["server"], "notes-server-2");
    assert_eq!(call["name"], "append");
    assert_eq!(stdio.notes(), "buy milk\n");
    assert_eq!(notes.notes(), "");
    let tools = model.received()[0].body["tools"].clone();
    let names: Vec<&str> = tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 10);
    assert_eq!(names[0], "notes-server_read");
    assert_eq!(names[7], "notes-server-2_append");
}

#[tokio::test]
async fn a_server_answering_in_sse_is_read() {
    let notes = NotesServerHandle::start_answering_sse(true).await;
    let model = ScriptedModel::start(Dialect::Ollama, buy_milk_script()).await;
    let agent = start_agent(config(
        ModelApi::Ollama,
        &model.base_url,
        vec![notes.spec()],
    ))
    .await;

    let reply = ask(&agent, "Add buy milk").await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert_eq!(notes.notes(), "buy milk\n");
}

#[tokio::test]
async fn a_protocol_error_from_tools_call_goes_back_to_the_model() {
    let notes = NotesServerHandle::start().await;
    let behaviour = Behaviour {
        legacy_only: false,
        call_error: Some(json!({"code": -32602, "message": "Unknown tool: append"})),
    };
    let proxy = McpProxy::start_with(&notes.url, behaviour).await;
    let model = ScriptedModel::start(Dialect::Ollama, buy_milk_script()).await;
    let spec = McpServerSpec::Http {
        url: proxy.url.clone(),
    };
    let agent = start_agent(config(ModelApi::Ollama, &model.base_url, vec![spec])).await;

    let reply = ask(&agent, "Add buy milk").await.json();
    let call = &reply["tool_calls"][0];
    assert_eq!(call["is_error"], true);
    assert_eq!(
        call["output"],
        "Error: calling tool append failed: Unknown tool: append (JSON-RPC error -32602)"
    );
    let last = model.received()[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .cloned();
    assert_eq!(last.unwrap()["content"], call["output"]);
}

#[tokio::test]
async fn a_legacy_stdio_server_gets_initialize_and_its_ping_is_answered() {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/reference/notes_agent/legacy_stdio_mcp.py"
    );
    let spec = McpServerSpec::Stdio {
        program: "python3".into(),
        args: vec!["-u".into(), script.into()],
    };
    let model = ScriptedModel::start(
        Dialect::Ollama,
        vec![Reply::call("echo_trace", json!({})), Reply::text("Done.")],
    )
    .await;
    let agent = start_agent(config(ModelApi::Ollama, &model.base_url, vec![spec])).await;

    let inbound = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    let reply = ask_with(&agent, "Echo the trace", &[("traceparent", inbound)]).await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    let call = &reply.json()["tool_calls"][0];
    assert_eq!(call["server"], "legacy-echo");
    let output = call["output"].as_str().unwrap();
    assert!(
        output.starts_with("traceparent=00-0af7651916cd43dd8448eb211c80319c-"),
        "{output}"
    );
    assert!(output.ends_with("pong=True initialized=True"), "{output}");
}

#[tokio::test]
async fn a_forgotten_legacy_session_is_initialized_again() {
    let notes = NotesServerHandle::start_with(|config| {
        config.session_idle_timeout = std::time::Duration::from_millis(200);
    })
    .await;
    let proxy = McpProxy::start(&notes.url, true).await;
    let model = ScriptedModel::start(
        Dialect::Ollama,
        vec![Reply::text("One."), Reply::text("Two.")],
    )
    .await;
    let spec = McpServerSpec::Http {
        url: proxy.url.clone(),
    };
    let agent = start_agent(config(ModelApi::Ollama, &model.base_url, vec![spec])).await;

    assert_eq!(ask(&agent, "first").await.status, 200);
    tokio::time::sleep(std::time::Duration::from_millis(600)).await;
    let second = ask(&agent, "second").await;
    assert_eq!(second.status, 200, "{}", second.text);

    let seen = proxy.seen();
    let steps: Vec<(&str, u16)> = seen.iter().map(|s| (s.method(), s.status)).collect();
    assert_eq!(
        steps,
        [
            ("tools/list", 400),
            ("initialize", 200),
            ("notifications/initialized", 202),
            ("tools/list", 200),
            ("tools/list", 404),
            ("initialize", 200),
            ("notifications/initialized", 202),
            ("tools/list", 200),
        ]
    );
    assert_ne!(
        seen[3].header("mcp-session-id"),
        seen[7].header("mcp-session-id")
    );
}
