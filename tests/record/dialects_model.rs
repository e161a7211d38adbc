//! Model dialect fixtures (Ollama chat/generate, OpenAI, Anthropic; plain and streamed):
//! detection, the normalized reading, and the summary line.

use crate::dialect_hops as support;

use serde_json::json;
use support::{JSON, NDJSON, SSE, hop, hop_with, reply_of};
use tracer_trace::{RecordedHop, explain_request, explain_response};
use tracer_wire::dialect::{Dialect, Integrity, Reading, ToolCallForm};
use tracer_wire::hop::Role;

#[test]
fn ollama_chat_request_and_tool_call_reply() {
    let hop = hop(
        Role::Model,
        "/api/chat",
        fixture!("ollama_chat_request.json"),
        JSON,
        fixture!("ollama_chat_response_tool_call.json"),
    );
    let reading = hop.reading();
    assert_eq!(reading.dialect, Dialect::OllamaChat);
    let Reading::ModelRequest(request) = &reading.request.reading else {
        panic!("not a chat request");
    };
    assert_eq!(request.model.as_deref(), Some("qwen2.5:7b"));
    assert_eq!(
        request.tools,
        ["append", "read", "write", "update", "clear"]
    );
    assert!(!request.stream);
    assert_eq!(request.latest_user_text(), Some("Add buy milk to my notes"));
    let summary = explain_request(&hop, &reading, None).summary;
    assert_eq!(summary, "qwen2.5:7b, 2 messages, 5 tools");

    let (reply, integrity) = reply_of(&hop);
    assert_eq!(integrity, Integrity::Whole);
    assert_eq!(reply.message.tool_calls.len(), 1);
    assert_eq!(
        reply.message.tool_calls[0].arguments,
        json!({"content": "buy milk"})
    );
    let timings = reply.timings.expect("timings");
    assert_eq!(timings.eval_count, Some(24));
    assert_eq!(timings.tokens_per_second().map(|r| r.round()), Some(50.0));
    let explained = explain_response(&hop, &reading);
    assert_eq!(
        explained.summary,
        "the model asks for tool append {\"content\":\"buy milk\"} (it does not run it: the host will)"
    );
    assert!(
        explained.explanation.contains(
            "load 1.3 ms, prompt 326 tokens in 343 ms, output 24 tokens in 480 ms (50.0 tokens/s)"
        ),
        "{}",
        explained.explanation
    );
    assert!(
        explained
            .explanation
            .contains("first byte after 100 ms, done after 500 ms")
    );
}

#[test]
fn ollama_resend_counts_the_history() {
    let first = hop(
        Role::Model,
        "/api/chat",
        fixture!("ollama_chat_request.json"),
        JSON,
        b"",
    );
    let again = hop(
        Role::Model,
        "/api/chat",
        fixture!("ollama_chat_request_history.json"),
        JSON,
        b"",
    );
    let Reading::ModelRequest(previous) = first.reading().request.reading else {
        panic!("not a chat request");
    };
    let explained = explain_request(&again, &again.reading(), Some(&previous));
    assert_eq!(
        explained.summary,
        "qwen2.5:7b, 4 messages (2 more than last time), 5 tools"
    );
    assert!(
        explained
            .explanation
            .contains("4 messages now, 2 more than last time")
    );
}

#[test]
fn ollama_streams_are_reassembled_with_crlf_too() {
    for body in [
        fixture!("ollama_chat_stream_text.ndjson").to_vec(),
        String::from_utf8_lossy(fixture!("ollama_chat_stream_text.ndjson"))
            .replace('\n', "\r\n")
            .into_bytes(),
    ] {
        let hop = hop(
            Role::Model,
            "/api/chat",
            b"{\"model\":\"qwen3:8b\"}",
            NDJSON,
            &body,
        );
        let (reply, integrity) = reply_of(&hop);
        assert_eq!(integrity, Integrity::Whole);
        assert_eq!(
            reply.message.content,
            "I've added \"buy milk\" to your notes."
        );
        assert_eq!(reply.message.thinking, "The user wants a confirmation.");
        assert_eq!(reply.records, 10);
        assert!(reply.streamed);
        assert_eq!(reply.finish_reason.as_deref(), Some("stop"));
        let explained = explain_response(&hop, &hop.reading());
        assert_eq!(
            explained.summary,
            "the model answers: \"I've added \"buy milk\" to your notes.\""
        );
        assert!(explained.explanation.contains("stream of 10 records"));
    }
    let hop = hop(
        Role::Model,
        "/api/chat",
        b"{}",
        NDJSON,
        fixture!("ollama_chat_stream_tool_call.ndjson"),
    );
    let (reply, _) = reply_of(&hop);
    assert_eq!(
        reply.message.tool_calls[0].id.as_deref(),
        Some("call_k3j9x0ab")
    );
    assert_eq!(
        reply.message.tool_calls[0].display(),
        "get_weather {\"city\":\"Tokyo\"}"
    );
}

#[test]
fn ollama_cut_off_errors_and_truncated_captures_are_labelled() {
    let cut = hop(
        Role::Model,
        "/api/chat",
        b"{}",
        NDJSON,
        fixture!("ollama_chat_stream_cut.ndjson"),
    );
    let (reply, integrity) = reply_of(&cut);
    assert_eq!(integrity, Integrity::CutOff);
    assert_eq!(reply.message.content, "I've added \"buy");
    assert!(
        explain_response(&cut, &cut.reading())
            .explanation
            .contains("stopped before its end marker")
    );

    let failed = hop(
        Role::Model,
        "/api/chat",
        b"{}",
        NDJSON,
        fixture!("ollama_chat_stream_error.ndjson"),
    );
    let (reply, _) = reply_of(&failed);
    assert!(
        reply
            .error
            .as_deref()
            .is_some_and(|e| e.contains("unexpected EOF"))
    );
    assert!(
        explain_response(&failed, &failed.reading())
            .summary
            .starts_with("model server error:")
    );

    let missing = hop(
        Role::Model,
        "/api/chat",
        b"{}",
        JSON,
        fixture!("ollama_chat_not_found.json"),
    );
    assert_eq!(
        explain_response(&missing, &missing.reading()).summary,
        "model server error: model \"qwen9:1b\" not found, try pulling it first"
    );

    let mut truncated = hop(
        Role::Model,
        "/api/chat",
        b"{}",
        NDJSON,
        &fixture!("ollama_chat_stream_text.ndjson")[..300],
    );
    if let Some(end) = truncated.end.as_mut() {
        end.response_body.truncated = true;
        end.response_body.total_len = 5000;
    }
    let (_, integrity) = reply_of(&truncated);
    assert_eq!(
        integrity,
        Integrity::Truncated {
            kept: 300,
            total: 5000
        }
    );

    let garbage = hop(
        Role::Model,
        "/api/chat",
        b"not json at all",
        JSON,
        b"<html>502</html>",
    );
    let reading = garbage.reading();
    assert!(matches!(reading.request.integrity, Integrity::Malformed(_)));
    assert!(matches!(
        reading.response.expect("response").integrity,
        Integrity::Malformed(_)
    ));
}

#[test]
fn ollama_generate_is_read_as_a_prompt() {
    let hop = hop(
        Role::Model,
        "/api/generate",
        fixture!("ollama_generate_request.json"),
        NDJSON,
        fixture!("ollama_generate_stream.ndjson"),
    );
    let reading = hop.reading();
    assert_eq!(reading.dialect, Dialect::OllamaGenerate);
    let Reading::ModelRequest(request) = &reading.request.reading else {
        panic!("not a request");
    };
    assert_eq!(request.latest_user_text(), Some("Why is the sky blue?"));
    assert_eq!(request.system.as_deref(), Some("Be brief."));
    assert!(request.stream, "Ollama streams unless told not to");
    let (reply, integrity) = reply_of(&hop);
    assert_eq!(
        (reply.message.content.as_str(), integrity),
        ("Rayleigh scattering.", Integrity::Whole)
    );
}

#[test]
fn tool_calls_written_as_text_are_labelled() {
    let seed = hop(
        Role::Model,
        "/api/chat",
        b"{}",
        JSON,
        fixture!("ollama_chat_response_text_json_call.json"),
    );
    let (reply, _) = reply_of(&seed);
    assert_eq!(reply.message.tool_calls[0].form, ToolCallForm::TextJson);
    let explained = explain_response(&seed, &seed.reading());
    assert_eq!(
        explained.summary,
        "the model writes a tool call as text: tool_get_phonenumber_post {\"name\":\"Joshua Wilson\"}"
    );
    assert!(explained.explanation.contains("JSON in the text"));

    let qwen = hop(
        Role::Model,
        "/api/chat",
        b"{}",
        JSON,
        fixture!("ollama_chat_response_qwen_tags.json"),
    );
    let (reply, _) = reply_of(&qwen);
    assert_eq!(reply.message.tool_calls[0].form, ToolCallForm::TextTag);
    assert!(
        explain_response(&qwen, &qwen.reading())
            .explanation
            .contains("<tool_call> tags")
    );
}

#[test]
fn openai_plain_and_streamed_arguments_are_joined() {
    let plain = hop(
        Role::Model,
        "/v1/chat/completions",
        fixture!("openai_chat_request.json"),
        JSON,
        fixture!("openai_chat_response.json"),
    );
    let reading = plain.reading();
    assert_eq!(reading.dialect, Dialect::OpenAiChat);
    let Reading::ModelRequest(request) = &reading.request.reading else {
        panic!("not a request");
    };
    assert!(request.stream);
    assert_eq!(
        request.latest_user_text(),
        Some("What's the weather in Boston?")
    );
    assert_eq!(
        request.messages[2].tool_calls[0].arguments,
        json!({"location": "Boston, MA"})
    );
    assert_eq!(
        request.messages[3].tool_call_id.as_deref(),
        Some("call_abc123")
    );
    let (reply, _) = reply_of(&plain);
    assert_eq!(reply.finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!(reply.usage.output_tokens, Some(17));

    let body = fixture!("openai_chat_stream_tool_call.sse");
    for body in [
        body.to_vec(),
        String::from_utf8_lossy(body)
            .replace('\n', "\r\n")
            .into_bytes(),
    ] {
        let streamed = hop(Role::Model, "/v1/chat/completions", b"{}", SSE, &body);
        let (reply, integrity) = reply_of(&streamed);
        assert_eq!(integrity, Integrity::Whole);
        assert_eq!(reply.message.tool_calls.len(), 1);
        let call = &reply.message.tool_calls[0];
        assert_eq!(call.id.as_deref(), Some("call_c91SqDXlYFuETYv8mUHzz6pp"));
        assert_eq!(
            call.arguments,
            json!({"city": "Edinburgh", "country": "UK", "units": "c"})
        );
        assert_eq!(reply.usage.input_tokens, Some(76));
        assert_eq!(reply.finish_reason.as_deref(), Some("tool_calls"));
    }

    let cut = hop(
        Role::Model,
        "/v1/chat/completions",
        b"{}",
        SSE,
        fixture!("openai_chat_stream_cut.sse"),
    );
    let (reply, integrity) = reply_of(&cut);
    assert_eq!(integrity, Integrity::CutOff);
    assert_eq!(reply.message.content, "Hello! How can I help?");
}

#[test]
fn anthropic_blocks_and_stream() {
    let hop = hop_with(
        Role::Model,
        "/v1/messages",
        &[("anthropic-version", "2023-06-01")],
        fixture!("anthropic_request.json"),
        SSE,
        fixture!("anthropic_stream_tool_use.sse"),
    );
    let reading = hop.reading();
    assert_eq!(reading.dialect, Dialect::AnthropicMessages);
    let Reading::ModelRequest(request) = &reading.request.reading else {
        panic!("not a request");
    };
    let roles: Vec<&str> = request.messages.iter().map(|m| m.role.as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "tool"]);
    assert!(request.messages[2].is_error);
    assert_eq!(
        request.messages[1].tool_calls[0].arguments,
        json!({"location": "Paris"})
    );
    assert_eq!(request.system.as_deref(), Some("You answer briefly."));
    let (reply, integrity) = reply_of(&hop);
    assert_eq!(integrity, Integrity::Whole);
    assert_eq!(
        reply.message.content,
        "I'll check the current weather in Paris for you."
    );
    assert_eq!(
        reply.message.tool_calls[0].arguments,
        json!({"location": "Paris"})
    );
    assert_eq!(reply.finish_reason.as_deref(), Some("tool_use"));
    assert_eq!(reply.usage.output_tokens, Some(65));

    let plain = anthropic_plain();
    let (reply, _) = reply_of(&plain);
    assert_eq!(
        reply.message.content,
        "It is 18 degrees and cloudy in Paris."
    );
    assert_eq!(reply.finish_reason.as_deref(), Some("end_turn"));
}

fn anthropic_plain() -> RecordedHop {
    hop(
        Role::Model,
        "/v1/messages",
        fixture!("anthropic_request.json"),
        JSON,
        fixture!("anthropic_response.json"),
    )
}
