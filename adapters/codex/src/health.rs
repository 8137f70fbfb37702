//! Is `codex` usable here? Installed, in the supported range, authenticated.
//!
//! Authentication, in order: an API key in the environment; a custom model provider in
//! config.toml whose `env_key` is set (how local and fake models are wired); `codex login
//! status` (exit 0 when logged in, "Not logged in" and exit 1 otherwise, [RUN] 0.169).

use std::path::PathBuf;
use std::time::Duration;

use forge_adapter_support::{
    VersionProbe, probe_invocation, probe_version, record_version, start_detection,
};
use forge_ports::{CapturedOutput, Detection, EnvSnapshot, ProcessRunner, ProviderSettings};
use semver::Version;

use crate::argv::{DEFAULT_BINARY, INSTALL_HINT};
use crate::features::{SUPPORTED_RANGE, is_supported, parse_version};
use crate::home::{CODEX_HOME_ENV, codex_home_in};

const PROBE_TIMEOUT: Duration = Duration::from_secs(15);
const API_KEY_VARS: [&str; 2] = ["OPENAI_API_KEY", "CODEX_API_KEY"];
const LOGIN_HINT: &str = "run `codex login` (or set OPENAI_API_KEY / CODEX_API_KEY)";

/// The detection, and the installed version when it could be read.
pub async fn detect(
    settings: &ProviderSettings,
    runner: &dyn ProcessRunner,
    env: &EnvSnapshot,
) -> (Detection, Option<Version>) {
    let started = start_detection(crate::ID, settings, DEFAULT_BINARY, SUPPORTED_RANGE, runner);
    let (mut det, path) = match started {
        Ok(found) => found,
        Err(mut det) => {
            det.hints.push(format!(
                "codex is not installed or not on PATH: {INSTALL_HINT}"
            ));
            return (det, None);
        }
    };

    let probe = |args: &[&str]| {
        let mut inv = probe_invocation(&path, args, std::env::temp_dir(), settings, INSTALL_HINT);
        if let Some(home) = &settings.home {
            inv.env.set.insert(
                CODEX_HOME_ENV.to_owned(),
                codex_home_in(home).to_string_lossy().into_owned(),
            );
        }
        inv
    };

    let read =
        |out: &CapturedOutput| parse_version(&out.stdout).or_else(|| parse_version(&out.stderr));
    let version = match probe_version(runner, probe(&["--version"]), PROBE_TIMEOUT, read).await {
        VersionProbe::Read(v) => {
            record_version(&mut det, &v, is_supported(&v), || {
                format!(
                    "codex {v} is outside the supported range {SUPPORTED_RANGE}: npm i -g @openai/codex@0.169.0"
                )
            });
            Some(v)
        }
        VersionProbe::Unreadable(_) => None,
        // A binary gone since `locate` is one more failure here: the auth checks still run.
        VersionProbe::NotFound(e) | VersionProbe::Failed(e) => {
            det.hints.push(format!("`codex --version` failed: {e}"));
            None
        }
    };
    if version.is_none() && det.hints.is_empty() {
        det.hints
            .push("could not read the codex version from `codex --version`".to_owned());
    }

    let lookup = |key: &str| {
        settings
            .env
            .get(key)
            .or_else(|| env.get(key))
            .filter(|v| !v.is_empty())
    };
    if let Some(var) = API_KEY_VARS.iter().find(|k| lookup(k).is_some()) {
        det.authenticated = Some(true);
        det.auth_detail = Some(format!("api key in the environment ({var})"));
        return (det, version);
    }
    if let Some(provider) = configured_provider(settings, env) {
        match provider.env_key {
            Some(key) if lookup(&key).is_some() => {
                det.authenticated = Some(true);
                det.auth_detail = Some(format!(
                    "model provider {:?} with its key in {key}",
                    provider.name
                ));
            }
            Some(key) => {
                det.authenticated = Some(false);
                det.auth_detail = Some(format!("model provider {:?}", provider.name));
                det.hints.push(format!(
                    "set {key}: the configured model provider {:?} reads its key from it",
                    provider.name
                ));
            }
            // A provider without a key (a local model server): nothing to check.
            None => {
                det.auth_detail = Some(format!("model provider {:?} (no key)", provider.name));
            }
        }
        return (det, version);
    }
    match runner
        .output(probe(&["login", "status"]), PROBE_TIMEOUT)
        .await
    {
        Ok(out) => {
            let text = first_line(&out.stdout).or_else(|| first_line(&out.stderr));
            det.auth_detail = text.map(str::to_owned);
            if out.code == Some(0) {
                det.authenticated = Some(true);
            } else {
                det.authenticated = Some(false);
                det.hints
                    .push(format!("codex is not logged in: {LOGIN_HINT}"));
            }
        }
        Err(e) => det.hints.push(format!("`codex login status` failed: {e}")),
    }
    (det, version)
}

fn first_line(text: &str) -> Option<&str> {
    text.lines().map(str::trim).find(|l| !l.is_empty())
}

struct ConfiguredProvider {
    name: String,
    env_key: Option<String>,
}

/// A non-OpenAI `model_provider` from the Codex home's config.toml, if one is configured.
fn configured_provider(
    settings: &ProviderSettings,
    env: &EnvSnapshot,
) -> Option<ConfiguredProvider> {
    // The home a run would use: its configured home, else CODEX_HOME as the run's
    // environment has it (the provider's `env` over the shell's), else `~/.codex`.
    let codex_home = settings
        .env
        .get(CODEX_HOME_ENV)
        .or_else(|| env.get(CODEX_HOME_ENV));
    let dir: PathBuf = match (&settings.home, codex_home, env.get("HOME")) {
        (Some(home), _, _) => codex_home_in(home),
        (None, Some(dir), _) if !dir.is_empty() => PathBuf::from(dir),
        (None, _, Some(home)) if !home.is_empty() => codex_home_in(home.as_ref()),
        _ => return None,
    };
    let text = std::fs::read_to_string(dir.join("config.toml")).ok()?;
    provider_in_config(&text)
}

fn provider_in_config(text: &str) -> Option<ConfiguredProvider> {
    let table: toml::Table = toml::from_str(text).ok()?;
    let name = table.get("model_provider")?.as_str()?.to_owned();
    if name == "openai" {
        return None;
    }
    let env_key = table
        .get("model_providers")
        .and_then(|p| p.get(&name))
        .and_then(|p| p.get("env_key"))
        .and_then(toml::Value::as_str)
        .map(str::to_owned);
    Some(ConfiguredProvider { name, env_key })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn custom_providers_are_read_from_config() {
        let text = crate::home::mock_provider_config("http://127.0.0.1:1/v1", "gpt-5.5");
        let p = provider_in_config(&text).unwrap();
        assert_eq!(p.name, "mock");
        assert_eq!(p.env_key.as_deref(), Some("MOCK_API_KEY"));
        assert!(provider_in_config("model_provider = \"openai\"").is_none());
        assert!(provider_in_config("model = \"x\"").is_none());
        assert!(provider_in_config("not toml [").is_none());
    }
}
