//! `[sandbox]` in forge.toml / the user config and `--sandbox on|off`.

use serde::{Deserialize, Serialize};

use super::net::HostPattern;

/// Whether agent runs are confined: `--sandbox on` or `[sandbox] mode = "on"`. Off by default
/// in this version — and said so in every result, footer and report (`sandbox: off`) —
/// until the ACP agents' own state and the egress point are confined too (issue 31).
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
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SandboxSettings {
    pub mode: SandboxMode,
    /// Hosts the agent may reach besides its model and forge's MCP server
    /// (`registry.npmjs.org`, `*.crates.io`, `host:port`).
    pub allow_hosts: Vec<HostPattern>,
    /// Environment variables passed in although their names look like secrets.
    pub env_pass: Vec<String>,
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
    }
}
