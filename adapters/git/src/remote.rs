//! A remote repository's local cache: a mirror clone the first time, `fetch --prune` after.

use std::path::{Path, PathBuf};
use std::time::Duration;

use forge_domain::ForgeError;

use forge_ports::RemoteCommit;

use crate::git_cli::GitCli;

/// Cloning a real repository takes longer than a local question to git.
const NETWORK_TIMEOUT: Duration = Duration::from_secs(600);

/// A negative refspec (git 2.29): forge's task branches are neither fetched nor pruned.
const TASK_BRANCHES_EXCLUDED: &str = "^refs/heads/forge/*";

pub(crate) async fn clone_or_fetch(
    git: &GitCli,
    url: &str,
    cache: &Path,
) -> Result<PathBuf, ForgeError> {
    if url.starts_with('-') || url.trim().is_empty() {
        return Err(ForgeError::InvalidRequest {
            reason: format!("{url:?} is not a repository URL"),
        });
    }
    let dir = cache.join(cache_name(url));
    if dir.join("HEAD").is_file() {
        // Every ref but forge's task branches: a mirror's `--prune` would delete the branch
        // of a task running in a work tree of this cache (git allows it, the commit then
        // has no branch to push), and a task branch another worker pushed must not land on
        // a branch this cache's tasks create. Delivery asks the remote for those itself.
        git.git_ok(
            &dir,
            &[
                "fetch",
                "--quiet",
                "--prune",
                "origin",
                "+refs/*:refs/*",
                TASK_BRANCHES_EXCLUDED,
            ],
            Some(NETWORK_TIMEOUT),
        )
        .await?;
        return Ok(dir);
    }
    std::fs::create_dir_all(cache)
        .map_err(|e| ForgeError::io(format!("creating {}", cache.display()), e))?;
    let target = dir.to_string_lossy();
    git.git_ok(
        cache,
        &["clone", "--quiet", "--mirror", "--", url, &target],
        Some(NETWORK_TIMEOUT),
    )
    .await?;
    Ok(dir)
}

/// `ls-remote` for the branch, then a fetch of its commit (into `FETCH_HEAD`, no ref
/// written) and its message.
pub(crate) async fn remote_branch(
    git: &GitCli,
    repo: &Path,
    remote: &str,
    branch: &str,
) -> Result<Option<RemoteCommit>, ForgeError> {
    if remote.starts_with('-') || branch.starts_with('-') {
        return Err(ForgeError::InvalidRequest {
            reason: format!("{remote:?} {branch:?} is not a remote branch"),
        });
    }
    let reference = format!("refs/heads/{branch}");
    let listed = git
        .git_ok(
            repo,
            &["ls-remote", "--heads", "--", remote, &reference],
            Some(NETWORK_TIMEOUT),
        )
        .await?;
    let Some(commit) = listed
        .lines()
        .filter_map(|line| line.split_once('\t'))
        .find(|(_, name)| name.trim() == reference)
        .map(|(sha, _)| sha.trim().to_owned())
    else {
        return Ok(None);
    };
    git.git_ok(
        repo,
        &["fetch", "--quiet", "--no-write-fetch-head", remote, &commit],
        Some(NETWORK_TIMEOUT),
    )
    .await?;
    let message = git
        .git_ok(repo, &["log", "-1", "--format=%B", &commit], None)
        .await?;
    Ok(Some(RemoteCommit { commit, message }))
}

/// A directory name for `url`: its readable tail plus a hash of the whole, so two URLs
/// ending alike never share a cache.
pub fn cache_name(url: &str) -> String {
    let tail: String = url
        .trim_end_matches('/')
        .trim_end_matches(".git")
        .rsplit(['/', ':'])
        .next()
        .unwrap_or("repo")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    // FNV-1a: stable across runs and platforms, unlike the std hasher.
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in url.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{tail}-{hash:016x}.git")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_names_keep_the_tail_and_tell_urls_apart() {
        let a = cache_name("https://github.com/acme/app.git");
        let b = cache_name("git@gitlab.com:other/app.git");
        assert!(a.starts_with("app-") && a.ends_with(".git"), "{a}");
        assert!(b.starts_with("app-"), "{b}");
        assert_ne!(a, b);
        assert_eq!(a, cache_name("https://github.com/acme/app.git"));
    }
}
