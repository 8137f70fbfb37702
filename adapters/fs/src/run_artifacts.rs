//! [`FsRunArtifacts`]: the bundle of one run, open for writing.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use forge_domain::{AgentEvent, ExecutionResult, ForgeError, Redactor};
use forge_ports::{RunArtifacts, RunRecord};
use tokio::io::{AsyncWriteExt, BufWriter};

use crate::atomic::write_atomic;
use crate::blocking::run_blocking;
use crate::bundle::{EVENTS, RESULT, RUN, STDERR, STDOUT};
use crate::redact_json::redact_json;

/// Keeps `events.jsonl` open for the whole run: one open per run, not per event.
pub struct FsRunArtifacts {
    dir: PathBuf,
    events: BufWriter<tokio::fs::File>,
    redactor: Arc<Redactor>,
}

impl std::fmt::Debug for FsRunArtifacts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FsRunArtifacts")
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

impl FsRunArtifacts {
    pub(crate) fn new(dir: PathBuf, events: tokio::fs::File, redactor: Arc<Redactor>) -> Self {
        Self {
            dir,
            events: BufWriter::new(events),
            redactor,
        }
    }

    fn events_error(&self, e: impl std::fmt::Display) -> ForgeError {
        ForgeError::io(format!("writing {}", self.dir.join(EVENTS).display()), e)
    }
}

#[async_trait]
impl RunArtifacts for FsRunArtifacts {
    fn dir(&self) -> &Path {
        &self.dir
    }

    fn stdout_log(&self) -> PathBuf {
        self.dir.join(STDOUT)
    }

    fn stderr_log(&self) -> PathBuf {
        self.dir.join(STDERR)
    }

    async fn append_events(&mut self, events: &[AgentEvent]) -> Result<(), ForgeError> {
        // Serialise the whole batch first so a serialisation failure writes nothing of it.
        let mut batch = String::new();
        for event in events {
            batch.push_str(&redact_json(&self.redactor, event, false)?);
            batch.push('\n');
        }
        self.events
            .write_all(batch.as_bytes())
            .await
            .map_err(|e| self.events_error(e))?;
        // Flushed per call, not per run: if forge dies, what was appended is on disk.
        self.events.flush().await.map_err(|e| self.events_error(e))
    }

    async fn finish(
        &mut self,
        record: &RunRecord,
        result: &ExecutionResult,
    ) -> Result<(), ForgeError> {
        self.events
            .flush()
            .await
            .map_err(|e| self.events_error(e))?;
        let result_text = redact_json(&self.redactor, result, true)?;
        let record_text = record_json(record)?;
        let dir = self.dir.clone();
        run_blocking("finishing run bundle", move || {
            write_atomic(&dir.join(RESULT), result_text.as_bytes())?;
            write_atomic(&dir.join(RUN), record_text.as_bytes())
        })
        .await
    }
}

/// `run.json` text. Not redacted: a record holds only ids, paths, times and a status, and
/// masking a token-shaped run id would make the bundle unreadable.
pub(crate) fn record_json(record: &RunRecord) -> Result<String, ForgeError> {
    serde_json::to_string_pretty(record).map_err(|e| ForgeError::io("serialising run.json", e))
}
