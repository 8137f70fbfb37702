//! The per-run gemini home: `HOME`/`GEMINI_CLI_HOME` point at it, and its
//! `.gemini/settings.json` selects the auth type and carries the run's settings overlay
//! (max turns, excluded tools), which gemini only reads from settings files.

use std::path::{Path, PathBuf};

use forge_domain::{ExecutionRequest, ForgeError};
use forge_ports::{FileSource, PreparedFile};
use serde_json::{Value, json};

/// Files gemini keeps its login in, copied with `copy_user_auth`.
const AUTH_FILES: [&str; 2] = ["oauth_creds.json", "google_accounts.json"];

/// Settings for a private home when the user's own are not copied: API-key auth (from
/// `GEMINI_API_KEY`) and no usage statistics.
pub fn default_settings() -> Value {
    json!({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": false}
    })
}

/// The settings the request needs on top of whatever else is configured; `None` when none.
///
/// # Errors
/// [`ForgeError::InvalidRequest`] for `max_turns = 0`.
pub fn overlay(request: &ExecutionRequest) -> Result<Option<Value>, ForgeError> {
    let mut overlay = serde_json::Map::new();
    if let Some(turns) = request.max_turns {
        if turns == 0 {
            return Err(ForgeError::InvalidRequest {
                reason: "max turns must be at least 1".to_owned(),
            });
        }
        overlay.insert("model".into(), json!({"maxSessionTurns": turns}));
    }
    if !request.disallowed_tools.is_empty() {
        overlay.insert("tools".into(), json!({"exclude": request.disallowed_tools}));
    }
    Ok((!overlay.is_empty()).then_some(Value::Object(overlay)))
}

/// Merges `overlay` into `base`: objects key by key, arrays as a union, anything else
/// replaced.
pub fn merge(base: &mut Value, overlay: Value) {
    match (base, overlay) {
        (Value::Object(base), Value::Object(overlay)) => {
            for (key, value) in overlay {
                match base.get_mut(&key) {
                    Some(slot) => merge(slot, value),
                    None => {
                        base.insert(key, value);
                    }
                }
            }
        }
        (Value::Array(base), Value::Array(overlay)) => {
            for value in overlay {
                if !base.contains(&value) {
                    base.push(value);
                }
            }
        }
        (slot, value) => *slot = value,
    }
}

/// The files of a private home at `home`.
///
/// With `copy_user_auth`, the user's `settings.json` (their selected auth type) and login
/// files are copied; when an overlay must be merged in, the user's settings are read now.
///
/// # Errors
/// [`ForgeError::InvalidRequest`] when the user's settings cannot be read or are not plain
/// JSON and an overlay has to be merged into them.
pub fn home_files(
    home: &Path,
    copy_user_auth: bool,
    user_home: Option<&Path>,
    overlay: Option<Value>,
) -> Result<Vec<PreparedFile>, ForgeError> {
    let gemini_dir = home.join(".gemini");
    let settings_path = gemini_dir.join("settings.json");
    let user_dir = user_home
        .filter(|_| copy_user_auth)
        .map(|h| h.join(".gemini"));
    let mut files = Vec::new();
    let settings = match (&user_dir, overlay) {
        (Some(user_dir), None) => FileSource::CopyOf(user_dir.join("settings.json")),
        (Some(user_dir), Some(overlay)) => {
            let mut settings = read_user_settings(&user_dir.join("settings.json"))?;
            merge(&mut settings, overlay);
            FileSource::Contents(pretty(&settings))
        }
        (None, overlay) => {
            let mut settings = default_settings();
            if let Some(overlay) = overlay {
                merge(&mut settings, overlay);
            }
            FileSource::Contents(pretty(&settings))
        }
    };
    files.push(PreparedFile {
        path: settings_path,
        source: settings,
    });
    if let Some(user_dir) = user_dir {
        for name in AUTH_FILES {
            files.push(PreparedFile {
                path: gemini_dir.join(name),
                source: FileSource::CopyOf(user_dir.join(name)),
            });
        }
    }
    Ok(files)
}

fn read_user_settings(path: &PathBuf) -> Result<Value, ForgeError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(default_settings()),
        Err(e) => {
            return Err(ForgeError::InvalidRequest {
                reason: format!("cannot read {} to copy gemini auth: {e}", path.display()),
            });
        }
    };
    serde_json::from_str(&text).map_err(|e| ForgeError::InvalidRequest {
        reason: format!(
            "cannot merge run settings into a copy of {}: not plain JSON ({e})",
            path.display()
        ),
    })
}

fn pretty(value: &Value) -> Vec<u8> {
    let mut bytes = serde_json::to_vec_pretty(value).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_unions_arrays_and_replaces_scalars() {
        let mut base = json!({"a": {"x": 1, "l": ["p"]}, "b": 2});
        merge(
            &mut base,
            json!({"a": {"x": 3, "l": ["p", "q"]}, "c": true}),
        );
        assert_eq!(
            base,
            json!({"a": {"x": 3, "l": ["p", "q"]}, "b": 2, "c": true})
        );
    }
}
