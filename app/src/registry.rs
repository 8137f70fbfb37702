//! Providers by id. Adding a provider = one adapter crate + one `register` line in the
//! composition root. A provider configured by kind (`kind = "acp"`) takes the user's name
//! and is built by that kind's factory (`register_kind`).

use std::collections::BTreeMap;
use std::sync::Arc;

use forge_domain::{ForgeError, ProviderId};
use forge_ports::{Provider, ProviderSettings};

/// Builds a provider from its settings.
pub type ProviderFactory = Arc<dyn Fn(ProviderSettings) -> Arc<dyn Provider> + Send + Sync>;

/// Builds a provider of a kind under the name the user gave it.
pub type KindFactory = Arc<dyn Fn(ProviderId, ProviderSettings) -> Arc<dyn Provider> + Send + Sync>;

#[derive(Clone, Default)]
pub struct ProviderRegistry {
    factories: BTreeMap<ProviderId, ProviderFactory>,
    kinds: BTreeMap<String, KindFactory>,
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

    /// Registers (or replaces) the factory of providers configured with `kind = "<kind>"`.
    pub fn register_kind(
        mut self,
        kind: &str,
        factory: impl Fn(ProviderId, ProviderSettings) -> Arc<dyn Provider> + Send + Sync + 'static,
    ) -> Self {
        self.kinds.insert(kind.to_owned(), Arc::new(factory));
        self
    }

    /// The kinds a provider section may name.
    pub fn kinds(&self) -> impl Iterator<Item = &str> {
        self.kinds.keys().map(String::as_str)
    }

    pub fn ids(&self) -> impl Iterator<Item = &ProviderId> {
        self.factories.keys()
    }

    /// Builds the provider `id` with `settings`: by its kind's factory when the settings
    /// name a kind, else by its registered name.
    ///
    /// # Errors
    /// [`ForgeError::ProviderNotSupported`] when `id` is not registered;
    /// [`ForgeError::InvalidRequest`] when the settings name a kind that is not.
    pub fn build(
        &self,
        id: &ProviderId,
        settings: ProviderSettings,
    ) -> Result<Arc<dyn Provider>, ForgeError> {
        if let Some(kind) = &settings.kind {
            let factory = self
                .kinds
                .get(kind)
                .ok_or_else(|| ForgeError::InvalidRequest {
                    reason: format!(
                        "provider {id}: kind {kind:?} is not known (known: {})",
                        self.kinds.keys().cloned().collect::<Vec<_>>().join(", ")
                    ),
                })?;
            return Ok(factory(id.clone(), settings));
        }
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
