//! The proxy's connections are served on its connection workers: every hop of a route starts and
//! ends on a `tracer-conn-*` thread, never on the runtime that runs the proxy, and a keep-alive
//! connection stays on one worker and one pooled upstream connection.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::service::service_fn;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::TcpListener;
use tracer_record::proxy::{Proxy, ProxySettings, Route};
use tracer_wire::hop::{HopEnd, HopSink, HopStart, RequestDone, ServerLogLine};

/// A sink that keeps, for each event, the hop and the name of the thread it came from.
/// A hop's id, the event (`start`, `request`, `end`) and the thread's name.
type Noted = (String, &'static str, String);

#[derive(Clone, Default)]
struct Threads(Arc<Mutex<Vec<Noted>>>);

impl Threads {
    fn note(&self, id: &str, event: &'static str) {
        let thread = std::thread::current().name().unwrap_or("").to_string();
        self.0.lock().unwrap().push((id.to_string(), event, thread));
    }
}

impl HopSink for Threads {
    fn start(&self, start: HopStart) -> bool {
        self.note(&start.id, "start");
        true
    }
    fn request_done(&self, done: RequestDone) {
        self.note(&done.id, "request");
    }
    fn end(&self, end: HopEnd) {
        self.note(&end.id, "end");
    }
    fn log_line(&self, _: ServerLogLine) {}
}

/// An upstream answering every request `ok`, counting the connections it accepted.
async fn counting_upstream() -> (SocketAddr, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let accepted = Arc::new(AtomicUsize::new(0));
    let counter = accepted.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            counter.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let service = service_fn(|_request| async {
                    Ok::<_, Infallible>(hyper::Response::new(Full::new(Bytes::from_static(b"ok"))))
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    (addr, accepted)
}

#[tokio::test]
async fn hops_are_served_on_the_connection_workers_one_worker_per_connection() {
    let (upstream, accepted) = counting_upstream().await;
    let route = Route::new(
        "model",
        "test",
        "127.0.0.1:0",
        &format!("http://{upstream}"),
    )
    .unwrap();
    let proxy = Proxy::bind(vec![route], ProxySettings::default())
        .await
        .unwrap();
    let listen = proxy.routes()[0].listen;
    let threads = Threads::default();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let run = tokio::spawn(proxy.run(threads.clone(), async move {
        let _ = stopped.await;
    }));

    // One keep-alive connection (the client's pool holds one at a time), three requests.
    let client: Client<_, Full<Bytes>> = Client::builder(TokioExecutor::new())
        .pool_max_idle_per_host(1)
        .build_http();
    for _ in 0..3 {
        let request = hyper::Request::post(format!("http://{listen}/api/chat"))
            .body(Full::new(Bytes::from_static(b"{\"model\":\"m\"}")))
            .unwrap();
        let response = client.request(request).await.unwrap();
        let body = response.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(body, "ok");
        // An HTTP/1.1 upstream connection goes back to tracer's pool a moment after its answer
        // has ended (as in `https_reverse`): the test counts pooling, not that race.
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    drop(client);
    let _ = stop.send(());
    run.await.unwrap();

    let seen = threads.0.lock().unwrap().clone();
    let test_thread = std::thread::current().name().unwrap_or("").to_string();
    assert_eq!(seen.iter().filter(|(_, e, _)| *e == "start").count(), 3);
    assert_eq!(seen.iter().filter(|(_, e, _)| *e == "end").count(), 3);
    for (id, event, thread) in &seen {
        assert!(
            thread.starts_with("tracer-conn-"),
            "{event} of {id} on `{thread}` (the test runs on `{test_thread}`)"
        );
    }
    let workers: std::collections::HashSet<&String> = seen.iter().map(|(_, _, t)| t).collect();
    assert_eq!(workers.len(), 1, "one connection, one worker: {seen:?}");
    assert_eq!(
        accepted.load(Ordering::SeqCst),
        1,
        "three requests on one connection reuse one pooled upstream connection"
    );
}
