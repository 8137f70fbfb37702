//! Ctrl-C: the first SIGINT (or SIGTERM) cancels the run through the kill ladder, the
//! second kills the process group at once. Artifacts are written either way.

use std::io::Write;

use forge_app::RunCanceller;
use tokio::signal::unix::{SignalKind, signal};
use tokio::task::JoinHandle;

/// Installs the handlers now (so a signal arriving from here on never kills forge itself)
/// and returns the task that serves them; abort it when the run is over.
///
/// # Errors
/// The I/O error when a handler cannot be installed.
pub fn watch(canceller: RunCanceller, quiet: bool) -> std::io::Result<JoinHandle<()>> {
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    Ok(tokio::spawn(async move {
        let mut count = 0_u32;
        loop {
            tokio::select! {
                Some(()) = interrupt.recv() => {}
                Some(()) = terminate.recv() => {}
                else => return,
            }
            count += 1;
            if count == 1 {
                canceller.cancel();
                if !quiet {
                    let _ = writeln!(
                        std::io::stderr(),
                        "\ncancelling: stopping the agent (Ctrl-C again to kill it now)"
                    );
                }
            } else {
                canceller.kill_now();
                return;
            }
        }
    }))
}
