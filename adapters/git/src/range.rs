//! Two commits for a review: their merge base, and the diff between them. The diff is
//! written by git to a file and read from there, so a large change comes whole (the process
//! port keeps at most a MiB of a command's stdout).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use forge_domain::ForgeError;

use crate::git_cli::{GitCli, failure_text};

/// A diff may take a while on a large repository; `rev-parse`'s ten seconds are too short.
const DIFF_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(300);

pub(crate) async fn merge_base(
    git: &GitCli,
    repo: &Path,
    a: &str,
    b: &str,
) -> Result<Option<String>, ForgeError> {
    for rev in [a, b] {
        if rev.starts_with('-') || rev.trim().is_empty() {
            return Err(ForgeError::InvalidRequest {
                reason: format!("{rev:?} is not a revision"),
            });
        }
    }
    let output = git.git(repo, &["merge-base", a, b], None).await?;
    match output.code {
        Some(0) => Ok(Some(output.stdout.trim().to_owned())),
        // Exit 1 without a word: no common ancestor.
        Some(1) if output.stderr.trim().is_empty() => Ok(None),
        _ => Err(ForgeError::io(
            format!(
                "finding the merge base of {a} and {b} in {}",
                repo.display()
            ),
            failure_text(&output),
        )),
    }
}

pub(crate) async fn diff(
    git: &GitCli,
    repo: &Path,
    from: &str,
    to: &str,
) -> Result<String, ForgeError> {
    for rev in [from, to] {
        if rev.starts_with('-') || rev.trim().is_empty() {
            return Err(ForgeError::InvalidRequest {
                reason: format!("{rev:?} is not a revision"),
            });
        }
    }
    let file = scratch_file();
    let output_arg = format!("--output={}", file.display());
    let result = git
        .git_ok(
            repo,
            &[
                "-c",
                "core.quotePath=false",
                "diff",
                "--find-renames",
                "--no-color",
                "--no-ext-diff",
                "--unified=3",
                &output_arg,
                from,
                to,
                "--",
            ],
            Some(DIFF_TIMEOUT),
        )
        .await;
    let text = result.and_then(|_| {
        std::fs::read(&file)
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            .map_err(|e| ForgeError::io(format!("reading {}", file.display()), e.to_string()))
    });
    let _ = std::fs::remove_file(&file);
    text
}

/// A file of this process's own in the temporary directory.
fn scratch_file() -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    std::env::temp_dir().join(format!(
        "forge-diff-{}-{}.patch",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ))
}
