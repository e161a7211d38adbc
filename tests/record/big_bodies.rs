//! Big bodies through a real `tracer proxy`: stored in pieces while they stream, read back whole
//! and byte-exact (also by `tracer export`), cut at `--max-body` as before, and kept whole for
//! every completed hop when the process is killed mid-stream and its journal is taken in.

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::{BodyExt, StreamBody};
use hyper::body::{Frame, Incoming};
use tracer_store::Store;
use tracer_store::hops::StoredHop;

use crate::proxy::harness::{TestBody, client, full, spawn_upstream};
use crate::store_faults::process::{ProxyProcess, hold_exclusive_lock, journals};

/// Bytes up (several 256 KiB pieces, not a whole number of them) and down.
const UP: usize = 3 * 1024 * 1024 + 12_345;
const DOWN: usize = 2 * 1024 * 1024 + 777;

/// Text whose every line is different, so a piece out of place or missing shows.
fn pattern(len: usize, salt: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(len + 64);
    let mut line = 0u64;
    while out.len() < len {
        out.extend_from_slice(format!("{salt} line {line:09} of a big body\n").as_bytes());
        line += 1;
    }
    out.truncate(len);
    out
}

/// An upstream that reads the request whole and answers `DOWN` bytes of its own.
async fn big_upstream() -> SocketAddr {
    spawn_upstream(|req: Request<Incoming>| async move {
        let _ = req.into_body().collect().await;
        Response::new(full(pattern(DOWN, "down")))
    })
    .await
}

async fn post(proxy: SocketAddr, body: TestBody) -> Vec<u8> {
    let request = Request::post(format!("http://{proxy}/big"))
        .body(body)
        .unwrap();
    let answer = client().request(request).await.unwrap();
    answer
        .into_body()
        .collect()
        .await
        .unwrap()
        .to_bytes()
        .to_vec()
}

/// (side, pieces, bytes in pieces) in the database (pieces are stored as chunks: the parts of
/// `hop_body_chunks` before the tail).
async fn pieces(db: &Path) -> Vec<(i64, i64, i64)> {
    let url = format!("sqlite://{}?mode=ro", db.display());
    let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
    let rows = sqlx::query_as(
        "select r.side, count(distinct r.part), sum(length(c.bytes))
         from hop_body_chunks r join body_chunks c on c.id = r.chunk_id
         where r.part < 4294967296 group by r.side order by r.side",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    pool.close().await;
    rows
}

fn assert_body(hop: &StoredHop, up: &[u8], down: &[u8], up_len: usize, down_len: usize) {
    let (request, response) = (&hop.end.request_body, &hop.end.response_body);
    assert!(
        request.bytes == up,
        "request body: {} bytes",
        request.bytes.len()
    );
    assert!(
        response.bytes == down,
        "response: {} bytes",
        response.bytes.len()
    );
    assert_eq!(request.total_len, up_len as u64);
    assert_eq!(response.total_len, down_len as u64);
    assert_eq!(request.truncated, up.len() < up_len);
    assert_eq!(response.truncated, down.len() < down_len);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn big_bodies_each_way_are_stored_in_pieces_and_read_back_whole() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let proxy = ProxyProcess::start_with(&db, big_upstream().await, &[]).await;
    let (up, down) = (pattern(UP, "up"), pattern(DOWN, "down"));
    assert!(post(proxy.addr, full(up.clone())).await == down);
    let exit = proxy.terminate().await;
    assert_eq!((exit.written, exit.not_written), (1, 0), "{}", exit.line);

    // Each body went in pieces; the row keeps only what followed the last one.
    let stored = pieces(&db).await;
    assert_eq!(stored.len(), 2, "{stored:?}");
    assert!(stored.iter().all(|(_, count, _)| *count >= 4), "{stored:?}");
    assert!(stored[0].2 <= UP as i64 && stored[1].2 <= DOWN as i64);

    let store = Store::open_existing(&db).await.unwrap();
    let hops = store.all_hops().await.unwrap();
    assert_eq!(hops.len(), 1);
    assert_body(&hops[0], &up, &down, UP, DOWN);
    let found = tracer_live::search::matching_hops(&store, "up line 000050000")
        .await
        .unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].side, tracer_wire::hop::BodySide::Request);
    store.close().await;

    // The export carries the same bytes.
    let har = dir.path().join("all.har");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tracer"))
        .arg("--db")
        .arg(&db)
        .args(["export", "--all", "--format", "har", "--output"])
        .arg(&har)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let har: serde_json::Value = serde_json::from_slice(&std::fs::read(&har).unwrap()).unwrap();
    let entry = &har["log"]["entries"][0];
    assert!(
        entry["request"]["postData"]["text"]
            .as_str()
            .unwrap()
            .as_bytes()
            == up
    );
    assert!(
        entry["response"]["content"]["text"]
            .as_str()
            .unwrap()
            .as_bytes()
            == down
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_body_still_cuts_a_body_kept_in_pieces() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let max = 1_000_000;
    let args = ["--max-body", "1000000"];
    let proxy = ProxyProcess::start_with(&db, big_upstream().await, &args).await;
    let (up, down) = (pattern(UP, "up"), pattern(DOWN, "down"));
    assert!(post(proxy.addr, full(up.clone())).await == down);
    proxy.terminate().await;
    let store = Store::open_existing(&db).await.unwrap();
    let hops = store.all_hops().await.unwrap();
    assert_body(&hops[0], &up[..max], &down[..max], UP, DOWN);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_while_big_bodies_stream_keeps_completed_hops_whole() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("t.db");
    let proxy = ProxyProcess::start_with(&db, big_upstream().await, &[]).await;
    // The database takes nothing while the bodies stream: all of it stays in the journal.
    let lock = hold_exclusive_lock(&db).await;
    let ups: Vec<Vec<u8>> = (0..3).map(|i| pattern(UP, &format!("up{i}"))).collect();
    let down = pattern(DOWN, "down");
    for up in &ups {
        assert!(post(proxy.addr, full(up.clone())).await == down);
    }
    // One more upload is cut off by the kill halfway.
    let half = pattern(UP, "cut");
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Frame<Bytes>, std::convert::Infallible>>(4);
    let stream = tokio_stream_of(rx);
    let addr = proxy.addr;
    let cut = tokio::spawn(async move {
        let request = Request::post(format!("http://{addr}/big"))
            .body(StreamBody::new(stream).boxed())
            .unwrap();
        let _ = client().request(request).await;
    });
    for chunk in half[..UP / 2].chunks(64 * 1024) {
        tx.send(Ok(Frame::data(Bytes::copy_from_slice(chunk))))
            .await
            .unwrap();
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    proxy.kill();
    cut.abort();
    lock.release().await;
    assert!(
        !journals(&db).is_empty(),
        "the killed process left its journal"
    );

    let store = Store::open_existing(&db).await.unwrap();
    assert!(journals(&db).is_empty(), "the journal was taken in");
    let hops = store.all_hops().await.unwrap();
    assert_eq!(hops.len(), 4);
    for (hop, up) in hops.iter().zip(&ups) {
        assert_eq!(hop.state, tracer_wire::hop::HopState::Complete);
        assert_body(hop, up, &down, UP, DOWN);
    }
    // What reached the journal of the cut-off upload is a byte-exact start of it.
    let partial = &hops[3].end.request_body.bytes;
    assert!(partial.len() >= 256 * 1024, "{} bytes", partial.len());
    assert!(half.starts_with(partial));
    store.close().await;
    // Taking the same journal in again would change nothing: the rows are read back the same.
    let again = Store::open_existing(&db).await.unwrap();
    assert_eq!(again.all_hops().await.unwrap(), hops);
}

/// A channel's receiving side as a stream of body frames.
fn tokio_stream_of<T: Send + 'static>(
    mut rx: tokio::sync::mpsc::Receiver<T>,
) -> impl futures_util::Stream<Item = T> + Send + 'static {
    futures_util::stream::poll_fn(move |cx| rx.poll_recv(cx))
}
