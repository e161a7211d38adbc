//! A process's plumbing, below every process tracer ships: the one HTTP/1.1 accept loop every
//! listener uses, stop signals (`stop_signal`) and where logs go (`logging`, `say!`).
//!
//! The bottom floor beside `tracer-wire`: used by the recorder, the exports, the reference
//! processes and the app; it may use no other tracer crate (`scripts/check_layers.py`), only the
//! runtime and the HTTP stack (tokio, hyper) and `tracing`. Its API is what those crates use:
//! everything else is private or `pub(crate)`, and `unreachable_pub` warns of a `pub` item no
//! other crate can reach.
//!
//! The accept loop every listener uses (proxy routes, serve-replay, notes-server,
//! notes-agent): serve until asked to stop, then let open connections finish within a grace
//! period that a second stop request cuts short.

#![warn(unreachable_pub)]

// Where logs go, and the signals that ask a process to stop.
pub mod logging;
pub mod stop_signal;

use std::error::Error as StdError;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::time::Duration;

use http::{Request, Response};
use http_body::Body;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::Service;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinSet;

mod listen_addr;
mod workers;
pub use listen_addr::parse_listen;
pub use workers::Workers;

type BoxFuture = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// When to stop: `requested` starts a graceful stop, `cut_short` ends the grace period early.
pub struct Shutdown {
    requested: BoxFuture,
    cut_short: BoxFuture,
}

impl Shutdown {
    /// Stops gracefully when `requested` resolves; only the grace period cuts connections off.
    pub fn new(requested: impl Future<Output = ()> + Send + 'static) -> Shutdown {
        Shutdown {
            requested: Box::pin(requested),
            cut_short: Box::pin(std::future::pending()),
        }
    }

    /// Also ends the grace period as soon as `cut_short` resolves (a second Ctrl-C).
    pub fn cut_short_by(mut self, cut_short: impl Future<Output = ()> + Send + 'static) -> Self {
        self.cut_short = Box::pin(cut_short);
        self
    }

    /// Never stops.
    pub fn never() -> Shutdown {
        Shutdown::new(std::future::pending())
    }

    /// The two futures: the stop request, and what cuts the grace period short.
    pub fn into_parts(self) -> (impl Future<Output = ()>, impl Future<Output = ()>) {
        (self.requested, self.cut_short)
    }

    /// One stop request for many listeners: each [`StopWatch::shutdown`] follows this one.
    pub fn share(self) -> StopWatch {
        let (switch, watch) = StopSwitch::new();
        tokio::spawn(async move {
            let Shutdown {
                requested,
                cut_short,
            } = self;
            tokio::select! {
                () = requested => {
                    switch.set(StopLevel::Graceful);
                    cut_short.await;
                }
                () = switch.tx.closed() => return,
            }
            switch.set(StopLevel::Now);
        });
        watch
    }
}

impl<F: Future<Output = ()> + Send + 'static> From<F> for Shutdown {
    fn from(requested: F) -> Shutdown {
        Shutdown::new(requested)
    }
}

/// How far a stop has gone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum StopLevel {
    Running,
    Graceful,
    Now,
}

/// Sets how far a stop has gone, for every [`StopWatch`] it made.
#[derive(Debug)]
pub struct StopSwitch {
    tx: watch::Sender<StopLevel>,
}

impl StopSwitch {
    pub fn new() -> (StopSwitch, StopWatch) {
        let (tx, rx) = watch::channel(StopLevel::Running);
        (StopSwitch { tx }, StopWatch { rx })
    }

    /// Raises the stop to `level` (never lowers it).
    pub fn set(&self, level: StopLevel) {
        self.tx.send_if_modified(|now| {
            let raise = level > *now;
            if raise {
                *now = level;
            }
            raise
        });
    }
}

/// A shared stop request (see [`Shutdown::share`]), cheap to clone.
#[derive(Debug, Clone)]
pub struct StopWatch {
    rx: watch::Receiver<StopLevel>,
}

impl StopWatch {
    /// Resolves once the stop has reached `level` (or whoever could stop is gone).
    pub async fn reached(&self, level: StopLevel) {
        let mut rx = self.rx.clone();
        let _ = rx.wait_for(|now| *now >= level).await;
    }

    /// A [`Shutdown`] that follows this shared one.
    pub fn shutdown(&self) -> Shutdown {
        let (graceful, now) = (self.clone(), self.clone());
        Shutdown::new(async move { graceful.reached(StopLevel::Graceful).await })
            .cut_short_by(async move { now.reached(StopLevel::Now).await })
    }
}

/// What one accept loop did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServeStats {
    pub connections: u64,
    /// Connections still open when the grace period ran out (or was cut short), cut off.
    pub cut_off: u64,
}

impl std::ops::AddAssign for ServeStats {
    fn add_assign(&mut self, other: ServeStats) {
        self.connections += other.connections;
        self.cut_off += other.cut_off;
    }
}

/// Whether a listener on `addr` can be reached from other machines (anything but loopback,
/// `0.0.0.0` and `::` included): tracer's listeners have no authentication, so their commands
/// warn when one is.
pub fn reachable_from_elsewhere(addr: SocketAddr) -> bool {
    !addr.ip().to_canonical().is_loopback()
}

/// Serves HTTP/1.1 (keep-alive, upgrades) on `listener`, one task per connection, with the
/// service `make_service` builds for each peer. When `shutdown` asks, stops accepting, asks every
/// connection to finish its exchange in flight and waits up to `grace` for them.
pub async fn serve_http<M, S, B>(
    listener: TcpListener,
    mut make_service: M,
    shutdown: impl Into<Shutdown>,
    grace: Duration,
) -> ServeStats
where
    M: FnMut(SocketAddr) -> S,
    S: Service<Request<Incoming>, Response = Response<B>> + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<Box<dyn StdError + Send + Sync>>,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn StdError + Send + Sync>>,
{
    let admit = move |peer| Admission::Serve(make_service(peer));
    serve_http_admitting(listener, admit, shutdown, grace).await
}

/// [`serve_http`], with each connection served on one of `workers` (in turn) by the service
/// `make_service` builds for it and that worker's index: the connection's tasks stay on that
/// worker's thread.
pub async fn serve_http_on_workers<M, S, B>(
    listener: TcpListener,
    workers: &'static Workers,
    mut make_service: M,
    shutdown: impl Into<Shutdown>,
    grace: Duration,
) -> ServeStats
where
    M: FnMut(SocketAddr, usize) -> S,
    S: Service<Request<Incoming>, Response = Response<B>> + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<Box<dyn StdError + Send + Sync>>,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn StdError + Send + Sync>>,
{
    let place = move |peer| {
        let seat = workers.seat();
        let service = make_service(peer, seat.index());
        (Admission::Serve(service), Some(seat))
    };
    accept_until_stopped(listener, place, shutdown, grace).await
}

/// What a listener does with a connection it has just accepted.
pub enum Admission<S> {
    /// Serve it with this service.
    Serve(S),
    /// Write these bytes (a whole HTTP response), read what the client sent until it closes
    /// (briefly), and close; `held` is kept until then.
    Refuse {
        answer: bytes::Bytes,
        held: Option<tokio::sync::OwnedSemaphorePermit>,
    },
    /// Close it at once.
    Close,
}

/// How long a refused connection is given to take its answer.
const REFUSAL_TIME: Duration = Duration::from_secs(2);

/// [`serve_http`], with `admit` deciding for each accepted connection whether it is served
/// (a listener with a bound on its connections refuses those beyond it).
pub async fn serve_http_admitting<M, S, B>(
    listener: TcpListener,
    mut admit: M,
    shutdown: impl Into<Shutdown>,
    grace: Duration,
) -> ServeStats
where
    M: FnMut(SocketAddr) -> Admission<S>,
    S: Service<Request<Incoming>, Response = Response<B>> + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<Box<dyn StdError + Send + Sync>>,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn StdError + Send + Sync>>,
{
    let place = move |peer| (admit(peer), None);
    accept_until_stopped(listener, place, shutdown, grace).await
}

/// The accept loop: `place` says what to do with each connection and on which runtime to run
/// it (None: this one).
async fn accept_until_stopped<M, S, B>(
    listener: TcpListener,
    mut place: M,
    shutdown: impl Into<Shutdown>,
    grace: Duration,
) -> ServeStats
where
    M: FnMut(SocketAddr) -> (Admission<S>, Option<workers::Seat>),
    S: Service<Request<Incoming>, Response = Response<B>> + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<Box<dyn StdError + Send + Sync>>,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn StdError + Send + Sync>>,
{
    let Shutdown {
        requested,
        cut_short,
    } = shutdown.into();
    let local = listener.local_addr().ok();
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut connections = JoinSet::new();
    let mut stats = ServeStats::default();
    tokio::pin!(requested);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, peer) = match accepted {
                    Ok(pair) => pair,
                    Err(error) => {
                        // Out of file descriptors and the like: wait a little, keep serving.
                        tracing::warn!(?local, %error, "accepting a connection failed");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let _ = stream.set_nodelay(true);
                stats.connections += 1;
                match place(peer) {
                    (Admission::Serve(service), None) => {
                        connections.spawn(serve_connection(stream, peer, service, stop_rx.clone()));
                    }
                    (Admission::Serve(service), Some(seat)) => {
                        // The stream moves to the worker's reactor, on the worker's thread; the
                        // seat is given back when the connection ends.
                        let stop = stop_rx.clone();
                        match stream.into_std() {
                            Ok(stream) => {
                                let worker = seat.handle();
                                connections.spawn_on(
                                    async move {
                                        let _seat = seat;
                                        match tokio::net::TcpStream::from_std(stream) {
                                            Ok(stream) => serve_connection(stream, peer, service, stop).await,
                                            Err(error) => tracing::warn!(%peer, %error, "handing a connection to a worker failed"),
                                        }
                                    },
                                    worker,
                                );
                            }
                            Err(error) => tracing::warn!(%peer, %error, "handing a connection to a worker failed"),
                        }
                    }
                    (Admission::Refuse { answer, held }, _) => {
                        connections.spawn(async move {
                            let _ = tokio::time::timeout(REFUSAL_TIME, refuse(stream, &answer)).await;
                            drop(held);
                        });
                    }
                    (Admission::Close, _) => drop(stream),
                }
                // Reap finished connection tasks so the set stays small.
                while connections.try_join_next().is_some() {}
            }
            () = &mut requested => break,
        }
    }
    drop(listener);
    let _ = stop_tx.send(true);
    let finished = tokio::select! {
        () = async { while connections.join_next().await.is_some() {} } => true,
        () = tokio::time::sleep(grace) => false,
        () = cut_short => false,
    };
    // Connections that ended while the grace period was cut short are not cut off: only those
    // still open are counted and warned of (a stop before any connection says nothing).
    while connections.try_join_next().is_some() {}
    if !finished && !connections.is_empty() {
        stats.cut_off = connections.len() as u64;
        tracing::warn!(
            ?local,
            open = stats.cut_off,
            "cutting off connections still open"
        );
        connections.abort_all();
        while connections.join_next().await.is_some() {}
    }
    stats
}

/// Answers a connection that is not served, so that the client reads why rather than a reset.
async fn refuse(mut stream: tokio::net::TcpStream, answer: &[u8]) -> std::io::Result<()> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    stream.write_all(answer).await?;
    stream.shutdown().await?;
    // Closing with the request unread would reset the connection, answer and all.
    let mut sink = [0u8; 4096];
    while stream.read(&mut sink).await? > 0 {}
    Ok(())
}

async fn serve_connection<S, B>(
    stream: tokio::net::TcpStream,
    peer: SocketAddr,
    service: S,
    mut stop: watch::Receiver<bool>,
) where
    S: Service<Request<Incoming>, Response = Response<B>> + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<Box<dyn StdError + Send + Sync>>,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn StdError + Send + Sync>>,
{
    let connection = http1::Builder::new()
        .timer(TokioTimer::new())
        .preserve_header_case(true)
        .keep_alive(true)
        .serve_connection(TokioIo::new(stream), service)
        .with_upgrades();
    tokio::pin!(connection);
    let ended = tokio::select! {
        ended = connection.as_mut() => ended,
        () = async { let _ = stop.wait_for(|stop| *stop).await; } => {
            connection.as_mut().graceful_shutdown();
            connection.await
        }
    };
    if let Err(error) = ended {
        tracing::debug!(%peer, %error, "connection ended with an error");
    }
}

#[cfg(test)]
mod tests;
