//! Interop with Arize Phoenix (`.venv-phoenix`, set up by scripts/test): the buy-milk topology
//! (`tracer up` in front of notes-agent and notes-server, the recorded buy-milk model standing in
//! for Ollama) with `--otlp` pointed at `phoenix serve`; Phoenix's REST API then returns the
//! trace's spans under tracer's trace id: one LLM span per model hop, `execute_tool append`
//! (TOOL) and the agent's `invoke_agent` (AGENT).

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use serde_json::Value;

use super::interop_peers::venv_python;
use super::otlp_tracer::{trace_ids, tracer};

fn free_port() -> u16 {
    crate::free_ports::free_port()
}

/// A child process killed when the test ends, however it ends.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

async fn get(url: &str) -> Option<(u16, Bytes)> {
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http::<Full<Bytes>>();
    let request = hyper::Request::get(url)
        .body(Full::new(Bytes::new()))
        .ok()?;
    let response = tokio::time::timeout(Duration::from_secs(10), client.request(request))
        .await
        .ok()?
        .ok()?;
    let status = response.status().as_u16();
    Some((
        status,
        response.into_body().collect().await.ok()?.to_bytes(),
    ))
}

async fn post(url: &str, body: &str) -> Value {
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http::<Full<Bytes>>();
    let request = hyper::Request::post(url)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap();
    let response = tokio::time::timeout(Duration::from_secs(60), client.request(request))
        .await
        .unwrap()
        .unwrap();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    serde_json::from_slice(&bytes).unwrap()
}

/// `phoenix serve` on free ports with its own working directory; waits for `/healthz`.
async fn start_phoenix(python: &Path, dir: &Path) -> (Running, String) {
    let port = free_port();
    let phoenix = python.with_file_name("phoenix");
    let child = Command::new(&phoenix)
        .arg("serve")
        .env("PHOENIX_PORT", port.to_string())
        .env("PHOENIX_GRPC_PORT", free_port().to_string())
        .env("PHOENIX_HOST", "127.0.0.1")
        .env("PHOENIX_WORKING_DIR", dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("starting {}: {e}", phoenix.display()));
    let running = Running(child);
    let base = format!("http://127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(180);
    while get(&format!("{base}/healthz")).await.map(|(s, _)| s) != Some(200) {
        assert!(
            Instant::now() < deadline,
            "phoenix did not come up on {base}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    (running, base)
}

/// Runs `tracer up` on free ports; returns it once it printed its curl line, and the agent URL.
fn start_up(db: &Path, dir: &Path, model: &str, otlp: &str) -> (Running, String) {
    let ports: Vec<String> = crate::free_ports::distinct_ports(5);
    let mut child = tracer(db, &[])
        .arg("up")
        .args(["--agent-port", &ports[0], "--mcp-port", &ports[1]])
        .args([
            "--model-port",
            &ports[2],
            "--agent-internal-port",
            &ports[3],
        ])
        .args(["--mcp-internal-port", &ports[4], "--ollama", model])
        .args(["--notes", dir.join("notes/db").to_str().unwrap()])
        .args(["--otlp", otlp])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let curl = lines
        .by_ref()
        .map(Result::unwrap)
        .find(|line| line.trim_start().starts_with("curl "))
        .expect("tracer up prints a curl line");
    std::thread::spawn(move || lines.for_each(drop));
    let url = curl
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap()
        .to_string();
    (Running(child), url)
}

/// The trace the user's request opened (once grouped): its id and how many model hops it has.
async fn request_trace(db: &Path) -> (String, usize) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let store = tracer_store::Store::open(db).await.unwrap();
        for id in trace_ids(db).await {
            let hops = store.trace_hops(&id).await.unwrap();
            let has = |role| hops.iter().filter(|h| h.start.role == role).count();
            if has(tracer_wire::hop::Role::Agent) == 1 && has(tracer_wire::hop::Role::Model) >= 2 {
                store.close().await;
                return (id, has(tracer_wire::hop::Role::Model));
            }
        }
        store.close().await;
        assert!(
            Instant::now() < deadline,
            "the request's trace was never grouped"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn phoenix_shows_the_buy_milk_trace_under_tracers_trace_id() {
    let Some(python) = venv_python(".venv-phoenix", "phoenix", "arize-phoenix") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (_phoenix, phoenix) = start_phoenix(&python, &dir.path().join("phoenix")).await;

    // The recorded buy-milk model stands in for Ollama.
    let model_port = free_port();
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-traces/buy-milk.json");
    let _model = Running(
        tracer(&dir.path().join("unused.db"), &[])
            .arg("serve-replay")
            .arg(&sample)
            .args(["--listen", &format!("127.0.0.1:{model_port}")])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let db = dir.path().join("tracer.db");
    let (_up, agent) = start_up(
        &db,
        dir.path(),
        &format!("http://127.0.0.1:{model_port}"),
        &phoenix,
    );
    let reply = post(&agent, r#"{"message":"Add buy milk to my notes"}"#).await;
    assert!(
        reply["reply"].as_str().unwrap_or("").contains("buy milk"),
        "{reply}"
    );

    let (trace_id, model_hops) = request_trace(&db).await;
    assert_eq!(model_hops, 2);

    // Sent live (about 2 s after the trace settles); Phoenix stores spans in the background.
    let url = format!("{phoenix}/v1/projects/default/spans?limit=100&trace_id={trace_id}");
    let deadline = Instant::now() + Duration::from_secs(60);
    let spans = loop {
        if let Some((200, body)) = get(&url).await {
            let page: Value = serde_json::from_slice(&body).unwrap();
            let spans = page["data"].as_array().cloned().unwrap_or_default();
            if spans.len() >= 5 {
                break spans;
            }
        }
        assert!(
            Instant::now() < deadline,
            "phoenix never held the trace's spans"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    let of = |name: &str| -> Vec<&Value> {
        spans
            .iter()
            .filter(|s| s["name"].as_str().unwrap_or("").starts_with(name))
            .collect()
    };
    for span in &spans {
        assert_eq!(span["context"]["trace_id"], trace_id.as_str(), "{span}");
    }
    let chats = of("chat ");
    assert_eq!(chats.len(), model_hops);
    assert!(chats.iter().all(|s| s["span_kind"] == "LLM"), "{chats:?}");
    let tools = of("execute_tool append");
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0]["span_kind"], "TOOL");
    let agents = of("invoke_agent");
    assert_eq!(agents.len(), 1);
    assert_eq!(agents[0]["span_kind"], "AGENT");
    assert!(
        agents[0]["parent_id"].is_null(),
        "the agent's turn is the root"
    );
    assert_eq!(chats[0]["parent_id"], agents[0]["context"]["span_id"]);
}
