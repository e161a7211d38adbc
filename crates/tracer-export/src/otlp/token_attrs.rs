//! A model span's token attributes: the GenAI semantic conventions' usage attributes and their
//! OpenInference twins (Phoenix), every bucket the API reported.
//!
//! Names as the OpenTelemetry GenAI registry has them (`@opentelemetry/semantic-conventions`
//! incubating: `ATTR_GEN_AI_USAGE_INPUT_TOKENS`, `ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS`
//! "gen_ai.usage.cache_read.input_tokens", `ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS`
//! "gen_ai.usage.cache_creation.input_tokens", `ATTR_GEN_AI_USAGE_REASONING_OUTPUT_TOKENS`
//! "gen_ai.usage.reasoning.output_tokens"). The convention: the cache read and cache creation
//! counts "SHOULD be included in gen_ai.usage.input_tokens", and the reasoning count in
//! `gen_ai.usage.output_tokens`. So `input_tokens` is the whole prompt (`Usage::prompt_total`):
//! for Anthropic, which counts its cache apart, input + cache read + cache write. OpenInference:
//! `llm.token_count.prompt`, `.completion`, `.total`, `.prompt_details.cache_read`,
//! `.prompt_details.cache_write`, `.completion_details.reasoning`.

use super::model::Attribute;
use tracer_trace::account::cost::{HopCost, estimate_label};
use tracer_wire::dialect::Usage;

/// The token attributes of one model answer (none for a count the API did not report).
pub(crate) fn token_attributes(usage: &Usage) -> Vec<Attribute> {
    let mut out = Vec::new();
    let mut both = |gen_ai: &str, openinference: &str, count: Option<u64>| {
        if let Some(count) = count {
            let count = i64::try_from(count).unwrap_or(i64::MAX);
            out.push(Attribute::int(gen_ai, count));
            out.push(Attribute::int(openinference, count));
        }
    };
    let (input, output) = (usage.prompt_total(), usage.output_tokens);
    both("gen_ai.usage.input_tokens", "llm.token_count.prompt", input);
    both(
        "gen_ai.usage.output_tokens",
        "llm.token_count.completion",
        output,
    );
    both(
        "gen_ai.usage.cache_read.input_tokens",
        "llm.token_count.prompt_details.cache_read",
        usage.cache_read_tokens,
    );
    both(
        "gen_ai.usage.cache_creation.input_tokens",
        "llm.token_count.prompt_details.cache_write",
        usage.cache_write_tokens,
    );
    both(
        "gen_ai.usage.reasoning.output_tokens",
        "llm.token_count.completion_details.reasoning",
        usage.reasoning_tokens,
    );
    if let (Some(input), Some(output)) = (input, output) {
        let total = i64::try_from(input.saturating_add(output)).unwrap_or(i64::MAX);
        out.push(Attribute::int("llm.token_count.total", total));
    }
    out
}

/// A model span's cost, as tracer's own attributes (the conventions have none): `tracer.cost.usd`
/// at list prices when the call was priced, else `tracer.cost.unknown` (why); both with
/// `tracer.cost.prices`, the table's label. Never a 0 for an unknown.
pub(crate) fn cost_attributes(cost: &HopCost) -> Vec<Attribute> {
    let mut out = Vec::new();
    match cost {
        HopCost::Priced { usd, priced_as } => {
            out.push(Attribute::double("tracer.cost.usd", *usd));
            out.push(Attribute::text("tracer.cost.priced_as", priced_as.clone()));
        }
        HopCost::Unknown(why) => out.push(Attribute::text("tracer.cost.unknown", why.text())),
    }
    out.push(Attribute::text("tracer.cost.prices", estimate_label()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::otlp::model::AttrValue;

    fn value(attributes: &[Attribute], key: &str) -> Option<i64> {
        attributes
            .iter()
            .find(|a| a.key == key)
            .and_then(|a| match a.value {
                AttrValue::Int(n) => Some(n),
                _ => None,
            })
    }

    #[test]
    fn anthropic_input_holds_the_cache_as_the_convention_says() {
        let usage = Usage {
            input_tokens: Some(4957),
            cache_write_tokens: Some(17758),
            cache_read_tokens: Some(16901),
            output_tokens: Some(133),
            ..Usage::default()
        };
        let attributes = token_attributes(&usage);
        assert_eq!(value(&attributes, "gen_ai.usage.input_tokens"), Some(39616));
        assert_eq!(value(&attributes, "llm.token_count.prompt"), Some(39616));
        assert_eq!(value(&attributes, "gen_ai.usage.output_tokens"), Some(133));
        assert_eq!(
            value(&attributes, "gen_ai.usage.cache_read.input_tokens"),
            Some(16901)
        );
        assert_eq!(
            value(&attributes, "gen_ai.usage.cache_creation.input_tokens"),
            Some(17758)
        );
        assert_eq!(value(&attributes, "llm.token_count.total"), Some(39749));
        assert_eq!(
            value(&attributes, "gen_ai.usage.reasoning.output_tokens"),
            None
        );
    }

    #[test]
    fn openai_input_already_holds_the_cache_and_reasoning_is_told() {
        let usage = Usage {
            input_tokens: Some(9000),
            cache_read_tokens: Some(8192),
            output_tokens: Some(300),
            reasoning_tokens: Some(256),
            cache_inside_input: true,
            ..Usage::default()
        };
        let attributes = token_attributes(&usage);
        assert_eq!(value(&attributes, "gen_ai.usage.input_tokens"), Some(9000));
        assert_eq!(
            value(&attributes, "gen_ai.usage.cache_read.input_tokens"),
            Some(8192)
        );
        assert_eq!(
            value(&attributes, "gen_ai.usage.reasoning.output_tokens"),
            Some(256)
        );
        assert_eq!(
            value(&attributes, "llm.token_count.completion_details.reasoning"),
            Some(256)
        );
        assert!(token_attributes(&Usage::default()).is_empty());
    }
}
