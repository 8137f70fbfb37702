//! Reading the child's stderr: a redacted log copy and a bounded, redacted tail.

use forge_domain::Redactor;
use tokio::io::AsyncRead;
use tokio::sync::mpsc;

use crate::lines::{BoundedLines, RawLine, lossy, lossy_prefix};
use crate::log_sink::LogSink;

/// A stderr line longer than this is logged as its prefix and size.
const STDERR_LINE_CAP: usize = 1024 * 1024;

/// At most this much of stderr is handed out line by line
/// ([`forge_ports::RunningProcess::next_stderr_line`]); the log keeps everything. A CLI that
/// floods stderr must not grow forge's memory while nobody reads the lines.
const LIVE_LINE_BUDGET_BYTES: usize = 4 * 1024 * 1024;

/// The live copy of stderr's lines, within [`LIVE_LINE_BUDGET_BYTES`].
pub(crate) struct LiveLines {
    tx: mpsc::UnboundedSender<String>,
    left: usize,
}

impl LiveLines {
    pub(crate) fn new(tx: mpsc::UnboundedSender<String>) -> Self {
        Self {
            tx,
            left: LIVE_LINE_BUDGET_BYTES,
        }
    }

    fn send(&mut self, line: &str) {
        if line.len() > self.left {
            self.left = 0;
            return;
        }
        self.left -= line.len();
        // Nobody listening (the caller dropped the process) is fine: the log has the line.
        let _ = self.tx.send(line.to_owned());
    }
}

/// The receiving end of [`LiveLines`], for the caller.
pub(crate) struct LineReceiver(pub mpsc::UnboundedReceiver<String>);

#[async_trait::async_trait]
impl forge_ports::StderrLines for LineReceiver {
    async fn next_line(&mut self) -> Option<String> {
        self.0.recv().await
    }
}

/// What the stderr reader hands back once stderr is closed.
#[derive(Debug, Clone, Default)]
pub(crate) struct StderrSummary {
    pub tail: String,
    pub bytes: u64,
}

/// Reads `stderr` to its end.
pub(crate) async fn pump_stderr<R: AsyncRead + Unpin>(
    stderr: R,
    mut log: LogSink,
    redactor: Redactor,
    tail_bytes: usize,
    mut live: LiveLines,
) -> StderrSummary {
    let mut lines = BoundedLines::new(stderr, STDERR_LINE_CAP);
    let mut tail = Tail::new(tail_bytes);
    // A read error ends stderr like end-of-file: what was read is kept.
    while let Ok(Some(line)) = lines.next_line().await {
        let (text, terminated) = match line {
            RawLine::Line {
                bytes, terminated, ..
            } => (lossy(bytes), terminated),
            RawLine::Oversize {
                size_bytes,
                prefix,
                terminated,
                ..
            } => (
                format!(
                    "{}… [forge: stderr line of {size_bytes} bytes cut]",
                    lossy_prefix(&prefix)
                ),
                terminated,
            ),
        };
        let text = redactor.redact(&text);
        live.send(&text);
        log.write_line(&text, terminated).await;
        tail.push(&text);
        if terminated {
            tail.push("\n");
        }
    }
    log.finish().await;
    StderrSummary {
        tail: tail.into_string(),
        bytes: lines.bytes_read(),
    }
}

/// The last `cap` bytes of a text, cut on a character boundary.
#[derive(Debug)]
pub(crate) struct Tail {
    cap: usize,
    text: String,
}

impl Tail {
    pub(crate) fn new(cap: usize) -> Self {
        Self {
            cap,
            text: String::new(),
        }
    }

    pub(crate) fn push(&mut self, more: &str) {
        self.text.push_str(more);
        // Trim lazily: only once the text is twice the cap, so pushing stays cheap.
        if self.text.len() > self.cap.saturating_mul(2).max(1024) {
            self.trim();
        }
    }

    pub(crate) fn into_string(mut self) -> String {
        self.trim();
        self.text
    }

    fn trim(&mut self) {
        if self.text.len() <= self.cap {
            return;
        }
        let mut start = self.text.len() - self.cap;
        while !self.text.is_char_boundary(start) {
            start += 1;
        }
        self.text.drain(..start);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(cap: usize, pushes: &[&str], want: &str) {
        let mut tail = Tail::new(cap);
        for p in pushes {
            tail.push(p);
        }
        assert_eq!(tail.into_string(), want, "cap {cap}, pushes {pushes:?}");
    }

    #[test]
    fn the_tail_keeps_the_last_bytes_on_a_char_boundary() {
        check(5, &["abc", "defgh"], "defgh");
        check(0, &["abc"], "");
        check(10, &["abc"], "abc");
        check(4, &["xxé€"], "€");
        check(3, &[&"y".repeat(5000), "end"], "end");
    }

    #[tokio::test]
    async fn stderr_is_logged_redacted_and_tailed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stderr.log");
        let log = LogSink::create(Some(&path)).await.unwrap();
        let redactor = Redactor::new().with_secrets(["hunter2"]);
        let input: &[u8] = b"first\npassword hunter2\nlast";
        let (tx, mut rx) = mpsc::unbounded_channel();
        let summary = pump_stderr(input, log, redactor, 24, LiveLines::new(tx)).await;
        assert_eq!(summary.tail, "password [REDACTED]\nlast");
        assert_eq!(summary.bytes, input.len() as u64);
        let logged = std::fs::read_to_string(&path).unwrap();
        assert_eq!(logged, "first\npassword [REDACTED]\nlast");
        let mut live = Vec::new();
        while let Ok(line) = rx.try_recv() {
            live.push(line);
        }
        assert_eq!(live, ["first", "password [REDACTED]", "last"]);
    }

    #[test]
    fn live_lines_stop_at_their_budget() {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let mut live = LiveLines::new(tx);
        live.left = 10;
        for line in ["12345", "1234", "123", "1"] {
            live.send(line);
        }
        let mut got = Vec::new();
        while let Ok(line) = rx.try_recv() {
            got.push(line);
        }
        // "123" does not fit in the 1 byte left: it and everything after it are not sent.
        assert_eq!(got, ["12345", "1234"]);
    }
}
