//! Each model call of a trace with the previous call of its conversation (`previous_of`), in
//! the order they were sent: what the cache report and the context shares compare against.

use super::request_anatomy::previous_of;
use crate::RecordedHop;
use serde_json::Value;

use tracer_wire::content_encoding::readable;
use tracer_wire::dialect::{HopReading, ModelRequest, Reading, Usage};

/// A hop's request body as JSON, its coding undone.
pub fn request_json(hop: &RecordedHop) -> Option<Value> {
    let end = hop.end.as_ref()?;
    let body = readable(&hop.start.request_headers, &end.request_body);
    serde_json::from_slice(&body.body.bytes).ok()
}

/// One model call: its hop's index, request and the usage its answer reported.
pub(crate) struct ModelCall<'a> {
    pub index: usize,
    pub request: &'a ModelRequest,
    pub usage: Option<&'a Usage>,
    /// The index (into the pairs) of the previous call of the same conversation.
    pub previous: Option<usize>,
}

/// The model calls of `hops` (read into `readings`, same order), in the order sent, each with
/// its previous call; side requests (routing, titles) are nobody's previous call.
pub(crate) fn model_calls<'a>(
    hops: &[RecordedHop],
    readings: &'a [HopReading],
) -> Vec<ModelCall<'a>> {
    let mut order: Vec<usize> = (0..hops.len()).collect();
    order.sort_by_key(|&i| hops[i].start.started_unix_ns);
    let mut calls: Vec<ModelCall<'a>> = Vec::new();
    let mut earlier: Vec<(usize, &'a ModelRequest)> = Vec::new();
    for index in order {
        let Reading::ModelRequest(request) = &readings[index].request.reading else {
            continue;
        };
        let usage = match readings[index].response.as_ref().map(|r| &r.reading) {
            Some(Reading::ModelResponse(reply)) => Some(&reply.usage),
            _ => None,
        };
        let requests: Vec<&ModelRequest> = earlier.iter().map(|(_, r)| *r).collect();
        let previous = previous_of(request, &requests).and_then(|p| {
            earlier
                .iter()
                .find(|(_, r)| std::ptr::eq(*r, p))
                .map(|(call, _)| *call)
        });
        if !request.is_side_request() {
            earlier.push((calls.len(), request));
        }
        calls.push(ModelCall {
            index,
            request,
            usage,
            previous,
        });
    }
    calls
}
