//! Which `tools/call` of a trace ran which tool call a model asked for, linked by
//! `tool_links` (whatever the host named the tool), and the words `show` puts on both ends.

use serde_json::Value;

use super::numbering::Direction;
use super::tool_links::{Asked, ToolNames, pick_run};
use crate::RecordedHop;
use tracer_wire::dialect::{HopReading, Reading};

/// The message numbers of each hop's request and answer (0 for none).
pub(crate) struct Numbers<'a> {
    pub requests: &'a [usize],
    pub answers: &'a [usize],
}

/// Per hop of a trace: on a model hop, the `tools/call` hops that ran its calls; on a
/// `tools/call` hop, the model hop that asked and the name it asked by.
#[derive(Debug, Default)]
pub(crate) struct TraceLinks {
    ran: Vec<Vec<usize>>,
    /// (the asking hop, whether it asked under another name than the one called, that name).
    asked_by: Vec<Option<(usize, Option<String>)>>,
}

impl TraceLinks {
    /// Links a trace's hops (`readings[i]` the reading of `hops[i]`).
    pub(crate) fn of(hops: &[RecordedHop], readings: &[HopReading]) -> Self {
        let count = hops.len().min(readings.len());
        let names = ToolNames::of_trace(hops, readings);
        let mut order: Vec<usize> = (0..count).collect();
        order.sort_by_key(|&i| hops[i].start.started_unix_ns);
        let null = Value::Null;
        // Every tools/call, in start order: (hop, tool name, arguments).
        let mut calls: Vec<(usize, &str, &Value)> = Vec::new();
        for &i in &order {
            if let Reading::Mcp(mcp) = &readings[i].request.reading
                && let Some(message) = mcp.request()
                && message.method.as_deref() == Some("tools/call")
            {
                let name = message.tool_name.as_deref().unwrap_or_default();
                calls.push((i, name, message.arguments.as_ref().unwrap_or(&null)));
            }
        }
        let mut links = TraceLinks {
            ran: vec![Vec::new(); count],
            asked_by: vec![None; count],
        };
        let mut used = vec![false; calls.len()];
        for &i in &order {
            let Some(Reading::ModelResponse(reply)) =
                readings[i].response.as_ref().map(|r| &r.reading)
            else {
                continue;
            };
            let asked_at = hops[i].start.started_unix_ns;
            for call in &reply.message.tool_calls {
                // A host runs a call once it is whole in the stream: after the asking began.
                let open: Vec<(&str, &Value, bool)> = calls
                    .iter()
                    .zip(&used)
                    .map(|(&(hop, name, arguments), &taken)| {
                        let before = hops[hop].start.started_unix_ns < asked_at;
                        (name, arguments, taken || before)
                    })
                    .collect();
                let asked = Asked {
                    name: &call.name,
                    arguments: &call.arguments,
                };
                if let Some(at) = pick_run(&names, asked, &open) {
                    used[at] = true;
                    let hop = calls[at].0;
                    links.ran[i].push(hop);
                    let renamed = (call.name != calls[at].1).then(|| call.name.clone());
                    links.asked_by[hop] = Some((i, renamed));
                }
            }
        }
        links
    }

    /// The numbers of the messages linked to this hop's request or answer.
    pub(crate) fn numbers(
        &self,
        hop: usize,
        direction: Direction,
        numbers: &Numbers,
    ) -> Vec<usize> {
        match direction {
            Direction::Response => self
                .ran
                .get(hop)
                .map(|ran| ran.iter().map(|&h| numbers.requests[h]).collect())
                .unwrap_or_default(),
            Direction::Request => self
                .asked_by
                .get(hop)
                .and_then(Option::as_ref)
                .map(|(h, _)| vec![numbers.answers[*h]])
                .unwrap_or_default(),
        }
    }

    /// ` · run in message 13` on an answer, ` · asked for in message 12 as mcp__notes__append`
    /// on a `tools/call`.
    pub(crate) fn words(
        &self,
        hop: usize,
        direction: Direction,
        numbers: &Numbers,
    ) -> Option<String> {
        let linked = self.numbers(hop, direction, numbers);
        let listed: Vec<String> = linked
            .iter()
            .filter(|n| **n > 0)
            .map(usize::to_string)
            .collect();
        if listed.is_empty() {
            return None;
        }
        match direction {
            Direction::Response => {
                let word = if listed.len() == 1 {
                    "message"
                } else {
                    "messages"
                };
                Some(format!(" · run in {word} {}", listed.join(", ")))
            }
            Direction::Request => {
                let (_, renamed) = self.asked_by.get(hop)?.as_ref()?;
                let by = renamed
                    .as_ref()
                    .map(|name| format!(" as {name}"))
                    .unwrap_or_default();
                Some(format!(" · asked for in message {}{by}", listed[0]))
            }
        }
    }
}
