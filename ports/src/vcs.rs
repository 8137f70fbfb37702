//! Version control: what the runtime, the task pipeline and the review need (repository
//! check, work trees, the change a run made, the diff between two commits, a remote
//! repository's local cache).

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use forge_domain::ForgeError;

#[async_trait]
pub trait Vcs: Send + Sync {
    /// Whether `dir` is inside a repository work tree.
    ///
    /// # Errors
    /// [`ForgeError::ExecutableNotFound`] when the VCS tool is missing; [`ForgeError::Io`]
    /// when it cannot be run.
    async fn is_repository(&self, dir: &Path) -> Result<bool, ForgeError>;

    /// The commit `rev` names in the repository at `repo` (`HEAD`, a branch, a tag, a sha);
    /// `None` when it names nothing.
    ///
    /// # Errors
    /// [`ForgeError::ExecutableNotFound`] when the VCS tool is missing; [`ForgeError::Io`]
    /// when it cannot be run or `repo` is not a repository.
    async fn resolve_commit(&self, repo: &Path, rev: &str) -> Result<Option<String>, ForgeError>;

    /// The text of the file at `path` (from the repository's root) in `commit`; `None`
    /// when that commit has no such file. Reads the object store: no checkout needed (a
    /// bare mirror works).
    ///
    /// # Errors
    /// [`ForgeError::InvalidRequest`] for a path that leaves the repository or a revision
    /// that looks like an option; [`ForgeError::Io`] when the tool fails (no such commit).
    async fn file_at(
        &self,
        repo: &Path,
        commit: &str,
        path: &str,
    ) -> Result<Option<String>, ForgeError>;

    /// Creates a work tree at `path` on a new branch `branch` starting at `base` (a commit).
    /// The user's own checkout is left as it is.
    ///
    /// # Errors
    /// [`ForgeError::InvalidRequest`] when the branch already exists or `path` is taken;
    /// [`ForgeError::Io`] for other failures of the tool.
    async fn add_worktree(
        &self,
        repo: &Path,
        path: &Path,
        branch: &str,
        base: &str,
    ) -> Result<(), ForgeError>;

    /// The repository's own exclude file (`.git/info/exclude` of the common directory, shared
    /// by every work tree): where forge lists its folder so the user's `git status` stays
    /// clean without touching their `.gitignore`.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the tool fails or `repo` is not a repository.
    async fn local_exclude_file(&self, repo: &Path) -> Result<PathBuf, ForgeError>;

    /// Creates a work tree at `path` with `commit` checked out, detached (no branch). The
    /// user's own checkout is left as it is; [`Vcs::remove_worktree`] removes it.
    ///
    /// # Errors
    /// [`ForgeError::InvalidRequest`] when `path` is taken; [`ForgeError::Io`] for other
    /// failures of the tool.
    async fn add_detached_worktree(
        &self,
        repo: &Path,
        path: &Path,
        commit: &str,
    ) -> Result<(), ForgeError>;

    /// Removes the work tree at `path` (even with changes in it) and prunes its record.
    /// The branch stays. A path that is no work tree any more is not an error.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the tool fails otherwise.
    async fn remove_worktree(&self, repo: &Path, path: &Path) -> Result<(), ForgeError>;

    /// The work trees of the repository at `repo` (the main one included).
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the tool fails.
    async fn worktrees(&self, repo: &Path) -> Result<Vec<WorktreeInfo>, ForgeError>;

    /// Every path that differs from `HEAD` in the work tree `dir`: tracked changes (with
    /// line counts; binary files count 0) and untracked files that are not ignored (their
    /// lines counted as added), sorted by path.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the tool fails.
    async fn changes(&self, dir: &Path) -> Result<Vec<PathChange>, ForgeError>;

    /// The lines added against `HEAD` in the work tree `dir`, per file, with their line
    /// numbers in the new file (untracked files: every line). Binary files are left out.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the tool fails.
    async fn added_lines(&self, dir: &Path) -> Result<Vec<AddedLines>, ForgeError>;

    /// The best common ancestor of commits `a` and `b` (what `a...b` diffs from); `None`
    /// when they share no history.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the tool fails (an unknown commit included).
    async fn merge_base(&self, repo: &Path, a: &str, b: &str)
    -> Result<Option<String>, ForgeError>;

    /// The unified diff from commit `from` to commit `to` as the tool prints it: renames
    /// found, three lines of context, paths as stored (unquoted), no colour. Never cut: a
    /// diff of any size comes whole.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the tool fails.
    async fn diff(&self, repo: &Path, from: &str, to: &str) -> Result<String, ForgeError>;

    /// A local copy of the remote repository `url` under `cache`: cloned the first time,
    /// fetched on later calls. Returns the copy's path.
    ///
    /// # Errors
    /// [`ForgeError::InvalidRequest`] for a URL the tool cannot use; [`ForgeError::Io`]
    /// when cloning or fetching fails.
    async fn clone_or_fetch(&self, url: &str, cache: &Path) -> Result<PathBuf, ForgeError>;

    // Delivery: commit, push, undo.

    /// Stages every change in the work tree `dir` except the paths under `exclude` (forge's
    /// own files: `.forgecode/`, the instruction file) and commits them with `message`.
    /// Returns the new commit's id, or `None` when nothing but excluded paths changed.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the tool fails (no identity configured and none given, a
    /// hook refused the commit); the message carries the tool's own words.
    async fn commit(
        &self,
        dir: &Path,
        message: &str,
        author: Option<&CommitAuthor>,
        exclude: &[String],
    ) -> Result<Option<String>, ForgeError>;

    /// Pushes `branch` from the repository at `dir` to `remote`.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the remote refuses or cannot be reached; nothing local is
    /// changed then (the commit stays).
    async fn push(&self, dir: &Path, remote: &str, branch: &str) -> Result<(), ForgeError>;

    /// Commits the reverse of `commit` on the branch checked out in `dir`; returns the new
    /// commit's id.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the revert conflicts (it is aborted, the tree left as it
    /// was) or the work tree has local changes.
    async fn revert(
        &self,
        dir: &Path,
        commit: &str,
        author: Option<&CommitAuthor>,
    ) -> Result<String, ForgeError>;

    /// Deletes the local branch `branch` even when unmerged. Returns whether it existed.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the branch is checked out somewhere or the tool fails.
    async fn delete_branch(&self, repo: &Path, branch: &str) -> Result<bool, ForgeError>;

    /// Commits on any local branch whose message has the trailer `key: value`, newest first.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the tool fails.
    async fn commits_with_trailer(
        &self,
        repo: &Path,
        key: &str,
        value: &str,
    ) -> Result<Vec<String>, ForgeError>;

    /// Every commit on a local branch whose message has a `key: <value>` trailer line, as
    /// (commit, value), newest first.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the tool fails.
    async fn trailers(&self, repo: &Path, key: &str) -> Result<Vec<(String, String)>, ForgeError>;

    /// The identity git would commit with in `dir` (its configuration or the
    /// `GIT_AUTHOR_*`/`GIT_COMMITTER_*` environment); `None` when it has none and a commit
    /// would fail with "Author identity unknown".
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the tool cannot be run.
    async fn identity(&self, dir: &Path) -> Result<Option<CommitAuthor>, ForgeError>;

    /// The commit the branch `branch` of `remote` (a URL or a remote's name) points at,
    /// fetched into the repository at `repo` so its message can be read; `None` when the
    /// remote has no such branch.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the remote cannot be reached or the tool fails.
    async fn remote_branch(
        &self,
        repo: &Path,
        remote: &str,
        branch: &str,
    ) -> Result<Option<RemoteCommit>, ForgeError>;

    /// Whether `commit` is reachable from `rev` (merged into it).
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the tool fails (an unknown commit is `false`, not an error).
    async fn is_ancestor(&self, repo: &Path, commit: &str, rev: &str) -> Result<bool, ForgeError>;
}

/// One work tree of a repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorktreeInfo {
    pub path: PathBuf,
    /// The checked-out branch without `refs/heads/`; `None` when detached.
    pub branch: Option<String>,
}

/// How a path differs from `HEAD`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathChangeKind {
    Added,
    Modified,
    Deleted,
}

/// One changed path of a work tree, relative to its root with `/` separators.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathChange {
    pub path: String,
    pub kind: PathChangeKind,
    pub added: u64,
    pub removed: u64,
    /// Size of the file in the work tree now; `None` when deleted or unreadable.
    pub size: Option<u64>,
}

/// The lines added to one file: (line number in the new file, text without the newline).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddedLines {
    pub path: String,
    pub lines: Vec<(u32, String)>,
}

/// Who a commit is by; git's configured identity when not given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitAuthor {
    pub name: String,
    pub email: String,
}

/// A commit of a remote branch: its id and its message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteCommit {
    pub commit: String,
    pub message: String,
}
