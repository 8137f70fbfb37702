//! A running child: its stdout stream, its exit, and the clean-up that follows it.

use std::os::fd::OwnedFd;
use std::os::unix::process::ExitStatusExt;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use forge_domain::{EndedOrphan, ForgeError};
use forge_ports::{ProcessExit, ProcessKiller, RunningProcess, StdoutItem};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use crate::group::{ExitSlot, GroupKiller, ProcessGroup};
use crate::stderr::StderrSummary;
use crate::stdout::StdoutStream;

/// How long `wait` gives the readers to finish their logs once the group is dead.
const READER_FLUSH_GRACE: Duration = Duration::from_secs(2);

/// The [`RunningProcess`] of [`crate::TokioProcessRunner`]. Dropping it SIGKILLs the group.
pub struct TokioRunningProcess {
    pid: u32,
    group: Arc<ProcessGroup>,
    killer: Arc<GroupKiller>,
    exit: watch::Receiver<ExitSlot>,
    stdout: StdoutStream,
    stdout_task: Option<JoinHandle<()>>,
    stderr_task: Option<JoinHandle<StderrSummary>>,
    stderr_lines: Option<mpsc::UnboundedReceiver<String>>,
    /// forge's end of the lifeline: closing it makes the watchdog kill the group.
    lifeline: Option<OwnedFd>,
    drain_after_exit: Duration,
    finished: Option<ProcessExit>,
    /// The run whose marker the children carry; `None`: not marked, nothing to look for.
    run_marker: Option<String>,
    /// Marked descendants outside the group, ended by `wait`.
    orphans: Vec<EndedOrphan>,
    /// The open stdin of a conversation, until taken.
    stdin: Option<crate::stdin::StdinPipe>,
}

/// The parts [`crate::TokioProcessRunner::spawn`] assembles.
pub(crate) struct Parts {
    pub pid: u32,
    pub group: Arc<ProcessGroup>,
    pub exit: watch::Receiver<ExitSlot>,
    pub stdout: StdoutStream,
    pub stdout_task: JoinHandle<()>,
    pub stderr_task: JoinHandle<StderrSummary>,
    pub stderr_lines: mpsc::UnboundedReceiver<String>,
    pub lifeline: OwnedFd,
    pub drain_after_exit: Duration,
    pub run_marker: Option<String>,
    pub stdin: Option<crate::stdin::StdinPipe>,
}

impl TokioRunningProcess {
    pub(crate) fn new(parts: Parts) -> Self {
        let killer = Arc::new(GroupKiller::new(
            Arc::clone(&parts.group),
            parts.exit.clone(),
        ));
        Self {
            pid: parts.pid,
            group: parts.group,
            killer,
            exit: parts.exit,
            stdout: parts.stdout,
            stdout_task: Some(parts.stdout_task),
            stderr_task: Some(parts.stderr_task),
            stderr_lines: Some(parts.stderr_lines),
            lifeline: Some(parts.lifeline),
            drain_after_exit: parts.drain_after_exit,
            finished: None,
            run_marker: parts.run_marker,
            stdin: parts.stdin,
            orphans: Vec::new(),
        }
    }

    /// Waits for stderr's end-of-file, killing the group when a grandchild holds it past
    /// the drain window.
    async fn drain_stderr(&mut self) -> StderrSummary {
        let Some(mut task) = self.stderr_task.take() else {
            return StderrSummary::default();
        };
        if let Ok(summary) = tokio::time::timeout(self.drain_after_exit, &mut task).await {
            return summary.unwrap_or_default();
        }
        self.group.kill();
        match tokio::time::timeout(READER_FLUSH_GRACE, &mut task).await {
            Ok(summary) => summary.unwrap_or_default(),
            Err(_) => {
                task.abort();
                StderrSummary::default()
            }
        }
    }
}

#[async_trait]
impl RunningProcess for TokioRunningProcess {
    fn pid(&self) -> Option<u32> {
        Some(self.pid)
    }

    async fn next_stdout(&mut self) -> Result<Option<StdoutItem>, ForgeError> {
        self.stdout.next().await
    }

    fn killer(&self) -> Arc<dyn ProcessKiller> {
        Arc::clone(&self.killer) as Arc<dyn ProcessKiller>
    }

    fn take_stderr_lines(&mut self) -> Option<Box<dyn forge_ports::StderrLines>> {
        self.stderr_lines.take().map(|rx| {
            Box::new(crate::stderr::LineReceiver(rx)) as Box<dyn forge_ports::StderrLines>
        })
    }

    fn take_stdin(&mut self) -> Option<Box<dyn forge_ports::StdinWriter>> {
        self.stdin
            .take()
            .map(|pipe| Box::new(pipe) as Box<dyn forge_ports::StdinWriter>)
    }

    fn ended_orphans(&self) -> Vec<EndedOrphan> {
        self.orphans.clone()
    }

    async fn wait(&mut self) -> Result<ProcessExit, ForgeError> {
        if let Some(done) = &self.finished {
            return Ok(done.clone());
        }
        let slot = self
            .exit
            .wait_for(Option::is_some)
            .await
            .map_err(|err| ForgeError::io("waiting for the child", err))?
            .clone();
        let status = match slot {
            Some(Ok(status)) => status,
            Some(Err(message)) => return Err(ForgeError::io("waiting for the child", message)),
            None => return Err(ForgeError::io("waiting for the child", "no exit status")),
        };
        let stderr = self.drain_stderr().await;

        // Whatever is left of the group goes now; then the watchdog may go too.
        self.group.kill_and_release();
        self.lifeline.take();
        // The group is gone; what still carries the run's marker left it on purpose.
        if let Some(run_id) = &self.run_marker {
            self.orphans = crate::orphans::end_orphans_of_run(run_id).await;
        }
        if self.stdout.is_finished() {
            // The stream ended, so the reader is only flushing its log: let it finish.
            // Otherwise the log completes once the stream is drained or dropped.
            if let Some(mut task) = self.stdout_task.take() {
                let _ = tokio::time::timeout(READER_FLUSH_GRACE, &mut task).await;
            }
        }

        let exit = ProcessExit {
            code: status.code(),
            signal: status.signal(),
            stderr_tail: stderr.tail,
            stderr_bytes: stderr.bytes,
        };
        self.finished = Some(exit.clone());
        Ok(exit)
    }
}

impl Drop for TokioRunningProcess {
    fn drop(&mut self) {
        // Kill-on-drop: the whole group, then the lifeline (the watchdog would do the same).
        self.group.kill_and_release();
        self.lifeline.take();
    }
}
