//! Gemini, read from what the real Gemini CLI 0.61 sent (tests/fixtures/dialects/gemini): the
//! routing call, a tool-call turn and a final turn over `?alt=sse`, the same turn as a JSON-array
//! stream, the Code Assist shape (`/v1internal:…`, `{"request"}` / `{"response"}`), a cut stream and
//! an error body; each with its explanation, its calls, its tools, its system size and its tokens.

use crate::dialect_hops as support;

use serde_json::json;
use support::{JSON, SSE, hop, reply_of};
use tracer::hop::Role;
use tracer::trace::{RecordedHop, explain_request, explain_response, explain_trace};
use tracer::wire::dialect::{Dialect, Integrity, ModelRequest, Reading, SystemSource};

const ROUTER_REQUEST: &[u8] = fixture!("gemini/router_request.json");
const ROUTER_RESPONSE: &[u8] = fixture!("gemini/router_response.json");
const TOOL_REQUEST: &[u8] = fixture!("gemini/tool_turn_request.json");
const TOOL_STREAM: &[u8] = fixture!("gemini/tool_turn_response.sse");
const TOOL_ARRAY: &[u8] = fixture!("gemini/tool_turn_response_array.json");
const TOOL_CUT: &[u8] = fixture!("gemini/tool_turn_response_cut.sse");
const FINAL_REQUEST: &[u8] = fixture!("gemini/final_turn_request.json");
const FINAL_STREAM: &[u8] = fixture!("gemini/final_turn_response.sse");
const CA_ROUTER_REQUEST: &[u8] = fixture!("gemini/code_assist_router_request.json");
const CA_ROUTER_RESPONSE: &[u8] = fixture!("gemini/code_assist_router_response.json");
const CA_TOOL_REQUEST: &[u8] = fixture!("gemini/code_assist_tool_turn_request.json");
const CA_TOOL_STREAM: &[u8] = fixture!("gemini/code_assist_tool_turn_response.sse");
const CA_LOAD_REQUEST: &[u8] = fixture!("gemini/code_assist_load_request.json");
const ERROR_REQUEST: &[u8] = fixture!("gemini/error_request.json");
const ERROR_RESPONSE: &[u8] = fixture!("gemini/error_response.json");

const TURN_PATH: &str = "/v1beta/models/gemini-3.8-flash:streamGenerateContent?alt=sse";
const ROUTER_PATH: &str = "/v1beta/models/gemini-3.5-flash-lite:generateContent";
const CA_STREAM_PATH: &str = "/v1internal:streamGenerateContent?alt=sse";

fn request_of(hop: &RecordedHop) -> ModelRequest {
    match hop.reading().request.reading {
        Reading::ModelRequest(request) => request,
        other => panic!("not a model request: {other:?}"),
    }
}

/// Checks what Gemini CLI's first turn carries: 20 tools (5 from the notes server), its ~30 KB
/// system instruction, its `<session_context>` apart from the user's words.
fn assert_turn_request(request: &ModelRequest, system_bytes: usize) {
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
    assert_eq!(request.system.as_ref().map(String::len), Some(system_bytes));
    let context: Vec<usize> = request
        .system_parts
        .iter()
        .filter(|p| p.source == SystemSource::Message("user".into()))
        .map(|p| p.bytes)
        .collect();
    assert_eq!(context, [818], "the <session_context> part");
    assert_eq!(request.latest_user_text(), Some("Add buy milk to my notes"));
    assert!(request.stream);
    assert_eq!(
        request.thinking_request.as_deref(),
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
    assert_turn_request(&request, 30_312);
    let explained = explain_request(&turn, &reading, None);
    assert_eq!(explained.summary, "gemini-3.8-flash, 1 message, 20 tools");
    assert!(
        explained.explanation.contains(
            "It asks the model to think before it answers (includeThoughts, thinkingLevel HIGH)."
        ),
        "{}",
        explained.explanation
    );

    let (reply, integrity) = reply_of(&turn);
    assert_eq!(integrity, Integrity::Whole);
    assert_eq!(reply.model.as_deref(), Some("gemini-2.5-pro-001"));
    assert_eq!(reply.message.role, "assistant");
    assert_eq!(reply.records, 2);
    let call = &reply.message.tool_calls[0];
    assert_eq!(call.name, "mcp_notes_append");
    assert_eq!(call.arguments, json!({"content": "buy milk"}));
    assert!(reply.message.thinking.starts_with("**Adding the note**"));
    assert_eq!(reply.message.thinking_signature_bytes, Some(128));
    assert_eq!(reply.finish_reason.as_deref(), Some("STOP"));
    let usage = reply.usage;
    assert_eq!(usage.input_tokens, Some(10_162));
    assert_eq!(usage.cache_read_tokens, Some(4_096));
    assert_eq!(usage.cache_write_tokens, None);
    assert_eq!(usage.output_tokens, Some(18 + 61));
    assert_eq!(usage.reasoning_tokens, Some(61));
    assert!(usage.cache_inside_input);
    assert_eq!(usage.prompt_total(), Some(10_162));
    assert_eq!(usage.uncached_prompt(), Some(10_162 - 4_096));

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
        words.contains("in parts marked thought: true (93 bytes)"),
        "{words}"
    );
    assert!(
        words.contains("A thoughtSignature (128 bytes) seals the reasoning"),
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
    assert_eq!(sent.thinking_signature_bytes, Some(128));
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
    assert_eq!(reply.message.content, "I added \"buy milk\" to your notes.");
    assert!(reply.message.tool_calls.is_empty());
    let usage = reply.usage;
    assert_eq!(
        (
            usage.input_tokens,
            usage.cache_read_tokens,
            usage.output_tokens
        ),
        (Some(10_240), Some(8_192), Some(9))
    );
    assert_eq!(usage.reasoning_tokens, None);
    let explained = explain_response(&turn, &turn.reading());
    assert_eq!(
        explained.summary,
        "the model answers: \"I added \"buy milk\" to your notes.\""
    );
    assert!(explained.explanation.contains("the agent loop stops here"));
}

#[test]
fn the_json_array_stream_reads_like_the_sse_one_and_a_cut_one_is_cut_off() {
    let sse = reply_of(&hop(Role::Model, TURN_PATH, TOOL_REQUEST, SSE, TOOL_STREAM)).0;
    let array_path = "/v1beta/models/gemini-3.8-flash:streamGenerateContent";
    let array = hop(Role::Model, array_path, TOOL_REQUEST, JSON, TOOL_ARRAY);
    let (reply, integrity) = reply_of(&array);
    assert_eq!(integrity, Integrity::Whole);
    assert_eq!(reply, sse);
    assert!(request_of(&array).stream);
    // Cut anywhere before its last item closes, the array stream is cut off, never malformed.
    let last_item = TOOL_ARRAY.len() - 2;
    for cut in (1..last_item).step_by(37) {
        let cut_hop = hop(Role::Model, array_path, b"{}", JSON, &TOOL_ARRAY[..cut]);
        let (_, integrity) = reply_of(&cut_hop);
        assert_eq!(integrity, Integrity::CutOff, "cut at {cut}");
    }

    let cut = hop(Role::Model, TURN_PATH, TOOL_REQUEST, SSE, TOOL_CUT);
    let (reply, integrity) = reply_of(&cut);
    assert_eq!(integrity, Integrity::CutOff);
    assert!(reply.message.tool_calls.is_empty());
    assert!(reply.message.thinking.starts_with("**Adding the note**"));
    assert_eq!(reply.usage.reasoning_tokens, Some(61));
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
fn the_router_call_is_a_side_request_asking_for_json() {
    let router = hop(
        Role::Model,
        ROUTER_PATH,
        ROUTER_REQUEST,
        JSON,
        ROUTER_RESPONSE,
    );
    let reading = router.reading();
    assert_eq!(reading.dialect, Dialect::Gemini);
    let request = request_of(&router);
    assert_eq!(request.model.as_deref(), Some("gemini-3.5-flash-lite"));
    assert!(!request.stream);
    assert!(request.tools.is_empty());
    assert_eq!(request.system.as_ref().map(String::len), Some(2_175));
    assert_eq!(request.latest_user_text(), Some("Add buy milk to my notes"));
    assert_eq!(
        request.answer_format.as_deref(),
        Some("JSON (complexity_reasoning, complexity_score)")
    );
    assert!(request.is_side_request());
    // Even after a turn, it is not told as the conversation re-sent.
    let previous = request_of(&hop(Role::Model, TURN_PATH, TOOL_REQUEST, SSE, TOOL_STREAM));
    let explained = explain_request(&router, &reading, Some(&previous));
    assert_eq!(
        explained.summary,
        "gemini-3.5-flash-lite, 2 messages, 0 tools"
    );
    assert!(
        explained.explanation.contains(
            "It offers no tools and asks for an answer in JSON (complexity_reasoning, complexity_score): a side request of the host"
        ),
        "{}",
        explained.explanation
    );

    let (reply, integrity) = reply_of(&router);
    assert_eq!(integrity, Integrity::Whole);
    assert!(!reply.streamed);
    assert_eq!(
        (reply.usage.input_tokens, reply.usage.output_tokens),
        (Some(812), Some(21))
    );
    assert_eq!(reply.usage.cache_read_tokens, None);
    let explained = explain_response(&router, &reading);
    assert!(
        explained
            .summary
            .starts_with("the model answers the host's side request: \"{\"complexity_reasoning\""),
        "{}",
        explained.summary
    );
    assert!(
        explained
            .explanation
            .contains("not a turn of the conversation")
    );
}

#[test]
fn code_assist_wraps_the_same_shapes_and_names_the_model_in_the_body() {
    let turn = hop(
        Role::Model,
        CA_STREAM_PATH,
        CA_TOOL_REQUEST,
        SSE,
        CA_TOOL_STREAM,
    );
    let reading = turn.reading();
    assert_eq!(reading.dialect, Dialect::Gemini);
    let request = request_of(&turn);
    assert_eq!(request.model.as_deref(), Some("gemini-3-flash"));
    assert_turn_request(&request, 23_286);
    let (reply, integrity) = reply_of(&turn);
    assert_eq!(integrity, Integrity::Whole);
    assert_eq!(reply.message.tool_calls[0].name, "mcp_notes_append");
    assert_eq!(reply.usage.cache_read_tokens, Some(4_096));
    assert_eq!(reply.usage.output_tokens, Some(79));
    assert!(
        explain_response(&turn, &reading)
            .explanation
            .contains("a functionCall part")
    );

    let router = hop(
        Role::Model,
        "/v1internal:generateContent",
        CA_ROUTER_REQUEST,
        JSON,
        CA_ROUTER_RESPONSE,
    );
    let request = request_of(&router);
    assert_eq!(request.model.as_deref(), Some("gemini-3.1-flash-lite"));
    assert_eq!(
        request.answer_format.as_deref(),
        Some("JSON (reasoning, model_choice)")
    );
    let (reply, _) = reply_of(&router);
    assert!(
        reply
            .message
            .content
            .contains("\"model_choice\": \"flash\"")
    );

    // Code Assist's own calls (loadCodeAssist, quotas) are not model turns.
    let load = hop(
        Role::Model,
        "/v1internal:loadCodeAssist",
        CA_LOAD_REQUEST,
        JSON,
        b"{}",
    );
    assert_eq!(load.reading().dialect, Dialect::Unknown);
}

#[test]
fn an_error_body_is_a_model_server_error() {
    let mut refused = hop(Role::Model, TURN_PATH, ERROR_REQUEST, JSON, ERROR_RESPONSE);
    refused.end.as_mut().unwrap().status = Some(400);
    let (reply, integrity) = reply_of(&refused);
    assert_eq!(integrity, Integrity::Whole);
    assert_eq!(
        reply.error.as_deref(),
        Some("400 INVALID_ARGUMENT: Request contains an invalid argument.")
    );
    let explained = explain_response(&refused, &refused.reading());
    assert_eq!(
        explained.summary,
        "model server error: 400 INVALID_ARGUMENT: Request contains an invalid argument."
    );
}

#[test]
fn count_tokens_is_a_request_of_its_own_kind() {
    let count = hop(
        Role::Model,
        "/v1beta/models/gemini-2.5-pro:countTokens",
        br#"{"contents":[{"role":"user","parts":[{"text":"Add buy milk to my notes"}]}]}"#,
        JSON,
        br#"{"totalTokens": 7, "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 7}]}"#,
    );
    let reading = count.reading();
    assert_eq!(reading.dialect, Dialect::GeminiCountTokens);
    assert!(!reading.dialect.is_model_chat());
    assert!(!matches!(reading.request.reading, Reading::ModelRequest(_)));
    let asked = explain_request(&count, &reading, None);
    assert_eq!(
        asked.summary,
        "count the tokens of 1 message for gemini-2.5-pro"
    );
    assert!(asked.explanation.contains("nothing is generated"));
    assert_eq!(explain_response(&count, &reading).summary, "7 tokens");
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
    assert!(lines[0].starts_with("1 agent → model  POST /v1beta/models/gemini-3.5-flash-lite:generateContent  gemini-3.5-flash-lite, 2 messages, 0 tools"), "{lines:#?}");
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
        lines[5].contains("the model answers: \"I added"),
        "{lines:#?}"
    );
}
