//! Shared parts of the HTTPS tests: a test CA (rcgen), TLS upstreams for `api.example.test`
//! (HTTP/2 or HTTP/1.1 by ALPN) with scripted handlers, and `tracer` run as a process.

use std::convert::Infallible;
use std::future::Future;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio::net::TcpListener;
use tracer_store::Store;
use tracer_store::hops::StoredHop;

pub const HOST: &str = "api.example.test";

pub type TestBody = BoxBody<Bytes, Infallible>;

pub fn full(bytes: impl Into<Bytes>) -> TestBody {
    Full::new(bytes.into()).boxed()
}

/// A CA made for one test, and a server certificate it signed.
pub struct TestPki {
    pub ca_pem: String,
    pub cert: CertificateDer<'static>,
    pub key: PrivatePkcs8KeyDer<'static>,
}

impl TestPki {
    pub fn new(names: &[&str]) -> TestPki {
        let ca_key = KeyPair::generate().unwrap();
        let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let serial: u32 = rand::random();
        ca.distinguished_name
            .push(DnType::CommonName, format!("tracer test CA {serial:08x}"));
        let ca_cert = ca.self_signed(&ca_key).unwrap();
        let issuer = Issuer::new(ca, ca_key);
        let leaf_key = KeyPair::generate().unwrap();
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let leaf = CertificateParams::new(names)
            .unwrap()
            .signed_by(&leaf_key, &issuer)
            .unwrap();
        TestPki {
            ca_pem: ca_cert.pem(),
            cert: leaf.der().clone(),
            key: PrivatePkcs8KeyDer::from(leaf_key.serialize_der()),
        }
    }

    /// A CA certificate that serves as its own server's certificate (for `names`): what
    /// verification refuses as `CaUsedAsEndEntity`.
    pub fn ca_as_server(names: &[&str]) -> TestPki {
        let key = KeyPair::generate().unwrap();
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let mut params = CertificateParams::new(names).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let cert = params.self_signed(&key).unwrap();
        TestPki {
            ca_pem: cert.pem(),
            cert: cert.der().clone(),
            key: PrivatePkcs8KeyDer::from(key.serialize_der()),
        }
    }

    pub fn write_ca(&self, dir: &Path, name: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, &self.ca_pem).unwrap();
        path
    }
}

/// A TLS upstream: where it listens and how many TLS handshakes it completed.
pub struct TlsUpstream {
    pub addr: SocketAddr,
    pub handshakes: Arc<AtomicUsize>,
}

/// Serves `handler` over TLS on 127.0.0.1:0 (ALPN `alpn`, e.g. h2 and http/1.1). The handler
/// sees which protocol was negotiated in the request's version.
pub async fn tls_upstream<F, Fut>(pki: &TestPki, alpn: &[&str], handler: F) -> TlsUpstream
where
    F: Fn(Request<Incoming>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Response<TestBody>> + Send + 'static,
{
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(server_config(pki, alpn)));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let handler = Arc::new(handler);
    let handshakes = Arc::new(AtomicUsize::new(0));
    let counter = handshakes.clone();
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let acceptor = acceptor.clone();
            let handler = handler.clone();
            let counter = counter.clone();
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(stream).await else {
                    return;
                };
                counter.fetch_add(1, Ordering::SeqCst);
                let h2 = tls.get_ref().1.alpn_protocol() == Some(b"h2");
                let service = service_fn(move |req| {
                    let handler = handler.clone();
                    async move { Ok::<_, Infallible>(handler(req).await) }
                });
                let io = TokioIo::new(tls);
                if h2 {
                    let _ = hyper::server::conn::http2::Builder::new(TokioExecutor::new())
                        .serve_connection(io, service)
                        .await;
                } else {
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(io, service)
                        .await;
                }
            });
        }
    });
    TlsUpstream { addr, handshakes }
}

/// A TLS front for a plain server (e.g. notes-server): TLS on 127.0.0.1:0, bytes relayed.
pub async fn tls_front(pki: &TestPki, target: SocketAddr) -> SocketAddr {
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(server_config(pki, &["http/1.1"])));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(stream).await else {
                    return;
                };
                let Ok(mut plain) = tokio::net::TcpStream::connect(target).await else {
                    return;
                };
                let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
            });
        }
    });
    addr
}

pub fn server_config(pki: &TestPki, alpn: &[&str]) -> rustls::ServerConfig {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![pki.cert.clone()],
            PrivateKeyDer::Pkcs8(pki.key.clone_key()),
        )
        .unwrap();
    config.alpn_protocols = alpn.iter().map(|p| p.as_bytes().to_vec()).collect();
    config
}

/// Serves `handler` over plain HTTP/1.1 on 127.0.0.1:0.
pub async fn plain_upstream<F, Fut>(handler: F) -> SocketAddr
where
    F: Fn(Request<Incoming>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Response<TestBody>> + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let handler = Arc::new(handler);
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let handler = handler.clone();
            tokio::spawn(async move {
                let service = service_fn(move |req| {
                    let handler = handler.clone();
                    async move { Ok::<_, Infallible>(handler(req).await) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    addr
}

/// `tracer` with `args` as a process writing to `db`; its route table (stdout) read until the
/// line naming `marker` so its listeners are bound.
pub struct TracerProcess {
    child: Option<Child>,
    pub stdout_lines: Vec<String>,
}

impl TracerProcess {
    pub fn spawn(db: &Path, args: &[&str], envs: &[(&str, &str)], lines: usize) -> TracerProcess {
        let mut command = Command::new(env!("CARGO_BIN_EXE_tracer"));
        command
            .arg("--db")
            .arg(db)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (name, value) in envs {
            command.env(name, value);
        }
        let mut child = command.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut reader = BufReader::new(stdout);
        let mut stdout_lines = Vec::new();
        while stdout_lines.len() < lines {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap() == 0 {
                let output = child.wait_with_output().unwrap();
                panic!(
                    "tracer exited early: {}\n{}",
                    stdout_lines.join(""),
                    String::from_utf8_lossy(&output.stderr)
                );
            }
            stdout_lines.push(line);
        }
        // Keep draining stdout so the process never blocks on a full pipe.
        std::thread::spawn(move || {
            let mut sink = String::new();
            while reader.read_line(&mut sink).is_ok_and(|n| n > 0) {
                sink.clear();
            }
        });
        TracerProcess {
            child: Some(child),
            stdout_lines,
        }
    }

    /// The address on the table row that starts with `name` (ROUTE column, then LISTEN).
    pub fn listen_of(&self, name: &str) -> SocketAddr {
        self.stdout_lines
            .iter()
            .find_map(|line| {
                let cells: Vec<&str> = line.split_whitespace().collect();
                (cells.first() == Some(&name))
                    .then(|| cells.iter().find_map(|cell| cell.parse().ok()))
                    .flatten()
            })
            .unwrap_or_else(|| panic!("no row `{name}` in {:?}", self.stdout_lines))
    }

    /// Ctrl-C, then the process's stderr once it has exited successfully.
    pub fn stop(self) -> String {
        self.stop_with(nix::sys::signal::Signal::SIGINT)
    }

    /// `signal`, then the process's stderr once it has exited successfully.
    pub fn stop_with(mut self, signal: nix::sys::signal::Signal) -> String {
        let child = self.child.take().unwrap();
        let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap());
        nix::sys::signal::kill(pid, signal).unwrap();
        let output = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr).to_string();
        assert!(output.status.success(), "{stderr}");
        assert!(stderr.contains(" 0 not written"), "{stderr}");
        stderr
    }
}

impl Drop for TracerProcess {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Every hop in the database, oldest first.
pub async fn hops_in(db: &Path) -> Vec<StoredHop> {
    let store = Store::open(db).await.unwrap();
    let hops = store.all_hops().await.unwrap();
    store.close().await;
    hops
}

/// A hyper client over plain TCP (to talk to tracer's listeners).
pub fn plain_client()
-> hyper_util::client::legacy::Client<hyper_util::client::legacy::connect::HttpConnector, TestBody>
{
    hyper_util::client::legacy::Client::builder(TokioExecutor::new())
        .build(hyper_util::client::legacy::connect::HttpConnector::new())
}
