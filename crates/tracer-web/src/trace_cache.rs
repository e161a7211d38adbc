//! The traces lately opened, as the page reads them: built once per state of a trace (the
//! store's summary key says when it changed), kept as the JSON sent (the document, each message
//! and hop entry) and the few facts a message needs, never as loaded hops; the last few kept.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use bytes::Bytes;
use serde_json::{Value, json};
use tokio::sync::Mutex;

use tracer_export::hop_log::{Bodies as LogBodies, HopLog};
use tracer_live::load::{Bodies, LoadedTrace, load_trace};
use tracer_store::{Result, Store};
use tracer_trace::read::changes_by_call::changes_by_call_with;

/// Traces kept built.
const KEPT: usize = 4;

/// One message's entry (its body as a length), and what finds it.
pub(crate) struct MessageRow {
    pub(crate) number: u64,
    /// An answer kept for the record but never sent: it shares its request's number.
    unsent: bool,
    pub(crate) hop_id: String,
    /// `→`: a request.
    pub(crate) request: bool,
    json: Box<str>,
}

impl MessageRow {
    /// The entry as JSON.
    pub(crate) fn entry(&self) -> Value {
        serde_json::from_str(&self.json).unwrap_or(Value::Null)
    }
}

/// One trace as the page reads it.
pub(crate) struct BuiltTrace {
    /// The hop log, bodies as lengths only, with `ui` added: `/api/trace/ID`, serialized once.
    pub(crate) document: Bytes,
    messages: Vec<MessageRow>,
    hops: HashMap<String, Box<str>>,
    /// Each model request's hop, and the hop of the previous request of its conversation.
    previous: HashMap<String, Option<String>>,
}

impl BuiltTrace {
    /// Message `number` (the one sent, when an unsent answer shares the number).
    pub(crate) fn message(&self, number: u64) -> Option<&MessageRow> {
        self.messages
            .iter()
            .find(|m| m.number == number && !m.unsent)
            .or_else(|| self.messages.iter().find(|m| m.number == number))
    }

    /// Hop `id`'s entry of the log.
    pub(crate) fn hop(&self, id: &str) -> Value {
        self.hops
            .get(id)
            .and_then(|json| serde_json::from_str(json).ok())
            .unwrap_or(Value::Null)
    }

    /// The number of hop `id`'s request message.
    pub(crate) fn request_number(&self, id: &str) -> Option<u64> {
        self.messages
            .iter()
            .find(|m| m.request && m.hop_id == id)
            .map(|m| m.number)
    }

    /// For a model request's hop, the previous request's hop of its conversation (None inside
    /// when it is the first); None for any other hop.
    pub(crate) fn previous_of(&self, id: &str) -> Option<Option<&str>> {
        self.previous.get(id).map(Option::as_deref)
    }
}

/// The last [`KEPT`] traces built, by id and the key of the state they were built from.
#[derive(Default)]
pub(crate) struct TraceCache {
    built: Mutex<VecDeque<(String, String, Arc<BuiltTrace>)>>,
}

impl TraceCache {
    /// Trace `id_or_prefix` as it is now: kept, or built again when it changed since.
    pub(crate) async fn get(&self, store: &Store, id_or_prefix: &str) -> Result<Arc<BuiltTrace>> {
        let id = store.trace(id_or_prefix).await?.id;
        // The agent's own events come apart from the hops: a new one rebuilds what shows them.
        let events = store.newest_agent_event_id().await?;
        let key = format!("{}#{events}", store.kept_summary(&id).await?.key);
        let mut built = self.built.lock().await;
        if let Some(index) = built.iter().position(|(i, _, _)| *i == id)
            && let Some(entry) = built.remove(index)
            && entry.1 == key
        {
            let trace = entry.2.clone();
            built.push_back(entry);
            return Ok(trace);
        }
        // Built under the lock: two pages opening one long trace build it once.
        let trace = Arc::new(build(store, &id).await?);
        built.push_back((id, key, trace.clone()));
        if built.len() > KEPT {
            built.pop_front();
        }
        Ok(trace)
    }

    /// Forgets trace `id` (it changed).
    pub(crate) async fn forget(&self, id: &str) {
        self.built.lock().await.retain(|(i, _, _)| i != id);
    }
}

async fn build(store: &Store, id: &str) -> Result<BuiltTrace> {
    let loaded = load_trace(store, id, Bodies::LetGo).await?;
    let fork = store.fork_of_trace(loaded.id()).await?;
    let log = HopLog::from_loaded(&loaded, LogBodies::LengthsOnly)
        .with_fork(fork.as_ref().map(tracer_export::hop_log::ForkEntry::of));
    let placed = tracer_live::agent_account::for_trace(store, &loaded).await?;
    let hop_ids: Vec<String> = loaded.hops.iter().map(|h| h.start.id.clone()).collect();
    let log = log.with_agent_events(&placed, &hop_ids);
    let ui = extras(&loaded, &log);
    let previous = changes_by_call_with(&loaded.hops, |_| None)
        .into_iter()
        .map(|call| (call.hop_id, call.previous_hop_id))
        .collect();
    drop(loaded);
    let messages = log
        .messages()
        .iter()
        .map(|entry| MessageRow {
            number: entry.number as u64,
            unsent: entry.is_unsent(),
            hop_id: entry.hop_id.clone(),
            request: entry.direction == "→",
            json: serde_json::to_string(entry)
                .unwrap_or_default()
                .into_boxed_str(),
        })
        .collect();
    let hops = log
        .hops()
        .iter()
        .map(|hop| {
            let json = serde_json::to_string(hop).unwrap_or_default();
            (hop.id.clone(), json.into_boxed_str())
        })
        .collect();
    // The log's object with `ui` as its last key, written straight to bytes (a long trace's
    // log is never held as a JSON tree).
    let mut document = serde_json::to_vec(&log).unwrap_or_default();
    if document.last() == Some(&b'}') {
        document.pop();
        document.extend_from_slice(b",\"ui\":");
        document.extend_from_slice(ui.to_string().as_bytes());
        document.push(b'}');
    }
    Ok(BuiltTrace {
        document: Bytes::from(document),
        messages,
        hops,
        previous,
    })
}

/// What the page shows beside the log: the lanes left to right, each model answer's cache
/// verdict, by message number.
fn extras(loaded: &LoadedTrace, log: &HopLog) -> Value {
    let mut lanes: Vec<&str> = vec!["you"];
    for message in log.shown_messages() {
        for name in [message.from.as_str(), message.to.as_str()] {
            if !lanes.contains(&name) {
                lanes.push(name);
            }
        }
    }
    let answers: HashMap<&str, usize> = log
        .shown_messages()
        .filter(|m| m.direction == "←")
        .map(|m| (m.hop_id.as_str(), m.number))
        .collect();
    let mut cache = serde_json::Map::new();
    for report in tracer_trace::account::cache_verdict::cache_reports(&loaded.hops) {
        if let Some(number) = answers.get(report.hop_id.as_str()) {
            cache.insert(number.to_string(), Value::String(report.line()));
        }
    }
    json!({"lanes": lanes, "cache": cache})
}
