//! The recorded model: answers model (or MCP) requests from a recorded hop log, so a trace can
//! stand in for a server that is not there (`tracer serve-replay`, `tracer demo`).
//!
//! A request is matched to a recording by method, path and what it carries (`matching`);
//! repeats of one request are served in recorded order; an unmatched request gets a JSON error
//! naming the closest recording and how it differs (`respond`).

pub mod matching;
mod respond;

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use hyper::service::service_fn;
use tokio::net::TcpListener;

/// How long open answers get to finish after a stop request.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

use matching::{RequestKey, Weight, differences, request_key};
pub use respond::{ReplayBody, Reply};
use tracer_export::hop_log::HopLog;
use tracer_serve::{Shutdown, serve_http};
use tracer_trace::RecordedHop;
use tracer_wire::hop::{Chunk, Header, Role, Transport};

/// The largest request body read (bigger requests are answered 413).
pub const MAX_REQUEST_BYTES: usize = 32 * 1024 * 1024;

/// How streamed answers are re-emitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Pace {
    /// The whole answer at once.
    #[default]
    Fast,
    /// Chunk by chunk, each at its recorded offset after the response head.
    Recorded,
}

/// The article's buy-milk trace (`sample-traces/buy-milk.json`), built into the binary so that
/// `tracer demo` can stand in for Ollama from any folder.
pub const BUY_MILK_HOP_LOG: &str = include_str!("../sample-traces/buy-milk.json");

#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error("reading the hop log: {0}")]
    HopLog(#[from] tracer_export::hop_log::HopLogError),
    #[error("the recording has no {role} hops to answer from (it has: {available})")]
    NothingToServe { role: Role, available: String },
}

/// One recorded exchange the server can answer with.
#[derive(Debug, Clone)]
pub struct Recording {
    /// The hop's number in its trace (the number of its request message).
    pub number: usize,
    pub method: String,
    pub path: String,
    pub key: RequestKey,
    /// The request as recorded.
    pub request: Vec<u8>,
    pub status: u16,
    pub headers: Vec<Header>,
    pub body: Vec<u8>,
    /// Response chunks: offset after the response head, and size.
    pub chunks: Vec<Chunk>,
}

impl Recording {
    /// A hop as a recording numbered `number`: None when it is not HTTP or got no response.
    pub fn of(hop: &RecordedHop, number: usize) -> Option<Recording> {
        let start = &hop.start;
        let end = hop.end.as_ref()?;
        let status = end.status?;
        if start.transport != Transport::Http {
            return None;
        }
        let head_offset = end
            .response_head_unix_ns
            .map_or(0, |at| at - start.started_unix_ns);
        Some(Recording {
            number,
            method: start.method.clone(),
            path: bare_path(&start.path).to_string(),
            key: request_key(
                start.role,
                &start.method,
                &start.path,
                &start.request_headers,
                &end.request_body.bytes,
            ),
            request: end.request_body.bytes.clone(),
            status,
            headers: end.response_headers.clone(),
            body: end.response_body.bytes.clone(),
            chunks: end
                .chunks
                .iter()
                .map(|c| Chunk {
                    offset_ns: (c.offset_ns - head_offset).max(0),
                    size: c.size,
                })
                .collect(),
        })
    }

    /// The recorded answer to `request_body` (its JSON-RPC id set to the request's).
    pub fn reply(&self, trace_id: &str, request_body: &[u8]) -> Reply {
        respond::recorded(trace_id, self, MatchKind::Exact, request_body)
    }
}

/// How a request was matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchKind {
    Exact,
    /// Everything matched but the contents of tool results (the tool's world differs).
    ToolResultsDiffer,
}

/// A recorded server, ready to answer.
#[derive(Debug)]
pub struct ReplayServer {
    role: Role,
    trace_id: String,
    recordings: Vec<Recording>,
    /// How many times each group of identical recordings (named by its first index) was served.
    served: Mutex<HashMap<usize, usize>>,
    pace: Pace,
}

/// A path without its query and trailing slash.
pub fn bare_path(path: &str) -> &str {
    let path = path.split('?').next().unwrap_or(path);
    match path.trim_end_matches('/') {
        "" => "/",
        trimmed => trimmed,
    }
}

impl ReplayServer {
    /// A server answering as the `role` hops of a hop log (model or mcp).
    pub fn from_hop_log(log: &HopLog, role: Role) -> Result<ReplayServer, ReplayError> {
        Self::from_hops(log.trace_id(), &log.recorded_hops(), role)
    }

    /// A server answering as the `role` HTTP hops among `hops` that got a response.
    pub fn from_hops(
        trace_id: &str,
        hops: &[RecordedHop],
        role: Role,
    ) -> Result<ReplayServer, ReplayError> {
        let messages = tracer_trace::explain_trace(hops);
        let mut ordered: Vec<(usize, &RecordedHop)> = hops.iter().enumerate().collect();
        ordered.sort_by_key(|(_, hop)| hop.start.started_unix_ns);
        let mut recordings = Vec::new();
        for (index, hop) in ordered {
            if hop.start.role != role {
                continue;
            }
            let number = messages
                .iter()
                .find(|m| m.hop_index == index)
                .map_or(0, |m| m.hop_number);
            recordings.extend(Recording::of(hop, number));
        }
        if recordings.is_empty() {
            let mut roles: Vec<&str> = hops.iter().map(|h| h.start.role.as_str()).collect();
            roles.sort_unstable();
            roles.dedup();
            return Err(ReplayError::NothingToServe {
                role,
                available: if roles.is_empty() {
                    "no hops".into()
                } else {
                    roles.join(", ")
                },
            });
        }
        Ok(ReplayServer {
            role,
            trace_id: trace_id.to_string(),
            recordings,
            served: Mutex::new(HashMap::new()),
            pace: Pace::Fast,
        })
    }

    /// The recorded model of the built-in buy-milk trace.
    pub fn buy_milk_model() -> Result<ReplayServer, ReplayError> {
        let log = HopLog::from_json(BUY_MILK_HOP_LOG.as_bytes())?;
        Self::from_hop_log(&log, Role::Model)
    }

    pub fn with_pace(mut self, pace: Pace) -> Self {
        self.pace = pace;
        self
    }

    pub fn role(&self) -> Role {
        self.role
    }

    pub fn recordings(&self) -> &[Recording] {
        &self.recordings
    }

    /// The answer to one request (pure apart from counting repeats).
    pub fn answer(&self, method: &str, path: &str, headers: &[Header], body: &[u8]) -> Reply {
        let path = bare_path(path);
        let same_route: Vec<usize> = (0..self.recordings.len())
            .filter(|&i| {
                self.recordings[i].method.eq_ignore_ascii_case(method)
                    && self.recordings[i].path == path
            })
            .collect();
        if same_route.is_empty() {
            return respond::no_route(self, method, path);
        }
        let key = request_key(self.role, method, path, headers, body);
        let diffs: Vec<(usize, Vec<matching::Difference>)> = same_route
            .iter()
            .map(|&i| (i, differences(&self.recordings[i].key, &key)))
            .collect();
        let exact: Vec<usize> = diffs
            .iter()
            .filter(|(_, d)| d.is_empty())
            .map(|(i, _)| *i)
            .collect();
        if !exact.is_empty() {
            return self.serve_one(&exact, MatchKind::Exact, body);
        }
        let loose: Vec<usize> = diffs
            .iter()
            .filter(|(_, d)| d.iter().all(|d| d.weight == Weight::ToolResult))
            .map(|(i, _)| *i)
            .collect();
        if !loose.is_empty() {
            return self.serve_one(&loose, MatchKind::ToolResultsDiffer, body);
        }
        let closest = diffs
            .iter()
            .min_by_key(|(i, d)| {
                let heavy = d.iter().filter(|d| d.weight == Weight::Other).count();
                (heavy, d.len(), *i)
            })
            .map(|(i, d)| (*i, d.clone()));
        respond::no_match(self, method, path, closest)
    }

    /// Serves the next of a group of matching recordings, in recorded order, cycling.
    fn serve_one(&self, group: &[usize], kind: MatchKind, request_body: &[u8]) -> Reply {
        let turn = match self.served.lock() {
            Ok(mut served) => {
                let count = served.entry(group[0]).or_insert(0);
                let turn = *count;
                *count += 1;
                turn
            }
            Err(_) => 0,
        };
        let index = group[turn % group.len()];
        respond::recorded(&self.trace_id, &self.recordings[index], kind, request_body)
    }

    /// Serves on `listener` until `shutdown` asks, then lets open answers finish (5 s).
    pub async fn serve(
        self: Arc<Self>,
        listener: TcpListener,
        shutdown: impl Into<Shutdown>,
    ) -> std::io::Result<()> {
        let make_service = move |_peer| {
            let server = Arc::clone(&self);
            service_fn(move |request| {
                let server = Arc::clone(&server);
                async move { Ok::<_, Infallible>(server.handle(request).await) }
            })
        };
        serve_http(listener, make_service, shutdown, SHUTDOWN_GRACE).await;
        Ok(())
    }

    async fn handle(&self, request: http::Request<Incoming>) -> http::Response<ReplayBody> {
        let (parts, body) = request.into_parts();
        let path = parts
            .uri
            .path_and_query()
            .map_or("/", |p| p.as_str())
            .to_string();
        let headers: Vec<Header> = parts
            .headers
            .iter()
            .map(|(name, value)| Header::new(name.as_str(), value.as_bytes()))
            .collect();
        let bytes: Bytes = match Limited::new(body, MAX_REQUEST_BYTES).collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(error) => return respond::bad_body(&error.to_string()).into_response(Pace::Fast),
        };
        let reply = self.answer(parts.method.as_str(), &path, &headers, &bytes);
        tracing::info!(method = %parts.method, path, status = reply.status, "replayed");
        reply.into_response(self.pace)
    }
}
