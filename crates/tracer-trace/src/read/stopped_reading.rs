//! Hops recorded before the proxy watched for end events: an `aborted` hop whose client "went
//! away mid-response" after its stored stream had reached its end event is read as the
//! complete hop it was, with the note the proxy records now. The stored row is not changed.

use tracer_wire::hop::{HopEnd, HopState};
use tracer_wire::stream_end::{WENT_AWAY_MID_RESPONSE, reached_end};

/// Reads an old record of a client that stopped reading after the last event as complete.
pub fn settle_old_record(end: &mut HopEnd) {
    if end.state != Some(HopState::Aborted)
        || end.error.as_deref() != Some(WENT_AWAY_MID_RESPONSE)
        || end.note.is_some()
    {
        return;
    }
    if let Some(event) = reached_end(&end.response_headers, &end.response_body) {
        end.state = Some(HopState::Complete);
        end.error = None;
        end.note = Some(event.stopped_reading_note());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracer_wire::hop::{BodyCapture, Header};

    fn old(body: &[u8]) -> HopEnd {
        HopEnd {
            state: Some(HopState::Aborted),
            error: Some(WENT_AWAY_MID_RESPONSE.into()),
            response_headers: vec![Header::new("content-type", "text/event-stream")],
            response_body: BodyCapture::whole(body.to_vec()),
            ..HopEnd::default()
        }
    }

    #[test]
    fn an_old_abort_after_the_end_event_reads_complete() {
        let mut end = old(b"data: {\"choices\":[]}\n\ndata: [DONE]\n\n");
        settle_old_record(&mut end);
        assert_eq!(end.state, Some(HopState::Complete));
        assert_eq!(end.error, None);
        assert_eq!(
            end.note.as_deref(),
            Some("the client stopped reading after the last event ([DONE])")
        );
    }

    #[test]
    fn an_old_abort_before_the_end_event_stays_aborted() {
        let mut end = old(b"data: {\"choices\":[]}\n\n");
        settle_old_record(&mut end);
        assert_eq!(end.state, Some(HopState::Aborted));
        let mut other = old(b"data: [DONE]\n\n");
        other.error = Some("client went away before the response".into());
        settle_old_record(&mut other);
        assert_eq!(
            other.state,
            Some(HopState::Aborted),
            "another abort is left alone"
        );
    }
}
