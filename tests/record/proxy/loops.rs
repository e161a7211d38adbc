//! A request that comes back to the proxy (a route whose upstream is its own listener, two
//! routes pointing at each other) is refused with `508 Loop Detected` naming the route, and the
//! record holds one hop per listener it passed, not thousands.

use std::net::SocketAddr;

use http::{Request, StatusCode};
use http_body_util::BodyExt;
use tokio::sync::oneshot;
use tracer_record::proxy::{Proxy, ProxySettings, Route};
use tracer_store::{Recorder, Store};

use super::harness::{client, echo_upstream, full};

fn free_addr() -> SocketAddr {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
}

/// Runs a proxy with `routes`, sends one POST to `target`, stops the proxy and returns the
/// answer's status and JSON body with every hop the store holds.
async fn one_request_through(
    routes: Vec<Route>,
    target: SocketAddr,
) -> (
    StatusCode,
    serde_json::Value,
    Vec<tracer_store::hops::StoredHop>,
) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("tracer.db")).await.unwrap();
    let proxy = Proxy::bind(routes, ProxySettings::default()).await.unwrap();
    let (recorder, writer) = Recorder::spawn(store.clone()).unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    let run = tokio::spawn(proxy.run(recorder, async move {
        let _ = stopped.await;
    }));
    let request = Request::post(format!("http://{target}/api/chat"))
        .header("content-type", "application/json")
        .body(full(r#"{"model":"m"}"#))
        .unwrap();
    let response = client().request(request).await.unwrap();
    let status = response.status();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    let _ = stop.send(());
    run.await.unwrap();
    writer.await.unwrap();
    let hops = store.all_hops().await.unwrap();
    let json = serde_json::from_slice(&body)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&body)));
    (status, json, hops)
}

#[tokio::test]
async fn a_route_whose_upstream_is_its_own_listener_gets_508_and_one_hop() {
    let listen = free_addr();
    let route = Route::new(
        "model",
        "selfish",
        &listen.to_string(),
        &format!("http://{listen}"),
    );
    let (status, body, hops) = one_request_through(vec![route.unwrap()], listen).await;
    assert_eq!(status, StatusCode::LOOP_DETECTED, "{body}");
    assert_eq!(body["error"]["route"], "selfish", "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.starts_with("loop detected"), "{message}");
    assert_eq!(hops.len(), 1, "one hop, not one per lap");
    assert_eq!(hops[0].end.status, Some(508));
}

#[tokio::test]
async fn two_routes_pointing_at_each_other_get_508_and_two_hops() {
    let (a, b) = (free_addr(), free_addr());
    let routes = vec![
        Route::new("model", "a", &a.to_string(), &format!("http://{b}")).unwrap(),
        Route::new("model", "b", &b.to_string(), &format!("http://{a}")).unwrap(),
    ];
    let (status, body, hops) = one_request_through(routes, a).await;
    assert_eq!(status, StatusCode::LOOP_DETECTED, "{body}");
    assert_eq!(
        body["error"]["route"], "a",
        "the route it came back to: {body}"
    );
    let mut routes: Vec<_> = hops.iter().map(|h| h.start.route.as_str()).collect();
    routes.sort_unstable();
    assert_eq!(routes, ["a", "b"], "one hop on each route");
    assert!(hops.iter().all(|h| h.end.status == Some(508)));
}

#[tokio::test]
async fn a_chain_through_two_listeners_of_one_proxy_is_no_loop() {
    // a → b → the real upstream: each listener is passed once, so nothing is refused.
    let upstream = echo_upstream().await;
    let (a, b) = (free_addr(), free_addr());
    let routes = vec![
        Route::new("agent", "a", &a.to_string(), &format!("http://{b}")).unwrap(),
        Route::new("model", "b", &b.to_string(), &format!("http://{upstream}")).unwrap(),
    ];
    let (status, body, hops) = one_request_through(routes, a).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["model"], "m");
    assert_eq!(hops.len(), 2);
}
