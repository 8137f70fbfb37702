//! One task in flight: its state ([`Task`]), how stages end ([`Ending`], [`Stopped`]) and
//! the order they run in ([`Task::run`], [`Task::stages`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use forge_domain::task::{
    ChangedFile, Cycle, ReviewReport, StopReason, TaskId, TaskOutcome, TaskType, ValidationReport,
    totals,
};
use forge_domain::{ForgeError, SessionId};
use forge_ports::{FileStore, Provider};
use tokio::sync::mpsc::UnboundedSender;

use super::super::artifacts::TaskDir;
use super::super::detect::{PlannedStep, ValidationPlan};
use super::super::guard_file::Guard;
use super::super::request::{Stage, TaskProgress, TaskRequest};
use super::super::rules;
use super::super::validate::StepRunner;
use super::super::warm::Warm;
use super::converge::{self, Converge};
use super::main_run::{self, MainRun};
use super::plan::{self, PlanInputs};
use super::workspace::Workspace;
use super::{TaskPipeline, finish, gather, install, instructions};
use crate::handle::RunCanceller;

/// Progress reports on the caller's channel.
pub(super) struct Reporter {
    progress: Option<UnboundedSender<TaskProgress>>,
    clock: Arc<dyn forge_ports::Clock>,
    started: u64,
}

impl Reporter {
    pub fn new(
        progress: Option<UnboundedSender<TaskProgress>>,
        clock: Arc<dyn forge_ports::Clock>,
        started: u64,
    ) -> Self {
        Self {
            progress,
            clock,
            started,
        }
    }

    pub fn stage(&mut self, stage: Stage, cost_usd: f64, detail: &str) {
        if let Some(tx) = &self.progress {
            let _ = tx.send(TaskProgress {
                stage,
                elapsed_ms: self.clock.monotonic_ms().saturating_sub(self.started),
                cost_usd,
                detail: detail.to_owned(),
            });
        }
    }
}

/// One task in flight.
pub(super) struct Task<'a> {
    pub pipeline: &'a TaskPipeline,
    pub req: &'a TaskRequest,
    pub provider: Arc<dyn Provider>,
    pub task_id: TaskId,
    pub branch: String,
    pub base: String,
    pub worktree: PathBuf,
    pub dir: TaskDir,
    pub plan: ValidationPlan,
    /// The build caches this task holds (released when the task ends).
    pub warm: Option<Arc<Warm>>,
    pub cycles: Vec<Cycle>,
    pub started: u64,
    pub cancel: RunCanceller,
    /// The main run's prompt, for a correction that cannot resume its session.
    pub main_prompt: Option<String>,
}

/// The output of the `classify` stage.
pub(super) struct Classified {
    pub task_type: TaskType,
    pub model: Option<String>,
}

impl Classified {
    pub fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }
}

/// How the stages before cleanup ended.
pub(super) struct Ending {
    pub stop: StopReason,
    pub error: Option<String>,
    pub baseline: Option<ValidationReport>,
    pub review: ReviewReport,
    pub changed: Vec<ChangedFile>,
    pub summary: Option<String>,
    /// The files the repository map ranked first.
    pub context_files: Vec<String>,
}

impl Ending {
    pub fn new(stop: StopReason) -> Self {
        Self {
            stop,
            error: None,
            baseline: None,
            review: ReviewReport::default(),
            changed: Vec::new(),
            summary: None,
            context_files: Vec::new(),
        }
    }
}

/// A stage that could not go on: the stop reason, the error and what was known so far
/// (`None`: nothing worth keeping).
pub(super) struct Stopped {
    pub stop: StopReason,
    pub error: ForgeError,
    pub partial: Option<Ending>,
}

impl From<ForgeError> for Stopped {
    fn from(error: ForgeError) -> Self {
        let stop = if error == ForgeError::Cancelled {
            StopReason::Cancelled
        } else {
            StopReason::Error
        };
        Self {
            stop,
            error,
            partial: None,
        }
    }
}

/// The validation checks (lint, build, test) of the task's plan and where they log.
pub(super) struct Checks {
    pub runner: StepRunner,
    pub log_dir: PathBuf,
    pub steps: Vec<PlannedStep>,
}

impl Checks {
    /// Runs every check in `dir`, logging to `<log_dir>/<label>-<step>.log`.
    ///
    /// # Errors
    /// See [`StepRunner::run`].
    pub async fn run(
        &self,
        dir: &Path,
        label: &str,
        cancel: &RunCanceller,
    ) -> Result<ValidationReport, ForgeError> {
        let steps: Vec<_> = self.steps.iter().collect();
        self.runner
            .run(dir, &steps, Some(&self.log_dir), label, cancel)
            .await
    }
}

impl<'a> Task<'a> {
    pub fn new(
        pipeline: &'a TaskPipeline,
        req: &'a TaskRequest,
        opened: Workspace,
        started: u64,
        cancel: RunCanceller,
    ) -> Self {
        Self {
            pipeline,
            req,
            provider: opened.provider,
            dir: TaskDir::new(&opened.repo, &opened.task_id),
            task_id: opened.task_id,
            branch: opened.branch,
            base: opened.base,
            worktree: opened.worktree,
            plan: opened.plan,
            warm: opened.warm,
            cycles: Vec::new(),
            started,
            cancel,
            main_prompt: None,
        }
    }
}

impl Task<'_> {
    pub fn files(&self) -> &dyn FileStore {
        self.pipeline.ports.files.as_ref()
    }

    pub fn redactor(&self) -> &forge_domain::Redactor {
        &self.pipeline.ports.redactor
    }

    pub fn cost(&self) -> f64 {
        totals(&self.cycles).0
    }

    pub fn elapsed(&self) -> u64 {
        self.pipeline
            .agent
            .runtime()
            .clock
            .monotonic_ms()
            .saturating_sub(self.started)
    }

    fn checks(&self) -> Checks {
        let mut runner = self.pipeline.step_runner(self.req);
        runner.warm.clone_from(&self.warm);
        Checks {
            runner,
            log_dir: self.dir.validation_dir(),
            steps: self.plan.checks().cloned().collect(),
        }
    }

    /// The `classify` stage: the task's type and the model it runs with.
    pub fn classify(&self, report: &mut Reporter) -> Classified {
        let task_type = rules::classify(&self.req.spec.task, self.req.spec.task_type);
        let model = rules::choose_model(
            task_type,
            self.req.model.as_deref(),
            self.req.fix_model.as_deref(),
        );
        report.stage(Stage::Classify, 0.0, task_type.as_str());
        Classified { task_type, model }
    }

    /// Every stage after the work tree exists, cleanup in every outcome.
    pub async fn run(mut self, report: &mut Reporter) -> TaskOutcome {
        let class = self.classify(report);
        let mut guard: Option<Guard> = None;
        let mut ending = match self.stages(&class, &mut guard, report).await {
            Ok(ending) => ending,
            Err(stopped) => {
                let mut ending = stopped.partial.unwrap_or_else(|| Ending::new(stopped.stop));
                ending.stop = stopped.stop;
                ending.error = Some(stopped.error.to_string());
                ending
            }
        };
        finish::cleanup(&self, guard.as_ref(), &mut ending, report).await;
        finish::finish(&self, class, ending, report).await
    }

    /// The stages from install to the end of the correction loop.
    async fn stages(
        &mut self,
        class: &Classified,
        guard: &mut Option<Guard>,
        report: &mut Reporter,
    ) -> Result<Ending, Stopped> {
        let checks = self.checks();
        install::install(self, &checks.runner, &checks.log_dir, report).await?;
        let gathered = gather::gather(self, &checks, class.task_type, report).await?;
        let mut ending = Ending::new(StopReason::Error);
        ending.baseline = Some(gathered.baseline.clone());
        ending.context_files = gathered
            .map
            .iter()
            .flat_map(|m| m.files.iter().take(super::super::context::REPORT_FILES))
            .cloned()
            .collect();
        let written = instructions::write(self, class.task_type, &gathered, report).await?;
        let file = written.file_name;
        *guard = Some(written.guard);
        let prompt = plan::write(
            self,
            &PlanInputs {
                class,
                context: &gathered.parts,
                instruction_file: file,
            },
            report,
        )
        .await?;
        let session: Option<SessionId> =
            match main_run::main_run(self, prompt, class.model(), file, &mut ending, report).await?
            {
                MainRun::Ended => return Ok(ending),
                MainRun::Changed { session } => session,
            };
        let converge = Converge {
            checks: &checks,
            model: class.model(),
            instruction_file: file,
            session,
        };
        converge::converge(self, converge, ending, report).await
    }
}
