//! Built-in defaults, the lowest layer. Prices are **estimates** (USD per million tokens,
//! list prices as far as we know them) for CLIs that report tokens but not cost (codex,
//! gemini); results computed from them say `cost_source: estimated`. Override any model in
//! a config file under `[providers.<id>.pricing."<model>"]`.

use forge_domain::ModelPrice;

use super::layer::{Layer, PartialConfig, PartialProvider};
use super::source::Source;

pub const DEFAULT_PROVIDER: &str = "claude";
/// A run with no other deadline is stopped after 30 minutes: a wedged CLI must not hold a
/// CI job forever.
pub const DEFAULT_GLOBAL_TIMEOUT_MS: u64 = 30 * 60 * 1000;
/// Each grace of the kill ladder (SIGINT → grace → SIGTERM → grace → SIGKILL).
pub const DEFAULT_KILL_GRACE_MS: u64 = 2000;

/// (provider, model, input, cached input, output), USD per million tokens, estimates.
const PRICES: &[(&str, &str, f64, f64, f64)] = &[
    ("codex", "gpt-5.5", 1.25, 0.125, 10.0),
    ("codex", "gpt-5", 1.25, 0.125, 10.0),
    ("codex", "gpt-5-codex", 1.25, 0.125, 10.0),
    ("codex", "gpt-5-mini", 0.25, 0.025, 2.0),
    ("gemini", "gemini-3.8-flash", 0.30, 0.03, 2.50),
    ("gemini", "gemini-3.5-flash-lite", 0.10, 0.01, 0.40),
    ("gemini", "gemini-2.5-pro", 1.25, 0.125, 10.0),
    ("gemini", "gemini-2.5-flash", 0.30, 0.03, 2.50),
    ("gemini", "gemini-2.5-flash-lite", 0.10, 0.01, 0.40),
];

/// The defaults layer.
pub fn defaults() -> Layer {
    let mut config = PartialConfig {
        default_provider: Some(DEFAULT_PROVIDER.to_owned()),
        timeout_ms: Some(DEFAULT_GLOBAL_TIMEOUT_MS),
        kill_grace_ms: Some(DEFAULT_KILL_GRACE_MS),
        ..PartialConfig::default()
    };
    for (provider, model, input, cached, output) in PRICES {
        let section: &mut PartialProvider =
            config.providers.entry((*provider).to_owned()).or_default();
        section.pricing.insert(
            (*model).to_owned(),
            ModelPrice {
                input_per_mtok: *input,
                cached_input_per_mtok: Some(*cached),
                output_per_mtok: *output,
            },
        );
    }
    Layer::new(Source::Default, config)
}
