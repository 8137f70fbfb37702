//! [`TaskPipeline`]: a task in, a validated, reviewed, risk-scored change out.
//!
//! The stages, in order: availability of the provider; the work tree (`forge/<task-id>`
//! from the base, under `<repo>/.forgecode/worktrees/`); classification and model; the
//! context in parallel; the guardrail instruction file; `plan.json`; the prompt; the main
//! run; the changed files; validation, and the correction loop resuming the same session;
//! the heuristic review and its correction runs; cleanup (in every outcome); the risk score
//! and the [`TaskOutcome`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use forge_domain::task::{
    AddedLine, ChangeKind, ChangedFile, Cycle, CycleKind, ReviewReport, StopReason, TaskId,
    TaskOutcome, TaskType, ValidationReport, discard_command, totals,
};
use forge_domain::{ExecutionStatus, ForgeError, ProviderId};
use forge_ports::{BuildCache, FileStore, PathChangeKind, Provider, RepoIndexer, Vcs};
use serde::Serialize;
use tokio::sync::mpsc::UnboundedSender;

use super::agent_run::{Enforce, run_agent};
use super::artifacts::{TASKS_DIR, TaskDir};
use super::context::{ContextPart, INDEX_CAP, INDEX_LIMIT};
use super::detect::{PROJECT_FILES, ValidationPlan, plan_validation};
use super::guard_file::{self, Guard};
use super::request::{Stage, TaskProgress, TaskRequest};
use super::rules::{self, InstructionInputs, LoopState, Next};
use super::validate::StepRunner;
use super::warm::{self, Warm, WarmInputs};
use crate::agent::CodeAgent;
use crate::handle::RunCanceller;

/// Default root of task work trees, relative to the repository.
pub const WORKTREES_DIR: &str = ".forgecode/worktrees";

/// The ports the pipeline needs besides those of its [`CodeAgent`].
#[derive(Clone)]
pub struct TaskPorts {
    pub vcs: Arc<dyn Vcs>,
    pub index: Arc<dyn RepoIndexer>,
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

/// What `plan.json` holds.
#[derive(Debug, Serialize)]
struct Plan<'a> {
    task_id: &'a TaskId,
    task: &'a str,
    task_type: TaskType,
    provider: &'a ProviderId,
    model: Option<&'a str>,
    branch: &'a str,
    worktree: String,
    base: &'a str,
    limits: &'a forge_domain::task::TaskLimits,
    validation_source: String,
    validation: Vec<(String, String)>,
    context: &'a [ContextPart],
    instruction_file: String,
    prompt_chars: usize,
}

/// `manifest.json`: what the change touched, and where everything is.
#[derive(Debug, Serialize)]
struct Manifest<'a> {
    task_id: &'a TaskId,
    branch: &'a str,
    worktree: String,
    base: &'a str,
    files: &'a [forge_domain::task::FileChange],
    runs: Vec<String>,
}

impl TaskPipeline {
    pub fn new(agent: CodeAgent, ports: TaskPorts) -> Self {
        Self { agent, ports }
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
        let mut report = Reporter {
            progress,
            clock: clock.clone(),
            started,
        };

        report.stage(Stage::Availability, 0.0, req.provider.as_str());
        let provider = self.agent.provider(&req.provider)?;
        check_available(provider.as_ref(), self, &req).await?;

        report.stage(Stage::Workspace, 0.0, &req.repo);
        let repo = self.repository(&req).await?;
        let task_id = new_task_id(self)?;
        let files = self.ports.files.as_ref();
        guard_file::restore_leftovers(files, &repo.join(TASKS_DIR)).await?;
        let base_name = req.spec.base.clone().unwrap_or_else(|| "HEAD".to_owned());
        let base = self
            .ports
            .vcs
            .resolve_commit(&repo, &base_name)
            .await?
            .ok_or_else(|| ForgeError::InvalidRequest {
                reason: format!(
                    "base ref {base_name:?} does not exist in {}",
                    repo.display()
                ),
            })?;
        let root = match &req.worktree_root {
            Some(r) if r.is_absolute() => r.clone(),
            Some(r) => repo.join(r),
            None => repo.join(WORKTREES_DIR),
        };
        let worktree = root.join(task_id.as_str());
        let branch = task_id.branch();
        // Detection needs the project's files, which the base commit has; the user's
        // checkout may differ, so read them from the new work tree.
        self.ports
            .vcs
            .add_worktree(&repo, &worktree, &branch, &base)
            .await?;
        let prepared = match self.validation_plan(&req, &worktree).await {
            Ok(plan) => self
                .warm(&req, &repo, &worktree, &plan)
                .await
                .map(|w| (plan, w)),
            Err(e) => Err(e),
        };
        let (plan, warm) = match prepared {
            Ok(prepared) => prepared,
            Err(e) => {
                // Nothing ran yet: leave no work tree behind for a task that never started.
                let _ = self.ports.vcs.remove_worktree(&repo, &worktree).await;
                return Err(e);
            }
        };
        let task = Task {
            pipeline: self,
            req: &req,
            provider,
            dir: TaskDir::new(&repo, &task_id),
            task_id,
            branch,
            base,
            worktree,
            plan,
            warm,
            cycles: Vec::new(),
            started,
            cancel,
            main_prompt: None,
        };
        Ok(task.run(&mut report).await)
    }

    async fn repository(&self, req: &TaskRequest) -> Result<PathBuf, ForgeError> {
        if is_url(&req.repo) {
            return self
                .ports
                .vcs
                .clone_or_fetch(&req.repo, &req.cache_dir)
                .await;
        }
        let repo = PathBuf::from(&req.repo);
        if !self.ports.vcs.is_repository(&repo).await? {
            return Err(ForgeError::InvalidRequest {
                reason: format!("{} is not a git repository", repo.display()),
            });
        }
        Ok(repo)
    }

    async fn validation_plan(
        &self,
        req: &TaskRequest,
        worktree: &Path,
    ) -> Result<ValidationPlan, ForgeError> {
        let mut found = BTreeMap::new();
        if !req.validation.any_set() {
            for name in PROJECT_FILES {
                if let Some(bytes) = self.ports.files.read(&worktree.join(name)).await? {
                    found.insert(
                        (*name).to_owned(),
                        String::from_utf8_lossy(&bytes).into_owned(),
                    );
                }
            }
        }
        let plan = plan_validation(&req.validation, &found);
        self.step_runner(req).check_tools(&plan.steps, worktree)?;
        Ok(plan)
    }

    /// Keeps forge's folder out of the checkout's `git status` (`.git/info/exclude`, not
    /// the user's `.gitignore`), then claims the project's build caches.
    async fn warm(
        &self,
        req: &TaskRequest,
        repo: &Path,
        worktree: &Path,
        plan: &ValidationPlan,
    ) -> Result<Option<Arc<Warm>>, ForgeError> {
        let files = self.ports.files.as_ref();
        let exclude = self.ports.vcs.local_exclude_file(repo).await?;
        let existing = files.read(&exclude).await?.unwrap_or_default();
        if let Some(text) = warm::with_exclude_line(&String::from_utf8_lossy(&existing)) {
            files.write(&exclude, text.as_bytes()).await?;
        }
        let Some(cache) = self.ports.build_cache.clone() else {
            return Ok(None);
        };
        if plan.steps.is_empty() {
            return Ok(None);
        }
        let top_level = files
            .list(worktree)
            .await?
            .iter()
            .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect();
        let inputs = WarmInputs {
            runner: self.agent.runtime().runner.as_ref(),
            checkout: repo,
            worktree,
            top_level,
            env: &req.env,
        };
        Ok(Some(Arc::new(warm::prepare(cache, &inputs).await?)))
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

fn is_url(repo: &str) -> bool {
    repo.contains("://") || (repo.starts_with("git@") && repo.contains(':'))
}

/// `task-<run id>`, with any character a task id refuses (a run id may hold dots) made `-`.
fn new_task_id(pipeline: &TaskPipeline) -> Result<TaskId, ForgeError> {
    let run_id = pipeline.agent.runtime().ids.run_id();
    let clean: String = run_id
        .as_str()
        .chars()
        .take(100)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    TaskId::new(format!("task-{clean}")).map_err(|e| ForgeError::InvalidRequest {
        reason: e.to_string(),
    })
}

async fn check_available(
    provider: &dyn Provider,
    pipeline: &TaskPipeline,
    req: &TaskRequest,
) -> Result<(), ForgeError> {
    let detection = provider
        .detect(pipeline.agent.runtime().runner.as_ref(), &req.env)
        .await;
    let hints = detection.hints.join("; ");
    if detection.path.is_none() {
        return Err(ForgeError::ExecutableNotFound {
            program: detection.binary,
            hint: if hints.is_empty() {
                provider.install_hint()
            } else {
                hints
            },
        });
    }
    if detection.version_supported == Some(false) || detection.authenticated == Some(false) {
        return Err(ForgeError::InvalidRequest {
            reason: format!("provider {} is not usable: {hints}", req.provider),
        });
    }
    Ok(())
}

/// Progress reports on the caller's channel.
struct Reporter {
    progress: Option<UnboundedSender<TaskProgress>>,
    clock: Arc<dyn forge_ports::Clock>,
    started: u64,
}

impl Reporter {
    fn stage(&mut self, stage: Stage, cost_usd: f64, detail: &str) {
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
struct Task<'a> {
    pipeline: &'a TaskPipeline,
    req: &'a TaskRequest,
    provider: Arc<dyn Provider>,
    task_id: TaskId,
    branch: String,
    base: String,
    worktree: PathBuf,
    dir: TaskDir,
    plan: ValidationPlan,
    /// The build caches this task holds (released when the task ends).
    warm: Option<Arc<Warm>>,
    cycles: Vec<Cycle>,
    started: u64,
    cancel: RunCanceller,
    /// The main run's prompt, for a correction that cannot resume its session.
    main_prompt: Option<String>,
}

/// How the stages before cleanup ended.
struct Ending {
    stop: StopReason,
    error: Option<String>,
    baseline: Option<ValidationReport>,
    review: ReviewReport,
    changed: Vec<ChangedFile>,
    summary: Option<String>,
}

impl Ending {
    fn new(stop: StopReason) -> Self {
        Self {
            stop,
            error: None,
            baseline: None,
            review: ReviewReport::default(),
            changed: Vec::new(),
            summary: None,
        }
    }
}

impl Task<'_> {
    fn files(&self) -> &dyn FileStore {
        self.pipeline.ports.files.as_ref()
    }

    fn cost(&self) -> f64 {
        totals(&self.cycles).0
    }

    fn elapsed(&self) -> u64 {
        self.pipeline
            .agent
            .runtime()
            .clock
            .monotonic_ms()
            .saturating_sub(self.started)
    }

    async fn run(mut self, report: &mut Reporter) -> TaskOutcome {
        let task_type = rules::classify(&self.req.spec.task, self.req.spec.task_type);
        let model = rules::choose_model(
            task_type,
            self.req.model.as_deref(),
            self.req.fix_model.as_deref(),
        );
        report.stage(Stage::Classify, 0.0, task_type.as_str());
        let mut guard: Option<Guard> = None;
        let mut ending = match self
            .stages(task_type, model.as_deref(), &mut guard, report)
            .await
        {
            Ok(ending) => ending,
            Err((stop, e, partial)) => {
                let mut ending = partial.unwrap_or_else(|| Ending::new(stop));
                ending.stop = stop;
                ending.error = Some(e.to_string());
                ending
            }
        };
        // Cleanup runs in every outcome: the instruction file goes back first.
        report.stage(Stage::Cleanup, self.cost(), "");
        if let Some(guard) = &guard {
            if let Err(e) = guard_file::restore(self.files(), guard).await {
                ending.error.get_or_insert_with(|| e.to_string());
                ending.stop = StopReason::Error;
            }
        }
        report.stage(Stage::Risk, self.cost(), "");
        let outcome = self.outcome(task_type, model, ending);
        let _ = self
            .dir
            .write_json(
                self.files(),
                &self.pipeline.ports.redactor,
                "review.json",
                &outcome.review,
            )
            .await;
        let manifest = Manifest {
            task_id: &self.task_id,
            branch: &self.branch,
            worktree: self.worktree.display().to_string(),
            base: &self.base,
            files: &outcome.files,
            runs: outcome
                .cycles
                .iter()
                .filter_map(|c| c.run_id.as_ref())
                .map(|r| {
                    self.worktree
                        .join(".forgecode/runs")
                        .join(r.as_str())
                        .display()
                        .to_string()
                })
                .collect(),
        };
        let _ = self
            .dir
            .write_json(
                self.files(),
                &self.pipeline.ports.redactor,
                "manifest.json",
                &manifest,
            )
            .await;
        let _ = self
            .dir
            .write_json(
                self.files(),
                &self.pipeline.ports.redactor,
                "report.json",
                &outcome,
            )
            .await;
        report.stage(Stage::Done, outcome.cost_usd, outcome.stop_reason.as_str());
        outcome
    }

    fn outcome(&self, task_type: TaskType, model: Option<String>, ending: Ending) -> TaskOutcome {
        let (cost_usd, usage) = totals(&self.cycles);
        let files: Vec<_> = ending
            .changed
            .iter()
            .map(ChangedFile::to_file_change)
            .collect();
        let last_validation = self.cycles.iter().rev().find_map(|c| c.validation.as_ref());
        let risk = rules::risk(
            &ending.review,
            &files,
            last_validation,
            ending.baseline.as_ref(),
        );
        let worktree = self.worktree.display().to_string();
        TaskOutcome {
            task_id: self.task_id.clone(),
            status: ending.stop.status(),
            stop_reason: ending.stop,
            provider: self.req.provider.clone(),
            task: self.req.spec.task.clone(),
            task_type,
            model,
            branch: self.branch.clone(),
            rollback: discard_command(&worktree, &self.branch),
            worktree,
            cycles: self.cycles.clone(),
            baseline: ending.baseline,
            review: ending.review,
            risk,
            files,
            cost_usd,
            usage,
            duration_ms: self.elapsed(),
            summary: ending.summary,
            error: ending.error,
            delivery: None,
        }
    }

    /// Stages 4–12. An `Err` carries the stop reason, the error and what was known so far.
    async fn stages(
        &mut self,
        task_type: TaskType,
        model: Option<&str>,
        guard: &mut Option<Guard>,
        report: &mut Reporter,
    ) -> Result<Ending, (StopReason, ForgeError, Option<Ending>)> {
        let fail = |e: ForgeError| {
            let stop = if e == ForgeError::Cancelled {
                StopReason::Cancelled
            } else {
                StopReason::Error
            };
            (stop, e, None)
        };
        let mut runner = self.pipeline.step_runner(self.req);
        runner.warm.clone_from(&self.warm);
        let log_dir = self.dir.validation_dir();

        // Install once, before anything else runs in the work tree (a warm cache may
        // stand in for it, or need creating first).
        let installs: Vec<_> = match &self.warm {
            Some(warm) => warm.install_steps(self.plan.install()),
            None => self.plan.install().cloned().into_iter().collect(),
        };
        let skipped = self
            .warm
            .as_ref()
            .and_then(|w| w.skipped_install(self.plan.install()));
        if !installs.is_empty() || skipped.is_some() {
            report.stage(Stage::Context, 0.0, "install");
            let refs: Vec<_> = installs.iter().collect();
            let mut done = runner
                .run(
                    &self.worktree,
                    &refs,
                    Some(&log_dir),
                    "install",
                    &self.cancel,
                )
                .await
                .map_err(fail)?;
            if let Some(step) = skipped {
                done =
                    ValidationReport::from_steps(std::iter::once(step).chain(done.steps).collect());
            }
            if done.passed {
                if let Some(warm) = &self.warm {
                    warm.after_install().await.map_err(fail)?;
                }
            } else {
                let mut ending = Ending::new(StopReason::Error);
                ending.baseline = Some(done);
                return Err((
                    StopReason::Error,
                    ForgeError::io("install step", "the install command failed (see baseline)"),
                    Some(ending),
                ));
            }
        }

        // Stage 4: the context in parallel.
        report.stage(Stage::Context, 0.0, "index, baseline, goal, research");
        let check_steps: Vec<_> = self.plan.checks().cloned().collect();
        let checks: Vec<_> = check_steps.iter().collect();
        let clock = self.pipeline.agent.runtime().clock.clone();
        let index_part = async {
            let t = clock.monotonic_ms();
            if task_type == TaskType::Fix {
                return (None, part("index", 0, 0, Some("omitted for FIX".into())));
            }
            match self
                .pipeline
                .ports
                .index
                .index(&self.worktree, INDEX_LIMIT)
                .await
            {
                Ok(entries) => {
                    let summary = rules::index_summary(&entries, INDEX_CAP);
                    let p = part("index", clock.monotonic_ms() - t, summary.len(), None);
                    (Some(summary), p)
                }
                Err(e) => (
                    None,
                    part("index", clock.monotonic_ms() - t, 0, Some(e.to_string())),
                ),
            }
        };
        let baseline_part = async {
            let t = clock.monotonic_ms();
            let result = runner
                .run(
                    &self.worktree,
                    &checks,
                    Some(&log_dir),
                    "baseline",
                    &self.cancel,
                )
                .await;
            let note = match &result {
                Ok(r) if r.passed => None,
                Ok(_) => Some("already failing before the task".to_owned()),
                Err(e) => Some(e.to_string()),
            };
            let p = part("baseline", clock.monotonic_ms() - t, 0, note);
            (result, p)
        };
        let goal_part = async {
            let goal = &self.req.spec.goal;
            let chars = goal.title.as_deref().map_or(0, str::len)
                + goal.description.as_deref().map_or(0, str::len);
            part("goal", 0, chars, None)
        };
        let research_part = async {
            let chars = self
                .req
                .spec
                .context_files
                .iter()
                .map(|f| f.text.len())
                .sum();
            part("research", 0, chars, None)
        };
        let ((index, index_p), (baseline, baseline_p), goal_p, research_p) =
            tokio::join!(index_part, baseline_part, goal_part, research_part);
        let baseline = baseline.map_err(fail)?;
        let parts = vec![index_p, baseline_p, goal_p, research_p];
        let mut ending = Ending::new(StopReason::Error);
        ending.baseline = Some(baseline.clone());

        // Stage 5: the instruction file.
        report.stage(Stage::Instructions, 0.0, "");
        let name = rules::instruction_file_name(&self.req.provider);
        let path = self.worktree.join(name);
        let commands: Vec<_> = self
            .plan
            .steps
            .iter()
            .map(|s| (s.name, s.command.clone()))
            .collect();
        let inputs = InstructionInputs {
            task_type,
            spec: &self.req.spec,
            file_name: name,
            branch: &self.branch,
            index: index.as_deref(),
            validation: &commands,
            baseline: Some(&baseline),
        };
        let installed = guard_file::install(self.files(), &self.dir.dir, &path, |original| {
            rules::instruction_file(&inputs, original)
        })
        .await
        .map_err(fail)?;
        let written = self
            .files()
            .read(&path)
            .await
            .ok()
            .flatten()
            .unwrap_or_default();
        *guard = Some(installed);
        let _ = self.dir.write(self.files(), name, &written).await;

        // Stages 6 and 7: the plan and the prompt.
        let prompt = rules::task_prompt(task_type, &self.req.spec, name);
        report.stage(Stage::Plan, 0.0, "");
        let plan = Plan {
            task_id: &self.task_id,
            task: &self.req.spec.task,
            task_type,
            provider: &self.req.provider,
            model,
            branch: &self.branch,
            worktree: self.worktree.display().to_string(),
            base: &self.base,
            limits: &self.req.spec.limits,
            validation_source: self.plan.source.describe(),
            validation: self
                .plan
                .steps
                .iter()
                .map(|s| (s.name.to_string(), s.command.clone()))
                .collect(),
            context: &parts,
            instruction_file: name.to_owned(),
            prompt_chars: prompt.len(),
        };
        self.dir
            .write_json(
                self.files(),
                &self.pipeline.ports.redactor,
                "plan.json",
                &plan,
            )
            .await
            .map_err(fail)?;

        // Stage 8: the main run.
        self.main_prompt = Some(prompt.clone());
        let run = self
            .agent_run(CycleKind::Main, prompt, None, model, report)
            .await;
        let main_failed = run.result.status == ExecutionStatus::Error;
        ending.summary = Some(run.result.content.clone()).filter(|s| !s.is_empty());
        let run_error = run.result.errors.first().map(ToString::to_string);
        let stop = run.stop;
        let session = run.cycle.session_id.clone();
        self.cycles.push(run.cycle);
        if let Some(stop) = stop {
            ending.stop = stop;
            ending.changed = self.changed_files(name).await.unwrap_or_default();
            return Ok(ending);
        }

        // Stage 9: the changed files.
        report.stage(Stage::Changes, self.cost(), "");
        ending.changed = self.changed_files(name).await.map_err(fail)?;
        if ending.changed.is_empty() {
            ending.stop = if main_failed {
                StopReason::Error
            } else {
                StopReason::NoChanges
            };
            ending.error = run_error;
            return Ok(ending);
        }

        // Stages 10–12: validation, correction, review.
        let mut session = session;
        let mut review_cycles = 0;
        loop {
            report.stage(
                Stage::Validation,
                self.cost(),
                &format!("cycle {}", self.cycles.len()),
            );
            let label = format!("{}", self.cycles.len());
            let validation = runner
                .run(
                    &self.worktree,
                    &checks,
                    Some(&log_dir),
                    &label,
                    &self.cancel,
                )
                .await
                .map_err(|e| {
                    let f = fail(e);
                    (f.0, f.1, None)
                })?;
            // A step that failed on the untouched tree too is recorded, never blamed.
            let passed = !rules::blamed(&validation, ending.baseline.as_ref());
            if let Some(last) = self.cycles.last_mut() {
                last.validation = Some(validation.clone());
            }
            let mut critical = false;
            if passed {
                report.stage(Stage::Review, self.cost(), "");
                ending.review = self.review(&ending.changed).await.map_err(fail)?;
                critical = ending.review.has_critical();
            }
            let state = LoopState {
                cost_usd: self.cost(),
                elapsed_ms: self.elapsed(),
                cycles: u32::try_from(self.cycles.len()).unwrap_or(u32::MAX),
                review_cycles,
                files_changed: ending.changed.len(),
                validation_passed: passed,
                critical_findings: critical,
                cancelled: self.cancel.is_cancelled(),
            };
            let (kind, prompt) = match rules::next_step(&state, &self.req.spec.limits) {
                Next::Done(stop) | Next::Stop(stop) => {
                    ending.stop = stop;
                    return Ok(ending);
                }
                Next::FixValidation => {
                    report.stage(Stage::Correction, self.cost(), "");
                    (
                        CycleKind::ValidationFix,
                        rules::fix_validation_prompt(&validation, ending.baseline.as_ref()),
                    )
                }
                Next::FixReview => {
                    review_cycles += 1;
                    report.stage(Stage::ReviewFix, self.cost(), "");
                    let critical: Vec<_> = ending.review.critical().collect();
                    (CycleKind::ReviewFix, rules::review_fix_prompt(&critical))
                }
            };
            let run = self
                .agent_run(kind, prompt, session.clone(), model, report)
                .await;
            if run.cycle.session_id.is_some() {
                session = run.cycle.session_id.clone();
            }
            // The latest run's words describe the change as it now is (a commit's summary).
            if !run.result.content.is_empty() {
                ending.summary = Some(run.result.content.clone());
            }
            let stop = run.stop;
            self.cycles.push(run.cycle);
            ending.changed = self.changed_files(name).await.map_err(fail)?;
            if let Some(stop) = stop {
                ending.stop = stop;
                return Ok(ending);
            }
        }
    }

    async fn agent_run(
        &self,
        kind: CycleKind,
        prompt: String,
        session: Option<forge_domain::SessionId>,
        model: Option<&str>,
        report: &mut Reporter,
    ) -> super::agent_run::AgentRun {
        report.stage(Stage::Agent, self.cost(), kind_name(kind));
        let caps = self.provider.capabilities();
        let mut request = self.req.run_template.clone();
        request.provider = self.req.provider.clone();
        request.workdir = self.worktree.clone();
        request.prompt = prompt;
        if let Some(model) = model {
            request.model = Some(model.to_owned());
        }
        let can_resume = caps.resume && session.is_some();
        request.resume_session_id = if can_resume { session } else { None };
        if kind != CycleKind::Main && !can_resume {
            // A fresh session knows nothing of the task: hand it the task first.
            if let Some(main) = &self.main_prompt {
                request.prompt = format!("{main}\n\n{}", request.prompt);
            }
        }
        // The task's deadline bounds each run: never longer than what is left.
        let left = self
            .req
            .spec
            .limits
            .timeout_ms
            .saturating_sub(self.elapsed())
            .max(1);
        request.timeout_ms = Some(request.timeout_ms.map_or(left, |t| t.min(left)));
        let enforce = Enforce {
            budget_usd: request.max_budget_usd.filter(|_| !caps.max_budget),
            max_turns: request.max_turns.filter(|_| !caps.max_turns),
            pricing: self.provider.settings().pricing.clone(),
            model: request
                .model
                .clone()
                .or_else(|| self.provider.settings().model.clone()),
        };
        let fresh = kind != CycleKind::Main && !can_resume;
        run_agent(
            &self.pipeline.agent,
            request,
            kind,
            fresh,
            &enforce,
            &self.cancel,
            |_| {},
        )
        .await
    }

    /// The change so far, without forge's own files (run bundles under `.forgecode/`, the
    /// instruction file, which is restored and never part of the change).
    async fn changed_files(&self, instruction_file: &str) -> Result<Vec<ChangedFile>, ForgeError> {
        let vcs = &self.pipeline.ports.vcs;
        let changes = vcs.changes(&self.worktree).await?;
        let mut added = vcs.added_lines(&self.worktree).await?;
        let mut files = Vec::new();
        for c in changes {
            if c.path.starts_with(".forgecode/") || c.path == instruction_file {
                continue;
            }
            let lines = added
                .iter_mut()
                .find(|a| a.path == c.path)
                .map(|a| std::mem::take(&mut a.lines))
                .unwrap_or_default();
            files.push(ChangedFile {
                path: c.path,
                change: match c.kind {
                    PathChangeKind::Added => ChangeKind::Added,
                    PathChangeKind::Modified => ChangeKind::Modified,
                    PathChangeKind::Deleted => ChangeKind::Deleted,
                },
                size_bytes: c.size,
                added: c.added,
                removed: c.removed,
                added_lines: lines
                    .into_iter()
                    .map(|(line, text)| AddedLine { line, text })
                    .collect(),
            });
        }
        Ok(files)
    }

    async fn review(&self, changed: &[ChangedFile]) -> Result<ReviewReport, ForgeError> {
        Ok(rules::review(changed))
    }
}

fn kind_name(kind: CycleKind) -> &'static str {
    match kind {
        CycleKind::Main => "main",
        CycleKind::ValidationFix => "validation_fix",
        CycleKind::ReviewFix => "review_fix",
    }
}

fn part(name: &'static str, duration_ms: u64, chars: usize, note: Option<String>) -> ContextPart {
    ContextPart {
        name,
        duration_ms,
        chars,
        note,
    }
}
