//! What `get_message` adds to a model call: under a request, what its context is made of; under
//! an answer, what the call cost and what the prompt cache did.

use serde_json::{Value, json};

use tracer_trace::account::cache_verdict::cache_reports;
use tracer_trace::account::context_shares::context_shares;
use tracer_trace::{Direction, ExplainedMessage, RecordedHop};

/// The lines for the text and the fields for the structured answer (empty for other messages).
pub(super) fn model_call_facts(
    message: &ExplainedMessage,
    hops: &[RecordedHop],
) -> (String, Vec<(&'static str, Value)>) {
    let mut text = String::new();
    let mut fields = Vec::new();
    match message.direction {
        Direction::Request => {
            if let Some(shares) = context_shares(hops)
                .into_iter()
                .find(|s| s.hop_id == message.hop_id)
            {
                for line in shares.lines() {
                    text.push_str(&format!("{line}\n"));
                }
                let parts: Vec<Value> = shares
                    .parts
                    .iter()
                    .map(|p| json!({"part": p.label, "bytes": p.bytes, "approx_tokens": shares.share(p.bytes)}))
                    .collect();
                fields.push((
                    "context",
                    json!({
                        "bytes": shares.total_bytes,
                        "prompt_tokens": shares.prompt_tokens,
                        "parts": parts,
                        "new_since_previous": shares.new_since_previous.map(|(messages, bytes)| json!({
                            "messages": messages, "bytes": bytes, "approx_tokens": shares.share(bytes),
                        })),
                    }),
                ));
            }
        }
        Direction::Response => {
            if let Some(cost) = &message.cost {
                text.push_str(&format!(
                    "cost: {} ({})\n",
                    cost.text(),
                    tracer_trace::account::cost::estimate_label()
                ));
                fields.push((
                    "cost",
                    json!({"usd": cost.usd(), "text": cost.text(), "prices": tracer_trace::account::cost::estimate_label()}),
                ));
            }
            if let Some(cache) = cache_reports(hops)
                .into_iter()
                .find(|c| c.hop_id == message.hop_id)
            {
                text.push_str(&format!("{}\n", cache.line()));
                fields.push((
                    "cache",
                    json!({
                        "verdict": cache.verdict.as_str(),
                        "read": cache.read,
                        "written": cache.written,
                        "uncached": cache.uncached,
                        "previous_cached": cache.previous_cached,
                        "line": cache.line(),
                    }),
                ));
            }
        }
    }
    (text, fields)
}
