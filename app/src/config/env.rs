//! The environment's layers: `FORGE_*` variables, and the seed's `CLAUDE_CLI_*` names for
//! the claude provider. One layer per variable, so each value carries its own name.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::error::ConfigError;
use super::layer::{Layer, PartialConfig, PartialProvider};
use super::source::Source;

/// A per-provider key settable from the environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Binary,
    Model,
    FixModel,
    Home,
    IsolateHome,
    TimeoutMs,
    MaxTurns,
    MaxBudgetUsd,
    MaxTotalCostUsd,
}

/// `FORGE_<PROVIDER>_<SUFFIX>` suffixes.
const FORGE_FIELDS: &[(&str, Field)] = &[
    ("BINARY", Field::Binary),
    ("MODEL", Field::Model),
    ("FIX_MODEL", Field::FixModel),
    ("HOME", Field::Home),
    ("ISOLATE_HOME", Field::IsolateHome),
    ("TIMEOUT_MS", Field::TimeoutMs),
    ("MAX_TURNS", Field::MaxTurns),
    ("MAX_BUDGET_USD", Field::MaxBudgetUsd),
    ("MAX_TOTAL_COST_USD", Field::MaxTotalCostUsd),
];

/// The seed's names, all for the claude provider.
const CLAUDE_SEED: &[(&str, Field)] = &[
    ("CLAUDE_CLI_PATH", Field::Binary),
    ("CLAUDE_CLI_MODEL", Field::Model),
    ("CLAUDE_CLI_FIX_MODEL", Field::FixModel),
    ("CLAUDE_CLI_MAX_TURNS", Field::MaxTurns),
    ("CLAUDE_CLI_TIMEOUT_MS", Field::TimeoutMs),
    ("CLAUDE_CLI_MAX_BUDGET_USD", Field::MaxBudgetUsd),
    ("CLAUDE_CLI_MAX_TOTAL_COST_USD", Field::MaxTotalCostUsd),
];

/// The environment's layers, lowest priority first: the seed's `CLAUDE_CLI_*` names, then
/// `FORGE_*` (so `FORGE_CLAUDE_MODEL` wins over `CLAUDE_CLI_MODEL`). Only variables of the
/// `known_providers` are read, so an unrelated `FORGE_SOMETHING_MODEL` is not an error.
/// An empty variable counts as unset.
///
/// # Errors
/// [`ConfigError`] naming the variable when its value cannot be read (`FORGE_TIMEOUT_MS=soon`).
pub fn env_layers(
    env: &BTreeMap<String, String>,
    known_providers: &[&str],
) -> Result<Vec<Layer>, ConfigError> {
    let mut layers = Vec::new();
    let get = |name: &str| env.get(name).filter(|v| !v.is_empty());

    if known_providers.contains(&"claude") {
        for (name, field) in CLAUDE_SEED {
            if let Some(value) = get(name) {
                layers.push(provider_layer(name, "claude", *field, value)?);
            }
        }
    }
    if let Some(value) = get("FORGE_PROVIDER") {
        layers.push(global("FORGE_PROVIDER", |c| {
            c.default_provider = Some(value.clone());
            Ok(())
        })?);
    }
    if let Some(value) = get("FORGE_TIMEOUT_MS") {
        layers.push(global("FORGE_TIMEOUT_MS", |c| {
            c.timeout_ms = Some(number("FORGE_TIMEOUT_MS", "timeout_ms", value)?);
            Ok(())
        })?);
    }
    if let Some(value) = get("FORGE_KILL_GRACE_MS") {
        layers.push(global("FORGE_KILL_GRACE_MS", |c| {
            c.kill_grace_ms = Some(number("FORGE_KILL_GRACE_MS", "kill_grace_ms", value)?);
            Ok(())
        })?);
    }
    if let Some(value) = get("FORGE_ON_RATE_LIMIT") {
        layers.push(global("FORGE_ON_RATE_LIMIT", |c| {
            c.on_rate_limit = Some(value.parse().map_err(|reason: String| {
                ConfigError::new(origin("FORGE_ON_RATE_LIMIT"), "on_rate_limit", reason)
            })?);
            Ok(())
        })?);
    }
    for id in known_providers {
        let upper = id.to_ascii_uppercase().replace('-', "_");
        for (suffix, field) in FORGE_FIELDS {
            let name = format!("FORGE_{upper}_{suffix}");
            if let Some(value) = get(&name) {
                layers.push(provider_layer(&name, id, *field, value)?);
            }
        }
    }
    Ok(layers)
}

fn global(
    name: &str,
    set: impl FnOnce(&mut PartialConfig) -> Result<(), ConfigError>,
) -> Result<Layer, ConfigError> {
    let mut config = PartialConfig::default();
    set(&mut config)?;
    Ok(Layer::new(Source::Env(name.to_owned()), config))
}

fn provider_layer(name: &str, id: &str, field: Field, value: &str) -> Result<Layer, ConfigError> {
    let key = |k: &str| format!("providers.{id}.{k}");
    let mut p = PartialProvider::default();
    match field {
        Field::Binary => p.binary = Some(PathBuf::from(value)),
        Field::Model => p.model = Some(value.to_owned()),
        Field::FixModel => p.fix_model = Some(value.to_owned()),
        Field::Home => p.home = Some(PathBuf::from(value)),
        Field::IsolateHome => p.isolate_home = Some(boolean(name, &key("isolate_home"), value)?),
        Field::TimeoutMs => p.timeout_ms = Some(number(name, &key("timeout_ms"), value)?),
        Field::MaxTurns => p.max_turns = Some(number(name, &key("max_turns"), value)?),
        Field::MaxBudgetUsd => p.max_budget_usd = Some(money(name, &key("max_budget_usd"), value)?),
        Field::MaxTotalCostUsd => {
            p.max_total_cost_usd = Some(money(name, &key("max_total_cost_usd"), value)?);
        }
    }
    Ok(Layer::provider(Source::Env(name.to_owned()), id, p))
}

fn origin(name: &str) -> String {
    format!("environment variable {name}")
}

fn number<T: std::str::FromStr>(name: &str, key: &str, value: &str) -> Result<T, ConfigError> {
    value.trim().parse().map_err(|_| {
        ConfigError::new(
            origin(name),
            key,
            format!("expected a non-negative integer, found {value:?}"),
        )
    })
}

fn money(name: &str, key: &str, value: &str) -> Result<f64, ConfigError> {
    match value.trim().parse::<f64>() {
        Ok(n) if n.is_finite() && n >= 0.0 => Ok(n),
        _ => Err(ConfigError::new(
            origin(name),
            key,
            format!("expected a non-negative number, found {value:?}"),
        )),
    }
}

fn boolean(name: &str, key: &str, value: &str) -> Result<bool, ConfigError> {
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => Err(ConfigError::new(
            origin(name),
            key,
            format!("expected true or false, found {value:?}"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn seed_names_map_to_claude_and_forge_names_come_later() {
        let layers = env_layers(
            &env(&[
                ("CLAUDE_CLI_MODEL", "opus"),
                ("FORGE_CLAUDE_MODEL", "sonnet"),
                ("CLAUDE_CLI_MAX_TOTAL_COST_USD", "12.5"),
                ("FORGE_CODEX_TIMEOUT_MS", "7"),
                ("FORGE_OTHER_MODEL", "ignored"),
                ("FORGE_PROVIDER", ""),
            ]),
            &["claude", "codex"],
        )
        .unwrap();
        let sources: Vec<String> = layers.iter().map(|l| l.source.to_string()).collect();
        assert_eq!(
            sources,
            [
                "env:CLAUDE_CLI_MODEL",
                "env:CLAUDE_CLI_MAX_TOTAL_COST_USD",
                "env:FORGE_CLAUDE_MODEL",
                "env:FORGE_CODEX_TIMEOUT_MS"
            ]
        );
        assert_eq!(
            layers[1].config.providers["claude"].max_total_cost_usd,
            Some(12.5)
        );
        assert_eq!(layers[3].config.providers["codex"].timeout_ms, Some(7));
    }

    #[test]
    fn bad_values_name_the_variable() {
        let err = env_layers(&env(&[("CLAUDE_CLI_MAX_TURNS", "many")]), &["claude"]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "bad configuration in environment variable CLAUDE_CLI_MAX_TURNS: key `providers.claude.max_turns`: expected a non-negative integer, found \"many\""
        );
    }
}
