//! A configuration value forge cannot use: where it is, which key, and why.

use std::fmt;

use forge_domain::ForgeError;

/// `origin` names the file (`file /w/forge.toml`), variable (`environment variable
/// FORGE_TIMEOUT_MS`) or flag; `key` is the dotted key (`providers.claude.timeout_ms`),
/// absent for a syntax error that is not about one key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub origin: String,
    pub key: Option<String>,
    pub reason: String,
}

impl ConfigError {
    pub fn new(
        origin: impl Into<String>,
        key: impl Into<String>,
        reason: impl Into<String>,
    ) -> Self {
        Self {
            origin: origin.into(),
            key: Some(key.into()),
            reason: reason.into(),
        }
    }

    /// An error about the whole source (unreadable file, TOML syntax).
    pub fn whole(origin: impl Into<String>, reason: impl Into<String>) -> Self {
        Self {
            origin: origin.into(),
            key: None,
            reason: reason.into(),
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.key {
            Some(key) => write!(
                f,
                "bad configuration in {}: key `{key}`: {}",
                self.origin, self.reason
            ),
            None => write!(f, "bad configuration in {}: {}", self.origin, self.reason),
        }
    }
}

impl std::error::Error for ConfigError {}

impl From<ConfigError> for ForgeError {
    fn from(e: ConfigError) -> Self {
        ForgeError::InvalidRequest {
            reason: e.to_string(),
        }
    }
}
