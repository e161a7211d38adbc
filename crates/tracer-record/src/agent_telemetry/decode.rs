//! OTLP/HTTP export requests (logs, traces, metrics; protobuf or OTLP/JSON, gzip or not) read
//! into agent events, one per log record, span and metric data point, each with its resource and
//! scope as OTLP/JSON.

use std::io::Read;

use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::metrics::v1::metric::Data;
use prost::Message;
use serde::Serialize;
use serde_json::{Value, json};
use tracer_wire::agent_event::{
    AgentEvent, JoinKeys, Signal, flat_attributes, record_attributes, resource_attributes,
};

/// An export request decoded is never larger than this (gzip bombs stop here).
pub(crate) const MAX_DECODED: u64 = 64 * 1024 * 1024;

/// How a request's body is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Encoding {
    Protobuf,
    Json,
}

impl Encoding {
    /// From the request's `Content-Type`; None for a type OTLP/HTTP does not use.
    pub(crate) fn of(content_type: Option<&str>) -> Option<Encoding> {
        let essence = content_type?.split(';').next()?.trim().to_ascii_lowercase();
        match essence.as_str() {
            "application/x-protobuf" | "application/protobuf" => Some(Encoding::Protobuf),
            "application/json" => Some(Encoding::Json),
            _ => None,
        }
    }

    pub(crate) fn content_type(self) -> &'static str {
        match self {
            Encoding::Protobuf => "application/x-protobuf",
            Encoding::Json => "application/json",
        }
    }
}

/// Why a request could not be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum DecodeError {
    #[error("the body's Content-Encoding {0} is not one OTLP uses (gzip or none)")]
    Encoding(String),
    #[error("the gzip body does not unzip: {0}")]
    Gzip(String),
    #[error("the body unzips to more than {} MiB", MAX_DECODED / 1024 / 1024)]
    TooLarge,
    #[error("the body is not an OTLP {signal} request in protobuf: {message}")]
    Protobuf {
        signal: &'static str,
        message: String,
    },
    #[error("the body is not an OTLP {signal} request in OTLP/JSON: {message}")]
    Json {
        signal: &'static str,
        message: String,
    },
}

/// The body with its `Content-Encoding` undone.
pub(crate) fn unzip(content_encoding: Option<&str>, body: &[u8]) -> Result<Vec<u8>, DecodeError> {
    match content_encoding
        .map(|e| e.trim().to_ascii_lowercase())
        .as_deref()
    {
        None | Some("") | Some("identity") => Ok(body.to_vec()),
        Some("gzip") | Some("x-gzip") => {
            let mut out = Vec::new();
            let mut reader = flate2::read::MultiGzDecoder::new(body).take(MAX_DECODED + 1);
            reader
                .read_to_end(&mut out)
                .map_err(|e| DecodeError::Gzip(e.to_string()))?;
            if out.len() as u64 > MAX_DECODED {
                return Err(DecodeError::TooLarge);
            }
            Ok(out)
        }
        Some(other) => Err(DecodeError::Encoding(other.to_string())),
    }
}

/// The events of one export request; `now` stands in for a record that has no time.
pub(crate) fn events(
    signal: Signal,
    encoding: Encoding,
    body: &[u8],
    now: i64,
) -> Result<Vec<AgentEvent>, DecodeError> {
    match signal {
        Signal::Log => Ok(logs(
            parse::<ExportLogsServiceRequest>(signal, encoding, body)?,
            now,
        )),
        Signal::Span => Ok(spans(
            parse::<ExportTraceServiceRequest>(signal, encoding, body)?,
            now,
        )),
        Signal::Metric => Ok(metrics(
            parse::<ExportMetricsServiceRequest>(signal, encoding, body)?,
            now,
        )),
    }
}

fn parse<T: Message + Default + serde::de::DeserializeOwned>(
    signal: Signal,
    encoding: Encoding,
    body: &[u8],
) -> Result<T, DecodeError> {
    let name = signal_name(signal);
    match encoding {
        Encoding::Protobuf => T::decode(body).map_err(|e| DecodeError::Protobuf {
            signal: name,
            message: e.to_string(),
        }),
        Encoding::Json => serde_json::from_slice(body).map_err(|e| DecodeError::Json {
            signal: name,
            message: e.to_string(),
        }),
    }
}

fn signal_name(signal: Signal) -> &'static str {
    match signal {
        Signal::Log => "logs",
        Signal::Span => "traces",
        Signal::Metric => "metrics",
    }
}

/// A message as OTLP/JSON (the crate's own serde: hex ids, camelCase, 64-bit ints as strings).
fn as_json<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

fn time(ns: u64, now: i64) -> i64 {
    match i64::try_from(ns) {
        Ok(0) | Err(_) => now,
        Ok(ns) => ns,
    }
}

/// The event built from a record, its keys read from its attributes and resource.
fn event(
    signal: Signal,
    name: String,
    time_unix_ns: i64,
    end: Option<i64>,
    record: Value,
) -> AgentEvent {
    let resource = resource_attributes(&record);
    let keys = JoinKeys::read(&record_attributes(&record), &resource);
    let service = resource
        .get("service.name")
        .and_then(Value::as_str)
        .map(str::to_string);
    AgentEvent {
        signal,
        service,
        name,
        time_unix_ns,
        end_unix_ns: end,
        keys,
        record,
    }
}

fn logs(request: ExportLogsServiceRequest, now: i64) -> Vec<AgentEvent> {
    let mut out = Vec::new();
    for resource_logs in &request.resource_logs {
        let resource = as_json(&resource_logs.resource);
        for scope_logs in &resource_logs.scope_logs {
            let scope = as_json(&scope_logs.scope);
            for log in &scope_logs.log_records {
                let record = json!({"resource": resource, "scope": scope, "log": as_json(log)});
                let name = log_name(log, &record);
                let at = time(log.time_unix_nano, time(log.observed_time_unix_nano, now));
                out.push(event(Signal::Log, name, at, None, record));
            }
        }
    }
    out
}

/// An event's name: its `event.name` attribute (all three agents set it; Codex fills the
/// record's own `event_name` with a source location), else the record's `event_name`, else its
/// body when that is a short string (`claude_code.tool_decision`), else its severity.
fn log_name(log: &opentelemetry_proto::tonic::logs::v1::LogRecord, record: &Value) -> String {
    let attributes = record_attributes(record);
    if let Some(name) = attributes.get("event.name").and_then(Value::as_str) {
        return name.to_string();
    }
    if !log.event_name.is_empty() {
        return log.event_name.clone();
    }
    let body = record
        .pointer("/log/body/stringValue")
        .and_then(Value::as_str);
    match body {
        Some(body) if body.len() <= 120 && !body.contains('\n') => body.to_string(),
        _ if !log.severity_text.is_empty() => format!("log {}", log.severity_text),
        _ => "log".to_string(),
    }
}

fn spans(request: ExportTraceServiceRequest, now: i64) -> Vec<AgentEvent> {
    let mut out = Vec::new();
    for resource_spans in &request.resource_spans {
        let resource = as_json(&resource_spans.resource);
        for scope_spans in &resource_spans.scope_spans {
            let scope = as_json(&scope_spans.scope);
            for span in &scope_spans.spans {
                let record = json!({"resource": resource, "scope": scope, "span": as_json(span)});
                let start = time(span.start_time_unix_nano, now);
                let end = i64::try_from(span.end_time_unix_nano)
                    .ok()
                    .filter(|&e| e > 0);
                out.push(event(Signal::Span, span.name.clone(), start, end, record));
            }
        }
    }
    out
}

fn metrics(request: ExportMetricsServiceRequest, now: i64) -> Vec<AgentEvent> {
    let mut out = Vec::new();
    for resource_metrics in &request.resource_metrics {
        let resource = as_json(&resource_metrics.resource);
        for scope_metrics in &resource_metrics.scope_metrics {
            let scope = as_json(&scope_metrics.scope);
            for metric in &scope_metrics.metrics {
                let (kind, points) = metric_points(metric.data.as_ref());
                let about = json!({
                    "name": metric.name, "description": metric.description,
                    "unit": metric.unit, "kind": kind,
                    "metadata": Value::Object(flat_attributes(&as_json(&metric.metadata))),
                });
                for (point, at) in points {
                    let record = json!({"resource": resource, "scope": scope, "metric": about, "point": point});
                    out.push(event(
                        Signal::Metric,
                        metric.name.clone(),
                        time(at, now),
                        None,
                        record,
                    ));
                }
            }
        }
    }
    out
}

/// A metric's kind and its data points as OTLP/JSON with each one's time.
fn metric_points(data: Option<&Data>) -> (&'static str, Vec<(Value, u64)>) {
    fn each<T: Serialize>(points: &[T], at: impl Fn(&T) -> u64) -> Vec<(Value, u64)> {
        points.iter().map(|p| (as_json(p), at(p))).collect()
    }
    match data {
        Some(Data::Gauge(g)) => ("gauge", each(&g.data_points, |p| p.time_unix_nano)),
        Some(Data::Sum(s)) => ("sum", each(&s.data_points, |p| p.time_unix_nano)),
        Some(Data::Histogram(h)) => ("histogram", each(&h.data_points, |p| p.time_unix_nano)),
        Some(Data::ExponentialHistogram(h)) => (
            "exponential_histogram",
            each(&h.data_points, |p| p.time_unix_nano),
        ),
        Some(Data::Summary(s)) => ("summary", each(&s.data_points, |p| p.time_unix_nano)),
        None => ("none", Vec::new()),
    }
}

#[cfg(test)]
#[path = "decode_tests.rs"]
mod tests;
