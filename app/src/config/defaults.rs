//! Built-in defaults, the lowest layer. Prices come from the one shipped table
//! (`pricing.rs`), the same for every provider; results computed from them say
//! `cost_source: estimated`. Override any model in a config file under
//! `[providers.<id>.pricing."<model>"]`.

use super::layer::{Layer, PartialConfig, PartialProvider};
use super::pricing::SHIPPED_PRICES;
use super::source::Source;

pub const DEFAULT_PROVIDER: &str = "claude";
/// A run with no other deadline is stopped after 30 minutes: a wedged CLI must not hold a
/// CI job forever.
pub const DEFAULT_GLOBAL_TIMEOUT_MS: u64 = 30 * 60 * 1000;
/// Each grace of the kill ladder (SIGINT → grace → SIGTERM → grace → SIGKILL).
pub const DEFAULT_KILL_GRACE_MS: u64 = 2000;

/// The providers the shipped pricing table is given to.
const PRICED_PROVIDERS: [&str; 3] = ["claude", "codex", "gemini"];

/// The defaults layer.
pub fn defaults() -> Layer {
    let mut config = PartialConfig {
        default_provider: Some(DEFAULT_PROVIDER.to_owned()),
        timeout_ms: Some(DEFAULT_GLOBAL_TIMEOUT_MS),
        kill_grace_ms: Some(DEFAULT_KILL_GRACE_MS),
        ..PartialConfig::default()
    };
    // One table, the same for every provider (`pricing.rs`).
    for provider in PRICED_PROVIDERS {
        let section: &mut PartialProvider =
            config.providers.entry(provider.to_owned()).or_default();
        for row in SHIPPED_PRICES {
            section.pricing.insert(row.model.to_owned(), row.price());
        }
    }
    Layer::new(Source::Default, config)
}
