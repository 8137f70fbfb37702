//! The file system a confined run sees, as an ordered list of mounts.
//!
//! Order matters (a later mount covers an earlier one): the system read-only, a private
//! `/tmp` and an empty home but for its toolchains, then what must stay visible although it
//! lies under `/tmp` or the home (the CLI install, git metadata, the work tree), then the hidden secrets (they win over every read and write
//! above), then the protected files inside the work tree, last the run's own writable
//! directories (its CLI home lies under the protected `.forgecode`).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::confinement::{Confinement, WorkTreeAccess};
use super::protected::{SYSTEM_HIDDEN, protected_in, readable_in, secrets_in};

/// One mount of the sandbox's view, each at the same path inside as outside.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "path")]
pub enum Mount {
    /// Bound read-only (a missing path is skipped).
    ReadOnly(PathBuf),
    /// Bound read-write.
    Writable(PathBuf),
    /// Bound read-write when it exists (a CLI's state in the user's home).
    WritableIfPresent(PathBuf),
    /// A fresh, empty, private tmpfs.
    PrivateTmp(PathBuf),
    /// A minimal `/dev`.
    Dev(PathBuf),
    /// A `/proc` of the sandbox's own PID namespace.
    Proc(PathBuf),
    /// Replaced by an empty directory or an empty file (a missing path is skipped).
    Hidden(PathBuf),
}

/// What the adapter found out about the machine, for [`fs_plan`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FsFacts {
    /// The user's home (`HOME`).
    pub home: Option<PathBuf>,
    /// The `HOME` the invocation gives the CLI when it differs from the user's (an ACP
    /// agent's configured `env`): its state is resolved there, its secrets hidden too.
    pub cli_home: Option<PathBuf>,
    /// Read-only paths that must stay visible even under `/tmp`: the CLI's installation
    /// (`--binary` included, symlinks resolved), forge's own binary, the work tree's git
    /// metadata outside it (`gitdir:` of a linked work tree and its common directory).
    pub reads: Vec<PathBuf>,
    /// forge's own files the agent never reads: its config file, store and queue database.
    pub forge_private: Vec<PathBuf>,
}

/// The mounts of one confined run.
pub fn fs_plan(confinement: &Confinement, facts: &FsFacts) -> Vec<Mount> {
    let root = PathBuf::from("/");
    let mut mounts = vec![
        Mount::ReadOnly(root),
        Mount::Dev(PathBuf::from("/dev")),
        Mount::Proc(PathBuf::from("/proc")),
        Mount::PrivateTmp(PathBuf::from("/tmp")),
    ];
    // The user's home is an empty directory inside but for its toolchains: the rest of it
    // (keys, other checkouts, mail, browser profiles) is nothing the run needs.
    let home = facts.home.as_ref().filter(|h| h.parent().is_some());
    if let Some(home) = home {
        mounts.push(Mount::Hidden(home.clone()));
        mounts.extend(readable_in(home).into_iter().map(Mount::ReadOnly));
    }
    let covered = |p: &Path| under_tmp(p) || home.is_some_and(|h| p.starts_with(h));
    mounts.extend(
        facts
            .reads
            .iter()
            .filter(|p| covered(p))
            .cloned()
            .map(Mount::ReadOnly),
    );
    let tree = confinement.work_tree.clone();
    let writes_tree = confinement.access == WorkTreeAccess::ReadWrite;
    mounts.push(if writes_tree {
        Mount::Writable(tree.clone())
    } else {
        Mount::ReadOnly(tree.clone())
    });
    let homes: Vec<&PathBuf> = facts.home.iter().chain(facts.cli_home.iter()).collect();
    let hidden: Vec<PathBuf> = homes
        .iter()
        .flat_map(|home| secrets_in(home))
        .chain(SYSTEM_HIDDEN.iter().map(PathBuf::from))
        .chain(facts.forge_private.iter().cloned())
        .collect();
    mounts.extend(hidden.iter().cloned().map(Mount::Hidden));
    if writes_tree {
        mounts.extend(protected_in(&tree).into_iter().map(Mount::ReadOnly));
    }
    let mut writable: Vec<PathBuf> = confinement.writable.clone();
    mounts.extend(confinement.writable.iter().cloned().map(Mount::Writable));
    // A home of the CLI's own (an ACP agent's configured `HOME`): its whole state, like a
    // private run home — never the user's home or a directory above it.
    let own_home = facts.cli_home.as_ref().filter(|dir| {
        confinement.cli_state_from_env
            && dir.parent().is_some()
            && !facts
                .home
                .as_ref()
                .is_some_and(|home| home.starts_with(dir))
    });
    if let Some(dir) = own_home {
        writable.push(dir.clone());
        mounts.push(Mount::WritableIfPresent(dir.clone()));
    }
    let state_home = facts.cli_home.as_ref().or(facts.home.as_ref());
    for entry in &confinement.user_state {
        let path = match state_home {
            _ if entry.is_absolute() => entry.clone(),
            Some(home) => home.join(entry),
            None => continue,
        };
        writable.push(path.clone());
        mounts.push(Mount::WritableIfPresent(path));
    }
    // A writable directory opened over a secret (a state directory configured as the home
    // itself) must not bring it back: those secrets are hidden again, last.
    mounts.extend(
        hidden
            .into_iter()
            .filter(|secret| writable.iter().any(|dir| secret.starts_with(dir)))
            .map(Mount::Hidden),
    );
    mounts
}

fn under_tmp(path: &Path) -> bool {
    path.starts_with("/tmp")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts() -> FsFacts {
        FsFacts {
            home: Some("/home/u".into()),
            cli_home: None,
            reads: vec!["/opt/claude".into(), "/tmp/cli/bin".into()],
            forge_private: vec!["/home/u/repo/.forgecode/forge.db".into()],
        }
    }

    fn position(mounts: &[Mount], want: &Mount) -> usize {
        mounts
            .iter()
            .position(|m| m == want)
            .unwrap_or_else(|| panic!("{want:?} missing from {mounts:?}"))
    }

    #[test]
    fn a_task_writes_its_tree_and_home_but_not_git_or_secrets() {
        let confinement = Confinement::work_tree("/home/u/repo/.forgecode/worktrees/t1")
            .with_writable("/home/u/repo/.forgecode/worktrees/t1/.forgecode/runs/r1/home");
        let mounts = fs_plan(&confinement, &facts());
        let tree = "/home/u/repo/.forgecode/worktrees/t1";
        let writable = position(&mounts, &Mount::Writable(tree.into()));
        let git = position(&mounts, &Mount::ReadOnly(format!("{tree}/.git").into()));
        let hooks_dir_covered = git > writable;
        assert!(
            hooks_dir_covered,
            "the .git bind must come after the tree's"
        );
        let forge = position(
            &mounts,
            &Mount::ReadOnly(format!("{tree}/.forgecode").into()),
        );
        let home = position(
            &mounts,
            &Mount::Writable(format!("{tree}/.forgecode/runs/r1/home").into()),
        );
        assert!(
            home > forge,
            "the CLI home is re-opened inside the protected .forgecode"
        );
        for secret in ["/home/u/.ssh", "/home/u/.aws", "/etc/shadow", "/run/user"] {
            assert!(position(&mounts, &Mount::Hidden(secret.into())) > writable);
        }
        position(
            &mounts,
            &Mount::Hidden("/home/u/repo/.forgecode/forge.db".into()),
        );
        // Only reads under the private /tmp need binding again.
        position(&mounts, &Mount::ReadOnly("/tmp/cli/bin".into()));
        assert!(!mounts.contains(&Mount::ReadOnly("/opt/claude".into())));
    }

    #[test]
    fn a_tree_under_tmp_stays_visible_after_the_private_tmp() {
        let mounts = fs_plan(&Confinement::work_tree("/tmp/ws"), &FsFacts::default());
        let tmp = position(&mounts, &Mount::PrivateTmp("/tmp".into()));
        assert!(position(&mounts, &Mount::Writable("/tmp/ws".into())) > tmp);
    }

    #[test]
    fn a_review_writes_nothing_but_its_cli_home() {
        let mut confinement = Confinement::work_tree("/w").with_writable("/w/.forgecode/h");
        confinement.access = WorkTreeAccess::ReadOnly;
        let mounts = fs_plan(&confinement, &FsFacts::default());
        let writable: Vec<_> = mounts
            .iter()
            .filter(|m| matches!(m, Mount::Writable(_)))
            .collect();
        assert_eq!(writable, vec![&Mount::Writable("/w/.forgecode/h".into())]);
        position(&mounts, &Mount::ReadOnly("/w".into()));
    }

    #[test]
    fn a_cli_without_a_home_of_its_own_writes_only_its_state_in_the_users() {
        let mut confinement = Confinement::work_tree("/w");
        confinement.user_state = vec![".claude".into(), ".claude.json".into()];
        let mounts = fs_plan(&confinement, &facts());
        let ssh = position(&mounts, &Mount::Hidden("/home/u/.ssh".into()));
        assert!(position(&mounts, &Mount::WritableIfPresent("/home/u/.claude".into())) > ssh);
        position(
            &mounts,
            &Mount::WritableIfPresent("/home/u/.claude.json".into()),
        );
        assert!(!mounts.contains(&Mount::Writable("/home/u".into())));
    }

    #[test]
    fn a_cli_given_its_own_home_writes_its_state_there_and_its_secrets_are_hidden_too() {
        let mut confinement = Confinement::work_tree("/w");
        confinement.user_state = vec![".gemini".into()];
        let facts = FsFacts {
            cli_home: Some("/cases/acp/home".into()),
            ..facts()
        };
        let mounts = fs_plan(&confinement, &facts);
        position(
            &mounts,
            &Mount::WritableIfPresent("/cases/acp/home/.gemini".into()),
        );
        assert!(!mounts.contains(&Mount::WritableIfPresent("/home/u/.gemini".into())));
        position(&mounts, &Mount::Hidden("/home/u/.ssh".into()));
        position(&mounts, &Mount::Hidden("/cases/acp/home/.ssh".into()));
    }

    #[test]
    fn the_home_is_empty_but_for_toolchains_the_cli_and_the_tree() {
        let mut confinement = Confinement::work_tree("/home/u/src/app");
        confinement.user_state = vec![".claude".into()];
        let facts = FsFacts {
            reads: vec!["/home/u/.nvm/versions/node/v22/bin".into()],
            ..facts()
        };
        let mounts = fs_plan(&confinement, &facts);
        let home = position(&mounts, &Mount::Hidden("/home/u".into()));
        for later in [
            Mount::ReadOnly("/home/u/.cargo".into()),
            Mount::ReadOnly("/home/u/.rustup".into()),
            Mount::ReadOnly("/home/u/.gitconfig".into()),
            Mount::ReadOnly("/home/u/.nvm/versions/node/v22/bin".into()),
            Mount::Writable("/home/u/src/app".into()),
            Mount::WritableIfPresent("/home/u/.claude".into()),
        ] {
            assert!(
                position(&mounts, &later) > home,
                "{later:?} before the home"
            );
        }
        // A credential inside a readable toolchain stays hidden.
        assert!(
            position(
                &mounts,
                &Mount::Hidden("/home/u/.cargo/credentials.toml".into())
            ) > position(&mounts, &Mount::ReadOnly("/home/u/.cargo".into()))
        );
        // Nothing else of the home comes back.
        for absent in ["/home/u/src", "/home/u/.config", "/home/u/.codex"] {
            assert!(
                !mounts.iter().any(|m| matches!(m,
                    Mount::ReadOnly(p) | Mount::Writable(p) | Mount::WritableIfPresent(p)
                        if p == Path::new(absent))),
                "{absent} re-opened"
            );
        }
    }

    #[test]
    fn a_root_home_is_never_emptied() {
        let facts = FsFacts {
            home: Some("/".into()),
            ..FsFacts::default()
        };
        let mounts = fs_plan(&Confinement::work_tree("/w"), &facts);
        assert!(!mounts.contains(&Mount::Hidden("/".into())));
    }

    #[test]
    fn an_agent_writes_the_home_of_its_own_but_never_the_users_or_above() {
        let check = |cli_home: &str, agent: bool, want: bool| {
            let mut confinement = Confinement::work_tree("/w");
            confinement.cli_state_from_env = agent;
            let facts = FsFacts {
                cli_home: Some(cli_home.into()),
                ..facts()
            };
            let mounts = fs_plan(&confinement, &facts);
            let opened = mounts.contains(&Mount::WritableIfPresent(cli_home.into()));
            assert_eq!(opened, want, "{cli_home} agent={agent}");
            if opened {
                let ssh = PathBuf::from(cli_home).join(".ssh");
                let home = position(&mounts, &Mount::WritableIfPresent(cli_home.into()));
                let last = mounts
                    .iter()
                    .rposition(|m| *m == Mount::Hidden(ssh.clone()));
                assert!(last.is_some_and(|l| l > home), "{ssh:?} not hidden again");
            }
        };
        check("/cases/acp/home", true, true);
        // The code the agent runs gets no home of its own.
        check("/cases/acp/home", false, false);
        // Look-alikes: the user's home's parent, the root.
        check("/home", true, false);
        check("/", true, false);
    }

    #[test]
    fn a_writable_directory_over_the_home_does_not_bring_its_secrets_back() {
        let confinement = Confinement::work_tree("/w").with_writable("/home/u");
        let mounts = fs_plan(&confinement, &facts());
        let home = position(&mounts, &Mount::Writable("/home/u".into()));
        let last_ssh = mounts
            .iter()
            .rposition(|m| *m == Mount::Hidden("/home/u/.ssh".into()))
            .unwrap();
        assert!(last_ssh > home);
        // A secret outside every writable directory is hidden once.
        let shadow = mounts
            .iter()
            .filter(|m| **m == Mount::Hidden("/etc/shadow".into()))
            .count();
        assert_eq!(shadow, 1);
    }

    #[test]
    fn the_system_is_read_only_first_and_proc_is_private() {
        let mounts = fs_plan(&Confinement::work_tree("/w"), &FsFacts::default());
        assert_eq!(mounts[0], Mount::ReadOnly("/".into()));
        position(&mounts, &Mount::Proc("/proc".into()));
        position(&mounts, &Mount::Dev("/dev".into()));
    }
}
