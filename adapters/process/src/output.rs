//! Running a short command to completion (`--version`, `auth status`).

use std::time::Duration;

use forge_domain::ForgeError;
use forge_ports::{CapturedOutput, Invocation, RunningProcess, SpawnOptions, StdoutItem};

use crate::runner::TokioProcessRunner;

/// How much of each stream is kept.
const CAPTURE_BYTES: usize = 1024 * 1024;

/// Runs `invocation`, capturing stdout (its lines, blank lines dropped, joined by `\n`) and
/// the last MiB of stderr, to its exit or to the first line `enough` accepts (then the group
/// is ended and `code` is `None`); the whole group is killed after `timeout`.
pub(crate) async fn run_to_completion(
    runner: &TokioProcessRunner,
    invocation: Invocation,
    timeout: Duration,
    enough: impl Fn(&str) -> bool,
) -> Result<CapturedOutput, ForgeError> {
    let options = SpawnOptions {
        max_line_bytes: CAPTURE_BYTES,
        stderr_tail_bytes: CAPTURE_BYTES,
        ..SpawnOptions::default()
    };
    let mut child = runner.start(invocation, options).await?;
    let captured = tokio::time::timeout(timeout, async {
        let mut stdout = String::new();
        let mut done_early = false;
        while let Some(item) = child.next_stdout().await? {
            if let StdoutItem::Line { text, .. } = item {
                if stdout.len() + text.len() < CAPTURE_BYTES {
                    stdout.push_str(&text);
                    stdout.push('\n');
                }
                if enough(&text) {
                    done_early = true;
                    child.killer().kill_now();
                    break;
                }
            }
        }
        let exit = child.wait().await?;
        Ok::<_, ForgeError>(CapturedOutput {
            code: exit.code.filter(|_| !done_early),
            stdout,
            stderr: exit.stderr_tail,
        })
    })
    .await;
    match captured {
        Ok(result) => result,
        // Dropping `child` SIGKILLs the group.
        Err(_elapsed) => Err(ForgeError::ProviderTimeout {
            after_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
        }),
    }
}
