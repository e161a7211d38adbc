//! What every forwarding path shares: the body types on both sides, the pooled upstream client,
//! and the context of one route (its settings, client, sink and stop signal).

use std::sync::Arc;

use bytes::Bytes;
use http_body_util::combinators::UnsyncBoxBody;
use hyper_util::client::legacy::Client;

use super::tee::TeeBody;
use super::tls::UpstreamConnector;
use super::{ProxySettings, Route};
use crate::hop::Sink;

/// A response body on its way to the client.
pub type ProxyBody = UnsyncBoxBody<Bytes, hyper::Error>;
/// A request body on its way upstream: a route's own, or one the forward proxy already peeked at.
pub type RequestBody = UnsyncBoxBody<Bytes, hyper::Error>;
pub type UpstreamClient = Client<UpstreamConnector, TeeBody<RequestBody>>;

/// Everything a route's connections share.
pub struct RouteContext {
    pub route: Route,
    pub settings: Arc<ProxySettings>,
    pub client: UpstreamClient,
    pub recorder: Sink,
    /// Turns true when the proxy stops (open tunnels end then).
    pub stop: tokio::sync::watch::Receiver<bool>,
}
