//! A provider whose CLI holds a conversation over its stdin and stdout (the Agent Client
//! Protocol) instead of printing a report: the runtime spawns it with stdin kept open
//! ([`crate::Invocation::stdin_open`]), writes the session's opening lines, and lets the
//! session answer every stdout line before the line is decoded. The session is the client
//! side of the protocol; the decoder still turns the same lines into events.

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;

use async_trait::async_trait;
use forge_domain::{AgentEvent, ForgeError};

use crate::permission::PermissionAsker;
use crate::process::{KillLadder, ProcessRunner};
use crate::workspace::Workspace;

/// The child's stdin, kept open for a conversation. Dropping it closes stdin.
#[async_trait]
pub trait StdinWriter: Send {
    /// Writes `line` and a newline, then flushes.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the pipe is closed (the child is gone) or the write fails.
    async fn write_line(&mut self, line: &str) -> Result<(), ForgeError>;
}

/// What the client side of a session may use: the run's workspace (every file the agent
/// reads or writes through forge goes through its rule) and the process runner (every
/// command it runs for the agent, ended with the run's kill ladder).
#[derive(Clone)]
pub struct SessionServices {
    pub workspace: Arc<dyn Workspace>,
    pub runner: Arc<dyn ProcessRunner>,
    /// The run's work directory, canonical: the workspace root.
    pub workdir: PathBuf,
    /// How the commands run for the agent are stopped.
    pub ladder: KillLadder,
    /// Where the agent's permission requests go in `--permission-mode ask` (`None` in any
    /// other mode).
    pub permissions: Option<Arc<dyn PermissionAsker>>,
}

/// A step the session finishes later (the answer to a request that waits for something, as
/// ACP's `terminal/wait_for_exit`): the runtime polls it beside the agent's lines, so other
/// lines keep flowing and a cancel still works while it waits. Dropped unfinished when the
/// run ends.
pub type LaterStep = Pin<Box<dyn Future<Output = SessionStep> + Send>>;

/// What the session does after one stdout line.
#[derive(Default)]
pub struct SessionStep {
    /// Lines to write to the agent's stdin, in order (answers and the next requests).
    pub send: Vec<String>,
    /// Events of the client side (a permission answered, a file written for the agent).
    pub events: Vec<AgentEvent>,
    /// Errors of the client side (a path outside the workspace), kept in the result.
    pub errors: Vec<ForgeError>,
    /// The conversation is over: the runtime closes stdin and ends the agent.
    pub done: bool,
    /// Steps that finish later, each handled as this one when it does.
    pub later: Vec<LaterStep>,
}

impl std::fmt::Debug for SessionStep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionStep")
            .field("send", &self.send)
            .field("events", &self.events)
            .field("errors", &self.errors)
            .field("done", &self.done)
            .field("later", &self.later.len())
            .finish()
    }
}

/// The client half of one run's conversation with an agent.
#[async_trait]
pub trait AgentSession: Send {
    /// The lines written as soon as the child runs (the protocol's `initialize`).
    fn opening(&mut self) -> Vec<String>;

    /// Answers one stdout line (terminator stripped): the agent's requests are served, its
    /// answers move the conversation on. A line that is not a message is ignored.
    async fn on_line(&mut self, line: &str) -> SessionStep;

    /// The lines that ask the agent to stop its turn (cancel or timeout); the runtime walks
    /// the kill ladder after the interrupt grace if it has not ended by then.
    fn cancel(&mut self) -> Vec<String>;

    /// The run is over (answered, cancelled, timed out or crashed): ends whatever the session
    /// started for the agent (its commands), so nothing it started outlives the run.
    /// Default: nothing to end.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when something it started cannot be ended.
    async fn end(&mut self) -> Result<(), ForgeError> {
        Ok(())
    }
}
