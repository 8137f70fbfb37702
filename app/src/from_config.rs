//! Building a [`CodeAgent`] from an [`EffectiveConfig`]: the same configuration drives the
//! CLI and library users, so swapping providers needs no code change.
//!
//! ```text
//! let config = merge(&[defaults(), parse_file(&text, path)?]);
//! let agent = CodeAgent::from_config(&config, registry, runtime)?;
//! let mut request = agent.request("Fix the failing test");
//! apply_request_defaults(&config, &mut request);
//! let result = agent.run(request).await;
//! ```

use forge_domain::{ExecutionRequest, ForgeError};

use crate::agent::{CodeAgent, CodeAgentBuilder};
use crate::config::EffectiveConfig;
use crate::registry::ProviderRegistry;
use crate::runtime::Runtime;

impl CodeAgent {
    /// An agent over `registry` configured by `config`: each registered provider built with
    /// its section's settings, the default provider, the global timeout and the kill ladder.
    ///
    /// # Errors
    /// [`ForgeError::InvalidRequest`] (carrying the [`crate::config::ConfigError`] text) when
    /// the configuration names a provider that is not registered;
    /// [`ForgeError::ProviderNotSupported`] when the registry is empty.
    pub fn from_config(
        config: &EffectiveConfig,
        registry: ProviderRegistry,
        runtime: Runtime,
    ) -> Result<CodeAgent, ForgeError> {
        Self::builder_from_config(config, registry, runtime)?.build()
    }

    /// The builder [`CodeAgent::from_config`] uses, for callers that add to it (a redactor,
    /// a line cap) before building.
    ///
    /// # Errors
    /// As [`CodeAgent::from_config`], except the empty-registry check, which `build` makes.
    pub fn builder_from_config(
        config: &EffectiveConfig,
        registry: ProviderRegistry,
        runtime: Runtime,
    ) -> Result<CodeAgentBuilder, ForgeError> {
        let ids: Vec<String> = registry.ids().map(|id| id.as_str().to_owned()).collect();
        let registered: Vec<&str> = ids.iter().map(String::as_str).collect();
        let kinds: Vec<String> = registry.kinds().map(str::to_owned).collect();
        let kinds: Vec<&str> = kinds.iter().map(String::as_str).collect();
        config.validate(&registered, &kinds)?;
        let runner = std::sync::Arc::clone(&runtime.runner);
        let mut builder = CodeAgent::builder(runtime, registry)
            .provider(config.default_provider.value.clone())
            .kill_ladder(config.kill_ladder());
        if let Some(policy) = &config.on_rate_limit {
            builder = builder.on_rate_limit(policy.value);
        }
        if let Some(timeout) = config.global_timeout() {
            builder = builder.global_timeout(timeout);
        }
        for id in &registered {
            builder = builder.provider_settings(*id, config.settings(id));
        }
        // Providers configured by kind (`kind = "acp"`), under the names their users chose.
        for (id, section) in &config.providers {
            if section.kind.is_some() {
                builder = builder.provider_settings(id.clone(), config.settings(id));
            }
        }
        for (name, configured) in &config.tools {
            let tool = &configured.value;
            let handler = crate::command_tool::CommandTool::new(
                std::sync::Arc::clone(&runner),
                name.clone(),
                tool.command.clone(),
                std::time::Duration::from_millis(tool.tool.timeout_ms()),
            );
            builder = builder.tool_handler(tool.tool.clone(), std::sync::Arc::new(handler));
        }
        Ok(builder)
    }
}

/// Fills the request-level knobs the configuration holds for the request's provider
/// (`max_turns`, `max_budget_usd`) where the request leaves them unset. The model and the
/// provider timeout travel in the provider's settings instead.
pub fn apply_request_defaults(config: &EffectiveConfig, request: &mut ExecutionRequest) {
    let section = config.provider(request.provider.as_str());
    if request.max_turns.is_none() {
        request.max_turns = section.max_turns.map(|s| s.value);
    }
    if request.max_budget_usd.is_none() {
        request.max_budget_usd = section.max_budget_usd.map(|s| s.value);
    }
}
