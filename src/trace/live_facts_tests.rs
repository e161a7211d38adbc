//! Unit tests of the facts the writer hands live grouping: taken once, bounded, read back when
//! they could be read otherwise.

use super::*;
use crate::hop::{BodyCapture, Role, Transport};

fn start(id: &str) -> HopStart {
    HopStart {
        id: id.into(),
        route: "model".into(),
        role: Role::Model,
        transport: Transport::Http,
        peer: "127.0.0.1:1".into(),
        method: "POST".into(),
        path: "/api/chat".into(),
        url: "http://127.0.0.1:2/api/chat".into(),
        request_headers: Vec::new(),
        started_unix_ns: 1,
    }
}

fn end(id: &str, state: HopState, user_text: &str) -> HopEnd {
    let request = serde_json::json!({
        "model": "m",
        "messages": [{"role": "user", "content": user_text}],
    });
    HopEnd {
        id: id.into(),
        state: Some(state),
        status: Some(200),
        request_body: BodyCapture::whole(request.to_string().into_bytes()),
        request_ended_unix_ns: Some(2),
        response_ended_unix_ns: Some(3),
        ..HopEnd::default()
    }
}

#[test]
fn a_hop_handed_over_is_taken_once_as_the_events_read() {
    let facts = LiveFacts::new();
    let (start, end) = (start("a"), end("a", HopState::Complete, "Add milk"));
    facts.hop(&start, &end);
    let taken = facts.take("a", Version::Ended).expect("handed over");
    assert_eq!(taken, TraceInput::from_hop(&start, Some(&end)));
    assert_eq!(taken.user_texts, vec!["Add milk".to_string()]);
    assert_eq!(facts.take("a", Version::Ended), None, "once");
    assert!(facts.is_empty());
}

#[test]
fn aborted_and_large_hops_are_read_back_instead() {
    let facts = LiveFacts::new();
    facts.hop(&start("a"), &end("a", HopState::Aborted, "Add milk"));
    let long = "x".repeat(MAX_ONE + 1);
    facts.hop(&start("b"), &end("b", HopState::Complete, &long));
    facts.hop(&start("c"), &end("c", HopState::Failed, "Add eggs"));
    assert_eq!(
        facts.take("a", Version::Ended),
        None,
        "an abort may read otherwise from its row"
    );
    assert_eq!(
        facts.take("b", Version::Ended),
        None,
        "a long history is not kept"
    );
    assert!(facts.take("c", Version::Ended).is_some());
}

#[test]
fn the_oldest_go_first_past_the_bounds() {
    let facts = LiveFacts::new();
    for i in 0..MAX_HOPS + 10 {
        let id = format!("h{i}");
        facts.hop(&start(&id), &end(&id, HopState::Complete, "hi"));
    }
    assert_eq!(facts.len(), MAX_HOPS);
    assert_eq!(facts.take("h0", Version::Ended), None);
    assert!(
        facts
            .take(&format!("h{}", MAX_HOPS + 9), Version::Ended)
            .is_some()
    );

    // Counted twice: among the user texts and as the latest.
    let big = "y".repeat(MAX_ONE / 2 - 1024);
    let past = MAX_BYTES / (MAX_ONE - 2048) + 10;
    for i in 0..past {
        let id = format!("big{i}");
        facts.hop(&start(&id), &end(&id, HopState::Complete, &big));
    }
    let kept = facts.kept.lock().expect("lock");
    assert!(kept.bytes <= MAX_BYTES, "{} bytes kept", kept.bytes);
    assert!(kept.by_id.contains_key(&format!("big{}", past - 1)));
    assert!(!kept.by_id.contains_key("big0"));
}

#[test]
fn an_input_is_taken_only_for_the_state_it_was_read_from() {
    let facts = LiveFacts::new();
    let mut flying = end("a", HopState::InFlight, "Add milk");
    facts.hop(&start("a"), &flying);
    let read = Version::InFlight { request_read: true };
    assert_eq!(
        facts.take("a", Version::Ended),
        None,
        "the row has ended since"
    );
    assert_eq!(facts.take("a", read), None, "forgotten once found stale");
    facts.hop(&start("a"), &flying);
    let taken = facts.take("a", read).expect("in flight, request read");
    assert_eq!(taken.ended_ns, None);
    assert_eq!(taken.user_texts, vec!["Add milk".to_string()]);
    flying.request_ended_unix_ns = None;
    flying.request_body = BodyCapture::default();
    facts.hop(&start("b"), &flying);
    assert_eq!(facts.take("b", read), None, "its request was not read then");
}

#[test]
fn cleared_facts_are_gone() {
    let facts = LiveFacts::new();
    facts.hop(&start("a"), &end("a", HopState::Complete, "hi"));
    facts.clear();
    assert_eq!(facts.take("a", Version::Ended), None);
}
