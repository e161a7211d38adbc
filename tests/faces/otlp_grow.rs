//! The live exporter and a trace that grows: a forward-proxy trace (no agent hop) whose second
//! model call comes after its first spans were sent hangs under the root already sent, so the
//! receiver holds one root and the tree `export --format otlp` writes. And `export
//! --push-traces-url` re-sends to a receiver the live side named by its full traces URL.

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use serde_json::Value;

use super::otlp_receiver::{ReceivedSpan, Receiver, Reply};
use super::otlp_tracer::{TracerProxy, export_rows, trace_ids, tracer};

const WAIT: Duration = Duration::from_secs(30);

/// An OpenAI-style model: every chat completion is the same plain answer from `gpt-x`.
async fn chat_model() -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let service = service_fn(|req: hyper::Request<hyper::body::Incoming>| async move {
                    let _ = req.into_body().collect().await;
                    let body = serde_json::json!({
                        "id": "c1", "object": "chat.completion", "model": "gpt-x",
                        "choices": [{"index": 0, "finish_reason": "stop",
                            "message": {"role": "assistant", "content": "Milk is on the list."}}],
                    });
                    let mut response =
                        hyper::Response::new(Full::new(Bytes::from(body.to_string())));
                    response
                        .headers_mut()
                        .insert("content-type", "application/json".parse().unwrap());
                    Ok::<_, std::convert::Infallible>(response)
                });
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    addr
}

/// One chat completion through the proxy's model route.
async fn chat(proxy: &TracerProxy) {
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http::<Full<Bytes>>();
    let body = serde_json::json!({
        "model": "gpt-x",
        "messages": [{"role": "user", "content": "Is milk on my list?"}],
    });
    let request = hyper::Request::post(format!("http://{}/v1/chat/completions", proxy.listen))
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap();
    let response = tokio::time::timeout(WAIT, client.request(request))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(response.status(), 200);
    let _ = response.into_body().collect().await.unwrap();
}

/// `(span id, parent span id)` of every span, parent "" for a root.
fn tree_of(spans: &[ReceivedSpan]) -> HashMap<String, String> {
    spans
        .iter()
        .map(|s| (s.span_id.clone(), s.parent_span_id.clone()))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_trace_that_grows_after_its_spans_were_sent_keeps_one_root() {
    let receiver = Receiver::start().await;
    let model = chat_model().await;
    let dir = tempfile::tempdir().unwrap();
    let base = receiver.base_url();
    let proxy = TracerProxy::start_route(
        dir.path(),
        "model",
        model,
        &["--otlp", &base, "--otlp-delay", "0.3"],
        &[],
    );
    chat(&proxy).await;
    // The first call's trace settles and goes out: its root and its chat span.
    let first = receiver.wait_for_spans(2, WAIT).await;
    assert_eq!(first.len(), 2, "{first:?}");
    let root = first
        .iter()
        .find(|s| s.parent_span_id.is_empty())
        .unwrap_or_else(|| panic!("no root in the first batch: {first:?}"));
    assert_eq!(root.name, "invoke_agent");
    // The same question again, well after the delay: grouping puts it in the same trace.
    tokio::time::sleep(Duration::from_millis(800)).await;
    chat(&proxy).await;
    let spans = receiver.wait_for_spans(3, WAIT).await;
    let stderr = proxy.stop().await;
    assert!(stderr.contains("3 spans exported"), "{stderr}");

    let db = dir.path().join("tracer.db");
    let ids = trace_ids(&db).await;
    assert_eq!(ids.len(), 1, "one trace of two hops");
    assert_eq!(spans.len(), 3, "nothing sent twice: {spans:?}");
    let span_ids: HashSet<&str> = spans.iter().map(|s| s.span_id.as_str()).collect();
    assert_eq!(span_ids.len(), 3);
    let roots: Vec<&ReceivedSpan> = spans
        .iter()
        .filter(|s| s.parent_span_id.is_empty())
        .collect();
    assert_eq!(roots.len(), 1, "one root in the trace: {spans:?}");
    for span in &spans {
        assert_eq!(span.trace_id, ids[0]);
        assert!(
            span.parent_span_id.is_empty() || span_ids.contains(span.parent_span_id.as_str()),
            "{} hangs under a span outside the trace",
            span.name
        );
    }
    let chats = spans.iter().filter(|s| s.name == "chat gpt-x").count();
    assert_eq!(chats, 2);

    // The file export of the same trace is the same tree.
    let out = tracer(&db, &[])
        .args(["export", &ids[0], "--format", "otlp"])
        .output()
        .unwrap();
    let document: Value = serde_json::from_slice(&out.stdout).unwrap();
    let written: HashMap<String, String> = document["resourceSpans"][0]["scopeSpans"][0]["spans"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let parent = s["parentSpanId"].as_str().unwrap_or_default();
            (s["spanId"].as_str().unwrap().into(), parent.into())
        })
        .collect();
    assert_eq!(written, tree_of(&spans));
}

#[tokio::test(flavor = "multi_thread")]
async fn push_traces_url_resends_to_the_traces_url_the_live_exporter_used() {
    let receiver = Receiver::start().await;
    receiver.otherwise(Reply::Status(400, None));
    let model = chat_model().await;
    let dir = tempfile::tempdir().unwrap();
    let url = format!("{}/ingest/otlp", receiver.base_url());
    let proxy = TracerProxy::start_route(
        dir.path(),
        "model",
        model,
        &["--otlp-traces-url", &url, "--otlp-delay", "0.2"],
        &[],
    );
    chat(&proxy).await;
    let db = dir.path().join("tracer.db");
    let deadline = std::time::Instant::now() + WAIT;
    while export_rows(&db).await.1 < 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "the 400 never counted"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let stderr = proxy.stop().await;
    let command = format!("tracer export --all --format otlp --push-traces-url {url}");
    assert!(stderr.contains(&command), "{stderr}");
    let ls = tracer(&db, &[]).arg("ls").output().unwrap();
    let listing = String::from_utf8(ls.stdout).unwrap();
    assert!(
        listing.contains(&format!(
            "2 spans were not exported to {url} ({command} sends them)"
        )),
        "{listing}"
    );

    receiver.otherwise(Reply::Ok);
    let push = tracer(&db, &[])
        .args([
            "export",
            "--all",
            "--format",
            "otlp",
            "--push-traces-url",
            &url,
        ])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&push.stderr);
    assert!(push.status.success(), "{said}");
    assert!(said.contains(&format!("2 spans sent to {url}")), "{said}");
    assert_eq!(receiver.accepted_spans().len(), 2);
    assert!(receiver.requests().iter().all(|r| r.path == "/ingest/otlp"));
    let (rows, counter) = export_rows(&db).await;
    assert_eq!(
        (rows.get("sent").copied(), rows.len(), counter),
        (Some(2), 1, 0)
    );
    let ls = tracer(&db, &[]).arg("ls").output().unwrap();
    assert!(
        !String::from_utf8(ls.stdout)
            .unwrap()
            .contains("not exported")
    );
    // A span a receiver took and rejected (partial success) is counted, and no push resends it.
    let store = tracer_store::Store::open(&db).await.unwrap();
    store
        .add_to_counter(tracer_store::exports::SPANS_NOT_EXPORTED, 1)
        .await
        .unwrap();
    store.close().await;
    let ls = tracer(&db, &[]).arg("ls").output().unwrap();
    let listing = String::from_utf8(ls.stdout).unwrap();
    assert!(
        listing.contains("1 spans were rejected by an OpenTelemetry receiver")
            && !listing.contains("not exported to"),
        "{listing}"
    );
}
