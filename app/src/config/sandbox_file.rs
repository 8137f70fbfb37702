//! `[sandbox]` of the user config (issue 31):
//!
//! ```toml
//! [sandbox]
//! mode = "on"                          # "off": agents run unconfined (said in every report)
//! registries = true                   # the package registries (crates.io, npm, PyPI, …): on by default
//! allow_hosts = ["git.example.org"]    # reachable besides the model, forge's MCP server, the registries
//! env_pass = ["NPM_TOKEN"]             # passed in although the name looks like a secret
//! bwrap = "/usr/bin/bwrap"             # bubblewrap, when not on PATH
//! ```
//!
//! Only the user's own config may set it: a repository's `forge.toml` (a repository can come
//! from anyone) that names `[sandbox]` is refused, so a checkout cannot loosen its own walls.

use std::path::{Path, PathBuf};

use forge_domain::sandbox::{HostPattern, SandboxMode, SandboxSettings};
use toml::Value;

use super::error::ConfigError;
use super::section::{section, strings};

const KEYS: &[&str] = &["mode", "registries", "allow_hosts", "env_pass", "bwrap"];

/// The `[sandbox]` section: the settings and the bubblewrap to use (`None`: `bwrap` on PATH).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SandboxConfig {
    pub settings: SandboxSettings,
    pub bwrap: Option<PathBuf>,
}

/// Reads `[sandbox]` of the user config at `path` (only for messages); absent: the default.
///
/// # Errors
/// [`ConfigError`] naming the file, the dotted key and the reason.
pub fn parse_sandbox_config(text: &str, path: &Path) -> Result<SandboxConfig, ConfigError> {
    let origin = format!("file {}", path.display());
    let Some(section) = section(text, "sandbox", &origin)? else {
        return Ok(SandboxConfig::default());
    };
    if let Some(key) = section.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(ConfigError::new(
            &origin,
            format!("sandbox.{key}"),
            format!("unknown key (expected one of: {})", KEYS.join(", ")),
        ));
    }
    let wrong =
        |key: &str, reason: String| ConfigError::new(&origin, format!("sandbox.{key}"), reason);
    let mut config = SandboxConfig::default();
    match section.get("mode") {
        None => {}
        Some(Value::String(s)) => {
            config.settings.mode = SandboxMode::parse(s).map_err(|e| wrong("mode", e))?;
        }
        Some(v) => {
            return Err(wrong(
                "mode",
                format!("expected \"on\" or \"off\", found {}", v.type_str()),
            ));
        }
    }
    match section.get("registries") {
        None => {}
        Some(Value::Boolean(on)) => config.settings.registries = *on,
        Some(v) => {
            return Err(wrong(
                "registries",
                format!("expected true or false, found {}", v.type_str()),
            ));
        }
    }
    for host in strings(&section, "allow_hosts").map_err(|e| wrong("allow_hosts", e))? {
        let pattern = HostPattern::parse(&host).map_err(|e| wrong("allow_hosts", e))?;
        config.settings.allow_hosts.push(pattern);
    }
    config.settings.env_pass = strings(&section, "env_pass").map_err(|e| wrong("env_pass", e))?;
    match section.get("bwrap") {
        None => {}
        Some(Value::String(s)) if !s.trim().is_empty() => config.bwrap = Some(PathBuf::from(s)),
        Some(v) => return Err(wrong("bwrap", format!("expected a path, found {v}"))),
    }
    Ok(config)
}

/// Refuses a `[sandbox]` section in a repository's `forge.toml`.
///
/// # Errors
/// [`ConfigError`] saying where the setting belongs.
pub fn refuse_project_sandbox(text: &str, path: &Path) -> Result<(), ConfigError> {
    let origin = format!("file {}", path.display());
    match section(text, "sandbox", &origin)? {
        None => Ok(()),
        Some(_) => Err(ConfigError::new(
            &origin,
            "sandbox",
            "a repository cannot set its own sandbox; put [sandbox] in your user config \
             (or use --sandbox off)"
                .to_owned(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sandbox_section() {
        let path = Path::new("/u/config.toml");
        let ok = |text: &str| parse_sandbox_config(text, path).unwrap();
        assert_eq!(ok(""), SandboxConfig::default());
        assert_eq!(
            ok("[review]\nout_dir = \"x\"\n").settings.mode,
            SandboxMode::On
        );
        assert_eq!(
            ok("[sandbox]\nmode = \"on\"\n").settings.mode,
            SandboxMode::On
        );
        let full = ok(
            "[sandbox]\nmode = \"off\"\nallow_hosts = [\"*.crates.io\", \"pypi.org:443\"]\n\
             env_pass = [\"NPM_TOKEN\"]\nbwrap = \"/opt/bwrap\"\n",
        );
        assert_eq!(full.settings.mode, SandboxMode::Off);
        assert!(full.settings.registries);
        assert!(!ok("[sandbox]\nregistries = false\n").settings.registries);
        assert!(ok("[sandbox]\nregistries = true\n").settings.registries);
        assert_eq!(full.settings.allow_hosts.len(), 2);
        assert_eq!(full.settings.env_pass, ["NPM_TOKEN"]);
        assert_eq!(full.bwrap, Some(PathBuf::from("/opt/bwrap")));
    }

    #[test]
    fn bad_sections_name_the_key() {
        let path = Path::new("/u/config.toml");
        let check = |text: &str, key: &str| {
            let err = parse_sandbox_config(text, path).unwrap_err().to_string();
            assert!(err.contains(key), "{text}: {err}");
        };
        check("sandbox = 1\n", "sandbox");
        check("[sandbox]\nmode = \"disabled\"\n", "sandbox.mode");
        check("[sandbox]\nmode = false\n", "sandbox.mode");
        check("[sandbox]\nallow_hosts = \"x\"\n", "sandbox.allow_hosts");
        check(
            "[sandbox]\nallow_hosts = [\"http://x\"]\n",
            "sandbox.allow_hosts",
        );
        check("[sandbox]\nenv_pass = [1]\n", "sandbox.env_pass");
        check("[sandbox]\nregistries = \"off\"\n", "sandbox.registries");
        check("[sandbox]\nregistry = false\n", "sandbox.registry");
        check("[sandbox]\nallow = []\n", "sandbox.allow");
    }

    #[test]
    fn a_repository_cannot_set_its_sandbox() {
        let path = Path::new("/r/forge.toml");
        assert!(refuse_project_sandbox("[review]\nout_dir = \"x\"\n", path).is_ok());
        let err = refuse_project_sandbox("[sandbox]\nmode = \"off\"\n", path).unwrap_err();
        assert!(err.to_string().contains("user config"), "{err}");
    }
}
