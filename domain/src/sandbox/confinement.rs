//! What one run is confined to: carried by the run's `Invocation`, set by the use case that
//! knows the run (its work tree, its CLI home), enforced by the sandbox adapter.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// How the run may treat its work tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkTreeAccess {
    #[default]
    ReadWrite,
    /// A review: the work tree is read, never written.
    ReadOnly,
}

/// One run's confinement. `None` on an invocation means forge's own command (git, a
/// version probe): not the agent, not its code.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Confinement {
    /// The directory the agent works in (absolute).
    pub work_tree: PathBuf,
    pub access: WorkTreeAccess,
    /// Writable besides the work tree: the run's private CLI home and state directories,
    /// a build cache slot of the task. Writable even when the work tree is read-only.
    pub writable: Vec<PathBuf>,
    /// Environment variable names that are the provider's credentials: passed in although
    /// they look like secrets (as placeholders once the egress injects the real value).
    pub credentials: Vec<String>,
    /// Relative to the CLI's home (the `HOME` its invocation sets, else the user's): the
    /// CLI's own state it writes when the run has no home of its own (`.claude`, `.codex`,
    /// `.gemini`), or the package caches code writes. Writable when present; the rest of
    /// that home is not. An absolute entry is that path (a cache the environment names).
    pub user_state: Vec<PathBuf>,
    /// Code forge runs (validation and install steps, tools, terminals): the package caches
    /// its environment names outside the home ([`TOOLCHAIN_CACHE_VARS`]) are writable too.
    #[serde(default)]
    pub caches_from_env: bool,
    /// The agent's CLI (not code it runs): the state directories its environment names
    /// ([`STATE_DIR_VARS`]) are writable too.
    #[serde(default)]
    pub cli_state_from_env: bool,
    /// What the run reaches on the network besides `[sandbox] allow_hosts`: its model and
    /// forge's MCP server for it.
    #[serde(default)]
    pub network: super::model::RunNetwork,
    /// The paths the provider's configuration names ([`paths_named`]): read-only wherever
    /// they lie (`/tmp` too), when they exist — `CLAUDE_CODE_EXECUTABLE`, `NODE_PATH`, a
    /// `--settings` file.
    #[serde(default)]
    pub config_reads: Vec<PathBuf>,
}

/// The absolute paths among a provider's configured words (its command, arguments and the
/// values of its `env`): a whole word (`/opt/x`), the value of an option (`--settings=/x`),
/// each entry of a `:` list (`NODE_PATH=/a:/b`). Whether each exists is the adapter's to
/// find out; [`bindable`] says which may be bound at all.
pub fn paths_named<'a>(words: impl IntoIterator<Item = &'a str>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for word in words {
        let value = match word.split_once('=') {
            Some((name, value)) if !name.contains('/') => value,
            _ => word,
        };
        // A URL is no path (`https://host/v1` splits into `//host/v1`).
        if value.contains("://") {
            continue;
        }
        for part in value.split(':') {
            let part = part.trim();
            if !part.starts_with('/') || part.contains('\n') {
                continue;
            }
            let path = PathBuf::from(part.trim_end_matches('/'));
            if path.as_os_str().is_empty() || out.contains(&path) {
                continue;
            }
            out.push(path);
        }
    }
    out
}

/// Whether a path the configuration names may be bound read-only: not the root, not `/tmp`
/// itself (other users' files), not a home or a directory above one (the whole home would be
/// open), nothing with `..` in it.
pub fn bindable(path: &Path, homes: &[&Path]) -> bool {
    use std::path::Component;
    let plain = path.is_absolute()
        && path
            .components()
            .all(|c| matches!(c, Component::RootDir | Component::Normal(_)));
    plain
        && path.parent().is_some()
        && path != Path::new("/tmp")
        && !homes.iter().any(|home| home.starts_with(path))
}

/// Package caches in the user's home that builds and installs write (cargo's registry lock,
/// npm's and pip's caches): writable for validation and install steps, which run offline
/// builds against them.
pub const TOOLCHAIN_CACHES_IN_HOME: &[&str] = &[
    ".cargo/registry",
    ".cargo/git",
    ".cargo/.package-cache",
    ".cargo/.package-cache-mutate",
    ".cargo/.global-cache",
    ".npm",
    ".cache/pip",
    ".cache/go-build",
    "go/pkg/mod",
];

/// Cargo's package caches inside its home (`~/.cargo` or `CARGO_HOME`): what a build that
/// fetches a crate writes, and nothing else (`config.toml`, `credentials.toml`, `bin/` stay
/// as they are).
const CARGO_CACHES: &[&str] = &[
    "registry",
    "git",
    ".package-cache",
    ".package-cache-mutate",
    ".global-cache",
];

/// Variables that put a package cache outside the home (the rust image's
/// `CARGO_HOME=/usr/local/cargo`, a CI's `npm_config_cache`): with the caches in the home
/// ([`TOOLCHAIN_CACHES_IN_HOME`]) writable for the code forge runs, so a validation that
/// fetches a dependency can keep it. `(variable, the caches inside it; none: the directory
/// itself)`.
pub const TOOLCHAIN_CACHE_VARS: &[(&str, &[&str])] = &[
    ("CARGO_HOME", CARGO_CACHES),
    ("npm_config_cache", &[]),
    ("NPM_CONFIG_CACHE", &[]),
    ("PIP_CACHE_DIR", &[]),
    ("GOMODCACHE", &[]),
    ("GOCACHE", &[]),
];

/// The package caches `env` names (see [`TOOLCHAIN_CACHE_VARS`]), absolute paths only: a
/// relative one would resolve against the work tree, which is writable anyway.
pub fn toolchain_caches_named<'a>(
    env: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Vec<PathBuf> {
    let mut caches: Vec<PathBuf> = Vec::new();
    for (name, value) in env {
        let Some((_, inside)) = TOOLCHAIN_CACHE_VARS.iter().find(|(var, _)| *var == name) else {
            continue;
        };
        let dir = PathBuf::from(value);
        if !dir.is_absolute() || dir.parent().is_none() {
            continue;
        }
        if inside.is_empty() {
            caches.push(dir);
        } else {
            caches.extend(inside.iter().map(|cache| dir.join(cache)));
        }
    }
    caches.sort();
    caches.dedup();
    caches
}

/// The state a shipped CLI writes in the user's home when it has no home of its own, by
/// the provider's name or the program's (`claude-code-acp` is claude's).
pub fn cli_state_in_home(name: &str) -> &'static [&'static str] {
    if name.contains("claude") {
        &[".claude", ".claude.json"]
    } else if name.contains("codex") {
        &[".codex"]
    } else if name.contains("gemini") {
        &[".gemini"]
    } else {
        &[]
    }
}

/// Variables that name a CLI's own state directory for the run (a provider's `env`, a
/// prepared home): writable, whatever the CLI's name, because the CLI was told to write there.
pub const STATE_DIR_VARS: &[&str] = &["CODEX_HOME", "GEMINI_CLI_HOME", "CLAUDE_CONFIG_DIR"];

/// The state directories `env` names (see [`STATE_DIR_VARS`]), absolute paths only: a
/// relative one would resolve against the work tree, which is writable anyway.
pub fn state_dirs_named<'a>(env: impl IntoIterator<Item = (&'a str, &'a str)>) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = env
        .into_iter()
        .filter(|(name, _)| STATE_DIR_VARS.contains(name))
        .map(|(_, value)| PathBuf::from(value))
        .filter(|dir| dir.is_absolute())
        .collect();
    dirs.sort();
    dirs.dedup();
    dirs
}

impl Confinement {
    /// The confinement of a run that writes only in `work_tree` (and private /tmp).
    pub fn work_tree(work_tree: impl Into<PathBuf>) -> Self {
        Self {
            work_tree: work_tree.into(),
            ..Self::default()
        }
    }

    /// Adds a writable directory (a CLI home), keeping the list free of duplicates.
    #[must_use]
    pub fn with_writable(mut self, dir: impl Into<PathBuf>) -> Self {
        let dir = dir.into();
        if !self.writable.contains(&dir) {
            self.writable.push(dir);
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_by_provider_or_program_name() {
        assert_eq!(cli_state_in_home("claude"), [".claude", ".claude.json"]);
        assert_eq!(
            cli_state_in_home("claude-code-acp"),
            [".claude", ".claude.json"]
        );
        assert_eq!(cli_state_in_home("codex"), [".codex"]);
        assert_eq!(cli_state_in_home("gemini"), [".gemini"]);
        assert!(cli_state_in_home("sh").is_empty());
        assert!(cli_state_in_home("my-agent").is_empty());
    }

    #[test]
    fn paths_named_by_a_configuration() {
        let check = |words: &[&str], want: &[&str]| {
            let got = paths_named(words.iter().copied());
            let want: Vec<PathBuf> = want.iter().map(PathBuf::from).collect();
            assert_eq!(got, want, "{words:?}");
        };
        check(
            &["/tmp/clis/node_modules/.bin/claude"],
            &["/tmp/clis/node_modules/.bin/claude"],
        );
        check(&["--settings=/tmp/s.json"], &["/tmp/s.json"]);
        check(
            &["/a/lib/node_modules:/b/lib/"],
            &["/a/lib/node_modules", "/b/lib"],
        );
        check(&["/x", "--flag", "/x"], &["/x"]);
        // Look-alikes that name no absolute path.
        check(
            &["claude-agent-acp", "--acp", "relative/dir", "~/.claude"],
            &[],
        );
        check(
            &[
                "https://api.anthropic.com/v1",
                "--base=http://127.0.0.1:9/v1",
            ],
            &[],
        );
        check(&["sk-ant-123", "", ":"], &[]);
        check(&["a=b/c"], &[]);
    }

    #[test]
    fn what_a_configuration_may_open() {
        let home = Path::new("/home/u");
        let check = |path: &str, ok: bool| {
            assert_eq!(bindable(Path::new(path), &[home]), ok, "{path}");
        };
        check("/tmp/clis/node_modules", true);
        check("/tmp/s.json", true);
        check("/home/u/.config/agent/settings.json", true);
        check("/opt/agent", true);
        // Look-alikes that would open too much.
        check("/", false);
        check("/tmp", false);
        check("/home/u", false);
        check("/home", false);
        check("/tmp/../home/u", false);
        check("relative", false);
    }

    #[test]
    fn state_dirs_named_by_the_environment() {
        let check = |env: &[(&str, &str)], want: &[&str]| {
            let got = state_dirs_named(env.iter().copied());
            let want: Vec<PathBuf> = want.iter().map(PathBuf::from).collect();
            assert_eq!(got, want, "{env:?}");
        };
        check(&[("CODEX_HOME", "/r/codex")], &["/r/codex"]);
        check(&[("GEMINI_CLI_HOME", "/r/g")], &["/r/g"]);
        check(&[("CLAUDE_CONFIG_DIR", "/r/c")], &["/r/c"]);
        check(
            &[("CODEX_HOME", "/r/x"), ("GEMINI_CLI_HOME", "/r/x")],
            &["/r/x"],
        );
        // Look-alikes that must not open anything.
        check(&[("HOME", "/home/u")], &[]);
        check(&[("CODEX_HOME_X", "/r/x")], &[]);
        check(&[("codex_home", "/r/x")], &[]);
        check(&[("CODEX_HOME", "relative/dir")], &[]);
        check(&[("XDG_CONFIG_HOME", "/home/u/.config")], &[]);
    }

    #[test]
    fn package_caches_named_by_the_environment() {
        let check = |env: &[(&str, &str)], want: &[&str]| {
            let got = toolchain_caches_named(env.iter().copied());
            let want: Vec<PathBuf> = want.iter().map(PathBuf::from).collect();
            assert_eq!(got, want, "{env:?}");
        };
        check(
            &[("CARGO_HOME", "/usr/local/cargo")],
            &[
                "/usr/local/cargo/.global-cache",
                "/usr/local/cargo/.package-cache",
                "/usr/local/cargo/.package-cache-mutate",
                "/usr/local/cargo/git",
                "/usr/local/cargo/registry",
            ],
        );
        check(&[("npm_config_cache", "/ci/npm")], &["/ci/npm"]);
        check(&[("NPM_CONFIG_CACHE", "/ci/npm")], &["/ci/npm"]);
        check(&[("PIP_CACHE_DIR", "/ci/pip")], &["/ci/pip"]);
        check(
            &[("GOMODCACHE", "/ci/mod"), ("GOCACHE", "/ci/build")],
            &["/ci/build", "/ci/mod"],
        );
        check(
            &[
                ("npm_config_cache", "/ci/npm"),
                ("NPM_CONFIG_CACHE", "/ci/npm"),
            ],
            &["/ci/npm"],
        );
        // Look-alikes that must not open anything: cargo's other directories, relative
        // paths, the root, variables of the same family that are no cache.
        check(&[("CARGO_TARGET_DIR", "/ci/target")], &[]);
        check(&[("CARGO_INSTALL_ROOT", "/usr/local")], &[]);
        check(&[("RUSTUP_HOME", "/usr/local/rustup")], &[]);
        check(&[("CARGO_HOME", "relative/cargo")], &[]);
        check(&[("CARGO_HOME", "/")], &[]);
        check(&[("PIP_CACHE_DIR", "")], &[]);
        check(&[("cargo_home", "/c")], &[]);
        check(&[("npm_config_prefix", "/usr/local")], &[]);
        check(&[("GOPATH", "/go")], &[]);
    }
}
