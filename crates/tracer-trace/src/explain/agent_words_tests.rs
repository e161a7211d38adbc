//! The sentences of the agent's own account.

use super::*;
use serde_json::{Value, json};
use tracer_wire::agent_event::{JoinKeys, Signal};

fn event(name: &str, attributes: Value) -> AgentEvent {
    let list: Vec<Value> = attributes
        .as_object()
        .expect("object")
        .iter()
        .map(|(k, v)| {
            let value = match v {
                Value::String(s) => json!({"stringValue": s}),
                Value::Bool(b) => json!({"boolValue": b}),
                Value::Number(n) if n.is_i64() => json!({"intValue": n.to_string()}),
                other => json!({"doubleValue": other}),
            };
            json!({"key": k, "value": value})
        })
        .collect();
    AgentEvent {
        signal: Signal::Log,
        service: Some("claude-code".into()),
        name: name.into(),
        time_unix_ns: 1,
        end_unix_ns: None,
        keys: JoinKeys::default(),
        record: json!({"log": {"attributes": list}}),
    }
}

#[test]
fn decisions_say_who_decided() {
    let asked = event(
        "claude_code.tool_decision",
        json!({"tool_name": "Bash", "decision": "accept", "source": "user_temporary", "tool_input": "{\"command\":\"npm test\"}"}),
    );
    assert_eq!(
        sentence(&asked),
        "Claude Code asked whether to run Bash `npm test`; accepted (user_temporary)"
    );
    let config = event(
        "tool_decision",
        json!({"tool_name": "Bash", "decision": "accept", "source": "config"}),
    );
    assert_eq!(
        sentence(&config),
        "Claude Code's configuration accepted Bash (no one was asked)"
    );
}

#[test]
fn a_local_run_says_its_outcome_and_an_mcp_call_its_server() {
    let ran = event(
        "tool_result",
        json!({"tool_name": "Bash", "success": "true", "duration_ms": 2100, "tool_result_size_bytes": 1331, "tool_parameters": "{\"bash_command\":\"echo\",\"full_command\":\"echo hello\"}"}),
    );
    assert_eq!(
        sentence(&ran),
        "Claude Code ran Bash `echo hello` itself: success, 1.3 KB of output, 2.10 s"
    );
    let mcp = event(
        "tool_result",
        json!({"tool_name": "mcp__notes__append", "success": false, "error": "boom", "mcp_server_name": "notes", "mcp_tool_name": "append"}),
    );
    assert_eq!(
        sentence(&mcp),
        "Claude Code called append on notes over MCP: failed: boom"
    );
}

#[test]
fn api_errors_hooks_and_unknown_events_read() {
    let error = event(
        "api_error",
        json!({"status_code": "529", "error": "overloaded", "attempt": 2}),
    );
    assert_eq!(
        sentence(&error),
        "the API answered 529 (overloaded); Claude Code is on attempt 2"
    );
    let hook = event(
        "hook_execution_complete",
        json!({"hook_event_name": "PreToolUse"}),
    );
    assert_eq!(sentence(&hook), "PreToolUse hook ran");
    let odd = event(
        "something.new",
        json!({"session.id": "s", "zeta": 1, "alpha": "\u{1b}[31m"}),
    );
    assert_eq!(
        sentence(&odd),
        "Claude Code reported something.new (alpha, zeta)"
    );
    let prompt = event("user_prompt", json!({"prompt": "Add\u{202e} buy milk"}));
    assert!(
        !sentence(&prompt).contains('\u{202e}'),
        "{}",
        sentence(&prompt)
    );
}

#[test]
fn costs_agree_within_a_percent_and_disagree_beyond() {
    assert!(cost_check(0.0100, Some(0.0101)).ends_with("they agree"));
    assert!(cost_check(0.0100, Some(0.0120)).contains("disagree by 16.7%"));
    assert!(cost_check(0.01, None).contains("no price"));
    let api = event(
        "api_request",
        json!({"model": "claude-x", "cost_usd": 0.0123, "input_tokens": 10, "output_tokens": 5, "duration_ms": 1200}),
    );
    assert_eq!(agent_cost(&api), Some(0.0123));
    assert_eq!(
        sentence(&api),
        "Claude Code's own account of this call to claude-x: 10 in / 5 out, its cost $0.012300, 1.20 s"
    );
}
