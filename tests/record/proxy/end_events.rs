//! A stream that reached its end event is complete: an upstream streams an answer and pauses
//! 50 ms before ending its body (as a real server does); the client reads the end event and
//! closes, as Codex does. The hop is `complete` with a note, the trace not failed. A client that
//! closes before the end event leaves the hop `aborted`.

use std::convert::Infallible;
use std::io::Write;
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use http::Request;
use http_body::Frame;
use http_body_util::{BodyExt, StreamBody};
use tracer_record::proxy::ProxySettings;
use tracer_store::hops::StoredHop;
use tracer_trace::{explain_trace, summarize};
use tracer_wire::hop::HopState;

use super::harness::{Harness, TestBody, client, full, settled_hops, spawn_upstream};

const RESPONSES: &[u8] =
    include_bytes!("../../fixtures/dialects/openai_responses_stream_tool_call.sse");
const ANTHROPIC: &[u8] = include_bytes!("../../fixtures/dialects/anthropic_stream_tool_use.sse");
const CHAT: &[u8] = include_bytes!("../../fixtures/dialects/openai_chat_stream_tool_call.sse");

/// How the upstream sends its answer: each chunk at once, then 50 ms, then the body's end.
#[derive(Clone)]
struct Answer {
    chunks: Vec<Vec<u8>>,
    content_encoding: Option<&'static str>,
}

/// The answer as one chunk per SSE event.
fn per_event(stream: &[u8]) -> Answer {
    let text = std::str::from_utf8(stream).unwrap();
    let chunks = text
        .split_inclusive("\n\n")
        .map(|event| event.as_bytes().to_vec())
        .collect();
    Answer {
        chunks,
        content_encoding: None,
    }
}

/// The answer gzipped as a server that flushes each write does: all its events in the first
/// chunk, the gzip stream's end (last block and trailer) only after the pause.
fn gzipped(stream: &[u8]) -> Answer {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(stream).unwrap();
    encoder.flush().unwrap();
    let events = encoder.get_ref().clone();
    let whole = encoder.finish().unwrap();
    Answer {
        chunks: vec![events.clone(), whole[events.len()..].to_vec()],
        content_encoding: Some("gzip"),
    }
}

async fn upstream(answer: Answer) -> std::net::SocketAddr {
    spawn_upstream(move |_req| {
        let answer = answer.clone();
        async move {
            let mut chunks = answer.chunks.clone();
            let last = chunks.pop().unwrap();
            let frames = futures_util::stream::iter(
                chunks
                    .into_iter()
                    .map(|c| Ok::<_, Infallible>(Frame::data(Bytes::from(c)))),
            )
            .chain(futures_util::stream::once(async move {
                tokio::time::sleep(Duration::from_millis(50)).await;
                Ok(Frame::data(Bytes::from(last)))
            }))
            // The body's own end comes after a second pause.
            .chain(futures_util::stream::unfold(true, |first| async move {
                if first {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                None::<(Result<Frame<Bytes>, Infallible>, bool)>
            }));
            let body: TestBody = BodyExt::boxed(StreamBody::new(frames));
            let mut response = hyper::Response::new(body);
            response
                .headers_mut()
                .insert("content-type", "text/event-stream".parse().unwrap());
            if let Some(coding) = answer.content_encoding {
                response
                    .headers_mut()
                    .insert("content-encoding", coding.parse().unwrap());
            }
            response
        }
    })
    .await
}

/// Sends one streamed request and reads its answer until `enough` bytes have come (or the
/// body's end), then closes the connection; returns the one hop recorded.
async fn client_closing_after(answer: Answer, path: &str, enough: usize) -> StoredHop {
    let harness = Harness::start(upstream(answer).await, ProxySettings::default()).await;
    let request = Request::post(harness.url(path))
        .header("content-type", "application/json")
        .body(full("{\"model\":\"m\",\"stream\":true}"))
        .unwrap();
    let mut response = client().request(request).await.unwrap();
    let mut read = 0;
    while read < enough {
        match response.body_mut().frame().await {
            Some(Ok(frame)) => read += frame.into_data().map_or(0, |d| d.len()),
            _ => break,
        }
    }
    drop(response);
    let hops = settled_hops(&harness.store, 1).await;
    harness.stop().await;
    hops.into_iter().next().unwrap()
}

/// The bytes of the answer's chunks but the last: everything up to the pause.
fn before_pause(answer: &Answer) -> usize {
    answer.chunks[..answer.chunks.len() - 1]
        .iter()
        .map(Vec::len)
        .sum()
}

fn assert_complete_after(hop: StoredHop, event: &str) {
    assert_eq!(hop.state, HopState::Complete, "{:?}", hop.end.error);
    assert_eq!(hop.end.error, None);
    let note = format!("the client stopped reading after the last event ({event})");
    assert_eq!(hop.end.note.as_deref(), Some(note.as_str()));
    let hops = [tracer_live::load::recorded(hop)];
    assert_eq!(summarize(&hops).status.as_str(), "ok");
    let messages = explain_trace(&hops);
    assert!(
        messages[1].explanation.contains(&note),
        "{}",
        messages[1].explanation
    );
}

fn assert_aborted(hop: StoredHop) {
    assert_eq!(hop.state, HopState::Aborted);
    assert_eq!(
        hop.end.error.as_deref(),
        Some("client went away mid-response")
    );
    assert_eq!(hop.end.note, None);
    assert_eq!(
        summarize(&[tracer_live::load::recorded(hop)])
            .status
            .as_str(),
        "failed"
    );
}

/// The answer with its last event (the end event) held back until after the pause: what a
/// client reads before it is not the end.
fn end_event_after_pause(stream: &[u8]) -> Answer {
    per_event(stream)
}

#[tokio::test]
async fn responses_read_to_response_completed_then_closed_is_complete() {
    let mut answer = per_event(RESPONSES);
    // Every event at once, the body's end after the pause.
    answer.chunks.push(Vec::new());
    let enough = before_pause(&answer);
    let hop = client_closing_after(answer, "/v1/responses", enough).await;
    assert_complete_after(hop, "response.completed");
}

#[tokio::test]
async fn responses_closed_before_response_completed_is_aborted() {
    let answer = end_event_after_pause(RESPONSES);
    let enough = before_pause(&answer);
    let hop = client_closing_after(answer, "/v1/responses", enough).await;
    assert_aborted(hop);
}

#[tokio::test]
async fn anthropic_read_to_message_stop_then_closed_is_complete_and_cut_before_is_aborted() {
    let mut answer = per_event(ANTHROPIC);
    answer.chunks.push(Vec::new());
    let enough = before_pause(&answer);
    assert_complete_after(
        client_closing_after(answer, "/v1/messages", enough).await,
        "message_stop",
    );
    let answer = end_event_after_pause(ANTHROPIC);
    let enough = before_pause(&answer);
    assert_aborted(client_closing_after(answer, "/v1/messages", enough).await);
}

#[tokio::test]
async fn chat_read_to_done_then_closed_is_complete_and_cut_before_is_aborted() {
    let mut answer = per_event(CHAT);
    answer.chunks.push(Vec::new());
    let enough = before_pause(&answer);
    assert_complete_after(
        client_closing_after(answer, "/v1/chat/completions", enough).await,
        "[DONE]",
    );
    let answer = end_event_after_pause(CHAT);
    let enough = before_pause(&answer);
    assert_aborted(client_closing_after(answer, "/v1/chat/completions", enough).await);
}

#[tokio::test]
async fn a_gzipped_stream_read_to_its_end_event_then_closed_is_complete() {
    let answer = gzipped(RESPONSES);
    let enough = before_pause(&answer);
    let hop = client_closing_after(answer, "/v1/responses", enough).await;
    // The stored bytes are what crossed the wire: the gzip stream without its end.
    assert!(hop.end.response_body.bytes.starts_with(&[0x1f, 0x8b]));
    assert_complete_after(hop, "response.completed");
}
