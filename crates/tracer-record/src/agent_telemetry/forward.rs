//! Passing what the receiver got on to the user's own OTLP endpoint, byte for byte (the same
//! body, Content-Type and Content-Encoding), so turning tracer on never takes their telemetry
//! away. Sent by one task from a bounded queue: the agent's answer never waits for it.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use tokio::sync::mpsc;
use tracer_store::Store;
use tracer_wire::agent_event::Signal;
use tracer_wire::redact::percent_decoded;

/// Requests waiting to be passed on; more than this and the newest is not passed on (counted).
const QUEUE: usize = 256;
const TIMEOUT: Duration = Duration::from_secs(10);

/// Counters of what was passed on and what could not be.
pub const FORWARDED: &str = "agent_telemetry_forwarded";
pub const NOT_FORWARDED: &str = "agent_telemetry_not_forwarded";

/// Where the user's telemetry went before tracer was in the way: the standard OTLP variables as
/// the user had them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ForwardTo {
    /// `OTEL_EXPORTER_OTLP_ENDPOINT`: `/v1/logs`, `/v1/traces`, `/v1/metrics` are added.
    pub endpoint: Option<String>,
    /// `OTEL_EXPORTER_OTLP_{LOGS,TRACES,METRICS}_ENDPOINT`: used as they are.
    pub logs: Option<String>,
    pub traces: Option<String>,
    pub metrics: Option<String>,
    /// `OTEL_EXPORTER_OTLP_HEADERS` (`k=v,k2=v2`, values percent-decoded), sent with each.
    pub headers: Vec<(String, String)>,
}

impl ForwardTo {
    /// From environment variables as `get` gives them; None when the user set no endpoint.
    pub fn from_env(get: impl Fn(&str) -> Option<String>) -> Option<ForwardTo> {
        let set = |name: &str| get(name).filter(|v| !v.trim().is_empty());
        let to = ForwardTo {
            endpoint: set("OTEL_EXPORTER_OTLP_ENDPOINT"),
            logs: set("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT"),
            traces: set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
            metrics: set("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"),
            headers: set("OTEL_EXPORTER_OTLP_HEADERS")
                .map(|h| parse_headers(&h))
                .unwrap_or_default(),
        };
        let any = to.endpoint.is_some() || to.logs.is_some();
        (any || to.traces.is_some() || to.metrics.is_some()).then_some(to)
    }

    /// The URL a signal's requests go to, if the user sent that signal anywhere.
    pub fn url(&self, signal: Signal) -> Option<String> {
        let (own, path) = match signal {
            Signal::Log => (&self.logs, "v1/logs"),
            Signal::Span => (&self.traces, "v1/traces"),
            Signal::Metric => (&self.metrics, "v1/metrics"),
        };
        own.clone().or_else(|| {
            let base = self.endpoint.as_ref()?;
            Some(format!("{}/{path}", base.trim_end_matches('/')))
        })
    }

    /// Whether `url` is one of this forwarder's own targets (a loop back into tracer).
    pub fn names(&self, url: &str) -> bool {
        [Signal::Log, Signal::Span, Signal::Metric]
            .iter()
            .any(|s| self.url(*s).is_some_and(|u| u.starts_with(url)))
    }
}

fn parse_headers(text: &str) -> Vec<(String, String)> {
    text.split(',')
        .filter_map(|pair| {
            let (k, v) = pair.split_once('=')?;
            Some((
                k.trim().to_string(),
                percent_decoded(v.trim().as_bytes(), false),
            ))
        })
        .filter(|(k, _)| !k.is_empty())
        .collect()
}

/// One received request to pass on.
#[derive(Debug)]
pub(crate) struct Parcel {
    pub(crate) signal: Signal,
    pub(crate) content_type: String,
    pub(crate) content_encoding: Option<String>,
    pub(crate) body: Bytes,
}

/// The queue into the forwarding task.
#[derive(Clone)]
pub(crate) struct Forwarder {
    queue: mpsc::Sender<Parcel>,
    store: Store,
}

impl Forwarder {
    /// Starts the task that passes parcels on to `to`.
    pub(crate) fn start(to: ForwardTo, store: Store) -> Forwarder {
        let (queue, parcels) = mpsc::channel(QUEUE);
        tokio::spawn(pass_on(Arc::new(to), parcels, store.clone()));
        Forwarder { queue, store }
    }

    /// Queues a parcel; a full queue drops it, counted.
    pub(crate) async fn send(&self, parcel: Parcel) {
        if self.queue.try_send(parcel).is_err() {
            let _ = self.store.add_to_counter(NOT_FORWARDED, 1).await;
        }
    }
}

async fn pass_on(to: Arc<ForwardTo>, mut parcels: mpsc::Receiver<Parcel>, store: Store) {
    let connector = match https_connector() {
        Some(connector) => connector,
        None => return,
    };
    let client: Client<_, Full<Bytes>> = Client::builder(TokioExecutor::new()).build(connector);
    while let Some(parcel) = parcels.recv().await {
        let Some(url) = to.url(parcel.signal) else {
            continue;
        };
        let mut request = http::Request::post(&url).header("content-type", &parcel.content_type);
        if let Some(encoding) = &parcel.content_encoding {
            request = request.header("content-encoding", encoding);
        }
        for (name, value) in &to.headers {
            request = request.header(name, value);
        }
        let delivered = match request.body(Full::new(parcel.body)) {
            Ok(request) => match tokio::time::timeout(TIMEOUT, client.request(request)).await {
                Ok(Ok(answer)) => {
                    let ok = answer.status().is_success();
                    let _ = answer.into_body().collect().await;
                    ok
                }
                Ok(Err(error)) => {
                    tracing::debug!("passing telemetry on to {url}: {error}");
                    false
                }
                Err(_) => false,
            },
            Err(_) => false,
        };
        let counter = if delivered { FORWARDED } else { NOT_FORWARDED };
        let _ = store.add_to_counter(counter, 1).await;
    }
}

type Connector = hyper_rustls::HttpsConnector<hyper_util::client::legacy::connect::HttpConnector>;

/// http and https (the web's roots) alike.
fn https_connector() -> Option<Connector> {
    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .ok()?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Some(
        hyper_rustls::HttpsConnectorBuilder::new()
            .with_tls_config(config)
            .https_or_http()
            .enable_http1()
            .build(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_users_variables_say_where_each_signal_went() {
        let env = |name: &str| match name {
            "OTEL_EXPORTER_OTLP_ENDPOINT" => Some("http://collector:4318/".to_string()),
            "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT" => Some("http://m:9/custom".to_string()),
            "OTEL_EXPORTER_OTLP_HEADERS" => Some("x-team=a%20b, auth=t".to_string()),
            _ => None,
        };
        let to = ForwardTo::from_env(env).expect("set");
        assert_eq!(
            to.url(Signal::Log).as_deref(),
            Some("http://collector:4318/v1/logs")
        );
        assert_eq!(
            to.url(Signal::Span).as_deref(),
            Some("http://collector:4318/v1/traces")
        );
        assert_eq!(to.url(Signal::Metric).as_deref(), Some("http://m:9/custom"));
        assert_eq!(
            to.headers,
            [("x-team".into(), "a b".into()), ("auth".into(), "t".into())]
        );
        assert_eq!(ForwardTo::from_env(|_| None), None);
        assert_eq!(ForwardTo::from_env(|_| Some(" ".into())), None);
    }
}
