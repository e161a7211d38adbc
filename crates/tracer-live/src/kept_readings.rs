//! Model requests' readings kept in the database (`tracer_store::hop_readings`): opening a trace takes
//! each request's reading and measures back instead of parsing its body again, and keeps those
//! it had to read, each re-sent message and system prompt once.

use std::collections::HashMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use tracer_store::hop_readings::ReadingToKeep;
use tracer_store::{Result, Store};
use tracer_trace::RecordedHop;
use tracer_trace::read::prompt_regions::RegionDigests;
use tracer_trace::read::read_once::LET_GO_BYTES;
use tracer_trace::read::request_parts::RequestParts;
use tracer_wire::dialect::{
    self, BodyReading, Dialect, Integrity, ModelMessage, ModelRequest, Reading,
};

/// The layout of a kept reading; a row of another layout is read again from its body.
const LAYOUT: u32 = 3;

/// A model request's reading as kept: its texts by their ids in `reading_texts`. Read back with
/// `P` = [`serde::de::IgnoredAny`] when its parts are not wanted (a listing), so a long trace's
/// per-message measures are never taken apart.
#[derive(Debug, Serialize, Deserialize)]
struct Kept<P = KeptParts> {
    layout: u32,
    dialect: Dialect,
    integrity: Integrity,
    /// Everything but the system prompt and the messages.
    request: ModelRequest,
    system: Option<i64>,
    messages: Vec<i64>,
    parts: Option<P>,
    /// The stored body is at least [`LET_GO_BYTES`]: a face that lets large bodies go need not
    /// read it at all.
    large: bool,
}

/// [`RequestParts`] as kept (the history's kinds by name).
#[derive(Debug, Serialize, Deserialize)]
struct KeptParts {
    system_blocks: Vec<usize>,
    system_messages: Vec<usize>,
    history_kinds: Vec<(String, usize)>,
    message_bytes: Vec<usize>,
    json_bytes: usize,
    regions: RegionDigests,
    ttls: Vec<u64>,
    parameters: Vec<(String, u64)>,
    tail_notes: Vec<String>,
    marks: u64,
}

/// The kinds of history [`RequestParts`] names.
const HISTORY_KINDS: [&str; 4] = ["user", "assistant", "tool results", "thinking"];

impl KeptParts {
    fn of(parts: &RequestParts) -> Self {
        KeptParts {
            system_blocks: parts.system_blocks.clone(),
            system_messages: parts.system_messages.clone(),
            history_kinds: (parts.history_kinds.iter())
                .map(|(kind, bytes)| (kind.to_string(), *bytes))
                .collect(),
            message_bytes: parts.message_bytes.clone(),
            json_bytes: parts.json_bytes,
            regions: parts.regions.clone(),
            ttls: parts.ttls.clone(),
            parameters: parts.parameters.clone(),
            tail_notes: parts.tail_notes.clone(),
            marks: parts.marks,
        }
    }

    /// The parts again; None when a kind is one this build does not name.
    fn parts(self) -> Option<RequestParts> {
        let mut history_kinds = Vec::with_capacity(self.history_kinds.len());
        for (kind, bytes) in self.history_kinds {
            let known = HISTORY_KINDS.iter().find(|k| **k == kind)?;
            history_kinds.push((*known, bytes));
        }
        Some(RequestParts {
            system_blocks: self.system_blocks,
            system_messages: self.system_messages,
            history_kinds,
            message_bytes: self.message_bytes,
            json_bytes: self.json_bytes,
            regions: self.regions,
            ttls: self.ttls,
            parameters: self.parameters,
            tail_notes: self.tail_notes,
            marks: self.marks,
        })
    }
}

/// A request's reading taken back: what [`RecordedHop::read`] is given before its body is read.
#[derive(Debug)]
pub(crate) struct KeptRequest {
    pub(crate) dialect: Dialect,
    pub(crate) request: BodyReading,
    pub(crate) parts: Option<Arc<RequestParts>>,
    large: bool,
    /// Whether parts were kept (when they were not taken back, `parts` is None all the same).
    measured: bool,
}

impl KeptRequest {
    /// Whether a face that lets large request bodies go (`Bodies::LetGo`) can skip reading
    /// this hop's request body, unless the hop is an agent's: what
    /// `recorded_hop::let_go_of_request_body` would drop anyway.
    pub(crate) fn body_not_needed(&self) -> bool {
        self.large && self.measured
    }

    /// Gives the hop its reading: this request's, and its response read from its body.
    pub(crate) fn give_to(self, hop: &RecordedHop) {
        let reading = dialect::with_response(self.dialect, self.request, hop.end.as_ref());
        hop.read.keep(reading, self.parts);
    }
}

/// Which of a kept reading's parts are taken back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Parts {
    /// The request's measures too (`RequestParts`): what context, cache and changes views need.
    Taken,
    /// The reading alone: a hop taken back this way has no request parts (`request_parts()` is
    /// None), which is all a listing needs.
    Left,
}

/// The kept readings of a trace's hops that still match them, by hop id. A row that cannot be
/// read (another layout, a text missing) is left out: its hop is read from its body.
pub(crate) async fn load(
    store: &Store,
    trace_id: &str,
    parts: Parts,
) -> Result<HashMap<String, KeptRequest>> {
    match parts {
        Parts::Taken => {
            load_as::<KeptParts>(store, trace_id, |p| p.parts().map(|p| Some(Arc::new(p)))).await
        }
        Parts::Left => load_as::<serde::de::IgnoredAny>(store, trace_id, |_| Some(None)).await,
    }
}

async fn load_as<P: serde::de::DeserializeOwned>(
    store: &Store,
    trace_id: &str,
    // None when the kept parts cannot be taken back: the hop is read from its body.
    parts_of: impl Fn(P) -> Option<Option<Arc<RequestParts>>>,
) -> Result<HashMap<String, KeptRequest>> {
    // Each row parsed as it is read: the text of a long trace's readings is never held whole.
    let mut kept: Vec<(String, Kept<P>)> = Vec::new();
    store
        .each_kept_reading(trace_id, |hop, json| {
            if let Ok(reading) = serde_json::from_str::<Kept<P>>(json)
                && reading.layout == LAYOUT
            {
                kept.push((hop, reading));
            }
        })
        .await?;
    let mut ids: Vec<i64> = (kept.iter())
        .flat_map(|(_, k)| k.system.iter().chain(k.messages.iter()).copied())
        .collect();
    ids.sort_unstable();
    ids.dedup();
    let texts = store.reading_texts(&ids).await?;
    let mut messages: HashMap<i64, Option<Arc<ModelMessage>>> = HashMap::new();
    let mut systems: HashMap<i64, Option<Arc<str>>> = HashMap::new();
    let mut out = HashMap::with_capacity(kept.len());
    for (hop, kept) in kept {
        let system = match kept.system {
            Some(id) => match (systems.entry(id)).or_insert_with(|| {
                Some(serde_json::from_str::<String>(texts.get(&id)?).ok()?.into())
            }) {
                Some(text) => Some(text.clone()),
                None => continue,
            },
            None => None,
        };
        let mut taken = Vec::with_capacity(kept.messages.len());
        for id in &kept.messages {
            let message = messages
                .entry(*id)
                .or_insert_with(|| Some(Arc::new(serde_json::from_str(texts.get(id)?).ok()?)));
            taken.push(message.clone());
        }
        let Some(taken) = taken.into_iter().collect::<Option<Vec<_>>>() else {
            continue;
        };
        let measured = kept.parts.is_some();
        let parts = match kept.parts {
            Some(parts) => match parts_of(parts) {
                Some(parts) => parts,
                None => continue,
            },
            None => None,
        };
        let mut request = kept.request;
        request.system = system;
        request.messages = taken;
        let request = BodyReading {
            reading: Reading::ModelRequest(request),
            integrity: kept.integrity,
        };
        let large = kept.large;
        let dialect = kept.dialect;
        out.insert(
            hop,
            KeptRequest {
                dialect,
                request,
                parts,
                large,
                measured,
            },
        );
    }
    Ok(out)
}

/// The model requests of a trace read from their bodies, to be kept.
#[derive(Debug, Default)]
pub(crate) struct ToKeep {
    /// Each hop's id, its reading as kept with the texts as indexes into `texts`.
    readings: Vec<(String, Kept)>,
    /// Each text taken: its id when it is kept already, else its JSON to keep.
    texts: Vec<Text>,
    /// The index in `texts` of each shared text taken so far, by its address.
    by_address: HashMap<usize, i64>,
}

#[derive(Debug)]
enum Text {
    Kept(i64),
    New(String),
}

/// The ids in `reading_texts` of shared texts (by their address) kept already: what a caller
/// that holds the texts (`read_once::SharedTexts`) between writes need not hash and look up
/// again.
pub(crate) type KeptTextIds = HashMap<usize, i64>;

impl ToKeep {
    /// A batch that knows these texts are kept already (their `Arc`s held by the caller).
    pub(crate) fn knowing(known: &KeptTextIds) -> Self {
        let mut batch = Self::default();
        for (address, id) in known {
            batch.by_address.insert(*address, batch.texts.len() as i64);
            batch.texts.push(Text::Kept(*id));
        }
        batch
    }

    /// Takes a hop read from its body, when it is a model request that has ended and was read
    /// with its whole body. Whether it was taken.
    pub(crate) fn add(&mut self, hop: &RecordedHop) -> bool {
        let Some(end) = hop.end.as_ref() else {
            return false;
        };
        if end.request_ended_unix_ns.is_none() || end.websocket.is_some() {
            return false;
        }
        let reading = hop.read_ref();
        let Reading::ModelRequest(request) = &reading.request.reading else {
            return false;
        };
        let large = end.request_body.bytes.len() >= LET_GO_BYTES;
        let system = (request.system.as_ref()).map(|text| {
            let address = Arc::as_ptr(text) as *const u8 as usize;
            self.index(address, || serde_json::to_string(&**text).ok())
        });
        let mut messages = Vec::with_capacity(request.messages.len());
        for message in &request.messages {
            let address = Arc::as_ptr(message) as usize;
            messages.push(self.index(address, || serde_json::to_string(&**message).ok()));
        }
        let (Some(system), Some(messages)) = (transpose(system), messages.into_iter().collect())
        else {
            return false;
        };
        let mut rest = request.clone();
        (rest.system, rest.messages) = (None, Vec::new());
        let kept = Kept {
            layout: LAYOUT,
            dialect: reading.dialect,
            integrity: reading.request.integrity.clone(),
            request: rest,
            system,
            messages,
            parts: hop.request_parts().map(|parts| KeptParts::of(&parts)),
            large,
        };
        self.readings.push((hop.start.id.clone(), kept));
        true
    }

    fn index(&mut self, address: usize, text: impl FnOnce() -> Option<String>) -> Option<i64> {
        if let Some(index) = self.by_address.get(&address) {
            return Some(*index);
        }
        let index = i64::try_from(self.texts.len()).ok()?;
        self.texts.push(Text::New(text()?));
        self.by_address.insert(address, index);
        Some(index)
    }

    /// Writes what was taken: the new texts once each, then the readings referring to them.
    /// Gives back the id of every text taken, by its address.
    pub(crate) async fn write(self, store: &Store) -> Result<KeptTextIds> {
        if self.readings.is_empty() {
            return Ok(KeptTextIds::new());
        }
        let new: Vec<String> = (self.texts.iter())
            .filter_map(|text| match text {
                Text::New(json) => Some(json.clone()),
                Text::Kept(_) => None,
            })
            .collect();
        let mut written = store.keep_reading_texts(&new).await?.into_iter();
        let ids: Vec<Option<i64>> = (self.texts.iter())
            .map(|text| match text {
                Text::Kept(id) => Some(*id),
                Text::New(_) => written.next(),
            })
            .collect();
        let id_of = |index: i64| {
            usize::try_from(index)
                .ok()
                .and_then(|i| ids.get(i).copied().flatten())
        };
        let mut rows = Vec::with_capacity(self.readings.len());
        for (hop_id, mut kept) in self.readings {
            let system = kept.system.map(id_of);
            let messages: Option<Vec<i64>> = kept.messages.iter().map(|i| id_of(*i)).collect();
            let (Some(system), Some(messages)) = (transpose(system), messages) else {
                continue;
            };
            kept.system = system;
            kept.messages = messages;
            let Ok(reading) = serde_json::to_string(&kept) else {
                continue;
            };
            rows.push(ReadingToKeep { hop_id, reading });
        }
        store.keep_readings(&rows).await?;
        Ok((self.by_address.into_iter())
            .filter_map(|(address, index)| Some((address, id_of(index)?)))
            .collect())
    }
}

/// No text (`None`) as no failure: `Some(None)`; a text that failed (`Some(None)`) as `None`.
fn transpose(text: Option<Option<i64>>) -> Option<Option<i64>> {
    text.map_or(Some(None), |id| id.map(Some))
}
