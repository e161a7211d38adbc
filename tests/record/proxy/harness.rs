//! Test harness: in-process upstreams and a proxy over real sockets, with a temp database.

use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tracer_record::proxy::{Proxy, ProxySettings, ProxyStats, Route};
use tracer_store::hops::StoredHop;
use tracer_store::{Recorder, Store, WriterReport};
use tracer_wire::hop::Role;

pub type TestBody = BoxBody<Bytes, Infallible>;

pub fn full(bytes: impl Into<Bytes>) -> TestBody {
    Full::new(bytes.into()).boxed()
}

/// Serves `handler` on 127.0.0.1:0 until the test ends; returns the address.
pub async fn spawn_upstream<F, Fut>(handler: F) -> SocketAddr
where
    F: Fn(Request<Incoming>) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Response<TestBody>> + Send + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let handler = Arc::new(handler);
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let handler = handler.clone();
            tokio::spawn(async move {
                let service = service_fn(move |req| {
                    let handler = handler.clone();
                    async move { Ok::<_, Infallible>(handler(req).await) }
                });
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    addr
}

/// An upstream that answers with the request's body and echoes `x-echo-*` headers.
pub async fn echo_upstream() -> SocketAddr {
    spawn_upstream(|req: Request<Incoming>| async move {
        let (parts, body) = req.into_parts();
        let bytes = body.collect().await.unwrap().to_bytes();
        let mut response = Response::new(full(bytes));
        for (name, value) in &parts.headers {
            if name.as_str().starts_with("x-echo-") || name == "content-encoding" {
                response.headers_mut().insert(name.clone(), value.clone());
            }
        }
        response
            .headers_mut()
            .insert("x-seen-path", parts.uri.to_string().parse().unwrap());
        let host = parts.headers.get("host").cloned();
        if let Some(host) = host {
            response.headers_mut().insert("x-seen-host", host);
        }
        response
            .headers_mut()
            .insert("set-cookie", "session=abc".parse().unwrap());
        response
    })
    .await
}

pub struct Harness {
    pub store: Store,
    pub addr: SocketAddr,
    stop: Option<oneshot::Sender<()>>,
    run: JoinHandle<ProxyStats>,
    writer: JoinHandle<WriterReport>,
    _dir: tempfile::TempDir,
}

impl Harness {
    pub async fn start(upstream: SocketAddr, settings: ProxySettings) -> Harness {
        Self::start_with_role(upstream, Role::Model, settings).await
    }

    pub async fn start_with_role(
        upstream: SocketAddr,
        role: Role,
        settings: ProxySettings,
    ) -> Harness {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("tracer.db")).await.unwrap();
        let route = Route::new(
            role.as_str(),
            "test",
            "127.0.0.1:0",
            &format!("http://{upstream}"),
        )
        .unwrap();
        let proxy = Proxy::bind(vec![route], settings).await.unwrap();
        let addr = proxy.routes()[0].listen;
        let (recorder, writer) = Recorder::spawn(store.clone()).unwrap();
        let (stop, stopped) = oneshot::channel::<()>();
        let run = tokio::spawn(proxy.run(recorder, async move {
            let _ = stopped.await;
        }));
        Harness {
            store,
            addr,
            stop: Some(stop),
            run,
            writer,
            _dir: dir,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Stops the proxy as Ctrl-C does and waits until every hop is written.
    pub async fn stop(mut self) -> (ProxyStats, WriterReport, Store, tempfile::TempDir) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let stats = self.run.await.unwrap();
        let report = self.writer.await.unwrap();
        (stats, report, self.store, self._dir)
    }
}

pub fn client() -> Client<HttpConnector, TestBody> {
    Client::builder(TokioExecutor::new()).build(HttpConnector::new())
}

/// Waits until the store holds `count` hops that are no longer in flight.
pub async fn settled_hops(store: &Store, count: usize) -> Vec<StoredHop> {
    for _ in 0..500 {
        let hops = store.all_hops().await.unwrap();
        if hops.len() >= count
            && hops
                .iter()
                .all(|h| h.state != tracer_wire::hop::HopState::InFlight)
        {
            return hops;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!(
        "expected {count} settled hops, have {:?}",
        store
            .all_hops()
            .await
            .unwrap()
            .iter()
            .map(|h| h.state)
            .collect::<Vec<_>>()
    );
}

/// Reads a header of a stored header list.
pub fn header<'a>(headers: &'a [tracer_wire::hop::Header], name: &str) -> Option<&'a [u8]> {
    headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case(name))
        .map(|h| h.value.as_slice())
}
