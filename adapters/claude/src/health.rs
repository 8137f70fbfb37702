//! `detect`: is claude installed, in a supported version, and logged in?

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use forge_adapter_support::{
    VersionProbe, probe_invocation, probe_version, record_version, start_detection,
};
use forge_ports::{
    CapturedOutput, Detection, EnvSnapshot, Invocation, ProcessRunner, ProviderSettings,
};

use crate::argv::DEFAULT_BINARY;
use crate::hints;
use crate::home;

/// The versions this adapter is written for: the stream-json shapes it reads have held
/// since 2.0 (the official SDK's minimum too). `--max-budget-usd` needs 2.0.28.
pub const SUPPORTED_VERSIONS: &str = ">=2.0.0, <3.0.0";

/// Any of these in the environment authenticates claude without a login.
pub const AUTH_ENV_VARS: [&str; 3] = [
    "ANTHROPIC_API_KEY",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "ANTHROPIC_AUTH_TOKEN",
];

const PROBE_TIMEOUT: Duration = Duration::from_secs(15);

pub async fn detect(
    settings: &ProviderSettings,
    runner: &dyn ProcessRunner,
    env: &EnvSnapshot,
) -> Detection {
    let started = start_detection(
        crate::ID,
        settings,
        DEFAULT_BINARY,
        SUPPORTED_VERSIONS,
        runner,
    );
    let (mut det, path) = match started {
        Ok(found) => found,
        Err(mut det) => {
            det.hints.push(not_found_hint(&det.binary));
            return det;
        }
    };
    let version_probe = probe(&path, settings, &["--version"]);
    let read = |out: &CapturedOutput| parse_version(&out.stdout);
    match probe_version(runner, version_probe, PROBE_TIMEOUT, read).await {
        VersionProbe::Read(version) => {
            let supported = version_supported(&version);
            record_version(&mut det, &version, supported, || {
                format!(
                    "claude {version} is outside the supported range {SUPPORTED_VERSIONS}: \
                     install a 2.x release (npm i -g @anthropic-ai/claude-code@2)"
                )
            });
        }
        VersionProbe::Unreadable(out) => det.hints.push(format!(
            "could not read a version from `claude --version` (stdout {:?}, stderr {:?})",
            forge_domain::error::excerpt(out.stdout.trim(), 80),
            forge_domain::error::excerpt(out.stderr.trim(), 80),
        )),
        VersionProbe::NotFound(_) => {
            det.path = None;
            det.hints.push(not_found_hint(&det.binary));
            return det;
        }
        VersionProbe::Failed(e) => det.hints.push(format!("`claude --version` failed: {e}")),
    }

    authenticate(&mut det, &path, settings, runner, env).await;
    det
}

async fn authenticate(
    det: &mut Detection,
    path: &Path,
    settings: &ProviderSettings,
    runner: &dyn ProcessRunner,
    env: &EnvSnapshot,
) {
    let from_settings = |var: &str| settings.env.get(var).or_else(|| env.get(var));
    if let Some(var) = AUTH_ENV_VARS
        .iter()
        .find(|var| from_settings(var).is_some_and(|v| !v.trim().is_empty()))
    {
        det.authenticated = Some(true);
        det.auth_detail = Some(format!("{var} is set"));
        return;
    }
    match runner
        .output(probe(path, settings, &["auth", "status"]), PROBE_TIMEOUT)
        .await
    {
        Ok(out) => {
            let status: Option<AuthStatus> = serde_json::from_str(out.stdout.trim()).ok();
            match (
                status.and_then(|s| s.logged_in.map(|l| (l, s.auth_method))),
                out.code,
            ) {
                (Some((logged_in, method)), _) => {
                    det.authenticated = Some(logged_in);
                    det.auth_detail = Some(format!(
                        "claude auth status: loggedIn {logged_in}, authMethod {}",
                        method.as_deref().unwrap_or("unknown")
                    ));
                    if !logged_in {
                        det.hints.push(hints::LOGIN.to_owned());
                    }
                }
                (None, Some(0)) => {
                    det.authenticated = Some(true);
                    det.auth_detail = Some("claude auth status exited 0".to_owned());
                }
                (None, code) => {
                    det.auth_detail = Some(format!("claude auth status exited {code:?}"));
                    det.hints.push(hints::LOGIN.to_owned());
                }
            }
        }
        Err(e) => {
            det.auth_detail = Some(format!("claude auth status failed: {e}"));
            det.hints.push(hints::LOGIN.to_owned());
        }
    }
}

#[derive(serde::Deserialize)]
struct AuthStatus {
    #[serde(rename = "loggedIn")]
    logged_in: Option<bool>,
    #[serde(rename = "authMethod")]
    auth_method: Option<String>,
}

/// A short probe run with the configured home and environment, so it sees what runs see.
fn probe(path: &Path, settings: &ProviderSettings, args: &[&str]) -> Invocation {
    let cwd = settings.home.clone().unwrap_or_else(std::env::temp_dir);
    let mut inv = probe_invocation(path, args, cwd, settings, hints::INSTALL);
    // The configured variables win over these defaults.
    let mut defaults = BTreeMap::from([("DISABLE_AUTOUPDATER".to_owned(), "1".to_owned())]);
    if let Some(run_home) = &settings.home {
        defaults.extend(home::env_vars(run_home));
    }
    for (key, value) in defaults {
        inv.env.set.entry(key).or_insert(value);
    }
    inv
}

fn not_found_hint(binary: &str) -> String {
    format!(
        "claude CLI {binary:?} not found: install it with `{}` or point CLAUDE_CLI_PATH at it",
        hints::INSTALL
    )
}

/// The leading `x.y.z` of `claude --version` (`2.1.330 (Claude Code)`).
pub fn parse_version(stdout: &str) -> Option<semver::Version> {
    forge_adapter_support::parse_leading_version(stdout)
}

pub fn version_supported(version: &semver::Version) -> bool {
    forge_adapter_support::version_in_range(version, SUPPORTED_VERSIONS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_from_the_leading_triple() {
        let check = |out: &str, want: Option<&str>, supported: bool| {
            let got = parse_version(out);
            assert_eq!(
                got.as_ref().map(ToString::to_string).as_deref(),
                want,
                "{out}"
            );
            if let Some(v) = got {
                assert_eq!(version_supported(&v), supported, "{out}");
            }
        };
        check("2.1.330 (Claude Code)\n", Some("2.1.330"), true);
        check("v2.0.0", Some("2.0.0"), true);
        check("1.0.128 (Claude Code)", Some("1.0.128"), false);
        check("3.0.1 (Claude Code)", Some("3.0.1"), false);
        check("Claude Code", None, false);
        check("", None, false);
    }
}
