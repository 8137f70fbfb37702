//! Running the real provider CLIs offline, against a loopback fake model, through forge's
//! own provider configuration.
//!
//! One place knows, for each provider, which binary of an npm install to run and which
//! settings point it at `http://127.0.0.1:<port>` with no key and no internet
//! (`docs/real-clis.md`): the `demo` command builds [`ProviderSettings`] from it, and
//! `cargo xtask e2e` writes the same values into a project `forge.toml`
//! ([`OfflineProvider::project_toml`]). Every run gets a private CLI home (`isolate_home`),
//! so parallel runs never share CLI state.
//!
//! Codex reads its model provider only from `$CODEX_HOME/config.toml`. forge's codex adapter
//! seeds a private per-run home by copying `config.toml` from the forge process's own
//! `$CODEX_HOME` when `copy_user_auth` is set, so [`CodexHome::Template`] writes a template
//! home and asks the caller to start forge with `CODEX_HOME=<template>`
//! ([`OfflineProvider::process_env`]). A caller that cannot change its own environment (a
//! library call in a running process) uses [`CodexHome::Fixed`]: one pre-created home,
//! private to that caller.

pub mod npm_install;

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use forge_adapter_codex::home::toml_string;
use forge_ports::ProviderSettings;

/// A CLI forge pins and installs from npm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PinnedCli {
    /// forge's provider id, also the binary's name under `node_modules/.bin/`.
    pub provider: &'static str,
    /// The npm package.
    pub package: &'static str,
    /// The exact version the adapters are written against.
    pub version: &'static str,
}

/// The pinned CLIs, one per provider.
pub const PINNED_CLIS: [PinnedCli; 3] = [
    PinnedCli {
        provider: "claude",
        package: "@anthropic-ai/claude-code",
        version: "2.1.330",
    },
    PinnedCli {
        provider: "codex",
        package: "@openai/codex",
        version: "0.169.0",
    },
    PinnedCli {
        provider: "gemini",
        package: "@google/gemini-cli",
        version: "0.61.0",
    },
];

/// The ACP agents forge is verified with (`kind = "acp"`), installed beside the CLIs
/// (`provider` is the binary's name). gemini's ACP mode is the pinned gemini CLI itself
/// (`gemini --acp`). Both run on Node 20.
pub const PINNED_ACP_AGENTS: [PinnedCli; 2] = [
    PinnedCli {
        provider: "codex-acp",
        package: "@zed-industries/codex-acp",
        version: "0.16.0",
    },
    PinnedCli {
        provider: "claude-agent-acp",
        package: "@zed-industries/claude-agent-acp",
        version: "0.23.1",
    },
];

/// The pinned CLIs and ACP agents missing in `clis_dir` (the end-to-end suite needs both;
/// the demo only the CLIs).
pub fn missing_clis_and_agents(clis_dir: &Path) -> Vec<PinnedCli> {
    PINNED_CLIS
        .into_iter()
        .chain(PINNED_ACP_AGENTS)
        .filter(|cli| !cli.is_installed(clis_dir))
        .collect()
}

/// Environment variable that overrides where the demo installs the CLIs.
pub const CLIS_DIR_ENV: &str = "FORGE_CLIS_DIR";

/// The model codex is told to use: a slug 0.169 has metadata for (others change its tools).
pub const CODEX_MODEL: &str = "gpt-5.5";

/// Retries the offline CLIs may make: enough for one 429 and one cut stream, few enough that
/// a model that always fails ends the run in seconds rather than minutes.
const CLAUDE_MAX_RETRIES: &str = "2";
const CODEX_REQUEST_RETRIES: u32 = 2;
const CODEX_STREAM_RETRIES: u32 = 2;

impl PinnedCli {
    /// `package@version`, as `npm install` takes it.
    pub fn spec(&self) -> String {
        format!("{}@{}", self.package, self.version)
    }

    /// `<clis_dir>/node_modules/.bin/<provider>`.
    pub fn binary(&self, clis_dir: &Path) -> PathBuf {
        clis_dir.join("node_modules/.bin").join(self.provider)
    }

    /// The version in the installed package's `package.json`, when it is there.
    pub fn installed_version(&self, clis_dir: &Path) -> Option<String> {
        let manifest = clis_dir
            .join("node_modules")
            .join(self.package)
            .join("package.json");
        let text = std::fs::read_to_string(manifest).ok()?;
        let json: serde_json::Value = serde_json::from_str(&text).ok()?;
        json.get("version")?.as_str().map(str::to_owned)
    }

    /// Installed, with the binary present and the pinned version.
    pub fn is_installed(&self, clis_dir: &Path) -> bool {
        self.binary(clis_dir).exists()
            && self.installed_version(clis_dir).as_deref() == Some(self.version)
    }

    /// The pinned CLI of `provider`.
    pub fn of(provider: &str) -> Option<PinnedCli> {
        PINNED_CLIS.into_iter().find(|c| c.provider == provider)
    }
}

/// The pinned CLIs missing (or at another version) in `clis_dir`.
pub fn missing_clis(clis_dir: &Path) -> Vec<PinnedCli> {
    PINNED_CLIS
        .into_iter()
        .filter(|cli| !cli.is_installed(clis_dir))
        .collect()
}

/// Arguments of the `npm` command that installs every pinned CLI into `clis_dir`.
pub fn npm_install_args(clis_dir: &Path) -> Vec<String> {
    let mut args = vec![
        "install".to_owned(),
        "--prefix".to_owned(),
        clis_dir.to_string_lossy().into_owned(),
        "--no-audit".to_owned(),
        "--no-fund".to_owned(),
    ];
    args.extend(PINNED_CLIS.iter().map(PinnedCli::spec));
    args
}

/// The user cache for the CLIs: `$FORGE_CLIS_DIR`, else
/// `$XDG_CACHE_HOME/forge-code-agent/clis`, else `~/.cache/forge-code-agent/clis`.
pub fn user_clis_dir(env: &BTreeMap<String, String>) -> Option<PathBuf> {
    let get = |k: &str| env.get(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    get(CLIS_DIR_ENV).or_else(|| Some(user_cache_dir(env)?.join("clis")))
}

/// `$XDG_CACHE_HOME/forge-code-agent`, else `~/.cache/forge-code-agent`.
pub fn user_cache_dir(env: &BTreeMap<String, String>) -> Option<PathBuf> {
    let get = |k: &str| env.get(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    let base = get("XDG_CACHE_HOME").or_else(|| get("HOME").map(|h| h.join(".cache")))?;
    Some(base.join("forge-code-agent"))
}

/// Where codex's home comes from (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CodexHome {
    /// Per-run private homes seeded from `<dir>/config.toml`; forge must run with
    /// `CODEX_HOME=<dir>`.
    Template(PathBuf),
    /// One home at `<dir>` (codex's files in `<dir>/.codex`), used by every run.
    Fixed(PathBuf),
}

/// How one provider is configured to run offline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OfflineProvider {
    pub provider: &'static str,
    pub binary: PathBuf,
    /// The CLI's environment (`[providers.<id>].env`).
    pub env: BTreeMap<String, String>,
    pub isolate_home: bool,
    pub copy_user_auth: bool,
    pub home: Option<PathBuf>,
    pub model: Option<String>,
    /// Environment the forge process itself must run with.
    pub process_env: BTreeMap<String, String>,
}

/// Configures `provider` (`claude`, `codex` or `gemini`) to run the CLI installed in
/// `clis_dir` against the fake model at `base_url` (`http://127.0.0.1:<port>`). For codex it
/// writes the `config.toml` `codex_home` asks for.
///
/// # Errors
/// [`io::ErrorKind::InvalidInput`] for an unknown provider; the I/O error of writing codex's
/// configuration.
pub fn configure(
    provider: &str,
    clis_dir: &Path,
    base_url: &str,
    codex_home: &CodexHome,
) -> io::Result<OfflineProvider> {
    let cli = PinnedCli::of(provider).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("unknown provider {provider:?} (claude, codex or gemini)"),
        )
    })?;
    let env = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    };
    let mut offline = OfflineProvider {
        provider: cli.provider,
        binary: cli.binary(clis_dir),
        env: BTreeMap::new(),
        isolate_home: true,
        copy_user_auth: false,
        home: None,
        model: None,
        process_env: BTreeMap::new(),
    };
    match cli.provider {
        "claude" => {
            // IS_SANDBOX (needed for bypass as root) is set by the adapter itself.
            offline.env = env(&[
                ("ANTHROPIC_BASE_URL", base_url),
                ("ANTHROPIC_API_KEY", "sk-fake"),
                ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
                ("DISABLE_AUTOUPDATER", "1"),
                ("CLAUDE_CODE_MAX_RETRIES", CLAUDE_MAX_RETRIES),
            ]);
        }
        "codex" => {
            offline.env = env(&[(forge_adapter_codex::MOCK_API_KEY_ENV, "x")]);
            offline.model = Some(CODEX_MODEL.to_owned());
            let config = codex_config(base_url);
            match codex_home {
                CodexHome::Template(dir) => {
                    write_file(&dir.join("config.toml"), &config)?;
                    offline.copy_user_auth = true;
                    offline
                        .process_env
                        .insert("CODEX_HOME".to_owned(), dir.to_string_lossy().into_owned());
                }
                CodexHome::Fixed(dir) => {
                    write_file(&dir.join(".codex/config.toml"), &config)?;
                    offline.isolate_home = false;
                    offline.home = Some(dir.clone());
                }
            }
        }
        _ => {
            // The adapter writes the private home's settings.json (API-key auth).
            offline.env = env(&[
                ("GEMINI_API_KEY", "fake"),
                ("GOOGLE_GEMINI_BASE_URL", base_url),
            ]);
        }
    }
    Ok(offline)
}

/// codex's `config.toml` for the fake model: the adapter's mock provider, with a couple of
/// retries (its template turns them off) so a 429 or a cut stream is retried as in real use.
pub fn codex_config(base_url: &str) -> String {
    let base = forge_adapter_codex::mock_provider_config(&format!("{base_url}/v1"), CODEX_MODEL);
    let mut text: String = base
        .lines()
        .filter(|l| !l.starts_with("request_max_retries") && !l.starts_with("stream_max_retries"))
        .map(|l| format!("{l}\n"))
        .collect();
    // The mock provider's table is the last one, so these keys land in it.
    text.push_str(&format!(
        "request_max_retries = {CODEX_REQUEST_RETRIES}\nstream_max_retries = {CODEX_STREAM_RETRIES}\n"
    ));
    text
}

fn write_file(path: &Path, text: &str) -> io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, text)
}

impl OfflineProvider {
    /// The provider settings a library caller hands to the agent builder.
    pub fn settings(&self) -> ProviderSettings {
        ProviderSettings {
            binary: Some(self.binary.clone()),
            env: self.env.clone(),
            home: self.home.clone(),
            isolate_home: self.isolate_home,
            copy_user_auth: self.copy_user_auth,
            model: self.model.clone(),
            // The shipped table, as a run configured from files gets it.
            pricing: forge_domain::pricing::shipped::shipped_pricing(),
            ..ProviderSettings::default()
        }
    }

    /// The same configuration as a project `forge.toml` (default provider included).
    pub fn project_toml(&self) -> String {
        let mut out = format!(
            "# Written by the offline setup: {} against a loopback fake model.\n\
             default_provider = {}\n\n[providers.{}]\nbinary = {}\n",
            self.provider,
            toml_string(self.provider),
            self.provider,
            toml_string(&self.binary.to_string_lossy()),
        );
        if let Some(home) = &self.home {
            out.push_str(&format!(
                "home = {}\n",
                toml_string(&home.to_string_lossy())
            ));
        }
        out.push_str(&format!("isolate_home = {}\n", self.isolate_home));
        out.push_str(&format!("copy_user_auth = {}\n", self.copy_user_auth));
        if let Some(model) = &self.model {
            out.push_str(&format!("model = {}\n", toml_string(model)));
        }
        out.push_str(&format!("\n[providers.{}.env]\n", self.provider));
        for (key, value) in &self.env {
            out.push_str(&format!("{key} = {}\n", toml_string(value)));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The demo and the e2e suite configure providers without config files: they get the
    /// shipped pricing table all the same, so codex and gemini runs have an estimated cost.
    #[test]
    fn offline_settings_carry_the_shipped_prices() {
        let dir = std::env::temp_dir().join(format!("forge-offline-{}", std::process::id()));
        for provider in ["claude", "codex", "gemini"] {
            let offline = configure(
                provider,
                Path::new("/clis"),
                "http://127.0.0.1:1",
                &CodexHome::Fixed(dir.clone()),
            )
            .unwrap();
            let usage = forge_domain::Usage {
                input_tokens: 1000,
                output_tokens: 10,
                ..forge_domain::Usage::default()
            };
            for model in ["gpt-5.5", "gemini-3.8-flash", "claude-opus-5-5"] {
                assert!(
                    offline.settings().pricing.estimate(model, &usage).is_some(),
                    "{provider} {model}"
                );
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn user_clis_dir_follows_override_then_xdg_then_home() {
        let env = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect()
        };
        let check = |pairs: &[(&str, &str)], expected: Option<&str>| {
            assert_eq!(
                user_clis_dir(&env(pairs)),
                expected.map(PathBuf::from),
                "{pairs:?}"
            );
        };
        check(&[("HOME", "/h")], Some("/h/.cache/forge-code-agent/clis"));
        check(
            &[("HOME", "/h"), ("XDG_CACHE_HOME", "/x")],
            Some("/x/forge-code-agent/clis"),
        );
        check(
            &[
                ("HOME", "/h"),
                ("FORGE_CLIS_DIR", "/c"),
                ("XDG_CACHE_HOME", "/x"),
            ],
            Some("/c"),
        );
        check(&[], None);
    }

    #[test]
    fn codex_config_keeps_the_mock_provider_and_sets_retries() {
        let text = codex_config("http://127.0.0.1:9");
        assert!(
            text.contains("base_url = \"http://127.0.0.1:9/v1\""),
            "{text}"
        );
        assert_eq!(text.matches("request_max_retries").count(), 1, "{text}");
        assert!(text.ends_with("stream_max_retries = 2\n"), "{text}");
    }

    #[test]
    fn npm_installs_every_pinned_version() {
        let args = npm_install_args(Path::new("/c"));
        assert_eq!(args[..3], ["install", "--prefix", "/c"]);
        assert!(args.contains(&"@openai/codex@0.169.0".to_owned()));
        assert!(args.contains(&"@anthropic-ai/claude-code@2.1.330".to_owned()));
        assert!(args.contains(&"@google/gemini-cli@0.61.0".to_owned()));
    }
}

/// An ACP agent configured offline: its provider name and the `forge.toml` that names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OfflineAcpAgent {
    /// `<cli>-acp`: `claude-acp`, `codex-acp`, `gemini-acp`.
    pub provider: String,
    pub project_toml: String,
}

/// Configures the ACP agent of `cli` (`claude` → claude-agent-acp, `codex` → codex-acp,
/// `gemini` → `gemini --acp`) installed in `clis_dir` against the fake model at `base_url`,
/// as a user would: a `kind = "acp"` section with the agent's command and environment. Its
/// home (gemini's settings, codex's `config.toml`) is written under `dir`.
///
/// # Errors
/// [`io::ErrorKind::InvalidInput`] for an unknown CLI; the I/O error of writing a home file.
pub fn configure_acp(
    cli: &str,
    clis_dir: &Path,
    base_url: &str,
    dir: &Path,
) -> io::Result<OfflineAcpAgent> {
    let bin = |name: &str| clis_dir.join("node_modules/.bin").join(name);
    let home = dir.join("home");
    std::fs::create_dir_all(&home)?;
    let home_text = home.to_string_lossy().into_owned();
    let (command, env): (Vec<String>, Vec<(&str, String)>) = match cli {
        "claude" => (
            vec![bin("claude-agent-acp").to_string_lossy().into_owned()],
            vec![
                ("HOME", home_text),
                ("ANTHROPIC_BASE_URL", base_url.to_owned()),
                ("ANTHROPIC_API_KEY", "sk-fake".to_owned()),
                ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".to_owned()),
                ("DISABLE_AUTOUPDATER", "1".to_owned()),
                ("CLAUDE_CODE_MAX_RETRIES", CLAUDE_MAX_RETRIES.to_owned()),
                // Claude Code refuses bypass as root outside a sandbox it is told about.
                ("IS_SANDBOX", "1".to_owned()),
            ],
        ),
        "codex" => {
            let codex_home = dir.join("codex");
            write_file(&codex_home.join("config.toml"), &codex_config(base_url))?;
            (
                vec![bin("codex-acp").to_string_lossy().into_owned()],
                vec![
                    ("HOME", home_text),
                    ("CODEX_HOME", codex_home.to_string_lossy().into_owned()),
                    (forge_adapter_codex::MOCK_API_KEY_ENV, "x".to_owned()),
                ],
            )
        }
        "gemini" => {
            write_file(
                &home.join(".gemini/settings.json"),
                r#"{"security":{"auth":{"selectedType":"gemini-api-key"}}}"#,
            )?;
            (
                vec![
                    bin("gemini").to_string_lossy().into_owned(),
                    "--acp".to_owned(),
                ],
                vec![
                    ("HOME", home_text),
                    ("GEMINI_API_KEY", "fake".to_owned()),
                    ("GOOGLE_GEMINI_BASE_URL", base_url.to_owned()),
                    ("GEMINI_CLI_TRUST_WORKSPACE", "true".to_owned()),
                ],
            )
        }
        other => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("unknown CLI {other:?} (claude, codex or gemini)"),
            ));
        }
    };
    let provider = format!("{cli}-acp");
    let command: Vec<String> = command.iter().map(|w| toml_string(w)).collect();
    let env: Vec<String> = env
        .iter()
        .map(|(k, v)| format!("{k} = {}", toml_string(v)))
        .collect();
    let project_toml = format!(
        "# Written by the offline setup: {cli}'s ACP agent against a loopback fake model.\n\
         default_provider = {name}\n\n[providers.{provider}]\nkind = \"acp\"\ncommand = [{}]\nenv = {{ {} }}\n",
        command.join(", "),
        env.join(", "),
        name = toml_string(&provider),
    );
    Ok(OfflineAcpAgent {
        provider,
        project_toml,
    })
}
