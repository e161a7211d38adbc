//! The dialects the cloud speaks: the OpenAI Responses API (input items, function calls and
//! their outputs, named stream events) read and explained like chat completions, and
//! OpenAI-compatible streams that repeat the function name and call id in every chunk (as
//! llama.cpp's server does), where only the arguments accumulate.

use crate::dialect_hops as support;

use serde_json::json;
use support::{JSON, SSE, hop, reply_of};
use tracer_trace::{explain_request, explain_response};
use tracer_wire::dialect::{Dialect, Integrity, Reading};
use tracer_wire::hop::Role;

const RESPONSES_REQUEST: &[u8] =
    include_bytes!("../fixtures/dialects/openai_responses_request.json");
const RESPONSES_REPLY: &[u8] =
    include_bytes!("../fixtures/dialects/openai_responses_response.json");
const RESPONSES_STREAM: &[u8] =
    include_bytes!("../fixtures/dialects/openai_responses_stream_tool_call.sse");
const RESPONSES_CUT: &[u8] = include_bytes!("../fixtures/dialects/openai_responses_stream_cut.sse");
const LLAMACPP_STREAM: &[u8] =
    include_bytes!("../fixtures/dialects/llamacpp_chat_stream_repeated_name.sse");

#[test]
fn responses_api_input_items_read_as_a_conversation() {
    let hop = hop(
        Role::Model,
        "/v1/responses",
        RESPONSES_REQUEST,
        JSON,
        RESPONSES_REPLY,
    );
    let reading = hop.reading();
    assert_eq!(reading.dialect, Dialect::OpenAiResponses);
    assert_eq!(reading.dialect.as_str(), "openai.responses");
    let Reading::ModelRequest(request) = &reading.request.reading else {
        panic!("not a request: {:?}", reading.request);
    };
    assert_eq!(request.model.as_deref(), Some("gpt-5.6-luna"));
    assert_eq!(request.system.as_deref(), Some("You are terse."));
    let roles: Vec<&str> = request.messages.iter().map(|m| m.role.as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "tool"]);
    let call = &request.messages[1].tool_calls[0];
    assert_eq!(call.name, "get_phonenumber");
    assert_eq!(call.id.as_deref(), Some("call_abc"));
    assert_eq!(call.arguments, json!({"name": "brother"}));
    assert_eq!(
        request.messages[2].tool_call_id.as_deref(),
        Some("call_abc")
    );
    assert_eq!(request.messages[2].content, "+44 20 7946 0000");
    assert_eq!(request.tools, ["get_phonenumber", "web_search"]);
    assert_eq!(
        request.latest_user_text(),
        Some("What is my brother's phone number?")
    );
    let summary = explain_request(&hop, &reading, None).summary;
    assert_eq!(summary, "gpt-5.6-luna, 3 messages, 2 tools");

    let (reply, integrity) = reply_of(&hop);
    assert_eq!(integrity, Integrity::Whole);
    assert_eq!(reply.message.thinking, "The user wants a number.");
    assert_eq!(reply.message.tool_calls[0].id.as_deref(), Some("call_def"));
    assert_eq!(reply.usage.input_tokens, Some(82));
    assert_eq!(reply.usage.output_tokens, Some(17));
    let explained = explain_response(&hop, &reading);
    assert_eq!(
        explained.summary,
        "the model asks for tool get_phonenumber {\"name\":\"sister\"} (it does not run it: the host will)"
    );
}

#[test]
fn responses_api_streams_are_reassembled() {
    let streamed = hop(
        Role::Model,
        "/v1/responses",
        b"{\"stream\":true}",
        SSE,
        RESPONSES_STREAM,
    );
    let (reply, integrity) = reply_of(&streamed);
    assert_eq!(integrity, Integrity::Whole);
    assert!(reply.streamed);
    assert_eq!(reply.message.content, "Looking it up.");
    assert_eq!(reply.message.tool_calls.len(), 1);
    let call = &reply.message.tool_calls[0];
    assert_eq!(call.name, "get_phonenumber");
    assert_eq!(call.id.as_deref(), Some("call_9"));
    assert_eq!(call.arguments, json!({"name": "brother"}));
    assert_eq!(reply.model.as_deref(), Some("gpt-5.6-luna"));
    assert_eq!(reply.usage.output_tokens, Some(12));
    assert_eq!(reply.finish_reason.as_deref(), Some("completed"));

    let cut = hop(Role::Model, "/v1/responses", b"{}", SSE, RESPONSES_CUT);
    let (reply, integrity) = reply_of(&cut);
    assert_eq!(integrity, Integrity::CutOff);
    assert_eq!(reply.message.content, "Looking it up.");
}

#[test]
fn a_repeated_function_name_and_id_is_one_call_whose_arguments_accumulate() {
    let streamed = hop(
        Role::Model,
        "/v1/chat/completions",
        b"{}",
        SSE,
        LLAMACPP_STREAM,
    );
    let (reply, integrity) = reply_of(&streamed);
    assert_eq!(integrity, Integrity::Whole);
    assert_eq!(reply.message.tool_calls.len(), 1);
    let call = &reply.message.tool_calls[0];
    assert_eq!(call.name, "get_phonenumber");
    assert_eq!(
        call.id.as_deref(),
        Some("call__0_get_phonenumber_cmpl-7f1c")
    );
    assert_eq!(call.arguments, json!({"name": "brother", "country": "UK"}));
    let explained = explain_response(&streamed, &streamed.reading());
    assert!(
        explained
            .summary
            .starts_with("the model asks for tool get_phonenumber {"),
        "{}",
        explained.summary
    );
}
