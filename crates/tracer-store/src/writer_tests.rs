//! Tests of the writer: journaled events become rows, a failing database is retried on a clean
//! connection, a journal left behind is taken in once.

use super::*;
use crate::{HOPS_NOT_WRITTEN, hops};
use tracer_wire::hop::{
    HopEnd, HopEvent, HopSink, HopStart, HopState, RequestDone, Role, Transport,
};

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
        run_id: None,
    }
}

fn complete(id: &str) -> HopEnd {
    HopEnd {
        id: id.into(),
        state: Some(HopState::Complete),
        status: Some(200),
        ..HopEnd::default()
    }
}

#[tokio::test]
async fn many_hops_at_once_are_all_written_and_the_journal_is_removed() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("t.db")).await.unwrap();
    let (handle, task) = Recorder::spawn(store.clone()).unwrap();
    let journal = handle.journal_path();
    assert!(journal.exists());
    // No await between sends: the writer cannot keep up, the journal holds what waits.
    for i in 0..20_000 {
        assert!(handle.start(start(&format!("h{i}"))));
        handle.end(complete(&format!("h{i}")));
    }
    assert_eq!(handle.not_written(), 0);
    drop(handle);
    let report = task.await.unwrap();
    assert_eq!(report.hops_written, 20_000);
    assert_eq!(report.hops_not_written, 0);
    assert_eq!(report.journal_left, None);
    assert_eq!(store.hop_count().await.unwrap(), 20_000);
    let in_flight: i64 = sqlx::query_scalar("select count(*) from hops where state = 'in_flight'")
        .fetch_one(store.pool())
        .await
        .unwrap();
    assert_eq!(in_flight, 0);
    assert_eq!(store.counter(HOPS_NOT_WRITTEN).await.unwrap(), 0);
    assert!(!journal.exists(), "an emptied journal is removed");
}

#[tokio::test]
async fn a_lock_held_elsewhere_delays_hops_without_losing_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let store = Store::open(&path).await.unwrap();
    let mut other = <sqlx::SqliteConnection as sqlx::Connection>::connect(&format!(
        "sqlite://{}",
        path.display()
    ))
    .await
    .unwrap();
    sqlx::query("begin exclusive")
        .execute(&mut other)
        .await
        .unwrap();
    let (handle, task) = Recorder::spawn(store.clone()).unwrap();
    for i in 0..100 {
        assert!(handle.start(start(&format!("h{i}"))));
        handle.end(complete(&format!("h{i}")));
    }
    // Longer than the writer's busy timeout: it must retry, not give up.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    sqlx::query("commit").execute(&mut other).await.unwrap();
    drop(handle);
    let report = task.await.unwrap();
    assert_eq!(report.hops_written, 100);
    assert_eq!(store.hop_count().await.unwrap(), 100);
}

#[tokio::test]
async fn a_journal_left_behind_is_taken_in_once_by_the_next_recorder() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.db");
    let store = Store::open(&path).await.unwrap();
    // A journal as a killed process leaves it: events, and a torn frame at its end.
    let left = dir.path().join("t.db.tracer-journal.dead01");
    let mut bytes = Vec::new();
    for event in [
        HopEvent::Started(Box::new(start("a"))),
        HopEvent::Ended(Box::new(complete("a"))),
        HopEvent::Started(Box::new(start("b"))),
    ] {
        super::super::journal_codec::encode(&event, &mut bytes);
    }
    // "a" was already written as in flight before the crash.
    let mut conn = store.pool().acquire().await.unwrap();
    hops::insert_start(&mut conn, &start("a")).await.unwrap();
    drop(conn);
    bytes.extend_from_slice(&[200, 0, 0, 0, 1, 2]);
    std::fs::write(&left, &bytes).unwrap();
    let (handle, task) = Recorder::spawn(store.clone()).unwrap();
    drop(handle);
    let report = task.await.unwrap();
    assert_eq!(
        report.hops_taken_in, 1,
        "b is new; a was stored and is completed"
    );
    assert!(!left.exists());
    assert_eq!(store.hop("a").await.unwrap().state, HopState::Complete);
    assert_eq!(store.hop("b").await.unwrap().state, HopState::InFlight);
}

#[tokio::test]
async fn an_end_that_never_saw_the_request_keeps_the_stored_request_body() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("t.db")).await.unwrap();
    let mut conn = store.pool().acquire().await.unwrap();
    hops::insert_start(&mut conn, &start("a")).await.unwrap();
    let body = tracer_wire::hop::BodyCapture::whole(b"{\"model\":\"m\"}".to_vec());
    let done = RequestDone {
        id: "a".into(),
        request_body: body.clone(),
        request_ended_unix_ns: 5,
    };
    hops::apply_request_done(&mut conn, &done).await.unwrap();
    // The client left before the response head: this end knows nothing of the request.
    let end = HopEnd {
        id: "a".into(),
        state: Some(HopState::Aborted),
        error: Some("client went away before the response".into()),
        ..HopEnd::default()
    };
    assert!(hops::apply_end(&mut conn, &end).await.unwrap());
    drop(conn);
    let hop = store.hop("a").await.unwrap();
    assert_eq!(hop.state, HopState::Aborted);
    assert_eq!(hop.end.request_body, body);
    assert_eq!(hop.end.request_ended_unix_ns, Some(5));
}

#[tokio::test]
async fn starts_and_ends_become_one_completed_row() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("t.db")).await.unwrap();
    let (handle, task) = Recorder::spawn(store.clone()).unwrap();
    assert!(handle.start(start("a")));
    handle.end(complete("a"));
    drop(handle);
    task.await.unwrap();
    let hop = store.hop("a").await.unwrap();
    assert_eq!(hop.state, HopState::Complete);
    assert_eq!(hop.end.status, Some(200));
}

#[tokio::test]
async fn pieces_then_the_tail_read_back_whole_and_a_replayed_batch_adds_nothing() {
    use tracer_wire::hop::{BodyCapture, BodyPiece, BodySide};
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("t.db")).await.unwrap();
    let (handle, task) = Recorder::spawn(store.clone()).unwrap();
    assert!(handle.start(start("a")));
    let up: Vec<u8> = (0..1000u32).map(|i| (i % 251) as u8).collect();
    let down: Vec<u8> = (0..700u32).map(|i| (i * 3 % 256) as u8).collect();
    for (seq, piece) in up[..900].chunks(300).enumerate() {
        assert!(handle.body_piece("a", BodySide::Request, seq as u32, piece));
    }
    assert!(handle.body_piece("a", BodySide::Response, 0, &down[..400]));
    let tail = |bytes: &[u8], total: usize| BodyCapture {
        bytes: bytes.to_vec(),
        total_len: total as u64,
        truncated: false,
    };
    handle.end(HopEnd {
        request_body: tail(&up[900..], up.len()),
        response_body: tail(&down[400..], down.len()),
        request_ended_unix_ns: Some(2),
        ..complete("a")
    });
    drop(handle);
    task.await.unwrap();
    let hop = store.hop("a").await.unwrap();
    assert_eq!(hop.end.request_body, BodyCapture::whole(up.clone()));
    assert_eq!(hop.end.response_body, BodyCapture::whole(down.clone()));

    // The same events again, as a journal taken in twice would give them.
    let piece = |seq: u32, bytes: &[u8]| {
        HopEvent::BodyPiece(Box::new(BodyPiece {
            id: "a".into(),
            side: BodySide::Request,
            seq,
            bytes: bytes.to_vec(),
        }))
    };
    let mut events = vec![
        HopEvent::Started(Box::new(start("a"))),
        piece(0, &up[..300]),
        piece(1, &up[300..600]),
    ];
    let mut db = WriterConn::new(&store, WRITER_BUSY_TIMEOUT);
    let work = BatchWrite {
        events: &mut events,
        lost_ends: &[],
        losses: 0,
    };
    assert_eq!(write_batch(&mut db, work).await.unwrap().hops_inserted, 0);
    db.discard().await;
    // Pieces are stored as chunks now (one short piece, one chunk), each once.
    let pieces: i64 = sqlx::query_scalar(
        "select count(distinct side || ':' || part) from hop_body_chunks where part < 4294967296",
    )
    .fetch_one(store.pool())
    .await
    .unwrap();
    assert_eq!(pieces, 4);
    assert_eq!(store.hop("a").await.unwrap(), hop);
}
