//! `CONNECT host:port` on the forward proxy: intercepted hosts get a TLS handshake with a
//! certificate minted by tracer's CA (within `ForwardLimits::handshake_timeout`) and their
//! decrypted requests become ordinary hops; other hosts get a blind tunnel (`tunnel`).

use std::net::SocketAddr;
use std::sync::Arc;

use http::uri::Authority;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Empty};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite};
use tokio::net::TcpStream;

use super::answers::humanize;
use super::context::ProxyBody;
use super::forward_proxy::{ForwardShared, Slot, forward_one, proxy_error, serve_until_stopped};
use super::prefixed::Prefixed;
use super::tee::HopClock;
use super::tunnel::{TunnelHop, start_connect_hop, tunnel};
use crate::ca::CertAuthority;
use tracer_wire::hop::{HopEnd, HopState};

/// Answers `CONNECT`; the tunnel or interception it opens holds `slot` until it ends.
pub(crate) async fn on_connect(
    shared: Arc<ForwardShared>,
    slot: Slot,
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
    // Looked up now, while the client waits for its answer: the tunnel's hop names it.
    shared.clients.of(peer).await;
    if shared.intercepts(&host) {
        let task_shared = shared.clone();
        shared.spawn_upgraded(async move {
            let _slot = slot;
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
        let _slot = slot;
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
    // Both the first byte and the whole handshake come within the time-out, or the connection
    // is closed (a client that never says hello must not hold it forever).
    let limit = shared.forward.limits.handshake_timeout;
    let deadline = tokio::time::Instant::now() + limit;
    let mut first = [0u8; 1];
    let clock = HopClock::start();
    let late = |what: &str| {
        format!(
            "{what} within {} of its CONNECT (--handshake-timeout): connection closed",
            humanize(limit)
        )
    };
    match tokio::time::timeout_at(deadline, io.read(&mut first)).await {
        Ok(Ok(1)) => {}
        Ok(_) => return,
        Err(_) => {
            let message = late("the client sent nothing");
            record_rejection(&shared, peer, &host, &authority, clock, &message);
            return;
        }
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
        Ok(config) => {
            let accept = tokio_rustls::TlsAcceptor::from(Arc::new(config)).accept(io);
            match tokio::time::timeout_at(deadline, accept).await {
                Ok(accepted) => accepted.map_err(|e| e.to_string()),
                Err(_) => Err(late("the client's handshake did not complete")),
            }
        }
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
        .serve_connection(TokioIo::new(io), service)
        // A decrypted request may switch protocols (WebSocket): without this, hyper refuses
        // the client's side of the upgrade ("upgrade expected but low level API in use").
        .with_upgrades();
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
