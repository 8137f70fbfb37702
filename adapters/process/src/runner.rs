//! [`TokioProcessRunner`]: the [`ProcessRunner`] that starts every child forge runs.

use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use forge_domain::{EndedOrphan, ForgeError};
use forge_ports::{CapturedOutput, Invocation, ProcessRunner, RunningProcess, SpawnOptions};
use tokio::io::AsyncWriteExt;
use tokio::process::{ChildStdin, Command};
use tokio::sync::{mpsc, watch};

use crate::files::write_prepared;
use crate::group::ProcessGroup;
use crate::lifeline::{ChildSetup, lifeline_pipe};
use crate::locate::{locate_in, not_found, resolve_program};
use crate::log_sink::LogSink;
use crate::orphans::{OWNER_MARKER, RUN_MARKER};
use crate::running::{Parts, TokioRunningProcess};
use crate::stderr::{LiveLines, pump_stderr};
use crate::stdout::{STDOUT_CHANNEL_BATCHES, StdoutStream, pump_stdout};

/// Spawns children on the current tokio runtime. Stateless and cheap to clone.
#[derive(Debug, Clone, Copy, Default)]
pub struct TokioProcessRunner;

impl TokioProcessRunner {
    pub fn new() -> Self {
        Self
    }

    /// [`ProcessRunner::spawn`] with the concrete type, for callers that want it.
    ///
    /// # Errors
    /// As [`ProcessRunner::spawn`].
    pub async fn start(
        &self,
        invocation: Invocation,
        options: SpawnOptions,
    ) -> Result<TokioRunningProcess, ForgeError> {
        let program = resolve_program(&invocation)?;
        write_prepared(&invocation.files).await?;
        let stdout_log = LogSink::create(options.stdout_log.as_deref()).await?;
        let stderr_log = LogSink::create(options.stderr_log.as_deref()).await?;

        let (lifeline_read, lifeline_write) =
            lifeline_pipe().map_err(|err| ForgeError::io("creating the lifeline pipe", err))?;
        let mut command = command_for(&invocation, &program);
        if let Some(run_id) = &options.run_marker {
            // After the invocation's own variables, so nothing can unset or fake them.
            command
                .env(RUN_MARKER, run_id)
                .env(OWNER_MARKER, crate::orphans::own_token());
        }
        let setup = ChildSetup::new(lifeline_read.as_raw_fd());
        // SAFETY: `run_in_child` makes only async-signal-safe calls (see lifeline.rs).
        #[expect(
            unsafe_code,
            reason = "pre_exec is unsafe; the closure is async-signal-safe"
        )]
        unsafe {
            command.pre_exec(move || setup.run_in_child());
        }
        let mut child = command.spawn().map_err(|err| {
            if err.kind() == std::io::ErrorKind::NotFound {
                not_found(&invocation.program, invocation.install_hint.as_deref())
            } else {
                ForgeError::io(format!("spawning {}", program.display()), err)
            }
        })?;
        drop(lifeline_read);

        let pid = child
            .id()
            .ok_or_else(|| ForgeError::io("spawning", "the child has no pid"))?;
        let group = Arc::new(ProcessGroup::new(pid));
        let mut open_stdin = None;
        if let Some(mut stdin) = child.stdin.take() {
            match (invocation.stdin_open, invocation.stdin) {
                (true, payload) => {
                    if let Some(payload) = payload {
                        stdin
                            .write_all(&payload)
                            .await
                            .map_err(|e| ForgeError::io("writing to the child's stdin", e))?;
                    }
                    open_stdin = Some(crate::stdin::StdinPipe::new(stdin));
                }
                (false, Some(payload)) => {
                    tokio::spawn(feed_stdin(stdin, payload));
                }
                (false, None) => {}
            }
        }
        let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
            group.kill();
            return Err(ForgeError::io("spawning", "the child's pipes are missing"));
        };

        let (tx, rx) = mpsc::channel(STDOUT_CHANNEL_BATCHES);
        let stdout_task = tokio::spawn(pump_stdout(
            stdout,
            tx,
            options.max_line_bytes,
            stdout_log,
            options.redactor.clone(),
        ));
        let (stderr_lines_tx, stderr_lines) = mpsc::unbounded_channel();
        let stderr_task = tokio::spawn(pump_stderr(
            stderr,
            stderr_log,
            options.redactor,
            options.stderr_tail_bytes,
            LiveLines::new(stderr_lines_tx),
        ));
        let (exit_tx, exit_rx) = watch::channel(None);
        tokio::spawn(async move {
            let status = child.wait().await.map_err(|err| err.to_string());
            let _ = exit_tx.send(Some(status));
        });

        Ok(TokioRunningProcess::new(Parts {
            pid,
            stdout: StdoutStream::new(
                rx,
                exit_rx.clone(),
                Arc::clone(&group),
                options.drain_after_exit,
            ),
            group,
            exit: exit_rx,
            stdout_task,
            stderr_task,
            stderr_lines,
            lifeline: lifeline_write,
            drain_after_exit: options.drain_after_exit,
            run_marker: options.run_marker,
            stdin: open_stdin,
        }))
    }
}

#[async_trait]
impl ProcessRunner for TokioProcessRunner {
    async fn spawn(
        &self,
        invocation: Invocation,
        options: SpawnOptions,
    ) -> Result<Box<dyn RunningProcess>, ForgeError> {
        Ok(Box::new(self.start(invocation, options).await?))
    }

    async fn output(
        &self,
        invocation: Invocation,
        timeout: Duration,
    ) -> Result<CapturedOutput, ForgeError> {
        crate::output::run_to_completion(self, invocation, timeout, |_| false).await
    }

    async fn output_until(
        &self,
        invocation: Invocation,
        timeout: Duration,
        enough: &(dyn for<'a> Fn(&'a str) -> bool + Send + Sync),
    ) -> Result<CapturedOutput, ForgeError> {
        crate::output::run_to_completion(self, invocation, timeout, |line| enough(line)).await
    }

    fn locate(&self, program: &Path) -> Option<PathBuf> {
        locate_in(program, None)
    }

    async fn end_orphans_of_finished_runs(&self) -> Vec<EndedOrphan> {
        crate::orphans::end_orphans_of_finished_runs().await
    }
}

/// The command for `invocation`, with `program` already resolved to a path.
fn command_for(invocation: &Invocation, program: &Path) -> Command {
    let mut command = Command::new(program);
    command.args(&invocation.args).current_dir(&invocation.cwd);
    if !invocation.env.inherit {
        command.env_clear();
    }
    for name in &invocation.env.remove {
        command.env_remove(name);
    }
    command.envs(&invocation.env.set);
    let stdin = if invocation.stdin.is_some() || invocation.stdin_open {
        Stdio::piped()
    } else {
        Stdio::null()
    };
    command
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// Writes the payload and closes stdin, so the child sees end-of-file. A child that exits
/// without reading it is not an error.
async fn feed_stdin(mut stdin: ChildStdin, payload: Vec<u8>) {
    let _ = stdin.write_all(&payload).await;
    let _ = stdin.shutdown().await;
}
