//! Cost estimation for CLIs that report tokens but not money. The table lives in
//! configuration; an unknown model gets no cost rather than a guess.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::usage::Usage;

pub mod shipped;

/// USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ModelPrice {
    pub input_per_mtok: f64,
    #[serde(default)]
    pub cached_input_per_mtok: Option<f64>,
    pub output_per_mtok: f64,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PricingTable {
    pub models: BTreeMap<String, ModelPrice>,
}

impl PricingTable {
    /// Estimated USD for `usage` on `model`, or `None` when the model is not in the table.
    /// Cached input is billed at the cached rate when one is given, else at the input rate;
    /// `input_tokens` is taken to include cached tokens (as Codex and Gemini report it).
    /// Reasoning tokens are part of output for both.
    pub fn estimate(&self, model: &str, usage: &Usage) -> Option<f64> {
        let price = self.models.get(model)?;
        let cached = usage.cache_read_tokens.min(usage.input_tokens);
        let uncached = usage.input_tokens - cached;
        let cached_rate = price.cached_input_per_mtok.unwrap_or(price.input_per_mtok);
        let cost = (uncached as f64 * price.input_per_mtok
            + cached as f64 * cached_rate
            + usage.output_tokens as f64 * price.output_per_mtok)
            / 1_000_000.0;
        Some(cost)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimates_known_models_only() {
        let mut table = PricingTable::default();
        table.models.insert(
            "m".into(),
            ModelPrice {
                input_per_mtok: 1.0,
                cached_input_per_mtok: Some(0.1),
                output_per_mtok: 10.0,
            },
        );
        let usage = Usage {
            input_tokens: 1_000_000,
            cache_read_tokens: 500_000,
            output_tokens: 100_000,
            ..Usage::default()
        };
        let cost = table.estimate("m", &usage).unwrap();
        assert!((cost - (0.5 + 0.05 + 1.0)).abs() < 1e-9, "{cost}");
        assert_eq!(table.estimate("other", &usage), None);
    }
}
