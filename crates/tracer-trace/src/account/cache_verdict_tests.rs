//! Tests of the cache verdicts on Claude Code's two recorded requests, as recorded and edited:
//! a hit, a tool added, a system block changed, a message edited, six minutes passed.

use serde_json::{Value, json};

use super::*;
use crate::read::prompt_regions::asked_ttls;
use tracer_wire::hop::{BodyCapture, Header, HopEnd, HopStart, Role, Transport};

const TURN1: &str =
    include_str!("../../../../tests/fixtures/agents/claude-code/turn1_request.json");
const TURN2: &str =
    include_str!("../../../../tests/fixtures/agents/claude-code/turn2_request.json");
const MINUTE_NS: i64 = 60_000_000_000;

fn answer(read: u64, written: u64, input: u64) -> Vec<u8> {
    json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-opus-4-8",
        "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
        "usage": {"input_tokens": input, "cache_read_input_tokens": read,
                  "cache_creation_input_tokens": written, "output_tokens": 5}})
    .to_string()
    .into_bytes()
}

fn model_hop(id: &str, at_ns: i64, request: &str, response: Vec<u8>) -> RecordedHop {
    let json = vec![Header::new("content-type", "application/json")];
    RecordedHop {
        read: Default::default(),
        start: HopStart {
            id: id.into(),
            route: "model".into(),
            role: Role::Model,
            transport: Transport::Http,
            peer: "127.0.0.1:1".into(),
            method: "POST".into(),
            path: "/v1/messages".into(),
            url: "http://127.0.0.1:2/v1/messages".into(),
            request_headers: json.clone(),
            started_unix_ns: at_ns,
            run_id: None,
        },
        end: Some(HopEnd {
            id: id.into(),
            status: Some(200),
            response_headers: json,
            request_body: BodyCapture::whole(request.as_bytes().to_vec()),
            response_body: BodyCapture::whole(response),
            ..HopEnd::default()
        }),
    }
}

/// Claude Code's first request (read 16,901, wrote 17,758), then `second` after `gap_ns`.
fn conversation(second: &str, gap_ns: i64, read: u64, written: u64) -> Vec<CacheReport> {
    cache_reports(&[
        model_hop("a1", 0, TURN1, answer(16901, 17758, 4957)),
        model_hop("a2", gap_ns, second, answer(read, written, 312)),
    ])
}

fn edited(edit: impl FnOnce(&mut Value)) -> String {
    let mut body: Value = serde_json::from_str(TURN2).unwrap();
    edit(&mut body);
    body.to_string()
}

#[test]
fn claude_codes_second_call_reads_all_the_first_left_cached() {
    let reports = conversation(TURN2, MINUTE_NS / 60, 34659, 420);
    assert_eq!(reports.len(), 2);
    assert_eq!(reports[0].verdict, Verdict::Hit);
    assert_eq!(reports[0].previous_cached, None);
    assert_eq!(
        reports[0].line(),
        "cache: hit · read 16,901, wrote 17,758, 4,957 uncached"
    );
    assert_eq!(reports[1].verdict, Verdict::Hit);
    assert_eq!(reports[1].previous_cached, Some(34659));
    assert_eq!(reports[1].shrank, None);
    assert_eq!(
        reports[1].line(),
        "cache: hit · read 34,659, wrote 420, 312 uncached"
    );
}

#[test]
fn a_tool_added_between_calls_names_the_tool_set() {
    let second = edited(|body| {
        let tools = body["tools"].as_array_mut().unwrap();
        tools.push(
            json!({"name": "mcp__notes__delete", "description": "Deletes a note",
            "input_schema": {"type": "object"}}),
        );
    });
    let reports = conversation(&second, MINUTE_NS, 0, 35000);
    assert_eq!(reports[1].verdict, Verdict::Miss);
    assert_eq!(
        reports[1].shrank,
        Some(Shrank::Changed(ChangedRegion::ToolSet {
            added: vec!["mcp__notes__delete".into()],
            removed: vec![],
            changed: vec![],
        }))
    );
    assert_eq!(
        reports[1].line(),
        "cache: miss · read 0 of the 34,659 the previous call left cached, wrote 35,000, 312 \
         uncached · the prompt changed first at the tool set (added mcp__notes__delete)"
    );
}

#[test]
fn a_changed_system_block_is_named_by_its_number() {
    let second = edited(|body| {
        body["system"][2]["text"] = json!("You are a different agent now.");
    });
    let reports = conversation(&second, MINUTE_NS, 9000, 25000);
    assert_eq!(reports[1].verdict, Verdict::Partial);
    assert_eq!(
        reports[1].shrank,
        Some(Shrank::Changed(ChangedRegion::SystemBlock(3)))
    );
    assert!(
        reports[1]
            .line()
            .ends_with("the prompt changed first at system block 3")
    );
}

#[test]
fn edited_history_names_the_message() {
    let second = edited(|body| {
        let notes = body["messages"][1]["content"]
            .as_str()
            .unwrap()
            .replace("Explore", "Search");
        body["messages"][1]["content"] = json!(notes);
    });
    let reports = conversation(&second, MINUTE_NS, 20000, 14000);
    assert_eq!(
        reports[1].shrank,
        Some(Shrank::Changed(ChangedRegion::Message(2)))
    );
}

#[test]
fn six_minutes_later_the_5_minute_lifetime_lapsed() {
    let reports = conversation(TURN2, 6 * MINUTE_NS, 0, 34659);
    assert_eq!(reports[1].verdict, Verdict::Miss);
    assert_eq!(
        reports[1].shrank,
        Some(Shrank::Lapsed {
            gap_ns: 6 * MINUTE_NS,
            ttl_s: 300
        })
    );
    assert!(
        reports[1].line().ends_with(
            "the prompt's start was unchanged, but 6 min passed since the last call, longer \
             than the 5-minute lifetime the request asked for"
        ),
        "{}",
        reports[1].line()
    );
    // Asking for an hour keeps it that long: the same gap is then the provider's doing.
    let hour = TURN2.replace(
        r#""cache_control":{"type":"ephemeral"}"#,
        r#""cache_control":{"type":"ephemeral","ttl":"1h"}"#,
    );
    assert_eq!(
        asked_ttls(&serde_json::from_str(&hour).unwrap()),
        vec![3600]
    );
    let reports = conversation(&hour, 6 * MINUTE_NS, 0, 34659);
    assert_eq!(
        reports[1].shrank,
        Some(Shrank::NotKept {
            gap_ns: 6 * MINUTE_NS
        })
    );
    // And an hour and a minute outlasts it.
    let reports = conversation(&hour, 61 * MINUTE_NS, 0, 34659);
    assert!(
        reports[1]
            .line()
            .contains("1 h 1 min passed since the last call, longer than the 1-hour lifetime")
    );
}
