//! Listeners and connections: bind every route up front, accept until shutdown, then let
//! in-flight hops finish (within a grace period) so their records are complete.

use std::sync::Arc;
use std::time::Duration;

use hyper::service::service_fn;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use tokio::net::TcpListener;
use tokio::task::JoinSet;

use super::forward::{RouteContext, UpstreamClient, handle};
use super::{ProxySettings, Route};
use crate::serve::{ServeStats, Shutdown, serve_http};
use crate::store::RecorderHandle;

/// The proxy with every listener bound, ready to run.
pub struct Proxy {
    listeners: Vec<(Route, TcpListener)>,
    settings: Arc<ProxySettings>,
}

/// What a run of the proxy did: connections served, and those cut off at the end.
pub type ProxyStats = ServeStats;

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

    /// Serves until `shutdown` asks, then waits for in-flight hops (up to the grace period, or
    /// until a second stop request cuts it short). The recorder handle is dropped when the last
    /// hop is handed over.
    pub async fn run(self, recorder: RecorderHandle, shutdown: impl Into<Shutdown>) -> ProxyStats {
        let client = upstream_client();
        let stop = shutdown.into().share();
        let mut accept_loops = JoinSet::new();
        for (route, listener) in self.listeners {
            let ctx = Arc::new(RouteContext {
                route,
                settings: self.settings.clone(),
                client: client.clone(),
                recorder: recorder.clone(),
            });
            let make_service = move |peer| {
                let ctx = ctx.clone();
                service_fn(move |request| handle(ctx.clone(), peer, request))
            };
            let grace = self.settings.shutdown_grace;
            accept_loops.spawn(serve_http(listener, make_service, stop.shutdown(), grace));
        }
        drop(recorder);
        let mut stats = ProxyStats::default();
        while let Some(done) = accept_loops.join_next().await {
            if let Ok(route_stats) = done {
                stats += route_stats;
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
