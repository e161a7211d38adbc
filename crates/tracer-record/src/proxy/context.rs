//! What every forwarding path shares: the body types on both sides, the pooled upstream client,
//! and the context of one route (its settings, client, sink and stop signal).

use std::sync::Arc;

use bytes::Bytes;
use http::Request;
use http_body_util::combinators::UnsyncBoxBody;
use hyper_util::client::legacy::{Client, ResponseFuture};

use super::tee::TeeBody;
use super::tls::{
    TlsSetupError, UpstreamConnector, UpstreamTls, client_config, upstream_client_with,
};
use super::{ProxySettings, Route};
use tracer_wire::hop::Sink;

/// A response body on its way to the client.
pub(crate) type ProxyBody = UnsyncBoxBody<Bytes, hyper::Error>;
/// A request body on its way upstream: a route's own, or one the forward proxy already peeked at.
pub(crate) type RequestBody = UnsyncBoxBody<Bytes, hyper::Error>;
type PooledClient = Client<UpstreamConnector, TeeBody<RequestBody>>;

/// The pooled upstream clients: one for every request, and one speaking only HTTP/1.1 for
/// requests that ask to switch protocols (an `Upgrade` cannot travel over an HTTP/2 connection
/// that ALPN would otherwise pick; RFC 8441's extended CONNECT is not spoken).
#[derive(Clone)]
pub(crate) struct UpstreamClient {
    pooled: PooledClient,
    http1: PooledClient,
}

impl UpstreamClient {
    pub(crate) fn new(tls: &UpstreamTls) -> Result<Self, TlsSetupError> {
        Ok(Self::many(tls, 1)?.remove(0))
    }

    /// `count` clients (at least one), each with pools of its own, from one TLS configuration.
    pub(crate) fn many(tls: &UpstreamTls, count: usize) -> Result<Vec<Self>, TlsSetupError> {
        let config = client_config(tls)?;
        Ok((0..count.max(1))
            .map(|_| Self {
                pooled: upstream_client_with(config.clone(), tls, false),
                http1: upstream_client_with(config.clone(), tls, true),
            })
            .collect())
    }

    /// Sends a request on the client its head calls for.
    pub(crate) fn request(&self, request: Request<TeeBody<RequestBody>>) -> ResponseFuture {
        if super::headers::upgrade_requested(request.headers()).is_some() {
            self.http1.request(request)
        } else {
            self.pooled.request(request)
        }
    }
}

/// Everything a route's connections share.
pub(crate) struct RouteContext {
    pub(crate) route: Route,
    pub(crate) settings: Arc<ProxySettings>,
    pub(crate) client: UpstreamClient,
    pub(crate) recorder: Sink,
    /// Turns true when the proxy stops (open tunnels end then).
    pub(crate) stop: tokio::sync::watch::Receiver<bool>,
}
