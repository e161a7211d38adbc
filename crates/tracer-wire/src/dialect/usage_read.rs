//! Reading each API's `usage` object into the token buckets: Anthropic's counts kept apart,
//! OpenAI's (chat and Responses) cached and reasoning tokens inside the input and output.

use serde_json::Value;

use super::Usage;
use super::json_util::u64_field;

/// Anthropic's `usage` (a reply's, `message_start`'s or `message_delta`'s): `input_tokens` is
/// the uncached part, `cache_read_input_tokens` and `cache_creation_input_tokens` are counted
/// apart from it, and `cache_creation` may split the writes by how long they are kept.
/// Buckets the object does not name stay `None`, so a later event can be laid over an earlier
/// one with [`Usage::update`].
pub(super) fn anthropic(value: Option<&Value>) -> Usage {
    let Some(value) = value.filter(|v| v.is_object()) else {
        return Usage::default();
    };
    let split = value.get("cache_creation");
    let split_field = |key: &str| split.and_then(|s| u64_field(s, key));
    Usage {
        input_tokens: u64_field(value, "input_tokens"),
        output_tokens: u64_field(value, "output_tokens"),
        cache_read_tokens: u64_field(value, "cache_read_input_tokens"),
        cache_write_tokens: u64_field(value, "cache_creation_input_tokens"),
        cache_write_5m_tokens: split_field("ephemeral_5m_input_tokens"),
        cache_write_1h_tokens: split_field("ephemeral_1h_input_tokens"),
        reasoning_tokens: None,
        cache_inside_input: false,
    }
}

/// OpenAI's `usage` under the given input and output keys (`prompt_tokens` and
/// `completion_tokens` for chat, `input_tokens` and `output_tokens` for Responses), with the
/// cached tokens of `prompt_tokens_details` / `input_tokens_details` and the reasoning tokens
/// of `completion_tokens_details` / `output_tokens_details`: both already inside the input and
/// output counts. An object that names no count reads as no usage at all.
pub(super) fn openai(value: Option<&Value>, input_key: &str, output_key: &str) -> Usage {
    let Some(value) = value.filter(|v| v.is_object()) else {
        return Usage::default();
    };
    let detail = |keys: [&str; 2], field: &str| {
        keys.iter()
            .find_map(|key| value.get(*key).and_then(|d| u64_field(d, field)))
    };
    let usage = Usage {
        input_tokens: u64_field(value, input_key),
        output_tokens: u64_field(value, output_key),
        cache_read_tokens: detail(
            ["prompt_tokens_details", "input_tokens_details"],
            "cached_tokens",
        ),
        reasoning_tokens: detail(
            ["completion_tokens_details", "output_tokens_details"],
            "reasoning_tokens",
        ),
        cache_inside_input: true,
        ..Usage::default()
    };
    if usage.is_empty() {
        return Usage::default();
    }
    usage
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn anthropic_reads_every_bucket_and_leaves_the_unnamed_ones_out() {
        let start = anthropic(Some(&json!({
            "input_tokens": 4957,
            "cache_creation_input_tokens": 17758,
            "cache_read_input_tokens": 16901,
            "cache_creation": {"ephemeral_5m_input_tokens": 17758, "ephemeral_1h_input_tokens": 0},
            "output_tokens": 1,
            "service_tier": "standard"
        })));
        assert_eq!(start.input_tokens, Some(4957));
        assert_eq!(start.cache_write_tokens, Some(17758));
        assert_eq!(start.cache_read_tokens, Some(16901));
        assert_eq!(start.cache_write_5m_tokens, Some(17758));
        assert_eq!(start.cache_write_1h_tokens, Some(0));
        assert!(!start.cache_inside_input);
        let delta = anthropic(Some(&json!({"output_tokens": 133})));
        assert_eq!(delta.input_tokens, None);
        let mut whole = start;
        whole.update(&delta);
        assert_eq!(whole.output_tokens, Some(133));
        assert_eq!(whole.prompt_total(), Some(39616));
        assert_eq!(anthropic(None), Usage::default());
    }

    #[test]
    fn openai_reads_cached_and_reasoning_details_for_chat_and_responses() {
        let chat = openai(
            Some(&json!({
                "prompt_tokens": 1200, "completion_tokens": 80, "total_tokens": 1280,
                "prompt_tokens_details": {"cached_tokens": 1024, "audio_tokens": 0},
                "completion_tokens_details": {"reasoning_tokens": 64}
            })),
            "prompt_tokens",
            "completion_tokens",
        );
        assert_eq!(chat.input_tokens, Some(1200));
        assert_eq!(chat.cache_read_tokens, Some(1024));
        assert_eq!(chat.reasoning_tokens, Some(64));
        assert!(chat.cache_inside_input);
        assert_eq!(chat.prompt_total(), Some(1200));
        let responses = openai(
            Some(&json!({
                "input_tokens": 9000, "output_tokens": 300,
                "input_tokens_details": {"cached_tokens": 8192},
                "output_tokens_details": {"reasoning_tokens": 256}
            })),
            "input_tokens",
            "output_tokens",
        );
        assert_eq!(responses.cache_read_tokens, Some(8192));
        assert_eq!(responses.reasoning_tokens, Some(256));
        assert_eq!(responses.uncached_prompt(), Some(808));
        // `"usage": {}` or null (chunks before the last) say nothing.
        assert_eq!(
            openai(Some(&json!({})), "prompt_tokens", "completion_tokens"),
            Usage::default()
        );
        assert_eq!(
            openai(Some(&Value::Null), "prompt_tokens", "completion_tokens"),
            Usage::default()
        );
    }
}
