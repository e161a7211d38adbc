//! Where a tee hands a hop's kept body in pieces as they fill (see
//! `tracer_wire::hop::BODY_PIECE_BYTES`).

use tracer_wire::hop::{BODY_PIECE_BYTES, BodySide, Sink};

/// Where a tee hands a hop's kept body in pieces.
pub(crate) struct PieceOut {
    sink: Sink,
    id: String,
    side: BodySide,
    next_seq: u32,
    pub(super) piece_bytes: usize,
}

impl PieceOut {
    pub(crate) fn new(sink: Sink, id: String, side: BodySide) -> Self {
        Self::sized(sink, id, side, BODY_PIECE_BYTES)
    }

    /// With another piece size (tests).
    fn sized(sink: Sink, id: String, side: BodySide, piece_bytes: usize) -> Self {
        PieceOut {
            sink,
            id,
            side,
            next_seq: 0,
            piece_bytes: piece_bytes.max(1),
        }
    }

    pub(super) fn hand_over(&mut self, bytes: &[u8]) -> bool {
        let kept = self
            .sink
            .body_piece(&self.id, self.side, self.next_seq, bytes);
        self.next_seq += u32::from(kept);
        kept
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use bytes::Bytes;
    use http_body::Frame;
    use http_body_util::{BodyExt, StreamBody};

    use super::*;
    use crate::proxy::tee::{HopClock, TeeBody};
    use tracer_wire::hop::{HopEnd, HopSink, HopStart, RequestDone, ServerLogLine};

    /// Keeps the pieces it is handed; refuses them from the `refuse_from`th on.
    struct Pieces {
        got: Mutex<Vec<(BodySide, u32, Vec<u8>)>>,
        refuse_from: usize,
    }

    impl HopSink for Pieces {
        fn start(&self, _: HopStart) -> bool {
            true
        }
        fn request_done(&self, _: RequestDone) {}
        fn end(&self, _: HopEnd) {}
        fn log_line(&self, _: ServerLogLine) {}
        fn body_piece(&self, _: &str, side: BodySide, seq: u32, bytes: &[u8]) -> bool {
            let mut got = self.got.lock().unwrap();
            if got.len() >= self.refuse_from {
                return false;
            }
            got.push((side, seq, bytes.to_vec()));
            true
        }
    }

    async fn tee_through(refuse_from: usize, max_body: usize) -> (Vec<u8>, Vec<u8>, Arc<Pieces>) {
        let sent: Vec<u8> = (0..100u32).map(|i| (i * 7 % 251) as u8).collect();
        let frames: Vec<Result<Frame<Bytes>, std::convert::Infallible>> = sent
            .chunks(9)
            .map(|c| Ok(Frame::data(Bytes::copy_from_slice(c))))
            .collect();
        let sink = Arc::new(Pieces {
            got: Mutex::new(Vec::new()),
            refuse_from,
        });
        let (tee, rx) = TeeBody::new(
            StreamBody::new(futures_util::stream::iter(frames)),
            HopClock::start(),
            max_body,
            0,
        );
        let out = PieceOut::sized(sink.clone(), "h".into(), BodySide::Response, 20);
        tee.with_pieces(out).collect().await.unwrap();
        let seen = rx.await.unwrap();
        let mut kept: Vec<u8> = sink
            .got
            .lock()
            .unwrap()
            .iter()
            .flat_map(|p| p.2.clone())
            .collect();
        assert_eq!(seen.pieced, kept.len());
        assert_eq!(seen.body.total_len, 100);
        kept.extend_from_slice(&seen.body.bytes);
        (sent, kept, sink)
    }

    #[tokio::test]
    async fn pieces_then_the_tail_are_the_kept_body_in_order() {
        let (sent, kept, sink) = tee_through(usize::MAX, 1000).await;
        assert_eq!(kept, sent);
        let got = sink.got.lock().unwrap();
        assert!(got.len() >= 3, "{} pieces", got.len());
        for (at, (side, seq, bytes)) in got.iter().enumerate() {
            assert_eq!((*side, *seq as usize), (BodySide::Response, at));
            assert!(bytes.len() >= 20);
        }
    }

    #[tokio::test]
    async fn the_limit_counts_the_pieces_and_a_refused_piece_stays_in_the_tail() {
        let (sent, kept, _) = tee_through(usize::MAX, 50).await;
        assert_eq!(kept, sent[..50]);
        let (sent, kept, sink) = tee_through(2, 1000).await;
        assert_eq!(kept, sent);
        assert_eq!(sink.got.lock().unwrap().len(), 2);
    }
}
