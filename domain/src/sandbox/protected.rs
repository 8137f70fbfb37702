//! Paths a run never writes, even inside a writable root, and paths it never reads.
//!
//! Writes to these run code or change tools the next time the user works in the tree (a git
//! hook on the next commit, a shell start file, an editor's tasks, an agent's commands), or
//! belong to forge itself (`.forgecode`: run bundles, the store).

use std::path::{Path, PathBuf};

/// Relative to a writable root: bound read-only over the root when they exist.
pub const PROTECTED_IN_TREE: &[&str] = &[
    ".git",
    ".gitmodules",
    ".gitconfig",
    ".githooks",
    ".husky",
    ".pre-commit-config.yaml",
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".profile",
    ".zshrc",
    ".zprofile",
    ".zshenv",
    ".envrc",
    ".vscode",
    ".idea",
    ".claude/commands",
    ".claude/agents",
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".codex",
    ".gemini/settings.json",
    ".mcp.json",
    ".forgecode",
];

/// Relative to the user's home: credentials, keys and logins. Hidden (an empty directory or
/// an empty file in their place).
pub const SECRETS_IN_HOME: &[&str] = &[
    ".ssh",
    ".aws",
    ".azure",
    ".kube",
    ".docker",
    ".gnupg",
    ".netrc",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    ".password-store",
    ".vault-token",
    ".config/gcloud",
    ".config/gh",
    ".config/hub",
    ".config/forge-code-agent",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".m2/settings.xml",
    ".m2/settings-security.xml",
    ".gradle/gradle.properties",
    ".local/share/keyrings",
    ".terraform.d/credentials.tfrc.json",
];

/// Relative to the user's home: all a run reads of it — the toolchains that build and test
/// the work tree (and a CLI installed with them), git's own settings. The rest of the home
/// is an empty directory inside; the CLI's own state is added by its confinement.
pub const READABLE_IN_HOME: &[&str] = &[
    ".cargo",
    ".rustup",
    ".npm",
    ".npm-global",
    ".nvm",
    ".volta",
    ".bun",
    ".deno",
    ".pyenv",
    ".rbenv",
    ".sdkman",
    ".gradle",
    ".m2",
    "go",
    ".local/bin",
    ".local/lib",
    ".cache/pip",
    ".cache/go-build",
    ".gitconfig",
    ".config/git",
];

/// Absolute: the machine's secrets and the sockets of services that would let a process
/// act outside the sandbox (a container engine, the user's session bus and agents, a local
/// database with peer authentication).
pub const SYSTEM_HIDDEN: &[&str] = &[
    "/etc/shadow",
    "/etc/gshadow",
    "/etc/sudoers",
    "/etc/ssh",
    "/run/user",
    "/run/dbus",
    "/run/docker.sock",
    "/run/docker",
    "/run/containerd",
    "/run/podman",
    "/run/postgresql",
    "/run/mysqld",
    "/var/run/docker.sock",
    "/var/run/postgresql",
];

/// The protected paths of one writable root.
pub fn protected_in(root: &Path) -> Vec<PathBuf> {
    PROTECTED_IN_TREE.iter().map(|rel| root.join(rel)).collect()
}

/// Created by forge or git while a run goes, not by the agent alone: `git init` in a tree
/// that had none is a legitimate change, and forge writes its run files in `.forgecode`.
const CREATED_LEGITIMATELY: &[&str] = &[".git", ".forgecode"];

/// The protected paths of one writable root that a run may not create: bubblewrap binds
/// only over what exists, so those missing when the run starts are looked at when it ends
/// (and removed if they appeared).
pub fn watched_for_creation(root: &Path) -> Vec<PathBuf> {
    PROTECTED_IN_TREE
        .iter()
        .filter(|rel| !CREATED_LEGITIMATELY.contains(rel))
        .map(|rel| root.join(rel))
        .collect()
}

/// What a run reads of a home directory.
pub fn readable_in(home: &Path) -> Vec<PathBuf> {
    READABLE_IN_HOME.iter().map(|rel| home.join(rel)).collect()
}

/// The hidden paths of a home directory.
pub fn secrets_in(home: &Path) -> Vec<PathBuf> {
    SECRETS_IN_HOME.iter().map(|rel| home.join(rel)).collect()
}

/// Whether a path relative to a writable root falls under a protected one: the rule the
/// mounts enforce, for reports and tests.
pub fn is_protected(relative: &Path) -> bool {
    PROTECTED_IN_TREE
        .iter()
        .any(|protected| relative.starts_with(protected))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protected_paths_and_look_alikes() {
        let check = |rel: &str, want: bool| {
            assert_eq!(is_protected(Path::new(rel)), want, "{rel}");
        };
        // Positives.
        check(".git", true);
        check(".git/hooks/pre-commit", true);
        check(".git/config", true);
        check(".bashrc", true);
        check(".zshrc", true);
        check(".profile", true);
        check(".gitconfig", true);
        check(".gitmodules", true);
        check(".vscode/tasks.json", true);
        check(".idea/workspace.xml", true);
        check(".claude/commands/deploy.md", true);
        check(".mcp.json", true);
        check(".forgecode/forge.db", true);
        check(".husky/pre-push", true);
        // Look-alikes that must not fire.
        check("src/.gitkeep", false);
        check(".gitignore", false);
        check(".github/workflows/ci.yml", false);
        check(".git-blame-ignore-revs", false);
        check("docs/.bashrc.md", false);
        check(".claude/notes.md", false);
        check("CLAUDE.md", false);
        check("src/.git", false);
        check("my.mcp.json", false);
        check(".profile.d", false);
    }

    #[test]
    fn creation_is_watched_for_every_protected_path_but_git_and_forge_own() {
        let watched = watched_for_creation(Path::new("/w"));
        for want in [
            "/w/.envrc",
            "/w/.vscode",
            "/w/.husky",
            "/w/.claude/commands",
            "/w/.mcp.json",
        ] {
            assert!(watched.contains(&PathBuf::from(want)), "{want}");
        }
        for not in ["/w/.git", "/w/.forgecode"] {
            assert!(!watched.contains(&PathBuf::from(not)), "{not}");
        }
        assert_eq!(watched.len(), PROTECTED_IN_TREE.len() - 2);
    }

    #[test]
    fn secrets_are_under_the_home() {
        let hidden = secrets_in(Path::new("/home/u"));
        for want in [
            "/home/u/.ssh",
            "/home/u/.aws",
            "/home/u/.config/gcloud",
            "/home/u/.azure",
            "/home/u/.kube",
            "/home/u/.docker",
            "/home/u/.gnupg",
            "/home/u/.netrc",
            "/home/u/.git-credentials",
        ] {
            assert!(hidden.contains(&PathBuf::from(want)), "{want}");
        }
        assert!(!hidden.contains(&PathBuf::from("/home/u/.cargo")));
        assert!(!hidden.contains(&PathBuf::from("/home/u/.config")));
    }
}
