//! Whether a task's repository is named by a URL (cloned into forge's cache) or is a path
//! on this machine: one rule for `task run`, the pipeline, the queue and the server.

/// A URL with a scheme (`https://`, `ssh://`, `git://`, `file://`) or git's scp-like
/// `user@host:path`; anything else is a path.
pub fn is_repository_url(repo: &str) -> bool {
    let scp_like = repo
        .split_once(':')
        .is_some_and(|(host, _)| host.contains('@') && !host.contains('/'));
    repo.contains("://") || scp_like
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_paths_that_look_like_them() {
        let check = |repo: &str, want: bool| assert_eq!(is_repository_url(repo), want, "{repo}");
        check("https://github.com/o/r.git", true);
        check("ssh://git@host/o/r.git", true);
        check("git://host/r", true);
        check("file:///srv/repos/r", true);
        check("git@github.com:o/r.git", true);
        check("deploy@host.internal:repos/r", true);
        // Look-alikes that are paths.
        check("/work/r", false);
        check("./r", false);
        check("r", false);
        check("git@nocolon", false);
        check("dir/with@at:colon", false);
        check("C:repo", false);
        check("notes:2026", false);
    }
}
