//! The tee's own tests: what passes, what is kept, how a body ends.

use super::*;
use http_body_util::{BodyExt, Full, StreamBody};

#[tokio::test]
async fn forwards_everything_and_keeps_a_bounded_prefix() {
    let chunks: Vec<Result<Frame<Bytes>, std::convert::Infallible>> = (0..4)
        .map(|i| Ok(Frame::data(Bytes::from(vec![i as u8; 5]))))
        .collect();
    let body = StreamBody::new(futures_util::stream::iter(chunks));
    let (tee, rx) = TeeBody::new(body, HopClock::start(), 8, 10);
    let forwarded = tee.collect().await.unwrap().to_bytes();
    assert_eq!(forwarded.len(), 20);
    let seen = rx.await.unwrap();
    assert_eq!(seen.outcome, BodyOutcome::Complete);
    assert_eq!(seen.body.bytes, [0, 0, 0, 0, 0, 1, 1, 1]);
    assert_eq!(seen.body.total_len, 20);
    assert!(seen.body.truncated);
    assert_eq!(seen.chunks.len(), 4);
    assert!(seen.first_byte_unix_ns.is_some());
}

#[tokio::test]
async fn a_full_body_is_complete_after_its_only_frame() {
    let (mut tee, mut rx) = TeeBody::new(
        Full::new(Bytes::from_static(b"hi")),
        HopClock::start(),
        8,
        0,
    );
    let frame = tee.frame().await.unwrap().unwrap();
    assert_eq!(frame.into_data().unwrap(), "hi");
    let seen = rx.try_recv().unwrap();
    assert_eq!(seen.outcome, BodyOutcome::Complete);
    assert!(seen.chunks.is_empty());
}

#[tokio::test]
async fn dropping_early_reports_dropped() {
    let chunks: Vec<Result<Frame<Bytes>, std::convert::Infallible>> = vec![
        Ok(Frame::data(Bytes::from_static(b"a"))),
        Ok(Frame::data(Bytes::from_static(b"b"))),
    ];
    let body = StreamBody::new(futures_util::stream::iter(chunks));
    let (mut tee, rx) = TeeBody::new(body, HopClock::start(), 8, 10);
    tee.frame().await.unwrap().unwrap();
    drop(tee);
    let seen = rx.await.unwrap();
    assert_eq!(seen.outcome, BodyOutcome::Dropped);
    assert_eq!(seen.body.bytes, b"a");
}

/// A tap that writes down what it is told.
#[derive(Default)]
struct Notebook(std::sync::Mutex<Vec<(String, Vec<u8>)>>);

impl super::super::live_tap::LiveTap for Notebook {
    fn answer_bytes(&self, hop_id: &str, bytes: &[u8]) {
        self.0
            .lock()
            .unwrap()
            .push((hop_id.to_string(), bytes.to_vec()));
    }
}

#[tokio::test]
async fn a_live_tap_is_told_each_kept_chunk_as_it_passes_and_no_more_than_is_kept() {
    let chunks: Vec<Result<Frame<Bytes>, std::convert::Infallible>> = vec![
        Ok(Frame::data(Bytes::from_static(b"data: one\n\n"))),
        Ok(Frame::data(Bytes::from_static(b"data: two\n\n"))),
        Ok(Frame::data(Bytes::from_static(b"data: three\n\n"))),
    ];
    let notebook = std::sync::Arc::new(Notebook::default());
    let body = StreamBody::new(futures_util::stream::iter(chunks));
    let (tee, _rx) = TeeBody::new(body, HopClock::start(), 16, 10);
    let mut tee = tee.with_live(Some(super::super::live_tap::HopTap {
        tap: notebook.clone(),
        hop_id: "h1".into(),
    }));
    // Told before the reader has the next frame: the first chunk is there after one poll.
    tee.frame().await.unwrap().unwrap();
    assert_eq!(
        notebook.0.lock().unwrap().clone(),
        vec![("h1".to_string(), b"data: one\n\n".to_vec())]
    );
    while tee.frame().await.is_some() {}
    let told: Vec<u8> = notebook
        .0
        .lock()
        .unwrap()
        .iter()
        .flat_map(|(_, bytes)| bytes.clone())
        .collect();
    // 16 bytes are kept: the tap is told those, not what passes beyond the record's bound.
    assert_eq!(told, b"data: one\n\ndata:");
}
