//! Tests of the one loader over a real SQLite file: a trace found by its id or a prefix of it,
//! with its row, session and hops; an id that names none; bodies kept or let go of.

use super::*;
use crate::correlate::group_new_hops;
use tracer_store::StoreError;
use tracer_store::writer::Recorder;
use tracer_wire::hop::{BodyCapture, Header, HopEnd, HopSink, HopStart, HopState, Role, Transport};

/// A model request large enough to be let go of once read (`LET_GO_BYTES`).
const LARGE: &str = include_str!("../../../tests/fixtures/agents/claude-code/turn1_request.json");
const SMALL: &str = r#"{"model":"m","max_tokens":9,"messages":[{"role":"user","content":"hi"}]}"#;
/// Hop ids as the proxy makes them (the trace takes its first hop's).
const BIG: &str = "7f3a9c0e5b1d4f2a8c6e0b9d3f1a5c7e";
const SMALL_ID: &str = "2b8d4f6a0c1e3a5c7e9b1d3f5a7c9e0b";

fn hop(id: &str, at_s: i64, request: &str) -> (HopStart, HopEnd) {
    let json = vec![Header::new("content-type", "application/json")];
    let mut request_headers = json.clone();
    request_headers.push(Header::new("x-claude-code-session-id", "host-run-1"));
    let start = HopStart {
        id: id.into(),
        route: "model".into(),
        role: Role::Model,
        transport: Transport::Http,
        peer: "127.0.0.1:1".into(),
        method: "POST".into(),
        path: "/v1/messages".into(),
        url: "http://127.0.0.1:2/v1/messages".into(),
        request_headers,
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

/// A database file holding one grouped trace of a large and a small model call; its trace id.
async fn recorded_trace(dir: &std::path::Path) -> (Store, String) {
    let store = Store::open(&dir.join("t.db")).await.unwrap();
    let (recorder, writer) = Recorder::spawn(store.clone()).unwrap();
    for (start, end) in [hop(BIG, 0, LARGE), hop(SMALL_ID, 1, SMALL)] {
        assert!(recorder.start(start));
        recorder.end(end);
    }
    drop(recorder);
    writer.await.unwrap();
    group_new_hops(&store).await.unwrap();
    let traces = store.traces().await.unwrap();
    assert_eq!(traces.len(), 1, "{traces:?}");
    let id = traces[0].id.clone();
    (store, id)
}

fn request_len(trace: &LoadedTrace, hop_id: &str) -> usize {
    let hop = trace.hops.iter().find(|h| h.start.id == hop_id).unwrap();
    hop.end.as_ref().unwrap().request_body.bytes.len()
}

#[tokio::test]
async fn a_trace_loads_by_its_id_or_a_prefix_with_its_row_session_and_hops() {
    let dir = tempfile::tempdir().unwrap();
    let (store, id) = recorded_trace(dir.path()).await;

    let by_id = load_trace(&store, &id, Bodies::Kept).await.unwrap();
    assert_eq!(by_id.id(), id);
    assert_eq!(by_id.row, store.traces().await.unwrap()[0]);
    let hop_ids: Vec<&str> = by_id.hops.iter().map(|h| h.start.id.as_str()).collect();
    assert_eq!(hop_ids, [BIG, SMALL_ID], "in start order");
    let session = by_id.session.as_ref().expect("grouping named a session");
    assert_eq!(session.host_session_id.as_deref(), Some("host-run-1"));
    assert_eq!(
        store.trace_sessions().await.unwrap().get(&id),
        Some(&session.id)
    );

    let by_prefix = load_trace(&store, &id[..8], Bodies::Kept).await.unwrap();
    assert_eq!(by_prefix, by_id);
    let padded = format!("  {}  ", &id[..8]);
    assert_eq!(
        load_trace(&store, &padded, Bodies::Kept)
            .await
            .unwrap()
            .id(),
        id
    );
}

#[tokio::test]
async fn an_id_that_names_no_trace_is_an_unknown_trace_pointing_at_ls() {
    let dir = tempfile::tempdir().unwrap();
    let (store, _) = recorded_trace(dir.path()).await;
    for asked in ["ffffffff", "", "   "] {
        let error = load_trace(&store, asked, Bodies::Kept).await.unwrap_err();
        assert!(
            matches!(error, StoreError::UnknownTrace(_)),
            "{asked:?}: {error:?}"
        );
        assert!(error.to_string().contains("tracer ls"), "{error}");
    }
    assert_eq!(
        load_trace(&store, "ffffffff", Bodies::LetGo)
            .await
            .unwrap_err()
            .to_string(),
        "no trace ffffffff in the database; tracer ls lists the traces it holds"
    );
}

#[tokio::test]
async fn bodies_are_kept_whole_or_a_large_request_body_is_let_go_of() {
    let dir = tempfile::tempdir().unwrap();
    let (store, id) = recorded_trace(dir.path()).await;

    // The first load reads the large body and lets go of it; it keeps the reading, so the
    // loads after it take the reading back and leave that body in the database.
    let first = load_trace(&store, &id, Bodies::LetGo).await.unwrap();
    assert_eq!(request_len(&first, BIG), 0, "let go of once read");
    assert_eq!(request_len(&first, SMALL_ID), SMALL.len());

    let kept = load_trace(&store, &id, Bodies::Kept).await.unwrap();
    assert_eq!(request_len(&kept, BIG), LARGE.len());
    assert_eq!(request_len(&kept, SMALL_ID), SMALL.len());

    for bodies in [Bodies::LetGo, Bodies::Readings] {
        let let_go = load_trace(&store, &id, bodies).await.unwrap();
        assert_eq!(request_len(&let_go, BIG), 0, "{bodies:?}");
        assert_eq!(request_len(&let_go, SMALL_ID), SMALL.len(), "{bodies:?}");
        // What the faces read of the large request is still there, from its reading.
        let big = let_go.hops.iter().find(|h| h.start.id == BIG).unwrap();
        let total = big.end.as_ref().unwrap().request_body.total_len;
        assert_eq!(total, LARGE.len() as u64, "{bodies:?}");
        assert_eq!(
            tracer_trace::summarize(&let_go.hops).tokens,
            tracer_trace::summarize(&kept.hops).tokens
        );
    }
    // The hops alone, by a known id, are those the trace loads with.
    let hops = read_trace_hops(&store, &id, Bodies::Kept).await.unwrap();
    assert_eq!(hops, kept.hops);
}
