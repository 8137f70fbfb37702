//! `task`: the guarded task pipeline. `run` takes a task to a validated, reviewed,
//! risk-scored change in its own work tree; `gc` cleans up after crashed tasks. The
//! delivery commands (list, show, rollback, approvals) join this enum.

mod context;
pub(crate) mod execute;
mod gc;
mod records;
pub(crate) mod render;
pub(crate) mod run;
pub(crate) mod url_repo;

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};
use forge_domain::task::TaskType;

use crate::args::{ConfigFlags, RunPermissionArg};
use crate::exit::Failure;

pub(crate) const TASK_EXIT_CODES: &str = "\
Exit codes:
  0    validated: the change passed validation (and review)
  1    failed: no changes, the agent or a validation command failed, or the correction
       cycles ran out (max_cycles)
  2    usage or configuration error (not a git repository, unknown base ref, provider or
       validation tool missing)
  5    stopped by a limit: cost_ceiling, run_budget or max_turns
  10   held for approval: the change's risk is at or above the threshold
       (`forge-code-agent approvals approve|reject <id>`)
  124  the task's timeout
  130  cancelled (Ctrl-C)";

#[derive(Debug, Subcommand)]
pub enum TaskCmd {
    /// Run a task in its own work tree: agent, validation, correction, review, risk
    #[command(after_help = TASK_EXIT_CODES)]
    Run(Box<TaskRunArgs>),
    /// Show the context an agent would get for a task (the repository map ranked by the
    /// task, goal, research notes) without running one or changing the repository
    Context(Box<TaskContextArgs>),
    /// Restore instruction files and remove task work trees left behind
    Gc(TaskGcArgs),
    /// List the tasks in the delivery store, newest first
    List(TaskListArgs),
    /// Show a task's report (its delivery included) and audit log
    Show(TaskIdArgs),
    /// Undo a task's delivery: revert its commit when merged, else remove its branch
    Rollback(TaskIdArgs),
    /// Put a task in the queue for any worker to run (prints its id)
    Submit(Box<crate::cmd::queue::commands::SubmitArgs>),
    /// A queued task's state, attempts and worker
    Status(crate::cmd::queue::commands::QueueIdArgs),
    /// Cancel a queued or running task, on whichever worker runs it
    Cancel(crate::cmd::queue::commands::QueueIdArgs),
}

#[derive(Debug, Args)]
pub struct TaskListArgs {
    #[command(flatten)]
    pub common: crate::cmd::approvals::RepoArgs,
    /// List the queue's tasks instead of the repository's store
    #[arg(long, value_name = "URL")]
    pub queue: Option<String>,
}

#[derive(Debug, Args)]
pub struct TaskIdArgs {
    #[command(flatten)]
    pub common: crate::cmd::approvals::RepoArgs,
    /// Read the task from the queue instead of the repository's store (show only)
    #[arg(long, value_name = "URL")]
    pub queue: Option<String>,
    /// The task id (`task list` shows them)
    pub id: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TaskTypeArg {
    Implement,
    Fix,
    Create,
    Refactor,
}

impl From<TaskTypeArg> for TaskType {
    fn from(t: TaskTypeArg) -> Self {
        match t {
            TaskTypeArg::Implement => TaskType::Implement,
            TaskTypeArg::Fix => TaskType::Fix,
            TaskTypeArg::Create => TaskType::Create,
            TaskTypeArg::Refactor => TaskType::Refactor,
        }
    }
}

/// What a task is about, beside its text: `task run`, `task context` and `task submit` take
/// the same (flattened into each).
#[derive(Debug, Args)]
pub struct TaskBriefArgs {
    /// What the result should be
    #[arg(long, value_name = "TEXT")]
    pub expected: Option<String>,
    /// The task type [default: classified from the task text]
    #[arg(long = "type", value_enum, value_name = "TYPE")]
    pub task_type: Option<TaskTypeArg>,
    /// Title of the goal the task serves
    #[arg(long, value_name = "TEXT")]
    pub goal_title: Option<String>,
    /// Description of the goal the task serves
    #[arg(long, value_name = "TEXT")]
    pub goal_description: Option<String>,
    /// Research notes handed to the agent (repeatable)
    #[arg(long = "context-file", value_name = "FILE")]
    pub context_files: Vec<PathBuf>,
}

impl TaskBriefArgs {
    /// The task's spec: `task_text` with this brief (the context files read).
    ///
    /// # Errors
    /// A usage error naming a context file that cannot be read.
    pub fn spec(self, task_text: String) -> Result<forge_domain::task::TaskSpec, Failure> {
        let mut spec = forge_domain::task::TaskSpec::new(task_text);
        spec.expected = self.expected;
        spec.task_type = self.task_type.map(Into::into);
        spec.goal = forge_domain::task::Goal {
            title: self.goal_title,
            description: self.goal_description,
        };
        for path in &self.context_files {
            let text = std::fs::read_to_string(path)
                .map_err(|e| Failure::Usage(format!("--context-file {}: {e}", path.display())))?;
            spec.context_files.push(forge_domain::task::ContextFile {
                name: path.display().to_string(),
                text,
            });
        }
        Ok(spec)
    }
}

#[derive(Debug, Args)]
pub struct TaskRunArgs {
    #[command(flatten)]
    pub config: ConfigFlags,
    /// The repository: a local path or a URL (cloned into a cache, fetched on later runs)
    #[arg(long, value_name = "PATH|URL", default_value = ".")]
    pub repo: String,
    #[command(flatten)]
    pub brief: TaskBriefArgs,
    /// Start the task's branch from this ref [default: HEAD]
    #[arg(long, value_name = "REF")]
    pub base: Option<String>,
    /// Permission mode of the agent runs [default: `[task] permission_mode`, else bypass —
    /// the work tree is the sandbox; ask: a person answers each request, docs/permissions.md]
    #[arg(long, value_enum, value_name = "MODE")]
    pub permission_mode: Option<RunPermissionArg>,
    /// Print the report as one JSON object
    #[arg(long)]
    pub json: bool,
    /// Push the task branch after committing (overrides [delivery] push)
    #[arg(long)]
    pub push: bool,
    /// Deliver as a pull request on the repository's forge: push the branch and open one
    /// with the report, a draft while held (overrides [delivery] pull_request)
    #[arg(long)]
    pub pull_request: bool,
    /// Leave the change in its work tree: no store row, no commit, no approval
    #[arg(long)]
    pub no_deliver: bool,
    /// Fail the task before its agent runs when it has no validation step (none in
    /// [validation], none detected) [default: the repository's `[task] require_validation`,
    /// else true under a queue worker, false here]
    #[arg(long)]
    pub require_validation: bool,
    /// Run under this task id instead of a new one (a queue worker passes the queued
    /// task's, so a task taken over after a lost worker is recognised when delivered)
    #[arg(long, value_name = "ID", hide = true)]
    pub task_id: Option<String>,
    /// A follow-up (issue 39): continue this branch (the parent's `forge/<id>`, also the
    /// base) instead of a new one, so the commit is a fast-forward of its pull request
    #[arg(long, value_name = "BRANCH", hide = true)]
    pub continue_branch: Option<String>,
    /// A follow-up: the main run resumes this agent session (the parent task's)
    #[arg(long, value_name = "SESSION", hide = true)]
    pub resume_session: Option<String>,
    /// A follow-up on another machine (issue 39): the parent's session archive (JSON, from
    /// the queue's store), imported into this machine's CLI home before the main run
    #[arg(long, value_name = "FILE", hide = true, requires = "resume_session")]
    pub import_session: Option<PathBuf>,
    /// A follow-up whose parent session cannot be brought here: why (the report says it, and
    /// a new session is given the conversation)
    #[arg(
        long,
        value_name = "REASON",
        hide = true,
        requires = "resume_session",
        conflicts_with = "import_session"
    )]
    pub session_unavailable: Option<String>,
    /// The parent's task (a file), given to a new session when the parent's cannot resume
    #[arg(long, value_name = "FILE", hide = true)]
    pub parent_task_file: Option<PathBuf>,
    /// After the task's runs, write its last agent session as an archive (JSON) here, for
    /// its follow-ups on any machine
    #[arg(long, value_name = "FILE", hide = true)]
    pub export_session: Option<PathBuf>,
    /// A follow-up: answer in the thread of this review comment once pushed (else on the
    /// pull request)
    #[arg(long, value_name = "COMMENT", hide = true)]
    pub reply_to: Option<u64>,
    /// GitLab's discussion id of `--reply-to`
    #[arg(long, value_name = "THREAD", hide = true)]
    pub reply_thread: Option<String>,
    /// Answer on the pull request once pushed (a follow-up without a thread)
    #[arg(long, hide = true)]
    pub reply: bool,
    /// The pull request closes this issue (`Closes #N`): a task queued from an issue
    #[arg(long, value_name = "N")]
    pub closes: Option<u64>,
    /// The task; `-` or absent: read it from stdin
    pub task: Option<String>,
}

#[derive(Debug, Args)]
pub struct TaskContextArgs {
    /// The repository (a local path)
    #[arg(long, value_name = "PATH", default_value = ".")]
    pub repo: PathBuf,
    /// Map the repository at this ref (in a scratch work tree, removed afterwards)
    /// [default: the work tree as it is]
    #[arg(long, value_name = "REF")]
    pub base: Option<String>,
    /// Also run the validation commands at the base (HEAD without --base) in a scratch work
    /// tree, removed afterwards, and show which steps and tests already fail
    #[arg(long)]
    pub baseline: bool,
    /// Print the context as one JSON object (`map` exactly as the instruction file holds it)
    #[arg(long)]
    pub json: bool,
    // The brief of `task run` (its `--expected` is ranked with the task here).
    #[command(flatten)]
    pub brief: TaskBriefArgs,
    /// The task; `-` or absent: read it from stdin
    pub task: Option<String>,
}

#[derive(Debug, Args)]
pub struct TaskGcArgs {
    /// The repository to clean
    #[arg(long, value_name = "PATH", default_value = ".")]
    pub repo: PathBuf,
    /// Only restore instruction files; leave the work trees
    #[arg(long)]
    pub keep_worktrees: bool,
    /// Print what was done as JSON
    #[arg(long)]
    pub json: bool,
}

pub async fn run(cmd: TaskCmd) -> Result<u8, Failure> {
    match cmd {
        TaskCmd::Run(args) => run::run(*args).await,
        TaskCmd::Context(args) => context::run(*args).await,
        TaskCmd::Gc(args) => gc::run(args).await,
        TaskCmd::List(args) => match &args.queue {
            Some(url) => crate::cmd::queue::commands::list(url, args.common.json).await,
            None => records::list(args).await,
        },
        TaskCmd::Show(args) => match args.queue {
            Some(queue) => {
                crate::cmd::queue::commands::show(crate::cmd::queue::commands::QueueIdArgs {
                    queue: crate::cmd::queue::commands::QueueFlag { queue: Some(queue) },
                    json: args.common.json,
                    id: args.id,
                })
                .await
            }
            None => records::show(args).await,
        },
        TaskCmd::Rollback(args) => {
            if args.queue.is_some() {
                return Err(Failure::Usage(
                    "task rollback --queue: rollback works on a repository's store; run it in the repository".to_owned(),
                ));
            }
            records::rollback(args).await
        }
        TaskCmd::Submit(args) => crate::cmd::queue::commands::submit(*args).await,
        TaskCmd::Status(args) => crate::cmd::queue::commands::status(args).await,
        TaskCmd::Cancel(args) => crate::cmd::queue::commands::cancel(args).await,
    }
}
