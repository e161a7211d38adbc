//! End events found in recorded streams, whole and cut, fed at once and a byte at a time.

use std::io::Write;

use super::*;

macro_rules! fixture {
    ($name:literal) => {
        include_bytes!(concat!("../../../../tests/fixtures/dialects/", $name)).as_slice()
    };
}

const SSE: Option<&str> = Some("text/event-stream");

fn end_of(content_type: Option<&str>, body: &[u8]) -> Option<EndEvent> {
    let mut at_once = EndWatch::for_body(content_type, None).unwrap();
    at_once.push(body);
    let mut bytewise = EndWatch::for_body(content_type, None).unwrap();
    for byte in body {
        bytewise.push(std::slice::from_ref(byte));
    }
    let end = at_once.finish(None);
    assert_eq!(bytewise.finish(None), end, "fed a byte at a time");
    end
}

#[test]
fn each_api_ends_with_its_event() {
    let cases: [(Option<&str>, &[u8], Option<EndEvent>); 8] = [
        (
            SSE,
            fixture!("openai_responses_stream_tool_call.sse"),
            Some(EndEvent::ResponseCompleted),
        ),
        (SSE, fixture!("openai_responses_stream_cut.sse"), None),
        (
            SSE,
            fixture!("anthropic_stream_tool_use.sse"),
            Some(EndEvent::MessageStop),
        ),
        (
            SSE,
            fixture!("openai_chat_stream_tool_call.sse"),
            Some(EndEvent::Done),
        ),
        (SSE, fixture!("openai_chat_stream_cut.sse"), None),
        (
            Some("application/x-ndjson"),
            fixture!("ollama_chat_stream_text.ndjson"),
            Some(EndEvent::OllamaDone),
        ),
        (
            Some("application/x-ndjson"),
            fixture!("ollama_chat_stream_cut.ndjson"),
            None,
        ),
        (None, fixture!("ollama_chat_stream_cut.ndjson"), None),
    ];
    for (i, (content_type, body, expected)) in cases.into_iter().enumerate() {
        assert_eq!(end_of(content_type, body), expected, "case {i}");
    }
}

#[test]
fn anthropic_stops_before_its_last_blank_line_or_after_a_ping() {
    let body = b"event: message_delta\ndata: {\"type\":\"message_delta\"}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n";
    assert_eq!(end_of(SSE, body), Some(EndEvent::MessageStop));
    let pinged = b"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n: ping\n\n";
    assert_eq!(end_of(SSE, pinged), Some(EndEvent::MessageStop));
    let cut = b"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\nevent: message_delta\ndata: {\"ty";
    assert_eq!(end_of(SSE, cut), None);
}

#[test]
fn a_huge_completed_event_is_still_seen() {
    let text = "buy milk ".repeat(20_000);
    let body = format!(
        "event: response.output_text.delta\ndata: {{\"type\":\"response.output_text.delta\"}}\n\n\
         data: {{\"type\":\"response.completed\",\"response\":{{\"output_text\":\"{text}\"}}}}\n\n"
    );
    assert_eq!(
        end_of(SSE, body.as_bytes()),
        Some(EndEvent::ResponseCompleted)
    );
    let cut = &body.as_bytes()[..body.len() - 10];
    assert_eq!(end_of(SSE, cut), None, "cut inside the event");
}

#[test]
fn gemini_ends_with_a_finish_reason_in_sse_and_json_arrays() {
    let chunk = |text: &str, finish: &str| {
        format!(
            "{{\"candidates\":[{{\"content\":{{\"parts\":[{{\"text\":\"{text}\"}}],\"role\":\"model\"}}{finish}}}]}}"
        )
    };
    let sse = format!(
        "data: {}\r\n\r\ndata: {}\r\n\r\n",
        chunk("Added", ""),
        chunk(" buy milk.", ",\"finishReason\":\"STOP\"")
    );
    assert_eq!(end_of(SSE, sse.as_bytes()), Some(EndEvent::FinishReason));
    let unfinished = format!("data: {}\r\n\r\n", chunk("Added", ""));
    assert_eq!(end_of(SSE, unfinished.as_bytes()), None);
    let code_assist = format!(
        "data: {{\"response\":{}}}\n\n",
        chunk("x", ",\"finishReason\":\"STOP\"")
    );
    assert_eq!(
        end_of(SSE, code_assist.as_bytes()),
        Some(EndEvent::FinishReason)
    );
    let array = format!(
        "[{}\n,\r\n{}]",
        chunk("a]", ""),
        chunk("b", ",\"finishReason\":\"STOP\"")
    );
    let json = Some("application/json; charset=UTF-8");
    assert_eq!(end_of(json, array.as_bytes()), Some(EndEvent::JsonClosed));
    assert_eq!(end_of(json, &array.as_bytes()[..array.len() - 1]), None);
    assert_eq!(
        end_of(json, &array.as_bytes()[..20]),
        None,
        "a ] inside a string"
    );
}

#[test]
fn a_compressed_stream_is_read_from_its_whole_capture() {
    let body = fixture!("openai_responses_stream_tool_call.sse");
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(body).unwrap();
    let gzipped = encoder.finish().unwrap();
    let mut watch = EndWatch::for_body(SSE, Some("gzip")).unwrap();
    watch.push(&gzipped);
    let kept = BodyCapture::whole(gzipped.clone());
    assert_eq!(watch.finish(Some(&kept)), Some(EndEvent::ResponseCompleted));
    let watch = EndWatch::for_body(SSE, Some("gzip")).unwrap();
    assert_eq!(watch.finish(None), None, "no whole capture, no answer");
    let headers = [
        Header::new("Content-Type", "text/event-stream"),
        Header::new("Content-Encoding", "gzip"),
    ];
    assert_eq!(
        reached_end(&headers, &kept),
        Some(EndEvent::ResponseCompleted)
    );
    let cut = BodyCapture::whole(gzipped[..gzipped.len() / 2].to_vec());
    assert_eq!(reached_end(&headers, &cut), None);
    assert!(EndWatch::for_body(Some("application/octet-stream"), None).is_none());
}

#[test]
fn the_note_names_the_event() {
    assert_eq!(
        EndEvent::ResponseCompleted.stopped_reading_note(),
        "the client stopped reading after the last event (response.completed)"
    );
}

#[test]
fn an_mcp_answer_ends_with_its_jsonrpc_response() {
    let answer = b"event: message\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"content\":[]}}\r\n\r\n";
    assert_eq!(end_of(SSE, answer), Some(EndEvent::JsonRpcAnswer));
    let error = b"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"a\",\"error\":{\"code\":-32602,\"message\":\"bad\"}}\n\n";
    assert_eq!(end_of(SSE, error), Some(EndEvent::JsonRpcAnswer));
    // A notification or a request from the server is not the answer: the stream goes on.
    let progress = b"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n";
    assert_eq!(end_of(SSE, progress), None);
    let asks = b"data: {\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"sampling/createMessage\",\"params\":{}}\n\n";
    assert_eq!(end_of(SSE, asks), None);
    let cut = b"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"res";
    assert_eq!(end_of(SSE, cut), None, "a response cut short is not one");
    assert_eq!(
        EndEvent::JsonRpcAnswer.stopped_reading_note(),
        "the client stopped reading after the last event (the JSON-RPC response)"
    );
}
