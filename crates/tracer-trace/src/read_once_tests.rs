//! Tests of reading a trace once: Claude Code's two recorded requests share their prompt and
//! messages in memory, and every view reads the same with their bodies let go of.

use std::sync::Arc;

use crate::read::RecordedHop;
use crate::read::read_once::{LET_GO_BYTES, SharedTexts};
use crate::read::recorded_hop::{let_go_of_request_body, read_all, read_into};
use tracer_wire::dialect::{ModelRequest, Reading};
use tracer_wire::hop::{BodyCapture, Header, HopEnd, HopStart, Role, Transport};

const TURN1: &str = include_str!("../../../tests/fixtures/agents/claude-code/turn1_request.json");
const TURN2: &str = include_str!("../../../tests/fixtures/agents/claude-code/turn2_request.json");

fn answer(read: u64, written: u64) -> Vec<u8> {
    serde_json::json!({"id": "msg_1", "type": "message", "role": "assistant",
        "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
        "usage": {"input_tokens": 9, "cache_read_input_tokens": read,
                  "cache_creation_input_tokens": written, "output_tokens": 5}})
    .to_string()
    .into_bytes()
}

fn model_hop(id: &str, at_ns: i64, request: &str, read: u64, written: u64) -> RecordedHop {
    let json = vec![Header::new("content-type", "application/json")];
    let start = HopStart {
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
    };
    let end = HopEnd {
        id: id.into(),
        status: Some(200),
        response_headers: json,
        request_body: BodyCapture::whole(request.as_bytes().to_vec()),
        response_body: BodyCapture::whole(answer(read, written)),
        ..HopEnd::default()
    };
    RecordedHop::new(start, Some(end))
}

fn session() -> Vec<RecordedHop> {
    vec![
        model_hop("a1", 0, TURN1, 16901, 17758),
        model_hop("a2", 60_000_000_000, TURN2, 34659, 312),
    ]
}

fn request(hop: &RecordedHop) -> &ModelRequest {
    match &hop.read_ref().request.reading {
        Reading::ModelRequest(request) => request,
        other => panic!("not a model request: {other:?}"),
    }
}

#[test]
fn requests_read_together_share_their_prompt_and_messages() {
    let hops = session();
    read_all(&hops);
    let (first, second) = (request(&hops[0]), request(&hops[1]));
    let (a, b) = (
        first.system.as_ref().unwrap(),
        second.system.as_ref().unwrap(),
    );
    assert!(Arc::ptr_eq(a, b), "the system prompt is kept once");
    assert!(first.messages.len() < second.messages.len());
    for (a, b) in first.messages.iter().zip(&second.messages) {
        if a == b {
            assert!(Arc::ptr_eq(a, b), "a re-sent message is kept once");
        }
    }
    assert!(Arc::ptr_eq(&first.messages[0], &second.messages[0]));
    // Read apart, they share nothing.
    let apart = session();
    let (a, b) = (request(&apart[0]), request(&apart[1]));
    assert!(!Arc::ptr_eq(&a.messages[0], &b.messages[0]));
    assert_eq!(a, first, "sharing changes no reading");
}

#[test]
fn views_read_the_same_once_large_request_bodies_are_let_go_of() {
    let kept = session();
    let mut let_go = session();
    let mut shared = SharedTexts::default();
    for hop in &mut let_go {
        read_into(hop, &mut shared);
        let_go_of_request_body(hop);
    }
    for (kept, gone) in kept.iter().zip(&let_go) {
        let (kept_end, gone_end) = (kept.end.as_ref().unwrap(), gone.end.as_ref().unwrap());
        assert!(kept_end.request_body.bytes.len() >= LET_GO_BYTES);
        assert!(
            gone_end.request_body.bytes.is_empty(),
            "the body is let go of"
        );
        assert_eq!(
            gone_end.request_body.total_len,
            kept_end.request_body.total_len
        );
        assert_eq!(gone.reading(), kept.reading());
        assert_eq!(gone.request_parts(), kept.request_parts());
    }
    assert!(let_go[0].request_parts().is_some());
    let explained = |hops: &[RecordedHop]| {
        (crate::explain_trace(hops).iter())
            .map(|m| (m.summary.clone(), m.explanation.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(explained(&let_go), explained(&kept));
    let shares = crate::account::context_shares::context_shares;
    assert_eq!(shares(&let_go), shares(&kept));
    assert!(!shares(&kept).is_empty());
    let caches = crate::account::cache_verdict::cache_reports;
    assert_eq!(caches(&let_go), caches(&kept));
    let views = crate::read::request_views::request_views;
    assert_eq!(views(&let_go), views(&kept));
}

#[test]
fn small_bodies_and_your_requests_to_a_host_keep_their_bodies() {
    let small = r#"{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}"#;
    let mut hops = vec![
        model_hop("s", 0, small, 0, 0),
        model_hop("h", 1, TURN1, 0, 0),
    ];
    hops[1].start.role = Role::Agent;
    let mut shared = SharedTexts::default();
    for hop in &mut hops {
        read_into(hop, &mut shared);
        let_go_of_request_body(hop);
    }
    for hop in &hops {
        assert!(!hop.end.as_ref().unwrap().request_body.bytes.is_empty());
    }
}

#[test]
fn region_digests_of_a_body_are_those_of_its_regions() {
    use crate::read::prompt_regions::{PromptRegions, RegionDigests};
    for text in [TURN1, TURN2] {
        let body: serde_json::Value = serde_json::from_str(text).unwrap();
        let digests = RegionDigests::of_body(&body);
        assert_eq!(digests, PromptRegions::of(&body).digest());
        assert!(!digests.messages.is_empty() && !digests.tools.is_empty());
        // A cache mark moved is no change; a word changed is.
        let moved = text.replace(r#","cache_control":{"type":"ephemeral"}"#, "");
        assert_ne!(moved, text);
        let moved: serde_json::Value = serde_json::from_str(&moved).unwrap();
        assert_eq!(RegionDigests::of_body(&moved), digests);
        let mut edited = body.clone();
        edited["messages"][0]["content"] = "something else".into();
        assert_eq!(
            RegionDigests::of_body(&edited).first_change(&digests),
            Some(crate::read::prompt_regions::ChangedRegion::Message(1))
        );
    }
}

#[test]
fn a_reading_given_out_shares_the_reply_it_keeps() {
    // A summary takes a reading of every hop: a long streamed reply's text must not be copied
    // for it (a 14 MiB SSE answer's 9 MiB of text was, once per listing).
    let hops = session();
    let reply = |reading: &tracer_wire::dialect::HopReading| match &reading.response {
        Some(body) => match &body.reading {
            Reading::ModelResponse(reply) => reply.clone(),
            other => panic!("not a model reply: {other:?}"),
        },
        None => panic!("no reply"),
    };
    let (given, kept) = (hops[0].reading(), hops[0].read_ref());
    assert_eq!(reply(&given).message.content, "ok");
    assert!(Arc::ptr_eq(&reply(&given), &reply(kept)));
}
