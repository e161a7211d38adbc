//! A whole recorded body read back as its stream records one at a time (SSE events, NDJSON
//! lines), so reassembling a stream never holds all its records at once: the decoder is fed a
//! few KiB at a time and only the records that slice completed wait to be taken.

use std::collections::VecDeque;

use super::RecordDecoder;

/// How much of the body the decoder is fed at once.
const STEP: usize = 8 * 1024;

/// The records of a body, in order; each comes with whether it is the one a cut-off stream left
/// unfinished (what the decoder's `finish` gave).
pub(crate) struct BodyRecords<'a, D: RecordDecoder> {
    rest: &'a [u8],
    decoder: D,
    ready: VecDeque<D::Record>,
    finished: bool,
}

impl<'a, D: RecordDecoder> BodyRecords<'a, D> {
    pub(crate) fn new(body: &'a [u8], decoder: D) -> Self {
        BodyRecords {
            rest: body,
            decoder,
            ready: VecDeque::new(),
            finished: false,
        }
    }
}

impl<D: RecordDecoder> Iterator for BodyRecords<'_, D> {
    /// A record, and true when it is the unfinished last one.
    type Item = (D::Record, bool);

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(record) = self.ready.pop_front() {
                return Some((record, false));
            }
            if self.rest.is_empty() {
                if self.finished {
                    return None;
                }
                self.finished = true;
                return self.decoder.finish().map(|record| (record, true));
            }
            let (now, later) = self.rest.split_at(STEP.min(self.rest.len()));
            self.rest = later;
            self.ready.extend(self.decoder.push(now));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::{NdjsonDecoder, SseDecoder};

    #[test]
    fn gives_the_same_records_as_one_push_with_the_cut_off_one_last() {
        let mut body = Vec::new();
        for i in 0..3000 {
            body.extend_from_slice(format!("event: e\r\ndata: {{\"n\":{i}}}\r\n\r\n").as_bytes());
        }
        body.extend_from_slice(b"data: {\"cut\"");
        let mut whole = SseDecoder::new();
        let mut expected: Vec<_> = whole.push(&body).into_iter().map(|e| (e, false)).collect();
        expected.extend(whole.finish().map(|e| (e, true)));
        let read: Vec<_> = BodyRecords::new(&body, SseDecoder::new()).collect();
        assert_eq!(read.len(), 3001);
        assert_eq!(read, expected);

        let lines = b"{\"a\":1}\n\n{\"b\":2}\r\n{\"c\"";
        let read: Vec<_> = BodyRecords::new(lines, NdjsonDecoder::new()).collect();
        assert_eq!(
            read,
            vec![
                (b"{\"a\":1}".to_vec(), false),
                (b"{\"b\":2}".to_vec(), false),
                (b"{\"c\"".to_vec(), true)
            ]
        );
    }
}
