//! Work trees: `git worktree add -b` (tasks), `add --detach` (reviews), `remove --force`,
//! `list --porcelain`.

use std::path::{Path, PathBuf};

use forge_domain::ForgeError;
use forge_ports::WorktreeInfo;

use crate::git_cli::{GitCli, failure_text, nul_fields};

pub(crate) async fn add(
    git: &GitCli,
    repo: &Path,
    path: &Path,
    branch: &str,
    base: &str,
) -> Result<(), ForgeError> {
    add_with(
        git,
        repo,
        path,
        &["-b", branch],
        base,
        &format!("on {branch}"),
    )
    .await
}

/// `git worktree add --detach <path> <commit>`.
pub(crate) async fn add_detached(
    git: &GitCli,
    repo: &Path,
    path: &Path,
    commit: &str,
) -> Result<(), ForgeError> {
    add_with(
        git,
        repo,
        path,
        &["--detach"],
        commit,
        &format!("at {commit}"),
    )
    .await
}

/// `git worktree add --quiet <mode…> <path> <start>`: a path that exists is the caller's
/// mistake (`InvalidRequest`), any other failure an I/O error saying `where_` it was made.
async fn add_with(
    git: &GitCli,
    repo: &Path,
    path: &Path,
    mode: &[&str],
    start: &str,
    where_: &str,
) -> Result<(), ForgeError> {
    let path_text = path.to_string_lossy();
    let mut args = vec!["worktree", "add", "--quiet"];
    args.extend_from_slice(mode);
    args.extend([path_text.as_ref(), start]);
    let output = git.git(repo, &args, None).await?;
    if output.code == Some(0) {
        return Ok(());
    }
    let text = failure_text(&output);
    if text.contains("already exists") {
        return Err(ForgeError::InvalidRequest {
            reason: format!("cannot create work tree {}: {text}", path.display()),
        });
    }
    Err(ForgeError::io(
        format!("creating work tree {} {where_}", path.display()),
        text,
    ))
}

pub(crate) async fn remove(git: &GitCli, repo: &Path, path: &Path) -> Result<(), ForgeError> {
    let path_text = path.to_string_lossy();
    let output = git
        .git(
            repo,
            &["worktree", "remove", "--force", "--force", &path_text],
            None,
        )
        .await?;
    let text = failure_text(&output);
    if output.code != Some(0) && !text.contains("is not a working tree") {
        return Err(ForgeError::io(
            format!("removing work tree {}", path.display()),
            text,
        ));
    }
    git.git_ok(repo, &["worktree", "prune"], None).await?;
    Ok(())
}

pub(crate) async fn list(git: &GitCli, repo: &Path) -> Result<Vec<WorktreeInfo>, ForgeError> {
    let out = git
        .git_ok(repo, &["worktree", "list", "--porcelain", "-z"], None)
        .await?;
    Ok(parse_porcelain(&out))
}

/// `worktree <path>\0HEAD <sha>\0branch refs/heads/<b>\0\0…` (one record per work tree,
/// attributes NUL-terminated, records ended by an empty attribute).
pub(crate) fn parse_porcelain(out: &str) -> Vec<WorktreeInfo> {
    let mut trees = Vec::new();
    let mut current: Option<WorktreeInfo> = None;
    for attr in nul_fields(out) {
        if let Some(path) = attr.strip_prefix("worktree ") {
            trees.extend(current.take());
            current = Some(WorktreeInfo {
                path: PathBuf::from(path),
                branch: None,
            });
        } else if let Some(branch) = attr.strip_prefix("branch ") {
            if let Some(tree) = current.as_mut() {
                let name = branch.strip_prefix("refs/heads/").unwrap_or(branch);
                tree.branch = Some(name.to_owned());
            }
        } else if attr.is_empty() {
            trees.extend(current.take());
        }
    }
    trees.extend(current);
    trees
}

/// `git rev-parse --git-path info/exclude`, made absolute against `repo`.
pub(crate) async fn exclude_file(git: &GitCli, repo: &Path) -> Result<PathBuf, ForgeError> {
    let out = git
        .git_ok(repo, &["rev-parse", "--git-path", "info/exclude"], None)
        .await?;
    let path = PathBuf::from(out.trim_end_matches(['\n', '\r']));
    Ok(if path.is_absolute() {
        path
    } else {
        repo.join(path)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn porcelain_records_become_trees_with_their_branch() {
        let out = "worktree /r\0HEAD abc\0branch refs/heads/main\0\0worktree /r/.forgecode/worktrees/t1\0HEAD def\0detached\0\0worktree /w 2\0HEAD 123\0branch refs/heads/forge/t2\0\0";
        let trees = parse_porcelain(out);
        let got: Vec<(String, Option<String>)> = trees
            .into_iter()
            .map(|t| (t.path.display().to_string(), t.branch))
            .collect();
        assert_eq!(
            got,
            vec![
                ("/r".to_owned(), Some("main".to_owned())),
                ("/r/.forgecode/worktrees/t1".to_owned(), None),
                ("/w 2".to_owned(), Some("forge/t2".to_owned())),
            ]
        );
    }
}
