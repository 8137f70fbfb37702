//! Spawning and supervising a child process. Only `forge-adapter-process` implements this.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use forge_domain::sandbox::Confinement;
use forge_domain::{EndedOrphan, ForgeError, Redactor};

/// The child's environment: inherited (or cleared), then `remove`, then `set`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvSpec {
    pub inherit: bool,
    pub set: BTreeMap<String, String>,
    pub remove: Vec<String>,
}

impl Default for EnvSpec {
    fn default() -> Self {
        Self {
            inherit: true,
            set: BTreeMap::new(),
            remove: Vec::new(),
        }
    }
}

/// Where a prepared file's bytes come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileSource {
    Contents(Vec<u8>),
    /// Copied from this path when it exists; skipped (not an error) when it does not.
    CopyOf(PathBuf),
    /// A symbolic link to this path (what is there already at the file's path is replaced):
    /// a view of a file or directory the run must share, not copy.
    SymlinkTo(PathBuf),
}

/// A file written before the child starts (per-run CLI home, settings, config).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreparedFile {
    /// Absolute path.
    pub path: PathBuf,
    pub source: FileSource,
}

/// Everything needed to start one CLI process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub cwd: PathBuf,
    pub env: EnvSpec,
    /// Written to the child's stdin, which is then closed. `None`: stdin is /dev/null.
    pub stdin: Option<Vec<u8>>,
    /// Stdin stays open for a conversation: [`RunningProcess::take_stdin`] hands it over
    /// (after `stdin`, when set, has been written).
    pub stdin_open: bool,
    /// Files to write before spawning; parent directories are created.
    pub files: Vec<PreparedFile>,
    /// Shown in [`ForgeError::ExecutableNotFound`] when `program` cannot be found.
    pub install_hint: Option<String>,
    /// Set for the agent and the code it wrote (the CLI, validation and install steps, MCP
    /// command tools, ACP terminals): what the sandbox confines it to. `None` for forge's own
    /// commands (git, version probes), which the sandbox leaves alone.
    pub confinement: Option<Confinement>,
}

impl Invocation {
    /// An invocation of `program` with `args` in `cwd`, inheriting the environment.
    pub fn new(program: impl Into<PathBuf>, args: Vec<String>, cwd: impl Into<PathBuf>) -> Self {
        Self {
            program: program.into(),
            args,
            cwd: cwd.into(),
            env: EnvSpec::default(),
            stdin: None,
            stdin_open: false,
            files: Vec::new(),
            install_hint: None,
            confinement: None,
        }
    }

    /// The same invocation, confined as `confinement` says.
    #[must_use]
    pub fn confined(mut self, confinement: Confinement) -> Self {
        self.confinement = Some(confinement);
        self
    }
}

/// Graces of the kill ladder: SIGINT → `interrupt_grace` → SIGTERM → `terminate_grace` →
/// SIGKILL, each sent to the whole process group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KillLadder {
    pub interrupt_grace: Duration,
    pub terminate_grace: Duration,
}

impl Default for KillLadder {
    fn default() -> Self {
        Self {
            interrupt_grace: Duration::from_secs(2),
            terminate_grace: Duration::from_secs(2),
        }
    }
}

#[derive(Debug, Clone)]
pub struct SpawnOptions {
    /// A stdout line longer than this becomes [`StdoutItem::Oversize`]; reading goes on.
    pub max_line_bytes: usize,
    /// How much of stderr's end is kept for error messages.
    pub stderr_tail_bytes: usize,
    /// Full copies of stdout / stderr (redacted) for the artifact bundle.
    pub stdout_log: Option<PathBuf>,
    pub stderr_log: Option<PathBuf>,
    /// Applied to what is written to the logs and kept in the stderr tail.
    pub redactor: Redactor,
    /// After the child exits, how long to keep reading stdout that a leftover grandchild
    /// holds open before the group is killed and the stream closed.
    pub drain_after_exit: Duration,
    /// The run this child belongs to. Every process it starts carries it in its environment,
    /// so descendants that leave the process group can still be found and ended.
    pub run_marker: Option<String>,
}

impl Default for SpawnOptions {
    fn default() -> Self {
        Self {
            max_line_bytes: 64 * 1024 * 1024,
            stderr_tail_bytes: 64 * 1024,
            stdout_log: None,
            stderr_log: None,
            redactor: Redactor::new(),
            drain_after_exit: Duration::from_millis(500),
            run_marker: None,
        }
    }
}

/// One unit of the child's stdout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StdoutItem {
    /// A line without its terminator (`\n` or `\r\n`); invalid UTF-8 replaced.
    Line { line_no: u64, text: String },
    /// A line over the cap: its size and first bytes. The rest was skipped, not buffered.
    Oversize {
        line_no: u64,
        size_bytes: u64,
        prefix: String,
    },
}

/// How the child ended.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProcessExit {
    /// `None` when killed by a signal.
    pub code: Option<i32>,
    pub signal: Option<i32>,
    /// The last `stderr_tail_bytes` of stderr, redacted.
    pub stderr_tail: String,
    pub stderr_bytes: u64,
}

/// Output of a short command run to completion (`--version`, `auth status`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CapturedOutput {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

#[async_trait]
pub trait ProcessRunner: Send + Sync {
    /// Starts the child in its own process group, with stdin as the invocation says, after
    /// writing the invocation's files.
    ///
    /// # Errors
    /// - [`ForgeError::ExecutableNotFound`] when `program` is not a file and not on PATH
    ///   (carrying the invocation's install hint);
    /// - [`ForgeError::Io`] when a prepared file cannot be written or the spawn fails otherwise.
    async fn spawn(
        &self,
        invocation: Invocation,
        options: SpawnOptions,
    ) -> Result<Box<dyn RunningProcess>, ForgeError>;

    /// Runs a short command to completion, killing its group after `timeout`.
    ///
    /// # Errors
    /// - [`ForgeError::ExecutableNotFound`] as for `spawn`;
    /// - [`ForgeError::ProviderTimeout`] when it did not finish within `timeout`;
    /// - [`ForgeError::Io`] for other failures.
    async fn output(
        &self,
        invocation: Invocation,
        timeout: Duration,
    ) -> Result<CapturedOutput, ForgeError>;

    /// As [`ProcessRunner::output`], but done at the first stdout line `enough` accepts:
    /// the group is ended there and what was read returned (`code` `None`). For a server
    /// that answers and stays up (an ACP agent asked to `initialize`). Default: a runner
    /// that cannot stop early runs to the exit.
    ///
    /// # Errors
    /// As [`ProcessRunner::output`].
    async fn output_until(
        &self,
        invocation: Invocation,
        timeout: Duration,
        _enough: &(dyn for<'a> Fn(&'a str) -> bool + Send + Sync),
    ) -> Result<CapturedOutput, ForgeError> {
        self.output(invocation, timeout).await
    }

    /// Where `program` would be found: itself when it contains a `/` and exists, else the
    /// first match on PATH. `None` when not found (not an error: callers report it).
    fn locate(&self, program: &Path) -> Option<PathBuf>;

    /// How this runner confines invocations that carry a confinement. `None`: it has no
    /// sandbox.
    fn sandbox_description(&self) -> Option<crate::sandbox::SandboxDescription> {
        None
    }

    /// [`ProcessRunner::sandbox_description`] as a run's result and a task's report say it
    /// (`off`, or `on (<mechanism>; <network>)`): the one place it becomes text.
    fn sandbox(&self) -> Option<String> {
        self.sandbox_description().map(|d| d.to_string())
    }

    /// Ends the live processes that carry the marker of a run that is over (its forge is
    /// gone) and returns them: descendants that had left their run's process group when that
    /// forge died. Runs of this process are left alone. Nothing to do where markers cannot be
    /// read.
    async fn end_orphans_of_finished_runs(&self) -> Vec<EndedOrphan> {
        Vec::new()
    }
}

/// A running child. Dropping it kills the whole group with SIGKILL.
#[async_trait]
pub trait RunningProcess: Send {
    fn pid(&self) -> Option<u32>;

    /// The next stdout item, `Ok(None)` once stdout is finished (EOF, or the child exited and
    /// the drain window passed). Cancel-safe: usable in `select!` without losing items.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when reading the pipe fails; the stream is finished after that.
    async fn next_stdout(&mut self) -> Result<Option<StdoutItem>, ForgeError>;

    /// A handle that stops the child from another task while this one keeps reading.
    fn killer(&self) -> Arc<dyn ProcessKiller>;

    /// stderr line by line as the child writes it, once (`None` after the first call, or
    /// from a runner that does not offer it — its caller reads
    /// [`ProcessExit::stderr_tail`] at the end instead). For CLIs that report events only
    /// there (gemini's retries).
    fn take_stderr_lines(&mut self) -> Option<Box<dyn StderrLines>> {
        None
    }

    /// The child's open stdin, once, when the invocation asked for it
    /// ([`Invocation::stdin_open`]); `None` otherwise or after the first call.
    fn take_stdin(&mut self) -> Option<Box<dyn crate::session::StdinWriter>> {
        None
    }

    /// What the sandbox refuses to the child (each connection its egress refuses) as it
    /// happens, once (`None` after the first call, or for a child that is not confined).
    fn take_sandbox_denials(&mut self) -> Option<Box<dyn SandboxDenials>> {
        None
    }

    /// Waits for the child to exit and for stderr to be drained, then kills whatever is
    /// left of its process group (grandchildren never outlive a run).
    ///
    /// # Errors
    /// [`ForgeError::Io`] when waiting fails.
    async fn wait(&mut self) -> Result<ProcessExit, ForgeError>;

    /// After [`RunningProcess::wait`]: the descendants that had left the process group but
    /// carried this run's marker, and were ended once the run was over.
    fn ended_orphans(&self) -> Vec<EndedOrphan> {
        Vec::new()
    }
}

/// A child's stderr, line by line (redacted, as logged).
#[async_trait]
pub trait StderrLines: Send {
    /// The next line; `None` once stderr is closed and every line was taken. The lines not
    /// taken while the child ran are still there after [`RunningProcess::wait`].
    /// Cancel-safe.
    async fn next_line(&mut self) -> Option<String>;
}

/// The refusals of a confined child's sandbox, as they happen.
#[async_trait]
pub trait SandboxDenials: Send {
    /// The next refusal; `None` once the child's sandbox is gone and every refusal was
    /// taken. Cancel-safe.
    async fn next_denial(&mut self) -> Option<forge_domain::sandbox::SandboxDenial>;
}

#[async_trait]
pub trait ProcessKiller: Send + Sync {
    /// Walks the kill ladder on the whole group until the child has exited; returns at once
    /// when it already has. Idempotent.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when a signal cannot be sent for a reason other than the group
    /// being gone.
    async fn shutdown(&self, ladder: KillLadder) -> Result<(), ForgeError>;

    /// SIGKILL to the whole group now (a second Ctrl-C).
    fn kill_now(&self);
}
