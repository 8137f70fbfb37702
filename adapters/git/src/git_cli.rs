//! [`GitCli`]: the `git` CLI behind the [`Vcs`] port. This file holds the struct and the
//! one way it runs git; each group of operations lives in its own module.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use forge_domain::ForgeError;
use forge_ports::{
    AddedLines, CapturedOutput, CommitAuthor, Invocation, PathChange, ProcessRunner, RemoteCommit,
    Vcs, WorktreeInfo,
};

/// Shown when `git` is missing.
const INSTALL_HINT: &str = "install git (e.g. apt-get install git, brew install git)";

/// `rev-parse` answers from local files in milliseconds; a long wait means something is
/// wrong (a hung network file system) and the run should not wait with it.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Clone)]
pub struct GitCli {
    runner: Arc<dyn ProcessRunner>,
    program: PathBuf,
    timeout: Duration,
}

impl std::fmt::Debug for GitCli {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GitCli")
            .field("program", &self.program)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl GitCli {
    /// `git` from PATH, run through `runner`.
    pub fn new(runner: Arc<dyn ProcessRunner>) -> Self {
        Self {
            runner,
            program: PathBuf::from("git"),
            timeout: DEFAULT_TIMEOUT,
        }
    }

    /// Another git binary.
    #[must_use]
    pub fn with_program(mut self, program: impl Into<PathBuf>) -> Self {
        self.program = program.into();
        self
    }

    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    fn rev_parse(&self, dir: &Path) -> Invocation {
        self.invocation(dir, &["rev-parse", "--is-inside-work-tree"])
    }

    pub(crate) fn invocation(&self, dir: &Path, args: &[&str]) -> Invocation {
        let args = args.iter().map(|a| (*a).to_owned()).collect();
        let mut invocation = Invocation::new(&self.program, args, dir);
        // Never prompt (no terminal to answer on), and keep messages in English so a
        // person reading an error gets git's usual text.
        invocation
            .env
            .set
            .insert("GIT_TERMINAL_PROMPT".into(), "0".into());
        invocation.env.set.insert("LC_ALL".into(), "C".into());
        invocation.install_hint = Some(INSTALL_HINT.to_owned());
        invocation
    }

    /// Runs `git <args>` in `dir` to completion (within `timeout`, else the default).
    pub(crate) async fn git(
        &self,
        dir: &Path,
        args: &[&str],
        timeout: Option<Duration>,
    ) -> Result<CapturedOutput, ForgeError> {
        let output = self
            .runner
            .output(self.invocation(dir, args), timeout.unwrap_or(self.timeout))
            .await
            .map_err(|e| git_error(e, dir, args))?;
        Ok(output)
    }

    /// Like [`GitCli::git`], but a non-zero exit is an [`ForgeError::Io`] carrying git's
    /// own message.
    pub(crate) async fn git_ok(
        &self,
        dir: &Path,
        args: &[&str],
        timeout: Option<Duration>,
    ) -> Result<String, ForgeError> {
        let output = self.git(dir, args, timeout).await?;
        if output.code == Some(0) {
            return Ok(output.stdout);
        }
        Err(ForgeError::io(
            format!("running git {} in {}", args.join(" "), dir.display()),
            failure_text(&output),
        ))
    }
}

/// The fields of `-z` output: NUL-separated, without the empty tail after the last NUL
/// (nor the newline the process port may add after it).
pub(crate) fn nul_fields(out: &str) -> impl Iterator<Item = &str> {
    let out = out.strip_suffix('\n').unwrap_or(out);
    let out = out.strip_suffix('\0').unwrap_or(out);
    out.split('\0').filter(|f| !f.is_empty())
}

/// git's complaint in one line: stderr, else stdout, else the exit status.
pub(crate) fn failure_text(output: &CapturedOutput) -> String {
    let text = if output.stderr.trim().is_empty() {
        output.stdout.trim()
    } else {
        output.stderr.trim()
    };
    if text.is_empty() {
        match output.code {
            Some(code) => format!("exit code {code}"),
            None => "killed by a signal".to_owned(),
        }
    } else {
        text.lines().collect::<Vec<_>>().join("; ")
    }
}

fn git_error(e: ForgeError, dir: &Path, args: &[&str]) -> ForgeError {
    match e {
        ForgeError::ExecutableNotFound { program, hint } if hint.is_empty() => {
            ForgeError::ExecutableNotFound {
                program,
                hint: INSTALL_HINT.to_owned(),
            }
        }
        ForgeError::ProviderTimeout { after_ms } => ForgeError::io(
            format!("running git {} in {}", args.join(" "), dir.display()),
            format!("no answer after {after_ms} ms"),
        ),
        other => other,
    }
}

#[async_trait]
impl Vcs for GitCli {
    async fn resolve_commit(&self, repo: &Path, rev: &str) -> Result<Option<String>, ForgeError> {
        crate::refs::resolve_commit(self, repo, rev).await
    }

    async fn file_at(
        &self,
        repo: &Path,
        commit: &str,
        path: &str,
    ) -> Result<Option<String>, ForgeError> {
        crate::refs::file_at(self, repo, commit, path).await
    }

    async fn add_worktree(
        &self,
        repo: &Path,
        path: &Path,
        branch: &str,
        base: &str,
    ) -> Result<(), ForgeError> {
        crate::worktree::add(self, repo, path, branch, base).await
    }

    async fn local_exclude_file(&self, repo: &Path) -> Result<PathBuf, ForgeError> {
        crate::worktree::exclude_file(self, repo).await
    }

    async fn add_detached_worktree(
        &self,
        repo: &Path,
        path: &Path,
        commit: &str,
    ) -> Result<(), ForgeError> {
        crate::worktree::add_detached(self, repo, path, commit).await
    }

    async fn merge_base(
        &self,
        repo: &Path,
        a: &str,
        b: &str,
    ) -> Result<Option<String>, ForgeError> {
        crate::range::merge_base(self, repo, a, b).await
    }

    async fn diff(&self, repo: &Path, from: &str, to: &str) -> Result<String, ForgeError> {
        crate::range::diff(self, repo, from, to).await
    }

    async fn remove_worktree(&self, repo: &Path, path: &Path) -> Result<(), ForgeError> {
        crate::worktree::remove(self, repo, path).await
    }

    async fn worktrees(&self, repo: &Path) -> Result<Vec<WorktreeInfo>, ForgeError> {
        crate::worktree::list(self, repo).await
    }

    async fn changes(&self, dir: &Path) -> Result<Vec<PathChange>, ForgeError> {
        crate::changes::changes(self, dir).await
    }

    async fn added_lines(&self, dir: &Path) -> Result<Vec<AddedLines>, ForgeError> {
        crate::changes::added_lines(self, dir).await
    }

    async fn clone_or_fetch(&self, url: &str, cache: &Path) -> Result<PathBuf, ForgeError> {
        crate::remote::clone_or_fetch(self, url, cache).await
    }

    async fn commit(
        &self,
        dir: &Path,
        message: &str,
        author: Option<&CommitAuthor>,
        exclude: &[String],
    ) -> Result<Option<String>, ForgeError> {
        crate::deliver::commit(self, dir, message, author, exclude).await
    }

    async fn push(&self, dir: &Path, remote: &str, branch: &str) -> Result<(), ForgeError> {
        crate::deliver::push(self, dir, remote, branch).await
    }

    async fn revert(
        &self,
        dir: &Path,
        commit: &str,
        author: Option<&CommitAuthor>,
    ) -> Result<String, ForgeError> {
        crate::deliver::revert(self, dir, commit, author).await
    }

    async fn delete_branch(&self, repo: &Path, branch: &str) -> Result<bool, ForgeError> {
        crate::deliver::delete_branch(self, repo, branch).await
    }

    async fn commits_with_trailer(
        &self,
        repo: &Path,
        key: &str,
        value: &str,
    ) -> Result<Vec<String>, ForgeError> {
        crate::deliver::commits_with_trailer(self, repo, key, value).await
    }

    async fn trailers(&self, repo: &Path, key: &str) -> Result<Vec<(String, String)>, ForgeError> {
        crate::deliver::trailers(self, repo, key).await
    }

    async fn is_ancestor(&self, repo: &Path, commit: &str, rev: &str) -> Result<bool, ForgeError> {
        crate::deliver::is_ancestor(self, repo, commit, rev).await
    }

    async fn identity(&self, dir: &Path) -> Result<Option<CommitAuthor>, ForgeError> {
        crate::deliver::git_identity(self, dir).await
    }

    async fn remote_branch(
        &self,
        repo: &Path,
        remote: &str,
        branch: &str,
    ) -> Result<Option<RemoteCommit>, ForgeError> {
        crate::remote::remote_branch(self, repo, remote, branch).await
    }

    async fn is_repository(&self, dir: &Path) -> Result<bool, ForgeError> {
        let output = self
            .runner
            .output(self.rev_parse(dir), self.timeout)
            .await
            .map_err(|e| match e {
                ForgeError::ExecutableNotFound { program, hint } if hint.is_empty() => {
                    ForgeError::ExecutableNotFound {
                        program,
                        hint: INSTALL_HINT.to_owned(),
                    }
                }
                ForgeError::ProviderTimeout { after_ms } => ForgeError::io(
                    format!("running git rev-parse in {}", dir.display()),
                    format!("no answer after {after_ms} ms"),
                ),
                other => other,
            })?;
        match output.code {
            // `false` is what git prints inside `.git/` itself: a repository, but not a
            // work tree, and no place for an agent to edit files.
            Some(0) => Ok(output.stdout.trim() == "true"),
            // 128: "not a git repository", and also "dubious ownership" (a repository git
            // refuses to use); either way git will not work there, so answer no.
            Some(_) => Ok(false),
            None => Err(ForgeError::io(
                format!("running git rev-parse in {}", dir.display()),
                "git was killed by a signal",
            )),
        }
    }
}
