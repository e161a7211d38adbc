//! The floors under tracer's figures (diagnostic columns): hyper alone, hyper serving and
//! hyper-util's pooled client forwarding on tracer's own accept loop with nothing teed, journaled
//! or recorded (what this costs above nginx is the stack's own price), and a sink that keeps
//! nothing (tracer's capture without the journal or the store).

use std::convert::Infallible;
use std::time::Duration;

use anyhow::{Context, bail};
use http::{Request, Response, StatusCode, Uri};
use http_body_util::BodyExt;
use http_body_util::combinators::UnsyncBoxBody;
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use tracer_serve::{Shutdown, serve_http};

/// A hop sink that keeps nothing: every hop is captured as usual, then dropped.
pub struct Nowhere;

impl tracer_wire::hop::HopSink for Nowhere {
    fn start(&self, _: tracer_wire::hop::HopStart) -> bool {
        true
    }
    fn request_done(&self, _: tracer_wire::hop::RequestDone) {}
    fn end(&self, _: tracer_wire::hop::HopEnd) {}
    fn log_line(&self, _: tracer_wire::hop::ServerLogLine) {}
}

/// The flag that turns this example into the hyper-alone child.
pub const CHILD_FLAG: &str = "--child-hyper-alone";

type Upstream = Client<HttpConnector, Incoming>;
type Answer = UnsyncBoxBody<bytes::Bytes, hyper::Error>;

/// Child mode's entry: `UPSTREAM`; prints `LISTEN addr`, stops on stdin close and prints `DONE`.
pub fn child_main(args: &[String]) -> anyhow::Result<()> {
    let [upstream] = args else {
        bail!("hyper-alone child mode takes UPSTREAM");
    };
    let upstream = upstream.clone();
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
            println!("LISTEN {}", listener.local_addr()?);
            let mut connector = HttpConnector::new();
            connector.set_nodelay(true);
            let client: Upstream = Client::builder(TokioExecutor::new())
                .timer(TokioTimer::new())
                .pool_timer(TokioTimer::new())
                .pool_idle_timeout(Duration::from_secs(90))
                .build(connector);
            let make_service = move |_peer| {
                let client = client.clone();
                let upstream = upstream.clone();
                service_fn(move |request| forward(client.clone(), upstream.clone(), request))
            };
            let stop = Shutdown::new(crate::targets::stdin_closed_or_ctrl_c());
            let stats = serve_http(listener, make_service, stop, Duration::from_secs(5)).await;
            println!(
                "DONE hops_written=0 hops_not_written=0 connections={} cut_off={}",
                stats.connections, stats.cut_off
            );
            anyhow::Ok(())
        })
        .context("the hyper-alone child")
}

/// Forwards one request to the upstream as it came (path and query kept), streaming both bodies.
async fn forward(
    client: Upstream,
    upstream: String,
    request: Request<Incoming>,
) -> Result<Response<Answer>, Infallible> {
    let (mut parts, body) = request.into_parts();
    let path = parts.uri.path_and_query().map_or("/", |pq| pq.as_str());
    let Ok(uri) = format!("http://{upstream}{path}").parse::<Uri>() else {
        return Ok(refusal(StatusCode::BAD_REQUEST));
    };
    parts.uri = uri;
    parts.headers.remove(http::header::CONNECTION);
    match client.request(Request::from_parts(parts, body)).await {
        Ok(response) => Ok(response.map(BodyExt::boxed_unsync)),
        Err(_) => Ok(refusal(StatusCode::BAD_GATEWAY)),
    }
}

fn refusal(status: StatusCode) -> Response<Answer> {
    let mut response = Response::new(
        http_body_util::Empty::new()
            .map_err(|never| match never {})
            .boxed_unsync(),
    );
    *response.status_mut() = status;
    response
}

/// The tracer columns that explain the figures: store detached, sink discards, no grouping, and
/// the main runtime on one thread.
pub fn tracer_variants() -> [(&'static str, crate::targets::Variant); 4] {
    use crate::targets;
    [
        (
            "tracer, store detached",
            targets::Variant {
                capacity: 0,
                ..targets::Variant::CLI
            },
        ),
        (
            "tracer, sink discards",
            targets::Variant {
                discard: true,
                ..targets::Variant::CLI
            },
        ),
        (
            "tracer, no grouping",
            targets::Variant {
                grouping: false,
                ..targets::Variant::CLI
            },
        ),
        (
            "tracer, 1 thread",
            targets::Variant {
                one_thread: true,
                ..targets::Variant::CLI
            },
        ),
    ]
}
