//! The price table: list prices per model, vendored from LiteLLM's public table (data/prices.json),
//! extended or overridden by `--prices FILE` in the same format.

use std::collections::HashMap;
use std::sync::OnceLock;

use serde_json::{Map, Value};

/// The vendored table, as LiteLLM publishes it, cut to the model families agents use.
const VENDORED: &str = include_str!("../../../../data/prices.json");

/// A price table that could not be read.
#[derive(Debug, thiserror::Error)]
pub enum PricesError {
    #[error("the price table is not JSON: {0}")]
    NotJson(#[from] serde_json::Error),
    #[error("the price table is not a JSON object of models")]
    NotAnObject,
    #[error("model {model}: {field} is not a number of dollars per token")]
    BadPrice { model: String, field: String },
}

/// Dollars per token of one price tier.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct TierPrices {
    pub input: Option<f64>,
    pub output: Option<f64>,
    pub cache_read: Option<f64>,
    /// A cache write kept 5 minutes (LiteLLM `cache_creation_input_token_cost`).
    pub cache_write_5m: Option<f64>,
    /// A cache write kept 1 hour (`cache_creation_input_token_cost_above_1hr`).
    pub cache_write_1h: Option<f64>,
    /// Reasoning output where it is priced apart from the rest of the output.
    pub reasoning: Option<f64>,
}

/// One model's prices: the base tier and the long-context tiers (prices that apply to the whole
/// call when its prompt is above so many tokens), lowest threshold first.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ModelPrices {
    /// The key it has in the table (`claude-opus-4-8`, `gemini/gemini-2.5-pro`).
    pub key: String,
    pub base: TierPrices,
    pub tiers: Vec<(u64, TierPrices)>,
}

impl ModelPrices {
    /// The prices that apply to a call with this many prompt tokens: the highest tier whose
    /// threshold the prompt is above, each price it lacks taken from the base.
    pub(crate) fn for_prompt(&self, prompt_tokens: u64) -> TierPrices {
        let mut prices = self.base;
        if let Some((_, tier)) = self
            .tiers
            .iter()
            .rev()
            .find(|(above, _)| prompt_tokens > *above)
        {
            let pairs = [
                (&mut prices.input, tier.input),
                (&mut prices.output, tier.output),
                (&mut prices.cache_read, tier.cache_read),
                (&mut prices.cache_write_5m, tier.cache_write_5m),
                (&mut prices.cache_write_1h, tier.cache_write_1h),
                (&mut prices.reasoning, tier.reasoning),
            ];
            for (into, value) in pairs {
                if value.is_some() {
                    *into = value;
                }
            }
        }
        prices
    }
}

/// Every model's prices, and where the table came from.
#[derive(Debug, Clone, PartialEq)]
pub struct PriceTable {
    models: HashMap<String, ModelPrices>,
    /// `LiteLLM table as of 2026-12-01`, with `+ FILE` for each override read.
    pub label: String,
}

impl PriceTable {
    /// The table vendored in this build.
    pub fn vendored() -> &'static PriceTable {
        static TABLE: OnceLock<PriceTable> = OnceLock::new();
        TABLE.get_or_init(|| {
            // The vendored file is checked by a test; an unreadable one would price nothing.
            PriceTable::parse(VENDORED, "LiteLLM table").unwrap_or_else(|_| PriceTable {
                models: HashMap::new(),
                label: "no price table".to_string(),
            })
        })
    }

    /// Reads a table in LiteLLM's format: an object of model names to objects of
    /// `input_cost_per_token`, `output_cost_per_token`, `cache_read_input_token_cost`,
    /// `cache_creation_input_token_cost` (`_above_1hr`), `output_cost_per_reasoning_token`, and
    /// the same with `_above_Nk_tokens`; other fields and entries without prices are skipped.
    /// A `_source` object's `as_of` dates the table.
    pub fn parse(text: &str, name: &str) -> Result<PriceTable, PricesError> {
        let value: Value = serde_json::from_str(text)?;
        let object = value.as_object().ok_or(PricesError::NotAnObject)?;
        let mut models = HashMap::new();
        for (key, entry) in object {
            let Some(fields) = entry.as_object() else {
                continue;
            };
            if key.starts_with('_') || key == "sample_spec" {
                continue;
            }
            if let Some(prices) = model_prices(key, fields)? {
                models.insert(key.clone(), prices);
            }
        }
        let as_of = object
            .get("_source")
            .and_then(|s| s.get("as_of"))
            .and_then(Value::as_str);
        let label = match as_of {
            Some(date) => format!("{name} as of {date}"),
            None => name.to_string(),
        };
        Ok(PriceTable { models, label })
    }

    /// This table with every model of `other` added, replacing those of the same name.
    pub fn extended_by(&self, other: PriceTable) -> PriceTable {
        let mut models = self.models.clone();
        models.extend(other.models);
        PriceTable {
            models,
            label: format!("{} + {}", self.label, other.label),
        }
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.models.len()
    }

    /// The prices of a model as an API names it: the exact name, else the name without a
    /// `models/` prefix or under a provider's prefix (`gemini/…`), else without a date suffix.
    pub(crate) fn lookup(&self, model: &str) -> Option<&ModelPrices> {
        let bare = model.strip_prefix("models/").unwrap_or(model);
        let candidates = [bare.to_string(), undated(bare).to_string()];
        for name in candidates.iter().filter(|n| !n.is_empty()) {
            if let Some(found) = self.models.get(name.as_str()) {
                return Some(found);
            }
            for prefix in PROVIDER_PREFIXES {
                if let Some(found) = self.models.get(&format!("{prefix}/{name}")) {
                    return Some(found);
                }
            }
        }
        None
    }
}

/// The table this process prices with, once `install`ed (`--prices`).
static ACTIVE: OnceLock<PriceTable> = OnceLock::new();

/// Makes `table` the one every face prices with (the vendored one extended by `--prices`).
/// Only the first call counts; it returns false when a table was already installed.
pub fn install(table: PriceTable) -> bool {
    ACTIVE.set(table).is_ok()
}

/// The table faces price with: the installed one, else the vendored one.
pub fn active() -> &'static PriceTable {
    ACTIVE.get().unwrap_or_else(|| PriceTable::vendored())
}

/// The prefixes LiteLLM puts before the names of providers other than Anthropic and OpenAI.
const PROVIDER_PREFIXES: [&str; 8] = [
    "gemini",
    "deepseek",
    "xai",
    "mistral",
    "moonshot",
    "zai",
    "dashscope",
    "anthropic",
];

/// `claude-sonnet-4-5-20250929` → `claude-sonnet-4-5`; `gpt-4o-2024-08-06` → `gpt-4o`.
fn undated(model: &str) -> &str {
    if let Some((head, tail)) = model.rsplit_once('-')
        && tail.len() == 8
        && tail.bytes().all(|b| b.is_ascii_digit())
    {
        return head;
    }
    let parts: Vec<&str> = model.rsplitn(4, '-').collect();
    if parts.len() == 4
        && parts[0].len() == 2
        && parts[1].len() == 2
        && parts[2].len() == 4
        && parts[..3]
            .iter()
            .all(|p| p.bytes().all(|b| b.is_ascii_digit()))
    {
        return parts[3];
    }
    model
}

fn model_prices(
    key: &str,
    fields: &Map<String, Value>,
) -> Result<Option<ModelPrices>, PricesError> {
    let mut base = TierPrices::default();
    let mut tiers: Vec<(u64, TierPrices)> = Vec::new();
    for (field, value) in fields {
        let Some((slot, above)) = parse_field(field) else {
            continue;
        };
        let price = value.as_f64().ok_or_else(|| PricesError::BadPrice {
            model: key.to_string(),
            field: field.clone(),
        })?;
        let tier = match above {
            None => &mut base,
            Some(above) => match tiers.iter().position(|(t, _)| *t == above) {
                Some(i) => &mut tiers[i].1,
                None => {
                    tiers.push((above, TierPrices::default()));
                    let last = tiers.len() - 1;
                    &mut tiers[last].1
                }
            },
        };
        *slot(tier) = Some(price);
    }
    if base.input.is_none() || base.output.is_none() {
        return Ok(None);
    }
    tiers.sort_by_key(|(above, _)| *above);
    Ok(Some(ModelPrices {
        key: key.to_string(),
        base,
        tiers,
    }))
}

/// Which price a LiteLLM field sets, and its tier: `X`, `X_above_1hr`, `X_above_Nk_tokens`,
/// `X_above_1hr_above_Nk_tokens`; None for the fields tracer does not use (`_priority`, …).
fn parse_field(field: &str) -> Option<(Slot, Option<u64>)> {
    let (head, above) = match field.rsplit_once("_above_") {
        Some((head, rest)) if rest.ends_with("k_tokens") => (head, Some(tier_threshold(rest)?)),
        _ => (field, None),
    };
    let (name, one_hour) = match head.strip_suffix("_above_1hr") {
        Some(name) => (name, true),
        None => (head, false),
    };
    Some((slot_of(name, one_hour)?, above))
}

/// `200k_tokens` → 200,000.
fn tier_threshold(rest: &str) -> Option<u64> {
    let thousands = rest.strip_suffix("k_tokens")?;
    Some(thousands.parse::<u64>().ok()? * 1000)
}

type Slot = fn(&mut TierPrices) -> &mut Option<f64>;

/// Which price a LiteLLM field name (its suffixes taken off) sets.
fn slot_of(name: &str, one_hour: bool) -> Option<Slot> {
    Some(match (name, one_hour) {
        ("input_cost_per_token", false) => |t| &mut t.input,
        ("output_cost_per_token", false) => |t| &mut t.output,
        ("cache_read_input_token_cost", false) => |t| &mut t.cache_read,
        ("cache_creation_input_token_cost", false) => |t| &mut t.cache_write_5m,
        ("cache_creation_input_token_cost", true) => |t| &mut t.cache_write_1h,
        ("output_cost_per_reasoning_token", false) => |t| &mut t.reasoning,
        _ => return None,
    })
}

#[cfg(test)]
#[path = "prices_tests.rs"]
mod tests;
