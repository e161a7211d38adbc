//! The forward proxy's listener: accepts proxy connections, serves each one, hands `CONNECT` to
//! interception (or a tunnel) and absolute-form requests to forwarding, and drains both at stop.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use http::{Method, Request, Response, StatusCode};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::task::JoinSet;

use super::ProxyStats;
use super::context::ProxyBody;
use super::forward_proxy::{ForwardShared, forward_one, proxy_error, serve_until_stopped};

/// Serves the forward listener until `stop`, then lets open exchanges finish within `grace`.
pub async fn accept_loop(
    shared: Arc<ForwardShared>,
    listener: TcpListener,
    grace: Duration,
) -> ProxyStats {
    let mut stop = shared.stop.clone();
    let mut connections = JoinSet::new();
    let mut stats = ProxyStats::default();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, peer) = match accepted {
                    Ok(pair) => pair,
                    Err(error) => {
                        // Out of file descriptors and the like: wait a little, keep serving.
                        tracing::warn!(%error, "forward proxy: accept failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let _ = stream.set_nodelay(true);
                stats.connections += 1;
                connections.spawn(serve_proxy_connection(shared.clone(), stream, peer));
                while connections.try_join_next().is_some() {}
            }
            _ = stop.changed() => break,
        }
    }
    drop(listener);
    let deadline = tokio::time::Instant::now() + grace;
    // Proxy connections first: a CONNECT one of them is answering adds its task before it ends.
    stats.cut_off = drain_until(&mut connections, deadline).await;
    let mut upgraded = std::mem::take(
        &mut *shared
            .upgraded
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    );
    stats.cut_off += drain_until(&mut upgraded, deadline).await;
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

async fn serve_proxy_connection(
    shared: Arc<ForwardShared>,
    stream: tokio::net::TcpStream,
    peer: SocketAddr,
) {
    let mut stop = shared.stop.clone();
    let service = {
        let shared = shared.clone();
        service_fn(move |request| on_proxy_request(shared.clone(), peer, request))
    };
    let connection = http1::Builder::new()
        .timer(TokioTimer::new())
        .preserve_header_case(true)
        .keep_alive(true)
        .serve_connection(TokioIo::new(stream), service)
        .with_upgrades();
    serve_until_stopped(connection, &mut stop).await;
}

async fn on_proxy_request(
    shared: Arc<ForwardShared>,
    peer: SocketAddr,
    request: Request<Incoming>,
) -> Result<Response<ProxyBody>, Infallible> {
    if request.method() == Method::CONNECT {
        return Ok(super::intercept::on_connect(shared, peer, request).await);
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
