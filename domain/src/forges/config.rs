//! A forge the worker knows, as `[forges.NAME]` describes it:
//!
//! ```toml
//! [forges.github]
//! kind = "github"                          # or "gitlab"
//! host = "github.com"                      # which repository URLs it serves
//! api_url = "https://api.github.com"       # GHES: https://HOST/api/v3
//! token_env = "GITHUB_TOKEN"
//! webhook_secret_env = "FORGE_GITHUB_WEBHOOK_SECRET"
//! ```
//!
//! The values are names, never the token or secret itself: the worker's environment holds
//! those, and nothing here (or in a report) can leak them. A repository's own `forge.toml`
//! may not name an API URL or a token (it would send the worker's token to a host of the
//! repository's choosing); the configuration layer enforces that, this module checks shape.

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Which API a forge speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ForgeKind {
    Github,
    Gitlab,
}

impl ForgeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ForgeKind::Github => "github",
            ForgeKind::Gitlab => "gitlab",
        }
    }

    /// `github` or `gitlab`; anything else is `None`.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "github" => Some(ForgeKind::Github),
            "gitlab" => Some(ForgeKind::Gitlab),
            _ => None,
        }
    }

    /// What the forge calls the thing forge opens.
    pub fn noun(self) -> &'static str {
        match self {
            ForgeKind::Github => "pull request",
            ForgeKind::Gitlab => "merge request",
        }
    }
}

/// One `[forges.NAME]` table, checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForgeSettings {
    /// The table's name (`github` in `[forges.github]`).
    pub name: String,
    pub kind: ForgeKind,
    /// The host of the repository URLs it serves, lower case, without a scheme or port.
    pub host: String,
    /// The API's base URL, without a trailing slash.
    pub api_url: String,
    /// The environment variable that holds the API token.
    pub token_env: String,
    /// The environment variable that holds the webhook secret; `None`: webhooks refused.
    pub webhook_secret_env: Option<String>,
}

/// Why a `[forges.NAME]` table is refused; the configuration layer adds file and key.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ForgeConfigError {
    #[error("forge name {0:?} must be 1-64 characters of A-Za-z0-9_-")]
    BadName(String),
    #[error("host {0:?} must be a bare host name (no scheme, path, port or user)")]
    BadHost(String),
    #[error("api_url {0:?} must be an http:// or https:// URL")]
    BadApiUrl(String),
    #[error("{key} {value:?} must be an environment variable name (A-Z, 0-9, _)")]
    BadEnvName { key: &'static str, value: String },
}

impl ForgeSettings {
    /// Checks every field and normalises `host` (lower case) and `api_url` (no trailing
    /// slash).
    ///
    /// # Errors
    /// [`ForgeConfigError`] naming the first field that is not of its shape.
    pub fn new(
        name: &str,
        kind: ForgeKind,
        host: &str,
        api_url: &str,
        token_env: &str,
        webhook_secret_env: Option<&str>,
    ) -> Result<Self, ForgeConfigError> {
        let name_ok = !name.is_empty()
            && name.len() <= 64
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-'));
        if !name_ok {
            return Err(ForgeConfigError::BadName(name.to_owned()));
        }
        if !is_bare_host(host) {
            return Err(ForgeConfigError::BadHost(host.to_owned()));
        }
        if !is_http_url(api_url) {
            return Err(ForgeConfigError::BadApiUrl(api_url.to_owned()));
        }
        let env_name = |key: &'static str, value: &str| {
            if is_env_name(value) {
                Ok(value.to_owned())
            } else {
                Err(ForgeConfigError::BadEnvName {
                    key,
                    value: value.to_owned(),
                })
            }
        };
        Ok(Self {
            name: name.to_owned(),
            kind,
            host: host.to_ascii_lowercase(),
            api_url: api_url.trim_end_matches('/').to_owned(),
            token_env: env_name("token_env", token_env)?,
            webhook_secret_env: webhook_secret_env
                .map(|v| env_name("webhook_secret_env", v))
                .transpose()?,
        })
    }

    /// The default API URL and token variable of a kind on `host`: `api.github.com` for
    /// github.com, `https://HOST/api/v3` for GitHub Enterprise, `https://HOST/api/v4` for
    /// GitLab.
    pub fn default_api_url(kind: ForgeKind, host: &str) -> String {
        match kind {
            ForgeKind::Github if host.eq_ignore_ascii_case("github.com") => {
                "https://api.github.com".to_owned()
            }
            ForgeKind::Github => format!("https://{host}/api/v3"),
            ForgeKind::Gitlab => format!("https://{host}/api/v4"),
        }
    }

    /// `GITHUB_TOKEN` / `GITLAB_TOKEN`.
    pub fn default_token_env(kind: ForgeKind) -> &'static str {
        match kind {
            ForgeKind::Github => "GITHUB_TOKEN",
            ForgeKind::Gitlab => "GITLAB_TOKEN",
        }
    }

    /// `FORGE_GITHUB_WEBHOOK_SECRET` / `FORGE_GITLAB_WEBHOOK_SECRET`.
    pub fn default_webhook_secret_env(kind: ForgeKind) -> &'static str {
        match kind {
            ForgeKind::Github => "FORGE_GITHUB_WEBHOOK_SECRET",
            ForgeKind::Gitlab => "FORGE_GITLAB_WEBHOOK_SECRET",
        }
    }
}

/// github.com works without a `[forges]` table: this is the forge it is then.
pub fn default_github() -> ForgeSettings {
    ForgeSettings {
        name: "github".to_owned(),
        kind: ForgeKind::Github,
        host: "github.com".to_owned(),
        api_url: "https://api.github.com".to_owned(),
        token_env: "GITHUB_TOKEN".to_owned(),
        webhook_secret_env: Some("FORGE_GITHUB_WEBHOOK_SECRET".to_owned()),
    }
}

fn is_bare_host(host: &str) -> bool {
    !host.is_empty()
        && host.len() <= 253
        && !host.starts_with(['.', '-'])
        && !host.ends_with(['.', '-'])
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-'))
}

fn is_http_url(url: &str) -> bool {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"));
    rest.is_some_and(|r| {
        let authority = r.split('/').next().unwrap_or_default();
        !authority.is_empty()
            && !authority.contains('@')
            && !r.contains(char::is_whitespace)
            && !r.contains(['?', '#'])
    })
}

fn is_env_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(|c: char| c.is_ascii_digit())
        && name
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(
        (host, api_url, token_env, secret): (&str, &str, &str, Option<&str>),
        want: Result<(), &str>,
    ) {
        let got = ForgeSettings::new("gh", ForgeKind::Github, host, api_url, token_env, secret)
            .map(|_| ())
            .map_err(|e| e.to_string());
        assert_eq!(
            got,
            want.map_err(str::to_owned),
            "{host} {api_url} {token_env} {secret:?}"
        );
    }

    #[test]
    fn settings_of_the_right_shape_and_look_alikes() {
        let ok = Ok(());
        check(
            ("github.com", "https://api.github.com", "GITHUB_TOKEN", None),
            ok,
        );
        check(
            (
                "ghe.corp.example",
                "https://ghe.corp.example/api/v3/",
                "GHE_TOKEN",
                Some("S_1"),
            ),
            ok,
        );
        check(("127.0.0.1", "http://127.0.0.1:8080", "T", None), ok);
        check(
            ("https://github.com", "https://api.github.com", "T", None),
            Err(
                r#"host "https://github.com" must be a bare host name (no scheme, path, port or user)"#,
            ),
        );
        check(
            ("github.com:443", "https://api.github.com", "T", None),
            Err(
                r#"host "github.com:443" must be a bare host name (no scheme, path, port or user)"#,
            ),
        );
        check(
            ("git@github.com", "https://api.github.com", "T", None),
            Err(
                r#"host "git@github.com" must be a bare host name (no scheme, path, port or user)"#,
            ),
        );
        check(
            ("github.com", "api.github.com", "T", None),
            Err(r#"api_url "api.github.com" must be an http:// or https:// URL"#),
        );
        check(
            ("github.com", "https://user:pw@api.github.com", "T", None),
            Err(r#"api_url "https://user:pw@api.github.com" must be an http:// or https:// URL"#),
        );
        check(
            ("github.com", "ftp://api.github.com", "T", None),
            Err(r#"api_url "ftp://api.github.com" must be an http:// or https:// URL"#),
        );
        // A token where its variable's name belongs.
        check(
            ("github.com", "https://api.github.com", "ghp_abc123", None),
            Err(r#"token_env "ghp_abc123" must be an environment variable name (A-Z, 0-9, _)"#),
        );
        check(
            ("github.com", "https://api.github.com", "T", Some("1SECRET")),
            Err(
                r#"webhook_secret_env "1SECRET" must be an environment variable name (A-Z, 0-9, _)"#,
            ),
        );
    }

    #[test]
    fn names_hosts_and_defaults() {
        assert!(ForgeSettings::new("", ForgeKind::Github, "h", "https://h", "T", None).is_err());
        assert!(ForgeSettings::new("a.b", ForgeKind::Github, "h", "https://h", "T", None).is_err());
        let s = ForgeSettings::new(
            "lab",
            ForgeKind::Gitlab,
            "GitLab.Example.com",
            "https://x/",
            "T",
            None,
        )
        .unwrap();
        assert_eq!(
            (s.host.as_str(), s.api_url.as_str()),
            ("gitlab.example.com", "https://x")
        );
        assert_eq!(
            ForgeSettings::default_api_url(ForgeKind::Github, "github.com"),
            "https://api.github.com"
        );
        assert_eq!(
            ForgeSettings::default_api_url(ForgeKind::Github, "ghe.corp"),
            "https://ghe.corp/api/v3"
        );
        assert_eq!(
            ForgeSettings::default_api_url(ForgeKind::Gitlab, "gl.corp"),
            "https://gl.corp/api/v4"
        );
        assert_eq!(default_github().kind, ForgeKind::Github);
        assert_eq!(ForgeKind::parse("gitlab"), Some(ForgeKind::Gitlab));
        assert_eq!(ForgeKind::parse("GitHub"), None);
        assert_eq!(ForgeKind::parse("bitbucket"), None);
    }
}
