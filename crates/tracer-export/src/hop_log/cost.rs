//! The hop log's `cost` object (on a model's answer, and summed on the trace): dollars at list
//! prices from tracer's price table, or why a call is unpriced; never a 0 for an unknown.

use serde::{Deserialize, Serialize};

use tracer_trace::account::cost::{CostSum, HopCost, estimate_label};

/// A cost in the hop log. On a message `calls` is 1; on the trace it counts its model calls.
/// `usd` is absent when no call was priced, and is a lower bound when `unpriced_calls` > 0.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CostEntry {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usd: Option<f64>,
    pub calls: usize,
    #[serde(default)]
    pub unpriced_calls: usize,
    /// The price table's key the call was priced as (on a message).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priced_as: Option<String>,
    /// Why a call was not priced (the first such call on the trace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unknown: Option<String>,
    /// `estimate at list prices, LiteLLM table as of 2026-12-01`.
    pub prices: String,
}

impl CostEntry {
    /// The entry for one model call.
    pub(crate) fn of_call(cost: &HopCost) -> CostEntry {
        let mut sum = CostSum::default();
        sum.add(cost);
        let mut entry = CostEntry::of_sum(&sum).unwrap_or_else(|| CostEntry {
            usd: None,
            calls: 1,
            unpriced_calls: 1,
            priced_as: None,
            unknown: None,
            prices: estimate_label(),
        });
        if let HopCost::Priced { priced_as, .. } = cost {
            entry.priced_as = Some(priced_as.clone());
        }
        entry
    }

    /// The entry for a sum; None when there was no model call.
    pub fn of_sum(sum: &CostSum) -> Option<CostEntry> {
        (!sum.is_empty()).then(|| CostEntry {
            usd: (sum.unpriced_calls < sum.calls).then_some(sum.usd),
            calls: sum.calls,
            unpriced_calls: sum.unpriced_calls,
            priced_as: None,
            unknown: sum.first_unpriced.clone(),
            prices: estimate_label(),
        })
    }

    /// The sum again, for the faces that write it out.
    pub fn sum(&self) -> CostSum {
        CostSum {
            usd: self.usd.unwrap_or(0.0),
            calls: self.calls,
            unpriced_calls: self.unpriced_calls,
            first_unpriced: self.unknown.clone(),
        }
    }

    /// One call's cost as a line: `≈ $0.1663 (claude-opus-4-8 at list prices)`.
    pub fn call_text(&self) -> String {
        match (self.usd, &self.priced_as, &self.unknown) {
            (Some(usd), Some(model), _) => HopCost::Priced {
                usd,
                priced_as: model.clone(),
            }
            .text(),
            (Some(usd), None, _) => format!("≈ {}", tracer_trace::account::cost::dollars(usd)),
            (None, _, Some(why)) => format!("unknown ({why})"),
            (None, _, None) => "unknown".to_string(),
        }
    }
}
