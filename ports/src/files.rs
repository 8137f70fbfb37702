//! Plain file access at absolute paths, for the task pipeline's own files (artifacts,
//! the guardrail instruction file, crash markers). Not sandboxed: callers pass paths they
//! built under a workspace they own; the agent's file access goes through [`crate::Workspace`].

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use forge_domain::ForgeError;

#[async_trait]
pub trait FileStore: Send + Sync {
    /// The file's bytes; `None` when it does not exist.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when it exists but cannot be read.
    async fn read(&self, path: &Path) -> Result<Option<Vec<u8>>, ForgeError>;

    /// Writes `contents` atomically (temp file + rename), creating parent directories.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when a directory or the file cannot be written.
    async fn write(&self, path: &Path, contents: &[u8]) -> Result<(), ForgeError>;

    /// Removes the file; a missing file is not an error.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when it exists and cannot be removed.
    async fn remove(&self, path: &Path) -> Result<(), ForgeError>;

    /// The entries directly inside `dir`, sorted; empty when `dir` does not exist.
    ///
    /// # Errors
    /// [`ForgeError::Io`] when it exists and cannot be listed.
    async fn list(&self, dir: &Path) -> Result<Vec<PathBuf>, ForgeError>;
}
