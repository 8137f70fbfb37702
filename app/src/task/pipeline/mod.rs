//! [`TaskPipeline`]: a task in, a validated, reviewed, risk-scored change out.
//!
//! The stages, in the order they run (each a function of its own module, its inputs and
//! outputs named):
//!
//! | stage            | function                              | takes                     | gives                      |
//! |------------------|---------------------------------------|---------------------------|----------------------------|
//! | availability     | [`workspace::check_available`]        | the provider, the env     | — (or a typed error)       |
//! | workspace        | [`workspace::open`]                   | the request               | [`workspace::Workspace`]   |
//! | classify         | [`task::Task::classify`]              | the task text             | [`task::Classified`]       |
//! | install          | [`install::install`]                  | the plan, the warm caches | — (or a stop)              |
//! | context          | [`gather::gather`]                    | [`gather::GatherInputs`]  | [`gather::Gathered`]       |
//! | instructions     | [`instructions::write`]               | [`gather::Gathered`]      | [`instructions::Written`]  |
//! | plan, prompt     | [`plan::write`]                       | [`plan::PlanInputs`]      | the main prompt            |
//! | main run         | [`main_run::main_run`]                | the prompt                | [`main_run::MainRun`]      |
//! | changes          | [`changes::changed_files`]            | the work tree             | the changed files          |
//! | validation, correction, review | [`converge::converge`]  | [`converge::Converge`]    | [`task::Ending`]           |
//! | cleanup          | [`finish::cleanup`]                   | the instruction guard     | —                          |
//! | risk, outcome    | [`finish::finish`]                    | [`task::Ending`]          | the [`TaskOutcome`]        |
//!
//! The work tree is `forge/<task-id>` from the base, under `<repo>/.forgecode/worktrees/`;
//! cleanup runs in every outcome. Stages after the work tree exists never return an error:
//! a stage that cannot go on returns a [`task::Stopped`], which ends in the outcome's
//! `stop_reason` and `error`.
//!
//! [`TaskOutcome`]: forge_domain::task::TaskOutcome

mod agent;
mod changes;
mod converge;
mod finish;
mod gather;
mod install;
mod instructions;
mod main_run;
mod plan;
mod task;
mod travel;
mod workspace;

use std::sync::Arc;
use std::time::Duration;

use forge_domain::ForgeError;
use forge_domain::task::TaskOutcome;
use forge_ports::{BuildCache, FileStore, RepoIndexer, RepoMapper, Vcs};
use tokio::sync::mpsc::UnboundedSender;

use super::request::{TaskProgress, TaskRequest};
use super::validate::StepRunner;
use crate::agent::CodeAgent;
use crate::handle::RunCanceller;

/// Default root of task work trees, relative to the repository.
pub const WORKTREES_DIR: &str = ".forgecode/worktrees";

/// The ports the pipeline needs besides those of its [`CodeAgent`].
#[derive(Clone)]
pub struct TaskPorts {
    pub vcs: Arc<dyn Vcs>,
    /// The tree listing, when the repository map cannot be made.
    pub index: Arc<dyn RepoIndexer>,
    /// The repository map's tags (definitions, references, words), cached per repository.
    pub mapper: Arc<dyn RepoMapper>,
    pub files: Arc<dyn FileStore>,
    /// Masks secrets in validation output and in every artifact the task writes.
    pub redactor: forge_domain::Redactor,
    /// Build caches shared by the repository's tasks (`None`: every task builds cold).
    pub build_cache: Option<Arc<dyn BuildCache>>,
}

/// Runs tasks; built from a [`CodeAgent`] (its providers and runtime) and [`TaskPorts`].
#[derive(Clone)]
pub struct TaskPipeline {
    agent: CodeAgent,
    ports: TaskPorts,
}

impl TaskPipeline {
    pub fn new(agent: CodeAgent, ports: TaskPorts) -> Self {
        Self { agent, ports }
    }

    /// How the agent and its code run confined, as reports say it (`None`: no sandbox at all).
    pub fn sandbox(&self) -> Option<String> {
        self.agent.runtime().runner.sandbox()
    }

    /// A canceller for [`TaskPipeline::run`]: cancel stops the running stage (agent or
    /// validation step) through the kill ladder; the task ends `stopped` / `cancelled`
    /// after its cleanup.
    pub fn canceller() -> RunCanceller {
        RunCanceller::new()
    }

    pub fn agent(&self) -> &CodeAgent {
        &self.agent
    }

    pub fn ports(&self) -> &TaskPorts {
        &self.ports
    }

    /// Runs the task to its outcome.
    ///
    /// # Errors
    /// Only before the work tree exists (nothing to clean up, no artifacts):
    /// [`ForgeError::ProviderNotSupported`], [`ForgeError::ExecutableNotFound`] or
    /// [`ForgeError::InvalidRequest`] when the provider is not usable (with its hints), the
    /// repository is not a git repository, the base ref does not exist or a validation
    /// tool is missing; [`ForgeError::Io`] when git fails. Everything after is in the
    /// outcome's `stop_reason` and `error`.
    pub async fn run(
        &self,
        req: TaskRequest,
        progress: Option<UnboundedSender<TaskProgress>>,
        cancel: RunCanceller,
    ) -> Result<TaskOutcome, ForgeError> {
        let clock = self.agent.runtime().clock.clone();
        let started = clock.monotonic_ms();
        let mut report = task::Reporter::new(progress, clock, started);
        let mut req = req;
        let opened = workspace::open(self, &req, &mut report).await?;
        let (provider, worktree) = (opened.provider.clone(), opened.worktree.clone());
        let arrived = travel::arrive(self, &mut req, provider.as_ref(), &worktree).await;
        let task = task::Task::new(self, &req, opened, started, cancel);
        let mut outcome = task.run(&mut report).await;
        travel::leave(
            self,
            &req,
            provider.as_ref(),
            &worktree,
            &mut outcome,
            arrived,
        )
        .await;
        Ok(outcome)
    }

    fn step_runner(&self, req: &TaskRequest) -> StepRunner {
        let runtime = self.agent.runtime();
        StepRunner {
            runner: runtime.runner.clone(),
            clock: runtime.clock.clone(),
            ladder: forge_ports::KillLadder::default(),
            redactor: self.ports.redactor.clone(),
            step_timeout: Duration::from_millis(req.validation.step_timeout_ms),
            warm: None,
        }
    }
}
