//! Token counts bucket by bucket, as each API reports them, and the prompt total they add up to.

/// Token counts as the server reported them. Every bucket is `None` when the API did not say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    /// Input tokens as the API reports them: for Anthropic the uncached part only; for OpenAI
    /// (chat and Responses), Gemini and Ollama the whole prompt, its cached part included
    /// (`cache_inside_input` says which).
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    /// Prompt tokens read from the provider's prompt cache.
    pub cache_read_tokens: Option<u64>,
    /// Prompt tokens written to the cache (Anthropic `cache_creation_input_tokens`).
    pub cache_write_tokens: Option<u64>,
    /// Of the cache writes, those kept 5 minutes and 1 hour, where the API splits them.
    pub cache_write_5m_tokens: Option<u64>,
    pub cache_write_1h_tokens: Option<u64>,
    /// Output tokens spent on reasoning / thinking, where the API counts them.
    pub reasoning_tokens: Option<u64>,
    /// True where `input_tokens` already includes the cached tokens (OpenAI, Gemini, Ollama);
    /// false where the API counts cache reads and writes apart from it (Anthropic).
    pub cache_inside_input: bool,
}

impl Usage {
    /// Whether the API reported any count at all.
    pub fn is_empty(&self) -> bool {
        self.input_tokens.is_none()
            && self.output_tokens.is_none()
            && self.cache_read_tokens.is_none()
            && self.cache_write_tokens.is_none()
            && self.reasoning_tokens.is_none()
    }

    /// The whole prompt: input + cache read + cache write where the API counts them apart,
    /// the input alone where it counts them inside. None when no prompt count was reported.
    pub fn prompt_total(&self) -> Option<u64> {
        if self.cache_inside_input {
            return self.input_tokens;
        }
        let parts = [
            self.input_tokens,
            self.cache_read_tokens,
            self.cache_write_tokens,
        ];
        if parts.iter().all(Option::is_none) {
            return None;
        }
        Some(parts.iter().flatten().sum())
    }

    /// The prompt tokens not served from the cache (for Anthropic: input + cache write).
    pub fn uncached_prompt(&self) -> Option<u64> {
        let total = self.prompt_total()?;
        Some(total.saturating_sub(self.cache_read_tokens.unwrap_or(0)))
    }

    /// Takes every bucket `later` reports (a stream's final usage over its first).
    pub(crate) fn update(&mut self, later: &Usage) {
        let pairs = [
            (&mut self.input_tokens, later.input_tokens),
            (&mut self.output_tokens, later.output_tokens),
            (&mut self.cache_read_tokens, later.cache_read_tokens),
            (&mut self.cache_write_tokens, later.cache_write_tokens),
            (&mut self.cache_write_5m_tokens, later.cache_write_5m_tokens),
            (&mut self.cache_write_1h_tokens, later.cache_write_1h_tokens),
            (&mut self.reasoning_tokens, later.reasoning_tokens),
        ];
        for (into, value) in pairs {
            if value.is_some() {
                *into = value;
            }
        }
        self.cache_inside_input = later.cache_inside_input;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anthropic_counts_cache_apart_and_openai_inside() {
        let anthropic = Usage {
            input_tokens: Some(4957),
            cache_write_tokens: Some(17758),
            cache_read_tokens: Some(16901),
            output_tokens: Some(133),
            ..Usage::default()
        };
        assert_eq!(anthropic.prompt_total(), Some(39616));
        assert_eq!(anthropic.uncached_prompt(), Some(22715));
        let openai = Usage {
            input_tokens: Some(1000),
            cache_read_tokens: Some(800),
            cache_inside_input: true,
            ..Usage::default()
        };
        assert_eq!(openai.prompt_total(), Some(1000));
        assert_eq!(openai.uncached_prompt(), Some(200));
        assert_eq!(Usage::default().prompt_total(), None);
        assert!(Usage::default().is_empty());
    }
}
