//! The upstream's long model stream: about 14 MiB of OpenAI chat-completion chunks as SSE.

use std::convert::Infallible;

use bytes::Bytes;
use http::Response;
use http_body_util::{BodyExt, StreamBody};
use hyper::body::Frame;

use crate::upstream::UpstreamBody;

/// The route that answers the stream (a model request, as an agent sends it).
pub const PATH: &str = "/v1/chat/completions";
/// What the client sends for it.
pub const REQUEST: &str = r#"{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"Write the whole story, in as many words as you can."}]}"#;
/// The stream's size: events are added until it reaches this many bytes.
pub const TARGET_BYTES: usize = 14 * 1024 * 1024;
/// Events written in one frame (one write to the connection).
const EVENTS_PER_FRAME: usize = 4;

const WORDS: &str = "the agent read the notes file again and found the line about milk, so it \
    asked the model whether the list should keep its order or be sorted by aisle; the model \
    answered with a plan of three steps, each naming the tool it wanted the host to call and \
    the arguments it would pass, and then went on with the story of the long afternoon ";

/// One `data: {...}\n\n` event: a chat-completion chunk whose delta carries ~300 bytes of text.
fn event(seq: usize) -> String {
    let offset = seq % 40;
    let content = format!("[{seq}] {}", &WORDS[offset..offset + 290]);
    format!(
        "data: {{\"id\":\"chatcmpl-bench0001\",\"object\":\"chat.completion.chunk\",\"created\":1765000000,\
         \"model\":\"gpt-4o-mini-2024-07-18\",\"system_fingerprint\":\"fp_bench\",\"choices\":[{{\"index\":0,\
         \"delta\":{{\"content\":\"{content}\"}},\"logprobs\":null,\"finish_reason\":null}}]}}\n\n"
    )
}

fn last_events() -> String {
    "data: {\"id\":\"chatcmpl-bench0001\",\"object\":\"chat.completion.chunk\",\"created\":1765000000,\
     \"model\":\"gpt-4o-mini-2024-07-18\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\
     \"usage\":{\"prompt_tokens\":24,\"completion_tokens\":3500000,\"total_tokens\":3500024}}\n\n\
     data: [DONE]\n\n"
        .to_string()
}

/// The answer: `text/event-stream`, frames of `EVENTS_PER_FRAME` events until `TARGET_BYTES`.
pub fn response() -> Response<UpstreamBody> {
    let frames = futures_util::stream::unfold((0usize, 0usize), |(seq, written)| async move {
        if written >= TARGET_BYTES {
            return None;
        }
        let mut frame = String::new();
        for k in 0..EVENTS_PER_FRAME {
            frame.push_str(&event(seq + k));
        }
        if written + frame.len() >= TARGET_BYTES {
            frame.push_str(&last_events());
        }
        let next = (seq + EVENTS_PER_FRAME, written + frame.len());
        Some((Ok::<_, Infallible>(Frame::data(Bytes::from(frame))), next))
    });
    let mut response = Response::new(StreamBody::new(frames).boxed());
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/event-stream"),
    );
    response.headers_mut().insert(
        http::header::CACHE_CONTROL,
        http::HeaderValue::from_static("no-cache"),
    );
    response
}
