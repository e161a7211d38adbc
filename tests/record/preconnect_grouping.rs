//! Claude Code's `HEAD /` preconnect opens no untitled trace of its own. From the recorded run
//! (tests/fixtures/agents/sessions/claude-code-2-runs.json, its first run, without its
//! `x-claude-code-session-id` headers, as a host that names no session sends it): the same
//! `HEAD` again, 90 s after the run's request ended (past the grouping window), as a connection
//! is warmed before the next prompt. It stays in the run's session, in a setup trace
//! ("(start-up discovery)"), not a request trace without a title; and a `HEAD` within the window
//! joins the trace beside it, as start-up calls do.

use tracer_trace::account::summary::trace_name;
use tracer_trace::group::group;
use tracer_trace::{GroupOptions, RecordedHop, TraceInput};

use crate::session_fixtures::load;

const LATER_NS: i64 = 90_000_000_000;

fn first_run() -> Vec<RecordedHop> {
    let hops = load("claude-code-2-runs.json");
    let first = hops[0].start.started_unix_ns;
    hops.into_iter()
        .filter(|h| h.start.started_unix_ns < first + 1_000_000_000)
        .map(|h| {
            let mut start = h.start;
            start
                .request_headers
                .retain(|header| header.name != "x-claude-code-session-id");
            RecordedHop {
                read: Default::default(),
                start,
                end: Some(h.end),
            }
        })
        .collect()
}

/// The run's `HEAD`, again `after_ns` after the run's last hop ended, on its model connection.
fn head_again(run: &[RecordedHop], after_ns: i64) -> RecordedHop {
    let mut head = run
        .iter()
        .find(|h| h.start.method == "HEAD")
        .unwrap()
        .clone();
    let model = run
        .iter()
        .rfind(|h| h.start.method == "POST" && h.start.route == head.start.route)
        .unwrap();
    let ended = run
        .iter()
        .filter_map(|h| h.end.as_ref()?.response_ended_unix_ns)
        .max()
        .unwrap();
    let shift = ended + after_ns - head.start.started_unix_ns;
    head.start.id = "feedfacefeedfacefeedfacefeedface".into();
    head.start.peer = model.start.peer.clone();
    head.start.started_unix_ns += shift;
    let end = head.end.as_mut().unwrap();
    end.id = head.start.id.clone();
    for at in [
        &mut end.request_ended_unix_ns,
        &mut end.response_head_unix_ns,
        &mut end.response_first_byte_unix_ns,
        &mut end.response_ended_unix_ns,
    ] {
        *at = at.map(|t| t + shift);
    }
    head
}

#[test]
fn a_preconnect_opens_no_untitled_trace_of_its_own() {
    let mut run = first_run();
    run.push(head_again(&run, LATER_NS));
    let inputs: Vec<TraceInput> = run.iter().map(RecordedHop::trace_input).collect();
    let grouping = group(&inputs, GroupOptions::default());
    let placed = grouping
        .assignments
        .iter()
        .find(|a| a.hop_id == "feedfacefeedfacefeedfacefeedface")
        .unwrap();
    let trace = grouping
        .traces
        .iter()
        .find(|t| t.id == placed.trace_id)
        .unwrap();
    assert_eq!(
        grouping.sessions.len(),
        1,
        "the run's session: {:#?}",
        grouping.sessions
    );
    let kind = trace.kind.as_str();
    assert_eq!(
        trace_name(trace.title.as_deref(), Some(kind), &[]).as_deref(),
        Some("(start-up discovery)"),
        "{trace:#?}"
    );
    for other in grouping
        .traces
        .iter()
        .filter(|t| t.kind.as_str() == "request")
    {
        assert!(
            other.title.is_some(),
            "an untitled request trace: {other:#?}"
        );
    }
}

#[test]
fn a_preconnect_within_the_window_joins_the_trace_beside_it() {
    let mut run = first_run();
    run.push(head_again(&run, 2_000_000_000));
    let inputs: Vec<TraceInput> = run.iter().map(RecordedHop::trace_input).collect();
    let grouping = group(&inputs, GroupOptions::default());
    let traces = |kind: &str| {
        grouping
            .traces
            .iter()
            .filter(|t| t.kind.as_str() == kind)
            .count()
    };
    assert_eq!(
        (traces("setup"), traces("request")),
        (1, 1),
        "{:#?}",
        grouping.traces
    );
    let request = grouping
        .traces
        .iter()
        .find(|t| t.kind.as_str() == "request")
        .unwrap();
    assert!(
        request
            .hop_ids
            .iter()
            .any(|id| id == "feedfacefeedfacefeedfacefeedface")
    );
}
