//! The forward proxy (`--forward ADDR`): what its connections share, forwarding absolute-form
//! `http://` requests as ordinary hops (role and route chosen per request, the route named by the
//! host); `forward_listener` accepts its connections and `intercept` answers `CONNECT`.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use http::uri::Authority;
use http::{Method, Request, Response, StatusCode, Uri};
use http_body::Body as _;
use http_body_util::{BodyExt, BodyStream, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::server::conn::http1;

use tokio::sync::watch;
use tokio::task::JoinSet;

use super::context::{ProxyBody, RequestBody, RouteContext, UpstreamClient};
use super::forward::handle_at;
use super::forward_roles::{
    HostPattern, HostRole, looks_like_jsonrpc, role_from_head, role_from_host,
};
use super::tee::HopClock;
use super::{ProxySettings, Route};
use crate::ca::CertAuthority;
use tracer_wire::hop::Role;
use tracer_wire::hop::Sink;

/// One of the forward proxy's connection slots: held by the proxy connection and by every
/// tunnel or interception it opened, freed when the last of them ends.
pub(crate) type Slot = Arc<tokio::sync::OwnedSemaphorePermit>;

/// What `--forward` adds to a proxy.
#[derive(Debug, Clone)]
pub struct ForwardSettings {
    pub listen: SocketAddr,
    /// Hosts whose `CONNECT` is intercepted; empty means every host.
    pub intercept: Vec<HostPattern>,
    pub host_roles: Vec<HostRole>,
    pub ca: Arc<CertAuthority>,
    pub limits: ForwardLimits,
    /// Look up which local process opened each connection (`client_process`), so that separate
    /// programs' hops are never one session (off inside `tracer run`, whose run id decides).
    pub identify_clients: bool,
}

/// What keeps silent or too many clients from holding the forward proxy's descriptors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ForwardLimits {
    /// Time a client has, after its `CONNECT` to an intercepted host, to start and finish its
    /// TLS handshake (or its first plain request byte); then the connection is closed.
    pub handshake_timeout: Duration,
    /// Connections open at once (each with the tunnel or interception it opened); beyond it a
    /// new connection is answered `503` and closed.
    pub max_connections: usize,
}

/// The default [`ForwardLimits::handshake_timeout`].
pub const DEFAULT_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

impl Default for ForwardLimits {
    fn default() -> Self {
        Self {
            handshake_timeout: DEFAULT_HANDSHAKE_TIMEOUT,
            max_connections: default_max_connections(),
        }
    }
}

/// A quarter of the descriptors the process may open (an intercepted connection holds two or
/// three: the client's, the upstream's, the pool's), within 16..=1024; 256 when unknown.
pub fn default_max_connections() -> usize {
    use nix::sys::resource::{Resource, getrlimit};
    match getrlimit(Resource::RLIMIT_NOFILE) {
        Ok((soft, _)) => usize::try_from(soft / 4).unwrap_or(1024).clamp(16, 1024),
        Err(_) => 256,
    }
}

/// Everything the forward listener's connections share.
pub(crate) struct ForwardShared {
    pub(crate) forward: ForwardSettings,
    pub(crate) settings: Arc<ProxySettings>,
    pub(crate) client: UpstreamClient,
    pub(crate) recorder: Sink,
    /// Tunnels and intercepted connections, which outlive the proxy connection that made them.
    pub(crate) upgraded: Mutex<JoinSet<()>>,
    pub(crate) stop: watch::Receiver<bool>,
    /// The local process behind each connection, where it can be told.
    pub(crate) clients: Arc<super::client_process::ClientProcesses>,
}

impl ForwardShared {
    /// Whether `CONNECT host` is decrypted (else tunnelled).
    pub(crate) fn intercepts(&self, host: &str) -> bool {
        self.forward.intercept.is_empty() || self.forward.intercept.iter().any(|p| p.matches(host))
    }

    /// `--host-role` for a host: its role and route name.
    pub(crate) fn host_role(&self, host: &str) -> Option<(Role, String)> {
        self.forward
            .host_roles
            .iter()
            .find(|r| r.pattern.matches(host))
            .map(|r| (r.role, r.name.clone().unwrap_or_else(|| host.to_string())))
    }

    pub(crate) fn spawn_upgraded(
        &self,
        task: impl std::future::Future<Output = ()> + Send + 'static,
    ) {
        let mut set = self
            .upgraded
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        while set.try_join_next().is_some() {}
        set.spawn(task);
    }
}

/// Drives a connection; at the stop signal, asks it to finish its exchange and close.
pub(crate) async fn serve_until_stopped<C>(connection: C, stop: &mut watch::Receiver<bool>)
where
    C: std::future::Future<Output = Result<(), hyper::Error>> + GracefulHalt,
{
    let mut connection = std::pin::pin!(connection);
    if *stop.borrow() {
        connection.as_mut().halt();
    } else {
        tokio::select! {
            _ = connection.as_mut() => return,
            _ = stop.changed() => connection.as_mut().halt(),
        }
    }
    let _ = connection.await;
}

/// A hyper connection that can be asked to stop after its current exchange.
pub(crate) trait GracefulHalt {
    fn halt(self: std::pin::Pin<&mut Self>);
}

impl<I, S> GracefulHalt for http1::UpgradeableConnection<I, S>
where
    S: hyper::service::HttpService<Incoming>,
    S::ResBody: 'static,
    <S::ResBody as http_body::Body>::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    fn halt(self: std::pin::Pin<&mut Self>) {
        self.graceful_shutdown();
    }
}

impl<I, S> GracefulHalt for http1::Connection<I, S>
where
    S: hyper::service::HttpService<Incoming>,
    S::ResBody: 'static,
    <S::ResBody as http_body::Body>::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    I: hyper::rt::Read + hyper::rt::Write + Unpin + 'static,
{
    fn halt(self: std::pin::Pin<&mut Self>) {
        self.graceful_shutdown();
    }
}

/// Forwards one request to `scheme://authority` as a hop of the route named by the host.
pub(crate) async fn forward_one(
    shared: Arc<ForwardShared>,
    peer: SocketAddr,
    request: Request<Incoming>,
    scheme: &str,
    authority: Authority,
) -> Result<Response<ProxyBody>, Infallible> {
    let clock = HopClock::start();
    let (mut parts, body) = request.into_parts();
    if let Some(process) = shared.clients.of(peer).await {
        parts
            .extensions
            .insert(super::client_process::ClientProcess(process));
    }
    let host = authority
        .host()
        .trim_start_matches('[')
        .trim_end_matches(']');
    let path = parts
        .uri
        .path_and_query()
        .map_or("/", |pq| pq.as_str())
        .to_string();
    parts.uri = path.parse().unwrap_or_else(|_| Uri::from_static("/"));
    parts.headers.remove(http::header::PROXY_AUTHORIZATION);
    let mut body: RequestBody = body.boxed_unsync();
    let (role, name) = match shared.host_role(host) {
        Some(found) => found,
        None => {
            let role = match role_from_head(&path, &parts.headers).or(role_from_host(host)) {
                Some(role) => role,
                None if parts.method == Method::POST && !body.is_end_stream() => {
                    let (role, peeked) = role_from_body(body).await;
                    body = peeked;
                    role
                }
                None => Role::Other,
            };
            (role, host.to_string())
        }
    };
    let Ok(upstream) = format!("{scheme}://{authority}").parse::<Uri>() else {
        return Ok(proxy_error(
            StatusCode::BAD_REQUEST,
            &format!("cannot forward to `{scheme}://{authority}`"),
        ));
    };
    let ctx = Arc::new(RouteContext {
        route: Route {
            name,
            role,
            listen: shared.forward.listen,
            upstream,
        },
        settings: shared.settings.clone(),
        client: shared.client.clone(),
        recorder: shared.recorder.clone(),
        stop: shared.stop.clone(),
    });
    handle_at(ctx, peer, Request::from_parts(parts, body), clock).await
}

/// Bytes of a request body read to tell a JSON-RPC (MCP) request from others.
const PEEK_LIMIT: usize = 64 * 1024;

/// Reads the first frames of a body (bounded, briefly) to see whether it is JSON-RPC; returns
/// the role and the body whole again, the frames read first.
async fn role_from_body(mut body: RequestBody) -> (Role, RequestBody) {
    let mut frames: Vec<Result<Frame<Bytes>, hyper::Error>> = Vec::new();
    let mut seen = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(5), async {
        while seen.len() < PEEK_LIMIT {
            match body.frame().await {
                Some(Ok(frame)) => {
                    if let Some(data) = frame.data_ref() {
                        seen.extend_from_slice(data);
                    }
                    frames.push(Ok(frame));
                    if body.is_end_stream() {
                        break;
                    }
                }
                Some(Err(error)) => {
                    frames.push(Err(error));
                    break;
                }
                None => break,
            }
        }
    })
    .await;
    // A body slower than that is not held up further: it is forwarded as `other`.
    let role = if read.is_ok() && looks_like_jsonrpc(&seen) {
        Role::Mcp
    } else {
        Role::Other
    };
    let rest = BodyStream::new(body);
    let whole = futures_util::stream::iter(frames).chain(rest);
    (role, StreamBody::new(whole).boxed_unsync())
}

/// A JSON error from the forward proxy itself (no route or upstream to name).
pub(crate) fn proxy_error(status: StatusCode, message: &str) -> Response<ProxyBody> {
    let body = serde_json::json!({"error": {"proxy": "forward", "message": message}});
    super::answers::json_response(status, Bytes::from(body.to_string()))
}
