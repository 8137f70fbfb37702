//! Providers by id. Adding a provider = one adapter crate + one `register` line in the
//! composition root.

use std::collections::BTreeMap;
use std::sync::Arc;

use forge_domain::{ForgeError, ProviderId};
use forge_ports::{Provider, ProviderSettings};

/// Builds a provider from its settings.
pub type ProviderFactory = Arc<dyn Fn(ProviderSettings) -> Arc<dyn Provider> + Send + Sync>;

#[derive(Clone, Default)]
pub struct ProviderRegistry {
    factories: BTreeMap<ProviderId, ProviderFactory>,
}

impl ProviderRegistry {
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers (or replaces) the factory for `id`.
    pub fn register(
        mut self,
        id: ProviderId,
        factory: impl Fn(ProviderSettings) -> Arc<dyn Provider> + Send + Sync + 'static,
    ) -> Self {
        self.factories.insert(id, Arc::new(factory));
        self
    }

    pub fn ids(&self) -> impl Iterator<Item = &ProviderId> {
        self.factories.keys()
    }

    /// Builds the provider `id` with `settings`.
    ///
    /// # Errors
    /// [`ForgeError::ProviderNotSupported`] when `id` is not registered.
    pub fn build(
        &self,
        id: &ProviderId,
        settings: ProviderSettings,
    ) -> Result<Arc<dyn Provider>, ForgeError> {
        self.factories
            .get(id)
            .map(|f| f(settings))
            .ok_or_else(|| self.not_supported(id.as_str()))
    }

    /// The error for an unknown provider name, listing the registered ones.
    pub fn not_supported(&self, name: &str) -> ForgeError {
        ForgeError::ProviderNotSupported {
            provider: name.to_owned(),
            registered: self
                .factories
                .keys()
                .map(ProviderId::as_str)
                .collect::<Vec<_>>()
                .join(", "),
        }
    }
}
