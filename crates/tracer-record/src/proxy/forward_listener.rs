//! The forward proxy's listener: accepts proxy connections, serves each one, hands `CONNECT` to
//! interception (or a tunnel) and absolute-form requests to forwarding, and drains both at stop.
//! Its connections are bounded (`ForwardLimits::max_connections`): beyond the bound a new one
//! is answered `503` and closed, so a flood cannot take every descriptor.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use http::{Method, Request, Response, StatusCode};
use hyper::body::Incoming;
use hyper::service::service_fn;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use super::ProxyStats;
use super::context::ProxyBody;
use super::forward_proxy::{ForwardShared, Slot, forward_one, proxy_error};
use tracer_serve::{Admission, Shutdown, serve_http_admitting};

/// Serves the forward listener until `stop` (with the one accept loop, `serve::serve_http`),
/// then lets the tunnels and intercepted connections it opened finish within what is left of
/// `grace`.
pub(crate) async fn accept_loop(
    shared: Arc<ForwardShared>,
    listener: TcpListener,
    grace: Duration,
) -> ProxyStats {
    let stopped_at = Arc::new(std::sync::Mutex::new(None));
    let shutdown = {
        let mut stop = shared.stop.clone();
        let stopped_at = stopped_at.clone();
        Shutdown::new(async move {
            let _ = stop.wait_for(|stopped| *stopped).await;
            if let Ok(mut at) = stopped_at.lock() {
                *at = Some(tokio::time::Instant::now());
            }
        })
    };
    let serving = shared.clone();
    let limit = shared.forward.limits.max_connections;
    let slots = Arc::new(Semaphore::new(limit));
    let refusals = Arc::new(Semaphore::new(REFUSALS_AT_ONCE));
    let refusing = AtomicBool::new(false);
    let admit = move |peer| {
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            if !refusing.swap(true, Ordering::Relaxed) {
                tracing::warn!(limit, "the forward proxy is full: refusing new connections");
            }
            return match refusals.clone().try_acquire_owned() {
                Ok(held) => Admission::Refuse {
                    answer: full_answer(limit),
                    held: Some(held),
                },
                Err(_) => Admission::Close,
            };
        };
        refusing.store(false, Ordering::Relaxed);
        serving.clients.connected(peer);
        let slot: Slot = Arc::new(slot);
        let shared = serving.clone();
        Admission::Serve(service_fn(move |request| {
            on_proxy_request(shared.clone(), slot.clone(), peer, request)
        }))
    };
    let mut stats = serve_http_admitting(listener, admit, shutdown, grace).await;
    // Tunnels and intercepted connections outlive the proxy connection that opened them.
    let started = stopped_at
        .lock()
        .ok()
        .and_then(|at| *at)
        .unwrap_or_else(tokio::time::Instant::now);
    let mut upgraded = std::mem::take(
        &mut *shared
            .upgraded
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    );
    stats.cut_off += drain_until(&mut upgraded, started + grace).await;
    if stats.cut_off > 0 {
        tracing::warn!(
            open = stats.cut_off,
            "grace period over: cutting off forward-proxy connections"
        );
    }
    stats
}

/// Waits for the tasks until `deadline`, then aborts the rest; returns how many were cut off.
async fn drain_until(tasks: &mut JoinSet<()>, deadline: tokio::time::Instant) -> u64 {
    let _ = tokio::time::timeout_at(deadline, async {
        while tasks.join_next().await.is_some() {}
    })
    .await;
    let cut_off = tasks.len() as u64;
    tasks.abort_all();
    while tasks.join_next().await.is_some() {}
    cut_off
}

/// Connections refused at once with an answer; beyond them a refused connection is just closed.
const REFUSALS_AT_ONCE: usize = 32;

/// The whole HTTP answer to a connection beyond the limit.
fn full_answer(limit: usize) -> bytes::Bytes {
    let body = serde_json::json!({"error": {
        "proxy": "forward",
        "message": format!(
            "tracer's forward proxy has {limit} connections open, its limit \
             (--forward-max-connections): try again once some have closed"
        ),
    }})
    .to_string();
    let head = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n\
         content-length: {}\r\nretry-after: 1\r\nconnection: close\r\n\r\n",
        body.len()
    );
    bytes::Bytes::from(head + &body)
}

async fn on_proxy_request(
    shared: Arc<ForwardShared>,
    slot: Slot,
    peer: SocketAddr,
    request: Request<Incoming>,
) -> Result<Response<ProxyBody>, Infallible> {
    if request.method() == Method::CONNECT {
        return Ok(super::intercept::on_connect(shared, slot, peer, request).await);
    }
    let scheme = request.uri().scheme_str().map(str::to_ascii_lowercase);
    match (scheme.as_deref(), request.uri().authority().cloned()) {
        (Some(scheme @ ("http" | "https")), Some(authority)) => {
            let scheme = scheme.to_string();
            forward_one(shared, peer, request, &scheme, authority).await
        }
        _ => Ok(proxy_error(
            StatusCode::BAD_REQUEST,
            "this is tracer's forward proxy: send absolute-form requests (GET http://host/path) \
             or CONNECT host:port (set HTTP_PROXY/HTTPS_PROXY); a reverse route needs --route",
        )),
    }
}
