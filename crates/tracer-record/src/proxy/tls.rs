//! The upstream side of TLS: one pooled client for every route, `http://` and `https://`
//! (rustls with ring, verified against the platform's roots plus `--upstream-ca` files, HTTP/2 by
//! ALPN else HTTP/1.1), and `--resolve HOST:PORT=ADDR:PORT` pins for tests and pinning.

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use http::Uri;
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use rustls::RootCertStore;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use tokio::net::TcpStream;

use super::tls_end::EndingConnector;

/// The connector under the pooled client: TLS when the URL says `https`, plain TCP otherwise;
/// a TLS end without `close_notify` reads as an end of stream (`tls_end`).
pub(crate) type UpstreamConnector = EndingConnector<HttpsConnector<PinnedConnector>>;

/// How the proxy reaches its upstreams.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UpstreamTls {
    /// PEM files of CA certificates trusted beside the platform's roots.
    pub extra_cas: Vec<PathBuf>,
    /// `HOST:PORT` → the address actually dialled (TLS and `Host` still say HOST).
    pub resolve: Vec<HostPin>,
}

/// One `--resolve HOST:PORT=ADDR:PORT`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPin {
    pub(crate) host: String,
    pub(crate) port: u16,
    pub(crate) addr: SocketAddr,
}

impl std::str::FromStr for HostPin {
    type Err = String;

    fn from_str(spec: &str) -> Result<HostPin, String> {
        let usage = || format!("--resolve `{spec}`: expected HOST:PORT=ADDR:PORT");
        let (from, to) = spec.split_once('=').ok_or_else(usage)?;
        let (host, port) = from.rsplit_once(':').ok_or_else(usage)?;
        let port: u16 = port.parse().map_err(|_| usage())?;
        let addr: SocketAddr = to.parse().map_err(|_| {
            format!("--resolve `{spec}`: `{to}` is not IP:PORT (e.g. 127.0.0.1:8443)")
        })?;
        let host = host.trim_start_matches('[').trim_end_matches(']');
        if host.is_empty() {
            return Err(usage());
        }
        Ok(HostPin {
            host: host.to_ascii_lowercase(),
            port,
            addr,
        })
    }
}

/// Errors building the upstream TLS configuration.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TlsSetupError {
    #[error("--upstream-ca {path}: {message}")]
    CaFile { path: String, message: String },
}

/// A pooled upstream client from a rustls configuration already made (the platform's roots are
/// read once for many clients); `http1_only` offers only HTTP/1.1 in ALPN, for upgrades.
pub(crate) fn upstream_client_with<B>(
    config: rustls::ClientConfig,
    tls: &UpstreamTls,
    http1_only: bool,
) -> Client<UpstreamConnector, B>
where
    B: http_body::Body + Send + 'static,
    B::Data: Send,
{
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    http.set_nodelay(true);
    http.set_keepalive(Some(Duration::from_secs(60)));
    let pinned = PinnedConnector {
        inner: http,
        pins: Arc::new(tls.resolve.clone()),
    };
    let builder = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(config)
        .https_or_http();
    let connector = EndingConnector(if http1_only {
        builder.enable_http1().wrap_connector(pinned)
    } else {
        builder.enable_all_versions().wrap_connector(pinned)
    });
    Client::builder(TokioExecutor::new())
        .timer(TokioTimer::new())
        .pool_timer(TokioTimer::new())
        .pool_idle_timeout(Duration::from_secs(90))
        .http1_preserve_header_case(true)
        .build(connector)
}

/// The rustls client configuration: platform roots (Mozilla's when the platform has none) and
/// the extra CA files, no ALPN yet (the connector sets it).
pub(crate) fn client_config(tls: &UpstreamTls) -> Result<rustls::ClientConfig, TlsSetupError> {
    let mut roots = RootCertStore::empty();
    let (added, _ignored) = roots.add_parsable_certificates(crate::ca::platform_roots());
    if added == 0 {
        roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    }
    for path in &tls.extra_cas {
        let certs = read_pem_certs(path)?;
        for cert in certs {
            roots.add(cert).map_err(|e| TlsSetupError::CaFile {
                path: path.display().to_string(),
                message: format!("not a usable CA certificate: {e}"),
            })?;
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsSetupError::CaFile {
            path: String::new(),
            message: e.to_string(),
        })?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(config)
}

/// Every certificate in a PEM file; a file without one is an error naming it.
fn read_pem_certs(path: &std::path::Path) -> Result<Vec<CertificateDer<'static>>, TlsSetupError> {
    let error = |message: String| TlsSetupError::CaFile {
        path: path.display().to_string(),
        message,
    };
    let bytes = std::fs::read(path).map_err(|e| error(e.to_string()))?;
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&bytes)
        .collect::<Result<_, _>>()
        .map_err(|e| error(format!("not PEM: {e}")))?;
    if certs.is_empty() {
        return Err(error("no CERTIFICATE block in the file".into()));
    }
    Ok(certs)
}

/// Plain TCP to the upstream, dialling the pinned address when `--resolve` names the URL's
/// host and port. TLS above it still uses the URL's host for SNI and verification.
#[derive(Clone)]
pub(crate) struct PinnedConnector {
    inner: HttpConnector,
    pins: Arc<Vec<HostPin>>,
}

impl tower_service::Service<Uri> for PinnedConnector {
    type Response = TokioIo<TcpStream>;
    type Error = <HttpConnector as tower_service::Service<Uri>>::Error;
    type Future = BoxFuture<Self::Response, Self::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, dst: Uri) -> Self::Future {
        let dst = pinned_uri(&self.pins, dst);
        Box::pin(self.inner.call(dst))
    }
}

type BoxFuture<T, E> = Pin<Box<dyn Future<Output = Result<T, E>> + Send>>;

/// The URI to dial: the pinned address for a pinned host and port, else the URI itself.
fn pinned_uri(pins: &[HostPin], dst: Uri) -> Uri {
    let Some(host) = dst.host() else { return dst };
    let https = dst.scheme_str() == Some("https");
    let port = dst.port_u16().unwrap_or(if https { 443 } else { 80 });
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let Some(pin) = pins
        .iter()
        .find(|pin| pin.port == port && pin.host.eq_ignore_ascii_case(host))
    else {
        return dst;
    };
    // The connector only reads scheme, host and port; the TLS layer above kept the original.
    let scheme = if https { "https" } else { "http" };
    format!("{scheme}://{}/", pin.addr).parse().unwrap_or(dst)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_pins_parse_and_apply() {
        let pin: HostPin = "api.example.test:443=127.0.0.1:8443".parse().unwrap();
        assert_eq!(pin.host, "api.example.test");
        assert_eq!(pin.addr.port(), 8443);
        let pins = [pin];
        let uri: Uri = "https://API.example.test/v1/x".parse().unwrap();
        assert_eq!(
            pinned_uri(&pins, uri).to_string(),
            "https://127.0.0.1:8443/"
        );
        let other: Uri = "https://api.example.test:444/".parse().unwrap();
        assert_eq!(pinned_uri(&pins, other.clone()), other);
        for bad in ["x", "h:1=nope", "h=1.2.3.4:5", ":1=1.2.3.4:5"] {
            assert!(bad.parse::<HostPin>().is_err(), "{bad}");
        }
    }

    #[test]
    fn a_missing_ca_file_is_named() {
        let tls = UpstreamTls {
            extra_cas: vec!["/nonexistent/ca.pem".into()],
            resolve: Vec::new(),
        };
        let err = client_config(&tls).unwrap_err().to_string();
        assert!(err.contains("/nonexistent/ca.pem"), "{err}");
    }
}
