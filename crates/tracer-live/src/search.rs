//! `tracer search`, the TUI's `body:` and `tracer mcp`'s `search`: the one search over the
//! traces' titles and their hops' bodies (decoded, streams read as text), answered as traces with
//! the numbers of the messages that hold the text (as `tracer show` numbers them).
//!
//! A thin driver over the store (as `correlate.rs` is). A conversation re-sends its history on
//! every turn, so the bodies of a long session are mostly the same chunks again: each stored chunk
//! is matched once, and a chunked body matches when one of its chunks does or the ends of two
//! neighbours do. Bodies with a `Content-Encoding`, streamed answers and old pieces are read
//! whole, one at a time. Rows are streamed; what is kept is one excerpt per matching body and a
//! few bytes per chunk.

use std::collections::{HashMap, HashSet};

use futures_util::TryStreamExt;
use serde::Serialize;

use tracer_store::text_search::{KeptBody, SearchedHop};
use tracer_store::{Result, Store};
use tracer_trace::read::search_text::{SearchText, is_stream};
use tracer_trace::read::ws_turns::{is_turn, with_turns};
use tracer_trace::{Direction, account::summary::trace_name, number_trace};
use tracer_wire::content_encoding::{Encoding, readable};
use tracer_wire::hop::{BodyCapture, BodySide, Header, Role, header_text};

/// One body that holds the searched text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HopMatch {
    pub hop_id: String,
    /// None while the hop is not grouped into a trace yet.
    pub trace_id: Option<String>,
    pub side: BodySide,
    pub(crate) excerpt: String,
    /// The hop's place, newest first.
    order: usize,
}

/// One message of a trace that holds the text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MessageMatch {
    pub number: usize,
    /// `request` or `response`.
    pub direction: &'static str,
    pub excerpt: String,
}

/// One trace that holds the text: in its title, in messages, or both.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TraceMatch {
    pub id: String,
    pub title: String,
    pub started_unix_ns: i64,
    pub in_title: bool,
    pub messages: Vec<MessageMatch>,
}

/// What a search found, newest trace first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SearchReport {
    pub text: String,
    pub traces: Vec<TraceMatch>,
    /// Traces that match beyond those listed.
    pub more: usize,
    /// Matching hops not grouped into a trace yet.
    pub ungrouped_hops: usize,
}

/// Searches every trace; lists the newest `limit` with their messages numbered.
pub async fn search(store: &Store, text: &str, limit: usize) -> Result<SearchReport> {
    let needle = SearchText::new(text);
    let hops = matching_hops(store, text).await?;
    let ungrouped_hops = hops.iter().filter(|h| h.trace_id.is_none()).count();
    let mut by_trace: HashMap<String, Vec<HopMatch>> = HashMap::new();
    for hop in hops {
        if let Some(trace) = hop.trace_id.clone() {
            by_trace.entry(trace).or_default().push(hop);
        }
    }
    let mut traces = Vec::new();
    let mut more = 0;
    for row in store.traces().await? {
        let in_title = row.title.as_deref().is_some_and(|t| needle.in_text(t));
        let found = by_trace.remove(&row.id);
        if !in_title && found.is_none() {
            continue;
        }
        if traces.len() == limit {
            more += 1;
            continue;
        }
        let messages = match found {
            Some(found) => numbered(store, &row.id, &found).await?,
            None => Vec::new(),
        };
        traces.push(TraceMatch {
            title: trace_name(row.title.as_deref(), Some(&row.kind), &[])
                .unwrap_or_else(|| "(untitled)".into()),
            id: row.id,
            started_unix_ns: row.started_unix_ns,
            in_title,
            messages,
        });
    }
    Ok(SearchReport {
        text: text.trim().to_string(),
        traces,
        more,
        ungrouped_hops,
    })
}

/// The ids of every trace whose title or bodies hold the text (the TUI's `body:`).
pub async fn matching_traces(store: &Store, text: &str) -> Result<HashSet<String>> {
    let needle = SearchText::new(text);
    let mut ids: HashSet<String> = matching_hops(store, text)
        .await?
        .into_iter()
        .filter_map(|hop| hop.trace_id)
        .collect();
    ids.extend(
        store
            .traces()
            .await?
            .into_iter()
            .filter(|row| row.title.as_deref().is_some_and(|t| needle.in_text(t)))
            .map(|row| row.id),
    );
    Ok(ids)
}

/// The messages of a trace that hold the text, as the trace's numbering has them.
async fn numbered(store: &Store, trace_id: &str, found: &[HopMatch]) -> Result<Vec<MessageMatch>> {
    // Numbering reads times, model answers (when a tool call was complete) and MCP bodies;
    // never a model request's body, the bulk of a long conversation: those are not read.
    let model = Role::Model.as_str();
    let mut hops = Vec::new();
    store
        .each_trace_hop_skipping(
            trace_id,
            |_, role| role == model,
            |stored| hops.push(crate::load::recorded(stored)),
        )
        .await?;
    let hops = with_turns(hops);
    let numbers = number_trace(&hops);
    let mut out: Vec<MessageMatch> = Vec::new();
    for (number, index, direction, part) in numbers {
        let side = match direction {
            Direction::Request => BodySide::Request,
            Direction::Response => BodySide::Response,
        };
        let Some(hop) = hops.get(index) else {
            continue;
        };
        let Some(hit) = found
            .iter()
            .find(|h| h.hop_id == hop.start.id && h.side == side)
        else {
            continue;
        };
        // An SSE answer's other messages hold the same match once.
        if part.is_some() && out.iter().any(|m| m.excerpt == hit.excerpt) {
            continue;
        }
        out.push(MessageMatch {
            number,
            direction: match side {
                BodySide::Request => "request",
                BodySide::Response => "response",
            },
            excerpt: hit.excerpt.clone(),
        });
    }
    Ok(out)
}

/// A chunked body waiting for its chunks' ids: where it is, and the first bytes of its tail.
struct Waiting {
    trace_id: Option<String>,
    order: usize,
    tail_head: Vec<u8>,
}

/// Every hop body that holds the text, newest hop first.
pub async fn matching_hops(store: &Store, text: &str) -> Result<Vec<HopMatch>> {
    let needle = SearchText::new(text);
    if needle.is_empty() {
        return Ok(Vec::new());
    }
    let edge = needle.edge_len();
    // Each stored chunk, matched once; its two ends kept for matches across neighbours.
    let mut chunk_hits: HashMap<i64, String> = HashMap::new();
    let mut ends: HashMap<i64, (Vec<u8>, Vec<u8>)> = HashMap::new();
    let mut chunks = store.stored_chunks();
    while let Some((id, bytes)) = chunks.try_next().await? {
        if let Some(excerpt) = needle.find(&bytes) {
            chunk_hits.insert(id, excerpt);
        }
        ends.insert(
            id,
            (head(&bytes, edge).to_vec(), tail(&bytes, edge).to_vec()),
        );
    }
    drop(chunks);

    let mut found = Vec::new();
    let mut waiting: HashMap<(String, u8), Waiting> = HashMap::new();
    let mut hops = store.searched_hops();
    let mut order = 0;
    while let Some(hop) = hops.try_next().await? {
        let Some(hop) = hop else { continue };
        order += 1;
        if hop.websocket {
            found.extend(websocket_matches(store, &needle, &hop, order).await?);
            continue;
        }
        let sides = [BodySide::Request, BodySide::Response];
        let whole_sides =
            sides.map(|side| read_whole(&hop, side) || hop.body(side) == &KeptBody::Pieces);
        let fetch = sides.map(|side| {
            let at = usize::from(side.code());
            whole_sides[at] && !matches!(hop.body(side), KeptBody::Inline(_))
        });
        let fetched = if fetch.contains(&true) {
            store.whole_bodies(&hop.id, fetch[0], fetch[1]).await?
        } else {
            Default::default()
        };
        for side in sides {
            let at = usize::from(side.code());
            let hit = |excerpt: String| HopMatch {
                hop_id: hop.id.clone(),
                trace_id: hop.trace_id.clone(),
                side,
                excerpt,
                order,
            };
            if whole_sides[at] {
                let bytes = match (hop.body(side), side) {
                    (KeptBody::Inline(bytes), _) => bytes,
                    (_, BodySide::Request) => &fetched.0,
                    (_, BodySide::Response) => &fetched.1,
                };
                found.extend(match_whole(&needle, hop.headers(side), bytes).map(hit));
                continue;
            }
            match hop.body(side) {
                KeptBody::Inline(bytes) => found.extend(needle.find(bytes).map(hit)),
                KeptBody::Chunked { tail } => match needle.find(tail) {
                    Some(excerpt) => found.push(hit(excerpt)),
                    None => {
                        waiting.insert(
                            (hop.id.clone(), side.code()),
                            Waiting {
                                trace_id: hop.trace_id.clone(),
                                order,
                                tail_head: head(tail, edge).to_vec(),
                            },
                        );
                    }
                },
                KeptBody::Pieces => {}
            }
        }
    }
    drop(hops);

    // The chunked bodies, body by body, their chunks in order.
    let mut pairs: HashMap<(i64, i64), Option<String>> = HashMap::new();
    let mut lists = store.chunk_lists();
    while let Some(list) = lists.try_next().await? {
        let Some(body) = waiting.remove(&(list.hop_id.clone(), list.side.code())) else {
            continue;
        };
        let mut hit = None;
        let mut last: Option<i64> = None;
        for &id in &list.chunk_ids {
            hit = chunk_hits.get(&id).cloned().or_else(|| {
                let previous = last?;
                pairs
                    .entry((previous, id))
                    .or_insert_with(|| {
                        let (_, end) = ends.get(&previous)?;
                        let (start, _) = ends.get(&id)?;
                        needle.find(&[end.as_slice(), start.as_slice()].concat())
                    })
                    .clone()
            });
            if hit.is_some() {
                break;
            }
            last = Some(id);
        }
        // The last chunk's end joined to the row's tail.
        let hit = hit.or_else(|| {
            let (_, end) = ends.get(&last?)?;
            needle.find(&[end.as_slice(), &body.tail_head].concat())
        });
        if let Some(excerpt) = hit {
            found.push(HopMatch {
                hop_id: list.hop_id,
                trace_id: body.trace_id,
                side: list.side,
                excerpt,
                order: body.order,
            });
        }
    }
    drop(lists);
    found.sort_by_key(|hit| (hit.order, hit.side.code()));
    Ok(found)
}

/// A WebSocket hop's Responses turns (Codex), each read as the model hop it is numbered as
/// (`ws_turns`): its `response.create` and the events answering it, as text.
async fn websocket_matches(
    store: &Store,
    needle: &SearchText,
    hop: &SearchedHop,
    order: usize,
) -> Result<Vec<HopMatch>> {
    let socket = crate::load::recorded(store.hop(&hop.id).await?);
    let mut found = Vec::new();
    for turn in with_turns(vec![socket])
        .iter()
        .filter(|t| is_turn(&t.start))
    {
        let Some(end) = turn.end.as_ref() else {
            continue;
        };
        let sides = [
            (
                BodySide::Request,
                &turn.start.request_headers,
                &end.request_body,
            ),
            (
                BodySide::Response,
                &end.response_headers,
                &end.response_body,
            ),
        ];
        for (side, headers, body) in sides {
            let excerpt = match_whole(needle, headers, &body.bytes)
                .or_else(|| needle.find_streamed(&body.bytes));
            found.extend(excerpt.map(|excerpt| HopMatch {
                hop_id: turn.start.id.clone(),
                trace_id: hop.trace_id.clone(),
                side,
                excerpt,
                order,
            }));
        }
    }
    Ok(found)
}

/// Whether a side is read whole: its `Content-Encoding` must be undone, or it is a stream whose
/// text its events spell together.
fn read_whole(hop: &SearchedHop, side: BodySide) -> bool {
    let headers = hop.headers(side);
    Encoding::of(headers) != Encoding::Identity
        || (side == BodySide::Response && is_stream(header_text(headers, "content-type")))
}

/// A whole body matched: decoded first, a stream also by the text its events spell.
fn match_whole(needle: &SearchText, headers: &[Header], bytes: &[u8]) -> Option<String> {
    let capture = BodyCapture::whole(bytes.to_vec());
    let body = readable(headers, &capture);
    if body.binary.is_some() {
        return None;
    }
    needle.find(body.bytes()).or_else(|| {
        is_stream(header_text(headers, "content-type"))
            .then(|| needle.find_streamed(body.bytes()))
            .flatten()
    })
}

fn head(bytes: &[u8], len: usize) -> &[u8] {
    &bytes[..bytes.len().min(len)]
}

fn tail(bytes: &[u8], len: usize) -> &[u8] {
    &bytes[bytes.len().saturating_sub(len)..]
}
