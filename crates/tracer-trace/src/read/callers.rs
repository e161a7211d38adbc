//! Who is on each end of a trace's hops, by route: the upstream is the hop's route; the caller is
//! `you` on an agent route, else the route of the hop it was made for (the host's request in
//! flight when it started, or the REST tool call an MCP request ran), shared by the hops of one
//! MCP session, else `agent` (a caller tracer does not stand in front of).

use super::transport_moves::is_standing_stream;
use crate::RecordedHop;
use tracer_wire::dialect::{Dialect, HopReading};
use tracer_wire::hop::{Role, header_text};

/// The caller and upstream of one hop, as lane names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Parties {
    pub caller: String,
    pub upstream: String,
}

fn end_ns(hop: &RecordedHop) -> i64 {
    hop.end
        .as_ref()
        .and_then(|e| e.response_ended_unix_ns.or(e.response_head_unix_ns))
        .unwrap_or(i64::MAX)
}

/// The name a hop's upstream is drawn by: its route (its role when it has none).
pub(crate) fn upstream_name(hop: &RecordedHop) -> String {
    if hop.start.route.is_empty() {
        hop.start.role.as_str().to_string()
    } else {
        hop.start.route.clone()
    }
}

/// Whether hop `outer` can be the one `inner` was made for: a request to a host (agent route)
/// makes any call; a REST tool call makes MCP calls.
fn calls_for(outer: &RecordedHop, outer_dialect: Dialect, inner_dialect: Dialect) -> bool {
    if is_standing_stream(&outer.start) {
        return false;
    }
    outer.start.role == Role::Agent
        || (outer_dialect == Dialect::OpenApiTools
            && outer.start.method.eq_ignore_ascii_case("POST")
            && inner_dialect == Dialect::Mcp)
}

/// The MCP session a hop belongs to: the id it sends, or the one its answer gave.
fn session_of(hop: &RecordedHop) -> Option<&str> {
    header_text(&hop.start.request_headers, "mcp-session-id").or_else(|| {
        hop.end
            .as_ref()
            .and_then(|e| header_text(&e.response_headers, "mcp-session-id"))
    })
}

/// Both ends of every hop of a trace (`readings[i]` the reading of `hops[i]`).
pub(crate) fn parties_of(hops: &[RecordedHop], readings: &[HopReading]) -> Vec<Parties> {
    let count = hops.len().min(readings.len());
    let mut callers: Vec<Option<String>> = vec![None; count];
    for (i, hop) in hops.iter().enumerate().take(count) {
        if hop.start.role == Role::Agent {
            callers[i] = Some("you".to_string());
            continue;
        }
        let at = hop.start.started_unix_ns;
        let outer = (0..count)
            .filter(|&o| o != i && hops[o].start.route != hop.start.route)
            .filter(|&o| hops[o].start.started_unix_ns <= at && end_ns(&hops[o]) >= at)
            .filter(|&o| calls_for(&hops[o], readings[o].dialect, readings[i].dialect))
            .max_by_key(|&o| hops[o].start.started_unix_ns);
        callers[i] = outer.map(|o| upstream_name(&hops[o]));
    }
    // The hops of one MCP session have one caller: the session's initialize, its standing
    // stream and its calls all come from the client that opened it.
    for i in 0..count {
        if callers[i].is_some() || hops[i].start.role == Role::Agent {
            continue;
        }
        let Some(session) = session_of(&hops[i]) else {
            continue;
        };
        callers[i] = (0..count)
            .filter(|&j| session_of(&hops[j]) == Some(session))
            .find_map(|j| callers[j].clone());
    }
    hops.iter()
        .take(count)
        .zip(callers)
        .map(|(hop, caller)| Parties {
            caller: caller.unwrap_or_else(|| hop.start.role.caller().to_string()),
            upstream: upstream_name(hop),
        })
        .collect()
}
