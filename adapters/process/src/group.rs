//! Signals to a run's whole process group, and the kill ladder on top of them.

use std::process::ExitStatus;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use forge_domain::ForgeError;
use forge_ports::{KillLadder, ProcessKiller};
use nix::errno::Errno;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::sync::{Mutex, watch};

/// How the child ended, published once by the task that reaps it.
pub(crate) type ExitSlot = Option<Result<ExitStatus, String>>;

/// A process group forge started. Signals go to every member; a group that is gone is not
/// an error.
#[derive(Debug)]
pub(crate) struct ProcessGroup {
    pgid: Pid,
    /// Set once the run is over and the group was killed: from then on the id may be
    /// reused by an unrelated group, so nothing is sent any more.
    released: AtomicBool,
}

impl ProcessGroup {
    pub(crate) fn new(pgid: u32) -> Self {
        Self {
            pgid: Pid::from_raw(i32::try_from(pgid).unwrap_or(i32::MAX)),
            released: AtomicBool::new(false),
        }
    }

    /// Sends `signal` to the whole group. ESRCH (group gone) is success.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the kernel refuses the signal for another reason.
    pub(crate) fn signal(&self, signal: Signal) -> Result<(), ForgeError> {
        if self.released.load(Ordering::Acquire) {
            return Ok(());
        }
        match killpg(self.pgid, signal) {
            Ok(()) | Err(Errno::ESRCH) => Ok(()),
            Err(err) => Err(ForgeError::io(
                format!("sending {} to process group {}", signal.as_str(), self.pgid),
                err,
            )),
        }
    }

    /// SIGKILL to the group, errors ignored (drop paths, `kill_now`).
    pub(crate) fn kill(&self) {
        let _ = self.signal(Signal::SIGKILL);
    }

    /// Kills what is left and stops signalling this group for good.
    pub(crate) fn kill_and_release(&self) {
        self.kill();
        self.released.store(true, Ordering::Release);
    }
}

/// The [`ProcessKiller`] handed out by a running process.
pub(crate) struct GroupKiller {
    group: Arc<ProcessGroup>,
    exit: watch::Receiver<ExitSlot>,
    /// Concurrent `shutdown` calls take turns; the second finds the child gone.
    ladder: Mutex<()>,
}

impl GroupKiller {
    pub(crate) fn new(group: Arc<ProcessGroup>, exit: watch::Receiver<ExitSlot>) -> Self {
        Self {
            group,
            exit,
            ladder: Mutex::new(()),
        }
    }

    fn has_exited(&self) -> bool {
        self.exit.borrow().is_some()
    }

    /// Waits for the child's exit, at most `grace` when given. True once it has exited
    /// (or can no longer be observed, which ends the wait just as well).
    async fn exited_within(&self, grace: Option<Duration>) -> bool {
        let mut exit = self.exit.clone();
        let exited = exit.wait_for(Option::is_some);
        match grace {
            Some(grace) => tokio::time::timeout(grace, exited).await.is_ok(),
            None => {
                let _ = exited.await;
                true
            }
        }
    }
}

#[async_trait]
impl ProcessKiller for GroupKiller {
    async fn shutdown(&self, ladder: KillLadder) -> Result<(), ForgeError> {
        let _turn = self.ladder.lock().await;
        let polite = [
            (Signal::SIGINT, ladder.interrupt_grace),
            (Signal::SIGTERM, ladder.terminate_grace),
        ];
        for (signal, grace) in polite {
            if self.has_exited() {
                return Ok(());
            }
            self.group.signal(signal)?;
            if self.exited_within(Some(grace)).await {
                return Ok(());
            }
        }
        if !self.has_exited() {
            self.group.signal(Signal::SIGKILL)?;
            self.exited_within(None).await;
        }
        Ok(())
    }

    fn kill_now(&self) {
        self.group.kill();
    }
}
