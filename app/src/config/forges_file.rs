//! `[forges.NAME]` of the user config (issue 39): the forges the worker opens pull requests
//! on and takes webhooks from.
//!
//! ```toml
//! [forges.github]             # github.com works without it
//! kind = "github"             # or "gitlab"
//! host = "github.com"         # which repository URLs it serves
//! api_url = "https://api.github.com"      # default per kind; GHES: https://HOST/api/v3
//! token_env = "GITHUB_TOKEN"              # default per kind
//! webhook_secret_env = "FORGE_GITHUB_WEBHOOK_SECRET"
//! ```
//!
//! Only the user's own config may set it: an API URL and a token variable in a repository's
//! `forge.toml` would send the worker's token to a host of the repository's choosing, so a
//! repository that names `[forges]` is refused.

use std::path::Path;

use forge_domain::forges::{ForgeKind, ForgeSettings, RepoRef, default_github, serving_forge};
use toml::{Table, Value};

use super::error::ConfigError;

const KEYS: &[&str] = &["kind", "host", "api_url", "token_env", "webhook_secret_env"];

/// The forges the worker knows; github.com is served by the default GitHub forge unless a
/// table names that host.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ForgesConfig {
    pub forges: Vec<ForgeSettings>,
}

impl ForgesConfig {
    /// The forge that serves repository `url`, and the repository it names there.
    pub fn serving(&self, url: &str) -> Option<(ForgeSettings, RepoRef)> {
        let fallback = default_github();
        serving_forge(&self.forges, &fallback, url).map(|(f, r)| (f.clone(), r))
    }

    /// The forge of `kind` that serves `host` (a webhook's repository).
    pub fn for_host(&self, kind: ForgeKind, host: &str) -> Option<ForgeSettings> {
        let fallback = default_github();
        self.forges
            .iter()
            .find(|f| f.host == host)
            .or_else(|| (host == fallback.host).then_some(&fallback))
            .filter(|f| f.kind == kind)
            .cloned()
    }
}

/// Reads `[forges]` of the user config at `path` (only for messages); absent: none.
///
/// # Errors
/// [`ConfigError`] naming the file, the dotted key and the reason: an unknown key, a value of
/// the wrong type, a malformed host, URL or variable name, two forges on one host.
pub fn parse_forges_config(text: &str, path: &Path) -> Result<ForgesConfig, ConfigError> {
    let origin = format!("file {}", path.display());
    let Some(section) = forges_table(text, &origin)? else {
        return Ok(ForgesConfig::default());
    };
    let mut config = ForgesConfig::default();
    for (name, value) in &section {
        let wrong = |key: &str, reason: String| {
            ConfigError::new(&origin, format!("forges.{name}.{key}"), reason)
        };
        let Value::Table(t) = value else {
            return Err(ConfigError::new(
                &origin,
                format!("forges.{name}"),
                format!("expected a table, found {}", value.type_str()),
            ));
        };
        if let Some(key) = t.keys().find(|k| !KEYS.contains(&k.as_str())) {
            return Err(wrong(
                key,
                format!("unknown key (expected one of: {})", KEYS.join(", ")),
            ));
        }
        let text = |key: &str| -> Result<Option<&str>, ConfigError> {
            match t.get(key) {
                None => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.as_str())),
                Some(v) => Err(wrong(
                    key,
                    format!("expected a string, found {}", v.type_str()),
                )),
            }
        };
        let kind = match text("kind")? {
            None => return Err(wrong("kind", "missing (\"github\" or \"gitlab\")".into())),
            Some(k) => ForgeKind::parse(k)
                .ok_or_else(|| wrong("kind", format!("{k:?} is not \"github\" or \"gitlab\"")))?,
        };
        let host = text("host")?.ok_or_else(|| wrong("host", "missing".into()))?;
        let api_url = text("api_url")?
            .map_or_else(|| ForgeSettings::default_api_url(kind, host), str::to_owned);
        let token_env = text("token_env")?.unwrap_or(ForgeSettings::default_token_env(kind));
        let secret_env =
            text("webhook_secret_env")?.unwrap_or(ForgeSettings::default_webhook_secret_env(kind));
        let settings = ForgeSettings::new(name, kind, host, &api_url, token_env, Some(secret_env))
            .map_err(|e| ConfigError::new(&origin, format!("forges.{name}"), e.to_string()))?;
        if let Some(other) = config.forges.iter().find(|f| f.host == settings.host) {
            return Err(wrong(
                "host",
                format!(
                    "{:?} is already served by forges.{}",
                    settings.host, other.name
                ),
            ));
        }
        config.forges.push(settings);
    }
    Ok(config)
}

/// Refuses a `[forges]` section in a repository's `forge.toml`.
///
/// # Errors
/// [`ConfigError`] saying where the setting belongs.
pub fn refuse_project_forges(text: &str, path: &Path) -> Result<(), ConfigError> {
    let origin = format!("file {}", path.display());
    match forges_table(text, &origin)? {
        None => Ok(()),
        Some(_) => Err(ConfigError::new(
            origin,
            "forges",
            "a repository's forge.toml may not name a forge's API URL or token: \
             [forges] belongs in the worker's user config",
        )),
    }
}

fn forges_table(text: &str, origin: &str) -> Result<Option<Table>, ConfigError> {
    let table: Table = text
        .parse()
        .map_err(|e: toml::de::Error| ConfigError::whole(origin, e.message().to_owned()))?;
    match table.get("forges") {
        None => Ok(None),
        Some(Value::Table(t)) => Ok(Some(t.clone())),
        Some(v) => Err(ConfigError::new(
            origin,
            "forges",
            format!("expected a table, found {}", v.type_str()),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<ForgesConfig, String> {
        parse_forges_config(text, Path::new("/u/config.toml")).map_err(|e| e.to_string())
    }

    #[test]
    fn every_key_and_the_defaults_per_kind() {
        assert_eq!(parse("").unwrap(), ForgesConfig::default());
        let c = parse(
            "[forges.ghe]\nkind = \"github\"\nhost = \"ghe.corp\"\n\
             [forges.lab]\nkind = \"gitlab\"\nhost = \"gitlab.example.com\"\n\
             api_url = \"http://127.0.0.1:9/api/v4\"\ntoken_env = \"LAB_TOKEN\"\n\
             webhook_secret_env = \"LAB_HOOK\"\n",
        )
        .unwrap();
        let shown: Vec<String> = c
            .forges
            .iter()
            .map(|f| {
                format!(
                    "{} {} {} {} {} {:?}",
                    f.name,
                    f.kind.as_str(),
                    f.host,
                    f.api_url,
                    f.token_env,
                    f.webhook_secret_env
                )
            })
            .collect();
        assert_eq!(
            shown,
            [
                "ghe github ghe.corp https://ghe.corp/api/v3 GITHUB_TOKEN Some(\"FORGE_GITHUB_WEBHOOK_SECRET\")",
                "lab gitlab gitlab.example.com http://127.0.0.1:9/api/v4 LAB_TOKEN Some(\"LAB_HOOK\")",
            ]
        );
        let (forge, repo) = c.serving("git@gitlab.example.com:g/p.git").unwrap();
        assert_eq!((forge.name.as_str(), repo.path.as_str()), ("lab", "g/p"));
        let (forge, _) = c.serving("https://github.com/o/r.git").unwrap();
        assert_eq!(forge.name, "github");
        assert!(c.serving("https://bitbucket.org/o/r.git").is_none());
        assert_eq!(
            c.for_host(ForgeKind::Gitlab, "gitlab.example.com")
                .unwrap()
                .name,
            "lab"
        );
        // A GitHub webhook that claims a GitLab host is not that forge's.
        assert!(
            c.for_host(ForgeKind::Github, "gitlab.example.com")
                .is_none()
        );
        assert_eq!(
            c.for_host(ForgeKind::Github, "github.com").unwrap().name,
            "github"
        );
    }

    #[test]
    fn bad_tables_are_named() {
        let file = "bad configuration in file /u/config.toml";
        for (text, want) in [
            (
                "forges = 1\n",
                "key `forges`: expected a table, found integer",
            ),
            (
                "[forges]\ngh = 1\n",
                "key `forges.gh`: expected a table, found integer",
            ),
            (
                "[forges.gh]\nhost = \"github.com\"\n",
                "key `forges.gh.kind`: missing (\"github\" or \"gitlab\")",
            ),
            (
                "[forges.gh]\nkind = \"bitbucket\"\nhost = \"b.org\"\n",
                "key `forges.gh.kind`: \"bitbucket\" is not \"github\" or \"gitlab\"",
            ),
            (
                "[forges.gh]\nkind = \"github\"\n",
                "key `forges.gh.host`: missing",
            ),
            (
                "[forges.gh]\nkind = \"github\"\nhost = \"h\"\ntoken = \"ghp_x\"\n",
                "key `forges.gh.token`: unknown key (expected one of: kind, host, api_url, token_env, webhook_secret_env)",
            ),
            (
                "[forges.gh]\nkind = \"github\"\nhost = \"h\"\ntoken_env = \"ghp_abc\"\n",
                "key `forges.gh`: token_env \"ghp_abc\" must be an environment variable name (A-Z, 0-9, _)",
            ),
            (
                "[forges.gh]\nkind = \"github\"\nhost = \"https://h\"\n",
                "key `forges.gh`: host \"https://h\" must be a bare host name (no scheme, path, port or user)",
            ),
            (
                "[forges.a]\nkind = \"github\"\nhost = \"h\"\n[forges.b]\nkind = \"gitlab\"\nhost = \"H\"\n",
                "key `forges.b.host`: \"h\" is already served by forges.a",
            ),
        ] {
            assert_eq!(
                parse(text).unwrap_err(),
                format!("{file}: {want}"),
                "{text}"
            );
        }
    }

    #[test]
    fn a_repository_may_not_name_a_forge() {
        let path = Path::new("/r/forge.toml");
        assert!(refuse_project_forges("[delivery]\npull_request = true\n", path).is_ok());
        assert_eq!(
            refuse_project_forges(
                "[forges.gh]\nkind = \"github\"\nhost = \"github.com\"\napi_url = \"https://evil\"\n",
                path
            )
            .unwrap_err()
            .to_string(),
            "bad configuration in file /r/forge.toml: key `forges`: a repository's forge.toml may not \
             name a forge's API URL or token: [forges] belongs in the worker's user config"
        );
    }
}
