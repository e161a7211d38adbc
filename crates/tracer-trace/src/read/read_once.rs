//! A trace's hops read once: each hop's reading and request parts made a single time and shared
//! by every view of the trace, the prompts and messages its requests re-send kept once in memory,
//! and (for the faces that print no body) large request bodies let go of once read.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, OnceLock};

use super::request_parts::RequestParts;
use tracer_wire::dialect::{HopReading, ModelMessage, Reading};

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

    /// Whether the request's parts were made (a model request read and measured).
    pub(crate) fn has_parts(&self) -> bool {
        self.parts.get().is_some()
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
