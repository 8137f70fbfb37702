//! What `doctor` says of each provider — shared by the `doctor` command and the server's
//! `GET /v1/providers` and `/health`: which providers there are, and each one's detection.

use std::sync::Arc;

use forge_domain::{ForgeError, ProviderId};
use forge_ports::{Detection, EnvSnapshot, ProcessRunner, Provider, ProviderSettings};

use crate::ProviderRegistry;
use crate::config::EffectiveConfig;

/// The ids of `registry`, as strings.
pub fn registered_names(registry: &ProviderRegistry) -> Vec<String> {
    registry.ids().map(|id| id.as_str().to_owned()).collect()
}

/// A provider built from its settings, outside an agent (for `doctor`, `events`, `/health`).
///
/// # Errors
/// [`ForgeError::InvalidRequest`] for a name that is no provider id, and what
/// [`ProviderRegistry::build`] refuses.
pub fn build_provider(
    registry: &ProviderRegistry,
    name: &str,
    settings: ProviderSettings,
) -> Result<Arc<dyn Provider>, ForgeError> {
    let id = ProviderId::new(name).map_err(|e| ForgeError::InvalidRequest {
        reason: e.to_string(),
    })?;
    registry.build(&id, settings)
}

/// The providers `doctor` looks at: the registered ones, and those configured by kind
/// (`kind = "acp"`).
pub fn provider_names(config: &EffectiveConfig, registry: &ProviderRegistry) -> Vec<String> {
    let mut names = registered_names(registry);
    names.extend(
        config
            .providers
            .iter()
            .filter(|(_, p)| p.kind.is_some())
            .map(|(name, _)| name.clone()),
    );
    names
}

/// What `doctor` says of each of `names`: found, version, authenticated, hints. `env` is
/// the shell's environment; each provider is detected with its own `env` over it, as a run
/// gets it.
///
/// # Errors
/// When a provider cannot be built from its settings.
pub async fn detect(
    config: &EffectiveConfig,
    registry: &ProviderRegistry,
    runner: &dyn ProcessRunner,
    names: &[String],
    env: &EnvSnapshot,
) -> Result<Vec<Detection>, ForgeError> {
    let mut providers = Vec::new();
    for name in names {
        let settings = config.settings(name);
        let mut run_env = env.clone();
        run_env.extend(settings.env.clone());
        let provider = build_provider(registry, name, settings)?;
        let mut detection = provider.detect(runner, &run_env).await;
        name.clone_into(&mut detection.provider);
        providers.push(detection);
    }
    Ok(providers)
}
