//! [`GitCli`]: asks `git rev-parse` whether a directory is inside a work tree.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use forge_domain::ForgeError;
use forge_ports::{Invocation, ProcessRunner, Vcs};

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
        let args = ["rev-parse", "--is-inside-work-tree"]
            .map(String::from)
            .to_vec();
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
}

#[async_trait]
impl Vcs for GitCli {
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
