//! Naming commits: `git rev-parse --verify <rev>^{commit}`.

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
