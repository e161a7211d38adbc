//! Every model request of a trace, measured in its trace's light (tool origins from the trace's
//! `tools/list` answers, the previous request of the same conversation) and with the user's own
//! words: what `tracer show` prints under a request and the handout quotes.

use super::request_anatomy::{RequestAnatomy, user_words};
use super::side_calls::SideCall;
use crate::RecordedHop;
use crate::read::explain_context::ExplainContext;
use tracer_wire::dialect::{HopReading, Reading};

/// One model request of a trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestView {
    pub hop_id: String,
    /// The index of the hop in the slice given to [`request_views`].
    pub hop_index: usize,
    pub anatomy: RequestAnatomy,
    /// The user's words in it (the latest user message, without the host's tagged blocks).
    pub user_words: Option<String>,
    /// The side call it is, when it is one (a title, routing…), outside the conversation.
    pub side_call: Option<SideCall>,
}

/// The model requests of one trace's hops (any order), in the order they were sent.
pub fn request_views(hops: &[RecordedHop]) -> Vec<RequestView> {
    let readings: Vec<HopReading> = hops.iter().map(RecordedHop::reading).collect();
    let context = ExplainContext::of_trace(hops, &readings);
    let mut order: Vec<usize> = (0..hops.len()).collect();
    order.sort_by_key(|&i| hops[i].start.started_unix_ns);
    let mut views = Vec::new();
    for index in order {
        let Reading::ModelRequest(request) = &readings[index].request.reading else {
            continue;
        };
        let previous = context.conversations.previous(index).and_then(|at| {
            match &readings[at].request.reading {
                Reading::ModelRequest(request) => Some(request),
                _ => None,
            }
        });
        views.push(RequestView {
            hop_id: hops[index].start.id.clone(),
            hop_index: index,
            anatomy: RequestAnatomy::of(request, previous, &context.origins),
            user_words: user_words(request),
            side_call: context.conversations.side_call(index),
        });
    }
    views
}
