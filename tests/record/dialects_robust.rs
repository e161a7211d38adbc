//! Readers never panic: every fixture, cut at many points and read as every dialect, gives a
//! reading; a stream cut before its end is labelled, never taken for whole.

use tracer_wire::dialect::{self, Dialect, Integrity, Reading};
use tracer_wire::hop::{BodyCapture, Header};

const FIXTURES: &[(&str, &[u8])] = &[
    (
        "ollama_chat_request.json",
        include_bytes!("../fixtures/dialects/ollama_chat_request.json"),
    ),
    (
        "ollama_chat_stream_text.ndjson",
        include_bytes!("../fixtures/dialects/ollama_chat_stream_text.ndjson"),
    ),
    (
        "ollama_chat_stream_tool_call.ndjson",
        include_bytes!("../fixtures/dialects/ollama_chat_stream_tool_call.ndjson"),
    ),
    (
        "openai_chat_request.json",
        include_bytes!("../fixtures/dialects/openai_chat_request.json"),
    ),
    (
        "openai_chat_stream_tool_call.sse",
        include_bytes!("../fixtures/dialects/openai_chat_stream_tool_call.sse"),
    ),
    (
        "anthropic_request.json",
        include_bytes!("../fixtures/dialects/anthropic_request.json"),
    ),
    (
        "anthropic_stream_tool_use.sse",
        include_bytes!("../fixtures/dialects/anthropic_stream_tool_use.sse"),
    ),
    (
        "anthropic_stream_cache_usage.sse",
        include_bytes!("../fixtures/dialects/anthropic_stream_cache_usage.sse"),
    ),
    (
        "openai_chat_stream_usage_details.sse",
        include_bytes!("../fixtures/dialects/openai_chat_stream_usage_details.sse"),
    ),
    (
        "openai_responses_stream_usage_details.sse",
        include_bytes!("../fixtures/dialects/openai_responses_stream_usage_details.sse"),
    ),
    (
        "mcp_tools_call_result.sse",
        include_bytes!("../fixtures/dialects/mcp_tools_call_result.sse"),
    ),
    (
        "mcp_tools_list_result.json",
        include_bytes!("../fixtures/dialects/mcp_tools_list_result.json"),
    ),
    (
        "mcp_batch.json",
        include_bytes!("../fixtures/dialects/mcp_batch.json"),
    ),
    (
        "agent_reply.json",
        include_bytes!("../fixtures/dialects/agent_reply.json"),
    ),
    (
        "agents/gemini-cli/side1_request.json",
        include_bytes!("../fixtures/agents/gemini-cli/side1_request.json"),
    ),
    (
        "agents/gemini-cli/turn1_response.sse",
        include_bytes!("../fixtures/agents/gemini-cli/turn1_response.sse"),
    ),
    (
        "agents/gemini-cli/json-array/turn1_response.json",
        include_bytes!("../fixtures/agents/gemini-cli/json-array/turn1_response.json"),
    ),
];

const DIALECTS: [Dialect; 9] = [
    Dialect::OllamaChat,
    Dialect::OllamaGenerate,
    Dialect::OpenAiChat,
    Dialect::AnthropicMessages,
    Dialect::Gemini,
    Dialect::GeminiCountTokens,
    Dialect::Mcp,
    Dialect::Agent,
    Dialect::Unknown,
];

#[test]
fn every_prefix_of_every_fixture_reads_as_every_dialect() {
    let sse = [Header::new("content-type", "text/event-stream")];
    let mut reads = 0usize;
    for (name, body) in FIXTURES {
        for cut in (0..=body.len()).step_by(17).chain([body.len()]) {
            let capture = BodyCapture::whole(body[..cut].to_vec());
            for dialect in DIALECTS {
                for headers in [&[][..], &sse[..]] {
                    let _ = dialect::read_request(dialect, headers, &capture);
                    let _ = dialect::read_response(dialect, headers, &capture);
                    reads += 2;
                }
            }
        }
        // Invalid UTF-8 and NUL bytes inside a body are read, not a panic.
        let mut mangled = body.to_vec();
        if let Some(byte) = mangled.get_mut(body.len() / 2) {
            *byte = 0xff;
        }
        mangled.insert(0, 0);
        for dialect in DIALECTS {
            let _ = dialect::read_response(dialect, &sse, &BodyCapture::whole(mangled.clone()));
        }
        assert!(reads > 0, "{name}");
    }
}

#[test]
fn cut_streams_are_never_whole() {
    let streams: [(Dialect, &str, &[u8]); 4] = [
        (
            Dialect::OllamaChat,
            "application/x-ndjson",
            include_bytes!("../fixtures/dialects/ollama_chat_stream_text.ndjson"),
        ),
        (
            Dialect::OpenAiChat,
            "text/event-stream",
            include_bytes!("../fixtures/dialects/openai_chat_stream_tool_call.sse"),
        ),
        (
            Dialect::AnthropicMessages,
            "text/event-stream",
            include_bytes!("../fixtures/dialects/anthropic_stream_tool_use.sse"),
        ),
        (
            Dialect::Gemini,
            "text/event-stream",
            include_bytes!("../fixtures/agents/gemini-cli/turn1_response.sse"),
        ),
    ];
    for (dialect, content_type, body) in streams {
        let headers = [Header::new("content-type", content_type)];
        let whole = dialect::read_response(dialect, &headers, &BodyCapture::whole(body.to_vec()));
        assert_eq!(whole.integrity, Integrity::Whole, "{dialect:?}");
        // Cut anywhere before the last record, the reading says so.
        let last_record = body[..body.len() - 2]
            .windows(2)
            .rposition(|w| w[0] == b'\n' && w[1] != b'\n')
            .unwrap_or(0);
        for cut in (1..last_record).step_by(11) {
            let reading = dialect::read_response(
                dialect,
                &headers,
                &BodyCapture::whole(body[..cut].to_vec()),
            );
            assert_ne!(
                reading.integrity,
                Integrity::Whole,
                "{dialect:?} cut at {cut}"
            );
            assert!(
                matches!(
                    reading.reading,
                    Reading::ModelResponse(_) | Reading::Text(_) | Reading::Empty
                ),
                "{dialect:?} cut at {cut}: {:?}",
                reading.reading
            );
        }
    }
}
