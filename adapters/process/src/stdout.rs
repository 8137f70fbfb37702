//! Reading the child's stdout: a reader task feeding a channel, and the consumer side that
//! ends the stream after the child's exit even when a grandchild keeps the pipe open.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use forge_domain::{ForgeError, Redactor};
use forge_ports::StdoutItem;
use tokio::io::AsyncRead;
use tokio::sync::{mpsc, watch};

use crate::group::{ExitSlot, ProcessGroup};
use crate::lines::{BoundedLines, RawLine, lossy, lossy_prefix};
use crate::log_sink::LogSink;

/// Batches buffered between the reader task and the consumer. A full channel pauses the
/// reader, the pipe fills, and the child waits: back-pressure instead of memory growth.
pub(crate) const STDOUT_CHANNEL_BATCHES: usize = 16;

/// Most lines sent in one batch. A batch only holds lines that were already in the read
/// buffer, so it costs one channel hand-off instead of one per line.
const BATCH_LINES: usize = 256;

pub(crate) type StdoutMessage = Result<Vec<StdoutItem>, ForgeError>;

/// Reads `stdout` to its end (or until nobody listens), logging every line redacted.
/// Blank lines are logged but not sent.
pub(crate) async fn pump_stdout<R: AsyncRead + Unpin>(
    stdout: R,
    tx: mpsc::Sender<StdoutMessage>,
    max_line_bytes: usize,
    mut log: LogSink,
    redactor: Redactor,
) {
    let mut lines = BoundedLines::new(stdout, max_line_bytes);
    let mut batch = Vec::new();
    loop {
        let line = match lines.next_line().await {
            Ok(Some(line)) => line,
            Ok(None) => break,
            Err(err) => {
                let _ = send(&tx, &mut batch).await;
                let _ = tx.send(Err(ForgeError::io("reading stdout", err))).await;
                break;
            }
        };
        if let Some(item) = to_item(line, &mut log, &redactor).await {
            batch.push(item);
        }
        let more_ready = lines.has_buffered_line() && batch.len() < BATCH_LINES;
        if !more_ready && !send(&tx, &mut batch).await {
            break; // the process was dropped
        }
    }
    let _ = send(&tx, &mut batch).await;
    log.finish().await;
}

/// Sends the batch when it holds anything; false when the receiver is gone.
async fn send(tx: &mpsc::Sender<StdoutMessage>, batch: &mut Vec<StdoutItem>) -> bool {
    if batch.is_empty() {
        return true;
    }
    tx.send(Ok(std::mem::take(batch))).await.is_ok()
}

/// Logs `line` and turns it into an item; `None` for a blank line.
async fn to_item(line: RawLine, log: &mut LogSink, redactor: &Redactor) -> Option<StdoutItem> {
    match line {
        RawLine::Line {
            line_no,
            bytes,
            terminated,
        } => {
            let text = lossy(bytes);
            if log.is_enabled() {
                log.write_line(&redactor.redact(&text), terminated).await;
            }
            (!text.is_empty()).then_some(StdoutItem::Line { line_no, text })
        }
        RawLine::Oversize {
            line_no,
            size_bytes,
            prefix,
            terminated,
        } => {
            let prefix = lossy_prefix(&prefix);
            let marker = format!("{prefix}… [forge: line {line_no} of {size_bytes} bytes cut]");
            log.write_line(&redactor.redact(&marker), terminated).await;
            Some(StdoutItem::Oversize {
                line_no,
                size_bytes,
                prefix,
            })
        }
    }
}

/// Where the consumer side is.
#[derive(Debug, Clone, Copy)]
enum Phase {
    /// The child runs: lines flow until end-of-file.
    Running,
    /// The child exited; lines still flow until the pipe stays quiet for
    /// `drain_after_exit` while we wait on it. The window counts only time spent waiting, not
    /// time the consumer spends on a line (decoding a 50 MB line must not end the stream).
    Draining,
    /// The group was killed; what is still in the pipe is read until it stays quiet for
    /// `drain_after_exit` (a process that left the group could hold it forever).
    Killed,
    Finished,
}

/// The consumer side of stdout, owned by the running process.
pub(crate) struct StdoutStream {
    rx: mpsc::Receiver<StdoutMessage>,
    /// The rest of the last batch received.
    pending: VecDeque<StdoutItem>,
    exit: watch::Receiver<ExitSlot>,
    group: Arc<ProcessGroup>,
    drain_after_exit: Duration,
    phase: Phase,
}

impl StdoutStream {
    pub(crate) fn new(
        rx: mpsc::Receiver<StdoutMessage>,
        exit: watch::Receiver<ExitSlot>,
        group: Arc<ProcessGroup>,
        drain_after_exit: Duration,
    ) -> Self {
        Self {
            rx,
            pending: VecDeque::new(),
            exit,
            group,
            drain_after_exit,
            phase: Phase::Running,
        }
    }

    /// True once the stream returned its end (or an error).
    pub(crate) fn is_finished(&self) -> bool {
        matches!(self.phase, Phase::Finished)
    }

    /// See [`forge_ports::RunningProcess::next_stdout`]. Cancel-safe: every await is on a
    /// cancel-safe future, and the phase only changes between awaits.
    pub(crate) async fn next(&mut self) -> Result<Option<StdoutItem>, ForgeError> {
        if let Some(item) = self.pending.pop_front() {
            return Ok(Some(item));
        }
        loop {
            if matches!(self.phase, Phase::Running) && self.exit.borrow().is_some() {
                self.phase = Phase::Draining;
            }
            let message = match self.phase {
                Phase::Finished => return Ok(None),
                Phase::Running => {
                    tokio::select! {
                        biased;
                        message = self.rx.recv() => message,
                        changed = self.exit.changed() => {
                            if changed.is_err() {
                                // The reaper is gone without a word: treat as exited.
                                self.phase = Phase::Draining;
                            }
                            continue;
                        }
                    }
                }
                Phase::Draining => {
                    tokio::select! {
                        biased;
                        message = self.rx.recv() => message,
                        () = tokio::time::sleep(self.drain_after_exit) => {
                            // Quiet since the child exited: a leftover holds the pipe.
                            self.group.kill();
                            self.phase = Phase::Killed;
                            continue;
                        }
                    }
                }
                Phase::Killed => {
                    // Quiet for the whole window: the stream is over.
                    tokio::time::timeout(self.drain_after_exit, self.rx.recv())
                        .await
                        .unwrap_or_default()
                }
            };
            return match message {
                Some(Ok(batch)) => {
                    self.pending = batch.into();
                    match self.pending.pop_front() {
                        Some(item) => Ok(Some(item)),
                        None => continue,
                    }
                }
                Some(Err(err)) => {
                    self.phase = Phase::Finished;
                    Err(err)
                }
                None => {
                    self.phase = Phase::Finished;
                    Ok(None)
                }
            };
        }
    }
}
