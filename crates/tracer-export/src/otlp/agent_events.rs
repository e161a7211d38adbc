//! The agent's own log events as events on the spans of the hops they follow (`agent.<name>`),
//! with the sentence, the rule that placed them and the agent's own scalar attributes; those
//! before the first hop go on the trace's first span.

use serde_json::Value;

use super::model::{Attribute, Span, SpanEvent};
use crate::hop_log::AgentEventEntry;

/// Attributes of the agent's own put on one event at most (backends keep ~128 a span).
const MAX_ATTRIBUTES: usize = 48;
/// Characters of one of the agent's string attributes put on the event.
const TEXT_SHOWN: usize = 1024;

pub(crate) fn add(spans: &mut [Span], events: &[AgentEventEntry]) {
    for event in events.iter().filter(|e| e.signal == "log") {
        let on = match &event.after_hop_id {
            Some(hop) => spans.iter().position(|s| s.hop_id.as_deref() == Some(hop)),
            None => (!spans.is_empty()).then_some(0),
        };
        if let Some(index) = on {
            spans[index].events.push(span_event(event));
        }
    }
}

fn span_event(event: &AgentEventEntry) -> SpanEvent {
    let mut attributes = vec![
        Attribute::text("tracer.agent.event", event.name.clone()),
        Attribute::text("tracer.agent.sentence", event.sentence.clone()),
        Attribute::text("tracer.agent.placed_by", event.rule.clone()),
    ];
    if let Some(check) = &event.cost_check {
        attributes.push(Attribute::text("tracer.agent.cost_check", check.clone()));
    }
    for (key, value) in event.attributes.iter().take(MAX_ATTRIBUTES) {
        let key = format!("agent.{key}");
        match value {
            Value::String(s) => attributes.push(Attribute::text(
                &key,
                s.chars().take(TEXT_SHOWN).collect::<String>(),
            )),
            Value::Bool(b) => attributes.push(Attribute::boolean(&key, *b)),
            Value::Number(n) => match n.as_i64() {
                Some(i) => attributes.push(Attribute::int(&key, i)),
                None => attributes.push(Attribute::double(&key, n.as_f64().unwrap_or(0.0))),
            },
            _ => {}
        }
    }
    SpanEvent {
        at_unix_ns: event.at_unix_ns,
        name: format!("agent.{}", event.name),
        attributes,
    }
}
