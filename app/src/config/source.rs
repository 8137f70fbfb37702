//! Where a configuration value came from.

use std::fmt;
use std::path::PathBuf;

use serde::{Serialize, Serializer};

/// The origin of one value. Displayed as `flag`, `env:NAME`, `file:PATH` or `default`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Default,
    File(PathBuf),
    Env(String),
    Flag,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Default => f.write_str("default"),
            Source::File(path) => write!(f, "file:{}", path.display()),
            Source::Env(name) => write!(f, "env:{name}"),
            Source::Flag => f.write_str("flag"),
        }
    }
}

impl Serialize for Source {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// A value and its origin. Serialised as `{"value": …, "source": "env:FORGE_PROVIDER"}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Sourced<T> {
    pub value: T,
    pub source: Source,
}

impl<T> Sourced<T> {
    pub fn new(value: T, source: Source) -> Self {
        Self { value, source }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_display_as_documented() {
        assert_eq!(Source::Default.to_string(), "default");
        assert_eq!(Source::Flag.to_string(), "flag");
        assert_eq!(
            Source::Env("FORGE_PROVIDER".into()).to_string(),
            "env:FORGE_PROVIDER"
        );
        assert_eq!(
            Source::File("/w/forge.toml".into()).to_string(),
            "file:/w/forge.toml"
        );
    }
}
