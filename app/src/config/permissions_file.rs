//! `[permissions]` of the user config, narrowed by a repository's `forge.toml` (issue 41):
//!
//! ```toml
//! [permissions]
//! timeout_ms = 600000                                   # nobody answering denies it (10 min)
//! allow = ["Bash(cargo test:*)", "Read", "Edit(src/**)"] # decided without asking
//! deny = ["Bash(rm:*)", "Read(./.env)"]                 # refused without asking
//! ```
//!
//! The rules are Claude Code's syntax, applied to every agent by the tool's kind
//! (`forge_domain::permission::Rules`). A repository may narrow them, never widen them: its
//! `deny` adds to the user's, its `allow` only restricts what the user's allows, and its
//! `timeout_ms` may only be shorter.

use std::path::Path;

use forge_domain::permission::{DEFAULT_TIMEOUT_MS, RuleSet, Rules};
use toml::Value;

use super::error::ConfigError;
use super::section::{section, strings};

const KEYS: &[&str] = &["timeout_ms", "allow", "deny"];

/// One file's `[permissions]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PermissionsSection {
    pub timeout_ms: Option<u64>,
    pub rules: RuleSet,
}

/// The permissions a run asks under: the user's, narrowed by its repository's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PermissionsConfig {
    pub timeout_ms: u64,
    pub rules: Rules,
}

impl Default for PermissionsConfig {
    fn default() -> Self {
        Self {
            timeout_ms: DEFAULT_TIMEOUT_MS,
            rules: Rules::default(),
        }
    }
}

impl PermissionsConfig {
    /// The user's section, narrowed by the repository's when it has one.
    pub fn new(user: PermissionsSection, repository: Option<PermissionsSection>) -> Self {
        let user_timeout = user.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS);
        let timeout_ms = repository
            .as_ref()
            .and_then(|r| r.timeout_ms)
            .map_or(user_timeout, |t| t.min(user_timeout));
        Self {
            timeout_ms,
            rules: Rules {
                user: user.rules,
                repository: repository.map(|r| r.rules),
            },
        }
    }
}

/// Reads `[permissions]` of the file at `path` (only for messages); absent: empty.
///
/// # Errors
/// [`ConfigError`] naming the file, the dotted key and the reason: bad TOML, an unknown
/// key, a value of the wrong type, a rule that cannot be read.
pub fn parse_permissions_config(
    text: &str,
    path: &Path,
) -> Result<PermissionsSection, ConfigError> {
    let origin = format!("file {}", path.display());
    let Some(section) = section(text, "permissions", &origin)? else {
        return Ok(PermissionsSection::default());
    };
    let wrong =
        |key: &str, reason: String| ConfigError::new(&origin, format!("permissions.{key}"), reason);
    if let Some(key) = section.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(wrong(
            key,
            format!("unknown key (expected one of: {})", KEYS.join(", ")),
        ));
    }
    let timeout_ms = match section.get("timeout_ms") {
        None => None,
        Some(Value::Integer(n)) if *n > 0 => u64::try_from(*n).ok(),
        Some(v) => {
            return Err(wrong(
                "timeout_ms",
                format!("expected a positive number of milliseconds, found {v}"),
            ));
        }
    };
    let allow = strings(&section, "allow").map_err(|e| wrong("allow", e))?;
    let deny = strings(&section, "deny").map_err(|e| wrong("deny", e))?;
    let rules = RuleSet::parse(&allow, &deny).map_err(|e| {
        let key = if allow.contains(&e.rule) {
            "allow"
        } else {
            "deny"
        };
        wrong(key, e.to_string())
    })?;
    Ok(PermissionsSection { timeout_ms, rules })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    use forge_domain::ToolKind;
    use forge_domain::permission::{RuleVerdict, ToolRequest};

    use super::*;

    fn section(text: &str) -> PermissionsSection {
        parse_permissions_config(text, Path::new("/u/config.toml")).unwrap()
    }

    fn bash(command: &str) -> ToolRequest {
        ToolRequest {
            tool: "Bash".into(),
            kind: ToolKind::Shell,
            command: Some(command.into()),
            path: None,
            diff: None,
            url: None,
            input: serde_json::Value::Null,
        }
    }

    #[test]
    fn the_permissions_section() {
        assert_eq!(section(""), PermissionsSection::default());
        let s = section(
            "[permissions]\ntimeout_ms = 5000\nallow = [\"Bash(cargo test:*)\", \"Read\"]\n\
             deny = [\"Bash(rm:*)\"]\n",
        );
        assert_eq!(s.timeout_ms, Some(5000));
        assert_eq!(s.rules.allow.len(), 2);
        assert_eq!(s.rules.deny[0].as_str(), "Bash(rm:*)");
        for (text, key, reason) in [
            (
                "[permissions]\nask = []\n",
                "permissions.ask",
                "unknown key",
            ),
            (
                "[permissions]\ntimeout_ms = 0\n",
                "permissions.timeout_ms",
                "positive",
            ),
            (
                "[permissions]\ntimeout_ms = \"1\"\n",
                "permissions.timeout_ms",
                "positive",
            ),
            (
                "[permissions]\nallow = \"Read\"\n",
                "permissions.allow",
                "array",
            ),
            ("[permissions]\ndeny = [1]\n", "permissions.deny", "strings"),
            (
                "[permissions]\nallow = [\"Bash(a\"]\n",
                "permissions.allow",
                "Tool(specifier)",
            ),
            (
                "[permissions]\ndeny = [\"Read(~/x)\"]\n",
                "permissions.deny",
                "~",
            ),
            ("permissions = 1\n", "permissions", "expected a table"),
        ] {
            let err = parse_permissions_config(text, Path::new("/u/config.toml"))
                .unwrap_err()
                .to_string();
            assert!(
                err.contains(key) && err.contains(reason) && err.contains("/u/config.toml"),
                "{text}: {err}"
            );
        }
    }

    #[test]
    fn a_repository_narrows_and_never_widens() {
        let user = section("[permissions]\ntimeout_ms = 60000\nallow = [\"Bash(cargo:*)\"]\n");
        let repo = section(
            "[permissions]\ntimeout_ms = 999999\nallow = [\"Bash(cargo test:*)\", \"Bash\"]\n\
             deny = [\"Bash(cargo publish:*)\"]\n",
        );
        let config = PermissionsConfig::new(user.clone(), Some(repo));
        // A longer timeout from the repository is not taken.
        assert_eq!(config.timeout_ms, 60000);
        let verdict = |c: &str| config.rules.verdict(&bash(c), "/w");
        assert!(matches!(verdict("cargo test"), RuleVerdict::Allow { .. }));
        assert!(matches!(verdict("cargo publish"), RuleVerdict::Deny { .. }));
        // The repository's `Bash` allows nothing the user does not.
        assert_eq!(verdict("rm -rf /"), RuleVerdict::Ask);
        let shorter = section("[permissions]\ntimeout_ms = 1000\n");
        assert_eq!(PermissionsConfig::new(user, Some(shorter)).timeout_ms, 1000);
        assert_eq!(
            PermissionsConfig::new(PermissionsSection::default(), None).timeout_ms,
            DEFAULT_TIMEOUT_MS
        );
    }
}
