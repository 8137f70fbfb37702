//! What a caller hands the task pipeline, and the progress it reports back.

use std::path::PathBuf;

use forge_domain::task::{TaskId, TaskSpec};
use forge_domain::{ExecutionRequest, ProviderId};
use forge_ports::EnvSnapshot;

use crate::config::ValidationConfig;

/// One task: the spec (text, type, limits, context) plus where and with what to run it.
#[derive(Debug, Clone)]
pub struct TaskRequest {
    /// The task's id when the caller has one (a queued task keeps the queue's id, so its
    /// branch, trailer and report agree with `task status`); `None`: a new one.
    pub task_id: Option<TaskId>,
    pub spec: TaskSpec,
    /// A local repository path (absolute), or a remote URL cloned into `cache_dir`.
    pub repo: String,
    pub provider: ProviderId,
    /// Knobs of every agent run (permission mode, env, tools, per-run budget, max turns,
    /// timeout); prompt, workdir, model and resume are set by the pipeline — except the
    /// main run of a follow-up, which resumes the template's `resume_session_id` (the
    /// parent task's session).
    pub run_template: ExecutionRequest,
    /// The branch the task continues instead of its own `forge/<id>`: a follow-up's parent's
    /// (issue 39), so its commit is a fast-forward of the pull request's head.
    pub branch: Option<String>,
    /// The provider's model and `fix_model` (FIX tasks use the latter).
    pub model: Option<String>,
    pub fix_model: Option<String>,
    pub validation: ValidationConfig,
    /// Where task work trees go; relative to the repository. Default
    /// `.forgecode/worktrees`.
    pub worktree_root: Option<PathBuf>,
    /// Where remote repositories are cached.
    pub cache_dir: PathBuf,
    /// The environment the provider's availability check sees.
    pub env: EnvSnapshot,
    /// The agent session's travel (issue 39): the parent's session to import before a
    /// follow-up's main run, and where to keep this task's session for its follow-ups.
    pub session_travel: SessionTravelPlan,
}

/// What a task does with agent sessions that travel between machines (issue 39).
#[derive(Debug, Clone, Default)]
pub struct SessionTravelPlan {
    /// A follow-up's parent session: its archive to import into this machine's CLI home
    /// for the work tree, or why there is none (the session then cannot be resumed here).
    /// `None`: nothing to import (a session resumed is looked for where it ran).
    pub import: Option<Result<forge_domain::session_archive::SessionArchive, String>>,
    /// The parent's task, given to a new session when the parent's cannot be resumed.
    pub parent_task: Option<String>,
    /// Where to write this task's last agent session as an archive, after its runs.
    pub export_to: Option<PathBuf>,
}

/// The pipeline's stages, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    Availability,
    Workspace,
    Classify,
    Context,
    Instructions,
    Plan,
    Agent,
    Changes,
    Validation,
    Correction,
    Review,
    ReviewFix,
    Cleanup,
    Risk,
    Done,
}

impl Stage {
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Availability => "availability",
            Stage::Workspace => "workspace",
            Stage::Classify => "classify",
            Stage::Context => "context",
            Stage::Instructions => "instructions",
            Stage::Plan => "plan",
            Stage::Agent => "agent",
            Stage::Changes => "changes",
            Stage::Validation => "validation",
            Stage::Correction => "correction",
            Stage::Review => "review",
            Stage::ReviewFix => "review-fix",
            Stage::Cleanup => "cleanup",
            Stage::Risk => "risk",
            Stage::Done => "done",
        }
    }
}

/// One progress report: a stage began (or ended, for `Done`), with the time and money so far.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskProgress {
    pub stage: Stage,
    pub elapsed_ms: u64,
    pub cost_usd: f64,
    pub detail: String,
}
