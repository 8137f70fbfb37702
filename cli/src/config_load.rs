//! Reading the configuration sources (files, environment, flags) into layers for
//! `forge_app::config`, which merges them. All file and environment reading happens here.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use forge_app::config::{
    CONFIG_PATH_ENV, ConfigError, EffectiveConfig, Layer, PROJECT_FILE, PartialConfig,
    PartialProvider, Source, USER_DIR, USER_FILE, defaults, env_layers, merge, parse_file,
};

use crate::args::ConfigFlags;
use crate::compose;

/// forge's own environment, as the layers read it (names that are not UTF-8 left out).
fn process_env() -> BTreeMap<String, String> {
    std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.to_string_lossy().into_owned())))
        .collect()
}

/// The effective configuration for `flags`, from the real environment and files, checked
/// against the providers of [`compose::registry`].
///
/// # Errors
/// [`ConfigError`] naming the file, variable or flag, the key and the reason.
pub fn load_config(flags: &ConfigFlags) -> Result<EffectiveConfig, ConfigError> {
    let project = read_file(&workdir(flags).join(PROJECT_FILE), false)?;
    load_with_project(flags, project)
}

/// Like [`load_config`] for a task on a repository URL: the repository's own layer (its
/// `forge.toml` at the task's commit, the worker's keys left out) stands where a local
/// checkout's `forge.toml` would; the working directory's file plays no part.
///
/// # Errors
/// As [`load_config`].
pub fn load_config_for_url(
    flags: &ConfigFlags,
    repository: Option<Layer>,
) -> Result<EffectiveConfig, ConfigError> {
    load_with_project(flags, repository)
}

/// The layers of the real environment and files with `project` where a project's
/// `forge.toml` stands, checked against the registered providers.
fn load_with_project(
    flags: &ConfigFlags,
    project: Option<Layer>,
) -> Result<EffectiveConfig, ConfigError> {
    let names = compose::provider_names(&compose::registry());
    let known: Vec<&str> = names.iter().map(String::as_str).collect();
    load_from(flags, &process_env(), &known, project)
}

pub(crate) fn load_from(
    flags: &ConfigFlags,
    env: &BTreeMap<String, String>,
    known: &[&str],
    project: Option<Layer>,
) -> Result<EffectiveConfig, ConfigError> {
    let mut layers = vec![defaults()];
    if let Some(path) = user_config_path(env) {
        let explicit = env.get(CONFIG_PATH_ENV).is_some_and(|v| !v.is_empty());
        if let Some(layer) = read_file(&path, explicit)? {
            layers.push(layer);
        }
    }
    layers.extend(project);
    layers.extend(env_layers(env, known)?);
    // Flags set the chosen provider's section: the one named by --provider, else the
    // default provider of the layers below.
    let target = match &flags.provider {
        Some(p) => p.clone(),
        None => merge(&layers).default_provider.value,
    };
    layers.push(flag_layer(flags, &target));
    let config = merge(&layers);
    let kinds: Vec<String> = compose::registry().kinds().map(str::to_owned).collect();
    let kinds: Vec<&str> = kinds.iter().map(String::as_str).collect();
    config.validate(known, &kinds)?;
    Ok(config.with_providers(known.iter().copied()))
}

/// The workdir flag (`.` when empty), made absolute so sources and results name it fully.
pub(crate) fn workdir(flags: &ConfigFlags) -> PathBuf {
    let dir = if flags.workdir.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        flags.workdir.clone()
    };
    std::path::absolute(&dir).unwrap_or(dir)
}

/// The user configuration file's path (whether or not it exists), from the real environment.
pub(crate) fn user_config_file() -> Option<PathBuf> {
    let env = process_env();
    user_config_path(&env)
}

/// `$FORGE_CONFIG`, else `$XDG_CONFIG_HOME/forge-code-agent/config.toml`, else
/// `$HOME/.config/forge-code-agent/config.toml`.
fn user_config_path(env: &BTreeMap<String, String>) -> Option<PathBuf> {
    let get = |k: &str| env.get(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(path) = get(CONFIG_PATH_ENV) {
        return Some(path);
    }
    let base = get("XDG_CONFIG_HOME").or_else(|| get("HOME").map(|h| h.join(".config")))?;
    Some(base.join(USER_DIR).join(USER_FILE))
}

/// A missing file is no layer, unless it was named explicitly (`FORGE_CONFIG`).
fn read_file(path: &Path, must_exist: bool) -> Result<Option<Layer>, ConfigError> {
    match std::fs::read_to_string(path) {
        Ok(text) => parse_file(&text, path).map(Some),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !must_exist => Ok(None),
        Err(e) => Err(ConfigError::whole(
            format!("file {}", path.display()),
            format!("cannot be read: {e}"),
        )),
    }
}

fn flag_layer(flags: &ConfigFlags, target: &str) -> Layer {
    let provider = PartialProvider {
        binary: flags.binary.clone(),
        env: flags.env.iter().cloned().collect(),
        home: flags.home.clone(),
        isolate_home: flags.isolate_home.then_some(true),
        model: flags.model.clone(),
        timeout_ms: flags.timeout_ms,
        max_turns: flags.max_turns,
        max_budget_usd: flags.max_budget_usd,
        ..PartialProvider::default()
    };
    let mut config = PartialConfig {
        default_provider: flags.provider.clone(),
        on_rate_limit: flags.on_rate_limit,
        ..PartialConfig::default()
    };
    if provider != PartialProvider::default() {
        config.providers.insert(target.to_owned(), provider);
    }
    Layer::new(Source::Flag, config)
}
