//! `tracer proxy` as a process for the exporter tests: an agent route in front of a tiny agent
//! (each `POST /agent` is a trace of one hop), or one route of another role, flags and
//! environment as a user gives them.

use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use serde_json::Value;

/// An agent that answers `{"message": m}` with `{"reply": "done: m"}`.
pub async fn tiny_agent() -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let service = service_fn(|req: hyper::Request<hyper::body::Incoming>| async move {
                    let body = req.into_body().collect().await.unwrap().to_bytes();
                    let asked: Value = serde_json::from_slice(&body).unwrap_or_default();
                    let reply = serde_json::json!({
                        "reply": format!("done: {}", asked["message"].as_str().unwrap_or("")),
                        "tool_calls": [],
                    });
                    let mut response =
                        hyper::Response::new(Full::new(Bytes::from(reply.to_string())));
                    response
                        .headers_mut()
                        .insert("content-type", "application/json".parse().unwrap());
                    Ok::<_, std::convert::Infallible>(response)
                });
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    addr
}

pub struct TracerProxy {
    child: Option<Child>,
    pub agent: String,
    /// The route's listening address (`127.0.0.1:PORT`).
    pub listen: String,
    pub db: PathBuf,
    stderr: Arc<Mutex<String>>,
    /// The thread that reads stderr; it ends when the pipe closes.
    stderr_reader: Option<std::thread::JoinHandle<()>>,
}

/// The OTEL_* variables a developer's shell may hold, removed so tests see only their own.
const OTEL_VARS: [&str; 12] = [
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_HEADERS",
    "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
    "OTEL_EXPORTER_OTLP_COMPRESSION",
    "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION",
    "OTEL_EXPORTER_OTLP_PROTOCOL",
    "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
    "OTEL_EXPORTER_OTLP_TIMEOUT",
    "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
    "OTEL_SERVICE_NAME",
    "OTEL_RESOURCE_ATTRIBUTES",
];

/// `tracer` with a clean OTEL environment plus `env`.
pub fn tracer(db: &Path, env: &[(&str, &str)]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tracer"));
    command.arg("--db").arg(db);
    for name in OTEL_VARS {
        command.env_remove(name);
    }
    command.envs(env.iter().copied());
    command
}

impl TracerProxy {
    /// Starts `tracer proxy` in front of `agent` with `args` (e.g. `--otlp URL`).
    pub fn start(dir: &Path, agent: SocketAddr, args: &[&str], env: &[(&str, &str)]) -> Self {
        Self::start_route(dir, "agent", agent, args, env)
    }

    /// Starts `tracer proxy` with one route of `role` in front of `upstream`.
    pub fn start_route(
        dir: &Path,
        role: &str,
        upstream: SocketAddr,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Self {
        let db = dir.join("tracer.db");
        let mut child = tracer(&db, env)
            .args([
                "proxy",
                "--route",
                &format!("{role}=127.0.0.1:0=http://{upstream}"),
            ])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut pipe = child.stderr.take().unwrap();
        let sink = stderr.clone();
        let stderr_reader = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut listen = None;
        for line in lines.by_ref() {
            let line = line.unwrap();
            if line.trim_start().starts_with(&format!("{role} ")) {
                listen = line.split_whitespace().nth(2).map(str::to_string);
            }
            if line.starts_with("Ctrl-C") {
                break;
            }
        }
        std::thread::spawn(move || lines.for_each(drop));
        let listen = listen.unwrap_or_else(|| panic!("no route table: {}", stderr.lock().unwrap()));
        TracerProxy {
            child: Some(child),
            agent: format!("http://{listen}/agent"),
            listen,
            db,
            stderr,
            stderr_reader: Some(stderr_reader),
        }
    }

    /// Sends `POST /agent {"message": message}` through the proxy; returns the reply.
    pub async fn ask(&self, message: &str) -> String {
        let client =
            hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
                .build_http::<Full<Bytes>>();
        let body = serde_json::json!({ "message": message }).to_string();
        let request = hyper::Request::post(self.agent.as_str())
            .header("content-type", "application/json")
            .body(Full::new(Bytes::from(body)))
            .unwrap();
        let response = tokio::time::timeout(Duration::from_secs(20), client.request(request))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(response.status(), 200);
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        String::from_utf8(bytes.to_vec()).unwrap()
    }

    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Stops it as Ctrl-C does; returns what it wrote on stderr.
    pub async fn stop(mut self) -> String {
        let mut child = self.child.take().unwrap();
        Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap();
        let reader = self.stderr_reader.take().unwrap();
        let status = tokio::task::spawn_blocking(move || {
            let status = child.wait().unwrap();
            // The reader has the last bytes once the pipe closes.
            reader.join().unwrap();
            status
        })
        .await
        .unwrap();
        let text = self.stderr();
        assert!(status.success(), "{status:?}: {text}");
        text
    }
}

impl Drop for TracerProxy {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The trace ids in a database, newest first.
pub async fn trace_ids(db: &Path) -> Vec<String> {
    let store = tracer_store::Store::open(db).await.unwrap();
    let ids = store
        .traces()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.id)
        .collect();
    store.close().await;
    ids
}

/// `(state, count)` of the rows of `otlp_spans`, and the `spans_not_exported` counter.
pub async fn export_rows(db: &Path) -> (std::collections::HashMap<String, i64>, i64) {
    let store = tracer_store::Store::open(db).await.unwrap();
    let counts = store.span_counts(None).await.unwrap();
    let counter = store
        .counter(tracer_store::exports::SPANS_NOT_EXPORTED)
        .await
        .unwrap();
    store.close().await;
    (counts, counter)
}
