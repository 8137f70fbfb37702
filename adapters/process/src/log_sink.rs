//! A redacted copy of a stream, written to an artifact log file.

use std::path::{Path, PathBuf};

use forge_domain::ForgeError;
use tokio::fs::File;
use tokio::io::{AsyncWriteExt, BufWriter};

/// Buffered writer for one log; a no-op without a path.
///
/// A write error stops logging for the rest of the run rather than the run itself: the log
/// is evidence, the run is the point.
#[derive(Debug)]
pub(crate) struct LogSink {
    out: Option<BufWriter<File>>,
}

impl LogSink {
    /// Creates (truncates) the log file, and its parent directory.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when the file cannot be created.
    pub(crate) async fn create(path: Option<&Path>) -> Result<Self, ForgeError> {
        let Some(path) = path else {
            return Ok(Self { out: None });
        };
        if let Some(dir) = path.parent() {
            tokio::fs::create_dir_all(dir)
                .await
                .map_err(|err| ForgeError::io(context(path), err))?;
        }
        let file = File::create(path)
            .await
            .map_err(|err| ForgeError::io(context(path), err))?;
        Ok(Self {
            out: Some(BufWriter::with_capacity(64 * 1024, file)),
        })
    }

    /// False without a path (or after a write error): callers skip redacting for it.
    pub(crate) fn is_enabled(&self) -> bool {
        self.out.is_some()
    }

    /// Appends `text`, then `\n` when the line had one.
    pub(crate) async fn write_line(&mut self, text: &str, terminated: bool) {
        let Some(out) = &mut self.out else { return };
        let mut result = out.write_all(text.as_bytes()).await;
        if terminated && result.is_ok() {
            result = out.write_all(b"\n").await;
        }
        if result.is_err() {
            self.out = None;
        }
    }

    /// Flushes what is buffered.
    pub(crate) async fn finish(&mut self) {
        if let Some(mut out) = self.out.take() {
            let _ = out.flush().await;
        }
    }
}

fn context(path: &Path) -> String {
    format!("creating log {}", PathBuf::from(path).display())
}
