//! A fake OTLP/HTTP receiver for the exporter tests: it decodes what it is sent with the
//! `opentelemetry-proto` types (protobuf) or as OTLP/JSON, gunzips `Content-Encoding: gzip`,
//! keeps every request, and answers from a script (e.g. 503 with `Retry-After` first).

use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::io::Read;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use prost::Message;
use serde_json::{Value, json};
use tokio::net::TcpListener;

/// One span as the receiver decoded it; attribute values as JSON (strings, numbers, arrays).
#[derive(Debug, Clone)]
pub struct ReceivedSpan {
    pub trace_id: String,
    pub span_id: String,
    pub parent_span_id: String,
    pub name: String,
    pub kind: i32,
    pub status_code: i32,
    pub attributes: HashMap<String, Value>,
}

impl ReceivedSpan {
    pub fn text(&self, key: &str) -> Option<&str> {
        self.attributes.get(key).and_then(Value::as_str)
    }
}

/// One request as it arrived.
#[derive(Debug, Clone)]
pub struct Received {
    pub at: Instant,
    pub path: String,
    pub headers: http::HeaderMap,
    pub gzipped: bool,
    pub service_name: Option<String>,
    pub spans: Vec<ReceivedSpan>,
}

/// How the receiver answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply {
    Ok,
    /// A status, with `Retry-After: seconds` when given.
    Status(u16, Option<u64>),
}

#[derive(Default)]
struct State {
    requests: Vec<Received>,
    script: VecDeque<Reply>,
    otherwise: Option<Reply>,
}

#[derive(Clone)]
pub struct Receiver {
    pub addr: SocketAddr,
    state: Arc<Mutex<State>>,
}

impl Receiver {
    pub async fn start() -> Receiver {
        Self::start_on("127.0.0.1:0".parse().unwrap()).await
    }

    /// Listens on `addr`.
    pub async fn start_on(addr: SocketAddr) -> Receiver {
        Self::start_with(TcpListener::bind(addr).await.unwrap())
    }

    /// Serves on `listener` (e.g. a socket bound earlier, for a receiver that comes up late).
    pub fn start_with(listener: TcpListener) -> Receiver {
        let receiver = Receiver {
            addr: listener.local_addr().unwrap(),
            state: Arc::new(Mutex::new(State::default())),
        };
        let state = receiver.state.clone();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let state = state.clone();
                tokio::spawn(async move {
                    let service = service_fn(move |request| {
                        let state = state.clone();
                        async move { Ok::<_, Infallible>(handle(request, &state).await) }
                    });
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        receiver
    }

    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Answers the next requests with `replies`, in order, then as `otherwise` says (200).
    pub fn script(&self, replies: &[Reply]) {
        self.state.lock().unwrap().script.extend(replies);
    }

    pub fn otherwise(&self, reply: Reply) {
        self.state.lock().unwrap().otherwise = Some(reply);
    }

    pub fn requests(&self) -> Vec<Received> {
        self.state.lock().unwrap().requests.clone()
    }

    /// Spans of the requests answered 2xx... and of the others: every span that arrived.
    pub fn spans(&self) -> Vec<ReceivedSpan> {
        self.requests().into_iter().flat_map(|r| r.spans).collect()
    }

    /// Waits until `count` requests arrived.
    pub async fn wait_for_requests(&self, count: usize, within: Duration) -> Vec<Received> {
        let deadline = Instant::now() + within;
        loop {
            let requests = self.requests();
            if requests.len() >= count {
                return requests;
            }
            assert!(
                Instant::now() < deadline,
                "expected {count} export requests within {within:?}, got {}",
                requests.len()
            );
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// Waits until `count` distinct spans were accepted (answered 200).
    pub async fn wait_for_spans(&self, count: usize, within: Duration) -> Vec<ReceivedSpan> {
        let deadline = Instant::now() + within;
        loop {
            let spans = self.accepted_spans();
            if spans.len() >= count {
                return spans;
            }
            assert!(
                Instant::now() < deadline,
                "expected {count} spans within {within:?}, got {}",
                spans.len()
            );
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    /// Spans of requests that were answered 200.
    pub fn accepted_spans(&self) -> Vec<ReceivedSpan> {
        self.requests()
            .into_iter()
            .filter(|r| r.headers.get("x-test-answered").is_some_and(|v| v == "200"))
            .flat_map(|r| r.spans)
            .collect()
    }
}

async fn handle(
    request: hyper::Request<hyper::body::Incoming>,
    state: &Mutex<State>,
) -> hyper::Response<Full<Bytes>> {
    let (parts, body) = request.into_parts();
    let raw = body
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let gzipped = parts
        .headers
        .get("content-encoding")
        .is_some_and(|v| v == "gzip");
    let bytes = if gzipped {
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(raw.as_ref())
            .read_to_end(&mut out)
            .expect("a gzip body that gunzips");
        out
    } else {
        raw.to_vec()
    };
    let content_type = parts
        .headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let (service_name, spans) = match content_type.as_str() {
        "application/x-protobuf" => decode_protobuf(&bytes),
        "application/json" => decode_json(&bytes),
        other => panic!("unexpected content type {other:?}"),
    };
    let mut guard = state.lock().unwrap();
    let reply = guard
        .script
        .pop_front()
        .or(guard.otherwise)
        .unwrap_or(Reply::Ok);
    let status = match reply {
        Reply::Ok => 200,
        Reply::Status(code, _) => code,
    };
    let mut headers = parts.headers.clone();
    headers.insert("x-test-answered", status.to_string().parse().unwrap());
    guard.requests.push(Received {
        at: Instant::now(),
        path: parts.uri.path().to_string(),
        headers,
        gzipped,
        service_name,
        spans,
    });
    drop(guard);
    let body = match (reply, content_type.as_str()) {
        (Reply::Ok, "application/json") => Bytes::from_static(b"{}"),
        (Reply::Ok, _) => Bytes::from(ExportTraceServiceResponse::default().encode_to_vec()),
        _ => Bytes::from_static(b"busy"),
    };
    let mut response = hyper::Response::new(Full::new(body));
    *response.status_mut() = http::StatusCode::from_u16(status).unwrap();
    response
        .headers_mut()
        .insert("content-type", content_type.parse().unwrap());
    if let Reply::Status(_, Some(seconds)) = reply {
        response
            .headers_mut()
            .insert("retry-after", seconds.to_string().parse().unwrap());
    }
    response
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn any_to_json(value: Option<&Any>) -> Value {
    match value {
        Some(Any::StringValue(s)) => json!(s),
        Some(Any::BoolValue(b)) => json!(b),
        Some(Any::IntValue(n)) => json!(n),
        Some(Any::DoubleValue(x)) => json!(x),
        Some(Any::ArrayValue(array)) => Value::Array(
            array
                .values
                .iter()
                .map(|v| any_to_json(v.value.as_ref()))
                .collect(),
        ),
        _ => Value::Null,
    }
}

fn decode_protobuf(bytes: &[u8]) -> (Option<String>, Vec<ReceivedSpan>) {
    let request = ExportTraceServiceRequest::decode(bytes).expect("an ExportTraceServiceRequest");
    let mut service = None;
    let mut spans = Vec::new();
    for resource_spans in request.resource_spans {
        for attribute in resource_spans
            .resource
            .map(|r| r.attributes)
            .unwrap_or_default()
        {
            if attribute.key == "service.name" {
                service = any_to_json(attribute.value.and_then(|v| v.value).as_ref())
                    .as_str()
                    .map(str::to_string);
            }
        }
        for scope in resource_spans.scope_spans {
            for span in scope.spans {
                spans.push(ReceivedSpan {
                    trace_id: hex(&span.trace_id),
                    span_id: hex(&span.span_id),
                    parent_span_id: hex(&span.parent_span_id),
                    name: span.name,
                    kind: span.kind,
                    status_code: span.status.map_or(0, |s| s.code),
                    attributes: span
                        .attributes
                        .into_iter()
                        .map(|a| (a.key, any_to_json(a.value.and_then(|v| v.value).as_ref())))
                        .collect(),
                });
            }
        }
    }
    (service, spans)
}

fn json_value(value: &Value) -> Value {
    if let Some(s) = value.get("stringValue") {
        return s.clone();
    }
    if let Some(n) = value.get("intValue") {
        return json!(n.as_str().and_then(|s| s.parse::<i64>().ok()));
    }
    if let Some(values) = value
        .pointer("/arrayValue/values")
        .and_then(Value::as_array)
    {
        return Value::Array(values.iter().map(json_value).collect());
    }
    value
        .get("boolValue")
        .or_else(|| value.get("doubleValue"))
        .cloned()
        .unwrap_or(Value::Null)
}

fn decode_json(bytes: &[u8]) -> (Option<String>, Vec<ReceivedSpan>) {
    let document: Value = serde_json::from_slice(bytes).expect("OTLP/JSON");
    let attributes = |list: &Value| -> HashMap<String, Value> {
        list.as_array()
            .into_iter()
            .flatten()
            .map(|a| {
                (
                    a["key"].as_str().unwrap().to_string(),
                    json_value(&a["value"]),
                )
            })
            .collect()
    };
    let mut service = None;
    let mut spans = Vec::new();
    for resource_spans in document["resourceSpans"].as_array().unwrap() {
        service = attributes(&resource_spans["resource"]["attributes"])
            .get("service.name")
            .and_then(Value::as_str)
            .map(str::to_string);
        for scope in resource_spans["scopeSpans"].as_array().unwrap() {
            for span in scope["spans"].as_array().unwrap() {
                spans.push(ReceivedSpan {
                    trace_id: span["traceId"].as_str().unwrap().to_string(),
                    span_id: span["spanId"].as_str().unwrap().to_string(),
                    parent_span_id: span["parentSpanId"].as_str().unwrap_or("").to_string(),
                    name: span["name"].as_str().unwrap().to_string(),
                    kind: span["kind"].as_i64().unwrap() as i32,
                    status_code: span["status"]["code"].as_i64().unwrap_or(0) as i32,
                    attributes: attributes(&span["attributes"]),
                });
            }
        }
    }
    (service, spans)
}
