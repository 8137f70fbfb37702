//! Folding layers into the effective configuration, and reading it back as provider
//! settings and a kill ladder.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use forge_domain::{ModelPrice, OnRateLimit, PricingTable};
use forge_ports::{KillLadder, ProviderSettings};
use serde::Serialize;

use super::defaults::DEFAULT_PROVIDER;
use super::error::ConfigError;
use super::layer::{Layer, PartialProvider};
use super::source::{Source, Sourced};

/// The configuration in force, every value with its source.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EffectiveConfig {
    pub default_provider: Sourced<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<Sourced<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kill_grace_ms: Option<Sourced<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on_rate_limit: Option<Sourced<OnRateLimit>>,
    pub providers: BTreeMap<String, EffectiveProvider>,
    /// Configured command tools, by name.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub tools: BTreeMap<String, Sourced<super::tools::ToolConfig>>,
}

/// One provider's section in force. Unset keys are absent from `config show`.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct EffectiveProvider {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub binary: Option<Sourced<PathBuf>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub args: Option<Sourced<Vec<String>>>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, Sourced<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub home: Option<Sourced<PathBuf>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub isolate_home: Option<Sourced<bool>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub copy_user_auth: Option<Sourced<bool>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<Sourced<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix_model: Option<Sourced<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<Sourced<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_turns: Option<Sourced<u32>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_budget_usd: Option<Sourced<f64>>,
    /// A budget across runs. Recorded; enforcement comes with the guarded executor.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_total_cost_usd: Option<Sourced<f64>>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub pricing: BTreeMap<String, Sourced<ModelPrice>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<Sourced<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<Sourced<Vec<String>>>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub modes: BTreeMap<String, Sourced<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auth_method: Option<Sourced<String>>,
    /// The first source that mentioned this provider (for error messages).
    #[serde(skip)]
    pub declared_in: Option<Source>,
}

/// Folds `layers`, lowest priority first: a later layer's value replaces an earlier one;
/// `env` and `pricing` are merged per variable and per model.
pub fn merge(layers: &[Layer]) -> EffectiveConfig {
    let mut out = EffectiveConfig {
        default_provider: Sourced::new(DEFAULT_PROVIDER.to_owned(), Source::Default),
        timeout_ms: None,
        kill_grace_ms: None,
        on_rate_limit: None,
        providers: BTreeMap::new(),
        tools: BTreeMap::new(),
    };
    for layer in layers {
        let src = &layer.source;
        let c = &layer.config;
        if let Some(v) = &c.default_provider {
            out.default_provider = Sourced::new(v.clone(), src.clone());
        }
        set(&mut out.timeout_ms, c.timeout_ms, src);
        set(&mut out.kill_grace_ms, c.kill_grace_ms, src);
        for (name, tool) in &c.tools {
            out.tools
                .insert(name.clone(), Sourced::new(tool.clone(), src.clone()));
        }
        set(&mut out.on_rate_limit, c.on_rate_limit, src);
        for (id, section) in &c.providers {
            let target = out.providers.entry(id.clone()).or_default();
            if target.declared_in.is_none() && src != &Source::Default {
                target.declared_in = Some(src.clone());
            }
            merge_provider(target, section, src);
        }
    }
    out
}

fn set<T: Clone>(slot: &mut Option<Sourced<T>>, value: Option<T>, src: &Source) {
    if let Some(v) = value {
        *slot = Some(Sourced::new(v, src.clone()));
    }
}

fn merge_provider(t: &mut EffectiveProvider, p: &PartialProvider, src: &Source) {
    set(&mut t.binary, p.binary.clone(), src);
    set(&mut t.args, p.args.clone(), src);
    for (k, v) in &p.env {
        t.env
            .insert(k.clone(), Sourced::new(v.clone(), src.clone()));
    }
    set(&mut t.home, p.home.clone(), src);
    set(&mut t.isolate_home, p.isolate_home, src);
    set(&mut t.copy_user_auth, p.copy_user_auth, src);
    set(&mut t.model, p.model.clone(), src);
    set(&mut t.fix_model, p.fix_model.clone(), src);
    set(&mut t.timeout_ms, p.timeout_ms, src);
    set(&mut t.max_turns, p.max_turns, src);
    set(&mut t.max_budget_usd, p.max_budget_usd, src);
    set(&mut t.max_total_cost_usd, p.max_total_cost_usd, src);
    for (model, price) in &p.pricing {
        t.pricing
            .insert(model.clone(), Sourced::new(*price, src.clone()));
    }
    set(&mut t.kind, p.kind.clone(), src);
    set(&mut t.command, p.command.clone(), src);
    set(&mut t.auth_method, p.auth_method.clone(), src);
    for (mode, id) in &p.modes {
        t.modes
            .insert(mode.clone(), Sourced::new(id.clone(), src.clone()));
    }
}

fn origin(source: Option<&Source>) -> String {
    match source {
        Some(Source::File(path)) => format!("file {}", path.display()),
        Some(Source::Env(name)) => format!("environment variable {name}"),
        Some(Source::Flag) => "command-line flags".to_owned(),
        Some(Source::Default) | None => "defaults".to_owned(),
    }
}

impl EffectiveConfig {
    /// Checks that the default provider and every configured provider are registered, or
    /// configured by one of the `kinds` the registry knows.
    ///
    /// # Errors
    /// [`ConfigError`] naming where the unknown provider or kind was configured.
    pub fn validate(&self, registered: &[&str], kinds: &[&str]) -> Result<(), ConfigError> {
        let list = registered.join(", ");
        for (id, section) in &self.providers {
            if let Some(kind) = &section.kind {
                if !kinds.contains(&kind.value.as_str()) {
                    return Err(ConfigError::new(
                        origin(Some(&kind.source)),
                        format!("providers.{id}.kind"),
                        format!(
                            "unknown kind {:?} (known: {})",
                            kind.value,
                            kinds.join(", ")
                        ),
                    ));
                }
            }
        }
        let by_kind = |id: &str| self.providers.get(id).is_some_and(|p| p.kind.is_some());
        if !registered.contains(&self.default_provider.value.as_str())
            && !by_kind(&self.default_provider.value)
        {
            return Err(ConfigError::new(
                origin(Some(&self.default_provider.source)),
                "default_provider",
                format!(
                    "provider {:?} is not registered (registered: {list})",
                    self.default_provider.value
                ),
            ));
        }
        for (id, section) in &self.providers {
            if !registered.contains(&id.as_str()) && section.kind.is_none() {
                return Err(ConfigError::new(
                    origin(section.declared_in.as_ref()),
                    format!("providers.{id}"),
                    format!("provider {id:?} is not registered (registered: {list})"),
                ));
            }
        }
        Ok(())
    }

    /// Adds an empty section for each of `ids` that has none, so `config show` lists every
    /// registered provider.
    pub fn with_providers<'a>(mut self, ids: impl IntoIterator<Item = &'a str>) -> Self {
        for id in ids {
            self.providers.entry(id.to_owned()).or_default();
        }
        self
    }

    /// The section of `id` (empty when none is configured).
    pub fn provider(&self, id: &str) -> EffectiveProvider {
        self.providers.get(id).cloned().unwrap_or_default()
    }

    /// The settings the adapter of `id` is built with.
    pub fn settings(&self, id: &str) -> ProviderSettings {
        let p = self.provider(id);
        let value = |s: &Option<Sourced<bool>>| s.as_ref().is_some_and(|s| s.value);
        ProviderSettings {
            binary: p.binary.map(|s| s.value),
            args: p.args.map(|s| s.value).unwrap_or_default(),
            env: p.env.into_iter().map(|(k, v)| (k, v.value)).collect(),
            home: p.home.map(|s| s.value),
            isolate_home: value(&p.isolate_home),
            copy_user_auth: value(&p.copy_user_auth),
            model: p.model.map(|s| s.value),
            timeout_ms: p.timeout_ms.map(|s| s.value),
            pricing: PricingTable {
                models: p.pricing.into_iter().map(|(k, v)| (k, v.value)).collect(),
            },
            kind: p.kind.map(|s| s.value),
            command: p.command.map(|s| s.value).unwrap_or_default(),
            modes: p.modes.into_iter().map(|(k, v)| (k, v.value)).collect(),
            auth_method: p.auth_method.map(|s| s.value),
        }
    }

    /// The kill ladder: both graces `kill_grace_ms`, or the port's default.
    pub fn kill_ladder(&self) -> KillLadder {
        match &self.kill_grace_ms {
            Some(grace) => KillLadder {
                interrupt_grace: Duration::from_millis(grace.value),
                terminate_grace: Duration::from_millis(grace.value),
            },
            None => KillLadder::default(),
        }
    }

    /// The global fallback deadline.
    pub fn global_timeout(&self) -> Option<Duration> {
        self.timeout_ms
            .as_ref()
            .map(|t| Duration::from_millis(t.value))
    }
}

#[cfg(test)]
mod tests {
    use super::super::defaults::defaults;
    use super::super::layer::PartialConfig;
    use super::*;

    #[test]
    fn later_layers_win_and_maps_merge_per_key() {
        let file = Source::File("/u/config.toml".into());
        let mut user = PartialProvider::default();
        user.env.insert("A".into(), "user".into());
        user.env.insert("B".into(), "user".into());
        user.model = Some("m-user".into());
        let mut flag = PartialProvider::default();
        flag.env.insert("B".into(), "flag".into());
        let merged = merge(&[
            defaults(),
            Layer::provider(file.clone(), "codex", user),
            Layer::new(
                Source::Env("FORGE_PROVIDER".into()),
                PartialConfig {
                    default_provider: Some("codex".into()),
                    ..PartialConfig::default()
                },
            ),
            Layer::provider(Source::Flag, "codex", flag),
        ]);
        assert_eq!(
            merged.default_provider.source,
            Source::Env("FORGE_PROVIDER".into())
        );
        let codex = &merged.providers["codex"];
        assert_eq!(
            codex.env["A"],
            Sourced::new("user".to_owned(), file.clone())
        );
        assert_eq!(
            codex.env["B"],
            Sourced::new("flag".to_owned(), Source::Flag)
        );
        assert_eq!(codex.declared_in, Some(file));
        assert_eq!(codex.pricing["gpt-5.5"].source, Source::Default);
        let settings = merged.settings("codex");
        assert_eq!(settings.model.as_deref(), Some("m-user"));
        assert!(settings.pricing.models.contains_key("gpt-5.5"));
        assert_eq!(merged.kill_ladder().interrupt_grace, Duration::from_secs(2));
    }

    #[test]
    fn unregistered_providers_are_refused_with_their_origin() {
        let merged = merge(&[
            defaults(),
            Layer::provider(
                Source::File("/w/forge.toml".into()),
                "aider",
                PartialProvider::default(),
            ),
        ]);
        let err = merged
            .validate(&["claude", "codex", "gemini"], &["acp"])
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "bad configuration in file /w/forge.toml: key `providers.aider`: provider \"aider\" is not registered (registered: claude, codex, gemini)"
        );
    }

    #[test]
    fn providers_by_kind_need_no_registration_but_a_known_kind() {
        let by_kind = |kind: &str| {
            merge(&[
                defaults(),
                Layer::provider(
                    Source::File("/w/forge.toml".into()),
                    "aider",
                    PartialProvider {
                        kind: Some(kind.to_owned()),
                        command: Some(vec!["aider".to_owned()]),
                        ..PartialProvider::default()
                    },
                ),
            ])
        };
        let registered = ["claude", "codex", "gemini"];
        by_kind("acp").validate(&registered, &["acp"]).unwrap();
        let settings = by_kind("acp").settings("aider");
        assert_eq!(settings.kind.as_deref(), Some("acp"));
        assert_eq!(settings.command, ["aider"]);
        let err = by_kind("mcp").validate(&registered, &["acp"]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "bad configuration in file /w/forge.toml: key `providers.aider.kind`: unknown kind \"mcp\" (known: acp)"
        );
    }
}
