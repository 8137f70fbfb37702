//! The shipped pricing table is pure data and lives in `forge_domain::pricing::shipped`; the
//! configuration's defaults give every provider the whole of it.

pub use forge_domain::pricing::shipped::{PriceRow, SHIPPED_PRICES, shipped_pricing};

#[cfg(test)]
mod tests {
    use super::*;

    /// Every provider's defaults carry the same, whole table (no provider prices alone).
    #[test]
    fn every_provider_gets_the_same_table() {
        let defaults = super::super::defaults::defaults();
        let shipped = shipped_pricing();
        for provider in ["claude", "codex", "gemini"] {
            let section = &defaults.config.providers[provider];
            assert_eq!(section.pricing, shipped.models, "{provider}");
        }
    }
}
