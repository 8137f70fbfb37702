//! A plan of mounts → bubblewrap's command line.

use std::path::{Path, PathBuf};

use forge_domain::ForgeError;
use forge_domain::sandbox::Mount;

/// What a path to mount or hide is on this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathKind {
    Dir,
    File,
    Missing,
    /// This user may not look (another user's home, root's `CARGO_HOME` under `runuser`).
    /// bubblewrap's `-try` mounts skip a missing source, not this one: they are left out.
    Unreachable,
}

/// The kind of `path` and where it really is (symlinks followed: `/var/run` is `/run`).
pub fn kind_of(path: &Path) -> (PathKind, PathBuf) {
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let kind = match std::fs::metadata(&real) {
        Ok(meta) if meta.is_dir() => PathKind::Dir,
        Ok(_) => PathKind::File,
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => PathKind::Unreachable,
        Err(_) => PathKind::Missing,
    };
    (kind, real)
}

/// bubblewrap's options for `mounts`, then `--chdir cwd`. The namespaces: a user namespace
/// (no privilege inside, also for root), PID (forge and other processes invisible), IPC, UTS,
/// cgroup; `--unshare-net` when `isolate_net` (the egress bridge is the only way out).
/// `--die-with-parent` ends the sandbox with its bwrap. No `--new-session`: it would take the
/// agent out of the process group forge's kill ladder signals.
///
/// # Errors
/// [`ForgeError::InvalidRequest`] for a path that is not UTF-8 (bwrap's argv is text here).
pub fn bwrap_args(
    mounts: &[Mount],
    kind: &dyn Fn(&Path) -> (PathKind, PathBuf),
    cwd: &Path,
    isolate_net: bool,
) -> Result<Vec<String>, ForgeError> {
    let mut out: Vec<String> = [
        "--unshare-user",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--die-with-parent",
        "--cap-drop",
        "ALL",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    if isolate_net {
        out.push("--unshare-net".to_owned());
    }
    let mut hidden: Vec<PathBuf> = Vec::new();
    for mount in mounts {
        match mount {
            Mount::ReadOnly(p) if p == Path::new("/") => push(&mut out, &["--ro-bind", "/", "/"]),
            Mount::ReadOnly(p) | Mount::WritableIfPresent(p)
                if kind(p).0 == PathKind::Unreachable => {}
            Mount::ReadOnly(p) => {
                let p = text(p)?;
                push(&mut out, &["--ro-bind-try", p, p]);
            }
            // A secret hidden again after a writable bind (the plan re-hides those under
            // one) must be emitted again: the dedup starts over.
            Mount::Writable(p) => {
                let p = text(p)?;
                push(&mut out, &["--bind", p, p]);
                hidden.clear();
            }
            Mount::WritableIfPresent(p) => {
                let p = text(p)?;
                push(&mut out, &["--bind-try", p, p]);
                hidden.clear();
            }
            Mount::PrivateTmp(p) => push(&mut out, &["--tmpfs", text(p)?]),
            Mount::Dev(p) => push(&mut out, &["--dev", text(p)?]),
            Mount::Proc(p) => push(&mut out, &["--proc", text(p)?]),
            Mount::Hidden(p) => {
                let (kind, real) = kind(p);
                if hidden.contains(&real) {
                    continue;
                }
                match kind {
                    PathKind::Dir => push(&mut out, &["--tmpfs", text(&real)?]),
                    PathKind::File => push(&mut out, &["--ro-bind", "/dev/null", text(&real)?]),
                    PathKind::Missing | PathKind::Unreachable => {}
                }
                hidden.push(real);
            }
        }
    }
    push(&mut out, &["--chdir", text(cwd)?]);
    Ok(out)
}

fn push(out: &mut Vec<String>, items: &[&str]) {
    out.extend(items.iter().map(|s| (*s).to_owned()));
}

fn text(path: &Path) -> Result<&str, ForgeError> {
    path.to_str().ok_or_else(|| ForgeError::InvalidRequest {
        reason: format!(
            "the sandbox cannot mount {}: the path is not UTF-8",
            path.display()
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use forge_domain::sandbox::{Confinement, FsFacts, fs_plan};

    #[test]
    fn a_task_plan_as_bwrap_arguments() {
        let confinement = Confinement::work_tree("/w").with_writable("/w/.forgecode/runs/r/home");
        let facts = FsFacts {
            home: Some("/home/u".into()),
            ..FsFacts::default()
        };
        let kind = |p: &Path| {
            let k = match p.to_str() {
                Some("/home/u" | "/home/u/.ssh") => PathKind::Dir,
                Some("/home/u/.netrc") => PathKind::File,
                _ => PathKind::Missing,
            };
            (k, p.to_path_buf())
        };
        let args = bwrap_args(
            &fs_plan(&confinement, &facts),
            &kind,
            Path::new("/w"),
            false,
        )
        .unwrap()
        .join(" ");
        assert_eq!(
            args,
            "--unshare-user --unshare-pid --unshare-ipc --unshare-uts --unshare-cgroup-try \
             --die-with-parent --cap-drop ALL --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp \
             --tmpfs /home/u --ro-bind-try /home/u/.cargo /home/u/.cargo \
             --ro-bind-try /home/u/.rustup /home/u/.rustup --ro-bind-try /home/u/.npm /home/u/.npm \
             --ro-bind-try /home/u/.npm-global /home/u/.npm-global \
             --ro-bind-try /home/u/.nvm /home/u/.nvm --ro-bind-try /home/u/.volta /home/u/.volta \
             --ro-bind-try /home/u/.bun /home/u/.bun --ro-bind-try /home/u/.deno /home/u/.deno \
             --ro-bind-try /home/u/.pyenv /home/u/.pyenv --ro-bind-try /home/u/.rbenv /home/u/.rbenv \
             --ro-bind-try /home/u/.sdkman /home/u/.sdkman \
             --ro-bind-try /home/u/.gradle /home/u/.gradle --ro-bind-try /home/u/.m2 /home/u/.m2 \
             --ro-bind-try /home/u/go /home/u/go --ro-bind-try /home/u/.local/bin /home/u/.local/bin \
             --ro-bind-try /home/u/.local/lib /home/u/.local/lib \
             --ro-bind-try /home/u/.cache/pip /home/u/.cache/pip \
             --ro-bind-try /home/u/.cache/go-build /home/u/.cache/go-build \
             --ro-bind-try /home/u/.gitconfig /home/u/.gitconfig \
             --ro-bind-try /home/u/.config/git /home/u/.config/git \
             --bind /w /w --tmpfs /home/u/.ssh --ro-bind /dev/null /home/u/.netrc \
             --ro-bind-try /w/.git /w/.git --ro-bind-try /w/.gitmodules /w/.gitmodules \
             --ro-bind-try /w/.gitconfig /w/.gitconfig --ro-bind-try /w/.githooks /w/.githooks \
             --ro-bind-try /w/.husky /w/.husky \
             --ro-bind-try /w/.pre-commit-config.yaml /w/.pre-commit-config.yaml \
             --ro-bind-try /w/.bashrc /w/.bashrc --ro-bind-try /w/.bash_profile /w/.bash_profile \
             --ro-bind-try /w/.bash_login /w/.bash_login --ro-bind-try /w/.profile /w/.profile \
             --ro-bind-try /w/.zshrc /w/.zshrc --ro-bind-try /w/.zprofile /w/.zprofile \
             --ro-bind-try /w/.zshenv /w/.zshenv --ro-bind-try /w/.envrc /w/.envrc \
             --ro-bind-try /w/.vscode /w/.vscode --ro-bind-try /w/.idea /w/.idea \
             --ro-bind-try /w/.claude/commands /w/.claude/commands \
             --ro-bind-try /w/.claude/agents /w/.claude/agents \
             --ro-bind-try /w/.claude/settings.json /w/.claude/settings.json \
             --ro-bind-try /w/.claude/settings.local.json /w/.claude/settings.local.json \
             --ro-bind-try /w/.codex /w/.codex \
             --ro-bind-try /w/.gemini/settings.json /w/.gemini/settings.json \
             --ro-bind-try /w/.mcp.json /w/.mcp.json --ro-bind-try /w/.forgecode /w/.forgecode \
             --bind /w/.forgecode/runs/r/home /w/.forgecode/runs/r/home --chdir /w"
        );
    }

    #[test]
    fn a_mount_this_user_may_not_reach_is_left_out_and_a_missing_one_kept() {
        let mounts = [
            Mount::ReadOnly("/root/.cargo".into()),
            Mount::WritableIfPresent("/root/.cargo/registry".into()),
            Mount::ReadOnly("/home/u/.cargo".into()),
            Mount::WritableIfPresent("/home/u/.cargo/registry".into()),
        ];
        let kind = |p: &Path| {
            let k = if p.starts_with("/root") {
                PathKind::Unreachable
            } else {
                PathKind::Missing
            };
            (k, p.to_path_buf())
        };
        let args = bwrap_args(&mounts, &kind, Path::new("/w"), false)
            .unwrap()
            .join(" ");
        assert!(!args.contains("/root"), "{args}");
        assert!(
            args.contains(
                "--ro-bind-try /home/u/.cargo /home/u/.cargo \
                 --bind-try /home/u/.cargo/registry /home/u/.cargo/registry"
            ),
            "{args}"
        );
    }

    #[test]
    fn the_network_is_unshared_only_with_an_egress() {
        let mounts = fs_plan(&Confinement::work_tree("/w"), &FsFacts::default());
        let kind = |p: &Path| (PathKind::Missing, p.to_path_buf());
        let with = bwrap_args(&mounts, &kind, Path::new("/w"), true).unwrap();
        let without = bwrap_args(&mounts, &kind, Path::new("/w"), false).unwrap();
        assert!(with.contains(&"--unshare-net".to_owned()));
        assert!(!without.contains(&"--unshare-net".to_owned()));
    }
}
