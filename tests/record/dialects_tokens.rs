//! Every token bucket, read from each API's usage shape: Anthropic's counts apart from the input
//! (a stream's `message_start` overlaid by its `message_delta`), OpenAI chat's usage chunk and
//! Responses' `response.completed` with their cached and reasoning details, Ollama's counts; the
//! prompt total each face then shows, and the sum over a trace.

use crate::dialect_hops as support;

use support::{JSON, NDJSON, SSE, hop, reply_of};
use tracer_trace::{Direction, RecordedHop, TokenCounts, explain_trace, summarize};
use tracer_wire::hop::Role;

/// Claude Code's tool-call turn: input 4,957 + cache write 17,758 + cache read 16,901, output 133.
pub fn claude_code_turn() -> RecordedHop {
    hop(
        Role::Model,
        "/v1/messages",
        fixture!("anthropic_request.json"),
        SSE,
        fixture!("anthropic_stream_cache_usage.sse"),
    )
}

fn opencode_chat_turn() -> RecordedHop {
    hop(
        Role::Model,
        "/v1/chat/completions",
        fixture!("openai_chat_request.json"),
        SSE,
        fixture!("openai_chat_stream_usage_details.sse"),
    )
}

fn codex_responses_turn() -> RecordedHop {
    hop(
        Role::Model,
        "/v1/responses",
        fixture!("openai_responses_request.json"),
        SSE,
        fixture!("openai_responses_stream_usage_details.sse"),
    )
}

/// The tokens the answer of a one-hop trace shows.
fn answer_tokens(hop: &RecordedHop) -> Option<TokenCounts> {
    let messages = explain_trace(std::slice::from_ref(hop));
    let request = messages
        .iter()
        .find(|m| m.direction == Direction::Request)
        .expect("a request");
    assert_eq!(request.tokens, None, "a request reports no tokens");
    messages
        .iter()
        .find(|m| m.direction == Direction::Response)
        .and_then(|m| m.tokens)
}

#[test]
fn anthropic_stream_counts_the_cache_apart_and_its_delta_wins() {
    let hop = claude_code_turn();
    let (reply, _) = reply_of(&hop);
    let usage = reply.usage;
    assert_eq!(usage.input_tokens, Some(4957));
    assert_eq!(usage.cache_write_tokens, Some(17758));
    assert_eq!(usage.cache_read_tokens, Some(16901));
    assert_eq!(usage.cache_write_5m_tokens, Some(17758));
    assert_eq!(usage.cache_write_1h_tokens, Some(0));
    // message_start said 26 output tokens; message_delta's final 133 wins.
    assert_eq!(usage.output_tokens, Some(133));
    assert_eq!(usage.reasoning_tokens, None);
    assert!(!usage.cache_inside_input);
    assert_eq!(usage.prompt_total(), Some(39616));
    let tokens = answer_tokens(&hop).expect("tokens on the answer");
    assert_eq!(tokens.prompt, Some(39616));
    assert_eq!(
        tokens.text().as_deref(),
        Some(
            "39,616 in (16,901 cache read, 17,758 cache write for 5 minutes, 4,957 new) · 133 out"
        )
    );
}

#[test]
fn anthropic_plain_reply_reads_the_same_buckets() {
    let body = br#"{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-8","content":[{"type":"text","text":"Done."}],"stop_reason":"end_turn","usage":{"input_tokens":12,"cache_creation_input_tokens":0,"cache_read_input_tokens":34674,"output_tokens":9}}"#;
    let hop = hop(
        Role::Model,
        "/v1/messages",
        fixture!("anthropic_request.json"),
        JSON,
        body,
    );
    let (reply, _) = reply_of(&hop);
    assert_eq!(reply.usage.prompt_total(), Some(34686));
    assert_eq!(
        answer_tokens(&hop).and_then(|t| t.text()).as_deref(),
        Some("34,686 in (34,674 cache read, 12 new) · 9 out")
    );
}

#[test]
fn openai_chat_usage_chunk_carries_cached_and_reasoning_tokens_inside() {
    let hop = opencode_chat_turn();
    let (reply, _) = reply_of(&hop);
    let usage = reply.usage;
    assert_eq!(usage.input_tokens, Some(14230));
    assert_eq!(usage.cache_read_tokens, Some(12800));
    assert_eq!(usage.output_tokens, Some(96));
    assert_eq!(usage.reasoning_tokens, Some(40));
    assert!(usage.cache_inside_input);
    assert_eq!(
        usage.prompt_total(),
        Some(14230),
        "cached tokens are inside"
    );
    assert_eq!(
        answer_tokens(&hop).and_then(|t| t.text()).as_deref(),
        Some("14,230 in (12,800 cache read, 1,430 new) · 96 out (40 reasoning)")
    );
}

#[test]
fn responses_completed_carries_input_and_output_details() {
    let hop = codex_responses_turn();
    let (reply, _) = reply_of(&hop);
    let usage = reply.usage;
    assert_eq!(usage.input_tokens, Some(21034));
    assert_eq!(usage.cache_read_tokens, Some(19968));
    assert_eq!(usage.reasoning_tokens, Some(192));
    assert!(usage.cache_inside_input);
    assert_eq!(
        answer_tokens(&hop).and_then(|t| t.text()).as_deref(),
        Some("21,034 in (19,968 cache read, 1,066 new) · 250 out (192 reasoning)")
    );
    // A plain Responses reply with zero details has no brackets.
    let plain = support::hop(
        Role::Model,
        "/v1/responses",
        fixture!("openai_responses_request.json"),
        JSON,
        fixture!("openai_responses_response.json"),
    );
    assert_eq!(
        answer_tokens(&plain).and_then(|t| t.text()).as_deref(),
        Some("82 in · 17 out")
    );
}

#[test]
fn ollama_counts_are_the_whole_prompt() {
    let hop = hop(
        Role::Model,
        "/api/chat",
        fixture!("ollama_chat_request.json"),
        NDJSON,
        fixture!("ollama_chat_stream_tool_call.ndjson"),
    );
    let (reply, _) = reply_of(&hop);
    assert!(reply.usage.cache_inside_input);
    assert_eq!(
        answer_tokens(&hop).and_then(|t| t.text()).as_deref(),
        Some("169 in · 15 out")
    );
}

#[test]
fn a_trace_sums_its_model_hops_bucket_by_bucket() {
    let hops = [claude_code_turn(), codex_responses_turn()];
    let summary = summarize(&hops);
    assert_eq!(summary.tokens.prompt, Some(39616 + 21034));
    assert_eq!(summary.tokens.cache_read, Some(16901 + 19968));
    assert_eq!(summary.tokens.cache_write, Some(17758));
    assert_eq!(summary.tokens.output, Some(133 + 250));
    assert_eq!(summary.tokens.reasoning, Some(192));
    assert_eq!(
        summary.tokens.short().as_deref(),
        Some("60,650 in · 383 out")
    );
    assert_eq!(
        summarize(&[]).tokens,
        TokenCounts::default(),
        "no model hop, no tokens"
    );
}

/// A model hop of a recorded agent's fixture (tests/fixtures/agents/AGENT/TURN_*).
fn agent_turn(path: &str, request: &[u8], response: &[u8]) -> RecordedHop {
    hop(Role::Model, path, request, SSE, response)
}

fn text_of(hop: &RecordedHop) -> Option<String> {
    answer_tokens(hop).and_then(|t| t.text())
}

#[test]
fn claude_codes_recorded_turns_total_their_prompts() {
    let call = agent_turn(
        "/v1/messages",
        include_bytes!("../fixtures/agents/claude-code/turn1_request.json"),
        include_bytes!("../fixtures/agents/claude-code/turn1_response.sse"),
    );
    let (reply, _) = reply_of(&call);
    assert_eq!(reply.usage.prompt_total(), Some(39616));
    assert_eq!(reply.usage.cache_write_5m_tokens, Some(12758));
    assert_eq!(reply.usage.cache_write_1h_tokens, Some(5000));
    assert_eq!(
        text_of(&call).as_deref(),
        Some(
            "39,616 in (16,901 cache read, 12,758 cache write for 5 minutes, 5,000 for 1 hour, \
             4,957 new) · 133 out"
        )
    );
    let answer = agent_turn(
        "/v1/messages",
        include_bytes!("../fixtures/agents/claude-code/turn2_request.json"),
        include_bytes!("../fixtures/agents/claude-code/turn2_response.sse"),
    );
    assert_eq!(
        text_of(&answer).as_deref(),
        Some("35,391 in (34,659 cache read, 420 cache write for 5 minutes, 312 new) · 41 out")
    );
    assert_eq!(
        summarize(&[call, answer]).tokens.short().as_deref(),
        Some("75,007 in · 174 out")
    );
}

#[test]
fn codex_opencode_and_qwen_recorded_turns_count_their_cache_inside() {
    let codex = agent_turn(
        "/v1/responses",
        include_bytes!("../fixtures/agents/codex/turn1_request.json"),
        include_bytes!("../fixtures/agents/codex/turn1_response.sse"),
    );
    assert_eq!(
        text_of(&codex).as_deref(),
        Some("12,034 in (11,008 cache read, 1,026 new) · 187 out (128 reasoning)")
    );
    let opencode = agent_turn(
        "/v1/chat/completions",
        include_bytes!("../fixtures/agents/opencode/turn1_request.json"),
        include_bytes!("../fixtures/agents/opencode/turn1_response.sse"),
    );
    assert_eq!(
        text_of(&opencode).as_deref(),
        Some("9,876 in (8,192 cache read, 1,684 new) · 95 out (64 reasoning)")
    );
    // opencode's title call: nothing cached, no reasoning, no brackets.
    let title = agent_turn(
        "/v1/chat/completions",
        include_bytes!("../fixtures/agents/opencode/side1_request.json"),
        include_bytes!("../fixtures/agents/opencode/side1_response.sse"),
    );
    assert_eq!(text_of(&title).as_deref(), Some("180 in · 7 out"));
    let qwen = agent_turn(
        "/v1/chat/completions",
        include_bytes!("../fixtures/agents/qwen-code/turn3_request.json"),
        include_bytes!("../fixtures/agents/qwen-code/turn3_response.sse"),
    );
    assert_eq!(
        text_of(&qwen).as_deref(),
        Some("10,120 in (9,856 cache read, 264 new) · 40 out (16 reasoning)")
    );
}
