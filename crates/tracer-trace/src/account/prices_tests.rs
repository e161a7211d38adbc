//! Tests of the price table: the vendored file, LiteLLM's field names, tiers, look-ups, overrides.

use super::*;

#[test]
fn the_vendored_table_reads_and_is_dated() {
    let table = PriceTable::vendored();
    assert!(table.len() > 200, "{} models", table.len());
    assert_eq!(table.label, "LiteLLM table as of 2026-12-01");
    let opus = table
        .lookup("claude-opus-4-8")
        .expect("claude-opus-4-8 is priced");
    assert_eq!(opus.base.input, Some(5e-6));
    assert_eq!(opus.base.output, Some(2.5e-5));
    assert_eq!(opus.base.cache_read, Some(5e-7));
    assert_eq!(opus.base.cache_write_5m, Some(6.25e-6));
    assert_eq!(opus.base.cache_write_1h, Some(1e-5));
    for model in [
        "gpt-5-codex",
        "gemini-2.5-pro",
        "deepseek-chat",
        "claude-sonnet-4-5",
    ] {
        assert!(table.lookup(model).is_some(), "{model}");
    }
}

#[test]
fn long_context_tiers_and_the_one_hour_tier_of_a_tier_are_read() {
    let table = PriceTable::vendored();
    let haiku = table.lookup("claude-haiku-5-5").expect("priced");
    assert_eq!(haiku.tiers.len(), 1);
    let (above, tier) = haiku.tiers[0];
    assert_eq!(above, 100_000);
    assert_eq!(tier.cache_write_1h, Some(1e-6));
    assert_eq!(haiku.for_prompt(100_000).input, Some(1e-7));
    assert_eq!(haiku.for_prompt(100_001).input, Some(5e-7));
    let gemini = table.lookup("models/gemini-2.5-pro").expect("priced");
    assert_eq!(gemini.key, "gemini/gemini-2.5-pro");
    assert_eq!(gemini.for_prompt(200_001).output, Some(1.5e-5));
}

#[test]
fn names_are_found_without_a_date_suffix_and_unknown_ones_are_not() {
    let table = PriceTable::vendored();
    assert_eq!(
        table
            .lookup("claude-opus-4-8-20991231")
            .map(|p| p.key.as_str()),
        Some("claude-opus-4-8")
    );
    assert_eq!(
        table.lookup("gpt-4o-2099-01-02").map(|p| p.key.as_str()),
        Some("gpt-4o")
    );
    assert!(table.lookup("scripted-model").is_none());
    assert!(table.lookup("").is_none());
}

#[test]
fn a_prices_file_extends_and_overrides_and_is_named_in_the_label() {
    let file = r#"{
        "claude-opus-4-8": {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6},
        "scripted-model": {"input_cost_per_token": 3e-7, "output_cost_per_token": 6e-7,
                           "input_cost_per_token_priority": 9.9, "mode": "chat"},
        "no-prices": {"mode": "chat"}
    }"#;
    let extra = PriceTable::parse(file, "my-prices.json").expect("reads");
    assert_eq!(extra.len(), 2);
    let table = PriceTable::vendored().extended_by(extra);
    assert_eq!(
        table.label,
        "LiteLLM table as of 2026-12-01 + my-prices.json"
    );
    let opus = table.lookup("claude-opus-4-8").expect("priced");
    assert_eq!(opus.base.input, Some(1e-6));
    assert_eq!(opus.base.cache_write_1h, None);
    assert_eq!(
        table.lookup("scripted-model").and_then(|p| p.base.input),
        Some(3e-7)
    );
    assert!(table.lookup("gpt-5-codex").is_some());
}

#[test]
fn a_bad_file_is_an_error() {
    assert!(matches!(
        PriceTable::parse("[1]", "x"),
        Err(PricesError::NotAnObject)
    ));
    assert!(matches!(
        PriceTable::parse("{", "x"),
        Err(PricesError::NotJson(_))
    ));
    assert!(matches!(
        PriceTable::parse(r#"{"m": {"input_cost_per_token": "cheap"}}"#, "x"),
        Err(PricesError::BadPrice { .. })
    ));
}
