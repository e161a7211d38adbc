//! `CONNECT host:port` on the forward proxy: intercepted hosts get a TLS handshake with a
//! certificate minted by tracer's CA and their decrypted requests become ordinary hops; other
//! hosts get a blind tunnel recorded as one `tunnel` hop (bytes each way, duration, no content).

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use http::uri::Authority;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Empty};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;

use super::context::ProxyBody;
use super::forward_proxy::{ForwardShared, forward_one, proxy_error, serve_until_stopped};
use super::headers::record_headers;
use super::prefixed::Prefixed;
use super::tee::HopClock;
use crate::ca::CertAuthority;
use crate::hop::{BodyCapture, HopEnd, HopStart, HopState, Role, Transport};
use crate::wire::ids::random_hex_id;

pub async fn on_connect(
    shared: Arc<ForwardShared>,
    peer: SocketAddr,
    mut request: Request<Incoming>,
) -> Response<ProxyBody> {
    let Some(authority) = request.uri().authority().cloned() else {
        return proxy_error(StatusCode::BAD_REQUEST, "CONNECT needs host:port");
    };
    let Some(port) = authority.port_u16() else {
        return proxy_error(
            StatusCode::BAD_REQUEST,
            &format!("CONNECT {authority}: the port is missing (host:port)"),
        );
    };
    let host = authority
        .host()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase();
    let upgrade = hyper::upgrade::on(&mut request);
    if shared.intercepts(&host) {
        let task_shared = shared.clone();
        shared.spawn_upgraded(async move {
            if let Ok(upgraded) = upgrade.await {
                intercept(task_shared, peer, TokioIo::new(upgraded), host, authority).await;
            }
        });
        return established();
    }
    let hop = TunnelHop::start(&shared, peer, &host, &authority, &request);
    let upstream = match dial(&shared, &host, port).await {
        Ok(stream) => stream,
        Err(error) => {
            let message = format!("cannot reach {authority}: {error}");
            hop.fail(&message);
            return proxy_error(StatusCode::BAD_GATEWAY, &message);
        }
    };
    hop.connected();
    shared.spawn_upgraded(async move {
        match upgrade.await {
            Ok(upgraded) => tunnel(TokioIo::new(upgraded), upstream, hop).await,
            Err(error) => hop.fail(&format!("the client never used the tunnel: {error}")),
        }
    });
    established()
}

fn established() -> Response<ProxyBody> {
    Response::new(
        Empty::new()
            .map_err(|never: std::convert::Infallible| match never {})
            .boxed_unsync(),
    )
}

/// TCP to the host, or to its `--resolve` pin.
async fn dial(shared: &ForwardShared, host: &str, port: u16) -> std::io::Result<TcpStream> {
    let pinned = shared
        .settings
        .upstream_tls
        .resolve
        .iter()
        .find(|pin| pin.port == port && pin.host.eq_ignore_ascii_case(host));
    let stream = match pinned {
        Some(pin) => TcpStream::connect(pin.addr).await?,
        None => TcpStream::connect((host, port)).await?,
    };
    let _ = stream.set_nodelay(true);
    Ok(stream)
}

/// Answers the client's TLS handshake as `host`, then serves its requests as hops forwarded to
/// `https://authority` over verified TLS.
async fn intercept<I>(
    shared: Arc<ForwardShared>,
    peer: SocketAddr,
    mut io: I,
    host: String,
    authority: Authority,
) where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    // A TLS connection starts with a handshake record (0x16); some clients CONNECT even for
    // http:// and speak plain HTTP inside the tunnel: those requests are read as they are.
    let mut first = [0u8; 1];
    let clock = HopClock::start();
    if !matches!(io.read(&mut first).await, Ok(1)) {
        return;
    }
    let io = Prefixed::new(first.to_vec(), io);
    if first[0] != 0x16 {
        serve_decrypted(shared, peer, io, "http", authority).await;
        return;
    }
    let resolver = Arc::new(MintingResolver {
        ca: shared.forward.ca.clone(),
        fallback: host.clone(),
    });
    let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map(|builder| builder.with_no_client_auth().with_cert_resolver(resolver));
    if let Ok(config) = config.as_mut() {
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
    }
    let tls = match config {
        Ok(config) => tokio_rustls::TlsAcceptor::from(Arc::new(config))
            .accept(io)
            .await
            .map_err(|e| e.to_string()),
        Err(error) => Err(error.to_string()),
    };
    match tls {
        Ok(tls) => serve_decrypted(shared, peer, tls, "https", authority).await,
        Err(error) => record_rejection(&shared, peer, &host, &authority, clock, &error),
    }
}

/// Serves the requests inside a tunnel as hops forwarded to `scheme://authority`.
async fn serve_decrypted<I>(
    shared: Arc<ForwardShared>,
    peer: SocketAddr,
    io: I,
    scheme: &'static str,
    authority: Authority,
) where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let mut stop = shared.stop.clone();
    let service = {
        let shared = shared.clone();
        service_fn(move |request| {
            forward_one(shared.clone(), peer, request, scheme, authority.clone())
        })
    };
    let connection = http1::Builder::new()
        .timer(TokioTimer::new())
        .preserve_header_case(true)
        .keep_alive(true)
        .serve_connection(TokioIo::new(io), service);
    serve_until_stopped(connection, &mut stop).await;
}

/// A failed handshake with the client, recorded as a hop that says why and what to do.
fn record_rejection(
    shared: &ForwardShared,
    peer: SocketAddr,
    host: &str,
    authority: &Authority,
    clock: HopClock,
    error: &str,
) {
    let ca = shared.forward.ca.cert_path();
    let trust = format!(
        "trust tracer's CA: `eval \"$(tracer ca --env)\"` before starting the client, or add {} \
         to its trust store",
        ca.display()
    );
    let message = if error.contains("received fatal alert") {
        format!("the client rejected tracer's certificate for {host} ({error}); {trust}")
    } else if error.contains("eof") || error.contains("reset") {
        format!(
            "the client closed the connection during the TLS handshake for {host} ({error}); \
             if it does not trust tracer's certificate, {trust}"
        )
    } else {
        format!("TLS handshake with the client for {host} failed: {error}")
    };
    let url = format!("https://{authority}");
    let (id, started) = start_connect_hop(shared, peer, host, authority, url, Vec::new(), &clock);
    if started {
        let now = clock.now_unix_ns();
        shared.recorder.end(HopEnd {
            id,
            state: Some(HopState::Failed),
            status: Some(200),
            response_head_unix_ns: Some(now),
            response_ended_unix_ns: Some(now),
            error: Some(message),
            ..HopEnd::default()
        });
    }
}

/// Starts the hop of one `CONNECT` (its role and name from `--host-role`, else `other` and the
/// host); returns its id and whether the sink kept it.
fn start_connect_hop(
    shared: &ForwardShared,
    peer: SocketAddr,
    host: &str,
    authority: &Authority,
    url: String,
    request_headers: Vec<crate::hop::Header>,
    clock: &HopClock,
) -> (String, bool) {
    let id = random_hex_id(16);
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
    });
    (id, started)
}

/// Picks the certificate by the client's SNI, else by the host it asked `CONNECT` for.
#[derive(Debug)]
struct MintingResolver {
    ca: Arc<CertAuthority>,
    fallback: String,
}

impl ResolvesServerCert for MintingResolver {
    fn resolve(&self, hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        let name = hello.server_name().unwrap_or(&self.fallback);
        match self.ca.certificate_for(name) {
            Ok(key) => Some(key),
            Err(error) => {
                tracing::warn!(%error, "cannot mint a certificate");
                None
            }
        }
    }
}

/// The record of one tunnel, ended once (also when the tunnel is cut off at shutdown).
struct TunnelHop {
    recorder: Option<crate::hop::Sink>,
    id: String,
    clock: HopClock,
    connected_unix_ns: AtomicU64,
    up: AtomicU64,
    down: AtomicU64,
    outcome: std::sync::Mutex<Option<(HopState, Option<String>)>>,
}

impl TunnelHop {
    fn start(
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

    fn connected(&self) {
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

    fn fail(&self, message: &str) {
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
async fn tunnel<C>(client: C, upstream: TcpStream, hop: Arc<TunnelHop>)
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
