//! `CODEX_HOME`: where Codex keeps auth, config, sessions (rollouts) and state databases.
//!
//! A run with a home of its own (`ctx.home`) gets `CODEX_HOME=<home>/.codex`, the layout the
//! recorded fixtures and the e2e suite use. forge never invents a model provider there: either
//! the caller pre-creates `<home>/.codex/config.toml` (the e2e harness does, with
//! [`mock_provider_config`]) and passes it as `settings.home`, or `settings.copy_user_auth`
//! copies the user's own `auth.json` and `config.toml` into a private per-run home. A private
//! home without them still gets a `config.toml` ([`PRIVATE_HOME_CONFIG`]): Codex exits 1 when
//! `CODEX_HOME` names a directory that does not exist.

use std::path::{Path, PathBuf};

use forge_ports::{FileSource, PreparedFile};

/// The environment variable Codex reads its home from.
pub const CODEX_HOME_ENV: &str = "CODEX_HOME";

/// The files copied from the user's Codex home when `copy_user_auth` is set.
const USER_FILES: [&str; 2] = ["auth.json", "config.toml"];

/// The env var [`mock_provider_config`] tells Codex to read the (fake) API key from.
pub const MOCK_API_KEY_ENV: &str = "MOCK_API_KEY";

/// The Codex home inside a forge CLI home.
pub fn codex_home_in(home: &Path) -> PathBuf {
    home.join(".codex")
}

/// The user's own Codex home: `$CODEX_HOME`, else `$HOME/.codex`.
///
/// Read from the forge process's environment on purpose: the invocation port passes no
/// environment snapshot, and the user's home is a fact of the machine, not of the request.
pub fn user_codex_home() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os(CODEX_HOME_ENV).filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    std::env::var_os("HOME")
        .filter(|v| !v.is_empty())
        .map(|h| codex_home_in(Path::new(&h)))
}

/// `config.toml` of a private Codex home that copies nothing from the user: automation
/// defaults only (no update check at start-up, no analytics), never a model provider.
pub const PRIVATE_HOME_CONFIG: &str = "\
# Written by forge for a private CODEX_HOME (nothing copied from the user's own).
check_for_update_on_startup = false

[analytics]
enabled = false
";

/// The files a private per-run Codex home starts with: the user's auth and config when
/// `copy_user_auth` asks for them, else [`PRIVATE_HOME_CONFIG`]. Either way the process runner
/// creates the directory (it creates a prepared file's parents even when a copy's source is
/// missing), so `CODEX_HOME` never names a directory that does not exist.
pub fn private_home_files(run_codex_home: &Path, copy_user_auth: bool) -> Vec<PreparedFile> {
    let user = copy_user_auth.then(user_codex_home).flatten();
    match user {
        Some(user) => copied_user_files(&user, run_codex_home),
        None => vec![PreparedFile {
            path: run_codex_home.join("config.toml"),
            source: FileSource::Contents(PRIVATE_HOME_CONFIG.as_bytes().to_vec()),
        }],
    }
}

/// Files that copy the user's auth and config into `run_codex_home`. Empty when the source
/// and the destination are the same directory (copying a file onto itself would truncate it).
pub fn copied_user_files(user_home: &Path, run_codex_home: &Path) -> Vec<PreparedFile> {
    if user_home == run_codex_home {
        return Vec::new();
    }
    USER_FILES
        .iter()
        .map(|name| PreparedFile {
            path: run_codex_home.join(name),
            source: FileSource::CopyOf(user_home.join(name)),
        })
        .collect()
}

/// `config.toml` text that points Codex at a loopback fake model speaking the OpenAI
/// Responses API at `base_url` (e.g. `http://127.0.0.1:PORT/v1`). The key is read from
/// [`MOCK_API_KEY_ENV`] (any value). `model` should be a slug the build has metadata for
/// (`gpt-5.5` for 0.169), otherwise Codex adds an `error` item and changes its tool set.
/// Retries are turned off so error-path tests end in seconds rather than minutes.
pub fn mock_provider_config(base_url: &str, model: &str) -> String {
    format!(
        "model = {model}\n\
         model_provider = \"mock\"\n\
         check_for_update_on_startup = false\n\
         \n\
         [analytics]\n\
         enabled = false\n\
         \n\
         [model_providers.mock]\n\
         name = \"mock\"\n\
         base_url = {base_url}\n\
         env_key = \"{MOCK_API_KEY_ENV}\"\n\
         wire_api = \"responses\"\n\
         request_max_retries = 0\n\
         stream_max_retries = 0\n",
        model = toml_string(model),
        base_url = toml_string(base_url),
    )
}

/// `text` as a TOML basic string (also what `-c key=value` expects for a string value).
pub fn toml_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_strings_round_trip() {
        for text in [
            "plain",
            "quote \" and \\ slash",
            "multi\nline\ttab",
            "del \u{7f} bell \u{7}",
        ] {
            let doc = format!("k = {}", toml_string(text));
            let parsed: toml::Table = toml::from_str(&doc).unwrap();
            assert_eq!(parsed["k"].as_str(), Some(text), "{doc}");
        }
    }

    #[test]
    fn mock_config_is_valid_toml_naming_the_provider() {
        let text = mock_provider_config("http://127.0.0.1:9/v1", "gpt-5.5");
        let parsed: toml::Table = toml::from_str(&text).unwrap();
        assert_eq!(parsed["model_provider"].as_str(), Some("mock"));
        assert_eq!(
            parsed["model_providers"]["mock"]["base_url"].as_str(),
            Some("http://127.0.0.1:9/v1")
        );
    }

    #[test]
    fn the_private_home_config_turns_off_start_up_checks_and_analytics() {
        let parsed: toml::Table = toml::from_str(PRIVATE_HOME_CONFIG).unwrap();
        assert_eq!(parsed["check_for_update_on_startup"].as_bool(), Some(false));
        assert_eq!(parsed["analytics"]["enabled"].as_bool(), Some(false));
        assert!(!parsed.contains_key("model_provider"));
        let files = private_home_files(Path::new("/run/.codex"), false);
        assert_eq!(
            files,
            vec![PreparedFile {
                path: PathBuf::from("/run/.codex/config.toml"),
                source: FileSource::Contents(PRIVATE_HOME_CONFIG.as_bytes().to_vec()),
            }]
        );
    }

    #[test]
    fn never_copies_a_home_onto_itself() {
        let home = Path::new("/h/.codex");
        assert!(copied_user_files(home, home).is_empty());
        let files = copied_user_files(home, Path::new("/run/.codex"));
        assert_eq!(files.len(), 2);
        assert_eq!(files[0].path, Path::new("/run/.codex/auth.json"));
        assert_eq!(
            files[0].source,
            FileSource::CopyOf(PathBuf::from("/h/.codex/auth.json"))
        );
    }
}
