//! `tracer serve-replay` / `ReplayServer` over real sockets: every sample serves its recorded
//! answers, matching ignores volatile fields, repeats follow the recorded order, `--pace recorded`
//! keeps the chunk timing, misses name the closest recording, and notes-agent runs on the
//! recorded buy-milk model end to end.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tracer::replay_server::{Pace, ReplayServer};
use tracer_export::hop_log::HopLog;
use tracer_trace::RecordedHop;
use tracer_wire::hop::Role;

type Body = BoxBody<Bytes, Infallible>;

fn sample(name: &str) -> HopLog {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("sample-traces")
        .join(name);
    HopLog::from_json(&std::fs::read(path).unwrap()).unwrap()
}

async fn serve(server: ReplayServer) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(Arc::new(server).serve(listener, std::future::pending()));
    addr
}

struct Answer {
    status: u16,
    headers: http::HeaderMap,
    body: Vec<u8>,
    /// When each body frame arrived, after the response head.
    frame_times: Vec<Duration>,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap()
    }
}

async fn send(addr: SocketAddr, method: &str, path: &str, body: Vec<u8>) -> Answer {
    let client: Client<_, Body> = Client::builder(TokioExecutor::new()).build_http();
    let request = http::Request::builder()
        .method(method)
        .uri(format!("http://{addr}{path}"))
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body)).boxed())
        .unwrap();
    let response = client.request(request).await.unwrap();
    let head = Instant::now();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let mut body = response.into_body();
    let mut bytes = Vec::new();
    let mut frame_times = Vec::new();
    while let Some(frame) = body.frame().await {
        if let Ok(data) = frame.unwrap().into_data() {
            frame_times.push(head.elapsed());
            bytes.extend_from_slice(&data);
        }
    }
    Answer {
        status,
        headers,
        body: bytes,
        frame_times,
    }
}

fn hops_of(log: &HopLog, role: Role) -> Vec<RecordedHop> {
    let mut hops: Vec<RecordedHop> = log
        .recorded_hops()
        .into_iter()
        .filter(|h| h.start.role == role)
        .collect();
    hops.sort_by_key(|h| h.start.started_unix_ns);
    hops
}

fn request_body(hop: &RecordedHop) -> Vec<u8> {
    hop.end.as_ref().unwrap().request_body.bytes.clone()
}

fn response_body(hop: &RecordedHop) -> Vec<u8> {
    hop.end.as_ref().unwrap().response_body.bytes.clone()
}

#[tokio::test]
async fn every_sample_serves_its_recorded_model_answers() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("sample-traces");
    let mut served = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if !name.ends_with(".json") {
            continue;
        }
        let log = sample(&name);
        let addr = serve(ReplayServer::from_hop_log(&log, Role::Model).unwrap()).await;
        for hop in hops_of(&log, Role::Model) {
            let answer = send(addr, &hop.start.method, &hop.start.path, request_body(&hop)).await;
            assert_eq!(
                answer.status,
                200,
                "{name}: {}",
                String::from_utf8_lossy(&answer.body)
            );
            assert_eq!(answer.body, response_body(&hop), "{name}");
            served += 1;
        }
        let addr = serve(ReplayServer::from_hop_log(&log, Role::Mcp).unwrap()).await;
        for hop in hops_of(&log, Role::Mcp) {
            let answer = send(addr, &hop.start.method, &hop.start.path, request_body(&hop)).await;
            assert_eq!(
                answer.status,
                200,
                "{name}: {}",
                String::from_utf8_lossy(&answer.body)
            );
            let recorded: Value = serde_json::from_slice(&response_body(&hop)).unwrap();
            assert_eq!(answer.json(), recorded, "{name}");
            served += 1;
        }
    }
    assert!(served >= 25, "{served}");
}

#[tokio::test]
async fn mcp_answers_carry_the_request_id() {
    let log = sample("buy-milk.json");
    let addr = serve(ReplayServer::from_hop_log(&log, Role::Mcp).unwrap()).await;
    let call = hops_of(&log, Role::Mcp)
        .into_iter()
        .find(|h| String::from_utf8_lossy(&request_body(h)).contains("tools/call"))
        .unwrap();
    let mut request: Value = serde_json::from_slice(&request_body(&call)).unwrap();
    request["id"] = json!("my-own-id");
    let answer = send(addr, "POST", "/mcp", serde_json::to_vec(&request).unwrap()).await;
    assert_eq!(answer.status, 200);
    let reply = answer.json();
    assert_eq!(reply["id"], "my-own-id");
    assert!(
        reply["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("Appended")
    );
}

#[tokio::test]
async fn matching_ignores_ids_options_and_the_system_prompt() {
    let log = sample("buy-milk.json");
    let addr = serve(ReplayServer::from_hop_log(&log, Role::Model).unwrap()).await;
    let first = &hops_of(&log, Role::Model)[0];
    let mut request: Value = serde_json::from_slice(&request_body(first)).unwrap();
    request["messages"][0]["content"] = json!("You are a terse assistant.");
    request["options"] = json!({ "temperature": 0, "seed": 42 });
    request["keep_alive"] = json!("5m");
    let answer = send(
        addr,
        "POST",
        "/api/chat",
        serde_json::to_vec(&request).unwrap(),
    )
    .await;
    assert_eq!(answer.status, 200);
    assert_eq!(answer.body, response_body(first));
    assert_eq!(answer.headers["x-tracer-replay-match"], "exact");
    assert!(
        answer.headers["x-tracer-replay"]
            .to_str()
            .unwrap()
            .ends_with("hop 4")
    );
}

#[tokio::test]
async fn repeats_are_served_in_recorded_order() {
    let log = sample("buy-milk.json");
    let mut hops = log.recorded_hops();
    let first = hops_of(&log, Role::Model)[0].clone();
    // The same request recorded a second time, later, with another answer.
    let mut again = first.clone();
    again.start.id = "ffffffffffffffffffffffffffffffff".into();
    again.start.started_unix_ns += 60_000_000_000;
    let end = again.end.as_mut().unwrap();
    end.response_body = tracer_wire::hop::BodyCapture::whole(
        br#"{"message":{"role":"assistant","content":"Which notes?"},"done":true}"#.to_vec(),
    );
    hops.push(again);
    let addr = serve(ReplayServer::from_hops(log.trace_id(), &hops, Role::Model).unwrap()).await;
    let mut bodies = Vec::new();
    for _ in 0..3 {
        let answer = send(addr, "POST", "/api/chat", request_body(&first)).await;
        assert_eq!(answer.status, 200);
        bodies.push(String::from_utf8(answer.body).unwrap());
    }
    assert!(bodies[0].contains("\"append\""), "{}", bodies[0]);
    assert!(bodies[1].contains("Which notes?"), "{}", bodies[1]);
    assert_eq!(
        bodies[2], bodies[0],
        "past the recording, the order starts again"
    );
}

#[tokio::test]
async fn pace_recorded_keeps_the_chunk_timing_and_fast_does_not() {
    let log = sample("streamed-ndjson.json");
    let answer_hop = hops_of(&log, Role::Model).pop().unwrap();
    let end = answer_hop.end.as_ref().unwrap();
    assert!(end.chunks.len() >= 10);
    let span = Duration::from_nanos(
        (end.chunks.last().unwrap().offset_ns - end.chunks[0].offset_ns) as u64,
    );
    assert!(span >= Duration::from_millis(400), "{span:?}");

    let paced = serve(
        ReplayServer::from_hop_log(&log, Role::Model)
            .unwrap()
            .with_pace(Pace::Recorded),
    )
    .await;
    let answer = send(paced, "POST", "/api/chat", request_body(&answer_hop)).await;
    assert_eq!(answer.body, response_body(&answer_hop));
    assert!(answer.frame_times.len() >= 10, "{:?}", answer.frame_times);
    let took = *answer.frame_times.last().unwrap() - answer.frame_times[0];
    assert!(
        took >= span.mul_f64(0.8),
        "took {took:?}, recorded {span:?}"
    );

    let fast = serve(ReplayServer::from_hop_log(&log, Role::Model).unwrap()).await;
    let answer = send(fast, "POST", "/api/chat", request_body(&answer_hop)).await;
    assert_eq!(answer.body, response_body(&answer_hop));
    assert!(answer.frame_times.len() < 10, "{:?}", answer.frame_times);
}

#[tokio::test]
async fn a_miss_names_the_closest_recording_and_how_it_differs() {
    let log = sample("buy-milk.json");
    let addr = serve(ReplayServer::from_hop_log(&log, Role::Model).unwrap()).await;
    let first = &hops_of(&log, Role::Model)[0];
    let mut request: Value = serde_json::from_slice(&request_body(first)).unwrap();
    request["messages"][1]["content"] = json!("Add buy eggs to my notes");
    let answer = send(
        addr,
        "POST",
        "/api/chat",
        serde_json::to_vec(&request).unwrap(),
    )
    .await;
    assert_eq!(answer.status, 422);
    assert_eq!(answer.headers["content-type"], "application/json");
    let error = answer.json();
    assert!(
        error["error"].as_str().unwrap().contains("Add buy eggs"),
        "{error}"
    );
    assert_eq!(error["closest"]["hop"], 4);
    let differences = error["closest"]["differences"].as_array().unwrap();
    assert_eq!(differences.len(), 1, "{error}");
    let words = differences[0].as_str().unwrap();
    assert!(
        words.contains("message 1 (user)") && words.contains("\"Add buy milk to my notes\""),
        "{words}"
    );

    let answer = send(addr, "POST", "/v1/chat/completions", b"{}".to_vec()).await;
    assert_eq!(answer.status, 404);
    let error = answer.json();
    assert_eq!(error["recorded"], json!(["POST /api/chat"]));
    assert!(
        error["error"]
            .as_str()
            .unwrap()
            .contains("/v1/chat/completions")
    );

    assert!(
        ReplayServer::from_hop_log(&sample("phonebook-text-tool-call.json"), Role::Agent).is_err()
    );
}

#[tokio::test]
async fn tool_results_that_differ_still_match_and_say_so() {
    let log = sample("buy-milk.json");
    let addr = serve(ReplayServer::from_hop_log(&log, Role::Model).unwrap()).await;
    let second = &hops_of(&log, Role::Model)[1];
    let mut request: Value = serde_json::from_slice(&request_body(second)).unwrap();
    let tool = request["messages"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|m| m["role"] == "tool")
        .unwrap();
    tool["content"] = json!("Appended a new line at the end of the notes (now 4 lines, 40 bytes).");
    let answer = send(
        addr,
        "POST",
        "/api/chat",
        serde_json::to_vec(&request).unwrap(),
    )
    .await;
    assert_eq!(answer.status, 200);
    assert_eq!(answer.body, response_body(second));
    assert_eq!(
        answer.headers["x-tracer-replay-match"],
        "tool-results-differ"
    );
}

/// The real `tracer serve-replay` process in place of Ollama, notes-agent with its defaults.
#[tokio::test]
async fn notes_agent_adds_buy_milk_on_the_recorded_model() {
    use tracer_reference::agent::{AgentConfig, McpServerSpec, ModelApi};
    use tracer_reference::notes_server::{NotesServer, NotesServerConfig};

    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let sample_path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("sample-traces/buy-milk.json");
    let mut replay = tokio::process::Command::new(env!("CARGO_BIN_EXE_tracer"))
        .arg("serve-replay")
        .arg(&sample_path)
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        assert!(
            Instant::now() < deadline,
            "serve-replay did not start listening"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    let dir = tempfile::tempdir().unwrap();
    let notes_path = dir.path().join("db");
    let notes = NotesServer::open(NotesServerConfig::new(&notes_path))
        .await
        .unwrap();
    let notes_listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let notes_addr = notes_listener.local_addr().unwrap();
    tokio::spawn(tracer_reference::notes_server::serve_http(
        notes_listener,
        notes,
        std::future::pending(),
    ));

    let mut config = AgentConfig::new(ModelApi::Ollama, format!("http://127.0.0.1:{port}"));
    config.mcp_servers = vec![McpServerSpec::Http {
        url: format!("http://{notes_addr}/mcp"),
    }];
    let agent_listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let agent_addr = agent_listener.local_addr().unwrap();
    tokio::spawn(tracer_reference::agent::serve(agent_listener, config));

    let answer = send(
        agent_addr,
        "POST",
        "/agent",
        serde_json::to_vec(&json!({ "message": "Add buy milk to my notes" })).unwrap(),
    )
    .await;
    assert_eq!(
        answer.status,
        200,
        "{}",
        String::from_utf8_lossy(&answer.body)
    );
    let reply = answer.json();
    assert!(
        reply
            .to_string()
            .contains("I've added \\\"buy milk\\\" to your notes."),
        "{reply}"
    );
    let notes = std::fs::read_to_string(&notes_path).unwrap();
    assert!(notes.trim_end().ends_with("buy milk"), "{notes:?}");
    replay.kill().await.unwrap();
}

#[test]
fn the_built_in_buy_milk_model_is_the_sample() {
    let server = ReplayServer::buy_milk_model().unwrap();
    let sample_log = sample("buy-milk.json");
    assert_eq!(
        server.recordings().len(),
        hops_of(&sample_log, Role::Model).len()
    );
    assert_eq!(server.recordings()[0].number, 4);
    assert_eq!(server.recordings()[1].number, 8);
}

#[test]
fn serve_replay_refuses_what_it_cannot_serve() {
    let dir = tempfile::tempdir().unwrap();
    let not_json = dir.path().join("notes.txt");
    std::fs::write(&not_json, "buy milk").unwrap();
    let other_json = dir.path().join("other.json");
    std::fs::write(&other_json, r#"{"log": {"version": "1.2"}}"#).unwrap();
    let samples = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("sample-traces");
    let cases = [
        (dir.path().join("missing.json"), vec![], "missing.json"),
        (not_json, vec![], "not JSON"),
        (other_json, vec![], "\"format\""),
        (
            samples.join("phonebook-text-tool-call.json"),
            vec!["--listen", "nowhere"],
            "`nowhere` is not IP:PORT or localhost:PORT",
        ),
    ];
    for (file, extra, expected) in cases {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_tracer"))
            .arg("serve-replay")
            .arg(&file)
            .args(extra)
            .output()
            .unwrap();
        assert!(!output.status.success());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(expected), "{}: {stderr}", file.display());
    }
}

#[test]
fn buy_milk_answers_are_the_articles_bytes() {
    let log = sample("buy-milk.json");
    let answers: Vec<String> = hops_of(&log, Role::Model)
        .iter()
        .map(|hop| String::from_utf8(response_body(hop)).unwrap())
        .collect();
    assert_eq!(
        answers,
        [
            "{ \"message\": { \"role\": \"assistant\", \"content\": \"\",\n    \"tool_calls\": [ { \"function\": { \"name\": \"append\", \"arguments\": { \"content\": \"buy milk\" } } } ] },\n  \"done\": true }",
            "{ \"message\": { \"role\": \"assistant\", \"content\": \"I've added \\\"buy milk\\\" to your notes.\" },\n  \"done\": true }",
        ]
    );
    let first: Value =
        serde_json::from_slice(&request_body(&hops_of(&log, Role::Model)[0])).unwrap();
    assert_eq!(first["model"], "qwen2.5:7b");
    assert_eq!(first["stream"], false);
    assert_eq!(first["keep_alive"], "30m");
}
