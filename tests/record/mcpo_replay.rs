//! mcpo's recorded hops (tests/fixtures/mcpo/hops.json) replayed through the real proxy: a double
//! of mcpo makes the MCP calls it made (start-up, its standing `GET /mcp`, a `tools/call` per
//! REST call) and answers the REST calls as it did, a double of the phonebook answers as it did.
//! Then tracer's reading is checked: the OpenAPI document, REST call → `tools/call` in one trace
//! each, the 422 read as an error, lanes named by route, no trace held by the standing stream.
//! The same checks run on real mcpo in `interop_mcpo`.

use std::convert::Infallible;
use std::path::Path;
use std::process::{Child, Command};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::Response;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::Frame;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

type Body = http_body_util::Either<Full<Bytes>, StreamBody<Chunks>>;
type Chunks = futures_util::stream::BoxStream<'static, Result<Frame<Bytes>, Infallible>>;

use crate::mcpo_checks::check_mcpo_reading;

const FIXTURE: &str = include_str!("../fixtures/mcpo/hops.json");

pub fn free_port() -> u16 {
    crate::free_ports::free_port()
}

/// `tracer proxy` with an `mcp:phonebook` and an `other:mcpo` route; waits until both listen.
pub async fn start_tracer(db: &Path, mcp: (u16, u16), mcpo: (u16, u16)) -> Child {
    let proxy = Command::new(env!("CARGO_BIN_EXE_tracer"))
        .arg("--db")
        .arg(db)
        .args(["proxy", "--route"])
        .arg(format!(
            "mcp:phonebook=127.0.0.1:{}=http://127.0.0.1:{}",
            mcp.0, mcp.1
        ))
        .arg("--route")
        .arg(format!(
            "other:mcpo=127.0.0.1:{}=http://127.0.0.1:{}",
            mcpo.0, mcpo.1
        ))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    for port in [mcp.0, mcpo.0] {
        for _ in 0..400 {
            if TcpStream::connect(("127.0.0.1", port)).await.is_ok() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }
    proxy
}

/// Stops the proxy as Ctrl-C does, so it writes its last hops.
pub fn stop_tracer(mut proxy: Child) {
    let pid = nix::unistd::Pid::from_raw(i32::try_from(proxy.id()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    assert!(proxy.wait().unwrap().success());
}

/// Sends one request (`connection: close`) and returns the status and the raw answer.
pub async fn send(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(String, String)],
    body: &str,
) -> (u16, String) {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let mut head =
        format!("{method} {path} HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\nconnection: close\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!("content-length: {}\r\n\r\n{body}", body.len()));
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    tokio::time::timeout(Duration::from_secs(30), stream.read_to_end(&mut raw))
        .await
        .expect("an answer within 30 s")
        .unwrap();
    let raw = String::from_utf8_lossy(&raw).into_owned();
    let status = raw
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, raw)
}

/// Opens a GET stream and returns it once its head came (the caller keeps it open).
async fn open_stream(port: u16, path: &str, headers: &[(String, String)]) -> TcpStream {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let mut head = format!("GET {path} HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 1024];
    while !String::from_utf8_lossy(&seen).contains("\r\n\r\n") {
        let n = stream.read(&mut buf).await.unwrap();
        assert!(n > 0, "the stream closed before its head");
        seen.extend_from_slice(&buf[..n]);
    }
    stream
}

/// A recorded hop's request headers worth sending again (not the connection's own).
fn replayed_headers(hop: &Value) -> Vec<(String, String)> {
    hop["request_headers"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|h| {
            Some((
                h["name"].as_str()?.to_string(),
                h["value"].as_str()?.to_string(),
            ))
        })
        .filter(|(name, _)| {
            !matches!(
                name.as_str(),
                "host" | "content-length" | "connection" | "accept-encoding"
            )
        })
        .collect()
}

fn response_header<'a>(hop: &'a Value, name: &str) -> Option<&'a str> {
    hop["response_headers"]
        .as_array()?
        .iter()
        .find(|h| h["name"] == name)
        .and_then(|h| h["value"].as_str())
}

fn jsonrpc_method(body: &str) -> String {
    serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v["method"].as_str().map(str::to_string))
        .unwrap_or_default()
}

/// Serves `answer(method, path, body)` on a fresh listener: a recorded hop to answer as, or
/// none for a standing stream held open.
async fn serve<F>(answer: F) -> u16
where
    F: Fn(&str, &str, &str) -> Option<Value> + Send + Sync + 'static,
{
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let answer = Arc::new(answer);
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let answer = answer.clone();
            tokio::spawn(async move {
                let service = service_fn(move |req: http::Request<hyper::body::Incoming>| {
                    let answer = answer.clone();
                    async move {
                        let (method, path) =
                            (req.method().to_string(), req.uri().path().to_string());
                        let body = req.into_body().collect().await.unwrap().to_bytes();
                        let body = String::from_utf8_lossy(&body).into_owned();
                        let Some(hop) = answer(&method, &path, &body) else {
                            let forever: Chunks =
                                Box::pin(futures_util::stream::unfold((), |_| async {
                                    tokio::time::sleep(Duration::from_secs(3600)).await;
                                    None
                                }));
                            let response = Response::builder()
                                .header("content-type", "text/event-stream")
                                .body(Body::Right(StreamBody::new(forever)))
                                .unwrap();
                            return Ok::<_, Infallible>(response);
                        };
                        let mut response = Response::builder()
                            .status(u16::try_from(hop["status"].as_u64().unwrap_or(200)).unwrap());
                        for name in ["content-type", "mcp-session-id"] {
                            if let Some(value) = response_header(&hop, name) {
                                response = response.header(name, value);
                            }
                        }
                        let text = hop["response_body"]
                            .as_str()
                            .unwrap_or_default()
                            .to_string();
                        Ok(response
                            .body(Body::Left(Full::new(Bytes::from(text))))
                            .unwrap())
                    }
                });
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    port
}

#[tokio::test(flavor = "multi_thread")]
async fn mcpo_hops_replayed_through_the_proxy_read_as_a_tool_server() {
    let hops: Vec<Value> = serde_json::from_str(FIXTURE).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let phonebook_hops: Vec<Value> = hops
        .iter()
        .filter(|h| h["route"] == "phonebook")
        .cloned()
        .collect();
    let phonebook = serve(move |method, _path, body| {
        let rpc = jsonrpc_method(body);
        phonebook_hops
            .iter()
            .find(|h| {
                h["method"] == method && jsonrpc_method(h["request_body"].as_str().unwrap()) == rpc
            })
            .filter(|_| method == "POST")
            .cloned()
    })
    .await;
    let (tracer_mcp, tracer_mcpo) = (free_port(), free_port());
    // The mcpo double: a REST call that reached MCP makes its recorded tools/call first.
    let recorded = hops.clone();
    let mcpo = serve(move |method, path, body| {
        let at = recorded.iter().position(|h| {
            h["route"] == "mcpo"
                && h["method"] == method
                && h["path"] == path
                && h["request_body"] == body
        })?;
        let hop = recorded[at].clone();
        if let Some(next) = recorded
            .get(at + 1)
            .filter(|n| n["route"] == "phonebook" && hop["status"] == 200)
        {
            let (headers, body) = (
                replayed_headers(next),
                next["request_body"].as_str().unwrap().to_string(),
            );
            // The answer waits for the MCP call, as mcpo's does.
            tokio::task::block_in_place(|| {
                tokio::runtime::Handle::current()
                    .block_on(send(tracer_mcp, "POST", "/mcp", &headers, &body))
            });
        }
        Some(hop)
    })
    .await;
    let proxy = start_tracer(&db, (tracer_mcp, phonebook), (tracer_mcpo, mcpo)).await;
    // mcpo's start-up: initialize, initialized, its standing stream, tools/list.
    let mut standing = None;
    for hop in hops.iter().take_while(|h| h["route"] == "phonebook") {
        let headers = replayed_headers(hop);
        if hop["method"] == "GET" {
            standing = Some(open_stream(tracer_mcp, "/mcp", &headers).await);
        } else {
            send(
                tracer_mcp,
                "POST",
                "/mcp",
                &headers,
                hop["request_body"].as_str().unwrap(),
            )
            .await;
        }
    }
    // The host's requests to mcpo, as recorded (a traceparent each).
    for hop in hops.iter().filter(|h| h["route"] == "mcpo") {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let path = hop["path"].as_str().unwrap();
        let (status, _) = send(
            tracer_mcpo,
            hop["method"].as_str().unwrap(),
            path,
            &replayed_headers(hop),
            hop["request_body"].as_str().unwrap(),
        )
        .await;
        assert_eq!(u64::from(status), hop["status"].as_u64().unwrap(), "{path}");
    }
    tokio::time::sleep(Duration::from_millis(800)).await;
    check_mcpo_reading(&db);
    drop(standing);
    tokio::time::sleep(Duration::from_millis(500)).await;
    stop_tracer(proxy);
    check_mcpo_reading(&db);
}
