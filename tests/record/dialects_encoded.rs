//! Compressed bodies read as what they hold: real agents' gzip and zstd answers (recorded from
//! Codex and Claude Code against a scripted upstream, tests/fixtures/encoded/), br made here, a
//! cut capture, Codex's zstd OTLP export, and a binary body named without control characters.

use std::io::Write;

use tracer_trace::{RecordedHop, explain_trace, settle_old_record, summarize};
use tracer_wire::dialect::{Integrity, Reading};
use tracer_wire::hop::{BodyCapture, Header, HopState, Role};

use crate::dialect_hops::{SSE, hop_with, reply_of};

macro_rules! encoded {
    ($name:literal) => {
        include_bytes!(concat!("../fixtures/encoded/", $name)).as_slice()
    };
}

/// The response headers of a recorded hop (`*.headers.json`, as the agents' fixtures keep them).
fn recorded_headers(json: &[u8], key: &str) -> Vec<Header> {
    let value: serde_json::Value = serde_json::from_slice(json).unwrap();
    value[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| Header::new(h["name"].as_str().unwrap(), h["value"].as_str().unwrap()))
        .collect()
}

/// A model hop answered with `body` under `headers`, recorded in `state` with `error`.
fn answered(
    path: &str,
    headers: Vec<Header>,
    body: &[u8],
    state: HopState,
    error: Option<&str>,
) -> RecordedHop {
    let mut hop = hop_with(
        Role::Model,
        path,
        &[],
        b"{\"model\":\"m\",\"stream\":true}",
        SSE,
        b"",
    );
    let end = hop.end.as_mut().unwrap();
    end.response_headers = headers;
    end.response_body = BodyCapture::whole(body.to_vec());
    end.state = Some(state);
    end.error = error.map(str::to_string);
    hop
}

fn no_control_characters(text: &str) {
    assert!(!text.chars().any(char::is_control), "{text:?}");
}

#[test]
fn codex_gzip_stream_reads_as_the_stream_it_is_and_its_old_abort_as_complete() {
    let headers = recorded_headers(
        encoded!("codex_turn1_response.gzip.headers.json"),
        "response_headers",
    );
    let mut hop = answered(
        "/v1/responses",
        headers,
        encoded!("codex_turn1_response.sse.gz"),
        HopState::Aborted,
        Some("client went away mid-response"),
    );
    let (reply, integrity) = reply_of(&hop);
    // The gzip trailer never passed (Codex closed first): every event is there all the same.
    assert_eq!(integrity, Integrity::Whole);
    assert!(reply.records > 5, "{} records", reply.records);
    assert_eq!(reply.message.tool_calls.len(), 1, "{reply:?}");
    assert!(
        reply.message.tool_calls[0].name.ends_with("append"),
        "{reply:?}"
    );
    // Recorded before the proxy watched for end events: read as the complete hop it was.
    settle_old_record(hop.end.as_mut().unwrap());
    let end = hop.end.as_ref().unwrap();
    assert_eq!(end.state, Some(HopState::Complete));
    assert_eq!(end.error, None);
    let messages = explain_trace(std::slice::from_ref(&hop));
    let answer = &messages[1];
    assert!(
        !answer.summary.contains("empty reply"),
        "{}",
        answer.summary
    );
    assert!(
        answer
            .explanation
            .contains("the client stopped reading after the last event (response.completed)"),
        "{}",
        answer.explanation
    );
    assert_ne!(
        summarize(std::slice::from_ref(&hop)).status.as_str(),
        "failed"
    );
}

#[test]
fn codex_zstd_final_answer_and_claude_code_gzip_tool_call_read_whole() {
    let headers = recorded_headers(
        encoded!("codex_turn2_response.zstd.headers.json"),
        "response_headers",
    );
    let hop = answered(
        "/v1/responses",
        headers,
        encoded!("codex_turn2_response.sse.zst"),
        HopState::Complete,
        None,
    );
    let (reply, integrity) = reply_of(&hop);
    assert_eq!(integrity, Integrity::Whole);
    assert!(reply.message.content.contains("buy milk"), "{reply:?}");

    let headers = recorded_headers(
        encoded!("claude_code_turn1_response.gzip.headers.json"),
        "response_headers",
    );
    let hop = answered(
        "/v1/messages",
        headers,
        encoded!("claude_code_turn1_response.sse.gz"),
        HopState::Complete,
        None,
    );
    let (reply, integrity) = reply_of(&hop);
    assert_eq!(integrity, Integrity::Whole);
    assert_eq!(reply.finish_reason.as_deref(), Some("tool_use"));
    assert_eq!(reply.message.tool_calls.len(), 1, "{reply:?}");
    assert_eq!(reply.usage.output_tokens, Some(133));
}

#[test]
fn a_brotli_stream_reads_too() {
    let plain = include_bytes!("../fixtures/dialects/anthropic_stream_tool_use.sse");
    let mut encoded = Vec::new();
    {
        let mut writer = brotli::CompressorWriter::new(&mut encoded, 4096, 5, 22);
        writer.write_all(plain).unwrap();
    }
    let headers = vec![
        Header::new("content-type", "text/event-stream"),
        Header::new("content-encoding", "br"),
    ];
    let hop = answered("/v1/messages", headers, &encoded, HopState::Complete, None);
    let (reply, integrity) = reply_of(&hop);
    assert_eq!(integrity, Integrity::Whole);
    assert_eq!(reply.message.tool_calls.len(), 1);
}

#[test]
fn a_cut_gzip_capture_decodes_as_far_as_it_goes_and_says_so() {
    let plain = include_bytes!("../fixtures/dialects/openai_responses_stream_tool_call.sse");
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(plain).unwrap();
    let gzipped = encoder.finish().unwrap();
    let kept = gzipped.len() * 2 / 3;
    let headers = vec![
        Header::new("content-type", "text/event-stream"),
        Header::new("content-encoding", "gzip"),
    ];
    let mut hop = answered("/v1/responses", headers, b"", HopState::Complete, None);
    hop.end.as_mut().unwrap().response_body = BodyCapture {
        bytes: gzipped[..kept].to_vec(),
        total_len: gzipped.len() as u64,
        truncated: true,
    };
    let (reply, integrity) = reply_of(&hop);
    assert!(reply.records > 0, "the decoded part is read");
    let Integrity::PartlyDecoded(note) = integrity else {
        panic!("{integrity:?}");
    };
    assert!(
        note.contains(&format!(
            "decoded as far as the {kept} kept bytes of {} go",
            gzipped.len()
        )),
        "{note}"
    );
    let messages = explain_trace(std::slice::from_ref(&hop));
    assert!(
        messages[1].explanation.contains("decoded as far as"),
        "{}",
        messages[1].explanation
    );
}

#[test]
fn codex_zstd_otlp_post_reads_as_json_and_a_binary_body_is_named() {
    let headers = recorded_headers(
        encoded!("codex_otlp_metrics.headers.json"),
        "request_headers",
    );
    let mut hop = hop_with(
        Role::Other,
        "/otlp/v1/metrics",
        &[],
        b"",
        "application/json",
        b"{}",
    );
    hop.start.request_headers = headers;
    hop.end.as_mut().unwrap().request_body =
        BodyCapture::whole(encoded!("codex_otlp_metrics_request.json.zst").to_vec());
    let request = hop.reading().request;
    let Reading::Json(value) = &request.reading else {
        panic!("{:?}", request.reading);
    };
    assert!(value.get("resourceMetrics").is_some());
    let messages = explain_trace(std::slice::from_ref(&hop));
    no_control_characters(&messages[0].summary);
    no_control_characters(&messages[0].explanation);
    assert!(
        messages[0].summary.contains("resourceMetrics"),
        "{}",
        messages[0].summary
    );

    // The same export as protobuf: still binary once decoded, so named, never shown.
    let protobuf: Vec<u8> = (0u8..=255).cycle().take(5000).collect();
    let zstd = ruzstd::encoding::compress_to_vec(
        protobuf.as_slice(),
        ruzstd::encoding::CompressionLevel::Fastest,
    );
    hop.start.request_headers = vec![
        Header::new("content-type", "application/x-protobuf"),
        Header::new("content-encoding", "zstd"),
    ];
    hop.end.as_mut().unwrap().request_body = BodyCapture::whole(zstd.clone());
    // A hop keeps its reading once made: the edited hop is read again.
    hop.read = Default::default();
    let messages = explain_trace(std::slice::from_ref(&hop));
    assert!(
        messages[0].summary.contains(&format!(
            "{} bytes of application/x-protobuf (zstd)",
            zstd.len()
        )),
        "{}",
        messages[0].summary
    );
    no_control_characters(&messages[0].summary);
    no_control_characters(&messages[0].explanation);
}

#[test]
fn a_gzipped_gemini_stream_ends_with_its_finish_reason() {
    use tracer_wire::stream_end::{EndEvent, reached_end};
    let headers = vec![
        Header::new("content-type", "text/event-stream"),
        Header::new("content-encoding", "gzip"),
    ];
    let body = BodyCapture::whole(encoded!("gemini_cli_turn2_response.sse.gz").to_vec());
    assert_eq!(reached_end(&headers, &body), Some(EndEvent::FinishReason));
    let cut = BodyCapture::whole(body.bytes[..body.bytes.len() / 2].to_vec());
    assert_eq!(reached_end(&headers, &cut), None);
}
