//! Stages `availability` and `workspace`: the provider is usable, the repository is a git
//! repository (a URL is cloned or fetched into the cache), the base resolves, the task's
//! work tree exists on its own branch and the validation plan is known. Errors here are
//! returned to the caller: nothing was started, nothing needs cleaning up.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use forge_domain::ForgeError;
use forge_domain::delivery::TRAILER;
use forge_domain::task::{TaskId, is_repository_url};
use forge_ports::Provider;

use super::super::artifacts::TASKS_DIR;
use super::super::detect::{PROJECT_FILES, ValidationPlan};
use super::super::guard_file;
use super::super::preview_baseline::plan_in;
use super::super::request::{Stage, TaskRequest};
use super::super::warm::{self, Warm, WarmInputs};
use super::task::Reporter;
use super::{TaskPipeline, WORKTREES_DIR};

/// What the task runs in: the output of the first two stages.
pub(super) struct Workspace {
    pub provider: Arc<dyn Provider>,
    pub repo: PathBuf,
    pub task_id: TaskId,
    /// `forge/<task-id>`.
    pub branch: String,
    /// The base commit (resolved).
    pub base: String,
    pub worktree: PathBuf,
    pub plan: ValidationPlan,
    /// The build caches the task holds (released when the task ends).
    pub warm: Option<Arc<Warm>>,
}

/// Checks the provider, then opens the task's work tree.
///
/// # Errors
/// See [`TaskPipeline::run`].
pub(super) async fn open(
    pipeline: &TaskPipeline,
    req: &TaskRequest,
    report: &mut Reporter,
) -> Result<Workspace, ForgeError> {
    report.stage(Stage::Availability, 0.0, req.provider.as_str());
    let provider = pipeline.agent.provider(&req.provider)?;
    check_available(provider.as_ref(), pipeline, req).await?;

    report.stage(Stage::Workspace, 0.0, &req.repo);
    let repo = repository(pipeline, req).await?;
    let task_id = match &req.task_id {
        Some(id) => id.clone(),
        None => new_task_id(pipeline)?,
    };
    let files = pipeline.ports.files.as_ref();
    guard_file::restore_leftovers(files, &repo.join(TASKS_DIR)).await?;
    let base_name = req.spec.base.clone().unwrap_or_else(|| "HEAD".to_owned());
    let base = pipeline
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
    let worktree = match &req.branch {
        Some(branch) => continued_worktree(pipeline, &root, branch)
            .await
            .unwrap_or_else(|| root.join(task_id.as_str())),
        None => root.join(task_id.as_str()),
    };
    let branch = req.branch.clone().unwrap_or_else(|| task_id.branch());
    if req.branch.is_some() {
        // The continued branch exists (a mirror's copy of the remote's, or the parent's
        // own); the work tree starts it again at `base`, its head.
        let _ = pipeline.ports.vcs.delete_branch(&repo, &branch).await;
    }
    if req.task_id.is_some() {
        clear_earlier_attempt(pipeline, req, &repo, &worktree, &branch, &task_id).await?;
    }
    // Detection needs the project's files, which the base commit has; the user's
    // checkout may differ, so read them from the new work tree.
    pipeline
        .ports
        .vcs
        .add_worktree(&repo, &worktree, &branch, &base)
        .await?;
    let prepared = match validation_plan(pipeline, req, &worktree).await {
        Ok(plan) => warm_caches(pipeline, req, &repo, &worktree, &plan)
            .await
            .map(|w| (plan, w)),
        Err(e) => Err(e),
    };
    let (plan, warm) = match prepared {
        Ok(prepared) => prepared,
        Err(e) => {
            // Nothing ran yet: leave no work tree behind for a task that never started.
            let _ = pipeline.ports.vcs.remove_worktree(&repo, &worktree).await;
            return Err(e);
        }
    };
    Ok(Workspace {
        provider,
        repo,
        task_id,
        branch,
        base,
        worktree,
        plan,
        warm,
    })
}

/// A follow-up runs in its parent's work-tree path when that is free (the parent's tree was
/// removed once delivered): a CLI that keys its sessions by working directory (claude's
/// `~/.claude/projects/<cwd>`, gemini's project hash) finds the parent's session there.
async fn continued_worktree(pipeline: &TaskPipeline, root: &Path, branch: &str) -> Option<PathBuf> {
    let parent = TaskId::new(branch.strip_prefix("forge/")?).ok()?;
    let path = root.join(parent.as_str());
    let taken = pipeline.ports.files.list(root).await.ok()?.contains(&path);
    (!taken).then_some(path)
}

/// A task whose id was given may have run here before (a worker that died, its task
/// taken over): the work tree and branch of that attempt are removed so it starts again
/// from its base. Its caller has made sure that attempt delivered nothing; in a local
/// repository a commit with the task's trailer is refused all the same (it may be the
/// delivered change), while a URL's cache is forge's own (the remote is the truth).
async fn clear_earlier_attempt(
    pipeline: &TaskPipeline,
    req: &TaskRequest,
    repo: &Path,
    worktree: &Path,
    branch: &str,
    task_id: &TaskId,
) -> Result<(), ForgeError> {
    let vcs = &pipeline.ports.vcs;
    if !is_repository_url(&req.repo) {
        let found = vcs
            .commits_with_trailer(repo, TRAILER, task_id.as_str())
            .await?;
        if let Some(commit) = found.first() {
            return Err(ForgeError::InvalidRequest {
                reason: format!(
                    "task {task_id} already has commit {commit} on {branch}: it was delivered \
                     (see `forge-code-agent task show {task_id}`)"
                ),
            });
        }
    }
    if vcs
        .worktrees(repo)
        .await?
        .iter()
        .any(|t| t.path == worktree)
    {
        vcs.remove_worktree(repo, worktree).await?;
    }
    vcs.delete_branch(repo, branch).await?;
    Ok(())
}

/// Keeps forge's folder out of the checkout's `git status` (`.git/info/exclude`, not the
/// user's `.gitignore`), then claims the project's build caches.
async fn warm_caches(
    pipeline: &TaskPipeline,
    req: &TaskRequest,
    repo: &Path,
    worktree: &Path,
    plan: &ValidationPlan,
) -> Result<Option<Arc<Warm>>, ForgeError> {
    let files = pipeline.ports.files.as_ref();
    let exclude = pipeline.ports.vcs.local_exclude_file(repo).await?;
    let existing = files.read(&exclude).await?.unwrap_or_default();
    if let Some(text) = warm::with_exclude_line(&String::from_utf8_lossy(&existing)) {
        files.write(&exclude, text.as_bytes()).await?;
    }
    let Some(cache) = pipeline.ports.build_cache.clone() else {
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
        runner: pipeline.agent.runtime().runner.as_ref(),
        checkout: repo,
        worktree,
        top_level,
        env: &req.env,
    };
    Ok(Some(Arc::new(warm::prepare(cache, &inputs).await?)))
}

/// The provider's CLI is installed, of a supported version and logged in.
///
/// # Errors
/// [`ForgeError::ExecutableNotFound`] with the install hint, or
/// [`ForgeError::InvalidRequest`] with the detection's hints.
pub(super) async fn check_available(
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

async fn repository(pipeline: &TaskPipeline, req: &TaskRequest) -> Result<PathBuf, ForgeError> {
    if is_repository_url(&req.repo) {
        return pipeline
            .ports
            .vcs
            .clone_or_fetch(&req.repo, &req.cache_dir)
            .await;
    }
    let repo = PathBuf::from(&req.repo);
    if !pipeline.ports.vcs.is_repository(&repo).await? {
        return Err(ForgeError::InvalidRequest {
            reason: format!("{} is not a git repository", repo.display()),
        });
    }
    Ok(repo)
}

async fn validation_plan(
    pipeline: &TaskPipeline,
    req: &TaskRequest,
    worktree: &Path,
) -> Result<ValidationPlan, ForgeError> {
    let plan = plan_in(pipeline.ports.files.as_ref(), &req.validation, worktree).await?;
    if plan.steps.is_empty() && req.spec.limits.require_validation {
        return Err(ForgeError::InvalidRequest {
            reason: format!(
                "no validation step: none is configured in [validation] of {} and none \
                 was detected (known projects: {}); a change nothing checks is not delivered \
                 while [task] require_validation is true (the default for queue tasks) — \
                 set [validation] test = \"…\" or [task] require_validation = false",
                if is_repository_url(&req.repo) {
                    "the repository's forge.toml"
                } else {
                    "forge.toml"
                },
                PROJECT_FILES.join(", ")
            ),
        });
    }
    pipeline
        .step_runner(req)
        .check_tools(&plan.steps, worktree)?;
    Ok(plan)
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
