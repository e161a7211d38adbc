//! Listeners and connections: bind every route up front, accept until shutdown, then let
//! in-flight hops finish (within a grace period) so their records are complete.

use std::net::SocketAddr;
use std::sync::Arc;

use hyper::service::service_fn;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinSet;

use super::context::{RouteContext, UpstreamClient};
use super::forward::handle;
use super::forward_listener::accept_loop as forward_accept_loop;
use super::forward_proxy::{ForwardSettings, ForwardShared};
use super::listen_error::{FORWARD_FLAG, ListenError, ROUTE_FLAG};
use super::{ProxySettings, Route};
use tracer_serve::{ServeStats, Shutdown, StopLevel, Workers, serve_http, serve_http_on_workers};
use tracer_wire::hop::{HopSink, Sink};

/// The proxy with every listener bound, ready to run.
pub struct Proxy {
    listeners: Vec<(Route, TcpListener)>,
    settings: Arc<ProxySettings>,
    client: UpstreamClient,
    /// The connection workers the routes' connections are served on, with one upstream client
    /// for each (its pools on that worker's runtime); None: served on the caller's runtime.
    workers: Option<(&'static Workers, Vec<UpstreamClient>)>,
    /// The forward proxy's listener (`--forward`), when there is one.
    forward: Option<(ForwardSettings, TcpListener)>,
}

/// What a run of the proxy did: connections served, and those cut off at the end.
pub type ProxyStats = ServeStats;

impl Proxy {
    /// Binds every route's listener; a port in use is an error naming the route.
    pub async fn bind(routes: Vec<Route>, settings: ProxySettings) -> anyhow::Result<Proxy> {
        let client = UpstreamClient::new(&settings.upstream_tls)?;
        let workers = match Workers::shared() {
            Ok(workers) => Some((
                workers,
                UpstreamClient::many(&settings.upstream_tls, workers.len())?,
            )),
            Err(error) => {
                tracing::warn!(%error, "serving every connection on the main runtime");
                None
            }
        };
        let mut listeners = Vec::with_capacity(routes.len());
        for mut route in routes {
            let listener = TcpListener::bind(route.listen).await.map_err(|e| {
                ListenError::new(
                    format!("route `{}`", route.name),
                    Some(route.name.clone()),
                    route.listen,
                    &e,
                    ROUTE_FLAG,
                )
            })?;
            route.listen = listener.local_addr()?;
            listeners.push((route, listener));
        }
        Ok(Proxy {
            listeners,
            settings: Arc::new(settings),
            client,
            workers,
            forward: None,
        })
    }

    /// Adds the forward proxy's listener (absolute-form requests and CONNECT).
    pub async fn with_forward(mut self, mut forward: ForwardSettings) -> anyhow::Result<Proxy> {
        let listener = TcpListener::bind(forward.listen).await.map_err(|e| {
            ListenError::new("--forward".into(), None, forward.listen, &e, FORWARD_FLAG)
        })?;
        forward.listen = listener.local_addr()?;
        self.forward = Some((forward, listener));
        Ok(self)
    }

    /// Where the forward proxy listens (port 0 resolved), when there is one.
    pub fn forward_addr(&self) -> Option<SocketAddr> {
        self.forward.as_ref().map(|(forward, _)| forward.listen)
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
    pub async fn run(
        self,
        recorder: impl HopSink + 'static,
        shutdown: impl Into<Shutdown>,
    ) -> ProxyStats {
        let recorder: Sink = Arc::new(recorder);
        let client = self.client;
        let stop = shutdown.into().share();
        let grace = self.settings.shutdown_grace;
        // Open tunnels (WebSocket upgrades, CONNECT) end when the stop is asked.
        let (stop_tx, stop_rx) = watch::channel(false);
        let graceful = stop.clone();
        tokio::spawn(async move {
            graceful.reached(StopLevel::Graceful).await;
            let _ = stop_tx.send(true);
        });
        let mut accept_loops = JoinSet::new();
        for (route, listener) in self.listeners {
            let context = |client: &UpstreamClient| {
                Arc::new(RouteContext {
                    route: route.clone(),
                    settings: self.settings.clone(),
                    client: client.clone(),
                    recorder: recorder.clone(),
                    stop: stop_rx.clone(),
                })
            };
            match &self.workers {
                Some((workers, clients)) => {
                    // One context per worker: a connection uses its worker's upstream pools.
                    let contexts: Vec<Arc<RouteContext>> = clients.iter().map(context).collect();
                    let make_service = move |peer, worker: usize| {
                        let ctx = contexts[worker % contexts.len()].clone();
                        service_fn(move |request| handle(ctx.clone(), peer, request))
                    };
                    accept_loops.spawn(serve_http_on_workers(
                        listener,
                        workers,
                        make_service,
                        stop.shutdown(),
                        grace,
                    ));
                }
                None => {
                    let ctx = context(&client);
                    let make_service = move |peer| {
                        let ctx = ctx.clone();
                        service_fn(move |request| handle(ctx.clone(), peer, request))
                    };
                    accept_loops.spawn(serve_http(listener, make_service, stop.shutdown(), grace));
                }
            }
        }
        if let Some((forward, listener)) = self.forward {
            // The forward proxy keeps its own loop (it also drains upgraded tunnels); it hears
            // the same stop request.
            let identify = forward.identify_clients;
            let shared = Arc::new(ForwardShared {
                forward,
                settings: self.settings.clone(),
                client: client.clone(),
                recorder: recorder.clone(),
                upgraded: std::sync::Mutex::new(JoinSet::new()),
                stop: stop_rx.clone(),
                clients: Arc::new(super::client_process::ClientProcesses::new(
                    identify.then(|| listener.local_addr().ok()).flatten(),
                )),
            });
            accept_loops.spawn(forward_accept_loop(shared, listener, grace));
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
