//! `detect`: is claude installed, in a supported version, and logged in?

use std::path::{Path, PathBuf};
use std::time::Duration;

use forge_domain::ForgeError;
use forge_ports::{Detection, EnvSnapshot, Invocation, ProcessRunner, ProviderSettings};

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
    let binary = settings
        .binary
        .clone()
        .unwrap_or_else(|| PathBuf::from(DEFAULT_BINARY));
    let mut det = Detection {
        provider: crate::ID.to_owned(),
        binary: binary.to_string_lossy().into_owned(),
        supported_range: SUPPORTED_VERSIONS.to_owned(),
        ..Detection::default()
    };
    let Some(path) = runner.locate(&binary) else {
        det.hints.push(not_found_hint(&det.binary));
        return det;
    };
    det.path = Some(path.clone());

    match runner
        .output(probe(&path, settings, &["--version"]), PROBE_TIMEOUT)
        .await
    {
        Ok(out) => match parse_version(&out.stdout) {
            Some(version) => {
                let supported = version_supported(&version);
                if !supported {
                    det.hints.push(format!(
                        "claude {version} is outside the supported range {SUPPORTED_VERSIONS}: \
                         install a 2.x release (npm i -g @anthropic-ai/claude-code@2)"
                    ));
                }
                det.version = Some(version.to_string());
                det.version_supported = Some(supported);
            }
            None => det.hints.push(format!(
                "could not read a version from `claude --version` (stdout {:?}, stderr {:?})",
                forge_domain::error::excerpt(out.stdout.trim(), 80),
                forge_domain::error::excerpt(out.stderr.trim(), 80),
            )),
        },
        Err(ForgeError::ExecutableNotFound { .. }) => {
            det.path = None;
            det.hints.push(not_found_hint(&det.binary));
            return det;
        }
        Err(e) => det.hints.push(format!("`claude --version` failed: {e}")),
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
    let mut inv = Invocation::new(path, args.iter().map(|a| (*a).to_owned()).collect(), cwd);
    inv.env.set.insert("DISABLE_AUTOUPDATER".into(), "1".into());
    if let Some(run_home) = &settings.home {
        inv.env.set.extend(home::env_vars(run_home));
    }
    inv.env
        .set
        .extend(settings.env.iter().map(|(k, v)| (k.clone(), v.clone())));
    inv.install_hint = Some(hints::INSTALL.to_owned());
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
    let first = stdout.split_whitespace().next()?;
    semver::Version::parse(first.trim_start_matches('v')).ok()
}

pub fn version_supported(version: &semver::Version) -> bool {
    semver::VersionReq::parse(SUPPORTED_VERSIONS).is_ok_and(|req| req.matches(version))
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
