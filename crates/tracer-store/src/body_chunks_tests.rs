//! Tests of chunked bodies: a history edited at random (insert, delete, compact, reorder)
//! recorded hop by hop through the writer reads back byte-exact, costs little more than what is
//! new, and the documented `sqlite3` recipe gives the same bytes; rows of the older layouts
//! (inline, `hop_body_pieces`) still read.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::*;
use crate::{Recorder, Store};
use tracer_wire::hop::{BODY_PIECE_BYTES, BodyCapture, HopEnd, HopSink, HopStart, HopState, Role};

fn start(id: &str, at: i64) -> HopStart {
    HopStart {
        id: id.into(),
        route: "model".into(),
        role: Role::Model,
        transport: tracer_wire::hop::Transport::Http,
        peer: "127.0.0.1:1".into(),
        method: "POST".into(),
        path: "/v1/messages".into(),
        url: "http://127.0.0.1:2/v1/messages".into(),
        request_headers: Vec::new(),
        started_unix_ns: at,
        run_id: None,
    }
}

/// Records one hop as the tee hands it over: full pieces while they fill, then the tail.
fn record(handle: &dyn HopSink, id: &str, at: i64, request: &[u8], response: &[u8]) {
    assert!(handle.start(start(id, at)));
    let tail = |bytes: &[u8], side: BodySide| {
        let whole = bytes.len() / BODY_PIECE_BYTES * BODY_PIECE_BYTES;
        for (seq, piece) in bytes[..whole].chunks(BODY_PIECE_BYTES).enumerate() {
            assert!(handle.body_piece(id, side, seq as u32, piece));
        }
        BodyCapture {
            bytes: bytes[whole..].to_vec(),
            total_len: bytes.len() as u64,
            truncated: false,
        }
    };
    let request_body = tail(request, BodySide::Request);
    let response_body = tail(response, BodySide::Response);
    handle.end(HopEnd {
        id: id.into(),
        state: Some(HopState::Complete),
        status: Some(200),
        request_body,
        response_body,
        request_ended_unix_ns: Some(at + 1),
        response_ended_unix_ns: Some(at + 2),
        ..HopEnd::default()
    });
}

fn words(rng: &mut StdRng, len: usize) -> String {
    const WORDS: [&str; 10] = [
        "read", "the", "file", "then", "run", "tests", "error", "in", "module", "fixed",
    ];
    let mut text = String::new();
    while text.len() < len {
        text.push_str(WORDS[rng.random_range(0..WORDS.len())]);
        text.push(if rng.random_range(0..9) == 0 {
            '\n'
        } else {
            ' '
        });
    }
    text
}

/// A random edit of a history, as agents make them.
fn edit(rng: &mut StdRng, history: &mut Vec<String>) {
    let len = history.len();
    match rng.random_range(0..10) {
        // Mostly the history grows.
        0..=4 => {
            let size = rng.random_range(100..16_000);
            history.push(words(rng, size));
        }
        5 if len > 0 => {
            let at = rng.random_range(0..=len);
            history.insert(at, words(rng, 300));
        }
        6 if len > 1 => {
            history.remove(rng.random_range(0..len));
        }
        // Compaction: a run of messages replaced by a summary.
        7 if len > 4 && rng.random_range(0..4) == 0 => {
            let from = rng.random_range(0..len - 3);
            let to = rng.random_range(from + 2..len);
            let summary = format!("summary of {} messages: {}", to - from, words(rng, 200));
            history.splice(from..to, [summary]);
        }
        8 if len > 2 => {
            let (a, b) = (rng.random_range(0..len), rng.random_range(0..len));
            history.swap(a, b);
        }
        _ => history.push(words(rng, 50)),
    }
}

fn body(system: &str, history: &[String]) -> Vec<u8> {
    serde_json::json!({"model": "m", "system": system, "messages": history})
        .to_string()
        .into_bytes()
}

/// The `sqlite3` recipe of docs/schema.md for a request body, for hop `id`.
fn schema_recipe(id: &str) -> String {
    let doc = include_str!("../../../docs/schema.md");
    let end = "from hops h where h.id = 'ID'";
    let at = doc.find(end).expect("the recipe in docs/schema.md");
    let from = doc[..at].rfind("sqlite3 tracer.db \"").expect("its start");
    let sql = &doc[from + "sqlite3 tracer.db \"".len()..at + end.len()];
    sql.replace("'ID'", &format!("'{id}'"))
}

#[tokio::test]
async fn random_edits_of_a_history_read_back_byte_exact_and_are_stored_about_once() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("t.db")).await.unwrap();
    let (handle, task) = Recorder::spawn(store.clone()).unwrap();
    let mut rng = StdRng::seed_from_u64(28);
    let system = words(&mut rng, 20_000);
    let mut history = Vec::new();
    let mut sent = Vec::new();
    for turn in 0..150 {
        edit(&mut rng, &mut history);
        let request = body(&system, &history);
        // A binary answer now and then: chunks keep every byte, NULs included.
        let response: Vec<u8> = if turn % 7 == 0 {
            (0..9_000u32).map(|i| (i * 31 % 256) as u8).collect()
        } else {
            format!("data: {}\n\n", words(&mut rng, 500)).into_bytes()
        };
        let id = format!("{turn:032x}");
        record(&handle, &id, 1_000 + turn, &request, &response);
        sent.push((id, request, response));
    }
    drop(handle);
    task.await.unwrap();

    let mut raw = 0;
    for (id, request, response) in &sent {
        raw += request.len() + response.len();
        let hop = store.hop(id).await.unwrap();
        assert_eq!(hop.end.request_body.bytes, *request, "request of {id}");
        assert_eq!(hop.end.response_body.bytes, *response, "response of {id}");
        assert_eq!(hop.end.request_body.total_len, request.len() as u64);
        // The recipe of docs/schema.md gives the same bytes.
        let mut conn = store.pool().acquire().await.unwrap();
        let (up, down) = crate::whole_body::whole_bodies_of_hop(&mut conn, id, 3)
            .await
            .unwrap();
        drop(conn);
        assert_eq!((&up, &down), (request, response));
        let recipe: Vec<u8> = sqlx::query_scalar(sqlx::AssertSqlSafe(schema_recipe(id)))
            .fetch_one(store.pool())
            .await
            .unwrap();
        assert_eq!(&recipe, request, "the sqlite3 recipe of docs/schema.md");
    }
    let longest = sent.iter().map(|(_, r, _)| r.len()).max().unwrap_or(0);
    assert!(
        longest > 2 * BODY_PIECE_BYTES,
        "the longest body is {longest} bytes"
    );
    let stored: i64 = sqlx::query_scalar("select sum(length(bytes)) from body_chunks")
        .fetch_one(store.pool())
        .await
        .unwrap();
    let inline: i64 =
        sqlx::query_scalar("select sum(length(request_body) + length(response_body)) from hops")
            .fetch_one(store.pool())
            .await
            .unwrap();
    let kept = (stored + inline) as usize;
    assert!(
        kept * 10 < raw,
        "{kept} bytes of chunks and inline bodies for {raw} raw bytes"
    );
}

#[tokio::test]
async fn rows_of_the_older_layouts_read_as_before() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("t.db")).await.unwrap();
    // As a tracer before chunks wrote them: a long body inline, and one in hop_body_pieces.
    let inline: Vec<u8> = (0..50_000u32).map(|i| (i % 253) as u8).collect();
    let pieces = [b"first piece ".repeat(500), b"second piece ".repeat(400)];
    sqlx::query(
        "insert into hops (id, route, role, transport, peer, method, path, url, state,
             request_headers, request_body, request_body_len, request_body_truncated,
             response_body, response_body_len, response_body_truncated, request_started_unix_ns,
             body_pieces)
         values ('old', 'model', 'model', 'http', 'p', 'POST', '/', 'http://u/', 'complete', '[]',
             ?1, ?2, 0, ?3, ?4, 0, 1, 2)",
    )
    .bind(&inline)
    .bind(inline.len() as i64)
    .bind(b"the tail".as_slice())
    .bind((pieces[0].len() + pieces[1].len() + 8) as i64)
    .execute(store.pool())
    .await
    .unwrap();
    for (seq, piece) in pieces.iter().enumerate() {
        sqlx::query(
            "insert into hop_body_pieces (hop_id, side, seq, bytes) values ('old', 1, ?1, ?2)",
        )
        .bind(seq as i64)
        .bind(piece)
        .execute(store.pool())
        .await
        .unwrap();
    }
    let hop = store.hop("old").await.unwrap();
    assert_eq!(hop.end.request_body.bytes, inline);
    assert_eq!(
        hop.end.response_body.bytes,
        [pieces[0].as_slice(), &pieces[1], b"the tail"].concat()
    );
}
