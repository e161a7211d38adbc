//! Real agents read in their own terms, over what they sent through tracer
//! (tests/fixtures/agents/): Claude Code's `tool_use` / `tool_result` blocks, signed thinking,
//! system blocks and `role: system` message, cache marks and adaptive thinking; Codex's
//! Responses items, encrypted reasoning and the MCP tools inside a `namespace` entry; every
//! request's tools counted by origin; the user's words in `tracer show` and the handout.

use std::process::Command;

use crate::agent_trace::{agent_dir, agent_hops, hop_of};
use tracer_export::body_text::TraceToExport;
use tracer_export::hop_log::HopLog;
use tracer_export::mermaid::markdown_handout;
use tracer_store::traces::TraceRow;
use tracer_trace::read::request_views::request_views;
use tracer_trace::{Case, Direction, ExplainedMessage, RecordedHop, explain_trace};
use tracer_wire::dialect::{ModelRequest, ModelResponse, Reading, SystemSource};

fn request_of(hop: &RecordedHop) -> ModelRequest {
    match hop.reading().request.reading {
        Reading::ModelRequest(request) => request,
        other => panic!("not a model request: {other:?}"),
    }
}

fn reply_of(hop: &RecordedHop) -> ModelResponse {
    match hop.reading().response.expect("a response").reading {
        Reading::ModelResponse(reply) => std::sync::Arc::unwrap_or_clone(reply),
        other => panic!("not a model reply: {other:?}"),
    }
}

/// The explained message of a hop's request or response.
fn message<'a>(
    messages: &'a [ExplainedMessage],
    hop: &RecordedHop,
    direction: Direction,
) -> &'a ExplainedMessage {
    messages
        .iter()
        .find(|m| m.hop_id == hop.start.id && m.direction == direction)
        .expect("the hop's message")
}

/// A tools/call result's explanation.
fn tool_result(messages: &[ExplainedMessage]) -> &ExplainedMessage {
    messages
        .iter()
        .find(|m| m.case == Case::McpToolResult)
        .expect("a tool result")
}

#[test]
fn claude_code_is_read_in_anthropics_terms() {
    let hops = agent_hops("claude-code");
    let first = hop_of(&hops, "claude-code", "turn1_request.json");
    let second = hop_of(&hops, "claude-code", "turn2_request.json");

    let request = request_of(first);
    let sources: Vec<&SystemSource> = request.system_parts.iter().map(|p| &p.source).collect();
    assert_eq!(
        sources,
        [
            &SystemSource::SystemField,
            &SystemSource::SystemField,
            &SystemSource::SystemField,
            &SystemSource::Message("system".into())
        ]
    );
    assert!(
        request.system_parts[3].bytes > 6_000,
        "{:?}",
        request.system_parts
    );
    assert_eq!(request.tool_defs.len(), 29);
    assert!(request.tool_defs.iter().map(|t| t.bytes).sum::<usize>() > 60_000);
    assert_eq!(request.cache_marks, 3);
    assert_eq!(
        request.thinking_mode.as_deref(),
        Some("adaptive, effort high")
    );
    assert_eq!(request.body_bytes, 78_277);

    // The reply: thinking (signed), the text said before the call, the tool_use block.
    let reply = reply_of(first);
    assert_eq!(reply.message.content, "I'll add that to your notes.");
    assert_eq!(reply.message.tool_calls[0].name, "mcp__notes__append");
    assert!(
        reply
            .message
            .thinking
            .starts_with("The user wants a note added.")
    );
    assert_eq!(reply.message.thinking_signature_bytes, Some(80));

    let messages = explain_trace(&hops);
    let asked = message(&messages, first, Direction::Request);
    for words in [
        "Its system prompt is 3 system blocks and 1 role: system message in the conversation: 12.3 KB in all.",
        "It offers 29 tools (64.8 KB of names, descriptions and schemas): 24 the host's own, 5 from the MCP server notes.",
        "3 cache_control marks ask the API to cache the prompt",
        "It sets how the model thinks: adaptive, effort high. With thinking {type: adaptive} the model itself decides",
    ] {
        assert!(
            asked.explanation.contains(words),
            "{words}\n{}",
            asked.explanation
        );
    }
    let answered = message(&messages, first, Direction::Response);
    assert_eq!(answered.case, Case::ModelToolCall);
    assert_eq!(
        answered.summary,
        "the model says \"I'll add that to your notes.\" and asks for tool mcp__notes__append {\"content\":\"buy milk\"} (it does not run it: the host will) · run in message 12"
    );
    for words in [
        "The model answered with a tool_use block",
        "as a tool_result block with the same id, inside its next user message",
        "First it thought, in a thinking block: \"The user wants a note added.",
        "The thinking is signed, 80 bytes",
        "Before the call it wrote, for the user: \"I'll add that to your notes.\"",
    ] {
        assert!(
            answered.explanation.contains(words),
            "{words}\n{}",
            answered.explanation
        );
    }
    assert!(
        tool_result(&messages)
            .explanation
            .ends_with("The tool ran. The host will send this text back to the model as a tool_result block inside its next user message.")
    );
    let again = message(&messages, second, Direction::Request);
    assert!(
        again.explanation.contains(
            "New since the previous request of this conversation: the model's reply (thinking, text and 1 tool_use block) and a tool_result block in a user message."
        ),
        "{}",
        again.explanation
    );
    // Nothing about this trace is said in OpenAI's words.
    for m in &messages {
        for openai in ["tool_calls", "role: tool", "function_call"] {
            assert!(
                !m.explanation.contains(openai),
                "{openai}: {}",
                m.explanation
            );
        }
    }
}

#[test]
fn claude_codes_tools_are_counted_by_origin_with_or_without_the_tools_list() {
    let hops = agent_hops("claude-code");
    let views = request_views(&hops);
    assert_eq!(views.len(), 2);
    assert_eq!(
        views[0].anatomy.line(),
        "system 3 blocks + 1 message, 12.3 KB · tools 29 (64.8 KB): 24 the host's, 5 from notes (mcp) · 1 message · 3 cache marks · thinking: adaptive, effort high"
    );
    assert_eq!(
        views[0].user_words.as_deref(),
        Some("Add buy milk to my notes")
    );
    assert_eq!(views[1].anatomy.messages_text(), "3 messages, 2 new");
    assert_eq!(views[1].anatomy.tools.host, 24);
    assert_eq!(views[1].anatomy.tools.servers, [("notes".to_string(), 5)]);
    // The start-up discovery may be a trace of its own: the `mcp__` names still tell.
    let model_only: Vec<RecordedHop> = hops
        .iter()
        .filter(|hop| hop.start.route == "model")
        .cloned()
        .collect();
    let views = request_views(&model_only);
    assert_eq!(views[0].anatomy.tools.servers, [("notes".to_string(), 5)]);
}

#[test]
fn codex_is_read_in_the_responses_apis_terms() {
    let hops = agent_hops("codex");
    let first = hop_of(&hops, "codex", "turn1_request.json");
    let second = hop_of(&hops, "codex", "turn2_request.json");

    let request = request_of(first);
    assert_eq!(request.tools.len(), 21, "{:?}", request.tools);
    let in_notes: Vec<&str> = request
        .tool_defs
        .iter()
        .filter(|t| t.namespace.as_deref() == Some("mcp__notes"))
        .map(|t| t.name.as_str())
        .collect();
    assert_eq!(in_notes, ["append", "clear", "read", "update", "write"]);
    let sources: Vec<&SystemSource> = request.system_parts.iter().map(|p| &p.source).collect();
    let developer = SystemSource::Message("developer".into());
    assert_eq!(sources, [&developer, &developer]);
    assert!(request.system_parts.iter().map(|p| p.bytes).sum::<usize>() > 19_000);
    assert_eq!(request.thinking_mode.as_deref(), Some("summary auto"));

    let reply = reply_of(first);
    assert_eq!(reply.message.tool_calls[0].name, "append");
    assert_eq!(reply.message.hidden_reasoning_bytes, Some(80));
    assert!(
        reply
            .message
            .thinking
            .starts_with("The user wants a note added.")
    );
    // The reasoning item goes back in the next request, with its encrypted part.
    let history = request_of(second);
    let thought = history
        .messages
        .iter()
        .find(|m| m.role == "assistant")
        .expect("the model's turn");
    assert_eq!(thought.hidden_reasoning_bytes, Some(80));
    assert_eq!(thought.tool_calls.len(), 1);

    let messages = explain_trace(&hops);
    let asked = message(&messages, first, Direction::Request);
    assert!(
        asked.explanation.contains(
            "It offers 21 tools (21.7 KB of names, descriptions and schemas): 16 the host's own, 5 from the MCP server notes."
        ),
        "{}",
        asked.explanation
    );
    assert!(
        asked.explanation.contains(
            "Its system prompt is 2 role: developer messages in the conversation: 19.8 KB in all."
        ),
        "{}",
        asked.explanation
    );
    let answered = message(&messages, first, Direction::Response);
    assert_eq!(answered.case, Case::ModelToolCall);
    for words in [
        "The model answered with a function_call item",
        "as a function_call_output item with the same call_id",
        "First it thought, in a reasoning item (its summary): \"The user wants a note added.",
        "(encrypted reasoning, 80 bytes)",
    ] {
        assert!(
            answered.explanation.contains(words),
            "{words}\n{}",
            answered.explanation
        );
    }
    assert!(
        tool_result(&messages)
            .explanation
            .ends_with("as a function_call_output item in its next request.")
    );
    let again = message(&messages, second, Direction::Request);
    assert!(
        again.explanation.contains(
            "New since the previous request of this conversation: the model's reply (thinking, encrypted reasoning and 1 function_call item) and a function_call_output item."
        ),
        "{}",
        again.explanation
    );
    let views = request_views(&hops);
    assert_eq!(
        views[0].anatomy.line(),
        "system 2 messages, 19.8 KB · tools 21 (21.7 KB): 16 the host's, 5 from notes (mcp) · 2 messages · thinking: summary auto"
    );
    assert_eq!(
        views[0].user_words.as_deref(),
        Some("Add buy milk to my notes")
    );
}

/// Codex's final answer with its text deltas dropped and `response.completed` carrying no
/// `output`: only the `output_item.done` events still hold the reply.
fn completed_without_output(sse: &str) -> String {
    let mut out = String::new();
    for event in sse.split("\n\n") {
        let data = event.lines().find_map(|l| l.strip_prefix("data: "));
        let Some(mut value) = data.and_then(|d| serde_json::from_str::<serde_json::Value>(d).ok())
        else {
            continue;
        };
        let kind = value["type"].as_str().unwrap_or_default().to_string();
        if kind.ends_with(".delta") {
            continue;
        }
        if kind == "response.completed" {
            value["response"]["output"] = serde_json::json!([]);
        }
        out.push_str(&format!("event: {kind}\ndata: {value}\n\n"));
    }
    out
}

#[test]
fn a_completed_response_without_output_is_rebuilt_from_the_done_items() {
    let hops = agent_hops("codex");
    let mut last = hop_of(&hops, "codex", "turn2_request.json").clone();
    let sse = std::fs::read_to_string(agent_dir("codex").join("turn2_response.sse")).unwrap();
    let bare = completed_without_output(&sse);
    assert!(!bare.contains("output_text.delta"));
    last.end.as_mut().unwrap().response_body =
        tracer_wire::hop::BodyCapture::whole(bare.into_bytes());
    let reply = reply_of(&last);
    assert_eq!(
        reply.message.content,
        "Done: I added \"buy milk\" to your notes."
    );
    assert_eq!(reply.message.hidden_reasoning_bytes, Some(80));
    assert_eq!(reply.finish_reason.as_deref(), Some("completed"));
}

#[test]
fn the_handout_and_show_give_the_users_words_whatever_the_bodys_length() {
    let hops = agent_hops("codex");
    let trace = TraceToExport {
        fetch: None,
        session: None,
        id: "codex-run",
        title: None,
        hops: &hops,
        agent_events: &[],
    };
    let handout = markdown_handout(&trace);
    let first_request = handout
        .split("\n### ")
        .skip(1)
        .find(|section| section.contains("POST /v1/responses"))
        .expect("the first model request");
    // The body is cut long before the user's message; the words come before it.
    let (head, body) = first_request.split_once("json\n{\n").expect("a body");
    assert!(!body.contains("Add buy milk to my notes"));
    assert!(
        head.contains("The user's words: \"Add buy milk to my notes\""),
        "{head}"
    );
    assert!(
        head.contains("It carries: system 2 messages, 19.8 KB"),
        "{head}"
    );

    let row = TraceRow {
        id: "codex-run".into(),
        title: Some("Add buy milk to my notes".into()),
        kind: "request".into(),
        started_unix_ns: hops[0].start.started_unix_ns,
        ended_unix_ns: None,
        created_by: "test".into(),
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("codex.json");
    std::fs::write(&file, HopLog::from_recorded(row, &hops).to_json_pretty()).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_tracer"))
        .args(["--db", &dir.path().join("t.db").to_string_lossy(), "show"])
        .arg(&file)
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{shown}");
    let lines: Vec<&str> = shown.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.contains("POST /v1/responses"))
        .expect("the first model request");
    let under: Vec<&str> = lines[at + 1..at + 3].iter().map(|l| l.trim()).collect();
    assert!(
        under.join(" ").starts_with(
            "system 2 messages, 19.8 KB · tools 21 (21.7 KB): 16 the host's, 5 from notes (mcp) · 2 messages"
        ),
        "{shown}"
    );
    assert!(
        shown.contains("the user's words: \"Add buy milk to my notes\""),
        "{shown}"
    );
}
