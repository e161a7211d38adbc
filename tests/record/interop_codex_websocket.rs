//! Codex CLI (npm `@openai/codex`) with the Responses API over a WebSocket
//! (`supports_websockets = true`) against the scripted upstream's WebSocket endpoint, through a
//! reverse route and through `HTTPS_PROXY` (tracer's forward proxy decrypting it, the upstream
//! served over TLS as `api.scripted.test`). Codex never falls back to HTTPS, its three
//! `response.create` messages are what the upstream read, byte for byte, and the trace reads them
//! as model turns with the tool call, its `tools/call append` and the final text, titled by the
//! user's words. Gated like interop_agents.rs (skips without the agent unless TRACER_INTEROP=1).

use serde_json::Value;

use super::interop_agents::{CODEX, Run, messages, run_driver, skip_or_fail};

fn assert_codex_over_a_websocket(run: &Run) {
    let s = &run.summary;
    assert_eq!(s["exit_code"], 0, "{s:#}");
    assert_eq!(s["notes"], "buy milk\n", "{s:#}");
    let stderr = s["stderr"].as_str().unwrap();
    assert!(
        !stderr.contains("Falling back"),
        "Codex fell back: {stderr}"
    );
    let answered: Vec<&str> = run
        .upstream
        .iter()
        .map(|e| e["answered"].as_str().unwrap())
        .filter(|a| a.starts_with("websocket"))
        .collect();
    assert_eq!(
        answered,
        [
            "websocket",
            "websocket:prewarm",
            "websocket:call",
            "websocket:final"
        ],
        "one upgrade, no retry; the prewarm and both turns over it"
    );
    assert!(
        run.upstream.iter().all(|e| e["method"] != "POST"),
        "no HTTP turn"
    );
    let log = run.tool_trace();
    assert_eq!(
        log["trace"]["title"], "Add buy milk to my notes",
        "{:#}",
        log["trace"]
    );
    let socket = log["hops"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h.get("websocket").is_some())
        .expect("the WebSocket hop in the tool's trace");
    assert_eq!(socket["state"], "complete", "{socket:#}");
    let sent: Vec<&str> = socket["websocket"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["direction"] == "send" && m["opcode"] == 1)
        .map(|m| m["text"].as_str().unwrap())
        .collect();
    let read: Vec<&str> = run
        .upstream
        .iter()
        .filter(|e| e["answered"].as_str().unwrap().starts_with("websocket:"))
        .map(|e| e["body"].as_str().unwrap())
        .collect();
    assert_eq!(
        sent, read,
        "what the record says Codex sent is what the upstream read"
    );
    let turns: Vec<&Value> = messages(&log)
        .filter(|m| m["method"] == "WS" && m["direction"] == "→")
        .collect();
    assert_eq!(turns.len(), 3, "three turns read as model requests");
    assert!(turns.iter().all(|m| m["dialect"] == "openai.responses"));
    let cases: Vec<(&str, &str)> = messages(&log)
        .map(|m| (m["case"].as_str().unwrap(), m["summary"].as_str().unwrap()))
        .collect();
    let has = |case: &str, text: &str| cases.iter().any(|(c, s)| *c == case && s.contains(text));
    assert!(has("model_tool_call", "append"), "{cases:#?}");
    assert!(has("mcp_tool_call", "buy milk"), "{cases:#?}");
    assert!(has("model_answer", "Done: I added"), "{cases:#?}");
    // Codex runs the tool on `output_item.done`, mid-stream: the model's ask comes first.
    let position = |case: &str| cases.iter().position(|(c, _)| *c == case).unwrap();
    assert!(
        position("model_tool_call") < position("mcp_tool_call"),
        "the tool call follows the answer that asked for it: {cases:#?}"
    );
    for (_, summary) in &cases {
        assert!(!summary.contains('\u{fffd}'), "{summary}");
    }
}

#[test]
fn codex_over_a_websocket_through_a_reverse_route() {
    let Some(run) = run_driver(&CODEX, "codex-websocket", &[], &[]) else {
        return;
    };
    assert_codex_over_a_websocket(&run);
}

#[test]
fn codex_over_a_websocket_through_https_proxy() {
    // The driver makes the upstream's certificate with the openssl command.
    let openssl = std::process::Command::new("openssl")
        .arg("version")
        .output();
    if !openssl.is_ok_and(|o| o.status.success()) {
        skip_or_fail("openssl is missing (it makes the TLS upstream's certificate)");
        return;
    }
    let args = ["--forward", "--model-host", "api.scripted.test"];
    let Some(run) = run_driver(&CODEX, "codex-websocket", &args, &[]) else {
        return;
    };
    assert_codex_over_a_websocket(&run);
}
