//! Reassembling a 14 MiB streamed answer (Anthropic and OpenAI SSE, Ollama NDJSON) costs at most
//! about the stream's size again: measured as the peak RSS (VmHWM) of a child test process.

use std::process::Command;

use super::{Dialect, Reading, read_response};
use crate::hop::{BodyCapture, Header};

const CHILD: &str = "TRACER_STREAM_MEMORY_CHILD";
const STREAM_BYTES: usize = 14 * 1024 * 1024;
/// Every text delta carries this many letters.
const PIECE: &str = "the quick brown fox jumps over the lazy ";

/// A stream of the dialect's small text events, about `STREAM_BYTES` long, allocated once.
fn stream(dialect: &str) -> Vec<u8> {
    let mut body = Vec::with_capacity(STREAM_BYTES + 4096);
    let (first, each, last): (&str, String, &str) = match dialect {
        "anthropic" => (
            "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"m\"}}\n\n\
             event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\
             \"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
            format!(
                "event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":0,\
                 \"delta\":{{\"type\":\"text_delta\",\"text\":\"{PIECE}\"}}}}\n\n"
            ),
            "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
        ),
        "openai" => (
            "",
            format!(
                "data: {{\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"model\":\"m\",\
                 \"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{PIECE}\"}}}}]}}\n\n"
            ),
            "data: [DONE]\n\n",
        ),
        _ => (
            "",
            format!(
                "{{\"model\":\"m\",\"message\":{{\"role\":\"assistant\",\"content\":\"{PIECE}\"}},\
                 \"done\":false}}\n"
            ),
            "{\"model\":\"m\",\"message\":{\"role\":\"assistant\",\"content\":\"\"},\"done\":true}\n",
        ),
    };
    body.extend_from_slice(first.as_bytes());
    while body.len() + each.len() + last.len() <= STREAM_BYTES {
        body.extend_from_slice(each.as_bytes());
    }
    body.extend_from_slice(last.as_bytes());
    body
}

fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with(field)).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// In the child: builds the stream, resets the peak, reads it, prints the peak's growth.
fn measure(dialect: &str) {
    let body = BodyCapture::whole(stream(dialect));
    let (reader, content_type) = match dialect {
        "anthropic" => (Dialect::AnthropicMessages, "text/event-stream"),
        "openai" => (Dialect::OpenAiChat, "text/event-stream"),
        _ => (Dialect::OllamaChat, "application/x-ndjson"),
    };
    let headers = vec![Header {
        name: "content-type".into(),
        value: content_type.as_bytes().to_vec(),
    }];
    // Writing 5 to clear_refs resets VmHWM to the present RSS (Linux 4.0 and later).
    std::fs::write("/proc/self/clear_refs", "5").unwrap();
    let before = status_kib("VmRSS:");
    let reading = read_response(reader, &headers, &body);
    let peak = status_kib("VmHWM:");
    let Reading::ModelResponse(reply) = &reading.reading else {
        panic!("not a model response: {:?}", reading.integrity);
    };
    let pieces = (body.bytes.len() / PIECE.len()) as u64;
    println!(
        "MEASURED {} {} {} {}",
        peak.saturating_sub(before),
        body.bytes.len() / 1024,
        reply.message.content.len() / PIECE.len(),
        pieces
    );
}

#[test]
fn reassembling_a_14_mib_stream_costs_at_most_its_size_again() {
    if let Ok(dialect) = std::env::var(CHILD) {
        measure(&dialect);
        return;
    }
    for dialect in ["anthropic", "openai", "ollama"] {
        let out = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                &format!(
                    "{}::reassembling_a_14_mib_stream_costs_at_most_its_size_again",
                    test_module()
                ),
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD, dialect)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{dialect}: {stdout}");
        let line = stdout
            .lines()
            .find_map(|l| l.split_once("MEASURED ").map(|(_, figures)| figures))
            .unwrap_or_else(|| panic!("{dialect}: no figure in {stdout}"));
        let figures: Vec<u64> = line.split(' ').map(|f| f.parse().unwrap()).collect();
        let (growth_kib, stream_kib, pieces_read) = (figures[0], figures[1], figures[2]);
        // Every delta was reassembled (the reply's text is one PIECE per event).
        assert!(pieces_read * 5 > figures[3], "{dialect}: {line}");
        // The stream is held once already; reading it may cost at most its size again.
        assert!(
            growth_kib <= stream_kib,
            "{dialect}: reading a {stream_kib} KiB stream grew the peak RSS by {growth_kib} KiB"
        );
    }
}

/// This module's path as the test harness names tests (without the crate's name).
fn test_module() -> &'static str {
    module_path!()
        .split_once("::")
        .map_or(module_path!(), |(_, rest)| rest)
}
