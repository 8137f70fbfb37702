//! A provider whose CLI holds a conversation over its stdin and stdout (the Agent Client
//! Protocol) instead of printing a report: the runtime spawns it with stdin kept open
//! ([`crate::Invocation::stdin_open`]), writes the session's opening lines, and lets the
//! session answer every stdout line before the line is decoded. The session is the client
//! side of the protocol; the decoder still turns the same lines into events.

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use forge_domain::{AgentEvent, ForgeError};

use crate::process::ProcessRunner;
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
/// reads or writes through forge goes through its rule) and the process runner.
#[derive(Clone)]
pub struct SessionServices {
    pub workspace: Arc<dyn Workspace>,
    pub runner: Arc<dyn ProcessRunner>,
    /// The run's work directory, canonical: the workspace root.
    pub workdir: PathBuf,
}

/// What the session does after one stdout line.
#[derive(Debug, Default)]
pub struct SessionStep {
    /// Lines to write to the agent's stdin, in order (answers and the next requests).
    pub send: Vec<String>,
    /// Events of the client side (a permission answered, a file written for the agent).
    pub events: Vec<AgentEvent>,
    /// Errors of the client side (a path outside the workspace), kept in the result.
    pub errors: Vec<ForgeError>,
    /// The conversation is over: the runtime closes stdin and ends the agent.
    pub done: bool,
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
}
