//! Interop with real third-party software: the official OpenAI Python SDK drives
//! `/v1/chat/completions` (whole and streamed) against the agent; and the agent uses seed 002's
//! phonebook server built with the official MCP Python SDK, over HTTP and stdio.
//! Needs `.venv` with `pip install openai mcp`; skipped without it unless `TRACER_INTEROP=1`.

use std::path::PathBuf;

use serde_json::{Value, json};
use tracer_reference::agent::{McpServerSpec, ModelApi};

use super::harness::{NotesServerHandle, ask, config, start_agent};
use super::mcp_proxy::McpProxy;
use super::scripted_model::{Dialect, Reply, ScriptedModel};

#[tokio::test]
async fn the_openai_python_sdk_drives_the_agent() {
    let Some(python) = super::interop_peers::venv_python(".venv", "openai", "openai==3.57.0")
    else {
        return;
    };
    let notes = NotesServerHandle::start().await;
    let model = ScriptedModel::start(
        Dialect::OpenAi,
        vec![
            Reply::call("append", json!({"content": "buy milk"})),
            Reply::text("Added buy milk."),
            Reply::call("append", json!({"content": "buy eggs"})),
            Reply::text("Added buy eggs."),
        ],
    )
    .await;
    let agent = start_agent(config(
        ModelApi::OpenAi,
        &model.base_url,
        vec![notes.spec()],
    ))
    .await;
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/interop/openai_client.py");

    let output = tokio::time::timeout(
        std::time::Duration::from_secs(60),
        tokio::process::Command::new(&python)
            .arg(&script)
            .arg(format!("{agent}/v1"))
            .output(),
    )
    .await
    .expect("the SDK script timed out")
    .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the SDK script failed\nstdout: {stdout}\nstderr: {stderr}"
    );
    let summary: Value = serde_json::from_str(stdout.trim()).unwrap();
    eprintln!("openai SDK {}", summary["openai_version"]);
    assert_eq!(summary["models"], json!(["qwen2.5:7b"]));
    assert_eq!(
        summary["plain"]["content"],
        "Added buy milk.\n\n---\nTools used: append"
    );
    assert_eq!(summary["plain"]["finish_reason"], "stop");
    assert_eq!(summary["plain"]["role"], "assistant");
    assert_eq!(
        summary["stream"]["content"],
        "Added buy eggs.\n\n---\nTools used: append"
    );
    assert!(
        summary["stream"]["chunks_with_text"].as_u64().unwrap() > 2,
        "the answer arrives in pieces"
    );
    assert_eq!(summary["stream"]["total_tokens"], 36);
    assert_eq!(summary["bad_request"]["status"], 400);
    assert_eq!(notes.notes(), "buy milk\nbuy eggs\n");
}

async fn phonebook_lookup(spec: McpServerSpec) -> Value {
    let model = ScriptedModel::start(
        Dialect::Ollama,
        vec![
            Reply::call("get_phonenumber", json!({"name": "Joshua Wilson"})),
            Reply::text("Joshua Wilson's number is 555-66666666."),
        ],
    )
    .await;
    let agent = start_agent(config(ModelApi::Ollama, &model.base_url, vec![spec])).await;
    let reply = ask(&agent, "What is the phone number of Joshua Wilson?").await;
    assert_eq!(reply.status, 200, "{}", reply.text);
    let tools = &model.received()[0].body["tools"];
    assert_eq!(tools[0]["function"]["name"], "get_phonenumber");
    assert_eq!(
        tools[0]["function"]["parameters"]["required"],
        json!(["name"])
    );
    reply.json()
}

fn phonebook_script() -> String {
    concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/interop/mcp_sdk_phonebook_server.py"
    )
    .to_string()
}

#[tokio::test]
async fn the_mcp_python_sdk_server_serves_the_agent_over_http() {
    let Some(python) = super::interop_peers::venv_python(".venv", "mcp", "mcp==2.3.0") else {
        return;
    };
    let port = {
        let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        probe.local_addr().unwrap().port()
    };
    let mut server = tokio::process::Command::new(&python)
        .args([phonebook_script(), "--port".into(), port.to_string()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let ready = async {
        while tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err()
        {
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(30), ready)
        .await
        .expect("the SDK server did not start");
    let proxy = McpProxy::start(&format!("http://127.0.0.1:{port}/mcp"), false).await;

    let reply = phonebook_lookup(McpServerSpec::Http {
        url: proxy.url.clone(),
    })
    .await;
    let call = &reply["tool_calls"][0];
    assert_eq!(call["server"], "phonebook");
    assert_eq!(call["output"], "555-66666666");
    assert_eq!(call["is_error"], false);
    let methods: Vec<(String, u16)> = proxy
        .seen()
        .iter()
        .map(|s| (s.method().to_string(), s.status))
        .collect();
    assert_eq!(
        methods,
        [
            ("tools/list".to_string(), 200),
            ("tools/call".to_string(), 200)
        ],
        "the SDK server takes the stateless era"
    );
    server.kill().await.unwrap();
}

#[tokio::test]
async fn the_mcp_python_sdk_server_serves_the_agent_over_stdio() {
    let Some(python) = super::interop_peers::venv_python(".venv", "mcp", "mcp==2.3.0") else {
        return;
    };
    let spec = McpServerSpec::Stdio {
        program: python.display().to_string(),
        args: vec![phonebook_script(), "--stdio".into()],
    };
    let reply = phonebook_lookup(spec).await;
    let call = &reply["tool_calls"][0];
    assert_eq!(call["server"], "phonebook");
    assert_eq!(call["output"], "555-66666666");
}
