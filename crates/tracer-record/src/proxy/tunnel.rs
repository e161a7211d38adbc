//! A blind tunnel (`CONNECT` to a host tracer does not intercept): bytes copied both ways and
//! counted, recorded as one `tunnel` hop (bytes each way, duration, no content).

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use http::Request;
use http::uri::Authority;
use hyper::body::Incoming;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;

use super::forward_proxy::ForwardShared;
use super::headers::record_headers;
use super::tee::HopClock;
use tracer_wire::hop::{BodyCapture, HopEnd, HopStart, HopState, Role, Transport};
use tracer_wire::ids::hop_id;

/// The record of one tunnel, ended once (also when the tunnel is cut off at shutdown).
pub(crate) struct TunnelHop {
    recorder: Option<tracer_wire::hop::Sink>,
    id: String,
    clock: HopClock,
    connected_unix_ns: AtomicU64,
    up: AtomicU64,
    down: AtomicU64,
    outcome: std::sync::Mutex<Option<(HopState, Option<String>)>>,
}

impl TunnelHop {
    pub(crate) fn start(
        shared: &ForwardShared,
        peer: SocketAddr,
        host: &str,
        authority: &Authority,
        request: &Request<Incoming>,
    ) -> Arc<TunnelHop> {
        let clock = HopClock::start();
        let headers = record_headers(request.headers(), shared.settings.redact);
        let url = authority.to_string();
        let (id, started) = start_connect_hop(shared, peer, host, authority, url, headers, &clock);
        Arc::new(TunnelHop {
            recorder: started.then(|| shared.recorder.clone()),
            id,
            clock,
            connected_unix_ns: AtomicU64::new(0),
            up: AtomicU64::new(0),
            down: AtomicU64::new(0),
            outcome: std::sync::Mutex::new(None),
        })
    }

    pub(crate) fn connected(&self) {
        let now = u64::try_from(self.clock.now_unix_ns()).unwrap_or(0);
        self.connected_unix_ns.store(now, Ordering::Relaxed);
    }

    fn set_outcome(&self, state: HopState, error: Option<String>) {
        let mut outcome = self
            .outcome
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        outcome.get_or_insert((state, error));
    }

    pub(crate) fn fail(&self, message: &str) {
        self.set_outcome(HopState::Failed, Some(message.to_string()));
    }
}

impl Drop for TunnelHop {
    fn drop(&mut self) {
        let Some(recorder) = self.recorder.take() else {
            return;
        };
        let (state, error) = self
            .outcome
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
            .unwrap_or((
                HopState::Aborted,
                Some("the tunnel was cut off when tracer stopped".into()),
            ));
        let connected = i64::try_from(self.connected_unix_ns.load(Ordering::Relaxed)).unwrap_or(0);
        // Bytes counted, none kept: a tunnel's content is not tracer's to read.
        let counted = |n: u64| BodyCapture {
            bytes: Vec::new(),
            total_len: n,
            truncated: n > 0,
        };
        let now = self.clock.now_unix_ns();
        recorder.end(HopEnd {
            id: std::mem::take(&mut self.id),
            state: Some(state),
            status: (connected > 0).then_some(200).or(Some(502)),
            request_body: counted(self.up.load(Ordering::Relaxed)),
            response_body: counted(self.down.load(Ordering::Relaxed)),
            request_ended_unix_ns: Some(now),
            response_head_unix_ns: Some(if connected > 0 { connected } else { now }),
            response_ended_unix_ns: Some(now),
            error,
            ..HopEnd::default()
        });
    }
}

/// Copies both ways until both sides are done, counting bytes into the hop.
pub(crate) async fn tunnel<C>(client: C, upstream: TcpStream, hop: Arc<TunnelHop>)
where
    C: AsyncRead + AsyncWrite + Unpin,
{
    let (client_read, client_write) = tokio::io::split(client);
    let (upstream_read, upstream_write) = upstream.into_split();
    let (up, down) = tokio::join!(
        pump(client_read, upstream_write, &hop.up),
        pump(upstream_read, client_write, &hop.down),
    );
    match up.and(down) {
        Ok(()) => hop.set_outcome(HopState::Complete, None),
        Err(error) => hop.set_outcome(
            HopState::Complete,
            Some(format!("the tunnel closed with an error: {error}")),
        ),
    }
}

async fn pump<R, W>(mut from: R, mut to: W, count: &AtomicU64) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut buffer = vec![0u8; 16 * 1024];
    loop {
        let n = from.read(&mut buffer).await?;
        if n == 0 {
            return to.shutdown().await;
        }
        to.write_all(&buffer[..n]).await?;
        count.fetch_add(n as u64, Ordering::Relaxed);
    }
}

/// Starts the hop of one `CONNECT` (its role and name from `--host-role`, else `other` and the
/// host); returns its id and whether the sink kept it.
pub(crate) fn start_connect_hop(
    shared: &ForwardShared,
    peer: SocketAddr,
    host: &str,
    authority: &Authority,
    url: String,
    request_headers: Vec<tracer_wire::hop::Header>,
    clock: &HopClock,
) -> (String, bool) {
    let id = hop_id();
    let (role, name) = shared
        .host_role(host)
        .unwrap_or((Role::Other, host.to_string()));
    let started = shared.recorder.start(HopStart {
        id: id.clone(),
        route: name,
        role,
        transport: Transport::Http,
        peer: peer.to_string(),
        method: "CONNECT".into(),
        path: authority.to_string(),
        url,
        request_headers,
        started_unix_ns: clock.started_unix_ns,
        run_id: shared.clients.known(peer),
    });
    (id, started)
}
