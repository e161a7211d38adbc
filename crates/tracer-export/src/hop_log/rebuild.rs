//! From a hop log back to recorded hops: checking that its parts agree, rebuilding each hop from
//! its entry and its two messages, and importing the whole trace in one transaction.

use std::collections::{HashMap, HashSet};

use super::{HopLog, HopLogError, IMPORTED_BY, MessageEntry};
use tracer_store::traces::{TraceRow, hop_exists, insert_trace, set_hop_trace};
use tracer_store::{Store, hops};
use tracer_trace::RecordedHop;
use tracer_wire::hop::{BodyCapture, Chunk, Header, HopEnd, HopStart, HopState, RequestDone};

/// A trace id as tracer makes them (a W3C trace id): 32 lowercase hexadecimal digits.
fn is_trace_id(id: &str) -> bool {
    id.len() == 32 && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

fn malformed(message: String) -> HopLogError {
    HopLogError::Malformed(message)
}

impl HopLog {
    /// What goes into a database is a trace id as tracer makes them, never a text that names a
    /// file or a path where an id is used as one (`import` refuses anything else).
    pub fn check_importable_id(&self) -> Result<(), HopLogError> {
        if is_trace_id(&self.trace.id) {
            return Ok(());
        }
        Err(malformed(format!(
            "trace.id {:?} is not a trace id (32 lowercase hexadecimal digits, as tracer records \
             them)",
            self.trace.id.chars().take(80).collect::<String>()
        )))
    }

    /// Rebuilds the hops, or says which part of the log disagrees with the rest.
    pub(super) fn recorded_hops_checked(&self) -> Result<Vec<RecordedHop>, HopLogError> {
        if self.trace.id.is_empty() {
            return Err(malformed("trace.id is empty".into()));
        }
        if !matches!(self.trace.kind.as_str(), "request" | "setup") {
            return Err(malformed(format!(
                "trace.kind is \"{}\", expected \"request\" or \"setup\"",
                self.trace.kind
            )));
        }
        let mut requests: HashMap<&str, &MessageEntry> = HashMap::new();
        let mut responses: HashMap<&str, &MessageEntry> = HashMap::new();
        // The messages of an SSE answer are told from the hop's answer, which holds their bytes.
        for message in self.messages.iter().filter(|m| m.part.is_none()) {
            let slot = match message.direction.as_str() {
                "→" => &mut requests,
                "←" => &mut responses,
                other => {
                    return Err(malformed(format!(
                        "message {}: direction \"{other}\" is not → or ←",
                        message.number
                    )));
                }
            };
            if slot.insert(message.hop_id.as_str(), message).is_some() {
                return Err(malformed(format!(
                    "message {}: hop {} has two {} messages",
                    message.number, message.hop_id, message.direction
                )));
            }
        }
        let mut ids = HashSet::new();
        let mut out = Vec::with_capacity(self.hops.len());
        for entry in &self.hops {
            let id = entry.id.as_str();
            if !ids.insert(id) {
                return Err(malformed(format!("hop {id} is listed twice")));
            }
            let request = requests
                .get(id)
                .ok_or_else(|| malformed(format!("hop {id} has no request message")))?;
            let response = responses.get(id).copied();
            let in_flight = entry.state == HopState::InFlight;
            if in_flight == response.is_some() {
                return Err(malformed(format!(
                    "hop {id} is {} but {} a response message",
                    entry.state.as_str(),
                    if in_flight { "has" } else { "has no" }
                )));
            }
            let bad = |what: &str, why: String| malformed(format!("hop {id}: {what}: {why}"));
            let headers = |message: &MessageEntry| -> Result<Vec<Header>, HopLogError> {
                message
                    .headers
                    .iter()
                    .map(|h| h.decode().map_err(|why| bad("headers", why)))
                    .collect()
            };
            let request_body = request
                .body
                .decode()
                .map_err(|why| bad("request body", why))?;
            let started_unix_ns = request
                .timings
                .started_unix_ns
                .ok_or_else(|| bad("request timings", "no started_unix_ns".into()))?;
            let start = HopStart {
                id: entry.id.clone(),
                route: entry.route.clone(),
                role: entry.role,
                transport: entry.transport,
                peer: entry.peer.clone(),
                method: request.method.clone(),
                path: request.path.clone(),
                url: entry.url.clone(),
                request_headers: headers(request)?,
                started_unix_ns,
                run_id: None,
            };
            let mut end = HopEnd {
                id: entry.id.clone(),
                state: Some(entry.state),
                request_ended_unix_ns: request.timings.ended_unix_ns,
                error: entry.error.clone(),
                note: entry.note.clone(),
                request_body,
                websocket: entry
                    .websocket
                    .as_ref()
                    .map(|ws| ws.decode().map_err(|why| bad("websocket", why)))
                    .transpose()?,
                ..HopEnd::default()
            };
            if let Some(response) = response {
                let timings = &response.timings;
                end.status = response.status;
                end.response_headers = headers(response)?;
                end.response_body = response
                    .body
                    .decode()
                    .map_err(|why| bad("response body", why))?;
                end.response_head_unix_ns = timings.head_unix_ns;
                end.response_first_byte_unix_ns = timings.first_byte_unix_ns;
                end.response_ended_unix_ns = timings.ended_unix_ns;
                end.chunks = timings
                    .chunks
                    .iter()
                    .flatten()
                    .map(|c| Chunk {
                        offset_ns: c.offset_ns,
                        size: c.size,
                    })
                    .collect();
                end.chunks_truncated = timings.chunks_truncated.unwrap_or(false);
            } else if end.request_ended_unix_ns.is_none()
                && end.request_body != BodyCapture::default()
            {
                return Err(bad("request", "a body but no ended_unix_ns".into()));
            }
            out.push(RecordedHop {
                read: Default::default(),
                start,
                end: Some(end),
            });
        }
        if let Some(stray) = self
            .messages
            .iter()
            .find(|m| !ids.contains(m.hop_id.as_str()))
        {
            return Err(malformed(format!(
                "message {} names hop {}, which is not in \"hops\"",
                stray.number, stray.hop_id
            )));
        }
        Ok(out)
    }
}

/// Writes the trace and every hop in one transaction; on any error nothing is written.
pub(super) async fn import(log: &HopLog, store: &Store) -> Result<String, HopLogError> {
    log.check_importable_id()?;
    let hops = log.recorded_hops_checked()?;
    let trace = TraceRow {
        id: log.trace.id.clone(),
        // A setup trace's name is no title of its own: it stays derived.
        title: log.trace.title.clone().filter(|t| {
            log.trace.kind != "setup" || t != tracer_trace::account::summary::SETUP_NAME
        }),
        kind: log.trace.kind.clone(),
        started_unix_ns: log.trace.started_unix_ns,
        ended_unix_ns: log.trace.ended_unix_ns,
        created_by: IMPORTED_BY.to_string(),
    };
    let mut tx = store.begin_write().await?;
    if !insert_trace(&mut tx, &trace).await? {
        return Err(HopLogError::TraceExists(trace.id));
    }
    if let Some(row) = log.imported_session() {
        tracer_store::sessions::join_session(&mut tx, &trace.id, &row).await?;
    }
    // A WebSocket's Responses turns are read again from its messages, never stored.
    for hop in hops
        .iter()
        .filter(|h| !tracer_trace::read::ws_turns::is_turn(&h.start))
    {
        let id = &hop.start.id;
        if hop_exists(&mut tx, id).await? {
            return Err(HopLogError::HopExists(id.clone()));
        }
        hops::insert_start(&mut tx, &hop.start).await?;
        if let Some(end) = &hop.end {
            if end.state == Some(HopState::InFlight) {
                if let Some(at) = end.request_ended_unix_ns {
                    let done = RequestDone {
                        id: id.clone(),
                        request_body: end.request_body.clone(),
                        request_ended_unix_ns: at,
                    };
                    hops::apply_request_done(&mut tx, &done).await?;
                }
            } else {
                hops::apply_end(&mut tx, end).await?;
                tracer_store::ws_frames::write(&mut tx, end).await?;
            }
        }
        set_hop_trace(&mut tx, id, &trace.id).await?;
    }
    // The agent's own events the log placed: stored again, placed again when read.
    let events = super::agent_entry::to_store(&log.agent_events);
    tracer_store::agent_events::insert_in(&mut tx, &events).await?;
    tx.commit().await?;
    Ok(trace.id)
}
