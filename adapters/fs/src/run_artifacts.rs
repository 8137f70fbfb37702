//! [`FsRunArtifacts`]: the bundle of one run, open for writing.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use forge_domain::{AgentEvent, ExecutionResult, ForgeError, Redactor};
use forge_ports::{RunArtifacts, RunRecord};
use std::io::{BufWriter, Write};

use crate::atomic::{write_atomic, write_atomic_with};
use crate::blocking::run_blocking;
use crate::bundle::{EVENTS, RESULT, RUN, STDERR, STDOUT};
use crate::redact_json::redact_json;

/// Keeps `events.jsonl` open for the whole run: one open per run, not per event.
///
/// The file is written synchronously: an event is serialised straight into its buffer, so
/// an event carrying a huge text is never turned into a second, serialised copy in memory.
/// The writes go to the page cache and are as short as the events.
pub struct FsRunArtifacts {
    dir: PathBuf,
    events: BufWriter<std::fs::File>,
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
    pub(crate) fn new(dir: PathBuf, events: std::fs::File, redactor: Arc<Redactor>) -> Self {
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
        for event in events {
            if self.redactor.would_redact(event) {
                let text = redact_json(&self.redactor, event, false)?;
                self.events
                    .write_all(text.as_bytes())
                    .map_err(|e| self.events_error(e))?;
            } else {
                serde_json::to_writer(&mut self.events, event).map_err(|e| self.events_error(e))?;
            }
            self.events
                .write_all(b"\n")
                .map_err(|e| self.events_error(e))?;
        }
        // Flushed per call, not per run: if forge dies, what was appended is on disk.
        self.events.flush().map_err(|e| self.events_error(e))
    }

    async fn finish(
        &mut self,
        record: &RunRecord,
        result: &ExecutionResult,
    ) -> Result<(), ForgeError> {
        self.events.flush().map_err(|e| self.events_error(e))?;
        let record_text = record_json(record)?;
        if !self.redactor.would_redact(result) {
            // Nothing to mask: serialised straight into the file. A result can hold a line
            // of tens of megabytes; its text would be one more copy of it. Written in place
            // (this is the run's last step): the value is borrowed, so it cannot go to the
            // blocking pool.
            write_atomic_with(&self.dir.join(RESULT), |file| {
                serde_json::to_writer_pretty(&mut *file, result).map_err(std::io::Error::from)
            })?;
            return write_atomic(&self.dir.join(RUN), record_text.as_bytes());
        }
        let result_text = redact_json(&self.redactor, result, true)?;
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
