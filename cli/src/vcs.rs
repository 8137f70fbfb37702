//! [`forge_ports::Vcs`] over the `git` CLI, run through the [`ProcessRunner`] port (the
//! process adapter stays the only code that spawns).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use forge_domain::ForgeError;
use forge_ports::{Invocation, ProcessRunner, Vcs};

/// A `git rev-parse` answers in milliseconds; a hung one must not hold a run.
const GIT_TIMEOUT: Duration = Duration::from_secs(10);

pub struct GitCli {
    runner: Arc<dyn ProcessRunner>,
}

impl GitCli {
    pub fn new(runner: Arc<dyn ProcessRunner>) -> Self {
        Self { runner }
    }
}

#[async_trait]
impl Vcs for GitCli {
    async fn is_repository(&self, dir: &Path) -> Result<bool, ForgeError> {
        let mut invocation = Invocation::new(
            "git",
            vec!["rev-parse".into(), "--is-inside-work-tree".into()],
            dir,
        );
        invocation.install_hint = Some("install git (e.g. apt-get install git)".into());
        let out = self.runner.output(invocation, GIT_TIMEOUT).await?;
        Ok(out.code == Some(0) && out.stdout.trim() == "true")
    }
}
