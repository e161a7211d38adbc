//! What a model request's context is made of, part by part: each system block, the tools by
//! origin, the history by kind, what is new since the previous request, and the rest; each
//! part's bytes and its share (≈) of the input tokens the API reported for that very request.

use std::sync::Arc;

use super::tokens::thousands;
use crate::RecordedHop;
use crate::read::conversation_pairs::model_calls;
use crate::read::explain_context::ExplainContext;
use crate::read::request_anatomy::human_bytes;
use crate::read::request_parts::RequestParts;
use tracer_wire::dialect::HopReading;

/// One part of a request and its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextPart {
    pub label: String,
    pub bytes: usize,
}

/// One model request's parts; they add up to `total_bytes`, the request body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextShares {
    pub hop_id: String,
    pub parts: Vec<ContextPart>,
    /// Of the history, the messages new since the previous request: how many, their bytes.
    pub new_since_previous: Option<(usize, usize)>,
    pub total_bytes: usize,
    /// The whole prompt as the API reported it for this request.
    pub prompt_tokens: Option<u64>,
}

impl ContextShares {
    /// A part's share of the reported prompt: prompt × bytes / total bytes.
    pub fn share(&self, bytes: usize) -> Option<u64> {
        let prompt = self.prompt_tokens?;
        (self.total_bytes > 0)
            .then(|| (prompt as f64 * bytes as f64 / self.total_bytes as f64).round() as u64)
    }

    /// The lines `show` prints under the request: a heading, then one line per part.
    pub fn lines(&self) -> Vec<String> {
        let mut out = vec![match self.prompt_tokens {
            Some(prompt) => format!(
                "context, {} in {} tokens (≈ shares by bytes, calibrated by this call's usage):",
                human_bytes(self.total_bytes),
                thousands(prompt)
            ),
            None => format!(
                "context, {} (no usage reported, so no token shares):",
                human_bytes(self.total_bytes)
            ),
        }];
        let share = |bytes| {
            self.share(bytes)
                .map_or_else(String::new, |t| format!("  ≈ {} tokens", thousands(t)))
        };
        for part in &self.parts {
            out.push(format!(
                "  {:<34} {:>9}{}",
                part.label,
                human_bytes(part.bytes),
                share(part.bytes)
            ));
        }
        if let Some((messages, bytes)) = self.new_since_previous {
            out.push(format!(
                "  {:<34} {:>9}{}",
                format!(
                    "of the history, new: {}",
                    crate::words::plural(messages, "message")
                ),
                human_bytes(bytes),
                share(bytes)
            ));
        }
        out
    }
}

/// The context shares of every model request of a trace (any order), in the order sent.
pub fn context_shares(hops: &[RecordedHop]) -> Vec<ContextShares> {
    let readings: Vec<HopReading> = hops.iter().map(RecordedHop::reading).collect();
    let context = ExplainContext::of_trace(hops, &readings);
    let calls = model_calls(hops, &readings);
    let bodies: Vec<Option<Arc<RequestParts>>> = calls
        .iter()
        .map(|c| hops[c.index].request_parts())
        .collect();
    let mut out = Vec::new();
    for (at, call) in calls.iter().enumerate() {
        let Some(body) = &bodies[at] else {
            continue;
        };
        let mut parts = Vec::new();
        for (n, bytes) in body.system_blocks.iter().enumerate() {
            parts.push(part(format!("system block {}", n + 1), *bytes));
        }
        for (n, bytes) in body.system_messages.iter().enumerate() {
            parts.push(part(format!("system message {}", n + 1), *bytes));
        }
        // The tools, measured as sent, grouped by where they come from.
        let defs = &call.request.tool_defs;
        let origins = context.origins.origin_of_each(defs);
        let mut groups: Vec<(Option<String>, usize, usize)> = Vec::new();
        for (def, origin) in defs.iter().zip(origins) {
            match groups.iter_mut().find(|(o, _, _)| *o == origin) {
                Some((_, count, bytes)) => {
                    *count += 1;
                    *bytes += def.bytes;
                }
                None => groups.push((origin, 1, def.bytes)),
            }
        }
        for (origin, count, bytes) in groups {
            let label = match origin {
                None => format!("tools: the host's ({count})"),
                Some(server) => format!("tools: {server} (mcp, {count})"),
            };
            parts.push(part(label, bytes));
        }
        for (kind, bytes) in &body.history_kinds {
            parts.push(part(format!("history: {kind}"), *bytes));
        }
        let total_bytes = call.request.body_bytes.max(body.json_bytes);
        let counted: usize = parts.iter().map(|p| p.bytes).sum();
        parts.push(part(
            "the rest (parameters, JSON framing)".to_string(),
            total_bytes.saturating_sub(counted),
        ));
        let new_since_previous = call
            .previous
            .and_then(|p| bodies[p].as_ref())
            .map(|before| {
                let before = before.message_bytes.len();
                let new = body.message_bytes.get(before..).unwrap_or_default();
                (new.len(), new.iter().sum())
            });
        out.push(ContextShares {
            hop_id: hops[call.index].start.id.clone(),
            parts,
            new_since_previous,
            total_bytes,
            prompt_tokens: call.usage.and_then(|u| u.prompt_total()),
        });
    }
    out
}

fn part(label: String, bytes: usize) -> ContextPart {
    ContextPart { label, bytes }
}

#[cfg(test)]
#[path = "context_shares_tests.rs"]
pub(crate) mod tests;
