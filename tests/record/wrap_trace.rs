//! One trace across transports: notes-agent behind the proxy talks to its model over HTTP and to
//! `tracer wrap -- notes-server --stdio` over stdio; both land in one database and one trace.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tracer_live::correlate::{GroupScope, correlate};
use tracer_record::proxy::{Proxy, ProxySettings, Route};
use tracer_reference::agent::{Agent, AgentConfig, McpServerSpec, ModelApi};
use tracer_store::{Recorder, Store};
use tracer_trace::RecordedHop;
use tracer_trace::group::GroupOptions;
use tracer_wire::hop::Transport;

/// The article's model: asks for `append {"content":"buy milk"}`, then answers once it has the result.
async fn buy_milk_model() -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let service = service_fn(|req: hyper::Request<hyper::body::Incoming>| async move {
                    let body = req.into_body().collect().await.unwrap().to_bytes();
                    let request: serde_json::Value = serde_json::from_slice(&body).unwrap();
                    let has_result = request["messages"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|m| m["role"] == "tool");
                    let answer = if has_result {
                        serde_json::json!({"model": "qwen2.5:7b", "message": {"role": "assistant",
                            "content": "I've added \"buy milk\" to your notes."}, "done": true})
                    } else {
                        serde_json::json!({"model": "qwen2.5:7b", "message": {"role": "assistant", "content": "",
                            "tool_calls": [{"function": {"name": "append", "arguments": {"content": "buy milk"}}}]},
                            "done": true})
                    };
                    Ok::<_, std::convert::Infallible>(hyper::Response::new(Full::new(
                        bytes::Bytes::from(answer.to_string()),
                    )))
                });
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    addr
}

#[tokio::test(flavor = "multi_thread")]
async fn http_model_hops_and_stdio_mcp_hops_form_one_numbered_trace() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("tracer.db");
    let notes = dir.path().join("notes/db");
    let store = Store::open(&db).await.unwrap();
    let model = buy_milk_model().await;

    let agent_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let agent_addr = agent_listener.local_addr().unwrap();
    let routes = vec![
        Route::new(
            "agent",
            "agent",
            "127.0.0.1:0",
            &format!("http://{agent_addr}"),
        )
        .unwrap(),
        Route::new("model", "model", "127.0.0.1:0", &format!("http://{model}")).unwrap(),
    ];
    let proxy = Proxy::bind(routes, ProxySettings::default()).await.unwrap();
    let bound = proxy.routes();
    let mut config = AgentConfig::new(ModelApi::Ollama, format!("http://{}", bound[1].listen));
    config.mcp_servers = vec![McpServerSpec::Stdio {
        program: env!("CARGO_BIN_EXE_tracer").into(),
        args: vec![
            "--db".into(),
            db.to_str().unwrap().into(),
            "wrap".into(),
            "--name".into(),
            "notes".into(),
            "--".into(),
            env!("CARGO_BIN_EXE_notes-server").into(),
            "--stdio".into(),
            "--file".into(),
            notes.to_str().unwrap().into(),
        ],
    }];
    let agent = Arc::new(Agent::new(&config).unwrap());
    let (agent_stop, agent_stopped) = tokio::sync::oneshot::channel::<()>();
    let agent_task = tokio::spawn(tracer_reference::agent::serve_until(
        agent_listener,
        agent,
        async move {
            let _ = agent_stopped.await;
        },
    ));
    let (recorder, writer) = Recorder::spawn(store.clone()).unwrap();
    let (proxy_stop, proxy_stopped) = tokio::sync::oneshot::channel::<()>();
    let proxy_task = tokio::spawn(proxy.run(recorder, async move {
        let _ = proxy_stopped.await;
    }));

    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http::<Full<bytes::Bytes>>();
    let request = hyper::Request::post(format!("http://{}/agent", bound[0].listen))
        .header("content-type", "application/json")
        .body(Full::new(bytes::Bytes::from_static(
            br#"{"message":"Add buy milk to my notes"}"#,
        )))
        .unwrap();
    let response = tokio::time::timeout(Duration::from_secs(60), client.request(request))
        .await
        .unwrap()
        .unwrap();
    let reply: serde_json::Value =
        serde_json::from_slice(&response.into_body().collect().await.unwrap().to_bytes()).unwrap();
    assert_eq!(
        reply["reply"], "I've added \"buy milk\" to your notes.",
        "{reply}"
    );
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "buy milk\n");

    // The host stops its server (closing stdin): the wrapper writes what it saw and exits.
    agent_stop.send(()).unwrap();
    agent_task.await.unwrap().unwrap();
    proxy_stop.send(()).unwrap();
    proxy_task.await.unwrap();
    writer.await.unwrap();
    correlate(&store, GroupOptions::default(), GroupScope::Unassigned)
        .await
        .unwrap();

    let traces = store.traces().await.unwrap();
    let request_traces: Vec<_> = traces.iter().filter(|t| t.kind == "request").collect();
    assert_eq!(request_traces.len(), 1, "{traces:?}");
    let hops: Vec<RecordedHop> = store
        .trace_hops(&request_traces[0].id)
        .await
        .unwrap()
        .into_iter()
        .map(tracer_live::load::recorded)
        .collect();
    let stdio_calls: Vec<&str> = hops
        .iter()
        .filter(|h| h.start.transport == Transport::Stdio)
        .map(|h| h.start.method.as_str())
        .collect();
    assert!(
        stdio_calls.contains(&"tools/list") && stdio_calls.contains(&"tools/call"),
        "{stdio_calls:?}"
    );
    let model_hops = hops
        .iter()
        .filter(|h| h.start.role == tracer_wire::hop::Role::Model)
        .count();
    assert_eq!(model_hops, 2);
    let messages = tracer_trace::explain_trace(&hops);
    let lines: Vec<String> = messages.iter().map(|m| m.line()).collect();
    eprintln!("{}", lines.join("\n"));
    assert_eq!(messages.first().unwrap().from, "you");
    assert_eq!(
        messages.last().unwrap().to,
        "you",
        "the user's reply is the last message"
    );
    let numbers: Vec<usize> = messages.iter().map(|m| m.number).collect();
    assert_eq!(numbers, (1..=messages.len()).collect::<Vec<_>>());
}
