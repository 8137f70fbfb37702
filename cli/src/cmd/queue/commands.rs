//! `task submit | status | cancel` and `task list | show --queue`.

use std::io::Write;

use clap::Args;
use std::sync::Arc;

use forge_domain::delivery::ApprovalId;
use forge_domain::queue::{DEFAULT_MAX_ATTEMPTS, QueuedTask};
use forge_domain::queue_approval::QueueApproval;
use forge_domain::task::TaskId;
use forge_ports::{IdGenerator, TaskQueue};

use forge_app::queue::{ContextFile, TaskOptions};

use super::{QUEUE_ENV, failure, open};
use crate::args::RunPermissionArg;
use crate::cmd::task::TaskBriefArgs;
use crate::exit::{self, Failure};
use crate::output::write_json_pretty;
use crate::prompt::read_prompt;

#[derive(Debug, Args)]
pub struct QueueFlag {
    /// The queue: postgres://USER@HOST/DB, postgresql://… or sqlite://PATH [default: `[queue]
    /// url` of the user config]
    #[arg(long, value_name = "URL", env = QUEUE_ENV)]
    pub queue: Option<String>,
}

impl QueueFlag {
    /// The flag's URL, else `[queue] url`; a usage error when neither is there.
    pub fn url(&self) -> Result<String, Failure> {
        super::queue_url(self.queue.as_deref())?.ok_or_else(|| {
            Failure::Usage(format!(
                "no queue: pass --queue URL, set {QUEUE_ENV}, or put url in [queue] of the user config"
            ))
        })
    }
}

#[derive(Debug, Args)]
pub struct SubmitArgs {
    #[command(flatten)]
    pub queue: QueueFlag,
    /// The repository URL every worker clones or fetches
    #[arg(long, value_name = "URL", required_unless_present = "follow_up")]
    pub repo: Option<String>,
    /// Follow up this queued task: its branch gets a new commit (a fast-forward, on the same
    /// pull request when it has one) by its agent session, resumed on whichever worker
    /// takes it (the session travels through the queue); repository, provider and delivery
    /// are the task's
    #[arg(long, value_name = "TASK_ID", conflicts_with_all = ["repo", "provider", "base"])]
    pub follow_up: Option<String>,
    /// Provider to run the task with [default: the worker's configuration]
    #[arg(long, short = 'p', value_name = "ID")]
    pub provider: Option<String>,
    /// Model to ask the provider for
    #[arg(long, short = 'm')]
    pub model: Option<String>,
    /// Start the task's branch from this ref
    #[arg(long, value_name = "REF")]
    pub base: Option<String>,
    /// Push the task branch after committing
    #[arg(long)]
    pub push: bool,
    /// Deliver as a pull request on the repository's forge (the worker's `task run
    /// --pull-request`)
    #[arg(long)]
    pub pull_request: bool,
    #[command(flatten)]
    pub brief: TaskBriefArgs,
    /// Permission mode of the agent runs [default: bypass; ask: its requests wait in the
    /// queue for anyone with it to answer (`permissions allow --queue`, the board)]
    #[arg(long, value_enum, value_name = "MODE")]
    pub permission_mode: Option<RunPermissionArg>,
    /// How often the task is started before it is declared dead (lost workers) [default:
    /// `[queue] max_attempts`, else 3]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100))]
    pub max_attempts: Option<u32>,
    /// Print {"task_id"} as JSON
    #[arg(long)]
    pub json: bool,
    /// The task; `-` or absent: read it from stdin
    pub task: Option<String>,
}

#[derive(Debug, Args)]
pub struct QueueIdArgs {
    #[command(flatten)]
    pub queue: QueueFlag,
    /// Print JSON
    #[arg(long)]
    pub json: bool,
    /// The task id (`task submit` printed it)
    pub id: String,
}

fn value_name(arg: impl clap::ValueEnum) -> Option<String> {
    arg.to_possible_value().map(|v| v.get_name().to_owned())
}

/// What a submission puts in the queue besides its prompt.
struct Planned {
    repo: String,
    options: TaskOptions,
    max_attempts: u32,
}

/// `task submit`: a new task, or with `--follow-up` a follow-up of a queued one; prints the
/// new task's id.
pub async fn submit(args: SubmitArgs) -> Result<u8, Failure> {
    let (queue, planned, prompt) = match &args.follow_up {
        Some(parent) => {
            let prompt = read_prompt(args.task.as_deref())?;
            let queue = open(&args.queue.url()?).await?;
            let planned = followup(queue.as_ref(), &args, parent).await?;
            (queue, planned, prompt)
        }
        None => {
            let repo = args.repo.clone().unwrap_or_default();
            if repo.trim().is_empty() {
                return Err(Failure::Usage(
                    "--repo: the repository URL is empty".to_owned(),
                ));
            }
            let prompt = read_prompt(args.task.as_deref())?;
            let planned = new_task(&args, repo)?;
            (open(&args.queue.url()?).await?, planned, prompt)
        }
    };
    let run_id = forge_adapter_telemetry::UuidV7Ids::new().run_id();
    let task_id = TaskId::new(format!("q-{run_id}"))
        .map_err(|e| Failure::Other(anyhow::anyhow!("a new task id: {e}")))?;
    let submission = forge_app::queue::submission(
        task_id,
        planned.repo,
        prompt,
        &planned.options,
        Some(planned.max_attempts),
    )
    .map_err(|e| Failure::Usage(e.to_string()))?;
    let task = queue.submit(&submission).await.map_err(failure)?;
    let mut out = std::io::stdout().lock();
    if args.json {
        let _ = write_json_pretty(&mut out, &serde_json::json!({"task_id": task.task_id}));
    } else {
        let _ = writeln!(out, "{}", task.task_id);
    }
    Ok(exit::SUCCESS)
}

/// A new task's options from the flags, its context files read.
fn new_task(args: &SubmitArgs, repo: String) -> Result<Planned, Failure> {
    let mut context_files = Vec::new();
    for path in &args.brief.context_files {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Failure::Usage(format!("--context-file {}: {e}", path.display())))?;
        context_files.push(ContextFile {
            name: path.display().to_string(),
            text,
        });
    }
    let options = TaskOptions {
        provider: args.provider.clone(),
        model: args.model.clone(),
        base: args.base.clone(),
        push: args.push,
        expected: args.brief.expected.clone(),
        task_type: args.brief.task_type.and_then(value_name),
        goal_title: args.brief.goal_title.clone(),
        goal_description: args.brief.goal_description.clone(),
        permission_mode: args.permission_mode.and_then(value_name),
        context_files,
        followup: None,
        closes: None,
        pull_request: args.pull_request,
    };
    let max_attempts = match args.max_attempts {
        Some(n) => n,
        None => super::config::load()?
            .max_attempts
            .unwrap_or(DEFAULT_MAX_ATTEMPTS),
    };
    Ok(Planned {
        repo,
        options,
        max_attempts,
    })
}

/// `task submit --follow-up TASK_ID`: a follow-up of a queued task (issue 39), with the
/// task's repository and options; `--model` and `--permission-mode` may change.
async fn followup(
    queue: &dyn TaskQueue,
    args: &SubmitArgs,
    parent: &str,
) -> Result<Planned, Failure> {
    let id =
        TaskId::new(parent.to_owned()).map_err(|e| Failure::Usage(format!("--follow-up: {e}")))?;
    let task = queue
        .task(&id)
        .await
        .map_err(failure)?
        .ok_or_else(|| Failure::Usage(format!("--follow-up: no task {id} in the queue")))?;
    let (repo, mut options) = forge_app::queue::followup_options(&task)
        .map_err(|e| Failure::Usage(format!("--follow-up: {e}")))?;
    if args.model.is_some() {
        options.model.clone_from(&args.model);
    }
    if let Some(mode) = args.permission_mode.and_then(value_name) {
        options.permission_mode = Some(mode);
    }
    Ok(Planned {
        repo,
        options,
        max_attempts: args.max_attempts.unwrap_or(task.max_attempts),
    })
}

fn parse_id(id: &str) -> Result<TaskId, Failure> {
    TaskId::new(id).map_err(|e| Failure::Usage(format!("task id: {e}")))
}

async fn find(args: &QueueIdArgs) -> Result<(Arc<dyn TaskQueue>, QueuedTask), Failure> {
    let id = parse_id(&args.id)?;
    let queue = open(&args.queue.url()?).await?;
    let task = queue
        .task(&id)
        .await
        .map_err(failure)?
        .ok_or_else(|| Failure::Usage(format!("no task with id {id} in the queue")))?;
    Ok((queue, task))
}

/// The approval the task's held change waits for, if it has one.
async fn approval_of(
    queue: &dyn TaskQueue,
    task: &QueuedTask,
) -> Result<Option<QueueApproval>, Failure> {
    queue
        .approval(&ApprovalId::for_task(&task.task_id))
        .await
        .map_err(failure)
}

/// `value` with the task's `approval` (and its state as a person reads it) when held.
fn with_approval(
    mut value: serde_json::Value,
    approval: Option<&QueueApproval>,
) -> serde_json::Value {
    if let (Some(map), Some(a)) = (value.as_object_mut(), approval) {
        map.insert("approval".to_owned(), forge_app::queue::approval_json(a));
    }
    value
}

fn approval_suffix(approval: Option<&QueueApproval>) -> String {
    approval.map_or_else(String::new, |a| {
        format!("  approval {} {}", a.approval_id, a.status_text())
    })
}

/// The fields `task status` prints (the report is `task show`'s).
fn status_json(task: &QueuedTask) -> serde_json::Value {
    let mut value = serde_json::to_value(task).unwrap_or_default();
    if let Some(map) = value.as_object_mut() {
        map.remove("prompt");
        map.remove("options");
    }
    value
}

fn status_line(task: &QueuedTask) -> String {
    let mut line = format!(
        "{}  {}  attempts {}/{}",
        task.task_id, task.state, task.attempts, task.max_attempts
    );
    if let Some(worker) = &task.worker {
        line.push_str(&format!("  worker {worker}"));
    }
    if task.cancel_requested && !task.state.is_final() {
        line.push_str("  (cancel requested)");
    }
    if let Some(code) = task.exit_code {
        line.push_str(&format!("  exit {code}"));
    }
    if let Some(error) = &task.last_error {
        line.push_str(&format!("  — {error}"));
    }
    line
}

pub async fn status(args: QueueIdArgs) -> Result<u8, Failure> {
    let (queue, task) = find(&args).await?;
    let approval = approval_of(queue.as_ref(), &task).await?;
    let mut out = std::io::stdout().lock();
    if args.json {
        let value = with_approval(status_json(&task), approval.as_ref());
        let _ = write_json_pretty(&mut out, &value);
    } else {
        let suffix = approval_suffix(approval.as_ref());
        let _ = writeln!(out, "{}{suffix}", status_line(&task));
    }
    Ok(exit::SUCCESS)
}

pub async fn show(args: QueueIdArgs) -> Result<u8, Failure> {
    let (queue, task) = find(&args).await?;
    let id = task.task_id.clone();
    let events = queue.events(&id, 0).await.map_err(failure)?;
    let approval = approval_of(queue.as_ref(), &task).await?;
    let mut out = std::io::stdout().lock();
    if args.json {
        let value = serde_json::json!({"task": task, "events": events});
        let _ = write_json_pretty(&mut out, &with_approval(value, approval.as_ref()));
    } else {
        let suffix = approval_suffix(approval.as_ref());
        let _ = writeln!(out, "{}{suffix}", status_line(&task));
        let _ = writeln!(out, "repo: {}\nprompt: {}", task.repo, task.prompt);
        if !events.is_empty() {
            let _ = writeln!(out, "events ({}):", crate::cmd::time::local_zone());
        }
        for event in &events {
            let _ = writeln!(out, "  {}", event_line(event));
        }
        match &task.report {
            Some(report) => {
                let _ = write_json_pretty(&mut out, report);
            }
            None => {
                let _ = writeln!(out, "(no report yet)");
            }
        }
    }
    Ok(exit::SUCCESS)
}

/// `#3  2026-05-01 14:34:56  stage  validation cargo test`: a stored event for a person (a
/// stage by its name and detail, anything else by its data).
fn event_line(event: &forge_domain::queue::QueueEvent) -> String {
    let what = match (event.kind.as_str(), event.data["stage"].as_str()) {
        ("stage", Some(stage)) => {
            let detail = event.data["detail"].as_str().unwrap_or_default();
            format!("{stage} {detail}").trim_end().to_owned()
        }
        _ => event.data.to_string(),
    };
    format!(
        "#{}  {}  {}  {what}",
        event.seq,
        crate::cmd::time::local(event.at_ms),
        event.kind
    )
}

pub async fn cancel(args: QueueIdArgs) -> Result<u8, Failure> {
    let id = parse_id(&args.id)?;
    let task = open(&args.queue.url()?)
        .await?
        .cancel(&id)
        .await
        .map_err(failure)?
        .ok_or_else(|| Failure::Usage(format!("no task with id {id} in the queue")))?;
    let mut out = std::io::stdout().lock();
    if args.json {
        let _ = write_json_pretty(&mut out, &status_json(&task));
    } else {
        let _ = writeln!(out, "{}", status_line(&task));
    }
    Ok(exit::SUCCESS)
}

pub async fn list(queue: &str, json: bool) -> Result<u8, Failure> {
    let tasks = open(queue).await?.tasks(1_000).await.map_err(failure)?;
    let mut out = std::io::stdout().lock();
    if json {
        let listed: Vec<_> = tasks.iter().map(status_json).collect();
        let _ = write_json_pretty(&mut out, &listed);
    } else {
        for task in &tasks {
            let _ = writeln!(out, "{}", status_line(task));
        }
    }
    Ok(exit::SUCCESS)
}
