//! notes-agent reads its own traces: the real notes-agent binary with `--mcp-cmd "tracer mcp
//! --stdio"` on a database of the sample traces, and a scripted model that asks "which tools did
//! my last request use?" by calling list_traces, then get_trace on the id it got.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::{Value, json};

use crate::sample_db::{NEWEST, TRACER, sample_db};
use crate::scripted_model::{Dialect, Reply, ScriptedModel};

const NOTES_AGENT: &str = env!("CARGO_BIN_EXE_notes-agent");

/// The agent process; killed when the test ends, whatever happened.
struct AgentProcess(Child);

impl Drop for AgentProcess {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    crate::free_ports::free_port()
}

async fn post_agent(port: u16, message: &str) -> (u16, Value) {
    let client = Client::builder(TokioExecutor::new()).build_http();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let request = http::Request::post(format!("http://127.0.0.1:{port}/agent"))
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(
                json!({"message": message}).to_string(),
            )))
            .unwrap();
        match client.request(request).await {
            Ok(response) => {
                let status = response.status().as_u16();
                let body = response.into_body().collect().await.unwrap().to_bytes();
                return (status, serde_json::from_slice(&body).unwrap_or(Value::Null));
            }
            // The agent is still starting: poll until it listens.
            Err(error) if Instant::now() < deadline => {
                let _ = error;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            Err(error) => panic!("notes-agent never answered: {error}"),
        }
    }
}

#[tokio::test]
async fn notes_agent_answers_which_tools_its_last_request_used() {
    let dir = tempfile::tempdir().unwrap();
    let db = sample_db(dir.path());
    let model = ScriptedModel::start(
        Dialect::Ollama,
        vec![
            Reply::call("list_traces", json!({"limit": 1})),
            Reply::call("get_trace", json!({"id": &NEWEST[..8]})),
            Reply::text("Your last request used one tool: get_phonenumber."),
        ],
    )
    .await;
    let port = free_port();
    let mcp_cmd = format!("{TRACER} --db {} mcp --stdio", db.display());
    let _agent = AgentProcess(
        Command::new(NOTES_AGENT)
            .args(["--listen", &format!("127.0.0.1:{port}")])
            .args(["--model-url", &model.base_url, "--mcp-cmd", &mcp_cmd])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );

    let (status, reply) = post_agent(port, "Which tools did my last request use?").await;
    assert_eq!(status, 200, "{reply}");
    assert_eq!(
        reply["reply"],
        "Your last request used one tool: get_phonenumber."
    );
    let calls = reply["tool_calls"].as_array().unwrap();
    let names: Vec<&str> = calls.iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["list_traces", "get_trace"]);
    assert!(
        calls
            .iter()
            .all(|c| c["is_error"] == false && c["server"] == "tracer")
    );
    let listed = calls[0]["output"].as_str().unwrap();
    assert!(
        listed.contains(&NEWEST[..8]) && listed.contains("get_trace"),
        "{listed}"
    );
    let trace = calls[1]["output"].as_str().unwrap();
    assert!(trace.contains("tools: get_phonenumber"), "{trace}");
    assert!(
        trace.contains("get_message"),
        "names what to ask next: {trace}"
    );

    // What the model was given back: the get_trace answer, as the tool's result.
    let received = model.received();
    assert_eq!(received.len(), 3);
    let tools_offered: Vec<&str> = received[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        tools_offered,
        [
            "list_traces",
            "get_trace",
            "get_message",
            "search",
            "tool_stats",
            "diff_traces"
        ]
    );
    let last = received[2].body["messages"].as_array().unwrap();
    let tool_result = last.last().unwrap();
    assert_eq!(tool_result["role"], "tool");
    assert!(
        tool_result["content"]
            .as_str()
            .unwrap()
            .contains("get_phonenumber")
    );
}
