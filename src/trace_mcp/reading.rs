//! The tools that read one trace: `get_trace` (its numbered messages) and `get_message` (one
//! message in full, its body cut at `max_bytes`).

use serde_json::{Value, json};

use super::args::Args;
use super::{TraceServer, answer, lookup_error};
use tracer_export::hop_log::{AgentEventEntry, Bodies as LogBodies, HopLog, TraceEntry};
use tracer_live::load::{Bodies, LoadedTrace, load_trace};
use tracer_trace::words::{human_duration, plural};
use tracer_trace::{Direction, ExplainedMessage, explain_trace};
use tracer_wire::mcp::CallToolResult;

/// The default cut of a body in `get_message`.
const DEFAULT_MAX_BYTES: u64 = 4000;
/// Stream chunks listed in `get_message`.
const CHUNKS_SHOWN: usize = 20;

/// One trace as loaded, what its hop log says of it, and its explained messages.
struct Loaded {
    trace: LoadedTrace,
    entry: TraceEntry,
    messages: Vec<ExplainedMessage>,
    /// The agent's own log events placed in the trace.
    agent: Vec<AgentEventEntry>,
}

impl TraceServer {
    async fn load(&self, id: &str) -> Result<Loaded, String> {
        let trace = (load_trace(&self.store, id, Bodies::Kept).await)
            .map_err(|error| lookup_error(id, error))?;
        let placed = (tracer_live::agent_account::for_trace(&self.store, &trace).await)
            .map_err(|error| lookup_error(id, error))?;
        let hop_ids: Vec<String> = trace.hops.iter().map(|h| h.start.id.clone()).collect();
        let log = HopLog::from_loaded(&trace, LogBodies::LengthsOnly)
            .with_agent_events(&placed, &hop_ids);
        let entry = log.trace().clone();
        let agent = (log.agent_events().iter())
            .filter(|e| e.signal == "log")
            .cloned()
            .collect();
        let messages = explain_trace(&trace.hops);
        Ok(Loaded {
            trace,
            entry,
            messages,
            agent,
        })
    }

    pub(super) async fn get_trace(&self, args: &Args<'_>) -> Result<CallToolResult, String> {
        let id = args.required_text("id")?;
        let detail = match args.text("detail")? {
            None | Some("summary") => false,
            Some("messages") => true,
            Some(other) => {
                return Err(format!(
                    "Argument detail must be summary or messages, not `{other}`"
                ));
            }
        };
        let loaded = self.load(id).await?;
        let trace = &loaded.entry;
        let start = loaded.messages.first().map_or(0, |m| m.at_unix_ns);
        let mut text = format!(
            "trace {} \"{}\"\n{}, {}, {}, {}, tools: {}\n",
            trace.id,
            tracer_wire::safe_text::one_line(
                &tracer_trace::trace_name(trace.title.as_deref(), Some(trace.kind.as_str()), &[])
                    .unwrap_or_else(|| "(untitled)".into()),
            ),
            plural(trace.hop_count, "hop"),
            plural(trace.message_count, "message"),
            trace.duration_ns.map_or("in flight".into(), human_duration),
            trace.status_words(),
            trace.tools_words(", ").unwrap_or_else(|| "none".to_owned()),
        );
        let mut messages = Vec::new();
        text.push_str(&agent_text(&loaded.agent, None));
        for message in &loaded.messages {
            let at = message.at_unix_ns - start;
            text.push_str(&format!(
                "{:>2} {} {}  (+{})\n",
                message.number,
                message.direction.arrow(),
                message.line().split_once(' ').map_or("", |(_, rest)| rest),
                human_duration(at)
            ));
            if detail && !message.explanation.is_empty() {
                text.push_str(&format!("     {}\n", message.explanation));
            }
            let mut entry = json!({
                "number": message.number,
                "direction": if message.direction == Direction::Request { "request" } else { "response" },
                "from": message.from,
                "to": message.to,
                "head": message.head,
                "summary": message.summary,
                "case": message.case.name(),
                "at_ms": at as f64 / 1e6,
                "route": loaded.trace.hops[message.hop_index].start.route,
            });
            if detail {
                entry["explanation"] = json!(message.explanation);
            }
            messages.push(entry);
            text.push_str(&agent_text(&loaded.agent, Some(message.number)));
        }
        text.push_str(&format!(
            "Next: get_message with trace {} and a number for that message's headers and body{}.",
            trace.id,
            if detail {
                ""
            } else {
                "; get_trace with detail=messages explains each message"
            }
        ));
        let agent_events: Vec<Value> = (loaded.agent.iter())
            .map(|e| {
                json!({"after_message": e.after_message, "name": e.name, "sentence": e.sentence,
                       "placed_by": e.rule, "cost_check": e.cost_check})
            })
            .collect();
        let mut structured = json!({ "trace": trace, "messages": messages });
        if !agent_events.is_empty() {
            structured["agent_events"] = json!(agent_events);
        }
        Ok(answer(text, structured))
    }

    pub(super) async fn get_message(&self, args: &Args<'_>) -> Result<CallToolResult, String> {
        let id = args.required_text("trace")?;
        let Some(number) = args.number("number", 1, 1_000_000)? else {
            return Err("Argument (number) is required by get_message".into());
        };
        let max_bytes = args
            .number("max_bytes", 100, 1_048_576)?
            .unwrap_or(DEFAULT_MAX_BYTES);
        let loaded = self.load(id).await?;
        let trace_id = loaded.trace.id().to_owned();
        let Some(message) = loaded.messages.iter().find(|m| m.number as u64 == number) else {
            return Err(format!(
                "Trace {} has messages 1 to {}; there is no message {number}",
                trace_id,
                loaded.messages.len()
            ));
        };
        let hop = &loaded.trace.hops[message.hop_index];
        let end = hop.end.clone().unwrap_or_default();
        let (headers, body) = match message.direction {
            Direction::Request => (&hop.start.request_headers, &end.request_body),
            Direction::Response => (&end.response_headers, &end.response_body),
        };
        let header_lines: Vec<(String, String)> = headers
            .iter()
            .map(|h| {
                let value = h.text().map_or_else(
                    || format!("({} bytes, not text)", h.value.len()),
                    str::to_owned,
                );
                (h.name.clone(), value)
            })
            .collect();
        // As it reads: its Content-Encoding undone, a body that is not text named.
        let readable = tracer_wire::content_encoding::readable(headers, body);
        let shown = match &readable.binary {
            Some(binary) => binary.clone(),
            None => body_for_reading(readable.bytes()),
        };
        let (cut_text, cut) = cut_at(&shown, max_bytes as usize);
        let mut text = format!(
            "message {} of trace {}: {} → {}  {}  ({})\n{}\n{}\n\nheaders:\n",
            message.number,
            trace_id,
            message.from,
            message.to,
            message.head,
            hop.start.route,
            message.summary,
            message.explanation,
        );
        for (name, value) in &header_lines {
            text.push_str(&format!("  {name}: {value}\n"));
        }
        if body.bytes.is_empty() {
            text.push_str("body: empty\n");
        } else {
            text.push_str(&format!("body ({} bytes recorded):\n", body.bytes.len()));
            if let Some(note) = readable.note() {
                text.push_str(&format!("({note})\n"));
            }
            text.push_str(&format!("{cut_text}\n"));
        }
        if cut {
            text.push_str(&format!(
                "(body cut at {max_bytes} of {} bytes; ask again with a larger max_bytes)\n",
                shown.len()
            ));
        }
        if body.truncated {
            text.push_str(&format!(
                "(the recorder kept {} of the body's {} bytes)\n",
                body.bytes.len(),
                body.total_len
            ));
        }
        let chunks = if message.direction == Direction::Response && end.chunks.len() > 1 {
            let first = end.chunks.first().map_or(0, |c| c.offset_ns);
            text.push_str(&format!(
                "streamed: {} chunks, the first after {}, the last after {}\n",
                end.chunks.len(),
                human_duration(first),
                human_duration(end.chunks.last().map_or(0, |c| c.offset_ns))
            ));
            end.chunks
                .iter()
                .take(CHUNKS_SHOWN)
                .map(|c| json!({"offset_ms": c.offset_ns as f64 / 1e6, "size": c.size}))
                .collect()
        } else {
            Vec::new()
        };
        let (facts, fields) = super::message_context::model_call_facts(message, &loaded.trace.hops);
        text.push_str(&facts);
        let previous = message.number.saturating_sub(1);
        let next = message.number + 1;
        text.push_str(&match (previous >= 1, next <= loaded.messages.len()) {
            (true, true) => format!("Next: get_message number {previous} or {next}."),
            (true, false) => format!(
                "This is the last message; get_message number {previous} is the one before."
            ),
            (false, true) => format!("Next: get_message number {next}."),
            (false, false) => String::new(),
        });
        let mut structured = json!({
            "trace": trace_id,
            "number": message.number,
            "direction": if message.direction == Direction::Request { "request" } else { "response" },
            "from": message.from,
            "to": message.to,
            "head": message.head,
            "route": hop.start.route,
            "summary": message.summary,
            "explanation": message.explanation,
            "headers": header_lines.iter().map(|(n, v)| json!({"name": n, "value": v})).collect::<Vec<Value>>(),
            "body": cut_text,
            "body_bytes": body.bytes.len(),
            "body_cut": cut,
            "body_truncated_in_record": body.truncated,
            "chunks": chunks,
            "chunk_count": end.chunks.len(),
        });
        if let Some(object) = structured.as_object_mut() {
            object.extend(
                fields
                    .into_iter()
                    .map(|(name, value)| (name.to_string(), value)),
            );
        }
        Ok(answer(text, structured))
    }
}

/// A body as text to read: JSON pretty-printed (key order kept), other UTF-8 as it is, anything
/// else named by its size.
fn body_for_reading(bytes: &[u8]) -> String {
    if let Ok(value) = serde_json::from_slice::<Value>(bytes) {
        return serde_json::to_string_pretty(&value).unwrap_or_default();
    }
    match std::str::from_utf8(bytes) {
        Ok(text) => text.to_owned(),
        Err(_) => format!("({} bytes that are not UTF-8 text)", bytes.len()),
    }
}

/// The first `max` bytes of a text (on a character boundary), and whether it was cut.
fn cut_at(text: &str, max: usize) -> (String, bool) {
    if text.len() <= max {
        return (text.to_owned(), false);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (text[..end].to_owned(), true)
}

/// The agent's own events that follow message `after` (None: before the first), one line each.
fn agent_text(events: &[AgentEventEntry], after: Option<usize>) -> String {
    (events.iter())
        .filter(|e| e.after_message == after)
        .map(|e| {
            format!(
                "   ⋯ the agent's own account: {}\n",
                tracer_wire::safe_text::one_line(&e.sentence)
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_are_pretty_and_cut_on_characters() {
        assert_eq!(
            body_for_reading(br#"{"b":1,"a":2}"#),
            "{\n  \"b\": 1,\n  \"a\": 2\n}"
        );
        assert_eq!(
            body_for_reading(&[0xff, 0xfe]),
            "(2 bytes that are not UTF-8 text)"
        );
        assert_eq!(cut_at("héllo", 2), ("h".to_owned(), true));
        assert_eq!(cut_at("hello", 10), ("hello".to_owned(), false));
    }
}
