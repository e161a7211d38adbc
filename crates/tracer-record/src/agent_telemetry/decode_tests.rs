//! The three agents' own OTLP exports, as recorded from the real agents
//! (tests/fixtures/agents/*/otlp), read into events with their names and join keys.

use super::*;

fn fixture(path: &str) -> Vec<u8> {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/agents/");
    std::fs::read(format!("{root}{path}")).expect("fixture")
}

fn names(events: &[AgentEvent]) -> Vec<&str> {
    events.iter().map(|e| e.name.as_str()).collect()
}

#[test]
fn claude_codes_json_logs_carry_its_session_tool_and_request_ids() {
    let body = fixture("claude-code/otlp/json/002-logs.json");
    let events = events(Signal::Log, Encoding::Json, &body, 1).expect("decoded");
    let names = names(&events);
    assert!(
        names.contains(&"tool_decision") && names.contains(&"api_request"),
        "{names:?}"
    );
    let decision = events
        .iter()
        .find(|e| e.name == "tool_decision")
        .expect("decision");
    assert!(
        decision
            .keys
            .tool_call
            .as_deref()
            .is_some_and(|t| t.starts_with("toolu_"))
    );
    assert!(decision.keys.session.is_some() && decision.keys.prompt.is_some());
    assert_eq!(decision.service.as_deref(), Some("claude-code"));
    assert!(decision.time_unix_ns > 1_700_000_000_000_000_000);
    let spans = events_of(
        "claude-code/otlp/json/001-traces.json",
        Signal::Span,
        Encoding::Json,
    );
    assert!(
        spans
            .iter()
            .any(|e| e.name == "claude_code.llm_request" && e.end_unix_ns.is_some())
    );
    let points = events_of(
        "claude-code/otlp/json/003-metrics.json",
        Signal::Metric,
        Encoding::Json,
    );
    assert!(points.iter().any(|e| e.name == "claude_code.cost.usage"));
}

fn events_of(path: &str, signal: Signal, encoding: Encoding) -> Vec<AgentEvent> {
    events(signal, encoding, &fixture(path), 1).expect("decoded")
}

#[test]
fn codexs_protobuf_logs_name_events_by_their_event_name_attribute() {
    let index: Value =
        serde_json::from_slice(&fixture("codex/otlp/protobuf/index.json")).expect("index");
    let logs = (index
        .as_array()
        .or_else(|| index.get("requests").and_then(Value::as_array)))
    .expect("entries")
    .iter()
    .filter_map(|e| e.get("file").and_then(Value::as_str))
    .filter(|f| f.contains("logs"))
    .map(str::to_string)
    .collect::<Vec<_>>();
    let mut all = Vec::new();
    for file in logs {
        let body = fixture(&format!("codex/otlp/protobuf/{file}"));
        all.extend(events(Signal::Log, Encoding::Protobuf, &body, 1).expect("decoded"));
    }
    let result = all
        .iter()
        .find(|e| e.name == "codex.tool_result")
        .expect("tool_result");
    assert!(result.keys.tool_call.is_some(), "{:?}", result.keys);
    assert!(
        result.keys.session.is_some(),
        "conversation.id: {:?}",
        result.keys
    );
}

#[test]
fn gemini_clis_json_export_reads() {
    let events = events_of(
        "gemini-cli/otlp/json/003-logs.json",
        Signal::Log,
        Encoding::Json,
    );
    let names = names(&events);
    assert!(names.contains(&"gemini_cli.tool_call"), "{names:?}");
    assert!(names.contains(&"gemini_cli.api_response"), "{names:?}");
}

#[test]
fn bad_bodies_are_refused_with_a_reason() {
    let error = events(Signal::Log, Encoding::Protobuf, b"\xff\xff\xff", 1).expect_err("bad");
    assert!(error.to_string().contains("protobuf"), "{error}");
    let error = events(
        Signal::Metric,
        Encoding::Json,
        b"{\"resourceMetrics\": 3}",
        1,
    )
    .expect_err("bad");
    assert!(error.to_string().contains("OTLP/JSON"), "{error}");
    assert!(matches!(
        unzip(Some("br"), b"x"),
        Err(DecodeError::Encoding(_))
    ));
    assert!(matches!(
        unzip(Some("gzip"), b"not gzip"),
        Err(DecodeError::Gzip(_))
    ));
    let mut zipped = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut zipped, b"{}").expect("zip");
    assert_eq!(
        unzip(Some("gzip"), &zipped.finish().expect("zip")).expect("unzip"),
        b"{}"
    );
    assert_eq!(
        Encoding::of(Some("application/json; charset=utf-8")),
        Some(Encoding::Json)
    );
    assert_eq!(Encoding::of(Some("text/plain")), None);
}
