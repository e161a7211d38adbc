//! Where and how spans are sent: the `--otlp*` flags and the OpenTelemetry exporter environment
//! (`OTEL_EXPORTER_OTLP_[TRACES_]{ENDPOINT,HEADERS,COMPRESSION,PROTOCOL,TIMEOUT}`,
//! `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`), flags winning over the environment.

use std::time::Duration;

use http::{HeaderName, HeaderValue};

use crate::otlp::model::{Attribute, Resource};
use crate::otlp::{Encoding, SpanOptions};

/// The flags as given (before the environment is consulted).
#[derive(Debug, Clone, Default)]
pub struct OtlpFlags {
    /// A base URL: `/v1/traces` is appended (as for `OTEL_EXPORTER_OTLP_ENDPOINT`).
    pub base: Option<String>,
    /// The traces URL, used as given.
    pub traces_url: Option<String>,
    /// `K=V` headers, taken literally.
    pub headers: Vec<String>,
    pub content: bool,
    pub delay: Duration,
    pub queue: usize,
}

/// A resolved exporter configuration.
#[derive(Debug, Clone)]
pub struct OtlpConfig {
    /// The URL spans are POSTed to.
    pub(crate) url: String,
    pub(crate) headers: Vec<(HeaderName, HeaderValue)>,
    pub(crate) gzip: bool,
    pub(crate) encoding: Encoding,
    /// How long one request may take.
    pub(crate) timeout: Duration,
    pub(crate) resource: Resource,
    pub(crate) spans: SpanOptions,
    /// How long after a trace's last hop ended its spans are sent.
    pub(crate) delay: Duration,
    /// Spans that may wait for the receiver; more are counted as not exported.
    pub(crate) queue: usize,
    /// Spans per request.
    pub(crate) batch: usize,
    /// How long one batch is retried before its spans are counted as not exported.
    pub(crate) retry_for: Duration,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    #[error("{what} `{url}` is not an http:// URL with a host")]
    BadUrl { what: String, url: String },
    #[error(
        "{what} `{url}`: tracer's exporter speaks plain http:// only (no TLS client yet); \
         send to a collector over http:// and let it forward over TLS"
    )]
    Https { what: String, url: String },
    #[error("{what}: `{entry}` is not KEY=VALUE")]
    BadHeader { what: String, entry: String },
    #[error("{what}: `{value}` is not one of {expected}")]
    BadValue {
        what: String,
        value: String,
        expected: &'static str,
    },
}

/// The default `--otlp-queue`.
pub const DEFAULT_QUEUE: usize = 2048;
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
const BATCH: usize = 512;
const RETRY_FOR: Duration = Duration::from_secs(60);

/// The configuration for `flags` and the environment, or None when no receiver is named.
pub fn resolve(
    flags: &OtlpFlags,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Option<OtlpConfig>, ConfigError> {
    let get = |name: &str| env(name).filter(|v| !v.trim().is_empty());
    let traces = |suffix: &str| {
        get(&format!("OTEL_EXPORTER_OTLP_TRACES_{suffix}"))
            .map(|v| (v, format!("OTEL_EXPORTER_OTLP_TRACES_{suffix}")))
            .or_else(|| {
                get(&format!("OTEL_EXPORTER_OTLP_{suffix}"))
                    .map(|v| (v, format!("OTEL_EXPORTER_OTLP_{suffix}")))
            })
    };
    let url = match (&flags.traces_url, &flags.base) {
        (Some(url), _) => check_url("--otlp-traces-url", url.trim())?,
        (None, Some(base)) => traces_url_of(&check_url("--otlp", base.trim())?),
        (None, None) => match (
            get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
            get("OTEL_EXPORTER_OTLP_ENDPOINT"),
        ) {
            (Some(url), _) => check_url("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", url.trim())?,
            (None, Some(base)) => {
                traces_url_of(&check_url("OTEL_EXPORTER_OTLP_ENDPOINT", base.trim())?)
            }
            (None, None) => return Ok(None),
        },
    };
    let mut headers: Vec<(HeaderName, HeaderValue)> = Vec::new();
    for name in [
        "OTEL_EXPORTER_OTLP_HEADERS",
        "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
    ] {
        if let Some(list) = get(name) {
            for (key, value) in parse_pairs(name, &list)? {
                set_header(&mut headers, name, &key, &value)?;
            }
        }
    }
    for entry in &flags.headers {
        let (key, value) = entry
            .split_once('=')
            .ok_or_else(|| ConfigError::BadHeader {
                what: "--otlp-header".into(),
                entry: entry.clone(),
            })?;
        set_header(&mut headers, "--otlp-header", key.trim(), value.trim())?;
    }
    let url = super::url_credentials::to_basic_auth(&url, &mut headers);
    let gzip = match traces("COMPRESSION") {
        None => false,
        Some((value, name)) => match value.trim() {
            "gzip" => true,
            "none" => false,
            other => return Err(bad_value(&name, other, "gzip, none")),
        },
    };
    let encoding = match traces("PROTOCOL") {
        None => Encoding::Protobuf,
        Some((value, name)) => match value.trim() {
            "http/protobuf" => Encoding::Protobuf,
            "http/json" => Encoding::Json,
            other => {
                return Err(bad_value(
                    &name,
                    other,
                    "http/protobuf, http/json (no grpc)",
                ));
            }
        },
    };
    let timeout = match traces("TIMEOUT") {
        None => DEFAULT_TIMEOUT,
        Some((value, name)) => match value.trim().parse::<u64>() {
            Ok(ms) if ms > 0 => Duration::from_millis(ms),
            _ => {
                return Err(bad_value(
                    &name,
                    &value,
                    "a positive number of milliseconds",
                ));
            }
        },
    };
    let mut extra = Vec::new();
    let mut service = None;
    if let Some(list) = get("OTEL_RESOURCE_ATTRIBUTES") {
        for (key, value) in parse_pairs("OTEL_RESOURCE_ATTRIBUTES", &list)? {
            if key == "service.name" {
                service = Some(value);
            } else {
                extra.push(Attribute::text(&key, value));
            }
        }
    }
    let service = get("OTEL_SERVICE_NAME")
        .or(service)
        .unwrap_or_else(|| "tracer".into());
    Ok(Some(OtlpConfig {
        url,
        headers,
        gzip,
        encoding,
        timeout,
        resource: Resource::named(service.trim(), extra),
        spans: SpanOptions {
            content: flags.content,
        },
        delay: flags.delay,
        queue: flags.queue.max(1),
        batch: BATCH,
        retry_for: RETRY_FOR,
    }))
}

/// `base` + `/v1/traces` (a base that already ends so is kept).
pub(crate) fn traces_url_of(base: &str) -> String {
    let base = base.trim();
    if base.trim_end_matches('/').ends_with("/v1/traces") {
        return base.to_string();
    }
    format!("{}/v1/traces", base.trim_end_matches('/'))
}

fn check_url(what: &str, url: &str) -> Result<String, ConfigError> {
    let shown = tracer_wire::redact::redact_userinfo(url);
    let error = || ConfigError::BadUrl {
        what: what.into(),
        url: shown.clone(),
    };
    let uri: http::Uri = url.parse().map_err(|_| error())?;
    match (uri.scheme_str(), uri.host()) {
        (Some("http"), Some(_)) => Ok(url.to_string()),
        (Some("https"), Some(_)) => Err(ConfigError::Https {
            what: what.into(),
            url: shown.clone(),
        }),
        _ => Err(error()),
    }
}

fn bad_value(what: &str, value: &str, expected: &'static str) -> ConfigError {
    ConfigError::BadValue {
        what: what.into(),
        value: value.into(),
        expected,
    }
}

/// `k1=v1,k2=v2` (W3C Baggage without properties), keys and values percent-decoded.
fn parse_pairs(what: &str, list: &str) -> Result<Vec<(String, String)>, ConfigError> {
    let mut out = Vec::new();
    for entry in list.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let entry = entry.split(';').next().unwrap_or(entry);
        let Some((key, value)) = entry.split_once('=') else {
            return Err(ConfigError::BadHeader {
                what: what.into(),
                entry: entry.into(),
            });
        };
        let decoded = |t: &str| tracer_wire::redact::percent_decoded(t.as_bytes(), false);
        out.push((decoded(key.trim()), decoded(value.trim())));
    }
    Ok(out)
}

/// Adds a header, replacing one of the same name set earlier (later sources win).
fn set_header(
    headers: &mut Vec<(HeaderName, HeaderValue)>,
    what: &str,
    key: &str,
    value: &str,
) -> Result<(), ConfigError> {
    let bad = || ConfigError::BadHeader {
        what: what.into(),
        entry: format!("{key}={value}"),
    };
    let name = HeaderName::from_bytes(key.as_bytes()).map_err(|_| bad())?;
    let value = HeaderValue::from_str(value).map_err(|_| bad())?;
    headers.retain(|(n, _)| *n != name);
    headers.push((name, value));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn with_env(
        flags: &OtlpFlags,
        vars: &[(&str, &str)],
    ) -> Result<Option<OtlpConfig>, ConfigError> {
        let vars: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        resolve(flags, |name| vars.get(name).cloned())
    }

    #[test]
    fn endpoints_follow_the_exporter_rules_and_flags_win() {
        let none = OtlpFlags::default();
        assert!(with_env(&none, &[]).unwrap().is_none());
        let base = [("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318")];
        assert_eq!(
            with_env(&none, &base).unwrap().unwrap().url,
            "http://c:4318/v1/traces"
        );
        let both = [
            base[0],
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://t:1/x"),
        ];
        assert_eq!(with_env(&none, &both).unwrap().unwrap().url, "http://t:1/x");
        let flag = OtlpFlags {
            base: Some("http://127.0.0.1:6006/".into()),
            ..OtlpFlags::default()
        };
        let config = with_env(&flag, &both).unwrap().unwrap();
        assert_eq!(config.url, "http://127.0.0.1:6006/v1/traces");
        assert_eq!(config.encoding, Encoding::Protobuf);
        assert!(!config.gzip);
        assert_eq!(traces_url_of("http://h/v1/traces"), "http://h/v1/traces");
    }

    #[test]
    fn headers_compression_protocol_and_service_come_from_the_environment() {
        let flags = OtlpFlags {
            base: Some("http://c:4318".into()),
            headers: vec!["x-b=flag".into()],
            ..OtlpFlags::default()
        };
        let config = with_env(
            &flags,
            &[
                (
                    "OTEL_EXPORTER_OTLP_HEADERS",
                    "Authorization=Basic%20abc, x-b=env",
                ),
                ("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip"),
                ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/json"),
                ("OTEL_SERVICE_NAME", "agents"),
                ("OTEL_RESOURCE_ATTRIBUTES", "service.name=x,team=ml"),
            ],
        )
        .unwrap()
        .unwrap();
        let header = |name: &str| {
            config
                .headers
                .iter()
                .find(|(n, _)| n.as_str() == name)
                .map(|(_, v)| v.to_str().unwrap().to_string())
        };
        assert_eq!(header("authorization").as_deref(), Some("Basic abc"));
        assert_eq!(header("x-b").as_deref(), Some("flag"));
        assert!(config.gzip);
        assert_eq!(config.encoding, Encoding::Json);
        assert_eq!(config.resource.attributes.len(), 2);
        assert_eq!(
            config.resource.attributes[0],
            Attribute::text("service.name", "agents")
        );
    }

    #[test]
    fn bad_settings_are_named() {
        let flags = OtlpFlags {
            base: Some("http://c:4318".into()),
            ..OtlpFlags::default()
        };
        let grpc = with_env(&flags, &[("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")]).unwrap_err();
        assert!(
            grpc.to_string().contains("OTEL_EXPORTER_OTLP_PROTOCOL"),
            "{grpc}"
        );
        let zstd = with_env(&flags, &[("OTEL_EXPORTER_OTLP_COMPRESSION", "zstd")]).unwrap_err();
        assert!(zstd.to_string().contains("gzip, none"), "{zstd}");
        let header = OtlpFlags {
            headers: vec!["novalue".into()],
            ..flags.clone()
        };
        assert!(with_env(&header, &[]).is_err());
        let https = OtlpFlags {
            base: Some("https://cloud.example".into()),
            ..OtlpFlags::default()
        };
        assert!(matches!(
            with_env(&https, &[]),
            Err(ConfigError::Https { .. })
        ));
        let junk = OtlpFlags {
            base: Some("collector:4318".into()),
            ..OtlpFlags::default()
        };
        assert!(matches!(
            with_env(&junk, &[]),
            Err(ConfigError::BadUrl { .. })
        ));
    }
}
