//! Reading one `[section]` of a TOML file by hand, for the sections whose checks are more
//! than serde's (rules that must parse, keys a repository may not set): the table itself
//! and its arrays of strings, with the messages every such section gives.

use toml::{Table, Value};

use super::error::ConfigError;

/// The table `[name]` of `text`; `None` when the file has none.
///
/// # Errors
/// [`ConfigError`] naming `origin`: the text is not TOML, or `name` is not a table.
pub(crate) fn section(text: &str, name: &str, origin: &str) -> Result<Option<Table>, ConfigError> {
    let mut table: Table = text
        .parse()
        .map_err(|e: toml::de::Error| ConfigError::whole(origin, e.message().to_owned()))?;
    match table.remove(name) {
        None => Ok(None),
        Some(Value::Table(t)) => Ok(Some(t)),
        Some(v) => Err(ConfigError::new(
            origin,
            name,
            format!("expected a table, found {}", v.type_str()),
        )),
    }
}

/// The array of strings at `key`; empty when absent.
///
/// # Errors
/// The reason, for the caller to name its key: not an array, or an item not a string.
pub(crate) fn strings(section: &Table, key: &str) -> Result<Vec<String>, String> {
    match section.get(key) {
        None => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| match v {
                Value::String(s) => Ok(s.clone()),
                other => Err(format!("expected strings, found {}", other.type_str())),
            })
            .collect(),
        Some(v) => Err(format!(
            "expected an array of strings, found {}",
            v.type_str()
        )),
    }
}
