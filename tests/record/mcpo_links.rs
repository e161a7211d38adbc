//! A host (open-webui) behind an agent route calls its model and mcpo; mcpo calls the MCP server:
//! each caller gets a lane named by its route, and the model's `tool_<name>_post` call is linked
//! to the REST call that ran it, itself linked to the `tools/call` it caused.

use serde_json::json;
use tracer_trace::explain::lanes::lanes;
use tracer_trace::{Direction, RecordedHop, explain_trace};
use tracer_wire::hop::Role;

use crate::trace_hops::hop;

fn on_route(mut hop: RecordedHop, route: &str) -> RecordedHop {
    hop.start.route = route.to_string();
    hop
}

fn host_trace() -> Vec<RecordedHop> {
    let user = json!({"role": "user", "content": "What is Ann's number?"});
    let call = json!({"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "tool_get_phonenumber_post", "arguments": {"name": "Ann"}}}]});
    vec![
        on_route(
            hop("1", Role::Agent, "/agent", 0, 1000)
                .bodies(json!({"message": "What is Ann's number?"}), json!({"reply": "555-0100"}))
                .done(),
            "open-webui",
        ),
        on_route(
            hop("2", Role::Model, "/api/chat", 10, 300)
                .bodies(
                    json!({"model": "qwen2.5:7b", "messages": [user], "tools": [{"type": "function", "function": {"name": "tool_get_phonenumber_post"}}]}),
                    json!({"model": "qwen2.5:7b", "message": call, "done": true}),
                )
                .done(),
            "ollama",
        ),
        on_route(
            hop("3", Role::Other, "/phonebook/get_phonenumber", 310, 400)
                .bodies(json!({"name": "Ann"}), json!("555-0100"))
                .done(),
            "mcpo",
        ),
        on_route(
            hop("4", Role::Mcp, "/mcp", 320, 390)
                .bodies(
                    json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "get_phonenumber", "arguments": {"name": "Ann"}}}),
                    json!({"jsonrpc": "2.0", "id": 3, "result": {"content": [{"type": "text", "text": "555-0100"}], "isError": false}}),
                )
                .done(),
            "phonebook",
        ),
    ]
}

#[test]
fn each_caller_has_a_lane_and_the_model_call_links_to_rest_and_mcp() {
    let hops = host_trace();
    let messages = explain_trace(&hops);
    let lines: Vec<String> = messages.iter().map(|m| m.line()).collect();
    let drawn = lanes(&hops, &messages);
    assert_eq!(
        drawn.names,
        ["you", "open-webui", "ollama", "mcpo", "phonebook"],
        "{lines:#?}"
    );
    let of = |hop: usize, direction: Direction| {
        messages
            .iter()
            .find(|m| m.hop_index == hop && m.direction == direction && m.part.is_none())
            .unwrap()
    };
    let ends = |hop: usize, direction: Direction| {
        let m = of(hop, direction);
        (m.from.as_str(), m.to.as_str())
    };
    assert_eq!(ends(0, Direction::Request), ("you", "open-webui"));
    assert_eq!(ends(1, Direction::Request), ("open-webui", "ollama"));
    assert_eq!(ends(2, Direction::Request), ("open-webui", "mcpo"));
    assert_eq!(ends(3, Direction::Request), ("mcpo", "phonebook"));
    assert_eq!(ends(3, Direction::Response), ("phonebook", "mcpo"));
    let (asked, rest, mcp) = (
        of(1, Direction::Response),
        of(2, Direction::Request),
        of(3, Direction::Request),
    );
    assert_eq!(rest.dialect, "openapi.tools", "{lines:#?}");
    assert!(
        rest.summary.contains(&format!(
            "asked for in message {} as tool_get_phonenumber_post",
            asked.number
        )) && rest
            .summary
            .contains(&format!("runs as tools/call in message {}", mcp.number)),
        "{lines:#?}"
    );
    assert!(rest.links.contains(&asked.number) && rest.links.contains(&mcp.number));
    assert!(
        asked
            .summary
            .contains(&format!("sent as REST in message {}", rest.number)),
        "{lines:#?}"
    );
    assert!(
        of(2, Direction::Response)
            .summary
            .contains("tool result: \"555-0100\""),
        "{lines:#?}"
    );
}
