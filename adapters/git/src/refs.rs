//! Naming commits (`git rev-parse --verify <rev>^{commit}`) and reading a file of one
//! (`git ls-tree`, then `git cat-file blob`).

use std::path::Path;

use forge_domain::ForgeError;

use crate::git_cli::{GitCli, failure_text};

pub(crate) async fn resolve_commit(
    git: &GitCli,
    repo: &Path,
    rev: &str,
) -> Result<Option<String>, ForgeError> {
    if rev.starts_with('-') || rev.trim().is_empty() {
        return Err(ForgeError::InvalidRequest {
            reason: format!("{rev:?} is not a revision"),
        });
    }
    let spec = format!("{rev}^{{commit}}");
    let output = git
        .git(repo, &["rev-parse", "--verify", "--quiet", &spec], None)
        .await?;
    match output.code {
        Some(0) => Ok(Some(output.stdout.trim().to_owned())),
        // `--verify --quiet` exits 1 without a word when the name names nothing.
        Some(1) if output.stderr.trim().is_empty() => Ok(None),
        _ => Err(ForgeError::io(
            format!("resolving {rev} in {}", repo.display()),
            failure_text(&output),
        )),
    }
}

/// The text of `path` in `commit`: `ls-tree` says whether the commit has it (a missing
/// file is an answer, not an error), `cat-file` reads the blob.
pub(crate) async fn file_at(
    git: &GitCli,
    repo: &Path,
    commit: &str,
    path: &str,
) -> Result<Option<String>, ForgeError> {
    let leaves = path.starts_with('/') || path.split('/').any(|part| part == "..");
    if commit.starts_with('-') || commit.trim().is_empty() || path.is_empty() || leaves {
        return Err(ForgeError::InvalidRequest {
            reason: format!("{commit}:{path} does not name a file of a commit"),
        });
    }
    let listed = git
        .git_ok(repo, &["ls-tree", "--name-only", commit, "--", path], None)
        .await?;
    if listed.lines().all(|line| line != path) {
        return Ok(None);
    }
    let spec = format!("{commit}:{path}");
    git.git_ok(repo, &["cat-file", "blob", &spec], None)
        .await
        .map(Some)
}
