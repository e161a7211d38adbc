//! The hop log's `tokens` object (on a model's answer, and summed on the trace): the counts of
//! `tracer_trace::TokenCounts`, each absent when no hop reported it.

use serde::{Deserialize, Serialize};

use tracer_trace::TokenCounts;

/// Token counts in the hop log: `prompt` is the whole prompt (cache reads and writes included),
/// the cache buckets are parts of it, `reasoning` is part of `output`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenEntry {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write_5m: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write_1h: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<u64>,
}

impl TokenEntry {
    /// The entry for some counts; None when nothing is known (the field is then left out).
    pub fn of(counts: &TokenCounts) -> Option<TokenEntry> {
        (!counts.is_empty()).then_some(TokenEntry {
            prompt: counts.prompt,
            cache_read: counts.cache_read,
            cache_write: counts.cache_write,
            cache_write_5m: counts.cache_write_5m,
            cache_write_1h: counts.cache_write_1h,
            output: counts.output,
            reasoning: counts.reasoning,
        })
    }

    /// The counts again, for the faces that write them out.
    pub fn counts(&self) -> TokenCounts {
        TokenCounts {
            prompt: self.prompt,
            cache_read: self.cache_read,
            cache_write: self.cache_write,
            cache_write_5m: self.cache_write_5m,
            cache_write_1h: self.cache_write_1h,
            output: self.output,
            reasoning: self.reasoning,
        }
    }
}
