//! A hop log written as it is serialized, the request bodies let go of when its trace was read
//! (`Bodies::LetGo`) fetched back one at a time: the JSON a `HopLog` with every body would be,
//! holding one large body at a time.

use std::cell::RefCell;

use serde::ser::{Serialize, SerializeSeq, SerializeStruct, Serializer};

use super::body::Body;
use super::{HopLog, MessageEntry};
use tracer_wire::hop::BodyCapture;

/// A log whose let-go request bodies come from `fetch` (given the hop's id) as they are written.
pub struct StreamedLog<'a, F> {
    log: &'a HopLog,
    fetch: RefCell<F>,
}

impl HopLog {
    /// This log, serialized with each request body it holds only the length of (a body let go
    /// of once read) fetched by `fetch` from the hop's id, one at a time.
    pub fn streamed<F>(&self, fetch: F) -> StreamedLog<'_, F>
    where
        F: FnMut(&str) -> Option<BodyCapture>,
    {
        StreamedLog {
            log: self,
            fetch: RefCell::new(fetch),
        }
    }
}

/// Whether an entry is a request whose body was let go of: a whole body's length without its
/// bytes.
fn let_go(message: &MessageEntry) -> bool {
    let body = &message.body;
    message.direction == "→"
        && message.part.is_none()
        && !message.unsent
        && body.length > 0
        && !body.truncated
        && body.json.is_none()
        && body.text.as_deref().is_none_or(str::is_empty)
        && body.base64.is_none()
}

impl<F: FnMut(&str) -> Option<BodyCapture>> Serialize for StreamedLog<'_, F> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // The fields of `HopLog`, in its order.
        let fields = if self.log.agent_events.is_empty() {
            5
        } else {
            6
        };
        let mut log = serializer.serialize_struct("HopLog", fields)?;
        log.serialize_field("format", &self.log.format)?;
        log.serialize_field("version", &self.log.version)?;
        log.serialize_field("trace", &self.log.trace)?;
        log.serialize_field("messages", &Messages(self))?;
        log.serialize_field("hops", &self.log.hops)?;
        if !self.log.agent_events.is_empty() {
            log.serialize_field("agent_events", &self.log.agent_events)?;
        }
        log.end()
    }
}

struct Messages<'s, 'a, F>(&'s StreamedLog<'a, F>);

impl<F: FnMut(&str) -> Option<BodyCapture>> Serialize for Messages<'_, '_, F> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let messages = &self.0.log.messages;
        let mut seq = serializer.serialize_seq(Some(messages.len()))?;
        for message in messages {
            let fetched = match let_go(message) {
                true => (self.0.fetch.borrow_mut())(&message.hop_id),
                false => None,
            };
            match fetched {
                Some(body) => {
                    let mut whole = message.clone();
                    whole.body = Body::encode(&body);
                    seq.serialize_element(&whole)?;
                }
                None => seq.serialize_element(message)?,
            }
        }
        seq.end()
    }
}
