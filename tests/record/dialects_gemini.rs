//! Gemini, read from what the real Gemini CLI 0.61 sent (tests/fixtures/agents/gemini-cli): a
//! tool-call turn and a final turn over `?alt=sse`, the same turns as JSON-array streams, a cut
//! stream, and the whole run numbered; each with its explanation, its calls, its tools, its system
//! size and its tokens. The side requests, Code Assist and errors: `dialects_gemini_side.rs`.

use crate::dialect_hops as support;

use serde_json::json;
use support::{JSON, SSE, hop, reply_of};
use tracer_trace::{RecordedHop, explain_request, explain_response, explain_trace};
use tracer_wire::dialect::{Dialect, Integrity, ModelRequest, Reading, SystemSource};
use tracer_wire::hop::Role;

/// A file of the Gemini CLI run the agents' fixtures recorded.
#[macro_export]
macro_rules! gemini_cli {
    ($name:literal) => {
        include_bytes!(concat!("../fixtures/agents/gemini-cli/", $name)).as_slice()
    };
}

pub const ROUTER_REQUEST: &[u8] = gemini_cli!("side1_request.json");
pub const ROUTER_RESPONSE: &[u8] = gemini_cli!("side1_response.json");
pub const TOOL_REQUEST: &[u8] = gemini_cli!("turn1_request.json");
pub const TOOL_STREAM: &[u8] = gemini_cli!("turn1_response.sse");
const TOOL_ARRAY: &[u8] = gemini_cli!("json-array/turn1_response.json");
pub const FINAL_REQUEST: &[u8] = gemini_cli!("turn2_request.json");
pub const FINAL_STREAM: &[u8] = gemini_cli!("turn2_response.sse");
const FINAL_ARRAY: &[u8] = gemini_cli!("json-array/turn2_response.json");

pub const TURN_PATH: &str = "/v1beta/models/gemini-3.8-flash:streamGenerateContent?alt=sse";
pub const ROUTER_PATH: &str = "/v1beta/models/gemini-3.5-flash-lite:generateContent";

pub fn request_of(hop: &RecordedHop) -> ModelRequest {
    match hop.reading().request.reading {
        Reading::ModelRequest(request) => request,
        other => panic!("not a model request: {other:?}"),
    }
}

/// Checks what Gemini CLI's first turn carries: 20 tools (5 from the notes server), its ~30 KB
/// system instruction, its `<session_context>` apart from the user's words.
pub fn assert_turn_request(request: &ModelRequest, system_bytes: usize, context_bytes: usize) {
    assert_eq!(request.tools.len(), 20);
    assert_eq!(request.tool_defs.len(), 20);
    let mcp: Vec<&str> = request
        .tools
        .iter()
        .map(String::as_str)
        .filter(|name| name.starts_with("mcp_notes_"))
        .collect();
    assert_eq!(
        mcp,
        [
            "mcp_notes_read",
            "mcp_notes_write",
            "mcp_notes_append",
            "mcp_notes_update",
            "mcp_notes_clear"
        ]
    );
    assert_eq!(
        request.tool_defs.iter().map(|t| t.bytes).sum::<usize>(),
        17_713
    );
    let instruction: Vec<usize> = request
        .system_parts
        .iter()
        .filter(|p| p.source == SystemSource::SystemInstruction)
        .map(|p| p.bytes)
        .collect();
    assert_eq!(instruction, [system_bytes]);
    assert_eq!(request.system.as_deref().map(str::len), Some(system_bytes));
    let context: Vec<usize> = request
        .system_parts
        .iter()
        .filter(|p| p.source == SystemSource::Message("user".into()))
        .map(|p| p.bytes)
        .collect();
    assert_eq!(context, [context_bytes], "the <session_context> part");
    assert_eq!(request.latest_user_text(), Some("Add buy milk to my notes"));
    assert!(request.stream);
    assert_eq!(
        request.thinking_mode.as_deref(),
        Some("includeThoughts, thinkingLevel HIGH")
    );
    assert!(!request.is_side_request());
}

#[test]
fn a_tool_call_turn_reads_with_its_thought_signature_tools_system_and_tokens() {
    let turn = hop(Role::Model, TURN_PATH, TOOL_REQUEST, SSE, TOOL_STREAM);
    let reading = turn.reading();
    assert_eq!(reading.dialect, Dialect::Gemini);
    assert_eq!(reading.dialect.as_str(), "gemini.generate");
    let request = request_of(&turn);
    assert_eq!(request.model.as_deref(), Some("gemini-3.8-flash"));
    assert_eq!(request.body_bytes, TOOL_REQUEST.len());
    assert_eq!(request.messages.len(), 1);
    assert_turn_request(&request, 30_333, 833);
    let explained = explain_request(&turn, &reading, None);
    assert_eq!(explained.summary, "gemini-3.8-flash, 1 message, 20 tools");
    assert!(
        explained
            .explanation
            .contains("It sets how the model thinks: includeThoughts, thinkingLevel HIGH."),
        "{}",
        explained.explanation
    );

    let (reply, integrity) = reply_of(&turn);
    assert_eq!(integrity, Integrity::Whole);
    assert_eq!(reply.model.as_deref(), Some("gemini-3.8-flash"));
    assert_eq!(reply.message.role, "assistant");
    assert_eq!(reply.records, 2);
    let call = &reply.message.tool_calls[0];
    assert_eq!(call.name, "mcp_notes_append");
    assert_eq!(call.arguments, json!({"content": "buy milk"}));
    assert!(reply.message.thinking.starts_with("**Adding the note**"));
    assert_eq!(reply.message.thinking_signature_bytes, Some(43));
    assert_eq!(reply.finish_reason.as_deref(), Some("STOP"));
    let usage = reply.usage;
    // The last chunk's usageMetadata: prompt 10,432 (8,190 cached), candidates 27, thoughts 100.
    assert_eq!(usage.input_tokens, Some(10_432));
    assert_eq!(usage.cache_read_tokens, Some(8_190));
    assert_eq!(usage.cache_write_tokens, None);
    assert_eq!(usage.output_tokens, Some(27 + 100));
    assert_eq!(usage.reasoning_tokens, Some(100));
    assert!(usage.cache_inside_input);
    assert_eq!(usage.prompt_total(), Some(10_432));
    assert_eq!(usage.uncached_prompt(), Some(10_432 - 8_190));

    let explained = explain_response(&turn, &reading);
    assert_eq!(
        explained.summary,
        "the model asks for tool mcp_notes_append {\"content\":\"buy milk\"} (it does not run it: the host will)"
    );
    let words = &explained.explanation;
    assert!(
        words.contains("the model server parsed it into a functionCall part."),
        "{words}"
    );
    assert!(!words.contains("tool_calls"), "{words}");
    assert!(
        words.contains("in parts marked thought: true (102 bytes)"),
        "{words}"
    );
    assert!(
        words.contains("A thoughtSignature (43 bytes) seals the reasoning"),
        "{words}"
    );
    assert!(words.contains("a stream of 2 records"), "{words}");
}

#[test]
fn the_final_turn_sends_the_call_and_its_untrusted_result_back_and_gets_the_answer() {
    let turn = hop(Role::Model, TURN_PATH, FINAL_REQUEST, SSE, FINAL_STREAM);
    let request = request_of(&turn);
    let roles: Vec<&str> = request.messages.iter().map(|m| m.role.as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "tool"]);
    let sent = &request.messages[1];
    assert_eq!(
        sent.tool_calls[0].display(),
        "mcp_notes_append {\"content\":\"buy milk\"}"
    );
    assert_eq!(sent.thinking_signature_bytes, Some(43));
    let result = &request.messages[2];
    assert_eq!(result.tool_name.as_deref(), Some("mcp_notes_append"));
    assert_eq!(result.tool_call_id, sent.tool_calls[0].id);
    assert_eq!(
        result.content,
        "Appended a new line at the end of the notes (now 1 line, 9 bytes)."
    );
    let previous = request_of(&hop(Role::Model, TURN_PATH, TOOL_REQUEST, SSE, TOOL_STREAM));
    let explained = explain_request(&turn, &turn.reading(), Some(&previous));
    assert_eq!(
        explained.summary,
        "gemini-3.8-flash, 3 messages (2 more than last time), 20 tools"
    );

    let (reply, integrity) = reply_of(&turn);
    assert_eq!(integrity, Integrity::Whole);
    assert_eq!(
        reply.message.content,
        "Done: I added \"buy milk\" to your notes."
    );
    assert!(reply.message.tool_calls.is_empty());
    assert!(reply.message.thinking.starts_with("**Adding the note**"));
    assert_eq!(reply.records, 4);
    // The last chunk's usageMetadata: prompt 10,596 (10,240 cached), candidates 14, thoughts 42.
    let usage = reply.usage;
    assert_eq!(
        (
            usage.input_tokens,
            usage.cache_read_tokens,
            usage.output_tokens
        ),
        (Some(10_596), Some(10_240), Some(14 + 42))
    );
    assert_eq!(usage.reasoning_tokens, Some(42));
    assert_eq!(usage.prompt_total(), Some(10_596));
    let explained = explain_response(&turn, &turn.reading());
    assert_eq!(
        explained.summary,
        "the model answers: \"Done: I added \"buy milk\" to your notes.\""
    );
    assert!(explained.explanation.contains("the agent loop stops here"));
}

#[test]
fn the_json_array_streams_read_like_the_sse_ones_and_a_cut_one_is_cut_off() {
    let array_path = "/v1beta/models/gemini-3.8-flash:streamGenerateContent";
    for (request, sse, array) in [
        (TOOL_REQUEST, TOOL_STREAM, TOOL_ARRAY),
        (FINAL_REQUEST, FINAL_STREAM, FINAL_ARRAY),
    ] {
        let from_sse = reply_of(&hop(Role::Model, TURN_PATH, request, SSE, sse)).0;
        let array_hop = hop(Role::Model, array_path, request, JSON, array);
        let (reply, integrity) = reply_of(&array_hop);
        assert_eq!(integrity, Integrity::Whole);
        assert_eq!(reply, from_sse);
        assert!(request_of(&array_hop).stream);
    }
    // Cut anywhere before its last item closes, an array stream is cut off, never malformed.
    let last_item = TOOL_ARRAY.len() - 3;
    for cut in (1..last_item).step_by(37) {
        let cut_hop = hop(Role::Model, array_path, b"{}", JSON, &TOOL_ARRAY[..cut]);
        let (_, integrity) = reply_of(&cut_hop);
        assert_eq!(integrity, Integrity::CutOff, "cut at {cut}");
    }

    // The SSE stream cut inside its last event (the one with the functionCall and finishReason).
    let last_event = TOOL_STREAM
        .windows(6)
        .rposition(|w| w == b"data: ")
        .unwrap();
    let cut_stream = &TOOL_STREAM[..last_event + 120];
    let cut = hop(Role::Model, TURN_PATH, TOOL_REQUEST, SSE, cut_stream);
    let (reply, integrity) = reply_of(&cut);
    assert_eq!(integrity, Integrity::CutOff);
    assert!(reply.message.tool_calls.is_empty());
    assert!(reply.message.thinking.starts_with("**Adding the note**"));
    assert_eq!(reply.usage.input_tokens, Some(10_432));
    assert_eq!(reply.usage.reasoning_tokens, None);
    let explained = explain_response(&cut, &cut.reading());
    assert!(
        explained
            .explanation
            .contains("The stream stopped before its end marker"),
        "{}",
        explained.explanation
    );
}

#[test]
fn a_gemini_cli_run_reads_as_one_numbered_conversation() {
    let hops = [
        hop(
            Role::Model,
            ROUTER_PATH,
            ROUTER_REQUEST,
            JSON,
            ROUTER_RESPONSE,
        ),
        hop(Role::Model, TURN_PATH, TOOL_REQUEST, SSE, TOOL_STREAM),
        hop(Role::Model, TURN_PATH, FINAL_REQUEST, SSE, FINAL_STREAM),
    ];
    let hops: Vec<RecordedHop> = hops
        .into_iter()
        .enumerate()
        .map(|(i, mut hop)| {
            let offset = i64::try_from(i).unwrap() * 1_000_000_000;
            hop.start.id = format!("{:032x}", i + 1);
            hop.start.started_unix_ns += offset;
            let end = hop.end.as_mut().unwrap();
            end.id = hop.start.id.clone();
            for at in [
                &mut end.response_first_byte_unix_ns,
                &mut end.response_ended_unix_ns,
            ] {
                *at = at.map(|ns| ns + offset);
            }
            hop
        })
        .collect();
    let lines: Vec<String> = explain_trace(&hops).iter().map(|m| m.line()).collect();
    assert_eq!(lines.len(), 6, "{lines:#?}");
    assert!(lines[0].starts_with("1 agent → model  POST /v1beta/models/gemini-3.5-flash-lite:generateContent  side call (routing): gemini-3.5-flash-lite, 2 messages, 0 tools"), "{lines:#?}");
    assert!(lines[3].contains("mcp_notes_append"), "{lines:#?}");
    // The turn after the router call is the first of the conversation, not "again".
    assert!(
        lines[2].ends_with("gemini-3.8-flash, 1 message, 20 tools"),
        "{lines:#?}"
    );
    assert!(
        lines[4].ends_with("gemini-3.8-flash, 3 messages (2 more than last time), 20 tools"),
        "{lines:#?}"
    );
    assert!(
        lines[5].contains("the model answers: \"Done: I added"),
        "{lines:#?}"
    );
}
