//! Cost estimation and the "main model" of a run. Gemini reports tokens per model (keyed by
//! the model version the API answered with, the `auto` router's classifier model included)
//! and never money, so forge prices them from the configured table.

use forge_domain::{PricingTable, Usage};

/// Tokens one model used in a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelUsage {
    pub model: String,
    pub usage: Usage,
}

/// Estimated USD for a run:
/// 1. every model in the per-model stats priced from the table (router calls included);
/// 2. else the requested model priced on the run's total;
/// 3. else the main model (see [`main_model`]) priced on the total;
///
/// `None` when no price is known: an unknown model gets no cost rather than a guess.
pub fn estimate(
    pricing: &PricingTable,
    requested_model: Option<&str>,
    models: &[ModelUsage],
    total: &Usage,
) -> Option<f64> {
    if pricing.models.is_empty() {
        return None;
    }
    if !models.is_empty() {
        let per_model: Option<f64> = models
            .iter()
            .map(|m| pricing.estimate(&m.model, &m.usage))
            .sum();
        if per_model.is_some() {
            return per_model;
        }
    }
    if let Some(model) = requested_model.filter(|m| *m != "auto") {
        if let Some(cost) = pricing.estimate(model, total) {
            return Some(cost);
        }
    }
    main_model(models).and_then(|model| pricing.estimate(model, total))
}

/// The model that did the run's work: the one with the most tokens. With the default `auto`
/// model the stats also hold the routing classifier (a small flash-lite model, one short
/// call per prompt), which this skips.
pub fn main_model(models: &[ModelUsage]) -> Option<&str> {
    models
        .iter()
        .max_by_key(|m| m.usage.input_tokens.saturating_add(m.usage.output_tokens))
        .map(|m| m.model.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;
    use forge_domain::ModelPrice;

    fn usage(input: u64, output: u64) -> Usage {
        Usage {
            input_tokens: input,
            output_tokens: output,
            ..Usage::default()
        }
    }

    fn table(models: &[&str]) -> PricingTable {
        let mut t = PricingTable::default();
        for m in models {
            t.models.insert(
                (*m).to_owned(),
                ModelPrice {
                    input_per_mtok: 1.0,
                    cached_input_per_mtok: None,
                    output_per_mtok: 10.0,
                },
            );
        }
        t
    }

    #[test]
    fn prices_each_model_or_falls_back() {
        let models = vec![
            ModelUsage {
                model: "lite".into(),
                usage: usage(1_000_000, 0),
            },
            ModelUsage {
                model: "main".into(),
                usage: usage(2_000_000, 100_000),
            },
        ];
        let total = usage(3_000_000, 100_000);
        let check = |t: &PricingTable, requested: Option<&str>, want: Option<f64>| {
            let got = estimate(t, requested, &models, &total);
            match (got, want) {
                (Some(g), Some(w)) => assert!((g - w).abs() < 1e-9, "{g} != {w}"),
                (g, w) => assert_eq!(g, w),
            }
        };
        check(&table(&["lite", "main"]), None, Some(1.0 + 2.0 + 1.0));
        check(&table(&["main"]), None, Some(3.0 + 1.0));
        check(&table(&["req"]), Some("req"), Some(4.0));
        check(&table(&["other"]), Some("auto"), None);
        check(&PricingTable::default(), Some("main"), None);
        assert_eq!(main_model(&models), Some("main"));
    }
}
