//! A bodiless request tracer reads as no dialect (a plain `GET /` from curl or Python's urllib):
//! its head already names its method and path, so its words say what came back instead (status,
//! content type, size) rather than the request again.

use crate::RecordedHop;
use crate::read::request_anatomy::human_bytes;
use tracer_wire::hop::HopState;

/// `answered 200 · text/html · 3.1 KB`, or why nothing came back.
pub(crate) fn answer_words(hop: &RecordedHop) -> String {
    let Some(end) = hop.end.as_ref() else {
        return "waiting for the answer".to_string();
    };
    let Some(status) = end.status else {
        return match end.state {
            Some(HopState::Failed) => "no answer: it failed".to_string(),
            Some(HopState::Aborted) => "no answer: it was cut off".to_string(),
            _ => "waiting for the answer".to_string(),
        };
    };
    let mut parts = vec![format!("answered {status}")];
    let content_type = (end.response_headers.iter())
        .find(|h| h.name.eq_ignore_ascii_case("content-type"))
        .map(|h| String::from_utf8_lossy(&h.value).into_owned());
    if let Some(kind) = content_type {
        let kind = kind
            .split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .to_string();
        if !kind.is_empty() {
            parts.push(crate::words::shorten(&kind, 60));
        }
    }
    parts.push(match end.response_body.total_len {
        0 => "no body".to_string(),
        bytes => human_bytes(bytes as usize),
    });
    parts.join(" · ")
}
