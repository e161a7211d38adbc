//! Token counts made comparable across APIs (the whole prompt, its cached parts, the output) and
//! the one way every face writes them: `39,616 in (16,901 cache read, 17,758 cache write,
//! 4,957 new) · 133 out`.

use serde::Serialize;

use tracer_wire::dialect::{HopReading, Reading, Usage};

/// One model hop's tokens, or the sum over a trace's, in the same terms whatever the API:
/// `prompt` is the whole prompt (Anthropic's input + cache read + cache write, OpenAI's,
/// Gemini's and Ollama's input), and the cache buckets are parts of it. Every count is `None`
/// when no hop reported it.
/// (Serialized as `{"prompt": …, "cache_read": …, …}`, a count no hop reported left out.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct TokenCounts {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_read: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_write: Option<u64>,
    /// Of the cache writes, those kept 5 minutes and 1 hour, where the API splits them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_write_5m: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_write_1h: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<u64>,
    /// Of the output, the tokens spent on reasoning, where the API counts them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<u64>,
}

impl TokenCounts {
    /// The counts one reply reported.
    pub fn of(usage: &Usage) -> TokenCounts {
        TokenCounts {
            prompt: usage.prompt_total(),
            cache_read: usage.cache_read_tokens,
            cache_write: usage.cache_write_tokens,
            cache_write_5m: usage.cache_write_5m_tokens,
            cache_write_1h: usage.cache_write_1h_tokens,
            output: usage.output_tokens,
            reasoning: usage.reasoning_tokens,
        }
    }

    /// Whether no count is known.
    pub fn is_empty(&self) -> bool {
        *self == TokenCounts::default()
    }

    /// Adds another hop's counts, bucket by bucket (a bucket stays `None` only if both are).
    pub(crate) fn add(&mut self, other: &TokenCounts) {
        let pairs = [
            (&mut self.prompt, other.prompt),
            (&mut self.cache_read, other.cache_read),
            (&mut self.cache_write, other.cache_write),
            (&mut self.cache_write_5m, other.cache_write_5m),
            (&mut self.cache_write_1h, other.cache_write_1h),
            (&mut self.output, other.output),
            (&mut self.reasoning, other.reasoning),
        ];
        for (into, value) in pairs {
            if let Some(value) = value {
                *into = Some(into.unwrap_or(0).saturating_add(value));
            }
        }
    }

    /// The sum of many hops' counts.
    pub fn sum<'a>(counts: impl IntoIterator<Item = &'a TokenCounts>) -> TokenCounts {
        let mut total = TokenCounts::default();
        for counts in counts {
            total.add(counts);
        }
        total
    }

    /// The prompt tokens neither read from nor written to the cache.
    pub(crate) fn fresh(&self) -> Option<u64> {
        let cached = self.cache_read.unwrap_or(0) + self.cache_write.unwrap_or(0);
        Some(self.prompt?.saturating_sub(cached))
    }

    /// Every bucket: `39,616 in (16,901 cache read, 17,758 cache write, 4,957 new) · 133 out
    /// (20 reasoning)`; the parts in brackets only where they are not zero. None when no count
    /// is known.
    pub fn text(&self) -> Option<String> {
        let mut sides = Vec::new();
        if let Some(prompt) = self.prompt {
            let mut side = format!("{} in", thousands(prompt));
            let parts = self.prompt_parts();
            if !parts.is_empty() {
                side.push_str(&format!(" ({})", parts.join(", ")));
            }
            sides.push(side);
        }
        if let Some(output) = self.output {
            let mut side = format!("{} out", thousands(output));
            if let Some(reasoning) = self.reasoning.filter(|n| *n > 0) {
                side.push_str(&format!(" ({} reasoning)", thousands(reasoning)));
            }
            sides.push(side);
        }
        (!sides.is_empty()).then(|| sides.join(" · "))
    }

    /// The totals alone, for a listing: `39,616 in · 133 out`.
    pub fn short(&self) -> Option<String> {
        let sides: Vec<String> = [(self.prompt, "in"), (self.output, "out")]
            .into_iter()
            .filter_map(|(count, side)| Some(format!("{} {side}", thousands(count?))))
            .collect();
        (!sides.is_empty()).then(|| sides.join(" · "))
    }

    /// `16,901 cache read`, the cache writes (by how long they are kept where the API says),
    /// `4,957 new`; nothing when the cache played no part.
    fn prompt_parts(&self) -> Vec<String> {
        let read = self.cache_read.unwrap_or(0);
        let write = self.cache_write.unwrap_or(0);
        if read == 0 && write == 0 {
            return Vec::new();
        }
        let mut parts = Vec::new();
        if read > 0 {
            parts.push(format!("{} cache read", thousands(read)));
        }
        if write > 0 {
            let five = self.cache_write_5m.unwrap_or(0);
            let hour = self.cache_write_1h.unwrap_or(0);
            parts.push(match (five > 0, hour > 0) {
                (true, true) => format!(
                    "{} cache write for 5 minutes, {} for 1 hour",
                    thousands(five),
                    thousands(hour)
                ),
                (true, false) if five == write => {
                    format!("{} cache write for 5 minutes", thousands(write))
                }
                (false, true) if hour == write => {
                    format!("{} cache write for 1 hour", thousands(write))
                }
                _ => format!("{} cache write", thousands(write)),
            });
        }
        if let Some(fresh) = self.fresh() {
            parts.push(format!("{} new", thousands(fresh)));
        }
        parts
    }
}

/// A count with thousands separated by commas: `39,616`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// The tokens a model's answer reported, if it reported any.
pub(crate) fn reply_tokens(reading: &HopReading) -> Option<TokenCounts> {
    match reading.response.as_ref().map(|r| &r.reading) {
        Some(Reading::ModelResponse(reply)) if !reply.usage.is_empty() => {
            Some(TokenCounts::of(&reply.usage))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claude_code_turn() -> Usage {
        Usage {
            input_tokens: Some(4957),
            cache_write_tokens: Some(17758),
            cache_read_tokens: Some(16901),
            output_tokens: Some(133),
            ..Usage::default()
        }
    }

    #[test]
    fn claude_codes_turn_is_39616_in_with_every_bucket() {
        let counts = TokenCounts::of(&claude_code_turn());
        assert_eq!(counts.prompt, Some(39616));
        assert_eq!(counts.fresh(), Some(4957));
        assert_eq!(
            counts.text().as_deref(),
            Some("39,616 in (16,901 cache read, 17,758 cache write, 4,957 new) · 133 out")
        );
        assert_eq!(counts.short().as_deref(), Some("39,616 in · 133 out"));
    }

    #[test]
    fn cache_writes_say_how_long_they_are_kept_and_reasoning_is_part_of_the_output() {
        let mut usage = claude_code_turn();
        usage.cache_write_5m_tokens = Some(17758);
        usage.cache_write_1h_tokens = Some(0);
        assert_eq!(
            TokenCounts::of(&usage).text().as_deref(),
            Some(
                "39,616 in (16,901 cache read, 17,758 cache write for 5 minutes, 4,957 new) · 133 out"
            )
        );
        usage.cache_write_5m_tokens = Some(17000);
        usage.cache_write_1h_tokens = Some(758);
        assert!(
            TokenCounts::of(&usage)
                .text()
                .unwrap_or_default()
                .contains("17,000 cache write for 5 minutes, 758 for 1 hour, 4,957 new")
        );
        let openai = Usage {
            input_tokens: Some(1200),
            cache_read_tokens: Some(1024),
            output_tokens: Some(80),
            reasoning_tokens: Some(64),
            cache_inside_input: true,
            ..Usage::default()
        };
        assert_eq!(
            TokenCounts::of(&openai).text().as_deref(),
            Some("1,200 in (1,024 cache read, 176 new) · 80 out (64 reasoning)")
        );
    }

    #[test]
    fn no_cache_no_brackets_and_nothing_known_no_text() {
        let plain = Usage {
            input_tokens: Some(377),
            cache_read_tokens: Some(0),
            cache_write_tokens: Some(0),
            output_tokens: Some(65),
            ..Usage::default()
        };
        assert_eq!(
            TokenCounts::of(&plain).text().as_deref(),
            Some("377 in · 65 out")
        );
        assert_eq!(TokenCounts::default().text(), None);
        assert_eq!(TokenCounts::default().short(), None);
        assert!(TokenCounts::of(&Usage::default()).is_empty());
    }

    #[test]
    fn sums_add_bucket_by_bucket() {
        let a = TokenCounts::of(&claude_code_turn());
        let b = TokenCounts {
            prompt: Some(40000),
            output: Some(12),
            ..TokenCounts::default()
        };
        let total = TokenCounts::sum([&a, &b]);
        assert_eq!(total.prompt, Some(79616));
        assert_eq!(total.output, Some(145));
        assert_eq!(total.cache_read, Some(16901));
        assert_eq!(total.reasoning, None);
    }

    #[test]
    fn thousands_are_separated() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
    }
}
