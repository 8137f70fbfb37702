//! Step three, pump: everything that can happen while the child runs, one wake-up at a
//! time, until its stdout ends.
//!
//! [`RunLoop::next_wake`] waits on every source at once and names what woke it
//! ([`Wake`]); [`RunLoop::on_wake`] handles it. Another source (a control channel, say)
//! is one more `Wake` variant, one more arm in `next_wake` and one more handler.

use std::sync::Arc;

use forge_domain::sandbox::SandboxDenial;
use forge_domain::{EventAccumulator, ForgeError, Redactor};
use forge_ports::{
    AgentSession, LaterStep, ProcessKiller, RunningProcess, SandboxDenials, SessionStep,
    StderrLines, StdinWriter, StdoutItem,
};
use futures::stream::FuturesUnordered;
use futures::{FutureExt, StreamExt};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::decoding::{Decoding, MAX_BURST_BYTES, MAX_BURST_LINES};
use super::prepare::Prepared;
use super::stopping::{Stop, ask_to_stop, close_conversation, shutdown_after, write_lines};
use crate::handle::RunCanceller;

/// A run whose child is up: what was prepared and the state of the pump. The child itself
/// is passed to each step, so that [`RunLoop::finish`] can drop it at its point.
pub(super) struct RunLoop<'a> {
    pub prepared: Prepared<'a>,
    /// Stops the child from the pump while it is being read.
    pub killer: Arc<dyn ProcessKiller>,
    /// The plan's redactor with this run's own secrets.
    pub redactor: Redactor,
    /// The client side of a conversing CLI (ACP); `None` for one that just prints.
    pub session: Option<Box<dyn AgentSession>>,
    pub stdin: Option<Box<dyn StdinWriter>>,
    /// The session said the conversation is over; the child is being closed.
    pub conversation_over: bool,
    /// Steps the session finishes later (an answer that waits for a command).
    pub later: FuturesUnordered<LaterStep>,
    /// The tool calls the session records itself (commands it ran for the agent), for the
    /// result beside the decoder's.
    pub session_calls: EventAccumulator,
    pub decoding: Decoding,
    pub stderr_lines: Option<Box<dyn StderrLines>>,
    pub stderr_open: bool,
    pub denials: Option<Box<dyn SandboxDenials>>,
    pub denials_open: bool,
    pub sandbox_denied: Vec<SandboxDenial>,
    pub deadline: Option<Instant>,
    /// Why forge is ending the run, once it is.
    pub stop: Option<Stop>,
    pub killed: bool,
    /// The kill ladder (or the closing of a finished conversation) under way.
    pub shutdown_task: Option<JoinHandle<Result<(), ForgeError>>>,
}

/// What woke the pump.
enum Wake {
    /// A second Ctrl-C: the group is killed at once.
    Kill,
    Cancel,
    Deadline,
    /// A live stderr line; `None` once stderr is finished.
    Stderr(Option<String>),
    /// A refusal of the sandbox; `None` once there are no more.
    Denial(Option<SandboxDenial>),
    /// A session step that finished later.
    Later(SessionStep),
    Stdout(Result<Option<StdoutItem>, ForgeError>),
}

/// Whether the pump goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flow {
    Continue,
    Ended,
}

impl RunLoop<'_> {
    /// Runs until the child's stdout has ended.
    pub async fn pump(&mut self, child: &mut dyn RunningProcess, canceller: &RunCanceller) {
        loop {
            let wake = self.next_wake(child, canceller).await;
            if self.on_wake(child, wake).await == Flow::Ended {
                return;
            }
        }
    }

    /// Waits for the first source with something to say; the order is the priority.
    async fn next_wake(
        &mut self,
        child: &mut dyn RunningProcess,
        canceller: &RunCanceller,
    ) -> Wake {
        tokio::select! {
            biased;
            () = canceller.kill.cancelled(), if !self.killed => Wake::Kill,
            () = canceller.cancel.cancelled(), if self.stop.is_none() => Wake::Cancel,
            () = sleep_until_opt(self.deadline), if self.stop.is_none() && self.deadline.is_some() => {
                Wake::Deadline
            }
            line = next_stderr_line(&mut self.stderr_lines), if self.stderr_open => Wake::Stderr(line),
            denial = next_denial(&mut self.denials), if self.denials_open => Wake::Denial(denial),
            Some(step) = self.later.next(), if !self.later.is_empty() => Wake::Later(step),
            item = child.next_stdout() => Wake::Stdout(item),
        }
    }

    async fn on_wake(&mut self, child: &mut dyn RunningProcess, wake: Wake) -> Flow {
        match wake {
            Wake::Kill => {
                self.killer.kill_now();
                self.killed = true;
                self.stop.get_or_insert(Stop::Cancelled);
            }
            Wake::Cancel => self.begin_stop(Stop::Cancelled).await,
            Wake::Deadline => self.begin_stop(Stop::TimedOut).await,
            Wake::Stderr(Some(line)) => {
                let decoding = &mut self.decoding;
                decoding
                    .decoder
                    .decode_stderr_line(&line, &mut decoding.batch);
                self.deliver().await;
            }
            Wake::Stderr(None) => self.stderr_open = false,
            Wake::Denial(Some(denial)) => {
                self.decoding.batch.push(denial.event());
                self.sandbox_denied.push(denial);
                self.deliver().await;
            }
            Wake::Denial(None) => self.denials_open = false,
            Wake::Later(step) => {
                self.on_step(step).await;
                self.deliver().await;
            }
            Wake::Stdout(item) => {
                // A session answers the line before it is decoded.
                if let (Some(session), Ok(Some(StdoutItem::Line { text, .. }))) =
                    (self.session.as_mut(), &item)
                {
                    let step = session.on_line(text).await;
                    self.on_step(step).await;
                }
                return self.on_stdout(child, item).await;
            }
        }
        Flow::Continue
    }

    /// Cancel or timeout: the session is asked to stop, then the kill ladder.
    async fn begin_stop(&mut self, why: Stop) {
        self.stop = Some(why);
        let ladder = self.prepared.plan.ladder;
        let grace = ask_to_stop(
            self.session.as_deref_mut(),
            &mut self.stdin,
            &mut self.decoding.runtime_errors,
            ladder,
        )
        .await;
        let killer = &self.killer;
        self.shutdown_task
            .get_or_insert_with(|| shutdown_after(killer, grace, ladder));
    }

    /// A session's step: its lines to the agent, its events and errors to the run.
    async fn on_step(&mut self, mut step: SessionStep) {
        self.later.extend(step.later.drain(..));
        write_lines(
            &mut self.stdin,
            step.send,
            &mut self.decoding.runtime_errors,
        )
        .await;
        step.events
            .iter()
            .for_each(|e| self.session_calls.observe(e));
        self.decoding.batch.extend(step.events);
        self.decoding.runtime_errors.extend(step.errors);
        if step.done && !self.conversation_over {
            self.conversation_over = true;
            let pipe = self.stdin.take();
            let (killer, ladder) = (&self.killer, self.prepared.plan.ladder);
            self.shutdown_task
                .get_or_insert_with(|| close_conversation(killer, pipe, ladder));
        }
    }

    /// A stdout item, and whatever is already waiting behind it: decoded before the events
    /// are delivered, so one bundle write and one wake-up of the reader per burst instead
    /// of per line. `next_stdout` is cancel-safe, so polling it once and dropping the
    /// future loses nothing.
    async fn on_stdout(
        &mut self,
        child: &mut dyn RunningProcess,
        item: Result<Option<StdoutItem>, ForgeError>,
    ) -> Flow {
        let mut ended = !self.decoding.take(item);
        let mut burst = 1;
        // A session answers line by line, so its lines are not read ahead.
        while !ended
            && self.session.is_none()
            && burst < MAX_BURST_LINES
            && self.decoding.burst_bytes < MAX_BURST_BYTES
        {
            match child.next_stdout().now_or_never() {
                Some(item) => ended = !self.decoding.take(item),
                None => break,
            }
            burst += 1;
        }
        self.deliver().await;
        self.decoding.burst_bytes = 0;
        if ended { Flow::Ended } else { Flow::Continue }
    }

    /// The events decoded so far, to the bundle, the log and the stream.
    pub async fn deliver(&mut self) {
        self.prepared
            .delivery
            .deliver(&mut self.decoding.batch)
            .await;
    }
}

/// The next live stderr line; `None` when there is none to wait for.
async fn next_stderr_line(lines: &mut Option<Box<dyn StderrLines>>) -> Option<String> {
    match lines {
        Some(lines) => lines.next_line().await,
        None => None,
    }
}

async fn next_denial(denials: &mut Option<Box<dyn SandboxDenials>>) -> Option<SandboxDenial> {
    match denials {
        Some(denials) => denials.next_denial().await,
        None => None,
    }
}

async fn sleep_until_opt(deadline: Option<Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}
