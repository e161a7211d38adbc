//! Gemini's side requests and other shapes, from what Gemini CLI 0.61 sent: the routing call
//! (no tools, a JSON `complexity_score` asked for), Code Assist (`/v1internal:…`, bodies wrapped in
//! `{"request"}` / `{"response"}`, its own account calls), an error body, `countTokens`; and a
//! Gemini run through `tracer proxy` grouped into a trace titled with the user's words.

use crate::dialect_hops as support;
use crate::dialects_gemini::{
    ROUTER_PATH, ROUTER_REQUEST, ROUTER_RESPONSE, TOOL_REQUEST, TOOL_STREAM, TURN_PATH,
    assert_turn_request, request_of,
};
use crate::gemini_cli;

use support::{JSON, SSE, hop, reply_of};
use tracer_trace::{explain_request, explain_response};
use tracer_wire::dialect::{Dialect, Integrity, Reading};
use tracer_wire::hop::Role;

const CA_ROUTER_REQUEST: &[u8] = gemini_cli!("code-assist/side1_request.json");
const CA_ROUTER_RESPONSE: &[u8] = gemini_cli!("code-assist/side1_response.json");
const CA_TOOL_REQUEST: &[u8] = gemini_cli!("code-assist/turn1_request.json");
const CA_TOOL_STREAM: &[u8] = gemini_cli!("code-assist/turn1_response.sse");
const CA_LOAD_REQUEST: &[u8] = gemini_cli!("code-assist/code_assist_loadCodeAssist_request.json");
/// What the Gemini API answers a request it refuses (from a scripted upstream Gemini CLI 0.61
/// exited 1 on).
const ERROR_RESPONSE: &[u8] = fixture!("gemini_error_response.json");
const CA_STREAM_PATH: &str = "/v1internal:streamGenerateContent?alt=sse";

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
    assert_eq!(request.system.as_deref().map(str::len), Some(2_175));
    assert_eq!(
        request.system_parts.len(),
        2,
        "the instruction and the <session_context>"
    );
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
        (Some(1_200), Some(20))
    );
    assert_eq!(reply.usage.cache_read_tokens, None);
    assert_eq!(reply.usage.reasoning_tokens, Some(0));
    let explained = explain_response(&router, &reading);
    assert!(
        explained
            .summary
            .starts_with("the model answers the host's side request: \"{\"complexity_reasoning\":\"scripted answer\",\"complexity_score\":30}\""),
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
    assert_turn_request(&request, 23_302, 824);
    let (reply, integrity) = reply_of(&turn);
    assert_eq!(integrity, Integrity::Whole);
    assert_eq!(reply.message.tool_calls[0].name, "mcp_notes_append");
    assert_eq!(reply.usage.cache_read_tokens, Some(8_190));
    assert_eq!(reply.usage.output_tokens, Some(127));
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
    assert!(reply.message.content.contains("\"model_choice\":\"flash\""));

    // Code Assist's own calls (loadCodeAssist, quotas) are not model turns.
    let load = hop(
        Role::Model,
        "/v1internal:loadCodeAssist",
        CA_LOAD_REQUEST,
        JSON,
        b"{}",
    );
    assert_eq!(load.reading().dialect, Dialect::Unknown);
    assert_eq!(
        explain_request(&load, &load.reading(), None).summary,
        "Code Assist loadCodeAssist (not a model turn)"
    );
}

#[test]
fn an_error_body_is_a_model_server_error() {
    let mut refused = hop(Role::Model, TURN_PATH, TOOL_REQUEST, JSON, ERROR_RESPONSE);
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

fn tracer_json(db: &std::path::Path, args: &[&str]) -> String {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_tracer"))
        .arg("--db")
        .arg(db)
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(output.status.success(), "{args:?}: {output:?}");
    String::from_utf8(output.stdout).unwrap()
}

/// The router call and the tool-call turn as Gemini CLI sent them, through `tracer proxy`'s
/// model route to an upstream that answers with the recorded replies.
#[tokio::test(flavor = "multi_thread")]
async fn a_gemini_run_through_the_proxy_is_a_trace_titled_with_the_users_words() {
    use bytes::Bytes;
    use http_body_util::{BodyExt, Full};
    use hyper::body::Incoming;
    let upstream = crate::agent_doubles::serve(|request: http::Request<Incoming>| async move {
        let streamed = request.uri().path().ends_with(":streamGenerateContent");
        // Read the whole request first, as a real server does.
        let _ = request.into_body().collect().await;
        let (body, content_type) = if streamed {
            (TOOL_STREAM, SSE)
        } else {
            (ROUTER_RESPONSE, JSON)
        };
        let mut response = http::Response::new(Full::new(Bytes::from_static(body)));
        response
            .headers_mut()
            .insert("content-type", http::HeaderValue::from_static(content_type));
        response
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut proxy = std::process::Command::new(env!("CARGO_BIN_EXE_tracer"))
        .arg("--db")
        .arg(&db)
        .args([
            "proxy",
            "--route",
            &format!("model=127.0.0.1:{port}=http://{upstream}"),
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let client = crate::agent_doubles::client();
    let post = |path: &str, body: &'static [u8]| {
        http::Request::post(format!("http://127.0.0.1:{port}{path}"))
            .header("content-type", "application/json")
            .header("x-goog-api-key", "test")
            .body(Full::new(Bytes::from_static(body)))
            .unwrap()
    };
    let mut routed = None;
    for _ in 0..200 {
        if let Ok(response) = client.request(post(ROUTER_PATH, ROUTER_REQUEST)).await {
            routed = Some(response.into_body().collect().await.unwrap().to_bytes());
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    assert_eq!(routed.as_deref(), Some(ROUTER_RESPONSE));
    let turn = client.request(post(TURN_PATH, TOOL_REQUEST)).await.unwrap();
    let streamed = turn.into_body().collect().await.unwrap().to_bytes();
    assert!(
        &streamed[..] == TOOL_STREAM,
        "not forwarded byte-exact: {streamed:?}"
    );
    let pid = nix::unistd::Pid::from_raw(i32::try_from(proxy.id()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    assert!(proxy.wait().unwrap().success());

    let listed: serde_json::Value =
        serde_json::from_str(&tracer_json(&db, &["ls", "--json"])).unwrap();
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{listed}");
    assert_eq!(listed[0]["title"], "Add buy milk to my notes", "{listed}");
    assert_eq!(listed[0]["hop_count"], 2, "{listed}");
    assert_eq!(listed[0]["status"], "ok", "{listed}");
    let show = tracer_json(&db, &["show", listed[0]["id"].as_str().unwrap()]);
    // `show` wraps explanations: compare the words, not the line breaks.
    let words = show.split_whitespace().collect::<Vec<_>>().join(" ");
    for needle in [
        "the model asks for tool mcp_notes_append {\"content\":\"buy milk\"}",
        "the model server parsed it into a functionCall part.",
        "gemini-3.8-flash, 1 message, 20 tools",
        "a side request of the host",
    ] {
        assert!(words.contains(needle), "{needle:?} not in {show}");
    }
    assert!(
        !words.contains("does not read as a known dialect"),
        "{show}"
    );
}
