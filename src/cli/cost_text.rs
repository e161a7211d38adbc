//! The words `ls --sessions` and `show` put next to the tokens: what the calls were billed
//! (at list prices, an estimate) apart from the context the last call carried.

use std::path::Path;

use anyhow::Context;

use tracer_export::hop_log::{CostEntry, TokenEntry};
use tracer_trace::account::cost::estimate_label;
use tracer_trace::account::prices::PriceTable;
use tracer_trace::account::tokens::thousands;

/// Reads `--prices FILE` and makes the built-in table extended by it the one costs use.
pub fn install_prices(path: &Path) -> anyhow::Result<()> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let name = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let extra = PriceTable::parse(&text, &name).with_context(|| path.display().to_string())?;
    tracer_trace::account::prices::install(PriceTable::vendored().extended_by(extra));
    Ok(())
}

/// `billed across 2 calls: 75,007 in · 174 out, ≈ $0.1888 (estimate at list prices, LiteLLM
/// table as of 2026-12-01) · context at the last call: 35,391 tokens`; None when no model call.
pub fn billed_line(
    tokens: Option<&TokenEntry>,
    cost: Option<&CostEntry>,
    last_prompt: Option<u64>,
) -> Option<String> {
    let cost = cost?;
    let sum = cost.sum();
    let calls = tracer_trace::words::plural(sum.calls, "call");
    let mut line = format!("billed across {calls}: ");
    if let Some(tokens) = tokens.and_then(|t| t.counts().short()) {
        line.push_str(&format!("{tokens}, "));
    }
    let money = sum.money().unwrap_or_else(|| "unknown".to_string());
    line.push_str(&format!("{money} ({})", estimate_label()));
    if let Some(prompt) = last_prompt {
        line.push_str(&format!(
            " · context at the last call: {} tokens",
            thousands(prompt)
        ));
    }
    Some(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn billed_apart_from_the_context_of_the_last_call() {
        let cost = CostEntry {
            usd: Some(0.1888375),
            calls: 2,
            unpriced_calls: 0,
            priced_as: None,
            unknown: None,
            prices: String::new(),
        };
        let tokens = TokenEntry {
            prompt: Some(75007),
            output: Some(174),
            ..TokenEntry::default()
        };
        assert_eq!(
            billed_line(Some(&tokens), Some(&cost), Some(35391)).as_deref(),
            Some(
                "billed across 2 calls: 75,007 in · 174 out, ≈ $0.1888 (estimate at list prices, \
                 LiteLLM table as of 2026-12-01) · context at the last call: 35,391 tokens"
            )
        );
        let partial = CostEntry {
            usd: Some(0.02),
            unpriced_calls: 1,
            unknown: Some("scripted-model is not in the price table".into()),
            ..cost
        };
        assert_eq!(
            billed_line(None, Some(&partial), None).as_deref(),
            Some(
                "billed across 2 calls: at least $0.0200 (1 unpriced: scripted-model is not in \
                 the price table) (estimate at list prices, LiteLLM table as of 2026-12-01)"
            )
        );
        assert_eq!(billed_line(Some(&tokens), None, Some(1)), None);
    }
}
