//! `[sandbox]` in forge.toml / the user config and `--sandbox on|off`.

use serde::{Deserialize, Serialize};

use super::net::HostPattern;

/// Whether agent runs are confined: on by default; `--sandbox off` or `[sandbox] mode =
/// "off"` turns it off, and every result, footer and report says `sandbox: off`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SandboxMode {
    #[default]
    On,
    Off,
}

impl SandboxMode {
    /// `on` / `off`, as the flag and the config spell it.
    ///
    /// # Errors
    /// The text that is neither, for the caller's error message.
    pub fn parse(text: &str) -> Result<Self, String> {
        match text.trim() {
            "on" => Ok(Self::On),
            "off" => Ok(Self::Off),
            other => Err(format!(
                "sandbox mode must be \"on\" or \"off\", not {other:?}"
            )),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::On => "on",
            Self::Off => "off",
        }
    }
}

/// The user's sandbox settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SandboxSettings {
    pub mode: SandboxMode,
    /// The package registries ([`super::registries::REGISTRIES`]) are reachable: on by
    /// default, `[sandbox] registries = false` shuts them.
    #[serde(default = "on")]
    pub registries: bool,
    /// Hosts the agent may reach besides its model, forge's MCP server and the registries
    /// (`registry.npmjs.org`, `*.crates.io`, `host:port`).
    pub allow_hosts: Vec<HostPattern>,
    /// Environment variables passed in although their names look like secrets.
    pub env_pass: Vec<String>,
}

fn on() -> bool {
    true
}

impl Default for SandboxSettings {
    fn default() -> Self {
        Self {
            mode: SandboxMode::default(),
            registries: true,
            allow_hosts: Vec::new(),
            env_pass: Vec::new(),
        }
    }
}

impl SandboxSettings {
    /// Every host a confined run may reach through the proxy: the registries (when on),
    /// then `allow_hosts`.
    pub fn reachable_hosts(&self) -> Vec<HostPattern> {
        let mut hosts = if self.registries {
            super::registries::registry_hosts()
        } else {
            Vec::new()
        };
        hosts.extend(self.allow_hosts.iter().cloned());
        hosts
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mode_parses_on_and_off_only() {
        let check = |text: &str, want: Option<SandboxMode>| {
            assert_eq!(SandboxMode::parse(text).ok(), want, "{text:?}");
        };
        check("on", Some(SandboxMode::On));
        check("off", Some(SandboxMode::Off));
        check(" off ", Some(SandboxMode::Off));
        check("ON", None);
        check("false", None);
        check("", None);
        check("of", None);
    }

    #[test]
    fn on_by_default() {
        assert_eq!(SandboxSettings::default().mode, SandboxMode::On);
        assert!(SandboxSettings::default().registries);
    }

    #[test]
    fn the_registries_open_by_default_and_allow_hosts_adds_to_them() {
        let npm = |s: &SandboxSettings| {
            s.reachable_hosts()
                .iter()
                .any(|p| p.matches("registry.npmjs.org", 443))
        };
        let internal = |s: &SandboxSettings| {
            s.reachable_hosts()
                .iter()
                .any(|p| p.matches("git.internal.example", 443))
        };
        let mut settings = SandboxSettings::default();
        assert!(npm(&settings));
        assert!(!internal(&settings));
        settings.allow_hosts = vec![HostPattern::parse("git.internal.example").unwrap()];
        assert!(npm(&settings) && internal(&settings));
        settings.registries = false;
        assert!(!npm(&settings));
        assert!(internal(&settings));
        // Settings written before the preset existed read as on.
        let old: SandboxSettings =
            serde_json::from_str(r#"{"mode":"on","allow_hosts":[],"env_pass":[]}"#).unwrap();
        assert!(old.registries);
    }
}
