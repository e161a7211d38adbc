//! What tracer must read of an mcpo session (checked on the replayed fixture in `mcpo_replay`
//! and on real mcpo in `interop_mcpo`): the OpenAPI document, each REST call in a trace of its
//! own linked to the `tools/call` it caused, the 422 as an error, lanes named by route, and no
//! trace held open or failed by mcpo's standing stream.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// `tracer show ID --json` of every trace in the database, in the order `ls` gives them.
pub fn shown_traces(db: &Path) -> Vec<Value> {
    let tracer = |args: &[&str]| {
        let output = Command::new(env!("CARGO_BIN_EXE_tracer"))
            .arg("--db")
            .arg(db)
            .args(args)
            .output()
            .unwrap();
        assert!(output.status.success(), "{args:?}: {output:?}");
        serde_json::from_slice::<Value>(&output.stdout).unwrap()
    };
    let listed = tracer(&["ls", "--json"]);
    listed
        .as_array()
        .unwrap()
        .iter()
        .map(|t| tracer(&["show", t["id"].as_str().unwrap(), "--json"]))
        .collect()
}

fn messages(trace: &Value) -> &Vec<Value> {
    trace["messages"].as_array().unwrap()
}

fn find<'a>(trace: &'a Value, case: &str) -> Option<&'a Value> {
    messages(trace).iter().find(|m| m["case"] == case)
}

/// What tracer must read in an mcpo session that fetched the OpenAPI document, made one tool
/// call (`Ashley Johnson`) and one the schema refused (422), each with a traceparent of its own.
pub fn check_mcpo_reading(db: &Path) {
    let traces = shown_traces(db);
    let all = serde_json::to_string_pretty(&traces).unwrap();
    for trace in &traces {
        assert!(
            !matches!(
                trace["trace"]["status"].as_str(),
                Some("in flight" | "failed")
            ),
            "the standing GET /mcp holds and fails no trace: {all}"
        );
    }
    let offered = traces
        .iter()
        .find_map(|t| find(t, "rest_tools_offered"))
        .unwrap_or_else(|| panic!("the OpenAPI document is read: {all}"));
    assert!(
        offered["summary"]
            .as_str()
            .unwrap()
            .starts_with("1 tool offered as REST endpoints: get_phonenumber"),
        "{offered}"
    );
    assert_eq!(offered["dialect"], "openapi.tools");
    assert_eq!(
        (offered["from"].as_str(), offered["to"].as_str()),
        (Some("mcpo"), Some("agent"))
    );
    // The tool call: its own trace, the REST call, then the tools/call it caused, linked.
    let called: Vec<&Value> = traces
        .iter()
        .filter(|t| find(t, "rest_tool_result").is_some())
        .collect();
    assert_eq!(called.len(), 1, "one trace for the call: {all}");
    let call = called[0];
    assert_eq!(call["trace"]["hop_count"], 2, "{call}");
    let rest = find(call, "rest_tool_call").unwrap();
    let mcp = messages(call)
        .iter()
        .find(|m| {
            m["summary"]
                .as_str()
                .unwrap_or_default()
                .starts_with("tools/call get_phonenumber")
        })
        .unwrap_or_else(|| panic!("the tools/call mcpo made is in the call's trace: {call}"));
    assert!(
        rest["number"].as_u64() < mcp["number"].as_u64(),
        "REST call first: {call}"
    );
    let rest_summary = rest["summary"].as_str().unwrap();
    assert!(
        rest_summary.contains(r#"get_phonenumber {"name":"Ashley Johnson"}"#)
            && rest_summary.contains(&format!("runs as tools/call in message {}", mcp["number"])),
        "{rest_summary}"
    );
    assert!(
        mcp["summary"]
            .as_str()
            .unwrap()
            .contains(&format!("for the REST call in message {}", rest["number"])),
        "{mcp}"
    );
    assert_eq!(
        (rest["from"].as_str(), rest["to"].as_str()),
        (Some("agent"), Some("mcpo"))
    );
    assert_eq!(
        (mcp["from"].as_str(), mcp["to"].as_str()),
        (Some("mcpo"), Some("phonebook"))
    );
    let result = find(call, "rest_tool_result").unwrap();
    assert!(
        result["summary"].as_str().unwrap().contains("555-11111111"),
        "{result}"
    );
    // The refused call: its own trace, one hop, an error that never reached MCP.
    let refused: Vec<&Value> = traces
        .iter()
        .filter(|t| find(t, "rest_refused").is_some())
        .collect();
    assert_eq!(refused.len(), 1, "{all}");
    assert_eq!(refused[0]["trace"]["hop_count"], 1);
    assert_eq!(refused[0]["trace"]["status"], "http error");
    let error = find(refused[0], "rest_refused").unwrap();
    assert!(
        error["summary"]
            .as_str()
            .unwrap()
            .contains("name: Field required"),
        "{error}"
    );
}
