//! The one pricing table forge ships: USD per million tokens for the models the pinned CLIs
//! use (against the fake model too), each row with where its numbers come from and when they
//! were taken. Every provider gets the same table ([`shipped_pricing`]); a config file
//! overrides or adds rows under `[providers.<id>.pricing."<model>"]`. Costs computed from it
//! are marked `estimated`; a model not in it gets no cost (the footer names the model).

use super::{ModelPrice, PricingTable};

/// One row of the shipped table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PriceRow {
    pub model: &'static str,
    pub input_per_mtok: f64,
    pub cached_input_per_mtok: f64,
    pub output_per_mtok: f64,
    /// Where the numbers come from.
    pub source: &'static str,
    /// When they were taken (YYYY-MM-DD).
    pub as_of: &'static str,
}

const fn row(
    model: &'static str,
    prices: (f64, f64, f64),
    source: &'static str,
    as_of: &'static str,
) -> PriceRow {
    PriceRow {
        model,
        input_per_mtok: prices.0,
        cached_input_per_mtok: prices.1,
        output_per_mtok: prices.2,
        source,
        as_of,
    }
}

const OPENAI_GPT5: &str = "OpenAI API list price of the GPT-5 family (estimate for newer names)";
const GOOGLE_FLASH: &str = "Google Gemini API list price of 2.5 Flash (estimate for newer names)";
const GOOGLE_LITE: &str =
    "Google Gemini API list price of 2.5 Flash-Lite (estimate for newer names)";

/// The shipped rows.
pub const SHIPPED_PRICES: &[PriceRow] = &[
    // claude reports its own cost; this row prices its tokens where it does not (a result
    // cut off before `total_cost_usd`): the rates claude 2.1.330 itself applies.
    row(
        "claude-opus-5-5",
        (4.0, 0.4, 20.0),
        "claude 2.1.330's own costUSD for the model (costBasis list)",
        "2026-11-25",
    ),
    row("gpt-5.5", (1.25, 0.125, 10.0), OPENAI_GPT5, "2026-11-25"),
    row("gpt-5", (1.25, 0.125, 10.0), OPENAI_GPT5, "2026-11-25"),
    row(
        "gpt-5-codex",
        (1.25, 0.125, 10.0),
        OPENAI_GPT5,
        "2026-11-25",
    ),
    row("gpt-5-mini", (0.25, 0.025, 2.0), OPENAI_GPT5, "2026-11-25"),
    row(
        "gemini-3.8-flash",
        (0.30, 0.03, 2.50),
        GOOGLE_FLASH,
        "2026-11-25",
    ),
    row(
        "gemini-3.5-flash-lite",
        (0.10, 0.01, 0.40),
        GOOGLE_LITE,
        "2026-11-25",
    ),
    row(
        "gemini-2.5-pro",
        (1.25, 0.125, 10.0),
        "Google Gemini API list price of 2.5 Pro",
        "2026-11-25",
    ),
    row(
        "gemini-2.5-flash",
        (0.30, 0.03, 2.50),
        "Google Gemini API list price of 2.5 Flash",
        "2026-11-25",
    ),
    row(
        "gemini-2.5-flash-lite",
        (0.10, 0.01, 0.40),
        "Google Gemini API list price of 2.5 Flash-Lite",
        "2026-11-25",
    ),
];

impl PriceRow {
    pub fn price(&self) -> ModelPrice {
        ModelPrice {
            input_per_mtok: self.input_per_mtok,
            cached_input_per_mtok: Some(self.cached_input_per_mtok),
            output_per_mtok: self.output_per_mtok,
        }
    }
}

/// The shipped table, the same for every provider.
pub fn shipped_pricing() -> PricingTable {
    PricingTable {
        models: SHIPPED_PRICES
            .iter()
            .map(|r| (r.model.to_owned(), r.price()))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_says_where_from_and_when_and_models_are_unique() {
        let mut seen = std::collections::BTreeSet::new();
        for r in SHIPPED_PRICES {
            assert!(seen.insert(r.model), "{} twice", r.model);
            assert!(!r.source.is_empty(), "{}", r.model);
            assert_eq!(r.as_of.len(), 10, "{}: {}", r.model, r.as_of);
            assert!(r.cached_input_per_mtok <= r.input_per_mtok, "{}", r.model);
            assert!(
                r.input_per_mtok > 0.0 && r.output_per_mtok > 0.0,
                "{}",
                r.model
            );
        }
    }

    /// The models the pinned CLIs ask the fake model for (its request logs): each priced.
    #[test]
    fn the_models_of_the_pinned_clis_are_priced() {
        let table = shipped_pricing();
        for model in [
            "claude-opus-5-5",
            "gpt-5.5",
            "gemini-3.8-flash",
            "gemini-3.5-flash-lite",
        ] {
            assert!(table.models.contains_key(model), "{model}");
        }
        assert!(!table.models.contains_key("mystery-model"));
    }
}
