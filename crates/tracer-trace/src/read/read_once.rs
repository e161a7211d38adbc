//! A trace's hops read once: each hop's reading and request parts made a single time and shared
//! by every view of the trace, the prompts and messages its requests re-send kept once in memory,
//! and (for the faces that print no body) large request bodies let go of once read.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, OnceLock};

use super::request_parts::RequestParts;
use crate::RecordedHop;
use tracer_wire::dialect::{HopReading, ModelMessage, Reading};
use tracer_wire::hop::Role;

/// What reading a hop gave, kept with the hop once made (empty until asked for). A cache: two
/// hops are equal by their records alone.
#[derive(Debug, Clone, Default)]
pub struct ReadOnce {
    reading: OnceLock<HopReading>,
    parts: OnceLock<Option<Arc<RequestParts>>>,
}

impl PartialEq for ReadOnce {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl ReadOnce {
    /// The hop's reading, made by `read` the first time.
    pub(crate) fn reading(&self, read: impl FnOnce() -> HopReading) -> &HopReading {
        self.reading.get_or_init(read)
    }

    /// Gives the hop a reading and parts made before (kept in the database): a hop read
    /// already keeps its own.
    pub fn keep(&self, reading: HopReading, parts: Option<Arc<RequestParts>>) {
        let _ = self.reading.set(reading);
        let _ = self.parts.set(parts);
    }

    /// The hop's request parts, measured by `measure` the first time.
    pub(crate) fn parts(
        &self,
        measure: impl FnOnce() -> Option<RequestParts>,
    ) -> Option<Arc<RequestParts>> {
        self.parts.get_or_init(|| measure().map(Arc::new)).clone()
    }
}

/// The texts a trace's requests share: each system prompt and message kept once, however many
/// requests re-send it.
#[derive(Debug, Default)]
pub struct SharedTexts {
    messages: HashMap<u64, Vec<Arc<ModelMessage>>>,
    systems: HashMap<u64, Vec<Arc<str>>>,
}

impl SharedTexts {
    /// Points a reading's prompt and messages at the copies already kept, keeping the new ones.
    pub(crate) fn share(&mut self, reading: &mut HopReading) {
        let Reading::ModelRequest(request) = &mut reading.request.reading else {
            return;
        };
        if let Some(system) = request.system.as_mut() {
            let kept = self.systems.entry(digest(&**system)).or_default();
            match kept.iter().find(|k| **k == *system) {
                Some(same) => *system = same.clone(),
                None => kept.push(system.clone()),
            }
        }
        for message in request.messages.iter_mut() {
            // Everything but the arguments' JSON: a history of tool calls with no text must
            // not share one bucket.
            let calls: Vec<(&Option<String>, &str)> = (message.tool_calls.iter())
                .map(|call| (&call.id, call.name.as_str()))
                .collect();
            let key = digest((
                (&message.role, &message.content, &message.thinking),
                (&message.tool_call_id, &message.tool_name, calls),
            ));
            let kept = self.messages.entry(key).or_default();
            match kept.iter().find(|k| **k == *message) {
                Some(same) => *message = same.clone(),
                None => kept.push(message.clone()),
            }
        }
    }
}

fn digest(value: impl Hash) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    value.hash(&mut hasher);
    hasher.finish()
}

/// Request bodies at least this large are let go of once read, for the faces that print none.
pub const LET_GO_BYTES: usize = 64 * 1024;

/// Reads a hop as one of a trace's (its texts shared with the hops read before), and measures
/// its request when it is a model request.
pub fn read_into(hop: &RecordedHop, shared: &mut SharedTexts) {
    hop.read.reading(|| {
        let mut reading = super::recorded_hop::reading_of(hop);
        shared.share(&mut reading);
        reading
    });
    if matches!(hop.read_ref().request.reading, Reading::ModelRequest(_)) {
        hop.request_parts();
    }
}

/// Lets go of a model request's body once it is read and measured (see [`read_into`]), when it
/// is large: what every view but the body itself needs of it is kept in the reading and parts.
/// Hops of your requests to a host and of other kinds keep their bodies.
pub fn let_go_of_request_body(hop: &mut RecordedHop) {
    let is_model_request = matches!(hop.read_ref().request.reading, Reading::ModelRequest(_));
    if hop.start.role == Role::Agent || !is_model_request || hop.read.parts.get().is_none() {
        return;
    }
    if let Some(end) = hop.end.as_mut()
        && end.request_body.bytes.len() >= LET_GO_BYTES
    {
        end.request_body.bytes = Vec::new();
    }
}

/// Reads every hop of a trace, their texts shared (see [`read_into`]).
pub fn read_all(hops: &[RecordedHop]) {
    let mut shared = SharedTexts::default();
    for hop in hops {
        read_into(hop, &mut shared);
    }
}
