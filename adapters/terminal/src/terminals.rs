//! [`Terminals`]: the commands one run starts for its agent, each in its own process group
//! through the [`ProcessRunner`] port, read into a [`CappedOutput`] by a task of its own (so
//! a command that writes a lot never blocks on a full pipe), and ended with the run's kill
//! ladder when the agent kills or releases it, and when the run ends.

use std::collections::HashMap;
use std::future::Future;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use forge_domain::ForgeError;
use forge_ports::{
    Invocation, KillLadder, ProcessExit, ProcessKiller, ProcessRunner, RunningProcess,
    SessionServices, SpawnOptions, StderrLines, StdoutItem, Workspace,
};
use tokio::sync::watch;

use crate::output::CappedOutput;

/// The output kept when the agent names no limit: the newest MiB (`truncated` says so).
pub const DEFAULT_OUTPUT_LIMIT: usize = 1024 * 1024;

/// A command the agent asks to run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Command {
    pub program: String,
    pub args: Vec<String>,
    /// Set on top of forge's own environment.
    pub env: Vec<(String, String)>,
    /// Inside the workspace (relative to its root, or absolute); `None`: the root.
    pub cwd: Option<PathBuf>,
    /// The newest bytes of output kept; `None`: [`DEFAULT_OUTPUT_LIMIT`].
    pub output_limit: Option<u64>,
}

impl Command {
    /// The command line as a person would type it (for the record of the run).
    pub fn line(&self) -> String {
        std::iter::once(&self.program)
            .chain(&self.args)
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// How a command ended: its code, or the signal that ended it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Exit {
    pub code: Option<i32>,
    pub signal: Option<i32>,
}

impl Exit {
    /// The signal's name (`SIGTERM`), or `signal N` for one without a common name.
    pub fn signal_name(&self) -> Option<String> {
        self.signal.map(|s| match s {
            1 => "SIGHUP".to_owned(),
            2 => "SIGINT".to_owned(),
            9 => "SIGKILL".to_owned(),
            15 => "SIGTERM".to_owned(),
            n => format!("signal {n}"),
        })
    }
}

/// A command's output so far, and its end once it has one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    pub output: String,
    pub truncated: bool,
    pub exit: Option<Exit>,
}

struct Terminal {
    command: Command,
    killer: Arc<dyn ProcessKiller>,
    output: Arc<Mutex<CappedOutput>>,
    exit: watch::Receiver<Option<Exit>>,
}

impl Terminal {
    fn snapshot(&self) -> Snapshot {
        let output = self.output.lock().unwrap_or_else(PoisonError::into_inner);
        Snapshot {
            output: output.text().to_owned(),
            truncated: output.truncated(),
            exit: *self.exit.borrow(),
        }
    }

    /// Its end, once it has one (an unknown end when its reader is gone without one).
    fn exited(&self) -> impl Future<Output = Exit> + Send + 'static {
        let mut exit = self.exit.clone();
        async move {
            match exit.wait_for(Option::is_some).await {
                Ok(exit) => exit.unwrap_or_default(),
                Err(_) => Exit::default(),
            }
        }
    }
}

pub struct Terminals {
    runner: Arc<dyn ProcessRunner>,
    workspace: Arc<dyn Workspace>,
    root: PathBuf,
    ladder: KillLadder,
    next_id: u64,
    open: HashMap<String, Terminal>,
    /// Released commands still to be ended with the run (a release walks the ladder
    /// without waiting for it).
    released: Vec<Arc<dyn ProcessKiller>>,
}

impl Terminals {
    pub fn new(services: &SessionServices) -> Self {
        Self {
            runner: Arc::clone(&services.runner),
            workspace: Arc::clone(&services.workspace),
            root: services.workdir.clone(),
            ladder: services.ladder,
            next_id: 0,
            open: HashMap::new(),
            released: Vec::new(),
        }
    }

    /// Starts `command` and returns its terminal id.
    ///
    /// # Errors
    /// [`ForgeError::WorkspaceSecurity`] when its directory is outside the workspace;
    /// the runner's errors when it cannot be started
    /// ([`ForgeError::ExecutableNotFound`], [`ForgeError::Io`]).
    pub async fn create(&mut self, command: Command) -> Result<String, ForgeError> {
        let cwd = match &command.cwd {
            Some(cwd) => self.workspace.resolve(&self.root, cwd).await?,
            None => self.root.clone(),
        };
        let limit = command.output_limit.map_or(DEFAULT_OUTPUT_LIMIT, |l| {
            usize::try_from(l).unwrap_or(usize::MAX)
        });
        let mut invocation = Invocation::new(&command.program, command.args.clone(), cwd);
        invocation.env.set.extend(command.env.iter().cloned());
        // The agent's command: confined like the agent itself (issue 31).
        let invocation =
            invocation.confined(forge_domain::sandbox::Confinement::work_tree(&self.root));
        let options = SpawnOptions {
            // A longer line keeps only its start: never more than the limit is buffered.
            max_line_bytes: limit.max(1),
            ..SpawnOptions::default()
        };
        let child = self.runner.spawn(invocation, options).await?;
        let output = Arc::new(Mutex::new(CappedOutput::new(limit)));
        let (sender, exit) = watch::channel(None);
        let killer = child.killer();
        tokio::spawn(read(child, Arc::clone(&output), sender));
        self.next_id += 1;
        let id = format!("term-{}", self.next_id);
        let terminal = Terminal {
            command,
            killer,
            output,
            exit,
        };
        self.open.insert(id.clone(), terminal);
        Ok(id)
    }

    fn get(&self, id: &str) -> Result<&Terminal, ForgeError> {
        self.open.get(id).ok_or_else(|| ForgeError::InvalidRequest {
            reason: format!("no terminal {id:?} (never created, or released)"),
        })
    }

    /// The command's output so far, and its end once it has one.
    ///
    /// # Errors
    /// [`ForgeError::InvalidRequest`] for an unknown terminal.
    pub fn output(&self, id: &str) -> Result<Snapshot, ForgeError> {
        Ok(self.get(id)?.snapshot())
    }

    /// A future of the command's end, for the caller to await without holding `self`.
    ///
    /// # Errors
    /// [`ForgeError::InvalidRequest`] for an unknown terminal.
    pub fn exited(
        &self,
        id: &str,
    ) -> Result<impl Future<Output = Exit> + Send + 'static, ForgeError> {
        Ok(self.get(id)?.exited())
    }

    /// Starts the kill ladder on the command's group; the terminal stays readable.
    ///
    /// # Errors
    /// [`ForgeError::InvalidRequest`] for an unknown terminal.
    pub fn kill(&self, id: &str) -> Result<(), ForgeError> {
        let killer = Arc::clone(&self.get(id)?.killer);
        let ladder = self.ladder;
        tokio::spawn(async move { killer.shutdown(ladder).await });
        Ok(())
    }

    /// Forgets the terminal after starting the kill ladder on it; a future of what it
    /// was (its command, and its last output with its end once the ladder is walked).
    ///
    /// # Errors
    /// [`ForgeError::InvalidRequest`] for an unknown terminal.
    pub fn release(
        &mut self,
        id: &str,
    ) -> Result<impl Future<Output = (Command, Snapshot)> + Send + 'static, ForgeError> {
        self.kill(id)?;
        let terminal = self
            .open
            .remove(id)
            .ok_or_else(|| ForgeError::InvalidRequest {
                reason: format!("no terminal {id:?}"),
            })?;
        self.released.push(Arc::clone(&terminal.killer));
        Ok(async move {
            terminal.exited().await;
            let snapshot = terminal.snapshot();
            (terminal.command, snapshot)
        })
    }

    /// Walks the kill ladder on every command started, released or not, and waits until
    /// each group is gone.
    ///
    /// # Errors
    /// The first [`ForgeError::Io`] of a signal that could not be sent.
    pub async fn end(&mut self) -> Result<(), ForgeError> {
        let killers = self.open.drain().map(|(_, t)| t.killer);
        let killers: Vec<_> = killers.chain(self.released.drain(..)).collect();
        let ladder = self.ladder;
        let ended = futures::future::join_all(killers.iter().map(|k| k.shutdown(ladder))).await;
        ended.into_iter().collect()
    }
}

/// Reads the child's stdout and stderr into `output` until both close, then its end.
async fn read(
    mut child: Box<dyn RunningProcess>,
    output: Arc<Mutex<CappedOutput>>,
    exit: watch::Sender<Option<Exit>>,
) {
    let push = |text: &str, cut: bool| {
        let mut output = output.lock().unwrap_or_else(PoisonError::into_inner);
        output.push(text);
        output.push("\n");
        if cut {
            output.mark_truncated();
        }
    };
    let mut stderr = child.take_stderr_lines();
    let (mut stdout_open, mut stderr_open) = (true, stderr.is_some());
    while stdout_open || stderr_open {
        tokio::select! {
            item = child.next_stdout(), if stdout_open => match item {
                Ok(Some(StdoutItem::Line { text, .. })) => push(&text, false),
                Ok(Some(StdoutItem::Oversize { prefix, .. })) => push(&prefix, true),
                Ok(None) | Err(_) => stdout_open = false,
            },
            line = next_line(&mut stderr), if stderr_open => match line {
                Some(line) => push(&line, false),
                None => stderr_open = false,
            },
        }
    }
    let ended = match child.wait().await {
        Ok(ProcessExit {
            code,
            signal,
            stderr_tail,
            ..
        }) => {
            // A runner without live stderr lines keeps its tail for the end.
            if stderr.is_none() && !stderr_tail.is_empty() {
                output
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(&stderr_tail);
            }
            Exit { code, signal }
        }
        Err(_) => Exit::default(),
    };
    exit.send_replace(Some(ended));
}

async fn next_line(lines: &mut Option<Box<dyn StderrLines>>) -> Option<String> {
    match lines {
        Some(lines) => lines.next_line().await,
        None => None,
    }
}
