//! A run in the user's own home: what forge must tell gemini (its tool server, max turns,
//! excluded tools — gemini takes these only from settings files) goes into a *system*
//! settings file of the run, named by `GEMINI_CLI_SYSTEM_SETTINGS_PATH`. The user's files
//! stay untouched: gemini merges its settings as defaults < system defaults < user <
//! workspace < system, `mcpServers` key by key, `tools.exclude` as a union, so the user's
//! auth and MCP servers keep working beside forge's. The machine's own system settings
//! (the file the variable replaces) are merged into the run's copy.
//!
//! Gemini 0.61 reads a system settings file only when the file and every directory above it
//! are owned by root and not writable by group or others; otherwise it skips the file with a
//! warning. [`honoured_at`] applies the same rule before the run, so a run whose limits or
//! tools would be dropped is refused, not run without them.

use std::path::{Path, PathBuf};

use forge_domain::ForgeError;
use forge_ports::{FileSource, PreparedFile};
use serde_json::Value;

use crate::home::merge;

/// The variable naming gemini's system settings file.
pub const SYSTEM_SETTINGS_ENV: &str = "GEMINI_CLI_SYSTEM_SETTINGS_PATH";
/// The variable naming its system defaults file (else beside the system settings file).
pub const SYSTEM_DEFAULTS_ENV: &str = "GEMINI_CLI_SYSTEM_DEFAULTS_PATH";
/// Where gemini looks for system settings on Linux when the variable is unset.
const DEFAULT_SYSTEM_SETTINGS: &str = "/etc/gemini-cli/settings.json";
/// The run's system settings file, in its artifact directory.
const FILE_NAME: &str = "gemini-system-settings.json";

/// The run's system settings: the file to write and the environment that points gemini at
/// it. `lookup` reads the run's environment (request, settings, then forge's own).
///
/// # Errors
/// [`ForgeError::InvalidRequest`] when gemini would skip the file (see the module docs), or
/// when the machine's system settings cannot be read as JSON to merge into.
pub fn files_and_env(
    run_dir: &Path,
    lookup: &dyn Fn(&str) -> Option<String>,
    overlay: Value,
) -> Result<(PreparedFile, Vec<(String, String)>), ForgeError> {
    let path = run_dir.join(FILE_NAME);
    if let Err(why) = honoured_at(run_dir) {
        return Err(ForgeError::InvalidRequest {
            reason: format!(
                "gemini takes tools, max turns and excluded tools only from settings files; \
                 without a private home forge gives them in a system settings file, which \
                 gemini 0.61 reads only when it and every directory above it are owned by \
                 root and not writable by group or others, and {why}: run gemini with a \
                 private home (isolate_home or a configured home)"
            ),
        });
    }
    let machine = lookup(SYSTEM_SETTINGS_ENV)
        .filter(|p| !p.is_empty())
        .map_or_else(|| PathBuf::from(DEFAULT_SYSTEM_SETTINGS), PathBuf::from);
    let mut settings = read_settings(&machine)?;
    merge(&mut settings, overlay);
    let defaults = lookup(SYSTEM_DEFAULTS_ENV)
        .filter(|p| !p.is_empty())
        .map(PathBuf::from)
        .or_else(|| machine.parent().map(|d| d.join("system-defaults.json")))
        .unwrap_or_default();
    let mut bytes = serde_json::to_vec_pretty(&settings).unwrap_or_default();
    bytes.push(b'\n');
    let env = vec![
        (
            SYSTEM_SETTINGS_ENV.to_owned(),
            path.to_string_lossy().into_owned(),
        ),
        // Gemini looks for system defaults beside the system settings file: keep the
        // machine's where they were.
        (
            SYSTEM_DEFAULTS_ENV.to_owned(),
            defaults.to_string_lossy().into_owned(),
        ),
    ];
    Ok((
        PreparedFile {
            path,
            source: FileSource::Contents(bytes),
        },
        env,
    ))
}

/// Whether gemini would read a root-owned, owner-only file written into `dir`: `dir` (when it
/// exists already) and every directory above it owned by root and not writable by group or
/// others. `Err` says which directory fails.
pub fn honoured_at(dir: &Path) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    for ancestor in dir.ancestors() {
        let meta = match std::fs::metadata(ancestor) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(format!("{} cannot be checked ({e})", ancestor.display())),
        };
        if meta.uid() != 0 {
            return Err(format!(
                "{} is owned by uid {}, not root",
                ancestor.display(),
                meta.uid()
            ));
        }
        if meta.mode() & 0o022 != 0 {
            return Err(format!(
                "{} is writable by group or others (mode {:o})",
                ancestor.display(),
                meta.mode() & 0o7777
            ));
        }
    }
    Ok(())
}

fn read_settings(path: &Path) -> Result<Value, ForgeError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Value::Object(serde_json::Map::new()));
        }
        Err(e) => {
            return Err(ForgeError::InvalidRequest {
                reason: format!(
                    "cannot read gemini's system settings {}: {e}",
                    path.display()
                ),
            });
        }
    };
    serde_json::from_str(&text).map_err(|e| ForgeError::InvalidRequest {
        reason: format!(
            "cannot merge run settings into a copy of gemini's system settings {}: not plain \
             JSON ({e})",
            path.display()
        ),
    })
}
