//! The receiver of the agent's own telemetry: an OTLP/HTTP endpoint (`/v1/logs`, `/v1/traces`,
//! `/v1/metrics`; protobuf or OTLP/JSON) served by the recording process, which stores every
//! record it is sent beside the hops (`agent_events`) and passes the request on, unchanged, to
//! the user's own endpoint when they had one.

mod decode;
mod forward;
mod keep;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use tokio::net::TcpListener;
use tracer_store::Store;
use tracer_store::agent_events::{EVENTS_NOT_STORED, EVENTS_RECEIVED};
use tracer_wire::agent_event::Signal;

pub use forward::{FORWARDED, ForwardTo, NOT_FORWARDED};

/// An event as stored: redacted when asked, each string bounded (for events read from other
/// sources than the receiver, such as a transcript).
pub fn kept_event(
    event: tracer_wire::agent_event::AgentEvent,
    redact: bool,
    max_value: usize,
    received_unix_ns: i64,
) -> tracer_store::agent_events::NewAgentEvent {
    keep::keep(event, redact, max_value, received_unix_ns, None)
}

use decode::Encoding;

/// The largest export request taken (compressed as sent).
const MAX_REQUEST: usize = 64 * 1024 * 1024;

/// How the receiver keeps and passes on what it gets.
#[derive(Debug, Clone)]
pub struct IntakeSettings {
    pub listen: SocketAddr,
    /// Redact secrets in what is stored (the body rules).
    pub redact: bool,
    /// Each string in a record is kept up to this many bytes (the body bound).
    pub max_value: usize,
    /// The `tracer run` the records arrive during.
    pub run_id: Option<String>,
    /// The user's own endpoint, which gets every request as it was sent.
    pub forward: Option<ForwardTo>,
}

/// What the receiver has taken in since it started.
#[derive(Debug, Default)]
pub struct IntakeCounts {
    /// Export requests answered 2xx.
    pub requests: AtomicU64,
    /// Records (log records, spans, metric points) in those requests.
    pub received: AtomicU64,
    /// Records stored.
    pub stored: AtomicU64,
    /// Requests refused as unreadable (4xx) or not stored (503).
    pub refused: AtomicU64,
}

impl IntakeCounts {
    pub fn get(counter: &AtomicU64) -> u64 {
        counter.load(Ordering::Relaxed)
    }
}

/// Why the receiver could not start or stopped.
#[derive(Debug, thiserror::Error)]
pub enum IntakeError {
    #[error("tracer cannot receive the agent's telemetry on {addr}: {source}")]
    Listen {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("receiving the agent's telemetry: {0}")]
    Serve(std::io::Error),
}

struct Intake {
    store: Store,
    settings: IntakeSettings,
    forward: Option<forward::Forwarder>,
    counts: Arc<IntakeCounts>,
}

/// A receiver bound to its address, ready to run.
pub struct TelemetryIntake {
    listener: TcpListener,
    intake: Arc<Intake>,
    addr: SocketAddr,
}

impl TelemetryIntake {
    /// Binds `settings.listen`; records go into `store`.
    pub async fn bind(store: Store, settings: IntakeSettings) -> Result<Self, IntakeError> {
        let listen = settings.listen;
        let err = |source| IntakeError::Listen {
            addr: listen,
            source,
        };
        let listener = TcpListener::bind(listen).await.map_err(err)?;
        let addr = listener.local_addr().map_err(err)?;
        let forward = (settings.forward.clone())
            .filter(|to| !to.names(&format!("http://{addr}")))
            .map(|to| forward::Forwarder::start(to, store.clone()));
        let intake = Arc::new(Intake {
            store,
            settings,
            forward,
            counts: Arc::default(),
        });
        Ok(TelemetryIntake {
            listener,
            intake,
            addr,
        })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The endpoint to give an agent (`OTEL_EXPORTER_OTLP_ENDPOINT`): `http://127.0.0.1:PORT`.
    pub fn endpoint(&self) -> String {
        let shown = if self.addr.ip().is_unspecified() {
            SocketAddr::new(std::net::Ipv4Addr::LOCALHOST.into(), self.addr.port())
        } else {
            self.addr
        };
        format!("http://{shown}")
    }

    /// Whether received requests are passed on to the user's own endpoint.
    pub fn forwards(&self) -> bool {
        self.intake.forward.is_some()
    }

    pub fn counts(&self) -> Arc<IntakeCounts> {
        self.intake.counts.clone()
    }

    /// Serves until `stop` resolves; requests in flight are finished.
    pub async fn run(
        self,
        stop: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), IntakeError> {
        let app = Router::new()
            .route("/v1/logs", post(logs))
            .route("/v1/traces", post(traces))
            .route("/v1/metrics", post(metrics))
            .layer(DefaultBodyLimit::max(MAX_REQUEST))
            .with_state(self.intake);
        axum::serve(self.listener, app)
            .with_graceful_shutdown(stop)
            .await
            .map_err(IntakeError::Serve)
    }
}

async fn logs(State(intake): State<Arc<Intake>>, headers: HeaderMap, body: Bytes) -> Response {
    take(intake, Signal::Log, headers, body).await
}

async fn traces(State(intake): State<Arc<Intake>>, headers: HeaderMap, body: Bytes) -> Response {
    take(intake, Signal::Span, headers, body).await
}

async fn metrics(State(intake): State<Arc<Intake>>, headers: HeaderMap, body: Bytes) -> Response {
    take(intake, Signal::Metric, headers, body).await
}

fn text(headers: &HeaderMap, name: header::HeaderName) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

/// One export request: read, kept, passed on, answered as OTLP/HTTP says.
async fn take(intake: Arc<Intake>, signal: Signal, headers: HeaderMap, body: Bytes) -> Response {
    let content_type = text(&headers, header::CONTENT_TYPE);
    let content_encoding = text(&headers, header::CONTENT_ENCODING);
    let Some(encoding) = Encoding::of(content_type.as_deref()) else {
        intake.counts.refused.fetch_add(1, Ordering::Relaxed);
        let said = content_type.as_deref().unwrap_or("none");
        let message = format!(
            "Content-Type {said} is not OTLP's (application/x-protobuf or application/json)"
        );
        return (StatusCode::UNSUPPORTED_MEDIA_TYPE, message).into_response();
    };
    let now = tracer_wire::hop::now_unix_ns();
    let events = decode::unzip(content_encoding.as_deref(), &body)
        .and_then(|raw| decode::events(signal, encoding, &raw, now));
    let events = match events {
        Ok(events) => events,
        Err(error) => {
            intake.counts.refused.fetch_add(1, Ordering::Relaxed);
            return refused(encoding, StatusCode::BAD_REQUEST, &error.to_string());
        }
    };
    let count = events.len() as u64;
    intake.counts.received.fetch_add(count, Ordering::Relaxed);
    let _ = intake
        .store
        .add_to_counter(EVENTS_RECEIVED, count as i64)
        .await;
    let settings = &intake.settings;
    let kept: Vec<_> = (events.into_iter())
        .map(|e| {
            keep::keep(
                e,
                settings.redact,
                settings.max_value,
                now,
                settings.run_id.as_deref(),
            )
        })
        .collect();
    if let Some(forward) = &intake.forward {
        forward
            .send(forward::Parcel {
                signal,
                content_type: encoding.content_type().to_string(),
                content_encoding: content_encoding.clone(),
                body: body.clone(),
            })
            .await;
    }
    match intake.store.insert_agent_events(&kept).await {
        Ok(stored) => {
            intake
                .counts
                .stored
                .fetch_add(stored as u64, Ordering::Relaxed);
            intake.counts.requests.fetch_add(1, Ordering::Relaxed);
            accepted(encoding)
        }
        Err(error) => {
            tracing::warn!("storing the agent's telemetry: {error}");
            intake.counts.refused.fetch_add(1, Ordering::Relaxed);
            let _ = intake
                .store
                .add_to_counter(EVENTS_NOT_STORED, count as i64)
                .await;
            let mut answer = refused(
                encoding,
                StatusCode::SERVICE_UNAVAILABLE,
                &format!("tracer could not store the records: {error}"),
            );
            (answer.headers_mut())
                .insert(header::RETRY_AFTER, header::HeaderValue::from_static("1"));
            answer
        }
    }
}

/// A full success: the empty `Export*ServiceResponse` (no bytes in protobuf, `{}` in JSON).
fn accepted(encoding: Encoding) -> Response {
    let body = match encoding {
        Encoding::Protobuf => Bytes::new(),
        Encoding::Json => Bytes::from_static(b"{}"),
    };
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, encoding.content_type())],
        body,
    )
        .into_response()
}

/// An error answer with a `google.rpc.Status` (code 3 INVALID_ARGUMENT or 14 UNAVAILABLE).
fn refused(encoding: Encoding, status: StatusCode, message: &str) -> Response {
    let code = if status == StatusCode::SERVICE_UNAVAILABLE {
        14
    } else {
        3
    };
    let body = match encoding {
        Encoding::Json => serde_json::json!({"code": code, "message": message})
            .to_string()
            .into_bytes(),
        Encoding::Protobuf => {
            use prost::Message as _;
            status_bytes(code, message).encode_to_vec()
        }
    };
    (
        status,
        [(header::CONTENT_TYPE, encoding.content_type())],
        body,
    )
        .into_response()
}

/// `google.rpc.Status { code = 1, message = 2 }`.
#[derive(Clone, PartialEq, prost::Message)]
struct RpcStatus {
    #[prost(int32, tag = "1")]
    code: i32,
    #[prost(string, tag = "2")]
    message: String,
}

fn status_bytes(code: i32, message: &str) -> RpcStatus {
    RpcStatus {
        code,
        message: message.to_string(),
    }
}

#[cfg(test)]
#[path = "agent_telemetry/intake_tests.rs"]
mod intake_tests;
