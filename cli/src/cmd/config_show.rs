//! `config show`: the effective configuration, each value with its source.

use std::io::Write;

use serde_json::Value;

use crate::args::ConfigFlags;
use crate::config_load::load_config;
use crate::exit::Failure;
use crate::output::write_json_pretty;

pub fn run(flags: &ConfigFlags, json: bool) -> Result<u8, Failure> {
    let config = load_config(flags)?;
    let value = serde_json::to_value(&config).map_err(anyhow::Error::from)?;
    let mut out = std::io::stdout().lock();
    if json {
        write_json_pretty(&mut out, &value)?;
    } else {
        let mut lines = Vec::new();
        flatten("", &value, &mut lines);
        let width = lines
            .iter()
            .map(|(k, _)| k.len())
            .max()
            .unwrap_or(0)
            .min(48);
        for (line, source) in lines {
            writeln!(out, "{line:width$}  # {source}")?;
        }
    }
    Ok(0)
}

/// `key = value` lines with their source, for every `{value, source}` leaf.
fn flatten(prefix: &str, value: &Value, out: &mut Vec<(String, String)>) {
    let Value::Object(map) = value else {
        return;
    };
    if map.len() == 2 {
        if let (Some(v), Some(Value::String(source))) = (map.get("value"), map.get("source")) {
            out.push((format!("{prefix} = {v}"), source.clone()));
            return;
        }
    }
    for (key, child) in map {
        let key = if key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            key.clone()
        } else {
            format!("{key:?}")
        };
        let path = if prefix.is_empty() {
            key
        } else {
            format!("{prefix}.{key}")
        };
        flatten(&path, child, out);
    }
}
