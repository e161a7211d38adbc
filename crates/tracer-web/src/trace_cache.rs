//! The hop logs of the traces lately opened, with what the page adds to them: built once per
//! state of a trace (the store's summary key says when it changed), the last few kept.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use serde_json::{Value, json};
use tokio::sync::Mutex;

use tracer_export::hop_log::{Bodies as LogBodies, HopLog};
use tracer_live::load::{Bodies, LoadedTrace, load_trace};
use tracer_store::{Result, Store};

/// Traces kept built (a trace with its large request bodies let go of, and its log).
const KEPT: usize = 4;

/// One trace as the page reads it.
pub(crate) struct BuiltTrace {
    /// Its hops, large request bodies let go of (read back one at a time when a message opens).
    pub(crate) loaded: LoadedTrace,
    /// Its hop log, bodies as lengths only, with `ui` added: the page's trace document.
    pub(crate) document: Value,
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
        let key = store.kept_summary(&id).await?.key;
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
    let log = HopLog::from_loaded(&loaded, LogBodies::LengthsOnly);
    let mut document = serde_json::to_value(&log).unwrap_or(Value::Null);
    let ui = extras(&loaded, &log);
    if let Value::Object(map) = &mut document {
        map.insert("ui".into(), ui);
    }
    Ok(BuiltTrace { loaded, document })
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
