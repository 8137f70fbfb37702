//! The review's section of the user config (and of a project's `forge.toml`):
//!
//! ```toml
//! [review]
//! out_dir = "project/reviews"    # where `review` writes its four files; relative to the repository
//! ```

use std::path::{Path, PathBuf};

use toml::{Table, Value};

use super::error::ConfigError;

/// `review`'s default output directory, relative to the repository.
pub const DEFAULT_REVIEW_OUT_DIR: &str = "project/reviews";

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReviewConfig {
    pub out_dir: Option<PathBuf>,
}

/// Reads `[review]` of the file at `path` (only for messages); an absent table is the
/// default.
///
/// # Errors
/// [`ConfigError`] naming the file, the dotted key and the reason for bad TOML, an unknown
/// key or a value of the wrong type.
pub fn parse_review_config(text: &str, path: &Path) -> Result<ReviewConfig, ConfigError> {
    let origin = format!("file {}", path.display());
    let table: Table = text
        .parse()
        .map_err(|e: toml::de::Error| ConfigError::whole(&origin, e.message().to_owned()))?;
    let Some(section) = table.get("review") else {
        return Ok(ReviewConfig::default());
    };
    let Value::Table(section) = section else {
        return Err(ConfigError::new(
            &origin,
            "review",
            format!("expected a table, found {}", section.type_str()),
        ));
    };
    if let Some(key) = section.keys().find(|k| k.as_str() != "out_dir") {
        return Err(ConfigError::new(
            &origin,
            format!("review.{key}"),
            "unknown key (expected one of: out_dir)".to_owned(),
        ));
    }
    let out_dir = match section.get("out_dir") {
        None => None,
        Some(Value::String(s)) if s.trim().is_empty() => {
            return Err(ConfigError::new(
                &origin,
                "review.out_dir",
                "must not be empty".to_owned(),
            ));
        }
        Some(Value::String(s)) => Some(PathBuf::from(s)),
        Some(v) => {
            return Err(ConfigError::new(
                &origin,
                "review.out_dir",
                format!("expected a string, found {}", v.type_str()),
            ));
        }
    };
    Ok(ReviewConfig { out_dir })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_review_section() {
        let path = Path::new("/u/config.toml");
        let ok = |text: &str| parse_review_config(text, path).unwrap();
        assert_eq!(ok(""), ReviewConfig::default());
        assert_eq!(
            ok("[review]\nout_dir = \"out/r\"\n").out_dir,
            Some(PathBuf::from("out/r"))
        );
        for (text, key) in [
            ("[review]\nout = \"x\"\n", "review.out"),
            ("[review]\nout_dir = 3\n", "review.out_dir"),
            ("[review]\nout_dir = \" \"\n", "review.out_dir"),
            ("review = 1\n", "review"),
        ] {
            let err = parse_review_config(text, path).unwrap_err().to_string();
            assert!(
                err.contains(key) && err.contains("/u/config.toml"),
                "{text}: {err}"
            );
        }
    }
}
