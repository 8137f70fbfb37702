//! `detect`: is gemini installed, in the supported version range, and able to authenticate?

use std::path::{Path, PathBuf};
use std::time::Duration;

use forge_adapter_support::{
    VersionProbe, probe_invocation, probe_version, record_version, start_detection,
};
use forge_ports::{CapturedOutput, Detection, EnvSnapshot, ProcessRunner, ProviderSettings};
use semver::Version;

use crate::argv::{DEFAULT_BINARY, INSTALL_HINT};

/// The versions this adapter is written for.
pub const SUPPORTED_RANGE: &str = ">=0.50.0, <1.0.0";
/// gemini is a node program: start-up alone takes 2–4 s on a busy machine.
const VERSION_TIMEOUT: Duration = Duration::from_secs(30);

pub async fn detect(
    settings: &ProviderSettings,
    runner: &dyn ProcessRunner,
    env: &EnvSnapshot,
) -> Detection {
    let started = start_detection(crate::ID, settings, DEFAULT_BINARY, SUPPORTED_RANGE, runner);
    let (mut det, path) = match started {
        Ok(found) => found,
        Err(mut det) => {
            det.hints.push(not_found_hint());
            return det;
        }
    };

    let cwd = env
        .get("HOME")
        .map_or_else(|| PathBuf::from("/"), PathBuf::from);
    let inv = probe_invocation(&path, &["--version"], cwd, settings, INSTALL_HINT);
    let read =
        |out: &CapturedOutput| parse_version(&out.stdout).or_else(|| parse_version(&out.stderr));
    match probe_version(runner, inv, VERSION_TIMEOUT, read).await {
        VersionProbe::Read(version) => {
            record_version(&mut det, &version, in_range(&version), || {
                format!(
                    "gemini {version} is outside the supported range {SUPPORTED_RANGE}: \
                     install a supported one with `npm i -g @google/gemini-cli@0.61.0`"
                )
            });
        }
        VersionProbe::Unreadable(out) => det.hints.push(format!(
            "`{} --version` printed no version (exit {:?}): reinstall with `{INSTALL_HINT}`",
            det.binary, out.code
        )),
        VersionProbe::NotFound(_) => {
            det.path = None;
            det.hints.push(not_found_hint());
            return det;
        }
        VersionProbe::Failed(e) => det.hints.push(format!(
            "`{} --version` failed ({e}): check the installation (`{INSTALL_HINT}`)",
            det.binary
        )),
    }

    let (authenticated, detail, hint) = auth_status(settings, env);
    det.authenticated = authenticated;
    det.auth_detail = Some(detail);
    det.hints.extend(hint);
    det
}

fn not_found_hint() -> String {
    format!("gemini CLI not found: install it with `{INSTALL_HINT}`")
}

/// The first `x.y.z` token of `text` (`0.61.0`, `v0.61.0`, `gemini 0.62.0-preview.1`).
pub fn parse_version(text: &str) -> Option<Version> {
    forge_adapter_support::parse_version(text)
}

/// Range check that lets pre-releases (`0.62.0-preview.1`) count as their release.
pub fn in_range(version: &Version) -> bool {
    forge_adapter_support::release_in_range(version, SUPPORTED_RANGE)
}

fn non_empty(env: &EnvSnapshot, key: &str) -> bool {
    env.get(key).is_some_and(|v| !v.trim().is_empty())
}

/// `(authenticated, detail, hint)`.
pub fn auth_status(
    settings: &ProviderSettings,
    env: &EnvSnapshot,
) -> (Option<bool>, String, Option<String>) {
    // What the child will see: the environment plus the provider's configured variables.
    let mut env = env.clone();
    env.extend(settings.env.iter().map(|(k, v)| (k.clone(), v.clone())));
    for key in ["GEMINI_API_KEY", "GOOGLE_API_KEY"] {
        if non_empty(&env, key) {
            return (Some(true), format!("{key} is set"), None);
        }
    }
    let vertex = env
        .get("GOOGLE_GENAI_USE_VERTEXAI")
        .is_some_and(|v| v.eq_ignore_ascii_case("true") || v == "1");
    if vertex && non_empty(&env, "GOOGLE_CLOUD_PROJECT") {
        return (
            Some(true),
            "Vertex AI (GOOGLE_GENAI_USE_VERTEXAI, GOOGLE_CLOUD_PROJECT)".to_owned(),
            None,
        );
    }
    let private_home = settings.home.is_some() || settings.isolate_home;
    if private_home && !settings.copy_user_auth {
        return (
            Some(false),
            "a private gemini home selects API-key auth, and no key is set".to_owned(),
            Some("set GEMINI_API_KEY, or enable copy_user_auth to use your own login".to_owned()),
        );
    }
    let home = env.get("HOME").map(PathBuf::from);
    match home.as_deref().and_then(selected_auth_type) {
        Some((kind, path)) => auth_from_selected(&kind, &path, home.as_deref()),
        None => (
            Some(false),
            "no API key in the environment and no auth type selected".to_owned(),
            Some(
                "set GEMINI_API_KEY, or run `gemini` once interactively to log in \
                 (it records the auth type in ~/.gemini/settings.json)"
                    .to_owned(),
            ),
        ),
    }
}

fn auth_from_selected(
    kind: &str,
    settings_path: &Path,
    home: Option<&Path>,
) -> (Option<bool>, String, Option<String>) {
    let detail = format!("auth type {kind:?} selected in {}", settings_path.display());
    match kind {
        "oauth-personal" => {
            let creds = home.map(|h| h.join(".gemini").join("oauth_creds.json"));
            if creds.as_deref().is_some_and(Path::exists) {
                (Some(true), detail, None)
            } else {
                (
                    Some(false),
                    format!("{detail}, but ~/.gemini/oauth_creds.json is missing"),
                    Some("run `gemini` once interactively to log in with Google".to_owned()),
                )
            }
        }
        // The key may sit in a .env file gemini loads (~/.gemini/.env, the project's .env):
        // detection cannot see the project, so it cannot tell.
        "gemini-api-key" | "vertex-ai" => (
            None,
            format!("{detail}; no key in the environment (a .env file may hold it)"),
            Some(
                "set GEMINI_API_KEY (or the Vertex AI variables) if runs fail with exit 41"
                    .to_owned(),
            ),
        ),
        _ => (Some(true), detail, None),
    }
}

/// `security.auth.selectedType` (or the pre-0.3 top-level `selectedAuthType`) of the user's
/// settings, with the file's path.
fn selected_auth_type(home: &Path) -> Option<(String, PathBuf)> {
    let path = home.join(".gemini").join("settings.json");
    let text = std::fs::read_to_string(&path).ok()?;
    let kind = match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(value) => value
            .pointer("/security/auth/selectedType")
            .or_else(|| value.get("selectedAuthType"))
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned),
        // gemini accepts comments in settings.json; fall back to a textual look-up.
        Err(_) => selected_type_in_text(&text),
    }?;
    Some((kind, path))
}

/// The string after the first `"selectedType"` / `"selectedAuthType"` key in `text`.
fn selected_type_in_text(text: &str) -> Option<String> {
    let at = text
        .find("\"selectedType\"")
        .or_else(|| text.find("\"selectedAuthType\""))?;
    let rest = &text[at..];
    let rest = rest[rest.find(':')? + 1..].trim_start();
    let rest = rest.strip_prefix('"')?;
    Some(rest[..rest.find('"')?].to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_and_range_check() {
        let check = |text: &str, want: Option<bool>| {
            assert_eq!(parse_version(text).map(|v| in_range(&v)), want, "{text}");
        };
        check("0.61.0\n", Some(true));
        check("v0.62.0-preview.1", Some(true));
        check("0.49.9", Some(false));
        check("1.0.0", Some(false));
        check("garbage", None);
    }

    #[test]
    fn selected_type_is_found_in_settings_with_comments() {
        let text =
            "{\n  // login\n  \"security\": {\"auth\": {\"selectedType\": \"oauth-personal\"}}\n}";
        assert_eq!(
            selected_type_in_text(text).as_deref(),
            Some("oauth-personal")
        );
        assert_eq!(selected_type_in_text("{}"), None);
    }
}
