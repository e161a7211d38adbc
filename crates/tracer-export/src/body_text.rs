//! Shared by the exports: bodies as text or base64, UTC timestamps, and a trace to export.

use base64::Engine;

use tracer_trace::RecordedHop;
use tracer_wire::content_encoding::{ReadableBody, readable};
use tracer_wire::hop::{BodyCapture, Header};

/// One trace to export: its id, its title and its hops (any order).
#[derive(Debug, Clone, Copy)]
pub struct TraceToExport<'a> {
    pub id: &'a str,
    pub title: Option<&'a str>,
    pub hops: &'a [RecordedHop],
    /// The session (run of a host) the trace belongs to, when known.
    pub session: Option<&'a crate::hop_log::SessionEntry>,
    /// Where request bodies let go of once read (`Bodies::LetGo`) are fetched back, one at a
    /// time as the export writes them; None when the hops keep their bodies.
    pub fetch: Option<FetchBody<'a>>,
    /// The agent's own events placed in the trace (`HopLog::with_agent_events`), shown among
    /// the messages by the handouts; empty when there are none.
    pub agent_events: &'a [crate::hop_log::AgentEventEntry],
}

/// Fetches a hop's request body back by the hop's id.
#[derive(Clone, Copy)]
pub struct FetchBody<'a>(pub &'a (dyn Fn(&str) -> Option<BodyCapture> + Sync));

impl std::fmt::Debug for FetchBody<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FetchBody")
    }
}

impl TraceToExport<'_> {
    /// A hop's request body: as the hop keeps it, or fetched back when it was let go of (its
    /// whole length kept, none of its bytes).
    pub(crate) fn request_body<'h>(
        &self,
        hop: &'h RecordedHop,
    ) -> std::borrow::Cow<'h, BodyCapture> {
        let Some(end) = hop.end.as_ref() else {
            return std::borrow::Cow::Owned(BodyCapture::default());
        };
        let body = &end.request_body;
        let let_go = body.bytes.is_empty() && body.total_len > 0 && !body.truncated;
        match self.fetch.filter(|_| let_go) {
            Some(FetchBody(fetch)) => match fetch(&hop.start.id) {
                Some(fetched) => std::borrow::Cow::Owned(fetched),
                None => std::borrow::Cow::Borrowed(body),
            },
            None => std::borrow::Cow::Borrowed(body),
        }
    }
}

/// A body as the exports carry it: UTF-8 text as is, anything else as base64.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum BodyText {
    Text(String),
    Base64(String),
}

impl BodyText {
    pub(crate) fn of(body: &BodyCapture) -> BodyText {
        match std::str::from_utf8(&body.bytes) {
            Ok(text) => BodyText::Text(text.to_string()),
            Err(_) => {
                BodyText::Base64(base64::engine::general_purpose::STANDARD.encode(&body.bytes))
            }
        }
    }

    /// A message's body for reading: its `Content-Encoding` undone (bounded), then as
    /// [`BodyText::of`]; with how the decoding went.
    pub(crate) fn readable<'a>(
        headers: &[Header],
        body: &'a BodyCapture,
    ) -> (BodyText, ReadableBody<'a>) {
        let readable = readable(headers, body);
        (BodyText::of(&readable.body), readable)
    }

    pub(crate) fn text(&self) -> &str {
        match self {
            BodyText::Text(text) | BodyText::Base64(text) => text,
        }
    }

    pub(crate) fn is_base64(&self) -> bool {
        matches!(self, BodyText::Base64(_))
    }
}

/// `2026-10-31T18:00:21.123Z` for a Unix-nanosecond timestamp (UTC, milliseconds).
pub fn iso8601_utc(unix_ns: i64) -> String {
    let ms = unix_ns.div_euclid(1_000_000);
    let days = ms.div_euclid(86_400_000);
    let day_ms = ms.rem_euclid(86_400_000);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        day_ms / 3_600_000,
        day_ms / 60_000 % 60,
        day_ms / 1000 % 60,
        day_ms % 1000
    )
}

/// Year, month, day of a count of days since 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_iso_utc() {
        assert_eq!(iso8601_utc(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            iso8601_utc(1_793_469_621_123_456_789),
            "2026-10-31T18:00:21.123Z"
        );
        assert_eq!(
            iso8601_utc(951_782_400_000_000_000),
            "2000-02-29T00:00:00.000Z"
        );
    }

    #[test]
    fn bodies_are_text_or_base64() {
        let text = BodyText::of(&BodyCapture::whole(b"{\"a\":1}".to_vec()));
        assert_eq!(text, BodyText::Text("{\"a\":1}".into()));
        let binary = BodyText::of(&BodyCapture::whole(vec![0xff, 0x00]));
        assert_eq!(binary, BodyText::Base64("/wA=".into()));
        assert!(binary.is_base64());
    }
}
