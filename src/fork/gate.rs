//! The fork's gate: a loopback server answering the requests the steer sends it, `/r/I/…` with
//! exchange I's recorded answer and `/e/I/…` with message N's edited answer (or the tool's
//! `--result`/`--error`).

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Limited};
use hyper::service::service_fn;
use tokio::net::TcpListener;

use super::plan::ForkPlan;
use crate::replay_server::{MAX_REQUEST_BYTES, Pace, ReplayBody, Reply};
use tracer_serve::{Shutdown, serve_http};

/// Answers on `listener` until `shutdown` asks.
pub async fn serve(plan: Arc<ForkPlan>, listener: TcpListener, shutdown: Shutdown) {
    let make_service = move |_peer| {
        let plan = Arc::clone(&plan);
        service_fn(move |request: http::Request<hyper::body::Incoming>| {
            let plan = Arc::clone(&plan);
            async move { Ok::<_, Infallible>(answer(&plan, request).await) }
        })
    };
    serve_http(listener, make_service, shutdown, Duration::from_secs(2)).await;
}

async fn answer(
    plan: &ForkPlan,
    request: http::Request<hyper::body::Incoming>,
) -> http::Response<ReplayBody> {
    let path = request.uri().path().to_string();
    let body: Bytes = match Limited::new(request.into_body(), MAX_REQUEST_BYTES)
        .collect()
        .await
    {
        Ok(collected) => collected.to_bytes(),
        Err(error) => return refusal(413, &format!("the request could not be read: {error}")),
    };
    let mut parts = path.trim_start_matches('/').splitn(3, '/');
    let (kind, index) = (
        parts.next(),
        parts.next().and_then(|i| i.parse::<usize>().ok()),
    );
    let Some(exchange) = index.and_then(|i| plan.exchanges.get(i)) else {
        return refusal(404, &format!("the fork's gate has no recording for {path}"));
    };
    let recorded = exchange.recording.reply(&plan.original, &body);
    let reply = match kind {
        Some("r") => recorded,
        Some("e") => edited(plan, recorded, &body),
        _ => return refusal(404, &format!("the fork's gate has no recording for {path}")),
    };
    reply.into_response(Pace::Fast)
}

/// Message N's answer as edited: the tool's return, or the edited body.
fn edited(plan: &ForkPlan, mut reply: Reply, request_body: &[u8]) -> Reply {
    let body = match plan.edits.tool_answer(request_body) {
        Some(answer) => {
            reply.status = 200;
            answer
        }
        None => match &plan.edited_body {
            Some(body) => body.clone(),
            None => return reply,
        },
    };
    reply.headers.retain(|(name, _)| {
        !name.eq_ignore_ascii_case("content-type") && !name.eq_ignore_ascii_case("content-encoding")
    });
    reply
        .headers
        .push(("content-type".into(), b"application/json".to_vec()));
    reply.headers.push((
        "x-tracer-fork".into(),
        format!("message {} edited", plan.at).into_bytes(),
    ));
    reply.body = body;
    reply.chunks.clear();
    reply
}

fn refusal(status: u16, message: &str) -> http::Response<ReplayBody> {
    Reply {
        status,
        headers: vec![("content-type".into(), b"application/json".to_vec())],
        body: serde_json::to_vec(&serde_json::json!({ "error": message })).unwrap_or_default(),
        chunks: Vec::new(),
    }
    .into_response(Pace::Fast)
}
