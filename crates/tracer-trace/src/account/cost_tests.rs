//! Tests of cost: each bucket and tier by hand, unknown models and missing usage, sums.

use super::*;
use crate::account::prices::PriceTable;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

fn priced(cost: &HopCost) -> f64 {
    cost.usd().unwrap_or(f64::NAN)
}

/// Claude Code's tool-call turn, as the fixture's upstream reported it.
fn claude_turn1() -> Usage {
    Usage {
        input_tokens: Some(4957),
        cache_write_tokens: Some(17758),
        cache_write_5m_tokens: Some(12758),
        cache_write_1h_tokens: Some(5000),
        cache_read_tokens: Some(16901),
        output_tokens: Some(133),
        ..Usage::default()
    }
}

fn claude_turn2() -> Usage {
    Usage {
        input_tokens: Some(312),
        cache_write_tokens: Some(420),
        cache_write_5m_tokens: Some(420),
        cache_write_1h_tokens: Some(0),
        cache_read_tokens: Some(34659),
        output_tokens: Some(41),
        ..Usage::default()
    }
}

#[test]
fn anthropic_buckets_each_at_their_price() {
    let table = PriceTable::vendored();
    let cost = price_call(table, &[Some("claude-opus-4-8")], Some(&claude_turn1()));
    // 4957×$5/M + 12758×$6.25/M + 5000×$10/M + 16901×$0.50/M + 133×$25/M
    let by_hand = 0.024785 + 0.0797375 + 0.05 + 0.0084505 + 0.003325;
    assert!(close(priced(&cost), by_hand), "{cost:?}");
    assert_eq!(cost.text(), "≈ $0.1663 (claude-opus-4-8 at list prices)");
    // Without the 5 m / 1 h split every write is priced as a 5-minute one.
    let mut unsplit = claude_turn1();
    unsplit.cache_write_5m_tokens = None;
    unsplit.cache_write_1h_tokens = None;
    let cost = price_call(table, &[Some("claude-opus-4-8")], Some(&unsplit));
    assert!(close(
        priced(&cost),
        0.024785 + 0.1109875 + 0.0084505 + 0.003325
    ));
}

#[test]
fn claude_codes_two_turns_agree_with_its_own_total_cost_usd_within_2_percent() {
    let table = PriceTable::vendored();
    let mut sum = CostSum::default();
    for usage in [claude_turn1(), claude_turn2()] {
        sum.add(&price_call(table, &[Some("claude-opus-4-8")], Some(&usage)));
    }
    // turn 2: 312×$5/M + 420×$6.25/M + 34659×$0.50/M + 41×$25/M = $0.0225395
    assert!(close(sum.usd, 0.166298 + 0.0225395), "{}", sum.usd);
    // `claude -p … --output-format json` reported total_cost_usd 0.1888 for these two calls
    // (tests/fixtures/agents/README.md).
    let reported = 0.1888;
    assert!((sum.usd - reported).abs() / reported < 0.02);
    assert_eq!(
        sum.text().as_deref(),
        Some("≈ $0.1888 billed across 2 calls")
    );
    assert_eq!(sum.short().as_deref(), Some("≈ $0.1888"));
}

#[test]
fn openai_cache_inside_input_and_reasoning_inside_output() {
    let table = PriceTable::vendored();
    // Codex's tool-call turn: input 12,034 (11,008 cached), output 187 (128 reasoning).
    let usage = Usage {
        input_tokens: Some(12034),
        cache_read_tokens: Some(11008),
        output_tokens: Some(187),
        reasoning_tokens: Some(128),
        cache_inside_input: true,
        ..Usage::default()
    };
    let cost = price_call(table, &[Some("gpt-5-codex")], Some(&usage));
    // 1026×$1.25/M + 11008×$0.125/M + 187×$10/M
    assert!(
        close(priced(&cost), 0.0012825 + 0.001376 + 0.00187),
        "{cost:?}"
    );
}

#[test]
fn long_context_tiers_price_the_whole_call() {
    let table = PriceTable::vendored();
    let usage = |prompt: u64| Usage {
        input_tokens: Some(prompt),
        cache_read_tokens: Some(50_000),
        output_tokens: Some(1000),
        reasoning_tokens: Some(400),
        cache_inside_input: true,
        ..Usage::default()
    };
    let at = |prompt| {
        priced(&price_call(
            table,
            &[Some("gemini-2.5-pro")],
            Some(&usage(prompt)),
        ))
    };
    // At 200,000: 150,000×$1.25/M + 50,000×$0.125/M + 1,000×$10/M.
    assert!(close(at(200_000), 0.1875 + 0.00625 + 0.01));
    // Above 200,000 every bucket moves up: 200,000×$2.50/M + 50,000×$0.25/M + 1,000×$15/M.
    assert!(close(at(250_000), 0.5 + 0.0125 + 0.015));
    // claude-haiku-5-5's tier above 100k has its own 1-hour write price.
    let anthropic = |read: u64| Usage {
        input_tokens: Some(10_000),
        cache_read_tokens: Some(read),
        cache_write_tokens: Some(20_000),
        cache_write_5m_tokens: Some(10_000),
        cache_write_1h_tokens: Some(10_000),
        output_tokens: Some(2000),
        ..Usage::default()
    };
    let haiku = |read| {
        priced(&price_call(
            table,
            &[Some("claude-haiku-5-5")],
            Some(&anthropic(read)),
        ))
    };
    assert!(close(
        haiku(50_000),
        0.001 + 0.0005 + 0.00125 + 0.002 + 0.001
    ));
    assert!(close(
        haiku(100_000),
        0.005 + 0.005 + 0.00625 + 0.01 + 0.005
    ));
}

#[test]
fn reasoning_priced_apart_where_the_table_says() {
    let table = PriceTable::parse(
        r#"{"thinker": {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6,
             "output_cost_per_reasoning_token": 5e-6}}"#,
        "file",
    )
    .expect("reads");
    let usage = Usage {
        input_tokens: Some(1000),
        output_tokens: Some(100),
        reasoning_tokens: Some(40),
        cache_inside_input: true,
        ..Usage::default()
    };
    let cost = price_call(&table, &[Some("thinker")], Some(&usage));
    assert!(close(priced(&cost), 0.001 + 60.0 * 2e-6 + 40.0 * 5e-6));
}

#[test]
fn unknown_model_or_missing_usage_is_unknown_and_sums_say_at_least() {
    let table = PriceTable::vendored();
    let unknown = price_call(table, &[Some("scripted-model")], Some(&claude_turn2()));
    assert_eq!(
        unknown,
        HopCost::Unknown(Unpriced::UnknownModel("scripted-model".into()))
    );
    assert_eq!(unknown.usd(), None);
    assert_eq!(
        unknown.text(),
        "unknown (scripted-model is not in the price table)"
    );
    let no_usage = price_call(table, &[Some("claude-opus-4-8")], Some(&Usage::default()));
    assert_eq!(no_usage, HopCost::Unknown(Unpriced::NoUsage));
    assert_eq!(
        price_call(table, &[Some("claude-opus-4-8")], None),
        HopCost::Unknown(Unpriced::NoUsage)
    );
    assert_eq!(
        price_call(table, &[None, None], Some(&claude_turn2())),
        HopCost::Unknown(Unpriced::NoModel)
    );
    // The answer's model name is tried after the request's.
    let by_reply = price_call(
        table,
        &[Some("opus"), Some("claude-opus-4-8")],
        Some(&claude_turn2()),
    );
    assert!(close(priced(&by_reply), 0.0225395));

    let mut sum = CostSum::default();
    sum.add(&by_reply);
    sum.add(&unknown);
    assert_eq!(sum.short().as_deref(), Some("≥ $0.0225"));
    assert_eq!(
        sum.text().as_deref(),
        Some(
            "at least $0.0225 billed across 2 calls (1 unpriced: scripted-model is not in the price table)"
        )
    );
    let mut none = CostSum::default();
    none.add(&no_usage);
    assert_eq!(none.short().as_deref(), Some("unknown"));
    assert_eq!(
        none.text().as_deref(),
        Some("unknown across 1 call (no usage reported)")
    );
    assert_eq!(CostSum::default().text(), None);
}

#[test]
fn a_prices_override_changes_the_cost() {
    let extra = PriceTable::parse(
        r#"{"claude-opus-4-8": {"input_cost_per_token": 1e-6, "output_cost_per_token": 1e-5,
             "cache_read_input_token_cost": 1e-7, "cache_creation_input_token_cost": 2e-6}}"#,
        "cheap.json",
    )
    .expect("reads");
    let table = PriceTable::vendored().extended_by(extra);
    let cost = price_call(&table, &[Some("claude-opus-4-8")], Some(&claude_turn2()));
    // 312×$1/M + 420×$2/M + 34659×$0.10/M + 41×$10/M
    assert!(close(
        priced(&cost),
        0.000312 + 0.00084 + 0.0034659 + 0.00041
    ));
}
