//! What a model call cost at list prices, from its usage and the price table: per call, and
//! summed over a trace or a session, where an unpriced call makes the sum "at least".

use super::prices::{PriceTable, TierPrices};
use tracer_wire::dialect::{HopReading, ModelRequest, ModelResponse, Reading, Usage};

/// Why a call has no price.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unpriced {
    /// The answer reported no usage, or never came.
    NoUsage,
    /// The request named a model the price table does not know.
    UnknownModel(String),
    /// Neither the request nor the answer named a model.
    NoModel,
}

impl Unpriced {
    pub fn text(&self) -> String {
        match self {
            Unpriced::NoUsage => "no usage reported".to_string(),
            Unpriced::UnknownModel(model) => format!("{model} is not in the price table"),
            Unpriced::NoModel => "no model named".to_string(),
        }
    }
}

/// One model call's cost: dollars at list prices under a table key, or unknown (never 0).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HopCost {
    Priced { usd: f64, priced_as: String },
    Unknown(Unpriced),
}

impl HopCost {
    pub fn usd(&self) -> Option<f64> {
        match self {
            HopCost::Priced { usd, .. } => Some(*usd),
            HopCost::Unknown(_) => None,
        }
    }

    /// `≈ $0.1664 (claude-opus-4-8 at list prices)` or `unknown (no usage reported)`.
    pub fn text(&self) -> String {
        match self {
            HopCost::Priced { usd, priced_as } => {
                format!("≈ {} ({priced_as} at list prices)", dollars(*usd))
            }
            HopCost::Unknown(why) => format!("unknown ({})", why.text()),
        }
    }
}

/// Dollars to four decimals: `$0.1888`.
pub fn dollars(usd: f64) -> String {
    format!("${usd:.4}")
}

/// The cost of one call with these prices: every bucket at its own price, the whole call at
/// the long-context tier its prompt falls in. A price the table lacks falls back: cache reads
/// and 5-minute writes to the input price, 1-hour writes to the 5-minute one, reasoning to the
/// output price.
pub(crate) fn call_usd(prices: &TierPrices, usage: &Usage) -> f64 {
    let input_price = prices.input.unwrap_or(0.0);
    let read_price = prices.cache_read.unwrap_or(input_price);
    let write_5m_price = prices.cache_write_5m.unwrap_or(input_price);
    let write_1h_price = prices.cache_write_1h.unwrap_or(write_5m_price);
    let output_price = prices.output.unwrap_or(0.0);
    let reasoning_price = prices.reasoning.unwrap_or(output_price);

    let input = usage.input_tokens.unwrap_or(0);
    let read = usage.cache_read_tokens.unwrap_or(0);
    let write = usage.cache_write_tokens.unwrap_or(0);
    // Where the API counts the cache inside the input (OpenAI, Gemini), the uncached rest.
    let uncached = if usage.cache_inside_input {
        input.saturating_sub(read).saturating_sub(write)
    } else {
        input
    };
    let write_1h = usage.cache_write_1h_tokens.unwrap_or(0).min(write);
    let write_5m = write - write_1h;
    let output = usage.output_tokens.unwrap_or(0);
    let reasoning = usage.reasoning_tokens.unwrap_or(0).min(output);

    uncached as f64 * input_price
        + read as f64 * read_price
        + write_5m as f64 * write_5m_price
        + write_1h as f64 * write_1h_price
        + (output - reasoning) as f64 * output_price
        + reasoning as f64 * reasoning_price
}

/// Prices one call by its model's name (tried in order) and its usage.
pub fn price_call(table: &PriceTable, models: &[Option<&str>], usage: Option<&Usage>) -> HopCost {
    let Some(usage) = usage.filter(|u| !u.is_empty()) else {
        return HopCost::Unknown(Unpriced::NoUsage);
    };
    let named: Vec<&str> = models.iter().flatten().copied().collect();
    let Some(first) = named.first() else {
        return HopCost::Unknown(Unpriced::NoModel);
    };
    let Some(prices) = named.iter().find_map(|m| table.lookup(m)) else {
        return HopCost::Unknown(Unpriced::UnknownModel((*first).to_string()));
    };
    let tier = prices.for_prompt(usage.prompt_total().unwrap_or(0));
    HopCost::Priced {
        usd: call_usd(&tier, usage),
        priced_as: prices.key.clone(),
    }
}

/// The cost of one model call, read, with the active price table.
pub fn call_cost(request: Option<&ModelRequest>, reply: Option<&ModelResponse>) -> HopCost {
    let models = [
        request.and_then(|r| r.model.as_deref()),
        reply.and_then(|r| r.model.as_deref()),
    ];
    price_call(super::prices::active(), &models, reply.map(|r| &r.usage))
}

/// The cost of a model hop (None for any other hop) with the active price table.
pub(crate) fn hop_cost(reading: &HopReading) -> Option<HopCost> {
    hop_cost_with(super::prices::active(), reading)
}

/// The cost of a model hop with a given table.
pub(crate) fn hop_cost_with(table: &PriceTable, reading: &HopReading) -> Option<HopCost> {
    let Reading::ModelRequest(request) = &reading.request.reading else {
        return None;
    };
    let reply = match reading.response.as_ref().map(|r| &r.reading) {
        Some(Reading::ModelResponse(reply)) => Some(reply),
        _ => None,
    };
    let models = [
        request.model.as_deref(),
        reply.and_then(|r| r.model.as_deref()),
    ];
    Some(price_call(table, &models, reply.map(|r| &r.usage)))
}

/// Costs summed: the dollars of the priced calls, and how many were not priced.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CostSum {
    pub usd: f64,
    pub calls: usize,
    pub unpriced_calls: usize,
    /// Why the first unpriced call was not priced (`Unpriced::text`).
    pub first_unpriced: Option<String>,
}

impl CostSum {
    pub fn add(&mut self, cost: &HopCost) {
        self.calls += 1;
        match cost {
            HopCost::Priced { usd, .. } => self.usd += usd,
            HopCost::Unknown(why) => {
                self.unpriced_calls += 1;
                self.first_unpriced.get_or_insert_with(|| why.text());
            }
        }
    }

    pub fn add_sum(&mut self, other: &CostSum) {
        self.usd += other.usd;
        self.calls += other.calls;
        self.unpriced_calls += other.unpriced_calls;
        if self.first_unpriced.is_none() {
            self.first_unpriced = other.first_unpriced.clone();
        }
    }

    pub fn is_empty(&self) -> bool {
        self.calls == 0
    }

    /// True when every call was priced.
    pub fn is_exact(&self) -> bool {
        self.unpriced_calls == 0
    }

    /// For a listing: `≈ $0.1888`, `≥ $0.0225` (some call unpriced), `unknown` (none priced).
    pub fn short(&self) -> Option<String> {
        if self.is_empty() {
            return None;
        }
        Some(if self.unpriced_calls == self.calls {
            "unknown".to_string()
        } else if self.is_exact() {
            format!("≈ {}", dollars(self.usd))
        } else {
            format!("≥ {}", dollars(self.usd))
        })
    }

    /// The dollars alone: `≈ $0.1888`, `at least $0.0225 (1 unpriced: why)`, `unknown (why)`.
    pub fn money(&self) -> Option<String> {
        if self.is_empty() {
            return None;
        }
        let why = self.first_unpriced.clone().unwrap_or_default();
        Some(if self.unpriced_calls == self.calls {
            format!("unknown ({why})")
        } else if self.is_exact() {
            format!("≈ {}", dollars(self.usd))
        } else {
            format!(
                "at least {} ({} unpriced: {why})",
                dollars(self.usd),
                self.unpriced_calls
            )
        })
    }

    /// `≈ $0.1888 billed across 2 calls`, `at least $0.0225 billed across 2 calls (1 unpriced:
    /// claude-x is not in the price table)`, `unknown across 1 call (no usage reported)`.
    pub fn text(&self) -> Option<String> {
        if self.is_empty() {
            return None;
        }
        let calls = crate::words::plural(self.calls, "call");
        let why = self.first_unpriced.clone().unwrap_or_default();
        Some(if self.unpriced_calls == self.calls {
            format!("unknown across {calls} ({why})")
        } else if self.is_exact() {
            format!("≈ {} billed across {calls}", dollars(self.usd))
        } else {
            format!(
                "at least {} billed across {calls} ({} unpriced: {why})",
                dollars(self.usd),
                self.unpriced_calls
            )
        })
    }
}

/// The label every cost carries: `estimate at list prices, LiteLLM table as of 2026-12-01`.
pub fn estimate_label() -> String {
    format!("estimate at list prices, {}", super::prices::active().label)
}

#[cfg(test)]
#[path = "cost_tests.rs"]
mod tests;
