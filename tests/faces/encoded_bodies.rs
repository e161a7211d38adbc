//! Compressed bodies in the exports: HAR's `content` is the decoded content (`text`, `size`,
//! `compression`; `bodySize` the wire's bytes), the Markdown and HTML handouts show the decoded
//! body, and a body still binary once decoded is named, never shown as bytes.

use std::io::Write;

use serde_json::json;
use tracer_export::body_text::TraceToExport;
use tracer_export::har::har_entry;
use tracer_export::html::html_page;
use tracer_export::mermaid::markdown_handout;
use tracer_trace::RecordedHop;
use tracer_wire::hop::{BodyCapture, Header, Role};

use crate::trace_hops::hop;

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

/// An Ollama chat answered with gzipped JSON, its request a zstd protobuf (binary once decoded).
fn compressed_hop() -> (RecordedHop, Vec<u8>, Vec<u8>) {
    let answer = json!({
        "model": "qwen3:8b",
        "message": {"role": "assistant", "content": "Added buy milk to your notes. ".repeat(20)},
        "done": true
    })
    .to_string()
    .into_bytes();
    let gzipped = gzip(&answer);
    let protobuf: Vec<u8> = (0u8..=255).cycle().take(4000).collect();
    let zstd = ruzstd::encoding::compress_to_vec(
        protobuf.as_slice(),
        ruzstd::encoding::CompressionLevel::Fastest,
    );
    let mut hop = hop("e1", Role::Model, "/api/chat", 0, 40).done();
    hop.start.request_headers = vec![
        Header::new("content-type", "application/x-protobuf"),
        Header::new("content-encoding", "zstd"),
    ];
    let end = hop.end.as_mut().unwrap();
    end.request_body = BodyCapture::whole(zstd.clone());
    end.response_headers = vec![
        Header::new("content-type", "application/json"),
        Header::new("content-encoding", "gzip"),
    ];
    end.response_body = BodyCapture::whole(gzipped.clone());
    (hop, answer, zstd)
}

#[test]
fn har_content_is_the_decoded_content_and_body_size_the_wire_bytes() {
    let (hop, answer, zstd) = compressed_hop();
    let wire = hop.end.as_ref().unwrap().response_body.total_len;
    let entry = har_entry(&hop);
    let response = &entry["response"];
    assert_eq!(response["bodySize"], json!(wire));
    let content = &response["content"];
    assert_eq!(
        content["text"],
        json!(String::from_utf8(answer.clone()).unwrap())
    );
    assert_eq!(content["size"], json!(answer.len()));
    assert_eq!(
        content["compression"],
        json!(answer.len() as i64 - wire as i64)
    );
    assert!(content.get("encoding").is_none(), "decoded JSON is text");
    let comment = content["comment"].as_str().unwrap();
    assert!(comment.starts_with("gzip: "), "{comment}");
    // The wire's header stays: the record says what crossed the wire.
    let headers = response["headers"].as_array().unwrap();
    assert!(
        headers
            .iter()
            .any(|h| h["name"] == "content-encoding" && h["value"] == "gzip")
    );
    // A request still binary once decoded is the decoded bytes in base64.
    let post = &entry["request"]["postData"];
    assert_eq!(post["_encoding"], "base64");
    assert_eq!(entry["request"]["bodySize"], json!(zstd.len()));
}

#[test]
fn the_handouts_show_the_decoded_body_and_name_a_binary_one() {
    let (hop, _, zstd) = compressed_hop();
    let hops = [hop];
    let trace = TraceToExport {
        fetch: None,
        session: None,
        id: "0000000000000000000000000000e001",
        title: Some("buy milk"),
        hops: &hops,
        agent_events: &[],
    };
    let named = format!("{} bytes of application/x-protobuf (zstd)", zstd.len());
    let markdown = markdown_handout(&trace);
    assert!(
        markdown.contains("Added buy milk to your notes."),
        "{markdown}"
    );
    assert!(markdown.contains(&named), "{markdown}");
    assert!(
        !markdown.chars().any(|c| c.is_control() && c != '\n'),
        "no raw bytes in the handout"
    );
    let html = html_page(&trace);
    assert!(html.contains("Added buy milk to your notes."));
    assert!(html.contains(&named));
}
