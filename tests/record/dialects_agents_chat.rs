//! Chat-completions agents read right (tests/fixtures/agents/): opencode's and Qwen Code's
//! `reasoning_content` shown apart, and their MCP tools told from their own by name.

use crate::agent_trace::agent_hops;
use tracer_trace::read::request_views::request_views;
use tracer_trace::{Case, explain_trace};

#[test]
fn opencode_and_qwen_show_reasoning_content_and_their_mcp_tools() {
    // opencode names the notes server's tools `notes_append`; its own `read` and `write` share
    // names with the server's but not the prefix.
    let hops = agent_hops("opencode");
    let views = request_views(&hops);
    let work = views
        .iter()
        .find(|v| v.anatomy.tools.total > 0)
        .expect("a request with tools");
    assert_eq!(work.anatomy.tools.host, 10);
    assert_eq!(work.anatomy.tools.servers, [("notes".to_string(), 5)]);
    let messages = explain_trace(&hops);
    let call = messages
        .iter()
        .find(|m| m.case == Case::ModelToolCall)
        .expect("the tool call");
    assert!(call.summary.contains("notes_append"), "{}", call.summary);
    assert!(
        call.explanation
            .contains("First it thought, in reasoning_content: \"The user wants a note added."),
        "{}",
        call.explanation
    );

    // Qwen Code offers the notes tools only after a tool_search: its first request has none
    // of them (its own `todo_write` is not the server's `write`), the next has one.
    let hops = agent_hops("qwen-code");
    let views = request_views(&hops);
    assert_eq!(views[0].anatomy.tools.total, 15);
    assert!(
        views[0].anatomy.tools.servers.is_empty(),
        "{:?}",
        views[0].anatomy
    );
    assert_eq!(views[1].anatomy.tools.servers, [("notes".to_string(), 1)]);
    assert_eq!(
        views[0].user_words.as_deref(),
        Some("Add buy milk to my notes")
    );
    let thoughts = explain_trace(&hops)
        .iter()
        .filter(|m| m.explanation.contains("in reasoning_content"))
        .count();
    assert_eq!(thoughts, 3);
}
