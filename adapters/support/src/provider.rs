//! The parts of a `forge_ports::Provider` every adapter writes the same way.

pub use forge_domain::ProviderId;
pub use forge_ports::ProviderSettings;

/// `id` as a checked [`ProviderId`], for an adapter's constant registry name.
///
/// # Panics
/// When `id` breaks the provider id rules: a programming error each adapter's tests catch.
#[expect(
    clippy::expect_used,
    reason = "adapters pass their constant registry name, checked by their tests"
)]
pub fn checked_id(id: &'static str) -> ProviderId {
    ProviderId::new(id).expect("an adapter's registry name is a valid provider id")
}

/// Inside an `impl Provider for X` whose `settings` field holds the `ProviderSettings`:
/// `id` (from `$id`, a `ProviderId` expression), `install_hint` (from `$hint`, a `&str`)
/// and `settings`.
#[macro_export]
macro_rules! provider_basics {
    (id: $id:expr, install_hint: $hint:expr $(,)?) => {
        fn id(&self) -> $crate::provider::ProviderId {
            $id
        }

        fn install_hint(&self) -> String {
            ($hint).to_owned()
        }

        fn settings(&self) -> &$crate::provider::ProviderSettings {
            &self.settings
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_names_become_ids() {
        assert_eq!(checked_id("claude").as_str(), "claude");
    }
}
