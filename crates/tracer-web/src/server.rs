//! The UI server: bound to its address, it serves the page and its API and, while it runs,
//! watches the database and publishes what changed.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::middleware;
use axum::routing::get;
use tokio::net::TcpListener;

use crate::api::{self, Shared};
use crate::events::EventHub;
use crate::guard::{self, Guard};
use crate::live_feed::LiveFeed;
use crate::options::{DiffTraces, UiOptions, Watch};
use crate::trace_cache::TraceCache;
use crate::watcher::{POLL, Watcher};
use tracer_store::{Store, StoreError};

/// Why the UI could not start or stopped.
#[derive(Debug, thiserror::Error)]
pub enum UiError {
    #[error("tracer ui cannot listen on {addr}: {source}")]
    Listen {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("serving the ui: {0}")]
    Serve(std::io::Error),
}

/// A UI bound to its address, ready to run.
pub struct UiServer {
    listener: TcpListener,
    shared: Arc<Shared>,
    guard: Arc<Guard>,
    watch: Watch,
    url: String,
}

impl UiServer {
    /// Binds `options.listen` over `store`; `diff` compares two traces (`tracer diff`) for the
    /// page's diff view (None: the view says it cannot).
    pub async fn bind(
        store: Store,
        options: UiOptions,
        diff: Option<Arc<dyn DiffTraces>>,
    ) -> Result<UiServer, UiError> {
        let listener =
            TcpListener::bind(options.listen)
                .await
                .map_err(|source| UiError::Listen {
                    addr: options.listen,
                    source,
                })?;
        let addr = listener.local_addr().map_err(|source| UiError::Listen {
            addr: options.listen,
            source,
        })?;
        let shown = if addr.ip().is_unspecified() {
            SocketAddr::new(std::net::Ipv4Addr::LOCALHOST.into(), addr.port())
        } else {
            addr
        };
        let url = match &options.token {
            Some(token) => format!("http://{shown}/?token={token}"),
            None => format!("http://{shown}/"),
        };
        Ok(UiServer {
            listener,
            shared: Arc::new(Shared {
                store,
                cache: TraceCache::default(),
                hub: EventHub::new(),
                diff,
            }),
            guard: Arc::new(Guard {
                listen: addr,
                token: options.token,
            }),
            watch: options.watch,
            url,
        })
    }

    /// The page's address (with its token once, when it has one).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.guard.listen
    }

    /// Where a recording process hands the answers it sees pass, for the pages following.
    pub fn live_feed(&self) -> LiveFeed {
        LiveFeed::new(self.shared.hub.clone())
    }

    /// Serves until `shutdown` resolves; the pages following are let go of then.
    pub async fn run(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), UiError> {
        let router = Router::new()
            .route("/api/traces", get(api::traces))
            .route("/api/sessions", get(api::sessions))
            .route("/api/search", get(api::search))
            .route("/api/trace/{id}", get(api::trace))
            .route("/api/trace/{id}/message/{number}", get(api::message))
            .route(
                "/api/trace/{id}/message/{number}/changes",
                get(api::changes),
            )
            .route("/api/trace/{id}/export", get(api::export))
            .route("/api/diff", get(api::diff))
            .route("/api/events", get(api::events))
            .fallback(crate::assets::serve)
            .with_state(self.shared.clone())
            .layer(middleware::from_fn_with_state(
                self.guard.clone(),
                guard::check,
            ));
        let watching = tokio::spawn(watch(self.shared.clone(), self.watch));
        let warming = tokio::spawn(warm(self.shared.clone()));
        let hub = self.shared.hub.clone();
        let stopping = async move {
            shutdown.await;
            // An open event stream would keep the server waiting: end them all.
            hub.close();
        };
        let served = axum::serve(self.listener, router)
            .with_graceful_shutdown(stopping)
            .await
            .map_err(UiError::Serve);
        watching.abort();
        warming.abort();
        served
    }
}

/// Polls the database until the server stops; a failed poll is logged and the next one tried.
async fn watch(shared: Arc<Shared>, mode: Watch) {
    let mut watcher = loop {
        match Watcher::start(&shared, mode).await {
            Ok(watcher) => break watcher,
            Err(error) => {
                tracing::warn!(%error, "tracer ui: reading the database to watch it");
                tokio::time::sleep(POLL * 5).await;
            }
        }
    };
    let mut ticks = tokio::time::interval(POLL);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        if let Err(error) = watcher.poll(&shared).await {
            tracing::debug!(%error, "tracer ui: a poll of the database failed");
        }
    }
}

/// Builds the newest trace once at start, while the page loads its scripts: the trace a user
/// opens `tracer ui` for, right after a run, is ready when asked for (a long one takes a while).
async fn warm(shared: Arc<Shared>) {
    let newest = shared.store.traces_page(0, 1).await;
    if let Some(row) = newest.ok().and_then(|rows| rows.into_iter().next())
        && let Err(error) = shared.cache.get(&shared.store, &row.id).await
    {
        tracing::debug!(%error, "tracer ui: building the newest trace ahead");
    }
}
