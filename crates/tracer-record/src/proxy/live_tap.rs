//! A hook that sees each answer's kept bytes as they pass, before the hop ends (a live page).

/// Told of an answer's kept bytes (redacted as stored) the moment they pass the proxy, hop by
/// hop, so that a viewer can show an answer still streaming. Called on the proxy's own task: an
/// implementation must return at once (copy, hand over, never wait).
pub trait LiveTap: Send + Sync {
    /// `bytes` more of hop `hop_id`'s answer, as they will be stored.
    fn answer_bytes(&self, hop_id: &str, bytes: &[u8]);
}

/// A tap of one hop's answer: who is told, and which hop it is.
#[derive(Clone)]
pub(crate) struct HopTap {
    pub(crate) tap: std::sync::Arc<dyn LiveTap>,
    pub(crate) hop_id: String,
}
