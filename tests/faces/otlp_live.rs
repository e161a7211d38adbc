//! `tracer proxy --otlp` against a fake OTLP receiver over real sockets: spans of settled traces
//! arrive in batches under tracer's trace ids; 503 + `Retry-After` is retried after the wait; a
//! receiver that comes up late gets every span once; a full queue is counted, shown by `ls` and
//! sent later by `export --push`; gzip, headers, the service name and the JSON protocol.

use std::collections::HashSet;
use std::time::Duration;

use super::otlp_receiver::{Receiver, Reply};
use super::otlp_tracer::{TracerProxy, export_rows, tiny_agent, trace_ids, tracer};

const WAIT: Duration = Duration::from_secs(30);

#[tokio::test(flavor = "multi_thread")]
async fn settled_traces_arrive_in_batches_as_protobuf_under_tracers_trace_ids() {
    let receiver = Receiver::start().await;
    let agent = tiny_agent().await;
    let dir = tempfile::tempdir().unwrap();
    let base = receiver.base_url();
    let proxy = TracerProxy::start(
        dir.path(),
        agent,
        &["--otlp", &base, "--otlp-delay", "1"],
        &[],
    );
    let messages: Vec<String> = (0..10).map(|i| format!("errand {i}")).collect();
    futures_util::future::join_all(messages.iter().map(|m| proxy.ask(m))).await;
    let spans = receiver.wait_for_spans(10, WAIT).await;
    let requests = receiver.requests();
    assert!(
        requests.len() < 10,
        "ten traces that settle together go in fewer requests: {}",
        requests.len()
    );
    for request in &requests {
        assert_eq!(request.path, "/v1/traces");
        assert_eq!(request.headers["content-type"], "application/x-protobuf");
        assert!(!request.gzipped);
        assert_eq!(request.service_name.as_deref(), Some("tracer"));
    }
    let ids: HashSet<String> = trace_ids(&proxy.db).await.into_iter().collect();
    assert_eq!(ids.len(), 10);
    let sent: HashSet<String> = spans.iter().map(|s| s.trace_id.clone()).collect();
    assert_eq!(
        sent, ids,
        "each span carries its trace's id as tracer recorded it"
    );
    for span in &spans {
        assert_eq!(span.name, "invoke_agent");
        assert_eq!(span.kind, 3);
        assert_eq!(span.text("openinference.span.kind"), Some("AGENT"));
        assert_eq!(span.text("gen_ai.operation.name"), Some("invoke_agent"));
        assert_eq!(span.text("http.request.method"), Some("POST"));
        assert!(
            span.text("input.value").is_none(),
            "no contents without --otlp-content"
        );
    }
    let stderr = proxy.stop().await;
    assert!(stderr.contains("/v1/traces (protobuf)"), "{stderr}");
    assert!(
        stderr.contains("10 spans exported to") && stderr.contains(", 0 not exported"),
        "{stderr}"
    );
    assert_eq!(receiver.spans().len(), 10, "nothing sent twice");
    let (rows, counter) = export_rows(&dir.path().join("tracer.db")).await;
    assert_eq!(
        (rows.get("sent").copied(), counter),
        (Some(10), 0),
        "{rows:?} {stderr}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_503_is_retried_after_the_retry_after_it_names() {
    let receiver = Receiver::start().await;
    receiver.script(&[Reply::Status(503, Some(2))]);
    let agent = tiny_agent().await;
    let dir = tempfile::tempdir().unwrap();
    let base = receiver.base_url();
    let proxy = TracerProxy::start(
        dir.path(),
        agent,
        &["--otlp", &base, "--otlp-delay", "0.2"],
        &[],
    );
    proxy.ask("buy milk").await;
    let requests = receiver.wait_for_requests(2, WAIT).await;
    let waited = requests[1].at - requests[0].at;
    // Without Retry-After the first backoff is about half a second.
    assert!(waited >= Duration::from_millis(1900), "waited {waited:?}");
    assert_eq!(requests[0].spans[0].span_id, requests[1].spans[0].span_id);
    receiver.wait_for_spans(1, WAIT).await;
    let stderr = proxy.stop().await;
    assert!(stderr.contains("1 spans exported"), "{stderr}");
    let (rows, counter) = export_rows(&dir.path().join("tracer.db")).await;
    assert_eq!((rows.get("sent").copied(), counter), (Some(1), 0));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_receiver_that_comes_up_late_gets_every_span_once() {
    // The port stays bound (so no other test takes it) but not listening: connecting is refused.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let port = socket.local_addr().unwrap();
    let agent = tiny_agent().await;
    let dir = tempfile::tempdir().unwrap();
    let base = format!("http://{port}");
    let proxy = TracerProxy::start(
        dir.path(),
        agent,
        &["--otlp", &base, "--otlp-delay", "0.2"],
        &[],
    );
    for i in 0..3 {
        proxy.ask(&format!("early {i}")).await;
    }
    // The exporter has taken the spans and is retrying against a closed port.
    let db = dir.path().join("tracer.db");
    let deadline = std::time::Instant::now() + WAIT;
    while export_rows(&db)
        .await
        .0
        .get("sending")
        .copied()
        .unwrap_or(0)
        < 3
    {
        assert!(std::time::Instant::now() < deadline, "spans never taken");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    let receiver = Receiver::start_with(socket.listen(1024).unwrap());
    receiver.wait_for_spans(3, WAIT).await;
    for i in 0..2 {
        proxy.ask(&format!("late {i}")).await;
    }
    receiver.wait_for_spans(5, WAIT).await;
    let stderr = proxy.stop().await;
    assert!(stderr.contains("5 spans exported"), "{stderr}");
    let spans = receiver.spans();
    let unique: HashSet<&str> = spans.iter().map(|s| s.span_id.as_str()).collect();
    assert_eq!((spans.len(), unique.len()), (5, 5), "every span once");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_full_queue_is_counted_shown_by_ls_and_sent_later_by_push() {
    let receiver = Receiver::start().await;
    receiver.otherwise(Reply::Status(503, Some(30)));
    let agent = tiny_agent().await;
    let dir = tempfile::tempdir().unwrap();
    let base = receiver.base_url();
    let proxy = TracerProxy::start(
        dir.path(),
        agent,
        &["--otlp", &base, "--otlp-delay", "0.2", "--otlp-queue", "2"],
        &[],
    );
    proxy.ask("first").await;
    // The first batch waits out a 30 s Retry-After; two more spans fit in the queue.
    receiver.wait_for_requests(1, WAIT).await;
    for i in 0..5 {
        assert!(proxy.ask(&format!("more {i}")).await.contains("done: more"));
    }
    let db = dir.path().join("tracer.db");
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let (rows, counter) = export_rows(&db).await;
        if rows.values().sum::<i64>() == 6 && counter == 3 {
            assert_eq!(rows.get("failed").copied(), Some(3));
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{rows:?} {counter}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let stderr = proxy.stop().await;
    assert!(
        stderr.contains("0 spans exported") && stderr.contains("6 not exported"),
        "{stderr}"
    );
    let (rows, counter) = export_rows(&db).await;
    assert_eq!(
        (rows.get("failed").copied(), counter),
        (Some(6), 6),
        "{rows:?} {stderr}"
    );

    let ls = tracer(&db, &[]).arg("ls").output().unwrap();
    let listing = String::from_utf8(ls.stdout).unwrap();
    assert!(listing.contains("6 spans were not exported"), "{listing}");

    receiver.otherwise(Reply::Ok);
    let push = tracer(&db, &[])
        .args(["export", "--all", "--format", "otlp", "--push", &base])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&push.stderr);
    assert!(push.status.success(), "{said}");
    assert!(said.contains("6 spans sent to"), "{said}");
    assert_eq!(receiver.accepted_spans().len(), 6);
    assert_eq!(export_rows(&db).await.1, 0);
    let ls = tracer(&db, &[]).arg("ls").output().unwrap();
    assert!(
        !String::from_utf8(ls.stdout)
            .unwrap()
            .contains("not exported")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn gzip_headers_and_the_service_name_come_from_the_otel_environment() {
    let receiver = Receiver::start().await;
    let agent = tiny_agent().await;
    let dir = tempfile::tempdir().unwrap();
    let env = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.base_url()),
        ("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip".into()),
        (
            "OTEL_EXPORTER_OTLP_HEADERS",
            "Authorization=Basic%20cGs6c2s=".into(),
        ),
        ("OTEL_SERVICE_NAME", "support-agents".into()),
    ];
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let proxy = TracerProxy::start(
        dir.path(),
        agent,
        &["--otlp-header", "x-tenant=blue", "--otlp-delay", "0.2"],
        &env,
    );
    proxy.ask("buy milk").await;
    receiver.wait_for_spans(1, WAIT).await;
    proxy.stop().await;
    let request = &receiver.requests()[0];
    assert!(request.gzipped);
    assert_eq!(request.headers["authorization"], "Basic cGs6c2s=");
    assert_eq!(request.headers["x-tenant"], "blue");
    assert_eq!(request.service_name.as_deref(), Some("support-agents"));
    assert_eq!(request.spans[0].name, "invoke_agent");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_json_protocol_goes_to_the_traces_endpoint_as_given_with_contents() {
    let receiver = Receiver::start().await;
    let agent = tiny_agent().await;
    let dir = tempfile::tempdir().unwrap();
    let url = format!("{}/ingest/otlp", receiver.base_url());
    let env = [
        ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", url.as_str()),
        ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/json"),
    ];
    let proxy = TracerProxy::start(
        dir.path(),
        agent,
        &["--otlp-content", "--otlp-delay", "0.2"],
        &env,
    );
    proxy.ask("Add buy milk to my notes").await;
    let spans = receiver.wait_for_spans(1, WAIT).await;
    proxy.stop().await;
    let request = &receiver.requests()[0];
    assert_eq!(request.path, "/ingest/otlp");
    assert_eq!(request.headers["content-type"], "application/json");
    assert_eq!(
        spans[0].trace_id,
        trace_ids(&dir.path().join("tracer.db")).await[0]
    );
    assert_eq!(
        spans[0].text("input.value"),
        Some("Add buy milk to my notes")
    );
    assert_eq!(
        spans[0].text("output.value"),
        Some("done: Add buy milk to my notes")
    );
    let messages: serde_json::Value =
        serde_json::from_str(spans[0].text("gen_ai.input.messages").unwrap()).unwrap();
    assert_eq!(
        messages[0]["parts"][0]["content"],
        "Add buy milk to my notes"
    );
}
