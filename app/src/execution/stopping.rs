//! Ending the child: asking a conversing agent to stop, and the kill ladder on its group.

use std::sync::Arc;
use std::time::Duration;

use forge_domain::ForgeError;
use forge_ports::{AgentSession, KillLadder, ProcessKiller, StdinWriter};
use tokio::task::JoinHandle;

/// Why forge ends the run before the agent does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stop {
    Cancelled,
    TimedOut,
}

/// Writes a session's lines to the agent; a failed write (the agent is gone) is kept and
/// closes stdin.
pub(super) async fn write_lines(
    stdin: &mut Option<Box<dyn StdinWriter>>,
    lines: Vec<String>,
    errors: &mut Vec<ForgeError>,
) {
    for line in lines {
        let Some(pipe) = stdin.as_mut() else {
            return;
        };
        if let Err(e) = pipe.write_line(&line).await {
            errors.push(e);
            *stdin = None;
        }
    }
}

/// Cancel or timeout: a conversing agent is asked to stop first (its answer still arrives)
/// and the ladder waits the interrupt grace; any other CLI gets the ladder at once.
pub(super) async fn ask_to_stop(
    session: Option<&mut (dyn AgentSession + 'static)>,
    stdin: &mut Option<Box<dyn StdinWriter>>,
    errors: &mut Vec<ForgeError>,
    ladder: KillLadder,
) -> Duration {
    match session {
        Some(session) if stdin.is_some() => {
            write_lines(stdin, session.cancel(), errors).await;
            ladder.interrupt_grace
        }
        _ => Duration::ZERO,
    }
}

/// The kill ladder on the child's group after `grace` (returns at once if it has exited).
pub(super) fn shutdown_after(
    killer: &Arc<dyn ProcessKiller>,
    grace: Duration,
    ladder: KillLadder,
) -> JoinHandle<Result<(), ForgeError>> {
    let killer = Arc::clone(killer);
    tokio::spawn(async move {
        if !grace.is_zero() {
            tokio::time::sleep(grace).await;
        }
        killer.shutdown(ladder).await
    })
}

/// The agent is a server: once its answer is in, it gets the grace to finish its own writes
/// (gemini 0.61 saves the session's last messages after answering: closing stdin at once
/// loses them, and the session cannot be loaded), then stdin is closed and, after another
/// grace, the ladder.
pub(super) fn close_conversation(
    killer: &Arc<dyn ProcessKiller>,
    stdin: Option<Box<dyn StdinWriter>>,
    ladder: KillLadder,
) -> JoinHandle<Result<(), ForgeError>> {
    let grace = ladder.interrupt_grace;
    let killer = Arc::clone(killer);
    tokio::spawn(async move {
        tokio::time::sleep(grace).await;
        drop(stdin);
        tokio::time::sleep(grace).await;
        killer.shutdown(ladder).await
    })
}
