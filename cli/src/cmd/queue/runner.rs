//! The worker's [`QueuedTaskRunner`]: the guarded pipeline, unchanged, as `forge-code-agent
//! task run --json` in a child process started through the `ProcessRunner` port — its own
//! process group, the kill ladder on a cancel, and the lifeline: a worker killed with -9
//! leaves no `task run` nor agent behind.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use forge_app::queue::{QueuedTaskRunner, RunEnd, TaskEvent};
use forge_domain::permission::{PermissionDecision, PermissionOwner};
use forge_domain::queue::QueuedTask;
use forge_domain::queue_approval::{ApprovalOutcome, QueueApproval};
use forge_ports::{
    Invocation, KillLadder, PermissionRequests, ProcessRunner, SpawnOptions, StdoutItem,
};
use tokio_util::sync::CancellationToken;

use super::options::task_run_args;
use forge_app::queue::TaskOptions;

/// A cancel reaches `task run` as SIGINT (it cancels its agent and cleans its work tree,
/// exit 130), then SIGTERM, then SIGKILL: well within the 2 s a cancel may take.
const STOP_LADDER: KillLadder = KillLadder {
    interrupt_grace: Duration::from_millis(1_200),
    terminate_grace: Duration::from_millis(500),
};

pub struct TaskRunProcess {
    pub runner: Arc<dyn ProcessRunner>,
    /// This binary.
    pub program: PathBuf,
    /// The worker's own directory: each task runs in `<dir>/tasks/<id>/`.
    pub dir: PathBuf,
    /// The queue's URL: `task run` keeps its agent's permission requests there.
    pub queue_url: String,
    /// The queue's permission requests: those of a task whose `task run` ended (or was
    /// killed) are closed as cancelled, none left waiting on a process that is gone.
    pub permissions: Arc<dyn PermissionRequests>,
    /// The queue: a follow-up's parent task (its prompt, for a new session).
    pub queue: Arc<dyn forge_ports::TaskQueue>,
    /// The agent sessions stored with the tasks (issue 39): a follow-up's parent session
    /// read before `task run`, the task's own stored after.
    pub sessions: Arc<dyn forge_ports::SessionArchives>,
}

impl TaskRunProcess {
    fn failed(error: String) -> RunEnd {
        RunEnd {
            error: Some(error),
            ..RunEnd::default()
        }
    }
}

#[async_trait]
impl QueuedTaskRunner for TaskRunProcess {
    async fn run(
        &self,
        task: &QueuedTask,
        stop: CancellationToken,
        events: tokio::sync::mpsc::UnboundedSender<TaskEvent>,
    ) -> RunEnd {
        let options: TaskOptions = match serde_json::from_value(task.options.clone()) {
            Ok(o) => o,
            Err(e) => return Self::failed(format!("the task's options cannot be read: {e}")),
        };
        let cwd = self.dir.join("tasks").join(task.task_id.as_str());
        if let Err(e) = std::fs::create_dir_all(&cwd) {
            return Self::failed(format!("creating {}: {e}", cwd.display()));
        }
        let mut args = match task_run_args(&options, &task.repo, &cwd.join("context")) {
            Ok(a) => a,
            Err(e) => return Self::failed(format!("writing the context files: {e}")),
        };
        args.extend(
            super::travel::args(&options, self.queue.as_ref(), self.sessions.as_ref(), &cwd).await,
        );
        // The queue's id is the pipeline's: branch, trailer and report agree with
        // `task status`, and a task taken over is recognised when already delivered.
        args.extend(["--task-id".into(), task.task_id.to_string()]);
        args.push("--".into());
        args.push(task.prompt.clone());
        let mut invocation = Invocation::new(&self.program, args, &cwd);
        invocation.env.set.insert(
            super::progress::TASK_ID_ENV.into(),
            task.task_id.to_string(),
        );
        invocation
            .env
            .set
            .insert(crate::permissions::QUEUE_ENV.into(), self.queue_url.clone());
        let options = SpawnOptions {
            stderr_log: Some(cwd.join("task-run.stderr.log")),
            ..SpawnOptions::default()
        };
        let mut child = match self.runner.spawn(invocation, options).await {
            Ok(c) => c,
            Err(e) => return Self::failed(format!("starting task run: {e}")),
        };
        let killer = child.killer();
        let mut report = String::new();
        let mut stopping = false;
        loop {
            tokio::select! {
                line = child.next_stdout() => match line {
                    Ok(Some(StdoutItem::Line { text, .. })) => {
                        match super::progress::parse(&text) {
                            Some((kind, data)) => {
                                let kind = kind.to_owned();
                                let _ = events.send(TaskEvent { kind, data });
                            }
                            None => {
                                report.push_str(&text);
                                report.push('\n');
                            }
                        }
                    }
                    Ok(Some(StdoutItem::Oversize { .. })) => {}
                    Ok(None) | Err(_) => break,
                },
                () = stop.cancelled(), if !stopping => {
                    stopping = true;
                    let killer = Arc::clone(&killer);
                    tokio::spawn(async move { killer.shutdown(STOP_LADDER).await });
                }
            }
        }
        let exit = child.wait().await;
        let owner = PermissionOwner::Task(task.task_id.clone());
        if let Err(e) = self
            .permissions
            .close_permissions(&owner, &PermissionDecision::cancelled())
            .await
        {
            tracing::warn!(error = %e, task = %task.task_id, "closing the task's permission requests");
        }
        let exit = match exit {
            Ok(exit) => exit,
            Err(e) => return Self::failed(format!("waiting for task run: {e}")),
        };
        if let Some(event) = super::travel::store(task, self.sessions.as_ref(), &cwd).await {
            let _ = events.send(event);
        }
        let report = serde_json::from_str::<serde_json::Value>(report.trim()).ok();
        let error = match exit.code {
            Some(0 | 10) => None,
            _ if report.is_some() => None,
            code => Some(format!(
                "task run ended with {}: {}",
                code.map_or_else(
                    || format!("signal {}", exit.signal.unwrap_or_default()),
                    |c| format!("exit {c}")
                ),
                exit.stderr_tail.trim().lines().last().unwrap_or_default()
            )),
        };
        RunEnd {
            exit_code: exit.code,
            report,
            error,
        }
    }

    async fn carry_out(&self, approval: &QueueApproval, task: &QueuedTask) -> ApprovalOutcome {
        super::carry_out::carry_out(self.runner.as_ref(), &self.program, approval, task).await
    }
}
