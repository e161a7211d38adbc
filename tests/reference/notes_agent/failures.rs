//! Failures: the model or an MCP server down or silent (502/504 naming which and where), the
//! model server answering an error, and bad requests to the agent (400/404/405/413).

use std::time::Duration;

use http::Method;
use serde_json::json;
use tokio::net::TcpListener;
use tracer_reference::agent::{McpServerSpec, ModelApi};

use super::harness::{NotesServerHandle, ask, closed_port_url, config, send, start_agent};
use super::scripted_model::{Dialect, Reply, ScriptedModel};

/// A server that accepts connections and never answers.
async fn silent_server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            held.push(stream);
        }
    });
    format!("http://{address}")
}

#[tokio::test]
async fn the_agent_starts_with_nothing_up_and_reports_a_model_that_is_down() {
    let notes = NotesServerHandle::start().await;
    let model_url = closed_port_url("").await;
    let agent = start_agent(config(ModelApi::Ollama, &model_url, vec![notes.spec()])).await;

    let health = send(Method::GET, &format!("{agent}/"), "", &[]).await;
    assert_eq!(health.status, 200);
    let reply = ask(&agent, "Add buy milk to my notes").await;
    assert_eq!(reply.status, 502, "{}", reply.text);
    let error = &reply.json()["error"];
    assert_eq!(error["type"], "upstream_unreachable");
    assert_eq!(error["upstream"]["role"], "model");
    assert_eq!(error["upstream"]["name"], "ollama");
    assert_eq!(
        error["upstream"]["address"],
        format!("{model_url}/api/chat")
    );
    assert!(
        error["message"].as_str().unwrap().contains(&model_url),
        "{error}"
    );
}

#[tokio::test]
async fn an_mcp_server_that_is_down_is_named_and_the_model_is_not_asked() {
    let model = ScriptedModel::start(Dialect::Ollama, vec![Reply::text("unused")]).await;
    let mcp_url = closed_port_url("/mcp").await;
    let spec = McpServerSpec::Http {
        url: mcp_url.clone(),
    };
    let agent = start_agent(config(ModelApi::Ollama, &model.base_url, vec![spec])).await;

    let reply = ask(&agent, "Add buy milk to my notes").await;
    assert_eq!(reply.status, 502, "{}", reply.text);
    let error = &reply.json()["error"];
    assert_eq!(error["upstream"]["role"], "mcp");
    assert_eq!(error["upstream"]["address"], mcp_url);
    assert!(model.received().is_empty());
}

#[tokio::test]
async fn a_stdio_server_that_cannot_start_is_named() {
    let model = ScriptedModel::start(Dialect::Ollama, vec![Reply::text("unused")]).await;
    let spec = McpServerSpec::Stdio {
        program: "/nonexistent/mcp-server".into(),
        args: vec!["--stdio".into()],
    };
    let agent = start_agent(config(ModelApi::Ollama, &model.base_url, vec![spec])).await;

    let reply = ask(&agent, "hi").await;
    assert_eq!(reply.status, 502);
    let error = &reply.json()["error"];
    assert_eq!(
        error["upstream"]["address"],
        "stdio: /nonexistent/mcp-server --stdio"
    );
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("could not start"),
        "{error}"
    );
}

#[tokio::test]
async fn a_silent_model_times_out_with_504() {
    let notes = NotesServerHandle::start().await;
    let mut config = config(ModelApi::Ollama, &silent_server().await, vec![notes.spec()]);
    config.model_timeout = Duration::from_millis(300);
    let agent = start_agent(config).await;

    let reply = ask(&agent, "hi").await;
    assert_eq!(reply.status, 504, "{}", reply.text);
    let error = &reply.json()["error"];
    assert_eq!(error["type"], "upstream_timeout");
    assert_eq!(error["upstream"]["role"], "model");
}

#[tokio::test]
async fn a_silent_mcp_server_times_out_with_504() {
    let model = ScriptedModel::start(Dialect::Ollama, vec![]).await;
    let spec = McpServerSpec::Http {
        url: format!("{}/mcp", silent_server().await),
    };
    let mut config = config(ModelApi::Ollama, &model.base_url, vec![spec]);
    config.mcp_timeout = Duration::from_millis(300);
    let agent = start_agent(config).await;

    let reply = ask(&agent, "hi").await;
    assert_eq!(reply.status, 504, "{}", reply.text);
    assert_eq!(reply.json()["error"]["upstream"]["role"], "mcp");
}

#[tokio::test]
async fn a_model_error_status_is_passed_on_with_its_message() {
    let notes = NotesServerHandle::start().await;
    // The scripted model answers 500 with a message when its script is empty.
    let model = ScriptedModel::start(Dialect::Ollama, vec![]).await;
    let agent = start_agent(config(
        ModelApi::Ollama,
        &model.base_url,
        vec![notes.spec()],
    ))
    .await;

    let reply = ask(&agent, "hi").await;
    assert_eq!(reply.status, 502);
    let message = reply.json()["error"]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        message.contains(
            "answered 500 Internal Server Error: scripted model: the script has no more replies"
        ),
        "{message}"
    );
}

#[tokio::test]
async fn bad_requests_get_clear_json_errors() {
    let notes = NotesServerHandle::start().await;
    let agent = start_agent(config(
        ModelApi::Ollama,
        "http://127.0.0.1:9",
        vec![notes.spec()],
    ))
    .await;
    let url = format!("{agent}/agent");

    let not_json = send(Method::POST, &url, "add milk", &[]).await;
    assert_eq!(not_json.status, 400);
    assert_eq!(not_json.json()["error"]["type"], "bad_request");
    assert!(
        not_json.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("{\"message\": ")
    );

    let missing = send(Method::POST, &url, &json!({"text": "x"}).to_string(), &[]).await;
    assert_eq!(missing.status, 400);
    assert!(
        missing.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("missing field `message`")
    );

    let empty = send(
        Method::POST,
        &url,
        &json!({"message": "  "}).to_string(),
        &[],
    )
    .await;
    assert_eq!(empty.status, 400);
    assert!(
        empty.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("empty")
    );

    let wrong_method = send(Method::GET, &url, "", &[]).await;
    assert_eq!(wrong_method.status, 405);
    assert_eq!(wrong_method.json()["error"]["type"], "method_not_allowed");

    let nowhere = send(Method::POST, &format!("{agent}/nope"), "{}", &[]).await;
    assert_eq!(nowhere.status, 404);
    assert_eq!(nowhere.json()["error"]["type"], "not_found");

    let huge = "x".repeat(5 * 1024 * 1024);
    let too_big = send(
        Method::POST,
        &url,
        &json!({"message": huge}).to_string(),
        &[],
    )
    .await;
    assert_eq!(too_big.status, 413);
}
