//! The task's artifact directory `.forgecode/tasks/<task-id>/` in the repository:
//! `plan.json`, the instruction file as written, `validation/<cycle>-<step>.log` (written
//! by the step runner), `review.json`, `manifest.json`, `report.json`.

use std::path::{Path, PathBuf};

use forge_domain::task::TaskId;
use forge_domain::{ForgeError, Redactor};
use forge_ports::FileStore;
use serde::Serialize;

pub const TASKS_DIR: &str = ".forgecode/tasks";

/// Paths of one task's artifacts.
#[derive(Debug, Clone)]
pub struct TaskDir {
    pub dir: PathBuf,
}

impl TaskDir {
    pub fn new(repo: &Path, id: &TaskId) -> Self {
        Self {
            dir: repo.join(TASKS_DIR).join(id.as_str()),
        }
    }

    pub fn validation_dir(&self) -> PathBuf {
        self.dir.join("validation")
    }

    /// Writes `value` as pretty JSON to `<dir>/<name>`, secrets masked (the mask has no
    /// quote or backslash, so the JSON stays valid).
    ///
    /// # Errors
    /// [`ForgeError::Io`] when it cannot be serialised or written.
    pub async fn write_json(
        &self,
        files: &dyn FileStore,
        redactor: &Redactor,
        name: &str,
        value: &impl Serialize,
    ) -> Result<(), ForgeError> {
        let json = serde_json::to_string_pretty(value)
            .map_err(|e| ForgeError::io(format!("serialising {name}"), e))?;
        let mut text = redactor.redact(&json).into_owned();
        text.push('\n');
        files.write(&self.dir.join(name), text.as_bytes()).await
    }

    /// Writes raw bytes to `<dir>/<name>`.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when it cannot be written.
    pub async fn write(
        &self,
        files: &dyn FileStore,
        name: &str,
        bytes: &[u8],
    ) -> Result<(), ForgeError> {
        files.write(&self.dir.join(name), bytes).await
    }
}
