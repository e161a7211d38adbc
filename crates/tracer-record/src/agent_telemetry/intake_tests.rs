//! The receiver over a real socket on bad days: a database that refuses the rows answers 503
//! with Retry-After (the exporter tries again) and counts what was not stored; a user endpoint
//! that is gone is counted, and the agent's answer never waits for it.

use std::io::{Read, Write};
use std::net::TcpStream;

use super::*;

fn post(addr: SocketAddr, path: &str, content_type: &str, body: &[u8]) -> String {
    let mut stream = TcpStream::connect(addr).expect("connect");
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).expect("head");
    stream.write_all(body).expect("body");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("answer");
    answer
}

const ONE_LOG: &str = r#"{"resourceLogs":[{"resource":{"attributes":[]},"scopeLogs":[{"logRecords":[
    {"timeUnixNano":"5","attributes":[{"key":"event.name","value":{"stringValue":"tool_result"}}]}]}]}]}"#;

async fn started(
    store: Store,
    forward: Option<ForwardTo>,
) -> (
    SocketAddr,
    Arc<IntakeCounts>,
    tokio::sync::oneshot::Sender<()>,
) {
    let settings = IntakeSettings {
        listen: SocketAddr::from(([127, 0, 0, 1], 0)),
        redact: true,
        max_value: 1024,
        run_id: None,
        forward,
    };
    let intake = TelemetryIntake::bind(store, settings).await.expect("bind");
    let (addr, counts) = (intake.local_addr(), intake.counts());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(intake.run(async move {
        let _ = stopped.await;
    }));
    (addr, counts, stop)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_that_refuses_the_rows_answers_503_and_counts_them() {
    let dir = tempfile::tempdir().expect("dir");
    let store = Store::open(&dir.path().join("t.db")).await.expect("open");
    sqlx::query("drop table agent_events")
        .execute(store.pool())
        .await
        .expect("drop");
    let (addr, counts, stop) = started(store.clone(), None).await;
    let answer = tokio::task::spawn_blocking(move || {
        post(addr, "/v1/logs", "application/json", ONE_LOG.as_bytes())
    })
    .await
    .expect("post");
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(
        answer.to_ascii_lowercase().contains("retry-after: 1"),
        "{answer}"
    );
    assert!(answer.contains("\"code\":14"), "{answer}");
    assert_eq!(IntakeCounts::get(&counts.received), 1);
    assert_eq!(IntakeCounts::get(&counts.stored), 0);
    assert_eq!(store.counter(EVENTS_NOT_STORED).await.expect("counter"), 1);
    assert_eq!(store.counter(EVENTS_RECEIVED).await.expect("counter"), 1);
    let _ = stop.send(());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_endpoint_that_is_gone_is_counted_and_the_records_kept() {
    let dir = tempfile::tempdir().expect("dir");
    let store = Store::open(&dir.path().join("t.db")).await.expect("open");
    // A port nobody listens on.
    let gone = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr");
    let forward = ForwardTo {
        endpoint: Some(format!("http://{gone}")),
        ..ForwardTo::default()
    };
    let (addr, counts, stop) = started(store.clone(), Some(forward)).await;
    let answer = tokio::task::spawn_blocking(move || {
        post(addr, "/v1/logs", "application/json", ONE_LOG.as_bytes())
    })
    .await
    .expect("post");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.ends_with("{}"), "{answer}");
    assert_eq!(IntakeCounts::get(&counts.stored), 1);
    assert_eq!(store.agent_event_count().await.expect("count"), 1);
    let mut not_forwarded = 0;
    for _ in 0..100 {
        not_forwarded = store.counter(NOT_FORWARDED).await.expect("counter");
        if not_forwarded > 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(not_forwarded, 1);
    assert_eq!(store.counter(FORWARDED).await.expect("counter"), 0);
    let _ = stop.send(());
}
