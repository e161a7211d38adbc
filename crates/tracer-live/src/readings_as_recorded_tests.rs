//! Tests of keeping readings while recording: large model requests are read once as they end
//! (those in flight when first seen, once they end), small ones and other hops are left to the
//! readers, and a reader then takes the kept readings back without reading those bodies.

use super::*;
use crate::correlate::group_new_hops;
use crate::load::{Bodies, read_trace_hops};
use tracer_store::writer::Recorder;
use tracer_wire::dialect::Reading;
use tracer_wire::hop::{BodyCapture, Header, HopEnd, HopSink, HopStart, HopState, Role, Transport};

const TURN1: &str = include_str!("../../../tests/fixtures/agents/claude-code/turn1_request.json");
const TURN2: &str = include_str!("../../../tests/fixtures/agents/claude-code/turn2_request.json");

fn hop(id: &str, at_s: i64, path: &str, request: &str) -> (HopStart, HopEnd) {
    let json = vec![Header::new("content-type", "application/json")];
    let start = HopStart {
        id: id.into(),
        route: "model".into(),
        role: Role::Model,
        transport: Transport::Http,
        peer: "127.0.0.1:1".into(),
        method: "POST".into(),
        path: path.into(),
        url: format!("http://127.0.0.1:2{path}"),
        request_headers: json.clone(),
        started_unix_ns: 1_700_000_000_000_000_000 + at_s * 1_000_000_000,
        run_id: None,
    };
    let answer = r#"{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":9,"output_tokens":5}}"#;
    let end = HopEnd {
        id: id.into(),
        state: Some(HopState::Complete),
        status: Some(200),
        response_headers: json,
        request_body: BodyCapture::whole(request.as_bytes().to_vec()),
        response_body: BodyCapture::whole(answer.as_bytes().to_vec()),
        request_ended_unix_ns: Some(start.started_unix_ns + 1_000),
        response_ended_unix_ns: Some(start.started_unix_ns + 2_000),
        ..HopEnd::default()
    };
    (start, end)
}

async fn kept_rows(store: &Store) -> i64 {
    sqlx::query_scalar("select count(*) from hop_readings")
        .fetch_one(store.pool())
        .await
        .unwrap()
}

#[tokio::test]
async fn large_requests_are_read_once_as_they_end_and_readers_take_them_back() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("t.db")).await.unwrap();
    let (recorder, writer) = Recorder::spawn(store.clone()).unwrap();
    let small = r#"{"model":"m","max_tokens":9,"messages":[{"role":"user","content":"hi"}]}"#;
    for (start, end) in [
        hop("a1", 0, "/v1/messages", TURN1),
        hop("a2", 60, "/v1/messages", TURN2),
        hop("s1", 61, "/v1/messages", small),
    ] {
        assert!(recorder.start(start));
        recorder.end(end);
    }
    drop(recorder);
    writer.await.unwrap();
    // The second request is still in flight when the keeper first looks.
    sqlx::query("update hops set state = 'in_flight' where id = 'a2'")
        .execute(store.pool())
        .await
        .unwrap();

    let mut keeper = RecordedReadings::new();
    assert_eq!(
        keeper.step(&store).await.unwrap(),
        1,
        "a1 only: a2 is in flight"
    );
    assert_eq!(keeper.step(&store).await.unwrap(), 0, "nothing new");
    sqlx::query("update hops set state = 'complete' where id = 'a2'")
        .execute(store.pool())
        .await
        .unwrap();
    assert_eq!(keeper.step(&store).await.unwrap(), 1, "a2 once it ended");
    assert_eq!(keeper.step(&store).await.unwrap(), 0);
    assert_eq!(
        kept_rows(&store).await,
        2,
        "the small request is left to readers"
    );
    // Texts re-sent by the second request are kept once.
    let (texts, distinct): (i64, i64) =
        sqlx::query_as("select count(*), count(distinct sha256) from reading_texts")
            .fetch_one(store.pool())
            .await
            .unwrap();
    assert_eq!(texts, distinct);

    // A reader takes the readings back: the same as reading the bodies, without reading them.
    group_new_hops(&store).await.unwrap();
    let trace: String = sqlx::query_scalar("select trace_id from hops where id = 'a2'")
        .fetch_one(store.pool())
        .await
        .unwrap();
    let taken = read_trace_hops(&store, &trace, Bodies::LetGo)
        .await
        .unwrap();
    sqlx::query("delete from hop_readings")
        .execute(store.pool())
        .await
        .unwrap();
    let fresh = read_trace_hops(&store, &trace, Bodies::Kept).await.unwrap();
    let by_id = |hops: &[tracer_trace::RecordedHop], id: &str| {
        let hop = hops.iter().find(|h| h.start.id == id).cloned().unwrap();
        (
            hop.read_ref().clone(),
            hop.end.unwrap().request_body.bytes.len(),
        )
    };
    let (taken_a2, taken_len) = by_id(&taken, "a2");
    let (fresh_a2, fresh_len) = by_id(&fresh, "a2");
    assert_eq!(taken_len, 0, "the kept large body is not read back");
    assert_eq!(fresh_len, TURN2.len());
    assert!(matches!(taken_a2.request.reading, Reading::ModelRequest(_)));
    assert_eq!(taken_a2.request.reading, fresh_a2.request.reading);
}

#[tokio::test]
async fn a_keeper_that_lets_its_texts_go_still_keeps_each_text_once() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("t.db")).await.unwrap();
    let (recorder, writer) = Recorder::spawn(store.clone()).unwrap();
    let (start, end) = hop("a1", 0, "/v1/messages", TURN1);
    assert!(recorder.start(start));
    recorder.end(end);
    drop(recorder);
    writer.await.unwrap();
    let mut keeper = RecordedReadings::new();
    assert_eq!(keeper.step(&store).await.unwrap(), 1);
    let texts = |store: Store| async move {
        sqlx::query_scalar::<_, i64>("select count(*) from reading_texts")
            .fetch_one(store.pool())
            .await
            .unwrap()
    };
    let before = texts(store.clone()).await;
    // Another keeper (a restarted proxy) reads the next request with nothing held.
    let (recorder, writer) = Recorder::spawn(store.clone()).unwrap();
    let (start, end) = hop("a2", 60, "/v1/messages", TURN2);
    assert!(recorder.start(start));
    recorder.end(end);
    drop(recorder);
    writer.await.unwrap();
    let mut restarted = RecordedReadings::new();
    assert_eq!(
        restarted.step(&store).await.unwrap(),
        1,
        "a2: a1 is kept already"
    );
    let after = texts(store.clone()).await;
    assert!(after > before, "a2 adds its new messages");
    let distinct: i64 = sqlx::query_scalar("select count(distinct sha256) from reading_texts")
        .fetch_one(store.pool())
        .await
        .unwrap();
    assert_eq!(after, distinct);
}
