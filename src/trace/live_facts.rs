//! What the store writer hands live grouping: each hop's grouping input as its row reads now
//! (in flight, or ended), read from the events as the writer writes the row, so a grouping pass
//! takes it instead of reading the row back and parsing its bodies again. Bounded; a hop not
//! found here, or found as it was before, is read from the store.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use super::TraceInput;
use crate::hop::{HopEnd, HopStart, HopState};
use crate::store::committed::CommittedHops;

/// Hops kept at most (those not taken yet; the oldest go first).
const MAX_HOPS: usize = 32_768;
/// Text kept at most, over all kept inputs.
const MAX_BYTES: usize = 16 * 1024 * 1024;
/// An input larger than this is not kept (a long conversation's history): it is read back.
const MAX_ONE: usize = 32 * 1024;

/// The inputs handed over and not taken yet.
#[derive(Debug, Default)]
pub struct LiveFacts {
    kept: Mutex<Kept>,
}

/// Which state of its row an input was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    /// In flight, its request read whole or not yet.
    InFlight { request_read: bool },
    /// Ended (complete or failed).
    Ended,
}

#[derive(Debug, Default)]
struct Kept {
    by_id: HashMap<String, (TraceInput, Version, usize)>,
    /// Ids in the order they came (some already taken).
    order: VecDeque<String>,
    bytes: usize,
}

impl LiveFacts {
    pub fn new() -> Self {
        Self::default()
    }

    /// The input handed over for hop `id` when it was read from the row's state `version`,
    /// once (an input of another state is forgotten).
    pub fn take(&self, id: &str, version: Version) -> Option<TraceInput> {
        let mut kept = self.kept.lock().ok()?;
        let (input, was, size) = kept.by_id.remove(id)?;
        kept.bytes -= size;
        (was == version).then_some(input)
    }

    /// Forgets everything (a grouper that starts again reads the store).
    pub fn clear(&self) {
        if let Ok(mut kept) = self.kept.lock() {
            *kept = Kept::default();
        }
    }

    /// How many inputs are kept.
    pub fn len(&self) -> usize {
        self.kept.lock().map_or(0, |kept| kept.by_id.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn keep(&self, input: TraceInput, version: Version) {
        let size = text_size(&input);
        if size > MAX_ONE {
            return;
        }
        let Ok(mut kept) = self.kept.lock() else {
            return;
        };
        let kept = &mut *kept;
        kept.bytes += size;
        let id = input.hop_id.clone();
        match kept.by_id.insert(id.clone(), (input, version, size)) {
            Some((_, _, before)) => kept.bytes -= before,
            None => kept.order.push_back(id),
        }
        while kept.by_id.len() > MAX_HOPS
            || kept.bytes > MAX_BYTES
            || kept.order.len() > 2 * MAX_HOPS
        {
            let Some(oldest) = kept.order.pop_front() else {
                break;
            };
            if let Some((_, _, size)) = kept.by_id.remove(&oldest) {
                kept.bytes -= size;
            }
        }
    }
}

impl CommittedHops for LiveFacts {
    fn hop(&self, start: &HopStart, end: &HopEnd) {
        let version = match end.state {
            Some(HopState::InFlight) => Version::InFlight {
                request_read: end.request_ended_unix_ns.is_some(),
            },
            Some(HopState::Complete | HopState::Failed) => Version::Ended,
            // An aborted hop may be read otherwise from its row (`settle_old_record`): read back.
            Some(HopState::Aborted) | None => return,
        };
        self.keep(TraceInput::from_hop(start, Some(end)), version);
    }
}

/// About how many bytes an input holds.
fn text_size(input: &TraceInput) -> usize {
    let texts = [&input.hop_id, &input.peer, &input.route]
        .into_iter()
        .map(String::len)
        .sum::<usize>();
    let optional = [
        &input.trace_id,
        &input.user_text,
        &input.latest_user_text,
        &input.title_text,
        &input.mcp_method,
        &input.mcp_result,
        &input.host_session,
        &input.mcp_session,
    ]
    .into_iter()
    .map(|text| text.as_ref().map_or(0, String::len))
    .sum::<usize>();
    let lists = input
        .user_texts
        .iter()
        .chain(&input.tool_results)
        .map(String::len)
        .sum::<usize>();
    let calls = input
        .history_calls
        .iter()
        .chain(&input.asked_calls)
        .chain(&input.mcp_call)
        .map(|call| 64 + call.name.len() + value_size(&call.arguments))
        .sum::<usize>();
    256 + texts + optional + lists + calls
}

/// About how many bytes a JSON value holds.
fn value_size(value: &serde_json::Value) -> usize {
    use serde_json::Value;
    match value {
        Value::String(text) => 24 + text.len(),
        Value::Array(items) => 24 + items.iter().map(value_size).sum::<usize>(),
        Value::Object(map) => {
            24 + map
                .iter()
                .map(|(key, item)| 24 + key.len() + value_size(item))
                .sum::<usize>()
        }
        _ => 16,
    }
}

#[cfg(test)]
#[path = "live_facts_tests.rs"]
mod tests;
