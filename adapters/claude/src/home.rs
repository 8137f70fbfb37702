//! Per-run CLI home isolation.
//!
//! claude keeps its state in two places: `$CLAUDE_CONFIG_DIR` (default `~/.claude`: sessions,
//! transcripts, credentials, and — when the variable is set — `.claude.json`) and, when the
//! variable is not set, `~/.claude.json` (settings, trust, account). Parallel runs sharing
//! them race on `.claude.json`, so a run with its own home gets both pointed inside it:
//! `CLAUDE_CONFIG_DIR=<home>/.claude` and `HOME=<home>` (the recorded transcripts were made
//! with `HOME`, and tools the agent runs then see the same private home).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use forge_ports::{FileSource, PreparedFile};

/// Where the user's own claude state lives, resolved once from the environment.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UserPaths {
    /// The user's config dir (`$CLAUDE_CONFIG_DIR`, else `~/.claude`).
    pub config_dir: Option<PathBuf>,
    /// The user's global config file (`$CLAUDE_CONFIG_DIR/.claude.json`, else `~/.claude.json`).
    pub global_config: Option<PathBuf>,
}

impl UserPaths {
    /// From `HOME` and `CLAUDE_CONFIG_DIR` values.
    pub fn resolve(home: Option<&Path>, config_dir: Option<&Path>) -> Self {
        match (config_dir, home) {
            (Some(dir), _) => UserPaths {
                config_dir: Some(dir.to_path_buf()),
                global_config: Some(dir.join(".claude.json")),
            },
            (None, Some(home)) => UserPaths {
                config_dir: Some(home.join(".claude")),
                global_config: Some(home.join(".claude.json")),
            },
            (None, None) => UserPaths::default(),
        }
    }

    /// From this process's environment.
    pub fn from_env() -> Self {
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let dir = std::env::var_os("CLAUDE_CONFIG_DIR").map(PathBuf::from);
        Self::resolve(home.as_deref(), dir.as_deref())
    }
}

/// The run's config dir inside its home.
pub fn config_dir(run_home: &Path) -> PathBuf {
    run_home.join(".claude")
}

pub fn env_vars(run_home: &Path) -> BTreeMap<String, String> {
    BTreeMap::from([
        (
            "CLAUDE_CONFIG_DIR".to_owned(),
            config_dir(run_home).to_string_lossy().into_owned(),
        ),
        ("HOME".to_owned(), run_home.to_string_lossy().into_owned()),
    ])
}

/// claude needs no config file to run; with `copy_user_auth` the user's login (OAuth
/// credentials and account config) is copied in, skipped where the user has none.
pub fn prepared_files(
    run_home: &Path,
    user: &UserPaths,
    copy_user_auth: bool,
) -> Vec<PreparedFile> {
    if !copy_user_auth {
        return Vec::new();
    }
    let dir = config_dir(run_home);
    let mut files = Vec::new();
    if let Some(src) = &user.config_dir {
        files.push(PreparedFile {
            path: dir.join(".credentials.json"),
            source: FileSource::CopyOf(src.join(".credentials.json")),
        });
    }
    if let Some(src) = &user.global_config {
        // With CLAUDE_CONFIG_DIR set, claude reads its global config from inside that dir.
        files.push(PreparedFile {
            path: dir.join(".claude.json"),
            source: FileSource::CopyOf(src.clone()),
        });
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_paths_follow_claude_config_dir_then_home() {
        let both = UserPaths::resolve(Some(Path::new("/h")), Some(Path::new("/c")));
        assert_eq!(both.global_config, Some(PathBuf::from("/c/.claude.json")));
        let home = UserPaths::resolve(Some(Path::new("/h")), None);
        assert_eq!(home.config_dir, Some(PathBuf::from("/h/.claude")));
        assert_eq!(home.global_config, Some(PathBuf::from("/h/.claude.json")));
        assert_eq!(UserPaths::resolve(None, None), UserPaths::default());
    }
}
