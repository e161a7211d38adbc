//! What a recording process tells the page as it happens: an answer's bytes while it streams.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use serde_json::json;

use crate::events::EventHub;

/// Bytes of UTF-8 held back at most per hop: the start of a character split between chunks.
const CARRY: usize = 3;
/// Hops whose split character is held at once; beyond, the oldest are let go of.
const HOPS_HELD: usize = 1024;

/// The recording's side of the page: hand it an answer's kept bytes as they pass
/// ([`LiveFeed::answer_bytes`]); pages following get them as `stream` events. Nothing is copied
/// while no page follows, and nothing ever waits.
#[derive(Clone)]
pub struct LiveFeed {
    hub: EventHub,
    carries: std::sync::Arc<Mutex<HashMap<String, Vec<u8>>>>,
}

impl LiveFeed {
    pub(crate) fn new(hub: EventHub) -> LiveFeed {
        LiveFeed {
            hub,
            carries: std::sync::Arc::default(),
        }
    }

    /// `bytes` more of hop `hop_id`'s answer (as stored: redacted), told to the pages following.
    pub fn answer_bytes(&self, hop_id: &str, bytes: &[u8]) {
        if !self.hub.followed() || bytes.is_empty() {
            return;
        }
        let mut carries = self.carries.lock().unwrap_or_else(PoisonError::into_inner);
        let mut text = carries.remove(hop_id).unwrap_or_default();
        text.extend_from_slice(bytes);
        // A character cut at the chunk's end waits for the next chunk.
        let whole = match std::str::from_utf8(&text) {
            Ok(_) => text.len(),
            Err(error)
                if error.error_len().is_none() && text.len() - error.valid_up_to() <= CARRY =>
            {
                error.valid_up_to()
            }
            Err(_) => text.len(),
        };
        let rest = text.split_off(whole);
        if !rest.is_empty() {
            if carries.len() >= HOPS_HELD {
                carries.clear();
            }
            carries.insert(hop_id.to_string(), rest);
        }
        drop(carries);
        if text.is_empty() {
            return;
        }
        let data = json!({"hop_id": hop_id, "text": String::from_utf8_lossy(&text)});
        self.hub.publish("stream", data.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_character_split_between_chunks_arrives_whole() {
        let hub = EventHub::new();
        let mut receiver = hub.inner_subscribe();
        let feed = LiveFeed::new(hub.clone());
        let milk = "milk 🥛".as_bytes();
        feed.answer_bytes("h", &milk[..7]);
        feed.answer_bytes("h", &milk[7..]);
        let mut texts = Vec::new();
        while let Ok(event) = receiver.try_recv() {
            texts.push(event.data_for_tests().to_string());
        }
        assert_eq!(
            texts,
            vec![
                r#"{"hop_id":"h","text":"milk "}"#.to_string(),
                r#"{"hop_id":"h","text":"🥛"}"#.to_string()
            ]
        );
    }

    #[test]
    fn nothing_is_published_while_no_page_follows() {
        let hub = EventHub::new();
        let feed = LiveFeed::new(hub.clone());
        feed.answer_bytes("h", b"data: x\n\n");
        let receiver = hub.inner_subscribe();
        feed.answer_bytes("h", b"data: y\n\n");
        assert_eq!(receiver.len(), 1);
    }
}
