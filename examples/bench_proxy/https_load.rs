//! The HTTPS columns' load: keep-alive HTTP/1.1 connections reached directly over TLS, through a
//! reverse proxy in plain HTTP, or through a forward proxy's `CONNECT` tunnel with TLS inside.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use bytes::Bytes;
use http::Request;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::{self, SendRequest};
use hyper_util::rt::TokioIo;
use rustls::pki_types::ServerName;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::load::LoadCell;
use crate::upstream::CHAT_REQUEST;

/// How a worker reaches the upstream.
#[derive(Clone)]
pub enum Dial {
    /// Plain HTTP to this address (tracer's reverse route, which speaks TLS upstream).
    Plain(SocketAddr),
    /// TLS straight to the upstream.
    Tls {
        addr: SocketAddr,
        config: Arc<rustls::ClientConfig>,
    },
    /// `CONNECT target` on a forward proxy, then TLS to `target` inside the tunnel, trusting the
    /// proxy's CA.
    Tunnel {
        proxy: SocketAddr,
        target: SocketAddr,
        config: Arc<rustls::ClientConfig>,
    },
}

type Sender = SendRequest<Full<Bytes>>;

impl Dial {
    /// The `Host` the requests carry.
    fn host(&self) -> SocketAddr {
        match self {
            Dial::Plain(addr) | Dial::Tls { addr, .. } => *addr,
            Dial::Tunnel { target, .. } => *target,
        }
    }

    async fn connect(&self) -> anyhow::Result<Sender> {
        match self {
            Dial::Plain(addr) => handshake(TcpStream::connect(addr).await?).await,
            Dial::Tls { addr, config } => {
                let stream = TcpStream::connect(addr).await?;
                handshake(tls(stream, *addr, config).await?).await
            }
            Dial::Tunnel {
                proxy,
                target,
                config,
            } => {
                let mut stream = TcpStream::connect(proxy).await?;
                stream.set_nodelay(true)?;
                let ask = format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n");
                stream.write_all(ask.as_bytes()).await?;
                read_connect_reply(&mut stream).await?;
                handshake(tls(stream, *target, config).await?).await
            }
        }
    }
}

async fn tls(
    stream: TcpStream,
    addr: SocketAddr,
    config: &Arc<rustls::ClientConfig>,
) -> anyhow::Result<tokio_rustls::client::TlsStream<TcpStream>> {
    stream.set_nodelay(true)?;
    let name = ServerName::IpAddress(addr.ip().into());
    Ok(tokio_rustls::TlsConnector::from(config.clone())
        .connect(name, stream)
        .await?)
}

/// Reads the proxy's answer to CONNECT up to its blank line; anything but 2xx is an error.
async fn read_connect_reply(stream: &mut TcpStream) -> anyhow::Result<()> {
    let mut head = Vec::with_capacity(128);
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if head.len() > 8192 || stream.read(&mut byte).await? == 0 {
            bail!("the proxy closed or rambled before answering CONNECT");
        }
        head.push(byte[0]);
    }
    let status_ok = head.starts_with(b"HTTP/1.1 2") || head.starts_with(b"HTTP/1.0 2");
    if !status_ok {
        bail!(
            "CONNECT refused: {}",
            String::from_utf8_lossy(&head).lines().next().unwrap_or("")
        );
    }
    Ok(())
}

async fn handshake<IO>(io: IO) -> anyhow::Result<Sender>
where
    IO: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (sender, connection) = http1::handshake(TokioIo::new(io)).await?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(sender)
}

/// A rustls client trusting only the PEM certificates in `ca_pem` (HTTP/1.1, no ALPN).
pub fn client_config(ca_pem: &[u8]) -> anyhow::Result<Arc<rustls::ClientConfig>> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(ca_pem) {
        roots.add(cert.context("reading a CA certificate")?)?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}

/// Checks that one request goes through, naming what failed.
pub async fn probe(dial: &Dial) -> anyhow::Result<()> {
    let mut sender = dial.connect().await?;
    sender.ready().await?;
    let response = sender.send_request(chat_request(dial.host())?).await?;
    let status = response.status();
    response.into_body().collect().await?;
    anyhow::ensure!(status == http::StatusCode::OK, "answered {status}");
    Ok(())
}

fn chat_request(host: SocketAddr) -> anyhow::Result<Request<Full<Bytes>>> {
    Ok(Request::post("/v1/chat")
        .header(http::header::HOST, host.to_string())
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::from_static(CHAT_REQUEST.as_bytes())))?)
}

/// `concurrency` connections each send the JSON exchange back to back for `duration`.
pub async fn json_load(dial: &Dial, concurrency: usize, duration: Duration) -> LoadCell {
    let started = Instant::now();
    let deadline = started + duration;
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..concurrency {
        workers.spawn(worker(dial.clone(), deadline, concurrency == 1));
    }
    let mut cell = LoadCell::default();
    while let Some(done) = workers.join_next().await {
        match done {
            Ok(worker) => {
                cell.sent += worker.sent;
                cell.ok += worker.ok;
                cell.errors += worker.errors;
                cell.first_byte.extend(worker.first_byte);
            }
            Err(_) => cell.errors += 1,
        }
    }
    cell.elapsed = started.elapsed();
    cell
}

async fn worker(dial: Dial, deadline: Instant, keep_first_byte: bool) -> LoadCell {
    let mut cell = LoadCell::default();
    let mut sender: Option<Sender> = None;
    while Instant::now() < deadline && cell.first_byte.len() < 1_000_000 {
        let mut connection = match sender.take() {
            Some(connection) => connection,
            None => match dial.connect().await {
                Ok(connection) => connection,
                Err(_) => {
                    cell.errors += 1;
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
            },
        };
        if connection.ready().await.is_err() {
            continue;
        }
        let Ok(request) = chat_request(dial.host()) else {
            break;
        };
        let sent_at = Instant::now();
        cell.sent += 1;
        let Ok(response) = connection.send_request(request).await else {
            cell.errors += 1;
            continue;
        };
        let first_byte = sent_at.elapsed();
        let ok = response.status() == http::StatusCode::OK;
        match response.into_body().collect().await {
            Ok(_) if ok => {
                cell.ok += 1;
                if keep_first_byte {
                    cell.first_byte.push(first_byte);
                }
                sender = Some(connection);
            }
            Ok(_) => {
                cell.errors += 1;
                sender = Some(connection);
            }
            Err(_) => cell.errors += 1,
        }
    }
    cell
}
