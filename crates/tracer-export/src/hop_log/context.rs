//! The hop log's `context` object (on a model request): what the request is made of, part by
//! part, with each part's bytes and its ≈ share of the prompt tokens that call reported.

use serde::{Deserialize, Serialize};

use tracer_trace::account::context_shares::ContextShares;

/// A model request's context. Derived from the request's body and its answer's usage, so an
/// import reads it back by reading the bodies again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContextEntry {
    /// The request body's bytes; the parts add up to it.
    pub(crate) bytes: usize,
    /// The whole prompt as the API reported it for this request (absent when it did not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) prompt_tokens: Option<u64>,
    pub(crate) parts: Vec<ContextPartEntry>,
    /// Of the history, what is new since the previous request of the conversation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) new_since_previous: Option<NewEntry>,
}

/// One part: `system block 1`, `tools: notes (mcp, 5)`, `history: tool results`, ...
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContextPartEntry {
    pub(crate) part: String,
    pub(crate) bytes: usize,
    /// ≈ prompt × bytes ÷ the request's bytes (absent without a reported prompt).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    approx_tokens: Option<u64>,
}

/// The messages new since the previous request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewEntry {
    pub(crate) messages: usize,
    pub(crate) bytes: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    approx_tokens: Option<u64>,
}

impl ContextEntry {
    pub(crate) fn of(shares: &ContextShares) -> ContextEntry {
        ContextEntry {
            bytes: shares.total_bytes,
            prompt_tokens: shares.prompt_tokens,
            parts: shares
                .parts
                .iter()
                .map(|part| ContextPartEntry {
                    part: part.label.clone(),
                    bytes: part.bytes,
                    approx_tokens: shares.share(part.bytes),
                })
                .collect(),
            new_since_previous: shares.new_since_previous.map(|(messages, bytes)| NewEntry {
                messages,
                bytes,
                approx_tokens: shares.share(bytes),
            }),
        }
    }
}
