//! Listeners and connections: bind every route up front, accept until shutdown, then let
//! in-flight hops finish (within a grace period) so their records are complete.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper::service::service_fn;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinSet;

use super::forward::{RouteContext, UpstreamClient, handle};
use super::{ProxySettings, Route};
use crate::store::RecorderHandle;

/// The proxy with every listener bound, ready to run.
pub struct Proxy {
    listeners: Vec<(Route, TcpListener)>,
    settings: Arc<ProxySettings>,
}

/// What a run of the proxy did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProxyStats {
    pub connections: u64,
    /// Connections still open when the grace period ran out, cut off.
    pub cut_off: u64,
}

impl Proxy {
    /// Binds every route's listener; a port in use is an error naming the route.
    pub async fn bind(routes: Vec<Route>, settings: ProxySettings) -> anyhow::Result<Proxy> {
        let mut listeners = Vec::with_capacity(routes.len());
        for mut route in routes {
            let listener = TcpListener::bind(route.listen).await.map_err(|e| {
                anyhow::anyhow!(
                    "route `{}`: cannot listen on {}: {e}",
                    route.name,
                    route.listen
                )
            })?;
            route.listen = listener.local_addr()?;
            listeners.push((route, listener));
        }
        Ok(Proxy {
            listeners,
            settings: Arc::new(settings),
        })
    }

    /// The routes with their bound addresses (port 0 resolved).
    pub fn routes(&self) -> Vec<Route> {
        self.listeners
            .iter()
            .map(|(route, _)| route.clone())
            .collect()
    }

    /// Serves until `shutdown` resolves, then waits for in-flight hops (up to the grace period).
    /// The recorder handle is dropped when the last hop is handed over.
    pub async fn run(
        self,
        recorder: RecorderHandle,
        shutdown: impl Future<Output = ()>,
    ) -> ProxyStats {
        let client = upstream_client();
        let (stop_tx, stop_rx) = watch::channel(false);
        let mut accept_loops = JoinSet::new();
        for (route, listener) in self.listeners {
            let ctx = Arc::new(RouteContext {
                route,
                settings: self.settings.clone(),
                client: client.clone(),
                recorder: recorder.clone(),
                stop: stop_rx.clone(),
            });
            accept_loops.spawn(accept_loop(
                ctx,
                listener,
                stop_rx.clone(),
                self.settings.shutdown_grace,
            ));
        }
        drop(recorder);
        shutdown.await;
        let _ = stop_tx.send(true);
        let mut stats = ProxyStats::default();
        while let Some(done) = accept_loops.join_next().await {
            if let Ok(route_stats) = done {
                stats.connections += route_stats.connections;
                stats.cut_off += route_stats.cut_off;
            }
        }
        stats
    }
}

fn upstream_client() -> UpstreamClient {
    let mut connector = HttpConnector::new();
    connector.set_nodelay(true);
    connector.set_keepalive(Some(Duration::from_secs(60)));
    Client::builder(TokioExecutor::new())
        .timer(TokioTimer::new())
        .pool_timer(TokioTimer::new())
        .pool_idle_timeout(Duration::from_secs(90))
        .http1_preserve_header_case(true)
        .build(connector)
}

async fn accept_loop(
    ctx: Arc<RouteContext>,
    listener: TcpListener,
    mut stop: watch::Receiver<bool>,
    grace: Duration,
) -> ProxyStats {
    let graceful = GracefulShutdown::new();
    let mut connections = JoinSet::new();
    let mut stats = ProxyStats::default();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, peer) = match accepted {
                    Ok(pair) => pair,
                    Err(error) => {
                        // Out of file descriptors and the like: wait a little, keep serving.
                        tracing::warn!(route = %ctx.route.name, %error, "accept failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let _ = stream.set_nodelay(true);
                stats.connections += 1;
                let connection = graceful.watch(serve_connection(ctx.clone(), stream, peer));
                let route = ctx.route.name.clone();
                connections.spawn(async move {
                    if let Err(error) = connection.await {
                        tracing::debug!(%route, %peer, %error, "connection ended with an error");
                    }
                });
                // Reap finished connection tasks so the set stays small.
                while connections.try_join_next().is_some() {}
            }
            _ = stop.changed() => break,
        }
    }
    drop(listener);
    if tokio::time::timeout(grace, graceful.shutdown())
        .await
        .is_err()
    {
        stats.cut_off = connections.len() as u64;
        tracing::warn!(route = %ctx.route.name, open = stats.cut_off, "grace period over: cutting off connections");
        connections.abort_all();
    }
    while connections.join_next().await.is_some() {}
    stats
}

fn serve_connection(
    ctx: Arc<RouteContext>,
    stream: tokio::net::TcpStream,
    peer: SocketAddr,
) -> impl hyper_util::server::graceful::GracefulConnection<
    Error = Box<dyn std::error::Error + Send + Sync>,
> + Send
+ 'static {
    let service = service_fn(move |request| handle(ctx.clone(), peer, request));
    // HTTP/1 only, with upgrades: a WebSocket handshake passes through as a tunnel.
    let mut builder = auto::Builder::new(TokioExecutor::new()).http1_only();
    builder
        .http1()
        .timer(TokioTimer::new())
        .preserve_header_case(true)
        .keep_alive(true);
    builder
        .serve_connection_with_upgrades(TokioIo::new(stream), service)
        .into_owned()
}
