//! Where a watched stream stood when its body ended: inside an event (cut short), or past
//! its end event, told without ending the watch.

use super::{BodyCapture, EndEvent, EndWatch, Framing};

impl EndWatch {
    /// What the body stopped in the middle of, when it ended inside an SSE event (one begun
    /// and not closed by its blank line); None when it ended between events, or when that
    /// cannot be told (a compressed body, or one that is not SSE).
    pub fn cut_inside(&self) -> Option<&'static str> {
        if self.encoded.is_some() || self.framing != Some(Framing::Sse) || !self.pending {
            return None;
        }
        // An end event that lacks only its last blank line still ended the stream.
        if self.at_line_start && self.sse_event().is_some() {
            return None;
        }
        Some("an SSE event")
    }

    /// The end event the stream has passed so far, the watch going on.
    pub fn reached(&self, kept: Option<&BodyCapture>) -> Option<EndEvent> {
        self.clone().finish(kept)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn watch(body: &[u8]) -> EndWatch {
        let mut watch = EndWatch::for_body(Some("text/event-stream"), None).unwrap();
        watch.push(body);
        watch
    }

    #[test]
    fn a_cut_event_is_named_and_a_whole_one_is_not() {
        let start = b"event: message_start\ndata: {\"type\":\"message_start\"}\n\n";
        assert_eq!(watch(start).cut_inside(), None);
        let mut cut = start.to_vec();
        cut.extend_from_slice(b"event: content_block_delta\ndata: {\"type\":\"content_bl");
        assert_eq!(watch(&cut).cut_inside(), Some("an SSE event"));
        let mut stop = start.to_vec();
        stop.extend_from_slice(b"event: message_stop\ndata: {\"type\":\"message_stop\"}\n");
        let stop = watch(&stop);
        assert_eq!(
            stop.cut_inside(),
            None,
            "an end event short of its blank line"
        );
        assert_eq!(stop.reached(None), Some(EndEvent::MessageStop));
        assert_eq!(
            stop.reached(None),
            Some(EndEvent::MessageStop),
            "the watch goes on"
        );
    }

    #[test]
    fn other_bodies_are_not_judged() {
        let mut json = EndWatch::for_body(Some("application/json"), None).unwrap();
        json.push(b"{\"a\":");
        assert_eq!(json.cut_inside(), None);
    }
}
